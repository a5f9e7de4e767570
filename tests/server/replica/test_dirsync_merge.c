/* server/replica/dirsync_merge.h: a stored entry's attributes with a DirSync change merged
 * in, as the DC means it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/tlv.h"
#include "server/replica/dirsync_merge.h"
#include "tests/check_run.h"

/* The content of a PartialAttributeList from lines "type: value" (a type again adds to
 * it; "type:" alone: the type with no value). */
static void attrs_of(const char *lines, struct buf *out)
{
	struct buf set = {0}, seq = {0};
	char *copy = strdup(lines), *save = NULL;
	out->off = out->len = 0;
	const char *type = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(l, ':');
		*colon = '\0';
		if (type && strcmp(type, l) != 0) { /* the previous type ends */
			tlv_put(&seq, 0x04, type, strlen(type));
			tlv_put(&seq, 0x31, set.data, set.len);
			tlv_put(out, 0x30, seq.data, seq.len);
			set.len = seq.len = 0;
		}
		type = l;
		if (colon[1] == ' ')
			tlv_put(&set, 0x04, colon + 2, strlen(colon + 2));
	}
	if (type) {
		tlv_put(&seq, 0x04, type, strlen(type));
		tlv_put(&seq, 0x31, set.data, set.len);
		tlv_put(out, 0x30, seq.data, seq.len);
	}
	buf_free(&set);
	buf_free(&seq);
	free(copy);
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The encoded m as sorted "type: value" lines, one string. */
static char *lines_of(const struct merged *m)
{
	struct buf out = {0}, set = {0}, seq = {0};
	ck_assert_int_eq(merged_encode(m, &out, &set, &seq), 0);
	char *v[64];
	int n = 0;
	const unsigned char *p = out.data, *end = out.data + out.len, *s, *t, *vals, *x;
	size_t slen, tlen, vlen, xlen;
	unsigned char tag;
	while (p < end && tlv_read(&p, end, &tag, &s, &slen)) {
		const unsigned char *q = s;
		ck_assert(tlv_read(&q, s + slen, &tag, &t, &tlen));
		ck_assert(tlv_read(&q, s + slen, &tag, &vals, &vlen));
		for (const unsigned char *r = vals; r < vals + vlen && n < 64;) {
			ck_assert(tlv_read(&r, vals + vlen, &tag, &x, &xlen));
			v[n] = malloc(tlen + xlen + 3);
			snprintf(v[n++], tlen + xlen + 3, "%.*s: %.*s", (int)tlen, t, (int)xlen, x);
		}
	}
	qsort(v, (size_t)n, sizeof(v[0]), by_text);
	struct buf all = {0};
	for (int i = 0; i < n; i++) {
		buf_append(&all, v[i], strlen(v[i]));
		buf_append(&all, "\n", 1);
		free(v[i]);
	}
	buf_append(&all, "", 1);
	char *r = strdup((char *)all.data);
	buf_free(&all);
	buf_free(&out);
	buf_free(&set);
	buf_free(&seq);
	return r;
}

static const char stored[] = "objectClass: top\nobjectClass: group\nsAMAccountName: eng\n"
                             "description: old\nmember: CN=a,DC=x\nmember: CN=b,DC=x\n";

START_TEST(a_change_replaces_types_and_keeps_the_rest)
{
	struct merged m = {0};
	struct buf a = {0}, b = {0};
	attrs_of(stored, &a);
	attrs_of("objectGUID: G\ndescription: new\ninstanceType: 4\n", &b);
	ck_assert_int_eq(merged_add(&m, a.data, a.len, false), 0);
	ck_assert_int_eq(merged_add(&m, b.data, b.len, true), 0);
	char *got = lines_of(&m);
	ck_assert_str_eq(got, "description: new\ninstanceType: 4\nmember: CN=a,DC=x\n"
	                      "member: CN=b,DC=x\nobjectClass: group\nobjectClass: top\n"
	                      "objectGUID: G\nsAMAccountName: eng\n");
	free(got);
	/* A type sent with no value is gone. */
	attrs_of("description:\n", &b);
	ck_assert_int_eq(merged_add(&m, b.data, b.len, true), 0);
	got = lines_of(&m);
	ck_assert_ptr_null(strstr(got, "description"));
	free(got);
	merged_free(&m);
	buf_free(&a);
	buf_free(&b);
}
END_TEST

