#!/usr/bin/env bash
# bench/idle.sh: memory of idle connections, minidir beside OpenLDAP slapd, in one run.
#
# Each server holds N connections (bench/idleconns.c) that sit idle, then they all close;
# CYCLES cycles per kind of connection. Kinds (KINDS, all by default):
#   anonymous   an anonymous bind, then idle
#   bound       a simple bind by password as an entry with userPassword ({SSHA})
#   tls         ldaps://, then the same bind by password (N_TLS connections)
#   stalled     ldaps://, a ClientHello and nothing more (N_TLS; each server waits in its
#               handshake: minidir until tls_handshake_timeout)
# Printed per server and kind: anonymous memory (RssAnon, /proc/PID/status) at start,
# with the connections held, and after they closed; the cost per idle connection; and
# how far above its start the server stays after the last cycle. Never part of `make test`.
#
#   bench/idle.sh [N]     # N=10000, N_TLS=2000, CYCLES=3, KINDS="anonymous bound tls stalled"
#                         # needs build/ (make all) and slapd (scripts/deps.sh bench)
#
# tests/integration/fault_test.sh runs the same client against minidir alone.
. "$(dirname "$0")/lib.sh" # set -u, and the tree's root as the directory
N=${1:-10000}
N_TLS=${N_TLS:-2000}
CYCLES=${CYCLES:-3}
KINDS=${KINDS:-anonymous bound tls stalled}
BINDDN="uid=bench.bind,ou=people,$SUFFIX"
BINDPW=bench-secret
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}

bench_init idle

# Both servers and the client need N descriptors and more.
need=$((N + 100))
[ "$(ulimit -Hn)" -ge "$need" ] || die "the hard limit of open files ($(ulimit -Hn)) is below $need"
ulimit -n "$need"

[ -x "$BUILD/bench/idleconns" ] || die "$BUILD/bench/idleconns is missing: make all"
tests/integration/tls_certs.sh "$work/certs" > /dev/null 2>&1 || die "tls_certs.sh failed"
# bench_directory with one entry more, that binds by password (both servers import it).
bench/gen-ldif.sh 1000 "$SUFFIX" > "$work/data.ldif" || die "gen-ldif.sh failed"
printf '%s\n' "dn: $BINDDN" "objectClass: inetOrgPerson" "uid: bench.bind" "cn: Bench Bind" \
	"sn: Bind" "userPassword: $(/usr/sbin/slappasswd -s "$BINDPW")" "" >> "$work/data.ldif"
printf '%s\n' "listen = 127.0.0.1:0" "listen = ldaps://127.0.0.1:0/" "database = $work/db.mdb" \
	"schema_dir = $SCHEMA_DIR" "suffix = $SUFFIX" "threads = 2" "tls_cert_file = $work/certs/server.pem" \
	"tls_key_file = $work/certs/server.key" > "$work/minidir.conf"
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$work/data.ldif" || die "minidir-import failed"

bench_slapd_import "TLSCertificateFile $work/certs/server.pem" \
	"TLSCertificateKeyFile $work/certs/server.key"

rss() { awk '/^RssAnon/ { print $2 }' "/proc/$1/status"; }

# measure NAME PID PORT SPORT KIND: prints one table row.
measure() {
	local name=$1 pid=$2 port=$3 sport=$4 kind=$5 n=$N opts=() start held=() after=()
	case $kind in
	anonymous) ;;
	bound) opts=(-D "$BINDDN" -w "$BINDPW") ;;
	tls) opts=(-Z -D "$BINDDN" -w "$BINDPW") port=$sport n=$N_TLS ;;
	stalled) opts=(-S) port=$sport n=$N_TLS ;;
	*) die "unknown kind $kind" ;;
	esac
	# Once-a-process state first (OpenSSL's, each worker's): a few connections of the kind.
	timeout 60 "$BUILD/bench/idleconns" "${opts[@]}" 127.0.0.1 "$port" 50 < /dev/null > /dev/null 2>&1
	sleep 3
	start=$(rss "$pid")
	for _ in $(seq 1 "$CYCLES"); do
		idle_hold "$name" "${opts[@]}" 127.0.0.1 "$port" "$n"
		sleep 3 # idle: minidir releases the buffers of idle connections once a second
		held+=("$(rss "$pid")")
		idle_release
		sleep 3
		after+=("$(rss "$pid")")
	done
	awk -v name="$name" -v kind="$kind" -v n="$n" -v start="$start" -v held="${held[*]}" -v after="${after[*]}" 'BEGIN {
		c = split(held, h, " "); split(after, a, " ")
		printf "| %s | %s | %d | %d | %s | %s | %.2f | %+.1f%% |\n", name, kind, n, start, held, after,
			(h[c] - start) / n, (a[c] - start) * 100 / start }'
}

echo "| server | kind | connections | RssAnon at start (kB) | held, each cycle (kB) | after they closed (kB) | kB per connection | after the last cycle vs start |"
echo "|---|---|---|---|---|---|---|---|"

"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/minidir.log" &
mpid=$!
pids+=("$mpid")
mport=
for _ in $(seq 1 100); do
	mport=$(sed -n 's#.*listening on ldap://127.0.0.1:\([0-9]*\)/.*#\1#p' "$work/minidir.log")
	[ -n "$mport" ] && break
	sleep 0.05
done
[ -n "$mport" ] || die "minidir did not start: $(cat "$work/minidir.log")"
msport=$(wait_port "$work/minidir.log" ldaps)
for k in $KINDS; do measure minidir "$mpid" "$mport" "$msport" "$k"; done

sport=$((20000 + RANDOM % 20000))
ssport=$((sport + 1))
bench_slapd_start 3600 "ldap://127.0.0.1:$sport/ ldaps://127.0.0.1:$ssport/"
for k in $KINDS; do measure slapd "$spid" "$sport" "$ssport" "$k"; done
