#!/usr/bin/env bash
# Differential conformance suite: the same LDIF (conformance.ldif) is loaded
# into minidir and into a private OpenLDAP slapd, every case of cases.txt is run
# against both with the real ldapsearch / ldapcompare / ldapwhoami, and the
# normalized answers (normalize.awk) are compared. slapd is the reference.
#
#   tests/conformance/run.sh [CASE-NAME-PATTERN...]     (BUILD=build by default)
#
# Cases listed in known-differences.txt may differ; any other difference, or a
# listed case that now matches, fails the run (exit 1). CONFORMANCE_QUIET=1
# prints known differences without their diffs; CONFORMANCE_KEEP=DIR keeps
# every normalized answer as DIR/NAME.slapd and DIR/NAME.minidir;
# CONFORMANCE_JOBS=N runs N cases at a time (default 4); CONFORMANCE_CASES=FILE
# reads the cases from FILE instead of cases.txt; CONFORMANCE_TLS=1 runs every
# case over ldaps:// against both servers (certificates made by
# tests/integration/tls_certs.sh), which must give the same answers.
# CONFORMANCE_REPLICA=1 loads only slapd (with the syncprov overlay) and makes minidir
# its syncrepl replica (refreshAndPersist, from no database file): once minidir's dump
# equals slapd's, every case must give the same answers as with an imported minidir.
# CONFORMANCE_DIR=DIR runs another suite: each of slapd.conf.in, minidir.conf.in,
# conformance.ldif, cases.txt and known-differences.txt is read from DIR when DIR has it,
# from tests/conformance/ otherwise (the suffix stays dc=conf,dc=test).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
HERE=tests/conformance
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
SLAPCAT=${SLAPCAT:-/usr/sbin/slapcat}
# slapd reads its own schema (the slapd package's); minidir the tree's schema/, the files
# make install ships, written from the RFCs: the same definitions must give the same answers.
SCHEMADIR=${SCHEMADIR:-/etc/ldap/schema}
MINIDIR_SCHEMADIR=${MINIDIR_SCHEMADIR:-$PWD/schema}
MODULEDIR=${MODULEDIR:-/usr/lib/ldap}
QUIET=${CONFORMANCE_QUIET:-0}
KEEP=${CONFORMANCE_KEEP:-}
JOBS=${CONFORMANCE_JOBS:-4}
SUITE=${CONFORMANCE_DIR:-$HERE}
# A file of the suite: SUITE's own, or the default suite's.
suite_file() { if [ -e "$SUITE/$1" ]; then echo "$SUITE/$1"; else echo "$HERE/$1"; fi; }
CASES=${CONFORMANCE_CASES:-$(suite_file cases.txt)}
TLS=${CONFORMANCE_TLS:-0}
REPLICA=${CONFORMANCE_REPLICA:-0}
[ "$TLS" = 1 ] && SCHEME=ldaps || SCHEME=ldap
SUFFIX=dc=conf,dc=test
# Shorthands the case arguments may use.
B=$SUFFIX
P=ou=people,$B
G=ou=groups,$B
D=ou=lmdb,ou=storage,ou=backend,ou=engineering,$P

# Attribute values that each server assigns by nature (at import time, from its
# own clock, counters or identity), so only their presence is compared; the
# value is replaced by <assigned>. subschemaSubentry is NOT here: its value
# (cn=Subschema) is what clients look up and is compared as is.
ASSIGNED="entryuuid entrycsn createtimestamp modifytimestamp creatorsname modifiersname contextcsn"

# Never read the user's ldap.conf / ldaprc / LDAPBASE etc.: every case says what it
# means. Over TLS libldap must read the CA file, which LDAPNOINIT would turn off too:
# then only run.sh's own ldap.conf is read (set below, once work exists).
for v in $(compgen -e | grep '^LDAP'); do unset "$v"; done
[ "$TLS" = 1 ] || export LDAPNOINIT=1

