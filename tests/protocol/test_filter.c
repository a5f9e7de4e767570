/*
 * Unit tests for protocol/filter_decode.c and filter_eval.c: decoding BER filters (built here with
 * liblber's ber_printf) and evaluating them against an entry stored the way
 * storage keeps it (storage/entry.c).
 */
#include <check.h>
#include <lber.h>
#include <ldap.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/filter.h"
#include "storage/entry.h"
#include "tests/check_run.h"

/* ---- the entry filters are evaluated against ---- */

static const char *const e_objectclass[] = {"top", "person", "inetOrgPerson", NULL};
static const char *const e_uid[] = {"alice", NULL};
static const char *const e_cn[] = {"Alice Smith", "Ali", NULL};
static const char *const e_sn[] = {"Smith", NULL};
static const char *const e_uidnumber[] = {"10", NULL};
static const char *const e_roomnumber[] = {"10", NULL};
static const char *const e_phone[] = {"+1 555-0100", NULL};
static const char *const e_member[] = {"UID=Bob, OU=People, DC=Example, DC=Com",
                                       "uid=carol,ou=people,dc=example,dc=com", NULL};
static const char *const e_description[] = {"hello (world) *", NULL};
static const char *const e_mail[] = {"alice@example.com", NULL};

static const struct {
	const char *type;
	const char *const *vals;
} e_attrs[] = {
    {"objectClass", e_objectclass},
    {"uid", e_uid},
    {"cn", e_cn},
    {"sn", e_sn},
    {"uidNumber", e_uidnumber},
    {"roomNumber", e_roomnumber},
    {"telephoneNumber", e_phone},
    {"member", e_member},
    {"description", e_description},
    {"mail", e_mail},
};
#define NATTRS (sizeof(e_attrs) / sizeof(e_attrs[0]))

static struct buf record;
static struct entry_view entry;
static struct buf scratch;
static struct arena mem; /* every filter a test decodes, freed after it */

static void build_entry(void)
{
	LDAPMod mods[NATTRS], *modp[NATTRS + 1];
	struct berval vals[NATTRS][4], *valp[NATTRS][5];
	for (size_t i = 0; i < NATTRS; i++) {
		size_t j = 0;
		for (; e_attrs[i].vals[j]; j++) {
			vals[i][j].bv_val = (char *)e_attrs[i].vals[j];
			vals[i][j].bv_len = strlen(e_attrs[i].vals[j]);
			valp[i][j] = &vals[i][j];
		}
		valp[i][j] = NULL;
		mods[i].mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
		mods[i].mod_type = (char *)e_attrs[i].type;
		mods[i].mod_bvalues = valp[i];
		modp[i] = &mods[i];
	}
	modp[NATTRS] = NULL;
	const char key[] = "dc=com\0dc=example\0ou=people\0uid=alice\0";
	struct berval dn = {strlen("uid=alice,ou=people,dc=example,dc=com"),
	                    (char *)"uid=alice,ou=people,dc=example,dc=com"};
	memset(&record, 0, sizeof(record));
	memset(&scratch, 0, sizeof(scratch));
	memset(&mem, 0, sizeof(mem));
	ck_assert_int_eq(
	    entry_encode(&record, 7, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(record.data, record.len, &entry), 0);
	ck_assert_uint_gt(entry.attrslen, 0);
}

static void free_entry(void)
{
	buf_free(&record);
	buf_free(&scratch);
	arena_free(&mem);
}

/* ---- building filters ---- */

static BerElement *writer(void)
{
	BerElement *w = ber_alloc_t(LBER_USE_DER);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Decodes a filter from raw bytes into mem; NULL unless it is one filter and nothing more. */
static struct filter *decode_bytes(const void *p, size_t n)
{
	struct ber_in in = ber_in_make(p, n);
	struct filter *f = filter_decode(&in, &mem, &scratch);
	return ber_in_end(&in) ? f : NULL;
}

/* Flattens w (freed), decodes one filter from the bytes. */
static struct filter *finish(BerElement *w)
{
	struct berval *flat = NULL;
	ck_assert_int_eq(ber_flatten(w, &flat), 0);
	ber_free(w, 1);
	struct filter *f = decode_bytes(flat->bv_val, flat->bv_len);
	ber_bvfree(flat);
	return f;
}

/* Value assertion: equality, >=, <=, ~=. */
static void put_ava(BerElement *w, ber_tag_t tag, const char *attr, const char *val)
{
	ck_assert_int_ge(ber_printf(w, "t{ss}", tag, attr, val), 0);
}

static void put_eq(BerElement *w, const char *attr, const char *val)
{
	put_ava(w, LDAP_FILTER_EQUALITY, attr, val);
}

static void put_present(BerElement *w, const char *attr)
{
	ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_FILTER_PRESENT, attr), 0);
}

/* Substrings: initial and final may be NULL; any is a NULL-terminated list or NULL. */
static void put_substr(BerElement *w, const char *attr, const char *initial, const char *const *any,
                       const char *final)
{
	ck_assert_int_ge(ber_printf(w, "t{s{", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, attr), 0);
	if (initial)
		ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_SUBSTRING_INITIAL, initial),
		                 0);
	for (size_t i = 0; any && any[i]; i++)
		ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_SUBSTRING_ANY, any[i]), 0);
	if (final)
		ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_SUBSTRING_FINAL, final), 0);
	ck_assert_int_ge(ber_printf(w, "}}"), 0);
}

