/*
 * Unit tests for the schema's hierarchies as searches use them: object class
 * superclasses (RFC 4512 2.4.1), attribute supertypes in filters and attribute
 * lists (RFC 4511 4.5.1.7, 4.5.1.8) and the Matched Values items (RFC 3876),
 * with the tree's schemas loaded (schema/: core cosine inetorgperson nis openldap).
 */
#include <check.h>
#include <lber.h>
#include <ldap.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "protocol/filter.h"
#include "protocol/response.h"
#include "protocol/schema.h"
#include "tests/tree_schema.h"
#include "storage/entry.h"
#include "tests/check_run.h"

static const struct schema_oc *oc(const char *name)
{
	const struct schema_oc *c = schema_oc_find(name, strlen(name));
	ck_assert_msg(c != NULL, "class %s", name);
	return c;
}

static const struct schema_attr *at(const char *name)
{
	const struct schema_attr *a = schema_attr_find(name, strlen(name));
	ck_assert_msg(a != NULL, "type %s", name);
	return a;
}

START_TEST(superclasses)
{
	/* OpenLDAPperson: SUP ( pilotPerson $ inetOrgPerson ), both SUP ... person. */
	const struct schema_oc *olp = oc("OpenLDAPperson");
	const char *const sups[] = {"pilotPerson",          "newPilotPerson", "inetOrgPerson",
	                            "organizationalPerson", "person",         "top"};
	for (size_t i = 0; i < sizeof(sups) / sizeof(sups[0]); i++)
		ck_assert_msg(schema_oc_is_a(olp, oc(sups[i])), "OpenLDAPperson is a %s", sups[i]);
	ck_assert(schema_oc_is_a(olp, olp));
	ck_assert(!schema_oc_is_a(oc("person"), oc("inetOrgPerson")));
	ck_assert(!schema_oc_is_a(oc("posixAccount"), oc("person")));
	/* Every class is a top, even one defined without SUP (subschema). */
	ck_assert(schema_oc_is_a(oc("subschema"), oc("top")));
	ck_assert(oc("person")->has_subclasses);
	ck_assert(!oc("OpenLDAPperson")->has_subclasses);
	/* Each superclass once. */
	size_t n = 0, tops = 0;
	for (; olp->superclasses[n]; n++)
		tops += olp->superclasses[n] == oc("top");
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(tops, 1);
}
END_TEST

START_TEST(supertypes)
{
	ck_assert(schema_attr_is_a(at("cn"), at("name")));
	ck_assert(schema_attr_is_a(at("commonName"), at("2.5.4.41")));
	ck_assert(schema_attr_is_a(at("member"), at("distinguishedName")));
	ck_assert(!schema_attr_is_a(at("name"), at("cn")));
	ck_assert(!schema_attr_is_a(at("manager"), at("distinguishedName"))); /* no SUP */
	ck_assert(at("name")->has_subtypes);
	ck_assert(!at("uid")->has_subtypes);
}
END_TEST

/* ---- one stored entry ---- */

static struct buf record, scratch;
static struct entry_view entry;

