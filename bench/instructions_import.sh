#!/usr/bin/env bash
# bench/instructions_import.sh: user-space instructions per imported entry, counted by
# valgrind's callgrind over one whole minidir-import run (start-up and the final sync
# included, every thread) of N entries of bench/gen-ldif.sh, with the equality indexes
# bench/import.sh gives (objectClass, uid, cn, mail, member, departmentNumber). Instruction
# counts repeat on a busy machine where timings do not (bench/import.sh has the times).
#
#   bench/instructions_import.sh         # 20,000 entries: about 30 s under callgrind
#   N=100000 bench/instructions_import.sh
#   SERVER_BUILD=/path/build bench/instructions_import.sh   # another build's minidir-import
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
N=${N:-20000}
need valgrind callgrind_annotate
[ -x "$SERVER_BUILD/minidir-import" ] || die "$SERVER_BUILD/minidir-import is missing (make all)"
bench_init instructions-import
bench/gen-ldif.sh "$N" "$SUFFIX" > "$work/data.ldif" || die "gen-ldif.sh failed"
printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" "schema_dir = $SCHEMA_DIR" \
	"suffix = $SUFFIX" "index = objectClass, uid, cn, mail, member, departmentNumber" > "$work/minidir.conf"
timeout 1200 valgrind --tool=callgrind --callgrind-out-file="$work/import.cg" \
	"$SERVER_BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" > "$work/import.log" 2>&1 ||
	die "minidir-import under callgrind failed: $(tail -3 "$work/import.log")"
entries=$(grep -c '^dn: ' "$work/data.ldif")
instr=0
for f in "$work"/import.cg*; do # one file a thread, or one for all
	i=$(callgrind_annotate "$f" 2> /dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
	instr=$((instr + ${i:-0}))
done
[ "$instr" -gt 0 ] || die "no figures ($work)"
echo "user-space instructions per imported entry (callgrind; minidir-import of $entries entries, 6 indexes)"
printf '%-14s %10s %16s %12s\n' tool entries instructions "per entry"
printf '%-14s %10d %16d %12d\n' minidir-import "$entries" "$instr" $((instr / entries))