static void open_set(BerElement *w, ber_tag_t tag)
{
	ck_assert_int_ge(ber_printf(w, "t{", tag), 0);
}

static void close_set(BerElement *w)
{
	ck_assert_int_ge(ber_printf(w, "}"), 0);
}

static struct filter *eq_filter(const char *attr, const char *val)
{
	BerElement *w = writer();
	put_eq(w, attr, val);
	return finish(w);
}

static struct filter *ava_filter(ber_tag_t tag, const char *attr, const char *val)
{
	BerElement *w = writer();
	put_ava(w, tag, attr, val);
	return finish(w);
}

static struct filter *ext_filter(const char *rule, const char *attr, const char *val)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "t{tstststb}", (ber_tag_t)LDAP_FILTER_EXT,
	                            (ber_tag_t)LDAP_FILTER_EXT_OID, rule,
	                            (ber_tag_t)LDAP_FILTER_EXT_TYPE, attr,
	                            (ber_tag_t)LDAP_FILTER_EXT_VALUE, val,
	                            (ber_tag_t)LDAP_FILTER_EXT_DNATTRS, (ber_int_t)0),
	                 0);
	return finish(w);
}

static enum filter_result eval(const struct filter *f)
{
	return filter_eval(f, entry.attrs, entry.attrslen, &scratch);
}

/* Evaluates a filter that must have decoded. */
static enum filter_result eval_decoded(struct filter *f)
{
	ck_assert_ptr_nonnull(f);
	enum filter_result r = eval(f);
	return r;
}

#define ASSERT_EQ_RESULT(attr, val, want)                                                          \
	ck_assert_msg(eval_decoded(eq_filter(attr, val)) == (want), "(%s=%s) not %s", attr, val,   \
	              #want)
#define ASSERT_AVA_RESULT(tag, attr, val, want)                                                    \
	ck_assert_msg(eval_decoded(ava_filter(tag, attr, val)) == (want), "%s %s %s not %s", attr, \
	              #tag, val, #want)

/* ---- decoding ---- */

START_TEST(decode_equality_fields)
{
	struct filter *f = eq_filter("UID", "  Alice   ");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->kind, FILTER_EQ);
	ck_assert_str_eq(f->attr, "uid"); /* lowercased */
	ck_assert_uint_eq(f->attr_len, 3);
	ck_assert_int_eq(f->rule, MATCH_CASE_IGNORE);
	ck_assert_uint_eq(f->value.len, 5); /* normal form */
	ck_assert_mem_eq(f->value.val, "alice", 5);
	ck_assert(!f->invalid);

	f = eq_filter("member", "UID=Bob, OU=People,DC=Example,DC=Com");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->rule, MATCH_DN);
	ck_assert_str_eq(f->value.val, "uid=bob,ou=people,dc=example,dc=com");
}
END_TEST

START_TEST(decode_and_or_structure)
{
	BerElement *w = writer();
	open_set(w, LDAP_FILTER_AND);
	put_eq(w, "uid", "alice");
	open_set(w, LDAP_FILTER_OR);
	put_present(w, "mail");
	put_eq(w, "sn", "x");
	put_eq(w, "sn", "y");
	close_set(w);
	close_set(w);
	struct filter *f = finish(w);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->kind, FILTER_AND);
	ck_assert_ptr_null(f->next);
	const struct filter *c = f->child;
	ck_assert_int_eq(c->kind, FILTER_EQ);
	c = c->next;
	ck_assert_int_eq(c->kind, FILTER_OR);
	ck_assert_ptr_null(c->next);
	int n = 0;
	for (const struct filter *g = c->child; g; g = g->next)
		n++;
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(c->child->kind, FILTER_PRESENT);
}
END_TEST

START_TEST(decode_depth_limit)
{
	/* FILTER_MAX_DEPTH levels decode; one more is refused. */
	for (int nots = FILTER_MAX_DEPTH - 1; nots <= FILTER_MAX_DEPTH + 10; nots++) {
		BerElement *w = writer();
		for (int i = 0; i < nots; i++)
			open_set(w, LDAP_FILTER_NOT);
		put_eq(w, "uid", "alice");
		for (int i = 0; i < nots; i++)
			close_set(w);
		struct filter *f = finish(w);
		if (nots + 1 <= FILTER_MAX_DEPTH) {
			ck_assert_msg(f != NULL, "%d levels refused", nots + 1);
			/* An odd number of NOTs around a true assertion is false. */
			ck_assert_int_eq(eval(f), nots % 2 ? FILTER_FALSE : FILTER_TRUE);
		} else {
			ck_assert_msg(f == NULL, "%d levels accepted", nots + 1);
		}
	}
	/* The same through nested ANDs. */
	BerElement *w = writer();
	for (int i = 0; i < 200; i++)
		open_set(w, LDAP_FILTER_AND);
	put_present(w, "uid");
	for (int i = 0; i < 200; i++)
		close_set(w);
	ck_assert_ptr_null(finish(w));
}
END_TEST

