/* The lean engine's BER (tools/searchrate/leanber.c): its requests against the bytes libldap
 * itself sends for the same calls (captured on a socketpair), its filters patched per value
 * against libldap's encoding of each expansion, and its response framing against messages
 * built with liblber, whole, cut at every byte, and broken. */
#include <check.h>
#include <openldap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <lber.h>
#include <ldap.h>

#include "tests/tools/searchrate_check.h"
#include "tools/searchrate/leanber.h"
#include "tools/searchrate/pattern.h"

/* ---- helpers ------------------------------------------------------------------------------ */

/* Re-encodes the TLVs of in[0..n) with minimal definite lengths (recursing into constructed
 * ones) into out; returns the length written, or 0 when in is not well-formed BER. BER lets a
 * sender choose its length forms (liblber writes 4-byte ones), so this is how two encodings
 * are compared. */
static size_t canon(const unsigned char *in, size_t n, unsigned char *out)
{
	size_t i = 0, o = 0;
	while (i < n) {
		unsigned tag = in[i++];
		if (i >= n)
			return 0;
		size_t len = in[i++];
		if (len & 0x80) {
			size_t k = len & 0x7f;
			if (k == 0 || k > 4 || i + k > n)
				return 0;
			len = 0;
			while (k--)
				len = len << 8 | in[i++];
		}
		if (len > n - i)
			return 0;
		unsigned char tmp[8192];
		size_t clen = len;
		const unsigned char *content = in + i;
		if (tag & 0x20) {
			ck_assert_uint_le(len, sizeof(tmp));
			clen = len ? canon(in + i, len, tmp) : 0;
			if (len && !clen)
				return 0;
			content = tmp;
		}
		out[o++] = (unsigned char)tag;
		if (clen < 0x80) {
			out[o++] = (unsigned char)clen;
		} else {
			size_t k = clen < 0x100 ? 1 : clen < 0x10000 ? 2 : 3;
			out[o++] = (unsigned char)(0x80 | k);
			while (k--)
				out[o++] = (unsigned char)(clen >> (8 * k));
		}
		memcpy(out + o, content, clen);
		o += clen;
		i += len;
	}
	return o;
}

static void assert_same_ber(const unsigned char *a, size_t alen, const unsigned char *b,
                            size_t blen)
{
	static unsigned char ca[8192], cb[8192];
	size_t na = canon(a, alen, ca), nb = canon(b, blen, cb);
	ck_assert_uint_gt(na, 0);
	ck_assert_uint_eq(na, nb);
	ck_assert_mem_eq(ca, cb, na);
}

/* A libldap handle whose messages land in the other end of a socketpair. */
static LDAP *ld;
static int peer;

static void setup(void)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(ldap_init_fd(sv[0], LDAP_PROTO_TCP, "ldap://127.0.0.1", &ld),
	                 LDAP_SUCCESS);
	int version = LDAP_VERSION3;
	ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &version);
	peer = sv[1];
}

static void teardown(void)
{
	ldap_unbind_ext(ld, NULL, NULL);
	close(peer);
}

