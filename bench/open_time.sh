#!/usr/bin/env bash
# bench/open_time.sh: how long a database takes to open, and how much of its file that
# reads, by directory size (issue 29): minidir on a file with its record of password
# schemes (meta's "passwords", what minidir-import writes now), minidir on a copy whose
# record does not decode (the server then reads every entry once, as on a file made before
# the record, and as main did on every file), and slapd (back_mdb, slapadd -q of the same LDIF), side by side.
#
#   SCALE_DIR=/var/tmp/open bench/open_time.sh           # 10k and 1M entries
#   SCALE_DIR=/var/tmp/open SIZES="10000000" bench/open_time.sh
#   ROUNDS=3 SLAPD=no ...                               # more rounds; without slapd
#
# SCALE_DIR (required) keeps what is built per size, so that it is built once: the LDIF
# (bench/gen-ldif.sh, each user with a {SSHA} userPassword, one in 100 a {CRYPT}$6$ one),
# minidir's file, its copy with a bad record (mdb_copy, then the pair's value replaced
# with mdb_load -s meta: lmdb-utils) and slapd's directory. Delete a size's
# files to rebuild them.
#
# Per size and server, the median of ROUNDS (default 3) of:
#   start ms   exec to the first answer of a root DSE search (ldapsearch tried every 5 ms,
#              so a figure has about 5 ms of slack and includes one ldapsearch)
#   listen ms  minidir: exec to its "listening on" log line (the log's millisecond stamp)
#   start CPU  user+sys ms of the server at its first answer (/proc/PID/stat)
#   cache MiB  the database file's pages in the page cache after the first answer
#              (fincore), its cache dropped before each start (dd oflag=nocache)
# and for minidir, a reload: the same file copied to a new inode, its cache dropped,
# renamed over the served one, SIGHUP; then
#   reload ms  rename to the "database reloaded" log line
#   reload CPU the server's user+sys ms over that time
#   cache MiB  the new file's pages in the cache once reloaded
# The machine is shared (2 cores): `uptime` is printed with the figures. Needs build/
# (make all), slapd, ldap-utils, lmdb-utils and util-linux's fincore.
set -euo pipefail

