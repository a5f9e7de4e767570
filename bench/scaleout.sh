#!/usr/bin/env bash
# Scale-out: one OpenLDAP slapd provider (syncprov) with bench/gen-ldif.sh N entries, two
# minidir replicas (refreshAndPersist) and HAProxy in TCP mode with `option ldap-check`
# in front, all on 127.0.0.1 private ports, configured in a temp dir and stopped by PID.
#   bench/scaleout.sh            (N=10000 SECS=10 FAIL_SECS=30; KEEP=1 keeps the temp dir;
#                                 CHECK=replication: a health check that waits for replication;
#                                 HOLD=120: the replicas' listen_after_refresh, 0 = off)
# 1. Throughput: build/searchrate (lean engine, 1-entry uid lookups) straight at one
#    replica, then through HAProxy with 1 replica behind it and with 2.
# 2. Failover: the same load through HAProxy with 2 replicas for FAIL_SECS; at KILL_AT s
#    replica 2 is killed (kill -9), 200 changes are made on the provider while it is down,
#    at RESTART_AT s it is started again on its database file (it resumes from its
#    cookie). Prints searchrate's errors per second, when HAProxy marked it DOWN and UP
#    again, and when the replica had the provider's last change.
# Not part of make test. Needs slapd, haproxy, ldap-utils, python3 (scripts/deps.sh bench).
. "$(dirname "$0")/replica_lib.sh" # with bench/lib.sh: set -u, the tree's root
N=${N:-10000}
SECS=${SECS:-10}
FAIL_SECS=${FAIL_SECS:-30}
KILL_AT=${KILL_AT:-8}
RESTART_AT=${RESTART_AT:-16}
CHANGES=${CHANGES:-200}
HOLD=${HOLD:-120} # the replicas' listen_after_refresh (0: listen at once)
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
need "$SLAPD" "$SLAPADD" "$HAPROXY" ldapsearch ldapmodify "$PYTHON" "$BUILD/searchrate" "$BUILD/minidir"
bench_init scaleout
timeout 120 cc -O2 -o "$work/stallwatch" bench/stallwatch.c || die "cannot build bench/stallwatch.c"

pport=$(free_port) r1port=$(free_port) r2port=$(free_port) h1port=$(free_port) h2port=$(free_port)
PROV=ldap://127.0.0.1:$pport

echo "# provider: slapd + syncprov, gen-ldif $N entries, port $pport"
slapd_conf "$work/provider.conf" "$work/provider-db" "$(slapd_db_lines)"
provider_load "$N"
slapd_start provider "$pport"

last="uid=user.$((N - 1)),ou=people,$EX"
# start_replica NAME PORT: a replica from no database file, waited for until it has the
# last entry; sets $rpid.
start_replica() {
	local t0
	replica_conf "$1" "$2" "$PROV" "$([ "$HOLD" = 0 ] || echo "listen_after_refresh = $HOLD")"
	t0=$(now_ms)
	replica_start "$1" "$2"
	wait_value "ldap://127.0.0.1:$2" "$last" uid "user.$((N - 1))" 120 || die "replica $1 did not refresh"
	echo "# replica $1: port $2, pid $rpid, listen_after_refresh = $HOLD, initial refresh of $N entries visible after $(($(now_ms) - t0)) ms"
}
start_replica r1 "$r1port"
r1pid=$rpid
start_replica r2 "$r2port"
r2pid=$rpid

