#!/usr/bin/env bash
# The tree's schema (schema/, what make install ships) against slapd's: every NAME and
# OID of slapd's core, cosine, inetorgperson and nis.schema is in the cn=Subschema a
# minidir reading the tree's files serves (schema_names.py); entries of the RFC 1274 and
# RFC 2256 classes that RFC 4519 and RFC 4524 dropped (dNSDomain, pilotPerson and
# pilotObject, pilotOrganization, dSA and pilotDSA, dmd, qualityLabelledData) import with
# minidir-import and are found by their attributes, by equality as each type's rule says
# (presence only where it has none); pilotDSA's MUST dSAQuality (RFC 1274's, where slapd
# says MAY) is enforced with the LDIF's line.
#   BUILD=build tests/integration/schema_test.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/integration/lib.sh
use_work_dir schema
export LDAPNOINIT=1
PYTHON=/usr/bin/python3 # Debian's, where python3-ldap is

SLAPD_SCHEMA=/etc/ldap/schema
for f in core cosine inetorgperson nis; do
	[ -f "$SLAPD_SCHEMA/$f.schema" ] || {
		echo "schema_test: $SLAPD_SCHEMA/$f.schema missing (scripts/deps.sh installs slapd)" >&2
		exit 1
	}
done

suffix=dc=example,dc=org
conf=$work/minidir.conf
printf 'listen = 127.0.0.1:0\ndatabase = %s\nsuffix = %s\nthreads = 1\nschema_dir = %s\n' \
	"$work/test.mdb" "$suffix" "$SCHEMA_DIR" > "$conf"

cat > "$work/pilot.ldif" << EOF
dn: $suffix
objectClass: dNSDomain
dc: example
aRecord: 192.0.2.10
mXRecord: 10 mail.example.org.
nSRecord: ns1.example.org.
sOARecord: ns1.example.org. hostmaster.example.org. 2026120101 7200 900 1209600 300
cNAMERecord: www.example.org.
mDRecord: mail.example.org.

dn: cn=Pat Pilot,$suffix
objectClass: pilotPerson
objectClass: pilotObject
cn: Pat Pilot
sn: Pilot
uid: pat
drink: tea
info: moved to the new lab
dITRedirect: cn=Pat Pilot,ou=Lab,$suffix
lastModifiedTime: 911231235959Z
lastModifiedBy: cn=admin,$suffix

dn: ou=Lab,$suffix
objectClass: pilotOrganization
objectClass: qualityLabelledData
o: Example
ou: Lab
buildingName: North Wing
dSAQuality: PILOT-SERVICE
subtreeMinimumQuality: 2

dn: cn=Pat Pilot,ou=Lab,$suffix
objectClass: organizationalPerson
objectClass: extensibleObject
cn: Pat Pilot
sn: Pilot
fax: +1 555 0100
email: Pat@Example.ORG
pseudonym: Patty

dn: cn=dsa1,$suffix
objectClass: pilotDSA
cn: dsa1
presentationAddress: '0101'H/'0101'H/'0101'H/NS+12345678
supportedApplicationContext: 2.5.3.1
knowledgeInformation: Knows dc=example
dSAQuality: FULL-SERVICE#the main DSA

dn: dmdName=main,$suffix
objectClass: dmd
dmdName: main
description: a directory management domain
EOF

if ! "$BUILD/minidir-import" -q -f "$conf" "$work/pilot.ldif" > "$work/import.out" 2>&1; then
	not_ok "minidir-import of the RFC 1274 / RFC 2256 entries: $(cat "$work/import.out")"
	finish
fi
ok "minidir-import takes dNSDomain, pilotPerson + pilotObject, pilotOrganization, pilotDSA, dmd"

start_minidir "$conf" "$work/minidir.log"
if [ -z "$port" ]; then
	not_ok "minidir did not start: $(cat "$work/minidir.log")"
	finish
fi
uri=ldap://127.0.0.1:$port

# expect_dns WHAT "DN1;DN2..." FILTER [ATTRS...]: the DNs a subtree search finds, sorted.
expect_dns() {
	local what=$1 want=$2 filter=$3 got
	shift 3
	got=$(ldapsearch -x -LLL -o ldif-wrap=no -H "$uri" -b "$suffix" "$filter" 1.1 2>&1 |
		sed -n 's/^dn: //p' | sort | paste -sd ';')
	[ "$got" = "$want" ] && ok "$what: $filter" || not_ok "$what: $filter: got \"$got\", want \"$want\""
}
pat="cn=Pat Pilot,$suffix"
pat2="cn=Pat Pilot,ou=Lab,$suffix"
dsa="cn=dsa1,$suffix"

# --- dNSDomain: caseIgnoreIA5Match, no substrings rule ------------------------------------
expect_dns "dNSDomain is a domain" "$suffix" "(objectClass=domain)"
expect_dns "aRecord by equality" "$suffix" "(aRecord=192.0.2.10)"
expect_dns "mXRecord by equality, case ignored" "$suffix" "(mXRecord=10 MAIL.Example.ORG.)"
expect_dns "sOARecord by equality" "$suffix" \
	"(sOARecord=ns1.example.org. hostmaster.example.org. 2026120101 7200 900 1209600 300)"
