#!/usr/bin/env bash
# bench/costly_filter.sh: 1-entry lookups beside costly filters (issue 23 item 1), minidir
# beside OpenLDAP slapd, on bench/gen-ldif.sh's 10,000 entries, every server with 2 threads.
#
# 8 connections each send lookups ((uid=user.I), one at a time) for SECONDS, first alone,
# then while 2 more connections each repeat an OR of ITEMS :dn: items that match nothing
# (bench/costlyload.c; 2,000 items is a 68 KB filter). All anonymous. Each row is one
# run on a freshly started server (so no search of an earlier run is still going):
# the lookups' p50/p99/max latency, the costly searches that finished and their result
# codes (0 success, 11 adminLimitExceeded), the server's CPU seconds in the run and the
# machine's longest stall meanwhile (bench/stallwatch.c: a process that only sleeps).
#
#   bench/costly_filter.sh [SECONDS]     # default 10; needs build/ (make all) and slapd
#
# Rows: minidir with its defaults (max_filter_items 1000 refuses a 2,000-item filter at
# once), minidir with both limits off (only the slicing by work protects the lookups), and
# ITEMS=900 under the defaults (under the item limit: max_search_work ends each search);
# the group attack under the defaults: the 2 connections repeat an OR of 900 member items
# that match nothing on one group of 10,000 members (scope base), a cost in one entry;
# the substring attack under the defaults: the 2 connections repeat an OR of 15 substring
# items of 64 pieces each (issue 46 item 1: a piece counts as an item, so 15 x 64 is within
# max_filter_items, and each piece costs work per value tested), over every entry's mail;
# slapd (no such limits) with 2 threads as minidir and with its default 16; with OLD_BUILD=DIR, the minidir of DIR too (an older commit, e.g.
# `git archive 60cd1e4 | tar -x -C /tmp/old && make -C /tmp/old build/minidir
# build/minidir-import`). Environment: ITEMS (2000), ENTRIES (10000), SLAPD, SLAPADD.
# REVERSE=1 runs the rows backwards (slapd first). Never part of `make test`: figures, not
# assertions.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
SECS=${1:-10}
ITEMS=${ITEMS:-2000}
ENTRIES=${ENTRIES:-10000}
OLD_BUILD=${OLD_BUILD:-}
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
LOAD=$BUILD/bench/costlyload

bench_init costly
[ -x "$LOAD" ] || die "$LOAD is missing: make all"
need ldapsearch cc
timeout 120 cc -O2 -o "$work/stallwatch" bench/stallwatch.c || die "cannot build bench/stallwatch.c"
bench_directory "$ENTRIES" "$work/minidir.conf" "threads = 2"
# The group attack's entry: a group of 10,000 members (who need not exist), imported anew.
GROUP="cn=biggroup,$SUFFIX"
GROUP_ITEM="(member=uid=nomatch.%d,ou=people,$SUFFIX)"
# 63 one-letter pieces the mail values hold (user.N@example.com), then one that no value does.
SUBSTR_ITEM="(mail=*$(awk 'BEGIN { s = "user.@examplcom"; for (i = 0; i < 63; i++) printf "%s*", substr(s, i % 15 + 1, 1) }')nomatch.%d*)"
{
	printf '\ndn: %s\nobjectClass: groupOfNames\ncn: biggroup\n' "$GROUP"
	awk -v ex="$SUFFIX" 'BEGIN { for (j = 0; j < 10000; j++) printf "member: uid=member.%d,ou=people,%s\n", j, ex }'
} >> "$work/data.ldif"
rm -f "$work/db.mdb" "$work/db.mdb-lock"
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || die "minidir-import (with the group) failed"
sed "s#^database = .*#database = $work/unlimited.mdb#" "$work/minidir.conf" > "$work/unlimited.conf"
printf '%s\n' "max_filter_items = unlimited" "max_search_work = unlimited" >> "$work/unlimited.conf"
cp "$work/db.mdb" "$work/unlimited.mdb"
if [ -n "$OLD_BUILD" ]; then
	[ -x "$OLD_BUILD/minidir" ] || die "$OLD_BUILD/minidir is missing"
	sed "s#^database = .*#database = $work/old.mdb#" "$work/minidir.conf" > "$work/old.conf"
	"$OLD_BUILD/minidir-import" -q -f "$work/old.conf" "$work/data.ldif" || die "the old import failed"
fi
slapd_ok=
if [ -x "$SLAPD" ]; then
	# The tests' writer of slapd configs (as bench/replica_lib.sh uses it): back-mdb, the
	# four schemas; syncprov is loaded but not used, the rootdn is not used.
	EX=$SUFFIX ADMIN="cn=admin,$SUFFIX"
	. tests/integration/slapd_conf.sh
	slapd_conf "$work/slapd.conf" "$work/slapd" "$(printf '%s\n' "maxsize 1073741824" \
		"index objectClass,uid eq" "sizelimit unlimited" "threads 2")"
	timeout 300 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1 &&
		slapd_ok=1 || echo "slapadd failed: $(tail -3 "$work/slapadd.log"); slapd left out" >&2
	sed '/^threads /d' "$work/slapd.conf" > "$work/slapd16.conf"
fi

cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

