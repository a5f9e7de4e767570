#!/usr/bin/env bash
# bench/floor.sh: minidir's distance to the socket API's floor, side by side in one run.
# bench/floor.c answers every search with a fixed entry of the size of minidir's
# answer, with minidir's threading and send pattern and no LDAP work: what is left
# is the cost of epoll, read and send on this kernel. Both serve 1-entry lookups
# ((uid=user.[0-9999]) from the suffix, 10,000 entries) from build/searchrate's lean
# engine, 8 connections, first with one request in flight per connection, then with
# 16; ROUNDS rounds of SECS seconds each, the order reversed every round. Prints
# lookups/s, server CPU us per lookup (utime + stime from /proc/PID/stat), the load
# tool's CPU us per lookup, and minidir as a multiple of the floor. Part of
# `make bench`; never of `make test`.
#
#   bench/floor.sh                      # 3 rounds of 3 s per server and load: ~1 minute
#   ROUNDS=5 SECONDS_PER_RUN=5 bench/floor.sh
set -u
cd "$(dirname "$0")/.." || exit 1
. bench/lib.sh
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-3}
SUFFIX=dc=example,dc=com
SERVERS="minidir floor"

bench_init bench-floor
[ -x "$BUILD/bench/floor" ] || { echo "bench/floor.sh: $BUILD/bench/floor is missing (make all)" >&2; exit 1; }

bench/gen-ldif.sh 10000 "$SUFFIX" > "$work/data.ldif"
cat > "$work/minidir.conf" << EOF
listen = 127.0.0.1:0
database = $work/db.mdb
suffix = $SUFFIX
threads = 2
sizelimit = unlimited
EOF
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || exit 1
declare -A port pid
"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
pid[minidir]=$!
pids+=("${pid[minidir]}")
for _ in $(seq 1 100); do
	port[minidir]=$(sed -n 's#.*listening on ldap://127.0.0.1:\([0-9]*\)/.*#\1#p' "$work/minidir.log" | head -1)
	[ -n "${port[minidir]}" ] && break
	sleep 0.05
done
[ -n "${port[minidir]}" ] || { echo "minidir did not start: $(cat "$work/minidir.log")" >&2; exit 1; }
# The floor's entry: as long as minidir's answer to a lookup (its LDIF, a close measure).
bytes=$(ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:${port[minidir]}" -b "$SUFFIX" "(uid=user.1)" | wc -c)
"$BUILD/bench/floor" 0 2 "$bytes" > "$work/floor.log" 2>&1 &
pid[floor]=$!
pids+=("${pid[floor]}")
for _ in $(seq 1 100); do
	port[floor]=$(sed -n 's/^listening on \([0-9]*\).*/\1/p' "$work/floor.log")
	[ -n "${port[floor]}" ] && break
	sleep 0.05
done
[ -n "${port[floor]}" ] || { echo "floor did not start: $(cat "$work/floor.log")" >&2; exit 1; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
declare -A ops ticks client
for inflight in 1 16; do
	order=$SERVERS
	for r in $(seq 1 "$ROUNDS"); do
		for s in $order; do
			c0=$(cpu_ticks "${pid[$s]}")
			out=$(timeout $((SECS * 2 + 30)) "$BUILD/searchrate" --engine lean -p "${port[$s]}" \
				-b "$SUFFIX" -f "(uid=user.[0-9999])" -t 8 -a -O "$inflight" -i "$SECS" -I 1 2>&1)
			c1=$(cpu_ticks "${pid[$s]}")
			n=$(sed -n 's/.*0 (Success): *\([0-9]*\).*/\1/p' <<< "$out" | head -1)
			cl=$(sed -n 's/.*Client CPU us\/search: *\([0-9.]*\).*/\1/p' <<< "$out" | head -1)
			[ -n "$n" ] || { echo "searchrate against $s failed: $out" >&2; exit 1; }
			k="$s/$inflight"
			ops[$k]=$((${ops[$k]:-0} + n))
			ticks[$k]=$((${ticks[$k]:-0} + c1 - c0))
			client[$k]=$(awk -v a="${client[$k]:-0}" -v b="${cl:-0}" -v r="$ROUNDS" 'BEGIN { print a + b / r }')
		done
		order=$(tr ' ' '\n' <<< "$order" | tac | tr '\n' ' ')
	done
done

echo "distance to the floor: 1-entry lookups, 8 connections, $ROUNDS rounds of ${SECS} s, orders alternated (floor entry $bytes bytes)"
printf '%-10s %-8s %12s %14s %14s\n' in-flight server lookups/s "server us/op" "client us/op"
for inflight in 1 16; do
	for s in $SERVERS; do
		k="$s/$inflight"
		printf '%-10s %-8s %12.0f %14.2f %14.2f\n' "$inflight" "$s" \
			"$(awk -v n="${ops[$k]}" -v t="$((ROUNDS * SECS))" 'BEGIN { print n / t }')" \
			"$(awk -v k="${ticks[$k]}" -v n="${ops[$k]}" -v hz="$hz" 'BEGIN { print k * 1e6 / hz / n }')" \
			"${client[$k]}"
	done
	m="minidir/$inflight" f="floor/$inflight"
	awk -v mo="${ops[$m]}" -v fo="${ops[$f]}" -v mt="${ticks[$m]}" -v ft="${ticks[$f]}" -v i="$inflight" 'BEGIN {
		printf "%-10s minidir/floor: lookups/s %.2fx, server CPU per lookup %.2fx\n", i, mo / fo, (mt / mo) / (ft / fo) }'
done
echo "(goals, issue 12: server CPU per lookup at most 1.2x the floor with 1 in flight; lookups/s at least 0.5x with 16)"
