#!/usr/bin/env bash
# bench/import.sh: minidir-import beside OpenLDAP's slapadd -q (Debian's slapd, back_mdb)
# on the same LDIF, back to back in one run (what `make bench` runs after bench/run.sh).
#
#   bench/import.sh                  # 100k and 1M entries
#   SIZES="20000 100000" bench/import.sh
#   ROUNDS=2 bench/import.sh         # every size imported twice by each tool, the order
#                                    # alternated (odd rounds slapadd first)
#   ENTRY_BYTES=600 bench/import.sh  # entries padded to about 600 bytes (gen-ldif.sh)
#
# Data: bench/gen-ldif.sh N dc=example,dc=com ENTRY_BYTES (default: no padding, about 300
# bytes an entry). Both get equality indexes on objectClass, uid, cn, mail, member and
# departmentNumber (as bench/run.sh); slapd its default tool-threads (1) and maxsize 16 GiB;
# minidir-import its default threads.
#
# slapadd -q does not sync its database to the disk (back_mdb's quick mode); minidir-import
# syncs the new file before it renames it over the old one, so that a crash cannot leave a
# half-written database in its place. The "slapadd -q + fsync" column adds the time of
# `sync FILE` on slapd's data.mdb right after slapadd, for a like-for-like figure.
#
# Per import it prints wall seconds; CPU seconds (user+sys of the process, from the shell's
# `times`), so a CPU/wall ratio near 2 means both cores were busy; and the peak of RssAnon
# (anonymous memory) and VmRSS, sampled from /proc/PID/status every 50 ms. VmRSS includes
# the pages of the file-backed LMDB map the tool touched, which the kernel can drop at any
# time; RssAnon is the memory the process itself holds. The ratio column is slapadd's
# seconds over minidir-import's. Needs build/ (make all), slapd and its schema files
# (scripts/deps.sh bench). Work files go in a temporary directory removed at the end.
set -euo pipefail
# $BUILD, the tree's schema/ as $SCHEMA_DIR (slapd, where it runs, reads its
# /etc/ldap/schema), die, cpu_ms and $work (bench_init).
. "$(dirname "$0")/lib.sh"
SIZES=${SIZES:-100000 1000000}
ROUNDS=${ROUNDS:-1}
ENTRY_BYTES=${ENTRY_BYTES:-0}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
SUFFIX=dc=example,dc=com
INDEXES="objectClass uid cn mail member departmentNumber"

[ -x "$BUILD/minidir-import" ] || die "no $BUILD/minidir-import: run make first"
[ -x "$SLAPADD" ] || die "no $SLAPADD: scripts/deps.sh bench installs slapd"
bench_init import-bench

cat > "$work/minidir.conf" << EOF
listen = 127.0.0.1:0
database = $work/minidir.mdb
schema_dir = $SCHEMA_DIR
suffix = $SUFFIX
rootdn = cn=admin,$SUFFIX
index = ${INDEXES// /, }
EOF
{
	for schema in core cosine inetorgperson nis; do
		echo "include /etc/ldap/schema/$schema.schema"
	done
	printf 'modulepath /usr/lib/ldap\nmoduleload back_mdb\n'
	printf 'database mdb\nsuffix "%s"\nrootdn "cn=admin,%s"\n' "$SUFFIX" "$SUFFIX"
	printf 'directory %s\nmaxsize 17179869184\nindex %s eq\n' "$work/slapd" "${INDEXES// /,}"
} > "$work/slapd.conf"

# run_measured LOG CMD...: runs CMD, prints "wall_s cpu_s peak_rssanon_kb peak_vmrss_kb".
run_measured() {
	local log=$1 pid anon=0 rss=0 a r c0 c1 t0 t1 status=0
	shift
	cpu_ms
	c0=$CPU_MS
	t0=$(date +%s%N)
	"$@" > "$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2> /dev/null; do
		read -r a r < <(awk '/^RssAnon/ { a = $2 } /^VmRSS/ { r = $2 } END { print a + 0, r + 0 }' \
			"/proc/$pid/status" 2> /dev/null || echo "0 0")
		[ "$a" -gt "$anon" ] && anon=$a
		[ "$r" -gt "$rss" ] && rss=$r
		sleep 0.05
	done
	wait "$pid" || status=$?
	t1=$(date +%s%N)
	cpu_ms
	c1=$CPU_MS
	[ "$status" -eq 0 ] || die "$* failed ($status): $(tail -3 "$log")"
	awk -v w=$((t1 - t0)) -v c=$((c1 - c0)) -v a="$anon" -v r="$rss" \
		'BEGIN { printf "%.2f %.2f %d %d\n", w / 1e9, c / 1e3, a, r }'
}

echo "# bench/import.sh: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# slapd $(dpkg-query -W -f '${Version}' slapd 2> /dev/null || echo '?'), ENTRY_BYTES=$ENTRY_BYTES"
echo "| entries | LDIF MB | round (first) | slapadd -q s | slapadd -q + fsync s | slapadd CPU s | slapadd peak RssAnon MB | slapadd peak VmRSS MB | minidir-import s | minidir CPU s | minidir peak RssAnon MB | minidir peak VmRSS MB | slapadd / minidir | slapadd + fsync / minidir |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for n in $SIZES; do
	bench/gen-ldif.sh "$n" "$SUFFIX" "$ENTRY_BYTES" > "$work/data.ldif" || die "gen-ldif.sh failed"
	mb=$(du -m "$work/data.ldif" | cut -f1)
	for round in $(seq 1 "$ROUNDS"); do
		rm -rf "$work/slapd" "$work/minidir.mdb"
		mkdir -p "$work/slapd"
		# Odd rounds slapadd first, even rounds minidir-import first: what the first one
		# leaves the second (a page cache full of dirty pages, the LDIF read) changes sides.
		if [ $((round % 2)) = 0 ]; then
			read -r mw mc ma mr < <(run_measured "$work/import.log" \
				"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif")
			rm -f "$work/minidir.mdb"
		fi
		read -r sw sc sa sr < <(run_measured "$work/slapadd.log" \
			"$SLAPADD" -q -f "$work/slapd.conf" -l "$work/data.ldif")
		read -r fw _ < <(run_measured "$work/sync.log" sync "$work/slapd/data.mdb")
		rm -rf "$work/slapd"
		if [ $((round % 2)) = 1 ]; then
			read -r mw mc ma mr < <(run_measured "$work/import.log" \
				"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif")
			rm -f "$work/minidir.mdb"
		fi
		awk -v n="$n" -v mb="$mb" -v round="$round" -v sw="$sw" -v fw="$fw" -v sc="$sc" \
			-v sa="$sa" -v sr="$sr" -v mw="$mw" -v mc="$mc" -v ma="$ma" -v mr="$mr" 'BEGIN {
			printf "| %d | %d | %d (%s) | %.2f | %.2f | %.2f | %.0f | %.0f | %.2f | %.2f | %.0f | %.0f | %.2fx | %.2fx |\n",
				n, mb, round, round % 2 ? "slapadd" : "minidir", sw, sw + fw, sc, sa / 1024, sr / 1024, mw, mc, ma / 1024, mr / 1024,
				sw / mw, (sw + fw) / mw }'
	done
done
echo "# reproduce: SIZES=\"$SIZES\" ROUNDS=$ROUNDS ENTRY_BYTES=$ENTRY_BYTES bench/import.sh"
