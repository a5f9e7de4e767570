/*
 * Unit tests for schema/ad.schema, Active Directory's types and classes for a replica of a
 * domain controller: it loads after core cosine inetorgperson nis (no name or OID defined
 * twice), and filters on what AD clients ask for match entries as a DC sends them:
 * sAMAccountName case-insensitive, AD's integers as INTEGER, SIDs and GUIDs as bytes,
 * whenChanged in AD's form (20261207000931.0Z), objectCategory as a DN, AD's classes with
 * their superclasses. Run from the repository root (make unit, make check T=ad_schema).
 */
#include <check.h>
#include <lber.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/buf.h"
#include "protocol/filter.h"
#include "protocol/schema.h"
#include "storage/entry.h"
#include "storage/value_syntax.h"
#include "tests/check_run.h"
#include "tests/tree_schema.h"

#define AD_SCHEMA_FILES "core cosine inetorgperson nis ad"
#define SYN(n) "1.3.6.1.4.1.1466.115.121.1." #n

static struct buf record, scratch;
static struct entry_view entry;

static const struct schema_attr *at(const char *name)
{
	const struct schema_attr *a = schema_attr_find(name, strlen(name));
	ck_assert_msg(a != NULL, "type %s", name);
	return a;
}

static const struct schema_oc *oc(const char *name)
{
	const struct schema_oc *c = schema_oc_find(name, strlen(name));
	ck_assert_msg(c != NULL, "class %s", name);
	return c;
}

/* One attribute of the entry: its type and values (NULL-terminated), lengths by strlen but
 * where len[] gives one (binary values). */
struct pair {
	const char *type;
	const char *vals[6];
	size_t lens[6];
};

/* Stores "dn: CN=alice,CN=Users,DC=example,DC=com" with the attributes pairs[0..n). */
static void build(const struct pair *pairs, size_t n)
{
	LDAPMod mods[16], *modp[17];
	struct berval bv[16][6], *bvp[16][7];
	ck_assert_uint_le(n, 16);
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		for (; pairs[i].vals[k]; k++) {
			bv[i][k].bv_val = (char *)pairs[i].vals[k];
			bv[i][k].bv_len =
			    pairs[i].lens[k] ? pairs[i].lens[k] : strlen(pairs[i].vals[k]);
			bvp[i][k] = &bv[i][k];
		}
		bvp[i][k] = NULL;
		mods[i].mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
		mods[i].mod_type = (char *)pairs[i].type;
		mods[i].mod_bvalues = bvp[i];
		modp[i] = &mods[i];
	}
	modp[n] = NULL;
	const char key[] = "dc=com\0dc=example\0cn=users\0cn=alice\0";
	const char *name = "CN=alice,CN=Users,DC=example,DC=com";
	struct berval dn = {strlen(name), (char *)name};
	memset(&record, 0, sizeof(record));
	ck_assert_int_eq(
	    entry_encode(&record, 1, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(record.data, record.len, &entry), 0);
}

/* A computer account as a Samba AD DC sends it by DirSync (the values that matter here). */
static const unsigned char sid[] = {1,    5,    0,    0,    0,    0,    0,    5,    21,   0,
                                    0,    0,    0x2a, 0x41, 0x61, 0x7a, 0x10, 0x20, 0x30, 0x40,
                                    0x50, 0x60, 0x70, 0x41, 0xe9, 0x03, 0x00, 0x00};
