/* Unit tests for protocol/dn.c: DN normal form and the reversed key layout. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/dn.h"
#include "tests/check_run.h"

/* Normal form of dn as a malloc'd C string, or NULL when dn_normalize fails. */
static char *norm(const char *dn)
{
	struct buf n = {0};
	if (dn_normalize(dn, strlen(dn), &n, NULL) < 0) {
		buf_free(&n);
		return NULL;
	}
	char *s = malloc(n.len + 1);
	ck_assert_ptr_nonnull(s);
	if (n.len)
		memcpy(s, n.data, n.len);
	s[n.len] = '\0';
	buf_free(&n);
	return s;
}

/* Reversed key of dn into *key (cleared first). */
static void key_of(const char *dn, struct buf *key)
{
	key->off = key->len = 0;
	ck_assert_msg(dn_normalize(dn, strlen(dn), NULL, key) == 0, "\"%s\" rejected", dn);
}

static void assert_same_norm(const char *a, const char *b)
{
	char *na = norm(a), *nb = norm(b);
	ck_assert_msg(na != NULL, "\"%s\" rejected", a);
	ck_assert_msg(nb != NULL, "\"%s\" rejected", b);
	ck_assert_msg(strcmp(na, nb) == 0, "\"%s\" -> \"%s\" but \"%s\" -> \"%s\"", a, na, b, nb);
	free(na);
	free(nb);
	/* The keys agree too. */
	struct buf ka = {0}, kb = {0};
	key_of(a, &ka);
	key_of(b, &kb);
	ck_assert_uint_eq(ka.len, kb.len);
	ck_assert_mem_eq(ka.data, kb.data, ka.len);
	buf_free(&ka);
	buf_free(&kb);
}

static void assert_norm_is(const char *dn, const char *want)
{
	char *n = norm(dn);
	ck_assert_msg(n != NULL, "\"%s\" rejected", dn);
	ck_assert_msg(strcmp(n, want) == 0, "\"%s\" -> \"%s\", expected \"%s\"", dn, n, want);
	free(n);
}

START_TEST(case_and_spacing)
{
	assert_norm_is("UID=Alice, OU=People,dc=Example,DC=com",
	               "uid=alice,ou=people,dc=example,dc=com");
	assert_same_norm("UID=Alice, OU=People,dc=Example,DC=com",
	                 "uid=alice,ou=people,dc=example,dc=com");
	assert_same_norm("uid=alice,  ou=people,   dc=example,dc=com",
	                 "uid=alice,ou=people,dc=example,dc=com");
	/* Inner runs of spaces fold to one, surrounding spaces go (caseIgnoreMatch). */
	assert_norm_is("cn=John   Smith ,dc=com", "cn=john smith,dc=com");
	assert_same_norm("CN=  john smith,DC=COM", "cn=John Smith,dc=com");
}
END_TEST

START_TEST(different_dns_differ)
{
	char *a = norm("uid=alice,ou=people,dc=example,dc=com");
	char *b = norm("uid=alicea,ou=people,dc=example,dc=com");
	char *c = norm("uid=alice,ou=people,dc=example,dc=org");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_ne(a, b);
	ck_assert_str_ne(a, c);
	free(a);
	free(b);
	free(c);
}
END_TEST

START_TEST(escaped_commas)
{
	assert_same_norm("cn=Doe\\, Jane,ou=people,dc=example,dc=com",
	                 "cn=Doe\\2C Jane,ou=people,dc=example,dc=com");
	assert_same_norm("cn=Doe\\, Jane,ou=people,dc=example,dc=com",
	                 "CN=doe\\2c JANE, ou=People, dc=Example, dc=Com");
	/* The escaped comma is part of the value: four RDNs, not five. */
	struct buf k = {0};
	key_of("cn=Doe\\, Jane,ou=people,dc=example,dc=com", &k);
	size_t nuls = 0;
	for (size_t i = 0; i < k.len; i++)
		nuls += k.data[i] == '\0';
	ck_assert_uint_eq(nuls, 4);
	/* And it differs from the entry "cn=Doe" below "cn=Jane"... */
	struct buf k2 = {0};
	ck_assert_int_eq(dn_normalize("cn=Doe,cn=Jane,ou=people,dc=example,dc=com",
	                              strlen("cn=Doe,cn=Jane,ou=people,dc=example,dc=com"), NULL,
	                              &k2),
	                 0);
	ck_assert(k.len != k2.len || memcmp(k.data, k2.data, k.len) != 0);
	buf_free(&k);
	buf_free(&k2);
	/* The normal form reparses to itself. */
	char *n = norm("cn=Doe\\, Jane,ou=people,dc=example,dc=com");
	ck_assert_ptr_nonnull(n);
	assert_norm_is(n, n);
	free(n);
}
END_TEST

