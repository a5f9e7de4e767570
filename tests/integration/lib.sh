# shellcheck shell=bash
# Shared by the integration scripts (sourced).

# The data every script imports.
# shellcheck disable=SC2034  # read by the scripts that source this file
LDIF=tests/data/test.ldif
# shellcheck disable=SC2034  # as LDIF
BASE=dc=test,dc=org
# The schema every minidir of the tests reads (schema_dir in each config): the tree's own,
# schema/, what make install ships; never slapd's /etc/ldap/schema, which only slapd reads
# where a test runs it as a peer. Absolute: some servers start in another directory.
# shellcheck disable=SC2034  # as LDIF
SCHEMA_DIR=$PWD/schema

# use_work_dir NAME: $work, a fresh /tmp/minidir-NAME.XXXXXX. At exit every PID in
# $pids (servers started as `cmd & pids+=($!)`) is stopped, and $work removed unless
# KEEP is set. finish then prints "# NAME: P passed, F failed" and exits (1 on a failure).
pids=()
stop_pids_and_work() {
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null && wait "$p" 2> /dev/null
	done
	release_ports
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
use_work_dir() {
	suite=$1
	work=$(mktemp -d "/tmp/minidir-$1.XXXXXX")
	trap stop_pids_and_work EXIT
}

finish() {
	summary "$suite"
	exit
}

# ok / not_ok print a TAP-like line and count it in pass / fail.
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }

# skip WHY NAME: the check NAME is not run here (WHY: "needs root", say, where a check
# switches users; CI runs as root); printed "SKIP (WHY): NAME" and counted
# in lib_skipped (not "skipped": replica_apply_test.sh has its own), which the summary
# line reports.
lib_skipped=0
skip() {
	lib_skipped=$((lib_skipped + 1))
	echo "SKIP ($1): $2"
}
# summary NAME: prints "# NAME: P passed, F failed[, S skipped]". Returns 1 on a failure,
# and when nothing passed (a script whose checks were all skipped tested nothing).
summary() {
	local s=
	[ "$lib_skipped" = 0 ] || s=", $lib_skipped skipped"
	echo "# $1: $pass passed, $fail failed$s"
	if [ "$pass" = 0 ]; then
		echo "# $1: no check passed"
		return 1
	fi
	[ "$fail" = 0 ]
}

# At exit: stops $server_pid if it still runs, and removes $work unless KEEP is set.
cleanup_server_and_work() {
	if [ -n "${server_pid:-}" ] && kill -0 "$server_pid" 2> /dev/null; then
		kill "$server_pid"
		wait "$server_pid" 2> /dev/null
	fi
	release_ports
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}

# wait_port LOG [SCHEME [WORDS [SECONDS]]]: the port minidir logged (shared with bench/lib.sh).
. scripts/wait_port.sh

# start_minidir CONF LOG: starts $BUILD/minidir on CONF with its stderr in LOG (emptied
# first); sets pid (added to pids, stopped at exit) and port (empty if it did not start).
start_minidir() {
	: > "$2"
	"$BUILD/minidir" -f "$1" 2> "$2" &
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$2")
}

# ldif_sorted [FILE...]: the LDIF's entries (files or stdin) as "DN | LINE" lines, folded
# lines joined, comments and blank lines left out, sorted (C locale): two outputs so printed
# compare whatever the order of entries and attributes (slapcat's and minidir-export's).
ldif_sorted() {
	awk 'function flush() {
			if (l == "") return
			if (l ~ /^dn::? /) dn = l
			print dn " | " l
			l = ""
		}
		/^#/ { next }
		/^ / { l = l substr($0, 2); next }
		{ flush(); l = $0 }
		END { flush() }' "$@" | LC_ALL=C sort
}

# Turns ldapclient's "ok - ..." / "not ok - ..." output into ok/not_ok lines, with PREFIX.
client_report() {
	local prefix=$1 out=$2
	case $out in
	"ok - "*) while IFS= read -r l; do ok "$prefix${l#ok - }"; done <<< "$out" ;;
	*) not_ok "$prefix$out" ;;
	esac
}

