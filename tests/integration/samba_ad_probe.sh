#!/bin/bash
# The Samba AD DC of samba_ad.sh, probed with ldapsearch for the facts issue 50 builds on
# (not in the Makefile's test lists: a look at the peer, with its times, not a test of
# minidir): the root DSE lists DirSync (1.2.840.113556.1.4.841) and highestCommittedUSN;
# simple binds need TLS; a DirSync search as Administrator over ldaps returns entries
# with objectGUID and a cookie; from that cookie, a user added with samba-tool comes alone,
# then a modify as its changed attribute alone, then a delete as a tombstone. Prints the
# provision, start and stop times, the DC's memory and disk use as "# " lines.
# Run from the tree's root, as root: tests/integration/samba_ad_probe.sh (KEEP=1 keeps
# the directory).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/integration/samba_ad.sh
use_work_dir samba_ad_probe

if ! ad_usable; then
	skip "$ad_why" "Samba AD DC"
	finish
fi
ms() { echo $(($(date +%s%N) / 1000000)); }

t=$(ms)
ad_provision || finish
echo "# provision: $(($(ms) - t)) ms"
t=$(ms)
ad_start || finish
echo "# start to root DSE answering (first start, TLS key made): $(($(ms) - t)) ms"
echo "# ports: ldap $ad_uri -> 389, ldaps $ad_ldaps -> 636 in the DC's namespace"

rootdse=$(timeout 10 ldapsearch -x -H "$ad_uri" -LLL -o ldif-wrap=no -b "" -s base \
	supportedControl highestCommittedUSN 2>&1)
grep -qx 'supportedControl: 1.2.840.113556.1.4.841' <<< "$rootdse" &&
	ok "root DSE (anonymous) lists DirSync 1.2.840.113556.1.4.841" ||
	not_ok "root DSE has no DirSync: $rootdse"
usn=$(sed -n 's/^highestCommittedUSN: //p' <<< "$rootdse")
[ -n "$usn" ] && ok "root DSE has highestCommittedUSN ($usn)" || not_ok "no highestCommittedUSN"

# simple binds: refused in clear (even on ldapi), accepted over ldaps and StartTLS
out=$(timeout 10 ldapsearch -x -H "$ad_uri" -D "$AD_ADMIN" -w "$AD_PW" -LLL -b "$AD_BASE" -s base 1.1 2>&1)
grep -q "Strong(er) authentication required (8)" <<< "$out" &&
	ok "simple bind over plain ldap: strongerAuthRequired (8)" || not_ok "plain simple bind: $out"
out=$(ad_ldap ldapsearch -x -H "ldapi://${work//\//%2F}%2Fad%2Fprivate%2Fldapi" -D "$AD_ADMIN" -w "$AD_PW" -LLL -b "$AD_BASE" -s base 1.1 2>&1)
grep -q "Strong(er) authentication required (8)" <<< "$out" &&
	ok "simple bind over ldapi ($work/ad/private/ldapi): strongerAuthRequired (8) too" || not_ok "ldapi simple bind: $out"
out=$(ad_search -LLL -b "$AD_BASE" -s base 1.1 2>&1)
[ "$out" = "dn: $AD_BASE" ] && ok "simple bind as $AD_ADMIN over ldaps (LDAPTLS_REQCERT=never)" ||
	not_ok "ldaps bind: $out"
out=$(ad_ldap ldapsearch -ZZ -x -H "$ad_uri" -D "$AD_ADMIN_DN" -w "$AD_PW" -LLL -b "$AD_BASE" -s base 1.1 2>&1)
[ "$out" = "dn: $AD_BASE" ] && ok "simple bind by DN over StartTLS" || not_ok "StartTLS bind: $out"
out=$(timeout 10 ldapsearch -x -H "$ad_uri" -LLL -b "$AD_BASE" -s base 1.1 2>&1)
grep -q "Operation unavailable without authentication" <<< "$out" &&
	ok "anonymous search beyond the root DSE refused" || not_ok "anonymous search: $out"

# a full DirSync
t=$(ms)
full=$(ad_dirsync "" '(objectClass=*)' 2>&1)
n=$(grep -c '^dn:' <<< "$full")
g=$(grep -c '^objectGUID:: ' <<< "$full")
echo "# full DirSync of the new domain: $n entries in $(($(ms) - t)) ms"
cookie=$(ad_cookie <<< "$full")
[ "$n" -gt 100 ] && [ "$g" = "$n" ] && [ -n "$cookie" ] &&
	ok "full DirSync over ldaps: $n entries, each with objectGUID, and a cookie" ||
	not_ok "full DirSync: $n entries, $g objectGUIDs, cookie '$cookie': $(tail -5 <<< "$full")"
grep -q '^uSNChanged:' <<< "$full" && not_ok "DirSync sent uSNChanged" ||
	ok "DirSync sends no uSNChanged (not a replicated attribute)"