START_TEST(multivalued_rdn_order)
{
	assert_same_norm("cn=a+sn=b,dc=example,dc=com", "sn=B+cn=A,dc=example,dc=com");
	assert_norm_is("sn=B+cn=A,dc=example,dc=com", "cn=a+sn=b,dc=example,dc=com");
	assert_same_norm("uid=x+cn=y+sn=z,dc=com", "sn=Z+uid=X+cn=Y,dc=com");
	/* Only the RDN's AVAs are a set; RDNs themselves are ordered. */
	char *a = norm("cn=a,sn=b,dc=com"), *b = norm("sn=b,cn=a,dc=com");
	ck_assert_str_ne(a, b);
	free(a);
	free(b);
}
END_TEST

START_TEST(multivalued_rdn_same_type_order)
{
	/*
	 * An RDN is an unordered set of AVAs (RFC 4512 2.3.1), also when two AVAs
	 * share a type, as in "cn=a+cn=b". Sorting by type alone leaves their
	 * order as written, so these two spellings of one DN get different
	 * normal forms and keys.
	 */
	assert_same_norm("cn=a+cn=b,dc=example,dc=com", "cn=b+cn=a,dc=example,dc=com");
}
END_TEST

START_TEST(empty_values_in_one_rdn)
{
	/*
	 * libldap gives an empty value at the end of the DN a NULL pointer; sorting
	 * "cn=a+cn=" compared it with memcmp(p, NULL, 0), undefined behaviour that
	 * UBSan reports (found by fuzzing the request decoder).
	 */
	assert_same_norm("cn=a+cn=", "cn=+cn=a");
	assert_same_norm("cn= +cn=", "cn=+cn=");
	assert_norm_is("cn=+cn=", "cn=+cn=");
}
END_TEST

START_TEST(invalid_rejected)
{
	const char *bad[] = {"this is not a dn", "=x", "cn=a,,dc=b", ",", "cn=a,",
	                     "cn=x;dc=y",        "cn"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* Outputs already holding data are left exactly as they were. */
		struct buf n = {0}, k = {0};
		ck_assert_int_eq(buf_append(&n, "prev", 4), 0);
		ck_assert_int_eq(buf_append(&k, "KEY", 3), 0);
		ck_assert_msg(dn_normalize(bad[i], strlen(bad[i]), &n, &k) == -1, "\"%s\" accepted",
		              bad[i]);
		ck_assert_uint_eq(n.len, 4);
		ck_assert_mem_eq(n.data, "prev", 4);
		ck_assert_uint_eq(k.len, 3);
		ck_assert_mem_eq(k.data, "KEY", 3);
		buf_free(&n);
		buf_free(&k);
	}
}
END_TEST

START_TEST(embedded_nul_rejected)
{
	const char dn[] = "cn=a\0b,dc=com";
	struct buf n = {0};
	ck_assert_int_eq(dn_normalize(dn, sizeof(dn) - 1, &n, NULL), -1);
	ck_assert_uint_eq(n.len, 0);
	buf_free(&n);
}
END_TEST

START_TEST(length_bounds_input)
{
	/* Only dn[0..len) is read: a longer string cut at the right place. */
	const char *s = "dc=example,dc=comXXXX";
	struct buf n = {0};
	ck_assert_int_eq(dn_normalize(s, 17, &n, NULL), 0);
	ck_assert_uint_eq(n.len, 17);
	ck_assert_mem_eq(n.data, "dc=example,dc=com", 17);
	buf_free(&n);
}
END_TEST

START_TEST(root_dse_empty)
{
	struct buf n = {0}, k = {0};
	ck_assert_int_eq(dn_normalize("", 0, &n, &k), 0);
	ck_assert_uint_eq(n.len, 0);
	ck_assert_uint_eq(k.len, 0);
	buf_free(&n);
	buf_free(&k);
}
END_TEST

