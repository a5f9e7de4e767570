#!/usr/bin/env bash
# minidir-passwd against both verifiers: for every scheme it writes, a value made for a
# password is the userPassword of an entry in a minidir database and in a private slapd
# (back_mdb, with the argon2 and pw-sha2 modules), and a simple bind with ldapsearch -x
# succeeds with the password and gets invalidCredentials (49) with another, on both; one
# value is the rootpw of both. The other way: slappasswd's {SSHA}, {CRYPT} with -c and
# {ARGON2} bind to minidir. Then slappasswd's command line: -T's bytes, -n, standard
# input, the prompt on a terminal (a pty), the errors and exit statuses, and the man
# page. Servers on 127.0.0.1, stopped by PID.
# shellcheck disable=SC2016  # crypt(3) salt formats and PHC strings: their $ are literal
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh # slapd_conf, provider_start; EX, ADMIN, SLAPD, SLAPADD
SLAPPASSWD=${SLAPPASSWD:-/usr/sbin/slappasswd}
PW=$BUILD/minidir-passwd

use_work_dir passwd
version=$(sed -n 's/^#define MINIDIR_VERSION "\(.*\)"/\1/p' conf/version.h)

# secret NAME: the password of uid=NAME.
secret() { printf 'pw-%s-S3cret' "$1"; }

# --- values made by minidir-passwd, one user per scheme --------------------------------
# NAME:ARGS (the options before -T).
cases=(ssha:"-h {SSHA}" sha:"-h {SHA}" ssha256:"-h {SSHA256}" sha256:"-h {SHA256}"
	ssha512:"-h {SSHA512}" sha512:"-h {SHA512}" smd5:"-h {SMD5}" md5:"-h {MD5}"
	crypt:"-h {CRYPT}" crypt6:"-c \$6\$%.16s" crypt5:"-h {CRYPT} -c \$5\$rounds=6000\$%.16s"
	argon2:"-h {ARGON2}" argon2cost:"-h {ARGON2} -o module-load=argon2_m=8192_t=2_p=2"
	cleartext:"-h {CLEARTEXT}" default:""
	pbkdf2_sha512:"-h {PBKDF2-SHA512}" pbkdf2_sha256:"-h {PBKDF2-SHA256}"
	pbkdf2_sha1:"-h {PBKDF2-SHA1}" pbkdf2_ds:"-h {PBKDF2_SHA256}")
