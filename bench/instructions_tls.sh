#!/usr/bin/env bash
# bench/instructions_tls.sh (run as `TLS=1 bench/instructions.sh`): user-space instructions
# per 1-entry lookup over long-lived TLS connections, for both sides, counted by valgrind's
# callgrind: minidir (batch policy, one worker) under callgrind with an uninstrumented
# searchrate as the load, then searchrate under callgrind against an uninstrumented
# minidir. Each over ldaps:// and, for reference, over plain LDAP, so the difference is
# what TLS costs a lookup on each side.
#
# TLS as `TLS=1 bench/run.sh` sets it up: a throwaway CA and EC P-256 server certificate
# (tests/integration/tls_certs.sh), the server's default TLS settings (TLS 1.2 and 1.3,
# OpenSSL's suites: TLS 1.3 with TLS_AES_128_GCM_SHA256 is negotiated), and the load of
# bench/run.sh's tls-lookup-8c: searchrate --engine lean -Z -P ca.pem (certificate
# verified), 8 threads with one connection each, 1 request in flight per connection,
# (uid=user.[0-9999]) from the suffix over 10,000 entries.
#
# Before the load, every entry is looked up once over plain LDAP (bench/lib.sh's
# bench_warm), as a server that has run a while has. The counting window opens once the load runs (connections and handshakes done, one
# interval after the start) and lasts SECS seconds: callgrind_control --zero, then --dump;
# the lookups in it are the calls, in that dump, of a function called once a search (the
# server's op_search, searchrate's pattern_expand_spans). So neither start-up nor handshakes
# are in the figures. Records and sends per lookup come from cn=monitor (tlsRecords and
# sendCalls of cn=batch, over opsSearch), read over plain LDAP around the window.
#
#   TLS=1 bench/instructions.sh              # 4 windows of 5 s under callgrind: ~1.5 minutes
#   TLS=1 SECS=10 TOP=30 bench/instructions.sh
#   TLS=1 SUITES=TLS_CHACHA20_POLY1305_SHA256 bench/instructions.sh   # tls_ciphersuites
#   TLS=1 TLS12=1 bench/instructions.sh      # the client offers TLS 1.2 at most
#   TLS=1 SIDES=server MODES=tls bench/instructions.sh   # one window: the server over TLS
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
TOP=${TOP:-15}
SECS=${SECS:-5}
CONNS=${CONNS:-8} # connections of the load (bench/perf_check.sh: 1)
SIDES=${SIDES:-server client}
MODES=${MODES:-tls plain}
need valgrind callgrind_control callgrind_annotate ldapsearch openssl
bench_init instructions-tls
timeout 60 tests/integration/tls_certs.sh "$work/certs" || die "tests/integration/tls_certs.sh failed"
CERTS=$work/certs

extra=()
[ -z "${SUITES:-}" ] || extra+=("tls_ciphersuites = $SUITES")
bench_directory 10000 "$work/minidir.conf" "threads = 1" "send_policy = batch" \
	"monitor_access = anonymous" "listen = ldaps://127.0.0.1:0/" \
	"tls_cert_file = $CERTS/server.pem" "tls_key_file = $CERTS/server.key" "${extra[@]}"
# TLS12=1: OpenSSL's configuration for searchrate alone caps its TLS at 1.2 (the server
# keeps its defaults), to count a TLS 1.2 lookup (AES-GCM with ECDHE-ECDSA).
if [ -n "${TLS12:-}" ]; then
	printf '%s\n' "openssl_conf = conf" "[conf]" "ssl_conf = ssl" "[ssl]" "system_default = sys" \
		"[sys]" "MaxProtocol = TLSv1.2" > "$work/openssl-tls12.cnf"
	export OPENSSL_CONF=$work/openssl-tls12.cnf
fi