START_TEST(decode_malformed_bytes)
{
	/* equalityMatch without its value */
	const unsigned char no_value[] = {0xa3, 0x05, 0x04, 0x03, 'u', 'i', 'd'};
	ck_assert_ptr_null(decode_bytes(no_value, sizeof(no_value)));
	/* equalityMatch whose length runs past the end */
	const unsigned char truncated[] = {0xa3, 0x10, 0x04, 0x03, 'u', 'i', 'd', 0x04, 0x01, 'a'};
	ck_assert_ptr_null(decode_bytes(truncated, sizeof(truncated)));
	/* empty attribute description */
	const unsigned char empty_attr[] = {0xa3, 0x05, 0x04, 0x00, 0x04, 0x01, 'a'};
	ck_assert_ptr_null(decode_bytes(empty_attr, sizeof(empty_attr)));
	/* present with an empty description */
	const unsigned char empty_present[] = {0x87, 0x00};
	ck_assert_ptr_null(decode_bytes(empty_present, sizeof(empty_present)));
	/* NOT with nothing inside */
	const unsigned char empty_not[] = {0xa2, 0x00};
	ck_assert_ptr_null(decode_bytes(empty_not, sizeof(empty_not)));
	/* AND whose second operand is cut short */
	const unsigned char bad_child[] = {0xa0, 0x0a, 0x87, 0x03, 'u', 'i', 'd',
	                                   0xa3, 0x05, 0x04, 0x03, 'u', 'i', 'd'};
	ck_assert_ptr_null(decode_bytes(bad_child, sizeof(bad_child)));
	/* nothing at all */
	ck_assert_ptr_null(decode_bytes("", 0));
	/* random garbage */
	const unsigned char garbage[] = {0xff, 0xff, 0xff, 0x01, 0x02};
	ck_assert_ptr_null(decode_bytes(garbage, sizeof(garbage)));
}
END_TEST

START_TEST(decode_truncated_and_or)
{
	/*
	 * An AND or OR whose declared length runs past the end of the input is
	 * malformed. It must not decode as the empty set: (&) is absolute true,
	 * so a truncated AND would match every entry.
	 */
	const unsigned char and[] = {0xa0, 0x10, 0x87, 0x03, 'u', 'i', 'd'};
	const unsigned char or [] = {0xa1, 0x10, 0x87, 0x03, 'u', 'i', 'd'};
	const unsigned char and_hdr_only[] = {0xa0, 0x05};
	const unsigned char not_and[] = {0xa2, 0x02, 0xa0, 0x09};
	struct filter *f = decode_bytes(and, sizeof(and));
	ck_assert_msg(f == NULL, "truncated AND decoded (kind %d, evaluates to %d)",
	              f ? (int)f->kind : -1, f ? (int)eval(f) : -1);
	f = decode_bytes(or, sizeof(or));
	ck_assert_msg(f == NULL, "truncated OR decoded");
	f = decode_bytes(and_hdr_only, sizeof(and_hdr_only));
	ck_assert_msg(f == NULL, "AND header without content decoded");
	f = decode_bytes(not_and, sizeof(not_and));
	ck_assert_msg(f == NULL, "NOT of a truncated AND decoded");
}
END_TEST

START_TEST(decode_unknown_tag)
{
	/* Context tags 10 and up are not Filter choices; nor are universal ones. */
	const unsigned char tags[] = {0xaa, 0x8a, 0xab, 0xbe, 0x30, 0x04, 0x83, 0xa7};
	for (size_t i = 0; i < sizeof(tags); i++) {
		unsigned char in[] = {tags[i], 0x05, 0x04, 0x03, 'u', 'i', 'd'};
		struct filter *f = decode_bytes(in, sizeof(in));
		ck_assert_msg(f == NULL, "tag 0x%02x accepted", tags[i]);
	}
	/* An unknown choice nested inside an OR. */
	const unsigned char nested[] = {0xa1, 0x07, 0xaa, 0x05, 0x04, 0x03, 'u', 'i', 'd'};
	ck_assert_ptr_null(decode_bytes(nested, sizeof(nested)));
}
END_TEST

START_TEST(decode_bad_substrings)
{
	BerElement *w;
	/* no pieces at all */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "t{s{}}", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, "cn"), 0);
	ck_assert_ptr_null(finish(w));
	/* initial after any */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "t{s{tsts}}", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, "cn",
	                            (ber_tag_t)LDAP_SUBSTRING_ANY, "a",
	                            (ber_tag_t)LDAP_SUBSTRING_INITIAL, "b"),
	                 0);
	ck_assert_ptr_null(finish(w));
	/* two finals */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "t{s{tsts}}", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, "cn",
	                            (ber_tag_t)LDAP_SUBSTRING_FINAL, "a",
	                            (ber_tag_t)LDAP_SUBSTRING_FINAL, "b"),
	                 0);
	ck_assert_ptr_null(finish(w));
	/* any after final */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "t{s{tsts}}", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, "cn",
	                            (ber_tag_t)LDAP_SUBSTRING_FINAL, "a",
	                            (ber_tag_t)LDAP_SUBSTRING_ANY, "b"),
	                 0);
	ck_assert_ptr_null(finish(w));
	/* unknown piece tag */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "t{s{ts}}", (ber_tag_t)LDAP_FILTER_SUBSTRINGS, "cn",
	                            (ber_tag_t)0x83, "a"),
	                 0);
	ck_assert_ptr_null(finish(w));
	/* an empty piece, which RFC 4515 cannot write (slapd: protocolError), in each place */
	static const char *const empty_any[] = {"a", "", NULL}, *const one_any[] = {"a", NULL};
	w = writer();
	put_substr(w, "cn", NULL, empty_any, NULL);
	ck_assert_ptr_null(finish(w));
	w = writer();
	put_substr(w, "cn", "", one_any, NULL);
	ck_assert_ptr_null(finish(w));
	w = writer();
	put_substr(w, "cn", NULL, one_any, "");
	ck_assert_ptr_null(finish(w));
}
END_TEST

