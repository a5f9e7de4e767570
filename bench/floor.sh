#!/usr/bin/env bash
# bench/floor.sh: minidir's distance to the socket API's floor, side by side in one run.
# bench/floor.c answers every search with a fixed entry of the size of minidir's
# answer, with minidir's threading and send pattern and no LDAP work: what is left
# is the cost of epoll, read and send on this kernel. Both serve 1-entry lookups
# ((uid=user.[0-9999]) from the suffix, 10,000 entries) from build/searchrate's lean
# engine, 8 connections, first with one request in flight per connection, then with
# 16; ROUNDS rounds of SECS seconds each, the order reversed every round. minidir
# runs twice, on each I/O engine (minidir: io_engine epoll; minidir-uring: io_uring,
# one server process each, the same database). Prints lookups/s, server CPU us per
# lookup (utime + stime from /proc/PID/stat, then each apart: user, kernel), the load
# tool's CPU us per lookup,
# the server's system calls per lookup (perf stat -e raw_syscalls:sys_enter attached
# for one more run of SECS seconds each, after the timed rounds; "-" without perf),
# and each minidir as a multiple of the floor. Part of `make bench`; never of
# `make test`.
#
# Last, where minidir's time goes beyond the floor's: `perf record` (cpu-clock samples,
# which a virtual machine without hardware counters still has) of each server under the
# 16-in-flight load for SECS seconds, summed by what the time was spent in (the kernel,
# LMDB, minidir's own code, libc, ...) and minidir's top symbols. PROFILE=0 skips it;
# where perf record cannot run, a line says so instead.
#
#   bench/floor.sh                      # 3 rounds of 3 s per server and load: ~1 minute
#   ROUNDS=5 SECONDS_PER_RUN=5 bench/floor.sh
#   THREADS=8 SERVER_CPUS=0-7 CLIENT_CPUS=8-15 bench/floor.sh   # a larger machine: the servers'
#                                       # workers (minidir's threads, the floor's), and where the
#                                       # servers and searchrate run (taskset; bench/lib.sh,
#                                       # docs/multicore.md). Default: 2 workers, no taskset.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-3}
PROFILE=${PROFILE:-1}
SERVERS="minidir minidir-uring floor"

bench_init bench-floor
[ -x "$BUILD/bench/floor" ] || { echo "bench/floor.sh: $BUILD/bench/floor is missing (make all)" >&2; exit 1; }

bench_directory 10000 "$work/minidir.conf" "threads = $THREADS" "sizelimit = unlimited"
declare -A port pid
for s in minidir minidir-uring; do
	engine=epoll
	[ "$s" = minidir-uring ] && engine=io_uring
	MINIDIR_IO_ENGINE=$engine "${SERVER_ON[@]}" "$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/$s.log" &
	pid[$s]=$!
	pids+=("${pid[$s]}")
	port[$s]=$(wait_port "$work/$s.log")
	[ -n "${port[$s]}" ] || { echo "$s did not start: $(cat "$work/$s.log")" >&2; exit 1; }
	grep -q "io_engine $engine\$" "$work/$s.log" || { echo "$s: not on $engine: $(grep io_engine "$work/$s.log")" >&2; exit 1; }
