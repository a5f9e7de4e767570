/*
 * Unit tests for protocol/response.c: responses are decoded back with liblber
 * (an independent BER decoder) and compared with what was encoded.
 */
#include <check.h>
#include <stdio.h>
#include <lber.h>
#include <ldap.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/frame.h"
#include "protocol/response.h"
#include "storage/entry.h"
#include "tests/check_run.h"

/* ---- a stored entry ---- */

#define MAX_VALS 4
struct test_attr {
	const char *type;
	const char *vals[MAX_VALS + 1];
};

static const struct test_attr attrs_in[] = {
    {"objectClass", {"top", "person", "inetOrgPerson", NULL}},
    {"uid", {"alice", NULL}},
    {"cn", {"Alice Smith", NULL}},
    {"mail", {"alice@example.com", "a.smith@example.com", NULL}},
    {"userPassword", {"{SSHA}secret", NULL}},
    {"description", {"", NULL}}, /* an empty value */
};
#define NATTRS (sizeof(attrs_in) / sizeof(attrs_in[0]))
static const char entry_dn[] = "uid=alice,ou=people,dc=example,dc=com";

static struct buf record;
static struct entry_view entry;
static char *big_value; /* optional long description value */

static void encode_entry(size_t big)
{
	LDAPMod mods[NATTRS], *modp[NATTRS + 1];
	struct berval vals[NATTRS][MAX_VALS], *valp[NATTRS][MAX_VALS + 1];
	for (size_t i = 0; i < NATTRS; i++) {
		size_t j = 0;
		for (; attrs_in[i].vals[j]; j++) {
			const char *v = attrs_in[i].vals[j];
			if (big && strcmp(attrs_in[i].type, "description") == 0) {
				big_value = malloc(big);
				ck_assert_ptr_nonnull(big_value);
				for (size_t k = 0; k < big; k++)
					big_value[k] = (char)('a' + k % 26);
				vals[i][j].bv_val = big_value;
				vals[i][j].bv_len = big;
			} else {
				vals[i][j].bv_val = (char *)v;
				vals[i][j].bv_len = strlen(v);
			}
			valp[i][j] = &vals[i][j];
		}
		valp[i][j] = NULL;
		mods[i].mod_op = LDAP_MOD_BVALUES;
		mods[i].mod_type = (char *)attrs_in[i].type;
		mods[i].mod_bvalues = valp[i];
		modp[i] = &mods[i];
	}
	modp[NATTRS] = NULL;
	struct berval dn = {sizeof(entry_dn) - 1, (char *)entry_dn};
	const char key[] = "dc=com\0dc=example\0ou=people\0uid=alice\0";
	memset(&record, 0, sizeof(record));
	ck_assert_int_eq(
	    entry_encode(&record, 3, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(record.data, record.len, &entry), 0);
}

static void setup(void)
{
	big_value = NULL;
	encode_entry(0);
}

static void setup_big(void)
{
	big_value = NULL;
	encode_entry(70000);
}

static void teardown(void)
{
	buf_free(&record);
	free(big_value);
}

/* ---- decoding a SearchResultEntry with liblber ---- */

struct got_attr {
	char type[64];
	int nvals;
	struct berval vals[MAX_VALS];
};

#define GOT_MAX_ATTRS 24 /* attributes decode_entry takes */
struct got_entry {
	ber_int_t msgid;
	struct berval dn;
	int nattrs;
	struct got_attr attrs[GOT_MAX_ATTRS];
	BerElement *ber; /* owns the bytes the bervals point to */
};

/* Decodes one whole PDU at p[0..n) (framing checked first). */
static void decode_entry(const unsigned char *p, size_t n, struct got_entry *g)
{
	size_t pdu_len = 0;
	ck_assert_int_eq(frame_next(p, n, (size_t)1 << 30, &pdu_len), FRAME_OK);
	ck_assert_uint_eq(pdu_len, n);
	memset(g, 0, sizeof(*g));
	struct berval bv = {n, (char *)p};
	g->ber = ber_init(&bv);
	ck_assert_ptr_nonnull(g->ber);
	BerElement *b = g->ber;
	ber_len_t len;
	char *last, *vlast;
	ck_assert_uint_eq(ber_skip_tag(b, &len), LBER_SEQUENCE);
	ck_assert_uint_eq(ber_get_int(b, &g->msgid), LBER_INTEGER);
	ck_assert_uint_eq(ber_skip_tag(b, &len), LDAP_RES_SEARCH_ENTRY);
	ck_assert_uint_eq(ber_get_stringbv(b, &g->dn, LBER_BV_NOTERM), LBER_OCTETSTRING);
	for (ber_tag_t t = ber_first_element(b, &len, &last); t != LBER_DEFAULT;
	     t = ber_next_element(b, &len, last)) {
		ck_assert_int_lt(g->nattrs, GOT_MAX_ATTRS);
		struct got_attr *a = &g->attrs[g->nattrs++];
		struct berval type;
		ck_assert_uint_eq(t, LBER_SEQUENCE);
		ck_assert_uint_eq(ber_skip_tag(b, &len), LBER_SEQUENCE);
		ck_assert_uint_eq(ber_get_stringbv(b, &type, LBER_BV_NOTERM), LBER_OCTETSTRING);
		ck_assert_uint_lt(type.bv_len, sizeof(a->type));
		memcpy(a->type, type.bv_val, type.bv_len);
		ck_assert_uint_eq(ber_peek_tag(b, &len), LBER_SET);
		if (len == 0) { /* an empty SET: step over its header */
			ck_assert_uint_eq(ber_skip_tag(b, &len), LBER_SET);
			continue;
		}
		for (ber_tag_t v = ber_first_element(b, &len, &vlast); v != LBER_DEFAULT;
		     v = ber_next_element(b, &len, vlast)) {
			ck_assert_int_lt(a->nvals, MAX_VALS);
			ck_assert_uint_eq(ber_get_stringbv(b, &a->vals[a->nvals++], LBER_BV_NOTERM),
			                  LBER_OCTETSTRING);
		}
		ck_assert_int_gt(a->nvals, 0);
	}
	ck_assert_uint_eq(ber_peek_tag(b, &len), LBER_DEFAULT); /* nothing after */
}

static void free_got(struct got_entry *g)
{
	ber_free(g->ber, 1);
}

static const struct got_attr *find_got(const struct got_entry *g, const char *type)
{
	for (int i = 0; i < g->nattrs; i++)
		if (strcasecmp(g->attrs[i].type, type) == 0)
			return &g->attrs[i];
	return NULL;
}

/* The stored attribute's values come back unchanged, in order. */
static void assert_values_of(const struct got_attr *a, const struct test_attr *in)
{
	int n = 0;
	while (in->vals[n])
		n++;
	ck_assert_int_eq(a->nvals, n);
	for (int j = 0; j < n; j++) {
		const char *v = in->vals[j];
		size_t vlen = strlen(v);
		if (big_value && strcmp(in->type, "description") == 0) {
			ck_assert_uint_eq(a->vals[j].bv_len, 70000);
			ck_assert_mem_eq(a->vals[j].bv_val, big_value, 70000);
			continue;
		}
		ck_assert_uint_eq(a->vals[j].bv_len, vlen);
		if (vlen)
			ck_assert_mem_eq(a->vals[j].bv_val, v, vlen);
	}
}

static void assert_dn(const struct got_entry *g)
{
	ck_assert_uint_eq(g->dn.bv_len, sizeof(entry_dn) - 1);
	ck_assert_mem_eq(g->dn.bv_val, entry_dn, sizeof(entry_dn) - 1);
}

/* ---- response_result ---- */

struct got_result {
	ber_int_t msgid;
	ber_tag_t optag;
	ber_int_t rc;
	struct berval matched, message, oid;
	bool have_oid;
	BerElement *ber;
};

static void decode_result(const unsigned char *p, size_t n, struct got_result *r)
{
	size_t pdu_len = 0;
	ck_assert_int_eq(frame_next(p, n, (size_t)1 << 30, &pdu_len), FRAME_OK);
	ck_assert_uint_eq(pdu_len, n);
	memset(r, 0, sizeof(*r));
	struct berval bv = {n, (char *)p};
	r->ber = ber_init(&bv);
	ck_assert_ptr_nonnull(r->ber);
	ber_len_t len;
	ck_assert_uint_ne(ber_scanf(r->ber, "{i", &r->msgid), LBER_ERROR);
	r->optag = ber_peek_tag(r->ber, &len);
	ck_assert_uint_ne(ber_scanf(r->ber, "{emm", &r->rc, &r->matched, &r->message), LBER_ERROR);
	if (ber_peek_tag(r->ber, &len) == LDAP_TAG_EXOP_RES_OID) {
		ck_assert_uint_ne(ber_scanf(r->ber, "m", &r->oid), LBER_ERROR);
		r->have_oid = true;
	}
	ck_assert_uint_ne(ber_scanf(r->ber, "}}"), LBER_ERROR);
	ck_assert_uint_eq(ber_peek_tag(r->ber, &len), LBER_DEFAULT);
}

static void assert_bv(const struct berval *bv, const char *want)
{
	ck_assert_msg(bv->bv_len == strlen(want) && memcmp(bv->bv_val, want, bv->bv_len) == 0,
	              "got \"%.*s\", expected \"%s\"", (int)bv->bv_len, bv->bv_val, want);
}

START_TEST(result_search_done)
{
	struct buf out = {0};
	ck_assert_int_eq(response_result(&out, 5, LDAP_RES_SEARCH_RESULT, LDAP_NO_SUCH_OBJECT,
	                                 "dc=example,dc=com", "no such entry", NULL),
	                 0);
	struct got_result r;
	decode_result(out.data, out.len, &r);
	ck_assert_int_eq(r.msgid, 5);
	ck_assert_uint_eq(r.optag, LDAP_RES_SEARCH_RESULT);
	ck_assert_int_eq(r.rc, LDAP_NO_SUCH_OBJECT);
	assert_bv(&r.matched, "dc=example,dc=com");
	assert_bv(&r.message, "no such entry");
	ck_assert(!r.have_oid);
	ber_free(r.ber, 1);
	buf_free(&out);
}
END_TEST

START_TEST(result_empty_strings)
{
	struct buf out = {0};
	ck_assert_int_eq(response_result(&out, 1, LDAP_RES_BIND, LDAP_SUCCESS, NULL, NULL, NULL),
	                 0);
	/* 30 0c 02 01 01 61 07 0a 01 00 04 00 04 00: the minimal BindResponse. */
	const unsigned char want[] = {0x30, 0x0c, 0x02, 0x01, 0x01, 0x61, 0x07,
	                              0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00};
	ck_assert_uint_eq(out.len, sizeof(want));
	ck_assert_mem_eq(out.data, want, sizeof(want));
	buf_free(&out);
}
END_TEST

START_TEST(result_msgids_and_codes)
{
	const ber_int_t ids[] = {0, 1, 127, 128, 255, 256, 65536, 0x7fffffff};
	const int codes[] = {LDAP_SUCCESS,
	                     LDAP_PROTOCOL_ERROR,
	                     LDAP_SIZELIMIT_EXCEEDED,
	                     LDAP_UNAVAILABLE_CRITICAL_EXTENSION,
	                     LDAP_INVALID_CREDENTIALS,
	                     LDAP_OTHER};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (size_t j = 0; j < sizeof(codes) / sizeof(codes[0]); j++) {
			struct buf out = {0};
			ck_assert_int_eq(response_result(&out, ids[i], LDAP_RES_SEARCH_RESULT,
			                                 codes[j], NULL, "m", NULL),
			                 0);
			struct got_result r;
			decode_result(out.data, out.len, &r);
			ck_assert_int_eq(r.msgid, ids[i]);
			ck_assert_int_eq(r.rc, codes[j]);
			assert_bv(&r.message, "m");
			ber_free(r.ber, 1);
			buf_free(&out);
		}
	}
}
END_TEST

