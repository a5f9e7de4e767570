#!/bin/bash
# SASL GSSAPI binds (server/net/sasl.h), minidir beside slapd configured the same way
# (Cyrus SASL, the same keytab, sasl-host and sasl-realm, the same authz-regexp), both
# asked by ldapwhoami with tickets from an MIT KDC the test makes (krb5_kdc.sh): each
# case's answer (the DN, or the error with its code) and the client's SASL SSF must be
# the same. The cases: the default (privacy), -O maxssf=0, integrity only, a whole-tree
# search through the privacy layer under every send policy, StartTLS then GSSAPI, a
# principal of a trusted realm (never mapped to the local user of its name), mappings by
# a search (authz_regexp's URL form: one entry found, several), proxy authorizations
# (authz-policy to: allowed by authzTo's dn: and dn.regex:, refused with 50 otherwise),
# a ticket for a service the keytab does not hold (49), a valid and an expired ticket;
# then minidir's own: a locked account refused, sasl_minssf refusing a bind without a
# layer, authz_policy none, the root DSE's mechanisms, the access log's bind line, and
# SSSD's ldap provider binding with GSSAPI.
# Needs root for nothing; run from the tree's root: tests/integration/gssapi_test.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
. tests/integration/provider.sh
. tests/integration/krb5_kdc.sh
. tests/integration/sssd.sh
use_work_dir gssapi

if ! kdc_usable; then
	skip "$kdc_why" "MIT KDC"
	finish
fi
unset LDAPNOINIT
export LDAPCONF=/dev/null LDAPRC=/dev/null
ALICE=uid=alice,ou=people,$EX
BOB=uid=bob,ou=people,$EX

kdc_create || finish
# dave: an entry here whose account is locked (minidir's copy of the LDIF); erin: a
# principal whose mapped DN names no entry
# fboss and grp: mapped by a search (authz_regexp's LDAP URL form), which finds frank's
# entry (the DN rule would make uid=fboss,ou=people of it) and several groups (none taken:
# the identity's own DN)
for p in dave erin fboss grp; do
	kdc_admin "$KDC_REALM" "addprinc -pw Pass.$p.1 $p" || not_ok "kadmin.local addprinc $p"
done
# the URL rules come first (the first rule that matches is taken), in both servers
url_frank="ldap:///ou=people,$EX??one?(uid=frank)"
url_grp="ldap:///ou=groups,$EX??one?(objectClass=groupOfNames)"
re_frank='^uid=fboss,cn=example\.com,cn=gssapi,cn=auth$'
re_grp='^uid=grp,cn=example\.com,cn=gssapi,cn=auth$'
kdc_start || finish
tests/integration/tls_certs.sh "$work/pki" > "$work/certs.log" 2>&1 || {
	not_ok "certificates: $(cat "$work/certs.log")"
	finish
}
provider_setup || finish
kdc_slapd_setup
# StartTLS on slapd too (global settings: before the rest)
{
	echo "authz-regexp \"$re_frank\" \"$url_frank\""
	echo "authz-regexp \"$re_grp\" \"$url_grp\""
	echo "TLSCACertificateFile $work/pki/ca.pem"
	echo "TLSCertificateFile $work/pki/server.pem"
	echo "TLSCertificateKeyFile $work/pki/server.key"
	cat "$work/slapd.conf"
} > "$work/slapd.conf.new" && mv "$work/slapd.conf.new" "$work/slapd.conf"
kdc_slapd_start || finish
# Proxy authorization (authz-policy to, both servers): alice may act as bob (dn:) and as
# anyone whose DN the regular expression matches (frank), nobody else
authz_to=("authzTo: dn:uid=bob,ou=people,$EX" "authzTo: dn.regex:^uid=f[a-z]*,ou=people,dc=example,dc=com\$")
printf 'dn: uid=alice,ou=people,%s\nchangetype: modify\nadd: authzTo\n%s\n%s\n' "$EX" "${authz_to[@]}" |
	timeout 20 ldapmodify -x -H "$kdc_uri" -D "$ADMIN" -w secret > "$work/authzto.log" 2>&1 ||
	not_ok "ldapmodify of alice's authzTo on slapd: $(cat "$work/authzto.log")"
