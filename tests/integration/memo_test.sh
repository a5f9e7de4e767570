#!/usr/bin/env bash
# memo_bytes (issue 29): the memory budget of a served file's record and key memos. A
# directory of MEMO_ENTRIES (60,000) bench/gen-ldif.sh entries is imported once and served
# with memo_bytes = 1m, unlimited and 0 in turn; each server has every entry looked up by
# uid (ldapsearch -f, one search per line, in ID order), then again in the reverse order,
# and the script checks: every answer is the entry asked for; cn=monitor's and /metrics'
# memo bytes are within the budget; the hits grow on the second sweep; RssAnon
# (/proc/PID/status) grows over the sweeps by at most the budget and MEMO_SLACK_KB (4 MiB)
# with the budget, by more without a bound (about 9 MiB here: every ID's record place and
# a key memo of 8 MiB); memo_bytes = 0 answers the same with no memo and no hit. Bad
# values fail `minidir -t` at their line. A SIGHUP's new value applies to the next import,
# not to the file served. Under SAN=1 the RssAnon checks are skipped by
# name (a sanitizer's allocator and shadow memory make the figures meaningless).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
N=${MEMO_ENTRIES:-60000}
SLACK_KB=${MEMO_SLACK_KB:-4096}
SUFFIX=dc=example,dc=com
BUDGET=$((1 << 20))
use_work_dir memo
case $BUILD in *san*) rss_measure= ;; *) rss_measure=1 ;; esac

bench/gen-ldif.sh "$N" "$SUFFIX" > "$work/data.ldif" || { not_ok "gen-ldif.sh"; finish; }
seq 0 $((N - 1)) | sed 's/^/user./' > "$work/uids"
tac "$work/uids" > "$work/uids.reversed"
# The DNs asked for, in the order asked.
sed 's/.*/uid=&,ou=people,dc=example,dc=com/' "$work/uids" > "$work/want"
tac "$work/want" > "$work/want.reversed"
mport=$(free_port) || { not_ok "no free port for metrics_listen"; finish; }

# write_conf NAME MEMO_BYTES: $work/NAME.conf serving $work/db.mdb with memo_bytes (none:
# the key left out) and the monitor readable by anyone.
write_conf() {
	{
		printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" \
			"schema_dir = $SCHEMA_DIR" "suffix = $SUFFIX" "threads = 2" \
			"monitor_access = anonymous" "metrics_listen = 127.0.0.1:$mport"
		[ "$2" = none ] || echo "memo_bytes = $2"
	} > "$work/$1.conf"
}
write_conf import none
if ! "$BUILD/minidir-import" -q -f "$work/import.conf" "$work/data.ldif" > "$work/import.log" 2>&1; then
	not_ok "import: $(cat "$work/import.log")"
	finish
fi