/* Stores "dn: uid=olp,dc=example,dc=com" with the pairs types[i]: vals[i]. */
static void build(const char *const *types, const char *const *vals, size_t n)
{
	LDAPMod mods[8], *modp[9];
	struct berval bv[8], *bvp[8][2];
	ck_assert_uint_le(n, 8);
	for (size_t i = 0; i < n; i++) {
		bv[i].bv_val = (char *)vals[i];
		bv[i].bv_len = strlen(vals[i]);
		bvp[i][0] = &bv[i];
		bvp[i][1] = NULL;
		mods[i].mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
		mods[i].mod_type = (char *)types[i];
		mods[i].mod_bvalues = bvp[i];
		modp[i] = &mods[i];
	}
	modp[n] = NULL;
	const char key[] = "dc=com\0dc=example\0uid=olp\0";
	struct berval dn = {strlen("uid=olp,dc=example,dc=com"),
	                    (char *)"uid=olp,dc=example,dc=com"};
	memset(&record, 0, sizeof(record));
	ck_assert_int_eq(
	    entry_encode(&record, 1, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(record.data, record.len, &entry), 0);
}

static void build_olp(void)
{
	const char *const types[] = {"objectClass", "uid", "cn", "sn", "description;lang-en"};
	const char *const vals[] = {"OpenLDAPperson", "oliveid", "Olive Person", "Person", "Hi"};
	build(types, vals, 5);
}

static enum filter_result eval_eq(const char *attr, const char *value)
{
	struct berval a = {strlen(attr), (char *)attr}, v = {strlen(value), (char *)value};
	struct arena mem = {0};
	struct filter *f = filter_make(FILTER_EQ, &a, &v, &mem, &scratch);
	ck_assert_ptr_nonnull(f);
	enum filter_result r = filter_eval(f, entry.attrs, entry.attrslen, &scratch);
	arena_free(&mem);
	return r;
}

static enum filter_result eval_present(const char *attr)
{
	struct berval a = {strlen(attr), (char *)attr};
	struct arena mem = {0};
	struct filter *f = filter_make(FILTER_PRESENT, &a, NULL, &mem, &scratch);
	ck_assert_ptr_nonnull(f);
	enum filter_result r = filter_eval(f, entry.attrs, entry.attrslen, &scratch);
	arena_free(&mem);
	return r;
}

START_TEST(objectclass_filters_match_superclasses)
{
	build_olp();
	ck_assert_int_eq(eval_eq("objectClass", "person"), FILTER_TRUE);
	ck_assert_int_eq(eval_eq("objectClass", "2.5.6.6"), FILTER_TRUE); /* person's OID */
	ck_assert_int_eq(eval_eq("objectClass", "newPilotPerson"), FILTER_TRUE);
	ck_assert_int_eq(eval_eq("objectClass", "TOP"), FILTER_TRUE);
	ck_assert_int_eq(eval_eq("objectClass", "OpenLDAPperson"), FILTER_TRUE);
	ck_assert_int_eq(eval_eq("objectClass", "posixAccount"), FILTER_FALSE);
	ck_assert_int_eq(eval_eq("objectClass", "device"), FILTER_FALSE);
	buf_free(&record);
}
END_TEST

/* The access log's form of a filter: an objectClass value by the class's first NAME, however
 * the client wrote it (its normal form, what the search compares, is the OID). */
static void ck_string(const char *text, const char *want)
{
	struct arena mem = {0};
	struct filter *f = filter_from_string(text, &mem);
	ck_assert_ptr_nonnull(f);
	struct buf out = {0};
	filter_to_string(f, &out);
	ck_assert_str_eq((const char *)out.data, want);
	buf_free(&out);
	arena_free(&mem);
}

START_TEST(objectclass_values_written_by_name)
{
	ck_string("(objectClass=2.16.840.1.113730.3.2.2)", "(objectClass=inetOrgPerson)");
	ck_string("(objectclass=POSIXACCOUNT)", "(objectClass=posixAccount)");
	ck_string("(|(objectClass~=2.5.6.6)(objectClass=newPilotPerson))",
	          "(|(objectClass~=person)(objectClass=pilotPerson))"); /* first NAME */
	ck_string("(objectClass=1.2.3.4)", "(objectClass=1.2.3.4)");    /* unknown: as it is */
	ck_string("(objectClass=*)", "(objectClass=*)");
	ck_string("(cn=Bob)", "(cn=bob)"); /* other values: their normal form, as before */
}
END_TEST

START_TEST(supertype_filters_test_subtypes)
{
	build_olp();
	ck_assert_int_eq(eval_eq("name", "olive person"), FILTER_TRUE); /* cn, name's rule */
	ck_assert_int_eq(eval_eq("2.5.4.41", "PERSON"), FILTER_TRUE);   /* sn */
	ck_assert_int_eq(eval_eq("name", "oliveid"), FILTER_FALSE);     /* uid is no name */
	ck_assert_int_eq(eval_present("name"), FILTER_TRUE);
	ck_assert_int_eq(eval_present("name;lang-en"), FILTER_FALSE);
	ck_assert_int_eq(eval_present("distinguishedName"), FILTER_FALSE);
	buf_free(&record);
}
END_TEST

START_TEST(supertype_in_attribute_list)
{
	build_olp();
	struct berval names[] = {{4, (char *)"name"}};
	struct attr_select sel;
	attr_select_init(&sel, names, 1, false);
	ck_assert(sel.supertypes);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 2, entry.op, entry.oplen, &sel), 0);
	ck_assert_ptr_nonnull(memmem(out.data, out.len, "Olive Person", 12));
	ck_assert_ptr_nonnull(memmem(out.data, out.len, "Person", 6));
	ck_assert_ptr_null(memmem(out.data, out.len, "oliveid", 7)); /* uid not selected */
	ck_assert_ptr_null(memmem(out.data, out.len, "Hi", 2));      /* description not either */
	buf_free(&out);
	buf_free(&record);
}
END_TEST

