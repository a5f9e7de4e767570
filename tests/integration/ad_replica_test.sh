#!/usr/bin/env bash
# minidir as a replica of an Active Directory domain controller (tests/integration/
# samba_ad.sh: Debian's Samba AD DC, provisioned by the test, alone in a network namespace
# of its own and reached through a relay on 127.0.0.1), followed with syncrepl
# type=dirSync (server/replica/dirsync.h). A first DirSync refresh brings the domain's
# objects with users and groups in groups; then, while the replica runs, a modify arrives
# as the changed attribute alone (the others kept), a member added and one removed as
# values, a delete as a tombstone, a rename as the object under its new DN; the replica
# stopped, a change made meanwhile comes with its restart from the stored cookie, and a
# cookie the DC refuses makes a full refresh. Beside it, a second replica follows the same
# DC with type=usnChanged (server/replica/usn.h: uSNChanged polling, whole objects,
# tombstones by the Show Deleted control) through the same steps: its first load, the
# modify, the members, the delete, rename and move, the restart from its cookie, and a
# cookie of another invocationId of the DC (a restored DC), which makes a full load. After
# each step each replica's users and groups (their DN and the attributes compared) equal
# a search of the DC. Filters on AD's types (schema/ad.schema: sAMAccountName,
# userPrincipalName, objectSid in its string form, userAccountControl, groupType,
# primaryGroupID) find what they find on the DC, and SSSD's ldap provider with
# ldap_schema = ad (sssd.sh) resolves users and their nested groups from the replica as
# from the DC. Replicated users bind with their DC passwords (bind_passthrough: the DC checks
# them), a disabled one is refused without the DC, and with the DC stopped a bind is
# unavailable (52) unless the user bound through the DC less than bind_passthrough_cache
# (10 s) before. Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/samba_ad.sh
. tests/integration/sssd.sh
export LDAPNOINIT=1
use_work_dir ad_replica
if ! ad_usable; then
	not_ok "the Samba AD DC cannot run here: $ad_why (scripts/deps.sh installs samba-ad-dc; the test runs as root)"
	finish
fi
# Seconds a change may take to show: the replica polls every 2 s.
CONVERGE=60 # a bound, not a wait: a slow machine under SAN=1 took over 15 s for the first load
ad_provision || finish
ad_start || finish
pick_port mport || finish
pick_port umport || finish

# 1. Users and groups, groups in groups, made with samba-tool on the running DC.
for u in alice bob carol dave; do
	ad_tool user add "$u" "Pass.$u.1" --use-username-as-cn --given-name="$u" --surname=Tester > /dev/null 2>&1 ||
		not_ok "samba-tool user add $u"
done
ad_tool ou add "OU=Staff,$AD_BASE" > /dev/null 2>&1 || not_ok "samba-tool ou add"
ad_tool group add engineers > /dev/null 2>&1 || not_ok "group add engineers"
ad_tool group add everyone-eng > /dev/null 2>&1 || not_ok "group add everyone-eng"
ad_tool group addmembers engineers alice,bob > /dev/null 2>&1 || not_ok "addmembers engineers"
ad_tool group addmembers everyone-eng engineers,carol > /dev/null 2>&1 || not_ok "addmembers everyone-eng"

# shellcheck disable=SC2154  # mport: set by pick_port
cat > "$work/replica.conf" << EOF
listen = 127.0.0.1:0
database = $work/replica.mdb
schema_dir = $SCHEMA_DIR
suffix = $AD_BASE
rootdn = cn=admin,$AD_BASE
rootpw = secret
sizelimit = unlimited
schema = core cosine inetorgperson nis ad
syncrepl = rid=001 provider=$ad_ldaps tls_reqcert=never bindmethod=simple
	binddn="$AD_ADMIN_DN" credentials=$AD_PW searchbase="$AD_BASE"
	type=dirSync interval=00:00:00:02 retry="1 +"