slapd_uri=$kdc_uri

# minidir on the same LDIF, with the same SASL settings and mapping
cat > "$work/minidir.conf" << CONF
listen = ldap://127.0.0.1:0
database = $work/minidir.mdb
schema_dir = $SCHEMA_DIR
suffix = $EX
rootdn = $ADMIN
rootpw = secret
tls_cert_file = $work/pki/server.pem
tls_key_file = $work/pki/server.key
access_log = $work/access.log
sasl_keytab = $kdc_keytab
sasl_host = localhost
sasl_realm = $KDC_REALM
authz_regexp = "$re_frank" "$url_frank"
authz_regexp = "$re_grp" "$url_grp"
authz_regexp = "^uid=([^,/@]+),cn=example\\.com,cn=gssapi,cn=auth\$" "uid=\$1,ou=people,$EX"
authz_policy = to
CONF
awk -v dave="uid=dave,ou=people,$EX" -v alice="uid=alice,ou=people,$EX" -v a1="${authz_to[0]}" -v a2="${authz_to[1]}" \
	'{print} $0 == "dn: " dave {print "pwdAccountLockedTime: 000001010000Z"} $0 == "dn: " alice {print a1; print a2}' \
	"$work/data.ldif" > "$work/minidir.ldif"
import_and_start "$work/minidir.conf" "$work/minidir.ldif"
mpid=$pid
mport=$port
minidir_uri=ldap://localhost:$mport
export LDAPTLS_CACERT=$work/pki/ca.pem LDAPTLS_REQCERT=demand

kin() { kdc_kinit "$@" > "$work/kinit.out" 2>&1; }

# same NAME [WANT] -- kdc_whoami's ARGS: slapd's and minidir's answers and SSFs equal
# (and slapd's is WANT when given: the reference answered as the case means).
same() {
	local name=$1 want=$2 s m
	shift 2
	s=$(KDC_URI=$slapd_uri kdc_whoami "$@")
	m=$(KDC_URI=$minidir_uri kdc_whoami "$@")
	local sa ma
	sa="$(kdc_answer "$s") ssf=$(kdc_ssf "$s")"
	ma="$(kdc_answer "$m") ssf=$(kdc_ssf "$m")"
	if [ -n "$want" ] && [ "${sa#"$want"}" = "$sa" ]; then
		not_ok "$name: slapd answered '$sa', the case wants '$want'"
	elif [ "$sa" = "$ma" ]; then
		ok "$name: $ma, as slapd"
	else
		not_ok "$name: minidir '$ma' ($m), slapd '$sa'"
	fi
}

kin alice "$KDC_PW_alice"
same "alice, the default (privacy)" "dn:$ALICE"
same "alice, -O maxssf=0 (no layer)" "dn:$ALICE" -O maxssf=0
same "alice, integrity only" "dn:$ALICE" -O minssf=1,maxssf=1
same "alice over StartTLS" "dn:$ALICE" -ZZ
same "-X u:bob, allowed by alice's authzTo dn:" "dn:$BOB" -X u:bob
same "-X dn:uid=frank,..., allowed by alice's authzTo dn.regex:" "dn:uid=frank,ou=people,$EX" -X "dn:uid=frank,ou=people,$EX"
same "-X u:carol, not in alice's authzTo" "Insufficient access (50)" -X u:carol
if ldapsearch -Y GSSAPI -N -H "$minidir_uri" -b "$EX" -LLL '(objectClass=*)' dn > "$work/m.ldif" 2> "$work/m.err" &&
	ldapsearch -Y GSSAPI -N -H "$slapd_uri" -b "$EX" -LLL '(objectClass=*)' dn > "$work/s.ldif" 2> "$work/s.err" &&
	[ "$(ldif_sorted "$work/m.ldif")" = "$(sed 's/\\2C/\\,/g' "$work/s.ldif" | ldif_sorted)" ] &&
	[ "$(grep -c '^dn:' "$work/m.ldif")" -gt 5 ]; then
	ok "a whole-tree search through the privacy layer: $(grep -c '^dn:' "$work/m.ldif") entries, as slapd's"