rss_kb() { sed -n 's/^RssAnon:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status"; }
mon() { # mon ATTR: cn=monitor's value of ATTR
	ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$port" -b cn=monitor -s base "$1" |
		sed -n "s/^$1: //p"
}
metric() { # metric LINE_START: the value of /metrics' line starting so
	curl -s "http://127.0.0.1:$mport/metrics" | awk -v k="$1" 'index($0, k " ") == 1 { print $2 }'
}
# sweep NAME UIDS WANT: every uid of UIDS looked up (one ldapsearch, one search a line);
# the DNs answered must be WANT's, in order.
sweep() {
	if ! ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$port" -b "$SUFFIX" \
		-f "$2" "(uid=%s)" uid > "$work/answers" 2> "$work/answers.err"; then
		not_ok "$1: ldapsearch failed: $(head -3 "$work/answers.err")"
		return
	fi
	sed -n 's/^dn: //p' "$work/answers" > "$work/got"
	if cmp -s "$work/got" "$3" && [ "$(grep -c '^uid: user\.' "$work/answers")" = "$N" ]; then
		ok "$1: $N lookups, each answered with the entry asked for"
	else
		not_ok "$1: answers differ from the entries asked for: $(diff "$work/got" "$3" | head -4)"
	fi
}

# serve NAME MEMO_BYTES: a server, two sweeps, the figures in $rss_growth, $hits1, $hits2.
serve() {
	write_conf "$1" "$2"
	start_minidir "$work/$1.conf" "$work/$1.log"
	if [ -z "$port" ]; then
		not_ok "$1: server did not start: $(cat "$work/$1.log")"
		finish
	fi
	local before
	before=$(rss_kb)
	sweep "$1, ID order" "$work/uids" "$work/want"
	hits1=$(($(mon recordMemoHits) + $(mon keyMemoHits)))
	sweep "$1, reverse order" "$work/uids.reversed" "$work/want.reversed"
	hits2=$(($(mon recordMemoHits) + $(mon keyMemoHits)))
	rss_growth=$(($(rss_kb) - before))
}
stop() { # stop NAME: the server stops cleanly
	if stop_checked "$pid" "$work/$1.log"; then ok "$1: clean stop"; else not_ok "$1: $stop_why"; fi
}

# --- a budget of 1 MiB ---
serve budget $BUDGET
grep -q "memos (memo_bytes = $BUDGET): records $((BUDGET / 2)) bytes (a table that evicts), keys $((BUDGET / 2)) bytes" "$work/budget.log" &&
	ok "the start-up log says how the budget splits" ||
	not_ok "no memos line: $(grep memos "$work/budget.log")"
rb=$(mon recordMemoBytes) kb=$(mon keyMemoBytes)
[ "$(mon memoBudgetBytes)" = "$BUDGET" ] && [ $((rb + kb)) -le "$BUDGET" ] && [ "$rb" -gt 0 ] && [ "$kb" -gt 0 ] &&
	ok "cn=monitor: memoBudgetBytes $BUDGET, recordMemoBytes $rb + keyMemoBytes $kb within it" ||
	not_ok "cn=monitor: budget $(mon memoBudgetBytes), record $rb, key $kb bytes"
mr=$(metric 'minidir_memo_bytes{memo="record"}') mk=$(metric 'minidir_memo_bytes{memo="key"}')
[ "$(metric minidir_memo_budget_bytes)" = "$BUDGET" ] && [ "$mr" = "$rb" ] && [ "$mk" = "$kb" ] &&
	ok "/metrics: minidir_memo_budget_bytes and minidir_memo_bytes as cn=monitor's" ||
	not_ok "/metrics: budget $(metric minidir_memo_budget_bytes), record $mr, key $mk"
if command -v promtool > /dev/null; then
	curl -s "http://127.0.0.1:$mport/metrics" | promtool check metrics > "$work/promtool" 2>&1 &&
		ok "promtool check metrics" || not_ok "promtool: $(head -3 "$work/promtool")"
fi
ri=$(mon recordMemoResidentBytes) ki=$(mon keyMemoResidentBytes)
[ "$ri" -gt 0 ] && [ "$ki" -gt 0 ] && [ "$ri" -le "$rb" ] && [ "$ki" -le "$kb" ] &&
	[ "$(metric 'minidir_memo_resident_bytes{memo="key"}')" -le "$kb" ] &&
	ok "cn=monitor: the memos' resident bytes ($ri, $ki) within what each may take" ||
	not_ok "resident bytes: record $ri of $rb, key $ki of $kb"
misses=$(($(mon recordMemoMisses) + $(mon keyMemoMisses)))
[ "$hits2" -gt "$hits1" ] && [ "$misses" -gt 0 ] &&
	ok "hits grow on the second sweep: $hits1 -> $hits2 ($misses misses)" ||
	not_ok "hits did not grow on the second sweep: $hits1 -> $hits2 ($misses misses)"
[ "$(metric 'minidir_memo_hits_total{memo="record"}')" = "$(mon recordMemoHits)" ] &&
	ok "/metrics: minidir_memo_hits_total as cn=monitor's" ||
	not_ok "/metrics: record hits $(metric 'minidir_memo_hits_total{memo="record"}') vs $(mon recordMemoHits)"
budget_growth=$rss_growth
stop budget

# --- no bound ---
serve unlimited unlimited
[ "$(mon memoBudgetBytes)" = unlimited ] && [ "$(mon recordMemoBytes)" = $(((N + 3) * 16)) ] &&
	ok "unlimited: every ID's record place ($(mon recordMemoBytes) bytes), keys $(mon keyMemoBytes) bytes" ||
	not_ok "unlimited: budget $(mon memoBudgetBytes), record $(mon recordMemoBytes) bytes"
[ "$(metric minidir_memo_budget_bytes)" = +Inf ] && ok "/metrics: an unlimited budget is +Inf" ||
	not_ok "/metrics: unlimited budget shown as $(metric minidir_memo_budget_bytes)"
[ "$hits2" -gt "$hits1" ] && ok "unlimited: hits grow on the second sweep: $hits1 -> $hits2" ||
	not_ok "unlimited: hits $hits1 -> $hits2"
unlimited_growth=$rss_growth
stop unlimited

if [ -n "$rss_measure" ]; then
	[ "$budget_growth" -le $((BUDGET / 1024 + SLACK_KB)) ] &&
		ok "RssAnon with memo_bytes = 1m grew by $budget_growth kB: within the budget and $SLACK_KB kB" ||
		not_ok "RssAnon with memo_bytes = 1m grew by $budget_growth kB, more than the budget and $SLACK_KB kB"
	[ "$unlimited_growth" -gt $((BUDGET / 1024 + SLACK_KB)) ] &&
		ok "RssAnon without a bound grew more: $unlimited_growth kB" ||
		not_ok "RssAnon without a bound grew by only $unlimited_growth kB: the test does not tell them apart"
else
	skip "memory figures mean nothing under a sanitizer" "RssAnon within the budget, and more without one"
fi

# --- no memos ---
serve off 0
[ "$(mon recordMemoBytes)" = 0 ] && [ "$(mon keyMemoBytes)" = 0 ] && [ "$hits2" = 0 ] &&
	[ "$(mon recordMemoMisses)" = 0 ] &&
	ok "memo_bytes = 0: no memo, no hit, no miss counted" ||
	not_ok "memo_bytes = 0: record $(mon recordMemoBytes), key $(mon keyMemoBytes) bytes, hits $hits2"

# --- SIGHUP: a new memo_bytes applies from the next database file on ---
write_conf off 512k
kill -HUP "$pid"
for _ in $(seq 1 50); do grep -q "SIGHUP: configuration" "$work/off.log" && break; sleep 0.1; done
grep -q "SIGHUP: memo_bytes = 524288" "$work/off.log" && [ "$(mon keyMemoBytes)" = 0 ] &&
	ok "SIGHUP: memo_bytes = 512k logged; the file served keeps its memos (none)" ||
	not_ok "SIGHUP: $(grep SIGHUP "$work/off.log" | tail -3); key memo $(mon keyMemoBytes) bytes"
if "$BUILD/minidir-import" -q -f "$work/import.conf" "$work/data.ldif" > "$work/import.log" 2>&1; then
	for _ in $(seq 1 100); do grep -q "memos (memo_bytes = 524288)" "$work/off.log" && break; sleep 0.2; done
	rb=$(mon recordMemoBytes) kb=$(mon keyMemoBytes)
	[ "$(mon memoBudgetBytes)" = 524288 ] && [ "$rb" -gt 0 ] && [ $((rb + kb)) -le 524288 ] &&
		[ "$(ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$SUFFIX" "(uid=user.7)" dn)" = "dn: uid=user.7,ou=people,dc=example,dc=com" ] &&
		ok "a new import is served with memo_bytes = 512k: record $rb + key $kb bytes" ||
		not_ok "after the import: budget $(mon memoBudgetBytes), record $rb, key $kb; $(grep memos "$work/off.log" | tail -1)"
else
	not_ok "import again: $(cat "$work/import.log")"
fi
# "unlimited" is SIZE_MAX inside; the log says the word the config file takes, not the number.
write_conf off unlimited
kill -HUP "$pid"
for _ in $(seq 1 50); do grep -q "SIGHUP: memo_bytes = unlimited" "$work/off.log" && break; sleep 0.1; done
grep -q "SIGHUP: memo_bytes = unlimited (for the next database file opened)" "$work/off.log" &&
	ok "SIGHUP: memo_bytes = unlimited logged as unlimited" ||
	not_ok "SIGHUP to unlimited: $(grep 'SIGHUP: memo_bytes' "$work/off.log" | tail -1)"
stop off

# --- memo_bytes = auto, the default: a quarter of the memory this process may use ---
# auto_line LOG: "BUDGET LIMIT FROM" of LOG's "memo_bytes = auto" line.
auto_line() {
	sed -n 's/.*memo_bytes = auto: \([0-9]*\) bytes, a quarter of the \([0-9]*\) bytes this process may use (\(.*\))$/\1 \2 \3/p' "$1" | head -1
}
machine=$(($(getconf _PHYS_PAGES) * $(getconf PAGESIZE)))
write_conf auto none
start_minidir "$work/auto.conf" "$work/auto.log"
read -r budget limit from <<< "$(auto_line "$work/auto.log")"
if [ -n "$port" ] && [ -n "${limit:-}" ] && [ "$budget" = $((limit / 4)) ] && [ "$limit" -le "$machine" ] &&
	grep -q "memos (memo_bytes = $budget)" "$work/auto.log" && [ "$(mon memoBudgetBytes)" = "$budget" ]; then
	ok "memo_bytes left out: auto, $budget bytes, a quarter of $limit ($from; the machine has $machine)"
else
	not_ok "auto: '$(grep -e 'memo_bytes = auto' -e 'memos (' "$work/auto.log")', machine $machine"
fi
stop auto
# In a cgroup of 512 MiB made here (v2, or v1's memory controller; root only): the limit
# read is the cgroup's.
cg=""
if [ "$(id -u)" = 0 ] && [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup/minidir-memo-$$ limit_file=memory.max
elif [ "$(id -u)" = 0 ] && [ -d /sys/fs/cgroup/memory ]; then
	cg=/sys/fs/cgroup/memory/minidir-memo-$$ limit_file=memory.limit_in_bytes
fi
if [ -n "$cg" ] && mkdir "$cg" 2> /dev/null && echo $((512 << 20)) > "$cg/$limit_file" 2> /dev/null; then
	write_conf cgroup none
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -f "$3"' sh "$cg" "$BUILD/minidir" "$work/cgroup.conf" > "$work/cgroup.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 1 100); do grep -q "memos (" "$work/cgroup.log" && break; sleep 0.1; done
	read -r budget limit from <<< "$(auto_line "$work/cgroup.log")"
	[ "${limit:-}" = $((512 << 20)) ] && [ "$budget" = $((128 << 20)) ] && [ "$from" = "the cgroup limit of $cg/$limit_file" ] &&
		ok "in a cgroup of 512 MiB: auto is 128 MiB, from $from" ||
		not_ok "in a cgroup of 512 MiB: '$(grep 'memo_bytes = auto' "$work/cgroup.log")'"
	stop cgroup
	rmdir "$cg" 2> /dev/null
else
	[ -n "$cg" ] && rmdir "$cg" 2> /dev/null
	skip "no memory cgroup can be made here (root and a writable /sys/fs/cgroup needed)" "auto in a cgroup of 512 MiB"
fi

# --- bad values: minidir -t names the line ---
for v in -1 lots 2G 1048577m; do
	write_conf bad none
	printf '#\nmemo_bytes = %s\n' "$v" >> "$work/bad.conf"
	line=$(wc -l < "$work/bad.conf")
	out=$("$BUILD/minidir" -t -f "$work/bad.conf" 2>&1)
	case $out in
	*"$work/bad.conf:$line: memo_bytes: expected"*) ok "memo_bytes = $v refused at its line" ;;
	*) not_ok "memo_bytes = $v: $out" ;;
	esac
done
finish