users=()
# add_user NAME VALUE HOW: uid=NAME with userPassword VALUE in $work/data.ldif, NAME in
# users, "NAME HOW: VALUE" in $work/values.
add_user() {
	printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nuserPassword: %s\n\n' \
		"$1" "$EX" "$1" "$1" "$1" "$2" >> "$work/data.ldif"
	users+=("$1")
	echo "$1 $3: $2" >> "$work/values"
}
{
	printf 'dn: %s\nobjectClass: top\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n' "$EX"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$EX"
} > "$work/data.ldif"
for c in "${cases[@]}"; do
	name=${c%%:*}
	read -ra args <<< "${c#*:}"
	for i in "${!args[@]}"; do # argon2's module arguments are one word with spaces
		[[ ${args[i]} == module-load=* ]] && args[i]=${args[i]//_/ }
	done
	secret "$name" > "$work/$name.pw"
	chmod 600 "$work/$name.pw"
	if ! value=$("$PW" "${args[@]}" -T "$work/$name.pw" 2> "$work/$name.err") || [ -z "$value" ]; then
		not_ok "minidir-passwd ${args[*]} -T FILE: $(cat "$work/$name.err")"
		continue
	fi
	add_user "$name" "$value" "${args[*]}"
done
grep -q '^ssha ' "$work/values" && grep -q '{SSHA}' <<< "$(grep '^default ' "$work/values")" &&
	ok "no -h: {SSHA}, as slappasswd" || not_ok "no -h: $(grep '^default ' "$work/values")"
grep -q '^crypt6 .*{CRYPT}\$6\$' "$work/values" && grep -q '^crypt .*{CRYPT}\$y\$' "$work/values" &&
	ok "-c \$6\$%.16s alone gives {CRYPT}\$6\$; {CRYPT} without -c is yescrypt" ||
	not_ok "crypt values: $(grep '^crypt' "$work/values")"
grep -q '^argon2 .*{ARGON2}\$argon2id\$v=19\$m=4096,t=3,p=1\$' "$work/values" &&
	grep -q '^argon2cost .*\$m=8192,t=2,p=2\$' "$work/values" &&
	ok "{ARGON2}: argon2id, m=4096,t=3,p=1 unless -o module-load=\"argon2 m= t= p=\"" ||
	not_ok "argon2 values: $(grep '^argon2' "$work/values")"

# --- slappasswd's values, for minidir -------------------------------------------------
for c in slap_ssha:"-h {SSHA}" slap_crypt6:"-h {CRYPT} -c \$6\$%.16s" \
	slap_argon2:"-o module-load=argon2 -h {ARGON2}"; do
	name=${c%%:*}
	read -ra args <<< "${c#*:}"
	if ! value=$("$SLAPPASSWD" "${args[@]}" -s "$(secret "$name")" 2> "$work/$name.err"); then
		not_ok "slappasswd ${args[*]}: $(cat "$work/$name.err")"
		continue
	fi
	add_user "$name" "$value" "slappasswd ${args[*]}"
done

# The rootdn's password from standard input (one line, its newline not part of it).
if rootpw=$(printf 'root-S3cret\n' | "$PW" -h '{SSHA512}' 2> "$work/root.err"); then
	ok "a password on standard input: $rootpw"
else
	not_ok "minidir-passwd from standard input: $(cat "$work/root.err")"
fi

# --- minidir and slapd, each with every value -------------------------------------------
cat > "$work/minidir.conf" << EOF
listen = 127.0.0.1:0
database = $work/minidir.mdb
suffix = $EX
schema_dir = $SCHEMA_DIR
rootdn = $ADMIN
rootpw = $rootpw
EOF
if ! "$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" > "$work/import.log" 2>&1; then
	not_ok "minidir-import: $(cat "$work/import.log")"
	finish
fi
start_minidir "$work/minidir.conf" "$work/minidir.log"
mpid=$pid mport=$port
[ -n "$mport" ] || { not_ok "minidir did not start: $(tail -5 "$work/minidir.log")"; finish; }

slapd_conf "$work/slapd.conf" "$work/slapd-db" "maxsize 67108864
dbnosync"
# The modules for {ARGON2} and {SHA256}...{SSHA512}; the rootpw made above.
sed -i -e "s|^moduleload syncprov\$|moduleload argon2\nmoduleload pw-sha2|" \
	-e "s|^rootpw secret\$|rootpw $rootpw|" "$work/slapd.conf"
if ! timeout 60 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1; then
	not_ok "slapadd: $(cat "$work/slapadd.log")"
	finish
fi
provider_start || finish
sport=$port

# bind PORT DN PASSWORD: the exit status of ldapsearch -x's bind and base search (the
# result code: 0, or 49 for invalidCredentials).
bind() {
	timeout 20 ldapsearch -x -H "ldap://127.0.0.1:$1" -D "$2" -w "$3" -LLL -b "$EX" -s base 1.1 \
		> /dev/null 2>&1
}
for name in "${users[@]}" rootdn; do
	if [ "$name" = rootdn ]; then
		dn=$ADMIN pw=root-S3cret
	else
		dn=uid=$name,ou=people,$EX pw=$(secret "$name")
	fi
	for server in minidir:$mport slapd:$sport; do
		case $name:$server in
		slap_*:slapd:*) continue ;; # slappasswd's values, made for slapd: minidir's side only
		pbkdf2_*:slapd:*) continue ;; # 389-ds's schemes: Debian's slapd has no pw-pbkdf2 module
		esac
		rc=0 rc_bad=0
		bind "${server#*:}" "$dn" "$pw" || rc=$?
		bind "${server#*:}" "$dn" "$pw-wrong" || rc_bad=$?
		if [ "$rc" = 0 ] && [ "$rc_bad" = 49 ]; then
			ok "${server%%:*}: $name ($(grep "^$name " "$work/values" | cut -d' ' -f2- | cut -c1-40)): the password binds, another gets 49"
		else
			not_ok "${server%%:*}: $dn: right password exit $rc, wrong one $rc_bad (wanted 0 and 49); value: $(grep "^$name " "$work/values")"
		fi
	done
done
if stop_checked "$mpid" "$work/minidir.log"; then ok "minidir stopped cleanly"; else not_ok "minidir: $stop_why"; fi

