#!/usr/bin/env bash
# The operators' HTTP endpoint (metrics_listen; server/monitor/http.c, metrics.c), asked with
# curl: /healthz, /readyz, /metrics in Prometheus' text format (promtool check metrics),
# the methods and answers (404, 405, 400), the bounds (connections, request size, a slow
# client), counters that move by exactly the searches made; then a replica of a real
# slapd provider (provider.sh) reached through a TCP relay that can be paused
# (pause_relay.py): ready, still ready while the provider is quiet, stale once its
# session stalls (503 on /readyz), ready again when it flows, and HAProxy (option
# httpchk GET /readyz on the metrics port) taking it out of the pool and putting it
# back. Needs curl, promtool (prometheus), haproxy, slapd, python3 (scripts/deps.sh).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh
use_work_dir http
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
PYTHON=${PYTHON:-python3}
for tool in curl promtool "$HAPROXY" "$PYTHON" ldapsearch; do
	command -v "$tool" > /dev/null || { not_ok "$tool is missing (scripts/deps.sh)"; finish; }
done

# get PATH [CURL ARGS]: "STATUS BODY" of GET http://127.0.0.1:$mport/PATH (body cut).
get() {
	local path=$1
	shift
	curl -s -m 10 -o "$work/body" -w '%{http_code}' "$@" "http://127.0.0.1:$mport$path" > "$work/code" 2> /dev/null
	echo "$(cat "$work/code") $(tr -d '\r' < "$work/body" | head -c 300)"
}
# wait_get PATH WANT TENTHS: polls GET PATH until its "STATUS BODY" starts with WANT, up to
# TENTHS tenths of a second; prints the last answer, returns 1 when none matched.
wait_get() {
	local r
	for _ in $(seq 1 "$3"); do
		r=$(get "$1")
		case $r in "$2"*)
			echo "$r"
			return 0
			;;
		esac
		sleep 0.1
	done
	echo "$r"
	return 1
}
# metric 'NAME{LABELS}': its value in a fresh /metrics.
metric() {
	curl -s -m 10 "http://127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m {print $2}'
}

# --- configuration ----------------------------------------------------------------
mport=$(free_port) || { not_ok "no free port"; finish; }
cat > "$work/minidir.conf" << CONF
listen = ldap://127.0.0.1:0
database = $work/test.mdb
schema_dir = $SCHEMA_DIR
suffix = $BASE
metrics_listen = 127.0.0.1:$mport
CONF
out=$("$BUILD/minidir-import" -f "$work/minidir.conf" "$LDIF" 2>&1) || {
	not_ok "import: $out"
	finish
}

bad_conf() { # LINE WANT: a config whose line 5 is LINE is refused with WANT at :5:
	sed "5s|.*|$1|" "$work/minidir.conf" > "$work/bad.conf"
	out=$(timeout 10 "$BUILD/minidir" -f "$work/bad.conf" 2>&1)
	case $out in
	*"bad.conf:5: "*"$2"*) ok "config refused: '$1': ${out##*bad.conf:}" ;;
	*) not_ok "config '$1': $out" ;;
	esac
}
bad_conf "metrics_listen = 192.0.2.1:$mport" "not a loopback address"
bad_conf "metrics_listen = 127.0.0.1" "expected ADDRESS:PORT"
bad_conf "metrics_listen = localhost:9100" "not an IP address"
bad_conf "metrics_listen = 127.0.0.1:70000" "not in 1..65535"
bad_conf "ready_max_lag_ms = 5" "ready_max_lag_ms"
# With metrics_allow_remote an address off the loopback is taken (0.0.0.0 binds all).
{ cat "$work/minidir.conf"; echo "metrics_allow_remote = yes"; } | sed "5s|.*|metrics_listen = 0.0.0.0:$mport|" > "$work/remote.conf"
start_minidir "$work/remote.conf" "$work/remote.log"
r=$(wait_get /healthz "200 ok" 50)
[ -n "$port" ] && [ "$r" = "200 ok" ] && ok "metrics_allow_remote = yes: metrics_listen = 0.0.0.0:PORT serves" || not_ok "remote: '$r' $(tail -2 "$work/remote.log")"
stop_checked "$pid" "$work/remote.log" || not_ok "stop: $stop_why"

