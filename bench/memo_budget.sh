#!/usr/bin/env bash
# bench/memo_budget.sh: what memo_bytes (the memory budget of a served file's record and
# key memos, docs/database.md) costs and saves. The same minidir binary serves the same
# directory once per budget in turn (one server at a time, so each has the machine's
# memory and both cores to itself), ROUNDS times, the order reversed every round. Each
# run: a server started, every entry looked up once in ID order ((uid=user.N),
# N = 0..ENTRIES-1: the sweep that fills the memos, or their budget), its RssAnon read from
# /proc after the sweep, then SECS seconds of random 1-entry lookups from 8 asynchronous
# searchrate connections (one request in flight each), whose lookups/s and server CPU per
# lookup (utime + stime from /proc/PID/stat) are printed with the memos' bytes and hit
# rates from cn=monitor. Never part of `make test`.
#
#   bench/memo_budget.sh                          # 200,000 generated entries, 2 rounds
#   ENTRIES=1000000 bench/memo_budget.sh          # a bigger generated directory
#   LDIF=/big/data.ldif bench/memo_budget.sh      # gen-ldif.sh's LDIF of any size (ENTRIES:
#                                                 # its uid=user.N entries, counted if unset)
#   LDIF=/big/data.ldif DB=/big/db.mdb bench/memo_budget.sh
#                                                 # DB imported from LDIF already: used as is
#   BUDGETS="default 0 unlimited 16m" ROUNDS=3 SECONDS_PER_RUN=20 bench/memo_budget.sh
#
# BUDGETS: memo_bytes values ("default": the key left out); default "default 0 unlimited".
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
ROUNDS=${ROUNDS:-2}
SECS=${SECONDS_PER_RUN:-10}
BUDGETS=${BUDGETS:-default 0 unlimited}
need ldapsearch
bench_init memo-budget

ldif=${LDIF:-}
if [ -z "$ldif" ]; then
	ENTRIES=${ENTRIES:-200000}
	ldif=$work/data.ldif
	bench/gen-ldif.sh "$ENTRIES" "$SUFFIX" > "$ldif" || die "gen-ldif.sh failed"
fi
[ -r "$ldif" ] || die "$ldif: cannot read it"
ENTRIES=${ENTRIES:-$(grep -c '^dn: uid=user\.' "$ldif")}
db=${DB:-$work/db.mdb}
conf() { # conf FILE [LINE...]: a config serving $db, 2 workers, monitor readable by anyone
	local f=$1
	shift
	printf '%s\n' "listen = 127.0.0.1:0" "database = $db" "schema_dir = $SCHEMA_DIR" \
		"suffix = $SUFFIX" "threads = 2" "monitor_access = anonymous" "$@" > "$f"
}
conf "$work/import.conf"
if [ -z "${DB:-}" ] || [ ! -e "$db" ]; then
	"$SERVER_BUILD/minidir-import" -q -f "$work/import.conf" "$ldif" || die "minidir-import failed"
