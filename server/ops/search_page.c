#include "server/ops/search_page.h"

#include <openssl/evp.h>
#include <stdint.h>
#include <string.h>

#include "protocol/controls.h"

/* Each part with its length first, so that no two lists of parts hash the same bytes. */
static int put(EVP_MD_CTX *ctx, const void *p, size_t len)
{
	uint64_t n = len;
	return EVP_DigestUpdate(ctx, &n, sizeof(n)) == 1 &&
	               (len == 0 || EVP_DigestUpdate(ctx, p, len) == 1)
	           ? 0
	           : -1;
}

int search_page_digest(const struct conn *c, const struct ldap_request *req,
                       unsigned char out[SEARCH_PAGE_DIGEST])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -1;
	const struct search_request *r = &req->u.search;
	int auth = (int)c->auth;
	/* Not the limits: a later page may ask others, and the first page's size limit holds
	 * for all (op_search.c). */
	int fields[3] = {r->scope, r->deref, r->typesonly};
	int rc = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? 0 : -1;
	rc |= put(ctx, r->base.bv_val, r->base.bv_len);
	rc |= put(ctx, fields, sizeof(fields));
	rc |= put(ctx, r->raw_tail.bv_val, r->raw_tail.bv_len);
	for (int i = 0; i < req->ncontrols; i++) {
		const struct request_control *ctl = &req->controls[i];
		if (ctl->oid.bv_len == strlen(CONTROL_PAGED_RESULTS) &&
		    memcmp(ctl->oid.bv_val, CONTROL_PAGED_RESULTS, ctl->oid.bv_len) == 0)
			continue; /* its cookie and size change from page to page */
		unsigned char flags = (unsigned char)(ctl->critical | ctl->has_value << 1);
		rc |= put(ctx, ctl->oid.bv_val, ctl->oid.bv_len);
		rc |= put(ctx, &flags, 1);
		rc |= put(ctx, ctl->value.bv_val, ctl->has_value ? ctl->value.bv_len : 0);
	}
	/* Who asks: a bind drops the paged search anyway (op_bind.c); this holds without. */
	rc |= put(ctx, &auth, sizeof(auth));
	rc |= put(ctx, c->bound_key.data, c->bound_key.len);
	rc |= put(ctx, c->bound_dn.data, c->bound_dn.len);
	unsigned int len = 0;
	if (rc == 0 && (EVP_DigestFinal_ex(ctx, out, &len) != 1 || len != SEARCH_PAGE_DIGEST))
		rc = -1;
	EVP_MD_CTX_free(ctx);
	return rc;
}