bind_passthrough = yes
bind_passthrough_cache = 10
metrics_listen = 127.0.0.1:$mport
ready_max_lag_ms = 3000
EOF
rep_start() {
	start_minidir "$work/replica.conf" "$work/replica.$1.log"
	rport=$port
	[ -n "$rport" ] || not_ok "the replica did not start: $(tail -3 "$work/replica.$1.log")"
}
# The usnChanged replica: the same but for its type, file and ports (upid, uport), and
# the attributes compared, member asked two values a window ("member;range=0-1", as a DC
# cuts a group past its MaxValRange, 1,500): a group of more (Administrators, Users) is
# read window after window ("member;range=2-*").
# shellcheck disable=SC2154  # umport: set by pick_port
sed -e "s|^database = .*|database = $work/usn.mdb|" \
	-e "s|type=dirSync|type=usnChanged attrs=\"objectClass,cn,sAMAccountName,description,member;range=0-1,userAccountControl,givenName,sn\"|" \
	-e "s|^metrics_listen = .*|metrics_listen = 127.0.0.1:$umport|" -e '/^bind_passthrough/d' \
	"$work/replica.conf" > "$work/usn.conf"
usn_start() {
	local keep=$pid
	start_minidir "$work/usn.conf" "$work/usn.$1.log"
	upid=$pid
	uport=$port
	pid=$keep
	[ -n "$uport" ] || not_ok "the usnChanged replica did not start: $(tail -3 "$work/usn.$1.log")"
}

# dump URI ARGS...: the users and groups (objectClass user or group) with the attributes
# compared, "DN | type: value" a line, sorted (types lowercased); not the DC's referrals
# to its other naming contexts ("# refldaps://...").
ATTRS="objectClass cn sAMAccountName description member userAccountControl objectGUID givenName sn"
dump() {
	local uri=$1
	shift
	# shellcheck disable=SC2086  # ATTRS: one argument a name
	ad_ldap ldapsearch -x -H "$uri" "$@" -LLL -o ldif-wrap=no -b "$AD_BASE" \
		"(|(objectClass=user)(objectClass=group))" $ATTRS 2> /dev/null | grep -v '^#' |
		awk '/^dn::? /{dn=$0} NF{i=index($0, ":"); print dn " | " tolower(substr($0, 1, i - 1)) substr($0, i)}' |
		LC_ALL=C sort
}
dc_dump() { dump "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW"; }
# The replica asked is the dirSync one, or the one on port $on when set (on=$uport).
rep_dump() { dump "ldap://127.0.0.1:${on:-$rport}" -D "cn=admin,$AD_BASE" -w secret; }

# converge WHAT: polls until the replica's dump equals the DC's; uconverge WHAT: the same
# for the usnChanged replica.
uconverge() { on=$uport converge "usnChanged: $1"; }
converge() {
	local want got start
	want=$(dc_dump)
	start=$(date +%s)
	while [ $(($(date +%s) - start)) -lt "$CONVERGE" ]; do
		got=$(rep_dump)
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			ok "$1: the replica's users and groups equal the DC's ($(grep -c '| objectguid' <<< "$want") objects)"
			return 0
		fi
		sleep 0.5
	done
	not_ok "$1: the replica differs from the DC after ${CONVERGE}s: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -4 | tr '\n' ' ')"
}

# dc_dns ARGS / rep_dns ARGS: the DNs a search under $AD_BASE (ARGS: scope, filter) finds
# on the DC (as Administrator) / on the replica (as its rootdn), sorted.
dc_dns() {
	ad_ldap ldapsearch -x -H "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW" -LLL -o ldif-wrap=no -b "$AD_BASE" \
		"$@" 1.1 2> /dev/null | sed -n 's/^dn: //p' | LC_ALL=C sort
}
rep_dns() {
	timeout 10 ldapsearch -x -H "ldap://127.0.0.1:${on:-$rport}" -D "cn=admin,$AD_BASE" -w secret -LLL \
		-o ldif-wrap=no -b "$AD_BASE" "$@" 1.1 2> /dev/null | sed -n 's/^dn: //p' | LC_ALL=C sort
}
# sid_text: the base64 SIDs on stdin, one a line, in their string form (S-1-5-21-...).
sid_text() {
	python3 -c 'import base64,struct,sys
for l in sys.stdin:
    b=base64.b64decode(l); n=b[1]
    print("S-%d-%d" % (b[0], int.from_bytes(b[2:8], "big")) + "".join("-%d" % v for v in struct.unpack("<%dI" % n, b[8:8+4*n])))'
}

