#!/usr/bin/env bash
# The test runner of make test, make unit and make integration: runs the named tests
# (unit tests, integration scripts, conformance runs), N at a time, each with its output
# in a log of its own, and prints a line as each ends; at the end a table of every test's
# time, CPU and count of checks, also written to OUT/times.txt (make test-times puts it
# in tests/README.md). Exit status 1 when a test failed, ran past its time limit, or
# counted fewer checks than tests/times.txt records for it (a check lost).
#
#   tests/run.sh [-j N] [-o OUT] NAME...        (BUILD=build by default)
#
# NAME is
#   test_X              the unit test $BUILD/tests/ROOM/test_X (check; CK_DEFAULT_TIMEOUT=30)
#   X_test              tests/integration/X_test.sh
#   conformance         tests/conformance/run.sh; conformance:tls, conformance:replica
#                       (CONFORMANCE_TLS=1 / CONFORMANCE_REPLICA=1), conformance:dynlist,
#                       conformance:nested (CONFORMANCE_DIR=tests/conformance/X)
#   NAME@io_uring       NAME with MINIDIR_IO_ENGINE=io_uring
#
# -j N: tests in flight (default $TEST_JOBS, else 4: the integration scripts spend most of
# their time waiting on servers, timeouts and clients, so two cores run four well; see
# docs/development.md). -o OUT: where the logs and times.txt go (default
# $BUILD/test-results). TEST_TIMEOUT (seconds, default 900): a test still running then is
# killed, with all its processes, and counted as failed. Tests start longest first (by
# tests/times.txt), so that the last to start are short ones.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
jobs=${TEST_JOBS:-4}
out=
while getopts j:o: opt; do
	case $opt in
	j) jobs=$OPTARG ;;
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
out=${out:-$BUILD/test-results}
limit=${TEST_TIMEOUT:-900}
recorded=tests/times.txt
[ $# -gt 0 ] || { echo "usage: tests/run.sh [-j N] [-o OUT] NAME..." >&2; exit 2; }
mkdir -p "$out" || exit 1
rm -f "$out"/*.log "$out"/*.res "$out/times.txt"

# command_of NAME: the command line (words on stdout, one a line) that runs NAME; status
# 1 when NAME is no test.
command_of() {
	local name=${1%@io_uring} f
	case $name in
	test_*)
		for f in "$BUILD"/tests/*/"$name" "$BUILD"/tests/*/*/"$name"; do
			[ -x "$f" ] && { echo "$f"; return 0; }
		done
		return 1
		;;
	conformance) echo tests/conformance/run.sh ;;
	conformance:tls) printf '%s\n' env CONFORMANCE_TLS=1 CONFORMANCE_QUIET=1 tests/conformance/run.sh ;;
	conformance:replica)
		printf '%s\n' env CONFORMANCE_REPLICA=1 CONFORMANCE_QUIET=1 tests/conformance/run.sh
		;;
	conformance:*) printf '%s\n' env "CONFORMANCE_DIR=tests/conformance/${name#conformance:}" \
		CONFORMANCE_QUIET=1 tests/conformance/run.sh ;;
	*_test) [ -f "tests/integration/$name.sh" ] && echo "tests/integration/$name.sh" ;;
	*) return 1 ;;
	esac
}

# checks_of NAME LOG: the number of checks NAME ran (passed, failed and skipped), from
# its summary line in LOG; empty when it printed none.
checks_of() {
	case $1 in
	test_*) sed -n 's/^[0-9]*%: Checks: \([0-9]*\),.*/\1/p' "$2" | tail -n 1 ;;
	conformance*) sed -n 's/^# conformance: [0-9]* of \([0-9]*\) cases.*/\1/p' "$2" | tail -n 1 ;;
	*) sed -nE 's/^# .+: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\1 \2 \4/p' "$2" |
		tail -n 1 | awk 'NF{print $1 + $2 + $3}' ;;
	esac
}

# recorded_field NAME COLUMN: NAME's column in tests/times.txt (tests/times.sh: seconds and
# checks in 2 and 3 for the plain build, 4 and 5 under SAN=1, 6 and 7 under TSAN=1);
# status 1 when it holds "-".
recorded_field() {
	[ -f "$recorded" ] && awk -v n="$1" -v c="$2" '$1 == n && $c != "-" {print $c; f = 1; exit} END {exit !f}' "$recorded"
}
# This build's columns: tests are ordered by its seconds, its checks may only grow.
case ${BUILD%/} in
*-san) seconds_column=4 ;;
*-tsan) seconds_column=6 ;;
*) seconds_column=2 ;;
esac
checks_column=$((seconds_column + 1))
# check's per-test timeout (CK_DEFAULT_TIMEOUT=30, a bound on a hung test) times 4 under
# the sanitizers, whose code runs 2 to 15 times slower: a CPU-bound unit test beside three
# others must not pass it for want of a core.
[ "$seconds_column" = 2 ] || export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-4}

