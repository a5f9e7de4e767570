#include "storage/dyngroup_url.h"

#include <ldap.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/array.h"
#include "protocol/dn.h"

void dyngroup_urls_init(struct dyngroup_urls *u, size_t max, FILE *warn, const char *label)
{
	memset(u, 0, sizeof(*u));
	arena_init(&u->mem, NULL, 0);
	u->max = max;
	u->warn = warn;
	u->label = label;
}

void dyngroup_urls_free(struct dyngroup_urls *u)
{
	free(u->url);
	buf_free(&u->bases);
	buf_free(&u->scratch);
	arena_free(&u->mem);
	memset(u, 0, sizeof(*u));
}

bool dyngroup_is_dynamic(const struct entry_view *e)
{
	const unsigned char *p, *end, *v;
	size_t len, vlen;
	if (!entry_find_attr(e, "memberURL", 9, &p, &len) ||
	    !entry_find_attr(e, "objectClass", 11, &p, &len))
		return false;
	for (end = p + len; entry_next_value(&p, end, &v, &vlen);)
		if (vlen == 11 && strncasecmp((const char *)v, "groupOfURLs", vlen) == 0)
			return true;
	return false;
}

static void warn_url(struct dyngroup_urls *u, const struct entry_view *e, const unsigned char *v,
                     size_t vlen, const char *why)
{
	if (u->warn)
		fprintf(u->warn, "%s: entry \"%.*s\": memberURL \"%.*s\" ignored: %s\n", u->label,
		        (int)e->dnlen, (const char *)e->dn, (int)vlen, (const char *)v, why);
}

/* Adds one memberURL value, or warns and leaves it out. Returns 0 or -1 (no memory). */
static int add_url(struct dyngroup_urls *u, entry_id group, size_t group_ix,
                   const struct entry_view *e, const unsigned char *v, size_t vlen)
{
	char *text = strndup((const char *)v, vlen);
	LDAPURLDesc *lud = NULL;
	if (!text)
		return -1;
	int rc = ldap_url_parse(text, &lud);
	free(text);
	if (rc != LDAP_URL_SUCCESS) {
		warn_url(u, e, v, vlen, "not an LDAP URL");
		return 0;
	}
	size_t off = u->bases.len;
	const char *base = lud->lud_dn ? lud->lud_dn : "";
	struct filter *f = NULL;
	if (dn_normalize(base, strlen(base), NULL, &u->bases) < 0)
		warn_url(u, e, v, vlen, "its base is not a DN");
	else if (!(f = filter_from_string(lud->lud_filter ? lud->lud_filter : "(objectClass=*)",
	                                  &u->mem)))
		warn_url(u, e, v, vlen, "its filter is not a filter");
	int scope = lud->lud_scope == LDAP_SCOPE_DEFAULT ? LDAP_SCOPE_BASE : lud->lud_scope;
	ldap_free_urldesc(lud);
	if (!f) {
		u->bases.len = off;
		return 0;
	}
	if (!ARRAY_ROOM_FOR(u->url, u->cap, u->n, 16))
		return -1;
	u->url[u->n++] = (struct dyngroup_url){group, group_ix, off, u->bases.len - off, scope, f};
	return 0;
}

int dyngroup_urls_add(struct dyngroup_urls *u, entry_id group, size_t group_ix,
                      const struct entry_view *e)
{
	const unsigned char *p, *end, *v;
	size_t len, vlen, n = u->n, bases = u->bases.len;
	if (!entry_find_attr(e, "memberURL", 9, &p, &len))
		return 0;
	for (end = p + len; entry_next_value(&p, end, &v, &vlen);)
		if (add_url(u, group, group_ix, e, v, vlen) < 0)
			return -1;
	if (u->n <= u->max)
		return 0;
	u->n = n; /* the group's filters stay in the arena until the set is freed */
	u->bases.len = bases;
	return DYNGROUP_URLS_FULL;
}

bool dyngroup_url_finds(struct dyngroup_urls *u, const struct dyngroup_url *url,
                        const struct entry_view *e)
{
	const unsigned char *base = (const unsigned char *)u->bases.data + url->base_off;
	if (!dn_key_in_subtree(e->key, e->keylen, base, url->base_len))
		return false;
	bool in = true;
	switch (url->scope) {
	case LDAP_SCOPE_BASE:
		in = e->keylen == url->base_len;
		break;
	case LDAP_SCOPE_ONELEVEL:
		in = e->keylen > url->base_len &&
		     dn_key_parent_len(e->key, e->keylen) == url->base_len;
		break;
	case LDAP_SCOPE_SUBORDINATE:
		in = e->keylen > url->base_len;
		break;
	}
	if (!in)
		return false;
	struct filter_ctx ctx = {.dn = e->dn, .dnlen = e->dnlen, .scratch = &u->scratch};
	return filter_eval_ctx(url->filter, e->attrs, e->attrslen, &ctx) == FILTER_TRUE;
}
