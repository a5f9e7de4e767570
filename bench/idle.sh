#!/usr/bin/env bash
# bench/idle.sh: memory of idle connections, minidir beside OpenLDAP slapd, in one run.
#
# Each server holds N connections (default 10,000) that each did an anonymous bind
# and then sit idle (bench/idleconns.c); then they all close. Three cycles. Printed
# per server: anonymous memory (RssAnon, /proc/PID/status) at start, with the
# connections held, and after they closed; the cost per idle connection; and how far
# above its start the server stays after the last cycle. Never part of `make test`.
#
#   bench/idle.sh [N]          # needs build/ (make all) and slapd (scripts/deps.sh bench)
#
# tests/integration/fault_test.sh runs the same client against minidir alone.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
N=${1:-10000}
CYCLES=3
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}

bench_init idle

# Both servers and the client need N descriptors and more.
need=$((N + 100))
[ "$(ulimit -Hn)" -ge "$need" ] || die "the hard limit of open files ($(ulimit -Hn)) is below $need"
ulimit -n "$need"

[ -x "$BUILD/bench/idleconns" ] || die "$BUILD/bench/idleconns is missing: make all"
bench_directory 1000 "$work/minidir.conf" "threads = 2"

mkdir -p "$work/slapd"
{
	for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
	echo "modulepath /usr/lib/ldap"
	echo "moduleload back_mdb"
	echo "pidfile $work/slapd.pid"
	echo "threads 2"
	echo "loglevel 0"
	echo "database mdb"
	echo "suffix \"$SUFFIX\""
	echo "directory $work/slapd"
	echo "maxsize 1073741824"
} > "$work/slapd.conf"
timeout 120 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1 ||
	die "slapadd failed: $(tail -3 "$work/slapadd.log")"

rss() { awk '/^RssAnon/ { print $2 }' "/proc/$1/status"; }

# measure NAME PID PORT: prints one table row.
measure() {
	local name=$1 pid=$2 port=$3 start held=() after=() ic
	timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$port" -b "$SUFFIX" -s base > /dev/null 2>&1
	sleep 1
	start=$(rss "$pid")
	for c in $(seq 1 $CYCLES); do
		rm -f "$work/ctl" "$work/out"
		mkfifo "$work/ctl"
		timeout 300 "$BUILD/bench/idleconns" 127.0.0.1 "$port" "$N" < "$work/ctl" > "$work/out" &
		ic=$!
		exec 9> "$work/ctl"
		for _ in $(seq 1 1200); do
			grep -q '^held' "$work/out" 2> /dev/null && break
			kill -0 "$ic" 2> /dev/null || break
			sleep 0.1
		done
		grep -q '^held' "$work/out" || die "$name: idleconns failed"
		sleep 3 # idle: minidir releases the buffers of idle connections once a second
		held+=("$(rss "$pid")")
		echo go >&9
		exec 9>&-
		wait "$ic"
		sleep 3
		after+=("$(rss "$pid")")
	done
	awk -v name="$name" -v n="$N" -v start="$start" -v held="${held[*]}" -v after="${after[*]}" 'BEGIN {
		c = split(held, h, " "); split(after, a, " ")
		printf "| %s | %d | %s | %s | %.2f | %+.1f%% |\n", name, start, held, after,
			(h[c] - start) / n, (a[c] - start) * 100 / start }'
}

echo "| server | RssAnon at start (kB) | with $N idle connections, each cycle (kB) | after they closed (kB) | kB per idle connection | after the last cycle vs start |"
echo "|---|---|---|---|---|---|"

"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
mpid=$!
pids+=("$mpid")
mport=
for _ in $(seq 1 100); do
	mport=$(sed -n 's#.*listening on ldap://127.0.0.1:\([0-9]*\)/.*#\1#p' "$work/minidir.log")
	[ -n "$mport" ] && break
	sleep 0.05
done
[ -n "$mport" ] || die "minidir did not start: $(cat "$work/minidir.log")"
measure minidir "$mpid" "$mport"

sport=$((20000 + RANDOM % 20000))
timeout -s TERM 900 "$SLAPD" -d 0 -f "$work/slapd.conf" -h "ldap://127.0.0.1:$sport/" 2> "$work/slapd.log" &
pids+=($!)
for _ in $(seq 1 100); do
	[ -s "$work/slapd.pid" ] && timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$sport" -b "" -s base > /dev/null 2>&1 && break
	sleep 0.1
done
spid=$(cat "$work/slapd.pid" 2> /dev/null)
[ -n "$spid" ] || die "slapd did not start: $(cat "$work/slapd.log")"
measure slapd "$spid" "$sport"
