#!/usr/bin/env bash
# A replica under load while its provider changes: 10,000 changes on OpenLDAP slapd
# (syncprov; tests/integration/provider.sh): adds, modifies and deletes of 2,500 people,
# in one ldapmodify stream, while build/searchrate loads the minidir replica
# (refreshAndPersist) with 1-entry lookups of an entry that exists throughout. Asserts:
# no search fails, and the replica converges (its full dump equals the provider's)
# within 120 s of the last change (about 1 s in a plain build here, 24 s under SAN=1).
# Prints lookups/s during the churn beside lookups/s without it (reported, never
# asserted: this machine is 2 shared cores). Stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir churn
provider_setup || finish
provider_start || finish
PROV=ldap://127.0.0.1:$port
replica_conf replica refreshAndPersist
"$BUILD/minidir" -f "$work/replica.conf" > "$work/replica.log" 2>&1 &
rpid=$!
pids+=("$rpid")
rport=$(wait_port "$work/replica.log")
[ -n "$rport" ] || { not_ok "replica did not start: $(cat "$work/replica.log")"; finish; }
REP=ldap://127.0.0.1:$rport

converge 20 || { not_ok "first refresh: $(cat "$work/diff")"; finish; }

# searchrate SECONDS: lookups of uid=alice (never changed below) for SECONDS; prints
# "RATE ERROR-LINES LOOKUPS".
searchrate() {
	local out
	out=$(timeout $(($1 + 30)) "$BUILD/searchrate" -p "$rport" -b "ou=people,$EX" \
		-f "(uid=alice)" -t 4 -a -O 1 -i "$1" -I 1 2>&1)
	local n err
	n=$(sed -n 's/.*0 (Success): *\([0-9]*\).*/\1/p' <<< "$out" | head -1)
	err=$(grep -c "^ *[1-9][0-9]* (" <<< "$(sed -n '/Result codes/,$p' <<< "$out")")
	echo "$(( ${n:-0} / $1 )) ${err:-0} ${n:-0}"
}
read -r base_rate base_err base_n <<< "$(searchrate 4)"

# 10,000 changes: 2,500 adds, 5,000 modifies (two each), 2,500 deletes, in one stream.
{
	for i in $(seq 1 2500); do
		printf 'dn: uid=churn%d,ou=people,%s\nchangetype: add\nobjectClass: inetOrgPerson\nuid: churn%d\ncn: Churn %d\nsn: C\n\n' "$i" "$EX" "$i" "$i"
	done
	for i in $(seq 1 2500); do
		printf 'dn: uid=churn%d,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: first %d\n\n' "$i" "$EX" "$i"
		printf 'dn: uid=churn%d,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: second %d\n\n' "$i" "$EX" "$i"
	done
	for i in $(seq 1 2 2500); do
		printf 'dn: uid=churn%d,ou=people,%s\nchangetype: delete\n\n' "$i" "$EX"
	done
	for i in $(seq 2 2 2500); do
		printf 'dn: uid=churn%d,ou=people,%s\nchangetype: modify\nreplace: cn\ncn: Kept %d\n\n' "$i" "$EX" "$i"
	done
} > "$work/churn.ldif"
changes=$(grep -c "^changetype:" "$work/churn.ldif")
t0=$SECONDS
timeout 300 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret -f "$work/churn.ldif" > "$work/churn.log" 2>&1 &
cpid=$!
pids+=("$cpid")
read -r churn_rate churn_err churn_n <<< "$(searchrate 8)"
if wait "$cpid"; then
	ok "$changes changes on the provider in $((SECONDS - t0)) s (ldapmodify)"
else
	not_ok "the changes on the provider: $(tail -3 "$work/churn.log")"
fi
if [ "$churn_err" = 0 ] && [ "$base_err" = 0 ] && [ "$churn_n" -gt 0 ]; then
	ok "no search failed: $base_n lookups before, $churn_n during the churn"
else
	not_ok "searches failed: before $base_err error kinds, during $churn_err ($churn_n lookups)"
fi
if converge 120; then
	ok "converged ${took} s after the last change: the replica's dump equals the provider's ($(dump "$REP" | cut -d'|' -f1 | sort -u | wc -l) entries)"
else
	not_ok "not converged 120 s after the last change: $(cat "$work/diff")"
fi
echo "# churn: lookups/s on the replica: $base_rate without changes, $churn_rate during $changes changes (4 connections, 1 in flight each; 2 shared cores)"
stop_checked "$rpid" "$work/replica.log" && ok "replica stopped cleanly" || not_ok "replica: $stop_why"
finish