START_TEST(reversed_key_layout)
{
	struct buf k = {0};
	key_of("dc=example,dc=com", &k);
	const char want[] = "dc=com\0dc=example\0";
	ck_assert_uint_eq(k.len, sizeof(want) - 1);
	ck_assert_mem_eq(k.data, want, sizeof(want) - 1);

	key_of("UID=Alice, OU=People,dc=Example,DC=com", &k);
	const char want2[] = "dc=com\0dc=example\0ou=people\0uid=alice\0";
	ck_assert_uint_eq(k.len, sizeof(want2) - 1);
	ck_assert_mem_eq(k.data, want2, sizeof(want2) - 1);

	/* Appends: ndn and key both go after what the buffers hold. */
	struct buf n = {0};
	ck_assert_int_eq(buf_append(&n, "N:", 2), 0);
	k.len = 0;
	ck_assert_int_eq(buf_append(&k, "K:", 2), 0);
	ck_assert_int_eq(dn_normalize("DC=Com", 6, &n, &k), 0);
	ck_assert_uint_eq(n.len, 8);
	ck_assert_mem_eq(n.data, "N:dc=com", 8);
	ck_assert_uint_eq(k.len, 9);
	ck_assert_mem_eq(k.data, "K:dc=com\0", 9);
	buf_free(&n);
	buf_free(&k);
}
END_TEST

START_TEST(key_parent_len)
{
	struct buf k = {0}, p = {0};
	key_of("uid=alice,ou=people,dc=example,dc=com", &k);
	key_of("ou=people,dc=example,dc=com", &p);
	size_t pl = dn_key_parent_len(k.data, k.len);
	ck_assert_uint_eq(pl, p.len);
	ck_assert_mem_eq(k.data, p.data, pl);

	/* Walking up ends at a top entry, whose parent length is 0. */
	size_t l = k.len;
	int levels = 0;
	while (l > 0) {
		l = dn_key_parent_len(k.data, l);
		levels++;
	}
	ck_assert_int_eq(levels, 4);

	key_of("dc=com", &k);
	ck_assert_uint_eq(dn_key_parent_len(k.data, k.len), 0);
	ck_assert_uint_eq(dn_key_parent_len(k.data, 0), 0);

	/* An escaped comma in the last RDN does not confuse the walk. */
	key_of("cn=Doe\\, Jane,ou=people,dc=example,dc=com", &k);
	ck_assert_uint_eq(dn_key_parent_len(k.data, k.len), p.len);
	buf_free(&k);
	buf_free(&p);
}
END_TEST

START_TEST(key_in_subtree)
{
	struct buf base = {0}, k = {0};
	key_of("dc=example,dc=com", &base);

	key_of("uid=alice,ou=people,dc=example,dc=com", &k);
	ck_assert(dn_key_in_subtree(k.data, k.len, base.data, base.len));
	key_of("ou=people,dc=example,dc=com", &k);
	ck_assert(dn_key_in_subtree(k.data, k.len, base.data, base.len));
	/* The base itself is in its subtree. */
	ck_assert(dn_key_in_subtree(base.data, base.len, base.data, base.len));

	/* A sibling sharing a string prefix is not inside. */
	key_of("dc=examplex,dc=com", &k);
	ck_assert(!dn_key_in_subtree(k.data, k.len, base.data, base.len));
	key_of("ou=people,dc=examplex,dc=com", &k);
	ck_assert(!dn_key_in_subtree(k.data, k.len, base.data, base.len));
	key_of("dc=exampl,dc=com", &k);
	ck_assert(!dn_key_in_subtree(k.data, k.len, base.data, base.len));
	/* The parent is not inside its child's subtree. */
	key_of("dc=com", &k);
	ck_assert(!dn_key_in_subtree(k.data, k.len, base.data, base.len));
	ck_assert(dn_key_in_subtree(base.data, base.len, k.data, k.len));
	/* Other tree. */
	key_of("dc=example,dc=org", &k);
	ck_assert(!dn_key_in_subtree(k.data, k.len, base.data, base.len));
	/* Differently spelled, same DN. */
	key_of("OU=People, DC=Example, DC=COM", &k);
	ck_assert(dn_key_in_subtree(k.data, k.len, base.data, base.len));
	/* Everything is below the root (empty key). */
	ck_assert(dn_key_in_subtree(k.data, k.len, (const unsigned char *)"", 0));
	/* The root's key as an empty buffer that never allocated (data NULL). */
	struct buf root = {0};
	ck_assert_int_eq(dn_normalize("", 0, NULL, &root), 0);
	ck_assert(dn_key_in_subtree(k.data, k.len, root.data, root.len));
	buf_free(&base);
	buf_free(&k);
}
END_TEST

/* Normalizes dn into fresh buffers that already hold a prefix (dn_normalize appends):
 * rc, and ndn and key with the prefix removed; key_only is the key asked for alone. */
struct norm_result {
	int rc;
	struct buf ndn, key, key_only;
};

