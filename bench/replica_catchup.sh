#!/usr/bin/env bash
# Replica catch-up: one OpenLDAP slapd provider (syncprov) with bench/gen-ldif.sh N entries
# (default 100,000), and two refreshAndPersist consumers of it in the same run: a minidir
# replica and a second slapd with a `syncrepl` directive (back-mdb, dbnosync unless
# CONSUMER_SYNC=1: see bench/replica_lib.sh), all on
# 127.0.0.1 private ports in a temp dir, stopped by PID.
#   bench/replica_catchup.sh     (N=100000 RATE=1000 STREAM_SECS=30; KEEP=1 keeps the temp dir)
# 1. Initial refresh from nothing (no database file / an empty directory): minidir first,
#    then the slapd consumer (so the provider's caches are warm for slapd's turn). Done
#    when the consumer shows the provider's contextCSN (minidir: root DSE; slapd: the
#    suffix entry) and the last entry; then both entry counts are checked.
# 2. Persist-mode lag, both consumers committing durably (the slapd consumer is restarted
#    without dbnosync; it resumes from its cookie): ldapmodify on the provider fed RATE modifies a second (a paced
#    generator, one entry's description each) for STREAM_SECS; meanwhile a probe
#    (python3-ldap) modifies a probe entry every 0.5 s and times until each consumer shows
#    the new value (time-to-visible, up to 2 s; later counts as not visible), and reads minidir's replicationLagMilliseconds
#    (cn=replication,cn=monitor). A few probes first without the stream (idle).
# Not part of make test. Needs slapd, ldap-utils, python3-ldap.
. "$(dirname "$0")/replica_lib.sh" # with bench/lib.sh: set -u, the tree's root
N=${N:-100000}
RATE=${RATE:-1000}
STREAM_SECS=${STREAM_SECS:-30}
IDLE_SECS=${IDLE_SECS:-5}
need "$SLAPD" "$SLAPADD" ldapsearch ldapmodify "$PYTHON" "$BUILD/minidir"
"$PYTHON" -c 'import ldap' 2> /dev/null || die "python3-ldap is missing"
bench_init catchup

pport=$(free_port) mport=$(free_port) sport=$(free_port)
PROV=ldap://127.0.0.1:$pport MURL=ldap://127.0.0.1:$mport SURL=ldap://127.0.0.1:$sport
last="uid=user.$((N - 1)),ou=people,$EX"

t0=$(now_ms)
slapd_conf "$work/provider.conf" "$work/provider-db" "$(slapd_db_lines)"
provider_load "$N"
slapd_start provider "$pport"
ppid_=$spid
echo "# provider: slapd + syncprov on :$pport, gen-ldif $N entries (slapadd $(($(now_ms) - t0)) ms)"
pcsn=$(timeout 10 ldapsearch -x -H "$PROV" -LLL -b "$EX" -s base contextCSN | sed -n 's/^contextCSN: //p')

# count URL: entries under the suffix (as the rootdn).
count() {
	timeout 60 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -b "$EX" 1.1 2> /dev/null | grep -c '^dn:'
}
# refresh_wait URL PID START_MS CSN_BASE: polls every 100 ms (up to 240 s) until the
# consumer shows the provider's contextCSN at CSN_BASE and the last entry; prints the ms
# since START_MS.
refresh_wait() {
	local csn
	for _ in $(seq 1 2400); do
		csn=$(timeout 5 ldapsearch -x -H "$1" -LLL -b "$4" -s base contextCSN 2> /dev/null | sed -n 's/^contextCSN: //p')
		if [ "$csn" = "$pcsn" ] && [ -n "$(value "$1" "$last" uid)" ]; then
			echo "$(($(now_ms) - $3))"
			return 0
		fi
		kill -0 "$2" 2> /dev/null || break
		sleep 0.1
	done
	echo "-"
	return 1
}

