#!/usr/bin/env bash
# Faults from outside: a server out of file descriptors under connection churn,
# bind timing that must not tell which DNs exist, a second server on a served
# address, entries as large as import accepts, a database file overwritten
# under a running server, and one cut short; giving up root. Each part starts its own
# minidir on 127.0.0.1. (What idle and unfinished connections cost: conn_memory_test.sh.)
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh

use_work_dir fault

# write_conf, start, stop: tests/integration/fault_lib.sh.
. tests/integration/fault_lib.sh

# wait_exit PID: waits up to 10 s for PID to exit (then kills it); returns its status.
wait_exit() {
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	wait "$1"
}

# signal_of RC: " (killed by SIGNAME)" for an exit status above 128
signal_of() { [ "$1" -gt 128 ] && echo " (killed by SIG$(kill -l $(($1 - 128))))"; }
# CPU ticks (user + system) the process has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# idle_for_2s PID WHAT [WHY]: PID may use at most 0.2 s of CPU in 2 s ("WHAT (N ticks ...)").
idle_for_2s() {
	local t0 t1 hz
	t0=$(cpu_ticks "$1")
	sleep 2
	t1=$(cpu_ticks "$1")
	hz=$(getconf CLK_TCK)
	if [ $((t1 - t0)) -le $((hz / 5)) ]; then
		ok "$2 ($((t1 - t0)) ticks of CPU in 2 s)"
	else
		not_ok "$2: $((t1 - t0)) ticks of CPU in 2 s (spinning${3:+; $3})"
	fi
}

# second_refused WHAT PATTERN: minidir on $work/two.conf must stop at start-up (exit 1)
# with PATTERN in its log. One that listens instead is stopped at once.
second_refused() {
	local tpid rc=0
	: > "$work/two.log"
	"$BUILD/minidir" -f "$work/two.conf" 2> "$work/two.log" &
	tpid=$!
	pids+=("$tpid")
	for _ in $(seq 1 100); do
		kill -0 "$tpid" 2> /dev/null || break
		grep -q "listening on" "$work/two.log" && break
		sleep 0.1
	done
	if kill -0 "$tpid" 2> /dev/null; then
		not_ok "$1: the second server started ($(grep -o 'listening on [^ ]*' "$work/two.log"))"
		kill "$tpid"
		wait "$tpid"
		return
	fi
	wait "$tpid" || rc=$?
	if [ "$rc" = 1 ] && grep -q "$2" "$work/two.log"; then
		ok "$1 refuses to start: $(sed -n 's/.*error: //p' "$work/two.log")"
	else
		not_ok "$1: exit $rc without saying why: $(cat "$work/two.log")"
	fi
}

# --- out of file descriptors ---------------------------------------------------
write_conf fd
"$BUILD/minidir-import" -f "$work/fd.conf" "$LDIF" > /dev/null || not_ok "import for fd test"
if start fd 64; then
	out=$(timeout 120 "$BUILD/tests/integration/faultclient" churn 127.0.0.1 "$port" 200 3)
	client_report "fd limit 64: " "$out"
	# Idle again: the workers must not spin on a listener they cannot accept from.
	idle_for_2s "$pid" "fd limit: idle after the churn"
	lines=$(grep -c 'accept:' "$work/fd.log")
	held=$(grep 'more like this.*accept' "$work/fd.log" | head -1)
	if [ "$lines" -le 40 ]; then
		ok "fd limit: $lines log lines about accept (rate-limited${held:+; e.g. \"${held#*error: }\"})"
	else
		not_ok "fd limit: $lines log lines about accept (not rate-limited)"
	fi
	if timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" -s base dn 2>&1 |
		grep -q "^dn: $BASE"; then
		ok "fd limit: serves again after the churn"
	else
		not_ok "fd limit: does not serve after the churn"
	fi
	shed=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -D "cn=admin,$BASE" \
		-w root-secret -b cn=monitor -s base shedConnections 2>&1 | sed -n 's/^shedConnections: //p')
	if [ -n "$shed" ] && [ "$shed" -gt 0 ]; then
		ok "fd limit: cn=monitor counts $shed shed connections"
	else
		not_ok "fd limit: cn=monitor shedConnections is '$shed'"
	fi
	stop "$pid" fd
fi

