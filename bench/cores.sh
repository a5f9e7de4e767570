#!/usr/bin/env bash
# bench/cores.sh: how 1-entry lookups scale with the server's workers, side by side in one
# run, beside what docs/multicore.md's model predicts from the 1-worker run. One minidir
# per worker count (threads = 1, 2, ... N; the same 10,000-entry database, all running
# the whole time, idle when not measured), each warmed up (every entry looked up once),
# then loaded in turn by build/searchrate --engine lean ((uid=user.[0-9999]) from the
# suffix, CONNS connections, one client thread each, INFLIGHT requests in flight each) for
# SECS seconds, ROUNDS rounds, the order reversed every round. Prints per worker count:
# lookups/s and its ratio to the 1-worker run; server CPU us per lookup (utime + stime from
# /proc/PID/stat) and its ratio; the server's CPU % (100 = one core); the load tool's CPU us
# per lookup (searchrate's own figure); what else ran on the machine (/proc/stat's busy
# time less the server's and the load tool's, % of one core: the other helpers' noise);
# system calls and futex calls per lookup (perf stat on tracepoints, one more run; "-"
# without perf); and the model's lookups/s with measured / model. Part of no make target.
#
#   bench/cores.sh                          # 1..nproc workers, 2 rounds of 3 s: ~25 s on 2 cores
#   THREADS=1,2 bench/cores.sh              # the worker counts (a list: "1 2 4 8" or 1,2,4,8)
#   SERVER_CPUS=0-7 CLIENT_CPUS=8-15 bench/cores.sh   # a larger machine: the servers on 8 CPUs,
#                                           # searchrate on 8 others (taskset -c); workers 1..8
#   INFLIGHT=16 bench/cores.sh              # 16 requests in flight per connection (default 1)
#   RECONNECT=1 bench/cores.sh              # a new connection for every lookup (searchrate
#                                           # --iterationsBeforeReconnect 1): the accept path
#   CONNS=64 ROUNDS=3 SECONDS_PER_RUN=5 bench/cores.sh
#
# Defaults: the worker counts 1..N, N the CPUs of SERVER_CPUS (nproc without it); CONNS
# the larger of 8 and 4 x N (on 2 CPUs: 8, as bench/run.sh's lookup-8c); no taskset (the
# kernel places server and client on every CPU, as they share this 2-core machine).
# The model (docs/multicore.md): lookups/s = min(server, client, shared pool), where
# server = min(workers, server CPUs) x 1e6 / s1, client = min(CONNS, client CPUs) x 1e6 /
# c1, and, when server and client are not placed apart, pool = (CPUs - other) x 1e6 /
# (s1 + c1); s1 and c1 are the server's and the client's CPU us per lookup at 1 worker,
# other the CPUs the machine's other work took during that run (the column other%; placed
# apart, the server CPUs and the client CPUs each lose what other work took of them).
# SERVER_CPUS and CLIENT_CPUS should not overlap when both are given. It leaves out
# anything shared between workers, so measured / model below 1 is what sharing (and the
# machine's other load) cost.
workers_list=${THREADS:-} # before lib.sh gives THREADS its default of one count
. "$(dirname "$0")/lib.sh" # set -u, the tree's root as the directory, THREADS, *_CPUS
ROUNDS=${ROUNDS:-2}
SECS=${SECONDS_PER_RUN:-3}
INFLIGHT=${INFLIGHT:-1}
RECONNECT=${RECONNECT:-}
reconnect=()
[ -z "$RECONNECT" ] || reconnect=(--iterationsBeforeReconnect 1)
server_cpus=$(cpu_count "$SERVER_CPUS")
client_cpus=$(cpu_count "$CLIENT_CPUS")
[ -n "$workers_list" ] || workers_list=$(seq 1 "$server_cpus")
workers_list=$(tr ',' ' ' <<< "$workers_list")
maxw=0
for t in $workers_list; do
	[[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS: \"$t\" is not a worker count"
	[ "$t" -gt "$maxw" ] && maxw=$t
done
[[ " $workers_list " == *" 1 "* ]] || workers_list="1 $workers_list" # the model's base
CONNS=${CONNS:-$((4 * maxw > 8 ? 4 * maxw : 8))}
need ldapsearch taskset
bench_init bench-cores

bench_directory 10000 "$work/base.conf" "sizelimit = unlimited"
declare -A port pid ops ticks cl other_s other_c sys futex
for t in $workers_list; do
	sed "\$a threads = $t" "$work/base.conf" > "$work/w$t.conf"
	"${SERVER_ON[@]}" "$BUILD/minidir" -f "$work/w$t.conf" 2> "$work/w$t.log" &
	pid[$t]=$!
	pids+=("${pid[$t]}")
done
for t in $workers_list; do
	port[$t]=$(wait_port "$work/w$t.log")
	[ -n "${port[$t]}" ] || die "minidir (threads = $t) did not start: $(cat "$work/w$t.log")"
	bench_warm "${port[$t]}" 10000 "$work/w$t.warm"
done

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# busy_ticks [LIST]: the busy ticks (user, nice, system, irq, softirq) of the CPUs of the
# taskset list LIST (/proc/stat's cpuN lines), or of the whole machine.
busy_ticks() {
	awk -v list="${1:-}" 'BEGIN {
		n = split(list, p, ",")
		for (i = 1; i <= n; i++)
			if (split(p[i], r, "-") == 2) { for (c = r[1]; c <= r[2]; c++) want["cpu" c] = 1 } else want["cpu" p[i]] = 1
	}
	(list == "" && $1 == "cpu") || ($1 in want) { s += $2 + $3 + $4 + $7 + $8 }
	END { print s + 0 }' /proc/stat
}
# Placed apart (both lists given, which should not overlap), the other work is counted on
# each side's CPUs; else on the whole machine, where server and client share every CPU.
shared=yes slist='' clist=''
[ -n "$SERVER_CPUS" ] && [ -n "$CLIENT_CPUS" ] && shared='' slist=$SERVER_CPUS clist=$CLIENT_CPUS
# load T [SECONDS]: one searchrate run against the T-worker server; sets n (lookups), cus
# (the load tool's CPU us per lookup) and ccpu (its CPU, % of one core).
load() {
	local out
	out=$(timeout $((${2:-$SECS} * 2 + 30)) "${CLIENT_ON[@]}" "$BUILD/searchrate" --engine lean \
		-p "${port[$1]}" -b "$SUFFIX" -f "(uid=user.[0-9999])" -t "$CONNS" -a -O "$INFLIGHT" \
		"${reconnect[@]}" -i "${2:-$SECS}" -I 1 2>&1)
	n=$(sed -n 's/.*0 (Success): *\([0-9]*\).*/\1/p' <<< "$out" | head -1)
	cus=$(sed -n 's/.*Client CPU us\/search: *\([0-9.]*\).*/\1/p' <<< "$out" | head -1)
	ccpu=$(sed -n 's/.*CPU: .*= \([0-9.]*\)% of one core.*/\1/p' <<< "$out" | head -1)
	[ -n "$n" ] && [ "$n" -gt 0 ] || die "searchrate against threads = $1 failed: $out"
}
echo "uptime at the start: $(uptime)"
order=$workers_list
for _ in $(seq 1 "$ROUNDS"); do
	for t in $order; do
		c0=$(cpu_ticks "${pid[$t]}") b0=$(busy_ticks "$slist") w0=$EPOCHREALTIME
		k0=$(busy_ticks "$clist")
		load "$t"
		c1=$(cpu_ticks "${pid[$t]}") b1=$(busy_ticks "$slist") w1=$EPOCHREALTIME
		k1=$(busy_ticks "$clist")
		ops[$t]=$((${ops[$t]:-0} + n))
		ticks[$t]=$((${ticks[$t]:-0} + c1 - c0))
		cl[$t]=$(awk -v a="${cl[$t]:-0}" -v b="${cus:-0}" -v r="$ROUNDS" 'BEGIN { print a + b / r }')
		# Busy CPU time over the run less the server's and the client's: the other work that
		# ran meanwhile, % of one core, averaged over the rounds; placed apart, on the
		# server's CPUs (other_s) and on the client's (other_c), else all in other_s.
		read -r "other_s[$t]" "other_c[$t]" < <(awk -v os="${other_s[$t]:-0}" -v oc="${other_c[$t]:-0}" \
			-v b="$((b1 - b0))" -v k="$((k1 - k0))" -v s="$((c1 - c0))" -v c="${ccpu:-0}" \
			-v w="$(awk -v x="$w0" -v y="$w1" 'BEGIN { print y - x }')" -v hz="$hz" -v r="$ROUNDS" \
			-v shared="$shared" 'BEGIN {
			a = 100 * (b - s) / hz / w; d = 100 * k / hz / w - c
			if (shared != "") { a -= c; d = 0 }
			print os + (a > 0 ? a : 0) / r, oc + (d > 0 ? d : 0) / r }')
	done
	order=$(tr ' ' '\n' <<< "$order" | tac | tr '\n' ' ')
done
# System calls and futex calls per lookup (a futex call is a lock or a wait that could not
# be had in user space), perf stat on every thread during one more run of each.
perf_ok=
perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_futex -- true > /dev/null 2>&1 && perf_ok=yes
for t in $workers_list; do
	sys[$t]=- futex[$t]=-
	[ -n "$perf_ok" ] || continue
	perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_futex -p "${pid[$t]}" -o "$work/perf.$t" &
	perf_pid=$!
	sleep 0.2
	load "$t"
	kill -INT "$perf_pid"
	wait "$perf_pid"
	sys[$t]=$(awk -F, -v n="$n" '/raw_syscalls:sys_enter/ { printf "%.2f", $1 / n }' "$work/perf.$t")
	futex[$t]=$(awk -F, -v n="$n" '/syscalls:sys_enter_futex/ { printf "%.3f", $1 / n }' "$work/perf.$t")
done
echo "uptime at the end:   $(uptime)"

rev=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)
echo
echo "lookups by the server's workers: minidir $rev, $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "1-entry lookups (uid=user.[0-9999]), 10,000 entries, searchrate --engine lean: $CONNS connections (one thread each),"
echo "$INFLIGHT in flight each${RECONNECT:+, a new connection per lookup}; $ROUNDS rounds of ${SECS} s per worker count, orders alternated; server on CPUs ${SERVER_CPUS:-any}"
echo "($server_cpus), searchrate on CPUs ${CLIENT_CPUS:-any} ($client_cpus)"
printf '%7s %10s %7s %10s %7s %7s %10s %7s %8s %8s %10s %7s\n' workers lookups/s x1 "srv us/op" x1 "srv %" \
	"cli us/op" "other%" sys/op futex/op model meas/mod
