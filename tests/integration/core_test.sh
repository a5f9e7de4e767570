#!/usr/bin/env bash
# Integration tests: a real minidir on an ephemeral 127.0.0.1 port, a database
# imported from tests/data/test.ldif, and the real ldapsearch / ldapwhoami and a
# libldap client (ldapclient.c) asserting on entries and result codes.
# Expected answers are derived from the LDIF where they can be.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
PEOPLE=ou=people,$BASE

work=$(mktemp -d /tmp/minidir-it.XXXXXX)
server_pid=
trap cleanup_server_and_work EXIT

# [::1]: the access log's IPv6 peers (below).
cat > "$work/minidir.conf" <<CONF
listen = 127.0.0.1:0
listen = [::1]:0
database = $work/test.mdb
schema_dir = $SCHEMA_DIR
suffix = $BASE
threads = 2
rootdn = cn=admin,$BASE
rootpw = root-secret
index = objectClass, uid, cn, mail, member
write_timeout = 2
access_log = $work/access.log
CONF

# --- import -----------------------------------------------------------------
if out=$("$BUILD/minidir-import" -f "$work/minidir.conf" "$LDIF" 2>&1); then
	ok "import: $out"
else
	not_ok "import failed: $out"
	exit 1
fi
total=$(sed -n '1s/^# \([0-9]*\) entries.*/\1/p' "$LDIF")

# Progress: on a terminal (script(1) gives one) a line redrawn in place; never into a file.
# The first line comes after 0.25 s: 150,000 entries take over a second to import here
# (60,000 once finished before it).
sh bench/gen-ldif.sh 150000 "$BASE" 300 > "$work/progress.ldif"
sed "s#^database = .*#database = $work/progress.mdb#" "$work/minidir.conf" > "$work/progress.conf"
script -qec "$BUILD/minidir-import -f $work/progress.conf $work/progress.ldif" /dev/null > "$work/tty.out" 2>&1
if grep -q "minidir-import: [0-9]* entries, [0-9.]* of [0-9.]* MB ([0-9]*%), [0-9]* entries/s" "$work/tty.out"; then
	ok "import on a terminal shows its progress"
else
	not_ok "import on a terminal: no progress line in: $(tr '\r' '\n' < "$work/tty.out" | tail -3)"
fi
# (a reader that waits a moment makes the export outlast the first redraw)
script -qec "$BUILD/minidir-export -f $work/progress.conf | (sleep 0.6; cat > /dev/null)" /dev/null > "$work/tty.out" 2>&1
if grep -q "minidir-export: [0-9]* entries of 150002 ([0-9]*%), [0-9]* entries/s" "$work/tty.out"; then
	ok "export on a terminal shows its progress"
else
	not_ok "export on a terminal: no progress line in: $(tr '\r' '\n' < "$work/tty.out" | tail -3)"
fi
# (the import must succeed: a failed one shows no progress either)
rc=0
"$BUILD/minidir-import" -f "$work/progress.conf" "$work/progress.ldif" > "$work/notty.out" 2>&1 || rc=$?
if [ "$rc" != 0 ] || ! grep -q "^minidir-import: 150002 entries from " "$work/notty.out"; then
	not_ok "import into a file: exit $rc: $(tail -3 "$work/notty.out")"
elif grep -q "entries/s" "$work/notty.out"; then
	not_ok "import into a file shows progress"
else
	ok "import into a file: no progress line"
fi
script -qec "$BUILD/minidir-import -q -f $work/progress.conf $work/progress.ldif" /dev/null > "$work/tty.out" 2>&1
if [ -s "$work/tty.out" ]; then not_ok "import -q on a terminal printed: $(head -c 200 "$work/tty.out")"; else ok "import -q on a terminal: quiet"; fi
rm -f "$work/progress.mdb" "$work/progress.ldif"

start_server() {
	: > "$work/server.log" # emptied here: the background shell may open it after wait_port reads
	"$BUILD/minidir" -f "$work/minidir.conf" 2> "$work/server.log" &
	server_pid=$!
	port=$(wait_port "$work/server.log")
	if [ -z "$port" ]; then
		cat "$work/server.log"
		not_ok "server did not start"
		exit 1
	fi
	URI=ldap://127.0.0.1:$port
	port6=$(sed -n 's#.*listening on ldap://\[::1\]:\([0-9]*\)/.*#\1#p' "$work/server.log" | head -1)
}
start_server

# ldapsearch with a time bound; prints LDIF without wrapping.
ls_() { timeout 10 ldapsearch -x -LLL -o ldif-wrap=no -H "$URI" "$@"; }
# The DNs a search returns, lowercased and sorted.
dns() { ls_ "$@" 1.1 | sed -n 's/^dn: //p' | tr '[:upper:]' '[:lower:]' | sort; }
# The number of entries a search returns, or "ldapsearch exit N" when it fails
# (sizeLimitExceeded, 4, is no failure: the entries up to the limit came).
count() {
	local out rc=0
	out=$(ls_ "$@" 1.1 2> /dev/null) || rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ]; then
		echo "ldapsearch exit $rc"
		return
	fi
	grep -c "^dn:" <<< "$out"
}
# The first RDNs of the entries returned, in the order they came.
dns_in_order() { ls_ "$@" 1.1 | sed -n 's/^dn: \([^,]*\),.*/\1/p' | tr '\n' ' ' | sed 's/ $//'; }

# expect_count NAME N ldapsearch-args...
expect_count() {
	local name=$1 want=$2 got
	shift 2
	got=$(count "$@")
	if [ "$got" = "$want" ]; then ok "$name ($got entries)"; else not_ok "$name: $got entries, expected $want"; fi
}
# expect_dns NAME "dn1;dn2;..." ldapsearch-args...
expect_dns() {
	local name=$1 want got
	want=$(printf '%s' "$2" | tr ';' '\n' | tr '[:upper:]' '[:lower:]' | sort)
	shift 2
	got=$(dns "$@")
	# shellcheck disable=SC2086,SC2116  # echo joins the lines into one for the message
	if [ "$got" = "$want" ]; then ok "$name"; else not_ok "$name: got [$(echo $got)] expected [$(echo $want)]"; fi
}
# expect_rc NAME CODE command...: the LDAP result code is ldapsearch's exit status.
expect_rc() {
	local name=$1 want=$2 rc
	shift 2
	"$@" > "$work/out" 2>&1
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$name (result $rc)"; else not_ok "$name: result $rc, expected $want: $(head -3 "$work/out")"; fi
}
# expect_grep NAME PATTERN command...: the output contains PATTERN.
expect_grep() {
	local name=$1 pat=$2
	shift 2
	if "$@" 2>&1 | grep -q -- "$pat"; then ok "$name"; else not_ok "$name: no \"$pat\" in output"; fi
}
# expect_nogrep NAME PATTERN command...: the command succeeds and its output lacks PATTERN.
expect_nogrep() {
	local name=$1 pat=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	if [ "$rc" -ne 0 ]; then
		not_ok "$name: the command failed (exit $rc): $(head -c 200 <<< "$out")"
	elif grep -q -- "$pat" <<< "$out"; then
		not_ok "$name: \"$pat\" in output"
	else
		ok "$name"
	fi
}

