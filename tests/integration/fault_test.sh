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
hash=$("$BUILD/tests/integration/faultclient" crypt right-password '$6$saltsaltsalt$')
cat > "$work/bind.ldif" <<LDIF
dn: $BASE
objectClass: dcObject
objectClass: organization
dc: test
o: test

dn: ou=people,$BASE
objectClass: organizationalUnit
ou: people

dn: uid=real,ou=people,$BASE
objectClass: inetOrgPerson
uid: real
cn: Real
sn: Real
userPassword: {CRYPT}$hash

dn: uid=nopw,ou=people,$BASE
objectClass: inetOrgPerson
uid: nopw
cn: No Password
sn: Password
LDIF
write_conf bind
if "$BUILD/minidir-import" -f "$work/bind.conf" "$work/bind.ldif" > /dev/null && start bind; then
	out=$(timeout 120 "$BUILD/tests/integration/faultclient" bindtime 127.0.0.1 "$port" 150 \
		"uid=real,ou=people,$BASE" "uid=ghost,ou=people,$BASE" "uid=nopw,ou=people,$BASE" \
		"uid=x,ou=nowhere,dc=other")
	client_report "" "$out"
	if timeout 10 ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "uid=real,ou=people,$BASE" \
		-w right-password > /dev/null 2>&1; then
		ok "bind timing: the real password still binds"
	else
		not_ok "bind timing: the real password does not bind"
	fi
	stop "$pid" bind
else
	not_ok "bind timing: import or start failed"
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
# Anonymous, bound by password (issue 23: 5.1 KB each, kept after they closed: each bound
# DN pinned a heap page among freed buffers) and over TLS (memory kept after close).
tests/integration/tls_certs.sh "$work/certs" > /dev/null 2>&1 || not_ok "tls_certs.sh failed"
write_conf idle "listen = ldaps://127.0.0.1:0/" "tls_cert_file = $work/certs/server.pem" \
	"tls_key_file = $work/certs/server.key"
"$BUILD/minidir-import" -f "$work/idle.conf" "$LDIF" > /dev/null || not_ok "import for idle test"
# Memory figures mean nothing under AddressSanitizer (its own allocator and quarantine).
case $BUILD in *san*) idle_measure= ;; *) idle_measure=1 ;; esac
# idle_kind WHAT N MAX_BYTES PORT [IDLECONNS OPTIONS...]: N such connections cost at most
# MAX_BYTES each (0: not checked), and RssAnon is back within 10% once they closed.
idle_kind() {
	local what=$1 n=$2 max=$3 p=$4 before held after per ic
	shift 4
	before=$(rss)
	rm -f "$work/idle.ctl"
	mkfifo "$work/idle.ctl"
	timeout 120 "$BUILD/bench/idleconns" "$@" 127.0.0.1 "$p" "$n" < "$work/idle.ctl" > "$work/idle.out" &
	ic=$!
	exec 8> "$work/idle.ctl"
	for _ in $(seq 1 900); do grep -q '^held' "$work/idle.out" && break; kill -0 "$ic" 2> /dev/null || break; sleep 0.1; done
	sleep 2.5 # buffers of idle connections are released by the once-a-second sweep
	held=$(rss)
	echo go >&8
	exec 8>&-
	wait "$ic"
	sleep 2.5
	after=$(rss)
	per=$(((held - before) * 1024 / n))
	if ! grep -q "^held $n" "$work/idle.out"; then
		not_ok "$n idle connections ($what): $(cat "$work/idle.out")"
	elif [ "$max" = 0 ] || [ "$per" -le "$max" ]; then
		ok "$n idle connections ($what) cost $per bytes each (RssAnon $before -> $held kB)"
	else
		not_ok "$n idle connections ($what): $per bytes each, more than $max (RssAnon $before -> $held kB)"
	fi
	if [ $((after * 10)) -le $((before * 11)) ]; then
		ok "memory back within 10% once they closed ($what: $before -> $after kB)"
	else
		not_ok "memory not given back ($what): $before kB before, $after kB after the connections closed"
	fi
}
if [ -n "$idle_measure" ] && start idle; then
	rss() { awk '/^RssAnon/ { print $2 }' "/proc/$pid/status"; }
	sport=$(wait_port "$work/idle.log" ldaps)
	timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$port" -b "$BASE" > /dev/null 2>&1
	# As many TLS connections first: what OpenSSL and malloc keep once a process (and each
	# of its workers) has held that many (about 0.6 MB here, once) is not what connections keep.
	timeout 60 "$BUILD/bench/idleconns" -Z 127.0.0.1 "$sport" 300 < /dev/null > /dev/null
	sleep 3
	idle_kind anonymous 800 1024 "$port"
	idle_kind "bound by password" 1500 1024 "$port" -D "uid=user1,ou=people,$BASE" -w secret1
	# OpenSSL's state of an idle session (about 7 KB) is more than 1 KB: not checked.
	idle_kind "TLS, bound by password" 300 0 "$sport" -Z -D "uid=user1,ou=people,$BASE" -w secret1
	stop "$pid" idle