# --- out of file descriptors while connections stay open, on io_uring ------------------
# The limit reached and held by idle connections: a multishot accept re-armed at EMFILE
# fails at once (the kernel takes the descriptor before it looks for a connection), so
# the listener must rest, as on epoll, until a connection is pending again.
# The HTTP endpoint shares the limit: a health check at it is answered 503 at once
# (before: the endpoint's thread spun on the pending connection, unanswered, unlogged).
mport=$(free_port) || not_ok "no free port for metrics_listen"
write_conf fdu "io_engine = io_uring" "metrics_listen = 127.0.0.1:$mport"
"$BUILD/minidir-import" -f "$work/fdu.conf" "$LDIF" > /dev/null || not_ok "import for fd test on io_uring"
if MINIDIR_IO_ENGINE=io_uring start fdu 64; then # (the variable wins over the config: make test-io-uring sets it)
	coproc HOLD { "$BUILD/tests/integration/faultclient" hold 127.0.0.1 "$port" 64; }
	# shellcheck disable=SC2153  # coproc HOLD sets HOLD_PID
	hold_pid=$HOLD_PID
	held=
	read -r -t 30 held <&"${HOLD[0]}"
	case $held in
	"held "*" 0 hanging") ok "fd limit on io_uring: 64 connections at 64 descriptors: ${held#held }" ;;
	*) not_ok "fd limit on io_uring: 64 connections at 64 descriptors: '$held'" ;;
	esac
	# (logged just after "listening on": read once the connections were answered)
	if ! grep -q "info: io_engine io_uring" "$work/fdu.log"; then
		not_ok "fd limit on io_uring: the server runs $(sed -n 's/.*info: io_engine //p' "$work/fdu.log")"
	fi
	idle_for_2s "$pid" "fd limit on io_uring: idle at the limit"
	curl -s -o /dev/null -w '%{http_code}' --max-time 4 "http://127.0.0.1:$mport/healthz" \
		> "$work/fdu.http" 2>&1 &
	curl_pid=$!
	idle_for_2s "$pid" "fd limit: the HTTP endpoint idle while a health check comes"
	wait "$curl_pid"
	code=$(cat "$work/fdu.http")
	[ "$code" = 503 ] && ok "fd limit: a health check is answered 503" ||
		not_ok "fd limit: a health check got '$code', expected 503"
	lines=$(grep -c 'metrics_listen: accept: Too many open files' "$work/fdu.log")
	[ "$lines" = 1 ] && ok "fd limit: the HTTP endpoint logs it once" ||
		not_ok "fd limit: $lines log lines \"metrics_listen: accept: Too many open files\""
	# The limit holds and new connections come: each is closed, and the loop rests again.
	out=$(timeout 60 "$BUILD/tests/integration/faultclient" hold 127.0.0.1 "$port" 5 < /dev/null)
	case $out in
	"held 0 answered, 5 closed, 0 hanging"*) ok "fd limit on io_uring: 5 more connections closed at once" ;;
	*) not_ok "fd limit on io_uring: 5 more connections: '$out'" ;;
	esac
	idle_for_2s "$pid" "fd limit on io_uring: idle again after them"
	echo >&"${HOLD[1]}"
	released=
	read -r -t 30 released <&"${HOLD[0]}"
	wait "$hold_pid"
	[ "$released" = released ] || not_ok "fd limit on io_uring: the holding client did not release: '$released'"
	n=0
	for _ in 1 2 3 4 5 6 7 8; do
		timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" -s base dn 2>&1 |
			grep -q "^dn: $BASE" && n=$((n + 1))
	done
	if [ "$n" -eq 8 ]; then
		ok "fd limit on io_uring: serves every connection once descriptors are free"
	else
		not_ok "fd limit on io_uring: answered $n of 8 connections once descriptors are free"
	fi
	code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$mport/healthz" 2>&1)
	[ "$code" = 200 ] && ok "fd limit: a health check answered 200 once descriptors are free" ||
		not_ok "fd limit: a health check got '$code' once descriptors are free"
	lines=$(grep -c 'accept:' "$work/fdu.log")
	if [ "$lines" -le 40 ]; then
		ok "fd limit on io_uring: $lines log lines about accept"
	else
		not_ok "fd limit on io_uring: $lines log lines about accept"
	fi
	stop "$pid" fdu
fi

# --- a second server on a served address ----------------------------------------
write_conf one
"$BUILD/minidir-import" -f "$work/one.conf" "$LDIF" > /dev/null || not_ok "import for address test"
if start one; then
	first=$pid
	sed "s/^listen = .*/listen = 127.0.0.1:$port/" "$work/one.conf" > "$work/two.conf"
	second_refused "second server on a served address" "already served by another process"
	if out=$(timeout 10 "$BUILD/minidir" -t -f "$work/two.conf" 2>&1); then
		ok "-t checks a config whose address is served, without binding it"
	else
		not_ok "-t on a served address: $out"
	fi
	n=0
	for _ in 1 2 3 4 5 6 7 8; do
		timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" -s base dn 2>&1 |
			grep -q "^dn: $BASE" && n=$((n + 1))
	done
	if [ "$n" -eq 8 ]; then ok "the first server still answers every connection"; else not_ok "the first server answered $n of 8"; fi
	stop "$first" one
fi

