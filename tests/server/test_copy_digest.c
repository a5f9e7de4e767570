/* server/copy_digest.c: the checksums of a /snapshot copy against known values (SHA-256's
 * of FIPS 180-2; XXH3-128's as xxhsum -H2 prints them), the same digest whether the bytes
 * come at once or in pieces, and the names a request may ask by. */
#include <check.h>
#include <string.h>

#include "server/copy_digest.h"
#include "tests/check_run.h"

/* The hex of kind over text, added in steps of step bytes. */
static void digest_of(enum copy_digest_kind kind, const char *text, size_t step,
                      char hex[COPY_DIGEST_HEX_MAX + 1])
{
	struct copy_digest d;
	ck_assert_int_eq(copy_digest_start(&d, kind), 0);
	size_t len = strlen(text);
	for (size_t at = 0; at < len; at += step)
		copy_digest_add(&d, text + at, len - at < step ? len - at : step);
	ck_assert_int_eq(copy_digest_hex(&d, hex), 0);
	copy_digest_free(&d);
	copy_digest_free(&d); /* twice is fine: the state is gone */
}

START_TEST(known_values)
{
	char hex[COPY_DIGEST_HEX_MAX + 1];
	digest_of(COPY_DIGEST_SHA256, "abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	digest_of(COPY_DIGEST_XXH3_128, "abc", 3, hex);
	ck_assert_str_eq(hex, "06b05ab6733a618578af5f94892f3950");
	digest_of(COPY_DIGEST_XXH3_128, "", 1, hex);
	ck_assert_uint_eq(strlen(hex), 32);
}
END_TEST

START_TEST(pieces_make_the_same_digest)
{
	static char text[5000];
	for (size_t i = 0; i + 1 < sizeof(text); i++)
		text[i] = (char)('a' + (i * 7) % 26);
	for (int k = COPY_DIGEST_SHA256; k <= COPY_DIGEST_XXH3_128; k++) {
		char whole[COPY_DIGEST_HEX_MAX + 1], parts[COPY_DIGEST_HEX_MAX + 1];
		digest_of((enum copy_digest_kind)k, text, sizeof(text), whole);
		digest_of((enum copy_digest_kind)k, text, 7, parts);
		ck_assert_str_eq(whole, parts);
	}
}
END_TEST

START_TEST(names_and_trailers)
{
	enum copy_digest_kind k = COPY_DIGEST_SHA256;
	ck_assert(copy_digest_by_name(" XXH3-128\t", &k));
	ck_assert_int_eq(k, COPY_DIGEST_XXH3_128);
	ck_assert(copy_digest_by_name("sha-256", &k));
	ck_assert_int_eq(k, COPY_DIGEST_SHA256);
	k = COPY_DIGEST_XXH3_128;
	ck_assert(!copy_digest_by_name("md5", &k));
	ck_assert(!copy_digest_by_name("xxh3-128x", &k));
	ck_assert(!copy_digest_by_name("", &k));
	ck_assert_int_eq(k, COPY_DIGEST_XXH3_128); /* unchanged when not known */
	ck_assert_str_eq(copy_digest_trailer(COPY_DIGEST_SHA256), "X-Snapshot-Sha256");
	ck_assert_str_eq(copy_digest_trailer(COPY_DIGEST_XXH3_128), "X-Snapshot-Xxh3-128");
}
END_TEST

int main(void)
{
	Suite *su = suite_create("copy_digest");
	TCase *tc = tcase_create("copy_digest");
	tcase_add_test(tc, known_values);
	tcase_add_test(tc, pieces_make_the_same_digest);
	tcase_add_test(tc, names_and_trailers);
	suite_add_tcase(su, tc);
	return check_run(su);
}