start_minidir "$work/minidir.conf" "$work/minidir.log"
[ -n "$port" ] || {
	not_ok "minidir did not start: $(tail -3 "$work/minidir.log")"
	finish
}
spid=$pid
wait_get /healthz "200 ok" 50 > /dev/null

# --- the paths and methods --------------------------------------------------------
r=$(get /healthz) && [ "$r" = "200 ok" ] && ok "GET /healthz: 200 ok" || not_ok "/healthz: '$r'"
r=$(get /readyz) && [ "$r" = "200 ready" ] && ok "GET /readyz (no replica, database open): 200 ready" || not_ok "/readyz: '$r'"
r=$(get /metrics) && [ "${r%% *}" = 200 ] && ok "GET /metrics: 200" || not_ok "/metrics: '$r'"
ctype=$(curl -s -m 10 -o /dev/null -w '%{content_type}' "http://127.0.0.1:$mport/metrics")
[ "$ctype" = "text/plain; version=0.0.4; charset=utf-8" ] && ok "/metrics Content-Type: $ctype" || not_ok "Content-Type '$ctype'"
curl -s -m 10 "http://127.0.0.1:$mport/metrics" > "$work/metrics.txt"
if out=$(promtool check metrics < "$work/metrics.txt" 2>&1); then
	ok "promtool check metrics accepts /metrics ($(grep -c '^# TYPE' "$work/metrics.txt") families, $(grep -vc '^#' "$work/metrics.txt") samples)"
else
	not_ok "promtool check metrics: $(echo "$out" | head -5)"
fi
grep -q '^minidir_operation_duration_seconds_bucket{le="+Inf"} ' "$work/metrics.txt" &&
	grep -q '^minidir_operation_duration_seconds_bucket{le="0.001024"} ' "$work/metrics.txt" &&
	grep -q '^minidir_operation_duration_seconds_sum ' "$work/metrics.txt" &&
	grep -q '^minidir_operation_duration_seconds_count ' "$work/metrics.txt" &&
	grep -q '^# TYPE minidir_operation_duration_seconds histogram' "$work/metrics.txt" &&
	ok "the latency histogram has its _bucket{le=...}, _sum and _count" || not_ok "the histogram: $(grep duration "$work/metrics.txt" | head -3)"