# inchain WHAT: the members of everyone-eng, groups in groups followed (the in-chain rule,
# as AD clients ask for nested membership), on the replica equal the DC's answer.
inchain() {
	local f="(memberOf:1.2.840.113556.1.4.1941:=CN=everyone-eng,CN=Users,$AD_BASE)" want got
	want=$(dc_dns "$f")
	got=$(rep_dns "$f")
	[ -n "$want" ] && [ "$got" = "$want" ] &&
		ok "$1: the in-chain members of everyone-eng equal the DC's ($(tr '\n' ' ' <<< "$want"))" ||
		not_ok "$1: in-chain members of everyone-eng: replica '$(tr '\n' ' ' <<< "$got")', DC '$(tr '\n' ' ' <<< "$want")'"
}

# 2. From no database file: the first refresh.
rep_start 1
usn_start 1
converge "first DirSync refresh"
inchain "first DirSync refresh"
uconverge "first load"
grep -q "no cookie: full uSNChanged load" "$work/usn.1.log" && ok "usnChanged: the first poll was a full load" ||
	not_ok "usnChanged: no full load logged: $(grep syncrepl "$work/usn.1.log" | tail -3)"
# The entries right below the domain's root: the DC's (its referral to the Configuration
# naming context is no entry; DirSync sends that context's head, which is not stored).
want=$(dc_dns -s one)
got=$(rep_dns -s one)
[ -n "$want" ] && [ "$got" = "$want" ] &&
	ok "the entries below the domain's root equal the DC's ($(grep -c . <<< "$want"); no CN=Configuration)" ||
	not_ok "below the root: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -3 | tr '\n' ' ')"
grep -q "no cookie: full DirSync refresh" "$work/replica.1.log" && ok "the first poll was a full refresh" ||
	not_ok "no full refresh logged: $(tail -3 "$work/replica.1.log")"

# 3. A modify: only description changes on the DC; the stream brings it alone.
ad_modify > /dev/null << EOF || not_ok "ldapmodify description"
dn: CN=alice,CN=Users,$AD_BASE
changetype: modify
replace: description
description: changed once
EOF
converge "a modify (description)"
uconverge "a modify (description)"
# 4. A member added, one removed.
ad_tool group addmembers engineers dave > /dev/null 2>&1 || not_ok "addmembers dave"
ad_tool group removemembers engineers bob > /dev/null 2>&1 || not_ok "removemembers bob"
converge "a member added and one removed"
uconverge "a member added and one removed"
# 5. A delete, a rename and a move.
ad_tool user delete carol > /dev/null 2>&1 || not_ok "user delete carol"
ad_ldap ldapmodrdn -x -H "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW" -r "CN=dave,CN=Users,$AD_BASE" "CN=david" > /dev/null || not_ok "modrdn dave"
ad_ldap ldapmodrdn -x -H "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW" -r -s "OU=Staff,$AD_BASE" "CN=bob,CN=Users,$AD_BASE" "CN=bob" > /dev/null || not_ok "move bob"
converge "a delete, a rename and a move"
inchain "a delete, a rename and a move"
uconverge "a delete, a rename and a move"
on=$uport inchain "usnChanged: a delete, a rename and a move"

