#!/usr/bin/env bash
# New TLS connections per second, full and resumed handshakes: minidir (OpenSSL) beside
# OpenLDAP slapd (Debian's: GnuTLS), both with the same throwaway EC P-256 certificate
# (tests/integration/tls_certs.sh), in one run, measured in turn.
#
#   bench/handshake.sh               # ROUNDS rounds of: minidir full, slapd full, minidir
#                                    # resumed, slapd resumed (about 2 minutes)
#   CALLGRIND=1 bench/handshake.sh   # minidir alone under valgrind --tool=callgrind: the
#                                    # server's instructions per handshake, full and resumed
#
# The load is build/searchrate --engine lean (TLS through OpenSSL), a new connection per
# search (--iterationsBeforeReconnect 1): ldaps://, a root DSE read, an Unbind and close, no
# bind; --resumeTLSSessions for the resumed figure (each thread offers the newest ticket it
# was given). Printed per server and mode, side by side: handshakes/s, the server's CPU us
# per handshake (utime+stime of /proc/PID/stat over the run, divided by its handshakes: the
# reconnects plus the first connection of each thread) and the client's (searchrate's
# "Client CPU us/search": one handshake per search). On 2 shared cores the client and the
# server share the CPU, so the rate moves with what else runs; CPU per handshake is the
# robust figure. With CALLGRIND=1 the figure is Ir (instructions executed in user space,
# kernel excluded) per handshake, counters zeroed after start-up and dumped after N
# handshakes, threads = 1.
#
# Env: CLIENT_THREADS (searchrate threads, 2; THREADS, in the other bench/ scripts, is
# the server's workers), SECS (seconds per measurement, 5), ROUNDS (3), N (CALLGRIND=1:
# handshakes per mode, 200), BUILD (build), SLAPD (/usr/sbin/slapd), KEEP=1 (keep the work
# directory). Servers are started here and stopped by PID.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
# minidir reads the tree's own schema/ (slapd, where it runs, its /etc/ldap/schema).
SCHEMA_DIR=$PWD/schema
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
CLIENT_THREADS=${CLIENT_THREADS:-2}
SECS=${SECS:-5}
ROUNDS=${ROUNDS:-3}
N=${N:-200}
CALLGRIND=${CALLGRIND:-}
SUFFIX=dc=test,dc=org
LDIF=tests/data/test.ldif

die() {
	echo "bench/handshake.sh: $*" >&2
	exit 1
}
for f in minidir minidir-import searchrate; do
	[ -x "$BUILD/$f" ] || die "$BUILD/$f is missing: run make all"
done
command -v openssl > /dev/null || die "openssl is missing: run scripts/deps.sh"
if [ -n "$CALLGRIND" ]; then
	command -v valgrind > /dev/null || die "valgrind is missing (apt-get install valgrind)"
else
	[ -x "$SLAPD" ] && [ -x "$SLAPADD" ] || die "$SLAPD is missing: run scripts/deps.sh bench"
fi