# --- a second server on an address a replica holds (listen_after_refresh) ---------
# The replica's sockets are bound (SO_REUSEPORT) but not listening until its first
# refresh commits; its provider here never answers, so it holds until the bound (20 s:
# the checks below take seconds on a busy machine, and all must run within it).
# A second server must be refused as for a listening address, TCP and ldapi://, and the
# holding workers must be idle (a bound socket that does not listen is always "hung up"
# to epoll). On each engine.
for engine in epoll io_uring; do
	write_conf held "io_engine = $engine" "listen = ldapi://$work/held.sock" "listen_after_refresh = 20" \
		"syncrepl = rid=001 provider=ldap://127.0.0.1:1 bindmethod=simple binddn=\"cn=admin,$BASE\"" \
		"	credentials=x searchbase=\"$BASE\" type=refreshAndPersist retry=\"1 +\""
	rm -f "$work/held.mdb"
	: > "$work/held.log"
	MINIDIR_IO_ENGINE=$engine "$BUILD/minidir" -f "$work/held.conf" 2> "$work/held.log" &
	hpid=$!
	pids+=("$hpid")
	hport=$(wait_port "$work/held.log" ldap holding 20)
	grep -q "info: io_engine $engine" "$work/held.log" ||
		not_ok "held ($engine): the server runs $(sed -n 's/.*info: io_engine //p' "$work/held.log")"
	if [ -z "$hport" ]; then
		not_ok "held ($engine): no \"holding ... closed\" line: $(tail -3 "$work/held.log")"
		kill "$hpid"
		wait "$hpid"
		continue
	fi
	idle_for_2s "$hpid" "held ($engine): idle while holding" "$(grep -c 'accept' "$work/held.log") log lines about accept"
	sed "s/^listen = .*/listen = 127.0.0.1:$hport/" "$work/one.conf" > "$work/two.conf"
	second_refused "held ($engine): a second server on the held 127.0.0.1:$hport" "already served by another process"
	sed "s#^listen = .*#listen = ldapi://$work/held.sock#" "$work/one.conf" > "$work/two.conf"
	second_refused "held ($engine): a second server on the held ldapi socket" "another process serves this socket"
	if grep -q "listening on" "$work/held.log"; then
		not_ok "held ($engine): the hold ended before the second servers were tried (the checks took too long)"
	fi
	# Once the bound has passed the replica listens; every answer is its own (an empty
	# suffix: noSuchObject), on TCP and on its socket.
	if [ -z "$(wait_port "$work/held.log" ldap "listening on" 40)" ]; then
		not_ok "held ($engine): never listened: $(tail -3 "$work/held.log")"
	fi
	n=0
	I="ldapi://$(printf '%s' "$work/held.sock" | sed 's#/#%2F#g')"
	for uri in "ldap://127.0.0.1:$hport" "ldap://127.0.0.1:$hport" "ldap://127.0.0.1:$hport" \
		"ldap://127.0.0.1:$hport" "ldap://127.0.0.1:$hport" "ldap://127.0.0.1:$hport" "$I" "$I"; do
		rc=0
		timeout 10 ldapsearch -x -LLL -H "$uri" -b "$BASE" -s base dn > /dev/null 2>&1 || rc=$?
		[ "$rc" = 32 ] && n=$((n + 1))
	done
	if [ "$n" -eq 8 ]; then
		ok "held ($engine): then the replica answers all 8 connections itself (noSuchObject)"
	else
		not_ok "held ($engine): $n of 8 connections answered by the replica (noSuchObject)"
	fi
	stop "$hpid" held
done

# --- bind timing does not tell which DNs exist ---------------------------------
# Four schemes of different costs ({SSHA}: microseconds; {CRYPT}$5$, {CRYPT}$6$ and
# {ARGON2} as Debian's slappasswd writes it: milliseconds), an entry without a password,
# an entry whose scheme nothing verifies, unknown DNs: a wrong password takes as long
# on each (every failed bind is answered the same time after it was read).
# shellcheck disable=SC2016  # crypt(3) salts: $6$... is literal
hash6=$("$BUILD/tests/integration/faultclient" crypt right-password '$6$saltsaltsalt$')
# shellcheck disable=SC2016  # crypt(3) salts: $5$... is literal
hash5=$("$BUILD/tests/integration/faultclient" crypt right-password '$5$saltsaltsalt$')
ssha=$(slappasswd -h '{SSHA}' -s right-password)
argon=$(slappasswd -o module-load="argon2 memory=1024" -h '{ARGON2}' -s right-password)
# shellcheck disable=SC2016  # the hash's literal prefix
case $argon in
'{ARGON2}$argon2'*) ;;
*) not_ok "bind timing: slappasswd made no {ARGON2} hash (slapd's argon2 module): $argon" ;;
esac
person() { # person UID [userPassword]
	printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\n' \
		"$1" "$BASE" "$1" "$1" "$1"
	[ -n "${2:-}" ] && printf 'userPassword: %s\n' "$2"
	echo
}
{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: test\no: test\n\n' "$BASE"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$BASE"
	person real "{CRYPT}$hash6"
	person sha256 "{CRYPT}$hash5"
	person ssha "$ssha"
	person argon "$argon"
	person nopw
	person odd "{NOSUCH}right-password"
} > "$work/bind.ldif"
write_conf bind
if "$BUILD/minidir-import" -f "$work/bind.conf" "$work/bind.ldif" > /dev/null &&
	"$BUILD/minidir" -t -f "$work/bind.conf" > "$work/bind-t.out" 2>&1; then
	# minidir -t names the schemes in use and the values no password can match.
	schemes=$(grep -o 'password schemes in use (values): [^;]*' "$work/bind-t.out")
	missing=""
	# shellcheck disable=SC2016  # the schemes as minidir -t prints them, $ literal
	for cls in 'plaintext 1' '{SSHA} 1' '{CRYPT}$6$ 1' '{CRYPT}$5$ 1' \
		'{ARGON2}$argon2i$v=19$m=1024,t=3,p=1$ 1'; do
		case "$schemes, " in *"$cls, "*) ;; *) missing="$missing [$cls]" ;; esac
	done
	if [ -z "$missing" ] && grep -qF '1 userPassword values of a scheme minidir does not know (the first: {NOSUCH} on uid=odd' "$work/bind-t.out"; then
		ok "bind: minidir -t reports ${schemes#password }, and the {NOSUCH} value no password matches"
	else
		not_ok "bind: minidir -t does not report the schemes in use (missing:$missing): $(cat "$work/bind-t.out")"
	fi