# --- scopes -------------------------------------------------------------------
children_of() { grep -ciE "^dn: [^,]+,$1\$" "$LDIF"; }
expect_count "base scope" 1 -b "$PEOPLE" -s base
expect_count "one-level scope under ou=people" "$(children_of "$PEOPLE")" -b "$PEOPLE" -s one
expect_count "one-level scope under the suffix" "$(children_of "$BASE")" -b "$BASE" -s one
expect_count "subtree scope of the suffix" "$total" -b "$BASE" -s sub
expect_count "subtree scope of ou=deep" "$(grep -ciE '^dn: .*ou=deep,ou=people,dc=test,dc=org$' "$LDIF")" -b "ou=deep,$PEOPLE" -s sub
expect_dns "one-level of ou=deep" "uid=deep1,ou=deep,$PEOPLE;uid=deep2,ou=deep,$PEOPLE;ou=deeper,ou=deep,$PEOPLE" -b "ou=deep,$PEOPLE" -s one
expect_dns "base DN in any case and spacing" "$PEOPLE" -b "OU=People, DC=Test,DC=ORG" -s base

# --- filters --------------------------------------------------------------------
expect_dns "equality (uid=user3)" "uid=user3,$PEOPLE" -b "$BASE" "(uid=user3)"
expect_dns "equality is case-insensitive (cn=USER three)" "uid=user3,$PEOPLE" -b "$BASE" "(cn=USER   three)"
expect_dns "equality on a second value (mail)" "uid=user3,$PEOPLE" -b "$BASE" "(mail=user3.alt@test.org)"
expect_count "equality on an unindexed attribute" "$(grep -c '^employeeType: even' "$LDIF")" -b "$BASE" "(employeeType=even)"
expect_count "presence (mail=*)" "$(awk -v RS= '/(^|\n)mail:/ {n++} END {print n}' "$LDIF")" -b "$BASE" "(mail=*)"
expect_count "presence (objectClass=*)" "$total" -b "$BASE" "(objectClass=*)"
expect_dns "and" "uid=user2,$PEOPLE" -b "$BASE" "(&(employeeType=even)(sn=two))"
expect_dns "or" "uid=user1,$PEOPLE;uid=deep1,ou=deep,$PEOPLE" -b "$BASE" "(|(uid=user1)(uid=deep1))"
expect_count "not" "$(( $(grep -c '^uid: ' "$LDIF") - $(grep -c '^employeeType: even' "$LDIF") ))" -b "$BASE" "(&(uid=*)(!(employeeType=even)))"
expect_dns "nested and/or/not" "uid=user4,$PEOPLE" -b "$BASE" "(&(|(uid=user4)(uid=user5)(uid=deep1))(!(|(uid=user5)(uid=deep1))))"
expect_dns "substring initial/final" "uid=deep2,ou=deep,$PEOPLE" -b "$BASE" "(cn=deep*o)"
expect_dns "substring initial/any" "uid=deep1,ou=deep,$PEOPLE;uid=deep2,ou=deep,$PEOPLE;uid=deepest,ou=deeper,ou=deep,$PEOPLE" -b "$BASE" "(cn=deep*o*)"
expect_dns "substring any" "uid=deepest,ou=deeper,ou=deep,$PEOPLE" -b "$BASE" "(cn=*est per*)"
expect_dns "member (DN-valued) matches a differently spelled DN" "cn=admins,ou=groups,$BASE;cn=all,ou=groups,$BASE" -b "$BASE" "(&(objectClass=groupOfNames)(member=UID=User0, OU=People,DC=test,DC=org))"
expect_dns "escaped value in a filter" "cn=doe\\2c jane,$PEOPLE" -b "$BASE" '(cn=Doe\2c Jane)'
expect_dns "UTF-8 value" "uid=jose,$PEOPLE" -b "$BASE" "(sn=Núñez)"
expect_count "telephoneNumber ignores spaces and hyphens" 1 -b "$BASE" "(telephoneNumber=+1-555-0107)"
expect_count "filter on a missing attribute matches nothing" 0 -b "$BASE" "(nosuchattr=x)"
expect_count "index scope: indexed filter with a one-level base" 0 -b "ou=groups,$BASE" -s one "(uid=user3)"
expect_count "sizelimit from the client" 4 -b "$BASE" -z 4 "(objectClass=*)"
expect_rc "sizeLimitExceeded" 4 ls_ -b "$BASE" -z 4 "(objectClass=*)"

# --- attributes -------------------------------------------------------------------
expect_grep "attribute selection returns the named attribute" "^mail: user3@test.org" ls_ -b "$BASE" "(uid=user3)" mail
expect_nogrep "attribute selection leaves others out" "^sn:" ls_ -b "$BASE" "(uid=user3)" mail
expect_nogrep "1.1 returns no attributes" "^cn:" ls_ -b "$BASE" "(uid=user3)" 1.1
expect_grep "* returns all user attributes" "^description: person 3" ls_ -b "$BASE" "(uid=user3)" "*"
expect_grep "typesOnly" "^mail:$" ls_ -A -b "$BASE" "(uid=user3)" mail
expect_nogrep "userPassword hidden from anonymous" "userPassword" ls_ -b "$BASE" "(uid=user1)"

# --- binds ------------------------------------------------------------------------
expect_rc "bind as an entry with {SSHA} userPassword" 0 ls_ -D "uid=user1,$PEOPLE" -w secret1 -b "$BASE" -s base
expect_rc "bind as an entry with a plaintext userPassword" 0 ls_ -D "uid=user2,$PEOPLE" -w secret2 -b "$BASE" -s base
expect_rc "bind as rootdn" 0 ls_ -D "cn=admin,$BASE" -w root-secret -b "$BASE" -s base
expect_rc "bind with a wrong password" 49 ls_ -D "uid=user1,$PEOPLE" -w wrong -b "$BASE" -s base
expect_rc "bind as rootdn with a wrong password" 49 ls_ -D "cn=admin,$BASE" -w wrong -b "$BASE" -s base
expect_rc "bind as an entry without userPassword" 49 ls_ -D "uid=user3,$PEOPLE" -w x -b "$BASE" -s base
expect_rc "bind as a missing DN" 49 ls_ -D "uid=nobody,$PEOPLE" -w x -b "$BASE" -s base
expect_rc "unauthenticated bind (DN, empty password)" 53 ls_ -D "uid=user1,$PEOPLE" -w "" -b "$BASE" -s base
expect_rc "bind with an invalid DN" 34 ls_ -D "not a dn" -w x -b "$BASE" -s base
expect_grep "own userPassword visible after bind" "^userPassword" ls_ -D "uid=user1,$PEOPLE" -w secret1 -b "uid=user1,$PEOPLE" -s base userPassword
expect_nogrep "another entry's userPassword hidden after bind" "^userPassword" ls_ -D "uid=user1,$PEOPLE" -w secret1 -b "uid=user2,$PEOPLE" -s base userPassword
expect_grep "rootdn sees userPassword" "^userPassword" ls_ -D "cn=admin,$BASE" -w root-secret -b "uid=user2,$PEOPLE" -s base userPassword

