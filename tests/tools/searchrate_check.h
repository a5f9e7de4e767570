/* The main of the searchrate unit tests: one suite of one case, with a fixture. */
#ifndef TESTS_TOOLS_SEARCHRATE_CHECK_H
#define TESTS_TOOLS_SEARCHRATE_CHECK_H

#include <check.h>
#include <stddef.h>

#include "tests/check_run.h"

/* Runs tests[0..n) as the suite name with setup and teardown (either may be NULL) around
 * each; returns EXIT_SUCCESS when every test passed. */
static inline int searchrate_check_run(const char *name, SFun setup, SFun teardown,
                                       const TTest *const *tests, size_t n)
{
	Suite *suite = suite_create(name);
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(suite, tc);
	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	return check_run(suite);
}

#endif
