#!/usr/bin/env bash
# The PROXY protocol (pldap://, pldaps://, proxy_from) with HAProxy in front of minidir, as
# a read tier runs it: ldapsearch through HAProxy's send-proxy (v1) and send-proxy-v2, over
# pldaps:// too (HAProxy in TCP mode passes TLS through; the header precedes it); the access
# log names the client with its own source port, not HAProxy's; a peername.ip rule sees the
# proxied client; `option ldap-check` through a pldap:// listener is one access-log line per
# check. Then raw headers from proxy_client.py for the edge cases: v1 and v2, IPv6, LOCAL
# and UNKNOWN, a header sent a byte at a time, a source outside proxy_from, malformed,
# oversized and slow headers, a connect and close. The config refuses a pldap:// listener
# without proxy_from (FILE:LINE). Servers: minidir and HAProxy on 127.0.0.1 on ports picked
# here, both stopped by PID. MINIDIR_IO_ENGINE=io_uring runs it on that engine
# (make test does).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
export LDAPNOINIT=1 LDAPCONF=/dev/null LDAPRC=/dev/null
HAPROXY=${HAPROXY:-/usr/sbin/haproxy}
CLIENT=tests/integration/proxy_client.py

use_work_dir proxy
if [ ! -x "$HAPROXY" ]; then
	not_ok "haproxy is not installed ($HAPROXY): scripts/deps.sh installs it"
	finish
fi
if ! tests/integration/tls_certs.sh "$work/pki" > "$work/certs.log" 2>&1; then
	not_ok "test certificates: $(cat "$work/certs.log")"
	finish
fi
export LDAPTLS_CACERT=$work/pki/ca.pem LDAPTLS_REQCERT=demand


# The config refuses a pldap:// listener without proxy_from, at its line.
cat > "$work/bad.conf" << EOF
database = $work/db.mdb
suffix = $BASE
listen = ldap://127.0.0.1:0
listen = pldap://127.0.0.1:0
schema_dir = $SCHEMA_DIR
EOF
out=$("$BUILD/minidir" -t -f "$work/bad.conf" 2>&1)
if grep -q "bad.conf:4: listen: a pldap:// or pldaps:// listener needs proxy_from" <<< "$out"; then
	ok "a pldap:// listener without proxy_from is refused at its line: $(grep -o 'bad.conf:4:.*' <<< "$out" | cut -c1-90)"
else
	not_ok "pldap:// without proxy_from: $out"
fi

GROUPS_DN=ou=groups,$BASE
cat > "$work/minidir.conf" << EOF
listen = ldap://127.0.0.1:0
listen = pldap://127.0.0.1:0
listen = pldaps://127.0.0.1:0
listen = ldapi://$work/ldapi
proxy_from = 127.0.0.1 ::1
database = $work/db.mdb
suffix = $BASE
access_log = $work/access.log
pdu_timeout = 2
tls_cert_file = $work/pki/server.pem
tls_key_file = $work/pki/server.key
access = to dn.subtree="$GROUPS_DN" by peername.ip=127.0.0.3 read
	by peername.ipv6=2001:db8::%32 read
	by peername.path=$work/ldapi read by * none
access = to * by * read
schema_dir = $SCHEMA_DIR
EOF
if ! "$BUILD/minidir-import" -q -f "$work/minidir.conf" "$LDIF" > "$work/import.log" 2>&1; then
	not_ok "import: $(cat "$work/import.log")"
	finish
fi

# proxy_from naming every address of a family lets anyone claim any client address: warned
# about at its line by minidir -t (and at start-up, the same code); the addresses of the
# balancers are not.
for nets in "0.0.0.0/0" "127.0.0.1 ::/0" "10.1.2.0/24 ::1"; do
	sed "s#^proxy_from = .*#proxy_from = $nets#" "$work/minidir.conf" > "$work/open.conf"
	out=$("$BUILD/minidir" -t -f "$work/open.conf" 2>&1)
	case $nets in
	*/0) grep -q "open.conf:5: proxy_from ${nets##* } trusts a PROXY header from every IPv[46] address" <<< "$out" &&
		ok "proxy_from = $nets: minidir -t warns at its line: $(grep -o 'open.conf:5:.*' <<< "$out" | cut -c1-80)" ||
		not_ok "proxy_from = $nets: no warning at open.conf:5: $out" ;;
	*) grep -q "warning" <<< "$out" && not_ok "proxy_from = $nets: warned: $out" ||
		ok "proxy_from = $nets: no warning" ;;
	esac