# --- errors -----------------------------------------------------------------------
expect_rc "missing base" 32 ls_ -b "uid=nobody,$PEOPLE"
expect_grep "missing base has the deepest existing matchedDN" "matchedDN: $PEOPLE" timeout 10 ldapsearch -x -H "$URI" -b "uid=nobody,ou=nothere,$PEOPLE"
expect_rc "base outside the suffix" 32 ls_ -b "dc=elsewhere,dc=net"
expect_rc "invalid base DN" 34 ls_ -b "this is not a dn"
expect_rc "a modify is refused (read-only)" 53 timeout 10 ldapmodify -x -H "$URI" -D "cn=admin,$BASE" -w root-secret -f /dev/stdin <<MOD
dn: uid=user3,$PEOPLE
changetype: modify
replace: sn
sn: x
MOD

# --- root DSE, subschema, operational attributes ------------------------------------
expect_grep "root DSE lists the naming context" "^namingContexts: $BASE" ls_ -b "" -s base "+" "*"
# One version (conf/version.h): what the root DSE says is what --version says.
version=$("$BUILD/minidir" --version)
version=${version#minidir }
expect_grep "root DSE's vendorVersion is minidir --version's ($version)" "^vendorVersion: $version$" ls_ -b "" -s base vendorVersion
expect_nogrep "root DSE operational attributes only on request" "^namingContexts" ls_ -b "" -s base
expect_grep "root DSE lists the paged results control" "^supportedControl: 1.2.840.113556.1.4.319" ls_ -b "" -s base +
expect_grep "root DSE lists the matched values control" "^supportedControl: 1.2.826.0.1.3344810.2.3$" ls_ -b "" -s base supportedControl
expect_grep "memberOf computed at import, by name" "^memberOf: cn=admins,ou=groups,dc=test,dc=org$" ls_ -b "uid=user0,$PEOPLE" -s base memberOf
expect_dns "memberOf filter" "uid=user0,$PEOPLE;uid=user1,$PEOPLE" -b "$BASE" "(memberOf=CN=Admins,OU=Groups,DC=test,DC=org)"
expect_grep "matched values returns only the matching values" "^mail: user3.alt@test.org$" ls_ -E '!mv=(mail=*alt*)' -b "uid=user3,$PEOPLE" -s base mail
expect_nogrep "matched values drops the values that do not match" "^mail: user3@test.org$" ls_ -E '!mv=(mail=*alt*)' -b "uid=user3,$PEOPLE" -s base mail
expect_grep "root DSE lists WhoAmI" "^supportedExtension: 1.3.6.1.4.1.4203.1.11.3" ls_ -b "" -s base supportedExtension
expect_grep "cn=Subschema holds attribute types" "^attributeTypes: ( 2.5.4.3 NAME ( 'cn' 'commonName' )" ls_ -b cn=Subschema -s base attributeTypes
expect_grep "cn=Subschema holds matching rules" "^matchingRules: ( 2.5.13.2 NAME 'caseIgnoreMatch' SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )$" ls_ -b cn=Subschema -s base matchingRules
expect_grep "cn=Subschema holds LDAP syntaxes" "^ldapSyntaxes: ( 1.3.6.1.4.1.1466.115.121.1.27 DESC 'INTEGER' )$" ls_ -b cn=Subschema -s base +
expect_grep "cn=Subschema holds object classes" "^objectClasses: ( 2.16.840.1.113730.3.2.2 NAME 'inetOrgPerson'" ls_ -b cn=subschema -s base +
expect_grep "entryDN by name" "^entryDN: uid=user3,$PEOPLE" ls_ -b "uid=user3,$PEOPLE" -s base entryDN
expect_grep "entryUUID is an RFC 9562 version 7 UUID" "^entryUUID: [0-9a-f]\{8\}-[0-9a-f]\{4\}-7[0-9a-f]\{3\}-[89ab][0-9a-f]\{3\}-[0-9a-f]\{12\}$" ls_ -b "uid=user3,$PEOPLE" -s base +
expect_grep "hasSubordinates of a parent" "^hasSubordinates: TRUE" ls_ -b "$PEOPLE" -s base hasSubordinates
expect_grep "structuralObjectClass" "^structuralObjectClass: inetOrgPerson" ls_ -b "uid=user3,$PEOPLE" -s base +
expect_grep "createTimestamp is the import's time" "^createTimestamp: 20[0-9]\{12\}Z$" ls_ -b "uid=user3,$PEOPLE" -s base createTimestamp
expect_grep "creatorsName is the rootdn the import ran with" "^creatorsName: cn=admin,$BASE$" ls_ -b "uid=user3,$PEOPLE" -s base +
expect_nogrep "operational attributes not returned for *" "^entryUUID" ls_ -b "uid=user3,$PEOPLE" -s base
expect_grep "attribute alias in the request (commonName)" "^cn: User Three" ls_ -b "uid=user3,$PEOPLE" -s base commonName
expect_dns "attribute alias in a filter (surname)" "uid=user3,$PEOPLE" -b "$BASE" "(surname=three)"
expect_dns "attribute OID in a filter (2.5.4.4)" "uid=user3,$PEOPLE" -b "$BASE" "(2.5.4.4=three)"
expect_dns "extensible match caseExactMatch" "uid=user3,$PEOPLE" -b "$BASE" "(cn:caseExactMatch:=User Three)"
expect_count "extensible match caseExactMatch sees case" 0 -b "$BASE" "(cn:caseExactMatch:=user three)"
expect_count "extensible match with :dn:" "$(grep -ciE '^dn: .*ou=deep,ou=people,dc=test,dc=org$' "$LDIF")" -b "$BASE" "(ou:dn:=deep)"
expect_count "undefined attribute: NOT stays undefined" 0 -b "$BASE" "(!(nosuchattr=x))"
expect_count "userPassword matches as absent for anonymous" 0 -b "$BASE" "(userPassword=*)"
expect_count "userPassword presence for the rootdn" 2 -D "cn=admin,$BASE" -w root-secret -b "$BASE" "(userPassword=*)"

# --- compare, WhoAmI, controls ---------------------------------------------------------
cmp_() { timeout 10 ldapcompare -x -H "$URI" "$@"; }
expect_rc "compare true" 6 cmp_ "uid=user3,$PEOPLE" "cn:user three"
expect_rc "compare false" 5 cmp_ "uid=user3,$PEOPLE" "cn:nobody"
expect_rc "compare of an absent attribute" 16 cmp_ "uid=user3,$PEOPLE" "title:x"
expect_rc "compare on a missing entry" 32 cmp_ "uid=nobody,$PEOPLE" "cn:x"
expect_rc "compare on DN-valued member" 6 cmp_ "cn=admins,ou=groups,$BASE" "member:UID=User0,OU=People,DC=test,DC=org"
expect_grep "WhoAmI anonymous" "^anonymous$" timeout 10 ldapwhoami -x -H "$URI"
expect_grep "WhoAmI bound" "^dn:uid=user1,$PEOPLE$" timeout 10 ldapwhoami -x -H "$URI" -D "uid=user1,$PEOPLE" -w secret1
expect_rc "unknown critical control" 12 ls_ -b "$BASE" -e '!1.2.3.4.5' "(uid=user3)"
expect_count "unknown non-critical control is ignored" 1 -b "$BASE" -e '1.2.3.4.5' "(uid=user3)"
expect_count "paged results return every entry across pages" "$total" -b "$BASE" -E pr=3/noprompt "(objectClass=*)"
pages=$(timeout 10 ldapsearch -x -H "$URI" -b "$BASE" -E pr=5/noprompt "(objectClass=*)" 1.1 | grep -c '^result: 0 Success')
[ "$pages" = $(( (total + 4) / 5 )) ] && ok "paged results come in pages of 5 ($pages pages for $total entries)" || not_ok "paged results: $pages pages for $total entries"
sorted=$(ls_ -b "$PEOPLE" -s one -E sss=sn:caseIgnoreOrderingMatch "(uid=user*)" sn | sed -n 's/^sn: //p')
# shellcheck disable=SC2086,SC2116  # $sorted split, one sn a line; echo joins them for the message
[ "$sorted" = "$(printf '%s\n' $sorted | LC_ALL=C sort -f)" ] && [ -n "$sorted" ] && ok "server-side sort by sn" || not_ok "sort by sn: $(echo $sorted)"
rsorted=$(ls_ -b "$PEOPLE" -s one -E sss=-sn:caseIgnoreOrderingMatch "(uid=user*)" sn | sed -n 's/^sn: //p')
# shellcheck disable=SC2086,SC2116  # as above
[ "$rsorted" = "$(printf '%s\n' $sorted | tac)" ] && ok "server-side reverse sort" || not_ok "reverse sort: $(echo $rsorted)"
expect_count "sorted search that matches nothing" 0 -b "$BASE" -E sss=sn:caseIgnoreOrderingMatch "(cn=nomatch)"
order_anon=$(dns_in_order -b "$PEOPLE" -E sss=userPassword:octetStringOrderingMatch "(|(uid=user1)(uid=user2))")
order_root=$(dns_in_order -D "cn=admin,$BASE" -w root-secret -b "$PEOPLE" -E sss=userPassword:octetStringOrderingMatch "(|(uid=user1)(uid=user2))")
[ "$order_anon" = "uid=user1 uid=user2" ] && [ "$order_root" = "uid=user2 uid=user1" ] &&
	ok "sorting on userPassword tells anonymous clients nothing (import order), the rootdn sorts" ||
	not_ok "sort on userPassword: anonymous [$order_anon], rootdn [$order_root]"
expect_rc "sort on an unknown attribute: noSuchAttribute (as slapd)" 16 ls_ -b "$BASE" -E '!sss=nosuchattr' "(uid=user3)"
expect_rc "sort on an attribute whose equality rule has no ordering counterpart: inappropriateMatching (as slapd)" 18 ls_ -b "$BASE" -E 'sss=telephoneNumber' "(uid=user3)"
# cn names no ORDERING: sorted by caseIgnoreMatch's counterpart (slapd: 18; 389-ds and AD
# sort): User One, User Three, User Two.
order_cn=$(dns_in_order -b "$PEOPLE" -E '!sss=cn' "(|(uid=user1)(uid=user2)(uid=user3))")
rorder_cn=$(dns_in_order -b "$PEOPLE" -E '!sss=-cn' "(|(uid=user1)(uid=user2)(uid=user3))")
[ "$order_cn" = "uid=user1 uid=user3 uid=user2" ] && [ "$rorder_cn" = "uid=user2 uid=user3 uid=user1" ] &&
	ok "sort on cn, which has no ORDERING rule: by caseIgnoreOrderingMatch ($order_cn)" ||
	not_ok "sort on cn: [$order_cn], reversed [$rorder_cn]"
expect_rc "assertion control that holds" 0 ls_ -b "uid=user3,$PEOPLE" -s base -e '!assert=(sn=three)' 1.1
expect_rc "assertion control that fails: assertionFailed" 122 ls_ -b "uid=user3,$PEOPLE" -s base -e '!assert=(sn=four)' 1.1

# --- cn=monitor and SIGHUP ----------------------------------------------------------------
expect_rc "cn=monitor refused to anonymous clients by default" 50 ls_ -b cn=monitor
expect_grep "cn=monitor readable by the rootdn" "^opsSearch: " ls_ -D "cn=admin,$BASE" -w root-secret -b cn=monitor -s base
# (minidir's own entries are extensibleObject; slapd's tree beside them: monitor_slapd_test.sh)
expect_count "cn=monitor has the server entry, one entry per policy, the latency, the TLS and the limits entries" 8 -D "cn=admin,$BASE" -w root-secret -b cn=monitor "(objectClass=extensibleObject)"
expect_grep "cn=monitor reports the send policy" "^sendPolicy: batch" ls_ -D "cn=admin,$BASE" -w root-secret -b cn=monitor -s base
expect_rc "a missing monitor entry is noSuchObject" 32 ls_ -D "cn=admin,$BASE" -w root-secret -b cn=nothing,cn=monitor
# cn=latency: every answered operation lands in exactly one bucket.
lat=$(ls_ -D "cn=admin,$BASE" -w root-secret -b cn=latency,cn=monitor -s base)
lat_ops=$(sed -n 's/^operations: //p' <<< "$lat")
lat_sum=$(sed -n 's/^latency\(Under\|Over\)[0-9]*us: //p' <<< "$lat" | awk '{ n += $1 } END { print n + 0 }')
lat_max=$(sed -n 's/^latencyMaxMicroseconds: //p' <<< "$lat")
if [ "${lat_ops:-0}" -gt 100 ] && [ "$lat_sum" = "$lat_ops" ] && [ "${lat_max:-0}" -gt 0 ]; then
	ok "cn=latency,cn=monitor: $lat_ops operations in the histogram buckets, slowest $lat_max us"
else
	not_ok "cn=latency,cn=monitor: operations '$lat_ops', bucket sum '$lat_sum', max '$lat_max'"
fi
# --- the access log --------------------------------------------------------------------------
# SIGHUP, then wait until the server logged one more reload than before.
reload_and_wait() {
	local n0
	n0=$(grep -c "SIGHUP: configuration .* reloaded" "$work/server.log")
	kill -HUP "$server_pid"
	for _ in $(seq 1 100); do
		[ "$(grep -c "SIGHUP: configuration .* reloaded" "$work/server.log")" -gt "$n0" ] && break
		sleep 0.05
	done
}
ls_ -D "cn=admin,$BASE" -w root-secret -b "$PEOPLE" "(uid=user3)" cn mail > /dev/null
timeout 10 ldapcompare -x -H "$URI" "uid=user3,$PEOPLE" "sn:three" > /dev/null
# objectClass values as the schema names them (their normal form is the OID), whether the
# client sent the name in another case, the OID or an approx item; an OID the schema does not
# know stays as it is.
ls_ -b "$PEOPLE" "(&(objectclass=INETORGPERSON)(objectClass=2.5.6.6)(objectClass~=top)(objectClass=1.2.3.4))" 1.1 > /dev/null
# An IPv6 peer: [::1]:PORT, as in a URL, so that the port is told from the address.
if [ -n "$port6" ]; then
	timeout 10 ldapsearch -x -H "ldap://[::1]:$port6" -b "$PEOPLE" -s base 1.1 > /dev/null
else
	not_ok "the server logged no ldap://[::1]:PORT/ listener: $(grep listening "$work/server.log")"
fi
alog=$work/access.log
# Lines are written within about a second (access_log.h), each worker's on its own: wait
# for each connection's last one expected (up to 10 s: a loaded sanitizer build).
wait_line() { for _ in $(seq 1 200); do grep -q -- "$1" "$alog" 2> /dev/null && return; sleep 0.05; done; }
wait_line "COMPARE dn=\"uid=user3,$PEOPLE\" attr=\"sn\""
wait_line "ACCEPT from=\[::1\]"
wait_line "SEARCH base=\"$PEOPLE\" scope=sub filter=\"(uid=user3)\""
expect_grep "access log: a connection accepted" "conn=[0-9]* fd=[0-9]* ACCEPT from=127.0.0.1:[0-9]* via=ldap$" cat "$alog"
expect_grep "access log: an IPv6 peer in brackets" "conn=[0-9]* fd=[0-9]* ACCEPT from=\[::1\]:[0-9]* via=ldap$" cat "$alog"
expect_grep "access log: objectClass values by their schema names, not OIDs" "filter=\"(&(objectClass=inetOrgPerson)(objectClass=person)(objectClass~=top)(objectClass=1.2.3.4))\"" cat "$alog"
# Every field that can hold a client's text is quoted, whatever its value (docs/access-log.md).
expect_grep "access log: a bind, with its DN and result" "op=0 msgid=1 BIND dn=\"cn=admin,$BASE\" method=\"simple\" by=\"anonymous\" result=0 entries=0 etime=0\.[0-9]\{6\}$" cat "$alog"
expect_grep "access log: a search, with base, scope, filter, attributes, identity, result and entries" "SEARCH base=\"$PEOPLE\" scope=sub filter=\"(uid=user3)\" attrs=\"cn mail\" by=\"cn=admin,$BASE\" result=0 entries=1 etime=" cat "$alog"
expect_grep "access log: a compare" "COMPARE dn=\"uid=user3,$PEOPLE\" attr=\"sn\" by=\"anonymous\" result=6 " cat "$alog"
expect_grep "access log: an Unbind, and the close with its reason" "CLOSE reason=\"client unbound\" ops=3$" cat "$alog"
expect_grep "access log: RFC 3339 timestamps with zone" "^20[0-9]\{2\}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]\{3\}[+-][0-9]\{2\}:[0-9]\{2\} conn=" cat "$alog"
ls_ -b "$BASE" "(cn=a\22quote\0anewline)" 1.1 > /dev/null
wait_line "quote"
expect_nogrep "access log: a client cannot split a line" "^newline" cat "$alog"
mv "$alog" "$alog.1"
reload_and_wait

ls_ -b "$PEOPLE" -s base 1.1 > /dev/null
wait_line "scope=base"
expect_grep "access log: SIGHUP writes to a new file after a rotation" "SEARCH base=\"$PEOPLE\" scope=base" cat "$alog"
mon_value() { ls_ -D "cn=admin,$BASE" -w root-secret -b "cn=$1,cn=monitor" -s base "$2" | sed -n "s/^$2: //p"; }
before_batch=$(mon_value msg-more connections)
cp "$work/minidir.conf" "$work/minidir.conf.orig"
# Keys a SIGHUP does not apply (memberof_nested) are each logged as needing a restart,
# whatever the key (before: only a list of 23 keys). Access rules are applied (before: kept
# without a word, anonymous still read every entry): anonymous reads nothing but the rootdn
# everything.
printf '%s\n' 'send_policy = msg-more' 'monitor_access = anonymous' 'sizelimit = 2' \
	'memberof_nested = yes' 'access = to * by users read by * none' >> "$work/minidir.conf"
reload_and_wait
expect_grep "SIGHUP logs the new send policy" "send_policy batch -> msg-more" cat "$work/server.log"
expect_grep "SIGHUP: a changed access rule is applied and said" "SIGHUP: access rules replaced (1 rules" cat "$work/server.log"
expect_rc "SIGHUP: anonymous reads nothing under the new rule (its base hidden: 32)" 32 ls_ -b "$PEOPLE" "(uid=user3)"
expect_count "SIGHUP: the rootdn still reads under the new rule" 1 -D "cn=admin,$BASE" -w root-secret -b "$PEOPLE" "(uid=user3)"
expect_grep "SIGHUP: memberof_nested is logged as needing a restart" "SIGHUP: memberof_nested changed; restart minidir" cat "$work/server.log"
expect_nogrep "SIGHUP: a key it applies is not said to need a restart" "SIGHUP: \(send_policy\|access\) changed; restart" cat "$work/server.log"
sed -i '/^access = to \* by users read by \* none$/d' "$work/minidir.conf"
reload_and_wait
expect_count "SIGHUP: the rules as before once the line is gone (the built-in ones)" 1 -b "$PEOPLE" "(uid=user3)"
expect_nogrep "SIGHUP: the restored rules hide userPassword from anonymous again" "userPassword" ls_ -b "$BASE" "(uid=user1)"
expect_count "a search after SIGHUP still works" 1 -b "$PEOPLE" -s base
after_batch=$(mon_value msg-more connections)
[ "$after_batch" -gt "$before_batch" ] && ok "connections accepted after SIGHUP use the new policy (msg-more connections $before_batch -> $after_batch)" || not_ok "msg-more connections $before_batch -> $after_batch"
expect_grep "monitor_access reloaded: anonymous may read cn=monitor" "^sendPolicy: msg-more" ls_ -b cn=monitor -s base
expect_rc "sizelimit reloaded by SIGHUP" 4 ls_ -b "$BASE" "(objectClass=*)" 1.1
"$BUILD/minidir-import" -q -f "$work/minidir.conf" "$LDIF"
kill -HUP "$server_pid"
for _ in $(seq 1 50); do grep -q "database reloaded" "$work/server.log" && break; sleep 0.05; done
expect_grep "SIGHUP picks up a re-imported database (reload_test.sh tests it in full)" "database reloaded: .*test.mdb (22 entries" cat "$work/server.log"
printf 'threads = banana\n' >> "$work/minidir.conf"
kill -HUP "$server_pid"
for _ in $(seq 1 50); do grep -q "keeping the running configuration" "$work/server.log" && break; sleep 0.05; done
expect_grep "a bad config on SIGHUP is reported and ignored" "minidir.conf:[0-9]*: threads.*keeping the running configuration" cat "$work/server.log"
expect_count "the server still serves after a bad SIGHUP" 1 -b "$PEOPLE" -s base
cp "$work/minidir.conf.orig" "$work/minidir.conf"
# Waited for: the pipeline check below counts a full answer, which sizelimit = 2 cuts short
# if the old configuration still holds when its requests arrive (seen under load in CI).
reload_and_wait

# --- protocol robustness (libldap and raw sockets) ----------------------------------
client=$BUILD/tests/integration/ldapclient
for t in "garbage" "pipeline $BASE" "padded $BASE" "unbindpipe $BASE" "stall $BASE 4" "concurrent $BASE 40" "fuzz $BASE 3000 1" "fuzz $BASE 3000 2"; do
	# shellcheck disable=SC2086  # "COMMAND ARGS...": split into $1...
	set -- $t
	cmd=$1
	shift
	out=$(timeout 60 "$client" "$cmd" 127.0.0.1 "$port" "$@" 2>&1) || out="not ok - ldapclient $cmd: $out"
	client_report "" "$out"
done
if out=$(BUILD=$BUILD tests/integration/searchrate_test.sh 127.0.0.1 "$port" 2>&1); then
	while IFS= read -r l; do case $l in "ok - "*) ok "searchrate: ${l#ok - }" ;; esac; done <<< "$out"
