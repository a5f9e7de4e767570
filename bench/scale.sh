#!/usr/bin/env bash
# bench/scale.sh: minidir and OpenLDAP's slapd on directories of 10k, 1M and 10M entries,
# side by side in one run: start-up time, reload time, the file's pages read at start,
# RssAnon after every entry was looked up once, and lookups/s with server CPU per lookup
# at 1 and 16 requests in flight. Never part of `make test`.
#
#   SCALE_DIR=/srv/scale bench/scale.sh                   # 10k, 1M and 10M entries
#   SCALE_DIR=/srv/scale SIZES="10000 1000000" bench/scale.sh
#   SCALE_DIR=... VARIANTS="default;no memo|memo_bytes = 0" bench/scale.sh
#   SCALE_DIR=... BUILD_ONLY=1 bench/scale.sh             # build the directories, measure nothing
#
# SCALE_DIR (required) keeps the directories between runs, built once per size under
# $SCALE_DIR/N: data.ldif (bench/gen-ldif.sh N), slapd/ (slapadd -q, back_mdb) and
# minidir.mdb (minidir-import), plus minidir.mdb.b, a copy that a reload renames in.
# minidir.mdb is made again when $SERVER_BUILD/minidir-import is not the binary that made
# it (its checksum is kept beside it): what the importer stores is what start-up reads.
# 10M entries take about 3 GB of LDIF, 7.7 GB for each minidir file and 8.5 GB for
# slapd's, and some 30 minutes to build on 2 cores (slapadd -q most of it).
#
# Both servers: equality indexes on objectClass, uid, cn, mail, member and
# departmentNumber (as bench/run.sh), 2 worker threads, logging off. The load is
# build/searchrate --engine lean, 8 connections, (uid=user.[0-(N-1)]) at random over the
# whole directory, one or 16 requests in flight a connection, ROUNDS rounds of SECS
# seconds, the order of the servers reversed every round. Server CPU is utime + stime of
# /proc/PID/stat over the rounds.
#
# Figures:
#   start ms     exec to the first answer of a lookup, with the database file's pages
#                dropped from the page cache first (dd oflag=nocache), so a start that
#                reads the file shows as time and as:
#   start MB     the file's pages in the page cache right after that first answer (fincore)
#   reload ms    minidir: minidir.mdb.b renamed over minidir.mdb (its pages dropped too)
#                and SIGHUP, to the "database reloaded" log line; slapd has no reload of a
#                new file ("-": a restart is its start-up)
#   RssAnon MB   the server's anonymous memory after a sweep that looked every entry up
#                once ((uid=user.[0:N-1]) sequential, 16 in flight), memos included; a
#                sweep stops after SWEEP_SECONDS (1800; 120 with MEMORY_MAX, where a server
#                that reads the disk for most lookups would take hours at 10M), and the
#                figure then says how far it got: "12.0 (351514 swept)"
#   1/16 in flight: lookups/s and server us per lookup, page cache warm (after the sweep)
#
# MEMORY_MAX=SIZE (2G, say): every server runs in a memory cgroup of that size, its page
# cache included, so that a file larger than SIZE is served from the disk as on a machine
# with less memory than the directory: cgroup v2 (memory.max of a child of the root,
# root needed; under systemd `systemd-run --scope -p MemoryMax=SIZE CMD` does the same) or
# v1 (memory.limit_in_bytes under /sys/fs/cgroup/memory). The file's pages are dropped
# before each start, so they are read, and charged, inside the cgroup.
#
# VARIANTS: minidir configurations measured, separated by ';', each "NAME|LINE|LINE...";
# the lines go at the end of its config (default: one, "minidir" with none).
# Needs make all and scripts/deps.sh bench (slapd).
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
SIZES=${SIZES:-10000 1000000 10000000}
ROUNDS=${ROUNDS:-2}
SECS=${SECONDS_PER_RUN:-5}
VARIANTS=${VARIANTS:-minidir}
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
INDEXES="objectClass uid cn mail member departmentNumber"
[ -n "${SCALE_DIR:-}" ] || die "set SCALE_DIR to a directory with room for the directories (see the header)"
mkdir -p "$SCALE_DIR" || die "cannot make $SCALE_DIR"
SCALE_DIR=$(cd "$SCALE_DIR" && pwd)
for b in minidir minidir-import searchrate; do
	[ -x "$SERVER_BUILD/$b" ] || [ -x "$BUILD/$b" ] || die "no $b: run make all"