done
start_minidir "$work/minidir.conf" "$work/server.log"
mpid=$pid
lport=$port
pport=$(wait_port "$work/server.log" pldap)
psport=$(wait_port "$work/server.log" pldaps)
if [ -z "$lport" ] || [ -z "$pport" ] || [ -z "$psport" ]; then
	not_ok "minidir did not start: $(cat "$work/server.log")"
	finish
fi
ok "minidir listens on ldap:// $lport, pldap:// $pport, pldaps:// $psport"

h1=$(free_port)
h2=$(free_port)
h3=$(free_port)
while [ "$h2" = "$h1" ]; do h2=$(free_port); done
while [ "$h3" = "$h1" ] || [ "$h3" = "$h2" ]; do h3=$(free_port); done
cat > "$work/haproxy.cfg" << EOF
global
	log stderr format iso local0 info
	pidfile $work/haproxy.pid
defaults
	mode tcp
	log global
	option tcplog
	timeout connect 2s
	timeout client 30s
	timeout server 30s
	timeout check 2s
frontend v1
	bind 127.0.0.1:$h1
	default_backend v1
frontend v2
	bind 127.0.0.1:$h2
	default_backend v2
frontend tls
	bind 127.0.0.1:$h3
	default_backend tls
backend v1
	server m 127.0.0.1:$pport send-proxy
backend v2
	server m 127.0.0.1:$pport send-proxy-v2
backend tls
	server m 127.0.0.1:$psport send-proxy-v2
backend check
	option ldap-check
	server m 127.0.0.1:$pport send-proxy-v2 check check-send-proxy inter 200 rise 1 fall 3
EOF
"$HAPROXY" -f "$work/haproxy.cfg" -db > "$work/haproxy.log" 2>&1 &
hpid=$!
pids+=("$hpid")
for _ in $(seq 1 100); do
	ss -Hltn "sport = :$h3" | grep -q . && break
	sleep 0.05
done
if ! kill -0 "$hpid" 2> /dev/null; then
	not_ok "haproxy did not start: $(cat "$work/haproxy.log")"
	finish
fi

alog=$work/access.log
# alog_wait PATTERN: waits (up to 3 s) for an access-log line matching PATTERN (grep -E).
alog_wait() { for _ in $(seq 1 60); do grep -qE -- "$1" "$alog" 2> /dev/null && return 0; sleep 0.05; done; return 1; }
# haproxy_port FRONTEND [SEEN]: the client port of HAProxy's last session log line of
# FRONTEND, once there are more than SEEN such lines (default 0).
haproxy_port() {
	local re=" 127\.0\.0\.1:\([0-9]*\) \[[^]]*\] $1 $1\/m "
	for _ in $(seq 1 60); do
		local p
		if [ "$(grep -c -- "$re" "$work/haproxy.log")" -gt "${2:-0}" ]; then
			p=$(sed -n "s/.*$re.*/\1/p" "$work/haproxy.log" | tail -1)
			[ -n "$p" ] && echo "$p" && return
		fi
		sleep 0.05
	done
}
# haproxy_lines FRONTEND: how many session lines of FRONTEND HAProxy has logged.
haproxy_lines() { grep -c -- " 127\.0\.0\.1:[0-9]* \[[^]]*\] $1 $1\/m " "$work/haproxy.log"; }

# ldapsearch through HAProxy: the access log's from= is the client's port (HAProxy's log
# says which), and proxy= HAProxy's own connection. The kernel may give HAProxy's outbound
# connection the client's port number (a different 4-tuple), which would make the two
# indistinguishable: then the search is tried again, up to 3 times.
for fe in v1 v2; do
	port=$([ "$fe" = v1 ] && echo "$h1" || echo "$h2")
	verdict=
	for _attempt in 1 2 3; do
		seen=$(haproxy_lines "$fe")
		n=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" "(uid=user3)" 1.1 2>&1 | grep -c "^dn:")
		cport=$(haproxy_port "$fe" "$seen")
		if [ "$n" != 1 ] || [ -z "$cport" ] ||
			! alog_wait "ACCEPT from=127\.0\.0\.1:$cport via=pldap proxy=127\.0\.0\.1:[0-9]+$"; then
			verdict="not_ok|ldapsearch through HAProxy ($fe): $n entries, HAProxy's client port \"$cport\"; access log: $(tail -3 "$alog")"
			break
		fi
		hport=$(sed -n "s/.*ACCEPT from=127\.0\.0\.1:$cport via=pldap proxy=127\.0\.0\.1:\([0-9]*\)$/\1/p" "$alog" | tail -1)
		if [ -n "$hport" ] && [ "$hport" != "$cport" ]; then
			verdict="ok|send-proxy ($fe): ldapsearch through HAProxy found its entry; from=127.0.0.1:$cport (the client's port, as HAProxy logged it), proxy=127.0.0.1:$hport"
			break
		fi
		verdict="not_ok|send-proxy ($fe): proxy port \"$hport\" vs client port $cport in 3 tries"
	done
	if [ "${verdict%%|*}" = ok ]; then ok "${verdict#*|}"; else not_ok "${verdict#*|}"; fi
