#!/usr/bin/env bash
# minidir as a syncrepl replica of a 389 Directory Server (tests/integration/ds389.sh:
# Debian's 389-ds-base with its Content Synchronization plugin, on a private 127.0.0.1
# port), not slapd: 389-ds has its own cookies (no CSN), ends a resumed refresh its own way
# and hashes passwords with {PBKDF2-SHA512}. Two replicas at once, one refreshOnly (every
# 2 s) and one refreshAndPersist, each from no database file. 300 users, then three
# batches of changes (50 adds, 50 modifies, 20 deletes, 10 renames of which 5 are moves
# under an OU the batch adds), each one ldapmodify run; the replicas are stopped and
# started again between batches (resumed from their cookies) and 389-ds itself is
# restarted once. After each step each replica's dump (user attributes, and
# createTimestamp, modifyTimestamp, creatorsName, modifiersName, memberOf, entryUUID and
# nsUniqueId) must equal 389-ds's.
# A user binds on each replica with its password and fails with another (49); an account
# locked on 389-ds (nsAccountLock) while the replicas are stopped is refused (49) on each
# after they restart. Both replicate the filter (!(description=excluded)): entries modified
# out of it while the replicas are stopped (389-ds never names them) are gone within the
# reconciliation period (reconcile_interval = 2), and a replica restarts after deleting
# most of its entries so (its file whole: storage/db_file.h). The refreshAndPersist
# replica reaches 389-ds through a relay that can be paused (pause_relay.py): /readyz
# turns 503 and the staleness in /metrics grows past ready_max_lag_ms while it is paused,
# and the lag in changes is 0 once it has caught up. Every server is stopped by PID;
# every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/ds389.sh
export LDAPNOINIT=1
EX=$DS_SUFFIX
ADMIN=cn=admin,$EX # the replicas' rootdn (389-ds's is $DS_ADMIN)
USERS=300
# Seconds a step may take to show on both replicas: a refreshOnly replica polls every 2 s,
# and a replica that starts retries 389-ds every second.
CONVERGE=10

use_work_dir ds389
ds_create mdtest || finish
# FreeIPA's ipaUniqueID and ipaObject (their OIDs, names and rules as FreeIPA defines them),
# in 389-ds's schema directory and in a schema file of the replicas (OpenLDAP's format):
# an attribute the replica's schema does not define is stored and served, but a filter on
# it is Undefined (RFC 4511 4.5.1.7) and matches nothing.
IPA_AT="( 2.16.840.1.113730.3.8.3.1 NAME 'ipaUniqueID' EQUALITY caseIgnoreMatch ORDERING caseIgnoreOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )"
IPA_OC="( 2.16.840.1.113730.3.8.4.1 NAME 'ipaObject' AUXILIARY MUST ipaUniqueID )"
printf 'dn: cn=schema\nattributeTypes: %s\nobjectClasses: %s\n' "$IPA_AT" "$IPA_OC" > "$ds_conf/schema/99ipa.ldif"
printf 'attributetype %s\nobjectclass %s\n' "$IPA_AT" "$IPA_OC" > "$work/ipa.schema"
ds_start || finish
# 389-ds's memberOf plugin (FreeIPA runs it): memberOf written into each member, nested
# groups too; on with the sync plugins (one restart).
ds_modify << EOF || not_ok "enabling 389-ds's MemberOf plugin"
dn: cn=MemberOf Plugin,cn=plugins,cn=config
changetype: modify
replace: nsslapd-pluginEnabled
nsslapd-pluginEnabled: on
EOF
ds_enable_sync || finish
DS=$ds_uri
FILTER='(!(description=excluded))'
# The refreshAndPersist replica's way to 389-ds: a relay it can be cut off by.
start_relay "$ds_port" || finish
pick_port mport || finish

