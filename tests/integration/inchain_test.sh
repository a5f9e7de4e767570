#!/usr/bin/env bash
# The in-chain matching rule (LDAP_MATCHING_RULE_IN_CHAIN, 1.2.840.113556.1.4.1941;
# server/ops/search_chain.h): a directory of groups in groups with cycles and a chain of
# depth 10 (tests/integration/inchain_check.py gen) is imported with memberof_nested off and
# on; for each, a real server answers, for every group G, (memberOf:...:=G) and, for users
# and groups U, (member:...:=U) and (uniqueMember:...:=U), compared with the closure
# inchain_check.py computes itself (python-ldap); then, with ldapsearch, the filters
# applications' documentation gives (Grafana, Gitea, Rancher, LibreNMS), the rule inside OR
# and NOT, a DN that names no entry, a value that is not a DN, another attribute, paged
# results, Matched Values, access rules, cn=Subschema, and inchain_max's adminLimitExceeded.
# Every server is stopped by PID; every wait is bounded.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is
. tests/integration/lib.sh
use_work_dir inchain
B=dc=chain,dc=test
G=ou=groups,$B
P=ou=people,$B
O=1.2.840.113556.1.4.1941
ADMIN=cn=admin,$B

"$PYTHON" tests/integration/inchain_check.py gen "$B" > "$work/chain.ldif" || not_ok "generating the directory"

conf() { # conf NAME EXTRA...: a config for database NAME.mdb, with extra lines
	local f=$work/$1.conf
	shift
	{
		printf 'listen = 127.0.0.1:0\ndatabase = %s.mdb\nschema_dir = %s\n' "${f%.conf}" "$SCHEMA_DIR"
		printf 'suffix = %s\nthreads = 2\nrootdn = %s\nrootpw = secret\n' "$B" "$ADMIN"
		printf 'index = objectClass, uid, cn, member\n'
		# memberOf may not be searched by anonymous clients; all else is readable
		printf 'access = to attrs=memberOf by anonymous none by * read\n'
		printf 'access = to * by * read\n'
		printf '%s\n' "$@"
	} > "$f"
}

# s ARGS...: ldapsearch as the rootdn below the suffix, DNs lowercased and sorted.
s() {
	timeout 30 ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -D "$ADMIN" -w secret -b "$B" "$@" 1.1 2>&1 |
		sed -n 's/^dn: //p' | tr '[:upper:]' '[:lower:]' | sort
}
# expect WHAT WANT GOT
expect() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1: $(diff <(echo "$2") <(echo "$3") | head -6 | tr '\n' ' ')"
	fi
}
lc() { tr '[:upper:]' '[:lower:]'; }
# ref inside|around DN CLASS: the reference closure (inchain_check.py), sorted.
ref() { "$PYTHON" tests/integration/inchain_check.py ref "$B" "$@" | sort; }

