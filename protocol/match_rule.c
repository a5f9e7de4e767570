#include "protocol/match_rule.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SYN(n) "1.3.6.1.4.1.1466.115.121.1." #n

struct rule_name {
	const char *name;
	const char *oid;
	enum match_rule rule;
	const char *syntax; /* of the assertion (RFC 4517 section 4.2) */
};

/* The matching rules of the core, cosine, inetorgperson and nis schemas. */
static const struct rule_name rule_names[] = {
    {"caseIgnoreMatch", "2.5.13.2", MATCH_CASE_IGNORE, SYN(15)},
    {"caseIgnoreOrderingMatch", "2.5.13.3", MATCH_CASE_IGNORE, SYN(15)},
    {"caseIgnoreSubstringsMatch", "2.5.13.4", MATCH_CASE_IGNORE, SYN(58)},
    {"caseExactMatch", "2.5.13.5", MATCH_CASE_EXACT, SYN(15)},
    {"caseExactOrderingMatch", "2.5.13.6", MATCH_CASE_EXACT, SYN(15)},
    {"caseExactSubstringsMatch", "2.5.13.7", MATCH_CASE_EXACT, SYN(58)},
    {"numericStringMatch", "2.5.13.8", MATCH_NUMERIC, SYN(36)},
    {"numericStringOrderingMatch", "2.5.13.9", MATCH_NUMERIC, SYN(36)},
    {"numericStringSubstringsMatch", "2.5.13.10", MATCH_NUMERIC, SYN(58)},
    {"caseIgnoreListMatch", "2.5.13.11", MATCH_CASE_IGNORE, SYN(41)},
    {"caseIgnoreListSubstringsMatch", "2.5.13.12", MATCH_CASE_IGNORE, SYN(58)},
    {"booleanMatch", "2.5.13.13", MATCH_CASE_IGNORE, SYN(7)},
    {"integerMatch", "2.5.13.14", MATCH_INTEGER, SYN(27)},
    {"integerOrderingMatch", "2.5.13.15", MATCH_INTEGER, SYN(27)},
    {"octetStringMatch", "2.5.13.17", MATCH_OCTET, SYN(40)},
    {"octetStringOrderingMatch", "2.5.13.18", MATCH_OCTET, SYN(40)},
    {"telephoneNumberMatch", "2.5.13.20", MATCH_TELEPHONE, SYN(50)},
    {"telephoneNumberSubstringsMatch", "2.5.13.21", MATCH_TELEPHONE, SYN(58)},
    {"uniqueMemberMatch", "2.5.13.23", MATCH_DN, SYN(34)},
    {"generalizedTimeMatch", "2.5.13.27", MATCH_CASE_EXACT, SYN(24)},
    {"generalizedTimeOrderingMatch", "2.5.13.28", MATCH_CASE_EXACT, SYN(24)},
    {"objectIdentifierMatch", "2.5.13.0", MATCH_OID, SYN(38)},
    {"objectIdentifierFirstComponentMatch", "2.5.13.30", MATCH_OID_FIRST, SYN(38)},
    {"distinguishedNameMatch", "2.5.13.1", MATCH_DN, SYN(12)},
    {"caseExactIA5Match", "1.3.6.1.4.1.1466.109.114.1", MATCH_CASE_EXACT, SYN(26)},
    {"caseIgnoreIA5Match", "1.3.6.1.4.1.1466.109.114.2", MATCH_CASE_IGNORE, SYN(26)},
    {"caseIgnoreIA5SubstringsMatch", "1.3.6.1.4.1.1466.109.114.3", MATCH_CASE_IGNORE, SYN(58)},
    {"caseExactIA5SubstringsMatch", "1.3.6.1.4.1.4203.1.2.1", MATCH_CASE_EXACT, SYN(58)},
    {"UUIDMatch", "1.3.6.1.1.16.2", MATCH_CASE_IGNORE, "1.3.6.1.1.16.1"},
    {"UUIDOrderingMatch", "1.3.6.1.1.16.3", MATCH_CASE_IGNORE, "1.3.6.1.1.16.1"},
};