done

# The client's source port, bound by the client itself, through send-proxy-v2.
sport=$(free_port)
res=$(python3 "$CLIENT" search 127.0.0.1 "$h2" "$BASE" --src "127.0.0.3:$sport")
if [ "$res" = "entries=$(grep -c "^dn: " "$LDIF") result=0" ] && alog_wait "ACCEPT from=127\.0\.0\.3:$sport via=pldap proxy=127\.0\.0\.1:[0-9]+$"; then
	ok "send-proxy-v2: a client bound to 127.0.0.3:$sport is from=127.0.0.3:$sport in the access log"
else
	not_ok "client bound to 127.0.0.3:$sport: $res; $(grep "ACCEPT" "$alog" | tail -2)"
fi

# pldaps://: the header precedes the ClientHello; HAProxy passes TLS through. (LDAPNOINIT
# would make libldap ignore LDAPTLS_CACERT.)
sout=$(env -u LDAPNOINIT timeout 10 ldapsearch -x -LLL -H "ldaps://127.0.0.1:$h3" -b "$BASE" "(uid=user3)" 1.1 2>&1)
n=$(grep -c "^dn:" <<< "$sout")
cport=$(haproxy_port tls)
if [ "$n" = 1 ] && [ -n "$cport" ] && alog_wait "ACCEPT from=127\.0\.0\.1:$cport via=pldaps proxy=127\.0\.0\.1:[0-9]+$" &&
	alog_wait "TLS TLSv1\.[23]"; then
	ok "pldaps:// through HAProxy (send-proxy-v2, TLS passed through): the entry found, from=127.0.0.1:$cport via=pldaps"
else
	not_ok "pldaps:// through HAProxy: $n entries ($sout), client port \"$cport\"; $(grep -v "health check" "$alog" | tail -3)"
fi

# peername.ip: ou=groups is readable from 127.0.0.3 only; through HAProxy (whose own address
# is 127.0.0.1) the proxied client's address decides.
r3=$(python3 "$CLIENT" search 127.0.0.1 "$h2" "$GROUPS_DN" --src 127.0.0.3)
r4=$(python3 "$CLIENT" search 127.0.0.1 "$h2" "$GROUPS_DN" --src 127.0.0.4)
direct=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$lport" -b "$GROUPS_DN" 1.1 2>&1 | grep -c "^dn:")
case $r3 in "entries=0 "* | closed | error*) r3ok= ;; *) r3ok=yes ;; esac
if [ -n "$r3ok" ] && [ "${r4%% *}" = "entries=0" ] && [ "$direct" = 0 ]; then
	ok "peername.ip=127.0.0.3: that client through HAProxy reads $GROUPS_DN ($r3), 127.0.0.4 through HAProxy and HAProxy's own 127.0.0.1 do not ($r4; direct: $direct)"
else
	not_ok "peername.ip=127.0.0.3: from .3 \"$r3\", from .4 \"$r4\", direct from 127.0.0.1: $direct entries"
fi
r6=$(python3 "$CLIENT" search 127.0.0.1 "$pport" "$GROUPS_DN" --header v2 --claim "[2001:db8:7::9]:4000")
r7=$(python3 "$CLIENT" search 127.0.0.1 "$pport" "$GROUPS_DN" --header v1 --claim "192.0.2.7:4000")
if [ "${r6%% *}" != "entries=0" ] && [ "${r6#entries=}" != "$r6" ] && [ "${r7%% *}" = "entries=0" ]; then
	ok "peername.ipv6=2001:db8::%32: a v2 header from 2001:db8:7::9 reads $GROUPS_DN ($r6), a v1 one from 192.0.2.7 does not ($r7)"
else
	not_ok "peername.ipv6: v2 from 2001:db8:7::9 \"$r6\", v1 from 192.0.2.7 \"$r7\""
fi