fi

# --- unfinished requests: the anonymous cap, pdu_timeout, the worker's bound -------------
# Issue 23: each connection could hold max_pdu_bytes (1M) of a request it never finished,
# anonymous included, for ever (1,000 connections: +934 MB).
write_conf partial
"$BUILD/minidir-import" -f "$work/partial.conf" "$LDIF" > /dev/null || not_ok "import for partial test"
if start partial; then
	rss() { awk '/^RssAnon/ { print $2 }' "/proc/$pid/status"; }
	# One connection left with 100 bytes of a 1,000-byte request: closed after pdu_timeout
	# (10 s by default), with a Notice of Disconnection.
	mkfifo "$work/slow.ctl"
	timeout 60 "$BUILD/bench/idleconns" -p 100/1000 127.0.0.1 "$port" 1 < "$work/slow.ctl" > "$work/slow.out" &
	slow=$!
	exec 7> "$work/slow.ctl"
	slow_t0=$(date +%s)
	# A search of 300,000 bytes (python-ldap: ldapsearch -f reads lines of 8K at most): over
	# max_pdu_bytes_anonymous (256K), under max_pdu_bytes.
	big_search() {
		timeout 30 /usr/bin/python3 -c '
import ldap, sys
l = ldap.initialize("ldap://127.0.0.1:" + sys.argv[1])
if len(sys.argv) > 2:
    l.simple_bind_s(sys.argv[2], sys.argv[3])
try:
    r = l.search_s(sys.argv[4] if len(sys.argv) > 4 else "dc=test,dc=org", ldap.SCOPE_SUBTREE,
                   "(description=" + "x" * 300000 + ")", ["1.1"])
    print("answered", len(r))
except ldap.LDAPError as e:
    print("refused", type(e).__name__, e)
' "$@" 2>&1
	}
	out=$(big_search "$port")
	case $out in
	"refused SERVER_DOWN"* | "refused PROTOCOL_ERROR"*)
		grep -q "larger than max_pdu_bytes_anonymous" "$work/partial.log" &&
			ok "an anonymous request over 256K: disconnected (protocolError notice), logged" ||
			not_ok "an anonymous request over 256K: not logged: $(tail -3 "$work/partial.log")" ;;
	*) not_ok "an anonymous request of 300,000 bytes: $out" ;;
	esac
	out=$(big_search "$port" "cn=admin,$BASE" root-secret)
	case $out in
	"answered 0") ok "the same request after a bind is answered (max_pdu_bytes: 1M)" ;;
	*) not_ok "a bound request of 300,000 bytes: $out" ;;
	esac
	# The slow connection: wait until 14 s after it began at most.
	while [ $(($(date +%s) - slow_t0)) -lt 14 ]; do sleep 0.5; done
	echo go >&7
	exec 7>&-
	wait "$slow"
	if grep -q '^server-closed 1' "$work/slow.out" && grep -q "(pdu_timeout)" "$work/partial.log"; then
		ok "a request left unfinished is closed after pdu_timeout (10 s), logged"
	else
		not_ok "a request left unfinished for 14 s: $(cat "$work/slow.out")"
	fi
	# 1,000 anonymous connections, each with 200,000 bytes of a 250,000-byte request.
	timeout 10 ldapsearch -x -H "ldap://127.0.0.1:$port" -b "$BASE" > /dev/null 2>&1
	before=$(rss)
	mkfifo "$work/partial.ctl"
	timeout 120 "$BUILD/bench/idleconns" -p 200000/250000 127.0.0.1 "$port" 1000 < "$work/partial.ctl" > "$work/partial.out" &
	ic=$!
	exec 6> "$work/partial.ctl"
	for _ in $(seq 1 900); do grep -q '^held' "$work/partial.out" && break; kill -0 "$ic" 2> /dev/null || break; sleep 0.1; done
	held=$(rss)
	echo go >&6
	exec 6>&-
	wait "$ic"
	grow=$((held - before))
	if [ -n "$idle_measure" ]; then
		# The bound: 2 workers x max_input_bytes_per_worker (16M), and some slack.
		if grep -q '^held 1000' "$work/partial.out" && [ "$grow" -le 49152 ]; then
			ok "1,000 unfinished requests: RssAnon +$grow kB (at most 48 MB), $(grep server-closed "$work/partial.out")"
		else
			not_ok "1,000 unfinished requests: RssAnon $before -> $held kB (+$grow), $(cat "$work/partial.out")"
		fi
	fi
	shed=$(timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -D "cn=admin,$BASE" -w root-secret \
		-b cn=monitor -s base inputShedConnections | sed -n 's/^inputShedConnections: //p')
	[ "${shed:-0}" -gt 0 ] && ok "cn=monitor counts them: inputShedConnections: $shed" ||
		not_ok "inputShedConnections: '$shed'"
	stop "$pid" partial
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