/* Every syntax the schemas minidir reads name (tests/integration/schema_test.sh checks):
 * RFC 4517's, UUID (RFC 4530), four of RFC 2252 that RFC 4517 dropped and RFC 1274's and
 * RFC 2256's types still name, RFC 2307's two and OpenLDAP's CSN (entryCSN). */
static const struct {
	const char *oid, *desc;
} syntaxes[] = {
    {SYN(3), "Attribute Type Description"},
    {SYN(4), "Audio"},
    {SYN(5), "Binary"},
    {SYN(6), "Bit String"},
    {SYN(7), "Boolean"},
    {SYN(8), "Certificate"},
    {SYN(9), "Certificate List"},
    {SYN(10), "Certificate Pair"},
    {SYN(11), "Country String"},
    {SYN(12), "Distinguished Name"},
    {SYN(13), "Data Quality Syntax"},
    {SYN(14), "Delivery Method"},
    {SYN(15), "Directory String"},
    {SYN(19), "DSA Quality Syntax"},
    {SYN(21), "Enhanced Guide"},
    {SYN(22), "Facsimile Telephone Number"},
    {SYN(23), "Fax"},
    {SYN(24), "Generalized Time"},
    {SYN(25), "Guide"},
    {SYN(26), "IA5 String"},
    {SYN(27), "INTEGER"},
    {SYN(28), "JPEG"},
    {SYN(30), "Matching Rule Description"},
    {SYN(34), "Name And Optional UID"},
    {SYN(36), "Numeric String"},
    {SYN(37), "Object Class Description"},
    {SYN(38), "OID"},
    {SYN(39), "Other Mailbox"},
    {SYN(40), "Octet String"},
    {SYN(41), "Postal Address"},
    {SYN(42), "Protocol Information"},
    {SYN(43), "Presentation Address"},
    {SYN(44), "Printable String"},
    {SYN(49), "Supported Algorithm"},
    {SYN(50), "Telephone Number"},
    {SYN(51), "Teletex Terminal Identifier"},
    {SYN(52), "Telex Number"},
    {SYN(53), "UTC Time"},
    {SYN(54), "LDAP Syntax Description"},
    {SYN(58), "Substring Assertion"},
    {"1.3.6.1.1.16.1", "UUID"},
    {"1.3.6.1.1.1.0.0", "RFC2307 NIS Netgroup Triple"},
    {"1.3.6.1.1.1.0.1", "RFC2307 Boot Parameter"},
    {"1.3.6.1.4.1.4203.666.11.2.1", "CSN"},
};

bool match_rule_description(size_t i, char *out, size_t cap)
{
	size_t n = sizeof(rule_names) / sizeof(rule_names[0]);
	if (i == n) {
		/* Active Directory's LDAP_MATCHING_RULE_IN_CHAIN (filter.h answers it, a search
		 * resolving it): not in rule_names, whose rules normalize values, which it does
		 * not. AD publishes no NAME; this one is minidir's. */
		snprintf(out, cap, "( 1.2.840.113556.1.4.1941 NAME 'inChainMatch' SYNTAX %s )",
		         SYN(12));
		return true;
	}
	if (i > n)
		return false;
	snprintf(out, cap, "( %s NAME '%s' SYNTAX %s )", rule_names[i].oid, rule_names[i].name,
	         rule_names[i].syntax);
	return true;
}

bool match_syntax_description(size_t i, char *out, size_t cap)
{
	if (i >= sizeof(syntaxes) / sizeof(syntaxes[0]))
		return false;
	snprintf(out, cap, "( %s DESC '%s' )", syntaxes[i].oid, syntaxes[i].desc);
	return true;
}

enum match_rule match_rule_named(const char *rule)
{
	if (!rule)
		return MATCH_NONE;
	for (size_t i = 0; i < sizeof(rule_names) / sizeof(rule_names[0]); i++)
		if (strcasecmp(rule, rule_names[i].name) == 0 ||
		    strcmp(rule, rule_names[i].oid) == 0)
			return rule_names[i].rule;
	return MATCH_NONE;
}
