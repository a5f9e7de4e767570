/*
 * The work memo (struct filter_memo, filter.h): what an evaluation cut by its budget decided,
 * one byte a node numbered by filter_decode, so that the next evaluation of the same entry
 * resumes where it stopped. filter_eval.c reads and fills it.
 */
#include "protocol/filter.h"

#include <string.h>

int filter_memo_init(struct filter_memo *m, const struct filter *f, struct arena *mem)
{
	size_t n = filter_items(f);
	memset(m, 0, sizeof(*m));
	if (n < FILTER_MEMO_MIN_ITEMS)
		return 0;
	if (!(m->known = arena_alloc(mem, n)))
		return -1;
	memset(m->known, 0, n);
	m->n = n;
	return 0;
}

bool filter_memo_done(const struct filter_memo *m, const struct filter *f)
{
	return !m->n || m->known[f->id] != 0;
}

void filter_memo_clear(struct filter_memo *m)
{
	if (m->used)
		memset(m->known, 0, m->n);
	m->used = false;
}

size_t filter_items(const struct filter *f)
{
	size_t n = 0;
	for (; f; f = f->next)
		n += 1 + (f->child ? filter_items(f->child) : 0);
	return n;
}

size_t filter_weight(const struct filter *f)
{
	size_t n = 0;
	for (; f; f = f->next) {
		n += 1 + (f->child ? filter_weight(f->child) : 0);
		if (f->kind == FILTER_SUBSTR)
			n += (f->initial.val != NULL) + f->nany + (f->final.val != NULL) - 1;
	}
	return n;
}
