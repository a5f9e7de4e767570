#!/usr/bin/env bash
# Opening a database without reading its entries (issue 29): minidir-import stores the
# password schemes in use in the file's meta table ("passwords", storage/db_passwords.h),
# and the server reads that record at start and at a reload instead of every entry.
# A directory with {SSHA}, {CRYPT}$6$, {CRYPT}$5$, {ARGON2}, plaintext and an unknown
# scheme: the log says the record was read (no scan), minidir -t and the start-up list
# the schemes as before, every user binds with its password and not with another, and a
# failed bind takes as long whatever the DN (faultclient bindtime); a reload of a new
# import reads its record too. Then the same file made "old" with the real LMDB tools
# (mdb_dump of every table without meta's "passwords" pair, mdb_load into a new file),
# and one with a garbage record: each still served, after one logged scan, with the same
# schemes and binds.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh

use_work_dir open
BASE=dc=test,dc=org
SCHEMA_DIR=$PWD/schema
for tool in mdb_dump mdb_load slappasswd; do
	command -v "$tool" > /dev/null || {
		not_ok "$tool is missing (scripts/deps.sh)"
		finish
	}
done

write_conf() { # NAME: $work/NAME.conf serving $work/NAME.mdb
	printf '%s\n' "listen = 127.0.0.1:0" "database = $work/$1.mdb" "schema_dir = $SCHEMA_DIR" \
		"suffix = $BASE" "threads = 2" "rootdn = cn=admin,$BASE" "rootpw = root-secret" > "$work/$1.conf"
}

# shellcheck disable=SC2016  # crypt(3) salts: $6$... is literal
hash6=$("$BUILD/tests/integration/faultclient" crypt right-password '$6$saltsaltsalt$')
# shellcheck disable=SC2016  # crypt(3) salts: $5$... is literal
hash5=$("$BUILD/tests/integration/faultclient" crypt right-password '$5$saltsaltsalt$')
ssha=$(slappasswd -h '{SSHA}' -s right-password)
argon=$(slappasswd -o module-load="argon2 memory=1024" -h '{ARGON2}' -s right-password)
person() { # person UID [userPassword]
	printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\n' \
		"$1" "$BASE" "$1" "$1" "$1"
	[ -n "${2:-}" ] && printf 'userPassword: %s\n' "$2"
	echo
}
{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: test\no: test\n\n' "$BASE"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$BASE"
	person real "{CRYPT}$hash6"
	person sha256 "{CRYPT}$hash5"
	person ssha "$ssha"
	person ssha2 "$(slappasswd -h '{SSHA}' -s right-password)"
	person argon "$argon"
	person plain right-password
	person nopw
	person odd "{NOSUCH}right-password"
} > "$work/dir.ldif"
USERS="real sha256 ssha ssha2 argon plain"

write_conf rec
if ! "$BUILD/minidir-import" -q -f "$work/rec.conf" "$work/dir.ldif" > "$work/import.log" 2>&1; then
	not_ok "import: $(cat "$work/import.log")"
	finish
fi

# The schemes as the server lists them (the part of its log line before the ";").
schemes_of() { grep -o 'password schemes in use (values): [^;]*' "$1" | head -1; }

# minidir -t: the schemes from the record, and no scan.
"$BUILD/minidir" -t -f "$work/rec.conf" > "$work/rec-t.out" 2>&1 || not_ok "minidir -t: $(cat "$work/rec-t.out")"
want_schemes=$(schemes_of "$work/rec-t.out")
missing="" # (plaintext 2: the rootpw and uid=plain)
# shellcheck disable=SC2016  # the classes as minidir prints them, $ literal
for cls in 'plaintext 2' '{SSHA} 2' '{CRYPT}$6$ 1' '{CRYPT}$5$ 1' \
	'{ARGON2}$argon2i$v=19$m=1024,t=3,p=1$ 1'; do
	case "$want_schemes, " in *"$cls, "*) ;; *) missing="$missing [$cls]" ;; esac
done
if [ -z "$missing" ] && grep -q "password schemes read from the file's record (no entry scan)" "$work/rec-t.out" &&
	! grep -q "scanned all" "$work/rec-t.out" &&
	grep -qF '1 userPassword values of a scheme minidir does not know (the first: {NOSUCH} on uid=odd' "$work/rec-t.out"; then
	ok "minidir -t: ${want_schemes#password }, and the {NOSUCH} value, read from the file's record (no entry scan)"
else
	not_ok "minidir -t on an imported file (missing:$missing): $(cat "$work/rec-t.out")"
fi

# binds NAME: every user with its password (0) and with another (49), as the server
# on $port answers them.
binds() {
	local u bad=""
	for u in $USERS; do
		timeout 10 ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "uid=$u,ou=people,$BASE" \
			-w right-password > /dev/null 2>&1 || bad="$bad $u:right"
		rc=0
		timeout 10 ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "uid=$u,ou=people,$BASE" \
			-w wrong-password > /dev/null 2>&1 || rc=$?
		[ "$rc" = 49 ] || bad="$bad $u:wrong=$rc"
	done
	if [ -z "$bad" ]; then
		ok "$1: each of $USERS binds with its password, 49 with another"
	else
		not_ok "$1: binds wrong:$bad"
	fi
}
# bindtime NAME: failed binds take as long on each scheme, on a DN without a password,
# of an unknown scheme and unknown (the decoy the record's samples give).
bindtime() {
	local out
	out=$(timeout 300 "$BUILD/tests/integration/faultclient" bindtime 127.0.0.1 "$port" 100 \
		"uid=real,ou=people,$BASE" "uid=ssha,ou=people,$BASE" "uid=sha256,ou=people,$BASE" \
		"uid=argon,ou=people,$BASE" "uid=ghost,ou=people,$BASE" "uid=nopw,ou=people,$BASE" \
		"uid=odd,ou=people,$BASE" "uid=x,ou=nowhere,dc=other")
	client_report "$1: " "${out:-bind timing: faultclient gave no result in 300 s}"
}

