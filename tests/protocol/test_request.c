/*
 * Unit tests for protocol/request.c: LDAPMessages encoded here with liblber's
 * ber_printf, decoded by request_decode.
 */
#include <check.h>
#include <lber.h>
#include <ldap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/request.h"
#include "tests/check_run.h"

/* The decoder's arena and work buffer, reused (and the arena reset) as a worker does. */
static struct arena mem;
static struct buf scratch;

static void setup(void)
{
	memset(&mem, 0, sizeof(mem));
	memset(&scratch, 0, sizeof(scratch));
}

static void teardown(void)
{
	arena_free(&mem);
	buf_free(&scratch);
}

static int decode_bytes(const unsigned char *p, size_t n, struct ldap_request *req,
                        const char **why)
{
	arena_reset(&mem);
	return request_decode(p, n, req, &mem, &scratch, why);
}

static BerElement *writer(void)
{
	BerElement *w = ber_alloc_t(LBER_USE_DER);
	ck_assert_ptr_nonnull(w);
	return w;
}

/* Flattens w (freed) into a PDU; free with ber_bvfree. */
static struct berval *flatten(BerElement *w)
{
	struct berval *flat = NULL;
	ck_assert_int_eq(ber_flatten(w, &flat), 0);
	ber_free(w, 1);
	return flat;
}

static int decode(const struct berval *pdu, struct ldap_request *req, const char **why)
{
	return decode_bytes((const unsigned char *)pdu->bv_val, pdu->bv_len, req, why);
}

static void assert_bv(const struct berval *bv, const char *want)
{
	ck_assert_msg(bv->bv_len == strlen(want) && memcmp(bv->bv_val, want, bv->bv_len) == 0,
	              "got \"%.*s\", expected \"%s\"", (int)bv->bv_len, bv->bv_val, want);
}

/* (&(objectClass=person)(uid=alice)) */
static void put_filter(BerElement *w)
{
	ck_assert_int_ge(ber_printf(w, "t{t{ss}t{ss}}", (ber_tag_t)LDAP_FILTER_AND,
	                            (ber_tag_t)LDAP_FILTER_EQUALITY, "objectClass", "person",
	                            (ber_tag_t)LDAP_FILTER_EQUALITY, "uid", "alice"),
	                 0);
}

/* Opens message and SearchRequest, writes the fields before the filter. */
static void open_search(BerElement *w, ber_int_t msgid, const char *base, ber_int_t scope)
{
	ck_assert_int_ge(ber_printf(w, "{it{seeiib", msgid, (ber_tag_t)LDAP_REQ_SEARCH, base, scope,
	                            (ber_int_t)LDAP_DEREF_NEVER, (ber_int_t)100, (ber_int_t)30,
	                            (ber_int_t)0),
	                 0);
}

/* A SearchRequest with the given attributes; ctl_critical < 0: no controls. */
static struct berval *search_pdu(ber_int_t msgid, const char *base, ber_int_t scope,
                                 const char *const *attrs, int ctl_critical)
{
	BerElement *w = writer();
	open_search(w, msgid, base, scope);
	put_filter(w);
	ck_assert_int_ge(ber_printf(w, "{"), 0);
	for (size_t i = 0; attrs && attrs[i]; i++)
		ck_assert_int_ge(ber_printf(w, "s", attrs[i]), 0);
	ck_assert_int_ge(ber_printf(w, "}}"), 0);
	if (ctl_critical >= 0)
		ck_assert_int_ge(ber_printf(w, "t{{sbs}}", (ber_tag_t)LDAP_TAG_CONTROLS,
		                            "1.2.840.113556.1.4.319", (ber_int_t)ctl_critical,
		                            "value"),
		                 0);
	ck_assert_int_ge(ber_printf(w, "}"), 0);
	return flatten(w);
}

