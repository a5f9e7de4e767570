/* Entries held until their parent comes: see held.h. */
#include "server/replica/held.h"

#include <stdlib.h>
#include <string.h>

int held_add(struct held_set *s, const unsigned char *uuid, const char *dn,
             const unsigned char *attrs, size_t attrslen)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct held_entry *v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	struct held_entry e = {
	    .dn = strdup(dn), .attrs = malloc(attrslen ? attrslen : 1), .attrslen = attrslen};
	if (!e.dn || !e.attrs) {
		held_entry_free(&e);
		return -1;
	}
	memcpy(e.uuid, uuid, SYNC_UUID_LEN);
	if (attrslen)
		memcpy(e.attrs, attrs, attrslen);
	s->v[s->n++] = e;
	s->bytes += strlen(dn) + attrslen;
	return 0;
}

void held_take(struct held_set *s, size_t i, struct held_entry *out)
{
	*out = s->v[i];
	s->bytes -= strlen(out->dn) + out->attrslen;
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}

long held_sweep(struct held_set *s, int (*take)(void *arg, struct held_entry *e), void *arg)
{
	size_t keep = 0, i = 0;
	long taken = 0;
	int rc = 0;
	for (; i < s->n; i++) {
		struct held_entry *e = &s->v[i];
		if ((rc = take(arg, e)) < 0)
			break;
		if (rc == 0) {
			s->v[keep++] = *e; /* keep <= i: an earlier place, or its own */
			continue;
		}
		s->bytes -= strlen(e->dn) + e->attrslen;
		held_entry_free(e);
		taken++;
	}
	/* Stopped: the entries from i on stay, after those kept. */
	memmove(s->v + keep, s->v + i, (s->n - i) * sizeof(*s->v));
	s->n = keep + (s->n - i);
	return rc < 0 ? -1 : taken;
}

void held_entry_free(struct held_entry *e)
{
	free(e->dn);
	free(e->attrs);
	e->dn = NULL;
	e->attrs = NULL;
}

void held_clear(struct held_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		held_entry_free(&s->v[i]);
	free(s->v);
	*s = (struct held_set){0};
}
