#include "server/access.h"

#include <string.h>

bool access_may_read(const struct conn *c)
{
	return c->auth != AUTH_ANONYMOUS || server_allow_anonymous(c->w->srv);
}

const char *access_hidden_attr(const struct conn *c, const struct entry_view *e)
{
	bool self = c->auth == AUTH_USER && c->bound_key.len == e->keylen &&
	            memcmp(c->bound_key.data, e->key, e->keylen) == 0;
	return c->auth == AUTH_ROOT || self ? NULL : "userPassword";
}