/* The plain result (no matchedDN, message or extra: response_result_ex's short path) is
 * byte for byte what the general path writes for empty ones. */
START_TEST(result_plain_as_general)
{
	const ber_int_t ids[] = {0,     1,     127,   128,      255,      256,
	                         32767, 32768, 65536, 0x7fffff, 0x800000, 0x7fffffff};
	const int codes[] = {LDAP_SUCCESS, LDAP_SIZELIMIT_EXCEEDED, LDAP_OTHER, 127, 128, 4096};
	const unsigned char tags[] = {LDAP_RES_SEARCH_RESULT, LDAP_RES_BIND, LDAP_RES_COMPARE};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		for (size_t j = 0; j < sizeof(codes) / sizeof(codes[0]); j++)
			for (size_t k = 0; k < sizeof(tags); k++) {
				struct buf plain = {0}, general = {0};
				ck_assert_int_eq(response_result(&plain, ids[i], tags[k], codes[j],
				                                 NULL, NULL, NULL),
				                 0);
				ck_assert_int_eq(response_result(&general, ids[i], tags[k],
				                                 codes[j], "", "", NULL),
				                 0);
				ck_assert_uint_eq(plain.len, general.len);
				ck_assert_mem_eq(plain.data, general.data, plain.len);
				buf_free(&plain);
				buf_free(&general);
			}
}
END_TEST

