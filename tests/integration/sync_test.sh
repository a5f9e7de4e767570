#!/usr/bin/env bash
# protocol/sync.c (RFC 4533, the consumer's side) against a real provider: OpenLDAP
# slapd with the syncprov overlay, configured and started here on a private port
# with examples/example.ldif. tests/integration/syncprobe runs refreshOnly searches
# with our Sync Request control and decodes every Sync State control, Sync Info
# message and Sync Done control slapd sends: a full refresh, a refresh from its
# cookie after an ldapmodify, an ldapadd and an ldapdelete on the provider, and a
# bad cookie. Stopped by PID.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
. tests/integration/lib.sh
SLAPD=${SLAPD:-/usr/sbin/slapd}
SLAPADD=${SLAPADD:-/usr/sbin/slapadd}
SCHEMADIR=${SCHEMADIR:-/etc/ldap/schema}
MODULEDIR=${MODULEDIR:-/usr/lib/ldap}
export LDAPNOINIT=1

use_work_dir sync
EX=dc=example,dc=com
ADMIN=cn=admin,$EX
mkdir -p "$work/db"
cat > "$work/slapd.conf" << EOF
include $SCHEMADIR/core.schema
include $SCHEMADIR/cosine.schema
include $SCHEMADIR/inetorgperson.schema
include $SCHEMADIR/nis.schema
modulepath $MODULEDIR
moduleload back_mdb
moduleload syncprov
pidfile $work/slapd.pid
loglevel none
database mdb
suffix "$EX"
rootdn "$ADMIN"
rootpw secret
directory $work/db
maxsize 67108864
dbnosync
index objectClass,entryUUID,entryCSN eq
overlay syncprov
syncprov-checkpoint 1 1
EOF
grep -v "^version:" examples/example.ldif > "$work/data.ldif" # slapadd reads no version line
if ! timeout 60 "$SLAPADD" -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1; then
	not_ok "slapadd: $(cat "$work/slapadd.log")"
	echo "# sync: $pass passed, $fail failed"
	exit 1
fi
port=
for _ in $(seq 1 10); do
	p=$((20000 + RANDOM % 20000))
	timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2> /dev/null && continue
	"$SLAPD" -f "$work/slapd.conf" -h "ldap://127.0.0.1:$p/" -d 0 > "$work/slapd.log" 2>&1 &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 1 100); do
		timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$p" -LLL -b "$EX" -s base 1.1 2> /dev/null |
			grep -qi "^dn: $EX\$" && { port=$p; break; }
		kill -0 "$spid" 2> /dev/null || break
		sleep 0.05
	done
	[ -n "$port" ] && break
done
if [ -z "$port" ]; then
	not_ok "slapd did not start: $(cat "$work/slapd.log")"
	echo "# sync: $pass passed, $fail failed"
	exit 1
fi
URI=ldap://127.0.0.1:$port
probe() { timeout 60 "$BUILD/tests/integration/syncprobe" "$URI" "$ADMIN" secret "$EX" "$@"; }

# 1. A full refresh: every entry comes as add, with its entryUUID, and a cookie at the end.
total=$(grep -c "^dn:" examples/example.ldif)
rc=0
out=$(probe) || rc=$?
full=$out
adds=$(grep -c "^entry .* state=add uuid=[0-9a-f]\{32\} entryUUID=same$" <<< "$out")
cookie=$(sed -n 's/^done rc=0 cookie=\(.*\) deletes=[01]$/\1/p' <<< "$out")
if [ "$rc" = 0 ] && [ "$adds" = "$total" ] && [ -n "$cookie" ]; then
	ok "full refresh: $adds of $total entries as add, every Sync State UUID equals the entry's entryUUID, cookie $cookie"
else
	not_ok "full refresh: exit $rc, $adds of $total adds, cookie '$cookie': $(grep -v "^entry .*same$" <<< "$out" | head -5)"
fi

# 2. Changes on the provider, then a refresh from that cookie: only what changed.
ldapmodify -x -H "$URI" -D "$ADMIN" -w secret > "$work/modify.log" 2>&1 << EOF
dn: uid=alice,ou=people,$EX
changetype: modify
replace: telephoneNumber
telephoneNumber: +1 555 9999

dn: uid=newbie,ou=people,$EX
changetype: add
objectClass: inetOrgPerson
uid: newbie
cn: New Bie
sn: Bie

dn: uid=bob,ou=people,$EX
changetype: delete
EOF
[ $? = 0 ] || not_ok "ldapmodify on the provider: $(cat "$work/modify.log")"
rc=0
out=$(probe "$cookie") || rc=$?
changed=$(grep "^entry " <<< "$out" | grep -v " state=present " | sed 's/^entry \([^ ]*\) state=\([a-z]*\).*/\1 \2/' | sort | tr '\n' ';')
newcookie=$(sed -n 's/^done rc=0 cookie=\(.*\) deletes=[01]$/\1/p' <<< "$out")
want="uid=alice,ou=people,$EX add;uid=newbie,ou=people,$EX add;"
if [ "$rc" = 0 ] && [ "$changed" = "$want" ] && [ -n "$newcookie" ] && [ "$newcookie" != "$cookie" ]; then
	ok "refresh from the cookie: only the modified and the added entry ($changed), a new cookie"
else
	not_ok "refresh from the cookie: exit $rc, changed '$changed' (want '$want'), cookie '$newcookie': $(head -5 <<< "$out")"
fi
# The delete: slapd's present phase lists the UUIDs still there (syncIdSet); the
# consumer deletes what it holds and the list leaves out. Bob's UUID must be left out,
# alice's (unchanged but for a value: sent as an entry) too, and every other kept.
bob=$(sed -n "s/^entry uid=bob,ou=people,$EX state=add uuid=\([0-9a-f]*\) .*/\1/p" <<< "$full")
ids=$(sed -n 's/^id //p' <<< "$out" | sort)
if [ -n "$bob" ] && grep -q "^info syncIdSet done=[01] deletes=0 uuids=" <<< "$out" &&
	! grep -qx "$bob" <<< "$ids" && [ "$(wc -l <<< "$ids")" -ge $((total - 2)) ]; then
	ok "the delete: a present syncIdSet of $(wc -l <<< "$ids") UUIDs without the deleted entry's ($bob)"
else
	not_ok "the delete: bob '$bob', $(wc -l <<< "$ids") ids: $(grep '^info' <<< "$out" | head -3)"
fi
# 3. A refresh from the newest cookie: nothing changed, nothing sent as add.
rc=0
out=$(probe "$newcookie") || rc=$?
if [ "$rc" = 0 ] && ! grep -q " state=add " <<< "$out" && grep -q "^done rc=0 " <<< "$out"; then
	ok "refresh from the newest cookie: no entry to add ($(grep -c '^entry ' <<< "$out") present)"
else
	not_ok "refresh from the newest cookie: exit $rc: $(head -5 <<< "$out")"
fi

stop_checked "$spid" "$work/slapd.log" && ok "slapd stopped" || not_ok "slapd: $stop_why"
echo "# sync: $pass passed, $fail failed"
[ "$fail" = 0 ]