# run_one NAME: runs NAME with its log; writes OUT/NAME.res: "status seconds cpu checks".
run_one() {
	local name=$1 log="$out/$1.log" t0 t1 rc=0 cmd=() cpu
	mapfile -t cmd < <(command_of "$name")
	# A unit test halts at ThreadSanitizer's first report (check sees the forked test fail).
	[ "${name#test_}" != "$name" ] && export TSAN_OPTIONS="halt_on_error=1:${TSAN_OPTIONS:-}"
	t0=$(date +%s%N)
	if [ "${name%@io_uring}" != "$name" ]; then
		MINIDIR_IO_ENGINE=io_uring CK_DEFAULT_TIMEOUT=30 BUILD=$BUILD \
			timeout -k 10 "$limit" "${cmd[@]}" > "$log" 2>&1 < /dev/null || rc=$?
	else
		CK_DEFAULT_TIMEOUT=30 BUILD=$BUILD \
			timeout -k 10 "$limit" "${cmd[@]}" > "$log" 2>&1 < /dev/null || rc=$?
	fi
	t1=$(date +%s%N)
	# The CPU of the test and everything it waited for: times' second line (children).
	# (Into a file: in a pipe or $(...) times would run in a subshell that has no children.)
	times > "$out/$name.cpu"
	cpu=$(awk 'NR == 2 {gsub(/[ms]/, " "); printf "%.1f", $1 * 60 + $2 + $3 * 60 + $4}' "$out/$name.cpu")
	rm -f "$out/$name.cpu"
	[ "$rc" = 124 ] && echo "# run.sh: $name killed after $limit s (TEST_TIMEOUT)" >> "$log"
	echo "$rc $(((t1 - t0) / 1000000)) $cpu $(checks_of "$name" "$log")" > "$out/$name.res"
}

# Longest first, by the recorded seconds (tests not recorded first of all).
order=$(for n in "$@"; do
	echo "$(recorded_field "$n" "$seconds_column" || recorded_field "$n" 2 || true) $n"
done |
	awk '{ if (NF == 1) print 1e9, $1; else print }' | sort -k1,1nr -k2 | awk '{print $2}')
for n in $order; do
	command_of "$n" > /dev/null || { echo "tests/run.sh: no test named $n" >&2; exit 2; }
done

total=$#
started=0
done_count=0
failed=()
declare -A running=()
t_start=$(date +%s%N)

# report NAME: the line for NAME once it ended; on a failure its log follows.
report() {
	local name=$1 rc secs cpu checks want word=ok why=
	read -r rc secs cpu checks < "$out/$name.res"
	want=$(recorded_field "$name" "$checks_column" || true)
	if [ "$rc" != 0 ]; then
		word=FAIL why=" (exit $rc)"
	elif [ -z "$checks" ]; then
		word=FAIL why=" (no summary line)"
	elif [ -n "$want" ] && [ "$checks" -lt "$want" ]; then
		word=FAIL why=" ($checks checks, $want recorded in $recorded: a check lost)"
	fi
	done_count=$((done_count + 1))
	printf '%-4s %3d/%d %-34s %6.1f s %6.1f s CPU %5s checks%s\n' "$word" "$done_count" "$total" \
		"$name" "$(awk -v m="$secs" 'BEGIN{print m / 1000}')" "$cpu" "${checks:--}" "$why"
	if [ "$word" = FAIL ]; then
		failed+=("$name")
		# The failed checks first: a reader given only the head of this output (CI's
		# excerpt) still sees which check failed and why.
		echo "---- $out/$name.log: its failed checks and sanitizer reports ----"
		grep -E -m 20 "^not ok|ERROR: [A-Za-z]+Sanitizer|WARNING: ThreadSanitizer|runtime error:" \
			"$out/$name.log" | cut -c1-1000
		echo "---- $out/$name.log (last 60 lines) ----"
		tail -n 60 "$out/$name.log"
		echo "----"
	fi
	echo "$name $(awk -v m="$secs" 'BEGIN{printf "%.1f", m / 1000}') $cpu ${checks:-0} $word" >> "$out/times.txt"
}

for n in $order; do
	while [ "${#running[@]}" -ge "$jobs" ]; do
		wait -n -p ended "${!running[@]}"
		report "${running[$ended]}"
		unset "running[$ended]"
	done
	run_one "$n" &
	running[$!]=$n
	started=$((started + 1))
done
while [ "${#running[@]}" -gt 0 ]; do
	wait -n -p ended "${!running[@]}"
	report "${running[$ended]}"
	unset "running[$ended]"
done

wall=$(awk -v n="$(($(date +%s%N) - t_start))" 'BEGIN{printf "%.1f", n / 1e9}')
sort -k2,2nr "$out/times.txt" -o "$out/times.txt"
awk -v wall="$wall" -v jobs="$jobs" '{ s += $2; c += $3; k += $4 }
	END { printf "# tests/run.sh: %d tests, %d checks, %.0f s wall with %d in flight (%.0f s if one at a time), %.0f s CPU\n",
	      NR, k, wall, jobs, s, c }' "$out/times.txt"
if [ "${#failed[@]}" -gt 0 ]; then
	echo "# tests/run.sh: ${#failed[@]} failed: ${failed[*]} (logs in $out/)"
	exit 1
fi
