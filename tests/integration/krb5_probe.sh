#!/bin/bash
# The MIT KDC of krb5_kdc.sh and OpenLDAP slapd as a GSSAPI acceptor, probed with kinit
# and ldapwhoami for the facts the SASL GSSAPI issue builds on (not in the Makefile's
# test lists: a look at the peers, with their times, and slapd's answers, the reference
# minidir's will be compared with; not a test of minidir): alice's ticket binds and maps
# to her entry, with every security layer (none, integrity, privacy); a service ticket the
# keytab does not hold, an expired ticket, no ticket, a proxy authorization not allowed
# all fail, each with its code; carol@OTHER.COM comes through the trust. Prints the
# times of making the realms, starting the KDC and starting slapd as "# " lines, and
# each answer as a "# " line too.
# Run from the tree's root, as root or not: tests/integration/krb5_probe.sh (KEEP=1 keeps
# the directory).
cd "$(dirname "$0")/../.." || exit 1
. tests/integration/lib.sh
. tests/integration/provider.sh
. tests/integration/krb5_kdc.sh
use_work_dir krb5_probe

if ! kdc_usable; then
	skip "$kdc_why" "MIT KDC"
	finish
fi
ms() { echo $(($(date +%s%N) / 1000000)); }
ALICE=uid=alice,ou=people,$EX
BOB=uid=bob,ou=people,$EX

t=$(ms)
kdc_create || finish
echo "# kdc_create (kdb5_util create of 2 realms, 6 principals added, keytab): $(($(ms) - t)) ms"
t=$(ms)
kdc_start || finish
echo "# kdc_start to a kinit answered over UDP and TCP: $(($(ms) - t)) ms (port $kdc_port)"
ok "krb5kdc -n serves EXAMPLE.COM and OTHER.COM on 127.0.0.1:$kdc_port (kinit over UDP and TCP)"
keys=$(klist -k "$kdc_keytab" 2>&1)
grep -q "1 $KDC_SERVICE@$KDC_REALM" <<< "$keys" && ! grep -q 127.0.0.1 <<< "$keys" &&
	ok "keytab $kdc_keytab holds $KDC_SERVICE@$KDC_REALM (kvno 1), not ldap/127.0.0.1" ||
	not_ok "klist -k: $keys"

provider_setup || finish
kdc_slapd_setup
t=$(ms)
kdc_slapd_start || finish
echo "# slapd start (GSSAPI acceptor) to answering: $(($(ms) - t)) ms ($kdc_uri)"

# kin USER PASS [ARGS]: kdc_kinit in this shell (its KRB5CCNAME export holds), its
# output in $out
kin() {
	kdc_kinit "$@" > "$work/kinit.out" 2>&1
	out=$(cat "$work/kinit.out")
}
kin alice "$KDC_PW_alice"
[ "$out" = "FILE:$kdc_dir/cc.alice" ] && [ "$KRB5CCNAME" = "$out" ] && ok "kinit alice: $out" ||
	not_ok "kinit alice: $out"

# check NAME WANT_ANSWER [WANT_SSF] -- kdc_whoami's ARGS
check() {
	local name=$1 want=$2 wssf=$3 out a s
	shift 3
	out=$(kdc_whoami "$@")
	a=$(kdc_answer "$out")
	s=$(kdc_ssf "$out")
	echo "# $name: ${a:-$out}${s:+ (SASL SSF $s)}"
	[ "$a" = "$want" ] && [ "$s" = "$wssf" ] && ok "$name" ||
		not_ok "$name: want '$want' SSF '$wssf', got: $out"
}
check "alice binds, mapped to her entry (privacy, the default)" "dn:$ALICE" 256
check "-O maxssf=0: no security layer" "dn:$ALICE" 0 -O maxssf=0
check "-O minssf=1,maxssf=1: integrity" "dn:$ALICE" 1 -O minssf=1,maxssf=1
check "-O minssf=56: privacy" "dn:$ALICE" 256 -O minssf=56
check "-O minssf=512: more than GSSAPI offers, refused by the client" \
	"Unknown authentication method (-6): SASL(-4): no mechanism available: No worthy mechs found" "" \
	-O minssf=512
