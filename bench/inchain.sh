#!/usr/bin/env bash
# The in-chain rule's cost beside a plain equality lookup, in one run: bench/gen-ldif.sh NU
# users and bench/memberof_nested_groups.sh NG nested groups (a tree ten wide), imported
# with memberof_nested = yes, so that (memberOf=G) (the eq.memberof index, the closure
# computed at import) and (memberOf:1.2.840.113556.1.4.1941:=G) (walked per search,
# server/ops/search_chain.h) return the same entries. Each round runs N lookups of each
# kind with searchrate (one connection, attributes 1.1, the same groups in the same order:
# cn=g.K for K stepping through 0..NG-1 by STEP from FIRST), the two kinds in alternating
# order from round to round; the server's CPU (user+system, /proc) per lookup is printed
# side by side, with the ratio, for each round and over all rounds.
#   bench/inchain.sh   (NU=100000 NG=10000 N=4000 ROUNDS=8 RATE=2000 FIRST=11 STEP=7 BIG=5;
#                      KEEP=1 keeps the temp dir)
# FIRST=11 leaves out g.0 .. g.10, the groups of 110,000 and 11,000 entries, whose answers'
# sending, not the walk, is the cost; FIRST=0 puts them in. Not part of make test.
. "$(dirname "$0")/lib.sh"
NU=${NU:-100000}
NG=${NG:-10000}
N=${N:-4000}
ROUNDS=${ROUNDS:-8}
RATE=${RATE:-2000}
FIRST=${FIRST:-11}
STEP=${STEP:-7}
need "$BUILD/minidir" "$BUILD/minidir-import" "$BUILD/searchrate" ldapsearch
bench_init inchain
G=ou=groups,$SUFFIX
O=1.2.840.113556.1.4.1941

t0=$(date +%s%N)
{ bench/gen-ldif.sh "$NU" "$SUFFIX"; bench/memberof_nested_groups.sh "$NG" "$NU" "$SUFFIX"; } > "$work/data.ldif" ||
	die "generating the data failed"
printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" "schema_dir = $SCHEMA_DIR" \
	"suffix = $SUFFIX" "threads = 1" "sizelimit = unlimited" "memberof_nested = yes" \
	"inchain_max = unlimited" "index = objectClass, uid, member" > "$work/minidir.conf"
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" > "$work/import.log" 2>&1 ||
	die "minidir-import failed: $(tail -3 "$work/import.log")"
echo "# $NU users, $NG nested groups, memberof_nested = yes: imported in $((($(date +%s%N) - t0) / 1000000)) ms"
"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
pid=$!
pids+=("$pid")
port=$(wait_port "$work/minidir.log")
[ -n "$port" ] || die "minidir did not start: $(tail -3 "$work/minidir.log")"

# The same answers, first: a few groups, both filters.
for k in $FIRST $((FIRST + STEP)) $((NG - 1)) 1 0; do
	a=$(ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$SUFFIX" "(memberOf=cn=g.$k,$G)" 1.1 | grep -c '^dn:')
	b=$(ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$SUFFIX" "(memberOf:$O:=cn=g.$k,$G)" 1.1 | grep -c '^dn:')
	[ "$a" = "$b" ] || die "g.$k: $a entries by equality, $b in chain"
	echo "# cn=g.$k: $a entries either way"
done

# The server's CPU in ns by thread, "TID NS" lines: each thread's run time
# (/proc/PID/task/TID/schedstat), finer than the 10 ms ticks of /proc/PID/stat.
cpu_ns() {
	local t
	for t in /proc/"$1"/task/*; do
		[ -r "$t/schedstat" ] && echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat" 2> /dev/null)"
	done
}
# cpu_delta BEFORE AFTER: the ns the threads of AFTER ran since BEFORE (a thread that ended
# between the two is left out: never a negative count).
cpu_delta() {
	awk 'NR == FNR { t0[$1] = $2; next } $2 != "" { d += $2 - ($1 in t0 ? t0[$1] : 0) }
		END { printf "%d", d }' <(echo "$1") <(echo "$2")
}
# run FILTER: N lookups of FILTER (a searchrate pattern, at RATE a second, one interval);
# prints the server's CPU in ns per lookup done.
run() {
	local c0 c1 ndone rate=$RATE secs=$(((N + RATE - 1) / RATE))
	[ "$N" -lt "$RATE" ] && rate=$N
	c0=$(cpu_ns "$pid")
	"$BUILD/searchrate" -p "$port" -b "$SUFFIX" -f "$1" -A 1.1 -r "$rate" -i "$secs" -I 1 > "$work/sr.log" 2>&1 ||
		die "searchrate: $(tail -3 "$work/sr.log")"
	c1=$(cpu_ns "$pid")
	ndone=$(awk '/Total searches:/ { print $3 }' "$work/sr.log")
	grep -q "Total errors: *0$" "$work/sr.log" && [ "${ndone:-0}" -gt 0 ] || die "searchrate: $(grep -A3 'Result codes' "$work/sr.log")"
	echo $(($(cpu_delta "$c0" "$c1") / ndone))
}
pattern="[$FIRST:$((NG - 1))x$STEP]"
eq="(memberOf=cn=g.$pattern,$G)"
ch="(memberOf:$O:=cn=g.$pattern,$G)"
printf '%-10s %16s %16s %8s\n' "round" "equality us/op" "in-chain us/op" "ratio"
teq=0 tch=0 ratios=()
for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then
		e=$(run "$eq") c=$(run "$ch")
	else
		c=$(run "$ch") e=$(run "$eq")
	fi
	teq=$((teq + e)) tch=$((tch + c))
	ratios+=("$(awk -v e="$e" -v c="$c" 'BEGIN { printf "%.3f", e ? c / e : 0 }')")
	awk -v r="$r" -v e="$e" -v c="$c" 'BEGIN {
		printf "%-10s %16.1f %16.1f %8.2f\n", r (r % 2 ? " (eq 1st)" : " (ch 1st)"), e / 1000, c / 1000, e ? c / e : 0 }'
done
awk -v e="$teq" -v c="$tch" -v n="$ROUNDS" 'BEGIN {
	printf "%-10s %16.1f %16.1f %8.2f\n", "all", e / n / 1000, c / n / 1000, e ? c / e : 0 }'
echo "median of the rounds' ratios: $(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ r[NR] = $1 } END { printf "%.2f", NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2 }')"
echo "# about $N lookups a round of each kind (searchrate, one connection, $RATE a second), groups cn=g.$pattern"
# The largest group, g.0 (every user and group inside it): the walk's cost at its largest,
# beside the same entries from the index; BIG lookups of each, CPU per lookup in ms.
BIG=${BIG:-5}
N=$BIG
e=$(run "(memberOf=cn=g.0,$G)") c=$(run "(memberOf:$O:=cn=g.0,$G)")
awk -v e="$e" -v c="$c" -v n="$BIG" 'BEGIN {
	printf "cn=g.0: %d lookups of each, %.1f ms (equality) and %.1f ms (in-chain) of CPU each, ratio %.2f\n", n, e / 1e6, c / 1e6, c / e }'