done
# The floor's entry: as long as minidir's answer to a lookup (its LDIF, a close measure).
bytes=$(ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:${port[minidir]}" -b "$SUFFIX" "(uid=user.1)" | wc -c)
"${SERVER_ON[@]}" "$BUILD/bench/floor" 0 "$THREADS" "$bytes" > "$work/floor.log" 2>&1 &
pid[floor]=$!
pids+=("${pid[floor]}")
for _ in $(seq 1 100); do
	port[floor]=$(sed -n 's/^listening on \([0-9]*\).*/\1/p' "$work/floor.log")
	[ -n "${port[floor]}" ] && break
	sleep 0.05
done
[ -n "${port[floor]}" ] || { echo "floor did not start: $(cat "$work/floor.log")" >&2; exit 1; }

# cpu_ticks PID: its user + system ticks and its user ticks, read at once.
cpu_ticks() { awk '{print $14 + $15, $14}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# load SERVER INFLIGHT: one searchrate run of SECS seconds; sets n (lookups) and cl.
load() {
	out=$(timeout $((SECS * 2 + 30)) "${CLIENT_ON[@]}" "$BUILD/searchrate" --engine lean -p "${port[$1]}" \
		-b "$SUFFIX" -f "(uid=user.[0-9999])" -t 8 -a -O "$2" -i "$SECS" -I 1 2>&1)
	n=$(sed -n 's/.*0 (Success): *\([0-9]*\).*/\1/p' <<< "$out" | head -1)
	cl=$(sed -n 's/.*Client CPU us\/search: *\([0-9.]*\).*/\1/p' <<< "$out" | head -1)
	[ -n "$n" ] || { echo "searchrate against $1 failed: $out" >&2; exit 1; }
}
declare -A ops ticks uticks client sys
perf_ok=
perf stat -e raw_syscalls:sys_enter -- true > /dev/null 2>&1 && perf_ok=yes
for inflight in 1 16; do
	order=$SERVERS
	for _ in $(seq 1 "$ROUNDS"); do
		for s in $order; do
			read -r c0 u0 < <(cpu_ticks "${pid[$s]}")
			load "$s" "$inflight"
			read -r c1 u1 < <(cpu_ticks "${pid[$s]}")
			k="$s/$inflight"
			ops[$k]=$((${ops[$k]:-0} + n))
			ticks[$k]=$((${ticks[$k]:-0} + c1 - c0))
			uticks[$k]=$((${uticks[$k]:-0} + u1 - u0))
			client[$k]=$(awk -v a="${client[$k]:-0}" -v b="${cl:-0}" -v r="$ROUNDS" 'BEGIN { print a + b / r }')
		done
		order=$(tr ' ' '\n' <<< "$order" | tac | tr '\n' ' ')
	done
	# System calls per lookup: perf counts every thread's sys_enter during one more run.
	for s in $SERVERS; do
		sys[$s/$inflight]=-
		[ -n "$perf_ok" ] || continue
		perf stat -x, -e raw_syscalls:sys_enter -p "${pid[$s]}" -o "$work/perf.$s" &
		perf_pid=$!
		sleep 0.2
		load "$s" "$inflight"
		kill -INT "$perf_pid"
		wait "$perf_pid"
		calls=$(awk -F, '/raw_syscalls:sys_enter/ { print $1 }' "$work/perf.$s")
		[ -n "$calls" ] && sys[$s/$inflight]=$(awk -v c="$calls" -v n="$n" 'BEGIN { printf "%.3f", c / n }')
	done
done

echo "distance to the floor: 1-entry lookups, 8 connections, $ROUNDS rounds of ${SECS} s, orders alternated (floor entry $bytes bytes)"
echo "(servers: $THREADS workers on CPUs ${SERVER_CPUS:-any}; searchrate on CPUs ${CLIENT_CPUS:-any})"
echo "(minidir: io_engine epoll; minidir-uring: io_engine io_uring; syscalls/op from perf stat over one more run)"
printf '%-10s %-14s %12s %14s %9s %9s %14s %12s\n' in-flight server lookups/s "server us/op" "of it user" "kernel" \
	"client us/op" syscalls/op
for inflight in 1 16; do
	for s in $SERVERS; do
		k="$s/$inflight"
		printf '%-10s %-14s %12.0f %14.2f %9.2f %9.2f %14.2f %12s\n' "$inflight" "$s" \
			"$(awk -v n="${ops[$k]}" -v t="$((ROUNDS * SECS))" 'BEGIN { print n / t }')" \
			"$(awk -v k="${ticks[$k]}" -v n="${ops[$k]}" -v hz="$hz" 'BEGIN { print k * 1e6 / hz / n }')" \
			"$(awk -v k="${uticks[$k]}" -v n="${ops[$k]}" -v hz="$hz" 'BEGIN { print k * 1e6 / hz / n }')" \
			"$(awk -v k="$((ticks[$k] - uticks[$k]))" -v n="${ops[$k]}" -v hz="$hz" 'BEGIN { print k * 1e6 / hz / n }')" \
			"${client[$k]}" "${sys[$k]}"
	done
	for m in minidir minidir-uring; do
		awk -v mo="${ops[$m/$inflight]}" -v fo="${ops[floor/$inflight]}" -v mt="${ticks[$m/$inflight]}" \
			-v ft="${ticks[floor/$inflight]}" -v i="$inflight" -v m="$m" 'BEGIN {
			printf "%-10s %s/floor: lookups/s %.2fx, server CPU per lookup %.2fx\n", i, m, mo / fo, (mt / mo) / (ft / fo) }'
	done
done
echo "(goals, issue 12: server CPU per lookup at most 1.2x the floor with 1 in flight; lookups/s at least 0.5x with 16;"
echo " io_uring: fewer than 1 syscall per lookup at 8+ connections, server CPU per lookup below the floor's)"

# profile SERVER: perf record of SERVER under 16 in flight; prints the share of each
# part of the process image and the top symbols.
profile() {
	perf record -q -e cpu-clock -p "${pid[$1]}" -o "$work/perf.data.$1" > /dev/null 2>&1 &
	local perf_pid=$!
	sleep 0.2
	load "$1" 16
	kill -INT "$perf_pid"
	wait "$perf_pid" || true
	perf report -i "$work/perf.data.$1" --sort dso --stdio 2> /dev/null |
		awk -v s="$1" '/^ +[0-9.]+%/ { gsub(/^\[|\]$/, "", $2); sub(/^kernel.kallsyms$/, "kernel", $2); parts = parts sprintf("  %s %s", $2, $1) }
			END { printf "%-14s%s\n", s ":", parts }'
}
if [ "$PROFILE" = 1 ] && perf record -q -e cpu-clock -o "$work/perf.probe" -- true > /dev/null 2>&1; then
	echo
	echo "where the server time goes, 16 in flight (perf record -e cpu-clock, ${SECS} s each; share of samples):"
	for s in floor minidir minidir-uring; do
		profile "$s"
	done
	echo "minidir's (epoll) top symbols:"
	perf report -i "$work/perf.data.minidir" --sort dso,sym --stdio 2> /dev/null |
		awk '/^ +[0-9.]+%/ { n++; if (n <= 15) { $3 = ""; print "  " $0 } }'
elif [ "$PROFILE" = 1 ]; then
	echo
	echo "no profile: perf record -e cpu-clock cannot run here (perf missing, or perf_event_paranoid)"
fi
