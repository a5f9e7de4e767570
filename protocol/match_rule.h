/*
 * The matching rules minidir implements (RFC 4517 section 4), and their names.
 *
 * The bottom of the matching code: the schema (schema.h) names an attribute's
 * rules with these values, value.h and match.h normalize and compare values
 * under them. This file knows nothing of either: a rule here is only its
 * identity.
 */
#ifndef MINIDIR_PROTOCOL_MATCH_RULE_H
#define MINIDIR_PROTOCOL_MATCH_RULE_H

#include <stdbool.h>
#include <stddef.h>

enum match_rule {
	MATCH_CASE_IGNORE, /* caseIgnoreMatch: spaces folded, Unicode simple case folding */
	MATCH_CASE_EXACT,  /* caseExactMatch: spaces folded */
	MATCH_TELEPHONE,   /* telephoneNumberMatch: spaces and hyphens ignored, case folded */
	MATCH_INTEGER,     /* integerMatch: RFC 4517 INTEGER, compared by value */
	MATCH_DN,          /* distinguishedNameMatch: normalized DNs (dn.h) */
	MATCH_OCTET,       /* octetStringMatch: bytes as they are */
	MATCH_NUMERIC,     /* numericStringMatch: spaces ignored */
	MATCH_OID,         /* objectIdentifierMatch: names of schema elements become their OIDs */
	MATCH_OID_FIRST,   /* objectIdentifierFirstComponentMatch: the OID opening a definition */
	MATCH_NONE         /* the attribute has no such rule: assertions are Undefined */
};

/*
 * The rule a matching rule name (any case: "caseIgnoreMatch") or numeric OID
 * ("2.5.13.2") stands for: one of the rules of the core, cosine,
 * inetorgperson and nis schemas, ordering and substrings rules mapped to the
 * equality rule whose normal form they use.
 *
 * rule: borrowed, NUL-terminated, or NULL.
 * Returns: the rule; MATCH_NONE for NULL or an unknown name or OID.
 * Pure (a constant table): any thread, any time.
 */
enum match_rule match_rule_named(const char *rule);

/*
 * For cn=Subschema (RFC 4512 4.1.3, 4.1.5): the i-th matching rule minidir knows as a
 * MatchingRuleDescription ("( 2.5.13.2 NAME 'caseIgnoreMatch' SYNTAX 1.3.6.1...15 )"),
 * and the i-th syntax its schemas use as an LDAPSyntaxDescription ("( 1.3...15 DESC
 * 'Directory String' )"), written into out (cap bytes, the caller's, NUL-terminated,
 * 128 are enough). Return false (out untouched) when i is past the last. Pure.
 */
bool match_rule_description(size_t i, char *out, size_t cap);
bool match_syntax_description(size_t i, char *out, size_t cap);

#endif
