#!/usr/bin/env bash
# A replica (server/replica.c) while a refresh is under way, against a real provider
# (tests/integration/provider.sh) holding example.ldif and REFRESH_ENTRIES more
# (bench/gen-ldif.sh, default 5000), so that a refresh takes a while.
# kill -9, twice: during the first refresh of a replica started from no database file,
# and during a refresh resumed from its cookie after changes made while it was down. The
# kill comes once cn=replication,cn=monitor shows the refresh has brought changes it has
# not committed yet (replicationLagEntries > 0, no refresh done); after a restart the
# replica's full dump (every entry, user attributes, as the rootdn) must equal the
# provider's: no entry lost, duplicated or phantom.
# listen_after_refresh (server/listeners.c): the port stays closed (bound, not listening:
# a connection is refused) until the first refresh of this run has committed, then the
# provider's data is served from the first answer on; with a provider that never answers
# it listens anyway once the bound has passed, and logs why.
# Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
REFRESH_ENTRIES=${REFRESH_ENTRIES:-5000}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir replica_refresh
provider_setup && provider_add_generated "$REFRESH_ENTRIES" && provider_start || finish
PROV=ldap://127.0.0.1:$port
last="uid=user.$((REFRESH_ENTRIES - 1)),ou=people,$EX"
total=$(timeout 20 ldapsearch -x -H "$PROV" -D "$ADMIN" -w secret -LLL -b "$EX" 1.1 2> /dev/null | grep -c "^dn:")