/* FILTER_MAX_PIECES pieces decode; one more is malformed. */
START_TEST(decode_substrings_piece_limit)
{
	const char *any[FILTER_MAX_PIECES + 1];
	for (size_t i = 0; i < FILTER_MAX_PIECES; i++)
		any[i] = "z";
	any[FILTER_MAX_PIECES] = NULL;
	BerElement *w = writer();
	put_substr(w, "cn", NULL, any, NULL);
	struct filter *f = finish(w);
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(f->nany, FILTER_MAX_PIECES);
	w = writer();
	put_substr(w, "cn", "a", any, NULL);
	ck_assert_ptr_null(finish(w));
}
END_TEST

START_TEST(decode_extensible)
{
	struct filter *f = ext_filter("caseExactMatch", "cn", "Alice Smith");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->kind, FILTER_EXT);
	/* An extensible match without a matchValue is malformed. */
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "t{ts}", (ber_tag_t)LDAP_FILTER_EXT,
	                            (ber_tag_t)LDAP_FILTER_EXT_TYPE, "cn"),
	                 0);
	ck_assert_ptr_null(finish(w));
}
END_TEST

/* ---- evaluation ---- */

START_TEST(eval_equality)
{
	ASSERT_EQ_RESULT("uid", "alice", FILTER_TRUE);
	ASSERT_EQ_RESULT("uid", "ALICE", FILTER_TRUE);
	ASSERT_EQ_RESULT("UID", "Alice", FILTER_TRUE);
	ASSERT_EQ_RESULT("uid", " alice ", FILTER_TRUE);
	ASSERT_EQ_RESULT("uid", "alic", FILTER_FALSE);
	ASSERT_EQ_RESULT("uid", "alicea", FILTER_FALSE);
	ASSERT_EQ_RESULT("uid", "bob", FILTER_FALSE);
	ASSERT_EQ_RESULT("objectclass", "INETORGPERSON", FILTER_TRUE);
	ASSERT_EQ_RESULT("objectClass", "organizationalUnit", FILTER_FALSE);
	/* Multi-valued: any value matches. */
	ASSERT_EQ_RESULT("cn", "ali", FILTER_TRUE);
	ASSERT_EQ_RESULT("cn", "alice   smith", FILTER_TRUE);
	/* Absent attribute: false, not undefined. */
	ASSERT_EQ_RESULT("givenName", "alice", FILTER_FALSE);
	/* Only the named attribute is looked at. */
	ASSERT_EQ_RESULT("sn", "alice", FILTER_FALSE);
	/* A type with a common prefix is another attribute. */
	ASSERT_EQ_RESULT("ui", "alice", FILTER_FALSE);
	/* approxMatch is evaluated as equality. */
	ASSERT_AVA_RESULT(LDAP_FILTER_APPROX, "cn", "ALICE SMITH", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_APPROX, "cn", "alicia", FILTER_FALSE);
}
END_TEST

START_TEST(eval_presence)
{
	const char *present[] = {"mail", "objectClass", "OBJECTCLASS", "member", "uidNumber"};
	for (size_t i = 0; i < sizeof(present) / sizeof(present[0]); i++) {
		BerElement *w = writer();
		put_present(w, present[i]);
		ck_assert_msg(eval_decoded(finish(w)) == FILTER_TRUE, "(%s=*) not true",
		              present[i]);
	}
	const char *absent[] = {"fax", "userPassword", "mai", "mailx"};
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		BerElement *w = writer();
		put_present(w, absent[i]);
		ck_assert_msg(eval_decoded(finish(w)) == FILTER_FALSE, "(%s=*) not false",
		              absent[i]);
	}
}
END_TEST

START_TEST(eval_and_or_not)
{
	BerElement *w;
	/* (&(uid=alice)(sn=smith)) */
	w = writer();
	open_set(w, LDAP_FILTER_AND);
	put_eq(w, "uid", "alice");
	put_eq(w, "sn", "smith");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_TRUE);
	/* (&(uid=alice)(sn=jones)) */
	w = writer();
	open_set(w, LDAP_FILTER_AND);
	put_eq(w, "uid", "alice");
	put_eq(w, "sn", "jones");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_FALSE);
	/* (|(uid=bob)(sn=smith)) */
	w = writer();
	open_set(w, LDAP_FILTER_OR);
	put_eq(w, "uid", "bob");
	put_eq(w, "sn", "smith");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_TRUE);
	/* (|(uid=bob)(sn=jones)) */
	w = writer();
	open_set(w, LDAP_FILTER_OR);
	put_eq(w, "uid", "bob");
	put_eq(w, "sn", "jones");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_FALSE);
	/* (!(uid=bob)) and (!(uid=alice)) */
	w = writer();
	open_set(w, LDAP_FILTER_NOT);
	put_eq(w, "uid", "bob");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_TRUE);
	w = writer();
	open_set(w, LDAP_FILTER_NOT);
	put_eq(w, "uid", "alice");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_FALSE);
	/* (!(fax=*)) */
	w = writer();
	open_set(w, LDAP_FILTER_NOT);
	put_present(w, "fax");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_TRUE);
	/* (&(objectClass=person)(|(uid=bob)(!(mail=*))(cn=ali))) */
	w = writer();
	open_set(w, LDAP_FILTER_AND);
	put_eq(w, "objectClass", "person");
	open_set(w, LDAP_FILTER_OR);
	put_eq(w, "uid", "bob");
	open_set(w, LDAP_FILTER_NOT);
	put_present(w, "mail");
	close_set(w);
	put_eq(w, "cn", "ali");
	close_set(w);
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_TRUE);
}
END_TEST

