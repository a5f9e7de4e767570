/* Password schemes of password/password.c against hashes made by other tools. */
#include <argon2.h>
#include <check.h>
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "password/password.h"
#include "tests/check_run.h"

static bool check_pw(const char *stored, const char *given)
{
	return password_check(stored, strlen(stored), given, strlen(given));
}

/* Made with Python's hashlib (salt "saltsalt") and crypt(3), password "s3cret". */
static const char *const hashes[] = {
    "{MD5}M+GyMqTm+gAopmcHU3SaFw==",
    "{SMD5}IXQsm0LvorDqX8TU/CHvanNhbHRzYWx0",
    "{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=",
    "{SSHA}/E1l+cHA9/sxcS5MD8umnjm1FX9zYWx0c2FsdA==",
    "{SHA256}HsHCa1DV08WNlYMYGvgHZlX+AHVr9yhZQLo2cPmfy6A=",
    "{SSHA256}sAzsU8Qoxm5ho6tVXeaXOHmm9FGI3gmOAbwalAdL5BlzYWx0c2FsdA==",
    "{SHA512}lcia3d5QY1fsXv0O5BrCQe/W+xAJp2gMFQHqgXA0K4y/Dy2Ti1YpVJDxnx/"
    "F+ijQmxWE6qCcmmsvd3YjKZzVIQ==",
    "{SSHA512}8me3HaYO7C+Bo5xRmJkGYMQkWTurNq21pKGy5Bv6Bv9QsRDztLx7tYWSVSYdtNV3XTQhZrF0+"
    "qnJFVg6YJUVMHNhbHRzYWx0",
    "{CRYPT}$6$abcdefgh$Z7KfoKnKTSZrzo5VZ0YubGLQOj9ov6sHo9TmE3zIU/"
    "LHKhpE30zCnZ0mcIXYf9r9rQ4DYaXoxAFSPFlcWdxjB.",
    "{crypt}$6$abcdefgh$Z7KfoKnKTSZrzo5VZ0YubGLQOj9ov6sHo9TmE3zIU/"
    "LHKhpE30zCnZ0mcIXYf9r9rQ4DYaXoxAFSPFlcWdxjB.",
    /* slappasswd -o module-load=argon2 -h {ARGON2} -s s3cret (Debian 12's slapd 2.5) */
    "{ARGON2}$argon2i$v=19$m=4096,t=3,p=1$z1IRkRIeOG23HBrxhzKJ8g$"
    "07Pm0C1+LfsYC/ef8C03cacqVupNbMuE1D2w7feGmUo",
    /* PBKDF2 in the "ITERATIONS$SALT$KEY" form (slapd's pw-pbkdf2, 389-ds's pwdchan),
     * made with Python's hashlib.pbkdf2_hmac, salt "saltsaltsaltsalt", 1000 iterations */
    "{PBKDF2-SHA512}1000$c2FsdHNhbHRzYWx0c2FsdA$BF0Z.Mlb3HBqxOQbXgnmAzq7uv79TtpCQGjW2l/"
    "cObjwAK3Dlnaa0V18xkzEbua5j64nZNrvvWeMlBiZjhtoFg",
    "{PBKDF2-SHA256}1000$c2FsdHNhbHRzYWx0c2FsdA$8W5yLmqTx7pmJ5.3qp/ZOQP9vTuo.lMNfP/lMdTb9u8",
    "{PBKDF2-SHA1}1000$c2FsdHNhbHRzYWx0c2FsdA$1UPI/DDkq0kGiPrtkZ6RmZsxQbI",
    "{pbkdf2}1000$c2FsdHNhbHRzYWx0c2FsdA$1UPI/DDkq0kGiPrtkZ6RmZsxQbI",
};

/* 389-ds's own {PBKDF2_SHA256} (10,000 iterations), as 389-ds wrote it for "Password123"
 * (published in github.com/thesubtlety/389-ds-password-check's README; the key checked
 * here with Python's hashlib too). */
