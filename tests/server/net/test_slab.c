/* server/slab.c: objects packed in slabs, slabs unmapped when empty (but the last). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/net/slab.h"
#include "tests/check_run.h"

#define MANY 2000

/* Under AddressSanitizer slab.c hands out plain mallocs (no slabs to count). */
#if defined(__SANITIZE_ADDRESS__)
#define SLABS_ARE_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLABS_ARE_MALLOC 1
#endif
#endif

struct object {
	int id;
	char payload[300];
	void *next;
};

START_TEST(get_gives_distinct_zeroed_objects_and_put_empties_the_set)
{
	struct slab s = {.size = sizeof(struct object)};
	static struct object *o[MANY];
	for (int i = 0; i < MANY; i++) {
		o[i] = slab_get(&s);
		ck_assert_ptr_nonnull(o[i]);
		ck_assert_int_eq(o[i]->id, 0);
		ck_assert_ptr_null(o[i]->next);
		ck_assert_uint_eq((uintptr_t)o[i] % 16, 0);
		memset(o[i], 0xa5, sizeof(*o[i])); /* dirty it: the next get must zero it */
		o[i]->id = i;
	}
	for (int i = 0; i < MANY; i++)
		ck_assert_int_eq(o[i]->id, i); /* no two share memory */
	/* Give back every other one, then take as many again: slots are reused. */
	for (int i = 0; i < MANY; i += 2)
		slab_put(&s, o[i]);
	size_t pages = s.pages_n;
	for (int i = 0; i < MANY; i += 2) {
		o[i] = slab_get(&s);
		ck_assert_int_eq(o[i]->id, 0);
		o[i]->id = i;
	}
	ck_assert_uint_eq(s.pages_n, pages); /* no new slab while old ones had room */
	for (int i = 0; i < MANY; i++)
		slab_put(&s, o[i]);
#ifndef SLABS_ARE_MALLOC
	ck_assert_uint_eq(s.pages_n, 0); /* slabs a burst filled go back, the last too */
#endif
	/* Objects that come and go one at a time keep the one slab they use: nothing new
	 * is mapped for each. */
	for (int i = 0; i < 10; i++) {
		o[0] = slab_get(&s);
		ck_assert_int_eq(o[0]->id, 0);
		o[0]->id = 1;
		slab_put(&s, o[0]);
		ck_assert_uint_le(s.pages_n, 1);
	}
#ifndef SLABS_ARE_MALLOC
	ck_assert_uint_eq(s.pages_n, 1);
#endif
	slab_free(&s);
	ck_assert_uint_eq(s.pages_n, 0);
	ck_assert_ptr_null(s.pages);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("slab");
	TCase *tc = tcase_create("slab");
	tcase_add_test(tc, get_gives_distinct_zeroed_objects_and_put_empties_the_set);
	suite_add_tcase(su, tc);
	return check_run(su);
}
