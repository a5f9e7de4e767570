/* The end of every unit test's main: run a check suite, report, give the exit status. */
#ifndef TESTS_CHECK_RUN_H
#define TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

/* Runs suite (the runner takes it and frees it) and returns EXIT_SUCCESS when every test
 * passed, else EXIT_FAILURE. */
static inline int check_run(Suite *suite)
{
	SRunner *runner = srunner_create(suite);
	srunner_run_all(runner, CK_NORMAL);
	int failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