# --- slappasswd's command line ----------------------------------------------------------
# -T: the file's bytes, a final newline included, as slappasswd -T takes them; compared on
# the unsalted schemes, where one password gives one value.
printf 'x' > "$work/nonl"
printf 'x\n' > "$work/nl"
printf 'x\r\n\n' > "$work/crlf"
chmod 600 "$work/nonl" "$work/nl" "$work/crlf"
for f in nonl nl crlf; do
	for h in '{SHA}' '{MD5}' '{SHA512}'; do
		mine=$("$PW" -h "$h" -T "$work/$f" 2>&1)
		theirs=$("$SLAPPASSWD" -o module-load=pw-sha2 -h "$h" -T "$work/$f" 2>&1)
		[ -n "$mine" ] && [ "$mine" = "$theirs" ] && ok "-T ($f) $h: $mine, as slappasswd" ||
			not_ok "-T ($f) $h: minidir-passwd $mine, slappasswd $theirs"
	done
done
[ "$("$PW" -h '{SHA}' -T "$work/nl")" != "$("$PW" -h '{SHA}' -T "$work/nonl")" ] &&
	ok "-T: a final newline is part of the password" || not_ok "-T dropped the final newline"
chmod 644 "$work/nl"
out=$("$PW" -T "$work/nl" 2>&1 > /dev/null)
grep -qF "$work/nl can be read or written by other users" <<< "$out" &&
	ok "-T on a file others can read warns: $out" || not_ok "-T on a 0644 file: \"$out\""
# -s and standard input give the value of the same password
s_val=$("$PW" -h '{SHA256}' -s abc)
in_val=$(printf 'abc\n' | "$PW" -h '{SHA256}')
[ -n "$s_val" ] && [ "$s_val" = "$in_val" ] && ok "-s abc and \"abc\\n\" on standard input agree" ||
	not_ok "-s abc: $s_val; standard input: $in_val"
# -n
bytes=$("$PW" -n -h '{SHA}' -s x | wc -c)
[ "$bytes" = 33 ] && ok "-n: no newline (33 bytes)" || not_ok "-n: $bytes bytes, wanted 33"
bytes=$("$PW" -h '{SHA}' -s x | wc -c)
[ "$bytes" = 34 ] && ok "without -n: a newline" || not_ok "without -n: $bytes bytes"

# The prompt on a terminal: twice, without echo; passwords that differ are refused.
# prompt ANSWER1 ANSWER2: minidir-passwd -h {SHA} on a pty typing the two answers; prints
# what the terminal showed, then "exit N".
prompt() {
	python3 - "$PW" "$1" "$2" << 'EOF'
import os, pty, sys, time
prog, a1, a2 = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(prog, [prog, "-h", "{SHA}"])
seen = b""
def read_until(word, limit=10):
    global seen
    end = time.time() + limit
    while word not in seen and time.time() < end:
        try:
            seen += os.read(fd, 1024)
        except OSError:
            break
read_until(b"New password: ")
time.sleep(0.2)  # the echo is off before the answer is typed
os.write(fd, a1.encode() + b"\n")
read_until(b"Re-enter new password: ")
time.sleep(0.2)
os.write(fd, a2.encode() + b"\n")
read_until(b"\n{SHA}", 10) if a1 == a2 else read_until(b"match", 10)
time.sleep(0.2)
try:
    seen += os.read(fd, 4096)
except OSError:
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace").replace("\r", ""))
print("exit", os.waitstatus_to_exitcode(status))
EOF
}
out=$(prompt 'typed-S3cret' 'typed-S3cret')
want=$("$PW" -h '{SHA}' -s typed-S3cret)
if grep -q '^New password: ' <<< "$out" && grep -q '^Re-enter new password: ' <<< "$out" &&
	grep -qxF "$want" <<< "$out" && ! grep -q 'typed-S3cret' <<< "$out" && grep -qx 'exit 0' <<< "$out"; then
	ok "on a terminal: asked twice, not echoed, $want"
else
	not_ok "the prompt: $out (wanted $want)"
fi
out=$(prompt 'one-S3cret' 'two-S3cret')
grep -q 'the passwords do not match' <<< "$out" && grep -qx 'exit 1' <<< "$out" &&
	ok "on a terminal: two different answers refused (exit 1)" || not_ok "the prompt, answers differ: $out"