# Reads a client's output on stdin: each "ok - ..." / "not ok - ..." line is a check of
# its own; any other line is a failure of NAME (the client).
relay_checks() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) not_ok "$1: $line" ;;
		esac
	done
}

# Imports LDIF with CONF's settings and starts minidir on CONF, logging to $work/minidir.log
# ($pid, $port); a failed import or a server that does not start is a failed check, and
# the script finishes there.
import_and_start() {
	if ! "$BUILD/minidir-import" -q -f "$1" "$2" > "$work/import.log" 2>&1; then
		not_ok "import: $(cat "$work/import.log")"
		finish
	fi
	start_minidir "$1" "$work/minidir.log"
	if [ -z "$port" ]; then
		not_ok "server did not start: $(cat "$work/minidir.log")"
		finish
	fi
}

# Stops the server PID with SIGTERM (waiting up to 10 s); it must exit with status 0
# and its LOG must hold no sanitizer report (under SAN=1 LeakSanitizer reports at
# exit; under TSAN=1 ThreadSanitizer reports as it finds a race, and the exit status
# is then 66). Returns 0, or 1 with what went wrong in $stop_why. Not in a subshell: wait
# needs the server to be this shell's child.
stop_checked() {
	local pid=$1 log=$2 rc=0
	stop_why=
	kill -TERM "$pid" 2> /dev/null
	for _ in $(seq 1 200); do kill -0 "$pid" 2> /dev/null || break; sleep 0.05; done
	if kill -0 "$pid" 2> /dev/null; then
		stop_why="did not stop within 10 s of SIGTERM"
		return 1
	fi
	wait "$pid" 2> /dev/null || rc=$?
	if [ "$rc" != 0 ] || grep -qE "ERROR: (Address|Undefined|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$log"; then
		# shellcheck disable=SC2034  # read by the caller
		# (no report: the log's end, where an abort's reason is, LMDB's assertion too)
		stop_why="exit status $rc after SIGTERM; $(grep -A20 -E "Sanitizer|runtime error" "$log" | head -20 | grep . || tail -5 "$log")"
		return 1
	fi
}

# private_build: copies $BUILD (objects, programs, their times) to $work/build and prints
# it, for a script's `make B=... install`: make install PREFIX=/usr compiles the schema's
# place into conf/config.o and links the programs again, which in $BUILD itself would
# change them under the tests running beside this one.
private_build() {
	mkdir -p "$work/build" && cp -a "$BUILD/." "$work/build/" && echo "$work/build"
}

# free_port [N]: a port (P .. P+N-1) for a peer the test starts, reserved against the
# tests running beside this one until this shell exits (shared with tests/conformance).
. scripts/free_port.sh

# pick_port VAR [N]: sets VAR to a free port (free_port's, P .. P+N-1 reserved for this
# run) in this shell, not in a subshell, so that a test keeps its ports in variables it
# declares; status 1 after a "not ok" line when none was free.
pick_port() {
	local try
	if try=$(free_port "${2:-1}"); then
		printf -v "$1" %s "$try"
		return 0
	fi
	not_ok "no free port in 20000-32767"
	return 1
}

# start_relay TARGET: a TCP relay to 127.0.0.1:TARGET that SIGUSR1 pauses and SIGUSR2
# resumes (pause_relay.py), on a free port; sets relay (its PID, added to pids) and
# relay_port. Returns 1 (with not_ok) when no port is free or it does not listen in 5 s.
start_relay() {
	pick_port relay_port || return 1
	# shellcheck disable=SC2154  # relay_port: set by pick_port
	python3 tests/integration/pause_relay.py "$relay_port" "$1" > "$work/relay.log" 2>&1 &
	relay=$!
	pids+=("$relay")
	for _ in $(seq 1 50); do
		grep -q listening "$work/relay.log" && return 0
		sleep 0.1
	done
	not_ok "pause_relay.py did not listen: $(tail -2 "$work/relay.log")"
	return 1
}