else
	not_ok "searchrate: $(grep -v '^ok' <<< "$out" | head -5)"
fi
expect_count "server still answers after the robustness tests" 1 -b "$PEOPLE" -s base
expect_grep "a client that never reads is closed after write_timeout" "has not read for 2 s (write_timeout); closing" cat "$work/server.log"

# --- export / re-import ----------------------------------------------------------------
"$BUILD/minidir-export" -f "$work/minidir.conf" > "$work/export1.ldif"
cp "$work/minidir.conf" "$work/copy.conf"
sed -i "s#^database = .*#database = $work/copy.mdb#" "$work/copy.conf"
if "$BUILD/minidir-import" -q -f "$work/copy.conf" "$work/export1.ldif" &&
	"$BUILD/minidir-export" -f "$work/copy.conf" > "$work/export2.ldif" &&
	cmp -s "$work/export1.ldif" "$work/export2.ldif" &&
	[ "$(grep -c '^dn:' "$work/export1.ldif")" = "$total" ]; then
	ok "export, re-import and export again give the same $total entries"
else
	not_ok "export/re-import round trip differs"
fi
# The export is slapadd's input, as slapcat's output is (before: "version: 1" after the
# comment, and slapadd stopped at line 1: "could not parse entry").
mkdir "$work/slapd-db"
printf 'include /etc/ldap/schema/%s.schema\n' core cosine inetorgperson nis > "$work/slapadd.conf"
printf 'modulepath /usr/lib/ldap\nmoduleload back_mdb\ndatabase mdb\nsuffix "%s"\ndirectory %s\n' \
	"$BASE" "$work/slapd-db" >> "$work/slapadd.conf"