START_TEST(eval_empty_and_or)
{
	/* RFC 4526 absolute true and false: (&) and (|). */
	const unsigned char and[] = {0xa0, 0x00}, or [] = {0xa1, 0x00};
	ck_assert_int_eq(eval_decoded(decode_bytes(and, sizeof(and))), FILTER_TRUE);
	ck_assert_int_eq(eval_decoded(decode_bytes(or, sizeof(or))), FILTER_FALSE);
}
END_TEST

static enum filter_result substr(const char *attr, const char *initial, const char *const *any,
                                 const char *final)
{
	BerElement *w = writer();
	put_substr(w, attr, initial, any, final);
	return eval_decoded(finish(w));
}

START_TEST(eval_substrings)
{
	const char *const ce_s[] = {"CE S", NULL};
	const char *const i_e[] = {"i", "e", NULL};
	const char *const bob[] = {"bob", NULL};
	const char *const smith_alice[] = {"smith", "alice", NULL};
	const char *const lice[] = {"lice", NULL};
	const char *const ice_ice[] = {"ice", "ice", NULL};
	ck_assert_int_eq(substr("cn", "ali", NULL, NULL), FILTER_TRUE);
	ck_assert_int_eq(substr("cn", "ALICE S", NULL, NULL), FILTER_TRUE);
	ck_assert_int_eq(substr("cn", "lice", NULL, NULL), FILTER_FALSE);
	ck_assert_int_eq(substr("cn", NULL, NULL, "SMITH"), FILTER_TRUE);
	ck_assert_int_eq(substr("cn", NULL, NULL, "smit"), FILTER_FALSE);
	ck_assert_int_eq(substr("cn", NULL, ce_s, NULL), FILTER_TRUE);
	ck_assert_int_eq(substr("cn", "a", i_e, "h"), FILTER_TRUE);
	ck_assert_int_eq(substr("cn", NULL, bob, NULL), FILTER_FALSE);
	/* any pieces must appear in order */
	ck_assert_int_eq(substr("cn", NULL, smith_alice, NULL), FILTER_FALSE);
	/* and must not overlap one another */
	ck_assert_int_eq(substr("cn", NULL, ice_ice, NULL), FILTER_FALSE);
	/* initial and final must not overlap: "ali" is both start and end of nothing */
	ck_assert_int_eq(substr("uid", "alice", NULL, "alice"), FILTER_FALSE);
	ck_assert_int_eq(substr("uid", "al", NULL, "ce"), FILTER_TRUE);
	ck_assert_int_eq(substr("uid", "ali", NULL, "ice"), FILTER_FALSE);
	/* an any piece cannot reuse the initial's characters */
	ck_assert_int_eq(substr("uid", "alice", lice, NULL), FILTER_FALSE);
	/* absent attribute */
	ck_assert_int_eq(substr("givenName", "a", NULL, NULL), FILTER_FALSE);
	/* substrings of a DN-valued attribute compare as caseIgnore strings */
	ck_assert_int_eq(substr("member", "UID=Bob", NULL, NULL), FILTER_TRUE);
}
END_TEST

START_TEST(eval_ordering_strings)
{
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "sn", "s", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "sn", "SMITH", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "sn", "smithz", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "sn", "t", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "sn", "smith", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "sn", "Z", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "sn", "sm", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "sn", "a", FILTER_FALSE);
	/* roomNumber is a string: "10" sorts before "9". */
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "roomNumber", "9", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "roomNumber", "9", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "givenName", "a", FILTER_FALSE);
}
END_TEST

START_TEST(eval_ordering_integers)
{
	/* uidNumber is an integer: 9 < 10 < 11. */
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "9", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "uidNumber", "9", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "10", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "uidNumber", "10", FILTER_TRUE);
	/* RFC 4517 INTEGER has no leading zeros or '+': such assertions are Undefined. */
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "uidNumber", "010", FILTER_UNDEFINED);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "+010", FILTER_UNDEFINED);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "11", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "uidNumber", "100", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "100", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "-5", FILTER_TRUE);
	ASSERT_AVA_RESULT(LDAP_FILTER_LE, "uidNumber", "-5", FILTER_FALSE);
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "-100", FILTER_TRUE);
	ASSERT_EQ_RESULT("uidNumber", "0010", FILTER_UNDEFINED);
	ASSERT_EQ_RESULT("uidNumber", "1", FILTER_FALSE);
	/* Not an integer: undefined. */
	ASSERT_AVA_RESULT(LDAP_FILTER_GE, "uidNumber", "ten", FILTER_UNDEFINED);
	ASSERT_EQ_RESULT("uidNumber", "1x", FILTER_UNDEFINED);
}
END_TEST

START_TEST(eval_telephone)
{
	ASSERT_EQ_RESULT("telephoneNumber", "+1 555-0100", FILTER_TRUE);
	ASSERT_EQ_RESULT("telephoneNumber", "+15550100", FILTER_TRUE);
	ASSERT_EQ_RESULT("telephoneNumber", "+1-555-01-00", FILTER_TRUE);
	ASSERT_EQ_RESULT("telephonenumber", " + 1 5 5 5 0 1 0 0 ", FILTER_TRUE);
	ASSERT_EQ_RESULT("telephoneNumber", "+1 555 0101", FILTER_FALSE);
	ASSERT_EQ_RESULT("telephoneNumber", "5550100", FILTER_FALSE);
}
END_TEST