s1=$(awk -v k="${ticks[1]}" -v n="${ops[1]}" -v hz="$hz" 'BEGIN { print k * 1e6 / hz / n }')
r1=$(awk -v n="${ops[1]}" -v t="$((ROUNDS * SECS))" 'BEGIN { print n / t }')
for t in $workers_list; do
	awk -v t="$t" -v n="${ops[$t]}" -v k="${ticks[$t]}" -v hz="$hz" -v secs="$((ROUNDS * SECS))" \
		-v r1="$r1" -v s1="$s1" -v c1="${cl[1]}" -v c="${cl[$t]}" -v os="${other_s[$t]}" -v oc="${other_c[$t]}" \
		-v sys="${sys[$t]}" -v fx="${futex[$t]}" -v scpu="$server_cpus" -v ccpus="$client_cpus" \
		-v conns="$CONNS" -v shared="$shared" -v cpus="$(nproc)" 'BEGIN {
		r = n / secs; s = k * 1e6 / hz / n
		# Each side gets the CPUs the other work left it (os, oc: % of one core); sharing
		# the machine, server and client together get what it left.
		sc = shared != "" ? scpu : scpu - os / 100
		srv = (t < sc ? t : sc) * 1e6 / s1
		cc = ccpus - oc / 100
		cli = c1 > 0 ? (conns < cc ? conns : cc) * 1e6 / c1 : srv
		m = srv < cli ? srv : cli
		if (shared != "" && (cpus - os / 100) * 1e6 / (s1 + c1) < m) m = (cpus - os / 100) * 1e6 / (s1 + c1)
		printf "%7d %10.0f %7.2f %10.2f %7.2f %7.0f %10.2f %7.0f %8s %8s %10.0f %7.2f\n", t, r, r / r1, s, s / s1,
			100 * k / hz / secs, c, os + oc, sys, fx, m, r / m
	}'
done
echo "(x1: the ratio to the 1-worker run; srv %: the server's CPU, 100 = one core; other%: the machine's busy"
echo " time less the server's and searchrate's, % of one core; model: docs/multicore.md, from the 1-worker"
echo " figures with nothing shared between workers; meas/mod below 1: what sharing and other load cost)"
