#!/usr/bin/env bash
# database_readahead: the database file is mapped with the kernel's read-ahead (on) or
# without it (off: LMDB's MDB_NORDAHEAD, madvise MADV_RANDOM, which /proc/PID/smaps shows
# as the "rr" flag of the file's mapping), and auto picks off when the file is larger than
# half of the memory the server may use: checked in a memory cgroup made for the test
# (root; cgroup v2 or v1), once smaller and once larger than twice the file. Each choice is
# logged with why, kept across a reload, and answers lookups. A bad value is refused with
# FILE:LINE. Client: ldapsearch. Servers: minidir on 127.0.0.1, stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
export LDAPNOINIT=1
use_work_dir readahead
SUFFIX=dc=example,dc=com
# 60,000 entries make a file of about 36 MB, so the smaller cgroup below (1.5 times the
# file, 54 MB) still holds an AddressSanitizer server (its peak in a cgroup: 19 MB; the
# plain build's: 2.3 MB). With a 12 MB file that cgroup was 18 MB and SAN=1 was killed.
N=60000

bench/gen-ldif.sh "$N" "$SUFFIX" > "$work/data.ldif"
conf() { # conf NAME [LINE...]: $work/NAME.conf for $work/db.mdb
	local name=$1
	shift
	printf '%s\n' "listen = 127.0.0.1:0" "database = $work/db.mdb" "schema_dir = $SCHEMA_DIR" \
		"suffix = $SUFFIX" "index = uid" "$@" > "$work/$name.conf"
}
conf default
"$BUILD/minidir-import" -q -f "$work/default.conf" "$work/data.ldif" > "$work/import.log" 2>&1 ||
	{ not_ok "import: $(cat "$work/import.log")"; finish; }
mb=$(du -m --apparent-size "$work/db.mdb" | cut -f1)

# flags PID: the VmFlags of PID's mapping of the database file.
flags() {
	awk -v f="$work/db.mdb" '$0 ~ /^[0-9a-f]+-[0-9a-f]+ / { on = ($6 == f) } on && /^VmFlags:/ { print; exit }' "/proc/$1/smaps"
}
# check NAME WANT(on|off) LOG-WORDS: the server of $NAME.conf ($pid) logged "read-ahead
# WANT (WORDS", maps the file with or without "rr", and finds an entry.
check() {
	local name=$1 want=$2 words=$3 f
	if grep -qF "read-ahead $want ($words" "$work/$name.log"; then
		ok "$name: read-ahead $want ($words...)"
	else
		not_ok "$name: no \"read-ahead $want ($words\" line: $(grep read-ahead "$work/$name.log")"
	fi
	f=$(flags "$pid")
	if [ -z "$f" ]; then
		not_ok "$name: no mapping of $work/db.mdb in /proc/$pid/smaps"
	elif [ "$want" = off ] && grep -qw rr <<< "$f"; then
		ok "$name: the file is mapped for random reads (rr)"
	elif [ "$want" = on ] && ! grep -qw rr <<< "$f"; then
		ok "$name: the file is mapped with read-ahead (no rr)"
	else
		not_ok "$name: read-ahead $want but the mapping's $f"
	fi
	if ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "$SUFFIX" "(uid=user.$((N - 1)))" dn |
		grep -q "^dn: uid=user.$((N - 1)),"; then
		ok "$name: a lookup is answered"
	else
		not_ok "$name: the lookup was not answered"
	fi
}
# run NAME WANT WORDS [CGROUP]: starts minidir on NAME.conf (inside CGROUP if given), checks.
run() {
	local name=$1 want=$2 words=$3 cg=${4:-}
	if [ -n "$cg" ]; then
		: > "$work/$name.log"
		# shellcheck disable=SC2016  # $$ and $1 are the inner shell's
		sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
			"$BUILD/minidir" -f "$work/$name.conf" 2> "$work/$name.log" &
		pid=$!
		pids+=("$pid")
		port=$(wait_port "$work/$name.log")
	else
		start_minidir "$work/$name.conf" "$work/$name.log"
	fi
	if [ -z "$port" ]; then
		not_ok "$name: did not start: $(tail -3 "$work/$name.log")"
		return
	fi
	check "$name" "$want" "$words"
}
stop() {
	if stop_checked "$pid" "$work/$1.log"; then ok "$1: stopped cleanly"; else not_ok "$1: $stop_why"; fi
}