START_TEST(eval_dn_valued)
{
	ASSERT_EQ_RESULT("member", "uid=bob,ou=people,dc=example,dc=com", FILTER_TRUE);
	ASSERT_EQ_RESULT("member", "UID=bob, ou=People,  DC=example,dc=COM", FILTER_TRUE);
	ASSERT_EQ_RESULT("member", "uid=Carol,ou=People,dc=Example,dc=Com", FILTER_TRUE);
	ASSERT_EQ_RESULT("member", "uid=dave,ou=people,dc=example,dc=com", FILTER_FALSE);
	ASSERT_EQ_RESULT("member", "uid=bob,ou=people,dc=example", FILTER_FALSE);
	/* An assertion that is not a DN is undefined, not an error. */
	ASSERT_EQ_RESULT("member", "not a dn", FILTER_UNDEFINED);
}
END_TEST

START_TEST(decode_extensible_repeats)
{
	/* A type given twice (each copy once leaked) is malformed, as is a second value. */
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "t{tststs}", (ber_tag_t)LDAP_FILTER_EXT,
	                            (ber_tag_t)LDAP_FILTER_EXT_TYPE, "cn",
	                            (ber_tag_t)LDAP_FILTER_EXT_TYPE, "sn",
	                            (ber_tag_t)LDAP_FILTER_EXT_VALUE, "x"),
	                 0);
	ck_assert_ptr_null(finish(w));
	w = writer();
	ck_assert_int_ge(ber_printf(w, "t{tststs}", (ber_tag_t)LDAP_FILTER_EXT,
	                            (ber_tag_t)LDAP_FILTER_EXT_TYPE, "cn",
	                            (ber_tag_t)LDAP_FILTER_EXT_VALUE, "x",
	                            (ber_tag_t)LDAP_FILTER_EXT_VALUE, "y"),
	                 0);
	ck_assert_ptr_null(finish(w));
}
END_TEST

START_TEST(eval_extensible)
{
	/* caseExactMatch sees case; caseIgnoreMatch does not; both by name or OID. */
	ck_assert_int_eq(eval_decoded(ext_filter("caseExactMatch", "cn", "Alice Smith")),
	                 FILTER_TRUE);
	ck_assert_int_eq(eval_decoded(ext_filter("caseExactMatch", "cn", "alice smith")),
	                 FILTER_FALSE);
	ck_assert_int_eq(eval_decoded(ext_filter("caseIgnoreMatch", "cn", "ALICE SMITH")),
	                 FILTER_TRUE);
	ck_assert_int_eq(eval_decoded(ext_filter("2.5.13.2", "cn", "alice  smith")), FILTER_TRUE);
	/* An ordering rule matches values below the assertion; a substrings rule is undefined. */
	ck_assert_int_eq(eval_decoded(ext_filter("caseIgnoreOrderingMatch", "cn", "a")),
	                 FILTER_FALSE);
	ck_assert_int_eq(eval_decoded(ext_filter("caseIgnoreOrderingMatch", "cn", "zzz")),
	                 FILTER_TRUE);
	ck_assert_int_eq(eval_decoded(ext_filter("caseIgnoreSubstringsMatch", "cn", "a")),
	                 FILTER_UNDEFINED);
}
END_TEST

static bool refuse_all(const struct attr_gate *g, const char *type, size_t len)
{
	(void)g, (void)type, (void)len;
	return false;
}

/* The in-chain rule (filter.h's chain): marked at decoding, Undefined until a search attaches
 * its IDs, then a test of the entry's ID; never a value's match. */
START_TEST(eval_in_chain)
{
	struct filter *f = ext_filter(FILTER_IN_CHAIN_OID, "memberOf", "CN=G, DC=Example");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->chain, FILTER_CHAIN_MEMBERS);
	ck_assert_str_eq(f->value.val, "cn=g,dc=example");
	struct filter_ctx ctx = {.scratch = &scratch, .id = 7};
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_UNDEFINED);
	static const uint32_t ids[] = {3, 7, 9};
	filter_chain_set(f, ids, 3);
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_TRUE);
	for (uint32_t id = 1; id < 12; id++) {
		ctx.id = id;
		ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx),
		                 id == 3 || id == 7 || id == 9 ? FILTER_TRUE : FILTER_FALSE);
	}
	ctx.id = 0; /* an entry whose ID is not known */
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_UNDEFINED);
	ctx.id = 7;
	struct attr_gate gate = {.allows = refuse_all};
	ctx.gate = &gate; /* memberOf not searchable */
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_UNDEFINED);
	ctx.gate = NULL;
	filter_chain_set(f, NULL, 0); /* a group DN that names no entry */
	ck_assert_int_eq(filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx), FILTER_FALSE);
	/* Matched Values: no value matches, not even the group's own DN. */
	const char *t = "memberOf", *v = "cn=g,dc=example";
	ck_assert(!filter_values_match(f, (const unsigned char *)t, strlen(t),
	                               (const unsigned char *)v, strlen(v), &scratch));
	struct buf text = {0};
	filter_to_string(f, &text);
	ck_assert_str_eq((char *)text.data, "(memberof:1.2.840.113556.1.4.1941:=cn=g,dc=example)");
	buf_free(&text);
	/* member and uniqueMember ask for groups; the NAME works as the OID does. */
	ck_assert_int_eq(ext_filter(FILTER_IN_CHAIN_OID, "member", "uid=u,dc=x")->chain,
	                 FILTER_CHAIN_GROUPS);
	ck_assert_int_eq(ext_filter(FILTER_IN_CHAIN_OID, "uniqueMember", "uid=u,dc=x")->chain,
	                 FILTER_CHAIN_GROUPS);
	ck_assert_int_eq(ext_filter("inchainmatch", "memberOf", "cn=g,dc=x")->chain,
	                 FILTER_CHAIN_MEMBERS);
	/* Another type, a value that is not a DN, options: Undefined, never resolved. */
	const char *const bad[][2] = {{"cn", "cn=g,dc=x"},
	                              {"memberOf", "not a dn"},
	                              {"member;x", "uid=u,dc=x"},
	                              {"memberOf", ""}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct filter *b = ext_filter(FILTER_IN_CHAIN_OID, bad[i][0], bad[i][1]);
		ck_assert_ptr_nonnull(b);
		ck_assert_msg(b->chain == FILTER_CHAIN_NONE && b->invalid, "%s", bad[i][0]);
		ck_assert_int_eq(filter_eval_ctx(b, entry.attrs, entry.attrslen, &ctx),
		                 FILTER_UNDEFINED);
	}
}
END_TEST

