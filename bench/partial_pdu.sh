#!/usr/bin/env bash
# bench/partial_pdu.sh: memory of requests clients never finish, minidir beside OpenLDAP
# slapd (and beside an older minidir build, BEFORE=DIR, e.g. one of 60cd1e4).
#
# N anonymous connections (default 1,000) each send the first SENT bytes of a request
# whose LDAPMessage declares DECLARED (default 200000/250000: under both servers' 256K
# anonymous cap) and then wait (bench/idleconns.c -p). Printed per server: RssAnon
# (/proc/PID/status) at start, with the connections held (2 s after the last was made),
# and after they closed; how many connections the server closed meanwhile. Never part
# of `make test`.
#
#   bench/partial_pdu.sh [N [SENT/DECLARED]]   # needs build/ (make all) and slapd
#
# tests/integration/fault_test.sh "unfinished requests" runs the same client against minidir.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
N=${1:-1000}
PARTIAL=${2:-200000/250000}
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
BEFORE=${BEFORE:-}

bench_init partial
need=$((N + 100))
[ "$(ulimit -Hn)" -ge "$need" ] || die "the hard limit of open files ($(ulimit -Hn)) is below $need"
ulimit -n "$need"
[ -x "$BUILD/bench/idleconns" ] || die "$BUILD/bench/idleconns is missing: make all"
bench_directory 1000 "$work/minidir.conf" "threads = 2"

bench_slapd_import

rss() { awk '/^RssAnon/ { print $2 }' "/proc/$1/status"; }

# measure NAME PID PORT: prints one table row.
measure() {
	local name=$1 pid=$2 port=$3 start held after
	timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$port" -b "$SUFFIX" -s base > /dev/null 2>&1
	sleep 2
	start=$(rss "$pid")
	idle_hold "$name" -p "$PARTIAL" 127.0.0.1 "$port" "$N"
	sleep 2
	held=$(rss "$pid")
	idle_release
	sleep 3
	after=$(rss "$pid")
	echo "| $name | $start | $held | $((held - start)) | $after | $(sed -n 's/^server-closed //p' "$work/out") |"
}

# minidir_run NAME BUILD_DIR: starts that build's minidir on the directory and measures it.
minidir_run() {
	local name=$1 dir=$2 mpid mport log=$work/minidir-$RANDOM.log
	"$dir/minidir" -f "$work/minidir.conf" 2> "$log" &
	mpid=$!
	pids+=("$mpid")
	mport=$(wait_port "$log")
	[ -n "$mport" ] || die "$name did not start: $(cat "$log")"
	measure "$name" "$mpid" "$mport"
	kill "$mpid"
	wait "$mpid" 2> /dev/null
	forget "$mpid"
}

echo "| server | RssAnon at start (kB) | with $N connections holding $PARTIAL bytes (kB) | growth (kB) | after they closed (kB) | connections the server closed |"
echo "|---|---|---|---|---|---|"
minidir_run minidir "$BUILD"
[ -n "$BEFORE" ] && minidir_run "minidir ($BEFORE)" "$BEFORE"

sport=$((20000 + RANDOM % 20000))
bench_slapd_start 900 "ldap://127.0.0.1:$sport/"
measure slapd "$spid" "$sport"
