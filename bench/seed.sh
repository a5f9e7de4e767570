#!/usr/bin/env bash
# A new replica seeded from a peer's /snapshot (issue 52) against one refreshed in full,
# side by side in one run: one OpenLDAP slapd provider (syncprov) with bench/gen-ldif.sh
# ENTRIES entries (default 100,000) slapadd'ed, then each round, fresh:
#   A: a minidir refreshAndPersist replica from no database file, with metrics_listen and
#      snapshot_allow = 127.0.0.1: seconds from its start until /readyz answers 200;
#   B: a second one from no file with syncrepl seed=http://127.0.0.1:A/snapshot: the same
#      seconds, the copy's bytes and the seed's own time (B's "syncrepl seed=URL: N bytes,
#      M entries, in X s" line), its phases from B's log timestamps (start to the copy
#      asked for; the fetch, fsync and checks; the first refresh from the copy's cookie;
#      to /readyz 200), and a bare curl of A's /snapshot (the fetch alone, for comparison);
#   then the ratio A/B, and whether B's dump (ldapsearch of every entry, sorted) equals the
#   provider's.
# /readyz is polled with curl every 0.1 s. All on 127.0.0.1 private ports in a temp dir;
# every process is stopped by PID (at the round's end, and at exit); every wait is bounded.
#   bench/seed.sh      (ENTRIES=100000 ROUNDS=2 READY_SECS=1800 GROW=0 CHURN=0 CHURN_SECS=60
#                       CHURN_DELAY=10 DUMP=1; KEEP=1 keeps the temp dir)
# Not part of make test. Needs slapd, ldap-utils, curl (python3 with CHURN).
. "$(dirname "$0")/replica_lib.sh" # with bench/lib.sh: set -u, the tree's root
ENTRIES=${ENTRIES:-100000}
ROUNDS=${ROUNDS:-2}
READY_SECS=${READY_SECS:-1800} # the bound on each wait for /readyz
# GROW=N (ROUNDS=1): after A's full refresh of ENTRIES, N more entries added on the provider
# by ldapadd, A following them; B then seeds from A's copy of ENTRIES+N. (Made for sizes
# whose full refresh did not commit before 703098d, MDB_TXN_FULL past about 500,000 of
# these entries; now a peer grown while it persists.)
GROW=${GROW:-0}
# CHURN=RATE (ROUNDS=1, GROW=0): once A is ready, the provider takes RATE modifies a second
# (bench/pacer.py through ldapmodify, one connection) for CHURN_SECS; B starts seeded
# CHURN_DELAY seconds into the stream, from a copy of a peer that is following it, and
# answers Content Synchronization itself (sync_provider); once B is ready, C, a third
# level, starts from no file following B (refreshAndPersist). After the stream: how long
# until C, B and A show its last change, and B's and C's dumps against the provider's
# taken then.
CHURN=${CHURN:-0}
# DUMP=0: no dumps compared (for sizes whose ldapsearch and sort of every entry would take
# longer than the rest of the run: 10,000,000 entries).
DUMP=${DUMP:-1}
CHURN_SECS=${CHURN_SECS:-60}
CHURN_DELAY=${CHURN_DELAY:-10}
need "$SLAPD" "$SLAPADD" ldapsearch ldapadd ldapmodify curl "$BUILD/minidir"
bench_init seed

pport=$(free_port)
PROV=ldap://127.0.0.1:$pport
t0=$(now_ms)
slapd_conf "$work/provider.conf" "$work/provider-db" "$(slapd_db_lines)"
# 1 GiB holds 100,000 entries, not 1,000,000 with their indexes; LMDB maps, not allocates.
sed -i "s/^maxsize .*/maxsize $((64 * 1024 * 1024 * 1024))/" "$work/provider.conf"
provider_load "$ENTRIES"
load_ms=$(($(now_ms) - t0))
rm -f "$work/data.ldif"
slapd_start provider "$pport"
echo "# provider: slapd + syncprov on :$pport, gen-ldif $ENTRIES entries, slapadd -q $load_ms ms" \
	"($(awk -v n="$ENTRIES" -v ms="$load_ms" 'BEGIN{printf "%.0f", n * 1000 / ms}') entries/s)"

