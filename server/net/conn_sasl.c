/*
 * A connection's SASL session (sasl.h): the bind's steps through Cyrus SASL, and once the
 * bind set one up, the security layer on both directions of its bytes. Requests: what a
 * read appended to CI(c)->in (over TLS, the plaintext) is replaced by what sasl_decode
 * makes of it (the library holds a buffer begun until its end comes). Responses: the bytes
 * queued in CI(c)->out since the last flush are replaced by SASL buffers of at most the
 * session's maxoutbuf each, before TLS or the socket sees them; `wrapped` counts the bytes
 * at the front of out that are ready for the wire.
 */
#include "server/net/sasl.h"

#include <ldap.h>
#include <sasl/sasl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/config.h"
#include "server/log.h"
#include "server/net/conn.h"
#include "server/net/conn_impl.h"
#include "server/net/net_worker.h"
#include "server/net/tls_session.h"

struct sasl_session {
	atomic_int refs; /* the connection's, and a step's in flight (sasl_session_put) */
	sasl_conn_t *conn;
	char mech[24];   /* NUL-terminated, as the client named it */
	bool done;       /* authenticated */
	bool running;    /* a step runs (sasl_session_run), begun by conn_sasl_begin */
	char why[256];   /* the library's words on a failed step */
	bool layer;      /* the security layer is on */
	unsigned ssf;    /* its strength (0: no layer) */
	unsigned maxout; /* the most plaintext one outgoing buffer wraps */
	size_t wrapped;  /* bytes at the front of out's pending ones ready for the wire */
};

void sasl_session_put(struct sasl_session *s)
{
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	sasl_dispose(&s->conn);
	free(s);
}

void conn_sasl_drop(struct conn *c)
{
	struct sasl_session *s = CI(c)->sasl;
	if (s && !s->layer) {
		sasl_session_put(s); /* a step in flight keeps it until it ends */
		CI(c)->sasl = NULL;
	}
}

void conn_sasl_free(struct conn *c)
{
	sasl_session_put(CI(c)->sasl);
	CI(c)->sasl = NULL;
}

bool conn_sasl_layer(const struct conn *c)
{
	return CI(c)->sasl && CI(c)->sasl->layer;
}

static enum sasl_step_status failed(struct sasl_step *st, int rc, const char *why)
{
	st->rc = rc;
	snprintf(st->why, sizeof(st->why), "%s", why);
	return SASL_STEP_FAILED;
}

/* A new session for mechanism mech, with the server's keys and c's TLS strength; NULL with
 * st filled when the library refuses. */
static struct sasl_session *session_new(struct conn *c, const struct berval *mech,
                                        struct sasl_step *st)
{
	const struct config *cfg = &c->w->srv->cfg;
	struct sasl_session *s = calloc(1, sizeof(*s));
	if (!s) {
		failed(st, LDAP_OTHER, "out of memory");
		return NULL;
	}
	if (mech->bv_len >= sizeof(s->mech)) {
		free(s);
		failed(st, LDAP_AUTH_METHOD_NOT_SUPPORTED, "no such SASL mechanism here");
		return NULL;
	}
	memcpy(s->mech, mech->bv_val, mech->bv_len);
	atomic_init(&s->refs, 1);
	int rc = sasl_server_new("ldap", cfg->sasl_host[0] ? cfg->sasl_host : NULL,
	                         cfg->sasl_realm[0] ? cfg->sasl_realm : NULL, NULL, NULL, NULL,
	                         SASL_SUCCESS_DATA, &s->conn);
	sasl_ssf_t external = c->tls ? tls_cipher_bits(c->tls) : 0;
	sasl_security_properties_t props = {
	    .min_ssf = (sasl_ssf_t)cfg->sasl_minssf,
	    /* Cyrus takes the external strength off both bounds: sasl_maxssf bounds the
	     * layer itself (privacy over TLS too, as slapd, whose bound is unlimited). */
	    .max_ssf = (sasl_ssf_t)cfg->sasl_maxssf + external,
	    .maxbufsize = SASL_LAYER_MAX_BUFFER,
	    .security_flags = SASL_SEC_NOANONYMOUS | SASL_SEC_NOPLAINTEXT,
	};
	if (rc == SASL_OK)
		rc = sasl_setprop(s->conn, SASL_SSF_EXTERNAL, &external);
	if (rc == SASL_OK)
		rc = sasl_setprop(s->conn, SASL_SEC_PROPS, &props);
	if (rc != SASL_OK) {
		snprintf(st->why, sizeof(st->why), "SASL: %s", sasl_errstring(rc, NULL, NULL));
		st->rc = LDAP_OTHER;
		sasl_session_put(s);
		return NULL;
	}
	CI(c)->sasl = s;
	return s;
}