for t in "$SLAPD" "$SLAPADD" "$SLAPCAT"; do
	if [ ! -x "$t" ]; then
		echo "not ok - conformance cannot run: slapd not installed (scripts/deps.sh installs it)"
		exit 1
	fi
done
for t in ldapsearch ldapcompare ldapwhoami ldapadd timeout awk diff mktemp; do
	command -v "$t" > /dev/null 2>&1 || { echo "# conformance: $t not found"; exit 1; }
done
for t in "$BUILD/minidir" "$BUILD/minidir-import"; do
	[ -x "$t" ] || { echo "# conformance: $t not built (make $t)"; exit 1; }
done

if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP" || exit 1
	KEEP=$(cd "$KEEP" && pwd)
fi
work=$(mktemp -d /tmp/minidir-conformance.XXXXXX)
slapd_pid=
minidir_pid=
stop() { # pid: TERM, then KILL after 5 s
	local pid=$1
	[ -n "$pid" ] || return 0
	kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
xargs_pid=
cleanup() {
	[ -n "$xargs_pid" ] && kill "$xargs_pid" 2>/dev/null
	stop "$slapd_pid"
	stop "$minidir_pid"
	release_ports
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$(date +%s.%N)

# --- load the data into both servers ------------------------------------------
# slapadd refuses a "version: 1" line in some versions; both get the same copy.
grep -v '^version:' "$(suite_file conformance.ldif)" > "$work/data.ldif"
mkdir -p "$work/slapd-db"
sed -e "s#@WORK@#$work#g" -e "s#@SCHEMADIR@#$SCHEMADIR#g" -e "s#@MODULEDIR@#$MODULEDIR#g" \
	"$(suite_file slapd.conf.in)" > "$work/slapd.conf"
sed -e "s#@WORK@#$work#g" -e "s#@SCHEMADIR@#$MINIDIR_SCHEMADIR#g" "$(suite_file minidir.conf.in)" > "$work/minidir.conf"
if [ "$REPLICA" = 1 ]; then
	# The provider's side: syncprov, last on the database (after memberof).
	sed -i "/^moduleload *memberof/a moduleload      syncprov" "$work/slapd.conf"
	printf '%s\n' "index           entryUUID,entryCSN eq" "overlay         syncprov" >> "$work/slapd.conf"
fi
if [ "$TLS" = 1 ]; then
	if ! tests/integration/tls_certs.sh "$work/pki" > "$work/pki.log" 2>&1; then
		cat "$work/pki.log"
		echo "# conformance: cannot make the TLS certificates"
		exit 1
	fi
	# slapd: TLS directives are global, so before the database section.
	sed -i "/^pidfile/i TLSCACertificateFile $work/pki/ca.pem\nTLSCertificateFile $work/pki/server.pem\nTLSCertificateKeyFile $work/pki/server.key" \
		"$work/slapd.conf"
	sed -i "s#^listen = .*#listen = ldaps://127.0.0.1:0/#" "$work/minidir.conf"
	printf '%s\n' "tls_cert_file = $work/pki/server.pem" "tls_key_file = $work/pki/server.key" \
		>> "$work/minidir.conf"
	printf 'TLS_CACERT %s\nTLS_REQCERT demand\n' "$work/pki/ca.pem" > "$work/ldap.conf"
	export LDAPCONF=$work/ldap.conf LDAPRC=minidir-conformance-no-ldaprc
fi

# slapd's memberof overlay computes memberOf only on online adds, and an online
# add rewrites DN values in slapd's own spelling. So slapd loads twice: first
# without the groups (entries with member or uniqueMember), which then go in
# with ldapadd so that the overlay writes memberOf; then, from slapcat of that,
# with each group's member values put back as the LDIF spells them.
awk -v RS= -v ORS='\n\n' -v groups="$work/groups.ldif" -v rest="$work/slapd-data.ldif" '
	tolower($0) ~ /\n(member|uniquemember):/ { print > groups; next }
	{ print > rest }' "$work/data.ldif"
slapadd_or_fail() { # ldif
	rm -rf "$work/slapd-db" && mkdir -p "$work/slapd-db" || exit 1
	if ! timeout 60 "$SLAPADD" -f "$work/slapd.conf" -l "$1" > "$work/slapadd.log" 2>&1; then
		cat "$work/slapadd.log"
		echo "# conformance: slapadd of $1 failed"
		exit 1
	fi
}
slapadd_or_fail "$work/slapd-data.ldif"
if [ "$REPLICA" = 1 ]; then
	: # minidir gets its data from slapd, once slapd runs with it
elif ! timeout 60 "$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" > "$work/import.log" 2>&1; then
	cat "$work/import.log"
	echo "# conformance: minidir-import failed"
	exit 1
fi

# --- start the servers --------------------------------------------------------
# free_port: slapd's port, reserved against the tests running beside this run.
. scripts/free_port.sh
# The server at $1 answers with our suffix (and not some other process's data).
answers() {
	timeout 5 ldapsearch -x -H "$1" -LLL -b "$SUFFIX" -s base 1.1 2>/dev/null | grep -qi "^dn: $SUFFIX\$"
}

start_slapd() {
	local port
	for _ in $(seq 1 10); do
		port=$(free_port) || continue
		"$SLAPD" -f "$work/slapd.conf" -h "$SCHEME://127.0.0.1:$port/" -d 0 > "$work/slapd.log" 2>&1 &
		slapd_pid=$!
		for _ in $(seq 1 100); do
			kill -0 "$slapd_pid" 2>/dev/null || break
			if answers "$SCHEME://127.0.0.1:$port/"; then
				# our slapd must still be the one listening
				kill -0 "$slapd_pid" 2>/dev/null && { SLAPD_URI=$SCHEME://127.0.0.1:$port; return 0; }
			fi
			sleep 0.05
		done
		stop "$slapd_pid"
		slapd_pid=
	done
	cat "$work/slapd.log"
	echo "# conformance: slapd did not start (10 ports tried)"
	exit 1
}

start_minidir() {
	local port=
	"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
	minidir_pid=$!
	for _ in $(seq 1 100); do
		port=$(sed -n "s#.*listening on $SCHEME://127.0.0.1:\\([0-9]*\\)/.*#\\1#p" "$work/minidir.log" | head -1)
		[ -n "$port" ] && break
		kill -0 "$minidir_pid" 2>/dev/null || break
		sleep 0.05
	done
	# A replica answers for the suffix only once its first refresh is in: waited for below.
	if [ -z "$port" ] || { [ "$REPLICA" != 1 ] && ! answers "$SCHEME://127.0.0.1:$port/"; }; then
		cat "$work/minidir.log"
		echo "# conformance: minidir did not start"
		exit 1
	fi
	MINIDIR_URI=$SCHEME://127.0.0.1:$port
}

start_slapd
if ! timeout 30 ldapadd -x -H "$SLAPD_URI" -D "cn=admin,$SUFFIX" -w secret -f "$work/groups.ldif" \
	> "$work/ldapadd.log" 2>&1; then
	cat "$work/ldapadd.log"
	echo "# conformance: ldapadd of the groups into slapd failed"
	exit 1
fi
stop "$slapd_pid"
slapd_pid=
if ! timeout 60 "$SLAPCAT" -f "$work/slapd.conf" -o ldif-wrap=no \
	> "$work/slapcat.ldif" 2> "$work/slapcat.log"; then
	cat "$work/slapcat.log"
	echo "# conformance: slapcat failed"
	exit 1
fi
# Group records from slapcat (memberOf of nested groups included), their member and
# uniqueMember lines replaced by the original ones.
awk -v RS= -v ORS='\n\n' -v FS='\n' '
	FNR == NR { for (i = 1; i <= NF; i++) if ($i ~ /^dn:/) orig[tolower($i)] = $0; next }
	{
		dn = tolower($1)
		if (!(dn in orig)) { print; next }
		n = split(orig[dn], o, "\n")
		out = ""
		for (i = 1; i <= NF; i++)
			if (tolower($i) !~ /^(member|uniquemember)::? /)
				out = out $i "\n"
		for (i = 1; i <= n; i++)
			if (tolower(o[i]) ~ /^(member|uniquemember)::? /)
				out = out o[i] "\n"
		sub(/\n$/, "", out)
		print out
	}' "$work/groups.ldif" "$work/slapcat.ldif" > "$work/slapd-final.ldif"
slapadd_or_fail "$work/slapd-final.ldif"
start_slapd
if [ "$REPLICA" = 1 ]; then
	printf '%s\n' "syncrepl = rid=001 provider=$SLAPD_URI bindmethod=simple" \
		"	binddn=\"cn=admin,$SUFFIX\" credentials=secret searchbase=\"$SUFFIX\"" \
		"	type=refreshAndPersist retry=\"1 +\"" >> "$work/minidir.conf"
fi
start_minidir
if [ "$REPLICA" = 1 ]; then
	# Converged: every entry with its user attributes, as each server's rootdn reads them.
	dump() {
		timeout 20 ldapsearch -x -H "$1" -D "cn=admin,$SUFFIX" -w secret -LLL -o ldif-wrap=no \
			-b "$SUFFIX" "*" 2> /dev/null | awk '/^dn::? /{dn=$0} NF{print dn " | " $0}' | LC_ALL=C sort
	}
	want=$(dump "$SLAPD_URI")
	for _ in $(seq 1 300); do # 60 s: a SAN=1 build refreshes slowly
		[ -n "$want" ] && [ "$(dump "$MINIDIR_URI")" = "$want" ] && break
		sleep 0.2
	done
	if [ "$(dump "$MINIDIR_URI")" != "$want" ]; then
		diff <(echo "$want") <(dump "$MINIDIR_URI") | head -10
		echo "# conformance: the replica did not converge with slapd in 60 s"
		exit 1
	fi
	echo "# conformance: minidir is slapd's syncrepl replica; converged ($(grep -c '^dn: ' <<< "$(dump "$SLAPD_URI" | cut -d'|' -f1 | sort -u)") entries)"
fi

# --- cases ----------------------------------------------------------------------
# trim VAR STRING: VAR=STRING without leading and trailing white space (no fork)
trim() {
	local s=$2
	s=${s#"${s%%[![:space:]]*}"}
	s=${s%"${s##*[![:space:]]}"}
	printf -v "$1" '%s' "$s"
}

declare -A known=()
while IFS= read -r line || [ -n "$line" ]; do
	case $line in '' | '#'*) continue ;; esac
	trim name "${line%% | *}"
	reason=
	[ "$line" != "${line#* | }" ] && trim reason "${line#* | }"
	known[$name]=${reason:-listed}
done < "$(suite_file known-differences.txt)"

patterns=("$@")
selected() { # name: matches a command-line pattern (all when none given)
	local p
	[ "${#patterns[@]}" -gt 0 ] || return 0
	for p in "${patterns[@]}"; do
		# shellcheck disable=SC2053  # $p is a glob pattern on purpose
		[[ $1 == $p ]] && return 0
	done
	return 1
}

# Parse cases.txt into $work/cases/N (tool, ordered, countonly, arguments).
bad=0
n=0
lineno=0
name=
tool=
note=
declare -A seen=()
names=()
notes=()
argv=()
tools=()
mkdir "$work/cases"
while IFS= read -r line || [ -n "$line" ]; do
	lineno=$((lineno + 1))
	case $line in '' | '#'*) continue ;; esac
	# Fields are separated by " | " (a filter's "(|" has no spaces around it);
	# the added space lets a line end in " |" (no arguments).
	fields=()
	rest="$line "
	while [ "${#fields[@]}" -lt 3 ] && [ "$rest" != "${rest#* | }" ]; do
		fields+=("${rest%% | *}")
		rest=${rest#* | }
	done
	fields+=("$rest")
	if [ "${#fields[@]}" -lt 3 ]; then
		echo "${CASES##*/}:$lineno: not 'name | tool | arguments [| note]'"
		bad=$((bad + 1))
		continue
	fi
	trim name "${fields[0]}"
	trim tool "${fields[1]}"
	args=${fields[2]%"${fields[2]##*[![:space:]]}"}
	trim note "${fields[3]:-}"
	if [ -n "${seen[$name]:-}" ]; then
		echo "${CASES##*/}:$lineno: duplicate case name $name"
		bad=$((bad + 1))
		continue
	fi
	seen[$name]=1
	case $tool in
	ldapsearch | ldapcompare | ldapwhoami) ;;
	*)
		echo "${CASES##*/}:$lineno: $name: unknown tool '$tool'"
		bad=$((bad + 1))
		continue
		;;
	esac
	# shellcheck disable=SC2016 # literal characters
	case $args in *'`'* | *'$('*)
		echo "${CASES##*/}:$lineno: $name: command substitution is not allowed in arguments"
		bad=$((bad + 1))
		continue
		;;
	esac
	if ! (eval "set -- $args") 2> /dev/null; then
		echo "${CASES##*/}:$lineno: $name: arguments do not parse"
		bad=$((bad + 1))
		continue
	fi
	selected "$name" || continue
	# Sorted results keep their order; [count] compares only how many entries.
	ordered=0
	countonly=0
	case " $args " in *sss=*) ordered=1 ;; esac
	case $note in *'[count]'*) countonly=1 ;; esac
	n=$((n + 1))
	names[n]=$name
	notes[n]=$note
	tools[n]=$tool
	argv[n]=$args
	printf '%s\n%s\n%s\n%s\n' "$tool" "$ordered" "$countonly" "$args" > "$work/cases/$n"
