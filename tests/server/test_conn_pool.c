/* server/conn_pool.c: connections packed in slabs, slabs unmapped when empty. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/conn.h"
#include "server/conn_pool.h"

#define MANY 2000

START_TEST(get_gives_distinct_zeroed_conns_and_put_empties_the_pool)
{
	struct conn_pool p = {0};
	static struct conn *c[MANY];
	for (int i = 0; i < MANY; i++) {
		c[i] = conn_pool_get(&p);
		ck_assert_ptr_nonnull(c[i]);
		ck_assert_int_eq(c[i]->fd, 0);
		ck_assert_ptr_null(c[i]->next);
		memset(c[i], 0xa5, sizeof(*c[i])); /* dirty it: the next get must zero it */
		c[i]->fd = i;
	}
	for (int i = 0; i < MANY; i++)
		ck_assert_int_eq(c[i]->fd, i); /* no two share memory */
	/* Give back every other one, then take as many again: slots are reused. */
	for (int i = 0; i < MANY; i += 2)
		conn_pool_put(&p, c[i]);
	size_t slabs = p.slabs_n;
	for (int i = 0; i < MANY; i += 2) {
		c[i] = conn_pool_get(&p);
		ck_assert_int_eq(c[i]->fd, 0);
		c[i]->fd = i;
	}
	ck_assert_uint_eq(p.slabs_n, slabs); /* no new slab while old ones had room */
	for (int i = 0; i < MANY; i++)
		conn_pool_put(&p, c[i]);
	ck_assert_uint_eq(p.slabs_n, 0);
	ck_assert_ptr_null(p.slabs);
	conn_pool_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conn_pool");
	TCase *tc = tcase_create("pool");
	tcase_add_test(tc, get_gives_distinct_zeroed_conns_and_put_empties_the_pool);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
