#!/usr/bin/env bash
# bench/access_log.sh: what the access log costs, side by side in one run. The same
# minidir binary serves the same 10,000-entry directory three times over, with
# access_log = none, /dev/null (formatting and write(2), no storage) and a file in
# the work directory (the page cache and writeback too); 1-entry lookups from 8
# asynchronous searchrate connections (one request in flight each) are run against
# each in turn, ROUNDS times, the order reversed every round (this 2-core machine
# favours whichever runs first). Prints lookups/s and server CPU per lookup (utime +
# stime from /proc/PID/stat over the measured intervals) and each as a ratio to
# access_log = none. Part of `make bench`; never of `make test`.
#
#   bench/access_log.sh            # 4 rounds of 3 x 3 s: about 1.5 minutes
#   ROUNDS=2 SECONDS_PER_RUN=2 bench/access_log.sh
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
ROUNDS=${ROUNDS:-4}
SECS=${SECONDS_PER_RUN:-3}
MODES="none devnull file"

bench_init bench-accesslog

bench/gen-ldif.sh 10000 "$SUFFIX" > "$work/data.ldif"
declare -A port pid
for m in $MODES; do
	case $m in
	none) log=none ;;
	devnull) log=/dev/null ;;
	file) log=$work/access.log ;;
	esac
	cat > "$work/$m.conf" <<- EOF
		listen = 127.0.0.1:0
		database = $work/db.mdb
		schema_dir = $SCHEMA_DIR
		suffix = $SUFFIX
		threads = 2
		sizelimit = unlimited
		access_log = $log
	EOF
done
"$BUILD/minidir-import" -q -f "$work/none.conf" "$work/data.ldif" || exit 1
for m in $MODES; do
	"$BUILD/minidir" -f "$work/$m.conf" 2> "$work/$m.log" &
	pid[$m]=$!
	pids+=("${pid[$m]}")
done
for m in $MODES; do
	port[$m]=$(wait_port "$work/$m.log")
	[ -n "${port[$m]}" ] || { echo "minidir ($m) did not start: $(cat "$work/$m.log")" >&2; exit 1; }
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
declare -A ops ticks
order=$MODES
for _ in $(seq 1 "$ROUNDS"); do
	for m in $order; do
		c0=$(cpu_ticks "${pid[$m]}")
		out=$(timeout $((SECS * 2 + 30)) "$BUILD/searchrate" -p "${port[$m]}" -b "$SUFFIX" \
			-f "(uid=user.[0-9999])" -t 8 -a -O 1 -i "$SECS" -I 1 2>&1)
		c1=$(cpu_ticks "${pid[$m]}")
		n=$(sed -n 's/.*0 (Success): *\([0-9]*\).*/\1/p' <<< "$out" | head -1)
		[ -n "$n" ] || { echo "searchrate ($m) failed: $out" >&2; exit 1; }
		ops[$m]=$((${ops[$m]:-0} + n))
		ticks[$m]=$((${ticks[$m]:-0} + c1 - c0))
	done
	order=$(tr ' ' '\n' <<< "$order" | tac | tr '\n' ' ')
done

lines=$(wc -l < "$work/access.log")
echo "access log cost: 1-entry lookups, 8 connections, $ROUNDS rounds of ${SECS} s per mode, orders alternated"
printf '%-22s %12s %8s %14s %8s\n' access_log lookups/s ratio "server us/op" ratio
for m in $MODES; do
	rate=$(awk -v n="${ops[$m]}" -v t="$((ROUNDS * SECS))" 'BEGIN { printf "%.0f", n / t }')
	us=$(awk -v k="${ticks[$m]}" -v n="${ops[$m]}" -v hz="$hz" 'BEGIN { printf "%.2f", k * 1e6 / hz / n }')
	[ "$m" = none ] && base_rate=$rate base_us=$us
	printf '%-22s %12s %8s %14s %8s\n' "$m" "$rate" \
		"$(awk -v a="$rate" -v b="$base_rate" 'BEGIN { printf "%.3f", a / b }')" "$us" \
		"$(awk -v a="$us" -v b="$base_us" 'BEGIN { printf "%.3f", a / b }')"
done
echo "(file: $lines lines, $(($(stat -c %s "$work/access.log") / 1024)) KiB written; goal: throughput with a log at most 10% below none)"