done < "$CASES"

# run_case N: runs case N against both servers; writes $work/cases/N.slapd and
# N.minidir (normalized answers) and N.slapd.err (slapd's stderr).
run_case() {
	local n=$1 tool ordered countonly args server uri mode rc
	{
		IFS= read -r tool
		IFS= read -r ordered
		IFS= read -r countonly
		IFS= read -r args
	} < "$work/cases/$n"
	eval "set -- $args"
	case $tool in
	ldapsearch) mode=search ;;
	ldapcompare) mode=compare ;;
	ldapwhoami) mode=whoami ;;
	esac
	for server in slapd minidir; do
		[ $server = slapd ] && uri=$SLAPD_URI || uri=$MINIDIR_URI
		case $tool in
		ldapsearch) timeout 10 ldapsearch -x -H "$uri" -LLL -o ldif-wrap=no "$@" ;;
		ldapcompare) timeout 10 ldapcompare -x -H "$uri" "$@" ;;
		ldapwhoami) timeout 10 ldapwhoami -x -H "$uri" "$@" ;;
		# stdin: one line ldapsearch cannot parse as a VLV window, so that after a VLV
		# search's first window (which asks for the next on stdin) it stops, exit 1.
		esac > "$work/cases/$n.$server.out" 2> "$work/cases/$n.$server.err" <<< "end"
		rc=$?
		# A case must reach slapd: a usage message means bad arguments.
		[ $server = slapd ] && grep -qi '^usage:' "$work/cases/$n.$server.err" && rc=usage
		LC_ALL=C awk -v mode="$mode" -v rc="$rc" -v errfile="$work/cases/$n.$server.err" \
			-v ordered="$ordered" -v countonly="$countonly" -v assigned="$ASSIGNED" \
			-f "$HERE/normalize.awk" "$work/cases/$n.$server.out" > "$work/cases/$n.$server"
	done
}
export -f run_case
export work HERE ASSIGNED SLAPD_URI MINIDIR_URI B P G D

