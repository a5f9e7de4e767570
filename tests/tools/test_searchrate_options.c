/* searchrate's TLS, reconnect and engine options (tools/searchrate/options.c): the values and the
 * URI they give, and the combinations refused with exit status 2. */
#include <check.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/tools/searchrate_check.h"
#include "tools/searchrate/options.h"

static struct sr_config cfg;
static char pem[] = "/tmp/searchrate-options-pem.XXXXXX";
static char notpem[] = "/tmp/searchrate-options-txt.XXXXXX";

static void write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void setup(void)
{
	optind = 0; /* getopt starts afresh, also when the tests share a process (CK_FORK=no) */
	strcpy(pem, "/tmp/searchrate-options-pem.XXXXXX");
	strcpy(notpem, "/tmp/searchrate-options-txt.XXXXXX");
	write_temp(pem, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
	write_temp(notpem, "not a certificate\n");
	/* The usage text after each refused combination is not what is tested here. */
	ck_assert_ptr_nonnull(freopen("/dev/null", "w", stderr));
}

static void teardown(void)
{
	options_free(&cfg);
	unlink(pem);
	unlink(notpem);
}

/* options_parse over "searchrate -b dc=test,dc=org" and the arguments given, up to a NULL. */
static int parse(const char *arg, ...)
{
	char *argv[32] = {"searchrate", "-b", "dc=test,dc=org"};
	int argc = 3;
	va_list ap;
	va_start(ap, arg);
	for (const char *a = arg; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	optind = 0;
	options_free(&cfg);
	return options_parse(&cfg, argc, argv);
}

START_TEST(use_ssl_gives_ldaps)
{
	ck_assert_int_eq(parse("-Z", "-P", pem, "-p", "636", NULL), -1);
	ck_assert(cfg.use_ssl && !cfg.use_starttls && !cfg.trust_all);
	ck_assert_str_eq(cfg.truststore, pem);
	ck_assert_str_eq(cfg.uri, "ldaps://127.0.0.1:636");
	ck_assert_int_eq(parse("--useSSL", "--trustAll", "-h", "::1", NULL), -1);
	ck_assert(cfg.use_ssl && cfg.trust_all);
	ck_assert_str_eq(cfg.uri, "ldaps://[::1]:389");
}
END_TEST

START_TEST(starttls_stays_ldap)
{
	ck_assert_int_eq(parse("-q", "-X", NULL), -1);
	ck_assert(cfg.use_starttls && !cfg.use_ssl && cfg.trust_all);
	ck_assert_str_eq(cfg.uri, "ldap://127.0.0.1:389");
	ck_assert_int_eq(parse("--useStartTLS", "--trustStorePath", pem, NULL), -1);
	ck_assert(cfg.use_starttls && !cfg.trust_all);
	ck_assert_int_eq(parse(NULL), -1); /* neither: plain LDAP, no TLS */
	ck_assert(!cfg.use_ssl && !cfg.use_starttls && !cfg.truststore);
	ck_assert_str_eq(cfg.uri, "ldap://127.0.0.1:389");
}
END_TEST

START_TEST(iterations_before_reconnect)
{
	ck_assert_int_eq(parse(NULL), -1);
	ck_assert_uint_eq(cfg.reconnect_every, 0);
	ck_assert_int_eq(parse("--iterationsBeforeReconnect", "1", NULL), -1);
	ck_assert_uint_eq(cfg.reconnect_every, 1);
	ck_assert_int_eq(parse("--iterationsBeforeReconnect", "-1", NULL), 2);
	ck_assert_int_eq(parse("--iterationsBeforeReconnect", "x", NULL), 2);
}
END_TEST

START_TEST(combinations_refused)
{
	ck_assert_int_eq(parse("-Z", "-q", NULL), 2);
	ck_assert_int_eq(parse("-Z", "-X", "-P", pem, NULL), 2);
	ck_assert_int_eq(parse("-X", NULL), 2);       /* trust without TLS */
	ck_assert_int_eq(parse("-P", pem, NULL), 2);  /* the same */
	ck_assert_int_eq(parse("-Z", "-P", NULL), 2); /* no value */
	ck_assert_int_eq(parse("-Z", "-P", notpem, NULL), 2);
	ck_assert_int_eq(parse("-Z", "-P", "/nonexistent/ca.pem", NULL), 2);
}
END_TEST

START_TEST(engine_lean_by_default)
{
	ck_assert_int_eq(parse(NULL), -1);
	ck_assert_int_eq(cfg.engine, SR_ENGINE_LEAN);
	ck_assert_int_eq(parse("-Z", "-X", NULL), -1);
	ck_assert_int_eq(cfg.engine, SR_ENGINE_LEAN);
	ck_assert_int_eq(parse("-q", "-X", "--engine", "libldap", NULL), -1);
	ck_assert_int_eq(cfg.engine, SR_ENGINE_LIBLDAP);
	ck_assert_int_eq(parse("--engine", "libldap", NULL), -1);
	ck_assert_int_eq(cfg.engine, SR_ENGINE_LIBLDAP);
	ck_assert_int_eq(parse("--engine", "lean", "-a", "-O", "16", NULL), -1);
	ck_assert_int_eq(cfg.engine, SR_ENGINE_LEAN);
	ck_assert_int_eq(cfg.max_outstanding, 16);
	ck_assert_int_eq(parse("--engine", "lean", "-Z", "-X", "--resumeTLSSessions", NULL), -1);
	ck_assert(cfg.resume_tls);
	ck_assert_int_eq(parse("--resumeTLSSessions", NULL), 2); /* without TLS */
	ck_assert_int_eq(parse("--engine", "libldap", "-q", "-X", "--resumeTLSSessions", NULL), 2);
	ck_assert_int_eq(parse("--engine", "fast", NULL), 2);
	ck_assert_int_eq(parse("--engine", NULL), 2);
}
END_TEST

/* --version, like --help, ends the parse with status 0 (it prints "searchrate VERSION"). */
START_TEST(version_exits_zero)
{
	ck_assert_int_eq(parse("--version", NULL), 0);
	ck_assert_int_eq(parse("--version", "--bogus", NULL), 0);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = {
	    use_ssl_gives_ldaps,  starttls_stays_ldap,    iterations_before_reconnect,
	    combinations_refused, engine_lean_by_default, version_exits_zero,
	};
	return searchrate_check_run("searchrate_options", setup, teardown, tests,
	                            sizeof(tests) / sizeof(tests[0]));
}