else
	not_ok "whole-tree search: $(cat "$work/m.err") / $(diff <(ldif_sorted "$work/m.ldif") <(ldif_sorted "$work/s.ldif") | head -5)"
fi
# Each send policy over the privacy layer (SIGHUP applies it to new connections): the
# whole tree with every attribute, as many SASL buffers, equal to slapd's over plain LDAP
# (userPassword left out: slapd's default rules let anyone read it, minidir's only self)
ldapsearch -x -H "$slapd_uri" -b "$EX" -LLL '(objectClass=*)' '*' 2> /dev/null | sed 's/\\2C/\\,/g' |
	ldif_sorted | grep -v ' | userPassword:' > "$work/all.s"
for policy in batch nodelay-once cork-toggle msg-more; do
	printf 'send_policy = %s\n' "$policy" >> "$work/minidir.conf"
	kill -HUP "$mpid"
	for _ in $(seq 1 100); do grep -q "send_policy .*-> $policy" "$work/minidir.log" && break; sleep 0.05; done
	ldapsearch -Y GSSAPI -N -H "$minidir_uri" -b "$EX" -LLL '(objectClass=*)' '*' 2> "$work/all.err" |
		ldif_sorted | grep -v ' | userPassword:' > "$work/all.m"
	sed -i '/^send_policy = /d' "$work/minidir.conf"
	if [ "$policy" != batch ] && ! grep -q "send_policy .*-> $policy" "$work/minidir.log"; then
		not_ok "send_policy $policy: not applied by SIGHUP"
	elif cmp -s "$work/all.m" "$work/all.s" && [ -s "$work/all.m" ]; then
		ok "send_policy $policy over the privacy layer: the whole tree ($(wc -c < "$work/all.m") bytes) as slapd's"
	else
		not_ok "send_policy $policy: $(head -3 "$work/all.err") $(diff "$work/all.m" "$work/all.s" | head -3)"
	fi
done

