#!/usr/bin/env bash
# make test-times: records the last runs of the suite (tests/run.sh's times.txt under
# build/, build-san/ and build-tsan/ test-results/) in tests/times.txt and in the table of
# tests/README.md between its "test-times" markers.
#
# tests/times.txt, one test a line:
#   NAME  SECONDS CHECKS  SAN_SECONDS SAN_CHECKS  TSAN_SECONDS TSAN_CHECKS  BEFORE_SECONDS BEFORE_CHECKS
# each pair from that build's last run of tests/run.sh (which orders tests by the seconds
# of its build, and fails a test that counts fewer checks than its build's CHECKS: a
# check lost). Under the sanitizers some checks are one skip (memory figures mean nothing
# there), so each build keeps its own count. BEFORE_* are the figures of d0a1db8, the last
# tree that ran the tests one at a time (plain build), kept as they are. "-" where a test
# did not run; a test that no longer runs keeps its line, its BEFORE figures showing
# what was lost.
set -eu
cd "$(dirname "$0")/.."
recorded=tests/times.txt
readme=tests/README.md
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT

for b in build build-san build-tsan; do
	f=$b/test-results/times.txt
	if [ -f "$f" ]; then
		awk -v b="$b" '{print b, $1, $2, $4, $5}' "$f"
	fi
done > "$tmp.runs"
[ -s "$tmp.runs" ] || { echo "test-times: no run of the suite to record (make test first)" >&2; exit 1; }

# Merge: the recorded lines, then each build's run over its own two columns.
awk '
	FNR == NR {
		if ($1 !~ /^#/ && NF >= 9) { n[$1] = 1; for (i = 2; i <= 9; i++) v[$1, i] = $i }
		next
	}
	{
		col = $1 == "build" ? 2 : $1 == "build-san" ? 4 : 6
		ran[col] = 1; seen[$2, col] = 1; n[$2] = 1
		v[$2, col] = $3; v[$2, col + 1] = $4
	}
	END {
		for (k in n) {
			line = k
			for (i = 2; i <= 9; i++) {
				c = i % 2 ? i - 1 : i # the seconds column of the pair
				x = ((k, i) in v) && v[k, i] != "" ? v[k, i] : "-"
				# a test that did not run in a build that ran: "-" there
				if (i < 8 && ran[c] && !((k, c) in seen)) x = "-"
				line = line " " x
			}
			print line
		}
	}
' "$recorded" "$tmp.runs" | sort -k2,2nr -k1,1 > "$tmp.body"
{
	echo "# NAME SECONDS CHECKS SAN_SECONDS SAN_CHECKS TSAN_SECONDS TSAN_CHECKS BEFORE_SECONDS BEFORE_CHECKS (tests/times.sh)"
	cat "$tmp.body"
} > "$recorded"

# The table in tests/README.md.
{
	echo "| test | s | checks | SAN=1 s | SAN=1 checks | TSAN=1 s | TSAN=1 checks | before: s | before: checks |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
	awk '{printf "| %s |", $1; for (i = 2; i <= 9; i++) printf " %s |", $i; print ""}' "$tmp.body"
	awk '
		{ for (i = 2; i <= 9; i++) if ($i != "-") t[i] += $i }
		END { printf "| **sum** |"; for (i = 2; i <= 9; i++) printf " %.0f |", t[i]; print "" }
	' "$tmp.body"
} > "$tmp.table"
awk -v table="$tmp.table" '
	/<!-- test-times: begin -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next }
	/<!-- test-times: end -->/ { skip = 0 }
	!skip
' "$readme" > "$tmp.readme"
grep -q '<!-- test-times: begin -->' "$readme" || { echo "test-times: $readme has no test-times markers" >&2; exit 1; }
cat "$tmp.readme" > "$readme"
echo "test-times: $recorded and the table in $readme updated from: $(cut -d' ' -f1 "$tmp.runs" | sort -u | tr '\n' ' ')"