done
need fincore dd sha256sum
[ -x "$SLAPD" ] && [ -x "$SLAPADD" ] || die "no slapd: scripts/deps.sh bench"
bench_init scale
hz=$(getconf CLK_TCK)
cg=
SWEEP_SECONDS=${SWEEP_SECONDS:-$([ -n "${MEMORY_MAX:-}" ] && echo 120 || echo 1800)}
if [ -n "${MEMORY_MAX:-}" ]; then
	if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		cg=/sys/fs/cgroup/minidir-scale.$$
		grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
			echo +memory > /sys/fs/cgroup/cgroup.subtree_control || die "cannot enable the memory controller"
		mkdir "$cg" && echo "$MEMORY_MAX" > "$cg/memory.max" || die "cannot make the cgroup $cg"
	elif [ -d /sys/fs/cgroup/memory ]; then
		cg=/sys/fs/cgroup/memory/minidir-scale.$$
		mkdir "$cg" && echo "$MEMORY_MAX" > "$cg/memory.limit_in_bytes" || die "cannot make the cgroup $cg"
	else
		die "MEMORY_MAX: no memory cgroup (neither /sys/fs/cgroup/cgroup.controllers nor /sys/fs/cgroup/memory)"
	fi
fi
# shellcheck disable=SC2317  # called by bench_cleanup
bench_cleanup_extra() { [ -z "$cg" ] || rmdir "$cg" 2> /dev/null || true; }
# in_cgroup CMD...: runs CMD (exec, so $! is its pid) inside $cg when MEMORY_MAX is set.
in_cgroup() {
	if [ -n "$cg" ]; then
		# shellcheck disable=SC2016  # $$ and $1 are the inner shell's
		exec sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
	else
		exec "$@"
	fi
}

# minidir_conf DIR CONF [LINE...]: a config for DIR's minidir.mdb, listening on $port (0:
# any).
minidir_conf() {
	local dir=$1 conf=$2
	shift 2
	printf '%s\n' "listen = 127.0.0.1:${port:-0}" "database = $dir/minidir.mdb" "schema_dir = $SCHEMA_DIR" \
		"suffix = $SUFFIX" "index = ${INDEXES// /, }" "threads = 2" "sizelimit = unlimited" "$@" > "$conf"
}
# slapd_conf DIR CONF: slapd's config for DIR/slapd, 2 threads, logging off.
slapd_conf() {
	{
		for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
		printf 'modulepath /usr/lib/ldap\nmoduleload back_mdb\nthreads 2\nloglevel 0\n'
		printf 'database mdb\nsuffix "%s"\ndirectory %s\nmaxsize 68719476736\nindex %s eq\n' \
			"$SUFFIX" "$1/slapd" "${INDEXES// /,}"
	} > "$2"
}

# build_size N: $SCALE_DIR/N with its LDIF, slapd's database and minidir's two files.
build_size() {
	local n=$1 dir=$SCALE_DIR/$1 sum
	mkdir -p "$dir"
	if [ ! -s "$dir/data.ldif.done" ]; then
		echo "# $n: writing data.ldif" >&2
		bench/gen-ldif.sh "$n" "$SUFFIX" > "$dir/data.ldif" || die "gen-ldif.sh failed"
		echo "$n" > "$dir/data.ldif.done"
	fi
	if [ ! -s "$dir/slapd.done" ]; then
		echo "# $n: slapadd -q" >&2
		rm -rf "$dir/slapd" && mkdir -p "$dir/slapd"
		slapd_conf "$dir" "$work/slapd-build.conf"
		"$SLAPADD" -q -f "$work/slapd-build.conf" -l "$dir/data.ldif" > "$work/slapadd.log" 2>&1 ||
			die "slapadd failed: $(tail -3 "$work/slapadd.log")"
		echo "$n" > "$dir/slapd.done"
	fi
	sum=$(sha256sum < "$SERVER_BUILD/minidir-import" | cut -c1-16)
	if [ "$(cat "$dir/minidir.sum" 2> /dev/null)" != "$sum" ] || [ ! -s "$dir/minidir.mdb.b" ]; then
		echo "# $n: minidir-import (a new build of it)" >&2
		rm -f "$dir/minidir.sum" "$dir/minidir.mdb" "$dir/minidir.mdb.b"
		minidir_conf "$dir" "$work/import.conf"
		"$SERVER_BUILD/minidir-import" -q -f "$work/import.conf" "$dir/data.ldif" || die "minidir-import failed"
		cp --sparse=always "$dir/minidir.mdb" "$dir/minidir.mdb.b"
		chmod 600 "$dir/minidir.mdb.b"
		echo "$sum" > "$dir/minidir.sum"
	fi
}