/* The LDAP result of a step the library ended with rc, as slapd answers it. */
static int ldap_rc_of(int rc)
{
	switch (rc) {
	case SASL_NOMEM:
		return LDAP_OTHER;
	case SASL_NOMECH:
		return LDAP_AUTH_METHOD_NOT_SUPPORTED;
	case SASL_BADAUTH:
	case SASL_NOUSER:
	case SASL_EXPIRED:
	case SASL_DISABLED:
		return LDAP_INVALID_CREDENTIALS;
	case SASL_NOAUTHZ:
		return LDAP_INSUFFICIENT_ACCESS;
	case SASL_TOOWEAK:
	case SASL_ENCRYPT:
		return LDAP_INAPPROPRIATE_AUTH;
	case SASL_BADPROT:
		return LDAP_PROTOCOL_ERROR;
	default:
		return LDAP_OTHER;
	}
}

struct sasl_session *conn_sasl_begin(struct conn *c, const struct berval *mech, bool *first,
                                     struct sasl_step *st)
{
	*st = (struct sasl_step){0};
	struct sasl_session *s = CI(c)->sasl;
	if (s && s->layer) {
		failed(st, LDAP_UNWILLING_TO_PERFORM,
		       "a SASL security layer is in place on this connection: bind on a new one");
		return NULL;
	}
	/* A session whose last step is still running (its bind was abandoned) is not
	 * stepped again: a new one begins. */
	*first = !s || s->running || s->done || strlen(s->mech) != mech->bv_len ||
	         strncasecmp(s->mech, mech->bv_val, mech->bv_len) != 0;
	if (*first) {
		conn_sasl_drop(c);
		if (!(s = session_new(c, mech, st)))
			return NULL;
	}
	s->running = true;
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

int sasl_session_run(struct sasl_session *s, bool first, const struct berval *cred, bool has_cred,
                     struct buf *out)
{
	const char *in = has_cred ? (cred->bv_val ? cred->bv_val : "") : NULL;
	unsigned inlen = has_cred ? (unsigned)cred->bv_len : 0;
	const char *o = NULL;
	unsigned olen = 0;
	int rc = first ? sasl_server_start(s->conn, s->mech, in, inlen, &o, &olen)
	               : sasl_server_step(s->conn, in, inlen, &o, &olen);
	out->len = out->off = 0;
	if ((rc == SASL_OK || rc == SASL_CONTINUE) && o && buf_append(out, o, olen) < 0)
		rc = SASL_NOMEM;
	if (rc == SASL_OK)
		s->done = true;
	else if (rc != SASL_CONTINUE)
		snprintf(s->why, sizeof(s->why), "%s", sasl_errdetail(s->conn));
	return rc;
}

enum sasl_step_status conn_sasl_finish(struct conn *c, struct sasl_session *s, int rc,
                                       struct sasl_step *st)
{
	*st = (struct sasl_step){0};
	s->running = false;
	if (CI(c)->sasl != s) /* dropped while the step ran */
		return failed(st, LDAP_OTHER, "the SASL bind was ended");
	if (rc == SASL_CONTINUE)
		return SASL_STEP_CONTINUE;
	if (rc == SASL_OK) {
		const void *p = NULL;
		if (sasl_getprop(s->conn, SASL_SSF, &p) == SASL_OK && p)
			s->ssf = *(const sasl_ssf_t *)p;
		if (sasl_getprop(s->conn, SASL_MAXOUTBUF, &p) == SASL_OK && p)
			s->maxout = *(const unsigned *)p;
		if (s->ssf && s->maxout == 0)
			s->maxout = 4096;
		return SASL_STEP_DONE;
	}
	failed(st, ldap_rc_of(rc), s->why);
	conn_sasl_drop(c);
	return SASL_STEP_FAILED;
}

/* A property of c's session that is a string, or NULL. */
static const char *string_prop(const struct sasl_session *s, int which)
{
	const void *p = NULL;
	return sasl_getprop(s->conn, which, &p) == SASL_OK ? p : NULL;
}

void conn_sasl_who(const struct conn *c, const char **user, const char **realm,
                   const char **authzid, unsigned *ssf)
{
	const struct sasl_session *s = CI(c)->sasl;
	*user = string_prop(s, SASL_AUTHUSER);
	*realm = string_prop(s, SASL_DEFUSERREALM);
	if (*realm && !**realm)
		*realm = NULL;
	/* SASL_USERNAME is who the client acts as: the authorization identity when it
	 * named one, else the authenticated user again. */
	const char *as = string_prop(s, SASL_USERNAME);
	*authzid = as && *user && strcmp(as, *user) != 0 ? as : NULL;
	*ssf = s->ssf;
}

/* What a read appended to CI(c)->in, from the byte at `from` on, replaced by what the
 * layer decodes of it. Returns 0, or -1 (a buffer the layer refused: c is closing). */
static int unwrap_from(struct conn *c, size_t from)
{
	struct sasl_session *s = CI(c)->sasl;
	struct buf *in = &CI(c)->in, *tmp = &net_worker(c->w)->sasl_scratch;
	size_t n = in->len - from;
	if (n == 0)
		return 0;
	tmp->off = tmp->len = 0;
	if (buf_append(tmp, in->data + from, n) < 0)
		return -1;
	in->len = from;
	const char *plain = NULL;
	unsigned plen = 0;
	if (sasl_decode(s->conn, (const char *)tmp->data, (unsigned)n, &plain, &plen) != SASL_OK) {
		log_info("conn fd=%d from %s: SASL security layer: %s; closing", c->fd, c->peer,
		         sasl_errdetail(s->conn));
		CI(c)->closing = true;
		return -1;
	}
	if (plen && (buf_reserve(in, (size_t)plen + 1) < 0 || buf_append(in, plain, plen) < 0))
		return -1;
	return 0;
}

ssize_t conn_sasl_unwrap(struct conn *c, ssize_t got)
{
	if (got <= 0)
		return got;
	size_t before = CI(c)->in.len - (size_t)got;
	if (unwrap_from(c, before) < 0)
		return -1;
	return CI(c)->in.len > before ? (ssize_t)(CI(c)->in.len - before) : -2;
}

void conn_sasl_layer_start(struct conn *c)
{
	struct sasl_session *s = CI(c)->sasl;
	if (!s || !s->done || s->ssf == 0)
		return;
	s->layer = true;
	/* Everything queued so far, the bind's answer last, goes as it is. */
	s->wrapped = buf_pending(&CI(c)->out);
	log_debug("conn fd=%d: SASL %s security layer on (strength %u, buffers of %u bytes)", c->fd,
	          s->mech, s->ssf, s->maxout);
	/* Requests read after the bind's, before its answer went: already the layer's. */
	if (buf_pending(&CI(c)->in) > 0)
		(void)unwrap_from(c, CI(c)->in.off);
}

int conn_sasl_wrap(struct conn *c, bool more)
{
	struct sasl_session *s = CI(c)->sasl;
	struct buf *out = &CI(c)->out, *tmp = &net_worker(c->w)->sasl_scratch;
	size_t pending = buf_pending(out);
	if (s->wrapped > pending)
		s->wrapped = pending;
	size_t plain = pending - s->wrapped;
	/* More of the response follows: only whole buffers now, the rest joins it. */
	size_t take = more ? plain - plain % s->maxout : plain;
	if (take == 0)
		return 0;
	tmp->off = tmp->len = 0;
	if (buf_append(tmp, out->data + out->off + s->wrapped, plain) < 0)
		return -1;
	out->len = out->off + s->wrapped;
	for (size_t at = 0; at < take;) {
		unsigned n = take - at < s->maxout ? (unsigned)(take - at) : s->maxout;
		const char *w = NULL;
		unsigned wlen = 0;
		if (sasl_encode(s->conn, (const char *)tmp->data + at, n, &w, &wlen) != SASL_OK ||
		    buf_append(out, w, wlen) < 0) {
			log_info("conn fd=%d from %s: SASL security layer: %s; closing", c->fd,
			         c->peer, sasl_errdetail(s->conn));
			CI(c)->closing = true;
			return -1;
		}
		at += n;
	}
	s->wrapped = buf_pending(out);
	return buf_append(out, tmp->data + take, plain - take);
}

size_t conn_sasl_held(const struct conn *c)
{
	const struct sasl_session *s = CI(c)->sasl;
	size_t pending = buf_pending(&CI(c)->out);
	return s && s->layer && pending > s->wrapped ? pending - s->wrapped : 0;
}

void conn_sasl_sent(struct conn *c, size_t n)
{
	struct sasl_session *s = CI(c)->sasl;
	if (s && s->layer)
		s->wrapped = n < s->wrapped ? s->wrapped - n : 0;
}