# filters WHAT: filters on AD's attribute types (schema/ad.schema) find on the replica
# what they find on the DC.
filters() {
	local f want got sid
	# alice's objectSid in its string form (S-1-5-21-...), which AD takes in a filter too
	sid=$(ad_ldap ldapsearch -x -H "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW" -LLL -o ldif-wrap=no \
		-b "CN=alice,CN=Users,$AD_BASE" -s base objectSid 2> /dev/null | sed -n 's/^objectSid:: //p' | sid_text)
	for f in "(sAMAccountName=ALICE)" "(userPrincipalName=alice@EXAMPLE.com)" "(objectSid=$sid)" \
		"(&(objectClass=user)(userAccountControl=514))" "(&(objectClass=group)(groupType=-2147483646))" \
		"(&(objectClass=user)(primaryGroupID=513)(!(sAMAccountName=a*)))"; do
		want=$(dc_dns "$f")
		got=$(rep_dns "$f")
		[ -n "$want" ] && [ "$got" = "$want" ] &&
			ok "$1: $f finds the DC's $(grep -c . <<< "$want") entries" ||
			not_ok "$1: $f: replica '$(tr '\n' ' ' <<< "$got")', DC '$(tr '\n' ' ' <<< "$want")'"
	done
}

# Ranged retrieval ([MS-ADTS] 3.1.1.3.1.3.3, how an AD client reads a large group a window
# at a time): engineers' member values asked as "member;range=R" for five windows: the
# descriptions and value counts the replica answers equal the DC's (a window reaching the
# last value is "FIRST-*", one past it none), and the first two windows together are every
# value (which value comes first is each server's own order).
ranges() { # URI ARGS...: "R: DESC COUNT" a window, then the values of 0-0 and 1-*, sorted
	local uri=$1 r
	shift
	for r in 0-0 '1-*' '0-*' 1-1 '5-*'; do
		echo "$r: $(ad_ldap ldapsearch -x -H "$uri" "$@" -LLL -o ldif-wrap=no -b "CN=engineers,CN=Users,$AD_BASE" \
			-s base '(objectClass=*)' "member;range=$r" 2> /dev/null |
			awk -F': ' '/^member;/{d=$1; n++} END{print d, n + 0}')"
	done
	for r in 0-0 '1-*'; do
		ad_ldap ldapsearch -x -H "$uri" "$@" -LLL -o ldif-wrap=no -b "CN=engineers,CN=Users,$AD_BASE" \
			-s base '(objectClass=*)' "member;range=$r" 2> /dev/null | sed -n 's/^member;[^:]*: //p'
	done | LC_ALL=C sort
}
want=$(ranges "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW")
got=$(ranges "ldap://127.0.0.1:$rport" -D "cn=admin,$AD_BASE" -w secret)
[ -n "$want" ] && grep -q '^1-\*: member;range=1-\* ' <<< "$want" && [ "$got" = "$want" ] &&
	ok "ranged retrieval of engineers' member values answers as the DC ($(head -5 <<< "$want" | tr '\n' ';'))" ||
	not_ok "ranged retrieval: replica '$(tr '\n' ';' <<< "$got")', DC '$(tr '\n' ';' <<< "$want")'"

# bind NAME PASSWORD: the result code of a simple bind as user NAME on the replica.
bind() {
	local rc=0
	timeout 20 ldapwhoami -x -H "ldap://127.0.0.1:$rport" -D "CN=$1,CN=Users,$AD_BASE" -w "$2" \
		> /dev/null 2>&1 || rc=$?
	echo "$rc"
}
# expect_bind NAME PASSWORD RC WHAT: one check that the bind answers RC.
expect_bind() {
	local rc
	rc=$(bind "$1" "$2")
	[ "$rc" = "$3" ] && ok "$4 ($3)" || not_ok "$4: rc $rc, not $3"
}

