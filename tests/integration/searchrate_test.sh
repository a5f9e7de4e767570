#!/usr/bin/env bash
# searchrate against a running minidir that serves tests/data/test.ldif.
#   BUILD=build tests/integration/searchrate_test.sh HOST PORT
# Short bounded runs (every command under `timeout 30`); checks exit codes, the summary,
# the per-interval rows, error accounting by result code and the CSV output.
# Behaviour only: no timing assertions. The TLS options (--useSSL, --useStartTLS, --trustAll,
# --trustStorePath, --iterationsBeforeReconnect) run against a private OpenLDAP slapd with
# a throwaway CA (tls_certs.sh), started and stopped (by PID) here.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
. tests/integration/lib.sh
if [ $# -ne 2 ]; then
	echo "usage: $0 HOST PORT" >&2
	exit 2
fi
HOST=$1
PORT=$2
BASE=dc=test,dc=org
SR=$BUILD/searchrate

work=$(mktemp -d /tmp/searchrate-it.XXXXXX)
slapd_pid=
# stop_slapd: TERM, then KILL after 5 s, of the slapd this script started.
stop_slapd() {
	[ -n "$slapd_pid" ] || return 0
	kill -TERM "$slapd_pid" 2> /dev/null
	for _ in $(seq 1 100); do kill -0 "$slapd_pid" 2> /dev/null || break; sleep 0.05; done
	kill -0 "$slapd_pid" 2> /dev/null && kill -KILL "$slapd_pid" 2> /dev/null
	wait "$slapd_pid" 2> /dev/null
	slapd_pid=
}
trap 'stop_slapd; rm -rf "$work"' EXIT

# sr NAME args...: runs searchrate against the server; stdout in $work/NAME.out, stderr in
# $work/NAME.err, exit status in $rc.
sr() {
	local name=$1
	shift
	timeout 30 "$SR" -h "$HOST" -p "$PORT" "$@" > "$work/$name.out" 2> "$work/$name.err"
	rc=$?
}
# summary_value NAME LABEL: the number after "LABEL:" in the summary of run NAME.
summary_value() { sed -n "s/^ *$2: *\([0-9][0-9]*\).*/\1/p" "$work/$1.out" | head -1; }
# table_rows NAME: the per-interval rows (six numeric columns) of run NAME.
table_rows() { grep -E '^ *([0-9]+\.[0-9]+ +){5}[0-9]+\.[0-9]+$' "$work/$1.out"; }
show() { sed 's/^/#   /' "$work/$1.out" "$work/$1.err" | head -40; }

if [ ! -x "$SR" ]; then
	not_ok "$SR not built"
	exit 1
fi

# --- uid lookups: 2 threads, 2 intervals of 1 s ---------------------------------------------
sr uid -b "$BASE" -f "(uid=user[0-9])" -t 2 -i 1 -I 2
if [ "$rc" = 0 ]; then ok "uid lookups: exit status 0"; else not_ok "uid lookups: exit status $rc"; show uid; fi
n=$(summary_value uid "Total searches")
if [ -n "$n" ] && [ "$n" -gt 0 ]; then ok "uid lookups: summary shows $n searches"; else not_ok "uid lookups: no searches in the summary"; show uid; fi
if grep -qE '^ *0 \(Success\): [1-9][0-9]*$' "$work/uid.out"; then ok "uid lookups: result codes show 0 (Success)"; else not_ok "uid lookups: no \"0 (Success)\" count"; show uid; fi
if grep -qE '^ *(-?[1-9][0-9]*) \(' "$work/uid.out"; then not_ok "uid lookups: error result codes reported"; show uid; else ok "uid lookups: no error result codes"; fi
e=$(summary_value uid "Total errors")
if [ "$e" = 0 ]; then ok "uid lookups: 0 errors"; else not_ok "uid lookups: $e errors"; fi
rows=$(table_rows uid | wc -l)
if [ "$rows" = 2 ]; then ok "uid lookups: one row per interval (2)"; else not_ok "uid lookups: $rows rows, expected 2"; show uid; fi
# A row of a stalled second (a loaded CI machine) may have no searches: skip those.
busy=$(table_rows uid | awk '$1 > 0' | wc -l)
bad=$(table_rows uid | awk '$1 > 0 && $3 != "1.000"' | wc -l)
if [ "$rows" -gt 0 ] && [ "$busy" -gt 0 ] && [ "$bad" = 0 ]; then ok "uid lookups: Recent Entries/Srch is 1.000 in every row"; else not_ok "uid lookups: Recent Entries/Srch not 1.000 in $bad rows"; show uid; fi
for col in "Searches/Sec" "Avg Dur ms" "Entries/Srch" "Errors/Sec"; do
	grep -q -- "$col" "$work/uid.out" || not_ok "uid lookups: header has no \"$col\""
done
if grep -qE '^ *Latency ms: +min [0-9.]+ +p50 [0-9.]+ +p90 [0-9.]+ +p99 [0-9.]+ +p99\.9 [0-9.]+' "$work/uid.out"; then ok "uid lookups: latency percentiles p50/p90/p99/p99.9"; else not_ok "uid lookups: no latency percentiles"; show uid; fi
if grep -qE '^ *searchrate CPU: +[0-9.]+ s .*% of one core' "$work/uid.out"; then ok "uid lookups: reports its own CPU use"; else not_ok "uid lookups: no CPU line"; show uid; fi

# --- the two engines side by side: the same counts and result codes from each ------------------
# (--engine lean is the default over plain LDAP; every case runs on both, named explicitly)
PEOPLE=ou=people,$BASE
persons=$(timeout 10 ldapsearch -x -LLL -H "ldap://$HOST:$PORT" -b "$PEOPLE" -s one "(objectClass=person)" dn | grep -c '^dn:')
# entries_per NAME: Entries per search in the summary of run NAME ("Total entries: N (X per search)").
entries_per() { sed -n 's/^ *Total entries: *[0-9]* (\([0-9.]*\) per search).*/\1/p' "$work/$1.out"; }
# rc_count NAME CODE: how many searches of run NAME ended with result code CODE.
rc_count() { sed -n "s/^ *$2 ([^)]*): *\([0-9]*\)\$/\1/p" "$work/$1.out"; }
# engine_ok NAME WHAT ENTRIES CODE: run NAME exited 0, ENTRIES per search (x.xxx), and every
# search ended with CODE (errors: all of them, unless CODE is 0).
engine_ok() {
	local n e want_e
	n=$(summary_value "$1" "Total searches")
	e=$(summary_value "$1" "Total errors")
	want_e=0
	[ "$4" = 0 ] || want_e=$n
	if [ "$rc" = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$(entries_per "$1")" = "$3" ] &&
		[ "$(rc_count "$1" "$4")" = "$n" ] && [ "$e" = "$want_e" ]; then
		ok "$2: $n searches, $3 entries each, all result code $4"
	else
		not_ok "$2: exit $rc, ${n:-no} searches, $(entries_per "$1") entries each (want $3), $(rc_count "$1" "$4") with code $4, ${e:-no} errors"
		show "$1"
	fi
}
for e in lean libldap; do
	sr "one_$e" --engine "$e" -b "$BASE" -f "(uid=user[0-9])" -t 2 --numConnections 4 -i 1 -I 1
	engine_ok "one_$e" "$e engine: uid lookups, 4 connections on 2 threads" 1.000 0
	grep -q "^searchrate: ldap://$HOST:$PORT, $e engine, 2 threads, 4 connections, synchronous" "$work/one_$e.out" ||
		not_ok "$e engine: the banner does not name it: $(head -1 "$work/one_$e.out")"
	grep -qE '^ *Client CPU us/search: +[0-9]+\.[0-9]+ ' "$work/one_$e.out" ||
		not_ok "$e engine: no \"Client CPU us/search\" in the summary"
	sr "none_$e" --engine "$e" -b "$BASE" -f "(uid=nobody[0-9])" -i 1 -I 1
	engine_ok "none_$e" "$e engine: a filter that matches nothing" 0.000 0
	bad=$(table_rows "none_$e" | awk '$1 > 0 && $3 != "0.000"' | wc -l)
	[ "$bad" = 0 ] || not_ok "$e engine: a filter that matches nothing shows entries in $bad rows"
	sr "all_$e" --engine "$e" -b "$PEOPLE" -s one -f "(objectClass=person)" -a -O 4 -i 1 -I 1
	engine_ok "all_$e" "$e engine: every person ($persons) per search, asynchronous" "$persons.000" 0
	sr "size_$e" --engine "$e" -b "$PEOPLE" -s one -f "(objectClass=person)" -z 2 -i 1 -I 1
	engine_ok "size_$e" "$e engine: --sizeLimit 2 of $persons" 2.000 4
	sr "async_$e" --engine "$e" -b "$PEOPLE" -s one -f "(uid=user[0:9])" -A uid -a -O 16 -t 2 --numConnections 4 -i 1 -I 2
	engine_ok "async_$e" "$e engine: --asynchronous --maxOutstandingRequests 16, 4 connections" 1.000 0
	left=$(sed -n 's/^ *In flight at stop: *\([0-9]*\).*/\1/p' "$work/async_$e.out")
	[ "${left:-0}" -le 64 ] || not_ok "$e engine: $left requests in flight at stop, more than 4 x 16"
	sr "noobj_$e" --engine "$e" -b "ou=missing,$BASE" -f "(uid=user[0-9])" -a -O 8 -i 1 -I 1
	engine_ok "noobj_$e" "$e engine: a missing base, asynchronous" 0.000 32
	sr "bind_$e" --engine "$e" -D "uid=user1,$PEOPLE" -w secret1 -b "$BASE" -f "(uid=user[1-2])" -A userPassword -t 2 -i 1 -I 1
	engine_ok "bind_$e" "$e engine: simple bind as uid=user1" 1.000 0
	sr "badpw_$e" --engine "$e" -D "uid=user1,$PEOPLE" -w wrong -b "$BASE" -i 1 -I 1
	if [ "$rc" = 1 ] && grep -q "^searchrate: cannot bind to ldap://$HOST:$PORT as uid=user1,$PEOPLE: Invalid credentials (49)" "$work/badpw_$e.err"; then
		ok "$e engine: a wrong bind password stops the run: exit 1, invalidCredentials"
	else
		not_ok "$e engine: a wrong bind password: exit $rc"
		show "badpw_$e"
	fi
done
sr resume_plain -b "$BASE" --resumeTLSSessions -i 1 -I 1
if [ "$rc" = 2 ] && grep -q "^searchrate: --resumeTLSSessions needs --useSSL or --useStartTLS" "$work/resume_plain.err"; then
	ok "--resumeTLSSessions without TLS: exit 2, says why"
else
	not_ok "--resumeTLSSessions without TLS: exit $rc"
	show resume_plain
fi
sr resume_libldap --engine libldap -b "$BASE" -Z -X --resumeTLSSessions -i 1 -I 1
if [ "$rc" = 2 ] && grep -q "^searchrate: --resumeTLSSessions needs --engine lean" "$work/resume_libldap.err"; then
	ok "--resumeTLSSessions with --engine libldap: exit 2, says why"
else
	not_ok "--resumeTLSSessions with --engine libldap: exit $rc"
	show resume_libldap
fi

# --- several connections per thread, one request each: none may stall -----------------------
# (a response read ahead by libldap once never woke ppoll, and the rate fell to 0 for good).
# The last two of 5 intervals: a loaded machine may stall a whole second, not two in a row.
sr stall -b "ou=people,$BASE" -s one -f "(uid=user[0-9])" -a -O 1 -t 2 --numConnections 8 -i 1 -I 5
last=$(table_rows stall | tail -2 | awk '{ if ($1 > m) m = $1 } END { print m + 0 }')
inflight=$(sed -n 's/^ *In flight at stop: *\([0-9]*\).*/\1/p' "$work/stall.out")
if [ "$rc" = 0 ] && awk -v v="${last:-0}" 'BEGIN { exit !(v > 0) }'; then
	ok "8 connections on 2 threads keep running (last interval $last searches/s, $inflight in flight at stop)"
else
	not_ok "8 connections on 2 threads stalled (last interval ${last:-none})"
	show stall
fi

# --- asynchronous, sequential pattern, several connections per thread, warm-up -----------------
sr async -b "ou=people,$BASE" -s one -f "(uid=user[0:9])" -A uid -a -O 10 -t 2 --numConnections 4 -i 1 -I 1 --warmUpIntervals 1
n=$(summary_value async "Total searches")
if [ "$rc" = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && grep -q "warming up" "$work/async.out" &&
	[ "$(table_rows async | awk '$1 > 0 && $3 != "1.000"' | wc -l)" = 0 ] && grep -qE '^ *0 \(Success\)' "$work/async.out" &&
	[ "$(summary_value async "Total errors")" = 0 ]; then
	ok "asynchronous run with warm-up: $n searches, 1 entry each, no errors"
else
	not_ok "asynchronous run with warm-up (exit $rc)"
	show async
fi

# --- rate limit: a target total rate bounds the count (no timing asserted beyond an upper bound) -
sr rate -b "$BASE" -f "(uid=user[0-9])" -r 50 -t 2 -i 1 -I 1
n=$(summary_value rate "Total searches")
if [ "$rc" = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$n" -le 60 ]; then ok "--ratePerSecond 50 for 1 s: $n searches"; else not_ok "--ratePerSecond 50 for 1 s: ${n:-no} searches (exit $rc)"; show rate; fi

# --- a missing base: every search fails with noSuchObject (32), counted, exit 0 ----------------
sr missing -b "ou=missing,$BASE" -f "(uid=user[0-9])" -t 2 -i 1 -I 1
e=$(summary_value missing "Total errors")
if [ "$rc" = 0 ]; then ok "missing base: exit status 0 despite LDAP errors"; else not_ok "missing base: exit status $rc"; show missing; fi
if grep -qE '^ *32 \(No such object\): [1-9][0-9]*$' "$work/missing.out"; then ok "missing base: errors counted as 32 (No such object)"; else not_ok "missing base: no 32 count"; show missing; fi
if [ -n "$e" ] && [ "$e" -gt 0 ] && [ "$e" = "$(summary_value missing "Total searches")" ]; then ok "missing base: every search is an error ($e)"; else not_ok "missing base: errors ${e:-none}"; show missing; fi
bad=$(table_rows missing | awk '$4 <= 0' | wc -l)
if [ "$(table_rows missing | wc -l)" = 1 ] && [ "$bad" = 0 ]; then ok "missing base: Recent Errors/Sec > 0"; else not_ok "missing base: rows without errors"; show missing; fi

# --- CSV --------------------------------------------------------------------------------------
sr csv -b "$BASE" -f "(uid=user[1-3])" -i 1 -I 1 --csv
if [ "$rc" = 0 ] && head -1 "$work/csv.out" | grep -qx 'Recent Searches/Sec,Recent Avg Dur ms,Recent Entries/Srch,Recent Errors/Sec,Overall Searches/Sec,Overall Avg Dur ms'; then ok "--csv prints the CSV header line first"; else not_ok "--csv: no CSV header line (exit $rc)"; show csv; fi
if grep -qE '^[0-9.]+,[0-9.]+,1\.000,[0-9.]+,[0-9.]+,[0-9.]+$' "$work/csv.out"; then ok "--csv prints comma-separated rows"; else not_ok "--csv: no CSV row"; show csv; fi

# --- TLS, against a private slapd ------------------------------------------------------------
# minidir has no TLS of its own: the peer is an OpenLDAP slapd on ldap:// (for StartTLS) and
# ldaps:// ports, with a server certificate from a CA made now, and `security tls=1`, so that
# it answers nothing but StartTLS without TLS (a search over plain LDAP gets 13). Searches
# read its root DSE.
SLAPD=${SLAPD:-/usr/sbin/slapd}
TLS_SUFFIX=dc=tls,dc=test
TLS_ROOTDN=cn=admin,$TLS_SUFFIX
# write_slapd_conf DIR: a minimal slapd.conf (back-mdb, rootdn, TLS) in DIR.
write_slapd_conf() {
	mkdir -p "$1/db"
	cat > "$1/slapd.conf" << EOF
include         /etc/ldap/schema/core.schema
modulepath      /usr/lib/ldap
moduleload      back_mdb
pidfile         $1/slapd.pid
argsfile        $1/slapd.args
threads         2
loglevel        none
TLSCACertificateFile    $1/ca.pem
TLSCertificateFile      $1/server.pem
TLSCertificateKeyFile   $1/server.key
security        tls=1
database        mdb
suffix          "$TLS_SUFFIX"
rootdn          "$TLS_ROOTDN"
rootpw          secret
directory       $1/db
maxsize         10485760
dbnosync
EOF
}
# start_tls_slapd DIR: slapd on two free ports, LDAP_PORT and LDAPS_PORT; false if it
# never answered over ldaps:// with its suffix.
start_tls_slapd() {
	local dir=$1
	for _ in 1 2 3 4 5; do
		LDAP_PORT=$(free_port 2) || continue
		LDAPS_PORT=$((LDAP_PORT + 1))
		"$SLAPD" -f "$dir/slapd.conf" -h "ldap://127.0.0.1:$LDAP_PORT/ ldaps://127.0.0.1:$LDAPS_PORT/" \
			-d 0 > "$dir/slapd.log" 2>&1 &
		slapd_pid=$!
		for _ in $(seq 1 100); do
			kill -0 "$slapd_pid" 2> /dev/null || break
			if LDAPTLS_CACERT=$dir/ca.pem timeout 5 ldapsearch -x -LLL -H "ldaps://127.0.0.1:$LDAPS_PORT" \
				-b "" -s base namingContexts 2> /dev/null | grep -qi "^namingContexts: $TLS_SUFFIX\$"; then
				kill -0 "$slapd_pid" 2> /dev/null && return 0
			fi
			sleep 0.05
		done
		stop_slapd
	done
	return 1
}
# tsr NAME args...: searchrate against 127.0.0.1, reading the root DSE, 2 intervals of 0.5 s.
tsr() {
	local name=$1
	shift
	timeout 30 "$SR" -h 127.0.0.1 -b "" -s base -i 0.5 -I 2 "$@" > "$work/$name.out" 2> "$work/$name.err"
	rc=$?
}
# tls_ok NAME WHAT: run NAME exited 0 with searches and no errors.
tls_ok() {
	local n e
	n=$(summary_value "$1" "Total searches")
	e=$(summary_value "$1" "Total errors")
	if [ "$rc" = 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && [ "$e" = 0 ]; then
		ok "$2: $n searches, 0 errors"
	else
		not_ok "$2: exit $rc, ${n:-no} searches, ${e:-no} errors"
		show "$1"
	fi
}
# tls_rejected NAME WHAT PREFIX: run NAME exited 1, its message starting with PREFIX and
# saying that the server's certificate was rejected.
tls_rejected() {
	if [ "$rc" = 1 ] && grep -q "^searchrate: $3.*certificate was rejected" "$work/$1.err"; then
		ok "$2: exit 1, certificate rejected"
	else
		not_ok "$2: exit $rc, no \"$3 ... certificate was rejected\" message"
		show "$1"
	fi
}

tls=$work/tls
if [ ! -x "$SLAPD" ] || ! command -v openssl > /dev/null 2>&1; then
	not_ok "TLS: needs $SLAPD and openssl (scripts/deps.sh installs them)"
elif ! tests/integration/tls_certs.sh "$tls" > "$work/certs.log" 2>&1; then
	not_ok "TLS: tls_certs.sh failed: $(head -3 "$work/certs.log")"
elif write_slapd_conf "$tls" && ! start_tls_slapd "$tls"; then
	not_ok "TLS: slapd did not start: $(head -5 "$tls/slapd.log")"
else
	tsr plain -p "$LDAP_PORT"
	if [ "$rc" = 0 ] && grep -qE '^ *13 \(Confidentiality required\): [1-9]' "$work/plain.out" &&
		[ "$(summary_value plain "Total errors")" = "$(summary_value plain "Total searches")" ]; then
		ok "TLS: the peer answers plain LDAP searches with 13 only"
	else
		not_ok "TLS: the peer answers plain LDAP searches (exit $rc)"
		show plain
	fi
	# Each engine: the lean one (OpenSSL, the default) and libldap's (GnuTLS here).
	for e in lean libldap; do
		tsr "ssl_$e" --engine "$e" -p "$LDAPS_PORT" -Z -P "$tls/ca.pem"
		tls_ok "ssl_$e" "$e: --useSSL --trustStorePath ca.pem"
		grep -q "^searchrate: ldaps://127.0.0.1:$LDAPS_PORT, $e engine," "$work/ssl_$e.out" ||
			not_ok "$e: --useSSL: the banner does not name ldaps:// and the engine"
		tsr "starttls_$e" --engine "$e" -p "$LDAP_PORT" -q -P "$tls/ca.pem" -D "$TLS_ROOTDN" -w secret
		tls_ok "starttls_$e" "$e: --useStartTLS --trustStorePath ca.pem, then a bind"
		tsr "trustall_$e" --engine "$e" -p "$LDAPS_PORT" -Z -X
		tls_ok "trustall_$e" "$e: --useSSL --trustAll"
		tsr "untrusted_$e" --engine "$e" -p "$LDAPS_PORT" -Z
		tls_rejected "untrusted_$e" "$e: --useSSL without a trust store" "cannot connect to ldaps://127.0.0.1:$LDAPS_PORT: "
		tsr "otherca_$e" --engine "$e" -p "$LDAPS_PORT" -Z -P "$tls/other-ca.pem"
		tls_rejected "otherca_$e" "$e: --useSSL trusting another CA" "cannot connect to ldaps://127.0.0.1:$LDAPS_PORT: "
		tsr "untrusted_st_$e" --engine "$e" -p "$LDAP_PORT" -q
		tls_rejected "untrusted_st_$e" "$e: --useStartTLS without a trust store" "StartTLS on 127.0.0.1:$LDAP_PORT: "
		# A reconnect (handshake included) after each search: about one per search. On a
		# machine busy enough that 1 s holds fewer than 3 searches (a full handshake each),
		# once more for 8 intervals: 1 search and 0 reconnects shows nothing either way.
		tsr "reconnect_$e" --engine "$e" -p "$LDAPS_PORT" -Z -P "$tls/ca.pem" --iterationsBeforeReconnect 1
		n=$(summary_value "reconnect_$e" "Total searches")
		if [ "${n:-0}" -lt 3 ]; then
			tsr "reconnect_$e" --engine "$e" -p "$LDAPS_PORT" -Z -P "$tls/ca.pem" --iterationsBeforeReconnect 1 -I 8
			n=$(summary_value "reconnect_$e" "Total searches")
		fi
		r=$(summary_value "reconnect_$e" "Reconnects")
		if [ "$rc" = 0 ] && [ -n "$r" ] && [ "$r" -gt 0 ] && [ "$(summary_value "reconnect_$e" "Total errors")" = 0 ] &&
			[ $((n - r)) -ge -2 ] && [ $((n - r)) -le 2 ]; then
			ok "$e: --iterationsBeforeReconnect 1 over TLS: $r reconnects for $n searches"
		else
			not_ok "$e: --iterationsBeforeReconnect 1 over TLS: ${r:-no} reconnects for ${n:-no} searches (exit $rc)"
			show "reconnect_$e"
		fi
		tsr "async_$e" --engine "$e" -p "$LDAPS_PORT" -Z -P "$tls/ca.pem" -a -O 10 -t 2 --numConnections 4
		tls_ok "async_$e" "$e: --asynchronous over --useSSL, 4 connections on 2 threads"
		tsr "async_rc_$e" --engine "$e" -p "$LDAP_PORT" -q -P "$tls/ca.pem" -a -O 5 -t 2 --numConnections 4 --iterationsBeforeReconnect 20
		tls_ok "async_rc_$e" "$e: --asynchronous over --useStartTLS, reconnecting every 20 searches"
		r=$(summary_value "async_rc_$e" "Reconnects")
		[ -n "$r" ] && [ "$r" -gt 0 ] || not_ok "$e: --asynchronous --iterationsBeforeReconnect 20: no reconnects"
	done
fi
stop_slapd

# minidir has no StartTLS: the run stops at once, saying so.
sr nostarttls -b "$BASE" -q -X -i 1 -I 1
if [ "$rc" = 1 ] && grep -q "^searchrate: StartTLS on $HOST:$PORT: " "$work/nostarttls.err"; then
	ok "StartTLS refused: exit 1, \"$(head -1 "$work/nostarttls.err")\""
else
	not_ok "StartTLS refused: exit $rc"
	show nostarttls
fi

# --- usage errors and connection failure -----------------------------------------------------------
check_exit() {
	local name=$1 want=$2
	shift 2
	timeout 30 "$SR" "$@" > "$work/x.out" 2> "$work/x.err"
	local got=$?
	if [ "$got" = "$want" ]; then ok "$name: exit $got"; else not_ok "$name: exit $got, expected $want"; show x; fi
}
check_exit "unknown option" 2 -h "$HOST" -p "$PORT" -b "$BASE" --noSuchOption -I 1
if grep -q "Usage:" "$work/x.err"; then ok "unknown option: usage on stderr"; else not_ok "unknown option: no usage on stderr"; fi
check_exit "missing --baseDN" 2 -h "$HOST" -p "$PORT" -I 1
check_exit "bad --engine" 2 -h "$HOST" -p "$PORT" -b "$BASE" --engine fast -I 1
check_exit "bad --scope" 2 -h "$HOST" -p "$PORT" -b "$BASE" -s everything -I 1
check_exit "bad value pattern" 2 -h "$HOST" -p "$PORT" -b "$BASE" -f "(uid=user[0-)" -I 1
check_exit "bad filter" 2 -h "$HOST" -p "$PORT" -b "$BASE" -f "(uid=user" -I 1
check_exit "--help" 0 --help
printf 'not a certificate\n' > "$work/not.pem"
check_exit "--useSSL with --useStartTLS" 2 -h "$HOST" -p "$PORT" -b "$BASE" -Z -q -I 1
check_exit "--trustAll with --trustStorePath" 2 -h "$HOST" -p "$PORT" -b "$BASE" -Z -X -P "$work/not.pem" -I 1
check_exit "--trustAll without TLS" 2 -h "$HOST" -p "$PORT" -b "$BASE" -X -I 1
check_exit "--trustStorePath missing" 2 -h "$HOST" -p "$PORT" -b "$BASE" -Z -P "$work/none.pem" -I 1
check_exit "--trustStorePath not PEM" 2 -h "$HOST" -p "$PORT" -b "$BASE" -Z -P "$work/not.pem" -I 1
check_exit "no server to connect to" 1 -h 127.0.0.1 -p 1 -b "$BASE" -i 1 -I 1
check_exit "wrong bind password" 1 -h "$HOST" -p "$PORT" -D "uid=user1,ou=people,$BASE" -w wrong -b "$BASE" -i 1 -I 1

echo "# searchrate: $pass passed, $fail failed"
[ "$fail" = 0 ] || exit 1
exit 0
