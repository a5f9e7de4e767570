#!/usr/bin/env bash
# Dynamic groups on a replica (dynamic_groups = yes, storage/dyngroup_update.h) of a real
# provider: slapd with syncprov and the dynlist overlay
# (dynlist-attrset groupOfURLs memberURL member+memberOf@groupOfNames), which computes the
# members of groupOfURLs entries at every read and so is the reference. After each change
# on the provider (an add matching a URL, a modify that stops matching, a delete, a modrdn
# in place and one out of the URL's base, a group's memberURL changed, a static member
# added and taken away, a group added and one deleted) has reached the replica, the
# member values of every dynamic group and the memberOf values naming one are the same
# on both. Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh

use_work_dir dyngroup_replica
D=ou=dyn,$EX
P=ou=people,$EX

# The provider: provider.sh's, with dyngroup.schema, the memberof module (for its memberOf
# type alone) and dynlist on top of syncprov.
slapd_conf "$work/slapd.conf" "$work/db" "maxsize 67108864
dbnosync
index objectClass,entryUUID,entryCSN,member eq
overlay syncprov
syncprov-checkpoint 1 1
overlay dynlist
dynlist-attrset groupOfURLs memberURL member+memberOf@groupOfNames"
sed -i "s|^include .*/nis.schema\$|&\ninclude $SCHEMADIR/dyngroup.schema|
s|^moduleload syncprov\$|&\nmoduleload memberof\nmoduleload dynlist|" "$work/slapd.conf"
{
	grep -v "^version:" examples/example.ldif
	printf '\ndn: %s\nobjectClass: organizationalUnit\nou: dyn\n\n' "$D"
	printf 'dn: cn=eng,%s\nobjectClass: groupOfURLs\ncn: eng\n' "$D"
	printf 'memberURL: ldap:///%s??sub?(departmentNumber=ENG)\n\n' "$P"
	printf 'dn: cn=sales,%s\nobjectClass: groupOfURLs\nobjectClass: extensibleObject\ncn: sales\n' "$D"
	printf 'memberURL: ldap:///%s??one?(departmentNumber=SALES)\n\n' "$P"
} > "$work/data.ldif"
if ! timeout 60 "$SLAPADD" -f "$work/slapd.conf" -l "$work/data.ldif" > "$work/slapadd.log" 2>&1; then
	not_ok "slapadd: $(cat "$work/slapadd.log")"
	finish
fi
provider_start || finish
PROV=ldap://127.0.0.1:$port
replica_conf rd refreshAndPersist "schema = core cosine inetorgperson nis dyngroup
index = objectClass, member
dynamic_groups = yes"
replica_run rd
REP=ldap://127.0.0.1:$(wait_port "$rlog")
pmod() { timeout 30 ldapmodify -x -H "$PROV" -D "$ADMIN" -w secret > "$work/pmod.log" 2>&1; }

# answer URI: the dynamic groups' members and the memberOf values naming one, as
# "ENTRY | TYPE: VALUE" lines, DNs lowercased, \2C as \, and no spaces after commas
# (dynlist spells a found entry's DN in its normal form, minidir as stored), sorted.
answer() {
	{
		timeout 20 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$D" \
			"(objectClass=groupOfURLs)" member 2> /dev/null
		timeout 20 ldapsearch -x -H "$1" -D "$ADMIN" -w secret -LLL -o ldif-wrap=no -b "$EX" \
			"(objectClass=*)" memberOf 2> /dev/null
	} | tr '[:upper:]' '[:lower:]' | sed 's/\\2c/\\,/g; s/, */,/g' |
		awk -v d="ou=dyn,dc=example,dc=com" '/^dn: /{dn=substr($0, 5)}
			/^member: / {print dn " | " $0}
			/^memberof: / && index($0, d) {print dn " | " $0}' | LC_ALL=C sort
}

