#!/usr/bin/env bash
# bench/instructions.sh: user-space instructions per 1-entry lookup, counted by
# valgrind's callgrind, for minidir (batch policy, one worker) and for bench/floor's
# canned responder beside it. Instruction counts repeat on a busy machine where
# timings do not, so this is the figure to compare before and after a change to
# the hot path (the kernel's share is not in it: see bench/floor.sh for CPU time).
# Counting starts after start-up and a warm-up that looks up every entry once in
# order (2 s, or longer until one pass reached them all) (callgrind_control --zero) and stops when the load ends; the top functions of
# minidir's profile follow the table. Part of `make bench`.
#
#   bench/instructions.sh            # 2 x 3 s of load under callgrind each: ~1 minute
#   TOP=40 bench/instructions.sh     # more of the profile
#   TLS=1 bench/instructions.sh      # over TLS, server and client: bench/instructions_tls.sh
#   ENTRIES=100 bench/instructions.sh  # minidir alone, a 100-entry subtree search instead
#                                    # ((departmentNumber=7), indexed, as bench/run.sh's sub100):
#                                    # instructions per search and per entry sent
#   KEEP=1 bench/instructions.sh     # keeps minidir.cg.1 for callgrind_annotate --tree=caller
#   NOFLOOR=1 bench/instructions.sh  # minidir alone, without the canned responder's row
#   CONNS=1 bench/instructions.sh    # one connection instead of 8
#   DIRECTORY=1000000 DB=/big/db.mdb bench/instructions.sh
#                                    # lookups on a bigger directory (gen-ldif.sh's entries;
#                                    # DB: one imported already, used as is): past 10,000
#                                    # entries the warm-up is WARM_SECONDS (10) of random
#                                    # lookups, not a pass over every entry (too slow under
#                                    # callgrind), so the count includes first reads
#   REQUEST_PATH=1 bench/instructions.sh  # only what minidir's request path costs, not the
#                                    # event loop (bench/lib.sh's cg_instructions; what
#                                    # bench/perf_check.sh counts, with CONNS=1)
[ -z "${TLS:-}" ] || exec "$(dirname "$0")/instructions_tls.sh"
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
TOP=${TOP:-25}
ENTRIES=${ENTRIES:-1}
CONNS=${CONNS:-8}
DIRECTORY=${DIRECTORY:-10000}
last=$((DIRECTORY - 1))
case $ENTRIES in
1) filter="(uid=user.[0-$last])" warm_filter="(uid=user.[0:$last])" index=() ;;
100) filter='(departmentNumber=7)' index=("index = objectClass, uid, cn, mail, member, departmentNumber") ;;
*) die "ENTRIES is 1 or 100" ;;
esac
need valgrind callgrind_control callgrind_annotate ldapsearch
[ -x "$BUILD/bench/floor" ] || die "$BUILD/bench/floor is missing (make all)"
bench_init instructions

if [ -n "${DB:-}" ]; then
	[ -e "$DB" ] || die "$DB: no such database"
	printf '%s\n' "listen = 127.0.0.1:0" "database = $DB" "schema_dir = $SCHEMA_DIR" \
		"suffix = $SUFFIX" "threads = 1" "send_policy = batch" "${index[@]}" > "$work/minidir.conf"
else
	bench_directory "$DIRECTORY" "$work/minidir.conf" "threads = 1" "send_policy = batch" "${index[@]}"
fi

