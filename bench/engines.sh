#!/usr/bin/env bash
# bench/engines.sh: minidir's two I/O engines, epoll and io_uring, on one workload, side by
# side in one run: the same build, the same database, the batch send policy (bench/run.sh's
# batch and batch-uring), one server process each, both running the whole time, ROUNDS
# rounds of SECS seconds with the order reversed every round. For a gap bench/run.sh shows
# between the engines on one workload, measured again with more rounds and with what each
# server thread spent, so that a thread of one engine's own (io_uring's io-wq workers, say)
# shows by name. Never part of `make test`.
#
#   bench/engines.sh                               # sub100: (departmentNumber=7), 100 of 10k
#   ENTRIES=100000 bench/engines.sh                # sub1000: the same filter, 1000 of 100k
#   FILTER='(uid=user.[0-9999])' CONNS=1 bench/engines.sh      # lookup-1c
#   ROUNDS=6 SECONDS_PER_RUN=5 INFLIGHT=1 bench/engines.sh
#   BUILDS="/tmp/old-build build" ENGINE=epoll ENTRIES=1000000 FILTER='(uid=user.[0-999999])' \
#     INFLIGHT=16 WARM=1 bench/engines.sh   # two builds on one engine instead (A and B)
#
# The load: build/searchrate --engine lean, CONNS connections (and threads, 8), INFLIGHT
# requests in flight on each (1), FILTER from the suffix. Per server: searches/s, server
# CPU us per search (utime + stime of /proc/PID/stat over the rounds), per round and over
# all, then each thread's share of that CPU (/proc/PID/task/*/stat, by thread name), and
# io_uring's ratio to epoll. Needs build/ (make all). With BUILDS="DIR_A DIR_B" the two
# servers are those builds' minidir on ENGINE (epoll) instead, and the ratio is B's to A's.
# CONF="KEY = VALUE" adds one line to both servers' config (memo_bytes = 256m, say).
# WARM=1 looks every (uid=user.N) of the directory up once on each server first
# (bench_warm), so that lookups meet full memos.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
ROUNDS=${ROUNDS:-4}
SECS=${SECONDS_PER_RUN:-5}
ENTRIES=${ENTRIES:-10000}
FILTER=${FILTER:-(departmentNumber=7)}
CONNS=${CONNS:-8}
INFLIGHT=${INFLIGHT:-1}
declare -A bin engine
if [ -n "${BUILDS:-}" ]; then
	read -r "bin[A]" "bin[B]" <<< "$BUILDS"
	[ -n "${bin[B]}" ] || die "BUILDS: two build directories, A then B"
	SERVERS="A B"
	engine[A]=${ENGINE:-epoll} engine[B]=${ENGINE:-epoll}
else
	SERVERS="epoll io_uring"
	bin[epoll]=$SERVER_BUILD bin[io_uring]=$SERVER_BUILD engine[epoll]=epoll engine[io_uring]=io_uring
fi
read -r first second <<< "$SERVERS"
[ -x "$BUILD/searchrate" ] || die "no $BUILD/searchrate: run make all"
bench_init bench-engines

bench_directory "$ENTRIES" "$work/minidir.conf" "threads = $THREADS" "sizelimit = unlimited" \
	"send_policy = batch" "index = objectClass, uid, cn, mail, member, departmentNumber" \
	${CONF:+"$CONF"}
declare -A port pid
for s in $SERVERS; do
	MINIDIR_IO_ENGINE=${engine[$s]} "${SERVER_ON[@]}" "${bin[$s]}/minidir" -f "$work/minidir.conf" 2> "$work/$s.log" &
	pid[$s]=$!
	pids+=("${pid[$s]}")
	port[$s]=$(wait_port "$work/$s.log")
	[ -n "${port[$s]}" ] || die "$s did not start: $(cat "$work/$s.log")"
	grep -q "io_engine ${engine[$s]}\$" "$work/$s.log" || die "$s: not on ${engine[$s]}: $(grep io_engine "$work/$s.log")"
	[ "${WARM:-0}" = 1 ] && bench_warm "${port[$s]}" "$ENTRIES" "$work/warm.$s"
