#!/usr/bin/env bash
# Dynamic groups (dynamic_groups = yes, storage/dyngroup.h): minidir-import gives each
# groupOfURLs entry the members its memberURL searches find; ldapsearch sees them as the
# group's member values, in the members' memberOf, and through (memberOf=...) filters.
# A bad URL is a warning and ignored; more URLs than dynamic_groups_max fail the import;
# off by default; refused with syncrepl. The expected members are computed here from the
# LDIF's own attributes (awk), not written down.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
use_work_dir dyngroup
B=dc=dyn,dc=test

# 40 users in two ous; every third is in department sales; ou=other has 5 more.
{
	printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: dyn\no: dyn\n\n' "$B"
	printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n' "$B"
	printf 'dn: ou=other,%s\nobjectClass: organizationalUnit\nou: other\n\n' "$B"
	printf 'dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n\n' "$B"
	for i in $(seq 1 40); do
		dep=eng
		[ $((i % 3)) = 0 ] && dep=sales
		printf 'dn: uid=u%d,ou=people,%s\nobjectClass: inetOrgPerson\nuid: u%d\ncn: User %d\nsn: U%d\ndepartmentNumber: %s\n\n' "$i" "$B" "$i" "$i" "$i" "$dep"
	done
	for i in $(seq 1 5); do
		printf 'dn: uid=o%d,ou=other,%s\nobjectClass: inetOrgPerson\nuid: o%d\ncn: Other %d\nsn: O%d\ndepartmentNumber: sales\n\n' "$i" "$B" "$i" "$i" "$i"
	done
	printf 'dn: cn=sales,ou=groups,%s\nobjectClass: groupOfURLs\ncn: sales\n' "$B"
	printf 'memberURL: ldap:///ou=people,%s??one?(departmentNumber=sales)\n' "$B"
	printf 'memberURL: ldap:///ou=other,%s??sub?(objectClass=inetOrgPerson)\n' "$B"
	printf 'memberURL: not a url\n'
	printf 'memberURL: ldap:///ou=people,%s??sub?(bad filter\n\n' "$B"
	printf 'dn: cn=none,ou=groups,%s\nobjectClass: groupOfURLs\ncn: none\n' "$B"
	printf 'memberURL: ldap:///ou=people,%s??base?(objectClass=*)\n\n' "$B"
	printf 'dn: cn=static,ou=groups,%s\nobjectClass: groupOfNames\ncn: static\nmember: uid=u1,ou=people,%s\n\n' "$B" "$B"
	# A dynamic group with a static value too: uid=u2 (eng, found by no URL) and o1 (found).
	printf 'dn: cn=mixed,ou=groups,%s\nobjectClass: groupOfURLs\ncn: mixed\n' "$B"
	printf 'member: uid=u2,ou=people,%s\nmemberURL: ldap:///ou=other,%s??one?(uid=o1)\n\n' "$B" "$B"
} > "$work/dyn.ldif"

conf() { # conf FILE EXTRA...: a config for the test's database, with extra lines
	local f=$1
	shift
	{
		printf 'listen = 127.0.0.1:0\ndatabase = %s/dyn.mdb\nschema_dir = %s\n' "$work" "$SCHEMA_DIR"
		printf 'schema = core cosine inetorgperson nis dyngroup\nsuffix = %s\nthreads = 2\n' "$B"
		printf 'index = objectClass, uid, cn, member\n'
		printf '%s\n' "$@"
	} > "$f"
}

