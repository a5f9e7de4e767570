#!/usr/bin/env bash
# Replicas that feed replicas (issue 52, sync_provider = yes): a real slapd provider P,
# minidir replica A following it and answering Content Synchronization
# (server/ops/search_sync.h), minidir B following A (refreshAndPersist), minidir C following
# B (refreshOnly: a chain of three), and an OpenLDAP slapd consumer S following A. Changes
# on P (modify, add, delete, rename) reach every one of them (their dumps compared with
# P's); B restarted refreshes from its cookie (entries newer than it sent, the rest named
# present, what was deleted meanwhile deleted); a persistent search further behind than
# sync_provider_log ends with e-syncRefreshRequired and its consumer refreshes again; a
# Sync Request where sync_provider is off is refused (12 when critical). Every server is
# stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir sync_provider
provider_setup && provider_add_generated 200 && provider_start || finish
P=ldap://127.0.0.1:$port
PROV=$P

# A: follows P, answers Content Synchronization; it keeps 100 changes for its persistent
# searches.
replica_conf a refreshAndPersist "sync_provider = yes
sync_provider_log = 100"
replica_run a
apid=$rpid alog=$rlog
aport=$(wait_port "$alog")
A=ldap://127.0.0.1:$aport
REP=$A
[ -n "$aport" ] && converge 120 && ok "A converged with P in ${took}s" ||
	{ not_ok "A: $(tail -3 "$alog") $(cat "$work/diff" 2> /dev/null)"; finish; }

# The operation itself, as ldapsearch asks it: every entry, then a cookie A makes.
n=$(timeout 20 ldapsearch -x -H "$A" -D "$ADMIN" -w secret -LLL -E '!sync=ro' -b "$EX" 1.1 2> "$work/ro.err" | grep -c "^dn:")
want=$(timeout 20 ldapsearch -x -H "$P" -D "$ADMIN" -w secret -LLL -b "$EX" 1.1 2> /dev/null | grep -c "^dn:")
[ "$n" = "$want" ] && [ "$n" -gt 200 ] && ok "ldapsearch -E sync=ro on A: the $n entries P holds" ||
	not_ok "sync=ro on A: $n entries, want $want: $(head -3 "$work/ro.err")"

# B follows A; C follows B (refreshOnly); S, an OpenLDAP consumer, follows A.
PROV=$A
replica_conf b refreshAndPersist "sync_provider = yes"
replica_conf c refreshOnly
PROV=$P
replica_run b
bpid=$rpid blog=$rlog
bport=$(wait_port "$blog")
B=ldap://127.0.0.1:$bport
# B keeps its port across the restart below, for C.
sed -i "s|^listen = 127.0.0.1:0\$|listen = 127.0.0.1:$bport|" "$work/b.conf"
sed -i "s|provider=ldap://127.0.0.1:[0-9]*|provider=$B|" "$work/c.conf"
replica_run c
cpid=$rpid clog=$rlog
cport=$(wait_port "$clog")
C=ldap://127.0.0.1:$cport
sport=""
pick_port sport || finish
slapd_conf "$work/s.conf" "$work/s-db" "index objectClass,entryUUID eq
syncrepl rid=002 provider=$A bindmethod=simple binddn=\"$ADMIN\" credentials=secret
	searchbase=\"$EX\" type=refreshAndPersist retry=\"1 +\" attrs=\"*,+\""
"$SLAPD" -f "$work/s.conf" -h "ldap://127.0.0.1:$sport/" -d 0 > "$work/s.log" 2>&1 &
spid2=$!
pids+=("$spid2")
# shellcheck disable=SC2034  # read through ${!r} below
S=ldap://127.0.0.1:$sport
# all_converge SECONDS WHAT: B, C and S each hold what P holds.
all_converge() {
	local r
	for r in B C S; do
		REP=${!r}
		if converge "$1"; then
			ok "$r: $2 (${took}s)"
		else
			cp "$work/diff" "$work/diff.$r"
			not_ok "$r: $2: $(head -c 600 "$work/diff")"
		fi
	done
}
all_converge 120 "the first refresh through A (C through B)"

