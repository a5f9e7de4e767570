#!/usr/bin/env bash
# The flake check (issue 45): runs the suite of a build (tests/run.sh, as make test's last
# step) N times in a row, with a busy loop at the lowest priority (nice -n 19 yes) on every
# core beside it, and stops at the first run that fails. A check that fails here without a
# code change is a defect (timing, ports, a busy machine), not a reason to run it again.
#
#   tests/repeat.sh [N [MAKE ARGUMENTS...]]     (N = 5; e.g. tests/repeat.sh 5 SAN=1)
#
# The build must be made first (make all, with the same arguments). Each run's results
# stay in BUILD/test-results/repeat-I/ (its logs and times.txt, BUILD/repeat-I.log its output); the line per run says how
# long it took and whether it passed. HOGS=0 runs without the busy loops.
set -u
cd "$(dirname "$0")/.." || exit 1
n=${1:-5}
shift || true
hogs=()
stop_hogs() {
	for p in "${hogs[@]}"; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap stop_hogs EXIT
if [ "${HOGS:-1}" != 0 ]; then
	for _ in $(seq 1 "$(nproc)"); do
		nice -n 19 yes > /dev/null &
		hogs+=($!)
	done
fi
echo "# repeat: $n runs of make tests $*, beside ${#hogs[@]} busy loops (nice -n 19 yes)"
dir=$(make --no-print-directory -s build-dir "$@")
for i in $(seq 1 "$n"); do
	t0=$(date +%s)
	if make --no-print-directory -s tests "$@" TEST_OUT="$dir/test-results/repeat-$i" > "$dir/repeat-$i.log" 2>&1; then
		echo "ok   run $i: $(($(date +%s) - t0)) s ($(tail -n 1 "$dir/repeat-$i.log"))"
	else
		echo "FAIL run $i: $(($(date +%s) - t0)) s; $dir/repeat-$i.log:"
		grep -E '^(FAIL|not ok|# tests/run.sh)' "$dir/repeat-$i.log"
		exit 1
	fi
done
echo "# repeat: $n runs in a row passed"
