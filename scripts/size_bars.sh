#!/bin/sh
# Checks the size bars of issue 48 on the product's C files (those under conf/ protocol/
# password/ storage/ ldif/ server/ tools/; not tests/, bench/, fuzz/), as scripts/layers.sh checks
# the include graph:
#   - a .c file has at most 700 lines (reported at its line 701);
#   - a function has at most 80 lines, from the line at column 0 that starts its
#     definition to its closing "}" at column 0 (clang-format's Linux braces put the "{"
#     of a function alone at column 0, and nothing but a top-level block's "}" there).
# A bar is a signal to cut a file or a function by concern, not a count to squeeze under:
# the few functions tolerated while they are cut are listed in ALLOW below, with a reason.
# Exit status 0 when the bars hold, 1 when one is crossed.
#
# Usage: scripts/size_bars.sh   (run from anywhere)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

max_file=700
max_function=80

# "FILE FUNCTION  # reason", one a line: over the function bar, and known to be.
ALLOW='
'

files=$(find conf protocol password storage ldif server tools -name '*.c' -type f | LC_ALL=C sort)
# shellcheck disable=SC2086  # $files: the tree's paths, no spaces: one argument each
awk -v max_file="$max_file" -v max_function="$max_function" -v allow="$ALLOW" '
# The function a definition names: the identifier before its first "(" that is not an
# attribute ("__attribute__((format(printf, 2, 3))) static int bad(...)" is bad).
function name_of(text,    i, c, depth, word) {
	word = ""
	for (i = 1; i <= length(text); i++) {
		c = substr(text, i, 1)
		if (c ~ /[A-Za-z0-9_]/) {
			word = word c
			continue
		}
		if (c == "(" && word != "" && word != "__attribute__")
			return word
		if (c == "(") { # an attribute: skip its parentheses
			for (depth = 0; i <= length(text); i++) {
				c = substr(text, i, 1)
				depth += (c == "(") - (c == ")")
				if (depth == 0)
					break
			}
		}
		if (c != " " && c != "\t" && c != "*")
			word = ""
		else if (word != "")
			word = ""
	}
	return "?"
}
function report(    len, key) {
	len = end - start + 1
	key = FILENAME " " fname
	if (key in allowed) {
		if (len > max_function)
			over[key] = len
		return
	}
	if (len > longest) {
		longest = len; longest_at = FILENAME ":" start " " fname
	}
	if (len <= max_function)
		return
	printf "%s:%d: function %s is %d lines (at most %d)\n", FILENAME, start, fname, len, max_function
	status = 1
}
function file_end() {
	if (file == "")
		return
	if (lines > max_file) {
		printf "%s:%d: %d lines (a product .c file has at most %d)\n", file, max_file + 1, lines, max_file
		status = 1
	}
	if (lines > largest) {
		largest = lines; largest_at = file
	}
}
BEGIN {
	n = split(allow, rows, "\n")
	for (i = 1; i <= n; i++) {
		if (rows[i] ~ /^[[:space:]]*$/)
			continue
		split(rows[i], w, /[[:space:]]+/)
		allowed[w[1] " " w[2]] = 1
	}
}
FNR == 1 {
	file_end()
	file = FILENAME; in_body = 0; head = ""; in_comment = 0; in_macro = 0
}
{
	lines = FNR
	line = $0
	if (in_body) {
		if (line ~ /^}/) {
			end = FNR; in_body = 0; head = ""
			report()
		}
		next
	}
	# Outside a function: comments and the preprocessor start no definition.
	if (in_macro) {
		in_macro = line ~ /\\$/
		next
	}
	if (in_comment) {
		if (line !~ /\*\//)
			next
		in_comment = 0
		sub(/^.*\*\//, "", line)
	}
	if (line ~ /^#/) {
		in_macro = line ~ /\\$/
		next
	}
	gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", line)
	if (line ~ /\/\*/) {
		in_comment = 1
		sub(/\/\*.*$/, "", line)
	}
	sub(/\/\/.*$/, "", line)
	# A declaration or a definition starts, or goes on after a line of its return type
	# alone ("static int" above "name(...)", not a call of a macro ending in ")").
	if (line ~ /^[A-Za-z_]/ && head != "" && head !~ /\)[ \t]*$/) {
		head = head " " line
	} else if (line ~ /^[A-Za-z_]/) {
		head = line; start = FNR
	} else if (head != "" && line ~ /^[ \t]/) {
		head = head " " line
	}
	if (line ~ /^{/ && head ~ /\)[^=]*$/) { # a body, its "{" alone (Linux braces)
		fname = name_of(head); in_body = 1
	} else if (line ~ /^[A-Za-z_]/ && line ~ /\)[ \t]*{[ \t]*$/ && line !~ /=/) {
		fname = name_of(head); in_body = 1 # "{" ending the signature
	} else if (line ~ /;[ \t]*$/ || line ~ /^}/) {
		head = ""
	}
}
END {
	file_end()
	for (key in allowed)
		if (!(key in over)) {
			split(key, w, " ")
			printf "note: size_bars.sh: %s %s is allowed but no longer over %d lines; remove its line\n", w[1], w[2], max_function
		}
	printf "size bars: %s (largest .c %s, %d lines; longest function %s, %d lines; the allowed aside)\n", status ? "FAILED" : "ok", largest_at, largest, longest_at, longest
	exit status
}' $files
