#!/usr/bin/env bash
# bench/large_search.sh: server CPU per entry of 1000-entry searches (bench/run.sh's
# sub1000: (departmentNumber=7) over 100,000 entries, each with a userPassword the
# default access rules hide), for this build and, with OLD_BUILD=DIR, another one beside
# it, ROUNDS rounds with the order reversed every round.
#
#   bench/large_search.sh
#   OLD_BUILD=/tmp/main/build ROUNDS=4 SECONDS_PER_RUN=8 bench/large_search.sh
#   POLICY=msg_more ENGINE=io_uring bench/large_search.sh
#
# Load: build/searchrate --engine lean, 8 threads and connections, one search in flight
# each; a warm-up run of 2 s, then SECS seconds measured. Server CPU is utime + stime of
# /proc/PID/stat over the measured run; the figure is that over the entries returned
# (searches x 1000), and its user part. The servers: 2 workers, send_policy POLICY
# (batch), io_engine ENGINE (epoll), sizelimit unlimited; started in turn, one at a time.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
ROUNDS=${ROUNDS:-2}
SECS=${SECONDS_PER_RUN:-5}
POLICY=${POLICY:-batch}
ENGINE=${ENGINE:-epoll}
builds=("$BUILD")
[ -n "${OLD_BUILD:-}" ] && builds+=("$OLD_BUILD")
for b in "${builds[@]}"; do [ -x "$b/minidir" ] || die "no $b/minidir: run make all"; done
[ -x "$BUILD/searchrate" ] || die "no $BUILD/searchrate: run make all"
bench_init large-search
hz=$(getconf CLK_TCK)

bench/gen-ldif.sh 100000 "$SUFFIX" |
	awk '{ print } /^departmentNumber: / { print "userPassword: {SSHA}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }' > "$work/data.ldif"
printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" "schema_dir = $SCHEMA_DIR" "suffix = $SUFFIX" \
	"index = objectClass, uid, cn, mail, member, departmentNumber" "threads = 2" "send_policy = $POLICY" \
	"io_engine = $ENGINE" "sizelimit = unlimited" > "$work/minidir.conf"
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || die "minidir-import failed"

# measure BUILD: one server of BUILD, warmed, measured; prints "us/entry user-us/entry searches".
measure() {
	local pid port out n u0 t0 u1 t1
	"$1/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$work/minidir.log")
	[ -n "$port" ] || die "$1/minidir did not start: $(tail -3 "$work/minidir.log")"
	local sr=("$BUILD/searchrate" --engine lean -p "$port" -a -O 1 -t 8 --numConnections 8 -b "$SUFFIX"
		-s sub -f "(departmentNumber=7)")
	timeout 60 "${sr[@]}" -i 2 -I 1 > /dev/null 2>&1
	read -r u0 t0 < <(awk '{ print $14, $14 + $15 }' "/proc/$pid/stat")
	out=$(timeout $((SECS * 2 + 60)) "${sr[@]}" -i "$SECS" -I 1 2>&1)
	read -r u1 t1 < <(awk '{ print $14, $14 + $15 }' "/proc/$pid/stat")
	stop_pid "$pid"
	n=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' <<< "$out")
	[ "${n:-0}" -gt 0 ] || die "searchrate against $1 failed: $(tail -3 <<< "$out")"
	awk -v u=$((u1 - u0)) -v t=$((t1 - t0)) -v n="$n" -v hz="$hz" \
		'BEGIN { printf "%.3f %.3f %d\n", t / hz * 1e6 / (n * 1000), u / hz * 1e6 / (n * 1000), n }'
}

echo "# bench/large_search.sh: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ), send_policy $POLICY, io_engine $ENGINE, $ROUNDS rounds of $SECS s; uptime:$(uptime | sed 's/.*load/ load/')"
printf '| round | build | searches | server us per entry | of which user |\n|---|---|---|---|---|\n'
order=("${builds[@]}")
for round in $(seq 1 "$ROUNDS"); do
	for b in "${order[@]}"; do
		read -r per user n < <(measure "$b")
		echo "| $round | $b | $n | $per | $user |"
	done
	mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
done
echo "# reproduce: OLD_BUILD=${OLD_BUILD:-} ROUNDS=$ROUNDS SECONDS_PER_RUN=$SECS POLICY=$POLICY ENGINE=$ENGINE bench/large_search.sh"