# The expected sales members, from the LDIF: users in ou=people with departmentNumber
# sales, and every user in ou=other.
expected=$(awk -v b="$B" '
	/^dn: / { dn = substr($0, 5) }
	/^departmentNumber: sales/ && dn ~ /ou=people,/ { print tolower(dn) }
	/^objectClass: inetOrgPerson/ && dn ~ /ou=other,/ { print tolower(dn) }' "$work/dyn.ldif" | sort)
nexp=$(printf '%s\n' "$expected" | grep -c .)

# --- off by default: a groupOfURLs has no members --------------------------------------
conf "$work/off.conf"
if out=$("$BUILD/minidir-import" -q -f "$work/off.conf" "$work/dyn.ldif" 2>&1); then
	ok "import with dynamic_groups off"
else
	not_ok "import with dynamic_groups off: $out"
fi
start_minidir "$work/off.conf" "$work/off.log"
n=$(ldapsearch -x -LLL -H "ldap://127.0.0.1:$port" -b "cn=sales,ou=groups,$B" -s base member | grep -c '^member:')
[ "$n" = 0 ] && ok "off: the dynamic group has no member values" || not_ok "off: $n member values"
stop_checked "$pid" "$work/off.log" || not_ok "off: $stop_why"

# --- on ---------------------------------------------------------------------------------
conf "$work/on.conf" "dynamic_groups = yes"
if out=$("$BUILD/minidir-import" -q -f "$work/on.conf" "$work/dyn.ldif" 2>&1); then
	ok "import with dynamic_groups = yes"
else
	not_ok "import with dynamic_groups = yes: $out"
fi
if grep -q 'entry "cn=sales,ou=groups,dc=dyn,dc=test": memberURL "not a url" ignored: not an LDAP URL' <<< "$out" &&
	grep -q 'memberURL "ldap:///ou=people,dc=dyn,dc=test??sub?(bad filter" ignored: its filter is not a filter' <<< "$out"; then
	ok "bad memberURL values are warnings naming the entry and the URL"
else
	not_ok "bad memberURL warnings: $out"
fi
start_minidir "$work/on.conf" "$work/on.log"
H="ldap://127.0.0.1:$port"
got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "cn=sales,ou=groups,$B" -s base member |
	sed -n 's/^member: //p' | tr '[:upper:]' '[:lower:]' | sort)
if [ "$got" = "$expected" ] && [ "$nexp" -gt 10 ]; then
	ok "the dynamic group's member values are the $nexp entries its URLs find"
else
	not_ok "member values: $(diff <(echo "$expected") <(echo "$got") | head -5)"
fi
got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "$B" "(memberOf=cn=sales,ou=groups,$B)" 1.1 |
	sed -n 's/^dn: //p' | tr '[:upper:]' '[:lower:]' | sort)
[ "$got" = "$expected" ] && ok "(memberOf=cn=sales,...) finds the same entries" ||
	not_ok "(memberOf=) found: $(diff <(echo "$expected") <(echo "$got") | head -5)"
got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "uid=u3,ou=people,$B" -s base memberOf | sed -n 's/^memberOf: //p')
[ "$got" = "cn=sales,ou=groups,$B" ] && ok "a found user's memberOf names the group" || not_ok "u3 memberOf: $got"
got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "uid=u1,ou=people,$B" -s base memberOf | sed -n 's/^memberOf: //p')
[ "$got" = "cn=static,ou=groups,$B" ] && ok "a user not found keeps only its static group" || not_ok "u1 memberOf: $got"
n=$(ldapsearch -x -LLL -H "$H" -b "$B" "(member=uid=o2,ou=other,$B)" 1.1 | grep -c '^dn: cn=sales')
[ "$n" = 1 ] && ok "(member=...) finds the dynamic group through the member index" || not_ok "(member=) found $n"
n=$(ldapsearch -x -LLL -H "$H" -b "cn=none,ou=groups,$B" -s base member | grep -c '^member:')
[ "$n" = 1 ] && ok "a base-scope URL finds its base entry alone" || not_ok "base scope: $n members"
stop_checked "$pid" "$work/on.log" || not_ok "on: $stop_why"

# --- export writes what the LDIF had: the memberURL, not the members it found -------------
# (before: the computed members went out as member values, and an edited export imported
# again kept a user in the group he had left, as a static member)
"$BUILD/minidir-export" -q -f "$work/on.conf" > "$work/export.ldif"
group_of() { # group_of FILE DN: the LDIF record of DN, unwrapped
	awk -v dn="dn: $2" 'BEGIN { RS = "" } $0 ~ "^" dn "\n" { gsub(/\n /, ""); print }' "$1"
}
sales=$(group_of "$work/export.ldif" "cn=sales,ou=groups,$B")
if [ "$(grep -c '^memberURL: ' <<< "$sales")" = 4 ] && ! grep -qi '^member:' <<< "$sales"; then
	ok "export: the dynamic group's 4 memberURL values and none of its $nexp computed members"
