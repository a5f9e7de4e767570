#!/usr/bin/env bash
# Faults from outside: a server out of file descriptors under connection churn,
# bind timing that must not tell which DNs exist, a second server on a served
# address, entries as large as import accepts, and a database file overwritten
# under a running server. Each part starts its own minidir on 127.0.0.1.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/integration/lib.sh

use_work_dir fault

# write_conf NAME [extra lines...]: $work/NAME.conf for $work/NAME.mdb
write_conf() {
	local name=$1
	shift
	{
		echo "listen = 127.0.0.1:0"
		echo "database = $work/$name.mdb"
		echo "suffix = $BASE"
		echo "threads = 2"
		echo "rootdn = cn=admin,$BASE"
		echo "rootpw = root-secret"
		for l in "$@"; do echo "$l"; done
	} > "$work/$name.conf"
}

# start NAME [ULIMIT_N]: starts minidir on NAME.conf; sets pid and port.
start() {
	local name=$1 nofile=${2:-}
	: > "$work/$name.log" # emptied here: the background shell may open it after wait_port reads
	if [ -n "$nofile" ]; then
		(ulimit -n "$nofile" && exec "$BUILD/minidir" -f "$work/$name.conf") 2> "$work/$name.log" &
	else
		"$BUILD/minidir" -f "$work/$name.conf" 2> "$work/$name.log" &
	fi
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$work/$name.log")
	if [ -z "$port" ]; then
		not_ok "$name: server did not start: $(cat "$work/$name.log")"
		return 1
	fi
}

# stop PID NAME: SIGTERM; the server must exit 0 with no sanitizer report in NAME.log.
stop() {
	stop_checked "$1" "$work/$2.log" || not_ok "$2: $stop_why"
}

# wait_exit PID: waits up to 10 s for PID to exit (then kills it); returns its status.
wait_exit() {
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null
	wait "$1"
}

# CPU ticks (user + system) the process has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# --- out of file descriptors ---------------------------------------------------
write_conf fd
"$BUILD/minidir-import" -f "$work/fd.conf" "$LDIF" > /dev/null || not_ok "import for fd test"
if start fd 64; then
	out=$(timeout 120 "$BUILD/tests/integration/faultclient" churn 127.0.0.1 "$port" 200 3)
	client_report "fd limit 64: " "$out"
	# Idle again: the workers must not spin on a listener they cannot accept from.
	t0=$(cpu_ticks "$pid")
	sleep 2
	t1=$(cpu_ticks "$pid")
	hz=$(getconf CLK_TCK)
	if [ $((t1 - t0)) -le $((hz / 5)) ]; then
		ok "fd limit: idle after the churn ($((t1 - t0)) ticks of CPU in 2 s)"
	else
		not_ok "fd limit: $((t1 - t0)) ticks of CPU in 2 s of idle (spinning)"
	fi
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

# --- a second server on a served address ----------------------------------------
write_conf one
"$BUILD/minidir-import" -f "$work/one.conf" "$LDIF" > /dev/null || not_ok "import for address test"
if start one; then
	first=$pid
	sed "s/^listen = .*/listen = 127.0.0.1:$port/" "$work/one.conf" > "$work/two.conf"
	if timeout 10 "$BUILD/minidir" -f "$work/two.conf" 2> "$work/two.log"; then
		not_ok "second server on 127.0.0.1:$port started"
	elif grep -q "already served by another process" "$work/two.log"; then
		ok "second server on a served address refuses to start: $(sed -n 's/.*error: //p' "$work/two.log")"
	else
		not_ok "second server failed without saying why: $(cat "$work/two.log")"
	fi
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