START_TEST(result_long_message)
{
	/* Messages whose length needs long-form lengths at every level. */
	const size_t sizes[] = {100, 120, 127, 128, 200, 250, 255, 256, 300, 70000};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *msg = malloc(sizes[i] + 1);
		ck_assert_ptr_nonnull(msg);
		for (size_t k = 0; k < sizes[i]; k++)
			msg[k] = (char)('A' + k % 26);
		msg[sizes[i]] = '\0';
		struct buf out = {0};
		ck_assert_int_eq(response_result(&out, 77, LDAP_RES_SEARCH_RESULT, LDAP_OTHER,
		                                 "cn=x", msg, NULL),
		                 0);
		struct got_result r;
		decode_result(out.data, out.len, &r);
		ck_assert_int_eq(r.msgid, 77);
		ck_assert_int_eq(r.rc, LDAP_OTHER);
		assert_bv(&r.matched, "cn=x");
		ck_assert_uint_eq(r.message.bv_len, sizes[i]);
		ck_assert_mem_eq(r.message.bv_val, msg, sizes[i]);
		ber_free(r.ber, 1);
		buf_free(&out);
		free(msg);
	}
}
END_TEST

START_TEST(result_extended_with_oid)
{
	struct buf out = {0};
	ck_assert_int_eq(response_result(&out, 0, LDAP_RES_EXTENDED, LDAP_PROTOCOL_ERROR, NULL,
	                                 "bad PDU", RESPONSE_NOTICE_OF_DISCONNECTION),
	                 0);
	struct got_result r;
	decode_result(out.data, out.len, &r);
	ck_assert_int_eq(r.msgid, 0);
	ck_assert_uint_eq(r.optag, LDAP_RES_EXTENDED);
	ck_assert_int_eq(r.rc, LDAP_PROTOCOL_ERROR);
	ck_assert_uint_eq(r.matched.bv_len, 0);
	assert_bv(&r.message, "bad PDU");
	ck_assert(r.have_oid);
	assert_bv(&r.oid, RESPONSE_NOTICE_OF_DISCONNECTION);
	ber_free(r.ber, 1);
	buf_free(&out);
}
END_TEST

START_TEST(result_referral)
{
	/* LDAPResult with referral [3] SEQUENCE OF URI (RFC 4511 4.1.9), as updateref sends it. */
	struct buf out = {0};
	struct result_extra x = {.referral = "ldap://provider.example:389/"};
	ck_assert_int_eq(
	    response_result_ex(&out, 9, LDAP_RES_MODIFY, LDAP_REFERRAL, NULL, "go", &x), 0);
	struct berval bv = {out.len, (char *)out.data}, matched, msg, url;
	BerElement *ber = ber_init(&bv);
	ck_assert_ptr_nonnull(ber);
	ber_int_t msgid, rc;
	ber_len_t len;
	ck_assert_int_ne(ber_scanf(ber, "{i{emm", &msgid, &rc, &matched, &msg), LBER_ERROR);
	ck_assert_int_eq(msgid, 9);
	ck_assert_int_eq(rc, LDAP_REFERRAL);
	assert_bv(&msg, "go");
	ck_assert_uint_eq(ber_peek_tag(ber, &len), LDAP_TAG_REFERRAL);
	ck_assert_int_ne(ber_scanf(ber, "{m}}}", &url), LBER_ERROR);
	assert_bv(&url, "ldap://provider.example:389/");
	ber_free(ber, 1);
	buf_free(&out);
}
END_TEST