START_TEST(search_fields)
{
	const char *const attrs[] = {"cn", "mail", "objectClass", NULL};
	struct berval *pdu =
	    search_pdu(7, "ou=people,dc=example,dc=com", LDAP_SCOPE_SUBTREE, attrs, -1);
	struct ldap_request req;
	const char *why = NULL;
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_int_eq(req.msgid, 7);
	ck_assert_uint_eq(req.op, LDAP_REQ_SEARCH);
	ck_assert(!req.critical_control);
	const struct search_request *s = &req.u.search;
	assert_bv(&s->base, "ou=people,dc=example,dc=com");
	ck_assert_int_eq(s->scope, LDAP_SCOPE_SUBTREE);
	ck_assert_int_eq(s->deref, LDAP_DEREF_NEVER);
	ck_assert_int_eq(s->sizelimit, 100);
	ck_assert_int_eq(s->timelimit, 30);
	ck_assert(!s->typesonly);
	ck_assert_int_eq(s->nattrs, 3);
	assert_bv(&s->attrs[0], "cn");
	assert_bv(&s->attrs[1], "mail");
	assert_bv(&s->attrs[2], "objectClass");
	/* Strings point into the PDU bytes. */
	ck_assert((const char *)s->base.bv_val >= pdu->bv_val &&
	          (const char *)s->base.bv_val < pdu->bv_val + pdu->bv_len);
	ck_assert_ptr_nonnull(s->filter);
	ck_assert_int_eq(s->filter->kind, FILTER_AND);
	ck_assert_int_eq(s->filter->child->kind, FILTER_EQ);
	ck_assert_str_eq(s->filter->child->attr, "objectclass");
	ck_assert_int_eq(s->filter->child->next->kind, FILTER_EQ);
	ck_assert_str_eq(s->filter->child->next->attr, "uid");
	ck_assert_ptr_null(s->filter->child->next->next);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(search_scopes_and_options)
{
	const ber_int_t scopes[] = {LDAP_SCOPE_BASE, LDAP_SCOPE_ONELEVEL, LDAP_SCOPE_SUBTREE,
	                            LDAP_SCOPE_SUBORDINATE};
	for (int i = 0; i < 4; i++) {
		BerElement *w = writer();
		ck_assert_int_ge(ber_printf(w, "{it{seeiib", (ber_int_t)300 + i,
		                            (ber_tag_t)LDAP_REQ_SEARCH, "", scopes[i],
		                            (ber_int_t)LDAP_DEREF_ALWAYS, (ber_int_t)0,
		                            (ber_int_t)0, (ber_int_t)1),
		                 0);
		ck_assert_int_ge(
		    ber_printf(w, "ts{}}}", (ber_tag_t)LDAP_FILTER_PRESENT, "objectClass"), 0);
		struct berval *pdu = flatten(w);
		struct ldap_request req;
		const char *why;
		ck_assert_int_eq(decode(pdu, &req, &why), 0);
		ck_assert_int_eq(req.msgid, 300 + i);
		ck_assert_int_eq(req.u.search.scope, scopes[i]);
		ck_assert_int_eq(req.u.search.deref, LDAP_DEREF_ALWAYS);
		ck_assert(req.u.search.typesonly);
		ck_assert_uint_eq(req.u.search.base.bv_len, 0);
		ck_assert_int_eq(req.u.search.nattrs, 0);
		ck_assert_int_eq(req.u.search.filter->kind, FILTER_PRESENT);
		ber_bvfree(pdu);
	}
}
END_TEST

START_TEST(search_bad_scope)
{
	/* 3 is "children" (subordinate subtree); 4 is no scope at all. */
	struct berval *pdu = search_pdu(9, "dc=example,dc=com", 4, NULL, -1);
	struct ldap_request req;
	const char *why = NULL;
	ck_assert_int_eq(decode(pdu, &req, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(req.msgid, 9); /* known, for the protocolError answer */
	ber_bvfree(pdu);
}
END_TEST

START_TEST(search_negative_limits)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{seeiib", (ber_int_t)4, (ber_tag_t)LDAP_REQ_SEARCH, "",
	                            (ber_int_t)0, (ber_int_t)0, (ber_int_t)-1, (ber_int_t)0,
	                            (ber_int_t)0),
	                 0);
	ck_assert_int_ge(ber_printf(w, "ts{}}}", (ber_tag_t)LDAP_FILTER_PRESENT, "cn"), 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(pdu, &req, &why), -1);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(search_attr_limit)
{
	/* REQUEST_MAX_ATTRS names are fine, one more is a protocol error. */
	for (int n = REQUEST_MAX_ATTRS; n <= REQUEST_MAX_ATTRS + 1; n++) {
		BerElement *w = writer();
		open_search(w, 5, "dc=example,dc=com", LDAP_SCOPE_SUBTREE);
		put_filter(w);
		ck_assert_int_ge(ber_printf(w, "{"), 0);
		for (int i = 0; i < n; i++) {
			char name[16];
			snprintf(name, sizeof(name), "attr%d", i);
			ck_assert_int_ge(ber_printf(w, "s", name), 0);
		}
		ck_assert_int_ge(ber_printf(w, "}}}"), 0);
		struct berval *pdu = flatten(w);
		struct ldap_request req;
		const char *why;
		int rc = decode(pdu, &req, &why);
		if (n <= REQUEST_MAX_ATTRS) {
			ck_assert_int_eq(rc, 0);
			ck_assert_int_eq(req.u.search.nattrs, n);
			assert_bv(&req.u.search.attrs[n - 1], "attr255");
		} else {
			ck_assert_int_eq(rc, -1);
			ck_assert_int_eq(req.msgid, 5);
		}
		ber_bvfree(pdu);
	}
}
END_TEST

START_TEST(search_deep_filter)
{
	BerElement *w = writer();
	open_search(w, 11, "dc=example,dc=com", LDAP_SCOPE_SUBTREE);
	for (int i = 0; i < 100; i++)
		ck_assert_int_ge(ber_printf(w, "t{", (ber_tag_t)LDAP_FILTER_NOT), 0);
	ck_assert_int_ge(ber_printf(w, "ts", (ber_tag_t)LDAP_FILTER_PRESENT, "cn"), 0);
	for (int i = 0; i < 100; i++)
		ck_assert_int_ge(ber_printf(w, "}"), 0);
	ck_assert_int_ge(ber_printf(w, "{}}}"), 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why = NULL;
	ck_assert_int_eq(decode(pdu, &req, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(req.msgid, 11);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(bind_simple)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ists}}", (ber_int_t)1, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)3, "cn=admin,dc=example,dc=com",
	                            (ber_tag_t)LDAP_AUTH_SIMPLE, "s3cret"),
	                 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_int_eq(req.msgid, 1);
	ck_assert_uint_eq(req.op, LDAP_REQ_BIND);
	ck_assert_int_eq(req.u.bind.version, 3);
	ck_assert(req.u.bind.simple);
	assert_bv(&req.u.bind.dn, "cn=admin,dc=example,dc=com");
	assert_bv(&req.u.bind.cred, "s3cret");
	ber_bvfree(pdu);
}
END_TEST

START_TEST(bind_anonymous_v2)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ists}}", (ber_int_t)2, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)2, "", (ber_tag_t)LDAP_AUTH_SIMPLE, ""),
	                 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_int_eq(req.u.bind.version, 2);
	ck_assert(req.u.bind.simple);
	ck_assert_uint_eq(req.u.bind.dn.bv_len, 0);
	ck_assert_uint_eq(req.u.bind.cred.bv_len, 0);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(bind_sasl)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ist{ss}}}", (ber_int_t)3, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)3, "", (ber_tag_t)LDAP_AUTH_SASL, "DIGEST-MD5",
	                            "credentials"),
	                 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_uint_eq(req.op, LDAP_REQ_BIND);
	ck_assert(!req.u.bind.simple);
	assert_bv(&req.u.bind.mech, "DIGEST-MD5");
	ber_bvfree(pdu);

	/* Without credentials. */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ist{s}}}", (ber_int_t)4, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)3, "", (ber_tag_t)LDAP_AUTH_SASL, "EXTERNAL"),
	                 0);
	pdu = flatten(w);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert(!req.u.bind.simple);
	assert_bv(&req.u.bind.mech, "EXTERNAL");
	ber_bvfree(pdu);
}
END_TEST