# peername.path: the ldapi:// socket reads it, as its path names it.
sock=$work/ldapi
ldapi="ldapi://${sock//\//%2F}"
n=$(timeout 10 ldapsearch -x -LLL -H "$ldapi" -b "$GROUPS_DN" 1.1 2>&1 | grep -c "^dn:")
if [ "$n" -gt 0 ]; then
	ok "peername.path=$work/ldapi: a client on that socket reads $GROUPS_DN ($n entries)"
else
	not_ok "peername.path: $n entries over $ldapi"
fi

# Raw headers: v1, v2 (IPv6), a byte at a time, LOCAL and UNKNOWN (the connection's own
# address is kept).
raw_case() {
	local what=$1 want=$2
	shift 2
	local res
	res=$(python3 "$CLIENT" search 127.0.0.1 "$pport" "$PEOPLE" "$@")
	if [ "$res" = "$people" ] && alog_wait "$want"; then
		ok "$what: answered, and the access log has \"$(grep -oE -- "$want" "$alog" | tail -1)\""
	else
		not_ok "$what: \"$res\"; wanted a line like $want; $(grep ACCEPT "$alog" | tail -2)"
	fi
}
PEOPLE=ou=people,$BASE
people="entries=$(grep -c "^dn: .*ou=people,$BASE$" "$LDIF") result=0"
raw_case "v1 header (TCP4)" "ACCEPT from=192\.0\.2\.7:40123 via=pldap proxy=127\.0\.0\.1:[0-9]+" --header v1 --claim 192.0.2.7:40123
raw_case "v1 header (TCP6)" "ACCEPT from=\[2001:db8::5\]:4242 via=pldap proxy=" --header v1 --claim "[2001:db8::5]:4242"
raw_case "v2 header (IPv6), sent a byte at a time" "ACCEPT from=\[2001:db8::6\]:4243 via=pldap" --header v2 --claim "[2001:db8::6]:4243" --split
raw_case "v2 LOCAL: the connection's own address" "ACCEPT from=127\.0\.0\.1:[0-9]+ via=pldap proxy=local$" --header v2-local
raw_case "v1 PROXY UNKNOWN: the connection's own address" "ACCEPT from=127\.0\.0\.1:[0-9]+ via=pldap proxy=local$" --header v1-unknown
res=$(python3 "$CLIENT" search 127.0.0.1 "$psport" "$PEOPLE" --header v1 --claim 192.0.2.9:999 --tls "$work/pki/ca.pem")
if [ "$res" = "$people" ] && alog_wait "ACCEPT from=192\.0\.2\.9:999 via=pldaps"; then
	ok "pldaps:// with a raw v1 header before the ClientHello: answered, from=192.0.2.9:999"
else
	not_ok "pldaps:// raw v1: $res"
fi

# Refused and closed: a source outside proxy_from (logged), LDAP without a header,
# malformed and oversized headers (closed at once), a header that never ends (closed after
# pdu_timeout).
res=$(python3 "$CLIENT" search 127.0.0.1 "$pport" "$BASE" --header v1 --src 127.0.0.2)
if [ "$res" = closed ] && grep -q "from 127.0.0.2:[0-9]*: not in proxy_from, refused on a pldap:// listener" "$work/server.log"; then
	ok "a header from 127.0.0.2 (not in proxy_from): closed, and logged"
else
	not_ok "from 127.0.0.2: \"$res\"; $(tail -2 "$work/server.log")"
fi
res=$(python3 "$CLIENT" search 127.0.0.1 "$pport" "$BASE" --header none)
if [ "$res" = closed ] && grep -q "not a PROXY protocol header; closing" "$work/server.log"; then
	ok "LDAP without a header on pldap://: closed (not a PROXY protocol header)"
else
	not_ok "no header: \"$res\""
