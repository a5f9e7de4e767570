#!/usr/bin/env bash
# Send policies observed from outside the server: minidir runs under strace -f
# while ldapsearch runs a 1-entry and a 1000-entry search; the syscall pattern
# must be the policy's, and cn=monitor's counters must agree with strace.
# With MINIDIR_IO_ENGINE=io_uring sends are not system calls: strace must see none
# (and io_uring_enter instead), the setsockopt pattern is the policy's as on epoll,
# and cn=monitor's counters show the policy's handoffs and the sends they became.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
BASE=dc=bench,dc=org
N=1000

# The policies are observed with strace: without it nothing here is tested, so that fails.
if ! strace -f -qq -e trace=none -o /dev/null true 2> /dev/null; then
	echo "not ok - strace cannot trace here (missing, or ptrace not permitted): the send policies are untested"
	echo "# policies: 0 passed, 1 failed"
	exit 1
fi

work=$(mktemp -d /tmp/minidir-policy.XXXXXX)
server_pid=
strace_pid=
# Starts minidir on $work/minidir.conf, under strace -f tracing the syscalls $1 when
# given; sets port, server_pid (and strace_pid). LeakSanitizer (SAN=1 builds) stops
# the world with ptrace, which a process already traced by strace cannot take: it
# would fail at exit, so it is off under strace only; the runs without strace and
# the other scripts keep it on.
start_server() {
	: > "$work/log" # emptied here: the background shell may open it after wait_port reads
	if [ -n "${1:-}" ]; then
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
			strace -f -qq -e trace="$1" -o "$work/trace" \
			"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/log" &
		strace_pid=$!
	else
		"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/log" &
		server_pid=$!
	fi
	port=$(wait_port "$work/log")
	[ -n "$strace_pid" ] && server_pid=$(pgrep -P "$strace_pid" | head -1)
}
# Stops the server (SIGTERM); with a NAME, it must exit 0 and log no sanitizer report
# (strace exits with the status of the process it traced).
stop_server() {
	local rc=0
	[ -n "$server_pid" ] && kill "$server_pid" 2> /dev/null
	if [ -n "$strace_pid" ]; then
		wait "$strace_pid" 2> /dev/null || rc=$?
	elif [ -n "$server_pid" ]; then
		wait "$server_pid" 2> /dev/null || rc=$?
	fi
	server_pid=
	strace_pid=
	[ -n "${1:-}" ] || return 0
	if [ "$rc" != 0 ] || grep -qE "ERROR: (Address|Undefined|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$work/log"; then
		not_ok "$1: server exit status $rc after SIGTERM: $(grep -A20 -E "Sanitizer|runtime error" "$work/log" | head -20)"
	fi
}
trap 'stop_server; rm -rf "$work"' EXIT

bench/gen-ldif.sh $N $BASE 300 > "$work/data.ldif"
write_conf() {
	cat > "$work/minidir.conf" <<CONF
listen = 127.0.0.1:0
database = $work/data.mdb
schema_dir = $SCHEMA_DIR
suffix = $BASE
threads = 1
rootdn = cn=admin,$BASE
rootpw = secret
send_policy = $1
batch_bytes = 4M
sizelimit = unlimited
CONF
}
write_conf nodelay-once
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || { not_ok "import"; exit 1; }

# Counts strace lines matching a regular expression.
n_of() { grep -cE "$1" "$work/trace" || true; }
# A value of the policy's cn=monitor entry (read last; its own search is not in it).
mon() { sed -n "s/^$1: //p" "$work/monitor"; }

uring=
[ "${MINIDIR_IO_ENGINE:-}" = io_uring ] && uring=yes
# io_uring: what strace cannot see, checked from cn=monitor and the trace.
uring_checks() {
	local policy=$1 sends=$2 enters
	enters=$(n_of 'io_uring_enter\(')
	[ "$sends" = 0 ] && [ "$enters" -gt 0 ] && grep -q 'io_engine io_uring' "$work/log" &&
		ok "$policy: io_uring: no send system calls, $enters io_uring_enter" ||
		not_ok "$policy: io_uring: $sends send system calls, $enters io_uring_enter; $(grep io_engine "$work/log")"
	local calls retries want io
	calls=$(mon sendCalls)
	retries=$(($(mon eagain) + $(mon partialWrites)))
	want=$(($(mon pdus) + retries))
	[ "$policy" = batch ] && want=$(($(mon responses) + retries))
	io=$(sed -n 's/^ioSends: //p' "$work/monitor_top")
	# ioSends also counts the first monitor read's two responses and the bind of this one.
	[ "$calls" = "$want" ] && [ "$io" -ge 1 ] && [ "$io" -le $((calls + 3)) ] &&
		[ "$(sed -n 's/^ioEngine: //p' "$work/monitor_top")" = io_uring ] &&
		ok "$policy: io_uring: the policy's $calls handoffs (pdus $(mon pdus), responses $(mon responses), $retries retries) became $io sends" ||
		not_ok "$policy: io_uring: $calls handoffs (want $want), $io sends"
}

