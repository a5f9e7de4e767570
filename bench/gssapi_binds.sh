#!/usr/bin/env bash
# Lookups beside 100 GSSAPI binders (issue 51): do other clients' lookups stay served
# while many Kerberos binds are in flight, and what does a bind cost the server?
#
#   bench/gssapi_binds.sh            # ROUNDS rounds of three phases, then the strace runs
#
# An MIT KDC (tests/integration/krb5_kdc.sh, under the work dir: its replay cache too,
# KRB5RCACHEDIR), alice's ticket and the service ticket ldap/localhost fetched once (kvno),
# so every binder reads one credential cache and no bind asks the KDC. One minidir (threads =
# 2) on NUSERS entries of bench/gen-ldif.sh and alice, with sasl_keytab, sasl_host localhost
# and an authz_regexp mapping alice@EXAMPLE.COM to her entry. Each round runs three phases
# of SECS seconds, in turn (the order reversed every other round, A/B then B/A):
#   lookups  build/searchrate --engine lean, 4 connections, (uid=user.N) at random, RATE
#            lookups/s in all (0: as fast as it can)
#   simple   the same beside bench/saslbind.c with BINDERS threads, each a new connection,
#            a simple bind as alice and an unbind, back to back
#   gssapi   the same beside BINDERS threads of GSSAPI binds as alice (SECPROPS, default
#            maxssf=0: no security layer; "default": libldap's, privacy)
# Printed a row per round and phase: lookups/s and their p99, binds/s and their p50/p99,
# errors, the server's CPU (utime+stime of /proc/PID/stat across saslbind's counted window)
# as a share of one core, and its CPU per bind with the lookups' share taken off (the
# lookups counted times the CPU per lookup of that round's lookups-alone phase), the
# binders' own CPU, and the time the server's threads waited runnable for a core (the
# sum over its threads of /proc/PID/task/*/schedstat's second field, per second). Then one
# short run of each kind of binder alone (STRACE_SECS) with the server under strace -f -c:
# the system calls it made per bind (every bind saslbind began, warm-up included), the
# files it opened during GSSAPI binds, the threads that made the calls, the blocking file
# locks (F_OFD_SETLKW) taken per bind, and whether any fsync or fdatasync happened.
#
# Env: ROUNDS (2), SECS (10), RATE (2000), BINDERS (100), NUSERS (10000), SECPROPS
# (maxssf=0), STRACE_SECS (5; 0 skips the strace runs), BUILD, KEEP=1. About
# 30 + ROUNDS * 3 * (SECS + 5) seconds. Needs krb5-kdc, krb5-admin-server, krb5-user,
# libsasl2-modules-gssapi-mit, strace. Processes started here are stopped by PID.
. "$(dirname "$0")/lib.sh"
. scripts/free_port.sh
. tests/integration/krb5_kdc.sh
ROUNDS=${ROUNDS:-2}
SECS=${SECS:-10}
RATE=${RATE:-2000}
BINDERS=${BINDERS:-100}
NUSERS=${NUSERS:-10000}
SECPROPS=${SECPROPS:-maxssf=0}
STRACE_SECS=${STRACE_SECS:-5}
ALICE=uid=alice,ou=people,$SUFFIX
ALICE_PW=secret
ALICE_HASH='{SSHA}rdl+PB0MGZGrpb6QN3IWGMe8hL5iKyTs' # "secret", as bench/run.sh's users

# What krb5_kdc.sh asks of tests/integration/lib.sh, whose exit handling is a test's.
not_ok() { echo "$(basename "$0"): $*" >&2; }
pick_port() {
	local p
	p=$(free_port) || return 1
	printf -v "$1" %s "$p"
}
bench_cleanup_extra() { release_ports; }

for f in minidir minidir-import searchrate; do
	[ -x "$BUILD/$f" ] || die "$BUILD/$f is missing: run make"