# 1. The data, added through LDAP (not an offline import) so that 389-ds hashes the clear
# passwords with its default scheme, {PBKDF2-SHA512}, and logs each add in its Retro
# Changelog as a client's would be.
{
	for ou in staff contractors; do
		printf 'dn: ou=%s,%s\nchangetype: add\nobjectClass: organizationalUnit\nou: %s\n\n' "$ou" "$EX" "$ou"
	done
	for i in $(seq 0 $((USERS - 1))); do
		printf 'dn: uid=user%d,ou=people,%s\nchangetype: add\nobjectClass: inetOrgPerson\nuid: user%d\ncn: User %d\nsn: %d\nuserPassword: pw-user%d\n\n' \
			"$i" "$EX" "$i" "$i" "$i" "$i"
	done
	# A FreeIPA-shaped tree: users and groups under cn=accounts, a group in a group.
	printf 'dn: cn=accounts,%s\nchangetype: add\nobjectClass: nsContainer\ncn: accounts\n\n' "$EX"
	for c in users groups; do
		printf 'dn: cn=%s,cn=accounts,%s\nchangetype: add\nobjectClass: nsContainer\ncn: %s\n\n' "$c" "$EX" "$c"
	done
	i=0
	for u in alice bob carol; do
		i=$((i + 1))
		printf 'dn: uid=%s,cn=users,cn=accounts,%s\nchangetype: add\nobjectClass: inetOrgPerson\nobjectClass: ipaObject\nuid: %s\ncn: %s\nsn: %s\nipaUniqueID: 5A1B2C3D-0000-4000-8000-00000000000%d\n\n' \
			"$u" "$EX" "$u" "$u" "$u" "$i"
	done
	printf 'dn: cn=devs,cn=groups,cn=accounts,%s\nchangetype: add\nobjectClass: groupOfNames\ncn: devs\nmember: uid=alice,cn=users,cn=accounts,%s\n\n' "$EX" "$EX"
	printf 'dn: cn=staff,cn=groups,cn=accounts,%s\nchangetype: add\nobjectClass: groupOfNames\ncn: staff\nmember: cn=devs,cn=groups,cn=accounts,%s\nmember: uid=bob,cn=users,cn=accounts,%s\n\n' "$EX" "$EX" "$EX"
} > "$work/users.ldif"
t0=$(date +%s%N)
# (not ds_modify: its 30 s bound is for a batch; 300 PBKDF2 hashes take 5 s on a quiet
# machine, more beside other tests)
if ! timeout 120 ldapmodify -x -H "$DS" -D "$DS_ADMIN" -w "$DS_PW" -f "$work/users.ldif" > /dev/null 2> "$work/users.log"; then
	not_ok "loading $USERS users into 389-ds: $(tail -3 "$work/users.log")"
	finish
fi
hash=$(timeout 10 ldapsearch -x -H "$DS" -D "$DS_ADMIN" -w "$DS_PW" -LLL -o ldif-wrap=no \
	-b "uid=user0,ou=people,$EX" -s base userPassword 2> /dev/null | sed -n 's/^userPassword:: //p' | base64 -d 2> /dev/null | cut -c1-15)
if [ "$hash" = "{PBKDF2-SHA512}" ]; then
	ok "$USERS users added to 389-ds in $(awk -v n=$(($(date +%s%N) - t0)) 'BEGIN{printf "%.1f", n/1e9}')s, their passwords stored as $hash"
else
	not_ok "389-ds stored user0's password as '$hash', not {PBKDF2-SHA512}"
fi