for policy in nodelay-once cork-toggle msg-more batch; do
	write_conf "$policy"
	start_server sendto,sendmsg,setsockopt${uring:+,io_uring_enter}
	if [ -z "$port" ] || [ -z "$server_pid" ]; then
		not_ok "$policy: server did not start: $(cat "$work/log")"
		stop_server
		continue
	fi
	uri=ldap://127.0.0.1:$port
	one=$(timeout 20 ldapsearch -x -LLL -H "$uri" -b "ou=people,$BASE" "(uid=user.7)" 1.1 | grep -c '^dn:')
	many=$(timeout 60 ldapsearch -x -LLL -H "$uri" -b "ou=people,$BASE" -s one "(objectClass=*)" | grep -c '^dn:')
	timeout 20 ldapsearch -x -LLL -H "$uri" -D "cn=admin,$BASE" -w secret -b "cn=$policy,cn=monitor" -s base > "$work/monitor"
	# io_uring: the engine's counters too (one more connection, bind and search).
	[ -n "$uring" ] && timeout 20 ldapsearch -x -LLL -H "$uri" -D "cn=admin,$BASE" -w secret -b "cn=monitor" -s base > "$work/monitor_top"
	stop_server "$policy"
	[ "$one" = 1 ] && [ "$many" = $N ] || not_ok "$policy: searches returned $one and $many entries"

	# Three connections (two searches and the monitor read), each a bind and a search.
	conns=3
	responses=6
	pdus=$((1 + 2 + 1 + N + 1 + 1 + 2))
	sends=$(n_of ' (sendto|sendmsg)\(')
	more=$(n_of 'sendto\(.*MSG_MORE')
	nodelay=$(n_of 'setsockopt\(.*TCP_NODELAY, \[1\]')
	cork_on=$(n_of 'setsockopt\(.*TCP_CORK, \[1\]')
	cork_off=$(n_of 'setsockopt\(.*TCP_CORK, \[0\]')
	setsockopts=$(n_of 'setsockopt\(.*SOL_TCP')
	retries=$(($(mon eagain) + $(mon partialWrites)))
	if [ -n "$uring" ]; then
		# Four connections (the engine's counters were read on a fourth); cork-toggle
		# corks each of its two responses too.
		cork_want=0 nodelay_want=4
		[ "$policy" = cork-toggle ] && cork_want=$((responses + 2)) nodelay_want=0
		[ "$nodelay" = "$nodelay_want" ] && [ "$cork_on" = "$cork_want" ] && [ "$cork_off" = "$cork_want" ] &&
			ok "$policy: io_uring: setsockopt as on epoll (TCP_NODELAY $nodelay, TCP_CORK $cork_on on, $cork_off off)" ||
			not_ok "$policy: io_uring: TCP_NODELAY $nodelay (want $nodelay_want), TCP_CORK $cork_on/$cork_off (want $cork_want)"
		uring_checks "$policy" "$sends"
		if [ "$policy" = cork-toggle ]; then
			# The response's bytes reach the kernel (an io_uring_enter) while it is corked.
			order=$(awk '/TCP_CORK, \[1\]/ { c = 1; e = 0 } /io_uring_enter\(/ { if (c) e = 1 }
				/TCP_CORK, \[0\]/ { if (!e) bad++; c = 0 } END { print bad + 0 }' "$work/trace")
			[ "$order" = 0 ] && ok "$policy: io_uring: every response is submitted while corked" ||
				not_ok "$policy: io_uring: $order of $cork_on responses uncorked before their bytes were submitted"
		fi
		continue
	fi
	case $policy in
	nodelay-once)
		own_sends=2 own_setsockopt=0
		[ "$nodelay" = $conns ] && [ "$cork_on$cork_off" = 00 ] &&
			ok "$policy: one TCP_NODELAY per connection ($nodelay), no TCP_CORK" ||
			not_ok "$policy: TCP_NODELAY $nodelay (want $conns), TCP_CORK $cork_on/$cork_off"
		[ "$sends" = $((pdus + retries)) ] && [ "$more" = 0 ] &&
			ok "$policy: one send per PDU ($sends sends, $pdus PDUs, $retries retries)" ||
			not_ok "$policy: $sends sends for $pdus PDUs ($retries retries), $more with MSG_MORE"
		;;
	cork-toggle)
		own_sends=2 own_setsockopt=2
		[ "$cork_on" = $responses ] && [ "$cork_off" = $responses ] && [ "$nodelay" = 0 ] &&
			ok "$policy: two TCP_CORK setsockopt per response ($cork_on on, $cork_off off for $responses responses), Nagle left on" ||
			not_ok "$policy: TCP_CORK on $cork_on off $cork_off for $responses responses, TCP_NODELAY $nodelay"
		[ "$sends" = $((pdus + retries)) ] &&
			ok "$policy: one send per PDU ($sends)" || not_ok "$policy: $sends sends for $pdus PDUs"
		# Every response's sends sit between its cork on and cork off.
		order=$(awk '/TCP_CORK, \[1\]/ { if (c) bad++; c = 1 } /TCP_CORK, \[0\]/ { if (!c) bad++; c = 0 }
			/sendto\(/ { if (!c) bad++ } END { print bad + 0 }' "$work/trace")
		[ "$order" = 0 ] && ok "$policy: every send happens while corked" || not_ok "$policy: $order sends outside cork"
		;;
	msg-more)
		own_sends=2 own_setsockopt=0
		[ "$setsockopts" = $conns ] && [ "$nodelay" = $conns ] &&
			ok "$policy: no setsockopt per response ($setsockopts TCP_NODELAY for $conns connections)" ||
			not_ok "$policy: $setsockopts setsockopt calls for $conns connections"
		[ "$more" = $((pdus - responses)) ] && [ "$((sends - more))" = $((responses + retries)) ] &&
			ok "$policy: MSG_MORE on every PDU but each response's last ($more with, $((sends - more)) without)" ||
			not_ok "$policy: $more sends with MSG_MORE (want $((pdus - responses))), $((sends - more)) without (want $responses)"
		# The last send of every response goes without MSG_MORE: no response ends "more".
		tail_more=$(awk '/sendto\(/ { last = /MSG_MORE/ } END { print last + 0 }' "$work/trace")
		[ "$tail_more" = 0 ] && ok "$policy: the final send carries no MSG_MORE" || not_ok "$policy: last send had MSG_MORE"
		;;
	batch)
		own_sends=1 own_setsockopt=0
		[ "$sends" = $((responses + retries)) ] && [ "$setsockopts" = $conns ] &&
			ok "$policy: one send per response ($sends sends for $responses responses, $retries retries)" ||
			not_ok "$policy: $sends sends for $responses responses ($retries retries), $setsockopts setsockopt"
		;;
	esac
	# cn=monitor agrees with strace (the monitor read's own search is after its snapshot).
	if [ "$(mon sendCalls)" = $((sends - own_sends)) ] &&
		[ "$(mon setsockoptCalls)" = $((setsockopts - own_setsockopt)) ] &&
		[ "$(mon pdus)" = $((pdus - 2)) ] && [ "$(mon responses)" = $((responses - 1)) ]; then
		ok "$policy: cn=monitor agrees with strace (sendCalls $(mon sendCalls), setsockoptCalls $(mon setsockoptCalls), pdus $(mon pdus))"
	else
		not_ok "$policy: cn=monitor sendCalls $(mon sendCalls) setsockoptCalls $(mon setsockoptCalls) pdus $(mon pdus) responses $(mon responses); strace $sends sends, $setsockopts setsockopt"
	fi
