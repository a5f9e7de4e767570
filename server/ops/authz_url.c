/* authz_regexp's search-based mapping (authz_url.h). */
#include "server/ops/authz_url.h"

#include <ldap.h>
#include <string.h>

#include "protocol/arena.h"
#include "protocol/dn.h"
#include "protocol/filter.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/net/conn.h"
#include "server/ops/search_plan.h"
#include "storage/candidates.h"

/* The entries of p (filter f) counted into *found, the first one's key kept in first;
 * at most AUTHZ_URL_MAX_EXAMINED candidates and two matches. 0, or -1 (logged). */
static int scan(struct conn *c, struct search_plan *p, const struct filter *f, const char *url,
                size_t *found, struct buf *first)
{
	struct db_worker *dw = db_worker(c->w);
	struct buf scratch = {0};
	entry_id id;
	int rc = 0, examined = 0;
	cand_begin(&p->cand, dw->txn, NULL);
	while (*found < 2 && (rc = cand_next(&p->cand, &id)) == 0) {
		struct entry_view e;
		if (++examined > AUTHZ_URL_MAX_EXAMINED) {
			log_info("authz_regexp: \"%s\": more than %d entries to examine (no index "
			         "answers its filter): the bind fails",
			         url, AUTHZ_URL_MAX_EXAMINED);
			rc = -1;
			break;
		}
		if ((rc = db_get_entry(&dw->gen->db, dw->txn, id, &e)) != 0)
			break;
		struct filter_ctx ctx = {
		    .dn = e.dn, .dnlen = e.dnlen, .id = id, .scratch = &scratch};
		if (!search_plan_holds(p, id, &e) ||
		    filter_eval_ctx(f, e.attrs, e.attrslen, &ctx) != FILTER_TRUE)
			continue;
		if ((*found)++ == 0 && buf_append(first, e.key, e.keylen) < 0)
			rc = -1;
	}
	cand_end(&p->cand, NULL);
	buf_free(&scratch);
	if (rc == DB_NOTFOUND)
		return 0;
	if (rc > 0) {
		log_info("authz_regexp: \"%s\": reading the directory: %s", url, db_error_text(rc));
		db_gen_txn_failed(c->w);
	}
	return rc ? -1 : 0;
}

int authz_url_search(struct conn *c, const char *url, struct buf *ndn, struct buf *key)
{
	LDAPURLDesc *lud = NULL;
	struct buf base = {0}, first = {0};
	struct arena mem = {0};
	struct filter *f = NULL;
	int rc = -1;
	if (ldap_url_parse(url, &lud) != LDAP_URL_SUCCESS ||
	    dn_normalize(lud->lud_dn ? lud->lud_dn : "", lud->lud_dn ? strlen(lud->lud_dn) : 0,
	                 NULL, &base) < 0 ||
	    !(f = filter_from_string(lud->lud_filter ? lud->lud_filter : "(objectClass=*)",
	                             &mem))) {
		log_info("authz_regexp: \"%s\": not an LDAP URL with a DN and a filter: the bind "
		         "fails",
		         url);
		goto out;
	}
	if (db_gen_txn_begin(c->w) != 0)
		goto out;
	struct db_worker *dw = db_worker(c->w);
	struct search_plan p = {.scope = lud->lud_scope == LDAP_SCOPE_DEFAULT ? LDAP_SCOPE_BASE
	                                                                      : lud->lud_scope,
	                        .base_key = base.data,
	                        .base_keylen = base.len};
	size_t found = 0;
	int got = db_dn2id(&dw->gen->db, dw->txn, base.data, base.len, &p.base_id);
	if (got == 0) {
		search_plan_candidates(&p, &dw->gen->db, dw->txn, f);
		rc = scan(c, &p, f, url, &found, &first);
		search_plan_free(&p);
	} else {
		rc = got == DB_NOTFOUND ? 0 : -1; /* no base: nothing found */
	}
	db_gen_txn_end(c->w);
	if (rc == 0 && found == 1)
		rc = dn_key_normal(first.data, first.len, ndn) < 0 ||
		             buf_append(key, first.data, first.len) < 0
		         ? -1
		         : 1;
out:
	if (lud)
		ldap_free_urldesc(lud);
	arena_free(&mem);
	buf_free(&base);
	buf_free(&first);
	return rc;
}
