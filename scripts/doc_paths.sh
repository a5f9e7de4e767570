#!/bin/sh
# Checks that every repository path README.md and docs/*.md name exists, so that a
# rename which forgets the documentation fails `make test` (make docs-check).
#
# A path is (1) the target of a relative markdown link, "[text](docs/tls.md#anchor)",
# taken relative to the file that holds it (an anchor in a .md file must be one of its
# headings), or (2) any word that starts with one of the
# tree's top-level directories, "server/net/conn.c", "bench/run.sh" (cut at the first
# character that cannot be in a path: a space, a quote...; trailing "." "," ":" ";"
# dropped). A word with "*" must match at least one file; one with a "<placeholder>",
# "server/net/policy_<ident>.c", is a pattern and not checked.
# Paths outside the tree (/etc/..., build/..., var/...) are not words of (2). And (3) a
# bare file name, "conn_wake.c", "policy_test.sh" (.c .h .sh .py .awk), must be the name
# of some file in the tree: the docs name an entry point or a header that way.
#
# PENDING lists paths that another branch of the same change adds (the docs link them
# before they land); each is excused while missing and reported once it exists, so that
# it is taken off the list.
#
# Exit status 0 when every path exists; 1 with "FILE: PATH" lines on standard error.
#
# Usage: scripts/doc_paths.sh [FILE...]   (default: README.md docs/*.md)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
PENDING=""
[ $# -gt 0 ] || set -- README.md docs/*.md

dirs='protocol|storage|conf|ldif|server|tools|tests|fuzz|bench|examples|man|packaging|scripts|docs|deploy|\.ci'
status=0
checked=0
# The names of the tree's files, for (3).
find . -path ./.git -prune -o -path './build*' -prune -o -type f -print |
    sed 's#.*/##' | sort -u > "${TMPDIR:-/tmp}/doc_paths.names.$$"
trap 'rm -f "${TMPDIR:-/tmp}/doc_paths.names.$$" "${TMPDIR:-/tmp}/doc_paths.$$"' EXIT INT TERM
for f in "$@"; do
	here=$(dirname "$f")
	{
		# (1) relative link targets, made relative to the root
		# (1) relative link targets, made relative to the root; "#anchor" alone is this file's
		grep -oE '\]\([^)[:space:]]+\)' "$f" | sed 's/^](\(.*\))$/\1/; s/^#/'"${f##*/}"'#/' |
		    grep -vE '^($|[a-z]+:)' | while read -r t; do
			case $here in
			.) echo "$t" ;;
			*) echo "$here/$t" ;;
			esac
		    done
		# (2) words that start with a top-level directory
		grep -oE "(^|[^A-Za-z0-9_./-])($dirs)/[A-Za-z0-9_./*+<>-]*" "$f" |
		    sed -E 's/^[^A-Za-z.]//; s/[.,:;]+$//' | grep -v '<'
		# (3) bare file names: "=NAME" marks them for the loop below
		grep -oE '(^|[^A-Za-z0-9_./*-])[A-Za-z0-9_]+\.(c|h|sh|py|awk)([^A-Za-z0-9_./-]|$)' "$f" |
		    sed -E 's/^[^A-Za-z0-9_]//; s/[^A-Za-z0-9_]$//; s/^/=/'
	} | sort -u > "${TMPDIR:-/tmp}/doc_paths.$$"
	while read -r p; do
		# normalize a/b/../c (links from docs/ to ../man/...)
		p=$(printf '%s\n' "$p" | sed -E ':a; s#(^|/)[^/]+/\.\./#\1#; ta; s#^\./##')
		checked=$((checked + 1))
		case $p in
		=*)
			grep -qx "${p#=}" "${TMPDIR:-/tmp}/doc_paths.names.$$" && continue
			p="${p#=} (a file name)"
			;;
		*.md#*)
			# a heading of that file, as GitHub makes its anchor: lower case, only letters,
			# digits, "-" and "_" kept, spaces as "-"
			if [ -f "${p%%#*}" ] && sed -n 's/^#\{1,6\} //p' "${p%%#*}" |
			    tr '[:upper:]' '[:lower:]' | sed 's/[^a-z0-9 _-]//g; s/ /-/g' | grep -qx "${p#*#}"; then
				continue
			fi
			p="$p (no such file or heading)"
			;;
		*#*)
			[ -e "${p%%#*}" ] && continue
			;;
		*'*'*)
			# shellcheck disable=SC2086 # the word is a glob on purpose
			set -- $p
			[ -e "$1" ] && continue
			;;
		*) [ -e "$p" ] && continue ;;
		esac
		case " $PENDING " in
		*" $p "*) continue ;;
		esac
		echo "doc_paths.sh: $f: $p does not exist" >&2
		status=1
	done < "${TMPDIR:-/tmp}/doc_paths.$$"
	rm -f "${TMPDIR:-/tmp}/doc_paths.$$"
done
for p in $PENDING; do
	if [ -e "$p" ]; then
		echo "doc_paths.sh: $p exists now: take it off PENDING in scripts/doc_paths.sh" >&2
	fi
done
[ "$status" -eq 0 ] && echo "doc_paths.sh: $checked paths named in the docs exist"
exit "$status"