done
need cc strace kvno
kdc_usable || die "$kdc_why"
bench_init gssapi-binds
unset LDAPNOINIT
export LDAPCONF=/dev/null LDAPRC=/dev/null

timeout 120 cc -O2 -o "$work/saslbind" bench/saslbind.c -lldap -llber -lpthread || die "cannot build bench/saslbind.c"
kdc_create || die "kdc_create failed"
# krb5_kdc.sh's clockskew of 1 s (for its expired-ticket case) fails a bind whose
# authenticator waited over a second to be read (so it did under strace): the default here
sed -i 's/^\tclockskew = 1$/\tclockskew = 300/' "$KRB5_CONFIG"
kdc_start || die "kdc_start failed"
kdc_kinit alice "$KDC_PW_alice" > /dev/null || die "kinit alice failed"
# the service ticket once: the binders then only read the cache
timeout 20 kvno "$KDC_SERVICE@$KDC_REALM" > "$work/kvno.out" 2>&1 || die "kvno: $(cat "$work/kvno.out")"

bench_directory "$NUSERS" "$work/minidir.conf" "threads = 2" "sasl_keytab = $kdc_keytab" \
	"sasl_host = localhost" "sasl_realm = $KDC_REALM" \
	"authz_regexp = \"^uid=([^,/@]+),cn=example\\.com,cn=gssapi,cn=auth\$\" \"uid=\$1,ou=people,$SUFFIX\""
printf 'dn: %s\nobjectClass: inetOrgPerson\nuid: alice\ncn: Alice\nsn: Alice\nuserPassword: %s\n' \
	"$ALICE" "$ALICE_HASH" > "$work/alice.ldif"
# minidir-import takes the whole directory: the generated entries and alice in one file
cat "$work/data.ldif" "$work/alice.ldif" > "$work/all.ldif"
rm -f "$work/db.mdb"
"$SERVER_BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/all.ldif" || die "minidir-import failed"
"$SERVER_BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
spid=$!
pids+=("$spid")
port=$(wait_port "$work/minidir.log")
[ -n "$port" ] || die "minidir did not start: $(tail -5 "$work/minidir.log")"
URI=ldap://localhost:$port
bench_warm "$port" "$NUSERS" "$work/warm.out"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$spid/stat"; }
# runq_ns: the server's threads' time runnable but waiting for a core, summed (schedstat)
runq_ns() { cat "/proc/$spid/task/"*/schedstat 2> /dev/null | awk '{ s += $2 } END { printf "%d", s }'; }
val() { sed -n "s|^ *$2: *\([0-9.][0-9.]*\).*|\1|p" "$1" | head -1; }
p99() { sed -n 's/^ *Latency ms:.* p99 \([0-9.]*\).*/\1/p' "$1" | head -1; }
# binders KIND WARMUP SECONDS OUT: saslbind with BINDERS threads of KIND (simple, gssapi) in
# the background, its output in OUT; sets $bpid.
binders() {
	local args=(-D "$ALICE" -w "$ALICE_PW")
	[ "$1" = gssapi ] && args=(-Y GSSAPI -O "$SECPROPS")
	timeout $(($2 + $3 + 120)) "$work/saslbind" -H "$URI" "${args[@]}" -n "$BINDERS" -W "$2" -d "$3" > "$4" 2> "$4.err" &
	bpid=$!
	pids+=("$bpid")
}
# wait_line FILE WORD SECONDS: until FILE has a line WORD (or $bpid ended); 1 if it never came.
wait_line() {
	for _ in $(seq 1 $(($3 * 20))); do
		grep -qx "$2" "$1" 2> /dev/null && return 0
		kill -0 "$bpid" 2> /dev/null || break
		sleep 0.05
	done
	grep -qx "$2" "$1" 2> /dev/null
}
# phase NAME OUT: one phase; lookups in OUT.sr, binders' summary in OUT.b; sets $cpu (server
# ticks across the window).
phase() {
	local c0 c1 q0
	rm -f "$2".*
	if [ "$1" != lookups ]; then
		binders "$1" 3 "$SECS" "$2.b"
		wait_line "$2.b" "measuring" 60 || die "$1 binders did not start: $(cat "$2.b.err")"
	fi
	c0=$(cpu_ticks)
	q0=$(runq_ns)
	timeout $((SECS + 60)) "$BUILD/searchrate" --engine lean -h 127.0.0.1 -p "$port" -b "$SUFFIX" \
		-f "(uid=user.[0-$((NUSERS - 1))])" -t 2 --numConnections 4 -r "$RATE" -i "$SECS" -I 1 > "$2.sr" 2>&1 ||
		die "searchrate failed: $(tail -3 "$2.sr")"
	if [ "$1" != lookups ]; then
		wait_line "$2.b" "done" $((SECS + 60)) || die "$1 binders did not end: $(cat "$2.b.err")"
	fi
	c1=$(cpu_ticks)
	cpu=$((c1 - c0))
	runq=$((($(runq_ns) - q0) / 1000000 / SECS))
	if [ "$1" != lookups ]; then
		wait "$bpid"
		forget "$bpid"
	fi
}