START_TEST(bind_unknown_auth_choice)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ists}}", (ber_int_t)6, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)3, "cn=x", (ber_tag_t)0x81, "krb"),
	                 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why = NULL;
	ck_assert_int_eq(decode(pdu, &req, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(req.msgid, 6);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(abandon)
{
	const ber_int_t ids[] = {0, 1, 42, 127, 128, 300, 70000, 0x7fffffff};
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		BerElement *w = writer();
		ck_assert_int_ge(
		    ber_printf(w, "{iti}", (ber_int_t)9, (ber_tag_t)LDAP_REQ_ABANDON, ids[i]), 0);
		struct berval *pdu = flatten(w);
		struct ldap_request req;
		const char *why;
		ck_assert_int_eq(decode(pdu, &req, &why), 0);
		ck_assert_int_eq(req.msgid, 9);
		ck_assert_uint_eq(req.op, LDAP_REQ_ABANDON);
		ck_assert_int_eq(req.u.abandon_msgid, ids[i]);
		ber_bvfree(pdu);
	}
}
END_TEST

START_TEST(abandon_bad_length)
{
	/* [APPLICATION 16] with no content, and with five content bytes. */
	const unsigned char empty[] = {0x30, 0x05, 0x02, 0x01, 0x09, 0x50, 0x00};
	const unsigned char five[] = {0x30, 0x0a, 0x02, 0x01, 0x09, 0x50,
	                              0x05, 0x01, 0x02, 0x03, 0x04, 0x05};
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode_bytes(empty, sizeof(empty), &req, &why), -1);
	ck_assert_int_eq(req.msgid, 9);
	ck_assert_int_eq(decode_bytes(five, sizeof(five), &req, &why), -1);
}
END_TEST