# 2. The replicas: REP_NAMES[i] with syncrepl type REP_TYPES[i], each its own database file
# and log per start.
REP_NAMES=(ro rp)
declare -A rpid rport rlog
starts=0
rep_conf() { # NAME TYPE PROVIDER [LINES]
	cat > "$work/$1.conf" << EOF
listen = 127.0.0.1:0
database = $work/$1.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
rootdn = $ADMIN
rootpw = secret
sizelimit = unlimited
syncrepl = rid=001 provider=$3 bindmethod=simple
	binddn="$DS_ADMIN" credentials=$DS_PW searchbase="$EX" filter="$FILTER"
	type=$2 interval=00:00:00:02 retry="1 +"
reconcile_interval = 2
schema = core cosine inetorgperson nis openldap $work/ipa.schema
${4:-}
EOF
}
# rep_start NAME: starts it, its log $work/NAME.N.log (N counts the starts); sets
# rpid[NAME] and rport[NAME] (empty, after a failed check, when it did not start: its
# checks below then fail on their own, not waiting for a server that is not there).
rep_start() {
	starts=$((starts + 1))
	rlog[$1]=$work/$1.$starts.log
	"$BUILD/minidir" -f "$work/$1.conf" > "${rlog[$1]}" 2>&1 &
	rpid[$1]=$!
	pids+=("${rpid[$1]}")
	for _ in $(seq 1 150); do # (wait_port would wait its 15 s for a server that exited)
		grep -qs "listening on ldap://" "${rlog[$1]}" && break
		kill -0 "${rpid[$1]}" 2> /dev/null || break
		sleep 0.1
	done
	rport[$1]=$(wait_port "${rlog[$1]}" ldap "listening on" 1)
	[ -n "${rport[$1]}" ] || not_ok "replica $1 did not start: $(grep -v "rootpw is the examples" "${rlog[$1]}" | tail -2)"
}
rep_stop() { # NAME: SIGTERM, exit status 0 (lib.sh's stop_checked), if it started
	[ -n "${rport[$1]}" ] || return 0
	stop_checked "${rpid[$1]}" "${rlog[$1]}" || not_ok "replica $1 stop: $stop_why"
}
rep_conf ro refreshOnly "$DS"
# shellcheck disable=SC2154  # relay_port (start_relay), mport (pick_port)
rep_conf rp refreshAndPersist "ldap://127.0.0.1:$relay_port" "metrics_listen = 127.0.0.1:$mport
ready_max_lag_ms = 1000
index = objectClass, uid, cn, mail, member, entryUUID"

# dump URI BINDDN PW: every entry under $EX with its user attributes and the operational
# attributes both servers keep ($OPNAMES), one "DN | type: value" a line: the attribute
# type lowercased (its case means nothing, and each server may spell a type its own way),
# the lines of each entry sorted (a base64 "dn::" heads its entry too).
# Only the entries of the replicated filter. 389-ds's own operational attributes
# (nsUniqueId, entryid, parentid, dsEntryDN) are never in "*" on either side: minidir's
# schema marks them operational too, so a replica never stores them as user attributes;
# nsUniqueId asked by name is 389-ds's on both, and so is entryUUID (its plugin's value on
# the entries added over LDAP, none on dscreate's sample entries), not the Sync State
# control's UUID. memberOf is asked for by name on both: 389-ds's schema makes it a user
# attribute (in "*"), minidir's an operational one, computed from the groups
# (docs/replica.md).
OPNAMES="createTimestamp modifyTimestamp creatorsName modifiersName memberOf entryUUID nsUniqueId"
OPATTRS=$(tr 'A-Z ' 'a-z|' <<< "$OPNAMES")
dump() {
	# shellcheck disable=SC2086  # OPNAMES: one argument a name
	timeout 20 ldapsearch -x -H "$1" -D "$2" -w "$3" -LLL -o ldif-wrap=no -b "$EX" "$FILTER" \
		"*" $OPNAMES 2> /dev/null |
		awk '/^dn::? /{dn=$0} NF{i=index($0, ":"); print dn " | " tolower(substr($0, 1, i - 1)) substr($0, i)}' |
		LC_ALL=C sort
}
ds_dump() { dump "$DS" "$DS_ADMIN" "$DS_PW"; }
rep_dump() { dump "ldap://127.0.0.1:${rport[$1]}" "$ADMIN" secret; }
# The user attributes' lines, and the operational attributes' (DN | type: value, on stdin).
user_part() { grep -Ev "^[^|]* \| ($OPATTRS):"; }
op_part() { grep -E "^[^|]* \| ($OPATTRS):"; }