START_TEST(result_appends)
{
	/* Responses queue up in one buffer; earlier ones stay intact. */
	struct buf out = {0};
	size_t starts[60];
	for (int i = 0; i < 60; i++) {
		char msg[300];
		memset(msg, 'x', sizeof(msg) - 1);
		msg[(i * 37) % (int)(sizeof(msg) - 1)] = '\0';
		starts[i] = out.len;
		ck_assert_int_eq(
		    response_result(&out, i, LDAP_RES_SEARCH_RESULT, i % 5, NULL, msg, NULL), 0);
	}
	for (int i = 0; i < 60; i++) {
		size_t end = i + 1 < 60 ? starts[i + 1] : out.len;
		struct got_result r;
		decode_result(out.data + starts[i], end - starts[i], &r);
		ck_assert_int_eq(r.msgid, i);
		ck_assert_int_eq(r.rc, i % 5);
		ck_assert_uint_eq(r.message.bv_len, (size_t)((i * 37) % 299));
		ber_free(r.ber, 1);
	}
	buf_free(&out);
}
END_TEST

/* ---- response_entry ---- */

START_TEST(entry_all_verbatim)
{
	struct attr_select sel;
	attr_select_init(&sel, NULL, 0, false);
	ck_assert(sel.all_user);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 9, entry.op, entry.oplen, &sel), 0);
	/* 30 L 02 01 09, then the stored protocolOp byte for byte. */
	size_t hdr = out.len - entry.oplen;
	ck_assert_uint_eq(out.data[0], 0x30);
	ck_assert_uint_eq(out.data[hdr - 3], 0x02);
	ck_assert_uint_eq(out.data[hdr - 2], 0x01);
	ck_assert_uint_eq(out.data[hdr - 1], 0x09);
	ck_assert_mem_eq(out.data + hdr, entry.op, entry.oplen);

	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.msgid, 9);
	assert_dn(&g);
	ck_assert_int_eq(g.nattrs, (int)NATTRS);
	for (size_t i = 0; i < NATTRS; i++) {
		ck_assert_str_eq(g.attrs[i].type, attrs_in[i].type);
		assert_values_of(&g.attrs[i], &attrs_in[i]);
	}
	free_got(&g);
	buf_free(&out);
}
END_TEST

START_TEST(entry_star_same_as_all)
{
	struct berval names[] = {{1, (char *)"*"}};
	struct attr_select sel;
	attr_select_init(&sel, names, 1, false);
	ck_assert(sel.all_user);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 9, entry.op, entry.oplen, &sel), 0);
	ck_assert_mem_eq(out.data + out.len - entry.oplen, entry.op, entry.oplen);
	buf_free(&out);
}
END_TEST

START_TEST(entry_one_attribute)
{
	const char *spellings[] = {"mail", "MAIL", "Mail"};
	for (size_t s = 0; s < 3; s++) {
		struct berval names[] = {{strlen(spellings[s]), (char *)spellings[s]}};
		struct attr_select sel;
		attr_select_init(&sel, names, 1, false);
		ck_assert(!sel.all_user);
		struct buf out = {0};
		ck_assert_int_eq(response_entry(&out, 300, entry.op, entry.oplen, &sel), 0);
		struct got_entry g;
		decode_entry(out.data, out.len, &g);
		ck_assert_int_eq(g.msgid, 300);
		assert_dn(&g);
		ck_assert_int_eq(g.nattrs, 1);
		ck_assert_str_eq(g.attrs[0].type, "mail"); /* as stored, not as asked */
		assert_values_of(&g.attrs[0], &attrs_in[3]);
		free_got(&g);
		buf_free(&out);
	}
}
END_TEST

START_TEST(entry_several_and_unknown)
{
	struct berval names[] = {{3, (char *)"UID"}, {6, (char *)"nosuch"}, {2, (char *)"cn"}};
	struct attr_select sel;
	attr_select_init(&sel, names, 3, false);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 2, entry.op, entry.oplen, &sel), 0);
	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	/* In stored order, only those named and present. */
	ck_assert_int_eq(g.nattrs, 2);
	ck_assert_str_eq(g.attrs[0].type, "uid");
	ck_assert_str_eq(g.attrs[1].type, "cn");
	assert_values_of(&g.attrs[0], &attrs_in[1]);
	assert_values_of(&g.attrs[1], &attrs_in[2]);
	free_got(&g);
	buf_free(&out);
}
END_TEST

START_TEST(entry_no_attributes)
{
	/* "1.1" alone: the DN and an empty attribute list. */
	struct berval names[] = {{3, (char *)"1.1"}};
	struct attr_select sel;
	attr_select_init(&sel, names, 1, false);
	ck_assert(!sel.all_user);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 4, entry.op, entry.oplen, &sel), 0);
	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	assert_dn(&g);
	ck_assert_int_eq(g.nattrs, 0);
	free_got(&g);
	buf_free(&out);

	/* "1.1" with another name: that name counts. */
	struct berval names2[] = {{3, (char *)"1.1"}, {3, (char *)"uid"}};
	attr_select_init(&sel, names2, 2, false);
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(response_entry(&out, 4, entry.op, entry.oplen, &sel), 0);
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, 1);
	ck_assert_str_eq(g.attrs[0].type, "uid");
	free_got(&g);
	buf_free(&out);
}
END_TEST

START_TEST(entry_types_only)
{
	struct attr_select sel;
	attr_select_init(&sel, NULL, 0, true);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 6, entry.op, entry.oplen, &sel), 0);
	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	assert_dn(&g);
	ck_assert_int_eq(g.nattrs, (int)NATTRS);
	for (size_t i = 0; i < NATTRS; i++) {
		ck_assert_str_eq(g.attrs[i].type, attrs_in[i].type);
		ck_assert_int_eq(g.attrs[i].nvals, 0);
	}
	free_got(&g);
	buf_free(&out);

	/* With a selection too. */
	struct berval names[] = {{4, (char *)"mail"}, {2, (char *)"cn"}};
	attr_select_init(&sel, names, 2, true);
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(response_entry(&out, 6, entry.op, entry.oplen, &sel), 0);
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, 2);
	ck_assert_str_eq(g.attrs[0].type, "cn");
	ck_assert_int_eq(g.attrs[0].nvals, 0);
	ck_assert_str_eq(g.attrs[1].type, "mail");
	ck_assert_int_eq(g.attrs[1].nvals, 0);
	free_got(&g);
	buf_free(&out);
}
END_TEST