START_TEST(unbind_and_undecoded_ops)
{
	struct ldap_request req;
	const char *why;
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{itn}", (ber_int_t)12, (ber_tag_t)LDAP_REQ_UNBIND), 0);
	struct berval *pdu = flatten(w);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_int_eq(req.msgid, 12);
	ck_assert_uint_eq(req.op, LDAP_REQ_UNBIND);
	ber_bvfree(pdu);

	/* An AddRequest: not decoded, but msgid and op are known. */
	w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{s{{s[s]}}}}", (ber_int_t)13, (ber_tag_t)LDAP_REQ_ADD,
	                            "cn=new,dc=example,dc=com", "objectClass", "top"),
	                 0);
	pdu = flatten(w);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_int_eq(req.msgid, 13);
	ck_assert_uint_eq(req.op, LDAP_REQ_ADD);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(controls)
{
	const char *const attrs[] = {"cn", NULL};
	struct ldap_request req;
	const char *why;
	struct berval *pdu = search_pdu(21, "dc=example,dc=com", LDAP_SCOPE_BASE, attrs, 1);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert(req.critical_control);
	ck_assert_int_eq(req.msgid, 21);
	ck_assert_int_eq(req.u.search.nattrs, 1);
	ber_bvfree(pdu);

	pdu = search_pdu(22, "dc=example,dc=com", LDAP_SCOPE_BASE, attrs, 0);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert(!req.critical_control);
	ber_bvfree(pdu);

	/* Several controls, the critical one last; criticality and value optional. */
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{itn", (ber_int_t)23, (ber_tag_t)LDAP_REQ_UNBIND), 0);
	ck_assert_int_ge(ber_printf(w, "t{{s}{ss}{sb}}}", (ber_tag_t)LDAP_TAG_CONTROLS, "1.2.3",
	                            "1.2.4", "value", "1.2.5", (ber_int_t)1),
	                 0);
	pdu = flatten(w);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert(req.critical_control);
	ber_bvfree(pdu);

	/* A reused request does not carry the flag over. */
	pdu = search_pdu(24, "dc=example,dc=com", LDAP_SCOPE_BASE, attrs, -1);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert(!req.critical_control);
	ber_bvfree(pdu);
}
END_TEST

/* request_unapplied_critical: the first critical control not in the list, whatever else. */
START_TEST(unapplied_critical_control)
{
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{itn", (ber_int_t)25, (ber_tag_t)LDAP_REQ_UNBIND), 0);
	ck_assert_int_ge(ber_printf(w, "t{{sb}{s}{sb}{sb}}}", (ber_tag_t)LDAP_TAG_CONTROLS, "1.2.3",
	                            (ber_int_t)1, "1.2.4", "1.2.5", (ber_int_t)0, "1.2.6",
	                            (ber_int_t)1),
	                 0);
	struct berval *pdu = flatten(w);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	const char *const none[] = {NULL}, *const first[] = {"1.2.3"},
	                  *const both[] = {"1.2.6", "1.2.3"}, *const prefix[] = {"1.2"};
	const struct request_control *c = request_unapplied_critical(&req, none, 0);
	ck_assert_ptr_nonnull(c);
	assert_bv(&c->oid, "1.2.3");
	c = request_unapplied_critical(&req, first, 1);
	ck_assert_ptr_nonnull(c);
	assert_bv(&c->oid, "1.2.6"); /* 1.2.4 and 1.2.5 are not critical */
	ck_assert_ptr_null(request_unapplied_critical(&req, both, 2));
	c = request_unapplied_critical(&req, prefix, 1); /* OIDs compare whole */
	ck_assert_ptr_nonnull(c);
	assert_bv(&c->oid, "1.2.3");
	ber_bvfree(pdu);

	const char *const attrs[] = {"cn", NULL};
	pdu = search_pdu(26, "dc=example,dc=com", LDAP_SCOPE_BASE, attrs, 0);
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	ck_assert_ptr_null(request_unapplied_critical(&req, none, 0)); /* none is critical */
	ber_bvfree(pdu);
}
END_TEST

/* raw_tail: the SearchRequest's filter and attribute list as sent. */
START_TEST(search_raw_content)
{
	const char *const attrs[] = {"cn", "mail", NULL};
	struct berval *pdu = search_pdu(27, "dc=example,dc=com", LDAP_SCOPE_ONELEVEL, attrs, 1);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(pdu, &req, &why), 0);
	const struct berval *raw = &req.u.search.raw_tail;
	/* It starts at the filter's tag (an AND) and ends with the last attribute's value. */
	ck_assert_uint_eq((unsigned char)raw->bv_val[0], LDAP_FILTER_AND);
	/* After the base: scope, derefAliases, sizeLimit 100, timeLimit 30 and typesOnly, each
	 * of three bytes (tag, length, value). */
	ck_assert_ptr_eq(raw->bv_val, req.u.search.base.bv_val + req.u.search.base.bv_len + 15);
	const struct berval *last = &req.u.search.attrs[1];
	ck_assert_ptr_eq(raw->bv_val + raw->bv_len, last->bv_val + last->bv_len);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(controls_malformed)
{
	/*
	 * Controls whose length runs past the end of the message are malformed
	 * (RFC 4511 4.1.1: incorrect lengths); silently dropping them would also
	 * drop any critical control among them.
	 */
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{itnt{{sb}}}", (ber_int_t)31, (ber_tag_t)LDAP_REQ_UNBIND,
	                            (ber_tag_t)LDAP_TAG_CONTROLS, "1.2.840.113556.1.4.319",
	                            (ber_int_t)1),
	                 0);
	struct berval *pdu = flatten(w);
	unsigned char *p = (unsigned char *)pdu->bv_val;
	/* 30 L 02 01 1f 42 00 a0 L ...: make the controls claim 16 more bytes. */
	ck_assert_uint_eq(p[7], LDAP_TAG_CONTROLS);
	ck_assert_uint_lt(p[8], 0x70);
	struct ldap_request req;
	const char *why = NULL;
	ck_assert_int_eq(decode(pdu, &req, &why), 0); /* as built: fine */
	ck_assert(req.critical_control);
	p[8] += 16;
	why = NULL;
	int rc = decode(pdu, &req, &why);
	ck_assert_msg(rc == -1, "controls running past the message accepted (critical_control=%d)",
	              (int)req.critical_control);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(garbage)
{
	struct ldap_request req;
	const char *why;
	const unsigned char not_seq[] = {0x04, 0x03, 'a', 'b', 'c'};
	const unsigned char empty_seq[] = {0x30, 0x00};
	const unsigned char no_op[] = {0x30, 0x03, 0x02, 0x01, 0x05};
	const unsigned char str_id[] = {0x30, 0x05, 0x04, 0x01, 0x05, 0x42, 0x00};
	const unsigned char neg_id[] = {0x30, 0x05, 0x02, 0x01, 0xff, 0x42, 0x00};
	const unsigned char text[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	const struct {
		const unsigned char *p;
		size_t n;
		ber_int_t msgid;
	} cases[] = {
	    {not_seq, sizeof(not_seq), -1},     {empty_seq, sizeof(empty_seq), -1},
	    {no_op, sizeof(no_op), 5},          {str_id, sizeof(str_id), -1},
	    {neg_id, sizeof(neg_id), -1},       {text, sizeof(text) - 1, -1},
	    {(const unsigned char *)"", 0, -1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = NULL;
		ck_assert_msg(decode_bytes(cases[i].p, cases[i].n, &req, &why) == -1,
		              "case %zu accepted", i);
		ck_assert_ptr_nonnull(why);
		ck_assert_msg(req.msgid == cases[i].msgid, "case %zu: msgid %d", i, (int)req.msgid);
	}
}
END_TEST

/* Wraps content[0..n) (under 100 bytes) as the protocolOp tag of message 7, into out. */
static size_t message(unsigned char tag, const unsigned char *content, size_t n, unsigned char *out)
{
	const unsigned char head[] = {0x30, (unsigned char)(n + 5), 0x02, 0x01, 0x07,
	                              tag,  (unsigned char)n};
	memcpy(out, head, sizeof(head));
	memcpy(out + sizeof(head), content, n);
	return sizeof(head) + n;
}

/* A PDU as bytes, whether it must decode, and the message ID decoding it must give. */
struct raw_message {
	const char *what;
	unsigned char bytes[20];
	size_t n;
	bool valid;
	int msgid;
};

static void expect_strict(const char *what, const unsigned char *pdu, size_t n, bool valid,
                          int msgid)
{
	struct ldap_request req;
	const char *why = NULL;
	int rc = decode_bytes(pdu, n, &req, &why);
	ck_assert_msg(rc == (valid ? 0 : -1), "%s: %s", what, rc == 0 ? "accepted" : why);
	ck_assert_msg(req.msgid == msgid, "%s: msgid %d", what, (int)req.msgid);
}

/*
 * BER that liblber takes but RFC 4511 / X.690 do not allow: each is malformed, with the
 * message ID known unless it is the message ID that is at fault. The valid forms (marked
 * true) decode.
 */
START_TEST(strict_encoding)
{
	static const struct raw_message messages[] = {
	    {"unbind", {0x30, 0x05, 0x02, 0x01, 0x07, 0x42, 0x00}, 7, true, 7},
	    {"unbind with content", {0x30, 0x06, 0x02, 0x01, 0x07, 0x42, 0x01, 0x00}, 8, false, 7},
	    {"message ID empty", {0x30, 0x04, 0x02, 0x00, 0x42, 0x00}, 6, false, -1},
	    {"a multi-byte tag", {0x30, 0x06, 0x02, 0x01, 0x07, 0x7f, 0x02, 0x00}, 8, false, 7},
	    {"a multi-byte tag, short", {0x30, 0x05, 0x02, 0x01, 0x07, 0x7f, 0x00}, 7, false, 7},
	    {"an element after the controls",
	     {0x30, 0x09, 0x02, 0x01, 0x07, 0x42, 0x00, 0xa0, 0x00, 0x04, 0x00},
	     11,
	     false,
	     7},
	    {"abandon", {0x30, 0x06, 0x02, 0x01, 0x07, 0x50, 0x01, 0x05}, 8, true, 7},
	    {"abandon of a negative ID",
	     {0x30, 0x06, 0x02, 0x01, 0x07, 0x50, 0x01, 0xfb},
	     8,
	     false,
	     7},
	    {"control with an element after its value",
	     {0x30, 0x10, 0x02, 0x01, 0x07, 0x42, 0x00, 0xa0, 0x09, 0x30, 0x07, 0x04, 0x01, '1',
	      0x04, 0x00, 0x04, 0x00},
	     18,
	     false,
	     7},
	    {"control criticality of two bytes",
	     {0x30, 0x10, 0x02, 0x01, 0x07, 0x42, 0x00, 0xa0, 0x09, 0x30, 0x07, 0x04, 0x01, '1',
	      0x01, 0x02, 0x00, 0xff},
	     18,
	     false,
	     7},
	    {"control",
	     {0x30, 0x0d, 0x02, 0x01, 0x07, 0x42, 0x00, 0xa0, 0x06, 0x30, 0x04, 0x04, 0x02, '1',
	      '2'},
	     15,
	     true,
	     7},
	};
	for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++)
		expect_strict(messages[i].what, messages[i].bytes, messages[i].n, messages[i].valid,
		              messages[i].msgid);

	/* A SearchRequest (base "", scopes 0, limits 0, typesOnly FALSE, (cn=*), no attributes)
	 * with one field replaced; field 8 is what follows the attribute list. */
	static const struct {
		unsigned char bytes[8];
		size_t n;
	} fields[] = {{{0x04, 0x00}, 2},           {{0x0a, 0x01, 0x00}, 3}, {{0x0a, 0x01, 0x00}, 3},
	              {{0x02, 0x01, 0x00}, 3},     {{0x02, 0x01, 0x00}, 3}, {{0x01, 0x01, 0x00}, 3},
	              {{0x87, 0x02, 'c', 'n'}, 4}, {{0x30, 0x00}, 2},       {{0}, 0}};
	static const struct {
		const char *what;
		int field;
		unsigned char bytes[12];
		size_t n;
	} searches[] = {
	    {"search", 0, {0x04, 0x00}, 2},
	    {"typesOnly of two bytes", 5, {0x01, 0x02, 0x00, 0x00}, 4},
	    {"a base with a constructed tag", 0, {0x24, 0x00}, 2},
	    {"scope as an INTEGER", 1, {0x02, 0x01, 0x00}, 3},
	    {"an element after the attribute list", 8, {0x04, 0x00}, 2},
	    {"an attribute that is not an OCTET STRING", 7, {0x30, 0x02, 0x02, 0x00}, 4},
	    {"not with two operands", 6, {0xa2, 0x06, 0x87, 0x01, 'a', 0x87, 0x01, 'b'}, 8},
	    {"equality with a third element",
	     6,
	     {0xa3, 0x07, 0x04, 0x01, 'a', 0x04, 0x00, 0x04, 0x00},
	     9},
	};
	for (size_t i = 0; i < sizeof(searches) / sizeof(searches[0]); i++) {
		unsigned char content[64], pdu[80];
		size_t n = 0;
		for (int f = 0; f < 9; f++) {
			bool mine = f == searches[i].field;
			memcpy(content + n, mine ? searches[i].bytes : fields[f].bytes,
			       mine ? searches[i].n : fields[f].n);
			n += mine ? searches[i].n : fields[f].n;
		}
		expect_strict(searches[i].what, pdu, message(LDAP_REQ_SEARCH, content, n, pdu),
		              i == 0, 7);
	}
}
END_TEST

/*
 * INTEGERs and ENUMERATEDs with leading 00 or ff octets (not minimal, X.690 8.3.2), which
 * liblber's ber_get_int and so slapd take: decoded to their value, in the message ID, the
 * abandoned ID, scope, deref and the limits. Five content bytes or more are refused
 * whatever they hold, as ber_get_int refuses them; a value that is negative once decoded
 * is refused where it was before.
 */
START_TEST(padded_integers)
{
	static const struct raw_message messages[] = {
	    {"message ID 00 01", {0x30, 0x06, 0x02, 0x02, 0x00, 0x01, 0x42, 0x00}, 8, true, 1},
	    {"message ID 00 00 80 00",
	     {0x30, 0x08, 0x02, 0x04, 0x00, 0x00, 0x80, 0x00, 0x42, 0x00},
	     10,
	     true,
	     32768},
	    {"message ID 00 00 00 07",
	     {0x30, 0x08, 0x02, 0x04, 0, 0, 0, 7, 0x42, 0x00},
	     10,
	     true,
	     7},
	    {"message ID of five bytes",
	     {0x30, 0x09, 0x02, 0x05, 0x00, 0x00, 0x00, 0x00, 0x07, 0x42, 0x00},
	     11,
	     false,
	     -1},
	    {"message ID ff ff (-1)",
	     {0x30, 0x06, 0x02, 0x02, 0xff, 0xff, 0x42, 0x00},
	     8,
	     false,
	     -1},
	    {"abandon 00 05", {0x30, 0x07, 0x02, 0x01, 0x07, 0x50, 0x02, 0x00, 0x05}, 9, true, 7},
	    {"abandon 00 00 00 05",
	     {0x30, 0x09, 0x02, 0x01, 0x07, 0x50, 0x04, 0x00, 0x00, 0x00, 0x05},
	     11,
	     true,
	     7},
	    {"abandon ff fb (-5)",
	     {0x30, 0x07, 0x02, 0x01, 0x07, 0x50, 0x02, 0xff, 0xfb},
	     9,
	     false,
	     7},
	};
	for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++)
		expect_strict(messages[i].what, messages[i].bytes, messages[i].n, messages[i].valid,
		              messages[i].msgid);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode_bytes(messages[5].bytes, messages[5].n, &req, &why), 0);
	ck_assert_int_eq(req.u.abandon_msgid, 5);

	/* A SearchRequest: base "", scope, deref, sizelimit, timelimit as given, typesOnly
	 * FALSE, (cn=*), no attributes. */
	static const struct {
		const char *what;
		unsigned char ints[4][8]; /* each: tag, length, content */
		bool valid;
		int32_t want[4];
	} searches[] = {
	    {"scope 00 02, deref 00 00 00 03",
	     {{0x0a, 0x02, 0x00, 0x02},
	      {0x0a, 0x04, 0, 0, 0, 3},
	      {0x02, 0x01, 0x00},
	      {0x02, 0x01, 0x00}},
	     true,
	     {2, 3, 0, 0}},
	    {"sizelimit 00 00 03 e8, timelimit 00 7f",
	     {{0x0a, 0x01, 0x01},
	      {0x0a, 0x01, 0x00},
	      {0x02, 0x04, 0, 0, 0x03, 0xe8},
	      {0x02, 0x02, 0, 0x7f}},
	     true,
	     {1, 0, 1000, 127}},
	    {"sizelimit 00 ff ff ff (16777215)",
	     {{0x0a, 0x01, 0x00},
	      {0x0a, 0x01, 0x00},
	      {0x02, 0x04, 0, 0xff, 0xff, 0xff},
	      {0x02, 0x01, 0}},
	     true,
	     {0, 0, 16777215, 0}},
	    {"scope 00 00 00 00 02 (five bytes)",
	     {{0x0a, 0x05, 0, 0, 0, 0, 2},
	      {0x0a, 0x01, 0x00},
	      {0x02, 0x01, 0x00},
	      {0x02, 0x01, 0x00}},
	     false,
	     {0}},
	    {"sizelimit of five bytes",
	     {{0x0a, 0x01, 0x00},
	      {0x0a, 0x01, 0x00},
	      {0x02, 0x05, 0, 0, 0, 0, 1},
	      {0x02, 0x01, 0x00}},
	     false,
	     {0}},
	    {"scope 00 00 01 00 (256)",
	     {{0x0a, 0x04, 0, 0, 1, 0}, {0x0a, 0x01, 0x00}, {0x02, 0x01, 0x00}, {0x02, 0x01, 0x00}},
	     false,
	     {0}},
	    {"timelimit ff ff ff ff (-1)",
	     {{0x0a, 0x01, 0x00},
	      {0x0a, 0x01, 0x00},
	      {0x02, 0x01, 0x00},
	      {0x02, 0x04, 0xff, 0xff, 0xff, 0xff}},
	     false,
	     {0}},
	};
	for (size_t i = 0; i < sizeof(searches) / sizeof(searches[0]); i++) {
		unsigned char content[64] = {0x04, 0x00}, pdu[80];
		size_t n = 2;
		for (int f = 0; f < 4; f++) {
			size_t len = 2 + searches[i].ints[f][1];
			memcpy(content + n, searches[i].ints[f], len);
			n += len;
		}
		const unsigned char tail[] = {0x01, 0x01, 0x00, 0x87, 0x02, 'c', 'n', 0x30, 0x00};
		memcpy(content + n, tail, sizeof(tail));
		n += sizeof(tail);
		n = message(LDAP_REQ_SEARCH, content, n, pdu);
		expect_strict(searches[i].what, pdu, n, searches[i].valid, 7);
		if (!searches[i].valid)
			continue;
		ck_assert_int_eq(decode_bytes(pdu, n, &req, &why), 0);
		const struct search_request *s = &req.u.search;
		ck_assert_msg((int32_t)s->scope == searches[i].want[0] &&
		                  (int32_t)s->deref == searches[i].want[1] &&
		                  (int32_t)s->sizelimit == searches[i].want[2] &&
		                  (int32_t)s->timelimit == searches[i].want[3],
		              "%s: %d %d %d %d", searches[i].what, (int)s->scope, (int)s->deref,
		              (int)s->sizelimit, (int)s->timelimit);
	}
}
END_TEST