/* Decodes the flattened ValuesReturnFilter flat (freed) into mem. */
static struct filter *decode_values(struct berval *flat, struct arena *mem)
{
	struct ber_in in = ber_in_make(flat->bv_val, flat->bv_len);
	struct filter *f = filter_decode_values(&in, mem, &scratch);
	ber_bvfree(flat);
	return f;
}

/* A ValuesReturnFilter of two equality items, decoded into mem. */
static struct filter *values_filter(const char *a1, const char *v1, const char *a2, const char *v2,
                                    struct arena *mem)
{
	BerElement *w = ber_alloc_t(LBER_USE_DER);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_ge(ber_printf(w, "{t{ss}t{ss}}", (ber_tag_t)LDAP_FILTER_EQUALITY, a1, v1,
	                            (ber_tag_t)LDAP_FILTER_EQUALITY, a2, v2),
	                 0);
	struct berval *flat = NULL;
	ck_assert_int_eq(ber_flatten(w, &flat), 0);
	ber_free(w, 1);
	return decode_values(flat, mem);
}

START_TEST(matched_values_items)
{
	struct arena mem = {0};
	struct filter *f = values_filter("name", "Ali", "objectClass", "person", &mem);
	ck_assert_ptr_nonnull(f);
	struct buf s = {0};
#define MATCH(t, v)                                                                                \
	filter_values_match(f, (const unsigned char *)(t), strlen(t), (const unsigned char *)(v),  \
	                    strlen(v), &s)
	ck_assert(MATCH("cn", "ALI"));
	ck_assert(MATCH("sn", "ali"));
	ck_assert(!MATCH("cn", "Alice"));
	ck_assert(!MATCH("uid", "ali"));
	ck_assert(MATCH("objectClass", "inetOrgPerson"));
	ck_assert(!MATCH("objectClass", "posixAccount"));
#undef MATCH
	buf_free(&s);

	/* and, or, not are not SimpleFilterItems. */
	BerElement *w = ber_alloc_t(LBER_USE_DER);
	ck_assert_int_ge(ber_printf(w, "{t{t{ss}}}", (ber_tag_t)LDAP_FILTER_AND,
	                            (ber_tag_t)LDAP_FILTER_EQUALITY, "cn", "x"),
	                 0);
	struct berval *flat = NULL;
	ck_assert_int_eq(ber_flatten(w, &flat), 0);
	ber_free(w, 1);
	ck_assert_ptr_null(decode_values(flat, &mem));
	arena_free(&mem);
}
END_TEST

/* A directory with core.schema (the tree's, linked) and site.schema, for the tests that
 * load a site's file after core: site_begin makes it, site_write (re)writes site.schema,
 * site_end removes both. */
static char site[] = "/tmp/minidir-schema-XXXXXX";