# The application filters, on a server at $H ($1: the mode, for the messages).
app_filters() {
	local m=$1
	expect "$m: Grafana/Gitea (&(objectClass=inetOrgPerson)(uid=u0)(memberOf:$O:=cn=d0,...)): u0, 11 levels down" \
		"uid=u0,$P" "$(s "(&(objectClass=inetOrgPerson)(uid=u0)(memberOf:$O:=cn=d0,$G))")"
	expect "$m: the same filter for a user outside d0: nothing" \
		"" "$(s "(&(objectClass=inetOrgPerson)(uid=u30)(memberOf:$O:=cn=d0,$G))")"
	# Rancher/LibreNMS: every groupOfNames u0 is in, through any chain (the reference).
	expect "$m: Rancher/LibreNMS (&(objectClass=groupOfNames)(member:$O:=uid=u0,...)): the groupOfNames around u0 ($(ref around "uid=u0,$P" groupOfNames | grep -c .))" \
		"$(ref around "uid=u0,$P" groupOfNames)" "$(s "(&(objectClass=groupOfNames)(member:$O:=uid=u0,$P))")"
	expect "$m: (&(objectClass=groupOfUniqueNames)(uniqueMember:$O:=uid=u0,...)): the groupOfUniqueNames around u0 ($(ref around "uid=u0,$P" groupOfUniqueNames | grep -c .))" \
		"$(ref around "uid=u0,$P" groupOfUniqueNames)" "$(s "(&(objectClass=groupOfUniqueNames)(uniqueMember:$O:=uid=u0,$P))")"
	local c0
	c0=$(printf '%s\n' "uid=u20,$P" "uid=u21,$P" "uid=u22,$P" "cn=c0,$G" "cn=c1,$G" "cn=c2,$G" | lc | sort)
	expect "$m: a cycle c0 > c1 > c2 > c0: its three users and the three groups, c0 itself included" \
		"$c0" "$(s "(memberOf:$O:=cn=c0,$G)")"
	expect "$m: the rule by the NAME cn=Subschema gives it (inChainMatch)" \
		"$c0" "$(s "(memberOf:inChainMatch:=CN=C0, ou=Groups,$B)")"
	expect "$m: a group naming itself is inside itself" \
		"$(printf '%s\n' "cn=self,$G" "uid=u23,$P" | lc | sort)" "$(s "(memberOf:$O:=cn=self,$G)")"
	expect "$m: inside OR: (|(memberOf:$O:=cn=c0,...)(uid=u59))" \
		"$(printf '%s\n' "$c0" "uid=u59,$P" | sort)" "$(s "(|(memberOf:$O:=cn=c0,$G)(uid=u59))")"
	local people notd0
	people=$(s -s one -b "$P" "(objectClass=*)")
	notd0=$(comm -23 <(echo "$people") <(s "(memberOf:$O:=cn=d0,$G)"))
	expect "$m: inside NOT: users not inside d0 ($(echo "$notd0" | grep -c .) of $(echo "$people" | grep -c .))" \
		"$notd0" "$(s "(&(objectClass=inetOrgPerson)(!(memberOf:$O:=cn=d0,$G)))")"
	expect "$m: a group DN that names no entry: nothing (FALSE: its NOT holds for every user)" \
		"$people" "$(s "(&(objectClass=inetOrgPerson)(!(memberOf:$O:=cn=nothere,$G)))")"
	expect "$m: a value that is not a DN is Undefined: nothing, NOT too" \
		"" "$(s "(|(memberOf:$O:=not a dn)(!(memberOf:$O:=not a dn)))")"
	expect "$m: the rule on another attribute is Undefined: nothing, NOT too" \
		"" "$(s "(|(cn:$O:=cn=d0,$G)(!(cn:$O:=cn=d0,$G)))")"
	expect "$m: one level below ou=people: only users" \
		"$(s "(memberOf:$O:=cn=d0,$G)" | grep '^uid=')" "$(s -s one -b "$P" "(memberOf:$O:=cn=d0,$G)")"
	local n
	n=$(timeout 30 ldapsearch -x -LLL -H "$H" -D "$ADMIN" -w secret -b "$B" -E pr=4/noprompt "(memberOf:$O:=cn=d0,$G)" 1.1 | grep -c '^dn:')
	expect "$m: paged by 4: the 22 entries inside d0" 22 "$n"
	# Matched Values: an in-chain item tests entries, not values: no memberOf value matches.
	local mv
	mv=$(timeout 30 ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -D "$ADMIN" -w secret -b "uid=u0,$P" -s base \
		-E "!mv=(memberOf:$O:=cn=d10,$G)" "(objectClass=*)" memberOf 2>&1)
	expect "$m: Matched Values with an in-chain item: the entry, no memberOf value" "dn: uid=u0,$P" "$mv"
	# Access: anonymous clients may not search memberOf: the item is Undefined for them.
	n=$(timeout 30 ldapsearch -x -LLL -H "$H" -b "$B" "(|(memberOf:$O:=cn=d0,$G)(!(memberOf:$O:=cn=d0,$G)))" 1.1 | grep -c '^dn:')
	expect "$m: anonymous, memberOf not searchable: the item is Undefined (nothing, NOT too)" 0 "$n"
	n=$(timeout 30 ldapsearch -x -LLL -H "$H" -b "$B" "(member:$O:=uid=u0,$P)" 1.1 | grep -c '^dn:')
	expect "$m: anonymous, member searchable: (member:$O:=uid=u0,...) answers" \
		"$(s "(member:$O:=uid=u0,$P)" | grep -c .)" "$n"
}

