#!/bin/sh
# Checks that the configuration keys are documented where a reader looks for them:
# every key of the key table (conf/config.h) has its entry in man/minidir.conf.5 (a ".BI \"KEY = \""
# line: the reference) and a line in conf/minidir.conf (the sample, "KEY = VALUE" or
# "#KEY = VALUE" when left at its default, with a comment in its paragraph), and neither
# names a key the code does not know.
#
# The code's keys are the rows of the key table, conf/config.h's CONFIG_KEYS: one row a
# line, "KEY(name, ..." or "OWN_KEY(name, ...". If the table changes its form, fewer than
# MIN_KEYS are found and the check fails, so that it is taught the new form rather than
# passing on nothing.
#
# It checks each key's default in its row (.def = "VALUE") against its entry in
# man/minidir.conf.5, which must say "Default: VALUE" (macros and line breaks aside).
#
# It also checks man/minidir.conf.5's RELOADING section against the table's reload column
# (".reload = CONFIG_CLASS" in a key's row; none: CONFIG_RESTART): each class's paragraph
# (".TP", then ".B At once" and so on) names with ".B KEY" / ".BR KEY ," exactly the keys the
# table gives that class.
#
# Exit status 0 when all agree; 1 with one line per mismatch on standard error.
#
# Usage: scripts/conf_keys.sh [CONFIG_H [MAN_PAGE [SAMPLE]]]   (default: the tree's files)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
code=${1:-$root/conf/config.h}
man=${2:-$root/man/minidir.conf.5}
sample=${3:-$root/conf/minidir.conf}
MIN_KEYS=30

tmp=$(mktemp -d "${TMPDIR:-/tmp}/conf_keys.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

sed -n 's/^[[:space:]]*\(OWN_\)\{0,1\}KEY(\([a-z_]*\),.*/\2/p' "$code" | sort -u > "$tmp/code"
sed -n 's/^\.BI* "\([a-z_]*\) = .*/\1/p' "$man" | sort -u > "$tmp/man"
sed -n 's/^#\{0,1\}\([a-z_]*\) *=.*/\1/p' "$sample" | sort -u > "$tmp/sample"
# Keys of the sample with no comment of prose in their block (the lines between two blank
# lines): each is set or shown with a word about what it does.
awk '
function flush(   k) { for (k in keys) if (!prose) print k; split("", keys); prose = 0 }
/^[[:space:]]*$/ { flush(); next }
/^#?[a-z_]+ *=/ { k = $0; sub(/^#/, "", k); sub(/ *=.*/, "", k); keys[k] = 1; next }
/^[#;]/ { prose = 1 }
END { flush() }' "$sample" | sort -u > "$tmp/bare"

n=$(wc -l < "$tmp/code")
status=0
if [ "$n" -lt "$MIN_KEYS" ]; then
	echo "conf_keys.sh: found only $n keys in $code (expected at least $MIN_KEYS): has the parser's form changed?" >&2
	status=1
fi
report() { # $1: file of names, $2: what is wrong with them
	while read -r k; do
		echo "conf_keys.sh: $k: $2" >&2
		status=1
	done < "$1"
}
comm -23 "$tmp/code" "$tmp/man" > "$tmp/a"
report "$tmp/a" "accepted by conf/config.h's key table, not documented in man/minidir.conf.5"
comm -23 "$tmp/code" "$tmp/sample" > "$tmp/a"
report "$tmp/a" "accepted by conf/config.h's key table, missing from conf/minidir.conf (as \"KEY = ...\" or \"#KEY = ...\")"
report "$tmp/bare" "in conf/minidir.conf without a comment saying what it does"
comm -13 "$tmp/code" "$tmp/man" > "$tmp/a"
report "$tmp/a" "documented in man/minidir.conf.5, unknown to conf/config.h's key table"
comm -13 "$tmp/code" "$tmp/sample" > "$tmp/a"
report "$tmp/a" "set in conf/minidir.conf, unknown to conf/config.h's key table"

# Each default of the table in its key's entry of the man page, as "Default: VALUE".
sed -n 's/^[[:space:]]*\(OWN_\)\{0,1\}KEY(\([a-z_]*\),.*\.def = "\([^"]*\)".*/\2\t\3/p' "$code" > "$tmp/defaults"
awk '
function flush() { if (key != "") print key "\t" text; key = ""; text = "" }
/^\.(TP|SH|PP)/ { flush(); next }
/^\.BI "[a-z_]+ = / { flush(); key = $2; sub(/^"/, "", key); next }
key != "" { l = $0; sub(/^\.[A-Z]+ /, "", l); gsub(/"/, "", l); gsub(/\\-/, "-", l); text = text " " l }
END { flush() }' "$man" > "$tmp/entries"
ndef=0
while IFS="$(printf '\t')" read -r k v; do
	ndef=$((ndef + 1))
	entry=$(awk -F '\t' -v k="$k" '$1 == k { print $2 }' "$tmp/entries" | tr -s ' ')
	case $(printf '%s' "$entry" | tr '[:upper:]' '[:lower:]') in
	*"default: $(printf '%s' "$v" | tr '[:upper:]' '[:lower:]')"*) ;;
	*)
		echo "conf_keys.sh: $k: conf/config.h's default is \"$v\"; man/minidir.conf.5 does not say \"Default: $v\"" >&2
		status=1
		;;
	esac
