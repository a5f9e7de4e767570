/*
 * Server-side sorting (RFC 2891) for searches: the matching entries' sort
 * keys are collected (ID and normalized key values), sorted once, then sent
 * in that order. Memory is one key set per matching entry, bounded by the
 * search's size limit.
 */
#ifndef MINIDIR_SERVER_OPS_SEARCH_SORT_H
#define MINIDIR_SERVER_OPS_SEARCH_SORT_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/attr_gate.h"
#include "protocol/buf.h"
#include "protocol/controls.h"
#include "protocol/match.h"
#include "storage/entry.h"

struct sort_spec {
	int n;
	struct {
		char attr[64]; /* schema name */
		enum match_rule rule;
		bool reverse;
	} key[CONTROL_MAX_SORT_KEYS];
};

struct sort_item {
	entry_id id;
	unsigned char *keys; /* the keys' normal forms, one after another */
	size_t len[CONTROL_MAX_SORT_KEYS];
	bool present[CONTROL_MAX_SORT_KEYS];
};

struct sorted {
	struct sort_item *items;
	size_t n, cap;
	size_t pos; /* next item to send */
	size_t end; /* one past the last item to send (n, or a VLV window's end) */
};

/*
 * Prepares spec from the control's keys. Returns LDAP_SUCCESS, or the
 * sortResult code: noSuchAttribute (16) for an unknown attribute type,
 * inappropriateMatching (18) when the type has no ordering rule and the key
 * names none, or names one minidir cannot apply.
 */
int sort_spec_init(struct sort_spec *spec, const struct sort_key *keys, int n);

/* Adds entry id (viewed as e) with its keys; an attribute gate refuses (the client
 * may not read it; NULL refuses none) counts as absent. Returns 0 or -1 (out of memory). */
int sort_add(struct sorted *s, const struct sort_spec *spec, entry_id id,
             const struct entry_view *e, const struct attr_gate *gate, struct buf *scratch);

/* Sorts the items collected. */
void sort_finish(struct sorted *s, const struct sort_spec *spec);

void sort_free(struct sorted *s);

#endif
