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

# serve CONF LDIF LOG WHAT: LDIF imported with CONF (ok "minidir-import takes WHAT") and
# minidir started on it (LOG), at $uri ($pid); a failure of either finishes the script.
serve() {
	if ! "$BUILD/minidir-import" -q -f "$1" "$2" > "$3.import" 2>&1; then
		not_ok "minidir-import of $2: $(cat "$3.import")"
		finish
	fi
	ok "minidir-import takes $4"
	start_minidir "$1" "$3"
	if [ -z "$port" ]; then
		not_ok "minidir did not start on $1: $(cat "$3")"
		finish
	fi
	uri=ldap://127.0.0.1:$port
}
serve "$conf" "$work/pilot.ldif" "$work/minidir.log" \
	"dNSDomain, pilotPerson + pilotObject, pilotOrganization, pilotDSA, dmd"

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

# --- site schemas (docs/ldap.md "Adding a schema"): sudo, openssh-lpk, rfc2307bis, ppolicy ---
# tests/data/schema/'s files in a schema_dir of their own beside the tree's core files, the
# last named by its absolute path; rfc2307bis replaces nis (both: a duplicate, refused).
site=$work/site
mkdir -p "$site"
for f in core cosine inetorgperson nis; do ln -s "$SCHEMA_DIR/$f.schema" "$site/"; done
for f in sudo openssh-lpk rfc2307bis ppolicy; do ln -s "$PWD/tests/data/schema/$f.schema" "$site/"; done
site_conf() { # site_conf FILE SCHEMA...
	local f=$1
	shift
	printf 'listen = 127.0.0.1:0\ndatabase = %s\nsuffix = %s\nthreads = 1\nschema_dir = %s\nschema = %s\n' \
		"$work/site.mdb" "$suffix" "$site" "$*" > "$f"
}
site_conf "$work/both.conf" core cosine inetorgperson nis rfc2307bis
if "$BUILD/minidir" -t -f "$work/both.conf" > "$work/both.out" 2>&1; then
	not_ok "nis and rfc2307bis loaded together"
else
	grep -q "rfc2307bis.schema:[0-9]*: attributetype 1.3.6.1.1.1.1.2 (\"1.3.6.1.1.1.1.2\") is defined already at .*nis.schema:[0-9]*" "$work/both.out" &&
		ok "nis and rfc2307bis together: refused at the line ($(grep -o 'rfc2307bis.schema:[0-9]*: attributetype [0-9.]*' "$work/both.out"))" ||
		not_ok "nis and rfc2307bis together: $(cat "$work/both.out")"
fi
site_conf "$work/site.conf" core cosine inetorgperson rfc2307bis sudo openssh-lpk "$site/ppolicy.schema"
serve "$work/site.conf" tests/data/schema/site.ldif "$work/site.log" \
	"sudoRole, ldapPublicKey, rfc2307bis's posixGroup on a groupOfNames, pwdPolicy"
alice="uid=alice,ou=people,$suffix"
expect_dns "openssh-lpk: sshPublicKey by octetStringMatch" "$alice" \
	"(&(objectClass=ldapPublicKey)(sshPublicKey=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq0e6bqzN3aWkq5Hq3x8JgGmJ0m1b0q2c4n5p6r7s8t alice@example.org))"
expect_dns "rfc2307bis: a groupOfNames that is a posixGroup, by memberUid" "cn=admins,ou=groups,$suffix" \
	"(&(objectClass=groupOfNames)(objectClass=posixGroup)(memberUid=alice))"
expect_dns "rfc2307bis: homeDirectory by caseExactIA5Match" "" "(homeDirectory=/HOME/alice)"
expect_dns "rfc2307bis: automount by automountInformation" "automountKey=alice,automountMapName=auto.home,$suffix" \
	"(automountInformation=-rw,soft fs1.example.org:/export/home/alice)"
expect_dns "sudo: sudoRole by sudoUser, sudoOrder and sudoNotAfter ordering" "cn=admins-all,ou=sudoers,$suffix" \
	"(&(objectClass=sudoRole)(sudoUser=%admins)(sudoOrder<=10)(sudoNotAfter>=20300101000000Z))"
