#include "storage/idset.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static size_t slot_of(const struct idset *s, entry_id id)
{
	size_t i = (id * 2654435761u) & (s->cap - 1);
	while (s->slot[i] && s->slot[i] != id)
		i = (i + 1) & (s->cap - 1);
	return i;
}

int idset_add(struct idset *s, entry_id id, bool *added)
{
	if ((s->n + 1) * 2 > s->cap) {
		struct idset bigger = {calloc(s->cap ? s->cap * 2 : 64, sizeof(entry_id)),
		                       s->cap ? s->cap * 2 : 64, 0};
		if (!bigger.slot)
			return ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				bigger.slot[slot_of(&bigger, s->slot[i])] = s->slot[i], bigger.n++;
		free(s->slot);
		*s = bigger;
	}
	size_t i = slot_of(s, id);
	*added = s->slot[i] == 0;
	if (*added)
		s->slot[i] = id, s->n++;
	return 0;
}

void idset_free(struct idset *s)
{
	free(s->slot);
	s->slot = NULL;
	s->cap = s->n = 0;
}