static const char ds_pbkdf2_sha256[] =
    "{PBKDF2_SHA256}AAAnEGTxXtnR/oox922/jZyjH6fmiIdW4AwIYZE2LfCVL/SUz5GbAHfjRj4NbN2u8ul0/j/"
    "dUzJ4gQSawGALGHZV74nOAtPttoZDTsh7BeGCLD/Ps7vRugwDdz9uPARXzF3bD/8qCpumvRGb4pehzfQsk+"
    "FnGgTwi0rUeVaN8a7Kbv8ZpRfU2sd+208F/YL42BWAh/2tv0I4vY7ZsrCZcrUJtgKWy5Nr+t78zmPkrZsX/"
    "kgfnGdXhr50kN10cmkLQ0/cZOXo9CAkpeZyFu+wQ5vQdUaES2Vd5kBjJYPCkr4b2ocr4ETQi3IGO2GGCoCet"
    "mMIETsudRVSxUNBbva+Vgxin5Apu4wIP/0ZyuGK6TuWLqLnNpmK3RkRx0xjqJ4nN2Ok0ul0XYBJcYIBt4Uoa"
    "VM2uSa/Etw28Uy+zAsUv2AOiRo5";

START_TEST(pbkdf2_389ds)
{
	ck_assert(check_pw(ds_pbkdf2_sha256, "Password123"));
	ck_assert(!check_pw(ds_pbkdf2_sha256, "Password124"));
	char class[64];
	password_cost_class(ds_pbkdf2_sha256, strlen(ds_pbkdf2_sha256), class, sizeof(class));
	ck_assert_str_eq(class, "{PBKDF2_SHA256}10000");
	const char *v = "{PBKDF2-SHA512}1000$c2FsdHNhbHRzYWx0c2FsdA$x";
	password_cost_class(v, strlen(v), class, sizeof(class));
	ck_assert_str_eq(class, "{PBKDF2-SHA512}1000$");
	/* cut short, one character wrong, a count of 0 or past the bound: never a match */
	char cut[sizeof(ds_pbkdf2_sha256)];
	memcpy(cut, ds_pbkdf2_sha256, sizeof(cut));
	cut[sizeof(cut) - 5] = '\0';
	ck_assert(!check_pw(cut, "Password123"));
	memcpy(cut, ds_pbkdf2_sha256, sizeof(cut));
	cut[40] = cut[40] == 'A' ? 'B' : 'A';
	ck_assert(!check_pw(cut, "Password123"));
	ck_assert(!check_pw("{PBKDF2-SHA256}0$c2FsdHNhbHRzYWx0c2FsdA$8W5yLmqTx7pmJ5", "s3cret"));
	ck_assert(!check_pw("{PBKDF2-SHA256}99999999$c2FsdA$8W5yLmqTx7pmJ5", "s3cret"));
	ck_assert(!check_pw("{PBKDF2-SHA256}1000$$8W5yLmqTx7pmJ5", "s3cret"));
	ck_assert(!check_pw("{PBKDF2-SHA256}1000$c2FsdA", "s3cret"));
	ck_assert(!check_pw("{PBKDF2-SHA256}x1000$c2FsdA$8W5yLmqTx7pmJ5", "s3cret"));
	ck_assert(!check_pw("{PBKDF2-SHA256}1000$c2F!dA$8W5yLmqTx7pmJ5", "s3cret"));
	ck_assert(!check_pw("{PBKDF2_SHA256}AAAnEA", "s3cret"));
}
END_TEST

START_TEST(schemes_accept_the_password)
{
	ck_assert_msg(check_pw(hashes[_i], "s3cret"), "%s rejected the right password", hashes[_i]);
	ck_assert_msg(!check_pw(hashes[_i], "s3cret!"), "%s accepted a wrong password", hashes[_i]);
	ck_assert_msg(!check_pw(hashes[_i], ""), "%s accepted an empty password", hashes[_i]);
}
END_TEST