else
	not_ok "bind timing: import or minidir -t failed: $(cat "$work/bind-t.out" 2>/dev/null)"
fi
if start bind; then
	# 100 rounds of 8 binds, up to 5 tries: ~4 s a try on an idle machine, 10-20 s on a
	# busy one (the delay follows the checks' time).
	out=$(timeout 300 "$BUILD/tests/integration/faultclient" bindtime 127.0.0.1 "$port" 100 \
		"uid=real,ou=people,$BASE" "uid=ssha,ou=people,$BASE" "uid=sha256,ou=people,$BASE" \
		"uid=argon,ou=people,$BASE" "uid=ghost,ou=people,$BASE" "uid=nopw,ou=people,$BASE" \
		"uid=odd,ou=people,$BASE" "uid=x,ou=nowhere,dc=other")
	client_report "" "${out:-bind timing: faultclient gave no result in 300 s}"
	# 40 connections send a failed bind at once; every other one closes before its answer
	# is due: the others get their 49s, the server keeps serving (SAN=1: and leaks nothing).
	waits=$(timeout 60 python3 - "$port" "$BASE" <<'PY'
import socket, sys
port, base = int(sys.argv[1]), sys.argv[2]
def tlv(tag, body):
    assert len(body) < 128
    return bytes([tag, len(body)]) + body
def bind_pdu(dn, pw, msgid=7):
    op = tlv(0x60, tlv(0x02, b"\x03") + tlv(0x04, dn.encode()) + tlv(0x80, pw.encode()))
    return tlv(0x30, tlv(0x02, bytes([msgid])) + op)
# A failed bind abandoned while it waits gets no answer; the next request does. Up to 5
# tries: a bind whose check outlasted its time is answered at once (op_bind.c), before the
# abandon is read, which a machine busy with other tests made happen once in five.
for attempt in range(5):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(bind_pdu("uid=ghost,ou=people," + base, "wrong", 7) +
              tlv(0x30, tlv(0x02, b"\x08") + tlv(0x50, b"\x07")) +
              bind_pdu("uid=ghost,ou=people," + base, "wrong", 9))
    r = s.recv(64)
    s.close()
    if r[:5] == b"\x30\x0c\x02\x01\x09":
        break
else:
    print("abandon: in 5 tries the first answer was not the bind after it: " + r.hex())
    sys.exit(0)
socks = []
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(bind_pdu("uid=ghost%d,ou=people,%s" % (i, base), "wrong"))
    socks.append(s)
for s in socks[1::2]:
    s.close()
answered = 0
for s in socks[0::2]:
    r = s.recv(64)
    if b"\x0a\x01\x31" in r:  # resultCode 49
        answered += 1
    s.close()
print(answered)
PY
)
	if [ "$waits" = 20 ]; then
		ok "bind: 20 failed binds answered 49 while 20 other connections closed before their answers were due; an abandoned one is not answered"
	else
		not_ok "bind: of 20 waiting failed binds, $waits were answered 49"
	fi
	for u in real sha256 ssha argon; do
		if timeout 10 ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "uid=$u,ou=people,$BASE" \
			-w right-password > /dev/null 2>&1; then
			ok "bind: the real password of uid=$u ($(grep "^uid: $u$" -A4 "$work/bind.ldif" | sed -n 's/^userPassword: \({[A-Z0-9]*}\(\$[0-9a-z]*\$\)\{0,1\}\).*/\1/p')) binds"
		else
			not_ok "bind: the real password of uid=$u does not bind"
		fi
	done
	stop "$pid" bind
else
	not_ok "bind timing: start failed"
fi

# --- an entry as large as import accepts reaches a reading client ------------------
# 15 MB of binary, just under the 16 MiB entry maximum; max_pending_bytes stays 4M.
{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: test\no: test\n\n' "$BASE"
	printf 'dn: cn=big,%s\nobjectClass: inetOrgPerson\ncn: big\nsn: big\njpegPhoto:: ' "$BASE"
	head -c 15000000 /dev/urandom | tee "$work/photo.bin" | base64 -w0
	printf '\n'
} > "$work/big.ldif"
write_conf big "max_pending_bytes = 4M"
if "$BUILD/minidir-import" -f "$work/big.conf" "$work/big.ldif" > /dev/null && start big; then
	for policy in batch nodelay-once; do
		sed -i "/^send_policy/d" "$work/big.conf"
		echo "send_policy = $policy" >> "$work/big.conf"
		kill -HUP "$pid"
		sleep 0.3
		rm -f "$work/got.bin"
		timeout 60 ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$port" \
			-D "cn=admin,$BASE" -w root-secret -b "cn=big,$BASE" -s base jpegPhoto 2>&1 |
			sed -n 's/^jpegPhoto:: //p' | base64 -d > "$work/got.bin" 2>/dev/null
		if cmp -s "$work/photo.bin" "$work/got.bin"; then
			ok "a 15 MB entry reaches a reading client whole ($policy, max_pending_bytes 4M)"
		else
			not_ok "a 15 MB entry ($policy): got $(stat -c %s "$work/got.bin") of 15000000 bytes; $(grep -m1 max_pending "$work/big.log")"
		fi
	done
	stop "$pid" big
else
	not_ok "big entry: import or start failed"
fi