KDC_URI=ldap://127.0.0.1:$mport kdc_whoami > "$work/other.out"
s=$(KDC_URI=ldap://127.0.0.1:$port kdc_whoami)
m=$(cat "$work/other.out")
[ "$(kdc_answer "$m")" = "$(kdc_answer "$s")" ] && grep -q "(49)" <<< "$m" &&
	ok "a ticket for ldap/127.0.0.1, not in the keytab: $(kdc_answer "$m"), as slapd" ||
	not_ok "ticket not in the keytab: minidir '$m', slapd '$s'"

kin fboss Pass.fboss.1
same "fboss, mapped by a search that finds frank's entry" "dn:uid=frank,ou=people,$EX"
kin grp Pass.grp.1
same "grp, mapped by a search that finds several (its own DN)" \
	"dn:uid=grp,cn=example.com,cn=gssapi,cn=auth"
kin erin Pass.erin.1
same "erin, whose mapped DN names no entry" "dn:uid=erin,ou=people,$EX"

# minidir's own: dave's entry is locked here (slapd's copy is not)
kin dave Pass.dave.1
out=$(KDC_URI=$minidir_uri kdc_whoami)
grep -q "Invalid credentials (49)" <<< "$out" && ! grep -q "^dn:" <<< "$out" &&
	ok "dave, his entry locked (pwdAccountLockedTime): 49" || not_ok "locked dave: $out"
for _ in $(seq 1 40); do grep -q "account=locked" "$work/access.log" && break; sleep 0.05; done
grep -q 'method="GSSAPI".*result=0' "$work/access.log" &&
	grep -q 'method="GSSAPI".*account=locked attr="pwdAccountLockedTime" result=49' "$work/access.log" &&
	ok "the access log's bind lines name the mechanism (method=\"GSSAPI\") and the lock" ||
	not_ok "access log: $(grep -i bind "$work/access.log" | tail -3)"
mechs=$(ldapsearch -x -H "$minidir_uri" -b "" -s base -LLL supportedSASLMechanisms 2>&1)
smechs=$(ldapsearch -x -H "$slapd_uri" -b "" -s base -LLL supportedSASLMechanisms 2>&1)
grep -q "^supportedSASLMechanisms: GSSAPI" <<< "$mechs" && grep -q "GSSAPI" <<< "$smechs" &&
	ok "the root DSE lists GSSAPI, as slapd's" || not_ok "root DSE: $mechs / slapd: $smechs"

# A second minidir with sasl_minssf = 56 (a bind without an encryption layer is refused,
# over TLS it is not) and POSIX users and groups in groups (rfc2307bis, for SSSD): alice in
# posix-staff, posix-staff and bob in posix-devs.
mkdir -p "$work/schema"
cp "$SCHEMA_DIR"/core.schema "$SCHEMA_DIR"/cosine.schema "$SCHEMA_DIR"/inetorgperson.schema \
	tests/data/schema/rfc2307bis.schema "$work/schema/"
sed "s/^sasl_realm = .*/&\nsasl_minssf = 56\nbind_fail_limit = 2\nschema = core cosine inetorgperson rfc2307bis/
	s|^schema_dir = .*|schema_dir = $work/schema|; s/minidir\.mdb/minidir56.mdb/; s|access_log = .*|access_log = $work/access56.log|" \
	"$work/minidir.conf" > "$work/minssf.conf"
awk -v ex="$EX" '
	{ print }
	$0 == "dn: uid=alice," "ou=people," ex { u = "alice"; n = 10001 }
	$0 == "dn: uid=bob," "ou=people," ex { u = "bob"; n = 10002 }
	u != "" { print "objectClass: posixAccount\nuidNumber: " n "\ngidNumber: 20001\nhomeDirectory: /home/" u; u = "" }
	END {
		print "\ndn: cn=posix-staff,ou=groups," ex "\nobjectClass: groupOfNames\nobjectClass: posixGroup\ncn: posix-staff\ngidNumber: 20001\nmember: uid=alice,ou=people," ex
		print "\ndn: cn=posix-devs,ou=groups," ex "\nobjectClass: groupOfNames\nobjectClass: posixGroup\ncn: posix-devs\ngidNumber: 20002\nmember: cn=posix-staff,ou=groups," ex "\nmember: uid=bob,ou=people," ex
	}' "$work/data.ldif" > "$work/posix.ldif"
"$BUILD/minidir-import" -q -f "$work/minssf.conf" "$work/posix.ldif" > "$work/import56.log" 2>&1 ||
	not_ok "import: $(cat "$work/import56.log")"
start_minidir "$work/minssf.conf" "$work/minssf.log"
kin alice "$KDC_PW_alice"
if [ -n "$port" ]; then
	u=ldap://localhost:$port
	a=$(KDC_URI=$u kdc_whoami -O maxssf=0)
	b=$(KDC_URI=$u kdc_whoami)
	c=$(KDC_URI=$u kdc_whoami -O maxssf=0 -ZZ)
	x=$(KDC_URI=$u kdc_whoami -X u:bob)
	grep -q "Insufficient access (50)" <<< "$x" && ! grep -q "^dn:" <<< "$x" &&
		ok "authz_policy = none (the default): -X u:bob refused (50) whatever authzTo says" ||
		not_ok "policy none, -X u:bob: $x"
	# the server offers no weaker layer: the client's library ends the bind
	grep -q "too weak" <<< "$a" && ! grep -q "^dn:" <<< "$a" &&
		ok "sasl_minssf = 56: -O maxssf=0 refused: $(kdc_answer "$a")" || not_ok "minssf 56, maxssf=0: $a"
	[ "$(kdc_ssf "$b")" = 256 ] && grep -q "^dn:$ALICE" <<< "$b" &&
		ok "sasl_minssf = 56: the default bind (privacy) passes" || not_ok "minssf 56, default: $b"
	[ "$(kdc_ssf "$c")" = 0 ] && grep -q "^dn:$ALICE" <<< "$c" &&
		ok "sasl_minssf = 56: over StartTLS without a layer passes (TLS counts)" || not_ok "minssf 56 over TLS: $c"
	# SSSD's ldap provider binding with GSSAPI (its ldap_child gets a ticket from a host
	# keytab), through this server's privacy layer: users and groups in groups
	if ! sssd_usable; then
		not_ok "SSSD cannot run here: $sssd_why (scripts/deps.sh installs sssd-ldap and libnss-sss)"
	elif kdc_admin "$KDC_REALM" "addprinc -randkey host/localhost" &&
		kdc_admin "$KDC_REALM" "ktadd -k $work/host.keytab host/localhost"; then
		got=$(SSSD_KRB5_CONF=$KRB5_CONFIG SSSD_AUTH="ldap_schema = rfc2307bis
ldap_sasl_mech = GSSAPI
ldap_sasl_authid = host/localhost@$KDC_REALM
ldap_sasl_canonicalize = false
ldap_krb5_keytab = $work/host.keytab
ldap_krb5_init_creds = true
krb5_realm = $KDC_REALM
krb5_server = 127.0.0.1:$kdc_port" sssd_ids gss "$u" "" "" "$EX" alice bob carol)
		want=$(printf 'alice: posix-devs@example.com,posix-staff@example.com\nbob: posix-devs@example.com,posix-staff@example.com\ncarol: none')
		for _ in $(seq 1 40); do grep -q 'method="GSSAPI".*result=0' "$work/access56.log" && break; sleep 0.05; done
		[ "$got" = "$want" ] && grep -q 'method="GSSAPI".*result=0' "$work/access56.log" && ok "SSSD over GSSAPI (privacy): $(paste -sd';' <<< "$got") (alice in posix-devs through posix-staff)" ||
			not_ok "SSSD over GSSAPI: got '$got', want '$want' ($(grep -iE 'sasl|gssapi|error' "$work/sssd-gss/sssd.log" | tail -5))"
	else
		not_ok "kadmin.local: host/localhost"
	fi
	# bind_fail_limit = 2 (by address for GSSAPI): two binds with a ticket the keytab does
	# not hold (ldap/127.0.0.1), then alice's good ticket is refused unchecked
	f1=$(KDC_URI=ldap://127.0.0.1:$port kdc_whoami)
	f2=$(KDC_URI=ldap://127.0.0.1:$port kdc_whoami)
	g=$(KDC_URI=$u kdc_whoami)
	grep -q "(49)" <<< "$f1$f2" && grep -q "Invalid credentials (49)" <<< "$g" && ! grep -q "^dn:" <<< "$g" &&
		ok "bind_fail_limit = 2: after two failed GSSAPI binds from 127.0.0.1 a good ticket gets 49" ||
		not_ok "bind_fail_limit: $(kdc_answer "$f1") / $(kdc_answer "$f2") / $g"
	stop_checked "$pid" "$work/minssf.log" || not_ok "minssf server: $stop_why"
else
	not_ok "minssf server did not start: $(cat "$work/minssf.log")"
fi

kin carol@OTHER.COM "$KDC_PW_carol"
same "carol@OTHER.COM through the trust, not mapped to a local carol" \
	"dn:uid=carol@other.com,cn=example.com,cn=gssapi,cn=auth"

# (10 s, not 2: under SAN=1 beside three other tests a 2 s ticket expired before slapd's
# bind; the wait runs from the kinit)
t0=$SECONDS
kin bob "$KDC_PW_bob" -l 10s
same "bob's 10 s ticket" "dn:$BOB"
left=$((t0 + 12 - SECONDS))
[ "$left" -gt 0 ] && sleep "$left"
same "bob's ticket expired" ""

stop_checked "$mpid" "$work/minidir.log" && ok "minidir stopped cleanly" || not_ok "minidir: $stop_why"
finish