cached_mb() { fincore --bytes --noheadings --output RES "$1" | awk '{ printf "%.1f", $1 / 1048576 }'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
rss_anon_mb() { awk '/^RssAnon/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }
# first_answer PORT: waits (up to 10 minutes) for an answer to a lookup from $pid; fails
# at once if $pid has exited.
first_answer() {
	for _ in $(seq 1 60000); do
		timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$1" -b "$SUFFIX" "(uid=user.0)" dn > /dev/null 2>&1 && return 0
		kill -0 "$pid" 2> /dev/null || return 1
		sleep 0.01
	done
	return 1
}

# start_minidir DIR VARIANT: starts minidir on DIR's file (its cache dropped); sets
# $pid, $port, $start_ms and $start_mb. Its port is drawn at random, as slapd's is, so that
# both are timed alike: first_answer's lookups from the start, not a poll of the log first
# (every 50 ms) and then the lookups.
start_minidir() {
	local dir=$1 t0 lines
	IFS='|' read -r -a lines <<< "$2"
	port=$((20000 + RANDOM % 20000))
	minidir_conf "$dir" "$work/minidir.conf" "${lines[@]:1}"
	drop_cache "$dir/minidir.mdb"
	t0=$(now_ms)
	(in_cgroup "$SERVER_BUILD/minidir" -f "$work/minidir.conf") 2> "$work/minidir.log" &
	pid=$!
	pids+=("$pid")
	first_answer "$port" || die "minidir did not answer: $(tail -3 "$work/minidir.log")"
	start_ms=$(($(now_ms) - t0))
	start_mb=$(cached_mib "$dir/minidir.mdb")
}
# start_slapd DIR: as start_minidir, for slapd on DIR/slapd (a port drawn at random).
start_slapd() {
	local dir=$1 t0
	slapd_conf "$dir" "$work/slapd.conf"
	drop_cache "$dir/slapd/data.mdb"
	port=$((20000 + RANDOM % 20000))
	t0=$(now_ms)
	(in_cgroup "$SLAPD" -d 0 -f "$work/slapd.conf" -h "ldap://127.0.0.1:$port/") 2> "$work/slapd.log" &
	pid=$!
	pids+=("$pid")
	first_answer "$port" || die "slapd did not answer: $(tail -3 "$work/slapd.log")"
	start_ms=$(($(now_ms) - t0))
	start_mb=$(cached_mib "$dir/slapd/data.mdb")
}
# reload_minidir DIR: renames minidir.mdb.b over minidir.mdb (keeping the old file as .b)
# and sends SIGHUP; sets $reload_ms.
reload_minidir() {
	local dir=$1 t0 before
	before=$(grep -c "database reloaded" "$work/minidir.log")
	drop_cache "$dir/minidir.mdb.b"
	ln "$dir/minidir.mdb" "$dir/minidir.mdb.a"
	t0=$(now_ms)
	mv "$dir/minidir.mdb.b" "$dir/minidir.mdb"
	kill -HUP "$pid"
	for _ in $(seq 1 60000); do
		[ "$(grep -c "database reloaded" "$work/minidir.log")" -gt "$before" ] && break
		sleep 0.005
	done
	reload_ms=$(($(now_ms) - t0))
	mv "$dir/minidir.mdb.a" "$dir/minidir.mdb.b"
	grep -q "database reloaded" "$work/minidir.log" || die "minidir did not reload: $(tail -3 "$work/minidir.log")"
}
# load PORT N INFLIGHT FILTER SECS: one searchrate run; sets $ops.
load() {
	local out
	out=$(timeout $(($5 * 2 + 60)) "$BUILD/searchrate" --engine lean -p "$1" -b "$SUFFIX" -f "$4" \
		-t 2 --numConnections 8 -a -O "$3" -i "$5" -I 1 2>&1)
	ops=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' <<< "$out")
	[ -n "$ops" ] || die "searchrate failed: $out"
}
# sweep PORT N: looks every entry up once, in order ((uid=user.[0:N-1]), shared by the
# connections), 16 in flight: searchrate runs in 1 s intervals until the rows add up to N
# searches (then SIGINT), SWEEP_SECONDS at most; sets $swept to the searches done.
sweep() {
	local sr done=0
	timeout "$SWEEP_SECONDS" "$BUILD/searchrate" --engine lean -p "$1" -b "$SUFFIX" -f "(uid=user.[0:$(($2 - 1))])" \
		-t 2 --numConnections 8 -a -O 16 -i 1 -c > "$work/sweep.csv" 2>&1 &
	sr=$!
	pids+=("$sr")
	while kill -0 "$sr" 2> /dev/null; do
		done=$(awk -F, '$1 ~ /^[0-9.]+$/ { s += $1 } END { printf "%d", s }' "$work/sweep.csv")
		[ "$done" -ge "$2" ] && break
		sleep 0.2
	done
	kill -INT "$sr" 2> /dev/null
	wait "$sr" 2> /dev/null
	forget "$sr"
	done=$(awk -F, '$1 ~ /^[0-9.]+$/ { s += $1 } END { printf "%d", s }' "$work/sweep.csv")
	[ "$done" -gt 0 ] || die "sweep: no lookup answered: $(tail -3 "$work/sweep.csv")"
	swept=$done
}

if [ -n "${BUILD_ONLY:-}" ]; then
	for n in $SIZES; do build_size "$n"; done
	exit 0
fi
echo "# bench/scale.sh: $(nproc) cores, $(free -g | awk '/^Mem/ { print $2 }') GiB, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2> /dev/null || echo '?')"
echo "# slapd $(dpkg-query -W -f '${Version}' slapd 2> /dev/null || echo '?'); memory cgroup: ${MEMORY_MAX:-none}; $ROUNDS rounds of $SECS s, orders alternated; uptime:$(uptime | sed 's/.*load/ load/')"
printf '| entries | round | server | start ms | start MB read | reload ms | RssAnon MB after sweep | lookups/s 1 in flight | us/lookup 1 | lookups/s 16 in flight | us/lookup 16 |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
IFS=';' read -r -a variants <<< "$VARIANTS"
servers=("${variants[@]}" slapd)
# One server at a time (two files of 10M entries would not both stay in the page cache):
# started, reloaded, swept, loaded at 1 and 16 in flight, stopped; the order of the servers
# reversed every round.
for n in $SIZES; do
	build_size "$n"
	dir=$SCALE_DIR/$n
	order=("${servers[@]}")
	for round in $(seq 1 "$ROUNDS"); do
		for s in "${order[@]}"; do
			name=${s%%|*} reload_ms=-
			if [ "$name" = slapd ]; then start_slapd "$dir"; else start_minidir "$dir" "$s"; fi
			[ "$name" = slapd ] || reload_minidir "$dir"
			sweep "$port" "$n"
			rss=$(rss_anon_mb "$pid")
			[ "$swept" -ge "$n" ] || rss="$rss ($swept swept)"
			row=()
			for inflight in 1 16; do
				c0=$(cpu_ticks "$pid")
				load "$port" "$n" "$inflight" "(uid=user.[0-$((n - 1))])" "$SECS"
				c1=$(cpu_ticks "$pid")
				row+=("$(awk -v o="$ops" -v t=$((c1 - c0)) -v secs="$SECS" -v hz="$hz" \
					'BEGIN { printf "%.0f | %.2f", o / secs, t * 1e6 / hz / o }')")
			done
			echo "| $n | $round | $name | $start_ms | $start_mb | $reload_ms | $rss | ${row[0]} | ${row[1]} |"
			stop_pid "$pid"
		done
		mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
	done
done
echo "# reproduce: SCALE_DIR=$SCALE_DIR SIZES=\"$SIZES\" ROUNDS=$ROUNDS SECONDS_PER_RUN=$SECS VARIANTS=\"$VARIANTS\" MEMORY_MAX=${MEMORY_MAX:-} SWEEP_SECONDS=$SWEEP_SECONDS bench/scale.sh"