# a user added with samba-tool (on sam.ldb, the DC running): the next DirSync has it alone
t=$(ms)
out=$(ad_tool user add alice 'Alice.Pass1' --given-name=Alice --surname=Liddell --use-username-as-cn 2>&1)
echo "# samba-tool user add: $(($(ms) - t)) ms"
grep -q "added successfully" <<< "$out" && ok "samba-tool user add alice" || not_ok "user add: $out"
alice=CN=alice,CN=Users,$AD_BASE
inc=$(ad_dirsync "$cookie" '(objectClass=*)' 2>&1)
dns=$(sed -n 's/^dn: //p' <<< "$inc")
[ "$dns" = "$alice" ] && grep -q '^objectGUID:: ' <<< "$inc" &&
	ok "incremental DirSync from the cookie: the new user alone, with objectGUID" ||
	not_ok "incremental DirSync after add: $dns"
guid=$(sed -n 's/^objectGUID:: //p' <<< "$inc")
cookie=$(ad_cookie <<< "$inc")

# the user binds with its password over ldaps, not with another
out=$(ad_ldap ldapsearch -x -H "$ad_ldaps" -D "$alice" -w 'Alice.Pass1' -LLL -b "$alice" -s base sAMAccountName 2>&1)
grep -q '^sAMAccountName: alice' <<< "$out" && ok "alice binds by DN over ldaps and reads herself" ||
	not_ok "alice bind: $out"
out=$(ad_ldap ldapsearch -x -H "$ad_ldaps" -D "alice@example.com" -w 'wrong' -LLL -b "$alice" -s base 1.1 2>&1)
grep -q "Invalid credentials (49)" <<< "$out" && ok "a wrong password: invalidCredentials (49)" ||
	not_ok "wrong password: $out"

# a user's first bind sets its lastLogonTimestamp, a replicated attribute: DirSync sends it
inc=$(ad_dirsync "$cookie" '(objectClass=*)' 2>&1)
attrs=$(grep -vE '^(#|$|search:|result:|control:)' <<< "$inc" | cut -d: -f1 | LC_ALL=C sort | tr '\n' ' ')
[ "$attrs" = "dn instanceType lastLogonTimestamp objectGUID " ] &&
	ok "after alice's first bind, DirSync sends her lastLogonTimestamp (+ objectGUID, instanceType)" ||
	not_ok "DirSync after a bind: $attrs"
cookie=$(ad_cookie <<< "$inc")

# a modify: only the changed attribute (with objectGUID and instanceType)
ad_modify > /dev/null << EOF
dn: $alice
changetype: modify
replace: description
description: changed
EOF
inc=$(ad_dirsync "$cookie" '(objectClass=*)' 2>&1)
attrs=$(grep -vE '^(#|$|search:|result:|control:)' <<< "$inc" | cut -d: -f1 | LC_ALL=C sort | tr '\n' ' ')
[ "$attrs" = "description dn instanceType objectGUID " ] &&
	grep -qx "objectGUID:: $guid" <<< "$inc" &&
	ok "incremental DirSync after a modify: only description (+ objectGUID, instanceType)" ||
	not_ok "incremental DirSync after modify: $attrs"
cookie=$(ad_cookie <<< "$inc")

# a delete: a tombstone under CN=Deleted Objects, isDeleted TRUE
ad_tool user delete alice > /dev/null 2>&1
inc=$(ad_dirsync "$cookie" '(objectClass=*)' 2>&1)
grep -q '^dn: CN=alice\\0ADEL:.*,CN=Deleted Objects,' <<< "$inc" && grep -qx 'isDeleted: TRUE' <<< "$inc" &&
	grep -qx "objectGUID:: $guid" <<< "$inc" &&
	ok "incremental DirSync after a delete: the tombstone (isDeleted: TRUE, same objectGUID)" ||
	not_ok "incremental DirSync after delete: $(grep -E '^(dn|isDeleted):' <<< "$inc")"
cookie=$(ad_cookie <<< "$inc")

# DirSync only at a naming context's root
out=$(ad_search -o ldif-wrap=no -b "CN=Users,$AD_BASE" -E '!dirSync=0/0' '(objectClass=*)' 1.1 2>&1)
echo "# DirSync based at CN=Users: $(grep -E '^(result|text):' <<< "$out" | tr '\n' ' ')"

rss=$(awk '/^VmRSS/ {print $2}' "/proc/$adpid/status")
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$adpid/status")
echo "# samba (one process, -M single): RSS $((rss / 1024)) MiB, peak $((hwm / 1024)) MiB"
echo "# disk: $(du -sm "$work/ad" | cut -f1) MiB in $work/ad"

t=$(ms)
ad_stop
echo "# stop (SIGTERM to exit): $(($(ms) - t)) ms"
! kill -0 "$adpid" 2> /dev/null && ok "samba stopped by SIGTERM" || not_ok "samba still runs"
t=$(ms)
ad_start && echo "# second start to root DSE answering: $(($(ms) - t)) ms"
out=$(ad_dirsync "$cookie" '(objectClass=*)' 2>&1)
grep -q '^result: 0 Success' <<< "$out" && ! grep -q '^dn:' <<< "$out" &&
	ok "after a restart, DirSync from the last cookie: success, nothing new" ||
	not_ok "DirSync after restart: $(grep -E '^(dn|result):' <<< "$out")"
ad_stop
finish