# start_server KIND CONF: $spid and $sport of a fresh server (minidir from $sbuild, or slapd).
start_server() {
	if [ "$1" = slapd ]; then
		rm -f "$work/slapd.pid"
		sport=$((20000 + RANDOM % 20000))
		"$SLAPD" -d 0 -f "$2" -h "ldap://127.0.0.1:$sport/" 2> "$work/slapd.log" &
		pids+=($!)
		for _ in $(seq 1 100); do
			[ -s "$work/slapd.pid" ] &&
				timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$sport" -b "" -s base > /dev/null 2>&1 && break
			sleep 0.1
		done
		spid=$(cat "$work/slapd.pid" 2> /dev/null)
		[ -n "$spid" ] || die "slapd did not start: $(cat "$work/slapd.log")"
	else
		"$sbuild/minidir" -f "$2" 2> "$work/minidir.log" &
		spid=$!
		pids+=("$spid")
		sport=$(wait_port "$work/minidir.log")
		[ -n "$sport" ] || die "minidir did not start: $(cat "$work/minidir.log")"
	fi
}
stop_server() {
	stop_pid "$spid"
	sleep 0.5 # slapd's pid is not our child: let it go before the next start
}

# row NAME KIND CONF ATTACKERS ITEMS [group]: one run on a fresh server, one table row
# (group: the group attack, else :dn: items over every entry).
row() {
	local name=$1 kind=$2 conf=$3 natt=$4 items=$5 c0 c1 out sw stall
	local what=" items" attack=()
	[ "${6:-}" = group ] && what=" member items on one group" attack=("$GROUP_ITEM" "$GROUP")
	[ "${6:-}" = substr ] && what=" substring items of 64 pieces" attack=("$SUBSTR_ITEM")
	start_server "$kind" "$conf"
	# warm: every entry read once
	timeout 60 ldapsearch -x -H "ldap://127.0.0.1:$sport" -b "$SUFFIX" -z 0 "(uid=*)" 1.1 > /dev/null 2>&1
	"$work/stallwatch" $((SECS + 2)) > "$work/stall" 2>&1 &
	sw=$!
	c0=$(cpu "$spid")
	out=$(timeout $((SECS + 60)) "$LOAD" "ldap://127.0.0.1:$sport" "$SUFFIX" "$SECS" 8 "$natt" \
		"$items" "$ENTRIES" "${attack[@]}") || out="costlyload failed: $out"
	c1=$(cpu "$spid")
	kill -TERM "$sw" 2> /dev/null
	wait "$sw" 2> /dev/null
	stall=$(sed -n 's/^stallwatch: max_gap_ms \([0-9.]*\).*/\1/p' "$work/stall")
	stop_server
	awk -v name="$name" -v natt="$natt" -v items="$items$what" -v out="$out" -v cpu=$((c1 - c0)) \
		-v hz="$hz" -v stall="${stall:-?}" 'BEGIN {
		n = split(out, f, " ")
		if (f[1] != "lookups") { printf "| %s | %s | %s |\n", name, natt, out; exit }
		codes = ""
		for (i = 14; i <= n - 4; i++) codes = codes (codes ? " " : "") f[i]
		printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s |\n", name,
			natt ? natt " x " items : "none", f[2], f[4], f[6], f[n - 2], f[8], f[n],
			f[10], f[12], codes ? codes : "-", cpu / hz, stall }'
}

echo "costly filters: $ENTRIES entries, 8 lookup connections, $SECS s per row, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server | costly connections | lookups | p50 ms | p99 ms | worst connection's p99 ms | max ms | fewest lookups on one connection | lookups failed | costly searches done | their result codes | server CPU s | machine stall ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
# The rows in order, or (REVERSE=1) backwards, so that two runs alternate what runs first.
rows=("$BUILD|minidir (defaults)|minidir|$work/minidir.conf|0|$ITEMS"
	"$BUILD|minidir (defaults)|minidir|$work/minidir.conf|2|$ITEMS"
	"$BUILD|minidir (defaults)|minidir|$work/minidir.conf|2|900"
	"$BUILD|minidir (limits unlimited)|minidir|$work/unlimited.conf|2|$ITEMS"
	"$BUILD|minidir (defaults)|minidir|$work/minidir.conf|2|900|group"
	"$BUILD|minidir (defaults)|minidir|$work/minidir.conf|2|15|substr")
[ -n "$OLD_BUILD" ] && rows+=("$OLD_BUILD|minidir $OLD_BUILD|minidir|$work/old.conf|0|$ITEMS"
	"$OLD_BUILD|minidir $OLD_BUILD|minidir|$work/old.conf|2|$ITEMS"
	"$OLD_BUILD|minidir $OLD_BUILD|minidir|$work/old.conf|2|900|group"
	"$OLD_BUILD|minidir $OLD_BUILD|minidir|$work/old.conf|2|15|substr")
[ -n "$slapd_ok" ] && rows+=("-|slapd (threads 2)|slapd|$work/slapd.conf|0|$ITEMS"
	"-|slapd (threads 2)|slapd|$work/slapd.conf|2|$ITEMS"
	"-|slapd (threads 2)|slapd|$work/slapd.conf|2|900|group"
	"-|slapd (threads 2)|slapd|$work/slapd.conf|2|15|substr"
	"-|slapd (threads 16, its default)|slapd|$work/slapd16.conf|0|$ITEMS"
	"-|slapd (threads 16, its default)|slapd|$work/slapd16.conf|2|$ITEMS")
order=$(seq 0 $((${#rows[@]} - 1)))
[ -n "${REVERSE:-}" ] && order=$(seq $((${#rows[@]} - 1)) -1 0)
for i in $order; do
	IFS='|' read -r sbuild name kind conf natt items attack <<< "${rows[$i]}"
	row "$name" "$kind" "$conf" "$natt" "$items" "$attack"
done
