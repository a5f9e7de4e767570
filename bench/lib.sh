# shellcheck shell=bash
# Shared by the bench/*.sh scripts (sourced first, bash): set -u, the tree's root as
# the working directory, $BUILD and $SUFFIX, a temp dir ($work) and
# the processes the script started ($pids), stopped by PID at exit. A script that
# has more to undo at exit (network namespaces) defines bench_cleanup_extra.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
BUILD=${BUILD:-build}
# The minidir and minidir-import measured, where a script counts their work: another build's
# (bench/perf_check.sh sets it to a baseline's) beside this build's load tools.
SERVER_BUILD=${SERVER_BUILD:-$BUILD}
SUFFIX=${SUFFIX:-dc=example,dc=com} # bench/gen-ldif.sh's entries go below it
# The schema minidir reads (schema_dir in each config): the tree's own, schema/, never
# slapd's /etc/ldap/schema (slapd, where a benchmark runs it, reads its own).
SCHEMA_DIR=$PWD/schema
pids=()
# THREADS, SERVER_CPUS, CLIENT_CPUS: the server's workers and where it and the load run.
. bench/placement.sh

die() {
	echo "$(basename "$0"): $*" >&2
	exit 1
}
need() { for c in "$@"; do command -v "$c" > /dev/null 2>&1 || die "$c is missing (scripts/deps.sh bench)"; done; }