# server [WRAP...]: starts minidir (under WRAP, e.g. valgrind), sets SPID, PORT, TPORT.
server() {
	: > "$work/minidir.log"
	env -u OPENSSL_CONF "$@" "$SERVER_BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
	SPID=$!
	pids+=("$SPID")
	TPORT=$(wait_port "$work/minidir.log" ldaps "listening on" 60)
	PORT=$(wait_port "$work/minidir.log" ldap "listening on" 1)
	[ -n "$PORT" ] && [ -n "$TPORT" ] || die "minidir did not start: $(tail -3 "$work/minidir.log")"
}
stop() { # PID: stops a process started here
	kill "$1" 2> /dev/null
	wait "$1" 2> /dev/null
	forget "$1"
}
# monitor: "searches records sends" so far (opsSearch of cn=monitor, tlsRecords and
# sendCalls of cn=batch,cn=monitor).
monitor() {
	env -u OPENSSL_CONF ldapsearch -x -LLL -H "ldap://127.0.0.1:$PORT" -b cn=monitor \
		"(|(cn=monitor)(cn=batch))" opsSearch tlsRecords sendCalls 2> /dev/null |
		awk '$1 == "opsSearch:" { s = $2 } $1 == "tlsRecords:" { r = $2 } $1 == "sendCalls:" { c = $2 }
			END { print s + 0, r + 0, c + 0 }'
}
# load TLS [WRAP...]: searchrate (under WRAP) against the server, over ldaps:// when TLS
# is "tls", until stopped; sets LPID and waits for its first interval.
load() {
	local tls=() out=$work/load.out
	[ "$1" = tls ] && tls=(-Z -P "$CERTS/ca.pem")
	shift
	: > "$out"
	"$@" "$BUILD/searchrate" -h 127.0.0.1 -p "$([ ${#tls[@]} -gt 0 ] && echo "$TPORT" || echo "$PORT")" \
		"${tls[@]}" -a -O 1 -t "$CONNS" --numConnections "$CONNS" -b "$SUFFIX" -f "(uid=user.[0-9999])" \
		-i 1 -I 1000 > "$out" 2>&1 &
	LPID=$!
	pids+=("$LPID")
	for _ in $(seq 1 600); do
		grep -q '^ *[0-9][0-9.]* ' "$out" && return
		kill -0 "$LPID" 2> /dev/null || break
		sleep 0.1
	done
	die "searchrate did not run: $(tail -3 "$out")"
}
# calls FILE FN: how many times FN was called in callgrind's dump FILE.
calls() {
	callgrind_annotate --tree=caller --threshold=100 "$1" 2> /dev/null | tr -d , | awk -v fn=":$2 [" '
		/^$/ { n = 0; next }
		/ < / && match($0, /\(([0-9]+)x\)/) { n += substr($0, RSTART + 1, RLENGTH - 3) }
		/ \* / && index($0, fn) { print n; exit }'
}
# window VPID NAME FN: zeroes VPID's counters, waits SECS, dumps them to $work/NAME.cg.1;
# prints "lookups records sends instructions": lookups are the calls of FN (one a search)
# in the dump, so both figures cover the same instructions whenever valgrind took the
# commands; records and sends per lookup from cn=monitor over about the same time.
window() {
	local a b n instr
	read -r -a a <<< "$(monitor)"
	callgrind_control --zero "$1" > /dev/null 2>&1 || die "callgrind_control --zero failed"
	sleep "$SECS"
	callgrind_control --dump "$1" > /dev/null 2>&1 || die "callgrind_control --dump failed"
	read -r -a b <<< "$(monitor)"
	n=$(calls "$work/$2.cg.1" "$3")
	instr=$(cg_instructions "$work/$2.cg.1")
	# the first monitor read is counted by the second: not a lookup
	awk -v n="${n:-0}" -v i="${instr:-0}" -v m=$((b[0] - a[0] - 1)) -v r=$((b[1] - a[1])) -v s=$((b[2] - a[2])) \
		'BEGIN { printf "%d %.4f %.4f %d\n", n, (m > 0 ? r / m : 0), (m > 0 ? s / m : 0), i }'
}
cg() { echo valgrind --tool=callgrind --callgrind-out-file="$work/$1.cg"; }

# The client's figure is its load threads' (--toggle-collect): the main thread's work per
# interval is per second, not per lookup, and would weigh ~30x more at callgrind's pace.
declare -A ROW
for mode in $MODES; do
	for side in $SIDES; do
		if [ "$side" = server ]; then
			# shellcheck disable=SC2046 # the words of cg
			server $(cg "server-$mode")
			bench_warm "$PORT" 10000 "$work/warm.out"
			load "$mode"
			ROW[server-$mode]=$(window "$SPID" "server-$mode" op_search)
		else
			server
			# shellcheck disable=SC2046 # the words of cg
			load "$mode" $(cg "client-$mode") --collect-atstart=no --toggle-collect=thread_main
			ROW[client-$mode]=$(window "$LPID" "client-$mode" pattern_expand_spans)
		fi
		[ "$mode" = tls ] && [ -z "${NEG:-}" ] &&
			NEG=$(timeout 10 openssl s_client -connect "127.0.0.1:$TPORT" -CAfile "$CERTS/ca.pem" < /dev/null 2> /dev/null |
				awk '/^New, / { v = $2; c = $NF } END { printf "%s %s", v, c }')
		stop "$LPID"
		stop "$SPID"
	done
done

echo "user-space instructions per 1-entry lookup (callgrind, ${SECS} s windows; $CONNS connections, 1 in flight each)"
capped=''
[ -z "${TLS12:-}" ] || capped=' (TLS12=1: the client capped at TLS 1.2)'
echo "TLS negotiated: ${NEG:-?}$capped"
printf '%-8s %-6s %9s %14s %11s %12s %10s\n' side over lookups instructions "per lookup" "records/op" "sends/op"
for side in $SIDES; do
	for mode in $MODES; do
		read -r n r s i <<< "${ROW[$side-$mode]}"
		[ "$n" -gt 0 ] && [ "$i" -gt 0 ] || die "$side over $mode: no figures ($work)"
		awk -v side="$side" -v mode="$mode" -v n="$n" -v i="$i" -v r="$r" -v s="$s" 'BEGIN {
			printf "%-8s %-6s %9d %14d %11d %12.2f %10.2f\n", side, mode, n, i, i / n, r, s }'
	done
done
for side in $SIDES; do
	[[ " $MODES " == *" tls "* ]] || break
	echo
	echo "$side's top functions over TLS (self instructions, share of the total):"
	callgrind_annotate --threshold=100 "$work/$side-tls.cg.1" 2> /dev/null | sed -n '/file:function/,$p' |
		grep -v -e 'clone.S:clone' -e 'pthread_create.c:start_thread' | grep '%)' | head -n "$TOP" | cut -c1-120
done