# check WHAT [LINE...]: the provider's answer holds each LINE (and lacks each !LINE); within
# 20 s the replica's answer is the same, with each +LINE more (a difference
# docs/dynamic-groups.md gives).
check() {
	local what=$1 want got l extra=
	shift
	want=$(answer "$PROV")
	for l in "$@"; do
		if [ "${l#+}" != "$l" ]; then
			grep -qxF -- "${l#+}" <<< "$want" && { not_ok "$what: the provider has ${l#+}"; return; }
			extra+="${l#+}"$'\n'
		elif [ "${l#!}" != "$l" ]; then
			grep -qxF -- "${l#!}" <<< "$want" && { not_ok "$what: the provider has ${l#!}"; return; }
		else
			grep -qxF -- "$l" <<< "$want" || { not_ok "$what: the provider lacks $l"; return; }
		fi
	done
	[ -n "$extra" ] && want=$(printf '%s\n%s' "$want" "$extra" | LC_ALL=C sort)
	for _ in $(seq 1 200); do
		got=$(answer "$REP")
		if [ -n "$want" ] && [ "$got" = "$want" ]; then
			ok "$what ($(wc -l <<< "$want") member and memberOf values, as dynlist's)"
			return
		fi
		sleep 0.1
	done
	not_ok "$what: the replica differs: $(diff <(echo "$want") <(echo "$got") | head -6 | tr '\n' ' ')"
}

E="cn=eng,ou=dyn,dc=example,dc=com"
S="cn=sales,ou=dyn,dc=example,dc=com"
check "first refresh" "$E | member: uid=frank,ou=people,dc=example,dc=com" \
	"uid=dave,ou=people,dc=example,dc=com | memberof: $S"

printf 'dn: uid=newbie,%s\nchangetype: add\nobjectClass: inetOrgPerson\nuid: newbie\ncn: N\nsn: N\ndepartmentNumber: ENG\n' "$P" |
	pmod || not_ok "adding newbie: $(cat "$work/pmod.log")"
check "an add matching a URL" "$E | member: uid=newbie,ou=people,dc=example,dc=com"

printf 'dn: uid=frank,%s\nchangetype: modify\nreplace: departmentNumber\ndepartmentNumber: SALES\n' "$P" |
	pmod || not_ok "modifying frank: $(cat "$work/pmod.log")"
check "a modify that stops matching one URL and starts matching another" \
	"!$E | member: uid=frank,ou=people,dc=example,dc=com" "$S | member: uid=frank,ou=people,dc=example,dc=com"

timeout 10 ldapdelete -x -H "$PROV" -D "$ADMIN" -w secret "uid=newbie,$P" > "$work/pmod.log" 2>&1 ||
	not_ok "deleting newbie: $(cat "$work/pmod.log")"
check "a member deleted" "!$E | member: uid=newbie,ou=people,dc=example,dc=com"

timeout 10 ldapmodrdn -x -H "$PROV" -D "$ADMIN" -w secret -r "uid=peggy,$P" "uid=margaret" > "$work/pmod.log" 2>&1 ||
	not_ok "renaming peggy: $(cat "$work/pmod.log")"
check "a member renamed (its value follows)" "$E | member: uid=margaret,ou=people,dc=example,dc=com"

timeout 10 ldapmodrdn -x -H "$PROV" -D "$ADMIN" -w secret -s "ou=contractors,$P" "uid=dave,$P" "uid=dave" > "$work/pmod.log" 2>&1 ||
	not_ok "moving dave: $(cat "$work/pmod.log")"
check "a member moved below the one-level URL's base (out of it)" \
	"!$S | member: uid=dave,ou=people,dc=example,dc=com" "!$S | member: uid=dave,ou=contractors,ou=people,dc=example,dc=com"

printf 'dn: %s\nchangetype: modify\nreplace: memberURL\nmemberURL: ldap:///%s??sub?(departmentNumber=SALES)\n' "$S" "$P" |
	pmod || not_ok "changing sales' URL: $(cat "$work/pmod.log")"
check "a group's memberURL changed (sub: dave again)" "$S | member: uid=dave,ou=contractors,ou=people,dc=example,dc=com"

printf 'dn: %s\nchangetype: modify\nadd: member\nmember: uid=alice,%s\n' "$S" "$P" |
	pmod || not_ok "adding a static member: $(cat "$work/pmod.log")"
