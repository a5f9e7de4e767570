#!/usr/bin/env bash
# bench/import_threads.sh: where minidir-import's time goes, thread by thread: how many
# cores it used, and how long its writer (the main thread, which stores every record in
# the one LMDB transaction) and its parsing threads ran and waited. For A/B runs of
# builds, side by side in one run, the order alternated round by round.
#
#   bench/import_threads.sh                          # build/minidir-import, 1M entries
#   BINS="build/minidir-import /tmp/b/minidir-import" ROUNDS=3 bench/import_threads.sh
#   SIZE=10000000 bench/import_threads.sh            # about 3 GB of LDIF in the temp dir
#   LDIF=/data/dir.ldif bench/import_threads.sh      # an existing file (suffix dc=example,dc=com)
#   JOBS=4 bench/import_threads.sh                   # minidir-import -j 4
#   DB_DIR=/dev/shm bench/import_threads.sh          # the database on tmpfs: no writeback,
#                                                    # so what is left is the CPU's work
#
# Before each import the script syncs, drops the page cache when it may (root), and reads
# the LDIF once, so that no import inherits the previous one's dirty pages or starts with
# a cold file. Each thread's CPU time (utime+stime) and the time it waited runnable for a
# core (/proc/PID/task/TID/schedstat) are sampled every 50 ms; a thread's last 50 ms can
# be missed. "cores used" is the process's CPU over wall time (from the shell's `times`).
# "Other threads" are the parsers and the one that populates the file's pages ahead of the
# writer (ldif/import_prefault.h). A writer busy nearly all the wall time, with the others
# waiting, means the writer is the bound; a writer waiting runnable means the others took
# the cores it needed. "Writer alone at the end" is the time from the last sample that saw
# another thread to the end: the commit and the sync to disk, which no core can share.
# Indexes as bench/import.sh's. Needs build/ (make all); no slapd.
. "$(dirname "$0")/lib.sh"

BINS=${BINS:-$BUILD/minidir-import}
SIZE=${SIZE:-1000000}
ROUNDS=${ROUNDS:-2}
JOBS=${JOBS:-2}
LDIF=${LDIF:-}
DB_DIR=${DB_DIR:-}
for b in $BINS; do [ -x "$b" ] || die "no $b: run make first"; done
bench_init import-threads
db=$work/minidir.mdb
if [ -n "$DB_DIR" ]; then
	[ -d "$DB_DIR" ] && [ -w "$DB_DIR" ] || die "DB_DIR=$DB_DIR is not a writable directory"
	db=$DB_DIR/minidir-import-threads.$$.mdb
	bench_cleanup_extra() { rm -f "$db" "$db-lock"; }
fi

cat > "$work/minidir.conf" << EOF
listen = 127.0.0.1:0
database = $db
schema_dir = $SCHEMA_DIR
suffix = $SUFFIX
rootdn = cn=admin,$SUFFIX
index = objectClass, uid, cn, mail, member, departmentNumber
EOF
if [ -z "$LDIF" ]; then
	LDIF=$work/data.ldif
	bench/gen-ldif.sh "$SIZE" "$SUFFIX" > "$LDIF" || die "gen-ldif.sh failed"
fi
[ -r "$LDIF" ] || die "cannot read $LDIF"
entries=$(grep -c '^dn:' "$LDIF")

tick=$(getconf CLK_TCK)
# measure BIN ROUND: one import; prints the table's row.
measure() {
	local bin=$1 round=$2 pid anon=0 a key t c0 c1 t0 t1 status=0 id fields q f ntask multi
	local -A run wait
	rm -f "$db"
	sync
	if [ -w /proc/sys/vm/drop_caches ]; then echo 3 > /proc/sys/vm/drop_caches; fi
	cat "$LDIF" > /dev/null
	cpu_ms
	c0=$CPU_MS
	t0=$(date +%s%N)
	"$bin" -q -j "$JOBS" -f "$work/minidir.conf" "$LDIF" > "$work/import.log" 2>&1 &
	pid=$!
	# The loop reads with the shell's builtins only: the CPU of the commands it would start
	# would count in `times` beside the import's (sleep's is about 1 ms a second).
	while kill -0 "$pid" 2> /dev/null; do
		while read -r key a _; do
			[ "$key" = RssAnon: ] && [ "$a" -gt "$anon" ] && anon=$a
		done < "/proc/$pid/status" 2> /dev/null
		ntask=0
		for t in /proc/"$pid"/task/*; do
			id=${t##*/}
			ntask=$((ntask + 1))
			# (in braces: a thread gone since the glob fails the redirection itself)
			{ read -r fields < "$t/stat"; } 2> /dev/null || continue
			# Fields after "(comm) ": state is the 1st, utime the 12th, stime the 13th.
			read -r -a f <<< "${fields##*) }"
			run[$id]=$((f[11] + f[12]))
			{ read -r _ q _ < "$t/schedstat"; } 2> /dev/null || continue
			wait[$id]=$q
		done
		[ "$ntask" -gt 1 ] && multi=$EPOCHREALTIME
		sleep 0.05
	done
	wait "$pid" || status=$?
	local end=$EPOCHREALTIME
	t1=$(date +%s%N)
	cpu_ms
	c1=$CPU_MS
	[ "$status" -eq 0 ] || die "$bin failed ($status): $(tail -3 "$work/import.log")"
	local parsers=0 pwait=0 n=0
	for id in "${!run[@]}"; do
		[ "$id" = "$pid" ] && continue
		parsers=$((parsers + run[$id]))
		[ "${wait[$id]:-0}" -gt "$pwait" ] && pwait=${wait[$id]:-0}
		n=$((n + 1))
	done
	awk -v bin="$bin" -v round="$round" -v w=$((t1 - t0)) -v c=$((c1 - c0)) \
		-v wr="${run[$pid]:-0}" -v ww="${wait[$pid]:-0}" -v p="$parsers" -v n="$n" \
		-v pw="$pwait" -v a="$anon" -v tick="$tick" -v m="${multi:-0}" -v e="$end" 'BEGIN {
		# the writer alone at the end (the commit and the sync): from the last sample that
		# saw another thread to the end of the import
		alone = m > 0 ? e - m : 0
		printf "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %d: %.2f | %.2f | %.2f | %.1f |\n",
			bin, round, w / 1e9, c / 1e3, c / 1e3 / (w / 1e9), wr / tick, ww / 1e9,
			n, p / tick, pw / 1e9, alone, a / 1024 }'
}

echo "# bench/import_threads.sh: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# $entries entries from $LDIF, -j $JOBS, the database in $(dirname "$db") ($(stat -f -c %T "$(dirname "$db")"))"
echo "| minidir-import | round | wall s | CPU s | cores used | writer CPU s | writer waiting runnable s | other threads: CPU s | one's most waiting runnable s | writer alone at the end s | peak RssAnon MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
read -r -a bins <<< "$BINS"
for round in $(seq 1 "$ROUNDS"); do
	order=("${bins[@]}")
	if [ $((round % 2)) = 0 ]; then
		order=()
		for ((i = ${#bins[@]} - 1; i >= 0; i--)); do order+=("${bins[$i]}"); done
	fi
	for b in "${order[@]}"; do measure "$b" "$round"; done
done
if [ "$LDIF" = "$work/data.ldif" ]; then src="SIZE=$SIZE"; else src="LDIF=$LDIF"; fi
echo "# reproduce: BINS=\"$BINS\" $src ROUNDS=$ROUNDS JOBS=$JOBS${DB_DIR:+ DB_DIR=$DB_DIR} bench/import_threads.sh"