# Cases only read, so they run in parallel (both servers serve many clients).
# (In the background so that a signal's trap runs at once; each case is
# bounded by its timeouts.)
# shellcheck disable=SC2016 # run_case's own $1
seq 1 "$n" | xargs -P "$JOBS" -n 1 bash -c 'run_case "$1"' run_case &
xargs_pid=$!
wait "$xargs_pid"
xargs_pid=

total=0
matched=0
known_differ=0
for i in $(seq 1 "$n"); do
	name=${names[i]}
	total=$((total + 1))
	# A case must reach slapd: libldap's own errors (bad filter: negative
	# codes, exit 128 and up), usage errors and timeouts are case bugs.
	read -r _ ref_rc < "$work/cases/$i.slapd"
	if [ "$ref_rc" = usage ] || [ "${ref_rc:-999}" -ge 124 ]; then
		echo "--- $name: BROKEN CASE: exit status $ref_rc against slapd (client-side error or timeout)"
		sed 's/^/    /' "$work/cases/$i.slapd.err" | head -5
		bad=$((bad + 1))
		continue
	fi
	if [ -n "$KEEP" ]; then
		cp "$work/cases/$i.slapd" "$KEEP/$name.slapd"
		cp "$work/cases/$i.minidir" "$KEEP/$name.minidir"
	fi
	if cmp -s "$work/cases/$i.slapd" "$work/cases/$i.minidir"; then
		matched=$((matched + 1))
		if [ -n "${known[$name]:-}" ]; then
			echo "--- $name: now matches: remove it from known-differences.txt"
			bad=$((bad + 1))
		fi
		continue
	fi
	if [ -n "${known[$name]:-}" ]; then
		known_differ=$((known_differ + 1))
		echo "--- $name: known difference: ${known[$name]}"
		[ "$QUIET" = 1 ] && continue
	else
		echo "--- $name: DIFFERS (not in known-differences.txt)"
		bad=$((bad + 1))
	fi
	echo "    ${tools[i]} ${argv[i]}"
	[ -n "${notes[i]}" ] && echo "    note: ${notes[i]}"
	diff -u --label slapd --label minidir "$work/cases/$i.slapd" "$work/cases/$i.minidir" |
		head -n 22 | sed 's/^/    /'