echo "# $(date -u '+%F %T') UTC, $(nproc) cores; load before: $(uptime | sed 's/.*load average/load average/')"
tick=$(getconf CLK_TCK)
declare -A ROW RUNQ
for r in $(seq 1 "$ROUNDS"); do
	order=(lookups simple gssapi)
	[ $((r % 2)) = 0 ] && order=(gssapi simple lookups)
	for p in "${order[@]}"; do
		phase "$p" "$work/r$r-$p"
		ROW[$r.$p]=$cpu
		RUNQ[$r.$p]=$runq
	done
	# the lookups' CPU per lookup when alone, in us, for this round
	la=$(val "$work/r$r-lookups.sr" "Total searches")
	us_lookup=$(awk -v c="${ROW[$r.lookups]}" -v n="$la" -v t="$tick" 'BEGIN { printf "%.2f", n ? c * 1e6 / t / n : 0 }')
	for p in lookups simple gssapi; do
		f=$work/r$r-$p
		lps=$(val "$f.sr" "Searches/sec")
		lp99=$(p99 "$f.sr")
		lerr=$(val "$f.sr" "Total errors")
		n=$(val "$f.sr" "Total searches")
		if [ "$p" = lookups ]; then
			b=(- - - - - -)
			per=-
		else
			b=("$(val "$f.b" "Binds/sec")" "$(sed -n 's/.*p50 \([0-9.]*\).*/\1/p' "$f.b")"
				"$(p99 "$f.b")" "$(val "$f.b" "Total errors")" "$(val "$f.b" "Total binds")"
				"$(sed -n 's/.*saslbind CPU: .* = \([0-9.]*\)% .*/\1/p' "$f.b")")
			per=$(awk -v c="${ROW[$r.$p]}" -v t="$tick" -v n="$n" -v u="$us_lookup" -v b="${b[4]}" \
				'BEGIN { printf "%.0f", b ? (c * 1e6 / t - n * u) / b : 0 }')
		fi
		core=$(awk -v c="${ROW[$r.$p]}" -v t="$tick" -v s="$SECS" 'BEGIN { printf "%.0f", c * 100 / t / s }')
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$p" "$lps" "$lp99" "$lerr" \
			"${b[0]}" "${b[1]}" "${b[2]}" "${b[3]}" "$core" "$per" "${b[5]}" "${RUNQ[$r.$p]}" >> "$work/table"
	done
done
echo
printf 'round\tphase\tlookups/s\tlookup_p99_ms\tlookup_err\tbinds/s\tbind_p50_ms\tbind_p99_ms\tbind_err\tserver_%%core\tserver_us/bind\tbinders_%%core\tserver_runq_ms/s\n'
cat "$work/table"
echo "(server_us/bind: the server's CPU across the window less the lookups' share, at the round's lookups-alone CPU per lookup; binders_%core: saslbind's own CPU, warm-up included;
	server_runq_ms/s: the server's threads' time runnable but waiting for a core, per second)"