/* A gate (attr_gate.h) that refuses userPassword, as the default access rules do. */
static bool allows_all_but_password(const struct attr_gate *g, const char *type, size_t len)
{
	(void)g;
	return !(len == 12 && strncasecmp(type, "userPassword", 12) == 0);
}
static const struct attr_gate no_password = {.allows = allows_all_but_password};

START_TEST(entry_hidden_attribute)
{
	struct attr_select sel;
	attr_select_init(&sel, NULL, 0, false);
	sel.gate = &no_password;
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 8, entry.op, entry.oplen, &sel), 0);
	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, (int)NATTRS - 1);
	ck_assert_ptr_null(find_got(&g, "userPassword"));
	for (size_t i = 0; i < NATTRS; i++) {
		if (strcmp(attrs_in[i].type, "userPassword") == 0)
			continue;
		const struct got_attr *a = find_got(&g, attrs_in[i].type);
		ck_assert_ptr_nonnull(a);
		assert_values_of(a, &attrs_in[i]);
	}
	free_got(&g);
	buf_free(&out);

	/* Hidden even when asked for by name, in any case. */
	struct berval names[] = {{12, (char *)"USERPASSWORD"}, {3, (char *)"uid"}};
	attr_select_init(&sel, names, 2, false);
	sel.gate = &no_password;
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(response_entry(&out, 8, entry.op, entry.oplen, &sel), 0);
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, 1);
	ck_assert_str_eq(g.attrs[0].type, "uid");
	free_got(&g);
	buf_free(&out);

	/* And with types only. */
	attr_select_init(&sel, NULL, 0, true);
	sel.gate = &no_password;
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(response_entry(&out, 8, entry.op, entry.oplen, &sel), 0);
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, (int)NATTRS - 1);
	ck_assert_ptr_null(find_got(&g, "userPassword"));
	free_got(&g);
	buf_free(&out);
}
END_TEST

/* Whether out holds the test entry with every attribute but userPassword. */
static void assert_all_but_password(const struct buf *out)
{
	struct got_entry got;
	decode_entry(out->data, out->len, &got);
	ck_assert_int_eq(got.nattrs, (int)NATTRS - 1);
	ck_assert_ptr_null(find_got(&got, "userPassword"));
	free_got(&got);
}

/* A gate with attr_gate's shortcut: allows is called only for types the shortcut cannot
 * decide (12 or 2 bytes, or a 2-byte name before options), refuses userPassword and cn;x. */
static int shortcut_calls;
static bool shortcut_allows(const struct attr_gate *g, const char *type, size_t len)
{
	(void)g;
	shortcut_calls++;
	ck_assert(len == 12 || len == 2 || (len > 2 && type[2] == ';'));
	return !(len == 12 && strncasecmp(type, "userPassword", 12) == 0) &&
	       !(len == 4 && strncasecmp(type, "cn;x", 4) == 0);
}

START_TEST(gate_shortcut)
{
	struct attr_gate g = {.allows = shortcut_allows,
	                      .has_shortcut = true,
	                      .others = true,
	                      .named_lens = 1u << 12 | 1u << 2};
	shortcut_calls = 0;
	ck_assert(attr_gate_allows(&g, "objectClass", 11));
	ck_assert(attr_gate_allows(&g, "telephoneNumber", 15)); /* bit 12, but no ';' at 12 */
	ck_assert(attr_gate_allows(&g, "description", 11));
	ck_assert_int_eq(shortcut_calls, 0);
	ck_assert(!attr_gate_allows(&g, "userPassword", 12));
	ck_assert(!attr_gate_allows(&g, "cn;x", 4));
	ck_assert(attr_gate_allows(&g, "cn;lang-en", 10));
	ck_assert_int_eq(shortcut_calls, 3);
	g.others = false; /* what the rules give types they do not name */
	ck_assert(!attr_gate_allows(&g, "mail", 4));
	ck_assert(attr_gate_allows(&g, "cn", 2)); /* a named length: asked */
	ck_assert_int_eq(shortcut_calls, 4);

	/* In an answer: userPassword left out, the other types decided without a call. */
	g.others = true;
	struct attr_select sel;
	attr_select_init(&sel, NULL, 0, false);
	sel.gate = &g;
	struct buf out = {0};
	shortcut_calls = 0;
	ck_assert_int_eq(response_entry(&out, 8, entry.op, entry.oplen, &sel), 0);
	ck_assert_int_eq(shortcut_calls, 2); /* userPassword and cn */
	assert_all_but_password(&out);
	buf_free(&out);
}
END_TEST

/* An entry's type summary (attr_gate.h) lets a gate with the shortcut pass it whole: only
 * when no type's length or ';' position is one the gate may tell apart. */