work=$(mktemp -d /tmp/minidir-handshake.XXXXXX) || die "mktemp failed"
pids=()
cleanup() { # the servers started here, by PID
	if [ ${#pids[@]} -gt 0 ]; then
		kill -TERM "${pids[@]}" 2> /dev/null
		wait "${pids[@]}" 2> /dev/null
	fi
	[ -n "${KEEP:-}" ] && echo "kept: $work" || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
timeout 60 tests/integration/tls_certs.sh "$work/pki" > /dev/null 2>&1 || die "tls_certs.sh failed"
PKI=$work/pki

# ---- servers -------------------------------------------------------------------------------
cat > "$work/minidir.conf" << EOF
listen = ldaps://127.0.0.1:0/
database = $work/minidir.mdb
schema_dir = $SCHEMA_DIR
suffix = $SUFFIX
threads = $([ -n "$CALLGRIND" ] && echo 1 || echo 2)
tls_cert_file = $PKI/server.pem
tls_key_file = $PKI/server.key
tls_handshake_timeout = 60
EOF
timeout 60 "$BUILD/minidir-import" -q -f "$work/minidir.conf" "$LDIF" || die "minidir-import failed"

declare -A PORT PID
start_minidir() {
	local log=$work/minidir.log wrap=()
	: > "$log"
	[ -z "$CALLGRIND" ] || wrap=(valgrind --tool=callgrind --callgrind-out-file="$work/callgrind.%p")
	"${wrap[@]}" "$BUILD/minidir" -f "$work/minidir.conf" 2> "$log" &
	pids+=($!)
	PID[minidir]=$!
	for _ in $(seq 1 600); do
		grep -q 'listening on ldaps://' "$log" && break
		sleep 0.1
	done
	PORT[minidir]=$(sed -n 's|.*listening on ldaps://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$log" | head -1)
	[ -n "${PORT[minidir]}" ] || die "minidir did not start: $(cat "$log")"
}

start_slapd() {
	mkdir -p "$work/slapd"
	{
		for schema in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$schema.schema"; done
		printf '%s\n' "modulepath /usr/lib/ldap" "moduleload back_mdb" "pidfile $work/slapd.pid" \
			"threads 2" "TLSCertificateFile $PKI/server.pem" "TLSCertificateKeyFile $PKI/server.key" \
			"TLSCACertificateFile $PKI/ca.pem" "database mdb" "suffix \"$SUFFIX\"" "directory $work/slapd"
	} > "$work/slapd.conf"
	grep -v -e '^#' -e '^version:' "$LDIF" > "$work/slapd.ldif" # slapadd wants neither here
	timeout 60 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/slapd.ldif" > "$work/slapadd.log" 2>&1 ||
		die "slapadd failed: $(tail -3 "$work/slapadd.log")"
	local port
	while port=$((20000 + RANDOM % 20000)) && (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; do :; done
	"$SLAPD" -d 0 -f "$work/slapd.conf" -h "ldaps://127.0.0.1:$port/" 2> "$work/slapd.log" &
	pids+=($!)
	PID[slapd]=$!
	PORT[slapd]=$port
	for _ in $(seq 1 300); do
		LDAPTLS_CACERT=$PKI/ca.pem timeout 5 ldapsearch -x -H "ldaps://127.0.0.1:$port" -b "" -s base > /dev/null 2>&1 && return
		sleep 0.1
	done
	die "slapd did not answer on ldaps://127.0.0.1:$port: $(tail -3 "$work/slapd.log")"
}

cpu_ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; } # user and system

# load SERVER MODE SECONDS: one searchrate run; its output in $work/SERVER-MODE.out.
load() {
	local extra=()
	[ "$2" = resumed ] && extra=(--resumeTLSSessions)
	timeout $(($3 + 120)) "$BUILD/searchrate" -h 127.0.0.1 -p "${PORT[$1]}" -Z -P "$PKI/ca.pem" \
		-b "" -s base -A namingContexts -t "$CLIENT_THREADS" --iterationsBeforeReconnect 1 \
		-i "$3" -I 1 "${extra[@]}" > "$work/$1-$2.out" 2>&1
}
value() { sed -n "s|^ *$2: *\([0-9.][0-9.]*\).*|\1|p" "$work/$1.out" | head -1; }

if [ -n "$CALLGRIND" ]; then
	start_minidir
	printf 'mode\thandshakes\tresumed\tserver_Ir_per_handshake\n'
	for mode in full resumed; do
		callgrind_control -z "${PID[minidir]}" > /dev/null 2>&1 || die "callgrind_control failed"
		extra=()
		[ "$mode" = resumed ] && extra=(--resumeTLSSessions)
		# A fixed count: N at 20/s (valgrind is some 50x slower), one thread.
		timeout 600 "$BUILD/searchrate" -h 127.0.0.1 -p "${PORT[minidir]}" -Z -P "$PKI/ca.pem" \
			-b "" -s base -A namingContexts --iterationsBeforeReconnect 1 -r 20 \
			-i "$((N / 20))" -I 1 "${extra[@]}" > "$work/cg-$mode.out" 2>&1
		sleep 1 # the last close
		callgrind_control -d "$mode" "${PID[minidir]}" > /dev/null 2>&1
		sleep 1
		# shellcheck disable=SC2012  # the newest of the dumps callgrind names callgrind.out.PID.N
		f=$(ls -t "$work"/callgrind.*.* | head -1)
		ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f")
		hs=$(($(value "cg-$mode" Reconnects) + 1))
		printf '%s\t%s\t%s\t%s\n' "$mode" "$hs" "$(value "cg-$mode" "Resumed TLS sessions")" "$((ir / hs))"
	done
	exit 0
fi

start_minidir
start_slapd
printf 'round\tmode\tserver\thandshakes_s\tresumed_s\tserver_cpu_us_hs\t(user\tsys)\tclient_cpu_us_hs\terrors\n'
for r in $(seq 1 "$ROUNDS"); do
	for mode in full resumed; do
		for s in minidir slapd; do
			read -r u0 s0 < <(cpu_ticks "${PID[$s]}")
			load "$s" "$mode" "$SECS"
			read -r u1 s1 < <(cpu_ticks "${PID[$s]}")
			rc=$(value "$s-$mode" Reconnects)
			hs=$((${rc:-0} + CLIENT_THREADS))
			res=$(sed -n 's/^ *Resumed TLS sessions: *[0-9]* (\([0-9.]*\)\/s).*/\1/p' "$work/$s-$mode.out")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$r" "$mode" "$s" \
				"$(value "$s-$mode" "Searches/sec")" "${res:--}" \
				"$(((u1 - u0 + s1 - s0) * 10000 / hs))" "$(((u1 - u0) * 10000 / hs))" \
				"$(((s1 - s0) * 10000 / hs))" "$(value "$s-$mode" "Client CPU us/search")" \
				"$(value "$s-$mode" "Total errors")"
		done
	done
done