if [ "$STRACE_SECS" != 0 ]; then
	echo
	printf 'binder\tbinds\tsyscalls/bind\topenat\tread\twrite\tpwrite64\tfsync\tfdatasync\n'
	for kind in gssapi simple; do
		# strace attaches first and detaches after the binders have all ended: every bind
		# they began (the count saslbind prints) is in its figures
		timeout -s INT $((STRACE_SECS + 90)) strace -f -C -qq -o "$work/strace-$kind" -p "$spid" &
		tpid=$!
		pids+=("$tpid")
		sleep 1
		binders "$kind" 1 "$STRACE_SECS" "$work/strace-$kind.b"
		wait "$bpid"
		forget "$bpid"
		sleep 0.5
		kill -INT "$tpid" 2> /dev/null
		wait "$tpid"
		forget "$tpid"
		nb=$(val "$work/strace-$kind.b" "Binds attempted")
		awk -v n="${nb:-0}" -v k="$kind" '
			$NF ~ /^[a-z_0-9]+$/ && $(NF - 1) ~ /^[0-9]+$/ && NF >= 5 { c[$NF] = $4 }
			$NF == "total" { tot = $4 }
			END {
				d = n ? n : 1
				printf "%s\t%d\t%.1f", k, n, tot / d
				split("openat read write pwrite64 fsync fdatasync", s, " ")
				for (i = 1; i <= 6; i++) printf "\t%.2f", c[s[i]] / d
				printf "\n"
			}' <(sed -n '/^% time/,$p' "$work/strace-$kind")
		# which threads made the calls (strace's first column, the thread id)
		awk '{ n[$1]++ } END { for (t in n) print t, n[t] }' "$work/strace-$kind" | while read -r t n; do
			[ -r "/proc/$spid/task/$t/comm" ] && printf '\t%s: %s calls in thread %s (%s)\n' "$kind" "$n" "$t" "$(cat "/proc/$spid/task/$t/comm")"
		done > "$work/threads-$kind"
		grep -o 'openat([^"]*"[^"]*"' "$work/strace-$kind" | sed 's/.*"\(.*\)"/\1/' | sort | uniq -c |
			sort -rn | head -8 | sed "s|$work|\$work|; s/^/\t$kind opened: /" > "$work/opened-$kind"
	done
	cat "$work"/threads-* "$work/opened-gssapi" "$work/opened-simple"
	echo "	gssapi: blocking file locks (F_OFD_SETLKW) per bind: $(awk -v n="$(val "$work/strace-gssapi.b" "Binds attempted")" \
		'/F_OFD_SETLKW, \{l_type=F_(RD|WR)LCK/ { c++ } END { printf "%.2f", n ? c / n : 0 }' "$work/strace-gssapi");" \
		"connects that failed per bind: $(awk -v n="$(val "$work/strace-gssapi.b" "Binds attempted")" \
			'/connect\(.*= -1/ { c++ } END { printf "%.2f", n ? c / n : 0 }' "$work/strace-gssapi")" \
		"($(grep -o 'connect([0-9]*, {sa_family=AF_UNIX, sun_path="[^"]*"' "$work/strace-gssapi" | sed 's/.*sun_path=//' | sort -u | head -3 | tr '\n' ' '))"
fi
echo
echo "errors and warnings in the server's log: $(grep -ci 'error\|warn\|fail' "$work/minidir.log")"
grep -i 'error\|warn\|fail' "$work/minidir.log" | sort | uniq -c | sort -rn | head -5
for f in "$work"/*.b.err; do [ -s "$f" ] && echo "$(basename "$f"): $(head -2 "$f")"; done
echo "# load after: $(uptime | sed 's/.*load average/load average/')"