START_TEST(yescrypt)
{
	char *salt = crypt_gensalt("$y$", 0, NULL, 0);
	ck_assert_ptr_nonnull(salt);
	struct crypt_data data;
	memset(&data, 0, sizeof(data));
	const char *h = crypt_r("s3cret", salt, &data);
	ck_assert_ptr_nonnull(h);
	char stored[512] = "{CRYPT}";
	strncat(stored, h, sizeof(stored) - 8);
	ck_assert(check_pw(stored, "s3cret"));
	ck_assert(!check_pw(stored, "other"));
}
END_TEST

/* Encodes s3cret with libargon2 itself: the types slappasswd does not write by default. */
static void argon2_encode(argon2_type type, uint32_t m, char *out, size_t outlen)
{
	strcpy(out, "{ARGON2}");
	ck_assert_int_eq(argon2_hash(2, m, 1, "s3cret", 6, "saltsaltsalt", 12, NULL, 32, out + 8,
	                             outlen - 8, type, ARGON2_VERSION_13),
	                 ARGON2_OK);
}

START_TEST(argon2_types)
{
	static const argon2_type types[] = {Argon2_id, Argon2_i, Argon2_d};
	char stored[256];
	argon2_encode(types[_i], 256, stored, sizeof(stored));
	ck_assert_msg(check_pw(stored, "s3cret"), "%s rejected the right password", stored);
	ck_assert_msg(!check_pw(stored, "s3cret2"), "%s accepted a wrong password", stored);
	ck_assert(!check_pw(stored, "s3cre"));
	/* The scheme is case-insensitive, as the others; the PHC string is not. */
	stored[1] = 'a';
	ck_assert(check_pw(stored, "s3cret"));
}
END_TEST

START_TEST(argon2_malformed)
{
	char good[256];
	argon2_encode(Argon2_id, 256, good, sizeof(good));
	ck_assert(check_pw(good, "s3cret"));
	size_t len = strlen(good);
	/* Cut anywhere, it never matches (nor crashes). */
	for (size_t n = 0; n < len; n++)
		ck_assert_msg(!password_check(good, n, "s3cret", 6), "accepted %.*s", (int)n, good);
	char bad[300];
	/* another type's name on an argon2id hash; an unknown type */
	snprintf(bad, sizeof(bad), "{ARGON2}$argon2i$%s", good + strlen("{ARGON2}$argon2id$"));
	ck_assert(!check_pw(bad, "s3cret"));
	snprintf(bad, sizeof(bad), "{ARGON2}$argon2x$%s", good + strlen("{ARGON2}$argon2id$"));
	ck_assert(!check_pw(bad, "s3cret"));
	ck_assert(!check_pw("{ARGON2}", "s3cret"));
	ck_assert(!check_pw("{ARGON2}$argon2id$", "s3cret"));
	ck_assert(!check_pw("{ARGON2}$argon2id$v=19$m=256,t=2,p=1$!!!!$!!!!", "s3cret"));
	ck_assert(!check_pw("{ARGON2}$argon2id$v=19$m=0,t=0,p=0$c2FsdHNhbHQ$c2FsdHNhbHQ", "x"));
	/* A NUL inside the value is not a shorter hash. */
	char nul[300];
	memcpy(nul, good, len);
	nul[len] = '\0';
	memcpy(nul + len + 1, "junk", 4);
	ck_assert(!password_check(nul, len + 5, "s3cret", 6));
}
END_TEST

START_TEST(plaintext_and_bad_values)
{
	ck_assert(check_pw("plain", "plain"));
	ck_assert(!check_pw("plain", "Plain"));
	ck_assert(!check_pw("plain", "plai"));
	/* Unknown schemes and broken hashes never match, even the literal text. */
	ck_assert(!check_pw("{MD5}abc", "{MD5}abc"));
	ck_assert(!check_pw("{SSHA}!!!!", "x"));
	ck_assert(!check_pw("{SSHA}", ""));
	ck_assert(!check_pw("{SHA}AAAA", "x"));
	ck_assert(!check_pw("{CRYPT}*", "*"));
	ck_assert(!check_pw("", ""));
	/* A digest value is read as written, padded, in the standard alphabet: not in the
	 * PBKDF2 schemes' adapted form ('.' for '+', no padding), which password/b64.c reads
	 * too. */
	ck_assert(check_pw("{SSHA}0dBqQguFZeBQXD4mnHEEMB+YvvcABwkAAQ==", "secret"));
	ck_assert(!check_pw("{SSHA}0dBqQguFZeBQXD4mnHEEMB+YvvcABwkAAQ", "secret"));
	ck_assert(!check_pw("{SSHA}0dBqQguFZeBQXD4mnHEEMB.YvvcABwkAAQ==", "secret"));
}
END_TEST

