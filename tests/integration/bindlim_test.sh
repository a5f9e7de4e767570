#!/usr/bin/env bash
# The abuse limits (bind_fail_limit, bind_fail_window, max_conns_per_ip; docs/reliability.md):
# a real minidir (two workers) on real LMDB, bindlim_client.py binding from chosen source
# addresses of 127.0.0.0/8. A 1,000-guess attack on one DN: after the limit even the right
# password fails, for that DN and from that address, until the window passes, then works;
# another user from another address is unaffected; unknown DNs count for the address and
# as a DN; a refused bind, and a locked account's right password, answer in the time a
# wrong password does; the connection past
# max_conns_per_ip from one address is closed at accept; cn=limits,cn=monitor counts it
# all. Off by default: a server without the keys lets the same binds through.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
. tests/integration/lib.sh
use_work_dir bindlim
EX=dc=example,dc=com
LIMIT=10
WINDOW=10
MAXCONNS=20

{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n' "$EX"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$EX"
	for u in alice bob carol $(seq -f 'u%g' 0 14); do
		printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nuserPassword: %s-secret\n\n' \
			"$u" "$EX" "$u" "$u" "$u" "$u"
	done
	# locked for good by a password policy (server/ops/account.h): the right password fails
	for u in $(seq -f 'locked%g' 0 14); do
		printf 'dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nuserPassword: %s-secret\npwdAccountLockedTime: 000001010000Z\n\n' \
			"$u" "$EX" "$u" "$u" "$u" "$u"
	done
} > "$work/data.ldif"
conf() { # conf FILE [KEY = VALUE lines...]
	local f=$1
	shift
	cat > "$f" << EOF2
listen = 127.0.0.1:0
database = $work/db.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
threads = 2
monitor_access = anonymous
EOF2
	printf '%s\n' "$@" >> "$f"
}
conf "$work/off.conf"
mport=$(free_port) || { not_ok "no free port for metrics_listen"; finish; }
conf "$work/on.conf" "bind_fail_limit = $LIMIT" "bind_fail_window = $WINDOW" "max_conns_per_ip = $MAXCONNS" \
	"metrics_listen = 127.0.0.1:$mport"
"$BUILD/minidir-import" -q -f "$work/off.conf" "$work/data.ldif" || {
	not_ok "import"
	finish
}

# Off by default: 3 * LIMIT wrong passwords, then the right one binds; cn=limits says 0.
start_minidir "$work/off.conf" "$work/off.log"
if [ -z "$port" ]; then
	not_ok "minidir (limits off) did not start: $(head -3 "$work/off.log")"
else
	for _ in $(seq 1 $((3 * LIMIT))); do
		ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "uid=alice,ou=people,$EX" -w wrong > /dev/null 2>&1
	done
	if ldapwhoami -x -H "ldap://127.0.0.1:$port" -D "uid=alice,ou=people,$EX" -w alice-secret > /dev/null 2>&1; then
		ok "limits off (the default): the right password binds after $((3 * LIMIT)) wrong ones"
	else
		not_ok "limits off: the right password failed after $((3 * LIMIT)) wrong ones"
	fi
	out=$(ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b cn=limits,cn=monitor -s base bindsLimited bindFailLimit maxConnsPerIp 2>&1)
	if grep -q "^bindsLimited: 0$" <<< "$out" && grep -q "^bindFailLimit: 0$" <<< "$out" &&
		grep -q "^maxConnsPerIp: 0$" <<< "$out"; then
		ok "limits off: cn=limits,cn=monitor says 0"
	else
		not_ok "limits off: cn=limits,cn=monitor: $out"
	fi
	if stop_checked "$pid" "$work/off.log"; then ok "limits off: clean stop"; else not_ok "limits off: $stop_why"; fi
fi

# A bad value: a clear error with file:line.
conf "$work/bad.conf" "bind_fail_limit = -1"
if "$BUILD/minidir" -t -f "$work/bad.conf" > "$work/bad.out" 2>&1; then
	not_ok "bind_fail_limit = -1 accepted"
elif grep -q "bad.conf:7: bind_fail_limit: expected a number 0..1000000" "$work/bad.out"; then
	ok "bind_fail_limit = -1 refused with file:line"
else
	not_ok "bind_fail_limit = -1: $(head -3 "$work/bad.out")"
fi

start_minidir "$work/on.conf" "$work/on.log"
if [ -z "$port" ]; then
	not_ok "minidir (limits on) did not start: $(head -3 "$work/on.log")"
	finish
fi
timeout 120 "$PYTHON" tests/integration/bindlim_client.py "$port" "$EX" $LIMIT $WINDOW $MAXCONNS > "$work/client.out" 2>&1
while IFS= read -r l; do
	case $l in
	"ok - "*) ok "${l#ok - }" ;;
	"not ok - "*) not_ok "${l#not ok - }" ;;
	"# "*) echo "$l" ;; # a note (a timing try that missed)
	*) not_ok "client: $l" ;;
	esac
done < "$work/client.out"
if grep -q "closed: that address has $MAXCONNS connections open (max_conns_per_ip)" "$work/on.log"; then
	ok "the refused connection is logged"
else
	not_ok "no max_conns_per_ip line in the log: $(tail -3 "$work/on.log")"
fi
# /metrics counts what cn=limits counts.
mon=$(ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b cn=limits,cn=monitor -s base bindsLimited connsPerIpRefused 2>&1)
metrics=$(curl -s --max-time 5 "http://127.0.0.1:$mport/metrics")
bl=$(sed -n 's/^bindsLimited: //p' <<< "$mon") cr=$(sed -n 's/^connsPerIpRefused: //p' <<< "$mon")
if [ -n "$bl" ] && [ "$bl" -gt 0 ] && [ -n "$cr" ] && [ "$cr" -gt 0 ] &&
	grep -qx "minidir_binds_limited_total $bl" <<< "$metrics" &&
	grep -qx "minidir_conns_per_ip_refused_total $cr" <<< "$metrics"; then
	ok "/metrics: minidir_binds_limited_total $bl, minidir_conns_per_ip_refused_total $cr, as cn=limits"
else
	not_ok "/metrics vs cn=limits: bindsLimited=$bl connsPerIpRefused=$cr; $(grep -E 'binds_limited|per_ip' <<< "$metrics" | tr '\n' ' ')"
fi
if stop_checked "$pid" "$work/on.log"; then ok "limits on: clean stop"; else not_ok "limits on: $stop_why"; fi
finish