# 6. Binds of replicated users, whose passwords the DC never gives out: checked by the DC
# (bind_passthrough); a user disabled on the DC is refused here without asking it.
ad_tool user add erin Pass.erin.1 --use-username-as-cn > /dev/null 2>&1 || not_ok "user add erin"
ad_tool user disable erin > /dev/null 2>&1 || not_ok "user disable erin"
converge "a user added and disabled"
filters "AD's types"
# tokenGroups (constructed, asked by name): the SIDs of alice's groups, nested and primary,
# as the DC constructs them (the domain's; the DC adds builtin ones such as S-1-5-32-545).
sids() { # URI ARGS...: alice's tokenGroups as S-1-5-21-... strings, sorted
	local uri=$1
	shift
	ad_ldap ldapsearch -x -H "$uri" "$@" -LLL -o ldif-wrap=no -b "CN=alice,CN=Users,$AD_BASE" -s base \
		tokenGroups 2> /dev/null | sed -n 's/^tokenGroups:: //p' | sid_text |
		grep '^S-1-5-21-' | LC_ALL=C sort
}
want=$(sids "$ad_ldaps" -D "$AD_ADMIN" -w "$AD_PW")
got=$(sids "ldap://127.0.0.1:$rport" -D "cn=admin,$AD_BASE" -w secret)
[ -n "$want" ] && [ "$got" = "$want" ] &&
	ok "alice's tokenGroups (the domain's SIDs) equal the DC's ($(grep -c . <<< "$want"): nested and primary groups)" ||
	not_ok "alice's tokenGroups: replica '$(tr '\n' ' ' <<< "$got")', DC '$(tr '\n' ' ' <<< "$want")'"
# SSSD's ldap provider with ldap_schema = ad and its defaults (IDs mapped from objectSid,
# groups from tokenGroups) resolves users and their groups from the replica as it does
# from the DC.
if sssd_usable; then
	want=$(sssd_ids dc "$ad_ldaps" "$AD_ADMIN_DN" "$AD_PW" "$AD_BASE" alice dave bob Administrator)
	got=$(sssd_ids replica "ldap://127.0.0.1:$rport" "cn=admin,$AD_BASE" secret "$AD_BASE" alice dave bob Administrator)
	[ -n "$want" ] && ! grep -q ': none' <<< "$want" && [ "$got" = "$want" ] &&
		ok "SSSD (ldap_schema = ad) resolves users and nested groups from the replica as from the DC ($(tr '\n' ';' <<< "$want"))" ||
		not_ok "SSSD from the replica: '$(tr '\n' ';' <<< "$got")', from the DC: '$(tr '\n' ';' <<< "$want")'"
else
	not_ok "SSSD cannot run here: $sssd_why (scripts/deps.sh installs sssd-ldap and libnss-sss)"
fi
expect_bind alice Pass.alice.1 0 "alice binds on the replica with her password on the DC"
expect_bind alice Wrong.pass.1 49 "alice with a wrong password: invalidCredentials"
expect_bind erin Pass.erin.1 49 "erin, disabled on the DC (userAccountControl), is refused with her password"
expect_bind nobody Pass.x.1 49 "an unknown user"

# Health: the lag in USNs (the DC's highestCommittedUSN now, minus when the last committed
# poll began) is in /metrics, and /readyz answers 200.
mget() { # PATH: "STATUS BODY" of GET PATH on the replica's HTTP endpoint
	local code
	code=$(curl -s -m 5 -o "$work/body" -w '%{http_code}' "http://127.0.0.1:$mport$1" 2> /dev/null)
	echo "$code $(head -c 200 "$work/body" 2> /dev/null | tr '\n' ' ')"
}
metric() { curl -s -m 5 "http://127.0.0.1:${2:-$mport}/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
lag=$(metric minidir_replication_lag_changes)
r=$(mget /readyz)
case "$lag:$r" in
[0-9]*:"200 "*) ok "health: minidir_replication_lag_changes $lag (USNs), /readyz $r" ;;
*) not_ok "health: lag_changes '$lag', /readyz '$r'" ;;
esac
lag=$(metric minidir_replication_lag_changes "$umport")
case $lag in
[0-9]*) ok "usnChanged: health: minidir_replication_lag_changes $lag (USNs)" ;;
*) not_ok "usnChanged: health: lag_changes '$lag' (-1: unknown)" ;;
esac

