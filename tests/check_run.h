/* The end of every unit test's main: run a check suite, report, give the exit status. */
#ifndef TESTS_CHECK_RUN_H
#define TESTS_CHECK_RUN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocol/schema.h"
#include "tests/tree_schema.h"

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

/* check_run with the tree's schema files (tests/tree_schema.h) files loaded first and freed
 * after; EXIT_FAILURE with a message when they do not load. */
static inline int check_run_schema(Suite *suite, const char *files)
{
	char err[1024];
	if (schema_load(TEST_SCHEMA_DIR, files, err, sizeof(err)) < 0) {
		fprintf(stderr, "schema: %s\n", err);
		srunner_free(srunner_create(suite)); /* frees suite, run or not */
		return EXIT_FAILURE;
	}
	int status = check_run(suite);
	schema_free();
	return status;
}

#endif