# --- the database file written in place under a running server ---------------------
write_conf inplace
"$BUILD/minidir-import" -f "$work/inplace.conf" "$LDIF" > /dev/null || not_ok "import for in-place test"
cp "$work/inplace.mdb" "$work/other.mdb"
if start inplace; then
	chmod 600 "$work/inplace.mdb"
	# minidir-import renames a new file over the database: that is no change in place.
	"$BUILD/minidir-import" -f "$work/inplace.conf" "$LDIF" > /dev/null
	sleep 0.3
	if kill -0 "$pid" 2>/dev/null; then ok "in place: a re-import (rename) leaves the server running"; else not_ok "in place: a re-import stopped the server"; fi
	# The server holds the replaced file's lease no more; start again on the new one.
	stop "$pid" inplace
	start inplace
	timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" dn > /dev/null 2>&1
	t0=$(date +%s%N)
	timeout 60 cp "$work/other.mdb" "$work/inplace.mdb"
	t1=$(date +%s%N)
	wait_exit "$pid"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "is being written in place by another process" "$work/inplace.log"; then
		ok "in place: cp over the database stops the server cleanly first (exit 1, cp waited $(((t1 - t0) / 1000000)) ms)"
	else
		not_ok "in place: cp over the database: exit $rc; $(tail -2 "$work/inplace.log")"
	fi
	# Without the lease (a writer had the file open when the server started), a
	# truncation under the server's map is caught as a fault with a clear line.
	cp "$work/other.mdb" "$work/inplace.mdb"
	exec 7<> "$work/inplace.mdb"
	start inplace
	exec 7>&-
	grep -q "no lease on the database file" "$work/inplace.log" && ok "in place: no lease while a writer holds the file (logged)" || not_ok "in place: lease taken despite a writer"
	truncate -s 0 "$work/inplace.mdb"
	timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" dn > /dev/null 2>&1
	wait_exit "$pid"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "changed under the running server" "$work/inplace.log"; then
		ok "in place: a truncated map stops the server with a clear line, not SIGBUS (exit 1)"
	else
		not_ok "in place: truncated map: exit $rc; $(tail -2 "$work/inplace.log")"
	fi
fi

# --- a fault that is no database file's ---------------------------------------------------
# The handler that tells a file changed in place (SIGBUS, SIGSEGV in its map) passes any
# other fault on to the handler before it: a sanitizer's report under SAN=1 (before, it
# was replaced and such a crash died silently, status 139), else the usual death.
cp "$work/other.mdb" "$work/inplace.mdb"
if start inplace; then
	kill -SEGV "$pid"
	wait_exit "$pid"
	rc=$?
	if grep -q -e __asan_init -e __tsan_init "$BUILD/minidir"; then # SAN=1, TSAN=1
		[ "$rc" != 0 ] && [ "$rc" -lt 128 ] && grep -qE "ERROR: (Address|Thread)Sanitizer: SEGV" "$work/inplace.log" &&
			ok "a fault outside the database: the sanitizer's report (exit $rc)" ||
			not_ok "a fault outside the database: exit $rc$(signal_of "$rc"), no sanitizer report: $(tail -2 "$work/inplace.log")"
	else
		[ "$rc" = $((128 + $(kill -l SEGV))) ] && ! grep -q "changed under the running server" "$work/inplace.log" &&
			ok "a fault outside the database: killed by SIGSEGV, not taken for a changed file" ||
			not_ok "a fault outside the database: exit $rc: $(tail -2 "$work/inplace.log")"
	fi
fi

# --- a database file cut short ------------------------------------------------------------
# A copy cut short (a full disk, an interrupted copy) was mapped as it was: the first page
# read past its end killed minidir -t, minidir-export and the server with SIGBUS, and a
# running server died without a line when such a copy was renamed over its file. Each
# program now refuses it with one line, and a server keeps serving what it served.
write_conf cut
"$BUILD/minidir-import" -q -f "$work/cut.conf" "$LDIF" || not_ok "import for the cut-short test"
cp "$work/cut.mdb" "$work/whole.mdb"
full=$(stat -c %s "$work/whole.mdb")
psize=$(getconf PAGESIZE) # LMDB's page size is the system's
cuts="inside-the-last-page:$((full - psize / 2)) half:$((full / 2)) the-meta-pages-only:$((2 * psize)) empty:0 100-bytes:100"
cut_copy() { # FILE BYTES: whole.mdb, cut to BYTES
	cp "$work/whole.mdb" "$1" && truncate -s "$2" "$1"
}
for c in $cuts; do
	what=${c%%:*} n=${c#*:}
	cut_copy "$work/cut.mdb" "$n"
	for prog in "minidir -t" minidir-export "minidir (start-up)"; do
		rc=0
		case $prog in
		"minidir -t") timeout 20 "$BUILD/minidir" -t -f "$work/cut.conf" > "$work/cut.out" 2>&1 || rc=$? ;;
		minidir-export) timeout 20 "$BUILD/minidir-export" -q -f "$work/cut.conf" 2> "$work/cut.out" > /dev/null || rc=$? ;;
		*) timeout 20 "$BUILD/minidir" -f "$work/cut.conf" > "$work/cut.out" 2>&1 || rc=$? ;;
		esac
		if [ "$rc" = 1 ] && [ "$(grep -c "the file is cut short" "$work/cut.out")" = 1 ] &&
			grep -qF "$work/cut.mdb: the file is cut short ($n bytes, LMDB's" "$work/cut.out"; then
			ok "cut short ($what: $n of $full bytes): $prog exits 1 with one line"
		else
			not_ok "cut short ($what: $n bytes): $prog: exit $rc$(signal_of "$rc"): $(tail -2 "$work/cut.out")"
		fi
	done
