#!/usr/bin/env bash
# bench/perf_check.sh (make perf-check; run by .ci/run): guards the hot paths' cost. It
# counts user-space instructions with callgrind (they repeat on a noisy machine where
# timings do not) for this tree's build and for the baseline commit named in
# bench/perf_baseline, built from git in the same run, and fails when a figure of the tree
# is more than PERF_TOLERANCE percent (default 3) above the baseline's:
#
#   lookup      per 1-entry lookup          bench/instructions.sh (NOFLOOR=1)
#   sub100      per entry of a 100-entry search   ENTRIES=100 bench/instructions.sh
#   tls-lookup  per 1-entry lookup over TLS, server side   TLS=1 SIDES=server MODES=tls
#   import      per imported entry          bench/instructions_import.sh
#
# The server's figures count what its request path costs (REQUEST_PATH=1, bench/lib.sh's
# cg_instructions: reading, decoding, the operation, the flush; not the event loop's waits
# and timers) over one connection with one request in flight (CONNS=1), so that they do not
# move with the machine's load. Both builds are measured with this tree's scripts, load tools and schema (only minidir
# and minidir-import come from the baseline: SERVER_BUILD), in alternating order. Comparing
# against a build made here, not against numbers recorded elsewhere, keeps the check true on
# another CPU (glibc picks its string functions by CPU, and their counts differ); the
# figures recorded in bench/perf_baseline say what they were where the baseline was chosen.
# The baseline changes only in a commit that says why (its "why" line).
#
#   bench/perf_check.sh                    # about 8 minutes on 2 cores (2 x 4 counts, a build)
#   METRICS="lookup import" bench/perf_check.sh
#   PERF_TOLERANCE=5 bench/perf_check.sh
# The baseline's build is kept in build/perf-baseline/<commit> for the next run.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
TOLERANCE=${PERF_TOLERANCE:-3}
METRICS=${METRICS:-lookup sub100 tls-lookup import}
need valgrind callgrind_control callgrind_annotate ldapsearch git
base_file=bench/perf_baseline
commit=$(sed -n 's/^commit \([0-9a-f]\{7,40\}\)$/\1/p' "$base_file")
[ -n "$commit" ] || die "$base_file: no \"commit SHA\" line"
git rev-parse -q --verify "$commit^{commit}" > /dev/null 2>&1 ||
	die "$base_file: commit $commit is not in this checkout's history (a git clone is needed)"
for b in minidir minidir-import searchrate bench/floor; do
	[ -x "$BUILD/$b" ] || die "$BUILD/$b is missing (make all)"
done

# The baseline's minidir and minidir-import, built from its own sources.
base=$BUILD/perf-baseline/$commit
if [ ! -x "$base/build/minidir" ] || [ ! -x "$base/build/minidir-import" ]; then
	rm -rf "$base"
	mkdir -p "$base"
	git archive "$commit" | tar -x -C "$base" || die "git archive $commit failed"
	echo "building the baseline $commit in $base" >&2
	make -C "$base" -j"$(nproc)" build/minidir build/minidir-import > "$base.log" 2>&1 ||
		die "the baseline did not build: $(tail -5 "$base.log")"
fi
base_build=$(cd "$base/build" && pwd)
tree_build=$(cd "$BUILD" && pwd)

# figure METRIC SERVER_BUILD: the metric's instructions per operation for that build.
figure() {
	local out
	case $1 in
	lookup) out=$(SERVER_BUILD=$2 REQUEST_PATH=1 CONNS=1 NOFLOOR=1 TOP=0 bench/instructions.sh) ;;
	sub100) out=$(SERVER_BUILD=$2 REQUEST_PATH=1 CONNS=1 ENTRIES=100 TOP=0 bench/instructions.sh) ;;
	tls-lookup) out=$(SERVER_BUILD=$2 REQUEST_PATH=1 CONNS=1 TLS=1 SIDES=server MODES=tls TOP=0 bench/instructions.sh) ;;
	import) out=$(SERVER_BUILD=$2 bench/instructions_import.sh) ;;
	*) die "unknown metric $1 (METRICS: lookup sub100 tls-lookup import)" ;;
	esac || die "$1 with $2 failed"
	case $1 in
	lookup) awk '$1 == "minidir" { print $4 }' <<< "$out" ;;
	sub100) awk '$1 == "minidir" { print $5 }' <<< "$out" ;;
	tls-lookup) awk '$1 == "server" && $2 == "tls" { print $5 }' <<< "$out" ;;
	import) awk '$1 == "minidir-import" { print $4 }' <<< "$out" ;;
	esac
}

echo "user-space instructions per operation (callgrind): this tree beside the baseline $commit"
echo "($(sed -n 's/^why //p' "$base_file"))"
printf '%-11s %12s %12s %8s %10s\n' figure baseline tree ratio recorded
failed=0 i=0
for m in $METRICS; do
	# Alternate which build goes first, so that a drift over the run falls on both.
	if [ $((i % 2)) = 0 ]; then
		b=$(figure "$m" "$base_build") && t=$(figure "$m" "$tree_build")
	else
		t=$(figure "$m" "$tree_build") && b=$(figure "$m" "$base_build")
	fi
	i=$((i + 1))
	[ -n "$b" ] && [ -n "$t" ] && [ "$b" -gt 0 ] || die "$m: no figures (baseline \"$b\", tree \"$t\")"
	rec=$(awk -v m="$m" '$1 == "recorded" && $2 == m { print $3 }' "$base_file")
	verdict=$(awk -v b="$b" -v t="$t" -v tol="$TOLERANCE" 'BEGIN { r = t / b; printf "%.3f %s", r, (r > 1 + tol / 100 ? "over" : "ok") }')
	printf '%-11s %12d %12d %8s %10s  %s\n' "$m" "$b" "$t" "${verdict% *}" "${rec:--}" "${verdict#* }"
	[ "${verdict#* }" = ok ] || failed=1
done
if [ "$failed" = 1 ]; then
	echo "perf-check: a figure grew more than $TOLERANCE% over the baseline (bench/perf_check.sh says how to look)"
	exit 1
fi
echo "perf-check: every figure within $TOLERANCE% of the baseline"