START_TEST(eval_three_valued)
{
	BerElement *w;
	/* An extensible match with a rule the server does not know is undefined. */
	ck_assert_int_eq(eval_decoded(ext_filter("unknownMatch", "cn", "Alice Smith")),
	                 FILTER_UNDEFINED);
	/* NOT undefined is undefined. */
	w = writer();
	open_set(w, LDAP_FILTER_NOT);
	ck_assert_int_ge(ber_printf(w, "t{tstststb}", (ber_tag_t)LDAP_FILTER_EXT,
	                            (ber_tag_t)LDAP_FILTER_EXT_OID, "unknownMatch",
	                            (ber_tag_t)LDAP_FILTER_EXT_TYPE, "cn",
	                            (ber_tag_t)LDAP_FILTER_EXT_VALUE, "x",
	                            (ber_tag_t)LDAP_FILTER_EXT_DNATTRS, (ber_int_t)0),
	                 0);
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_UNDEFINED);
	/* NOT of an invalid assertion value is undefined as well. */
	w = writer();
	open_set(w, LDAP_FILTER_NOT);
	put_eq(w, "member", "not a dn");
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_UNDEFINED);

	/* AND: false wins over undefined, in either order; undefined wins over true. */
	const ber_tag_t sets[] = {LDAP_FILTER_AND, LDAP_FILTER_OR};
	const enum filter_result with_false[] = {FILTER_FALSE, FILTER_UNDEFINED};
	const enum filter_result with_true[] = {FILTER_UNDEFINED, FILTER_TRUE};
	for (int s = 0; s < 2; s++) {
		for (int order = 0; order < 2; order++) {
			w = writer();
			open_set(w, sets[s]);
			if (order == 0)
				put_eq(w, "member", "not a dn");
			put_eq(w, "uid", "bob"); /* false */
			if (order == 1)
				put_eq(w, "member", "not a dn");
			close_set(w);
			ck_assert_msg(eval_decoded(finish(w)) == with_false[s],
			              "set %d order %d with a false operand", s, order);

			w = writer();
			open_set(w, sets[s]);
			if (order == 0)
				put_eq(w, "member", "not a dn");
			put_eq(w, "uid", "alice"); /* true */
			if (order == 1)
				put_eq(w, "member", "not a dn");
			close_set(w);
			ck_assert_msg(eval_decoded(finish(w)) == with_true[s],
			              "set %d order %d with a true operand", s, order);
		}
	}
	/* NOT(AND(undefined, false)) is true. */
	w = writer();
	open_set(w, LDAP_FILTER_NOT);
	open_set(w, LDAP_FILTER_AND);
	put_eq(w, "uidNumber", "abc");
	put_eq(w, "uid", "bob");
	close_set(w);
	close_set(w);
	ck_assert_int_eq(eval_decoded(finish(w)), FILTER_TRUE);
}
END_TEST

START_TEST(eval_stored_value_invalid_for_rule)
{
	/* A stored member value that is not a DN does not stop another value matching. */
	LDAPMod m = {.mod_op = LDAP_MOD_BVALUES, .mod_type = (char *)"member"};
	struct berval v1 = {8, (char *)"garbage!"}, v2 = {6, (char *)"dc=com"};
	struct berval *vals[] = {&v1, &v2, NULL};
	m.mod_bvalues = vals;
	LDAPMod *mods[] = {&m, NULL};
	struct berval dn = {6, (char *)"cn=x,dc=com"};
	dn.bv_len = strlen(dn.bv_val);
	struct buf rec = {0};
	ck_assert_int_eq(entry_encode(&rec, 1, (const unsigned char *)"k\0", 2, &dn, mods), 0);
	struct entry_view e;
	ck_assert_int_eq(entry_parse(rec.data, rec.len, &e), 0);
	struct filter *f = eq_filter("member", "DC=COM");
	ck_assert_int_eq(filter_eval(f, e.attrs, e.attrslen, &scratch), FILTER_TRUE);
	f = eq_filter("member", "dc=org");
	ck_assert_int_ne(filter_eval(f, e.attrs, e.attrslen, &scratch), FILTER_TRUE);
	buf_free(&rec);
}
END_TEST