# seconds TICKS: clock ticks as seconds, one decimal.
seconds() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN{printf "%.1f", t/hz}'; }
# initial_refresh LABEL URL CSN_BASE START_CMD...: runs START_CMD (which starts a consumer
# and sets $consumer_pid), waits for its refresh and prints the time, entries and both
# sides' CPU, also left in $refresh_ms, $refresh_n, $refresh_cpu and $refresh_pcpu.
initial_refresh() {
	local label=$1 url=$2 base=$3 pc0 start
	shift 3
	pc0=$(cpu_ticks "$ppid_")
	start=$(now_ms)
	"$@"
	refresh_ms=$(refresh_wait "$url" "$consumer_pid" "$start" "$base")
	refresh_pcpu=$(seconds $(($(cpu_ticks "$ppid_") - pc0)))
	refresh_cpu=$(seconds "$(cpu_ticks "$consumer_pid")")
	refresh_n=$(count "$url")
	echo "  $label: ${refresh_ms} ms, $refresh_n entries, consumer CPU $refresh_cpu s, provider CPU $refresh_pcpu s"
}
start_minidir() {
	replica_start minidir "$mport"
	consumer_pid=$rpid
}
start_slapd_consumer() {
	slapd_start consumer "$sport"
	consumer_pid=$spid
}

echo "# initial refresh of $N entries (+2), from no database"
replica_conf minidir "$mport" "$PROV"
initial_refresh minidir "$MURL" "" start_minidir
m_ms=$refresh_ms m_n=$refresh_n m_cpu=$refresh_cpu m_pcpu=$refresh_pcpu

slapd_conf "$work/consumer.conf" "$work/consumer-db" "$(slapd_db_lines "syncrepl rid=002 provider=$PROV bindmethod=simple
	binddn=\"$ADMIN\" credentials=secret searchbase=\"$EX\"
	type=refreshAndPersist retry=\"1 +\" attrs=\"*,+\"")"
initial_refresh "slapd consumer" "$SURL" "$EX" start_slapd_consumer
cpid=$consumer_pid s_ms=$refresh_ms s_n=$refresh_n s_cpu=$refresh_cpu s_pcpu=$refresh_pcpu
# For the persist phase the slapd consumer commits durably, as minidir does (an fdatasync
# per commit): restarted without dbnosync, it resumes from its cookie. PERSIST_NOSYNC=1
# keeps it on dbnosync.
persist_mode="durable (restarted without dbnosync)"
if [ -z "${PERSIST_NOSYNC:-}" ]; then
	stop_pid "$cpid"
	sed -i '/^dbnosync$/d' "$work/consumer.conf"
	slapd_start consumer "$sport"
	cpid=$spid
	wait_value "$SURL" "$last" uid "user.$((N - 1))" 30 || die "the slapd consumer did not come back"
else
	persist_mode="$(grep -q '^dbnosync$' "$work/consumer.conf" && echo dbnosync || echo durable)"
fi

# The probe: every 0.5 s for SECS, a modify of user.0 on the provider, then polls (1 ms)
# both consumers until they show it; one line: k minidir_ms slapd_ms minidir_lag_ms.
cat > "$work/probe.py" << 'EOF'
import ldap, sys, time
prov, murl, surl, secs, ex = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
admin = "cn=admin," + ex
def conn(u):
    c = ldap.initialize(u); c.simple_bind_s(admin, "secret"); return c
P, M, S = conn(prov), conn(murl), conn(surl)
dn = "uid=user.0,ou=people," + ex
end = time.monotonic() + secs; k = 0
while time.monotonic() < end:
    k += 1; v = ("probe %d %f" % (k, time.time())).encode(); tick = time.monotonic()
    P.modify_s(dn, [(ldap.MOD_REPLACE, "description", v)])
    t0 = time.monotonic(); got = {}
    while len(got) < 2 and time.monotonic() - t0 < 2:
        for name, c in (("m", M), ("s", S)):
            if name in got: continue
            r = c.search_s(dn, ldap.SCOPE_BASE, attrlist=["description"])
            if r and r[0][1].get("description", [b""])[0] == v:
                got[name] = (time.monotonic() - t0) * 1000
        time.sleep(0.001)
    r = M.search_s("cn=replication,cn=monitor", ldap.SCOPE_BASE, attrlist=["replicationLagMilliseconds"])
    lag = r[0][1].get("replicationLagMilliseconds", [b"-1"])[0].decode() if r else "-1"
    print(k, "%.1f" % got.get("m", -1), "%.1f" % got.get("s", -1), lag, flush=True)
    time.sleep(max(0, 0.5 - (time.monotonic() - tick)))
