#!/usr/bin/env bash
# kill -9 of a replica (server/replica.c) while a refresh is under way, against a real
# provider (tests/integration/provider.sh) holding example.ldif and CRASH_ENTRIES more
# (bench/gen-ldif.sh, default 5000). Twice: during the first refresh of a replica started
# from no database file, and during a refresh resumed from its cookie after changes made
# while it was down. The kill comes once cn=replication,cn=monitor shows the refresh has
# brought changes it has not committed yet (replicationLagEntries > 0, no refresh done);
# after a restart the replica's full dump (every entry, user attributes, as the rootdn)
# must equal the provider's: no entry lost, duplicated or phantom. Every server is
# stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CRASH_ENTRIES=${CRASH_ENTRIES:-5000}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir replica-crash
finish() {
	echo "# replica_crash: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}
provider_setup || finish
# The generated entries, under example.ldif's ou=people (gen-ldif's first two records,
# the suffix and ou=people, are there already).
bench/gen-ldif.sh "$CRASH_ENTRIES" "$EX" | awk 'BEGIN{RS=""; ORS="\n\n"} NR>2' > "$work/more.ldif"
if ! timeout 120 "$SLAPADD" -q -f "$work/slapd.conf" -l "$work/more.ldif" > "$work/slapadd2.log" 2>&1; then
	not_ok "slapadd of $CRASH_ENTRIES entries: $(tail -3 "$work/slapadd2.log")"
	finish
fi
provider_start || finish
PROV=ldap://127.0.0.1:$port
total=$(timeout 20 ldapsearch -x -H "$PROV" -D "$ADMIN" -w secret -LLL -b "$EX" 1.1 2> /dev/null | grep -c "^dn:")

replica_conf r refreshAndPersist
starts=0
replica_start() { # sets $rpid, $rlog, $REP
	starts=$((starts + 1))
	rlog=$work/r.$starts.log
	"$BUILD/minidir" -f "$work/r.conf" > "$rlog" 2>&1 &
	rpid=$!
	pids+=("$rpid")
	REP=ldap://127.0.0.1:$(wait_port "$rlog")
}
monitor() { # ATTR...: "ATTR: value" lines of cn=replication,cn=monitor
	timeout 5 ldapsearch -x -H "$REP" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no \
		-b cn=replication,cn=monitor -s base "$@" 2> /dev/null
}
# kill_mid_refresh WHAT: polls cn=monitor until the refresh has brought changes it has
# not committed (replicationLagEntries > 0, replicationRefreshes 0), then kill -9. Returns
# 1 when the refresh ended first (or never began) within 60 s; $lagged is what it saw.
kill_mid_refresh() {
	local m lag refreshes
	lagged=
	for _ in $(seq 1 3000); do
		m=$(monitor replicationLagEntries replicationRefreshes)
		lag=$(sed -n 's/^replicationLagEntries: //p' <<< "$m")
		refreshes=$(sed -n 's/^replicationRefreshes: //p' <<< "$m")
		[ "${refreshes:-0}" != 0 ] && break
		if [ "${lag:-0}" -gt 0 ]; then
			kill -9 "$rpid"
			wait "$rpid" 2> /dev/null
			lagged=$lag
			# the kill came before the refresh committed: its log has no "refresh done"
			! grep -q "refresh done" "$rlog"
			return
		fi
		sleep 0.01
	done
	kill -9 "$rpid"
	wait "$rpid" 2> /dev/null
	return 1
}
# crash_then_converge WHAT: a replica started (its database as it is), killed mid-refresh
# (up to three tries: a refresh may outrun the polling), restarted, converged.
crash_then_converge() {
	local what=$1 try
	for try in 1 2 3; do
		replica_start
		kill_mid_refresh && break
		[ "$try" = 3 ] && { not_ok "$what: could not kill the replica during its refresh (three tries; $(grep syncrepl "$rlog" | tail -1))"; return; }
		[ "$what" = first ] && rm -f "$work/r.mdb" "$work/r.mdb-lock"
	done
	ok "$what refresh: kill -9 with $lagged changes received and not committed (try $try)"
	replica_start
	if converge 120; then
		ok "$what refresh: after kill -9 and a restart, the dump equals the provider's in ${took}s ($(dump "$REP" | cut -d'|' -f1 | sort -u | wc -l) entries; no lost, duplicated or phantom entry; $(grep -o "refresh done.*" "$rlog" | head -1))"
	else
		not_ok "$what refresh: after kill -9: $(cat "$work/diff") $(grep syncrepl "$rlog" | tail -2)"
	fi
}

# 1. The first refresh, from no database file.
crash_then_converge first
# Every entry once: the replica's count of DNs is the provider's.
n=$(timeout 20 ldapsearch -x -H "$REP" -D "$ADMIN" -w secret -LLL -b "$EX" 1.1 2> /dev/null | grep -c "^dn:")
[ "$n" = "$total" ] && ok "the replica holds $n entries, as the provider" || not_ok "the replica holds $n entries, the provider $total"
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# 2. A refresh resumed from the cookie: changes made while the replica was down (every
# generated entry modified, some deleted, some added), then kill -9 during that refresh.
for i in $(seq 0 $((CRASH_ENTRIES - 1))); do
	printf 'dn: uid=user.%d,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: down %d\n\n' "$i" "$EX" "$i"
	[ $((i % 10)) = 0 ] && printf 'dn: uid=user.%d,ou=people,%s\nchangetype: delete\n\n' "$i" "$EX"
	[ $((i % 10)) = 5 ] && printf 'dn: uid=added.%d,ou=people,%s\nchangetype: add\nobjectClass: inetOrgPerson\nuid: added.%d\ncn: A %d\nsn: A\n\n' "$i" "$EX" "$i" "$i"
done > "$work/down.ldif"
timeout 300 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret -f "$work/down.ldif" > "$work/down.log" 2>&1 ||
	not_ok "changes on the provider: $(tail -3 "$work/down.log")"
crash_then_converge resumed
grep -q "resuming from cookie" "$work/r.$((starts - 1)).log" && ok "the killed refresh had resumed from the cookie" ||
	not_ok "the second refresh did not resume from a cookie: $(grep syncrepl "$work/r.$((starts - 1)).log" | head -2)"
stop_checked "$rpid" "$rlog" && ok "replica stopped" || not_ok "stop: $stop_why"
stop_checked "$spid" "$work/slapd.log" || not_ok "slapd: $stop_why"
finish