for mode in off on; do
	if [ "$mode" = on ]; then conf "$mode" "memberof_nested = yes"; else conf "$mode"; fi
	if out=$("$BUILD/minidir-import" -q -f "$work/$mode.conf" "$work/chain.ldif" 2>&1); then
		ok "$mode: import ($(grep -c '^dn:' "$work/chain.ldif") entries)"
	else
		not_ok "$mode: import: $out"
		continue
	fi
	start_minidir "$work/$mode.conf" "$work/$mode.log"
	H=ldap://127.0.0.1:$port
	if out=$(timeout 120 "$PYTHON" tests/integration/inchain_check.py check "$H" "$B" "$ADMIN" secret 2>&1); then
		ok "memberof_nested $mode: $out"
	else
		not_ok "memberof_nested $mode: $(echo "$out" | head -5)"
	fi
	app_filters "memberof_nested $mode"
	stop_checked "$pid" "$work/$mode.log" || not_ok "$mode: stop: $stop_why"
done

# cn=Subschema publishes the rule.
conf limit "inchain_max = 21"
"$BUILD/minidir-import" -q -f "$work/limit.conf" "$work/chain.ldif" > "$work/import.log" 2>&1 || not_ok "limit: import: $(cat "$work/import.log")"
start_minidir "$work/limit.conf" "$work/limit.log"
H=ldap://127.0.0.1:$port
n=$(timeout 30 ldapsearch -x -LLL -o ldif-wrap=no -H "$H" -b cn=Subschema -s base matchingRules |
	grep -c "^matchingRules: ( $O NAME 'inChainMatch' SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 )$")
expect "cn=Subschema's matchingRules has inChainMatch" 1 "$n"

# inchain_max = 21: d0 has 22 entries inside it (adminLimitExceeded, the rootdn too); d1 20.
out=$(timeout 30 ldapsearch -x -LLL -H "$H" -D "$ADMIN" -w secret -b "$B" "(memberOf:$O:=cn=d0,$G)" 1.1 2>&1)
rc=$?
if [ "$rc" = 11 ] && grep -q "reach more than the 21 entries the server allows (inchain_max)" <<< "$out" &&
	! grep -q '^dn:' <<< "$out"; then
	ok "inchain_max = 21: 22 entries inside d0: adminLimitExceeded (11) naming the key, nothing sent"
else
	not_ok "inchain_max: rc $rc: $(echo "$out" | head -3 | tr '\n' ' ')"
fi
n=$(s "(memberOf:$O:=cn=d1,$G)" | grep -c .)
expect "inchain_max = 21: the 20 entries inside d1 are answered" 20 "$n"
# The bound counts every item of the filter together: d1 (20) and c0 (6).
timeout 30 ldapsearch -x -LLL -H "$H" -D "$ADMIN" -w secret -b "$B" "(|(memberOf:$O:=cn=d1,$G)(memberOf:$O:=cn=c0,$G))" 1.1 > /dev/null 2>&1
expect "inchain_max = 21: two items reaching 26 together: adminLimitExceeded" 11 "$?"
stop_checked "$pid" "$work/limit.log" || not_ok "limit: stop: $stop_why"
finish
