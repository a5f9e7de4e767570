#!/bin/sh
# Checks that the numbers README.md quotes are the ones a script wrote, not prose that
# drifts: each block between "<!-- quote: PATH -->" and "<!-- /quote -->" must equal the
# file PATH (e.g. bench/results/headline.md, written by bench/run.sh through
# bench/headline.sh) line for line. And the README may not state a conformance count
# ("N of M cases"): no file the suite writes holds one, so the README names the suite
# and its list of known differences instead.
#
# Exit status 0 when every quote matches and there is at least one; 1 otherwise, with
# the differences on standard error.
#
# Usage: scripts/readme_numbers.sh [README]   (default: the tree's README.md)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
readme=${1:-$root/README.md}
cd "$root"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/readme_numbers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# One file per quote: $tmp/N.path holds PATH, $tmp/N.text the lines between the markers.
awk -v dir="$tmp" '
/^<!-- quote: .* -->$/ {
	if (inq) { print "nested quote at line " NR > "/dev/stderr"; exit 2 }
	inq = 1; n++; p = $0; sub(/^<!-- quote: /, "", p); sub(/ -->$/, "", p)
	print p > (dir "/" n ".path"); close(dir "/" n ".path")
	printf "" > (dir "/" n ".text")
	next
}
/^<!-- \/quote -->$/ { if (!inq) { print "a /quote without its quote at line " NR > "/dev/stderr"; exit 2 }
	inq = 0; close(dir "/" n ".text"); next }
inq { print > (dir "/" n ".text") }
END { if (inq) { print "a quote is not closed" > "/dev/stderr"; exit 2 } }
' "$readme" || exit 1

status=0
found=0
for p in "$tmp"/*.path; do
	[ -f "$p" ] || continue
	found=$((found + 1))
	src=$(cat "$p")
	if [ ! -f "$src" ]; then
		echo "readme_numbers.sh: README.md quotes $src, which does not exist" >&2
		status=1
	elif ! diff -u "$src" "${p%.path}.text" > "$tmp/diff"; then
		echo "readme_numbers.sh: README.md's quote of $src differs from the file (--- file, +++ README):" >&2
		cat "$tmp/diff" >&2
		status=1
	fi
done
if [ "$found" -eq 0 ]; then
	echo "readme_numbers.sh: README.md quotes no file (expected the headline benchmark table)" >&2
	status=1
fi
if grep -n '[0-9][0-9,]* of [0-9][0-9,]* cases' "$readme" >&2; then
	echo "readme_numbers.sh: README.md states a conformance count (above) that no script writes" >&2
	status=1
fi
[ "$status" -eq 0 ] && echo "readme_numbers.sh: $found quoted file(s) match"
exit "$status"