if timeout 60 /usr/sbin/slapadd -f "$work/slapadd.conf" -l "$work/export1.ldif" > "$work/slapadd.out" 2>&1 &&
	[ "$(timeout 60 /usr/sbin/slapcat -f "$work/slapadd.conf" 2> /dev/null | grep -c '^dn:')" = "$total" ]; then
	ok "slapadd loads minidir-export's output: $total entries"
else
	not_ok "slapadd of the export: $(tail -2 "$work/slapadd.out")"
fi
# The export writes the operational attributes slapcat writes (structuralObjectClass,
# entryUUID, the timestamps and names), with the values the server answers; slapcat's
# output of that slapadd is the same but for the entryCSN slapadd made: an imported file
# has none (before: the export wrote entryUUID alone, slapadd made up the rest).
timeout 60 /usr/sbin/slapcat -f "$work/slapadd.conf" > "$work/slapcat.ldif" 2> /dev/null
ldif_sorted "$work/export1.ldif" > "$work/export1.sorted"
grep -v ' | entryCSN: ' <(ldif_sorted "$work/slapcat.ldif") > "$work/slapcat.sorted"
if [ "$(grep -c ' | createTimestamp: ' "$work/export1.sorted")" = "$total" ] &&
	[ "$(grep -c ' | structuralObjectClass: ' "$work/export1.sorted")" = "$total" ] &&
	cmp -s "$work/export1.sorted" "$work/slapcat.sorted"; then
	ok "export: the operational attributes slapcat writes of the same data, but entryCSN"
