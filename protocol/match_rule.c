#include "protocol/match_rule.h"

#include <string.h>
#include <strings.h>

struct rule_name {
	const char *name;
	const char *oid;
	enum match_rule rule;
};

/* The matching rules of the core, cosine, inetorgperson and nis schemas. */
static const struct rule_name rule_names[] = {
    {"caseIgnoreMatch", "2.5.13.2", MATCH_CASE_IGNORE},
    {"caseIgnoreOrderingMatch", "2.5.13.3", MATCH_CASE_IGNORE},
    {"caseIgnoreSubstringsMatch", "2.5.13.4", MATCH_CASE_IGNORE},
    {"caseExactMatch", "2.5.13.5", MATCH_CASE_EXACT},
    {"caseExactOrderingMatch", "2.5.13.6", MATCH_CASE_EXACT},
    {"caseExactSubstringsMatch", "2.5.13.7", MATCH_CASE_EXACT},
    {"numericStringMatch", "2.5.13.8", MATCH_NUMERIC},
    {"numericStringOrderingMatch", "2.5.13.9", MATCH_NUMERIC},
    {"numericStringSubstringsMatch", "2.5.13.10", MATCH_NUMERIC},
    {"caseIgnoreListMatch", "2.5.13.11", MATCH_CASE_IGNORE},
    {"caseIgnoreListSubstringsMatch", "2.5.13.12", MATCH_CASE_IGNORE},
    {"booleanMatch", "2.5.13.13", MATCH_CASE_IGNORE},
    {"integerMatch", "2.5.13.14", MATCH_INTEGER},
    {"integerOrderingMatch", "2.5.13.15", MATCH_INTEGER},
    {"octetStringMatch", "2.5.13.17", MATCH_OCTET},
    {"octetStringOrderingMatch", "2.5.13.18", MATCH_OCTET},
    {"telephoneNumberMatch", "2.5.13.20", MATCH_TELEPHONE},
    {"telephoneNumberSubstringsMatch", "2.5.13.21", MATCH_TELEPHONE},
    {"uniqueMemberMatch", "2.5.13.23", MATCH_DN},
    {"generalizedTimeMatch", "2.5.13.27", MATCH_CASE_EXACT},
    {"generalizedTimeOrderingMatch", "2.5.13.28", MATCH_CASE_EXACT},
    {"objectIdentifierMatch", "2.5.13.0", MATCH_OID},
    {"objectIdentifierFirstComponentMatch", "2.5.13.30", MATCH_OID_FIRST},
    {"distinguishedNameMatch", "2.5.13.1", MATCH_DN},
    {"caseExactIA5Match", "1.3.6.1.4.1.1466.109.114.1", MATCH_CASE_EXACT},
    {"caseIgnoreIA5Match", "1.3.6.1.4.1.1466.109.114.2", MATCH_CASE_IGNORE},
    {"caseIgnoreIA5SubstringsMatch", "1.3.6.1.4.1.1466.109.114.3", MATCH_CASE_IGNORE},
    {"caseExactIA5SubstringsMatch", "1.3.6.1.4.1.4203.1.2.1", MATCH_CASE_EXACT},
    {"UUIDMatch", "1.3.6.1.1.16.2", MATCH_CASE_IGNORE},
    {"UUIDOrderingMatch", "1.3.6.1.1.16.3", MATCH_CASE_IGNORE},
};

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