static void site_begin(void)
{
	char path[512], core[4096];
	ck_assert_ptr_nonnull(mkdtemp(site));
	ck_assert_ptr_nonnull(realpath(TEST_SCHEMA_DIR "/core.schema", core));
	snprintf(path, sizeof(path), "%s/core.schema", site);
	ck_assert_int_eq(symlink(core, path), 0);
}

static void site_write(const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/site.schema", site);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void site_end(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/site.schema", site);
	unlink(path);
	snprintf(path, sizeof(path), "%s/core.schema", site);
	unlink(path);
	rmdir(site);
	strcpy(site, "/tmp/minidir-schema-XXXXXX");
}

/* Each cases[i][0] as site.schema: loading core and site fails with cases[i][1] in the
 * message. */
static void site_refused(const char *const (*cases)[2], size_t n)
{
	char err[512];
	for (size_t i = 0; i < n; i++) {
		site_write(cases[i][0]);
		ck_assert_msg(schema_load(site, "core site", err, sizeof(err)) == -1,
		              "case %zu loaded", i);
		ck_assert_msg(strstr(err, cases[i][1]) != NULL, "case %zu: %s", i, err);
		schema_free();
	}
}

/* A live definition whose OID or NAME an earlier file's has is refused with both places
 * (slapd refuses it; before, the first silently won); definitions commented out in a file,
 * which restate the built-ins, are not duplicates. */
START_TEST(duplicate_definitions_refused)
{
	char err[512];
	site_begin();
	static const char *const cases[][2] = {
	    {"attributetype ( 1.3.6.1.4.1.99999.1 NAME 'siteA' SUP name )\n"
	     "attributetype ( 1.3.6.1.4.1.99999.1 NAME 'siteB' SUP name )\n",
	     "site.schema:2: attributetype 1.3.6.1.4.1.99999.1 (\"1.3.6.1.4.1.99999.1\") is "
	     "defined already at "},
	    {"attributetype ( 1.3.6.1.4.1.99999.1 NAME 'siteA' SUP name )\n"
	     "attributetype ( 1.3.6.1.4.1.99999.2 NAME 'sitea' SUP name )\n",
	     "(\"sitea\") is defined already at"},
	    {"objectclass ( 1.3.6.1.4.1.99999.3 NAME 'person' SUP top AUXILIARY )\n",
	     "site.schema:1: objectclass 1.3.6.1.4.1.99999.3 (\"person\") is defined already at"},
	};
	site_refused(cases, sizeof(cases) / sizeof(cases[0]));
	/* core.schema's commented-out definitions restate built-ins: no duplicate. */
	ck_assert_msg(schema_load(site, "core", err, sizeof(err)) == 0, "%s", err);
	schema_free();
	site_end();
}
END_TEST

/* objectIdentifier macros are expanded in a definition's OID and SYNTAX as slapd expands
 * them (before, libldap kept "ExAttr:1" as the OID and cn=Subschema published it so);
 * an undefined macro, a bad value and a macro defined again as another OID are refused at
 * their line. */