done

# batch, a response larger than batch_bytes: each MSG_MORE send ends on a TCP segment
# boundary counted from the response's start (the rest waits for the next send), so
# the kernel is never left a short tail to push; over TLS the same for the records'
# ciphertext. Checked from the send sizes: the offsets where complete MSG_MORE sends
# ended must all be multiples of one segment size (loopback's MSS is 32-64 KiB);
# ends at entry or record boundaries share no such factor.
if [ -z "$uring" ] && tests/integration/tls_certs.sh "$work/pki" > "$work/pki.log" 2>&1; then
	for scheme in ldap ldaps; do
		write_conf batch
		sed -i 's/^batch_bytes = .*/batch_bytes = 8K/' "$work/minidir.conf"
		if [ $scheme = ldaps ]; then
			printf '%s\n' "listen = ldaps://127.0.0.1:0/" "tls_cert_file = $work/pki/server.pem" "tls_key_file = $work/pki/server.key" >> "$work/minidir.conf"
		fi
		start_server sendto,sendmsg
		[ $scheme = ldaps ] && port=$(wait_port "$work/log" ldaps)
		many=$(LDAPTLS_CACERT=$work/pki/ca.pem timeout 60 ldapsearch -x -LLL -H "$scheme://127.0.0.1:$port" -b "ou=people,$BASE" -s one "(objectClass=*)" | grep -c '^dn:')
		stop_server "batch whole segments ($scheme)"
		seg=$(awk '/sendto\(/ && !/= -1 / {
				got = $NF; t = $0; sub(/, NULL, 0\) = [0-9]+$/, "", t)
				m = split(t, f, ", "); n = f[m - 1]; more = f[m] ~ /MSG_MORE/
				at += got
				if (got == n && more) ends[k++] = at
				if (got == n && !more) at = 0 }
			function gcd(a, b) { while (b) { t = b; b = a % b; a = t }; return a }
			END { g = 0; for (i = 0; i < k; i++) g = gcd(ends[i], g); print k, g }' "$work/trace")
		# shellcheck disable=SC2086  # the two numbers awk printed, into $1 and $2
		set -- $seg
		[ "$many" = $N ] && [ "$1" -ge 3 ] && [ "$2" -ge 536 ] &&
			ok "batch ($scheme): $1 MSG_MORE sends of a $N-entry response all ended on a multiple of $2 bytes (whole segments)" ||
			not_ok "batch ($scheme): $many entries; $1 complete MSG_MORE sends, their ends' common factor $2 (want at least 3 sends and a segment size)"
	done