fi
closed_fast() {
	local what=$1 hex=$2 log=$3 res
	sleep 1 # the error log prints 3 lines of one kind a second (log.h): one each second
	res=$(python3 "$CLIENT" raw 127.0.0.1 "$pport" "$hex" --wait 5)
	case $res in
	"closed after 0."*) if grep -q "$log" "$work/server.log"; then ok "$what: $res, logged \"$log\""; else not_ok "$what: not logged ($log)"; fi ;;
	*) not_ok "$what: $res" ;;
	esac
}
v2sig=0d0a0d0a000d0a515549540a
closed_fast "a malformed v1 line" "$(printf 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n' | od -An -v -tx1 | tr -d ' \n')" "PROXY v1 line: expected"
closed_fast "a v1 line over 107 bytes" "$(printf 'PROXY TCP4 %0120d' 0 | od -An -v -tx1 | tr -d ' \n')" "PROXY v1 line longer than 107 bytes"
closed_fast "a v2 header of 16 + 600 bytes" "${v2sig}21110258" "PROXY v2 header longer than 536 bytes"
closed_fast "a v2 header of version 3" "${v2sig}3111000c" "the version is not 2"
res=$(python3 "$CLIENT" raw 127.0.0.1 "$pport" "50524f5859205443503420" --wait 8)
case $res in
"closed after "[2-4].*) if grep -q "no whole PROXY header in 2 s" "$work/server.log"; then ok "a header that never ends: $res (pdu_timeout = 2)"; else not_ok "slow header: not logged"; fi ;;
*) not_ok "a header that never ends (pdu_timeout = 2): $res" ;;
esac
if alog_wait 'CLOSE reason="PROXY header timeout" ops=0' && alog_wait 'CLOSE reason="malformed PROXY header" ops=0'; then
	ok "the access log has their closes (PROXY header timeout, malformed PROXY header)"
else
	not_ok "access log closes: $(tail -4 "$alog")"
fi

# A TCP check: connect and close, nothing sent: one line.
python3 -c "import socket; socket.create_connection(('127.0.0.1', $pport)).close()"
if alog_wait 'via=pldap proxy=none CLOSE reason="health check" ops=0$'; then
	ok "a connect and close: one line ($(grep -o 'ACCEPT .*reason="health check" ops=0' "$alog" | tail -1))"
else
	not_ok "connect and close: $(tail -2 "$alog")"
fi

# Half a header, then the client goes: not a health check.
python3 "$CLIENT" raw 127.0.0.1 "$pport" "50524f5859205443503420" --close > /dev/null
if alog_wait 'via=pldap proxy=none$' && alog_wait 'CLOSE reason="client closed" ops=0$'; then
	ok "half a header, then a close: its ACCEPT and CLOSE reason=\"client closed\" (no health check)"
else
	not_ok "half a header and a close: $(tail -2 "$alog")"
fi

# HAProxy's option ldap-check through send-proxy-v2 (a LOCAL header, an anonymous bind, a
# reset): each check one line, none a "read error", and the server stays UP.
checks_before=$(grep -c 'reason="health check" ops=1' "$alog")
sleep 2.5
n=$(grep -c 'via=pldap proxy=local CLOSE reason="health check" ops=1$' "$alog")
n=$((n - checks_before))
ids=$(grep 'proxy=local CLOSE reason="health check" ops=1$' "$alog" | sed -n 's/.* conn=\([0-9]*\) .*/\1/p')
multi=0
for id in $ids; do
	[ "$(grep -c " conn=$id " "$alog")" = 1 ] || multi=$((multi + 1))
done
if [ "$n" -ge 5 ] && [ "$multi" = 0 ] && ! grep -q 'reason="read error"' "$alog" &&
	! grep -q "check/m is DOWN" "$work/haproxy.log"; then
	ok "option ldap-check every 200 ms: $n checks in 2.5 s, each one access-log line, no read error, the server UP"
else
	not_ok "ldap-check: $n checks, $multi with more than one line; $(grep -c 'read error' "$alog") read errors; haproxy: $(grep -c 'is DOWN' "$work/haproxy.log") DOWN; $(tail -3 "$alog")"
fi

# An anonymous bind then a search is no health check: every line is written.
python3 "$CLIENT" search 127.0.0.1 "$pport" "ou=groups,$BASE" --header v2-local > /dev/null
alog_wait "SEARCH base=\"ou=groups,$BASE\".*proxy" || alog_wait "SEARCH base=\"ou=groups,$BASE\" .* result=32"
last=$(grep "SEARCH base=\"ou=groups,$BASE\"" "$alog" | tail -1 | sed -n 's/.* conn=\([0-9]*\) .*/\1/p')
alog_wait " conn=$last CLOSE "
if [ -n "$last" ] && [ "$(grep -c " conn=$last " "$alog")" = 4 ]; then
	ok "a bind and a search: ACCEPT, BIND, SEARCH and CLOSE lines (conn=$last)"
else
	not_ok "bind and search: $(grep " conn=$last " "$alog")"
fi

kill "$hpid" 2> /dev/null
wait "$hpid" 2> /dev/null
if stop_checked "$mpid" "$work/server.log"; then
	ok "minidir stopped cleanly (exit 0, no sanitizer report)"
else
	not_ok "minidir stop: $stop_why"
fi
finish