fi

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_kb() { awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"; }
monitor() { # monitor PORT ATTR: one value of cn=monitor
	ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$1" -b cn=monitor -s base "$2" |
		sed -n "s/^$2: //p"
}
hz=$(getconf CLK_TCK)
declare -A ops ticks rss sweep_s rbytes kbytes rhit khit

# run BUDGET: one server with memo_bytes BUDGET, swept, then loaded; adds to the figures.
run() {
	local b=$1 line=() port pid r0 start=0 t0 n out c0 c1
	[ "$b" = default ] || line=("memo_bytes = $b")
	conf "$work/$b.conf" "${line[@]}"
	"$SERVER_BUILD/minidir" -f "$work/$b.conf" 2> "$work/$b.log" &
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$work/$b.log")
	[ -n "$port" ] || die "minidir (memo_bytes $b) did not start: $(cat "$work/$b.log")"
	r0=$(rss_kb "$pid")
	# The sweep: searchrate's sequential pattern, from where the last chunk stopped.
	t0=$(date +%s.%N)
	while [ "$start" -lt "$ENTRIES" ]; do
		out=$(timeout 120 "$BUILD/searchrate" -p "$port" -b "$SUFFIX" \
			-f "(uid=user.[$start:$((ENTRIES - 1))])" -t 1 --numConnections 8 -a -O 1 \
			-i 5 -I 1 2>&1) || die "sweep failed: $(tail -3 <<< "$out")"
		n=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' <<< "$out")
		[ "${n:-0}" -gt 0 ] || die "sweep: no searches: $(tail -3 <<< "$out")"
		start=$((start + n))
	done
	sweep_s[$b]=$(awk -v a="$t0" -v b="$(date +%s.%N)" -v s="${sweep_s[$b]:-0}" 'BEGIN { printf "%.1f", s + b - a }')
	rss[$b]=$((${rss[$b]:-0} + $(rss_kb "$pid") - r0))
	c0=$(cpu_ticks "$pid")
	out=$(timeout $((SECS * 2 + 30)) "$BUILD/searchrate" -p "$port" -b "$SUFFIX" \
		-f "(uid=user.[0-$((ENTRIES - 1))])" -t 1 --numConnections 8 -a -O 1 -i "$SECS" -I 1 2>&1)
	c1=$(cpu_ticks "$pid")
	n=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' <<< "$out")
	[ "${n:-0}" -gt 0 ] || die "load (memo_bytes $b) failed: $(tail -3 <<< "$out")"
	ops[$b]=$((${ops[$b]:-0} + n))
	ticks[$b]=$((${ticks[$b]:-0} + c1 - c0))
	rbytes[$b]=$(monitor "$port" recordMemoBytes)
	kbytes[$b]=$(monitor "$port" keyMemoBytes)
	local rh rm kh km
	rh=$(monitor "$port" recordMemoHits) rm=$(monitor "$port" recordMemoMisses)
	kh=$(monitor "$port" keyMemoHits) km=$(monitor "$port" keyMemoMisses)
	rhit[$b]=$(awk -v h="$rh" -v m="$rm" 'BEGIN { printf "%.1f", h + m ? 100 * h / (h + m) : 0 }')
	khit[$b]=$(awk -v h="$kh" -v m="$km" 'BEGIN { printf "%.1f", h + m ? 100 * h / (h + m) : 0 }')
	stop_pid "$pid"
}

order=$BUDGETS
for _ in $(seq 1 "$ROUNDS"); do
	for b in $order; do run "$b"; done
	order=$(tr ' ' '\n' <<< "$order" | tac | tr '\n' ' ')
done

echo "memo_bytes: $ENTRIES entries ($(basename "$ldif")), 2 workers; per run a sweep of every entry in ID"
echo "order, then ${SECS} s of random 1-entry lookups over 8 connections; $ROUNDS rounds, orders alternated"
uptime
printf '%-10s %11s %12s %13s %13s %12s %10s %10s %9s\n' memo_bytes lookups/s "server us/op" \
	"RssAnon+ MiB" "record MiB" "key MiB" "record hit" "key hit" "sweep s"
for b in $BUDGETS; do
	printf '%-10s %11s %12s %13s %13s %12s %9s%% %9s%% %9s\n' "$b" \
		"$(awk -v n="${ops[$b]}" -v t="$((ROUNDS * SECS))" 'BEGIN { printf "%.0f", n / t }')" \
		"$(awk -v k="${ticks[$b]}" -v n="${ops[$b]}" -v hz="$hz" 'BEGIN { printf "%.2f", k * 1e6 / hz / n }')" \
		"$(awk -v k="${rss[$b]}" -v r="$ROUNDS" 'BEGIN { printf "%.1f", k / r / 1024 }')" \
		"$(awk -v b="${rbytes[$b]}" 'BEGIN { printf "%.1f", b / 1048576 }')" \
		"$(awk -v b="${kbytes[$b]}" 'BEGIN { printf "%.1f", b / 1048576 }')" \
		"${rhit[$b]}" "${khit[$b]}" "$(awk -v s="${sweep_s[$b]}" -v r="$ROUNDS" 'BEGIN { printf "%.1f", s / r }')"
done
echo "(RssAnon+: the server's anonymous memory after the sweep less at start, the mean of the rounds;"
echo " record/key MiB: the most each memo may take; hit rates: the last round's, sweep and load)"
