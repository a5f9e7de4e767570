#!/usr/bin/env bash
# protocol/sync.c (RFC 4533, the consumer's side) against a real provider: OpenLDAP
# slapd with the syncprov overlay, configured and started here on a private port
# with examples/example.ldif. tests/integration/syncprobe runs refreshOnly searches
# with our Sync Request control and decodes every Sync State control, Sync Info
# message and Sync Done control slapd sends: a full refresh, a refresh from its
# cookie after an ldapmodify, an ldapadd and an ldapdelete on the provider, and a
# bad cookie. Stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir sync
if ! provider_setup || ! provider_start; then
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
# shellcheck disable=SC2181  # ldapmodify's status, read after its here-document
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