# converge WHAT: polls (up to $CONVERGE s) until each replica's dump equals 389-ds's; then
# one check per replica for its user attributes and one for the operational ones,
# with the first differing lines when they differ.
converge() {
	local what=$1 want wu wo got gu go n took start left
	want=$(ds_dump)
	wu=$(user_part <<< "$want")
	wo=$(op_part <<< "$want")
	start=$(date +%s%N)
	left=" ${REP_NAMES[*]} "
	declare -A last
	# (bounded by the clock: a round of dumps takes a while itself)
	while [ $(($(date +%s%N) - start)) -lt $((CONVERGE * 1000000000)) ]; do
		for n in $left; do
			last[$n]=$(rep_dump "$n")
			if [ -n "$want" ] && [ "${last[$n]}" = "$want" ]; then
				took=$(awk -v n=$(($(date +%s%N) - start)) 'BEGIN{printf "%.1f", n/1e9}')
				left=${left/ $n / }
				ok "$what: replica $n's user attributes equal 389-ds's ($(cut -d'|' -f1 <<< "$want" | sort -u | wc -l) entries, in ${took}s)"
				ok "$what: replica $n's $OPNAMES equal 389-ds's"
			fi
		done
		[ -z "${left// /}" ] && return 0
		sleep 0.2
	done
	for n in $left; do
		got=${last[$n]}
		gu=$(user_part <<< "$got")
		go=$(op_part <<< "$got")
		if [ -n "$wu" ] && [ "$gu" = "$wu" ]; then
			ok "$what: replica $n's user attributes equal 389-ds's"
		else
			not_ok "$what: replica $n's user attributes differ from 389-ds's after ${CONVERGE}s ($(grep -c . <<< "$gu") lines, 389-ds $(grep -c . <<< "$wu")): $(diff <(echo "$wu") <(echo "$gu") | grep '^[<>]' | head -4 | tr '\n' ' ')"
		fi
		if [ -n "$wo" ] && [ "$go" = "$wo" ]; then
			ok "$what: replica $n's $OPNAMES equal 389-ds's"
		else
			not_ok "$what: replica $n's operational attributes differ from 389-ds's after ${CONVERGE}s ($(grep -c . <<< "$go") lines, 389-ds $(grep -c . <<< "$wo")): $(diff <(echo "$wo") <(echo "$go") | grep '^[<>]' | head -4 | tr '\n' ' ')"
		fi
	done
}

# batch K: the K-th batch of changes as one ldapmodify input. Users 0..149 are modified
# (50 a batch), 150..209 deleted (20), 210..239 renamed (10: 5 in place, 5 moved under
# ou=moved-K, which the batch adds first), 240..299 left alone (the binds below).
batch() {
	local k=$1 i
	printf 'dn: ou=moved-%d,%s\nchangetype: add\nobjectClass: organizationalUnit\nou: moved-%d\n\n' "$k" "$EX" "$k"
	for i in $(seq 0 49); do
		printf 'dn: uid=b%d-%d,ou=staff,%s\nchangetype: add\nobjectClass: inetOrgPerson\nuid: b%d-%d\ncn: Batch %d %d\nsn: %d\nuserPassword: pw-b%d-%d\n\n' \
			"$k" "$i" "$EX" "$k" "$i" "$k" "$i" "$i" "$k" "$i"
	done
	for i in $(seq $(((k - 1) * 50)) $((k * 50 - 1))); do
		printf 'dn: uid=user%d,ou=people,%s\nchangetype: modify\nreplace: cn\ncn: User %d changed in batch %d\n-\nadd: description\ndescription: batch %d\n\n' \
			"$i" "$EX" "$i" "$k" "$k"
	done
	for i in $(seq $((150 + (k - 1) * 20)) $((150 + k * 20 - 1))); do
		printf 'dn: uid=user%d,ou=people,%s\nchangetype: delete\n\n' "$i" "$EX"
	done
	for i in $(seq $((210 + (k - 1) * 10)) $((210 + k * 10 - 1))); do
		if [ $((i % 2)) = 0 ]; then
			printf 'dn: uid=user%d,ou=people,%s\nchangetype: modrdn\nnewrdn: uid=renamed%d\ndeleteoldrdn: 1\n\n' "$i" "$EX" "$i"
		else
			printf 'dn: uid=user%d,ou=people,%s\nchangetype: modrdn\nnewrdn: uid=user%d\ndeleteoldrdn: 0\nnewsuperior: ou=moved-%d,%s\n\n' \
				"$i" "$EX" "$i" "$k" "$EX"
		fi
	done
}
apply_batch() { # K
	batch "$1" > "$work/batch$1.ldif"
	ds_modify -f "$work/batch$1.ldif" 2> "$work/batch$1.log" ||
		not_ok "batch $1 on 389-ds: $(tail -3 "$work/batch$1.log")"
}
rep_all() { # start|stop: every replica
	local n
	for n in "${REP_NAMES[@]}"; do
		case $1 in
		start) rep_start "$n" ;;
		stop) rep_stop "$n" ;;
		esac
	done
}