# An account without the replication right (a plain user of the domain): the DC refuses
# it DirSync (50), and the replica asks again with OBJECT_SECURITY: what it may read, as
# a search by that account on the DC shows it.
ad_tool user add reader Pass.reader.1 --use-username-as-cn > /dev/null 2>&1 || not_ok "user add reader"
ad_tool user add frank Pass.frank.1 --use-username-as-cn > /dev/null 2>&1 || not_ok "user add frank"
sed -e "s|^database = .*|database = $work/reader.mdb|" -e '/^metrics_listen/d' -e '/^bind_passthrough/d' \
	-e "s|binddn=\"[^\"]*\" credentials=[^ ]*|binddn=\"CN=reader,CN=Users,$AD_BASE\" credentials=Pass.reader.1|" \
	"$work/replica.conf" > "$work/reader.conf"
sed -e "s|^database = .*|database = $work/ureader.mdb|" -e "s|type=dirSync|type=usnChanged|" \
	"$work/reader.conf" > "$work/ureader.conf"
mainpid=$pid
start_minidir "$work/reader.conf" "$work/reader.log"
rdpid=$pid
rdport=$port
start_minidir "$work/ureader.conf" "$work/ureader.log"
urdpid=$pid
urdport=$port
pid=$mainpid
want=$(dump "$ad_ldaps" -D "CN=reader,CN=Users,$AD_BASE" -w Pass.reader.1)
# reader_equal PORT WHAT: polls until the replica on PORT holds what the account reads on
# the DC ($want), then one check.
reader_equal() {
	local got=
	for _ in $(seq 1 30); do
		got=$(dump "ldap://127.0.0.1:$1" -D "cn=admin,$AD_BASE" -w secret)
		[ -n "$want" ] && [ "$got" = "$want" ] && break
		sleep 0.5
	done
	[ -n "$want" ] && [ "$got" = "$want" ] &&
		ok "$2: the replica holds what it reads on the DC ($(grep -c '| objectguid' <<< "$want") users and groups)" ||
		not_ok "$2's replica differs from its view of the DC: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -3 | tr '\n' ' ')"
}
reader_equal "$rdport" "an unprivileged account"
grep -q "asking again with OBJECT_SECURITY" "$work/reader.log" && ok "the refusal was logged, and DirSync asked again with OBJECT_SECURITY" ||
	not_ok "no OBJECT_SECURITY line: $(grep syncrepl "$work/reader.log" | tail -2)"
stop_checked "$rdpid" "$work/reader.log" || not_ok "reader replica stop: $stop_why"
# The same account with type=usnChanged, its fallback: what it reads; one line when the DC
# shows it no tombstone (a one-level search of CN=Deleted Objects with Show Deleted, which
# finds carol's for Administrator; Samba shows a plain user none); then a user deleted
# reaches it when it is shown tombstones, and stays, as logged, when it is not.
reader_equal "$urdport" "usnChanged: an unprivileged account"
seen=$(ad_ldap ldapsearch -x -H "$ad_ldaps" -D "CN=reader,CN=Users,$AD_BASE" -w Pass.reader.1 -LLL \
	-e '!1.2.840.113556.1.4.417' -b "CN=Deleted Objects,$AD_BASE" -s one '(isDeleted=TRUE)' 1.1 2> /dev/null | grep -c '^dn:')
logged=$(grep -cE "cannot read CN=Deleted Objects|is shown no deleted object in CN=Deleted Objects" "$work/ureader.log")
{ [ "$seen" -gt 0 ] && [ "$logged" = 0 ]; } || { [ "$seen" = 0 ] && [ "$logged" = 1 ]; } &&
	ok "usnChanged: tombstones the plain account is shown on the DC: $seen; logged as not shown: $logged times" ||
	not_ok "usnChanged: tombstones shown to the account: $seen, logged: $logged: $(grep syncrepl "$work/ureader.log" | tail -2)"