conf off "database_readahead = off"
run off off "database_readahead = off"
# A reload (a new import renamed in): the new file is opened the same way.
before=$(grep -c "read-ahead off" "$work/off.log")
"$BUILD/minidir-import" -q -f "$work/off.conf" "$work/data.ldif" > "$work/import.log" 2>&1 || not_ok "re-import: $(cat "$work/import.log")"
kill -HUP "$pid"
for _ in $(seq 1 100); do
	[ "$(grep -c "read-ahead off" "$work/off.log")" -gt "$before" ] && grep -q "database reloaded" "$work/off.log" && break
	sleep 0.1
done
if grep -q "database reloaded" "$work/off.log" && [ "$(grep -c "read-ahead off" "$work/off.log")" -gt "$before" ]; then
	ok "off: the reloaded file is opened without read-ahead too"
	check off off "database_readahead = off"
else
	not_ok "off: no reload with read-ahead off: $(grep -E "reload|read-ahead" "$work/off.log")"
fi
stop off

conf on "database_readahead = on"
run on on "database_readahead = on"
stop on

# auto outside a cgroup of the test's: a 36 MB file is within half of any machine's memory
# this test runs on (or of the cgroup it runs in, if that is smaller than 72 MB).
run default on "auto: the file ("
stop default

# auto inside a memory cgroup: larger than twice the file (on), then smaller (off).
cgroot=
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cgroot=/sys/fs/cgroup limit_file=memory.max
	grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null ||
		echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2> /dev/null || cgroot=
elif [ -d /sys/fs/cgroup/memory ]; then
	cgroot=/sys/fs/cgroup/memory limit_file=memory.limit_in_bytes
fi
if [ "$(id -u)" != 0 ]; then
	skip "needs root" "auto in a memory cgroup smaller and larger than twice the file"
elif [[ $BUILD == *tsan* ]]; then
	# ThreadSanitizer's shadow memory does not fit a cgroup sized to a 36 MB file (the
	# server is killed, 137); the plain and SAN=1 builds run these checks.
	skip "ThreadSanitizer build" "auto in a memory cgroup smaller and larger than twice the file"
elif [ -z "$cgroot" ]; then
	not_ok "auto in a memory cgroup: no memory cgroup here (neither cgroup v2's memory controller nor v1's /sys/fs/cgroup/memory)"
else
	for c in big:$((mb * 8)):on:within small:$((mb * 3 / 2)):off:larger; do
		IFS=: read -r cname cmb want words <<< "$c"
		cg=$cgroot/minidir-readahead-test.$$.$cname
		if mkdir "$cg" && echo "${cmb}M" > "$cg/$limit_file"; then
			cp "$work/default.conf" "$work/cg-$cname.conf"
			run "cg-$cname" "$want" "auto: the file (" "$cg"
			if grep -q "is $words than half of the $cmb.0 MB this process may use (the limit of its memory cgroup)" "$work/cg-$cname.log" ||
				grep -q "is $words half of the $cmb.0 MB this process may use (the limit of its memory cgroup)" "$work/cg-$cname.log"; then
				ok "cg-$cname: decided from the cgroup's limit, $cmb MB, for a $mb MB file"
			else
				not_ok "cg-$cname: not decided from the cgroup's $cmb MB: $(grep read-ahead "$work/cg-$cname.log")"
			fi
			stop "cg-$cname"
		else
			not_ok "cg-$cname: cannot make $cg"
		fi
		rmdir "$cg" 2> /dev/null
	done
fi

# A bad value: FILE:LINE and the names it takes.
conf bad "database_readahead = sometimes"
out=$("$BUILD/minidir" -t -f "$work/bad.conf" 2>&1)
if grep -q "$work/bad.conf:6: .*database_readahead" <<< "$out" && grep -q "auto" <<< "$out"; then
	ok "a bad database_readahead is refused at its line: $(head -1 <<< "$out")"
else
	not_ok "database_readahead = sometimes: $out"
fi
finish