START_TEST(oid_macros_expanded)
{
	char err[512];
	site_begin();
	site_write(
	    "objectIdentifier ExRoot 1.3.6.1.4.1.99999.7\n"
	    "objectidentifier ExAttr ExRoot:1\n"
	    "objectIdentifier ExOC ExRoot:2\n"
	    "objectIdentifier ExSyn 1.3.6.1.4.1.1466.115.121.1\n"
	    "objectIdentifier ExRoot 1.3.6.1.4.1.99999.7\n"
	    "# objectIdentifier ExAttr 1.2.3 (a comment defines nothing)\n"
	    "attributetype ( ExAttr:1 NAME 'exOne' EQUALITY caseIgnoreMatch\n"
	    "  SYNTAX ExSyn:15{64} )\n"
	    "attributetype ( ExAttr:2 NAME 'exTwo' SUP exOne )\n"
	    "objectclass ( ExOC:1 NAME 'exThing' SUP top AUXILIARY MAY ( exOne $ exTwo ) )\n");
	ck_assert_msg(schema_load(site, "core site", err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(at("exOne")->oid, "1.3.6.1.4.1.99999.7.1.1");
	ck_assert_str_eq(at("exOne")->syntax, "1.3.6.1.4.1.1466.115.121.1.15");
	ck_assert_str_eq(at("exOne")->definition,
	                 "( 1.3.6.1.4.1.99999.7.1.1 NAME 'exOne' EQUALITY caseIgnoreMatch SYNTAX "
	                 "1.3.6.1.4.1.1466.115.121.1.15{64} )");
	ck_assert_ptr_eq(at("1.3.6.1.4.1.99999.7.1.2"), at("exTwo"));
	ck_assert_str_eq(at("exTwo")->syntax, "1.3.6.1.4.1.1466.115.121.1.15"); /* from SUP */
	ck_assert_ptr_null(schema_attr_find("ExAttr:2", 8));
	ck_assert_str_eq(oc("exThing")->oid, "1.3.6.1.4.1.99999.7.2.1");
	ck_assert_ptr_null(strstr(oc("exThing")->definition, "ExOC"));
	schema_free();
	static const char *const cases[][2] = {
	    {"attributetype ( NoSuch:1 NAME 'exX' SUP name )\n",
	     "site.schema:1: attributetype OID \"NoSuch:1\" is neither a numeric OID nor"},
	    {"objectIdentifier ExRoot 1.3.6.1.4.1.99999.7\n"
	     "attributetype ( exroot:1 NAME 'exX' SUP name )\n",
	     "site.schema:2: attributetype OID \"exroot:1\""}, /* case-sensitive, as slapd */
	    {"objectIdentifier ExRoot 1.3.6.1.4.1.99999.7\n\n"
	     "attributetype ( ExRoot:1 NAME 'exX'\n  SYNTAX NoSuch:15 )\n",
	     "site.schema:3: attributetype SYNTAX \"NoSuch:15\""},
	    {"objectclass ( NoSuch:2 NAME 'exY' SUP top )\n",
	     "site.schema:1: objectclass OID \"NoSuch:2\""},
	    {"objectIdentifier ExRoot 1.3.6.1.4.1.99999.7\n"
	     "objectIdentifier ExRoot 1.3.6.1.4.1.99999.8\n",
	     "site.schema:2: objectIdentifier ExRoot is defined already, as 1.3.6.1.4.1.99999.7"},
	    {"objectIdentifier ExRoot not-an-oid\n", "site.schema:1: objectIdentifier ExRoot: "
	                                             "\"not-an-oid\" is neither"},
	    {"objectIdentifier ExRoot 1.2:3\n", "\"1.2:3\" is neither"},
	    {"objectIdentifier ExRoot\n", "site.schema:1: objectIdentifier takes two words"},
	    {"objectIdentifier 1x 1.2.3\n", "site.schema:1: objectIdentifier \"1x\""},
	    /* no OID at all: libldap lets it through; before, a NULL OID crashed the load */
	    {"\nattributetype ( NAME 'exNoOid' SUP name )\n",
	     "site.schema:2: attributetype without an OID"},
	    {"objectclass ( NAME 'exNoOidC' SUP top AUXILIARY )\n",
	     "site.schema:1: objectclass without an OID"},
	};
	site_refused(cases, sizeof(cases) / sizeof(cases[0]));
	site_end();
}
END_TEST

/* The digest follows the definitions, not the text: comments, spacing and a macro for a
 * numeric OID leave it; a changed definition or one more changes it. */
START_TEST(schema_digest_follows_definitions)
{
	char err[512], first[SCHEMA_DIGEST_SIZE];
	static const char *const same[] = {
	    "attributetype ( 1.3.6.1.4.1.99999.7.1 NAME 'exOne' SUP name )\n",
	    "# a comment\nobjectIdentifier Ex 1.3.6.1.4.1.99999.7\n\n"
	    "attributetype ( Ex:1\n    NAME 'exOne'   SUP name )\n"};
	static const char *const other[] = {
	    "attributetype ( 1.3.6.1.4.1.99999.7.1 NAME 'exOne' SUP description )\n",
	    "attributetype ( 1.3.6.1.4.1.99999.7.1 NAME 'exOne' SUP name )\n"
	    "attributetype ( 1.3.6.1.4.1.99999.7.2 NAME 'exTwo' SUP name )\n"};
	site_begin();
	for (size_t i = 0; i < 4; i++) {
		site_write(i < 2 ? same[i] : other[i - 2]);
		ck_assert_msg(schema_load(site, "core site", err, sizeof(err)) == 0, "%s", err);
		ck_assert_uint_eq(strlen(schema_digest()), SCHEMA_DIGEST_SIZE - 1);
		if (i == 0)
			strcpy(first, schema_digest());
		else if (i == 1)
			ck_assert_str_eq(schema_digest(), first);
		else
			ck_assert_str_ne(schema_digest(), first);
		schema_free();
	}
	ck_assert_str_eq(schema_digest(), "");
	site_end();
}
END_TEST

/* A name that is an absolute path is that file (before: read as
 * schema_dir//abs/path.schema.schema, which does not exist); a relative name stays
 * schema_dir/NAME.schema. */
START_TEST(absolute_schema_names)
{
	char err[1024], files[256];
	site_begin();
	site_write("attributetype ( 1.3.6.1.4.1.99999.9 NAME 'siteAbs' SUP name )\n");
	snprintf(files, sizeof(files), "core %s/site.schema", site);
	ck_assert_msg(schema_load(site, files, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(at("siteAbs")->oid, "1.3.6.1.4.1.99999.9");
	schema_free();
	snprintf(files, sizeof(files), "%s/core.schema site", site);
	ck_assert_msg(schema_load("/nonexistent", files, err, sizeof(err)) == -1, "loaded");
	ck_assert_str_eq(err, "/nonexistent/site.schema: No such file or directory");
	schema_free();
	snprintf(files, sizeof(files), "core %s/missing.schema", site);
	ck_assert_msg(schema_load(site, files, err, sizeof(err)) == -1, "loaded");
	ck_assert_msg(strstr(err, "/missing.schema: No such file or directory") &&
	                  strncmp(err, site, strlen(site)) == 0 && !strstr(err, ".schema.schema"),
	              "%s", err);
	schema_free();
	site_end();
}
END_TEST

static void load_schema(void)
{
	char err[512];
	ck_assert_msg(schema_load(TEST_SCHEMA_DIR, "core cosine inetorgperson nis openldap", err,
	                          sizeof(err)) == 0,
	              "schema: %s", err);
}

static void unload_schema(void)
{
	schema_free();
	buf_free(&scratch);
}

static Suite *hierarchy_suite(void)
{
	Suite *s = suite_create("hierarchy");
	TCase *tc = tcase_create("hierarchy");
	tcase_add_checked_fixture(tc, load_schema, unload_schema);
	tcase_add_test(tc, superclasses);
	tcase_add_test(tc, supertypes);
	tcase_add_test(tc, objectclass_filters_match_superclasses);
	tcase_add_test(tc, objectclass_values_written_by_name);
	tcase_add_test(tc, supertype_filters_test_subtypes);
	tcase_add_test(tc, supertype_in_attribute_list);
	tcase_add_test(tc, matched_values_items);
	TCase *dup = tcase_create("duplicates");
	tcase_add_test(dup, duplicate_definitions_refused);
	tcase_add_test(dup, oid_macros_expanded);
	tcase_add_test(dup, absolute_schema_names);
	tcase_add_test(dup, schema_digest_follows_definitions);
	suite_add_tcase(s, dup);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(hierarchy_suite());
}