BUILD=${BUILD:-build}
SCHEMA_DIR=$(cd "$(dirname "$0")/.." && pwd)/schema
SIZES=${SIZES:-10000 1000000}
ROUNDS=${ROUNDS:-3}
SLAPD_RUN=${SLAPD:-yes}
SLAPD_BIN=${SLAPD_BIN:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
SUFFIX=dc=example,dc=com
: "${SCALE_DIR:?set SCALE_DIR to a directory that keeps the generated files}"

cd "$(dirname "$0")/.."
. bench/lib.sh
need ldapsearch mdb_copy mdb_load fincore
[ -x "$BUILD/minidir" ] || die "$BUILD/minidir is missing (make all)"
[ "$SLAPD_RUN" = no ] || [ -x "$SLAPD_BIN" ] || die "$SLAPD_BIN is missing (SLAPD=no to leave it out)"
mkdir -p "$SCALE_DIR"
SCALE_DIR=$(cd "$SCALE_DIR" && pwd)
pids=()
bench_init open-time

now_ms() { date +%s%3N; }
cpu_ms() { # PID: user+sys of the process, in ms
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat"
}
log_ms() { # LOG WORDS: the millisecond stamp of LOG's first line with WORDS
	local stamp
	stamp=$(grep -m1 -F "$2" "$1" | cut -d' ' -f1)
	[ -n "$stamp" ] && date -d "$stamp" +%s%3N
}
answers() { timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$1" -b "" -s base > /dev/null 2>&1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "-" }'; }

# The size's files, built once into $SCALE_DIR.
build_size() {
	local n=$1 d=$SCALE_DIR/$1
	mkdir -p "$d"
	if [ ! -s "$d/data.ldif" ]; then
		bench/gen-ldif.sh "$n" "$SUFFIX" |
			awk '/^dn: uid=/ { u++ } { print } /^departmentNumber:/ {
				if (u % 100 == 0) print "userPassword: {CRYPT}$6$rounds=5000$saltsalt$" u
				else print "userPassword: {SSHA}7VvIAnNCns+jNqtQ7qvrLbH9TKGPOhxekrBNfg==" }' > "$d/data.ldif.tmp"
		mv "$d/data.ldif.tmp" "$d/data.ldif"
	fi
	for kind in record old; do
		printf '%s\n' "listen = 127.0.0.1:0" "database = $d/$kind.mdb" "schema_dir = $SCHEMA_DIR" \
			"suffix = $SUFFIX" "index = objectClass, uid, cn, mail, member, departmentNumber" > "$d/$kind.conf"
	done
	if [ ! -s "$d/record.mdb" ]; then
		"$BUILD/minidir-import" -q -f "$d/record.conf" "$d/data.ldif" || die "minidir-import failed"
	fi
	if [ ! -s "$d/old.mdb" ]; then
		# A copy whose record does not decode (version 0): the server reads every entry,
		# as it does on a file made before the record (the same scan; mdb_load, which could
		# leave the pair out, takes an hour on a 1M-entry file where mdb_copy takes seconds).
		rm -f "$d/old.mdb.tmp" "$d/old.mdb.tmp-lock"
		mdb_copy -n "$d/record.mdb" "$d/old.mdb.tmp"
		printf 'VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n %s\n 00\nDATA=END\n' \
			"$(printf %s "$DB_META_KEY" | od -An -tx1 | tr -d ' \n')" |
			mdb_load -n -s meta "$d/old.mdb.tmp"
		rm -f "$d/old.mdb.tmp-lock"
		chmod 600 "$d/old.mdb.tmp"
		mv "$d/old.mdb.tmp" "$d/old.mdb"
	fi
	if [ "$SLAPD_RUN" != no ] && [ ! -s "$d/slapd/data.mdb" ]; then
		rm -rf "$d/slapd"
		mkdir -p "$d/slapd"
		{
			for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
			echo "modulepath /usr/lib/ldap"
			echo "moduleload back_mdb"
			echo "pidfile $d/slapd.pid"
			echo "threads 2"
			echo "loglevel 0"
			echo "database mdb"
			echo "suffix \"$SUFFIX\""
			echo "directory $d/slapd"
			echo "maxsize 17179869184"
			echo "index objectClass,uid,cn,mail,member,departmentNumber eq"
		} > "$d/slapd.conf"
		timeout 3600 "$SLAPADD" -q -f "$d/slapd.conf" -l "$d/data.ldif" > "$d/slapadd.log" 2>&1 ||
			die "slapadd failed: $(tail -3 "$d/slapadd.log")"
	fi
}
DB_META_KEY=passwords

# One minidir start (and reload) on $d/KIND.mdb: prints "start listen cpu cache reload
# reload_cpu reload_cache".
minidir_round() {
	local d=$1 kind=$2 file=$1/$2.mdb log=$work/minidir.log t0 port pid t1 listen cpu cache
	drop_cache "$file"
	: > "$log"
	t0=$(now_ms)
	"$BUILD/minidir" -f "$d/$kind.conf" 2> "$log" &
	pid=$!
	pids+=("$pid")
	port=$(wait_port "$log" ldap "listening on" 600)
	[ -n "$port" ] || die "minidir did not start: $(tail -3 "$log")"
	until answers "$port"; do sleep 0.005; done
	t1=$(now_ms)
	cpu=$(cpu_ms "$pid")
	cache=$(cached_mib "$file")
	listen=$(($(log_ms "$log" "listening on") - t0))
	# A reload of the same data in a new file.
	cp "$file" "$file.new"
	drop_cache "$file.new"
	local c0 r0 r1 rcache
	c0=$(cpu_ms "$pid")
	r0=$(now_ms)
	mv "$file.new" "$file"
	kill -HUP "$pid"
	for _ in $(seq 1 12000); do grep -q "database reloaded" "$log" && break; sleep 0.005; done
	r1=$(log_ms "$log" "database reloaded") || die "no reload: $(tail -3 "$log")"
	rcache=$(cached_mib "$file")
	echo "$((t1 - t0)) $listen $cpu $cache $((r1 - r0)) $(($(cpu_ms "$pid") - c0)) $rcache"
	stop_pid "$pid" || true
}

slapd_round() {
	local d=$1 file=$1/slapd/data.mdb t0 pid t1 cpu cache
	sport=$(free_port)
	drop_cache "$file"
	rm -f "$d/slapd.pid"
	t0=$(now_ms)
	"$SLAPD_BIN" -d 0 -f "$d/slapd.conf" -h "ldap://127.0.0.1:$sport/" 2> "$work/slapd.log" &
	pid=$!
	pids+=("$pid")
	until answers "$sport"; do
		kill -0 "$pid" 2> /dev/null || die "slapd did not start: $(tail -3 "$work/slapd.log")"
		sleep 0.005
	done
	t1=$(now_ms)
	cpu=$(cpu_ms "$pid")
	cache=$(cached_mib "$file")
	echo "$((t1 - t0)) - $cpu $cache - - -"
	stop_pid "$pid" || true
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Medians of each column of the rounds' lines.
medians() {
	local f=$1 out="" i
	for i in 1 2 3 4 5 6 7; do
		out="$out $(awk -v i=$i '$i != "-" { print $i }' "$f" | median)"
	done
	echo "$out"
}

printf '%-10s %-22s %8s %9s %10s %9s %9s %10s %9s\n' entries server "start ms" "listen ms" \
	"start CPU" "cache MiB" "reload ms" "reload CPU" "cache MiB"
for n in $SIZES; do
	build_size "$n"
	d=$SCALE_DIR/$n
	size=$(du -m "$d/record.mdb" | cut -f1)
	rows=(record old)
	[ "$SLAPD_RUN" = no ] || rows+=(slapd)
	for r in "${rows[@]}"; do : > "$work/$r.rounds"; done
	for _ in $(seq 1 "$ROUNDS"); do # alternated, so that the machine's moods fall on each
		for r in "${rows[@]}"; do
			case $r in
			slapd) slapd_round "$d" >> "$work/$r.rounds" ;;
			*) minidir_round "$d" "$r" >> "$work/$r.rounds" ;;
			esac
		done
	done
	for r in "${rows[@]}"; do
		case $r in
		record) name="minidir (record)" ;;
		old) name="minidir (scan)" ;;
		slapd) name="slapd (back_mdb)" ;;
		esac
		# shellcheck disable=SC2046,SC2183  # the seven medians, one word each
		printf '%-10s %-22s %8s %9s %10s %9s %9s %10s %9s\n' "$n" "$name" $(medians "$work/$r.rounds")
	done
	echo "  ($n entries: minidir's file $size MiB; medians of $ROUNDS rounds)"
done
uptime