elif [ -z "$uring" ]; then
	not_ok "certificates for the ldaps:// check: $(tail -3 "$work/pki.log")"
fi

# A slow reader (4 KiB window): sends are cut and refused with EAGAIN, and the rest
# must go out later with the policy's flags: MSG_MORE stays on every send until the
# response's last PDU, whose bytes (however many sends they take) go without it.
# About 6 MB of response: more than the kernel's send buffer holds, so sends get cut.
SLOW_N=3000
# The sends in the trace refused (EAGAIN) or cut short (returned less than asked).
cut_sends() {
	local eagain short
	eagain=$(grep -c 'sendto(.*= -1 EAGAIN' "$work/trace" 2> /dev/null)
	short=$(sed -nE 's/.*sendto\(.*, ([0-9]+), [A-Z_|]+, NULL, 0\) = ([0-9]+)$/\1 \2/p' "$work/trace" 2> /dev/null |
		awk '$2 < $1 { n++ } END { print n + 0 }')
	echo $((${eagain:-0} + short))
}
bench/gen-ldif.sh $SLOW_N $BASE 2000 > "$work/slow.ldif"
for policy in msg-more batch; do
	write_conf "$policy"
	sed -i "s#^database = .*#database = $work/slow.mdb#" "$work/minidir.conf"
	[ "$policy" = batch ] && sed -i 's/^batch_bytes = .*/batch_bytes = 8K/' "$work/minidir.conf"
	[ -f "$work/slow.mdb" ] || "$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/slow.ldif"
	start_server sendto,sendmsg
	# The client reads only once a send has been refused (at most 30 s; at once with
	# io_uring, whose sends are not in the trace), however slowly a sanitizer build under
	# strace sends.
	rm -f "$work/go"
	timeout 120 "$BUILD/tests/integration/ldapclient" slowread 127.0.0.1 "$port" \
		"ou=people,$BASE" $SLOW_N "$work/go" > "$work/slowread.out" 2>&1 &
	client_pid=$!
	for _ in $([ -z "$uring" ] && seq 300); do
		[ "$(cut_sends)" -gt 0 ] && break
		sleep 0.1
	done
	touch "$work/go"
	wait "$client_pid" || true # its lines, ok or not, are in the file
	out=$(cat "$work/slowread.out")
	stop_server "$policy slow reader"
	client_report "$policy: " "$out"
	[ -n "$uring" ] && continue # the flags of io_uring's sends are not in strace's view
	cut=$(cut_sends)
	# The MSG_MORE flags in order: no plain send may come before a MSG_MORE one.
	order=$(awk '/sendto\(/ && !/= -1 EAGAIN/ { if (/MSG_MORE/) { if (plain) bad++ } else plain = 1 } END { print bad + 0 }' "$work/trace")
	last_more=$(awk '/sendto\(/ && !/= -1 EAGAIN/ { last = /MSG_MORE/ } END { print last + 0 }' "$work/trace")
	if [ "$cut" -gt 0 ] && [ "$order" = 0 ] && [ "$last_more" = 0 ]; then
		ok "$policy: $cut sends refused or cut; MSG_MORE held on every send until the last PDU's"
	else
		not_ok "$policy: $cut sends cut, $order MSG_MORE sends after a plain one, last send MSG_MORE=$last_more"
	fi
done

# Abandon of a search that is stuck on a full socket (the same large directory).
write_conf nodelay-once
sed -i "s#^database = .*#database = $work/slow.mdb#" "$work/minidir.conf"
start_server
out=$(timeout 60 "$BUILD/tests/integration/ldapclient" abandon 127.0.0.1 "$port" "ou=people,$BASE" $SLOW_N 2>&1)
stop_server "abandon"
client_report "" "$out"

echo "# policies: $pass passed, $fail failed"
[ "$fail" = 0 ]
