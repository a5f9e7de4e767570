#!/usr/bin/env bash
# Access rules (the access key) with real clients: the start-up errors an admin sees
# for a rule the schema rejects (file:line, with -t and at start), and rules on the
# example directory read with ldapsearch and ldapcompare: a group rule, a self rule,
# a rule that hides whole entries, and a hidden subtree (ou=contractors) that neither a
# matchedDN nor numSubordinates tells of. slapd's semantics are compared case by case in
# tests/conformance (the acl-* cases). Servers: minidir on 127.0.0.1, stopped by PID.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
export LDAPNOINIT=1

use_work_dir access
EX=dc=example,dc=com
P=ou=people,$EX

write_conf() {
	{
		echo "listen = 127.0.0.1:0"
		echo "database = $work/db.mdb"
		echo "suffix = $EX"
		echo "rootdn = cn=admin,$EX"
		echo "rootpw = root-secret"
		for l in "$@"; do echo "$l"; done
		echo "schema_dir = $SCHEMA_DIR" # last: the checks name the rules' line numbers
	} > "$work/minidir.conf"
}

write_conf
if ! "$BUILD/minidir-import" -q -f "$work/minidir.conf" examples/example.ldif > "$work/import.log" 2>&1; then
	not_ok "import: $(cat "$work/import.log")"
	echo "# access: $pass passed, $fail failed"
	exit 1
fi

# rejected WANT LINES...: minidir -t and minidir both refuse the config, naming
# minidir.conf:LINE (the line of the rule's "to", counted in the file) and WANT.
rejected() {
	local want=$1 line=$2
	shift 2
	write_conf "$@"
	local out rc=0
	out=$("$BUILD/minidir" -t -f "$work/minidir.conf" 2>&1) || rc=$?
	if [ "$rc" != 0 ] && grep -qF "minidir.conf:$line: access: $want" <<< "$out"; then
		ok "-t refuses \"$*\": $(grep -F "access:" <<< "$out" | head -1 | sed 's/^.*minidir.conf/minidir.conf/')"
	else
		not_ok "-t on \"$*\": exit $rc, wanted minidir.conf:$line: access: $want, got: $out"
	fi
	rc=0
	out=$(timeout 10 "$BUILD/minidir" -f "$work/minidir.conf" 2>&1) || rc=$?
	if [ "$rc" = 1 ] && grep -qF "minidir.conf:$line: access: $want" <<< "$out"; then
		ok "start refused with the same line (exit 1)"
	else
		not_ok "start with \"$*\": exit $rc: $out"
	fi
}

# Errors only the schema can find (the config file is read before it is loaded).
rejected "attrs=: unknown attribute" 6 "access = to attrs=telephoneNumbr by * read"
rejected "attrs=: unknown object class" 7 "# the next rule spans two lines" \
	"access = to attrs=@noSuchClass" "    by * read"
rejected "group/CLASS: unknown object class" 7 "access = to * by * read" \
	"access = to attrs=cn by group/groupOfPeople=cn=admins,ou=groups,$EX read"
rejected "a DN the schema rejects" 6 "access = to dn.subtree=\"colour=blue,$EX\" by * read"
# A syntax error is the config reader's: the same file:line form.
write_conf "access = to * by * read" "    by everyone read"
out=$("$BUILD/minidir" -t -f "$work/minidir.conf" 2>&1)
if grep -qF "minidir.conf:7: access: \"everyone\": expected *, anonymous" <<< "$out"; then
	ok "a bad continuation line is named by its own line: ${out##*minidir.conf}"
else
	not_ok "bad continuation line: $out"
fi

# Starts minidir on $work/minidir.conf; sets pid, port and URI.
start_server() {
	start_minidir "$work/minidir.conf" "$work/minidir.log"
	[ -n "$port" ] || not_ok "server did not start: $(cat "$work/minidir.log")"
	URI=ldap://127.0.0.1:$port
}

# The example of docs/access-rules.md: telephone numbers for the admins group,
# userPassword for its owner, and ou=groups only for users.
attr_rules=(
	"access = to attrs=userPassword"
	"    by self read"
	"    by anonymous auth"
	"    by * none"
	"access = to attrs=telephoneNumber,mobile"
	"    by group=\"cn=admins,ou=groups,$EX\" read"
	"    by self read"
	"    by * none"
)
write_conf "${attr_rules[@]}" \
	"access = to dn.subtree=\"ou=groups,$EX\"" \
	"    by users read" \
	"    by * none" \
	"access = to * by * read"
start_server

# search WHO... -- ARGS: ldapsearch -LLL as WHO (anonymous, or a uid with its password).
search() {
	local who=$1
	shift
	case $who in
	anonymous) ldapsearch -x -LLL -o ldif-wrap=no -H "$URI" "$@" ;;
	*) ldapsearch -x -LLL -o ldif-wrap=no -H "$URI" -D "uid=$who,$P" -w "$who-secret" "$@" ;;
	esac
}