done
# Entries a search returns: FILTER's first instance (a range [A-B] of searchrate's as 0).
per_search=$(ldapsearch -x -LLL -H "ldap://127.0.0.1:${port[$first]}" -b "$SUFFIX" \
	"${FILTER//\[*\]/0}" dn | grep -c '^dn:')

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# thread_ticks PID: "NAME TICKS" for each of PID's threads (names repeat: the workers are all
# "minidir"; io_uring's io-wq workers are "iou-wrk-PID").
thread_ticks() {
	local t
	for t in /proc/"$1"/task/*; do
		awk '{ sub(/^[^(]*\(/, ""); name = $0; sub(/\).*/, "", name); sub(/^[^)]*\) /, "");
			gsub(/ /, "_", name); print name, $12 + $13 }' "$t/stat" 2> /dev/null
	done
}
# load SERVER: one searchrate run of SECS seconds; sets n (searches).
load() {
	local out
	out=$(timeout $((SECS * 2 + 30)) "${CLIENT_ON[@]}" "$BUILD/searchrate" --engine lean -p "${port[$1]}" \
		-b "$SUFFIX" -f "$FILTER" -t "$CONNS" -a -O "$INFLIGHT" -i "$SECS" -I 1 2>&1)
	n=$(sed -n 's/.*0 (Success): *\([0-9]*\).*/\1/p' <<< "$out" | head -1)
	[ -n "$n" ] || die "searchrate against $1 failed: $out"
}

declare -A ops ticks
for s in $SERVERS; do thread_ticks "${pid[$s]}" > "$work/threads0.$s"; done
echo "# bench/engines.sh: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
[ -n "${BUILDS:-}" ] && echo "# A: ${bin[A]}/minidir, B: ${bin[B]}/minidir, both on ${engine[A]}"
echo "# $FILTER from $SUFFIX on $ENTRIES entries ($per_search entries a search), $CONNS connections, $INFLIGHT in flight each, $ROUNDS rounds of $SECS s, orders alternated; $THREADS workers; uptime:$(uptime | sed 's/.*load/ load/')"
echo "| round | server | searches/s | server us/search |"
echo "|---|---|---|---|"
order=$SERVERS
for round in $(seq 1 "$ROUNDS"); do
	for s in $order; do
		c0=$(cpu_ticks "${pid[$s]}")
		load "$s"
		c1=$(cpu_ticks "${pid[$s]}")
		ops[$s]=$((${ops[$s]:-0} + n))
		ticks[$s]=$((${ticks[$s]:-0} + c1 - c0))
		awk -v r="$round" -v s="$s" -v n="$n" -v t="$SECS" -v k=$((c1 - c0)) -v hz="$hz" \
			'BEGIN { printf "| %d | %s | %.0f | %.2f |\n", r, s, n / t, k * 1e6 / hz / n }'
	done
	order=$(tr ' ' '\n' <<< "$order" | tac | tr '\n' ' ')
done
echo
echo "| server | searches/s over all | server us/search over all | CPU by thread name (threads of that name at the end: share) |"
echo "|---|---|---|---|"
for s in $SERVERS; do
	thread_ticks "${pid[$s]}" > "$work/threads1.$s"
	shares=$(awk 'NR == FNR { was[$1] += $2; next } { now[$1] += $2; n[$1]++ }
		END { for (t in now) { d = now[t] - was[t]; all += d; part[t] = d }
			for (t in part) if (part[t] > 0) printf "%s (%d threads): %.0f%% ", t, n[t], 100 * part[t] / all }' \
		"$work/threads0.$s" "$work/threads1.$s")
	awk -v s="$s" -v n="${ops[$s]}" -v t=$((ROUNDS * SECS)) -v k="${ticks[$s]}" -v hz="$hz" -v sh="$shares" \
		'BEGIN { printf "| %s | %.0f | %.2f | %s|\n", s, n / t, k * 1e6 / hz / n, sh }'
done
awk -v a="$first" -v b="$second" -v ao="${ops[$first]}" -v at="${ticks[$first]}" -v bo="${ops[$second]}" \
	-v bt="${ticks[$second]}" 'BEGIN { printf "\n%s / %s: server CPU per search %.3fx, searches/s %.3fx\n",
		b, a, (bt / bo) / (at / ao), bo / ao }'
prefix=${WARM:+WARM=$WARM }${CONF:+CONF=\"$CONF\" }
[ -n "${BUILDS:-}" ] && prefix="BUILDS=\"$BUILDS\" ENGINE=${engine[A]} $prefix"
echo "# reproduce: ${prefix}ENTRIES=$ENTRIES FILTER='$FILTER' CONNS=$CONNS INFLIGHT=$INFLIGHT ROUNDS=$ROUNDS SECONDS_PER_RUN=$SECS bench/engines.sh"