# HAProxy: frontend "one" -> replica 1 only; frontend "two" -> both (round robin per
# connection). Health check: an anonymous LDAP bind every 250 ms; 2 failures mark a
# server DOWN, 2 successes UP. A connection to a server that refuses is redispatched.
# CHECK=replication: backend "two" checks replication instead (tcp-check: a bind as the
# rootdn and a search of cn=replication,cn=monitor for replicationState, BER by hand; a
# server is UP only while the answer says "persisting").
check2="	option ldap-check"
if [ "${CHECK:-ldap}" = replication ]; then
	hex=$(printf 'cn=admin,dc=example,dc=com\nsecret\n' | "$PYTHON" -c '
import sys
dn, pw = [l.encode() for l in sys.stdin.read().split("\n")[:2]]
def tlv(t, b):
    n = len(b)
    return bytes([t]) + (bytes([n]) if n < 128 else bytes([0x81, n])) + b
def i(v): return tlv(2, bytes([v]))
bind = tlv(0x30, i(1) + tlv(0x60, i(3) + tlv(4, dn) + tlv(0x80, pw)))
search = tlv(0x30, i(2) + tlv(0x63, tlv(4, b"cn=replication,cn=monitor") + tlv(0x0a, b"\0") + tlv(0x0a, b"\0")
    + i(0) + i(0) + tlv(1, b"\0") + tlv(0x87, b"objectClass") + tlv(0x30, tlv(4, b"replicationState"))))
unbind = tlv(0x30, i(3) + tlv(0x42, b""))
print((bind + search + unbind).hex())')
	check2="	option tcp-check
	timeout check 1s
	tcp-check connect
	tcp-check send-binary $hex
	tcp-check expect string persisting"
fi
cat > "$work/haproxy.cfg" << EOF
global
	maxconn 4000
	stats socket $work/haproxy.sock mode 600 level admin
	log stderr format iso local0 info
defaults
	mode tcp
	log global
	option redispatch
	retries 3
	timeout connect 1s
	timeout client 60s
	timeout server 60s
frontend one
	bind 127.0.0.1:$h1port
	default_backend one
frontend two
	bind 127.0.0.1:$h2port
	default_backend two
backend one
	option ldap-check
	server r1 127.0.0.1:$r1port check inter 250 fall 2 rise 2
backend two
	balance roundrobin
$check2
	server r1 127.0.0.1:$r1port check inter 250 fall 2 rise 2
	server r2 127.0.0.1:$r2port check inter 250 fall 2 rise 2
EOF
"$HAPROXY" -f "$work/haproxy.cfg" -db > "$work/haproxy.log" 2>&1 &
hpid=$!
pids+=("$hpid")
# hastat BACKEND SERVER: "STATUS SESSIONS_TOTAL" from the stats socket ("show stat");
# hastat BACKEND: "SERVER STATUS SESSIONS_TOTAL ..." for all its servers.
hastat() {
	timeout 2 "$PYTHON" - "$work/haproxy.sock" "$1" "${2:-}" << 'EOF' 2> /dev/null
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(1.5); s.connect(sys.argv[1])
s.sendall(b"show stat\n"); data = b""
while True:
    b = s.recv(65536)
    if not b: break
    data += b
out = []
for line in data.decode().splitlines():
    f = line.split(",")
    if len(f) > 17 and f[0] == sys.argv[2] and f[1] not in ("FRONTEND", "BACKEND"):
        if sys.argv[3] and f[1] != sys.argv[3]: continue
        out += ([] if sys.argv[3] else [f[1]]) + [f[17].split()[0], f[7]]
print(" ".join(out))
EOF
}
for _ in $(seq 1 100); do
	[ "$(hastat two r2 | cut -d' ' -f1)" = UP ] && [ "$(hastat two r1 | cut -d' ' -f1)" = UP ] && break
	sleep 0.1
done
[ "$(hastat two r2 | cut -d' ' -f1)" = UP ] || die "haproxy: backends not UP: $(tail -5 "$work/haproxy.log")"
echo "# haproxy: pid $hpid, frontend one :$h1port (r1), two :$h2port (r1 r2), both UP"

LOAD=(-t 8 -a -O 1 -b "ou=people,$EX" -s one -f "(uid=user.[0-$((N - 1))])" -A cn -i 1)
# measure NAME PORT: one bounded searchrate run (2 s warm-up + SECS s); prints the row
# and the CPU each process used over it (% of one core).
rows=()
measure() {
	local name=$1 p=$2 out t0 p99 lcpu c_h c_r1 c_r2 c_h1 c_r11 c_r21 rate err wall
	c_h=$(cpu_ticks "$hpid") c_r1=$(cpu_ticks "$r1pid") c_r2=$(cpu_ticks "$r2pid")
	t0=$(now_ms)
	out=$(timeout $((SECS + 30)) "$BUILD/searchrate" -p "$p" "${LOAD[@]}" -I $((SECS + 2)) --warmUpIntervals 2 -c 2>&1)
	wall=$(($(now_ms) - t0))
	c_h1=$(cpu_ticks "$hpid") c_r11=$(cpu_ticks "$r1pid") c_r21=$(cpu_ticks "$r2pid")
	echo "$out" > "$work/load-$name.csv"
	rate=$(echo "$out" | sed -n 's/^# *Searches\/sec: *\([0-9.]*\).*/\1/p' | head -1)
	err=$(echo "$out" | sed -n 's/^# *Total errors: *\([0-9]*\).*/\1/p' | head -1)
	p99=$(echo "$out" | sed -n 's/^# *Latency ms:.* p99 \([0-9.]*\).*/\1/p' | head -1)
	lcpu=$(echo "$out" | sed -n 's/^# *searchrate CPU:.*= \([0-9.]*\)% of one core.*/\1/p' | head -1)
	pct() { awk -v a="$1" -v b="$2" -v w="$wall" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.0f%%", (b-a)/hz*100000/w}'; }
	rows+=("$(printf '| %s | %.0f | %s | %s | %s | %s | %s | %.0f%% |' "$name" "${rate:-0}" "${err:-?}" "${p99:-?}" \
		"$(pct "$c_r1" "$c_r11")" "$(pct "$c_r2" "$c_r21")" "$(pct "$c_h" "$c_h1")" "${lcpu:-0}")")
	echo "${rows[-1]}"
}
echo
echo "# throughput: searchrate ${LOAD[*]} -I $((SECS + 2)) --warmUpIntervals 2"
echo "| path | lookups/s | errors | p99 ms | r1 CPU | r2 CPU | haproxy CPU | searchrate CPU |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|"
measure "direct to r1 (no HAProxy)" "$r1port"
measure "HAProxy, 1 replica" "$h1port"
measure "HAProxy, 2 replicas" "$h2port"

# Failover run.
echo
echo "# failover: searchrate -p $h2port ${LOAD[*]} -I $FAIL_SECS --iterationsBeforeReconnect 2000; kill -9 r2 at ${KILL_AT}s, $CHANGES changes on the provider, restart r2 at ${RESTART_AT}s"
"$BUILD/searchrate" -p "$h2port" "${LOAD[@]}" -I "$FAIL_SECS" --iterationsBeforeReconnect 2000 -c \
	> "$work/failover.csv" 2>&1 &
lpid=$!
pids+=("$lpid")
# The machine's own stalls over the same window (bench/stallwatch.c: the longest a process
# that only sleeps 10 ms at a time was kept off the CPU).
"$work/stallwatch" "$FAIL_SECS" > "$work/stallwatch.txt" 2>&1 &
swpid=$!
pids+=("$swpid")
t0=$(now_ms)
killed='' restarted='' up_at='' caught_at='' mods_done='' sess_at_up=''
r2url=ldap://127.0.0.1:$r2port
# The timeline: bounded by FAIL_SECS + 10 s and by the load's end.
while kill -0 "$lpid" 2> /dev/null && [ $(($(now_ms) - t0)) -lt $(((FAIL_SECS + 10) * 1000)) ]; do
	el=$(($(now_ms) - t0))
	if [ -z "$killed" ] && [ "$el" -ge $((KILL_AT * 1000)) ]; then
		killed=$(($(now_ms) - t0))
		kill_ep=$(date +%s.%N)
		kill -KILL "$r2pid"
		wait "$r2pid" 2> /dev/null
		forget "$r2pid"
		# changes r2 misses while down: CHANGES modifies of one entry's description
		for i in $(seq 1 "$CHANGES"); do
			printf 'dn: uid=user.%d,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: change %d\n\n' \
				$((i % N)) "$EX" "$i"
		done > "$work/changes.ldif"
		timeout 60 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret -f "$work/changes.ldif" > "$work/changes.log" 2>&1 &&
			mods_done=$(($(now_ms) - t0))
	fi
	if [ -n "$killed" ] && [ -z "$restarted" ] && [ "$el" -ge $((RESTART_AT * 1000)) ]; then
		restarted=$(($(now_ms) - t0))
		restart_ep=$(date +%s.%N)
		replica_start r2 "$r2port" # returns when its port answers
		r2pid=$rpid
	fi
	all=$(hastat two)
	echo "$el $all" >> "$work/timeline.txt"
	st=$(echo "$all" | awk '{for (i = 1; i < NF; i++) if ($i == "r2") print $(i+1), $(i+2)}')
	if [ -n "$restarted" ] && [ -z "$up_at" ] && [ "${st%% *}" = UP ]; then
		up_at=$(($(now_ms) - t0))
		sess_at_up=${st#* }
	fi
	if [ -n "$restarted" ] && [ -z "$caught_at" ] &&
		[ "$(value "$r2url" "uid=user.$((CHANGES % N)),ou=people,$EX" description)" = "change $CHANGES" ]; then
		caught_at=$(($(now_ms) - t0))
	fi
	sleep 0.1
done
wait "$lpid" 2> /dev/null
wait "$swpid" 2> /dev/null
forget "$lpid"
forget "$swpid"
sess_end=$(hastat two r2)
sess_end=${sess_end#* }
echo "second,lookups/s,errors/s"
grep -v '^#' "$work/failover.csv" | awk -F, 'NF>3 && $1 ~ /^[0-9]/ {n++; printf "%d,%.0f,%.0f\n", n, $1, $4}' > "$work/failover.rows"
cat "$work/failover.rows"
errs=$(awk -F, '{s+=$3}END{printf "%d", s}' "$work/failover.rows")
first_err=$(awk -F, '$3>0{print $1; exit}' "$work/failover.rows")
last_err=$(awk -F, '$3>0{l=$1}END{print l}' "$work/failover.rows")
resumed=$(grep -c "resuming from cookie" "$work/r2.log")
# HAProxy's own log says when it marked r2 DOWN and UP (ISO timestamps, microseconds).
ha_ep() { date -d "$(grep -E "^20[^ ]* Server two/r2 is $1" "$work/haproxy.log" | head -1 | cut -d' ' -f1)" +%s.%N 2> /dev/null; }
down_ep=$(ha_ep DOWN) up_ep=$(ha_ep UP)
# ...and r2's log when its refresh from the cookie was committed (the last "refresh done").
done_ep=$(date -d "$(grep "refresh done" "$work/r2.log" | tail -1 | cut -d' ' -f1)" +%s.%N 2> /dev/null)
since() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f s", b-a}' || echo "never"; }
ms() { [ -n "$1" ] && awk -v v="$1" 'BEGIN{printf "%.2f s", v/1000}' || echo "never"; }
echo
echo "| event | when |"
echo "|---|--:|"
echo "| r2 killed (kill -9) | $(ms "$killed") of the run |"
echo "| HAProxy marked r2 DOWN (its log) | $(since "${kill_ep:-}" "$down_ep") after the kill |"
echo "| $CHANGES changes made on the provider while r2 is down (ldapmodify) | done at $(ms "$mods_done") of the run |"
echo "| searchrate errors | $errs, all in second(s) ${first_err:-none}..${last_err:-none} of the run |"
echo "| r2 restarted on its database file | $(ms "$restarted") of the run (log: $resumed x \"resuming from cookie\") |"
echo "| r2 answered with the provider's last change (polled) | $(ms $((${caught_at:-0} - ${restarted:-0}))) after the restart |"
echo "| r2 committed its refresh from the cookie (its log) | $(since "${restart_ep:-}" "$done_ep") after the restart |"
echo "| HAProxy marked r2 UP (its log) | $(since "${restart_ep:-}" "$up_ep") after the restart |"
if [ -n "$up_ep" ] && [ -n "$done_ep" ] && awk -v u="$up_ep" -v d="$done_ep" 'BEGIN{exit !(u < d)}'; then
	echo "| r2 UP before it had caught up (its clients read the old data) | $(since "$up_ep" "$done_ep") |"
else
	echo "| r2 UP after it had caught up | $(since "$done_ep" "$up_ep") after |"
fi
echo "| sessions HAProxy sent to r2: when UP again / at the end | ${sess_at_up:-?} / ${sess_end:-?} |"
echo
echo "# the machine over the failover run: $(cat "$work/stallwatch.txt")"
echo "# searchrate summary of the failover run:"
sed -n '/^# *Total searches/p; /^# *Total errors/p; /^# *Searches\/sec/p; /^# *Latency/p; /^# *Result codes/,/^# *Reconnects/p' "$work/failover.csv" | head -12
echo "# haproxy log (r2 state changes):"
grep -E "^20.*r2 is (DOWN|UP)" "$work/haproxy.log" | cut -c1-150 | head -4
echo "# the replica's log after the restart:"
grep -E "syncrepl|resuming|refresh" "$work/r2.log" | tail -4