gen=$(awk '$1 == "minidir_database_generation" {print $2}' "$work/metrics.txt")
ents=$(awk '$1 == "minidir_database_entries" {print $2}' "$work/metrics.txt")
want=$(sed -n '1s/^# \([0-9]*\) entries.*/\1/p' "$LDIF")
[ "$gen" = 1 ] && [ "$ents" = "$want" ] && ok "minidir_database_generation 1, minidir_database_entries $ents" || not_ok "database generation '$gen', entries '$ents' (want $want)"
grep -q '^minidir_replication' "$work/metrics.txt" && not_ok "replication metrics on a server that is no replica" || ok "no replication metrics on a server that is no replica"
code=$(curl -s -m 10 -I -o "$work/head" -w '%{http_code} %{size_download}' "http://127.0.0.1:$mport/metrics")
[ "$code" = "200 0" ] && grep -qi '^content-length: [1-9]' "$work/head" && ok "HEAD /metrics: 200, Content-Length, no body" || not_ok "HEAD: '$code'"
r=$(get /metrics -X POST) && [ "${r%% *}" = 405 ] && ok "POST /metrics: 405 (${r#* })" || not_ok "POST: '$r'"
curl -s -m 10 -D "$work/hdr" -o /dev/null -X DELETE "http://127.0.0.1:$mport/healthz"
grep -qi '^Allow: GET, HEAD' "$work/hdr" && ok "405 says Allow: GET, HEAD" || not_ok "405 headers: $(cat "$work/hdr")"
r=$(get /nowhere) && [ "${r%% *}" = 404 ] && ok "GET /nowhere: 404" || not_ok "/nowhere: '$r'"
r=$(get '/readyz?verbose=1') && [ "$r" = "200 ready" ] && ok "a query string is ignored: /readyz?verbose=1 200" || not_ok "query: '$r'"
r=$(printf 'HELLO\r\n\r\n' | timeout 10 "$PYTHON" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(sys.stdin.buffer.read())
print(s.recv(100).split(b"\r\n")[0].decode())' "$mport")
[ "$r" = "HTTP/1.1 400 Bad Request" ] && ok "a malformed request line: $r" || not_ok "garbage: '$r'"

# --- the bounds -----------------------------------------------------------------------
big=$(head -c 9000 /dev/zero | tr '\0' a)
r=$(get /metrics -H "X-Big: $big") && [ "${r%% *}" = 431 ] && ok "a 9000-byte header: 431 (${r#* })" || not_ok "big header: '$r'"
# bounds.py PORT N: holds N connections open with an unfinished request, checks that one
# more is refused with 503, then (all but the first closed) that a request is answered
# meanwhile and that the first is answered 408 at the read timeout.
cat > "$work/bounds.py" << 'PYEOF'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
def conn():
    return socket.create_connection(("127.0.0.1", port), timeout=10)
def status(s):
    return s.recv(200).split(b"\r\n")[0].decode()
start = time.time()
held = [conn() for _ in range(n)]
for s in held:
    s.sendall(b"GET /metrics HTTP/1.1\r\n")  # never finished
time.sleep(0.5)
print("over:", status(conn()))
for s in held[1:]:
    s.close()
time.sleep(0.3)
ok = conn()
ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
print("meanwhile:", status(ok))
print("slow:", status(held[0]), "after %.1f s" % (time.time() - start))
PYEOF
out=$(timeout 30 "$PYTHON" "$work/bounds.py" "$mport" 8 2>&1)
case $out in *"over: HTTP/1.1 503 Service Unavailable"*) ok "a 9th connection while 8 are open: 503" ;; *) not_ok "connection bound: $out" ;; esac
case $out in *"meanwhile: HTTP/1.1 200 OK"*) ok "a slow client does not hold up the others: /healthz answered meanwhile" ;; *) not_ok "meanwhile: $out" ;; esac
case $out in *"slow: HTTP/1.1 408 Request Timeout after "[4-6].*) ok "an unfinished request: 408 at the 5 s read timeout (after $(echo "$out" | sed -n 's/^slow: .* after //p'))" ;; *) not_ok "slow client: $out" ;; esac
b=$(metric minidir_http_busy_total) t=$(metric minidir_http_timeouts_total) l=$(metric minidir_http_too_large_total)
[ "$b $t $l" = "1 1 1" ] && ok "minidir_http_busy_total, _timeouts_total, _too_large_total: 1 each" || not_ok "http counters: busy $b timeouts $t too large $l"

# --- counters that move ---------------------------------------------------------------
s0=$(metric 'minidir_operations_total{type="search"}')
r0=$(metric 'minidir_results_total{type="search",code="0"}')
n0=$(metric 'minidir_results_total{type="search",code="32"}')
c0=$(metric minidir_operation_duration_seconds_count)
t0=$(metric minidir_connections_total)
for _ in 1 2 3 4 5 6 7; do
	ldapsearch -x -H "ldap://127.0.0.1:$port" -LLL -b "$BASE" -s base 1.1 > /dev/null 2>&1
done
ldapsearch -x -H "ldap://127.0.0.1:$port" -LLL -b "ou=nowhere,$BASE" 1.1 > /dev/null 2>&1
s1=$(metric 'minidir_operations_total{type="search"}')
r1=$(metric 'minidir_results_total{type="search",code="0"}')
n1=$(metric 'minidir_results_total{type="search",code="32"}')
c1=$(metric minidir_operation_duration_seconds_count)
t1=$(metric minidir_connections_total)
[ $((s1 - s0)) = 8 ] && ok "8 searches: minidir_operations_total{type=\"search\"} $s0 -> $s1" || not_ok "search counter $s0 -> $s1"
[ $((r1 - r0)) = 7 ] && [ $((${n1:-0} - ${n0:-0})) = 1 ] && ok "results by code: success +7, noSuchObject (32) +1" || not_ok "results: 0: $r0 -> $r1, 32: '$n0' -> '$n1'"
[ $((c1 - c0)) -ge 16 ] && ok "the histogram's _count grew by $((c1 - c0)) (8 binds, 8 searches)" || not_ok "histogram count $c0 -> $c1"
[ $((t1 - t0)) = 8 ] && ok "minidir_connections_total +8" || not_ok "connections $t0 -> $t1"
stop_checked "$spid" "$work/minidir.log" && ok "minidir with metrics_listen stops on SIGTERM, exit 0" || not_ok "stop: $stop_why"