else
	not_ok "export of cn=sales: $(grep -ci '^member:' <<< "$sales") member values: $(head -8 <<< "$sales")"
fi
mixed=$(group_of "$work/export.ldif" "cn=mixed,ou=groups,$B")
if [ "$(grep -i '^member:' <<< "$mixed")" = "member: uid=u2,ou=people,$B" ]; then
	ok "export: a dynamic group's static member value stays, its computed one goes"
else
	not_ok "export of cn=mixed: $(grep -i '^member' <<< "$mixed")"
fi
n=$(grep -ci '^memberOf:' "$work/export.ldif")
[ "$n" = 0 ] && ok "export: no memberOf values (computed from the groups)" || not_ok "export: $n memberOf values"
# u3 leaves sales: its departmentNumber changes in the export, which is imported again.
awk -v dn="dn: uid=u3,ou=people,$B" '$0 == dn { in3 = 1 } /^$/ { in3 = 0 }
	in3 && /^departmentNumber: / { $0 = "departmentNumber: eng" } { print }' \
	"$work/export.ldif" > "$work/edited.ldif"
if out=$("$BUILD/minidir-import" -q -f "$work/on.conf" "$work/edited.ldif" 2>&1); then
	start_minidir "$work/on.conf" "$work/on2.log"
	H="ldap://127.0.0.1:$port"
	got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "cn=sales,ou=groups,$B" -s base member |
		sed -n 's/^member: //p' | tr '[:upper:]' '[:lower:]' | sort)
	want=$(grep -v "^uid=u3," <<< "$expected")
	if [ "$got" = "$want" ] && ! grep -q '^uid=u3,' <<< "$got"; then
		ok "export, edit, import: the user who left the matching set is no longer a member"
	else
		not_ok "after edit and import, cn=sales: $(diff <(echo "$want") <(echo "$got") | head -5)"
	fi
	got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "uid=u3,ou=people,$B" -s base memberOf | grep -c '^memberOf:')
	[ "$got" = 0 ] && ok "and his memberOf no longer names the group" || not_ok "u3 still has $got memberOf"
	got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b "cn=mixed,ou=groups,$B" -s base member |
		sed -n 's/^member: //p' | sort | tr '\n' ' ')
	[ "$got" = "uid=o1,ou=other,$B uid=u2,ou=people,$B " ] && ok "the mixed group: its static value and its found one again" ||
		not_ok "cn=mixed after the round trip: $got"
	stop_checked "$pid" "$work/on2.log" || not_ok "edited: $stop_why"
else
	not_ok "import of the edited export: $out"
fi

# --- the bound: more URLs than dynamic_groups_max ----------------------------------------
conf "$work/max.conf" "dynamic_groups = yes" "dynamic_groups_max = 2"
if out=$("$BUILD/minidir-import" -q -f "$work/max.conf" "$work/dyn.ldif" 2>&1); then
	not_ok "3 URLs with dynamic_groups_max = 2 imported"
elif grep -q 'more than 2 memberURL values (dynamic_groups_max)' <<< "$out"; then
	ok "more URLs than dynamic_groups_max: the import fails naming the limit"
else
	not_ok "dynamic_groups_max: $out"
fi

# --- on a replica: accepted (tests/integration/dyngroup_replica_test.sh follows a provider) ---
conf "$work/rep.conf" "dynamic_groups = yes" \
	"syncrepl = rid=1 provider=ldap://127.0.0.1:1 searchbase=$B"
if out=$("$BUILD/minidir" -t -f "$work/rep.conf" 2>&1); then
	ok "dynamic_groups with syncrepl: accepted"
else
	not_ok "dynamic_groups with syncrepl: $out"
fi
finish