START_TEST(gate_whole_entry_by_summary)
{
	uint32_t sum = entry_type_lens(&entry); /* lengths 11, 3, 2, 4, 12, 11 */
	ck_assert_uint_eq(sum,
	                  ATTR_TYPES_KNOWN | 1u << 11 | 1u << 3 | 1u << 2 | 1u << 4 | 1u << 12);
	struct attr_gate g = {.allows = shortcut_allows, .has_shortcut = true, .others = true};
	g.named_lens = 1u << 12; /* userPassword is in it */
	ck_assert(!attr_gate_allows_all(&g, sum));
	g.named_lens = 1u << 7;
	ck_assert(attr_gate_allows_all(&g, sum));
	ck_assert(attr_gate_allows_all(NULL, 0));
	ck_assert(!attr_gate_allows_all(&g, 0)); /* no summary */
	g.others = false;
	ck_assert(!attr_gate_allows_all(&g, sum));
	g.others = true, g.has_shortcut = false;
	ck_assert(!attr_gate_allows_all(&g, sum));
	g.has_shortcut = true;

	/* options: a ';' position counts as a length */
	uint32_t opt = ATTR_TYPES_KNOWN;
	attr_types_add(&opt, "cn;lang-en", 10);
	ck_assert_uint_eq(opt, ATTR_TYPES_KNOWN | 1u << 10 | 1u << 2);
	g.named_lens = 1u << 2;
	ck_assert(!attr_gate_allows_all(&g, opt));
	g.named_lens = 1u << 3;
	ck_assert(attr_gate_allows_all(&g, opt));
	/* 31 bytes and more share one bit, on both sides */
	uint32_t longer = ATTR_TYPES_KNOWN;
	attr_types_add(&longer, "a23456789012345678901234567890123456", 36);
	g.named_lens = (uint64_t)1 << 40;
	ck_assert(!attr_gate_allows_all(&g, longer));
	ck_assert(attr_gate_allows_all(&g, sum));
	/* a type the shortcut does not decide leaves the summary unknown */
	uint32_t odd = ATTR_TYPES_KNOWN;
	attr_types_add(&odd, ";x", 2);
	ck_assert_uint_eq(odd & ATTR_TYPES_KNOWN, 0);
	attr_types_add(&odd, "cn", 2);
	ck_assert_uint_eq(odd & ATTR_TYPES_KNOWN, 0);
	char big[70];
	memset(big, 'a', sizeof(big));
	odd = ATTR_TYPES_KNOWN;
	attr_types_add(&odd, big, sizeof(big));
	g.named_lens = 0;
	ck_assert(!attr_gate_allows_all(&g, odd));

	/* In an answer: the entry goes out as stored, no type asked for; without the summary
	 * the same bytes, each type decided by the shortcut. */
	for (int known = 0; known < 2; known++) {
		g.named_lens = 1u << 7;
		struct attr_select sel;
		attr_select_init(&sel, NULL, 0, false);
		sel.gate = &g;
		struct stored_entry st = ENTRY_STORED(&entry);
		st.type_lens = known ? sum : 0;
		struct buf out = {0};
		shortcut_calls = 0;
		ck_assert_int_eq(response_stored_entry(&out, 9, &st, &sel, NULL, 0), 0);
		ck_assert_int_eq(shortcut_calls, 0);
		ck_assert_uint_ge(out.len, entry.oplen);
		ck_assert_mem_eq(out.data + out.len - entry.oplen, entry.op, entry.oplen);
		buf_free(&out);
	}
	/* and a summary naming userPassword's length: it is left out as before */
	g.named_lens = 1u << 12;
	struct attr_select sel;
	attr_select_init(&sel, NULL, 0, false);
	sel.gate = &g;
	struct stored_entry st = ENTRY_STORED(&entry);
	st.type_lens = sum;
	struct buf out = {0};
	ck_assert_int_eq(response_stored_entry(&out, 9, &st, &sel, NULL, 0), 0);
	assert_all_but_password(&out);
	buf_free(&out);
}
END_TEST

static bool allows_even_attrs(const struct attr_gate *g, const char *type, size_t len)
{
	(void)g;
	return len >= 2 && (type[len - 1] - '0') % 2 == 0; /* a0, a2, ... a38 */
}
static const struct attr_gate even_attrs = {.allows = allows_even_attrs};

/* Forty attributes, every other one hidden: more runs of selected attributes than
 * response_entry keeps from its first pass, so its second pass walks them again. */
START_TEST(entry_many_hidden_runs)
{
	enum { N = 40 };
	char types[N][4], vals[N][8];
	struct berval bv[N], *bvp[N][2];
	LDAPMod mods[N], *modp[N + 1];
	for (int i = 0; i < N; i++) {
		snprintf(types[i], sizeof(types[i]), "a%d", i);
		snprintf(vals[i], sizeof(vals[i]), "v%d", i);
		bv[i] = (struct berval){strlen(vals[i]), vals[i]};
		bvp[i][0] = &bv[i];
		bvp[i][1] = NULL;
		mods[i] = (LDAPMod){
		    .mod_op = LDAP_MOD_BVALUES, .mod_type = types[i], .mod_bvalues = bvp[i]};
		modp[i] = &mods[i];
	}
	modp[N] = NULL;
	struct berval dn = {sizeof(entry_dn) - 1, (char *)entry_dn};
	const char key[] = "dc=com\0dc=example\0ou=people\0uid=alice\0";
	struct buf rec = {0}, out = {0};
	struct entry_view e;
	ck_assert_int_eq(
	    entry_encode(&rec, 7, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(rec.data, rec.len, &e), 0);
	struct attr_select sel;
	attr_select_init(&sel, NULL, 0, false);
	sel.gate = &even_attrs;
	ck_assert_int_eq(response_entry(&out, 5, e.op, e.oplen, &sel), 0);
	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, N / 2);
	for (int i = 0; i < N / 2; i++) {
		char want[4];
		snprintf(want, sizeof(want), "a%d", 2 * i);
		ck_assert_str_eq(g.attrs[i].type, want);
		ck_assert_int_eq(g.attrs[i].nvals, 1);
	}
	free_got(&g);
	buf_free(&out);
	buf_free(&rec);
}
END_TEST