# 3. From no database file: the first refresh.
rep_all start
converge "first refresh"
# (the memberOf compared: 389-ds's plugin wrote alice's, devs and staff by nesting)
mo=$(ds_dump | grep -c "^dn: uid=alice,cn=users,cn=accounts,$EX | memberof: ")
[ "$mo" = 2 ] && ok "389-ds's memberOf plugin: alice is in devs and, by nesting, staff" ||
	not_ok "389-ds's memberOf of alice: $mo values, not 2"
# memberof_nested = auto (the default): each replica's new file holds nested memberOf,
# as 389-ds's plugin computes it (the dumps above compared it), and said so.
for n in "${REP_NAMES[@]}"; do
	grep -q "memberof_nested = auto and the provider is 389 Directory Server" "${rlog[$n]}" &&
		ok "replica $n: memberof_nested = auto made its new file nested (logged)" ||
		not_ok "replica $n: no memberof_nested = auto line in its log"
done
# 4. Batch 1 while the replicas run (refreshAndPersist: the persist stream; refreshOnly:
# its next poll, from its cookie).
apply_batch 1
converge "batch 1, replicas running"
# 5. Batch 2 while they are stopped: each resumes from its cookie at its start.
# Memberships change too: bob leaves staff, carol joins devs (so staff, nested).
rep_all stop
apply_batch 2
ds_modify << EOF || not_ok "membership changes on 389-ds"
dn: cn=staff,cn=groups,cn=accounts,$EX
changetype: modify
delete: member
member: uid=bob,cn=users,cn=accounts,$EX

dn: cn=devs,cn=groups,cn=accounts,$EX
changetype: modify
add: member
member: uid=carol,cn=users,cn=accounts,$EX
EOF
rep_all start
converge "batch 2 and memberships, made while the replicas were stopped"
# 6. 389-ds restarted while the replicas are stopped, then batch 3 once they run again
# from their cookies (389-ds's changelog numbers outlive its restart).
rep_all stop
ds_stop
ds_start || finish
rep_all start
apply_batch 3
converge "batch 3, after 389-ds and the replicas restarted"

# A FreeIPA user found by its ipaUniqueID, matched without case as FreeIPA defines it.
for n in "${REP_NAMES[@]}"; do
	got=$(timeout 5 ldapsearch -x -H "ldap://127.0.0.1:${rport[$n]}" -D "$ADMIN" -w secret -LLL \
		-b "$EX" "(ipaUniqueID=5a1b2c3d-0000-4000-8000-000000000002)" 1.1 2> /dev/null | sed -n 's/^dn: //p')
	[ "$got" = "uid=bob,cn=users,cn=accounts,$EX" ] && ok "replica $n: (ipaUniqueID=...) in lower case finds $got" ||
		not_ok "replica $n: (ipaUniqueID=...) found '$got', not bob"
done

# bob by the entryUUID 389-ds's plugin gave him (not the nsUniqueId's UUID form the sync
# controls carry), unindexed on ro and through an entryUUID index on rp.
bob_uuid=$(timeout 5 ldapsearch -x -H "$DS" -D "$DS_ADMIN" -w "$DS_PW" -LLL -b "uid=bob,cn=users,cn=accounts,$EX" \
	-s base entryUUID 2> /dev/null | sed -n 's/^entryUUID: //p')
for n in "${REP_NAMES[@]}"; do
	got=$(timeout 5 ldapsearch -x -H "ldap://127.0.0.1:${rport[$n]}" -D "$ADMIN" -w secret -LLL \
		-b "$EX" "(entryUUID=${bob_uuid:-none})" 1.1 2> /dev/null | sed -n 's/^dn: //p')
	[ -n "$bob_uuid" ] && [ "$got" = "uid=bob,cn=users,cn=accounts,$EX" ] &&
		ok "replica $n: (entryUUID=$bob_uuid), 389-ds's value, finds $got" ||
		not_ok "replica $n: (entryUUID=$bob_uuid) found '$got', not bob"