# expect_lines NAME WANT PATTERN WHO ARGS...: lines matching PATTERN in the output,
# and ldapsearch's exit status 0.
expect_lines() {
	local name=$1 want=$2 pattern=$3 out rc=0
	shift 3
	out=$(search "$@" 2>&1) || rc=$?
	local got
	got=$(grep -c "$pattern" <<< "$out")
	if [ "$rc" = 0 ] && [ "$got" = "$want" ]; then
		ok "$name ($got)"
	else
		not_ok "$name: exit $rc, $got lines /$pattern/, wanted $want: $(head -5 <<< "$out")"
	fi
}

people=$(search anonymous -b "$P" -s one "(objectClass=person)" 1.1 | grep -c "^dn:")
expect_lines "admins (bob) read every telephone number" "$people" "^telephoneNumber:" \
	bob -b "$P" -s one "(objectClass=person)" telephoneNumber
expect_lines "others (alice) read only their own" 1 "^telephoneNumber:" \
	alice -b "$P" -s one "(objectClass=person)" telephoneNumber
expect_lines "anonymous reads none" 0 "^telephoneNumber:" \
	anonymous -b "$P" -s one "(objectClass=person)" telephoneNumber
expect_lines "anonymous cannot filter on one: (telephoneNumber=*) is Undefined" 0 "^dn:" \
	anonymous -b "$P" "(telephoneNumber=*)" 1.1
expect_lines "an admin can filter on it" "$people" "^dn:" bob -b "$P" -s one "(telephoneNumber=*)" 1.1
expect_lines "anonymous does not see ou=groups at all" 0 "^dn:" \
	anonymous -b "$EX" "(objectClass=groupOfNames)" 1.1
groups=$(search alice -b "ou=groups,$EX" "(objectClass=groupOfNames)" 1.1 | grep -c "^dn:")
if [ "$groups" -ge 2 ]; then ok "users see the groups ($groups)"; else not_ok "users see $groups groups"; fi
rc=0
search anonymous -b "ou=groups,$EX" -s base "(objectClass=*)" > /dev/null 2>&1 || rc=$?
if [ "$rc" = 32 ]; then ok "anonymous base search of ou=groups: noSuchObject (32)"; else not_ok "ou=groups base: exit $rc"; fi
rc=0
ldapcompare -x -H "$URI" -D "uid=alice,$P" -w alice-secret "uid=bob,$P" "telephoneNumber:+1 555 0102" > /dev/null 2>&1 || rc=$?
if [ "$rc" = 50 ]; then ok "compare of another's telephoneNumber: insufficientAccess (50)"; else not_ok "compare: exit $rc"; fi
rc=0
ldapcompare -x -H "$URI" -D "uid=bob,$P" -w bob-secret "uid=alice,$P" "telephoneNumber:+1 555 0101" > /dev/null 2>&1 || rc=$?
if [ "$rc" = 6 ]; then ok "an admin's compare: compareTrue (6)"; else not_ok "admin compare: exit $rc"; fi
expect_lines "the rootdn reads everything" "$people" "^telephoneNumber:" \
	anonymous -D "cn=admin,$EX" -w root-secret -b "$P" -s one "(objectClass=person)" telephoneNumber
# Every attribute asked (no list: the stored runs between hidden attributes, or the entry as
# stored when it holds none): what anonymous gets is what the rootdn gets less the hidden
# attributes, line for line; with typesOnly too.
for types in "" -A; do
	anon=$(search anonymous -b "$P" -s one $types "(objectClass=person)" 2>&1)
	root=$(search anonymous -D "cn=admin,$EX" -w root-secret -b "$P" -s one $types "(objectClass=person)" 2>&1 |
		grep -v -e '^telephoneNumber:' -e '^mobile:' -e '^userPassword:')
	if [ -n "$anon" ] && [ "$anon" = "$root" ] && [ "$(grep -c '^dn:' <<< "$anon")" = "$people" ] &&
		[ "$(grep -c '^telephoneNumber:' <<< "$root")" = 0 ]; then
		ok "every attribute${types:+ (typesOnly)}, anonymous: the rootdn's entries less telephoneNumber, mobile and userPassword"
	else
		not_ok "every attribute${types:+ (typesOnly)}, anonymous: $(diff <(echo "$anon") <(echo "$root") | head -5)"
	fi
done
expect_lines "every attribute, alice: her own telephone number only" 1 "^telephoneNumber:" \
	alice -b "$P" -s one "(objectClass=person)"

stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"

# A hidden subtree (issue 23): ou=contractors for the admins group only. A client may not
# tell an entry it may not know of (disclose) from a missing one: noSuchObject with the
# matchedDN of the nearest entry above it may know of, for the entry and anything below it
# (slapd names ou=contractors below it for anonymous, or none, which tells that it exists);
# numSubordinates and hasSubordinates count only the children the client may see.
C=ou=contractors,$P
write_conf "access = to dn.subtree=\"$C\"" \
	"    by group=\"cn=admins,ou=groups,$EX\" read" \
	"    by * none" \
	"${attr_rules[@]:0:4}" \
	"access = to * by * read"