/* Decodes every strict prefix of pdu; each must fail cleanly. */
static void check_truncations(const struct berval *pdu)
{
	for (size_t n = 0; n < pdu->bv_len; n++) {
		/* An exact-size copy, so ASan sees any read past the end. */
		unsigned char *exact = malloc(n ? n : 1);
		ck_assert_ptr_nonnull(exact);
		memcpy(exact, pdu->bv_val, n);
		struct ldap_request req;
		const char *why = NULL;
		int rc = decode_bytes(exact, n, &req, &why);
		ck_assert_msg(rc == -1, "prefix of %zu/%zu bytes accepted", n, pdu->bv_len);
		ck_assert_ptr_nonnull(why);
		free(exact);
	}
}

START_TEST(truncated_pdus)
{
	const char *const attrs[] = {"cn", "mail", NULL};
	struct berval *pdu =
	    search_pdu(77, "ou=people,dc=example,dc=com", LDAP_SCOPE_SUBTREE, attrs, -1);
	check_truncations(pdu);
	ber_bvfree(pdu);

	pdu = search_pdu(78, "dc=example,dc=com", LDAP_SCOPE_ONELEVEL, attrs, 1);
	check_truncations(pdu);
	ber_bvfree(pdu);

	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ists}}", (ber_int_t)1, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)3, "cn=admin,dc=example,dc=com",
	                            (ber_tag_t)LDAP_AUTH_SIMPLE, "s3cret"),
	                 0);
	pdu = flatten(w);
	check_truncations(pdu);
	ber_bvfree(pdu);

	w = writer();
	ck_assert_int_ge(
	    ber_printf(w, "{iti}", (ber_int_t)9, (ber_tag_t)LDAP_REQ_ABANDON, (ber_int_t)70000), 0);
	pdu = flatten(w);
	check_truncations(pdu);
	ber_bvfree(pdu);
}
END_TEST