done

# 7. A user binds on each replica with the password 389-ds hashed, and not with another.
user=uid=user250,ou=people,$EX
for n in "${REP_NAMES[@]}"; do
	uri=ldap://127.0.0.1:${rport[$n]} # (no port when it did not start: ldapwhoami's rc 1)
	rc=0
	timeout 5 ldapwhoami -x -H "$uri" -D "$user" -w pw-user250 > /dev/null 2>&1 || rc=$?
	[ "$rc" = 0 ] && ok "replica $n: $user binds with its {PBKDF2-SHA512} password" ||
		not_ok "replica $n: $user's bind with its password: rc $rc"
	rc=0
	timeout 5 ldapwhoami -x -H "$uri" -D "$user" -w wrong > /dev/null 2>&1 || rc=$?
	[ "$rc" = 49 ] && ok "replica $n: $user with a wrong password: invalidCredentials (49)" ||
		not_ok "replica $n: $user's bind with a wrong password: rc $rc, not 49"
done

# 8. An account locked on 389-ds (nsAccountLock, an operational attribute there) while the
# replicas are stopped: once they have resumed and converged, its right password is
# refused (49) on each, as 389-ds refuses it.
locked=uid=user260,ou=people,$EX
rep_all stop
ds_modify 2> "$work/lock.log" << EOF || not_ok "nsAccountLock on 389-ds: $(cat "$work/lock.log")"
dn: $locked
changetype: modify
add: nsAccountLock
nsAccountLock: true
EOF
rep_all start
converge "$locked locked while the replicas were stopped"
rc=0
timeout 5 ldapwhoami -x -H "$DS" -D "$locked" -w pw-user260 > /dev/null 2>&1 || rc=$?
dsrc=$rc
for n in "${REP_NAMES[@]}"; do
	uri=ldap://127.0.0.1:${rport[$n]}
	rc=0
	timeout 5 ldapwhoami -x -H "$uri" -D "$locked" -w pw-user260 > /dev/null 2>&1 || rc=$?
	has=$(timeout 5 ldapsearch -x -H "$uri" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$locked" -s base \
		nsAccountLock 2> /dev/null | sed -n 's/^nsAccountLock: //ip')
	if [ "$rc" = 49 ] && [ "$has" = true ]; then
		ok "replica $n: $locked, locked on 389-ds (its bind there: rc $dsrc), refused with its right password (49)"
	else
		not_ok "replica $n: $locked, locked on 389-ds (its bind there: rc $dsrc): bind rc $rc, not 49; the replica's nsAccountLock '$has'"
	fi
done

# 8b. 389-ds's password expiry, which it keeps in cn=config (in no changelog): each
# replica reads it at each session's start and reconciliation. Expiry stamps set while the
# replicas are stopped with passwordExp off (389-ds leaves such values in place when expiry
# is turned off): user270 expired with its one grace bind used, user271 expired with none
# used, user272 reset by an administrator (19700101000000Z). With passwordExp off all
# three bind on the replicas as on 389-ds; once it is on (the replicas running: the
# refreshOnly one's next poll, the other's reconciliation), user270 is refused (49),
# user271 binds on its last grace bind and user272 must change its password, as 389-ds
# answers them after (its own binds use up grace: asked last).
pp() { # URI DN PW: ldapwhoami -e ppolicy's exit status and result lines, on one line
	local out rc=0
	out=$(timeout 5 ldapwhoami -e ppolicy -x -H "$1" -D "$2" -w "$3" 2>&1) || rc=$?
	echo "rc=$rc $(grep -E "^ldap_bind" <<< "$out" | tr '\n' ' ')"
}
rep_all stop
ds_modify 2> "$work/exp.log" << EOF || not_ok "expiry stamps on 389-ds: $(cat "$work/exp.log")"
dn: cn=config
changetype: modify
replace: passwordGraceLimit
passwordGraceLimit: 1
-
replace: passwordMustChange
passwordMustChange: on

dn: uid=user270,ou=people,$EX
changetype: modify
replace: passwordExpirationTime
passwordExpirationTime: 20200101000000Z
-
replace: passwordGraceUserTime
passwordGraceUserTime: 1

dn: uid=user271,ou=people,$EX
changetype: modify
replace: passwordExpirationTime
passwordExpirationTime: 20200101000000Z

dn: uid=user272,ou=people,$EX
changetype: modify
replace: passwordExpirationTime
passwordExpirationTime: 19700101000000Z
EOF
rep_all start
converge "expiry stamps set while the replicas were stopped"
for n in "${REP_NAMES[@]}"; do
	got=$(pp "ldap://127.0.0.1:${rport[$n]}" "uid=user270,ou=people,$EX" pw-user270)
	case $got in
	"rc=0 "*) ok "replica $n: passwordExp off: user270 binds with its past passwordExpirationTime" ;;
	*) not_ok "replica $n: passwordExp off: user270's bind: $got" ;;
	esac
