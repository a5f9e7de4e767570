/* password/password_hash.c: every scheme of the table makes values the verifier
 * (password_check) accepts for the password and rejects for another; salts differ. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "password/password.h"
#include "tests/check_run.h"

static char *hash(const char *scheme, const char *pw, const struct password_hash_opts *o)
{
	char err[256] = "";
	const struct password_scheme *s = password_scheme_find(scheme);
	ck_assert_msg(s, "no scheme %s", scheme);
	char *v = password_hash(s, pw, strlen(pw), o, err, sizeof(err));
	ck_assert_msg(v, "%s: %s", scheme, err);
	return v;
}

static bool check_pw(const char *stored, const char *given)
{
	return password_check(stored, strlen(stored), given, strlen(given));
}

/* The error password_hash gives, or "" when it made a value. */
static const char *refusal(const char *scheme, const char *pw, size_t len,
                           const struct password_hash_opts *o)
{
	static char err[256];
	err[0] = '\0';
	char *v = password_hash(password_scheme_find(scheme), pw, len, o, err, sizeof(err));
	if (v) {
		free(v);
		return "";
	}
	ck_assert_str_ne(err, "");
	return err;
}

START_TEST(every_scheme_verifies)
{
	const struct password_scheme *s = &password_schemes[_i];
	char err[256];
	char *v = password_hash(s, "s3cret", 6, NULL, err, sizeof(err));
	ck_assert_msg(v, "%s: %s", s->name, err);
	if (s->kind == PASSWORD_CLEARTEXT)
		ck_assert_str_eq(v, "s3cret");
	else
		ck_assert_msg(strncmp(v, s->name, strlen(s->name)) == 0, "%s made %s", s->name, v);
	ck_assert_msg(check_pw(v, "s3cret"), "%s: %s rejected the password", s->name, v);
	ck_assert_msg(!check_pw(v, "s3cret!"), "%s: %s accepted another", s->name, v);
	ck_assert_msg(!check_pw(v, "s3cre"), "%s: %s accepted a prefix", s->name, v);
	ck_assert(password_scheme_known(v, strlen(v)));
	/* A second value: a fresh salt, unless the scheme has none. */
	char *w = password_hash(s, "s3cret", 6, NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(w);
	bool unsalted = s->kind == PASSWORD_CLEARTEXT || (s->kind == PASSWORD_DIGEST && !s->salted);
	if (unsalted)
		ck_assert_str_eq(v, w);
	else
		ck_assert_msg(strcmp(v, w) != 0, "%s: the same salt twice: %s", s->name, v);
	ck_assert(check_pw(w, "s3cret"));
	free(v);
	free(w);
}
END_TEST

START_TEST(find_by_name)
{
	ck_assert_str_eq(password_scheme_find("{SSHA}")->name, "{SSHA}");
	ck_assert_str_eq(password_scheme_find("{ssha512}")->name, "{SSHA512}");
	ck_assert_str_eq(password_scheme_find("crypt")->name, "{CRYPT}");
	ck_assert_ptr_null(password_scheme_find("{SCRYPT}"));
	ck_assert_str_eq(password_scheme_find("pbkdf2-sha512")->name, "{PBKDF2-SHA512}");
	ck_assert_ptr_null(password_scheme_find("{SSHA"));
	ck_assert_ptr_null(password_scheme_find("SSHA}"));
	ck_assert_ptr_null(password_scheme_find(""));
	ck_assert_ptr_null(password_scheme_find("{}"));
	/* The table is what the verifier knows: every prefixed name is known to it. */
	for (size_t i = 0; i + 1 < password_nschemes; i++) {
		const char *n = password_schemes[i].name;
		ck_assert_msg(password_scheme_known(n, strlen(n)), "%s", n);
	}
	ck_assert_int_eq(password_schemes[password_nschemes - 1].kind, PASSWORD_CLEARTEXT);
}
END_TEST

START_TEST(crypt_salt_formats)
{
	struct password_hash_opts o = {.crypt_salt_format = "$6$%.16s"};
	char *v = hash("{CRYPT}", "s3cret", &o);
	/* "{CRYPT}$6$" then 16 salt characters, then "$" */
	ck_assert_msg(strncmp(v, "{CRYPT}$6$", 10) == 0 && strlen(v) > 27 && v[26] == '$', "%s", v);
	ck_assert_uint_eq(
	    strspn(v + 10, "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"), 16);
	ck_assert(check_pw(v, "s3cret") && !check_pw(v, "x"));
	char *w = hash("{CRYPT}", "s3cret", &o);
	ck_assert_str_ne(v, w);
	free(v);
	free(w);
	o.crypt_salt_format = "$5$rounds=6000$%.12s";
	v = hash("{CRYPT}", "s3cret", &o);
	ck_assert_msg(strncmp(v, "{CRYPT}$5$rounds=6000$", 22) == 0, "%s", v);
	ck_assert(check_pw(v, "s3cret"));
	free(v);
	o.crypt_salt_format = "%.2s"; /* DES, slappasswd's old default */
	v = hash("{CRYPT}", "s3cret", &o);
	ck_assert_uint_eq(strlen(v), 7 + 13);
	ck_assert(check_pw(v, "s3cret"));
	free(v);
	/* Without -c: crypt_gensalt's default method, salted anew each time. */
	v = hash("{CRYPT}", "s3cret", NULL);
	ck_assert_msg(strncmp(v, "{CRYPT}$", 8) == 0, "%s", v);
	free(v);
	static const char *const bad[] = {"$6$", "$6$%d",   "$6$%s%s", "$6$%.0s",     "$6$%.s",
	                                  "%",   "$6$%x%s", "*%s",     "$6$%.99s%%%", "$9$%.16s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.crypt_salt_format = bad[i];
		ck_assert_msg(*refusal("{CRYPT}", "s3cret", 6, &o), "%s accepted", bad[i]);
	}
	o.crypt_salt_format = "%%%s"; /* "%%" is a "%": crypt(3) refuses that salt, clearly */
	ck_assert_ptr_nonnull(strstr(refusal("{CRYPT}", "s3cret", 6, &o), "refuses the salt"));
}
END_TEST

START_TEST(argon2_costs)
{
	char *v = hash("{ARGON2}", "s3cret", NULL);
	ck_assert_msg(strncmp(v, "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$", 38) == 0, "%s", v);
	free(v);
	struct password_hash_opts o = {.argon2_t = 2, .argon2_m_kib = 512, .argon2_p = 2};
	v = hash("{ARGON2}", "s3cret", &o);
	ck_assert_msg(strncmp(v, "{ARGON2}$argon2id$v=19$m=512,t=2,p=2$", 37) == 0, "%s", v);
	ck_assert(check_pw(v, "s3cret") && !check_pw(v, "s3cret "));
	free(v);
	o.argon2_m_kib = 1; /* below libargon2's minimum (8 KiB per lane) */
	ck_assert_ptr_nonnull(strstr(refusal("{ARGON2}", "s3cret", 6, &o), "m=1"));
}
END_TEST

START_TEST(refused_passwords)
{
	ck_assert_ptr_nonnull(strstr(refusal("{SSHA}", "", 0, NULL), "empty"));
	ck_assert_ptr_nonnull(strstr(refusal("{CLEARTEXT}", "", 0, NULL), "empty"));
	ck_assert_ptr_nonnull(strstr(refusal("{CRYPT}", "a\0b", 3, NULL), "NUL"));
	ck_assert_ptr_nonnull(strstr(refusal("{CLEARTEXT}", "{SSHA}x", 7, NULL), "scheme"));
	ck_assert_ptr_nonnull(strstr(refusal("{CLEARTEXT}", "a\nb", 3, NULL), "line"));
	/* A brace alone is no scheme: the verifier reads "{abc" as cleartext too. */
	ck_assert_str_eq(refusal("{CLEARTEXT}", "{abc", 4, NULL), "");
	/* Bytes a digest takes as they are: a NUL, a final newline. */
	char err[64];
	char *v =
	    password_hash(password_scheme_find("{SSHA256}"), "a\0b\n", 4, NULL, err, sizeof(err));
	ck_assert_ptr_nonnull(v);
	ck_assert(password_check(v, strlen(v), "a\0b\n", 4));
	ck_assert(!password_check(v, strlen(v), "a\0b", 3));
	free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("password_hash");
	TCase *tc = tcase_create("schemes");
	tcase_add_loop_test(tc, every_scheme_verifies, 0, (int)password_nschemes);
	tcase_add_test(tc, find_by_name);
	tcase_add_test(tc, crypt_salt_formats);
	tcase_add_test(tc, argon2_costs);
	tcase_add_test(tc, refused_passwords);
	suite_add_tcase(s, tc);
	return check_run(s);
}
