# shellcheck shell=bash
# A syncrepl provider for the integration scripts (sourced after lib.sh): OpenLDAP
# slapd with back_mdb and the syncprov overlay, configured in $work, loaded with
# examples/example.ldif, on a private 127.0.0.1 port, stopped by PID.
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
export LDAPNOINIT=1
EX=dc=example,dc=com
ADMIN=cn=admin,$EX
. tests/integration/slapd_conf.sh

# provider_setup: $work/slapd.conf and its database (a map of PROVIDER_MAXSIZE bytes,
# 64 MiB unless set), loaded with slapadd. Returns 1 (with not_ok) when slapadd fails.
provider_setup() {
	# shellcheck disable=SC2154  # $work: use_work_dir (lib.sh) in the sourcing script
	slapd_conf "$work/slapd.conf" "$work/db" "maxsize ${PROVIDER_MAXSIZE:-67108864}
dbnosync
index objectClass,entryUUID,entryCSN eq
overlay syncprov
syncprov-checkpoint 1 1"
	grep -v "^version:" examples/example.ldif > "$work/data.ldif" # slapadd reads no version line
	if ! timeout 60 "$SLAPADD" -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1; then
		not_ok "slapadd: $(cat "$work/slapadd.log")"
		return 1
	fi
}

# provider_add_generated N [ENTRY_BYTES]: N more entries (bench/gen-ldif.sh: uid=user.0..N-1
# under example.ldif's ou=people, each padded to about ENTRY_BYTES) slapadd'ed into the
# provider's database before it starts. Returns 1 (with not_ok) when slapadd fails.
provider_add_generated() {
	# gen-ldif's first two records, the suffix and ou=people, are there already
	bench/gen-ldif.sh "$1" "$EX" "${2:-0}" | awk 'BEGIN{RS=""; ORS="\n\n"} NR>2' > "$work/more.ldif"
	if ! timeout 300 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/more.ldif" > "$work/slapadd2.log" 2>&1; then
		not_ok "slapadd of $1 generated entries: $(tail -3 "$work/slapadd2.log")"
		return 1
	fi
}

# provider_start [PORT]: starts slapd on PORT (else a free port, lib.sh's free_port),
# waiting until it answers; sets $port and $spid (added to $pids). With PROVIDER_LDAPS=1 it
# listens on ldaps://127.0.0.1:PORT+1/ too (slapd.conf must name its certificate). Returns
# 1 (with not_ok) when it does not.
provider_start() {
	local want=${1:-} p urls
	port=
	for _ in $(seq 1 10); do
		if [ -n "$want" ]; then
			p=$want
		elif ! p=$(free_port 2); then
			break
		fi
		urls="ldap://127.0.0.1:$p/"
		[ "${PROVIDER_LDAPS:-}" = 1 ] && urls="$urls ldaps://127.0.0.1:$((p + 1))/"
		"$SLAPD" -f "$work/slapd.conf" -h "$urls" -d 0 >> "$work/slapd.log" 2>&1 &
		spid=$!
		pids+=("$spid")
		for _ in $(seq 1 100); do
			timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$p" -LLL -b "$EX" -s base 1.1 2> /dev/null |
				grep -qi "^dn: $EX\$" && { port=$p; break; }
			kill -0 "$spid" 2> /dev/null || break
			sleep 0.05
		done
		[ -n "$port" ] && return 0
		[ -n "$want" ] && sleep 0.5 # the port may still be held by the last slapd
	done
	not_ok "slapd did not start: $(tail -5 "$work/slapd.log")"
	return 1
}

# replica_conf NAME TYPE [LINES]: $work/NAME.conf, a minidir replica of $PROV (type
# refreshAndPersist or refreshOnly, interval 2 s, retried every second) on a free port,
# its database $work/NAME.mdb; LINES are added at the end.
replica_conf() {
	# shellcheck disable=SC2153  # SCHEMA_DIR: lib.sh, sourced before this file
	cat > "$work/$1.conf" << EOF
listen = 127.0.0.1:0
database = $work/$1.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
rootdn = $ADMIN
rootpw = secret
sizelimit = unlimited
syncrepl = rid=001 provider=$PROV bindmethod=simple
	binddn="$ADMIN" credentials=secret searchbase="$EX"
	type=$2 interval=00:00:00:02 retry="1 +"
${3:-}
EOF
}

# replica_run NAME: starts minidir with $work/NAME.conf, its log $work/NAME.N.log (N counts
# the starts); sets $rpid (added to $pids) and $rlog.
starts=0
replica_run() {
	starts=$((starts + 1))
	rlog=$work/$1.$starts.log
	"$BUILD/minidir" -f "$work/$1.conf" > "$rlog" 2>&1 &
	rpid=$!
	pids+=("$rpid")
}

# dump URI: every entry under $EX with its user attributes, as the rootdn reads them, one
# "DN | line" a line, sorted (a base64 "dn::" heads its entry too).
dump() {
	timeout 20 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$EX" "*" 2> /dev/null |
		awk '/^dn::? /{dn=$0} NF{print dn " | " $0}' | LC_ALL=C sort
}
# converge SECONDS: polls until the dump of $REP (the replica) equals that of $PROV (the
# provider); sets $took (seconds, to the tenth). Returns 1 when it does not within
# SECONDS, with the start of the difference in $work/diff.
converge() {
	local start want got
	start=$(date +%s%N)
	want=$(dump "$PROV")
	for _ in $(seq 1 $(($1 * 10))); do
		got=$(dump "$REP")
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			# shellcheck disable=SC2034  # read by the caller
			took=$(awk -v n=$(($(date +%s%N) - start)) 'BEGIN{printf "%.1f", n/1e9}')
			return 0
		fi
		sleep 0.1
	done
	diff <(echo "$want") <(echo "$got") | head -8 > "$work/diff"
	return 1
}
