#!/bin/sh
# bench/headline.sh: the README's headline benchmark table, from bench/run.sh's raw
# numbers. Reads DIR/latest.tsv and the "Recorded ..." line of DIR/latest.md, writes
# DIR/headline.md: per workload, slapd's and minidir's (batch policy, epoll) searches/s,
# their ratio and each server's CPU per operation. bench/run.sh runs it after each run;
# scripts/readme_numbers.sh checks that README.md quotes the file as it is.
#
#   bench/headline.sh [DIR]      # default bench/results
set -eu
cd "$(dirname "$0")/.."
dir=${1:-bench/results}
tsv=$dir/latest.tsv
[ -f "$tsv" ] || { echo "bench/headline.sh: no $tsv (run bench/run.sh first)" >&2; exit 1; }
# shellcheck disable=SC2016 # the backquotes are markdown, not a command
recorded=$(sed -n 's/^Recorded \([^`]*\) by `\([^`]*\)`.*/\1, `\2`/p' "$dir/latest.md" 2> /dev/null | head -n 1)
{
	echo "Recorded ${recorded:-(date unknown)}; minidir with the batch policy on epoll beside"
	echo "OpenLDAP slapd (back-mdb), same data, indexes and threads, the load tool on the same machine."
	echo "Every column and server, and the machine: \`bench/results/latest.md\`."
	echo
	echo "| workload | slapd searches/s | minidir searches/s | minidir / slapd | slapd CPU us/op | minidir CPU us/op |"
	echo "|---|--:|--:|--:|--:|--:|"
	awk -F'\t' '
	# The workload names of bench/run.sh, in words.
	function desc(w,    t, p) {
		if (w ~ /^tls-/) { t = "TLS: "; w = substr(w, 5) }
		if (w ~ /^lookup-[0-9]+c$/) {
			p = substr(w, 8); sub(/c$/, "", p)
			return t "1-entry lookup, " p (p == 1 ? " connection" : " connections")
		}
		if (w ~ /^sub[0-9]+$/) return t substr(w, 4) "-entry subtree search"
		if (w == "lookup-class") return t "1-entry lookup with objectClass, 8 connections"
		if (w == "rootdse") return t "root DSE read"
		if (w == "bindsearch") return t "bind + search, a new connection each"
		if (w == "handshake") return t "new connection (full handshake) each"
		return t w
	}
	BEGIN {
		n = split("lookup-1c lookup-8c lookup-64c lookup-class sub100 sub1000 rootdse bindsearch tls-lookup-8c tls-sub100 tls-sub1000 tls-handshake", order, " ")
	}
	NR > 1 { rate[$1, $2] = $4; cpu[$1, $2] = $10 }
	END {
		for (i = 1; i <= n; i++) {
			w = order[i]
			if (!((w SUBSEP "slapd") in rate) || !((w SUBSEP "batch") in rate))
				continue
			s = rate[w, "slapd"]; m = rate[w, "batch"]
			printf "| %s | %s | %s | %.2fx | %s | %s |\n", desc(w), s, m, (s > 0 ? m / s : 0), cpu[w, "slapd"], cpu[w, "batch"]
		}
	}' "$tsv"
} > "$dir/headline.md"
echo "written: $dir/headline.md"
