#!/usr/bin/env bash
# A hub's cost per consumer (issue 52: "the provider's load stays flat as replicas are
# added"): CONSUMERS persistent Content Synchronization searches (`ldapsearch -E sync=rp`,
# a process each, every attribute) on one server while a paced stream of modifies runs on
# the provider, beside the same stream with none. Two servers in the same run: OpenLDAP
# slapd with syncprov (the provider itself) and a minidir hub following it
# (sync_provider = yes). Each stream is RATE modifies a second for SECS (bench/pacer.py
# into ldapmodify); the figure is the server's user+system CPU per change over the stream
# (/proc/PID/stat), with 0 consumers and with CONSUMERS, rounds alternating their order.
# One consumer of each set writes what it receives to a file, which must hold the stream's
# last change at the end.
#   bench/sync_fanout.sh     (ENTRIES=10000 CONSUMERS=50 RATE=200 SECS=20 ROUNDS=2; KEEP=1)
# Not part of make test. Needs slapd, ldap-utils, python3.
. "$(dirname "$0")/replica_lib.sh" # with bench/lib.sh: set -u, the tree's root
ENTRIES=${ENTRIES:-10000}
CONSUMERS=${CONSUMERS:-50}
RATE=${RATE:-200}
SECS=${SECS:-20}
ROUNDS=${ROUNDS:-2}
need "$SLAPD" "$SLAPADD" ldapsearch ldapmodify "$PYTHON" "$BUILD/minidir"
bench_init sync_fanout

pport=$(free_port) hport=$(free_port)
PROV=ldap://127.0.0.1:$pport HUB=ldap://127.0.0.1:$hport
slapd_conf "$work/provider.conf" "$work/provider-db" "$(slapd_db_lines)"
provider_load "$ENTRIES"
slapd_start provider "$pport"
ppid_=$spid
replica_conf hub "$hport" "$PROV" "sync_provider = yes
sync_provider_log = 100000"
replica_start hub "$hport"
hpid=$rpid
wait_value "$HUB" "uid=user.$((ENTRIES - 1)),ou=people,$EX" uid "user.$((ENTRIES - 1))" 120 ||
	die "the hub did not refresh: $(tail -3 "$work/hub.log")"
echo "# provider: slapd + syncprov, $ENTRIES entries; hub: minidir, sync_provider = yes"

cpids=()
# consumers URL N: N persistent searches on URL, the first writing to $work/c.ldif; waits
# until that one has its refresh (every entry) and 2 s more for the rest.
consumers() {
	local i
	: > "$work/c.ldif"
	for i in $(seq 1 "$2"); do
		local out=/dev/null
		[ "$i" = 1 ] && out=$work/c.ldif
		timeout $((SECS + 300)) ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no \
			-E 'sync=rp' -b "$EX" > "$out" 2> /dev/null &
		cpids+=($!)
		pids+=($!)
	done
	for _ in $(seq 1 1200); do
		[ "$(grep -c '^dn:' "$work/c.ldif")" -ge "$ENTRIES" ] && break
		sleep 0.1
	done
	sleep 2
}
stop_consumers() {
	local p
	for p in "${cpids[@]}"; do
		kill "$p" 2> /dev/null
		wait "$p" 2> /dev/null
		forget "$p"
	done
	cpids=()
}
# stream WHO N: CONSUMERS-less or N consumers on WHO (slapd, minidir or none), one stream;
# prints "WHO N slapd_us_per_change minidir_us_per_change made".
stream() {
	local who=$1 n=$2 p0 h0 p1 h1 t0 lmpid
	case $who in slapd) consumers "$PROV" "$n" ;; minidir) consumers "$HUB" "$n" ;; esac
	p0=$(cpu_ticks "$ppid_") h0=$(cpu_ticks "$hpid") t0=$(now_ms)
	"$PYTHON" bench/pacer.py "$RATE" "$SECS" "$ENTRIES" "$EX" 2> "$work/pacer.err" |
		timeout $((SECS + 120)) ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > "$work/stream.log" 2>&1 &
	lmpid=$!
	pids+=("$lmpid")
	stream_end "$lmpid" "$t0" "$ENTRIES"
	wait_value "$HUB" "$lastdn" description "stream $made" 30 || echo "# the hub missed the last change"
	[ "$who" = none ] || { for _ in $(seq 1 300); do grep -q "^description: stream $made\$" "$work/c.ldif" && break; sleep 0.1; done; }
	[ "$who" = none ] || grep -q "^description: stream $made\$" "$work/c.ldif" ||
		echo "# a consumer of $who missed the last change"
	p1=$(cpu_ticks "$ppid_") h1=$(cpu_ticks "$hpid")
	stop_consumers
	local hz
	hz=$(getconf CLK_TCK)
	awk -v w="$who" -v n="$n" -v p=$((p1 - p0)) -v h=$((h1 - h0)) -v m="$made" -v hz="$hz" \
		'BEGIN { printf "%-8s %4d %10.1f %10.1f %8d\n", w, n, p * 1e6 / hz / m, h * 1e6 / hz / m, m }'
}
echo "consumers on   n  slapd_us/chg  minidir_us/chg  changes"
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="none slapd minidir"; else order="minidir slapd none"; fi
	for who in $order; do
		n=$CONSUMERS
		[ "$who" = none ] && n=0
		stream "$who" "$n"
	done
done