expect_dns "cNAMERecord and mDRecord" "$suffix" "(&(cNAMERecord=WWW.example.org.)(mDRecord=mail.example.org.))"
expect_dns "nSRecord: a value it lacks" "" "(nSRecord=ns2.example.org.)"
expect_dns "mXRecord has no substrings rule: Undefined" "" "(mXRecord=10 mail*)"

# --- pilotPerson and pilotObject ----------------------------------------------------------
expect_dns "pilotPerson is a person" "$pat" "(&(objectClass=person)(objectClass=newPilotPerson))"
expect_dns "pilotObject (auxiliary) by its dITRedirect, DN match" "$pat" \
	"(&(objectClass=pilotObject)(dITRedirect=CN=pat pilot, OU=lab, DC=example, DC=org))"
expect_dns "lastModifiedBy by DN match" "$pat" "(lastModifiedBy=CN=Admin,DC=Example,DC=Org)"
got=$(ldapsearch -x -LLL -H "$uri" -b "$pat" -s base lastModifiedTime 2>&1 | sed -n 's/^lastModifiedTime: //p')
[ "$got" = 911231235959Z ] && ok "lastModifiedTime (OBSOLETE, a user type) is kept and returned" ||
	not_ok "lastModifiedTime: got \"$got\""

# --- pilotOrganization (two superclasses), qualityLabelledData ---------------------------
expect_dns "pilotOrganization is an organization and an organizationalUnit" "ou=Lab,$suffix" \
	"(&(objectClass=organization)(objectClass=organizationalUnit)(buildingName=north wing))"
expect_dns "qualityLabelledData: dSAQuality and subtreeMinimumQuality by presence" "ou=Lab,$suffix" \
	"(&(objectClass=qualityLabelledData)(subtreeMinimumQuality=*))"

# --- dSA, pilotDSA (RFC 2256, RFC 1274) -------------------------------------------------
expect_dns "pilotDSA is a dSA and an applicationEntity" "$dsa" "(&(objectClass=dSA)(objectClass=applicationEntity))"
expect_dns "supportedApplicationContext by objectIdentifierMatch" "$dsa" "(supportedApplicationContext=2.5.3.1)"
expect_dns "knowledgeInformation by caseIgnoreMatch" "$dsa" "(knowledgeInformation=KNOWS DC=EXAMPLE)"
expect_dns "presentationAddress by presence" "$dsa" "(presentationAddress=*)"
expect_dns "presentationAddressMatch is not implemented: Undefined" "" \
	"(presentationAddress='0101'H/'0101'H/'0101'H/NS+12345678)"
expect_dns "dSAQuality by presence, on both entries" "$dsa;ou=Lab,$suffix" "(dSAQuality=*)"
expect_dns "dmd by dmdName (SUP name)" "dmdName=main,$suffix" "(&(objectClass=dmd)(name=main))"

# --- core.schema's additions: fax, email, pseudonym ---------------------------------------
expect_dns "fax is facsimileTelephoneNumber" "$pat2" "(facsimileTelephoneNumber=*)"
got=$(ldapsearch -x -LLL -H "$uri" -b "$pat2" -s base fax 2>&1 | grep -v '^dn:' | grep .)
[ "$got" = "facsimileTelephoneNumber: +1 555 0100" ] && ok "fax asked for, returned by its first name" ||
	not_ok "fax: got \"$got\""
expect_dns "email by caseIgnoreIA5Match, as emailAddress" "$pat2" "(emailAddress=pat@example.org)"
expect_dns "pseudonym (SUP name) by equality" "$pat2" "(pseudonym=patty)"

# --- slapd's NAMEs and OIDs, all served --------------------------------------------------
if ! "$PYTHON" -c "import ldap" 2> /dev/null; then
	not_ok "python-ldap is not installed (scripts/deps.sh installs python3-ldap)"
elif out=$("$PYTHON" tests/integration/schema_names.py "$uri" "$SLAPD_SCHEMA" core cosine inetorgperson nis 2>&1); then
	relay_checks schema_names.py <<< "$out"
else
	not_ok "schema_names.py failed: $out"
fi

stop_checked "$pid" "$work/minidir.log" && ok "stops cleanly" || not_ok "$stop_why"

# --- pilotDSA without dSAQuality: refused, with the LDIF's line --------------------------
printf 'database = %s\nsuffix = %s\nschema_dir = %s\n' "$work/refused.mdb" "$suffix" "$SCHEMA_DIR" > "$work/refused.conf"
printf 'dn: %s\nobjectClass: domain\ndc: example\n\ndn: cn=dsa2,%s\nobjectClass: pilotDSA\ncn: dsa2\npresentationAddress: x\n' \
	"$suffix" "$suffix" > "$work/refused.ldif"
if "$BUILD/minidir-import" -q -f "$work/refused.conf" "$work/refused.ldif" > "$work/refused.out" 2>&1; then
	not_ok "pilotDSA without dSAQuality imported"
else
	grep -q "refused.ldif:5:.*dSAQuality" "$work/refused.out" &&
		ok "pilotDSA without dSAQuality (RFC 1274: MUST) refused: $(head -1 "$work/refused.out")" ||
		not_ok "pilotDSA without dSAQuality: $(cat "$work/refused.out")"
fi

finish