# errors: EXPECTED_STATUS WANT ARGS...: minidir-passwd ARGS exits EXPECTED_STATUS with WANT
# in its standard error and nothing on standard output.
errors() {
	local want_rc=$1 want=$2 rc=0 out err
	shift 2
	out=$("$PW" "$@" 2> "$work/err" < /dev/null) || rc=$?
	err=$(cat "$work/err")
	if [ "$rc" = "$want_rc" ] && [ -z "$out" ] && grep -qF -- "$want" <<< "$err"; then
		ok "$* : exit $rc, $(head -1 <<< "$err")"
	else
		not_ok "$*: exit $rc (wanted $want_rc), stdout \"$out\", stderr \"$err\" (wanted \"$want\")"
	fi
}
errors 2 "unknown scheme {SCRYPT}; known schemes: {SSHA} {SHA} {SSHA256} {SHA256} {SSHA512} {SHA512} {SMD5} {MD5} {CRYPT} {ARGON2} {PBKDF2-SHA512} {PBKDF2-SHA256} {PBKDF2-SHA1} {PBKDF2} {PBKDF2_SHA256} {CLEARTEXT}" -h '{SCRYPT}' -s x
errors 1 "-T $work/none: No such file or directory" -T "$work/none"
errors 1 "-T $work: Is a directory" -T "$work"
# A file the user cannot read: as root, checked as nobody (root reads any file).
printf 'x' > "$work/private"
chmod 600 "$work/private"
if [ "$(id -u)" != 0 ]; then
	chmod 000 "$work/private"
	errors 1 "-T $work/private: Permission denied" -T "$work/private"
elif ! command -v runuser > /dev/null; then
	skip "needs runuser" "-T on a file the user cannot read"
else
	cp "$PW" "$work/minidir-passwd" && chmod 755 "$work" "$work/minidir-passwd"
	rc=0
	out=$(runuser -u nobody -- "$work/minidir-passwd" -T "$work/private" 2>&1) || rc=$?
	[ "$rc" = 1 ] && [ "$out" = "minidir-passwd: -T $work/private: Permission denied" ] &&
		ok "-T on a file nobody cannot read: exit 1, $out" ||
		not_ok "-T on a file nobody cannot read: exit $rc, \"$out\""
fi
errors 2 "one of -s and -T" -s x -T "$work/nl"
errors 2 "-c is {CRYPT}'s salt format; the scheme is {SSHA}" -h '{SSHA}' -c '$6$%.16s' -s x
errors 1 "no %s, so every value would have the same salt" -c '$6$' -s x
errors 1 "crypt(3) refuses the salt" -c '$9$%.16s' -s x
errors 1 "the password is empty" -s ''
errors 1 "no password on standard input"
errors 1 "would be read as a scheme" -h '{CLEARTEXT}' -s '{SSHA}x'
errors 2 "no such module" -o module-load=pw-pbkdf2 -s x
errors 2 "bad argument \"q=1\"" -o 'module-load=argon2 q=1' -h '{ARGON2}' -s x
errors 2 "unknown option -g" -g
errors 2 "-s needs a value" -s

# --- --help, --version, the man page --------------------------------------------------
page=man/minidir-passwd.8
help=$("$PW" --help 2>&1) && grep -q '^usage: minidir-passwd' <<< "$help" && ok "--help: exit 0" ||
	not_ok "--help: $help"
[ "$("$PW" -h 2>&1)" = "$help" ] && ok "-h alone: the help" || not_ok "-h alone: $("$PW" -h 2>&1)"
out=$("$PW" --version 2>&1) && [ "$out" = "minidir-passwd $version" ] && ok "--version: $out" ||
	not_ok "--version: \"$out\""
warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1) && [ -z "$warn" ] &&
	ok "$page renders without warnings" || not_ok "$page: groff -ww: $warn"
grep -q "^\.TH .*\"minidir $version\"" "$page" && ok "$page: .TH names version $version" ||
	not_ok "$page: .TH: $(grep '^\.TH' "$page")"
# Every option --help prints heads a tagged paragraph of OPTIONS (as install_test.sh
# checks the other pages), and every scheme of the table is named there.
section=$(groff -man -Tascii -P-cbou -rHY=0 -rLL=250n "$page" 2> /dev/null |
	awk '/^OPTIONS$/ { on = 1; next } /^[A-Z]/ { on = 0 } on')
opts=$(grep -oE '(^|[][ ,(|])--?[A-Za-z][A-Za-z0-9-]*' <<< "$help" | sed 's/^[^-]*//' | sort -u)
missing=
for o in $opts; do
	grep -qE -- "^ {7}(-[A-Za-z], )?$o([ ,]|$)" <<< "$section" || missing="$missing $o"
done
known=$("$PW" -h '{X}' 2>&1 | sed -n 's/.*known schemes: //p')
[ -n "$known" ] || missing=" (no list of known schemes)"
for s in $known; do
	grep -qF -- "$s" <<< "$section" || missing="$missing $s"
done
[ -z "$missing" ] && ok "$page documents all $(echo "$opts" | wc -w) options of --help and every scheme" ||
	not_ok "$page: OPTIONS lacks$missing"

finish
