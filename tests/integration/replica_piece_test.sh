#!/usr/bin/env bash
# A refresh too large for one LMDB transaction (server/replica/txn.c, replica_txn_piece):
# a provider (tests/integration/provider.sh) with PIECE_ENTRIES generated entries of about
# PIECE_BYTES bytes each (130,000 of 2,600: LMDB's cap on a transaction's dirty pages,
# which a refresh committed whole met with MDB_TXN_FULL, was passed at the 113,780th of them).
# A replica started from no database file commits its full refresh in pieces: one is
# served before the refresh ends (cn=replication counts its changes, no refresh done),
# kill -9 then, and the restart refreshes in full again (no cookie was stored) to the
# provider's entries exactly (every DN with its entryCSN; the last entry whole), logged
# with its count of pieces, and follows a change after it.
# Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
# Under SAN=1 5,000 of 20,000 bytes (three pieces, by their bytes): each change's nested
# LMDB transaction allocates its dirty and free page lists (3 MB), which ASan maps afresh
# and unmaps each time, so the replica stores about 300 entries a second there alone, 75
# beside three other tests, against 13,000 in the plain build.
case $BUILD in *san*)
	PIECE_ENTRIES=${PIECE_ENTRIES:-5000}
	PIECE_BYTES=${PIECE_BYTES:-20000}
	;;
esac
PIECE_ENTRIES=${PIECE_ENTRIES:-130000}
PIECE_BYTES=${PIECE_BYTES:-2600}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir replica_piece
PROVIDER_MAXSIZE=$((2 << 30)) provider_setup &&
	provider_add_generated "$PIECE_ENTRIES" "$PIECE_BYTES" && provider_start || finish
PROV=ldap://127.0.0.1:$port
last="uid=user.$((PIECE_ENTRIES - 1)),ou=people,$EX"

replica_conf r refreshAndPersist
replica_start() { # sets $rpid, $rlog, $REP
	replica_run r
	REP=ldap://127.0.0.1:$(wait_port "$rlog")
}
monitor() { # ATTR: the replica's cn=replication,cn=monitor value
	timeout 5 ldapsearch -x -H "$REP" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no \
		-b cn=replication,cn=monitor -s base "$1" 2> /dev/null | sed -n "s/^$1: //p"
}
# csns URI: every entry's DN and entryCSN, one "DN | CSN" a line, sorted.
csns() {
	timeout 60 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$EX" \
		entryCSN 2> /dev/null | awk '/^dn: /{dn=$0} /^entryCSN: /{print dn " | " $2}' |
		LC_ALL=C sort
}
entry() { # URI DN: the entry's user attributes, sorted
	timeout 10 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$2" -s base \
		2> /dev/null | LC_ALL=C sort
}

# 1. From no database file: a piece committed and served before the refresh ends.
replica_start
changes=0 refreshes=0
end=$((SECONDS + 120))
while [ "$SECONDS" -lt "$end" ]; do
	changes=$(monitor replicationChanges)
	refreshes=$(monitor replicationRefreshes)
	[ "${changes:-0}" -gt 0 ] || [ "${refreshes:-0}" -gt 0 ] && break
	sleep 0.1
done
first="uid=user.0,ou=people,$EX"
if [ "${refreshes:-0}" = 0 ] && [ "${changes:-0}" -gt 0 ] &&
	[ "$(entry "$REP" "$first")" = "$(entry "$PROV" "$first")" ]; then
	ok "a piece of the refresh committed and served before its end: $changes changes, $first equal to the provider's"
else
	not_ok "no piece before the refresh's end (changes '$changes', refreshes '$refreshes'): $(grep -E 'syncrepl|error' "$rlog" | tail -3)"
fi
kill -9 "$rpid"
wait "$rpid" 2> /dev/null
grep -q "refresh done" "$rlog" && not_ok "the kill came after the refresh ended: $(grep 'refresh done' "$rlog")"

# 2. The restart: no cookie was stored, so a full refresh again, in pieces, to the end.
replica_start
done_line=
end=$((SECONDS + 300))
while [ "$SECONDS" -lt "$end" ]; do
	done_line=$(grep "refresh done" "$rlog")
	[ -n "$done_line" ] && break
	kill -0 "$rpid" 2> /dev/null || break
	sleep 0.1
done
if grep -q "no cookie" "$rlog" && [[ $done_line =~ "refresh done (full refresh): "[0-9]+" entries added or changed, 0 deleted; committed in "[0-9]+" pieces" ]]; then
	ok "restarted after kill -9 between pieces: a full refresh again, ${done_line#*rid=001: }"
else
	not_ok "the refresh after the restart: '${done_line#*rid=001: }' $(grep -E 'syncrepl|error' "$rlog" | tail -3)"
fi
grep -q "TXN_FULL" "$work"/r.*.log && not_ok "MDB_TXN_FULL: $(grep -h TXN_FULL "$work"/r.*.log | head -1)"
want=$(csns "$PROV")
got=$(csns "$REP")
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	ok "the replica's entries equal the provider's: $(wc -l <<< "$want") DNs with their entryCSN"
else
	not_ok "the replica differs from the provider ($(wc -l <<< "$got") vs $(wc -l <<< "$want") entries): $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -3 | tr '\n' ' ')"
fi
w=$(entry "$PROV" "$last")
[ -n "$w" ] && [ "$(entry "$REP" "$last")" = "$w" ] && ok "$last: its $(wc -c <<< "$w") bytes equal the provider's" ||
	not_ok "$last differs from the provider's"

# 3. Persisting after it: a change on the provider reaches the replica.
timeout 20 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > /dev/null 2>&1 << EOF
dn: $last
changetype: modify
replace: description
description: changed after the refresh
EOF
seen=
for _ in $(seq 1 200); do
	seen=$(entry "$REP" "$last" | sed -n 's/^description: //p')
	[ "$seen" = "changed after the refresh" ] && break
	sleep 0.1
done
[ "$seen" = "changed after the refresh" ] && ok "persisting after the pieces: a modify on the provider reached the replica" ||
	not_ok "the modify did not reach the replica: '${seen:0:40}'"
stop_checked "$rpid" "$rlog" && ok "replica stopped" || not_ok "replica stop: $stop_why"
stop_checked "$spid" "$work/slapd.log" && ok "slapd stopped" || not_ok "slapd: $stop_why"
finish