ad_tool user delete frank > /dev/null 2>&1 || not_ok "user delete frank"
if [ "$seen" -gt 0 ]; then
	want=$(dump "$ad_ldaps" -D "CN=reader,CN=Users,$AD_BASE" -w Pass.reader.1)
	reader_equal "$urdport" "usnChanged: an unprivileged account, after a delete"
else
	sleep 3 # a poll or more (every 2 s)
	[ "$(on=$urdport rep_dns "(sAMAccountName=frank)")" = "CN=frank,CN=Users,$AD_BASE" ] &&
		ok "usnChanged: a user deleted stays on the replica of an account shown no tombstone, as logged" ||
		not_ok "usnChanged: frank, deleted, on the plain account's replica: '$(on=$urdport rep_dns "(sAMAccountName=frank)")'"
fi
stop_checked "$urdpid" "$work/ureader.log" || not_ok "usnChanged reader replica stop: $stop_why"

# 7. Stopped; a change meanwhile comes at its restart, from the stored cookie.
stop_checked "$pid" "$work/replica.1.log" || not_ok "replica stop: $stop_why"
stop_checked "$upid" "$work/usn.1.log" || not_ok "usnChanged replica stop: $stop_why"
ad_modify > /dev/null << EOF || not_ok "ldapmodify description 2"
dn: CN=alice,CN=Users,$AD_BASE
changetype: modify
replace: description
description: changed while the replica was stopped
EOF
rep_start 2
converge "restarted from its cookie"
grep -q "full DirSync refresh" "$work/replica.2.log" && not_ok "the restart made a full refresh, not one from the cookie" ||
	ok "the restart resumed from the stored cookie"
usn_start 2
uconverge "restarted from its cookie"
grep -q "changes since the cookie): [1-9]" "$work/usn.2.log" && ! grep -q "full uSNChanged load" "$work/usn.2.log" &&
	ok "usnChanged: the restart resumed from the stored cookie ($(grep -o 'changes since the cookie): [^,]*' "$work/usn.2.log" | head -1))" ||
	not_ok "usnChanged: the restart did not resume from its cookie: $(grep syncrepl "$work/usn.2.log" | tail -3)"

# 7b. A cookie the DC no longer takes (Samba answers unavailableCriticalExtension, 12): the
# replica drops it, logs it, and refreshes in full, so a user deleted meanwhile is gone
# from it (no tombstone comes to a refresh without a cookie). The stored cookie is
# overwritten with bytes of the right length while the replica is stopped (mdb_dump and
# mdb_load on the file's meta table).
stop_checked "$pid" "$work/replica.2.log" || not_ok "replica stop: $stop_why"
ad_tool user delete bob > /dev/null 2>&1 || not_ok "user delete bob"
mdb_dump -n -s meta -f "$work/meta.dump" "$work/replica.mdb" &&
	python3 - "$work/meta.dump" << 'PY' && mdb_load -n -s meta -f "$work/meta.dump" "$work/replica.mdb" 2> "$work/mdb_load.log" ||
