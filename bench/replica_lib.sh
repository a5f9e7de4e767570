# shellcheck shell=bash
# Shared by bench/scaleout.sh and bench/replica_catchup.sh (sourced, bash, set -u):
# a slapd provider with syncprov loaded with bench/gen-ldif.sh N, minidir replicas,
# all on 127.0.0.1 ports in a temp dir ($work), every process started as `cmd &
# pid=$!`, remembered in $pids and stopped by PID at exit; every wait is bounded.
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
PYTHON=${PYTHON:-/usr/bin/python3} # Debian's, where python3-ldap is
export LDAPNOINIT=1
EX=dc=example,dc=com
ADMIN=cn=admin,$EX
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. tests/integration/slapd_conf.sh

# free_port: a 127.0.0.1 port nobody answers on (and not handed out before in this run).
used_ports=" "
free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		case $used_ports in *" $p "*) continue ;; esac
		timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2> /dev/null && continue
		used_ports="$used_ports$p "
		echo "$p"
		return 0
	done
	die "no free port"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# cpu_ticks PID: user+system clock ticks of the process so far (0 when gone).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2> /dev/null || echo 0; }

# slapd_db_lines [SYNCREPL]: the database lines of slapd_conf (tests/integration/slapd_conf.sh)
# for a provider (syncprov) or, with a syncrepl directive, a consumer. Both run with dbnosync
# (no fsync per commit), as the tests' provider; CONSUMER_SYNC=1 makes a consumer commit
# durably, as minidir's replica does (an fdatasync per commit; slapd's consumer commits each
# entry of a refresh on its own, so this makes its 100,000-entry refresh minutes long).
slapd_db_lines() {
	echo "sizelimit unlimited
maxsize 1073741824
index objectClass,entryUUID,entryCSN,uid eq"
	[ -n "${1:-}" ] && [ -n "${CONSUMER_SYNC:-}" ] || echo dbnosync
	echo "${1:-overlay syncprov
syncprov-checkpoint 100 1}"
}
# provider_load N: slapadd of gen-ldif N into the provider's database.
provider_load() {
	bench/gen-ldif.sh "$1" "$EX" > "$work/data.ldif"
	timeout 600 "$SLAPADD" -q -f "$work/provider.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1 ||
		die "slapadd: $(tail -3 "$work/slapadd.log")"
}
# slapd_start NAME PORT: starts slapd with $work/NAME.conf; sets $spid; waits until it answers.
slapd_start() {
	"$SLAPD" -f "$work/$1.conf" -h "ldap://127.0.0.1:$2/" -d 0 >> "$work/$1.log" 2>&1 &
	spid=$!
	pids+=("$spid")
	answers_within 10 "$spid" "$2" || die "slapd $1 did not start: $(tail -5 "$work/$1.log")"
}
# answers_within SECONDS PID PORT: whether the server PID answers a root DSE read on PORT
# within SECONDS (false at once when it exits).
answers_within() {
	local end=$(($(now_ms) + $1 * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$3" -LLL -b "" -s base 1.1 > /dev/null 2>&1 && return 0
		kill -0 "$2" 2> /dev/null || return 1
		sleep 0.05
	done
	return 1
}
# replica_conf NAME PORT PROVIDER_URL [LINES]: $work/NAME.conf, a minidir refreshAndPersist
# replica; LINES are added at the end (listen_after_refresh, say).
replica_conf() {
	cat > "$work/$1.conf" << EOF
listen = 127.0.0.1:$2
database = $work/$1.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
rootdn = $ADMIN
rootpw = secret
sizelimit = unlimited
syncrepl = rid=001 provider=$3 bindmethod=simple
	binddn="$ADMIN" credentials=secret searchbase="$EX"
	type=refreshAndPersist retry="1 +"
${4:-}
EOF
}
# replica_start NAME PORT: starts minidir with $work/NAME.conf (log appended to
# $work/NAME.log); sets $rpid; waits until the port answers (up to 120 s: a replica with
# listen_after_refresh answers once its first refresh has committed).
replica_start() {
	"$BUILD/minidir" -f "$work/$1.conf" >> "$work/$1.log" 2>&1 &
	rpid=$!
	pids+=("$rpid")
	answers_within 120 "$rpid" "$2" || die "minidir $1 did not start: $(tail -5 "$work/$1.log")"
}
# monitor URL ATTR: a value of the replica's cn=replication,cn=monitor.
monitor() {
	timeout 5 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no \
		-b cn=replication,cn=monitor -s base "$2" 2> /dev/null | sed -n "s/^$2: //p"
}
# value URL DN ATTR: the attribute's first value (as the rootdn), empty when none.
value() {
	timeout 5 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no \
		-b "$2" -s base "$3" 2> /dev/null | sed -n "s/^$3: //p" | head -1
}
# wait_value URL DN ATTR WANT SECONDS: polls (every 20 ms) until ATTR is WANT.
wait_value() {
	local end=$(($(now_ms) + $5 * 1000))
	while [ "$(now_ms)" -lt "$end" ]; do
		[ "$(value "$1" "$2" "$3")" = "$4" ] && return 0
		sleep 0.02
	done
	return 1
}

# stream_end LMPID START_MS USERS: waits for the paced modify stream (bench/pacer.py into
# ldapmodify, its output in $work/stream.log) started at START_MS, and sets lmrc (its exit
# status), sdur (ms from START_MS), made (the modifies made) and lastdn (the entry the last
# one changed: pacer.py walks uid=user.1 .. user.USERS-1).
# shellcheck disable=SC2034  # lmrc, sdur, made, lastdn: the sourcing scripts read them
stream_end() {
	wait "$1"
	lmrc=$?
	forget "$1"
	sdur=$(($(now_ms) - $2))
	made=$(grep -c '^modifying entry' "$work/stream.log")
	lastdn="uid=user.$((1 + (made - 1) % ($3 - 1))),ou=people,$EX"
}