start_minidir "$work/rec.conf" "$work/rec.log"
if [ -z "$port" ]; then
	not_ok "server on the imported file did not start: $(cat "$work/rec.log")"
	finish
fi
rpid=$pid
if grep -q "password schemes read from the file's record (no entry scan)" "$work/rec.log" &&
	! grep -q "scanned all" "$work/rec.log" && [ "$(schemes_of "$work/rec.log")" = "$want_schemes" ]; then
	ok "start-up: the schemes read from the record, as minidir -t lists them, no entry scan"
else
	not_ok "start-up on an imported file: $(grep -E 'password schemes|scanned' "$work/rec.log")"
fi
binds "imported file"
bindtime "imported file"

# A reload: a new import renamed over the file is opened from its record too.
# shellcheck disable=SC2016  # crypt(3) salts: $5$... is literal
hash5b=$("$BUILD/tests/integration/faultclient" crypt right-password '$5$othersalt$')
person late "{CRYPT}$hash5b" >> "$work/dir.ldif"
"$BUILD/minidir-import" -q -f "$work/rec.conf" "$work/dir.ldif" > "$work/import.log" 2>&1 ||
	not_ok "second import: $(cat "$work/import.log")"
kill -HUP "$rpid"
for _ in $(seq 1 100); do
	grep -q "database reloaded" "$work/rec.log" && break
	sleep 0.1
done
reads=$(grep -c "password schemes read from the file's record (no entry scan)" "$work/rec.log")
# shellcheck disable=SC2016  # the class as minidir prints it
if grep -q "database reloaded" "$work/rec.log" && [ "$reads" = 2 ] && ! grep -q "scanned all" "$work/rec.log" &&
	grep 'password schemes in use' "$work/rec.log" | tail -1 | grep -qF '{CRYPT}$5$ 2'; then
	ok "reload of a new import: its record read (no entry scan), the new user's value counted ({CRYPT}\$5\$ 2)"
else
	not_ok "reload: $(grep -E 'reloaded|password schemes|scanned' "$work/rec.log")"
fi
stop_checked "$rpid" "$work/rec.log" || not_ok "stop: $stop_why"

# A file without the record, made with LMDB's own tools: every table dumped, meta's
# "passwords" pair (its key in hex) left out, loaded into a new file.
key=" $(printf passwords | od -An -tx1 | tr -d ' \n')"
# no_record SRC DST [VALUE_HEX]: DST is SRC without the pair, or with VALUE_HEX as its value.
no_record() {
	rm -f "$2" "$2-lock"
	mdb_dump -n -a "$1" | awk -v key="$key" -v val="${3:-}" '
		/^database=/ { db = $0 }
		db == "database=meta" && $0 == key { if (val == "") { skip = 2 } else { print; print " " val; skip = 2 } }
		skip > 0 { skip--; next } { print }' | mdb_load -n "$2" 2> "$work/mdb_load.log"
	chmod 600 "$2"
	rm -f "$2-lock"
}
for kind in old bad; do
	write_conf "$kind"
	case $kind in
	old) no_record "$work/rec.mdb" "$work/old.mdb" ;;
	bad) no_record "$work/rec.mdb" "$work/bad.mdb" 0105676172626167650a ;; # version 1, 5 classes, garbage
	esac
	if mdb_dump -n -s meta -p "$work/$kind.mdb" 2> /dev/null | grep -q '^ passwords$'; then
		[ "$kind" = old ] && not_ok "old: the meta pair is still there"
	else
		[ "$kind" = bad ] && not_ok "bad: no meta pair"
	fi
	start_minidir "$work/$kind.conf" "$work/$kind.log"
	if [ -z "$port" ]; then
		not_ok "$kind file: the server did not start: $(cat "$work/$kind.log")"
		continue
	fi
	case $kind in
	old) words="no record of password schemes (a file made before minidir kept one): scanned all 11 entries for userPassword" ;;
	bad) words="its record of password schemes is bad (cut short): scanned all 11 entries for userPassword instead" ;;
	esac
	now=$(schemes_of "$work/$kind.log")
	if grep -qF "$words" "$work/$kind.log" && grep -q "re-import it (minidir-import)" "$work/$kind.log" &&
		! grep -q "no entry scan" "$work/$kind.log" &&
		[ "${now/\{CRYPT\}\$5\$ 2/\{CRYPT\}\$5\$ 1}" = "$want_schemes" ]; then
		ok "$kind file: served after one logged scan (\"$words\"), the same schemes"
	else
		not_ok "$kind file: $(grep -E 'password schemes|scanned|record' "$work/$kind.log") (want $want_schemes)"
	fi
	binds "$kind file"
	stop_checked "$pid" "$work/$kind.log" || not_ok "$kind: $stop_why"
done
summary open