expect_dns "sudo: sudoUser is caseExactIA5" "" "(sudoUser=%ADMINS)"
expect_dns "ppolicy (macros): pwdPolicy by pwdMaxFailure ordering, pwdLockout, pwdAttribute by OID" \
	"cn=default,ou=policies,$suffix" "(&(objectClass=pwdPolicy)(pwdMaxFailure>=3)(pwdLockout=TRUE)(pwdAttribute=2.5.4.35))"

# The same four files in slapd: every definition slapd publishes under their OIDs, but the
# three slapd builds in itself (uidNumber, gidNumber, pwdLastSuccess), minidir publishes
# to the letter: ppolicy's objectIdentifier macros expanded as slapd expands them.
roots='\( (1\.3\.6\.1\.4\.1\.42\.2\.27\.8|1\.3\.6\.1\.4\.1\.15953\.9|1\.3\.6\.1\.4\.1\.24552\.500|1\.3\.6\.1\.1\.1)\.'
builtin="NAME '(uidNumber|gidNumber|pwdLastSuccess)'"
defs() { # defs URI: the attributeTypes and objectClasses under roots, sorted
	ldapsearch -x -LLL -o ldif-wrap=no -H "$1" -b cn=Subschema -s base attributeTypes objectClasses |
		grep -E "$roots" | grep -Ev "$builtin" | sort
}
mkdir -p "$work/slapd-db"
{
	for f in core cosine inetorgperson; do echo "include $SLAPD_SCHEMA/$f.schema"; done
	for f in rfc2307bis sudo openssh-lpk ppolicy; do echo "include $PWD/tests/data/schema/$f.schema"; done
	printf 'modulepath /usr/lib/ldap\nmoduleload back_mdb\npidfile %s\nargsfile %s\nloglevel none\n' \
		"$work/slapd.pid" "$work/slapd.args"
	printf 'database mdb\nsuffix "%s"\ndirectory %s\n' "$suffix" "$work/slapd-db"
} > "$work/slapd.conf"
slapd_uri=
for _ in 1 2 3; do
	sport=$(free_port) || continue
	/usr/sbin/slapd -f "$work/slapd.conf" -h "ldap://127.0.0.1:$sport/" -d 0 > "$work/slapd.log" 2>&1 &
	pids+=("$!")
	for _ in $(seq 1 100); do
		ldapsearch -x -LLL -H "ldap://127.0.0.1:$sport" -b cn=Subschema -s base 1.1 > /dev/null 2>&1 &&
			slapd_uri=ldap://127.0.0.1:$sport && break 2
		sleep 0.05
	done
done
if [ -z "$slapd_uri" ]; then
	not_ok "slapd did not start with the site schemas: $(tail -3 "$work/slapd.log")"
else
	defs "$slapd_uri" > "$work/slapd.defs"
	defs "$uri" > "$work/minidir.defs"
	n=$(wc -l < "$work/slapd.defs")
	missing=$(comm -23 "$work/slapd.defs" "$work/minidir.defs")
	[ "$n" -ge 80 ] && [ -z "$missing" ] &&
		ok "cn=Subschema: the $n definitions slapd publishes for the four files, minidir publishes to the letter" ||
		not_ok "cn=Subschema differs from slapd's ($n definitions): $missing"
	grep -q "( 1.3.6.1.4.1.42.2.27.8.1.11 NAME 'pwdMaxFailure' EQUALITY integerMatch ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )" "$work/minidir.defs" &&
		! grep -q "PwdAttr\|LdapSyntax" "$work/minidir.defs" &&
		ok "ppolicy's macros expanded: ( 1.3.6.1.4.1.42.2.27.8.1.11 NAME 'pwdMaxFailure' ... )" ||
		not_ok "ppolicy's macros: $(grep pwdMaxFailure "$work/minidir.defs")"
fi
stop_checked "$pid" "$work/site.log" && ok "stops cleanly with the site schemas" || not_ok "$stop_why"

finish