START_TEST(ranged_values_are_added_and_removed)
{
	struct merged m = {0};
	struct buf a = {0}, b = {0};
	attrs_of(stored, &a);
	attrs_of("member;range=1-1: CN=c,DC=x\nMEMBER;Range=0-0: CN=a,DC=x\n"
	         "member;range=1-1: CN=b,DC=x\n",
	         &b);
	ck_assert_int_eq(merged_add(&m, a.data, a.len, false), 0);
	ck_assert_int_eq(merged_add(&m, b.data, b.len, true), 0);
	char *got = lines_of(&m);
	ck_assert_str_eq(got, "description: old\nmember: CN=b,DC=x\nmember: CN=c,DC=x\n"
	                      "objectClass: group\nobjectClass: top\nsAMAccountName: eng\n");
	free(got);
	/* The first time an object is seen: its ranged values are its values. */
	merged_clear(&m);
	attrs_of("objectClass: group\nmember;range=1-1: CN=a,DC=x\nmember;range=1-1: CN=z,DC=x\n",
	         &b);
	ck_assert_int_eq(merged_add(&m, b.data, b.len, true), 0);
	got = lines_of(&m);
	ck_assert_str_eq(got, "member: CN=a,DC=x\nmember: CN=z,DC=x\nobjectClass: group\n");
	free(got);
	merged_free(&m);
	buf_free(&a);
	buf_free(&b);
}
END_TEST

START_TEST(the_naming_attribute_follows_the_dn)
{
	struct merged m = {0};
	struct buf a = {0};
	LDAPDN old = NULL, now = NULL;
	attrs_of("objectClass: user\ncn: dave\nsn: T\n", &a);
	ck_assert_int_eq(merged_add(&m, a.data, a.len, false), 0);
	ck_assert_int_eq(
	    merged_set_rdn(&m, "CN=dave,CN=Users,DC=x", "CN=david,OU=Staff,DC=x", &old, &now), 0);
	char *got = lines_of(&m);
	ck_assert_str_eq(got, "cn: david\nobjectClass: user\nsn: T\n");
	free(got);
	ldap_dnfree(old);
	ldap_dnfree(now);
	/* A new object: the RDN's value added to what came (the DC sends no cn). */
	merged_clear(&m);
	attrs_of("objectClass: user\n", &a);
	ck_assert_int_eq(merged_add(&m, a.data, a.len, true), 0);
	ck_assert_int_eq(merged_set_rdn(&m, NULL, "CN=erin,CN=Users,DC=x", &old, &now), 0);
	got = lines_of(&m);
	ck_assert_str_eq(got, "CN: erin\nobjectClass: user\n");
	free(got);
	ldap_dnfree(old);
	ldap_dnfree(now);
	ck_assert_int_eq(merged_set_rdn(&m, NULL, "not a DN", &old, &now), -1);
	ldap_dnfree(old);
	ldap_dnfree(now);
	merged_free(&m);
	buf_free(&a);
}
END_TEST

START_TEST(bad_ber_is_refused)
{
	struct merged m = {0};
	static const unsigned char cut[] = {0x30, 0x10, 0x04, 0x02, 'c', 'n'};
	static const unsigned char no_set[] = {0x30, 0x04, 0x04, 0x02, 'c', 'n'};
	ck_assert_int_eq(merged_add(&m, cut, sizeof(cut), true), -1);
	ck_assert_int_eq(merged_add(&m, no_set, sizeof(no_set), true), -1);
	merged_free(&m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dirsync_merge");
	TCase *tc = tcase_create("merge");
	tcase_add_test(tc, a_change_replaces_types_and_keeps_the_rest);
	tcase_add_test(tc, ranged_values_are_added_and_removed);
	tcase_add_test(tc, the_naming_attribute_follows_the_dn);
	tcase_add_test(tc, bad_ber_is_refused);
	suite_add_tcase(s, tc);
	return check_run(s);
}