done
# The path replaced between that check and LMDB's own open (a reload racing a copy put
# in place): strace holds LMDB's open of the path 3 s while a copy cut short is renamed
# over it; the file LMDB opened is checked in turn.
cp "$work/whole.mdb" "$work/cut.mdb"
cut_copy "$work/cut.new" $((full / 2))
rm -f "$work/strace.out"
: > "$work/strace.out"
rc=0
ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 timeout -k 5 30 strace -f -qq -o "$work/strace.out" -P "$work/cut.mdb" \
	-e trace=openat -e inject=openat:delay_enter=3000000:when=2 \
	"$BUILD/minidir" -t -f "$work/cut.conf" > "$work/cut.out" 2>&1 &
spid=$!
for _ in $(seq 1 200); do # the check's open of the path has returned
	grep -q "O_CLOEXEC) = " "$work/strace.out" && break
	sleep 0.05
done
mv "$work/cut.new" "$work/cut.mdb"
wait "$spid" || rc=$?
if [ "$rc" = 1 ] && grep -q "(DELAYED)" "$work/strace.out" &&
	grep -qF "$work/cut.mdb: the file is cut short ($((full / 2)) bytes" "$work/cut.out"; then
	ok "cut short: a copy renamed over the path between the check and LMDB's open is refused too"
else
	not_ok "cut short, renamed over the path during the open: exit $rc$(signal_of "$rc"): $(tail -2 "$work/cut.out") $(tail -2 "$work/strace.out")"
fi
# A file that is no LMDB file at all keeps LMDB's message.
for kind in random LDIF; do
	if [ "$kind" = random ]; then head -c 100000 /dev/urandom > "$work/cut.mdb"; else cp "$LDIF" "$work/cut.mdb"; fi
	rc=0
	timeout 20 "$BUILD/minidir" -t -f "$work/cut.conf" > "$work/cut.out" 2>&1 || rc=$?
	if [ "$rc" = 1 ] && grep -q "File is not an LMDB file" "$work/cut.out" && ! grep -q "cut short" "$work/cut.out"; then
		ok "$kind bytes as the database: still \"File is not an LMDB file\", exit 1"
	else
		not_ok "$kind bytes as the database: exit $rc$(signal_of "$rc"): $(tail -2 "$work/cut.out")"
	fi
done
# Renamed over a running server's file: refused with one line, the old snapshot served,
# and the next whole file served.
cp "$work/whole.mdb" "$work/cut.mdb"
count_all() {
	timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" 1.1 2> /dev/null | grep -c '^dn:'
}
refusals() { grep -c "database not reloaded" "$work/cut.log"; }
if start cut; then
	before=$(count_all)
	for c in $cuts; do
		what=${c%%:*} n=${c#*:}
		want=$(($(refusals) + 1))
		cut_copy "$work/cut.new" "$n"
		mv "$work/cut.new" "$work/cut.mdb"
		for _ in $(seq 1 50); do # the server checks the path once a second
			[ "$(refusals)" -ge "$want" ] && break
			sleep 0.1
		done
		sleep 1.2 # a second check: the file refused is not tried again
		got=$(refusals) now=$(count_all)
		if kill -0 "$pid" 2> /dev/null && [ "$got" = "$want" ] && [ "$now" = "$before" ] &&
			grep "database not reloaded" "$work/cut.log" | tail -1 |
			grep -qF "$work/cut.mdb: the file is cut short ($n bytes, LMDB's"; then
			ok "reload of a copy cut short ($what): refused with one line, still serving the previous file ($now entries)"
		else
			rc=0
			kill -0 "$pid" 2> /dev/null || { wait "$pid" || rc=$?; }
			not_ok "reload of a copy cut short ($what): $(kill -0 "$pid" 2> /dev/null && echo running || echo "exit $rc$(signal_of "$rc")"), $((got - want + 1)) refusal lines, $now entries (before: $before): $(tail -1 "$work/cut.log")"
			kill -0 "$pid" 2> /dev/null || break
		fi
	done
	{ cat "$LDIF"; printf '\ndn: cn=after-cut,%s\nobjectClass: organizationalRole\ncn: after-cut\n' "$BASE"; } > "$work/cut2.ldif"
	reloads=$(grep -c "database reloaded" "$work/cut.log")
	if kill -0 "$pid" 2> /dev/null && "$BUILD/minidir-import" -q -f "$work/cut.conf" "$work/cut2.ldif"; then
		for _ in $(seq 1 50); do
			[ "$(grep -c "database reloaded" "$work/cut.log")" -gt "$reloads" ] && break
			sleep 0.1
		done
		n=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "cn=after-cut,$BASE" -s base 1.1 2> /dev/null | grep -c '^dn:')
		[ "$n" = 1 ] && [ "$(count_all)" = $((before + 1)) ] && ok "after the copies cut short, the next whole import is served ($((before + 1)) entries)" ||
			not_ok "the next whole import: cn=after-cut found $n times: $(tail -2 "$work/cut.log")"
		stop "$pid" cut
	fi