# Changes on P: a modify, an add, a rename and a delete.
ldapmodify -x -H "$P" -D "$ADMIN" -w secret > "$work/mod.log" 2>&1 << LDIF ||
dn: uid=user.1,ou=people,$EX
changetype: modify
replace: description
description: changed on P

dn: uid=new.1,ou=people,$EX
changetype: add
objectClass: inetOrgPerson
uid: new.1
cn: New One
sn: One

dn: uid=user.2,ou=people,$EX
changetype: modrdn
newrdn: uid=user.2b
deleteoldrdn: 1

dn: uid=user.3,ou=people,$EX
changetype: delete
LDIF
	not_ok "ldapmodify on P: $(cat "$work/mod.log")"
all_converge 60 "a modify, an add, a rename and a delete on P"

# B restarted: it refreshes from its cookie; what changed meanwhile comes, the rest is
# named present, and an entry deleted meanwhile goes.
stop_checked "$bpid" "$blog" || not_ok "B stop: $stop_why"
ldapmodify -x -H "$P" -D "$ADMIN" -w secret > "$work/mod2.log" 2>&1 << LDIF
dn: uid=user.4,ou=people,$EX
changetype: delete

dn: uid=user.5,ou=people,$EX
changetype: modify
replace: description
description: changed while B was down
LDIF
replica_run b
bpid=$rpid blog=$rlog
bport2=$(wait_port "$blog")
REP=$B
if [ "$bport2" = "$bport" ] && converge 60; then
	ok "B restarted converged from its cookie in ${took}s"
else
	not_ok "B restarted: $(cat "$work/diff") $(tail -3 "$blog")"
fi
refresh=$(grep -o "refresh done ([a-z ]*): [0-9]* entries added or changed[^;]*" "$blog" | head -1)
added=$(echo "$refresh" | grep -o "[0-9]* entries added" | cut -d' ' -f1)
[ -n "$added" ] && [ "$added" -lt 20 ] &&
	ok "B's refresh from its cookie brought $added entries, not every entry: $refresh" ||
	not_ok "B's refresh from its cookie: '$refresh'"

# More changes in one of A's commits than A keeps (sync_provider_log = 100): A is stopped
# while P makes 190, so that its consumer takes them in together. B's persistent search
# is ended with e-syncRefreshRequired, and B (and S) refresh again and converge.
kill -STOP "$apid"
for i in $(seq 10 199); do
	printf 'dn: uid=user.%s,ou=people,%s\nchangetype: modify\nreplace: description\ndescription: burst\n\n' "$i" "$EX"
done | ldapmodify -x -H "$P" -D "$ADMIN" -w secret > "$work/burst.log" 2>&1 ||
	not_ok "the burst on P: $(tail -2 "$work/burst.log")"
kill -CONT "$apid"
REP=$A
converge 60 || not_ok "A after the burst: $(cat "$work/diff")"
all_converge 90 "190 changes at once, more than A's sync_provider_log"
grep -q "e-syncRefreshRequired" "$blog" &&
	ok "B was told to refresh again (e-syncRefreshRequired) and did" ||
	not_ok "B's log has no e-syncRefreshRequired: $(grep -i "refresh" "$blog" | tail -3)"

# Where sync_provider is off (C), a Sync Request is refused.
timeout 10 ldapsearch -x -H "$C" -D "$ADMIN" -w secret -LLL -E '!sync=ro' -b "$EX" 1.1 > "$work/c_sync.out" 2>&1
rc=$?
[ "$rc" = 12 ] && grep -q "sync_provider = no" "$work/c_sync.out" &&
	ok "a critical Sync Request where sync_provider is off: 12, and why" ||
	not_ok "Sync Request on C: rc $rc $(head -3 "$work/c_sync.out")"

stop_checked "$cpid" "$clog" && ok "C stops on SIGTERM, exit 0" || not_ok "C stop: $stop_why"
stop_checked "$bpid" "$blog" && ok "B stops on SIGTERM, exit 0" || not_ok "B stop: $stop_why"
stop_checked "$apid" "$alog" && ok "A stops on SIGTERM, exit 0" || not_ok "A stop: $stop_why"
finish
