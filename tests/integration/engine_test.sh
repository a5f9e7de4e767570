#!/usr/bin/env bash
# The I/O engine (io_engine): io_uring serves ldap:// and ldapi:// with idle
# timeouts; where io_uring is forbidden (io_uring_disabled, here the file
# MINIDIR_IO_URING_DISABLED_FILE names) every worker says why and epoll serves;
# a bad engine name stops start-up with a clear error; SIGHUP says a change needs
# a restart; a failed wait is tried again or stops the server (under strace). The other scripts run on io_uring with MINIDIR_IO_ENGINE=io_uring
# (make test runs several of them so).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh

use_work_dir engine
unset MINIDIR_IO_ENGINE

# write_conf NAME [extra lines...]: $work/NAME.conf on the shared database.
write_conf() {
	local name=$1
	printf 'listen = 127.0.0.1:0\ndatabase = %s\nsuffix = %s\nthreads = 2\nmonitor_access = anonymous\n' \
		"$work/test.mdb" "$BASE" > "$work/$name.conf"
	shift
	[ $# = 0 ] || printf '%s\n' "$@" >> "$work/$name.conf"
	# last: a check names the line of an extra one
	printf 'schema_dir = %s\n' "$SCHEMA_DIR" >> "$work/$name.conf"
}
# start NAME [ENV=VALUE...]: minidir on NAME.conf, its log in NAME.log; sets pid and port.
start() {
	local name=$1
	shift
	: > "$work/$name.log"
	env "$@" "$BUILD/minidir" -f "$work/$name.conf" 2> "$work/$name.log" &
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$work/$name.log")
}
stop() {
	stop_checked "$pid" "$work/$1.log" && ok "$1: stops cleanly" || not_ok "$1: $stop_why"
}
mon() { ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b cn=monitor -s base "$1" | sed -n "s/^$1: //p"; }
entries() { ldapsearch -x -LLL -H "$1" -b "$BASE" "(objectClass=*)" 1.1 | grep -c '^dn:'; }

write_conf uring "io_engine = io_uring" "listen = ldapi://%2F${work//\//%2F}%2Fldapi" "idle_timeout = 1"
"$BUILD/minidir-import" -q -f "$work/uring.conf" "$LDIF" || { not_ok "import"; exit 1; }
total=$(sed -n '1s/^# \([0-9]*\) entries.*/\1/p' "$LDIF")

# --- io_uring serves ---------------------------------------------------------------------
start uring
if [ -z "$port" ]; then
	not_ok "io_uring: server did not start: $(cat "$work/uring.log")"
else
	grep -q "io_engine io_uring$" "$work/uring.log" && [ "$(mon ioEngine)" = io_uring ] &&
		ok "io_engine = io_uring: logged and in cn=monitor" ||
		not_ok "io_uring not in use: $(grep io_engine "$work/uring.log"), monitor $(mon ioEngine)"
	n=$(entries "ldap://127.0.0.1:$port")
	[ "$n" = "$total" ] && ok "io_uring: ldap:// search returns all $total entries" || not_ok "io_uring: ldap:// $n of $total entries"
	n=$(entries "ldapi://%2F${work//\//%2F}%2Fldapi")
	[ "$n" = "$total" ] && ok "io_uring: ldapi:// search returns all $total entries" || not_ok "io_uring: ldapi:// $n of $total entries"
	# Many connections at once, each with pipelined searches (searchrate, 16 in flight).
	timeout 60 "$BUILD/searchrate" -h 127.0.0.1 -p "$port" -b "$BASE" -f "(uid=alice)" -t 2 \
		--numConnections 8 -a -O 16 -i 1 -I 2 > "$work/sr.out" 2>&1
	rc=$?
	searches=$(mon opsSearch)
	[ "$rc" = 0 ] && [ "${searches:-0}" -ge 100 ] &&
		ok "io_uring: 8 connections x 16 pipelined lookups answered ($searches searches)" ||
		not_ok "io_uring: searchrate rc $rc, $searches searches: $(tail -5 "$work/sr.out")"
	# idle_timeout: a connection that sends nothing is closed by the server (EOF).
	exec 3<> "/dev/tcp/127.0.0.1/$port"
	timeout 20 cat <&3 > /dev/null
	rc=$?
	exec 3<&-
	[ "$rc" = 0 ] && ok "io_uring: an idle connection is closed by idle_timeout" ||
		not_ok "io_uring: idle connection not closed (rc $rc)"
	stop uring
fi

# --- io_uring forbidden: every worker falls back to epoll, which serves -------------------
echo 2 > "$work/io_uring_disabled"
write_conf fallback "io_engine = io_uring"
start fallback MINIDIR_IO_URING_DISABLED_FILE="$work/io_uring_disabled"
if [ -z "$port" ]; then
	not_ok "fallback: server did not start: $(cat "$work/fallback.log")"
else
	lines=$(grep -c "worker [01]: io_engine io_uring unavailable ($work/io_uring_disabled is 2); using epoll" "$work/fallback.log")
	[ "$lines" = 2 ] && grep -q "io_engine epoll$" "$work/fallback.log" && [ "$(mon ioEngine)" = epoll ] &&
		ok "io_uring forbidden: both workers log why and use epoll" ||
		not_ok "fallback: $lines fallback lines: $(grep io_engine "$work/fallback.log")"
	n=$(entries "ldap://127.0.0.1:$port")
	[ "$n" = "$total" ] && ok "fallback: epoll serves all $total entries" || not_ok "fallback: $n of $total entries"
	# SIGHUP with another engine: needs a restart, and says so.
	write_conf fallback "io_engine = epoll"
	kill -HUP "$pid"
	for _ in $(seq 1 100); do grep -q "io_engine changed" "$work/fallback.log" && break; sleep 0.05; done
	grep -q "SIGHUP: io_engine changed; restart minidir to apply it" "$work/fallback.log" &&
		ok "SIGHUP: a new io_engine needs a restart, and the log says so" ||
		not_ok "SIGHUP: no restart line: $(tail -3 "$work/fallback.log")"
	stop fallback
fi

# --- a failed wait -----------------------------------------------------------------------
# strace makes the one worker's wait fail (-e inject): short of memory (ENOMEM) the worker
# waits again and serves; any other error (EBADF) stops the server with status 1 at once,
# rather than leave the worker's listening socket unanswered while the process lives on.
# wait_fault ENGINE SYSCALL ERRNO: starts minidir under strace, the 3rd to 5th SYSCALL of
# its threads failing with ERRNO; sets spid (strace's) and pid (minidir's). Status 1, a
# failed check and strace killed, when minidir did not start under it.
wait_fault() {
	local name=wait-$1-$3
	write_conf "$name" "io_engine = $1" "threads = 1"
	: > "$work/$name.log"
	# LeakSanitizer (SAN=1) cannot run under ptrace: off here only (the last setting wins).
	ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 strace -f --seccomp-bpf -qq -o "$work/$name.strace" \
		-e trace="$2" -e inject="$2:error=$3:when=3..5" "$BUILD/minidir" -f "$work/$name.conf" 2> "$work/$name.log" &
	spid=$!
	pid=
	for _ in $(seq 1 100); do pid=$(pgrep -P "$spid" -x minidir) && break; sleep 0.05; done
	if [ -z "$pid" ]; then
		kill -KILL "$spid" 2> /dev/null
		wait "$spid" 2> /dev/null
		not_ok "$1, $3: minidir did not start under strace: $(tail -2 "$work/$name.log")"
		return 1
	fi
	# minidir first: strace, started with a program, ignores SIGTERM and ends with it
	pids+=("$pid" "$spid")
}
# end_traced SECONDS: waits up to SECONDS for strace to end with minidir; sets rc to its
# status (minidir's), or to "timeout" after killing minidir (strace then ends too).
end_traced() {
	local st=0
	rc=0
	if ! timeout "$1" tail --pid="$spid" -f /dev/null; then
		rc=timeout
		kill -KILL "$pid" 2> /dev/null
	fi
	wait "$spid" 2> /dev/null || st=$?
	[ "$rc" = timeout ] || rc=$st
}
for engine in epoll io_uring; do
	syscall=epoll_pwait2
	[ "$engine" = epoll ] || syscall=io_uring_enter
	if wait_fault "$engine" "$syscall" ENOMEM; then
		log=$work/wait-$engine-ENOMEM.log
		port=$(wait_port "$log")
		for _ in $(seq 1 100); do grep -q "wait: Cannot allocate memory" "$log" && break; sleep 0.05; done
		sleep 0.2 # past the three failures (10 ms apart)
		n=$([ -n "$port" ] && timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$BASE" "(objectClass=*)" 1.1 | grep -c '^dn:')
		if [ "$n" = "$total" ] && grep -q "worker 0: $engine wait: Cannot allocate memory; waiting again in 10 ms" "$log" &&
			[ "$(grep -c INJECTED "$work/wait-$engine-ENOMEM.strace")" = 3 ]; then
			ok "$engine: a wait failing with ENOMEM 3 times is tried again; the worker serves all $total entries"
		else
			not_ok "$engine: after ENOMEM from $syscall: ${n:-no} entries: $(grep -E "error|INJECTED" "$log" "$work/wait-$engine-ENOMEM.strace" | head -5)"
		fi
		kill -TERM "$pid"
		end_traced 10
		[ "$rc" = 0 ] && ok "$engine: then stops on SIGTERM with status 0" || not_ok "$engine: after ENOMEM, SIGTERM: exit $rc"
	fi
	if wait_fault "$engine" "$syscall" EBADF; then
		log=$work/wait-$engine-EBADF.log
		end_traced 15
		if [ "$rc" = 1 ] && grep -q "worker 0: $engine wait: Bad file descriptor; stopping the server" "$log" &&
			grep -q "a worker stopped on a failed wait (logged above); stopping" "$log"; then
			ok "$engine: a wait failing with EBADF stops the server with status 1 and says why"
		else
			not_ok "$engine: after EBADF from $syscall: exit $rc: $(grep -E "error" "$log" | head -3)"
		fi
	fi
done

# --- bad values --------------------------------------------------------------------------
write_conf bad "io_engine = kqueue"
out=$("$BUILD/minidir" -f "$work/bad.conf" -t 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"bad.conf:6: io_engine: \"kqueue\" is not one of epoll, io_uring"* ]] &&
	ok "io_engine = kqueue: refused with file:line" || not_ok "bad io_engine: rc $rc: $out"
write_conf env
out=$(MINIDIR_IO_ENGINE=poll timeout 10 "$BUILD/minidir" -f "$work/env.conf" 2>&1)
rc=$?
[ "$rc" != 0 ] && [[ $out == *"MINIDIR_IO_ENGINE=poll: expected epoll or io_uring"* ]] &&
	ok "MINIDIR_IO_ENGINE=poll: start-up refused with a clear error" || not_ok "MINIDIR_IO_ENGINE=poll: rc $rc: $out"

echo "# engine: $pass passed, $fail failed"
[ "$fail" = 0 ]
