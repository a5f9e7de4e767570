/* server/net/engine_uring_table.c: the io_uring engine's table of socket states. A
 * worker's sockets take the lowest free slots whatever their descriptors (a table by
 * descriptor had every worker map pages for all workers' descriptors: 176 bytes per
 * connection per worker), a slot is free again once its socket's close finished, and a
 * block whose sockets are all gone is unmapped unless one of them is still listed. */
#include <check.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "server/net/engine_uring.h"
#include "tests/check_run.h"

static void table_free(struct uring_state *s)
{
	for (int b = 0; b < s->nblocks; b++)
		if (s->blocks[b].socks)
			munmap(s->blocks[b].socks, URING_BLOCK_BYTES);
	free(s->blocks);
	free(s->slot_of);
}

/* A socket added as ur_add does: live, with the slot uring_sock_new gave it. */
static struct usock *add(struct uring_state *s, int fd)
{
	struct usock *u = uring_sock_new(s, fd);
	ck_assert_ptr_nonnull(u);
	ck_assert_int_eq(u->fd, fd);
	u->live = true;
	return u;
}

static void dead(struct uring_state *s, struct usock *u)
{
	u->live = false;
	uring_sock_dead(s, u);
}

START_TEST(descriptors_far_apart_share_one_block)
{
	struct uring_state s = {0};
	int fds[] = {3000, 7, 1000, 65};
	for (int i = 0; i < 4; i++) {
		struct usock *u = add(&s, fds[i]);
		ck_assert_int_eq(u->slot, i);
		ck_assert_ptr_eq(uring_slot(&s, i), u);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_ptr_eq(uring_sock(&s, fds[i]), uring_slot(&s, i));
	ck_assert_ptr_nonnull(s.blocks[0].socks);
	for (int b = 1; b < s.nblocks; b++)
		ck_assert_ptr_null(s.blocks[b].socks);
	ck_assert_ptr_null(uring_sock(&s, 8));     /* never added */
	ck_assert_ptr_null(uring_sock(&s, 99999)); /* beyond the highest given */
	ck_assert_ptr_null(uring_sock(&s, -1));
	ck_assert_ptr_null(uring_slot(&s, URING_BLOCK)); /* its block is not mapped */
	/* A descriptor that has a state keeps it (ur_add refuses it as live). */
	ck_assert_ptr_eq(uring_sock_new(&s, 1000), uring_slot(&s, 2));
	table_free(&s);
}
END_TEST

START_TEST(a_closed_slot_is_the_next_one_taken)
{
	struct uring_state s = {0};
	struct usock *a = add(&s, 10), *b = add(&s, 11);
	add(&s, 12);
	ck_assert_int_eq(b->slot, 1);
	dead(&s, a);
	dead(&s, b);
	ck_assert_ptr_null(uring_sock(&s, 10));
	ck_assert_ptr_null(uring_sock(&s, 11));
	struct usock *c = add(&s, 11); /* the same number again, after its close */
	ck_assert_int_eq(c->slot, 0);
	ck_assert_int_eq(add(&s, 40)->slot, 1);
	ck_assert_int_eq(add(&s, 41)->slot, 3);
	table_free(&s);
}
END_TEST

START_TEST(an_empty_block_is_unmapped_unless_listed)
{
	struct uring_state s = {0};
	struct usock *u[2 * URING_BLOCK + 1];
	for (int i = 0; i < 2 * URING_BLOCK + 1; i++)
		u[i] = add(&s, 100 + 3 * i);
	ck_assert_int_eq(u[URING_BLOCK]->slot, URING_BLOCK);
	ck_assert_ptr_nonnull(s.blocks[2].socks);
	/* Block 1 emptied while one of its sockets is still listed: kept (the list still
	 * points into it), and unmapped when it next empties. */
	u[URING_BLOCK + 5]->on_dirty = true;
	for (int i = URING_BLOCK; i < 2 * URING_BLOCK; i++)
		dead(&s, u[i]);
	ck_assert_ptr_nonnull(s.blocks[1].socks);
	u[URING_BLOCK + 5]->on_dirty = false;
	struct usock *again = add(&s, 5);
	ck_assert_int_eq(again->slot, URING_BLOCK);
	dead(&s, again);
	ck_assert_ptr_null(s.blocks[1].socks);
	ck_assert_ptr_null(uring_slot(&s, URING_BLOCK));
	/* Listed as pending (a socket with events to report) keeps it mapped too. */
	struct usock *p = add(&s, 7);
	ck_assert_int_eq(p->slot, URING_BLOCK);
	p->on_pending = true;
	dead(&s, p);
	ck_assert_ptr_nonnull(s.blocks[1].socks);
	p->on_pending = false;
	dead(&s, add(&s, 7));
	ck_assert_ptr_null(s.blocks[1].socks);
	/* Block 2 is untouched; block 1 is mapped again for the next socket. */
	ck_assert_ptr_eq(uring_sock(&s, 100 + 3 * 2 * URING_BLOCK), u[2 * URING_BLOCK]);
	ck_assert_int_eq(add(&s, 6)->slot, URING_BLOCK);
	ck_assert_ptr_nonnull(s.blocks[1].socks);
	table_free(&s);
}
END_TEST

START_TEST(the_table_grows_past_its_first_blocks)
{
	/* 16 blocks are made at first: the 17th is made with its slots free. */
	struct uring_state s = {0};
	int n = 16 * URING_BLOCK + 1;
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(add(&s, 2 * i + 10)->slot, i);
	ck_assert_int_ge(s.nblocks, 17);
	ck_assert_uint_eq(s.blocks[16].used, 1);
	for (int b = 17; b < s.nblocks; b++)
		ck_assert_uint_eq(s.blocks[b].used, 0);
	for (int i = 0; i < n; i++)
		ck_assert_ptr_eq(uring_sock(&s, 2 * i + 10), uring_slot(&s, i));
	table_free(&s);
}
END_TEST

int main(void)
{
	Suite *suite = suite_create("uring_table");
	TCase *tc = tcase_create("table");
	tcase_add_test(tc, descriptors_far_apart_share_one_block);
	tcase_add_test(tc, a_closed_slot_is_the_next_one_taken);
	tcase_add_test(tc, an_empty_block_is_unmapped_unless_listed);
	tcase_add_test(tc, the_table_grows_past_its_first_blocks);
	suite_add_tcase(suite, tc);
	return check_run(suite);
}
