/* Unit tests for conf/key_line.c: the line that set a key, in files written here, checked
 * against what config_load keeps (the last value of a key). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/config.h"
#include "conf/key_line.h"
#include "tests/check_run.h"

static char path[64];

static void write_file(const char *text)
{
	snprintf(path, sizeof(path), "/tmp/minidir-key-line-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

START_TEST(last_line_is_the_value_kept)
{
	write_file("database = /tmp/x.mdb\n"
	           "suffix = dc=example,dc=com\n"
	           "rootdn = cn=admin,dc=example,dc=com\n"
	           "rootpw = first\n"
	           "# rootpw = a comment\n"
	           "rootpwx\n"
	           "rootpw: second\n"
	           "rootpw=third\n"
	           "threads = 2\n");
	ck_assert_int_eq(config_key_line(path, "rootpw"), 8);
	ck_assert_int_eq(config_key_line(path, "rootdn"), 3);
	ck_assert_int_eq(config_key_line(path, "database"), 1);
	ck_assert_int_eq(config_key_line(path, "user"), 0);
	unlink(path);
	/* What config_load keeps is that line's (the file without the line it refuses). */
	write_file("database = /tmp/x.mdb\n"
	           "suffix = dc=example,dc=com\n"
	           "rootdn = cn=admin,dc=example,dc=com\n"
	           "rootpw = first\n"
	           "rootpw: second\n"
	           "rootpw=third\n");
	ck_assert_int_eq(config_key_line(path, "rootpw"), 6);
	struct config cfg;
	char err[512];
	ck_assert_msg(config_load(&cfg, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(cfg.rootpw, "third"); /* the value of line 6 */
	config_free(&cfg);
	unlink(path);
}
END_TEST

/* An indented line continues the key before it (libinih's multi-line values, as an
 * access rule's "by" lines): it does not set the key it starts with. */
START_TEST(indented_lines_continue)
{
	write_file("database = /tmp/x.mdb\n"
	           "suffix = dc=example,dc=com\n"
	           "access = to *\n"
	           "    by * read\n"
	           "rootpw = kept\n"
	           "access = to attrs=cn\n"
	           "  rootpw = part of the access rule\n");
	ck_assert_int_eq(config_key_line(path, "rootpw"), 5);
	ck_assert_int_eq(config_key_line(path, "access"), 6);
	unlink(path);
}
END_TEST

START_TEST(missing_file)
{
	ck_assert_int_eq(config_key_line("/nonexistent/minidir.conf", "rootpw"), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("key_line");
	TCase *tc = tcase_create("key_line");
	tcase_add_test(tc, last_line_is_the_value_kept);
	tcase_add_test(tc, indented_lines_continue);
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	return check_run(s);
}