fi

# --- damaged pages in a served file -----------------------------------------------------
# 12 pages of a 5,000-entry file zeroed (chosen with a fixed seed, as a bad disk or a stray
# write would leave them). minidir -t and minidir-export read every page and refuse the
# file naming the table and record (before: -t said OK, the exporter died of SIGABRT
# inside LMDB); served anyway, a lookup that meets a bad page fails alone (80), and the
# worker goes on answering the others (before: after the first bad read its transaction
# failed every later request, 383 of 400 lookups).
write_conf dmg "threads = 1"
bench/gen-ldif.sh 5000 "$BASE" > "$work/dmg.ldif"
"$BUILD/minidir-import" -q -f "$work/dmg.conf" "$work/dmg.ldif" || not_ok "import for the damaged-pages test"
# The offsets zeroed, one a line (what -t must name the first of).
python3 - "$work/dmg.mdb" "$(getconf PAGESIZE)" > "$work/dmg.zeroed" << 'PY'
import os, random, sys
path, psize = sys.argv[1], int(sys.argv[2])
n = os.path.getsize(path) // psize
random.seed(7)
with open(path, "r+b") as f:
    for p in sorted(random.sample(range(4, n), 12)):
        f.seek(p * psize)
        f.write(b"\0" * psize)
        print(p * psize)
PY
rc=0
timeout 60 "$BUILD/minidir" -t -f "$work/dmg.conf" > "$work/dmg.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "$work/dmg.mdb: a damaged page: table \"[a-z0-9.]*\": after [0-9]* records" "$work/dmg.out" &&
	ok "damaged pages: minidir -t exits 1 naming the table and record" ||
	not_ok "damaged pages: minidir -t: exit $rc$(signal_of "$rc"): $(tail -1 "$work/dmg.out" | cut -c1-300)"
# ... and the file offset of the first page whose header is not its own (before: none).
first=$(sed -n 's/.*not what LMDB wrote (zeroed or overwritten), the first at offset \([0-9]*\) .*/\1/p' "$work/dmg.out")
[ -n "$first" ] && grep -qx "$first" "$work/dmg.zeroed" &&
	ok "damaged pages: minidir -t names the first damaged page's offset, $first, one of those zeroed" ||
	not_ok "damaged pages: minidir -t names no zeroed offset ($(tr '\n' ' ' < "$work/dmg.zeroed")): $(tail -1 "$work/dmg.out" | cut -c1-400)"
rc=0
timeout 60 "$BUILD/minidir-export" -q -f "$work/dmg.conf" > "$work/dmg.ldif.out" 2> "$work/dmg.out" || rc=$?
[ "$rc" = 1 ] && [ ! -s "$work/dmg.ldif.out" ] && grep -q "a damaged page: .*nothing exported" "$work/dmg.out" &&
	ok "damaged pages: minidir-export exits 1, nothing written, saying where" ||
	not_ok "damaged pages: minidir-export: exit $rc$(signal_of "$rc"), $(wc -c < "$work/dmg.ldif.out") bytes: $(tail -1 "$work/dmg.out" | cut -c1-300)"
if start dmg; then
	fails=0
	for i in $(seq 0 399); do
		timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$port" -b "$BASE" "(uid=user.$((i * 12)))" 1.1 > /dev/null 2>&1 ||
			fails=$((fails + 1))
	done
	[ "$fails" -ge 1 ] && [ "$fails" -le 40 ] &&
		ok "damaged pages: $fails of 400 lookups failed (those that met a bad page), the worker answered the rest" ||
		not_ok "damaged pages: $fails of 400 lookups failed (at most 40, at least 1 expected)"
	stop "$pid" dmg
fi