/* The attributes a hidden_mask gate hides: a<i> when bit i is set. */
static unsigned hidden_mask;
static bool allows_unmasked(const struct attr_gate *g, const char *type, size_t len)
{
	(void)g;
	return !(len == 2 && type[0] == 'a' && (hidden_mask >> (type[1] - '0') & 1));
}
static const struct attr_gate masked = {.allows = allows_unmasked};

/* Every set of hidden attributes among six (the first, the last, neighbours, all, none; one
 * of them longer than 127 bytes, so of a long-form length): all user attributes through the
 * gate (the runs between hidden ones) give the same bytes as the six asked for by name (the
 * walk that tests each), and exactly the attributes the gate lets through, in order. */
START_TEST(entry_every_hidden_set)
{
	enum { N = 6 };
	char types[N][3], vals[N][200];
	struct berval bv[N], *bvp[N][2], names[N];
	LDAPMod mods[N], *modp[N + 1];
	for (int i = 0; i < N; i++) {
		snprintf(types[i], sizeof(types[i]), "a%d", i);
		memset(vals[i], 'a' + i, sizeof(vals[i]));
		bv[i] = (struct berval){i == 3 ? sizeof(vals[i]) : (size_t)i + 1, vals[i]};
		bvp[i][0] = &bv[i];
		bvp[i][1] = NULL;
		mods[i] = (LDAPMod){
		    .mod_op = LDAP_MOD_BVALUES, .mod_type = types[i], .mod_bvalues = bvp[i]};
		modp[i] = &mods[i];
		names[i] = (struct berval){2, types[i]};
	}
	modp[N] = NULL;
	struct berval dn = {sizeof(entry_dn) - 1, (char *)entry_dn};
	const char key[] = "dc=com\0dc=example\0ou=people\0uid=alice\0";
	struct buf rec = {0};
	struct entry_view e;
	ck_assert_int_eq(
	    entry_encode(&rec, 7, (const unsigned char *)key, sizeof(key) - 1, &dn, modp), 0);
	ck_assert_int_eq(entry_parse(rec.data, rec.len, &e), 0);
	for (hidden_mask = 0; hidden_mask < 1u << N; hidden_mask++) {
		struct attr_select all, named_all;
		attr_select_init(&all, NULL, 0, false);
		attr_select_init(&named_all, names, N, false);
		all.gate = named_all.gate = &masked;
		struct buf out = {0}, ref = {0};
		ck_assert_int_eq(response_entry(&out, 5, e.op, e.oplen, &all), 0);
		ck_assert_int_eq(response_entry(&ref, 5, e.op, e.oplen, &named_all), 0);
		ck_assert_uint_eq(out.len, ref.len);
		ck_assert_mem_eq(out.data, ref.data, out.len);
		if (hidden_mask == 0) { /* nothing hidden: as stored, the same as with no gate */
			struct buf open = {0};
			all.gate = NULL;
			ck_assert_int_eq(response_entry(&open, 5, e.op, e.oplen, &all), 0);
			ck_assert_uint_eq(open.len, out.len);
			ck_assert_mem_eq(open.data, out.data, out.len);
			buf_free(&open);
		}
		struct got_entry g;
		decode_entry(out.data, out.len, &g);
		int k = 0;
		for (int i = 0; i < N; i++) {
			if (hidden_mask >> i & 1)
				continue;
			ck_assert_int_lt(k, g.nattrs);
			ck_assert_str_eq(g.attrs[k].type, types[i]);
			ck_assert_int_eq(g.attrs[k].nvals, 1);
			k++;
		}
		ck_assert_int_eq(g.nattrs, k);
		free_got(&g);
		buf_free(&out);
		buf_free(&ref);
	}
	buf_free(&rec);
}
END_TEST

START_TEST(entry_appends_after_other_data)
{
	/* Entries and a final result share one buffer that grows as they are added. */
	struct buf out = {0};
	struct berval names[] = {{4, (char *)"mail"}};
	struct attr_select all, one;
	attr_select_init(&all, NULL, 0, false);
	attr_select_init(&one, names, 1, false);
	size_t starts[41];
	for (int i = 0; i < 40; i++) {
		starts[i] = out.len;
		ck_assert_int_eq(
		    response_entry(&out, 1000 + i, entry.op, entry.oplen, i % 2 ? &one : &all), 0);
	}
	starts[40] = out.len;
	ck_assert_int_eq(response_result(&out, 1040, LDAP_RES_SEARCH_RESULT, 0, NULL, NULL, NULL),
	                 0);
	for (int i = 0; i < 40; i++) {
		struct got_entry g;
		decode_entry(out.data + starts[i], starts[i + 1] - starts[i], &g);
		ck_assert_int_eq(g.msgid, 1000 + i);
		ck_assert_int_eq(g.nattrs, i % 2 ? 1 : (int)NATTRS);
		free_got(&g);
	}
	struct got_result r;
	decode_result(out.data + starts[40], out.len - starts[40], &r);
	ck_assert_int_eq(r.msgid, 1040);
	ber_free(r.ber, 1);
	buf_free(&out);
}
END_TEST