replica_conf r refreshAndPersist
replica_start() { # sets $rpid, $rlog, $REP
	replica_run r
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
# generated entry modified, some deleted, some added, some moved under a new ou), then
# kill -9 during that refresh.
for i in $(seq 0 $((REFRESH_ENTRIES - 1))); do
	printf 'dn: uid=user.%d,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: down %d\n\n' "$i" "$EX" "$i"
	[ $((i % 10)) = 0 ] && printf 'dn: uid=user.%d,ou=people,%s\nchangetype: delete\n\n' "$i" "$EX"
	[ $((i % 10)) = 5 ] && printf 'dn: uid=added.%d,ou=people,%s\nchangetype: add\nobjectClass: inetOrgPerson\nuid: added.%d\ncn: A %d\nsn: A\n\n' "$i" "$EX" "$i" "$i"
done > "$work/down.ldif"
# ... and 32 older entries moved under a new ou: the resumed refresh sends them before it
# (slapd's entry-ID order), so the refresh killed and the one after it hold them.
{
	printf 'dn: ou=Moved Branch,%s\nchangetype: add\nobjectClass: organizationalUnit\nou: Moved Branch\n\n' "$EX"
	for i in $(seq 1 40); do
		[ $((i % 10)) = 0 ] || [ $((i % 10)) = 5 ] && continue
		printf 'dn: uid=user.%d,ou=people,%s\nchangetype: modrdn\nnewrdn: uid=user.%d\ndeleteoldrdn: 0\nnewsuperior: ou=Moved Branch,%s\n\n' "$i" "$EX" "$i" "$EX"
	done
} >> "$work/down.ldif"
timeout 300 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret -f "$work/down.ldif" > "$work/down.log" 2>&1 ||
	not_ok "changes on the provider: $(tail -3 "$work/down.log")"
crash_then_converge resumed
grep -q "refresh done (present phase): .* (32 of them came before their parent and waited for it)" "$rlog" &&
	ok "the resumed refresh held the 32 entries moved under a new ou until it came" ||
	not_ok "the moved entries: $(grep -o 'refresh done.*' "$rlog" | head -1)"
grep -q "resuming from cookie" "$work/r.$((starts - 1)).log" && ok "the killed refresh had resumed from the cookie" ||
	not_ok "the second refresh did not resume from a cookie: $(grep syncrepl "$work/r.$((starts - 1)).log" | head -2)"
stop_checked "$rpid" "$rlog" && ok "replica stopped" || not_ok "stop: $stop_why"

# A config error: the key without syncrepl.
printf 'database = %s/x.mdb\nschema_dir = %s\nsuffix = %s\nlisten_after_refresh = 10\n' "$work" "$SCHEMA_DIR" "$EX" > "$work/plain.conf"
out=$("$BUILD/minidir" -t -f "$work/plain.conf" 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && grep -q "listen_after_refresh is set but syncrepl is not" <<< "$out" &&
	ok "listen_after_refresh without syncrepl: refused at start-up ($out)" || not_ok "listen_after_refresh without syncrepl: rc $rc: $out"

# held_start NAME: starts the replica NAME; sets $rpid, $rlog, $hport (from its
# "holding ldap://127.0.0.1:PORT/ closed" line, waited for up to 20 s).
held_start() {
	replica_run "$1"
	hport=$(wait_port "$rlog" ldap holding 20)
}
# watch_answers SECONDS DN: looks DN up every 20 ms until an answer comes (or SECONDS);
# $answers is the list of outcomes ("refused", then ldapsearch's exit status), one word
# each, repeats folded; $first is the first status that was not "refused".
watch_answers() {
	local rc prev=
	answers='' first=''
	for _ in $(seq 1 $(($1 * 50))); do
		rc=0
		timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$hport" -LLL -b "$2" -s base 1.1 > /dev/null 2>&1 || rc=$?
		[ "$rc" = 255 ] && rc=refused
		[ "$rc" != "$prev" ] && answers="$answers $rc"
		prev=$rc
		if [ "$rc" != refused ]; then
			first=$rc
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# 3. listen_after_refresh, from no database file: refused until the first refresh has committed, then the
# whole directory from the first answer on (never the empty suffix, noSuchObject 32).
# (600 s: under TSAN=1 beside three other tests a full refresh of these 5,000 entries took
# more than 120 s, and the bound then opened the port before it had committed)
replica_conf h refreshAndPersist "listen_after_refresh = 600"
held_start h
if [ -z "$hport" ]; then
	not_ok "no \"holding ... closed\" line: $(tail -3 "$rlog")"
	finish
fi
watch_answers 600 "$last"
if [ "${answers# }" != "${answers# refused}" ] && [ "$first" = 0 ]; then
	ok "held from no database file: connections refused, then the first answer already has $last (outcomes:$answers)"
else
	not_ok "held from no database file: outcomes '$answers' (want refused, then 0): $(grep -E 'refresh|listening' "$rlog")"
fi
# Its log: the refresh done, then listening, in that order.
order=$(grep -oE "refresh done|listening on" "$rlog" | tr '\n' ,)
[ "$order" = "refresh done,listening on," ] && grep -q "the first refresh has committed: listening" "$rlog" &&
	ok "its log: the refresh done, then listening on the port" || not_ok "log order '$order': $(grep -E 'syncrepl|listening' "$rlog")"
REP=ldap://127.0.0.1:$hport
converge 20 && ok "then it equals the provider" || not_ok "converge: $(cat "$work/diff")"

# 4. Restarted on its database file (resumed from its cookie), after a change made on the
# provider while it was down: refused until the resumed refresh has committed; the first
# answer already shows the change (a load balancer's check sees it closed until then).
stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"
printf 'dn: %s\nchangetype: modify\nreplace: description\ndescription: while down\n' "$last" |
	timeout 10 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > "$work/mod.log" 2>&1 || not_ok "modify on the provider: $(cat "$work/mod.log")"
held_start h
watch_answers 600 "$last"
desc=$(timeout 5 ldapsearch -x -H "ldap://127.0.0.1:$hport" -LLL -b "$last" -s base description 2> /dev/null | sed -n 's/^description: //p')
if grep -q "resuming from cookie" "$rlog" && [ "$first" = 0 ] && [ "$desc" = "while down" ] &&
	[ "$(grep -oE "refresh done|listening on" "$rlog" | tr '\n' ,)" = "refresh done,listening on," ]; then
	ok "restarted on its database file: held until the resumed refresh committed, then served with the change made while it was down (outcomes:$answers)"
else
	not_ok "restart: outcomes '$answers', description '$desc': $(grep -E 'syncrepl|listening' "$rlog")"
fi
stop_checked "$rpid" "$rlog" && ok "held replica stopped" || not_ok "stop: $stop_why"

# 5. A provider that never answers: after the bound (2 s) it listens anyway, says why in
# its log, and serves the empty suffix (noSuchObject, 32).
replica_conf dead refreshAndPersist "listen_after_refresh = 2"
sed -i "s#provider=$PROV#provider=ldap://127.0.0.1:1#" "$work/dead.conf"
held_start dead
watch_answers 60 "$EX"
if [ "${answers# }" != "${answers# refused}" ] && [ "$first" = 32 ] &&
	grep -q "listen_after_refresh: 2 s passed and the first refresh has not committed (syncrepl state retrying, last error: .*): serving anyway" "$rlog"; then
	ok "provider unreachable: refused, then after the bound it listens and logs why ($(grep -o "listen_after_refresh: 2 s.*" "$rlog" | cut -c1-160))"
else
	not_ok "bound: outcomes '$answers': $(grep -E 'syncrepl|listen' "$rlog")"
fi
stop_checked "$rpid" "$rlog" && ok "replica stopped after the bound" || not_ok "stop: $stop_why"
stop_checked "$spid" "$work/slapd.log" || not_ok "slapd: $stop_why"
finish