done
ds_modify 2> "$work/exp.log" << EOF || not_ok "passwordExp on 389-ds: $(cat "$work/exp.log")"
dn: cn=config
changetype: modify
replace: passwordExp
passwordExp: on
EOF
declare -A seen
for n in "${REP_NAMES[@]}"; do
	uri=ldap://127.0.0.1:${rport[$n]}
	got=
	for _ in $(seq 1 60); do # the next poll or reconciliation: 2 s each
		got=$(pp "$uri" "uid=user270,ou=people,$EX" pw-user270)
		case $got in "rc=49 "*) break ;; esac
		sleep 0.25
	done
	seen[$n.270]=$got
	seen[$n.271]=$(pp "$uri" "uid=user271,ou=people,$EX" pw-user271)
	seen[$n.272]=$(pp "$uri" "uid=user272,ou=people,$EX" pw-user272)
done
d270=$(pp "$DS" "uid=user270,ou=people,$EX" pw-user270)
d271=$(pp "$DS" "uid=user271,ou=people,$EX" pw-user271)
d272=$(pp "$DS" "uid=user272,ou=people,$EX" pw-user272)
s272=0
timeout 5 ldapsearch -x -H "$DS" -D "uid=user272,ou=people,$EX" -w pw-user272 -b "$EX" -s base 1.1 > /dev/null 2>&1 || s272=$?
for n in "${REP_NAMES[@]}"; do
	case ${seen[$n.270]} in
	"rc=49 "*) ok "replica $n: user270, expired with no grace bind left: ${seen[$n.270]} (389-ds: $d270)" ;;
	*) not_ok "replica $n: user270, expired with no grace bind left: '${seen[$n.270]}' (389-ds: $d270)" ;;
	esac
	case ${seen[$n.271]} in
	"rc=0 "*"0 grace logins remain"*) ok "replica $n: user271, expired, its last grace bind: ${seen[$n.271]} (389-ds: $d271)" ;;
	*) not_ok "replica $n: user271, expired, its last grace bind: '${seen[$n.271]}' (389-ds: $d271)" ;;
	esac
	# (ldapwhoami's WhoAmI after the bind is refused, as every operation but the
	# password's change: its exit status 1 on both)
	case ${seen[$n.272]} in
	"$d272") ok "replica $n: user272, reset: ${seen[$n.272]}, as 389-ds" ;;
	*) not_ok "replica $n: user272, reset: '${seen[$n.272]}' (389-ds: $d272)" ;;
	esac
	rc=0
	timeout 5 ldapsearch -x -H "ldap://127.0.0.1:${rport[$n]}" -D "uid=user272,ou=people,$EX" -w pw-user272 \
		-b "$EX" -s base 1.1 > /dev/null 2>&1 || rc=$?
	[ "$rc" = "$s272" ] && ok "replica $n: user272's search before changing its password: rc $rc, as 389-ds" ||
		not_ok "replica $n: user272's search before changing its password: rc $rc (389-ds: $s272)"
done
case "$d270|$d271|$d272|$s272" in
"rc=49 "*"|rc=0 "*"|"*"must be changed"*"|53") ok "389-ds answers them so (and user272's search: rc $s272): $d270 | $d271 | $d272" ;;
*) not_ok "389-ds answered: $d270 | $d271 | $d272 (user272's search: rc $s272)" ;;
esac