start_server
# matched NAME WANT-RC WANT-MATCHED TOOL ARGS...: the result code and the matchedDN
# ldapsearch -LLL or ldapcompare prints ("Matched DN: X"; "" for none).
matched() {
	local name=$1 want_rc=$2 want=$3 tool=$4 out rc=0
	shift 4
	out=$("$tool" -x -H "$URI" "$@" 2>&1) || rc=$?
	local got
	got=$(sed -n 's/^Matched DN: //p' <<< "$out" | head -1)
	if [ "$rc" = "$want_rc" ] && [ "$got" = "$want" ]; then
		ok "$name: $rc, matchedDN \"$got\""
	else
		not_ok "$name: exit $rc, matchedDN \"$got\"; wanted $want_rc, \"$want\": $(head -3 <<< "$out")"
	fi
}
bob=(-D "uid=bob,$P" -w bob-secret)
matched "a missing entry under ou=people (anonymous)" 32 "$P" ldapsearch -LLL -b "uid=nobody,$P" -s base 1.1
matched "a missing entry under the hidden ou=contractors: the same answer" 32 "$P" \
	ldapsearch -LLL -b "uid=nobody,$C" -s base 1.1
matched "an entry below a hidden one that exists: the same" 32 "$P" \
	ldapsearch -LLL -b "uid=x,uid=kmorgan,$C" -s base 1.1
matched "the hidden ou=contractors itself: the same" 32 "$P" ldapsearch -LLL -b "$C" -s base 1.1
matched "a hidden contractor: the same" 32 "$P" ldapsearch -LLL -b "uid=kmorgan,$C" -s base 1.1
matched "a compare under the hidden subtree: the same" 32 "$P" ldapcompare "uid=nobody,$C" "uid:nobody"
matched "a compare of a hidden entry: the same" 32 "$P" ldapcompare "uid=kmorgan,$C" "uid:kmorgan"
matched "an admin (bob) is told ou=contractors" 32 "$C" ldapsearch -LLL "${bob[@]}" -b "uid=nobody,$C" -s base 1.1
matched "and reads it" 0 "" ldapsearch -LLL "${bob[@]}" -b "$C" -s base 1.1
seen=$(search anonymous -b "$P" -s one "(objectClass=*)" 1.1 | grep -c "^dn:")
all=$(search bob -b "$P" -s one "(objectClass=*)" 1.1 | grep -c "^dn:")
if [ "$all" = $((seen + 1)) ]; then ok "a one-level search of ou=people: $seen entries for anonymous, $all for bob"; else not_ok "one-level: $seen and $all"; fi
# The value, as one line of the one entry found.
expect_lines "numSubordinates of ou=people for anonymous: the children it sees, $seen" 1 \
	"^numSubordinates: $seen\$" anonymous -b "$P" -s base "(objectClass=*)" numSubordinates
expect_lines "for an admin: every child, $all" 1 "^numSubordinates: $all\$" \
	bob -b "$P" -s base "(objectClass=*)" numSubordinates
expect_lines "for the rootdn: every child, $all" 1 "^numSubordinates: $all\$" \
	anonymous -D "cn=admin,$EX" -w root-secret -b "$P" -s base "(objectClass=*)" numSubordinates
expect_lines "ou=contractors has children for bob" 1 "^hasSubordinates: TRUE\$" \
	bob -b "$C" -s base "(objectClass=*)" hasSubordinates
expect_lines "a filter on numSubordinates counts the same for anonymous" 1 "^dn:" \
	anonymous -b "$EX" -s one "(numSubordinates=$seen)" 1.1
stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"

# Rules with no dn= and no filter=: an operation decides access once for every entry but
# the client's own (server/access.c's cache); the answers must be the same.
write_conf "${attr_rules[@]}" \
	"access = to * by * read"
start_server
expect_lines "rules without dn=: admins (bob) read every telephone number" "$people" \
	"^telephoneNumber:" bob -b "$P" -s one "(objectClass=person)" telephoneNumber
expect_lines "rules without dn=: alice reads only her own, in the same search" 1 \
	"^telephoneNumber:" alice -b "$P" -s one "(objectClass=person)" telephoneNumber
expect_lines "rules without dn=: alice reads only her own userPassword" 1 "^userPassword:" \
	alice -b "$P" -s one "(objectClass=person)" userPassword
expect_lines "rules without dn=: her own is the one" 1 "^telephoneNumber:" \
	alice -b "$P" -s one "(uid=alice)" telephoneNumber
expect_lines "rules without dn=: anonymous reads none" 0 "^telephoneNumber:" \
	anonymous -b "$P" -s one "(objectClass=person)" telephoneNumber
expect_lines "rules without dn=: every entry is there for anonymous" "$people" "^dn:" \
	anonymous -b "$P" -s one "(objectClass=person)" cn
stop_checked "$pid" "$work/minidir.log" && ok "server stopped cleanly" || not_ok "$stop_why"
echo "# access: $pass passed, $fail failed"
[ "$fail" = 0 ]
