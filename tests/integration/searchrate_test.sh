#!/usr/bin/env bash
# searchrate against a running minidir that serves tests/data/test.ldif.
#   BUILD=build tests/integration/searchrate_test.sh HOST PORT
# Short bounded runs (every command under `timeout 30`); checks exit codes, the summary,
# the per-interval rows, error accounting by result code and the CSV output.
# Behaviour only: no timing assertions.
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
trap 'rm -rf "$work"' EXIT

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

# --- several connections per thread, one request each: none may stall -----------------------
# (a response read ahead by libldap once never woke ppoll, and the rate fell to 0)
sr stall -b "ou=people,$BASE" -s one -f "(uid=user[0-9])" -a -O 1 -t 2 --numConnections 8 -i 1 -I 4
last=$(table_rows stall | tail -1 | awk '{ print $1 }')
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
check_exit "bad --scope" 2 -h "$HOST" -p "$PORT" -b "$BASE" -s everything -I 1
check_exit "bad value pattern" 2 -h "$HOST" -p "$PORT" -b "$BASE" -f "(uid=user[0-)" -I 1
check_exit "bad filter" 2 -h "$HOST" -p "$PORT" -b "$BASE" -f "(uid=user" -I 1
check_exit "--help" 0 --help
check_exit "no server to connect to" 1 -h 127.0.0.1 -p 1 -b "$BASE" -i 1 -I 1
check_exit "wrong bind password" 1 -h "$HOST" -p "$PORT" -D "uid=user1,ou=people,$BASE" -w wrong -b "$BASE" -i 1 -I 1

echo "# searchrate: $pass passed, $fail failed"
[ "$fail" = 0 ] || exit 1
exit 0