else
	not_ok "export and slapcat differ: $(diff "$work/export1.sorted" "$work/slapcat.sorted" | head -6 | tr '\n' ' ')"
fi
# The round trip: slapcat's output imported into a second file keeps slapcat's timestamps,
# names and entryCSN (as slapadd keeps them), so its export is slapcat's output, and the
# two minidir files answer the same searches, "+" included, but for the entryCSN only
# the second has (before: the import stamped its own time and creator).
sed -e "s#^database = .*#database = $work/back.mdb#" -e '/^listen = \[::1\]/d' \
	-e '/^access_log/d' "$work/minidir.conf" > "$work/back.conf"
if "$BUILD/minidir-import" -q -f "$work/back.conf" "$work/slapcat.ldif" 2> "$work/imp.err"; then
	if cmp -s <(ldif_sorted "$work/slapcat.ldif") <("$BUILD/minidir-export" -q -f "$work/back.conf" | ldif_sorted); then
		ok "slapcat's output imported and exported again: the same LDIF"
	else
		not_ok "slapcat -> import -> export: $(diff <(ldif_sorted "$work/slapcat.ldif") <("$BUILD/minidir-export" -q -f "$work/back.conf" | ldif_sorted) | head -6 | tr '\n' ' ')"
	fi
	"$BUILD/minidir" -f "$work/back.conf" 2> "$work/back.log" &
	back_pid=$!
	back_port=$(wait_port "$work/back.log")
	answers() { # URI FILTER: every entry's attributes and "+", as "DN | line", sorted
		timeout 20 ldapsearch -x -LLL -o ldif-wrap=no -H "$1" -D "cn=admin,$BASE" -w root-secret \
			-b "$BASE" "$2" '*' + 2> /dev/null | ldif_sorted | grep -v ' | entryCSN: '
	}
	same=0
	for f in "(objectClass=*)" "(uid=user1*)" "(memberOf=*)" "(member=*)" "(createTimestamp>=20000101000000Z)"; do
		a=$(answers "$URI" "$f")
		b=$(answers "ldap://127.0.0.1:$back_port" "$f")
		if [ -n "$a" ] && [ "$a" = "$b" ]; then
			same=$((same + 1))
		else
			not_ok "$f: the two files answer differently: $(diff <(echo "$a") <(echo "$b") | head -6 | tr '\n' ' ')"
		fi
	done
	[ "$same" = 5 ] && ok "export -> slapadd -> slapcat -> import: both files answer 5 searches with '*' and '+' the same (entryCSN aside)"
	stop_checked "$back_pid" "$work/back.log" || not_ok "round trip server: $stop_why"
