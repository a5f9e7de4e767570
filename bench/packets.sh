#!/usr/bin/env bash
# bench/packets.sh: how each send policy cuts a 1000-entry search response into
# TCP segments. Two network namespaces joined by a veth pair (MTU 1500, offloads
# off so the capture sees real segments); minidir in one, the client in the other,
# tcpdump on the server side. Prints, per policy, the data segments beside the
# floor (the response's bytes over the MSS, rounded up), the share of bytes in
# full-MSS segments and the top-5 segment sizes (as the ceph MSG_SENDPAGE_NOTLAST
# commit did), and draws bench/results/packets.png. Needs root; skipped with a
# message otherwise.
#
#   bench/packets.sh [ENTRIES] [ENTRY_BYTES]     (defaults 1000 and 1024)
#   TLS=1 bench/packets.sh                        the same over ldaps:// (throwaway
#                                                 certificates from tests/integration/tls_certs.sh)
#   POLICIES="batch cork-toggle" bench/packets.sh only these policies (default: all four)
#
# Two clients read the response: bench/read_search.py, which reads as fast as the
# bytes come, with a receive buffer that holds the whole response (the receive
# window stays open: what the server sends is what the policy chose), and
# ldapsearch (the kernel's default receive buffer), which formats each entry as LDIF and falls behind
# on this small machine: its window closes and reopens a few KiB at a time, and
# with TCP_NODELAY the kernel fills each reopened window to the byte, short
# segment included (only TCP_CORK stops that). Segment counts depend on when ACKs
# come back, so each policy runs REPEAT times per client (default 3); the table
# shows every run's count and the median run's figures.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
N=${1:-1000}
REPEAT=${REPEAT:-3}
SIZE=${2:-1024}
BASE=dc=bench,dc=org
SRV=minidir-pkt-srv
CLI=minidir-pkt-cli
SRV_IP=10.203.0.1
CLI_IP=10.203.0.2
OUT=bench/results
TLS=${TLS:-}
SCHEME=ldap
[ -n "$TLS" ] && SCHEME=ldaps

if [ "$(id -u)" -ne 0 ] || ! ip netns add "$SRV" 2> /dev/null; then
	echo "bench/packets: skipped: needs root and network namespaces (ip netns)"
	exit 0
fi
for tool in tcpdump ldapsearch; do
	command -v $tool > /dev/null || { echo "bench/packets: skipped: $tool is missing (scripts/deps.sh bench)"; ip netns del "$SRV"; exit 0; }
done

bench_cleanup_extra() {
	ip netns del "$SRV" 2> /dev/null
	ip netns del "$CLI" 2> /dev/null
}
bench_init packets

ip netns add "$CLI"
ip link add mdpkt0 type veth peer name mdpkt1
ip link set mdpkt0 netns "$SRV"
ip link set mdpkt1 netns "$CLI"
ip -n "$SRV" addr add $SRV_IP/24 dev mdpkt0
ip -n "$CLI" addr add $CLI_IP/24 dev mdpkt1
for ns_dev in "$SRV mdpkt0" "$CLI mdpkt1"; do
	# shellcheck disable=SC2086  # "NAMESPACE DEVICE" split into $1 and $2
	set -- $ns_dev
	ip -n "$1" link set "$2" mtu 1500 up
	ip -n "$1" link set lo up
	# Without this the capture shows 64 KiB GSO super-segments instead of wire segments.
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off > /dev/null 2>&1 || true
done

bench/gen-ldif.sh "$N" "$BASE" "$SIZE" > "$work/data.ldif"
tls_conf=
if [ -n "$TLS" ]; then
	tests/integration/tls_certs.sh "$work/pki" > "$work/pki.log" 2>&1 || die "certificates: $(tail -3 "$work/pki.log")"
	tls_conf="tls_cert_file = $work/pki/server.pem
tls_key_file = $work/pki/server.key"
fi
conf() {
	cat > "$work/minidir.conf" <<CONF
listen = $SCHEME://$SRV_IP:3389/
$tls_conf
database = $work/data.mdb
schema_dir = $SCHEMA_DIR
suffix = $BASE
threads = 1
send_policy = $1
sizelimit = unlimited
CONF
}
conf nodelay-once
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || exit 1