static void norm_all(const char *dn, struct norm_result *r)
{
	memset(r, 0, sizeof(*r));
	buf_append(&r->ndn, "N", 1);
	buf_append(&r->key, "K", 1);
	buf_append(&r->key_only, "k", 1);
	r->rc = dn_normalize(dn, strlen(dn), &r->ndn, &r->key);
	int rc2 = dn_normalize(dn, strlen(dn), NULL, &r->key_only);
	ck_assert_int_eq(r->rc, rc2);
	ck_assert_int_eq(r->rc, dn_normalize(dn, strlen(dn), NULL, NULL)); /* validity alone */
	ck_assert_uint_eq(r->key.len, r->key_only.len);
	ck_assert_mem_eq(r->key.data + 1, r->key_only.data + 1, r->key.len - 1);
}

static void norm_free(struct norm_result *r)
{
	buf_free(&r->ndn);
	buf_free(&r->key);
	buf_free(&r->key_only);
}

/* A DN of plain text (dn.c's fast path) and the same DN with the first character of each
 * value escaped as \XX (libldap's parser) normalize to the same bytes, or both fail. */
START_TEST(plain_path_agrees_with_libldap)
{
	static const char *const types[] = {
	    "cn",        "CN",          "uid",      "Ou", "dc", "telephoneNumber",
	    "uidNumber", "description", "x-Custom", "o"};
	static const char alphabet[] = "aZq09 .-_@-";
	srand(4514);
	for (int iter = 0; iter < 3000; iter++) {
		char plain[512], escaped[1024];
		size_t p = 0, e = 0;
		int rdns = 1 + rand() % 5;
		for (int r = 0; r < rdns; r++) {
			const char *type = types[rand() % (sizeof(types) / sizeof(types[0]))];
			if (r) {
				plain[p++] = ',';
				escaped[e++] = ',';
			}
			p += (size_t)sprintf(plain + p, "%s=", type);
			e += (size_t)sprintf(escaped + e, "%s=", type);
			int vlen = 1 + rand() % 10;
			for (int k = 0; k < vlen; k++) {
				char c = alphabet[rand() % (sizeof(alphabet) - 1)];
				if (c == ' ' && (k == 0 || k == vlen - 1))
					c = 'x';
				plain[p++] = c;
				if (k == 0)
					e += (size_t)sprintf(escaped + e, "\\%02X",
					                     (unsigned char)c);
				else
					escaped[e++] = c;
			}
		}
		plain[p] = escaped[e] = '\0';
		struct norm_result a, b;
		norm_all(plain, &a);
		norm_all(escaped, &b);
		ck_assert_msg(a.rc == b.rc, "\"%s\" gives %d, \"%s\" %d", plain, a.rc, escaped,
		              b.rc);
		if (a.rc == 0) {
			ck_assert_msg(a.ndn.len == b.ndn.len &&
			                  memcmp(a.ndn.data, b.ndn.data, a.ndn.len) == 0,
			              "\"%s\" -> \"%.*s\" but \"%s\" -> \"%.*s\"", plain,
			              (int)a.ndn.len, (char *)a.ndn.data, escaped, (int)b.ndn.len,
			              (char *)b.ndn.data);
			ck_assert_uint_eq(a.key.len, b.key.len);
			ck_assert_mem_eq(a.key.data, b.key.data, a.key.len);
		} else {
			ck_assert_uint_eq(a.ndn.len, 1); /* nothing appended on failure */
			ck_assert_uint_eq(a.key.len, 1);
		}
		norm_free(&a);
		norm_free(&b);
	}
}
END_TEST

static Suite *dn_suite(void)
{
	Suite *s = suite_create("dn");
	TCase *tc = tcase_create("normalize");
	tcase_add_test(tc, case_and_spacing);
	tcase_add_test(tc, different_dns_differ);
	tcase_add_test(tc, escaped_commas);
	tcase_add_test(tc, multivalued_rdn_order);
	tcase_add_test(tc, multivalued_rdn_same_type_order);
	tcase_add_test(tc, empty_values_in_one_rdn);
	tcase_add_test(tc, invalid_rejected);
	tcase_add_test(tc, embedded_nul_rejected);
	tcase_add_test(tc, length_bounds_input);
	tcase_add_test(tc, root_dse_empty);
	tcase_add_test(tc, plain_path_agrees_with_libldap);
	suite_add_tcase(s, tc);

	tc = tcase_create("key");
	tcase_add_test(tc, reversed_key_layout);
	tcase_add_test(tc, key_parent_len);
	tcase_add_test(tc, key_in_subtree);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(dn_suite());
}