done

# every listed known difference must name a case
if [ "${#patterns[@]}" -eq 0 ]; then
	for name in "${!known[@]}"; do
		if [ -z "${seen[$name]:-}" ]; then
			echo "--- $name: listed in known-differences.txt but there is no such case"
			bad=$((bad + 1))
		fi
	done
fi

if kill -0 "$minidir_pid" 2>/dev/null; then
	# Stopped here, not by the EXIT trap: LeakSanitizer (SAN=1) reports at exit, so
	# its report and the exit status exist only once minidir has stopped.
	kill -TERM "$minidir_pid"
	for _ in $(seq 1 200); do kill -0 "$minidir_pid" 2>/dev/null || break; sleep 0.05; done
	minidir_rc=0
	wait "$minidir_pid" 2>/dev/null || minidir_rc=$?
	minidir_pid=
	[ "$minidir_rc" = 0 ] || { echo "--- minidir exit status $minidir_rc after SIGTERM"; bad=$((bad + 1)); }
else
	echo "--- minidir is no longer running"
	bad=$((bad + 1))
fi
if grep -qE "ERROR: (Address|Undefined|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$work/minidir.log"; then
	echo "--- sanitizer report in the minidir log:"
	grep -A30 -E "Sanitizer|runtime error" "$work/minidir.log" | head -40
	bad=$((bad + 1))
fi

elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "# conformance: slapd $SLAPD_URI, minidir $MINIDIR_URI, ${elapsed}s"
echo "# conformance: $matched of $total cases match slapd ($known_differ known differences)"
[ "$bad" = 0 ]