else
	not_ok "import of slapcat's output: $(cat "$work/imp.err")"
fi

# --- a failed import leaves the served database untouched -------------------------------
before=$(count -b "$BASE")
if "$BUILD/minidir-import" -f "$work/minidir.conf" tests/data/bad/missing-parent.ldif 2> "$work/imp.err"; then
	not_ok "bad LDIF was accepted"
else
	expect_grep "bad LDIF reported as file:line" "missing-parent.ldif:9:" cat "$work/imp.err"
fi
"$BUILD/minidir" -f "$work/minidir.conf" -t > /dev/null 2>&1 && ok "database still opens after the failed import" || not_ok "database damaged by a failed import"
[ "$(count -b "$BASE")" = "$before" ] && ok "server still serves $before entries" || not_ok "entry count changed"
! compgen -G "$work/*.tmp.*" > /dev/null && ok "no temporary files left behind" || not_ok "temporary import files left: $(ls "$work")"

# --- "type:< URL" values: refused unless --allow-url-values --------------------------------
# libldap (and slapadd) read any file such a value names: /etc/shadow into an entry anyone
# may read, or /dev/zero until memory runs out.
sed "s#^database = .*#database = $work/url.mdb#" "$work/minidir.conf" > "$work/url.conf"
printf 'read from a file' > "$work/value.txt"
printf 'dn: %s\nobjectClass: top\nobjectClass: dcObject\nobjectClass: organization\no: T\ndc: test\ndescription: before\ndescription:< file://%s\n' \
	"$BASE" "$work/value.txt" > "$work/url.ldif"
if "$BUILD/minidir-import" -q -f "$work/url.conf" "$work/url.ldif" 2> "$work/imp.err"; then
	not_ok "a \"description:<\" URL value imported by default"
else
	expect_grep "a URL value is refused at its file:line by default" "url.ldif:8: \"description:<\" takes its value from a URL (file://$work/value.txt): refused (minidir-import reads files only with --allow-url-values)" cat "$work/imp.err"
	[ -e "$work/url.mdb" ] && not_ok "a refused URL import left $work/url.mdb" || ok "a refused URL import makes no database"
fi
if "$BUILD/minidir-import" -q --allow-url-values -f "$work/url.conf" "$work/url.ldif" 2> "$work/imp.err"; then
	expect_grep "--allow-url-values reads the file into the value" "^description: read from a file$" "$BUILD/minidir-export" -f "$work/url.conf"
else
	not_ok "--allow-url-values: $(cat "$work/imp.err")"
fi
sed -i "s#file://$work/value.txt#file:///dev/zero#" "$work/url.ldif"
if timeout 20 "$BUILD/minidir-import" -q -U -f "$work/url.conf" "$work/url.ldif" 2> "$work/imp.err"; then
	not_ok "-U imported file:///dev/zero"
else
	expect_grep "-U refuses file:///dev/zero at once (not a regular file)" "url.ldif:8: reading the value of \"description:<\": /dev/zero: not a regular file" cat "$work/imp.err"
fi

# --- a full disk is reported as what it is ------------------------------------------
# A 512 KiB tmpfs in a private mount namespace (unshare); where none can be made,
# a file size limit (ulimit -f) stands in: "File too large" instead of ENOSPC.
bench/gen-ldif.sh 3000 "$BASE" 400 > "$work/big.ldif"
mkdir -p "$work/small"
sed "s#^database = .*#database = $work/small/full.mdb#" "$work/minidir.conf" > "$work/full.conf"
# shellcheck disable=SC2016  # the script sh -c runs: its own $1 and $2
full_disk='mount -t tmpfs -o size=512k tmpfs "$1/small" &&
	"$2/minidir-import" -q -f "$1/full.conf" tests/data/test.ldif && cp "$1/small/full.mdb" "$1/full.before" &&
	{ "$2/minidir-import" -f "$1/full.conf" "$1/big.ldif"; echo "status $?";
	cmp -s "$1/small/full.mdb" "$1/full.before" && echo "database unchanged"; echo "left:" $(ls "$1/small"); }'
if out=$(unshare -rm sh -c "$full_disk" sh "$work" "$BUILD" 2>&1) || out=$(unshare -m sh -c "$full_disk" sh "$work" "$BUILD" 2>&1); then
	why="No space left on device"
else
	# shellcheck disable=SC2046  # the names left, on one line
	out=$( (ulimit -f 256; "$BUILD/minidir-import" -f "$work/full.conf" "$work/big.ldif" 2>&1; echo "status $?"; echo "database unchanged"; echo "left:" $(ls "$work/small")) )
	why="File too large"
fi
# import_refused OUT WHY: OUT (a failed import's output, its "status N" and "left: NAMES"
# lines) reports the write of the temporary file failing with WHY, exit status 1, and no
# temporary file left behind.
import_refused() {
	grep -q "big.ldif:[0-9]*: writing $work/small/full.mdb.tmp.[0-9]*: $2" <<< "$1" &&
		grep -q "^status 1$" <<< "$1" && ! grep -q "\.tmp\." <<< "$(grep '^left:' <<< "$1")"
}
if import_refused "$out" "$why" && grep -q "^database unchanged$" <<< "$out"; then
	ok "a write error is reported as what it is ($why, with the database path); exit 1, database unchanged, no temporary file"
else
	not_ok "write error during import: $out"
fi

# The same on ext4, whose largest file is 16 TiB: the error is learnt by allocating the
# page the store missed, at its offset in the file (the importer once took the offset from
# address 0, past ext4's limit, and said "File too large"). A 3 MiB image on a loop
# device in a private mount namespace (needs root and a loop device).
# shellcheck disable=SC2016  # the script sh -c runs: its own $1 and $2
ext4_full='mount -o loop "$1/ext4.img" "$1/small" &&
	{ "$2/minidir-import" -f "$1/full.conf" "$1/big.ldif"; echo "status $?"; echo "left:" $(ls "$1/small"); }'