# bench_init NAME: $work, a temp dir removed at exit (kept with KEEP=1) with every
# process in $pids stopped.
bench_init() {
	work=$(mktemp -d "/tmp/minidir-$1.XXXXXX") || die "mktemp failed"
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}
bench_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 1 100); do kill -0 "$p" 2> /dev/null || break; sleep 0.05; done
		kill -KILL "$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	if declare -F bench_cleanup_extra > /dev/null; then bench_cleanup_extra; fi
	[ -n "${KEEP:-}" ] && { echo "kept $work" >&2; return; }
	rm -rf "$work"
}
# cpu_ms: this shell's children's user+sys time so far, in milliseconds (`times` runs in
# this shell, not in a command substitution, which would count only its own children).
# Sets CPU_MS; needs $work (bench_init).
cpu_ms() {
	times > "$work/times"
	# shellcheck disable=SC2034 # read by the scripts that source this file
	CPU_MS=$(awk 'NR == 2 {
		split($1, u, "m"); split($2, s, "m")
		printf "%d", (u[1] * 60 + u[2]) * 1000 + (s[1] * 60 + s[2]) * 1000 }' "$work/times")
}
# forget PID: drops an ended process from $pids (so its number, perhaps reused, is never
# signalled at exit).
forget() {
	local p keep=()
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
}
# stop_pid PID: SIGTERM, up to 10 s, then SIGKILL; then forgets it.
stop_pid() {
	kill -TERM "$1" 2> /dev/null
	for _ in $(seq 1 200); do kill -0 "$1" 2> /dev/null || break; sleep 0.05; done
	kill -KILL "$1" 2> /dev/null
	wait "$1" 2> /dev/null
	forget "$1"
}
# idle_hold NAME ARG...: starts $BUILD/bench/idleconns ARG... (output in $work/out, standard
# input a FIFO this shell holds open on descriptor 9) and waits, up to 2 minutes, for its
# "held N" line: the connections are made and idle. Sets $idle_pid; dies naming NAME if
# idleconns fails. idle_release: the line idleconns waits for, then its end (it has closed
# the connections, its "server-closed K" line in $work/out).
idle_hold() {
	local name=$1
	shift
	rm -f "$work/ctl" "$work/out"
	mkfifo "$work/ctl"
	timeout 300 "$BUILD/bench/idleconns" "$@" < "$work/ctl" > "$work/out" &
	idle_pid=$!
	exec 9> "$work/ctl"
	for _ in $(seq 1 1200); do
		grep -q '^held' "$work/out" 2> /dev/null && break
		kill -0 "$idle_pid" 2> /dev/null || break
		sleep 0.1
	done
	grep -q '^held' "$work/out" || die "$name: idleconns failed"
}
idle_release() {
	echo go >&9
	exec 9>&-
	wait "$idle_pid"
}
# bench_warm PORT N LOG: looks up (uid=user.0) .. (uid=user.N-1) once each, in order, over
# 8 connections of 16 in flight (searchrate's sequence is shared), so that the memos hold
# them as on a server that has run a while: 2 s, and a pass that did not reach all N (a
# busy machine; callgrind is slow; 10 million entries) is done again for twice as long, up
# to 256 s, as the sequence starts again at the first. searchrate's output in LOG.
bench_warm() {
	local secs warmed
	for secs in 2 4 8 16 32 64 128 256; do
		timeout $((secs + 120)) "$BUILD/searchrate" -p "$1" -b "$SUFFIX" -f "(uid=user.[0:$(($2 - 1))])" \
			-t 1 --numConnections 8 -a -O 16 -i "$secs" -I 1 > "$3" 2>&1 || die "warm-up failed: $(tail -3 "$3")"
		warmed=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' "$3")
		[ "${warmed:-0}" -ge "$2" ] && return
	done
	die "warm-up: $warmed of $2 entries looked up in 256 s"
}
# cg_instructions FILE: the instructions counted in callgrind's dump FILE: all of them, or
# with REQUEST_PATH=1 only those under minidir's conn_process_input (inclusive: reading a
# connection's bytes, decoding, the operations, the flush), leaving out the event loop's
# waits and timers, whose share per request moves with the machine's load (+-5% here on
# a busy machine with one connection).
cg_instructions() {
	if [ -n "${REQUEST_PATH:-}" ]; then
		callgrind_annotate --inclusive=yes --auto=no "$1" 2> /dev/null |
			awk '/:conn_process_input / { gsub(",", "", $1); s += $1 } END { print s + 0 }'
	else
		callgrind_annotate "$1" 2> /dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
	fi
}
# bench_directory N CONF [LINE...]: $work/data.ldif, N entries of bench/gen-ldif.sh under
# $SUFFIX, and the minidir config CONF (listen on any port, database $work/db.mdb, the
# suffix, then each LINE) with that LDIF imported.
bench_directory() {
	local n=$1 conf=$2
	shift 2
	bench/gen-ldif.sh "$n" "$SUFFIX" > "$work/data.ldif" || die "gen-ldif.sh failed"
	printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" "schema_dir = $SCHEMA_DIR" \
		"suffix = $SUFFIX" "$@" > "$conf"
	"$SERVER_BUILD/minidir-import" -q -f "$conf" "$work/data.ldif" || die "minidir-import failed"
}
# bench_slapd_import [LINE...]: $work/slapd.conf, a slapd with two threads, the core,
# cosine, inetorgperson and nis schemas, each global LINE (TLS files, say) and one back-mdb
# database for $SUFFIX in $work/slapd, into which $work/data.ldif is loaded with slapadd -q.
bench_slapd_import() {
	mkdir -p "$work/slapd"
	{
		for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
		echo "modulepath /usr/lib/ldap"
		echo "moduleload back_mdb"
		echo "pidfile $work/slapd.pid"
		for line in "$@"; do echo "$line"; done
		echo "threads 2"
		echo "loglevel 0"
		echo "database mdb"
		echo "suffix \"$SUFFIX\""
		echo "directory $work/slapd"
		echo "maxsize 1073741824"
	} > "$work/slapd.conf"
	timeout 120 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1 ||
		die "slapadd failed: $(tail -3 "$work/slapadd.log")"
}
# bench_slapd_start SECONDS URLS: slapd on $work/slapd.conf (bench_slapd_import), listening on
# URLS (space-separated), ended by timeout after SECONDS at the latest; waits, up to about 30 s,
# until it answers a root DSE search on ldap://127.0.0.1:$sport, and sets $spid from its pid file.
bench_slapd_start() {
	timeout -s TERM "$1" "$SLAPD" -d 0 -f "$work/slapd.conf" -h "$2" 2> "$work/slapd.log" &
	pids+=($!)
	for _ in $(seq 1 300); do
		# shellcheck disable=SC2154  # $sport is the caller's: the port it gave slapd in URLS
		[ -s "$work/slapd.pid" ] && timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$sport" -b "" -s base > /dev/null 2>&1 && break
		sleep 0.1
	done
	spid=$(cat "$work/slapd.pid" 2> /dev/null)
	[ -n "$spid" ] || die "slapd did not start: $(cat "$work/slapd.log")"
}
# drop_cache FILE: FILE's pages out of the page cache (GNU dd's nocache, whole file), so
# that the next read of them is from the disk. cached_mib FILE: how much of FILE the page
# cache holds now, in MiB (util-linux's fincore). For bench/open_time.sh and bench/scale.sh.
drop_cache() { dd of="$1" oflag=nocache conv=notrunc,fdatasync count=0 status=none 2> /dev/null; }
cached_mib() { fincore --bytes --noheadings --output RES "$1" | awk '{ printf "%.1f", $1 / 1048576 }'; }
# wait_port LOG [SCHEME]: the port minidir logged in LOG.
. scripts/wait_port.sh