# --- bind timing does not tell which DNs exist ---------------------------------
# Four schemes of different costs ({SSHA}: microseconds; {CRYPT}$5$, {CRYPT}$6$ and
# {ARGON2} as Debian's slappasswd writes it: milliseconds), an entry without a password,
# an entry whose scheme nothing verifies, unknown DNs: a wrong password takes as long
# on each (every failed bind is answered the same time after it was read).
hash6=$("$BUILD/tests/integration/faultclient" crypt right-password '$6$saltsaltsalt$')
hash5=$("$BUILD/tests/integration/faultclient" crypt right-password '$5$saltsaltsalt$')
ssha=$(slappasswd -h '{SSHA}' -s right-password)
argon=$(slappasswd -o module-load="argon2 memory=1024" -h '{ARGON2}' -s right-password)
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
# A failed bind abandoned while it waits gets no answer; the next request does.
s = socket.create_connection(("127.0.0.1", port), timeout=20)
s.sendall(bind_pdu("uid=ghost,ou=people," + base, "wrong", 7) +
          tlv(0x30, tlv(0x02, b"\x08") + tlv(0x50, b"\x07")) +
          bind_pdu("uid=ghost,ou=people," + base, "wrong", 9))
r = s.recv(64)
s.close()
if r[:5] != b"\x30\x0c\x02\x01\x09":
    print("abandon: the first answer was not the bind after it: " + r.hex())
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

# --- a database others can read -------------------------------------------------------
cp "$work/other.mdb" "$work/inplace.mdb"
chmod 644 "$work/inplace.mdb"
out=$(timeout 10 "$BUILD/minidir" -t -f "$work/inplace.conf" 2>&1)
case $out in
*"readable by others (mode 644)"*) ok "a group/world-readable database is warned about at start-up" ;;
*) not_ok "no warning for a database of mode 644: $out" ;;
esac
chmod 600 "$work/inplace.mdb"
out=$(timeout 10 "$BUILD/minidir" -t -f "$work/inplace.conf" 2>&1)
case $out in
*"readable by others"*) not_ok "mode 600 warned about: $out" ;;
*) ok "a database of mode 600 is not warned about" ;;
esac

# --- idle connections cost little and give their memory back ---------------------------
write_conf idle
"$BUILD/minidir-import" -f "$work/idle.conf" "$LDIF" > /dev/null || not_ok "import for idle test"
# Memory figures mean nothing under AddressSanitizer (its own allocator and quarantine).
case $BUILD in *san*) idle_measure= ;; *) idle_measure=1 ;; esac
if [ -n "$idle_measure" ] && start idle; then
	rss() { awk '/^RssAnon/ { print $2 }' "/proc/$pid/status"; }
	timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$port" -b "$BASE" > /dev/null 2>&1
	before=$(rss)
	mkfifo "$work/idle.ctl"
	timeout 60 "$BUILD/bench/idleconns" 127.0.0.1 "$port" 800 < "$work/idle.ctl" > "$work/idle.out" &
	ic=$!
	exec 8> "$work/idle.ctl"
	for _ in $(seq 1 300); do grep -q '^held' "$work/idle.out" && break; sleep 0.1; done
	sleep 2.5 # buffers of idle connections are released by the once-a-second sweep
	held=$(rss)
	echo go >&8
	exec 8>&-
	wait "$ic"
	sleep 2.5
	after=$(rss)
	per=$(((held - before) * 1024 / 800))
	if grep -q '^held 800' "$work/idle.out" && [ "$per" -le 2048 ]; then
		ok "800 idle connections cost $per bytes each (RssAnon $before -> $held kB)"
	else
		not_ok "800 idle connections: $(cat "$work/idle.out"), $per bytes each (RssAnon $before -> $held kB)"
	fi
	if [ $((after * 10)) -le $((before * 11)) ]; then
		ok "memory back within 10% once they closed ($before -> $after kB)"
	else
		not_ok "memory not given back: $before kB before, $after kB after the connections closed"
	fi
	stop "$pid" idle
fi

# --- giving up root after binding, and the pid file ------------------------------------------
# The server, once nobody, must reach its pid file: the work directory may be traversed.
chmod 711 "$work" && mkdir -p "$work/run" && chmod 1777 "$work/run"
write_conf priv "user = nobody" "pid_file = $work/run/minidir.pid"
"$BUILD/minidir-import" -q -f "$work/priv.conf" "$LDIF" || not_ok "import for the user test"
if [ "$(id -u)" = 0 ]; then
	if start priv; then
		uid=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status")
		nobody=$(id -u nobody)
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

echo "# fault tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