# --- a replica whose session stalls ---------------------------------------------------
provider_setup || finish
provider_start || finish
start_relay "$port" || finish
PROV=ldap://127.0.0.1:$relay_port
mport=$(free_port) || {
	not_ok "no free port"
	finish
}
replica_conf rep refreshAndPersist "metrics_listen = 127.0.0.1:$mport
ready_max_lag_ms = 2000"
replica_run rep
r=$(wait_get /readyz "200 ready" 150) && ok "a replica through the relay: /readyz 200 once its first refresh committed" || not_ok "replica /readyz: '$r' $(tail -3 "$rlog")"
# The gauges follow the replica's file as its consumer changes it (it started with none).
count_entries() {
	timeout 20 ldapsearch -x -LLL -H "$1" -D "$ADMIN" -w secret -b "$EX" 1.1 2> /dev/null | grep -c '^dn:'
}
want=$(count_entries "ldap://127.0.0.1:$port")
got=$(metric minidir_database_entries)
[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$got" = "$want" ] &&
	ok "a replica's minidir_database_entries after its first refresh: $got, as the provider's" ||
	not_ok "a replica's minidir_database_entries: '$got', the provider holds $want"
ldapadd -x -H "ldap://127.0.0.1:$port" -D "$ADMIN" -w secret > "$work/padd.log" 2>&1 << LDIF_EOF
dn: cn=gauge,$EX
objectClass: organizationalRole
cn: gauge
LDIF_EOF
for _ in $(seq 1 100); do
	[ "$(metric minidir_database_entries)" = $((want + 1)) ] && break
	sleep 0.1
done
got=$(metric minidir_database_entries)
rport=$(wait_port "$rlog")
mon=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$rport" -D "$ADMIN" -w secret -b cn=monitor \
	-s base databaseEntries 2> /dev/null | sed -n 's/^databaseEntries: //p')
[ "$got" = $((want + 1)) ] && [ "$mon" = $((want + 1)) ] &&
	ok "an add on the provider: minidir_database_entries and cn=monitor's databaseEntries $got" ||
	not_ok "after an add: minidir_database_entries '$got', databaseEntries '$mon', want $((want + 1)) $(cat "$work/padd.log")"
sleep 3 # longer than ready_max_lag_ms: a quiet provider keeps it ready
r=$(get /readyz)
probes=$(metric minidir_replication_probes_total)
[ "$r" = "200 ready" ] && [ "${probes:-0}" -ge 2 ] &&
	ok "a quiet provider for 3 s (ready_max_lag_ms 2000): still ready, $probes probes answered" || not_ok "quiet provider: '$r', probes '$probes'"
curl -s -m 10 "http://127.0.0.1:$mport/metrics" > "$work/rmetrics.txt"
out=$(promtool check metrics < "$work/rmetrics.txt" 2>&1) && grep -q '^minidir_replication_state{state="persisting"} 1' "$work/rmetrics.txt" &&
	ok "a replica's /metrics: promtool accepts it, state persisting" || not_ok "replica metrics: $out $(grep replication_state "$work/rmetrics.txt")"

# HAProxy in front: the replica's LDAP port, checked with GET /readyz on its metrics port.
hport=$(free_port) && sport=$(free_port) || {
	not_ok "no free port"
	finish
}
cat > "$work/haproxy.cfg" << HAEOF
global
	log stderr format iso local0 info
defaults
	mode tcp
	log global
	timeout connect 1s
	timeout client 10s
	timeout server 10s
	timeout check 1s
frontend ldap
	bind 127.0.0.1:$hport
	default_backend replicas
frontend stats
	mode http
	bind 127.0.0.1:$sport
	stats enable
	stats uri /stats
backend replicas
	option httpchk GET /readyz
	http-check expect status 200
	server r1 127.0.0.1:$rport check port $mport inter 200 fall 2 rise 2
HAEOF
"$HAPROXY" -f "$work/haproxy.cfg" -db > "$work/haproxy.log" 2>&1 &
pids+=("$!")
# hastate: r1's status in HAProxy's stats CSV (UP, DOWN, ...).
hastate() { curl -s -m 5 "http://127.0.0.1:$sport/stats;csv" | awk -F, '$1 == "replicas" && $2 == "r1" {split($18, a, " "); print a[1]}'; }
wait_state() { # STATE SECONDS
	for _ in $(seq 1 $(($2 * 10))); do
		[ "$(hastate)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
via_haproxy() { timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$hport" -LLL -b "$EX" -s base 1.1 2> /dev/null | grep -c '^dn:'; }
wait_state UP 10 && [ "$(via_haproxy)" = 1 ] && ok "haproxy: r1 UP (httpchk GET /readyz), a search through it answers" || not_ok "haproxy state '$(hastate)': $(tail -3 "$work/haproxy.log")"

kill -USR1 "$relay" # the session stalls: nothing reaches the replica, nothing is refused
r=$(wait_get /readyz 503 150)
case $r in
"503 not ready: replication-provider-silent") ok "relay paused: /readyz $r" ;;
*) not_ok "relay paused: /readyz '$r'" ;;
esac
r=$(get /healthz) && [ "$r" = "200 ok" ] && ok "a stale replica is alive: /healthz 200" || not_ok "/healthz while stale: '$r'"
wait_state DOWN 10 && ok "haproxy takes the stale replica out: r1 DOWN" || not_ok "haproxy state '$(hastate)' while stale"
[ "$(via_haproxy)" = 1 ] && not_ok "a search through haproxy reached the stale replica" || ok "no search through haproxy reaches the stale replica"
[ "$(metric minidir_ready)" = 0 ] && ok "minidir_ready 0 while stale" || not_ok "minidir_ready '$(metric minidir_ready)'"
# A change made on the provider meanwhile arrives once the path works again.
ldapmodify -x -H "ldap://127.0.0.1:$port" -D "$ADMIN" -w secret > "$work/pmod.log" 2>&1 << LDIF_EOF
dn: $EX
changetype: modify
replace: description
description: changed while stalled
LDIF_EOF
kill -USR2 "$relay"
r=$(wait_get /readyz "200 ready" 100) && ok "relay resumed: /readyz 200 again" || not_ok "resumed: /readyz '$r'"
wait_state UP 10 && [ "$(via_haproxy)" = 1 ] && ok "haproxy puts it back: r1 UP, searches through it answer" || not_ok "haproxy state '$(hastate)' after resume"
got=
for _ in $(seq 1 50); do
	got=$(ldapsearch -x -H "ldap://127.0.0.1:$rport" -LLL -b "$EX" -s base description 2> /dev/null | sed -n 's/^description: //p')
	[ "$got" = "changed while stalled" ] && break
	sleep 0.1
done
[ "$got" = "changed while stalled" ] && ok "the change made while stalled reached the replica" || not_ok "replica description '$got'"
grep -q "/readyz: not ready (replication-provider-silent): replication: the provider has not answered for" "$rlog" &&
	ok "the reason in words is logged: $(grep -o '/readyz: not ready.*' "$rlog" | head -1 | cut -c1-100)" ||
	not_ok "no /readyz line in the replica's log: $(tail -3 "$rlog")"

# The provider restarted with another rootpw: the replica's binds fail, and the reason names
# the bind DN. /readyz tells whoever asks a code only; the log and cn=monitor say the rest.
kill "$spid" && wait "$spid"
sed -i "s/^rootpw .*/rootpw changed-$RANDOM/" "$work/slapd.conf"
provider_start "$port" || finish
r=$(wait_get /readyz 503 150)
case $r in
"503 not ready: replication-behind") ok "replica's binds refused: /readyz $r, no DN in it" ;;
*) not_ok "replica's binds refused: /readyz '$r'" ;;
esac
grep -q "/readyz: not ready (replication-behind): replication retrying for [0-9]* ms .*bind as \"$ADMIN\"" "$rlog" &&
	ok "the log names the bind that failed" || not_ok "no bind reason logged: $(grep readyz "$rlog" | tail -2)"
st=$(timeout 10 ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$rport" -D "$ADMIN" -w secret -b cn=monitor \
	"(objectClass=*)" 2>&1 | grep -ci "bind as")
[ "${st:-0}" -ge 1 ] && ok "cn=monitor names the failed bind too" || not_ok "cn=monitor: no failed bind"
stop_checked "$rpid" "$rlog" && ok "the replica stops on SIGTERM, exit 0" || not_ok "replica stop: $stop_why"
finish
