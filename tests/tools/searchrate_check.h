/* The main of the searchrate unit tests: one suite of one case, with a fixture. */
#ifndef TESTS_TOOLS_SEARCHRATE_CHECK_H
#define TESTS_TOOLS_SEARCHRATE_CHECK_H

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

/* Runs tests[0..n) as the suite name with setup and teardown (either may be NULL) around
 * each; returns EXIT_SUCCESS when every test passed. */
static inline int searchrate_check_run(const char *name, SFun setup, SFun teardown,
                                       const TTest *const *tests, size_t n)
{
	Suite *suite = suite_create(name);
	SRunner *runner = srunner_create(suite);
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, setup, teardown);
	suite_add_tcase(suite, tc);
	for (size_t i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