mkdir -p "$OUT"
: > "$work/summary"
rmem_default=$(ip netns exec "$CLI" sysctl -n net.ipv4.tcp_rmem)
# capture POLICY READER RUN: one search under tcpdump; leaves $work/POLICY.READER.RUN.sizes
capture() {
	local policy=$1 reader=$2 run=$3 spid tpid got
	conf "$policy"
	ip netns exec "$SRV" "$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/log.$policy" &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 1 100); do grep -q listening "$work/log.$policy" && break; sleep 0.05; done
	ip netns exec "$SRV" tcpdump -i mdpkt0 --immediate-mode -nn -s 128 -w "$work/pcap" "tcp src port 3389" 2> "$work/tcpdump.log" &
	tpid=$!
	pids+=("$tpid")
	sleep 1
	if [ "$reader" = fast ]; then
		# A receive buffer that holds the whole response from the start: the window
		# stays open even when this busy machine leaves the reader unscheduled a while.
		ip netns exec "$CLI" sysctl -qw net.ipv4.tcp_rmem="4096 8388608 8388608"
		got=$(timeout 60 ip netns exec "$CLI" python3 bench/read_search.py ${TLS:+--tls} $SRV_IP 3389 "ou=people,$BASE")
	else
		ip netns exec "$CLI" sysctl -qw net.ipv4.tcp_rmem="$rmem_default"
		got=$(LDAPTLS_REQCERT=never timeout 60 ip netns exec "$CLI" ldapsearch -x -LLL -H "$SCHEME://$SRV_IP:3389" -b "ou=people,$BASE" -s one "(objectClass=*)" | grep -c '^dn:')
	fi
	sleep 0.5
	kill "$tpid"; wait "$tpid" 2> /dev/null
	kill "$spid"; wait "$spid" 2> /dev/null
	[ "$got" = "$N" ] || echo "warning: $policy ($reader) returned $got entries, expected $N" >&2
	# Payload sizes of the server's data segments.
	tcpdump -r "$work/pcap" -nn -q 2> /dev/null | sed -n 's/.* tcp \([0-9]*\)$/\1/p' | awk '$1 > 0' > "$work/$policy.$reader.$run.sizes"
}
# runs POLICY READER: sets $result to "SEGMENTS (RUN/RUN/RUN) %BYTES_FULL" for the
# median run and leaves its sizes file in $work/median.sizes. (No subshell: $pids must
# see every process capture starts.)
runs() {
	local policy=$1 reader=$2 run list="" median
	for run in $(seq 1 "$REPEAT"); do
		capture "$policy" "$reader" "$run"
		list="$list $(wc -l < "$work/$policy.$reader.$run.sizes"):$run"
	done
	# shellcheck disable=SC2086  # $list split: its COUNT:RUN words, one a line
	median=$(echo $list | tr ' ' '\n' | sort -t: -k1,1n | sed -n "$(( (REPEAT + 1) / 2 ))p")
	cp "$work/$policy.$reader.${median#*:}.sizes" "$work/median.sizes"
	# shellcheck disable=SC2086  # as above
	printf -v result '%5d %-15s %6s%%' "${median%%:*}" "($(echo $list | tr ' ' '\n' | cut -d: -f1 | paste -sd/))" \
		"$(awk -v m=$MSS '{ b += $1 } $1 == m { f += $1 } END { printf "%.2f", 100 * f / (b ? b : 1) }' "$work/median.sizes")"
}
MSS=1448 # MTU 1500 less the IP and TCP headers and the timestamp option
printf '%-13s %-30s %-30s %s\n' "" "read as it arrives" "ldapsearch (falls behind)" ""
printf '%-13s %-22s %7s %-22s %7s   %s\n' policy "segments (runs)" "%bytes" "segments (runs)" "%bytes" "top-5 segment sizes, read as it arrives (size x count)"
for policy in ${POLICIES:-nodelay-once cork-toggle msg-more batch}; do
	runs "$policy" fast
	fast=$result
	top=$(sort -n "$work/median.sizes" | uniq -c | sort -k1,1nr -k2,2nr | head -5 | awk '{ printf "%sx%s  ", $2, $1 }')
	# The response's bytes (for the floor, from the last policy's run). Over TLS the
	# capture also holds the handshake's two flights (the server's hello to its
	# Finished, then the session tickets: the first two segments) and the
	# close_notify alert (the last); they count apart, one segment each.
	bytes=$(awk -v n="$(wc -l < "$work/median.sizes")" -v tls="$TLS" \
		'!tls || (NR > 2 && NR < n) { s += $1 } END { print s + 0 }' "$work/median.sizes")
	runs "$policy" ldapsearch
	slow=$result
	printf '%-13s %s %s   %s\n' "$policy" "$fast" "$slow" "$top"
	printf '%s %d %d\n' "$policy" "${fast%% (*}" "${slow%% (*}" >> "$work/summary"
done
extra=0
[ -n "$TLS" ] && extra=3
floor=$(( (bytes + MSS - 1) / MSS + extra ))
printf '%-13s %5d %-15s %6s%%   (%d bytes of response%s in %d-byte segments: all full but the last%s)\n' floor $floor "" \
	"$(awk -v b="$bytes" -v m="$MSS" -v f=$((floor - extra)) 'BEGIN { printf "%.2f", 100 * (f - 1) * m / b }')" "$bytes" \
	"${TLS:+ (of batch, in records)}" $MSS "${TLS:+; plus 3 for the handshake and close_notify}"
printf 'floor %d %d\n' $floor $floor >> "$work/summary"

if command -v gnuplot > /dev/null; then
	gnuplot <<PLOT 2> /dev/null && echo "chart: $OUT/packets${TLS:+-tls}.png"
set terminal png size 800,480
set output "$OUT/packets${TLS:+-tls}.png"
set title "TCP data segments for one $N-entry search response${TLS:+ over TLS} (MTU 1500, median of $REPEAT)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.6
set ylabel "segments"
set yrange [0:*]
set offsets 0,0,graph 0.12,0
set grid ytics
set key top right
plot "$work/summary" using 2:xtic(1) title "read as it arrives", "" using 3 title "ldapsearch (falls behind)"
PLOT
fi