import sys
path = sys.argv[1]
lines = open(path).read().split("\n")
key = " " + b"cookie".hex()
i = lines.index(key)  # the value follows its key
lines[i + 1] = " " + "ab" * (len(lines[i + 1].strip()) // 2)
open(path, "w").write("\n".join(lines))
PY
	not_ok "overwriting the stored cookie with mdb_dump/mdb_load failed"
# The usnChanged replica's cookie (usn=N;invocationId=GUID) given another invocationId, as
# after the DC's restore from a backup: its USNs mean nothing, so the replica loads in full.
stop_checked "$upid" "$work/usn.2.log" || not_ok "usnChanged replica stop: $stop_why"
mdb_dump -n -s meta -f "$work/umeta.dump" "$work/usn.mdb" &&
	python3 - "$work/umeta.dump" << 'PY' && mdb_load -n -s meta -f "$work/umeta.dump" "$work/usn.mdb" 2> "$work/mdb_load.log" ||
import sys
path = sys.argv[1]
lines = open(path).read().split("\n")
i = lines.index(" " + b"cookie".hex())
usn = bytes.fromhex(lines[i + 1].strip()).split(b";")[0]
lines[i + 1] = " " + (usn + b";invocationId=00000000-1111-2222-3333-444444444444").hex()
open(path, "w").write("\n".join(lines))
PY
	not_ok "overwriting the usnChanged cookie with mdb_dump/mdb_load failed"
usn_start 3
# (the content is the DC's already: converging says nothing of the poll; its lines do)
for _ in $(seq 1 300); do grep -q "refresh done" "$work/usn.3.log" && break; sleep 0.1; done
uconverge "a cookie of another invocationId"
grep -q "invocationId is .*, the cookie's 00000000-1111-2222-3333-444444444444" "$work/usn.3.log" &&
	grep -q "refresh done (full refresh)" "$work/usn.3.log" &&
	ok "usnChanged: another invocationId in the cookie was logged, and the poll was a full load" ||
	not_ok "usnChanged: no invocationId reload logged: $(grep syncrepl "$work/usn.3.log" | tail -3)"
stop_checked "$upid" "$work/usn.3.log" || not_ok "usnChanged replica stop: $stop_why"
rep_start 3
converge "a cookie the DC refused"
grep -q "the DC refused the stored cookie" "$work/replica.3.log" && grep -q "full DirSync refresh" "$work/replica.3.log" &&
	ok "the refused cookie was logged and dropped, and the refresh was a full one" ||
	not_ok "no refused-cookie reload logged: $(grep syncrepl "$work/replica.3.log" | tail -2)"
# 8. The DC gone: a password cannot be checked (unavailable, 52), but a disabled account is
# still refused here (49), never sent to the DC; alice, who bound through the DC just
# before, binds by the verifier bind_passthrough_cache (10 s) kept, until it is 10 s old.
# The relay to the DC goes first (at once; the DC's own stop can take seconds under load).
expect_bind alice Pass.alice.1 0 "alice binds through the DC, which this replica process remembers"
cached_at=$(date +%s)
# shellcheck disable=SC2154  # ad_relay: samba_ad.sh's
kill "$ad_relay" 2> /dev/null
for _ in $(seq 1 50); do
	kill -0 "$ad_relay" 2> /dev/null || break
	sleep 0.1
done
expect_bind alice Pass.alice.1 0 "the DC stopped ($(($(date +%s) - cached_at)) s after her bind): alice binds by its verifier"
expect_bind alice Wrong.pass.1 52 "the DC stopped: alice with another password is unavailable (no verifier matches)"
expect_bind david Pass.dave.1 52 "the DC stopped: david, who has not bound through this replica process, is unavailable"
expect_bind erin Pass.erin.1 49 "the DC stopped: disabled erin is still refused, without the DC"
grep -q "bind_passthrough_cache: the provider cannot be asked; \"CN=alice,CN=Users,$AD_BASE\" bound by the verifier" "$work/replica.3.log" &&
	ok "the verifier's bind was logged" || not_ok "no bind_passthrough_cache line in the replica's log"
sleep $((cached_at + 11 - $(date +%s) > 0 ? cached_at + 11 - $(date +%s) : 0))
expect_bind alice Pass.alice.1 52 "the DC stopped, alice's verifier past 10 s: unavailable, not a wrong password"
ad_stop
# ... and the replica, which cannot poll it, turns not ready past ready_max_lag_ms (3 s).
r=
for _ in $(seq 1 20); do
	r=$(mget /readyz)
	case $r in "503 "*) break ;; esac
	sleep 0.5
done
case $r in
"503 "*) ok "the DC stopped: /readyz $r" ;;
*) not_ok "the DC stopped: /readyz '$r' after 10 s" ;;
esac
stop_checked "$pid" "$work/replica.3.log" || not_ok "replica stop: $stop_why"
finish