# Without -N (SASL_NOCANON) libldap names the service after the host it is connected to,
# whatever the URI says, and a loopback peer (127.0.0.1) after this machine's own name
# (gethostname, then its canonical name): ldap/HOSTNAME, not in the KDC. The machine's,
# so printed, not checked.
for u in localhost 127.0.0.1; do
	out=$(timeout 20 ldapwhoami -Y GSSAPI -H "ldap://$u:$port" 2>&1)
	echo "# ldap://$u:PORT without -N (this machine's name: $(hostname -f 2> /dev/null || hostname)): $(kdc_answer "$out")"
done
KDC_URI=ldap://127.0.0.1:$port check "-N ldap://127.0.0.1: a ticket for ldap/127.0.0.1, which the keytab does not hold" \
	"Invalid credentials (49): SASL(-13): authentication failure: GSSAPI Failure: gss_accept_sec_context" ""
check "-X u:bob: proxy authorization without authzTo" \
	"Insufficient access (50): SASL(-14): authorization failure: not authorized" "" -X u:bob
check "-X dn:$BOB: the same" \
	"Insufficient access (50): SASL(-14): authorization failure: not authorized" "" -X "dn:$BOB"
if timeout 20 ldapmodify -x -H "ldap://127.0.0.1:$port" -D "$ADMIN" -w secret > /dev/null 2>&1 << EOF; then
dn: $ALICE
changetype: modify
add: authzTo
authzTo: dn:$BOB
EOF
	check "-X u:bob once alice's entry has authzTo: dn:$BOB (authz-policy to)" "dn:$BOB" 256 -X u:bob
	check "-X u:carol, not in authzTo" \
		"Insufficient access (50): SASL(-14): authorization failure: not authorized" "" -X u:carol
else
	not_ok "ldapmodify of alice's authzTo failed"
fi

kin bob wrong
echo "# kinit bob with a wrong password: $out"
grep -q "Password incorrect while getting initial credentials" <<< "$out" &&
	ok "kinit with a wrong password fails" || not_ok "kinit bob wrong: $out"

kin carol@OTHER.COM "$KDC_PW_carol"
check "carol@OTHER.COM through the trust (no mapping: her SASL DN)" \
	"dn:uid=carol@other.com,cn=example.com,cn=gssapi,cn=auth" 256
grep -q "krbtgt/$KDC_REALM@$KDC_REALM2" <<< "$(klist 2>&1)" &&
	ok "carol's cache holds the cross-realm krbtgt/$KDC_REALM@$KDC_REALM2" || not_ok "klist carol: $(klist 2>&1)"

# expiry: a 2 s ticket, 3 s later (krb5.conf's clockskew is 1 s)
kin bob "$KDC_PW_bob" -l 2s
check "bob's 2 s ticket while valid" "dn:$BOB" 256
sleep 3
check "bob's ticket expired (3 s later): refused by the client's GSSAPI, before a bind is sent" \
	"Local error (-2): SASL(-1): generic failure: GSSAPI Error: Unspecified GSS failure.  Minor code may provide more information (Ticket expired)" ""
kdestroy -q
check "no ticket at all (kdestroy)" \
	"Local error (-2): SASL(-1): generic failure: GSSAPI Error: No credentials were supplied, or the credentials were unavailable or inaccessible (No Kerberos credentials available (default cache: $KRB5CCNAME))" ""

# a keytab gone stale: the KDC's key of ldap/localhost changed (kvno 2), slapd's keytab
# holds kvno 1. Last: the keytab no longer serves.
kdc_admin "$KDC_REALM" "cpw -randkey $KDC_SERVICE"
kin bob "$KDC_PW_bob"
check "a ticket for ldap/localhost kvno 2, the keytab holding kvno 1" \
	"Invalid credentials (49): SASL(-13): authentication failure: GSSAPI Failure: gss_accept_sec_context" ""

t=$(ms)
kdc_stop
echo "# kdc_stop (SIGTERM to exit): $(($(ms) - t)) ms"
! kill -0 "$kdcpid" 2> /dev/null && ok "krb5kdc stopped by SIGTERM" || not_ok "krb5kdc still runs"
kin alice "$KDC_PW_alice"
echo "# kinit with the KDC stopped: $out"
[ -n "$out" ] && ! grep -q '^FILE:' <<< "$out" && ok "kinit fails once the KDC is stopped" ||
	not_ok "kinit after stop: $out"
finish