# ts_ms LOG PATTERN: the epoch ms of LOG's first line matching PATTERN (its RFC 3339
# stamp, to the ms), empty when none.
ts_ms() {
	local stamp
	stamp=$(grep -m1 -- "$2" "$1" | cut -d' ' -f1)
	[ -n "$stamp" ] && date -d "$stamp" +%s%3N
}
# ready_wait MPORT PID START_MS LOG: polls http://127.0.0.1:MPORT/readyz every 0.1 s (up to
# READY_SECS) until it answers 200; prints the ms since START_MS, or "-" (the process
# ended, the bound passed, or LOG says the refresh could not be written, which the replica
# retries without end: a full disk, or before 703098d MDB_TXN_FULL).
ready_wait() {
	local end=$(($(now_ms) + READY_SECS * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		if [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz")" = 200 ]; then
			echo "$(($(now_ms) - $3))"
			return 0
		fi
		kill -0 "$2" 2> /dev/null || break
		grep -q "the database could not be written" "$4" && break
		sleep 0.1
	done
	echo "-"
	return 1
}
# launch NAME MPORT WHO: minidir started on $work/NAME.conf (its log $work/NAME.log) and
# waited for until its /readyz on MPORT answers 200 (ready_wait; else the run ends saying
# WHO was not ready); sets lpid, lstart and lms.
launch() {
	lstart=$(now_ms)
	"$BUILD/minidir" -f "$work/$1.conf" > "$work/$1.log" 2>&1 &
	lpid=$!
	pids+=("$lpid")
	lms=$(ready_wait "$2" "$lpid" "$lstart" "$work/$1.log") ||
		die "round $round: $3 not ready: $(tail -3 "$work/$1.log")"
}
# dump URI FILE: every entry under $EX with its user attributes, as the rootdn reads them,
# one "DN | line" a line, sorted, into FILE (tests/integration/provider.sh's dump, bounded
# for a million entries).
dump() {
	[ "$DUMP" = 1 ] || { : > "$2"; return 0; }
	timeout 900 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$EX" "*" 2> /dev/null |
		awk '/^dn::? /{dn=$0} NF{print dn " | " $0}' | LC_ALL=C sort -S 25% > "$2"
}
# seconds TICKS: clock ticks as seconds, one decimal.
seconds() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", t/hz}'; }
secs() { [ "$1" = - ] && echo - || awk -v v="$1" 'BEGIN{printf "%.2f", v / 1000}'; }
# span A B: B - A in seconds, "-" when either is missing.
span() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != - ] && [ "$2" != - ] && secs $(($2 - $1)) || echo -; }

[ "$GROW" -eq 0 ] || [ "$ROUNDS" -eq 1 ] || die "GROW takes ROUNDS=1 (the provider grows)"
[ "$CHURN" -eq 0 ] || { [ "$ROUNDS" -eq 1 ] && [ "$GROW" -eq 0 ]; } ||
	die "CHURN takes ROUNDS=1 and GROW=0 (the provider changes)"
[ "$CHURN" -eq 0 ] || need "$PYTHON"
[ "$GROW" -gt 0 ] || [ "$CHURN" -gt 0 ] || dump "$PROV" "$work/provider.dump"
rows=() phases=()
for round in $(seq 1 "$ROUNDS"); do
	aport=$(free_port) amport=$(free_port) bport=$(free_port) bmport=$(free_port)
	snap=http://127.0.0.1:$amport/snapshot
	# A: a full refresh from nothing, serving /snapshot.
	replica_conf "a$round" "$aport" "$PROV" "metrics_listen = 127.0.0.1:$amport