# 9. Entries modified out of the filter while the replicas are stopped: 389-ds's refresh
# from a cookie never names them; the reconciliation (every 2 s) deletes them, most of the
# replicas' entries in one transaction. Then each restarts on its file.
rep_all stop
timeout 20 ldapsearch -x -H "$DS" -D "$DS_ADMIN" -w "$DS_PW" -LLL -b "$EX" "(uid=user*)" 1.1 2> /dev/null |
	sed -n 's/^dn: //p' > "$work/out.dns"
out=$(grep -c . "$work/out.dns")
awk '{printf "dn: %s\nchangetype: modify\nreplace: description\ndescription: excluded\n\n", $0}' \
	"$work/out.dns" > "$work/out.ldif"
ds_modify -f "$work/out.ldif" 2> "$work/out.log" || not_ok "excluding $out entries on 389-ds: $(tail -2 "$work/out.log")"
rep_all start
converge "$out entries modified out of the filter while the replicas were stopped"
for n in "${REP_NAMES[@]}"; do
	grep -q "entries not on the provider any more: deleted" "${rlog[$n]}" &&
		ok "replica $n: the reconciliation deleted them (log: $(grep -o '[0-9]* entries not on the provider any more' "${rlog[$n]}" | head -1))" ||
		not_ok "replica $n: no reconciliation in its log"
done
rep_all stop
rep_all start
converge "restarted after deleting $out entries"

# 10. The relay to 389-ds paused: the refreshAndPersist replica hears nothing, its probe
# (every quarter of ready_max_lag_ms) waits, /readyz turns 503 and the staleness in
# /metrics grows; resumed, it is ready again, with no change left behind.
mget() { # PATH: "STATUS BODY" of GET PATH on the rp replica's HTTP endpoint
	local code
	code=$(curl -s -m 5 -o "$work/body" -w '%{http_code}' "http://127.0.0.1:$mport$1" 2> /dev/null)
	echo "$code $(head -c 200 "$work/body" 2> /dev/null | tr '\n' ' ')"
}
metric() { curl -s -m 5 "http://127.0.0.1:$mport/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
r=$(mget /readyz)
case $r in "200 "*) ok "rp: /readyz $r before the pause" ;; *) not_ok "rp: /readyz '$r' before the pause" ;; esac
kill -USR1 "$relay"
# (an entry in the filter: a change to one out of it moves 389-ds's lastchangenumber but
# sends nothing, so the lag in changes stays until the next change the replica receives)
printf 'dn: ou=staff,%s\nchangetype: modify\nreplace: description\ndescription: changed while paused\n\n' "$EX" | ds_modify ||
	not_ok "a change on 389-ds while the relay is paused"
r=
for _ in $(seq 1 40); do
	r=$(mget /readyz)
	case $r in "503 "*) break ;; esac
	sleep 0.1
done
stale=$(metric minidir_replication_staleness_seconds)
case $r in
"503 not ready: replication-provider-silent"*)
	if awk -v s="${stale:-0}" 'BEGIN{exit !(s > 1)}'; then
		ok "relay paused: /readyz $r; minidir_replication_staleness_seconds $stale"
	else
		not_ok "relay paused: /readyz $r but staleness '$stale'"
	fi
	;;
*) not_ok "relay paused: /readyz '$r' after 4 s" ;;
esac
kill -USR2 "$relay"
r=
for _ in $(seq 1 100); do
	r=$(mget /readyz)
	case $r in "200 "*) break ;; esac
	sleep 0.1
done
# The probe's answer may come before the change's commit (the lag in changes is then 1).
lag=
for _ in $(seq 1 50); do
	lag=$(metric minidir_replication_lag_changes)
	[ "$lag" = 0 ] && break
	sleep 0.1
done
case "$r" in
"200 "*) [ "$lag" = 0 ] && ok "relay resumed: /readyz $r, minidir_replication_lag_changes 0" ||
	not_ok "relay resumed: /readyz $r, lag_changes '$lag' after 5 s" ;;
*) not_ok "relay resumed: /readyz '$r' after 10 s" ;;
esac
converge "the change made while the relay was paused"

rep_all stop
ds_stop
finish