/* What libldap wrote to the socketpair since the last call. */
static size_t sent_by_libldap(unsigned char *buf, size_t cap)
{
	ssize_t n = recv(peer, buf, cap, MSG_DONTWAIT);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

/* The filter string's BER from libldap. */
static struct berval filter_ber(const char *filter)
{
	struct berval bv = {0, NULL};
	char *copy = strdup(filter);
	ck_assert_int_eq(ldap_create_assertion_control_value(ld, copy, &bv), LDAP_SUCCESS);
	free(copy);
	return bv;
}

/* ---- requests ----------------------------------------------------------------------------- */

struct search_case {
	const char *base;
	int scope;
	const char *filter;
	char *attrs[4];
	int sizelimit, timelimit;
};

static const struct search_case search_cases[] = {
    {"dc=test,dc=org", LDAP_SCOPE_SUBTREE, "(uid=user1)", {NULL}, 0, 0},
    {"",
     LDAP_SCOPE_BASE,
     "(objectClass=*)",
     {"namingContexts", "supportedLDAPVersion", NULL},
     0,
     0},
    {"ou=people,dc=test,dc=org",
     LDAP_SCOPE_ONELEVEL,
     "(&(objectClass=person)(|(cn=a*b*c)(!(sn~=x))))",
     {"1.1", NULL},
     500,
     3600},
    {"dc=test,dc=org", LDAP_SCOPE_SUBORDINATE, "(uidNumber>=1000)", {"*", "+", NULL}, 70000, 128},
};

START_TEST(search_is_libldaps_request)
{
	const struct search_case *sc = &search_cases[_i];
	struct timeval tl = {sc->timelimit, 0};
	int msgid;
	ck_assert_int_eq(ldap_search_ext(ld, sc->base, sc->scope, sc->filter,
	                                 sc->attrs[0] ? (char **)sc->attrs : NULL, 0, NULL, NULL,
	                                 sc->timelimit ? &tl : NULL, sc->sizelimit, &msgid),
	                 LDAP_SUCCESS);
	unsigned char theirs[4096], ours[4096];
	size_t n = sent_by_libldap(theirs, sizeof(theirs));

	struct lb_search s;
	ck_assert(lb_search_init(&s, sc->scope, sc->sizelimit, sc->timelimit,
	                         sc->attrs[0] ? sc->attrs : NULL));
	struct berval f = filter_ber(sc->filter);
	size_t max = lb_search_max(&s, strlen(sc->base), f.bv_len);
	size_t len = lb_put_search(ours, &s, msgid, sc->base, strlen(sc->base),
	                           (unsigned char *)f.bv_val, f.bv_len);
	ck_assert_uint_le(len, max);
	assert_same_ber(ours, len, theirs, n);
	/* and it frames as a whole message of its own */
	struct lb_msg m;
	size_t need;
	ck_assert_int_eq(lb_frame(ours, len, 1 << 20, &m, &need), (long)len);
	ck_assert_int_eq(m.msgid, msgid);
	ck_assert_uint_eq(m.op, LB_OP_SEARCH_REQUEST);
	ber_memfree(f.bv_val);
	lb_search_free(&s);
}
END_TEST

START_TEST(bind_and_unbind_are_libldaps)
{
	const char *dn = "uid=user1,ou=people,dc=test,dc=org", *pw = "secret1";
	struct berval cred = {strlen(pw), (char *)pw};
	int msgid;
	ck_assert_int_eq(ldap_sasl_bind(ld, dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, &msgid),
	                 LDAP_SUCCESS);
	unsigned char theirs[1024], ours[1024];
	size_t n = sent_by_libldap(theirs, sizeof(theirs));
	size_t len = lb_put_bind(ours, msgid, dn, strlen(dn), pw, strlen(pw));
	ck_assert_uint_le(len, lb_bind_max(strlen(dn), strlen(pw)));
	assert_same_ber(ours, len, theirs, n);

	/* a long password: long-form lengths */
	char big[300];
	memset(big, 'p', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cred = (struct berval){strlen(big), big};
	ck_assert_int_eq(ldap_sasl_bind(ld, dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, &msgid),
	                 LDAP_SUCCESS);
	n = sent_by_libldap(theirs, sizeof(theirs));
	len = lb_put_bind(ours, msgid, dn, strlen(dn), big, strlen(big));
	assert_same_ber(ours, len, theirs, n);

	/* ldap_unbind_ext sends an UnbindRequest with the next message ID */
	len = lb_put_unbind(ours, msgid + 1);
	ck_assert_uint_le(len, LB_UNBIND_MAX);
	ldap_unbind_ext(ld, NULL, NULL);
	ld = NULL;
	n = sent_by_libldap(theirs, sizeof(theirs));
	assert_same_ber(ours, len, theirs, n);
	ck_assert_int_eq(ldap_initialize(&ld, "ldap://127.0.0.1"), LDAP_SUCCESS); /* for teardown */
}
END_TEST

START_TEST(message_ids_of_every_size)
{
	static const int ids[] = {1,     127,   128,     255,     256,
	                          32767, 32768, 8388607, 8388608, 2147483647};
	struct lb_search s;
	ck_assert(lb_search_init(&s, LDAP_SCOPE_SUBTREE, 0, 0, NULL));
	struct berval f = filter_ber("(uid=x)");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		unsigned char buf[256];
		size_t len =
		    lb_put_search(buf, &s, ids[i], "o=x", 3, (unsigned char *)f.bv_val, f.bv_len);
		BerElement *ber = ber_init(&(struct berval){len, (char *)buf});
		ber_int_t id = 0;
		ck_assert_uint_ne(ber_scanf(ber, "{i", &id), LBER_ERROR);
		ck_assert_int_eq(id, ids[i]);
		ber_free(ber, 1);
		struct lb_msg m;
		size_t need;
		ck_assert_int_eq(lb_frame(buf, len, 1024, &m, &need), (long)len);
		ck_assert_int_eq(m.msgid, ids[i]);
	}
	ber_memfree(f.bv_val);
	lb_search_free(&s);
}
END_TEST

/* ---- filters patched per value ------------------------------------------------------------ */

/* Expands src n times and checks each lb_filter_get against libldap; returns the encodings
 * lb_filter_get asked libldap for. */
static uint64_t check_filters(const char *src, int n)
{
	struct pattern p;
	char err[256];
	ck_assert_msg(pattern_parse(&p, src, err, sizeof(err)), "%s", err);
	struct lb_filter f;
	ck_assert(lb_filter_init(&f, p.maxlen));
	char *buf = malloc(p.maxlen + 1);
	struct pattern_span spans[16];
	ck_assert_uint_le(p.nranges, 16);
	uint64_t rng = 42;
	for (int i = 0; i < n; i++) {
		const char *e = pattern_expand_spans(&p, &rng, buf, spans);
		size_t len;
		int rc;
		const unsigned char *ber =
		    lb_filter_get(&f, e, strlen(e), spans, p.nranges, &len, &rc);
		ck_assert_msg(ber, "%s: rc %d", e, rc);
		struct berval want = filter_ber(e);
		ck_assert_msg(len == want.bv_len && !memcmp(ber, want.bv_val, len),
		              "%s: not libldap's encoding", e);
		ber_memfree(want.bv_val);
	}
	uint64_t encodes = f.encodes;
	free(buf);
	lb_filter_free(&f);
	pattern_free(&p);
	return encodes;
}

START_TEST(filters_are_patched_per_value)
{
	/* 1 to 4 digits: four shapes, each learned with two encodings, then only patched */
	ck_assert_uint_le(check_filters("(uid=user.[0-9999])", 3000), 2 * 4);
	/* two ranges, one padded, one sequential, in an AND with a substring */
	ck_assert_uint_le(
	    check_filters("(&(objectClass=person)(uid=user.[0-99%0000])(cn=*[5:-20]*x))", 3000),
	    2 * LB_SHAPES);
	/* a range in the attribute description and negative numbers */
	ck_assert_uint_le(check_filters("(employeeNumber[1-1]>=[-50-50])", 500), 2 * 4);
	/* no ranges: encoded once */
	ck_assert_uint_le(check_filters("(objectClass=*)", 100), 2);
}
END_TEST

START_TEST(a_range_inside_an_escape_is_encoded_per_request)
{
	/* \4N is a character from @ to I: the digit does not stand verbatim in the BER */
	uint64_t encodes = check_filters("(cn=\\4[0-9]x)", 200);
	ck_assert_uint_ge(encodes, 150);
	/* more ranges than a shape holds */
	encodes = check_filters("(cn=[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9])", 50);
	ck_assert_uint_ge(encodes, 50);
}
END_TEST

START_TEST(a_filter_libldap_refuses_is_an_error)
{
	struct pattern p;
	char err[256];
	ck_assert(pattern_parse(&p, "(cn=x\\[0-9])", err, sizeof(err)));
	struct lb_filter f;
	ck_assert(lb_filter_init(&f, p.maxlen));
	char buf[64];
	struct pattern_span spans[1];
	uint64_t rng = 1;
	const char *e = pattern_expand_spans(&p, &rng, buf, spans);
	size_t len;
	int rc = 0;
	ck_assert_ptr_null(lb_filter_get(&f, e, strlen(e), spans, 1, &len, &rc));
	ck_assert_int_eq(rc, LDAP_FILTER_ERROR);
	lb_filter_free(&f);
	pattern_free(&p);
}
END_TEST

/* ---- framing ------------------------------------------------------------------------------ */

/* An entry and a done for msgid 7 (done: rc, matched "", diag), then a notice of
 * disconnection, built by liblber (4-byte lengths); length in *n, ber_memfree it. */
static char *responses(int rc, const char *diag, size_t *n)
{
	BerElement *ber = ber_alloc_t(LBER_USE_DER);
	ck_assert_int_ne(
	    ber_printf(ber, "{it{s{{s[s]}}}}", 7, LDAP_RES_SEARCH_ENTRY, "uid=a,dc=x", "uid", "a"),
	    -1);
	ck_assert_int_ne(ber_printf(ber, "{it{ess}}", 7, LDAP_RES_SEARCH_RESULT, rc, "", diag), -1);
	ck_assert_int_ne(
	    ber_printf(ber, "{it{ess}}", 0, LDAP_RES_EXTENDED, LDAP_UNAVAILABLE, "", "going down"),
	    -1);
	struct berval bv;
	ck_assert_int_eq(ber_flatten2(ber, &bv, 1), 0);
	ber_free(ber, 1);
	*n = bv.bv_len;
	return bv.bv_val;
}

START_TEST(responses_are_framed)
{
	size_t n, need;
	char *raw = responses(LDAP_NO_SUCH_OBJECT, "no such base", &n);
	const unsigned char *p = (const unsigned char *)raw;
	struct lb_msg m;
	long k1 = lb_frame(p, n, 1 << 20, &m, &need);
	ck_assert_int_gt(k1, 0);
	ck_assert_int_eq(m.msgid, 7);
	ck_assert_uint_eq(m.op, LB_OP_SEARCH_ENTRY);
	long k2 = lb_frame(p + k1, n - (size_t)k1, 1 << 20, &m, &need);
	ck_assert_int_gt(k2, 0);
	ck_assert_uint_eq(m.op, LB_OP_SEARCH_DONE);
	ck_assert_int_eq(m.rc, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(m.diaglen, strlen("no such base"));
	ck_assert_mem_eq(m.diag, "no such base", m.diaglen);
	long k3 = lb_frame(p + k1 + k2, n - (size_t)(k1 + k2), 1 << 20, &m, &need);
	ck_assert_int_eq(k3, (long)n - k1 - k2);
	ck_assert_int_eq(m.msgid, 0);
	ck_assert_uint_eq(m.op, LB_OP_EXTENDED_RESPONSE);
	ck_assert_int_eq(m.rc, LDAP_UNAVAILABLE);

	/* every cut of the first message: more bytes needed, and once the header is in, how many */
	for (size_t cut = 0; cut < (size_t)k1; cut++) {
		ck_assert_int_eq(lb_frame(p, cut, 1 << 20, &m, &need), 0);
		ck_assert(need == 0 || need == (size_t)k1);
		if (cut >= 6) /* 0x30, 0x84 and 4 length bytes */
			ck_assert_uint_eq(need, (size_t)k1);
	}
	/* longer than allowed */
	ck_assert_int_eq(lb_frame(p, n, (size_t)k1 - 1, &m, &need), -1);
	ber_memfree(raw);
}
END_TEST

START_TEST(broken_messages_are_refused)
{
	static const struct {
		unsigned char b[16];
		size_t n;
	} bad[] = {
	    {{0x31, 0x03, 0x02, 0x01, 0x01}, 5},                         /* not a SEQUENCE */
	    {{0x30, 0x80, 0x02, 0x01, 0x01, 0x42, 0x00, 0x00, 0x00}, 9}, /* indefinite */
	    {{0x30, 0x85, 0, 0, 0, 0, 5}, 7},                            /* 5 length bytes */
	    {{0x30, 0x05, 0x02, 0x01, 0xff, 0x42, 0x00}, 7},             /* msgid < 0 */
	    {{0x30, 0x05, 0x04, 0x01, 0x01, 0x42, 0x00}, 7},             /* msgid not INTEGER */
	    {{0x30, 0x05, 0x02, 0x05, 0x01, 0x42, 0x00}, 7},             /* msgid past the end */
	    {{0x30, 0x05, 0x02, 0x01, 0x01, 0x30, 0x00}, 7},             /* op not APPLICATION */
	    {{0x30, 0x06, 0x02, 0x01, 0x01, 0x65, 0x03, 0x0a}, 8},       /* op past the end */
	    {{0x30, 0x08, 0x02, 0x01, 0x01, 0x65, 0x03, 0x04, 0x01, 0x00},
	     10},                                            /* rc not ENUMERATED */
	    {{0x30, 0x05, 0x02, 0x01, 0x01, 0x65, 0x00}, 7}, /* done without rc */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct lb_msg m;
		size_t need;
		ck_assert_msg(lb_frame(bad[i].b, bad[i].n, 1 << 20, &m, &need) == -1, "case %zu",
		              i);
	}
	/* and a well-formed one of the same bytes' kind is taken */
	static const unsigned char good[] = {0x30, 0x0c, 0x02, 0x01, 0x05, 0x65, 0x07,
	                                     0x0a, 0x01, 0x31, 0x04, 0x00, 0x04, 0x00};
	struct lb_msg m;
	size_t need;
	ck_assert_int_eq(lb_frame(good, sizeof(good), 1 << 20, &m, &need), (long)sizeof(good));
	ck_assert_int_eq(m.msgid, 5);
	ck_assert_int_eq(m.rc, 49);
	ck_assert_uint_eq(m.diaglen, 0);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("searchrate_leanber");
	TCase *tc = tcase_create("searchrate_leanber");
	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(suite, tc);
	tcase_add_loop_test(tc, search_is_libldaps_request, 0,
	                    sizeof(search_cases) / sizeof(search_cases[0]));
	tcase_add_test(tc, bind_and_unbind_are_libldaps);
	tcase_add_test(tc, message_ids_of_every_size);
	tcase_add_test(tc, filters_are_patched_per_value);
	tcase_add_test(tc, a_range_inside_an_escape_is_encoded_per_request);
	tcase_add_test(tc, a_filter_libldap_refuses_is_an_error);
	tcase_add_test(tc, responses_are_framed);
	tcase_add_test(tc, broken_messages_are_refused);
	return check_run(suite);
}