done < "$tmp/defaults"
if [ "$ndef" -lt 20 ]; then
	echo "conf_keys.sh: found only $ndef defaults in $code: has the table's form changed?" >&2
	status=1
fi

# What a SIGHUP does with each key: the table's reload column against the man page's lists.
sed -n 's/^[[:space:]]*\(OWN_\)\{0,1\}KEY(\([a-z_]*\),.*\.reload = CONFIG_\([A-Z_]*\).*/\3 \2/p' "$code" |
	sort > "$tmp/reload_code"
awk '
/^\.SH / { in_section = ($2 == "RELOADING"); class = ""; next }
!in_section { next }
/^\.TP/ { head = 1; next }
head && /^\.B / {
	head = 0; sub(/^\.B /, "")
	if ($0 == "At once") class = "AT_ONCE"
	else if ($0 == "With the next database file") class = "NEXT_FILE"
	else if ($0 == "Access rules") class = "RULES"
	else if ($0 == "Opened again") class = "REOPENED"
	else if ($0 == "With TLS on") class = "TLS"
	else if ($0 == "Restart") class = ""
	else class = "UNKNOWN:" $0
	if (class ~ /^UNKNOWN/) print class, "-"
	next
}
/^\.PP/ { class = ""; next }
class != "" && /^\.BR? [a-z_]+( ,)?$/ { print class, $2 }
' "$man" | sort > "$tmp/reload_man"
comm -23 "$tmp/reload_code" "$tmp/reload_man" > "$tmp/a"
while read -r class k; do
	echo "conf_keys.sh: $k: reload class $class in conf/config.h's key table, not listed so in man/minidir.conf.5's RELOADING" >&2
	status=1
done < "$tmp/a"
comm -13 "$tmp/reload_code" "$tmp/reload_man" > "$tmp/a"
while read -r class k; do
	echo "conf_keys.sh: $k: listed under $class in man/minidir.conf.5's RELOADING, not so in conf/config.h's key table" >&2
	status=1
done < "$tmp/a"
nreload=$(wc -l < "$tmp/reload_code")
if [ "$nreload" -lt 10 ]; then
	echo "conf_keys.sh: found only $nreload keys with a reload class in $code: has the table's form changed?" >&2
	status=1
fi
[ "$status" -eq 0 ] && echo "conf_keys.sh: $n keys, each in man/minidir.conf.5 and conf/minidir.conf; $ndef defaults as the man page says them; $nreload applied by SIGHUP as RELOADING says"
exit "$status"