out=
if truncate -s 3M "$work/ext4.img" && mkfs.ext4 -q -F "$work/ext4.img" > /dev/null 2>&1 &&
	out=$(unshare -m sh -c "$ext4_full" sh "$work" "$BUILD" 2>&1); then
	if import_refused "$out" "No space left on device"; then
		ok "a full ext4 file system is reported as No space left on device; exit 1, no temporary file"
	else
		not_ok "a full ext4 file system: $(grep -v progress <<< "$out" | tail -3)"
	fi
else
	skip "no loop mount of an ext4 image here: $(tail -1 <<< "${out:-mkfs.ext4 failed}")" "a full ext4 file system"
fi
rm -f "$work/ext4.img"

# --- configuration errors --------------------------------------------------------------
printf 'database = x\nsuffix = dc=a\nthreads = many\n' > "$work/bad.conf"
expect_grep "bad config value is reported with file:line" "bad.conf:3: threads" "$BUILD/minidir" -f "$work/bad.conf"
printf 'database = x\nsuffix = dc=a\nfrobnicate = 1\n' > "$work/bad.conf"
expect_grep "unknown config key is reported with file:line" "bad.conf:3: unknown key" "$BUILD/minidir" -f "$work/bad.conf"

# --- server limits and allow_anonymous (a second server) ---------------------------------
sed -e 's/^listen = 127.*/listen = 127.0.0.1:0/' -e '/^listen = \[::1\]/d' "$work/minidir.conf" > "$work/limits.conf"
printf 'sizelimit = 3\nallow_anonymous = no\nidle_timeout = 1\n' >> "$work/limits.conf"
"$BUILD/minidir" -f "$work/limits.conf" 2> "$work/limits.log" &
limits_pid=$!
lport=$(wait_port "$work/limits.log")
lim_() { timeout 10 ldapsearch -x -LLL -H "ldap://127.0.0.1:$lport" "$@"; }
expect_rc "allow_anonymous = no refuses anonymous searches" 50 lim_ -b "$BASE" "(uid=user3)"
expect_rc "server sizelimit applies to users" 4 lim_ -D "uid=user1,$PEOPLE" -w secret1 -b "$BASE" "(objectClass=*)" 1.1
[ "$(lim_ -D "uid=user1,$PEOPLE" -w secret1 -b "$BASE" "(objectClass=*)" 1.1 2> /dev/null | grep -c '^dn:')" = 3 ] && ok "server sizelimit: 3 entries sent before sizeLimitExceeded" || not_ok "server sizelimit: wrong number of entries"
expect_rc "a client may ask for less than the server limit" 4 lim_ -D "uid=user1,$PEOPLE" -w secret1 -z 2 -b "$BASE" "(objectClass=*)" 1.1
client_report "" "$(timeout 30 "$BUILD/tests/integration/ldapclient" pagedlimit 127.0.0.1 "$lport" "$BASE" "uid=user1,$PEOPLE" secret1 3 2>&1)"
expect_rc "the rootdn is not limited" 0 lim_ -D "cn=admin,$BASE" -w root-secret -b "$BASE" "(objectClass=*)" 1.1
# idle_timeout = 1: a connection that sends nothing is closed after 1 to 3 s (more than
# one whole second of the clock, then the once-a-second sweep).
exec 3<> "/dev/tcp/127.0.0.1/$lport"
start_idle=$(date +%s)
if read -r -t 5 <&3; then idle_rc=0; else idle_rc=$?; fi
idle_for=$(($(date +%s) - start_idle))
exec 3<&-
[ "$idle_rc" = 1 ] && [ "$idle_for" -le 4 ] && ok "idle_timeout closes a silent connection (after ${idle_for} s)" ||
	not_ok "idle_timeout: read status $idle_rc after ${idle_for} s (1 = closed, >128 = still open)"
if stop_checked "$limits_pid" "$work/limits.log"; then
	ok "second server stopped cleanly (exit 0, no sanitizer report)"
else
	not_ok "second server: $stop_why"
fi

# --- an RDN value the entry lacks is added at import, as slapadd adds it (a third server) --
sed -e "s#^database = .*#database = $work/rdn.mdb#" "$work/minidir.conf" > "$work/rdn.conf"
printf 'dn: %s\nobjectClass: top\nobjectClass: dcObject\nobjectClass: organization\no: T\ndc: test\n\ndn: ou=x,%s\nobjectClass: organizationalUnit\nou: y\n' \
	"$BASE" "$BASE" > "$work/rdn.ldif"
if "$BUILD/minidir-import" -q -f "$work/rdn.conf" "$work/rdn.ldif" 2> "$work/imp.err"; then
	"$BUILD/minidir" -f "$work/rdn.conf" 2> "$work/rdn.log" &
	rdn_pid=$!
	rport=$(wait_port "$work/rdn.log")
	rdn_() { timeout 10 ldapsearch -x -LLL -o ldif-wrap=no -H "ldap://127.0.0.1:$rport" -b "$BASE" "$@"; }
	[ "$(rdn_ "(ou=x)" 1.1 2> /dev/null | grep -ci "^dn: ou=x,$BASE")" = 1 ] &&
		[ "$(rdn_ "(ou=x)" ou 2> /dev/null | grep -c '^ou: [xy]$')" = 2 ] &&
		ok "dn: ou=x with only ou: y is imported with ou: x too: (ou=x) finds it" ||
		not_ok "(ou=x) after importing dn: ou=x with only ou: y: $(rdn_ "(ou=x)" ou 2>&1 | tr '\n' ' ')"
	if stop_checked "$rdn_pid" "$work/rdn.log"; then
		ok "third server stopped cleanly (exit 0, no sanitizer report)"
	else
		not_ok "third server: $stop_why"
	fi
else
	not_ok "import of dn: ou=x with only ou: y: $(cat "$work/imp.err")"
fi

# --- clean stop -----------------------------------------------------------------------
kill -TERM "$server_pid"
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$server_pid" 2>/dev/null; then
	not_ok "SIGTERM did not stop the server within 5 s"
else
	wait "$server_pid"
	rc=$?
	[ "$rc" = 0 ] && ok "SIGTERM stops the server cleanly (exit 0)" || not_ok "server exit status $rc after SIGTERM"
	grep -q "stopped" "$work/server.log" && ok "server logged its stop" || not_ok "no stop message in the log"
fi
server_pid=
if grep -qE "ERROR: (Address|Undefined|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:" "$work/server.log"; then
	not_ok "sanitizer report in the server log:"
	grep -A30 -E "Sanitizer|runtime error" "$work/server.log" | head -40
fi

summary core
