/* A poll of an Active Directory DC as a refresh: see ad_poll.h. */
#include "server/replica/ad_poll.h"

#include <stdio.h>

#include "storage/db_update.h"

void replica_poll_begin(struct replica *r, bool full, long long usn)
{
	r->drop_cookie = false;
	r->full_refresh = full;
	r->refreshing = true;
	r->npresent = 0;
	r->refresh_puts = r->refresh_deletes = r->refresh_held = 0;
	r->pieces = 0;
	held_clear(&r->held);
	replica_set_state(r, "refreshing", NULL);
	r->poll_usn = usn;
	replica_note_provider_last(r, usn);
}

int replica_poll_end(struct replica *r, const struct berval *cookie, char *why, size_t cap)
{
	int rc = replica_txn_open(r);
	if (rc != 0) {
		snprintf(why, cap, "write transaction: %s", db_error_text(rc));
		return -1;
	}
	if (replica_refresh_end(r, why, cap) < 0)
		return -1;
	if (replica_set_cookie(r, cookie) != 0) {
		snprintf(why, cap, "storing the cookie failed");
		return -1;
	}
	r->refreshing = false;
	return 0;
}