START_TEST(entry_big_value_selected)
{
	/* A 70000-byte value: three-byte lengths in the rebuilt PDU. */
	struct berval names[] = {{11, (char *)"description"}, {3, (char *)"uid"}};
	struct attr_select sel;
	attr_select_init(&sel, names, 2, false);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 70000, entry.op, entry.oplen, &sel), 0);
	struct got_entry g;
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.msgid, 70000);
	ck_assert_int_eq(g.nattrs, 2);
	ck_assert_str_eq(g.attrs[0].type, "uid");
	ck_assert_str_eq(g.attrs[1].type, "description");
	assert_values_of(&g.attrs[1], &attrs_in[5]);
	free_got(&g);
	buf_free(&out);

	/* All attributes, hidden one removed: the rebuilt path with a big entry. */
	attr_select_init(&sel, NULL, 0, false);
	sel.gate = &no_password;
	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(response_entry(&out, 1, entry.op, entry.oplen, &sel), 0);
	decode_entry(out.data, out.len, &g);
	ck_assert_int_eq(g.nattrs, (int)NATTRS - 1);
	assert_values_of(find_got(&g, "description"), &attrs_in[5]);
	free_got(&g);
	buf_free(&out);
}
END_TEST

START_TEST(entry_bad_stored_bytes)
{
	/* A stored entry that does not parse is refused, not sent half-built. */
	struct attr_select sel;
	struct berval names[] = {{3, (char *)"uid"}};
	attr_select_init(&sel, names, 1, false);
	struct buf out = {0};
	ck_assert_int_eq(response_entry(&out, 1, entry.op, entry.oplen - 3, &sel), -1);
	const unsigned char junk[] = {0x64, 0x05, 0x04, 0x09, 'a'};
	ck_assert_int_eq(response_entry(&out, 1, junk, sizeof(junk), &sel), -1);
	buf_free(&out);
}
END_TEST

/* Message IDs of one, two (written inline) and more bytes, in whole entries and through a
 * gate: each decodes back. */
START_TEST(entry_msgids)
{
	static const int32_t ids[] = {0, 1, 127, 128, 255, 256, 0x7fff, 0x8000, 65536, 0x7fffffff};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		for (int gated = 0; gated < 2; gated++) {
			struct attr_select sel;
			attr_select_init(&sel, NULL, 0, false);
			sel.gate = gated ? &no_password : NULL;
			struct buf out = {0};
			ck_assert_int_eq(response_entry(&out, ids[i], entry.op, entry.oplen, &sel),
			                 0);
			struct got_entry g;
			decode_entry(out.data, out.len, &g);
			ck_assert_int_eq(g.msgid, ids[i]);
			ck_assert_int_eq(g.nattrs, (int)NATTRS - gated);
			free_got(&g);
			buf_free(&out);
		}
	}
}
END_TEST

/* Attribute lengths are read inline for what storage writes and by tlv_read otherwise:
 * every byte of the stored entry changed to each of a few values, with all attributes
 * asked for through a gate and by name, each copy in a block of its size (ASan sees a read
 * past it): an answer is either refused or one liblber decodes. */
START_TEST(entry_corrupt_stored_bytes)
{
	static const unsigned char bytes[] = {0x00, 0x01, 0x05, 0x7f, 0x80, 0x81, 0x82, 0x83, 0xff};
	struct berval names[] = {{3, (char *)"uid"}, {4, (char *)"mail"}};
	for (int named = 0; named < 2; named++) {
		struct attr_select sel;
		attr_select_init(&sel, named ? names : NULL, named ? 2 : 0, false);
		sel.gate = &no_password;
		for (size_t i = 0; i < entry.oplen; i++) {
			for (size_t k = 0; k < sizeof(bytes); k++) {
				unsigned char *copy = malloc(entry.oplen);
				ck_assert_ptr_nonnull(copy);
				memcpy(copy, entry.op, entry.oplen);
				copy[i] = bytes[k];
				struct buf out = {0};
				if (response_entry(&out, 1, copy, entry.oplen, &sel) == 0) {
					BerElement *ber =
					    ber_init(&(struct berval){out.len, (char *)out.data});
					ber_len_t len;
					ck_assert_ptr_nonnull(ber);
					ck_assert_uint_eq(ber_peek_tag(ber, &len), LBER_SEQUENCE);
					ck_assert_uint_eq(len + 2 + (len >= 0x80) + (len > 0xff),
					                  out.len);
					ber_free(ber, 1);
				}
				buf_free(&out);
				free(copy);
			}
		}
	}
}
END_TEST

static Suite *response_suite(void)
{
	Suite *s = suite_create("response");
	TCase *tc = tcase_create("result");
	tcase_add_test(tc, result_search_done);
	tcase_add_test(tc, result_empty_strings);
	tcase_add_test(tc, result_msgids_and_codes);
	tcase_add_test(tc, result_plain_as_general);
	tcase_add_test(tc, result_long_message);
	tcase_add_test(tc, result_extended_with_oid);
	tcase_add_test(tc, result_referral);
	tcase_add_test(tc, result_appends);
	suite_add_tcase(s, tc);

	tc = tcase_create("entry");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, entry_all_verbatim);
	tcase_add_test(tc, entry_star_same_as_all);
	tcase_add_test(tc, entry_one_attribute);
	tcase_add_test(tc, entry_several_and_unknown);
	tcase_add_test(tc, entry_no_attributes);
	tcase_add_test(tc, entry_types_only);
	tcase_add_test(tc, entry_hidden_attribute);
	tcase_add_test(tc, entry_many_hidden_runs);
	tcase_add_test(tc, entry_every_hidden_set);
	tcase_add_test(tc, gate_shortcut);
	tcase_add_test(tc, gate_whole_entry_by_summary);
	tcase_add_test(tc, entry_corrupt_stored_bytes);
	tcase_add_test(tc, entry_msgids);
	tcase_add_test(tc, entry_appends_after_other_data);
	tcase_add_test(tc, entry_bad_stored_bytes);
	suite_add_tcase(s, tc);

	tc = tcase_create("entry_big");
	tcase_add_checked_fixture(tc, setup_big, teardown);
	tcase_add_test(tc, entry_big_value_selected);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(response_suite());
}