snapshot_allow = 127.0.0.1"
	launch "a$round" "$amport" A
	alog=$work/a$round.log astart=$lstart apid=$lpid a_ms=$lms
	a_cpu=$(cpu_ticks "$apid")
	grow=""
	if [ "$GROW" -gt 0 ]; then
		# GROW more entries added on the provider (ldapadd, one connection), which A follows
		# in persist mode (commits of at most 1,000 entries, each with its cookie).
		g0=$(now_ms)
		bench/gen-ldif.sh "$((ENTRIES + GROW))" "$EX" | awk -v n="$((ENTRIES + 2))" 'BEGIN{RS=""; ORS="\n\n"} NR>n' |
			timeout "$READY_SECS" ldapadd -x -H "$PROV" -D "$ADMIN" -w secret > "$work/grow.log" 2>&1 ||
			die "ldapadd of $GROW entries: $(tail -3 "$work/grow.log")"
		g1=$(now_ms)
		wait_value "ldap://127.0.0.1:$aport" "uid=user.$((ENTRIES + GROW - 1)),ou=people,$EX" uid \
			"user.$((ENTRIES + GROW - 1))" "$READY_SECS" || die "A did not follow the $GROW entries added"
		grow="; then $GROW entries ldapadd'ed on the provider in $(secs $((g1 - g0))) s, A had them $(secs $(($(now_ms) - g1))) s after"
		echo "# round $round: full $(secs "$a_ms") s$grow"
	fi
	churn=""
	if [ "$CHURN" -gt 0 ]; then
		"$PYTHON" bench/pacer.py "$CHURN" "$CHURN_SECS" "$ENTRIES" "$EX" 2> "$work/pacer.err" |
			timeout $((CHURN_SECS + READY_SECS)) ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret \
				> "$work/stream.log" 2>&1 &
		lmpid=$!
		pids+=("$lmpid")
		cstart=$(now_ms)
		sleep "$CHURN_DELAY"
	fi
	[ "$CHURN" -gt 0 ] || [ -s "$work/provider.dump" ] || dump "$PROV" "$work/provider.dump"
	# B: seeded from A's copy, then following the provider from its cookie.
	bextra=
	[ "$CHURN" -eq 0 ] || bextra="sync_provider = yes"
	replica_conf "b$round" "$bport" "$PROV" "metrics_listen = 127.0.0.1:$bmport
