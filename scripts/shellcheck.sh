#!/bin/sh
# make shellcheck: runs shellcheck over every shell script of the tree, at severity style
# (every finding), with the tree's settings in .shellcheckrc. A script is a file git knows
# (tracked, or new and not ignored) named *.sh, or whose first line is a #! naming sh,
# bash or dash (.ci/run). Prints the findings and fails on any; --list prints the
# scripts only.
set -eu
cd "$(dirname "$0")/.." || exit 1

list() {
	git ls-files --cached --others --exclude-standard | while IFS= read -r f; do
		[ -f "$f" ] || continue # deleted in the work tree, not yet in the index
		case $f in
		*.sh) echo "$f" ;;
		*) if head -n 1 "$f" | grep -qE '^#!.*[/ ](ba|da)?sh( |$)'; then echo "$f"; fi ;;
		esac
	done
}

if [ "${1:-}" = --list ]; then
	list
	exit 0
fi
command -v shellcheck > /dev/null 2>&1 || { echo "shellcheck: not installed: run scripts/deps.sh" >&2; exit 1; }
scripts=$(list)
n=$(printf '%s\n' "$scripts" | wc -l)
printf '%s\n' "$scripts" | xargs -d '\n' -n 8 -P "$(nproc)" shellcheck -S style || { echo "shellcheck: findings above ($n scripts read)" >&2; exit 1; }
echo "shellcheck: $n scripts read, no finding"