static const unsigned char guid[] = {0x41, 0x42, 0x43, 0x44, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

static void build_alice(void)
{
	const struct pair pairs[] = {
	    {"objectClass", {"top", "person", "organizationalPerson", "user", "computer"}, {0}},
	    {"cn", {"alice"}, {0}},
	    {"sAMAccountName", {"alice"}, {0}},
	    {"userPrincipalName", {"alice@example.com"}, {0}},
	    {"userAccountControl", {"512"}, {0}},
	    {"primaryGroupID", {"513"}, {0}},
	    {"uSNChanged", {"4123"}, {0}},
	    {"accountExpires", {"9223372036854775807"}, {0}},
	    {"objectSid", {(const char *)sid}, {sizeof(sid)}},
	    {"objectGUID", {(const char *)guid}, {sizeof(guid)}},
	    {"whenChanged", {"20261207000931.0Z"}, {0}},
	    {"objectCategory", {"CN=Computer,CN=Schema,CN=Configuration,DC=example,DC=com"}, {0}},
	    {"isDeleted", {"FALSE"}, {0}},
	    {"servicePrincipalName", {"HOST/alice.example.com", "HOST/ALICE"}, {0}},
	};
	build(pairs, sizeof(pairs) / sizeof(pairs[0]));
}

/* text's filter (RFC 4515 string form) on the entry built. */
static enum filter_result eval(const char *text)
{
	struct arena mem = {0};
	struct filter *f = filter_from_string(text, &mem);
	ck_assert_msg(f != NULL, "filter %s", text);
	enum filter_result r = filter_eval(f, entry.attrs, entry.attrslen, &scratch);
	arena_free(&mem);
	return r;
}

#define CK_FILTER(text, want) ck_assert_msg(eval(text) == (want), "%s: %d", text, eval(text))

START_TEST(loads_without_duplicates)
{
	/* The fixture loaded it; names AD shares with the other files are theirs. */
	ck_assert_str_eq(at("displayName")->oid, "2.16.840.1.113730.3.1.241"); /* inetorgperson */
	ck_assert_str_eq(at("name")->oid, "2.5.4.41");                         /* core */
	ck_assert_str_eq(at("memberOf")->oid, "1.2.840.113556.1.2.102");       /* built in */
	ck_assert_ptr_null(at("userAccountControl")->defined_at);              /* built in */
	ck_assert_ptr_nonnull(strstr(at("sAMAccountName")->defined_at, "ad.schema:"));
	ck_assert_str_eq(at("1.2.840.113556.1.4.221")->name, "sAMAccountName");
	const char *const types[] = {"sAMAccountType",
	                             "objectCategory",
	                             "whenCreated",
	                             "uSNCreated",
	                             "pwdLastSet",
	                             "lastLogon",
	                             "lastLogonTimestamp",
	                             "logonCount",
	                             "badPwdCount",
	                             "badPasswordTime",
	                             "lockoutTime",
	                             "instanceType",
	                             "managedBy",
	                             "dNSHostName",
	                             "msSFU30Name",
	                             "msSFU30NisDomain",
	                             "tokenGroups",
	                             "proxyAddresses",
	                             "company",
	                             "department",
	                             "mS-DS-ConsistencyGuid",
	                             "msDS-User-Account-Control-Computed"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		ck_assert_int_ne(at(types[i])->eq, MATCH_NONE);
	const char *const classes[] = {"user",      "group",         "computer",
	                               "container", "domainDNS",     "builtinDomain",
	                               "contact",   "trustedDomain", "foreignSecurityPrincipal"};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		ck_assert_int_eq(oc(classes[i])->kind, SCHEMA_OC_STRUCTURAL);
	ck_assert_int_eq(oc("securityPrincipal")->kind, SCHEMA_OC_AUXILIARY);
	ck_assert(schema_oc_is_a(oc("computer"), oc("user")));
	ck_assert(schema_oc_is_a(oc("computer"), oc("person")));
	ck_assert(schema_oc_is_a(oc("contact"), oc("organizationalPerson")));
	ck_assert(!schema_oc_is_a(oc("group"), oc("person")));
	/* AD's domain root lists "top, domain, domainDNS": cosine's domain stands for AD's. */
	ck_assert(schema_oc_is_a(oc("domainDNS"), oc("domain")));
	ck_assert(schema_oc_is_a(oc("trustedDomain"), oc("leaf")));
}
END_TEST

START_TEST(names_case_insensitive)
{
	ck_assert_int_eq(at("sAMAccountName")->eq, MATCH_CASE_IGNORE);
	ck_assert_int_eq(at("userPrincipalName")->sub, MATCH_CASE_IGNORE);
	ck_assert_str_eq(at("samaccountname")->syntax, SYN(15));
	ck_assert(at("sAMAccountName")->single_value);
	ck_assert(!at("servicePrincipalName")->single_value);
	build_alice();
	CK_FILTER("(sAMAccountName=ALICE)", FILTER_TRUE);
	CK_FILTER("(samaccountname=alice)", FILTER_TRUE);
	CK_FILTER("(sAMAccountName=AL*)", FILTER_TRUE);
	CK_FILTER("(sAMAccountName=bob)", FILTER_FALSE);
	CK_FILTER("(userPrincipalName=Alice@EXAMPLE.com)", FILTER_TRUE);
	CK_FILTER("(servicePrincipalName=host/alice)", FILTER_TRUE);
	/* A type no schema defines is still Undefined. */
	CK_FILTER("(msDS-NotInTheSchema=alice)", FILTER_UNDEFINED);
	buf_free(&record);
}
END_TEST

START_TEST(integers)
{
	const char *const types[] = {"userAccountControl", "primaryGroupID", "groupType",
	                             "sAMAccountType",     "uSNChanged",     "pwdLastSet",
	                             "accountExpires",     "lockoutTime",    "instanceType"};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ck_assert_str_eq(at(types[i])->syntax, SYN(27));
		ck_assert_int_eq(at(types[i])->eq, MATCH_INTEGER);
	}
	ck_assert_int_eq(at("uSNChanged")->ord, MATCH_INTEGER);
	build_alice();
	CK_FILTER("(userAccountControl=512)", FILTER_TRUE);
	CK_FILTER("(userAccountControl= 512 )", FILTER_TRUE);
	CK_FILTER("(userAccountControl=514)", FILTER_FALSE);
	CK_FILTER("(primaryGroupID=513)", FILTER_TRUE);
	CK_FILTER("(uSNChanged>=4000)", FILTER_TRUE); /* by value, not as text */
	CK_FILTER("(uSNChanged>=10000)", FILTER_FALSE);
	CK_FILTER("(accountExpires=9223372036854775807)", FILTER_TRUE);
	CK_FILTER("(accountExpires>=1)", FILTER_TRUE);
	buf_free(&record);
}
END_TEST

START_TEST(octet_strings)
{
	ck_assert_str_eq(at("objectSid")->syntax, SYN(40));
	ck_assert_str_eq(at("objectGUID")->syntax, SYN(40));
	ck_assert_str_eq(at("tokenGroups")->syntax, SYN(40));
	ck_assert_int_eq(at("objectSid")->eq, MATCH_OCTET);
	ck_assert_int_eq(at("objectGUID")->eq, MATCH_OCTET);
	build_alice();
	CK_FILTER("(objectSid=\\01\\05\\00\\00\\00\\00\\00\\05\\15\\00\\00\\00\\2a\\41\\61\\7a"
	          "\\10\\20\\30\\40\\50\\60\\70\\41\\e9\\03\\00\\00)",
	          FILTER_TRUE);
	CK_FILTER("(objectSid=\\01\\05\\00\\00\\00\\00\\00\\05\\15\\00\\00\\00\\2a\\41\\61\\7a"
	          "\\10\\20\\30\\40\\50\\60\\70\\61\\e9\\03\\00\\00)",
	          FILTER_FALSE); /* 'A' and 'a': bytes, not letters */
	CK_FILTER("(objectGUID=\\41\\42\\43\\44\\00\\01\\02\\03\\04\\05\\06\\07\\08\\09\\0a\\0b)",
	          FILTER_TRUE);
	CK_FILTER("(objectGUID=\\61\\62\\63\\64\\00\\01\\02\\03\\04\\05\\06\\07\\08\\09\\0a\\0b)",
	          FILTER_FALSE);
	buf_free(&record);
}
END_TEST

START_TEST(times_dns_booleans)
{
	ck_assert_str_eq(at("whenChanged")->syntax, SYN(24));
	ck_assert_str_eq(at("whenCreated")->syntax, SYN(24));
	/* AD's form, with a fraction: a valid Generalized Time, parsed. */
	ck_assert_ptr_null(value_syntax_check(SYN(24), "20261207000931.0Z", 17));
	time_t t = 0;
	ck_assert(value_gentime("20261207000931.0Z", 17, &t));
	ck_assert(value_gentime("20261207000931Z", 15, &(time_t){0}));
	struct tm tm;
	gmtime_r(&t, &tm);
	ck_assert_int_eq(tm.tm_year + 1900, 2026);
	ck_assert_int_eq(tm.tm_mday, 7);
	ck_assert_int_eq(tm.tm_sec, 31);
	ck_assert_int_eq(at("objectCategory")->eq, MATCH_DN);
	ck_assert_int_eq(at("managedBy")->eq, MATCH_DN);
	ck_assert_str_eq(at("isDeleted")->syntax, SYN(7));
	build_alice();
	CK_FILTER("(whenChanged=20261207000931.0Z)", FILTER_TRUE);
	CK_FILTER("(whenChanged>=20261201000000.0Z)", FILTER_TRUE);
	CK_FILTER("(whenChanged<=20261201000000.0Z)", FILTER_FALSE);
	CK_FILTER("(objectCategory=cn=computer,cn=schema,cn=configuration,dc=example,dc=com)",
	          FILTER_TRUE);
	/* AD's shorthand (a class's name for its defaultObjectCategory) is no DN: Undefined. */
	CK_FILTER("(objectCategory=computer)", FILTER_UNDEFINED);
	CK_FILTER("(isDeleted=FALSE)", FILTER_TRUE);
	CK_FILTER("(isDeleted=TRUE)", FILTER_FALSE);
	/* The classes and their superclasses, as SSSD's ad schema asks. */
	CK_FILTER("(&(objectClass=user)(sAMAccountName=alice))", FILTER_TRUE);
	CK_FILTER("(objectClass=computer)", FILTER_TRUE);
	CK_FILTER("(objectClass=group)", FILTER_FALSE);
	buf_free(&record);
}
END_TEST

static void load_schema(void)
{
	char err[512];
	ck_assert_msg(schema_load(TEST_SCHEMA_DIR, AD_SCHEMA_FILES, err, sizeof(err)) == 0,
	              "schema: %s", err);
}

static void unload_schema(void)
{
	schema_free();
	buf_free(&scratch);
}

static Suite *ad_schema_suite(void)
{
	Suite *s = suite_create("ad_schema");
	TCase *tc = tcase_create("ad_schema");
	tcase_add_checked_fixture(tc, load_schema, unload_schema);
	tcase_add_test(tc, loads_without_duplicates);
	tcase_add_test(tc, names_case_insensitive);
	tcase_add_test(tc, integers);
	tcase_add_test(tc, octet_strings);
	tcase_add_test(tc, times_dns_booleans);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(ad_schema_suite());
}
