#!/usr/bin/env bash
# Runs each libFuzzer target named on the command line (build-fuzz/fuzz_<target>,
# built by `make fuzz`) for FUZZ_SECONDS (default 60), starting from the committed
# seeds in fuzz/corpus/<target>/. New inputs go to build-fuzz/corpus/<target>/, never
# into the repository; a crash, leak, UBSan report or timeout leaves its input in
# build-fuzz/artifacts/ and makes this script exit 1.
set -u
cd "$(dirname "$0")/.." || exit 1
SECONDS_EACH=${FUZZ_SECONDS:-60}
failed=0
for t in "$@"; do
	bin=build-fuzz/fuzz_$t
	[ -x "$bin" ] || { echo "not ok - $t: $bin not built (make fuzz)"; failed=1; continue; }
	mkdir -p "build-fuzz/corpus/$t" build-fuzz/artifacts
	log=build-fuzz/fuzz_$t.log
	# -timeout: one input taking over 10 s is a hang; -rss_limit_mb bounds memory.
	timeout $((SECONDS_EACH + 120)) "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 \
		-rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$t-" \
		"build-fuzz/corpus/$t" "fuzz/corpus/$t" > "$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	if [ "$rc" = 0 ]; then
		# shellcheck disable=SC2012  # counts the inputs libFuzzer names by their SHA-1
		echo "ok - $t: ${runs:-?} runs in ${SECONDS_EACH} s, no crash ($(ls "build-fuzz/corpus/$t" | wc -l) inputs in the working corpus)"
	else
		echo "not ok - $t: exit status $rc after ${runs:-?} runs; see $log"
		grep -m1 -A25 -E "ERROR: |runtime error:|==[0-9]+== ERROR" "$log" | head -40
		failed=1
	fi
done
exit "$failed"