static const char *cost_class(const char *stored)
{
	static char out[64];
	password_cost_class(stored, strlen(stored), out, sizeof(out));
	return out;
}

START_TEST(cost_classes)
{
	ck_assert_str_eq(cost_class("{SSHA}/E1l+cHA9/sxcS5MD8umnjm1FX9zYWx0c2FsdA=="), "{SSHA}");
	ck_assert_str_eq(cost_class("plain"), "");
	ck_assert_str_eq(cost_class("{CRYPT}$6$abcdefgh$Z7Kfo"), "{CRYPT}$6$");
	ck_assert_str_eq(cost_class("{CRYPT}$6$rounds=9000$abcdefgh$Z7Kfo"),
	                 "{CRYPT}$6$rounds=9000$");
	ck_assert_str_eq(cost_class("{crypt}$2b$12$saltsaltsaltsaltsaltsahash"), "{crypt}$2b$12$");
	ck_assert_str_eq(cost_class("{CRYPT}$y$j9T$salt$hash"), "{CRYPT}$y$j9T$");
	ck_assert_str_eq(cost_class("{CRYPT}abcdefghijklm"), "{CRYPT}"); /* DES */
	ck_assert_str_eq(cost_class("{CRYPT}$6"), "{CRYPT}");
	ck_assert_str_eq(cost_class("{SSHA"), "");
	/* Salts differ, the class does not: same cost. */
	ck_assert_str_eq(cost_class("{CRYPT}$5$aaaa$x"), cost_class("{CRYPT}$5$bbbbbbbb$y"));
	ck_assert_str_eq(cost_class(hashes[10]), "{ARGON2}$argon2i$v=19$m=4096,t=3,p=1$");
	ck_assert_str_eq(cost_class("{argon2}$argon2id$m=65536,t=2,p=1$salt$hash"),
	                 "{argon2}$argon2id$m=65536,t=2,p=1$"); /* version 1.0: no v= */
	ck_assert_str_eq(cost_class("{ARGON2}$argon2id$v=19$"), "{ARGON2}");
	ck_assert_str_eq(cost_class("{ARGON2}x"), "{ARGON2}");
	char small[4];
	ck_assert_uint_eq(password_cost_class("{SSHA}x", 7, small, sizeof(small)), 3);
	ck_assert_str_eq(small, "{SS");
}
END_TEST

START_TEST(schemes_known)
{
	for (size_t i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++)
		ck_assert_msg(password_scheme_known(hashes[i], strlen(hashes[i])), "%s", hashes[i]);
	ck_assert(password_scheme_known("plain", 5));
	ck_assert(password_scheme_known("{SSHA", 5)); /* no closing brace: plaintext */
	ck_assert(!password_scheme_known("{SCRYPT}abc", 11));
	ck_assert(!password_scheme_known("{}abc", 5));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("password");
	TCase *tc = tcase_create("schemes");
	tcase_add_loop_test(tc, schemes_accept_the_password, 0, sizeof(hashes) / sizeof(hashes[0]));
	tcase_add_test(tc, yescrypt);
	tcase_add_test(tc, plaintext_and_bad_values);
	tcase_add_test(tc, cost_classes);
	tcase_add_loop_test(tc, argon2_types, 0, 3);
	tcase_add_test(tc, argon2_malformed);
	tcase_add_test(tc, schemes_known);
	tcase_add_test(tc, pbkdf2_389ds);
	suite_add_tcase(s, tc);
	return check_run(s);
}