# count NAME PORT_PATTERN CMD...: runs CMD under callgrind, loads it with $CONNS connections
# of 1-entry lookups ((uid=user.N) from the suffix, as bench/floor.sh and bench/run.sh;
# one in flight each; with ENTRIES=100 the subtree search), prints "NAME searches instructions".
count() {
	local name=$1 pattern=$2 port='' vpid
	shift 2
	valgrind --tool=callgrind --callgrind-out-file="$work/$name.cg" "$@" > "$work/$name.log" 2>&1 &
	vpid=$!
	pids+=("$vpid")
	for _ in $(seq 1 600); do
		port=$(sed -n "$pattern" "$work/$name.log" | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	[ -n "$port" ] || die "$name did not start under valgrind: $(tail -3 "$work/$name.log")"
	# Warm-up: every entry looked up once (in order) before counting, as a server that has
	# run a while has; the counted load then measures lookups of entries read before.
	if [ -n "${warm_filter:-}" ] && [ "$DIRECTORY" -gt 10000 ]; then
		timeout 300 "$BUILD/searchrate" -p "$port" -b "$SUFFIX" -f "$filter" -t 1 --numConnections 8 \
			-a -O 1 -i "${WARM_SECONDS:-10}" -I 1 > "$work/$name.warm" 2>&1 || die "warm-up failed: $(tail -3 "$work/$name.warm")"
	elif [ -n "${warm_filter:-}" ]; then
		bench_warm "$port" "$DIRECTORY" "$work/$name.warm"
	else
		timeout 120 "$BUILD/searchrate" -p "$port" -b "$SUFFIX" -f "$filter" -t 1 --numConnections 8 \
			-a -O 1 -i 2 -I 1 > "$work/$name.warm" 2>&1 || die "warm-up failed: $(tail -3 "$work/$name.warm")"
	fi
	callgrind_control --zero "$vpid" > /dev/null 2>&1 || die "callgrind_control failed"
	timeout 120 "$BUILD/searchrate" -p "$port" -b "$SUFFIX" -f "$filter" \
		-t 1 --numConnections "$CONNS" -a -O 1 -i 3 -I 2 > "$work/$name.sr" 2>&1 || die "searchrate failed: $(tail -3 "$work/$name.sr")"
	callgrind_control --dump "$vpid" > /dev/null 2>&1 || die "callgrind_control failed"
	kill "$vpid" 2> /dev/null
	wait "$vpid" 2> /dev/null
	forget "$vpid"
	local searches instr
	searches=$(sed -n 's/^ *Total searches: *\([0-9]*\).*/\1/p' "$work/$name.sr")
	instr=$(cg_instructions "$work/$name.cg.1")
	[ -n "$searches" ] && [ "$searches" -gt 0 ] && [ -n "$instr" ] || die "$name: no figures ($work/$name.sr)"
	echo "$name $searches $instr"
}

m=$(count minidir 's#.*listening on ldap://127.0.0.1:\([0-9]*\)/.*#\1#p' "$SERVER_BUILD/minidir" -f "$work/minidir.conf")
if [ "$ENTRIES" = 1 ] && [ -n "${NOFLOOR:-}" ]; then # bench/perf_check.sh: minidir's row alone
	read -r _ ms mi <<< "$m"
	echo "user-space instructions per 1-entry lookup (callgrind; $CONNS connections, 1 in flight each)"
	printf '%-10s %10s %14s %12s\n' server lookups instructions "per lookup"
	printf '%-10s %10d %14d %12d\n' minidir "$ms" "$mi" $((mi / ms))
elif [ "$ENTRIES" = 1 ]; then
	bytes=282 # about the size of minidir's answer, as bench/floor.sh measures it
	f=$(count floor 's/^listening on \([0-9]*\).*/\1/p' "$BUILD/bench/floor" 0 1 "$bytes")
	echo "user-space instructions per 1-entry lookup (callgrind; $CONNS connections, 1 in flight each)"
	printf '%-10s %10s %14s %12s\n' server lookups instructions "per lookup"
	for row in "$m" "$f"; do
		read -r name searches instr <<< "$row"
		printf '%-10s %10d %14d %12d\n' "$name" "$searches" "$instr" $((instr / searches))
	done
	read -r _ ms mi <<< "$m"
	read -r _ fs finstr <<< "$f"
	awk -v a="$((mi / ms))" -v b="$((finstr / fs))" 'BEGIN { printf "minidir/floor: %.1fx the instructions per lookup\n", a / b }'
else
	read -r _ ms mi <<< "$m"
	echo "user-space instructions per ${ENTRIES}-entry search $filter (callgrind; $CONNS connections, 1 in flight each)"
	printf '%-10s %10s %14s %12s %12s\n' server searches instructions "per search" "per entry"
	printf '%-10s %10d %14d %12d %12d\n' minidir "$ms" "$mi" $((mi / ms)) $((mi / ms / ENTRIES))
fi
echo
echo "minidir's top functions (self instructions, share of the total):"
callgrind_annotate --threshold=100 "$work/minidir.cg.1" 2> /dev/null | sed -n '/file:function/,$p' |
	grep -v -e 'clone.S:clone' -e 'pthread_create.c:start_thread' | grep '%)' | head -n "$TOP" | cut -c1-120