/*
 * Wraps content[0..n) as the SearchRequest of message 5, with correct outer
 * lengths: the truncation then happens inside the operation.
 */
static struct berval *wrap_search(const unsigned char *content, size_t n)
{
	BerElement *w = writer();
	struct berval bv = {n, (char *)content};
	ck_assert_int_ge(ber_printf(w, "{itO}", (ber_int_t)5, (ber_tag_t)LDAP_REQ_SEARCH, &bv), 0);
	/* The tag carries its constructed bit, so this is 0x63 len content. */
	struct berval *flat = flatten(w);
	return flat;
}

START_TEST(truncated_inside_search)
{
	/*
	 * Cut the SearchRequest's content at every length but keep every
	 * enclosing length consistent, so the decoder meets a short field.
	 * Every cut drops at least the attribute list, which is not optional
	 * (RFC 4511 4.5.1), so none may decode.
	 */
	const char *const attrs[] = {"cn", NULL};
	struct berval *pdu = search_pdu(5, "dc=example,dc=com", LDAP_SCOPE_SUBTREE, attrs, -1);
	/* Find the op: 30 L 02 01 05 63 L content. */
	const unsigned char *p = (const unsigned char *)pdu->bv_val;
	ck_assert_uint_eq(p[2], 0x02);
	ck_assert_uint_eq(p[5], LDAP_REQ_SEARCH);
	size_t hdr = 7;
	if (p[6] & 0x80)
		hdr += p[6] & 0x7f;
	const unsigned char *content = p + hdr;
	size_t clen = pdu->bv_len - hdr;

	/* The whole content wrapped again decodes: the wrapper is right. */
	struct berval *whole = wrap_search(content, clen);
	struct ldap_request req;
	const char *why;
	ck_assert_int_eq(decode(whole, &req, &why), 0);
	ck_assert_int_eq(req.u.search.nattrs, 1);
	ber_bvfree(whole);

	char accepted[256] = "";
	size_t naccepted = 0;
	for (size_t n = 0; n < clen; n++) {
		struct berval *cut = wrap_search(content, n);
		why = NULL;
		if (decode(cut, &req, &why) == 0) {
			size_t used = strlen(accepted);
			snprintf(accepted + used, sizeof(accepted) - used, " %zu", n);
			naccepted++;
		} else {
			ck_assert_ptr_nonnull(why);
		}
		ck_assert_int_eq(req.msgid, 5);
		ber_bvfree(cut);
	}
	ck_assert_msg(naccepted == 0,
	              "SearchRequest content (%zu bytes) cut to these lengths was accepted:%s",
	              clen, accepted);
	ber_bvfree(pdu);
}
END_TEST