# minidir gives the members of every group memberOf (as the memberof overlay), dynlist only
# those of groupOfNames and the ones a URL finds: alice, a static value of a groupOfURLs.
check "a static member added beside the computed ones" "$S | member: uid=alice,ou=people,dc=example,dc=com" \
	"+uid=alice,ou=people,dc=example,dc=com | memberof: $S"

printf 'dn: uid=frank,%s\nchangetype: modify\nreplace: departmentNumber\ndepartmentNumber: HR\n' "$P" |
	pmod || not_ok "modifying frank again: $(cat "$work/pmod.log")"
printf 'dn: uid=alice,%s\nchangetype: modify\nreplace: departmentNumber\ndepartmentNumber: SALES\n' "$P" |
	pmod || not_ok "modifying alice: $(cat "$work/pmod.log")"
check "a computed member leaves; a static one that matches too stays once" \
	"!$S | member: uid=frank,ou=people,dc=example,dc=com" "$S | member: uid=alice,ou=people,dc=example,dc=com"

printf 'dn: %s\nchangetype: modify\ndelete: member\nmember: uid=alice,%s\n' "$S" "$P" |
	pmod || not_ok "taking the static member away: $(cat "$work/pmod.log")"
check "the static value taken away: still found by the URL" "$S | member: uid=alice,ou=people,dc=example,dc=com"

printf 'dn: uid=alice,%s\nchangetype: modify\nreplace: departmentNumber\ndepartmentNumber: EXEC\n' "$P" |
	pmod || not_ok "modifying alice again: $(cat "$work/pmod.log")"
check "and gone once it stops matching" "!$S | member: uid=alice,ou=people,dc=example,dc=com"

printf 'dn: cn=contract,%s\nchangetype: add\nobjectClass: groupOfURLs\ncn: contract\nmemberURL: ldap:///ou=contractors,%s??sub?(objectClass=inetOrgPerson)\n' "$D" "$P" |
	pmod || not_ok "adding a group: $(cat "$work/pmod.log")"
check "a dynamic group added" \
	"cn=contract,ou=dyn,dc=example,dc=com | member: uid=dave,ou=contractors,ou=people,dc=example,dc=com"

timeout 10 ldapdelete -x -H "$PROV" -D "$ADMIN" -w secret "$E" > "$work/pmod.log" 2>&1 ||
	not_ok "deleting eng: $(cat "$work/pmod.log")"
check "a dynamic group deleted" "!uid=frank,ou=people,dc=example,dc=com | memberof: $E" \
	"!uid=margaret,ou=people,dc=example,dc=com | memberof: $E"

stop_checked "$rpid" "$rlog" || not_ok "stop: $stop_why"

# The replica's export is the provider's slapcat, entry for entry: the groups as stored
# (memberURL and static values, not the members the replica computed), and the
# operational attributes slapcat writes (structuralObjectClass, entryUUID, the provider's
# timestamps, names and entryCSN, contextCSN on the suffix) with the provider's values
# (before: computed members, and entryUUID alone).
SLAPCAT=${SLAPCAT:-/usr/sbin/slapcat}
timeout 60 "$SLAPCAT" -f "$work/slapd.conf" 2> /dev/null | ldif_sorted > "$work/slapcat.sorted"
"$BUILD/minidir-export" -q -f "$work/rd.conf" | ldif_sorted > "$work/export.sorted"
if [ "$(grep -c ' | contextCSN: ' "$work/slapcat.sorted")" -ge 1 ] &&
	[ "$(grep -c ' | entryCSN: ' "$work/export.sorted")" = "$(grep -c ' | dn::\? ' "$work/export.sorted")" ] &&
	cmp -s "$work/slapcat.sorted" "$work/export.sorted"; then
	ok "the replica's export is the provider's slapcat, operational attributes and contextCSN included"
else
	not_ok "replica's export against slapcat: $(diff "$work/slapcat.sorted" "$work/export.sorted" | head -8 | tr '\n' ' ')"
fi
finish