START_TEST(to_string_nested)
{
	/* (&(UID=Alice)(|(cn=ali*ce*)(!(mail=*)))(uidNumber>=10)(description=a\2ab)) */
	const char *const ce[] = {"CE", NULL};
	BerElement *w = writer();
	open_set(w, LDAP_FILTER_AND);
	put_eq(w, "UID", "Alice");
	open_set(w, LDAP_FILTER_OR);
	put_substr(w, "cn", "ali", ce, NULL);
	open_set(w, LDAP_FILTER_NOT);
	put_present(w, "mail");
	close_set(w);
	close_set(w);
	put_ava(w, LDAP_FILTER_GE, "uidNumber", "10");
	put_eq(w, "description", "a*b(c)");
	put_ava(w, LDAP_FILTER_LE, "sn", "m");
	put_ava(w, LDAP_FILTER_APPROX, "cn", "Bob");
	close_set(w);
	struct filter *f = finish(w);
	ck_assert_ptr_nonnull(f);
	struct buf out = {0};
	filter_to_string(f, &out);
	const char *want = "(&(uid=alice)(|(cn=ali*ce*)(!(mail=*)))(uidnumber>=10)"
	                   "(description=a\\2ab\\28c\\29)(sn<=m)(cn~=bob))";
	ck_assert_uint_eq(out.len, strlen(want));
	ck_assert_str_eq((const char *)out.data, want); /* NUL-terminated */
	buf_free(&out);
}
END_TEST

START_TEST(to_string_substr_final)
{
	BerElement *w = writer();
	put_substr(w, "sn", NULL, NULL, "ITH");
	struct filter *f = finish(w);
	ck_assert_ptr_nonnull(f);
	struct buf out = {0};
	filter_to_string(f, &out);
	ck_assert_str_eq((const char *)out.data, "(sn=*ith)");
	buf_free(&out);
}
END_TEST

/* filter_uses with the mask of the names' lengths. */
static bool uses(const struct filter *f, const char *const *names, size_t n)
{
	uint64_t lens = 0;
	for (size_t i = 0; i < n; i++)
		lens |= FILTER_NAME_LEN_BIT(strlen(names[i]));
	return filter_uses(f, names, n, lens);
}

/* filter_uses: any item, nested or not, naming one of the names, case aside. */
START_TEST(uses_names)
{
	static const char *const computed[] = {"createTimestamp", "entryDN", "memberOf"};
	static const char *const other[] = {"Description", "sn", "2.5.4.3"};
	struct filter *f = filter_from_string("(&(uid=x)(|(ENTRYDN=y)(!(cn=z))))", &mem);
	ck_assert_ptr_nonnull(f);
	ck_assert(uses(f, computed, 3));
	ck_assert(!uses(f, computed + 2, 1)); /* memberOf alone */
	ck_assert(!uses(f, other, 3));
	f = filter_from_string("(!(&(sn=a)(description=*)))", &mem);
	ck_assert_ptr_nonnull(f);
	ck_assert(uses(f, other, 1)); /* "Description" */
	ck_assert(!uses(f, computed, 3));
	f = filter_from_string("(2.5.4.3=x)", &mem);
	ck_assert_ptr_nonnull(f);
	ck_assert(uses(f, other, 3));
	ck_assert(!uses(f, other, 2));
	/* An in-chain item on memberOf reads no memberOf values; an equality item does. */
	f = filter_from_string("(|(memberOf:1.2.840.113556.1.4.1941:=cn=g,dc=x)(uid=y))", &mem);
	ck_assert_ptr_nonnull(f);
	ck_assert(!uses(f, computed + 2, 1));
	f = filter_from_string("(|(memberOf:1.2.840.113556.1.4.1941:=cn=g,dc=x)(memberOf=cn=h))",
	                       &mem);
	ck_assert_ptr_nonnull(f);
	ck_assert(uses(f, computed + 2, 1));
}
END_TEST

static Suite *filter_suite(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("decode");
	tcase_add_checked_fixture(tc, build_entry, free_entry);
	tcase_add_test(tc, decode_equality_fields);
	tcase_add_test(tc, decode_and_or_structure);
	tcase_add_test(tc, decode_depth_limit);
	tcase_add_test(tc, decode_malformed_bytes);
	tcase_add_test(tc, decode_truncated_and_or);
	tcase_add_test(tc, decode_unknown_tag);
	tcase_add_test(tc, decode_bad_substrings);
	tcase_add_test(tc, decode_substrings_piece_limit);
	tcase_add_test(tc, decode_extensible);
	suite_add_tcase(s, tc);

	tc = tcase_create("eval");
	tcase_add_checked_fixture(tc, build_entry, free_entry);
	tcase_add_test(tc, eval_equality);
	tcase_add_test(tc, eval_presence);
	tcase_add_test(tc, eval_and_or_not);
	tcase_add_test(tc, eval_empty_and_or);
	tcase_add_test(tc, eval_substrings);
	tcase_add_test(tc, eval_ordering_strings);
	tcase_add_test(tc, eval_ordering_integers);
	tcase_add_test(tc, eval_telephone);
	tcase_add_test(tc, eval_dn_valued);
	tcase_add_test(tc, eval_three_valued);
	tcase_add_test(tc, eval_extensible);
	tcase_add_test(tc, eval_in_chain);
	tcase_add_test(tc, decode_extensible_repeats);
	tcase_add_test(tc, eval_stored_value_invalid_for_rule);
	tcase_add_test(tc, uses_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("to_string");
	tcase_add_test(tc, to_string_nested);
	tcase_add_test(tc, to_string_substr_final);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(filter_suite());
}