# --- a damaged page under a subtree search -----------------------------------------------
# One leaf page of dn2id zeroed, in the middle of the table: a subtree search steps through
# dn2id with a cursor, and LMDB meets the page with an assertion (before: its abort() took
# the whole server down, every connection with it). The search fails alone (80), logged
# naming the file and where its candidates stood; the worker (the only one) answers the
# next request on the same connection, and new connections.
write_conf dmgs "threads = 1"
"$BUILD/minidir-import" -q -f "$work/dmgs.conf" "$work/dmg.ldif" || not_ok "import for the damaged dn2id page"
zeroed=$(python3 - "$work/dmgs.mdb" "$(getconf PAGESIZE)" << 'PY'
import struct, sys
path, psize = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    data = f.read()
    leaves = []  # dn2id's leaf pages: (first key, page); its keys are reversed DNs, its data IDs
    for p in range(2, len(data) // psize):
        pg = data[p * psize:(p + 1) * psize]
        flags, lower = struct.unpack_from("<HH", pg, 10)  # LMDB's page header
        if flags != 0x02 or lower <= 16:  # a leaf with a node
            continue
        off = struct.unpack_from("<H", pg, 16)[0]
        lo, hi, nflags, ksize = struct.unpack_from("<HHHH", pg, off)
        key = pg[off + 8:off + 8 + ksize]
        if nflags == 0 and lo + (hi << 16) in (4, 8) and key.startswith(b"dc=org\0dc=test\0"):
            leaves.append((key, p))
    leaves.sort()
    key, p = leaves[len(leaves) // 2]
    f.seek(p * psize)
    f.write(b"\0" * psize)
    first = key.replace(b"\0", b",").decode()
    print(f"page {p} of {len(data) // psize} (dn2id from {first})")
PY
)
if start dmgs; then
	out=$(timeout 60 "$BUILD/tests/integration/faultclient" damaged 127.0.0.1 "$port" "$BASE" \
		"cn=admin,$BASE" root-secret "(uid=user.12)")
	case $out in
	"subtree 80 ("*" entries), then (uid=user.12) 0 (1 entries)")
		ok "damaged dn2id $zeroed: a subtree search fails alone (80), the same connection's next lookup succeeds: $out" ;;
	*)
		rc=0
		kill -0 "$pid" 2> /dev/null || { wait "$pid" || rc=$?; }
		not_ok "damaged dn2id $zeroed: a subtree search, then a lookup on its connection: '$out'; server: $(kill -0 "$pid" 2> /dev/null && echo running || echo "exit $rc$(signal_of "$rc"): $(grep -m1 Assertion "$work/dmgs.log")")"
		;;
	esac
	line=$(grep -m1 "a damaged page met by a search" "$work/dmgs.log")
	case $line in
	*"error: $work/dmgs.mdb: a damaged page met by a search"*"table dn2id, after key"*"LMDB: "*)
		ok "damaged dn2id page: the log names the file, the table and the key: ${line#*error: }" ;;
	*) not_ok "damaged dn2id page: no log line naming the file, table and key: '$line'" ;;
	esac
	n=0
	for i in 1 2 3 24; do
		timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" "(uid=user.$i)" 1.1 2> /dev/null |
			grep -q "^dn: uid=user.$i," && n=$((n + 1))
	done
	[ "$n" = 4 ] && ok "damaged dn2id page: then 4 of 4 lookups on new connections answered" ||
		not_ok "damaged dn2id page: then $n of 4 lookups on new connections answered"
	kill -0 "$pid" 2> /dev/null && stop "$pid" dmgs
fi

# --- a database others can read -------------------------------------------------------
cp "$work/other.mdb" "$work/inplace.mdb"
chmod 644 "$work/inplace.mdb"
out=$(timeout 10 "$BUILD/minidir" -t -f "$work/inplace.conf" 2>&1)
case $out in
*"readable by others (mode 644)"*) ok "a group/world-readable database is warned about at start-up" ;;
*) not_ok "no warning for a database of mode 644: $out" ;;
esac
chmod 600 "$work/inplace.mdb"
# The check passed minidir -t: without the warning, and because the check succeeded
# (an output without the warning proves nothing when minidir -t failed).
rc=0
out=$(timeout 10 "$BUILD/minidir" -t -f "$work/inplace.conf" 2>&1) || rc=$?
case $rc:$out in
*"readable by others"*) not_ok "mode 600 warned about: $out" ;;
0:*"configuration and database OK"*) ok "a database of mode 600 is not warned about" ;;
*) not_ok "mode 600: minidir -t failed (exit $rc): $out" ;;
esac

# --- giving up root after binding, and the pid file ------------------------------------------
# The server, once nobody, must reach its pid file: the work directory may be traversed.
chmod 711 "$work" && mkdir -p "$work/run" && chmod 1777 "$work/run"
write_conf priv "user = nobody" "pid_file = $work/run/minidir.pid"
"$BUILD/minidir-import" -q -f "$work/priv.conf" "$LDIF" || not_ok "import for the user test"
if [ "$(id -u)" = 0 ]; then
	if start priv; then
		# "listening on" is logged when the sockets listen, a moment before root is given
		# up (connections wait in the backlog until the workers start, after it).
		nobody=$(id -u nobody)
		for _ in $(seq 1 50); do
			uid=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")
			[ "$uid" = "$nobody $nobody $nobody $nobody" ] && break
			sleep 0.1
		done
		[ "$uid" = "$nobody $nobody $nobody $nobody" ] && ok "user = nobody: every uid of the server is nobody's ($uid)" ||
			not_ok "user = nobody: the server's uids are $uid"
		[ "$(cat "$work/run/minidir.pid" 2> /dev/null)" = "$pid" ] && ok "pid_file holds the server's PID" ||
			not_ok "pid_file holds '$(cat "$work/run/minidir.pid" 2> /dev/null)', not $pid"
		n=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" "(uid=user3)" 1.1 | grep -c '^dn:')
		[ "$n" = 1 ] && ok "user = nobody: still serves the database opened as root" ||
			not_ok "user = nobody: search found $n entries"
		stop "$pid" priv
		[ -e "$work/run/minidir.pid" ] && not_ok "the pid file is left after a stop" || ok "the pid file is removed at stop"
	fi
else
	skip "needs root" "user = nobody: the server's uids are nobody's, it serves on, its pid_file"
	if "$BUILD/minidir" -f "$work/priv.conf" > "$work/priv.out" 2>&1; then
		not_ok "user = nobody without root: the server started"
	else
		grep -q "switching users needs root" "$work/priv.out" && ok "user = nobody without root: refused, clearly" ||
			not_ok "user = nobody without root: $(tail -2 "$work/priv.out")"
	fi
fi
write_conf nogroupuser "group = nogroup"
check_out=$("$BUILD/minidir" -t -f "$work/nogroupuser.conf" 2>&1)
grep -q "group is set but user is not" <<< "$check_out" && ok "group without user: a config error" ||
	not_ok "group without user: $check_out"

summary "fault tests"