$bextra"
	sed -i "s|retry=\"1 +\"|retry=\"1 +\" seed=$snap|" "$work/b$round.conf"
	launch "b$round" "$bmport" B
	blog=$work/b$round.log bstart=$lstart bpid=$lpid b_ms=$lms
	b_cpu=$(cpu_ticks "$bpid")
	if [ "$CHURN" -gt 0 ]; then
		b_in=$((bstart - cstart))
		# C: the third level, from no file, fed by B while the stream goes on.
		cport=$(free_port) cmport=$(free_port)
		replica_conf "c$round" "$cport" "ldap://127.0.0.1:$bport" "metrics_listen = 127.0.0.1:$cmport"
		launch "c$round" "$cmport" C
		c_start=$lstart c_pid=$lpid c_ms=$lms
		stream_end "$lmpid" "$cstart" "$ENTRIES"
		c0=$(now_ms) b_conv=- a_conv=- c_conv=-
		wait_value "ldap://127.0.0.1:$cport" "$lastdn" description "stream $made" 120 &&
			c_conv=$(($(now_ms) - c0))
		wait_value "ldap://127.0.0.1:$bport" "$lastdn" description "stream $made" 120 &&
			b_conv=$(($(now_ms) - c0))
		wait_value "ldap://127.0.0.1:$aport" "$lastdn" description "stream $made" 120 &&
			a_conv=$(($(now_ms) - c0))
		dump "$PROV" "$work/provider.dump"
		churn="; under a stream of $CHURN modifies/s asked for ${CHURN_SECS} s ($made made by ldapmodify in $(secs "$sdur") s: $(awk -v m="$made" -v d="$sdur" 'BEGIN{printf "%.0f", m*1000/d}')/s; pacer wrote $(cat "$work/pacer.err"), ldapmodify exit $lmrc), B started $(secs "$b_in") s into it, C (following B, from no file) $(secs $((c_start - cstart))) s, ready $(secs "$c_ms") s after its start; after the stream's end C had its last change $(secs "$c_conv") s later, B $(secs "$b_conv") s, A $(secs "$a_conv") s"
		echo "# round $round$churn"
	fi
	pdump_lines=$(wc -l < "$work/provider.dump")
	seedline=$(grep -o "syncrepl seed=[^ ]*: [0-9]* bytes, [0-9]* entries, in [0-9.]* s" "$blog")
	[ -n "$seedline" ] || die "round $round: B did not seed: $(grep -i seed "$blog" | tail -2)"
	bytes=${seedline##*: } seed_s=${seedline##* in }
	bytes=${bytes%% bytes*} seed_s=${seed_s% s}
	t_ask=$(ts_ms "$blog" "taking a copy of the peer") t_seeded=$(ts_ms "$blog" " bytes, [0-9]* entries, in ")
	t_refresh=$(ts_ms "$blog" "refresh done")
	first_refresh=$(grep -m1 -o "refresh done ([a-z ]*): [0-9]* entries added or changed" "$blog" |
		sed 's/.*: \([0-9]*\) entries.*/\1/')
	ta_refresh=$(ts_ms "$alog" "refresh done")
	# The fetch alone: A's /snapshot by curl into a file (no fsync, no checks).
	fetch=$(curl -s -m "$READY_SECS" -o "$work/copy.mdb" -w '%{http_code} %{time_total}' "$snap")
	rm -f "$work/copy.mdb"
	dump "ldap://127.0.0.1:$bport" "$work/b.dump"
	if [ "$DUMP" != 1 ]; then
		check="not compared (DUMP=0)"
	elif cmp -s "$work/provider.dump" "$work/b.dump"; then
		check="equal ($pdump_lines lines)"
	else
		check="DIFFERS: $(diff "$work/provider.dump" "$work/b.dump" | head -3 | tr '\n' ' ')"
	fi
	if [ "$CHURN" -gt 0 ]; then
		dump "ldap://127.0.0.1:$cport" "$work/c.dump"
		if [ "$DUMP" != 1 ]; then
			:
		elif cmp -s "$work/provider.dump" "$work/c.dump"; then
			check="$check; C's dump equal"
		else
			check="$check; C's DIFFERS: $(diff "$work/provider.dump" "$work/c.dump" | head -3 | tr '\n' ' ')"
		fi
		stop_pid "$c_pid"
		rm -f "$work/c$round.mdb" "$work/c.dump"
	fi
	stop_pid "$bpid"
	stop_pid "$apid"
	rm -f "$work/a$round.mdb" "$work/b$round.mdb" "$work/b.dump"
	ratio=$(awk -v a="$a_ms" -v b="$b_ms" 'BEGIN{printf "%.1f", a / b}')
	rows+=("| $round | $(secs "$a_ms") | $(secs "$b_ms") | **${ratio}x** | $bytes | $seed_s | $(seconds "$a_cpu") / $(seconds "$b_cpu") | $check |")
	phases+=("| $round | $(span "$astart" "$ta_refresh") | $(span "$bstart" "$t_ask") | $(span "$t_ask" "$t_seeded") | $(awk -v v="${fetch#* }" 'BEGIN{printf "%.2f", v}') (HTTP ${fetch%% *}) | $(span "$t_seeded" "$t_refresh") (${first_refresh:-?} entries) | $(span "$t_refresh" "$((bstart + b_ms))") |")
	echo "# round $round: full $(secs "$a_ms") s, seeded $(secs "$b_ms") s, $seedline; B's dump $check"
done

echo
echo "$ENTRIES entries (+2), $ROUNDS rounds; /readyz polled every 0.1 s$grow$churn"
echo
echo "| round | full refresh (A): start to /readyz 200, s | seeded (B): start to /readyz 200, s | full / seeded | copy, bytes | seed line's time, s | CPU A / B, s | B's dump vs the provider's |"
echo "|--:|--:|--:|--:|--:|--:|--:|---|"
printf '%s\n' "${rows[@]}"
echo
echo "B's phases (s, from its log's ms stamps; the bare fetch is curl of A's /snapshot afterwards, no fsync or checks):"
echo
echo "| round | A: start to refresh done | B: start to copy asked | B: fetch + fsync + checks | bare fetch (curl) | B: open, connect, first refresh from the cookie | B: refresh done to /readyz 200 |"
echo "|--:|--:|--:|--:|--:|--:|--:|"
printf '%s\n' "${phases[@]}"