EOF

echo "# persist-mode lag: probes alone for ${IDLE_SECS} s, then with $RATE changes/s for ${STREAM_SECS} s"
timeout $((IDLE_SECS + 30)) "$PYTHON" "$work/probe.py" "$PROV" "$MURL" "$SURL" "$IDLE_SECS" "$EX" > "$work/probe-idle.txt" 2> "$work/probe-idle.err"
"$PYTHON" bench/pacer.py "$RATE" "$STREAM_SECS" "$N" "$EX" 2> "$work/pacer.err" |
	timeout $((STREAM_SECS + 120)) ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > "$work/stream.log" 2>&1 &
lmpid=$!
pids+=("$lmpid")
sstart=$(now_ms)
timeout $((STREAM_SECS + 60)) "$PYTHON" "$work/probe.py" "$PROV" "$MURL" "$SURL" "$STREAM_SECS" "$EX" > "$work/probe-stream.txt" 2> "$work/probe-stream.err"
stream_end "$lmpid" "$sstart" "$N"
# Both consumers must end with the stream's last change (lastdn).
m_conv=- s_conv=-
cstart=$(now_ms)
wait_value "$MURL" "$lastdn" description "stream $made" 60 && m_conv=$(($(now_ms) - cstart))
wait_value "$SURL" "$lastdn" description "stream $made" 60 && s_conv=$(($(now_ms) - cstart))

# stats FILE COLUMN: "median p90 max (n)" of a probe column (ms).
stats() {
	awk -v c="$2" '$c >= 0 {print $c}' "$1" | sort -n | awk '{v[NR]=$1} END {
		if (!NR) { print "-"; exit }
		printf "%.1f / %.1f / %.1f (%d probes)", v[int((NR+1)/2)], v[int(NR*0.9+0.999)], v[NR], NR }'
}
missed() { awk -v c="$2" '$c < 0 {n++} END {print n+0}' "$1"; }
echo
echo "| | minidir replica | slapd consumer |"
echo "|---|--:|--:|"
printf '| initial refresh of %d entries, from nothing | %.1f s | %.1f s |\n' "$N" \
	"$(awk -v v="$m_ms" 'BEGIN{print v/1000}')" "$(awk -v v="$s_ms" 'BEGIN{print v/1000}')"
echo "| entries after it | $m_n | $s_n |"
echo "| consumer CPU during it | $m_cpu s | $s_cpu s |"
echo "| provider CPU during it | $m_pcpu s | $s_pcpu s |"
echo "| persist phase commits | durable (fdatasync per commit) | $persist_mode |"
echo "| time-to-visible, idle: median / p90 / max ms | $(stats "$work/probe-idle.txt" 2) | $(stats "$work/probe-idle.txt" 3) |"
echo "| time-to-visible under the stream: median / p90 / max ms | $(stats "$work/probe-stream.txt" 2) | $(stats "$work/probe-stream.txt" 3) |"
echo "| probes not visible within 2 s | $(missed "$work/probe-stream.txt" 2) | $(missed "$work/probe-stream.txt" 3) |"
echo "| replicationLagMilliseconds under the stream: median / p90 / max | $(stats "$work/probe-stream.txt" 4) | (slapd has none) |"
conv() { [ "$1" = - ] && echo "not within 60 s" || echo "$1 ms"; }
echo "| the stream's last change visible, after ldapmodify ended | $(conv "$m_conv") | $(conv "$s_conv") |"
echo
echo "stream: $made modifies by ldapmodify in $sdur ms ($(awk -v m="$made" -v d="$sdur" 'BEGIN{printf "%.0f", m*1000/d}')/s achieved, target $RATE/s; pacer sent $(cat "$work/pacer.err"), ldapmodify exit $lmrc)"
[ -s "$work/probe-stream.err" ] && { echo "probe errors:"; head -5 "$work/probe-stream.err"; }
echo "probes under the stream (k, minidir ms, slapd ms, minidir replicationLagMilliseconds), every 4th:"
awk 'NR % 4 == 1' "$work/probe-stream.txt" | tr '\n' ';' | fold -w 120
echo