START_TEST(mutated_pdus_do_not_crash)
{
	/* Deterministic byte mutations of valid PDUs: any result, but no crash or leak. */
	const char *const attrs[] = {"cn", "mail", NULL};
	struct berval *pdus[2];
	pdus[0] = search_pdu(77, "ou=people,dc=example,dc=com", LDAP_SCOPE_SUBTREE, attrs, 1);
	BerElement *w = writer();
	ck_assert_int_ge(ber_printf(w, "{it{ists}}", (ber_int_t)1, (ber_tag_t)LDAP_REQ_BIND,
	                            (ber_int_t)3, "cn=admin", (ber_tag_t)LDAP_AUTH_SIMPLE, "pw"),
	                 0);
	pdus[1] = flatten(w);
	uint32_t seed = 12345;
	for (int k = 0; k < 2; k++) {
		size_t n = pdus[k]->bv_len;
		unsigned char *m = malloc(n);
		ck_assert_ptr_nonnull(m);
		for (int iter = 0; iter < 3000; iter++) {
			memcpy(m, pdus[k]->bv_val, n);
			int flips = 1 + iter % 3;
			for (int f = 0; f < flips; f++) {
				seed = seed * 1103515245u + 12345u;
				size_t at = (seed >> 8) % n;
				seed = seed * 1103515245u + 12345u;
				m[at] = (unsigned char)(seed >> 16);
			}
			struct ldap_request req;
			const char *why;
			int rc = decode_bytes(m, n, &req, &why);
			ck_assert(rc == 0 || rc == -1);
			if (rc == 0 && req.op == LDAP_REQ_SEARCH) {
				ck_assert_ptr_nonnull(req.u.search.filter);
				ck_assert_int_le(req.u.search.nattrs, REQUEST_MAX_ATTRS);
			}
		}
		free(m);
		ber_bvfree(pdus[k]);
	}
}
END_TEST

static Suite *request_suite(void)
{
	Suite *s = suite_create("request");
	TCase *tc = tcase_create("search");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, search_fields);
	tcase_add_test(tc, search_scopes_and_options);
	tcase_add_test(tc, search_bad_scope);
	tcase_add_test(tc, search_negative_limits);
	tcase_add_test(tc, search_attr_limit);
	tcase_add_test(tc, search_deep_filter);
	suite_add_tcase(s, tc);

	tc = tcase_create("other_ops");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bind_simple);
	tcase_add_test(tc, bind_anonymous_v2);
	tcase_add_test(tc, bind_sasl);
	tcase_add_test(tc, bind_unknown_auth_choice);
	tcase_add_test(tc, abandon);
	tcase_add_test(tc, abandon_bad_length);
	tcase_add_test(tc, unbind_and_undecoded_ops);
	tcase_add_test(tc, controls);
	tcase_add_test(tc, unapplied_critical_control);
	tcase_add_test(tc, search_raw_content);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, garbage);
	tcase_add_test(tc, strict_encoding);
	tcase_add_test(tc, padded_integers);
	tcase_add_test(tc, controls_malformed);
	tcase_add_test(tc, truncated_pdus);
	tcase_add_test(tc, truncated_inside_search);
	tcase_add_test(tc, mutated_pdus_do_not_crash);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(request_suite());
}
