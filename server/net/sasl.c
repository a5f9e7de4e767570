/* Cyrus SASL's setup for the server (sasl.h): the library once per process, its log, the
 * one mechanism list the server offers, and the Kerberos keytab the GSSAPI plugin reads. */
#include "server/net/sasl.h"

#include <errno.h>
#include <pthread.h>
#include <sasl/sasl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "conf/config.h"
#include "server/log.h"

struct sasl_server {
	char mechs[64]; /* space-separated */
};

/* The library's messages: its errors and warnings at info (a bad ticket, a keytab without
 * the service's key), the rest at debug. */
static int on_log(void *ctx, int level, const char *message)
{
	(void)ctx;
	if (level <= SASL_LOG_WARN)
		log_info("SASL: %s", message);
	else if (level <= SASL_LOG_DEBUG)
		log_debug("SASL: %s", message);
	return SASL_OK;
}

/* The library's options, from here and not from a file of /etc/sasl2: GSSAPI only (the
 * plugins of other mechanisms, installed or not, are never offered). */
static int on_getopt(void *ctx, const char *plugin, const char *option, const char **result,
                     unsigned *len)
{
	(void)ctx, (void)plugin;
	if (strcmp(option, "mech_list") == 0)
		*result = "GSSAPI";
	else if (strcmp(option, "log_level") == 0)
		*result = "3"; /* SASL_LOG_WARN */
	else
		return SASL_FAIL;
	if (len)
		*len = (unsigned)strlen(*result);
	return SASL_OK;
}

/* The authorization identity is checked by the bind (server/ops, authz_policy), which
 * knows the directory: the library lets every one through to it. */
static int on_authorize(sasl_conn_t *conn, void *ctx, const char *requested, unsigned rlen,
                        const char *auth, unsigned alen, const char *realm, unsigned urlen,
                        struct propctx *props)
{
	(void)conn, (void)ctx, (void)requested, (void)rlen, (void)auth, (void)alen, (void)realm;
	(void)urlen, (void)props;
	return SASL_OK;
}

/* Names stay as the mechanism gave them ("alice" for the service's own realm,
 * "carol@OTHER.COM" for another; an authorization identity as the client wrote it): the
 * bind makes the authentication DN of them, as slapd does, and the library's own
 * canonicalization would add the service's realm to a foreign user's name. */
static int on_canon(sasl_conn_t *conn, void *ctx, const char *in, unsigned inlen, unsigned flags,
                    const char *realm, char *out, unsigned out_max, unsigned *out_len)
{
	(void)conn, (void)ctx, (void)flags, (void)realm;
	if (inlen >= out_max)
		return SASL_BUFOVER;
	memcpy(out, in, inlen);
	out[inlen] = '\0';
	*out_len = inlen;
	return SASL_OK;
}

static const sasl_callback_t callbacks[] = {
    {SASL_CB_LOG, (int (*)(void))(void (*)(void))on_log, NULL},
    {SASL_CB_GETOPT, (int (*)(void))(void (*)(void))on_getopt, NULL},
    {SASL_CB_PROXY_POLICY, (int (*)(void))(void (*)(void))on_authorize, NULL},
    {SASL_CB_CANON_USER, (int (*)(void))(void (*)(void))on_canon, NULL},
    {SASL_CB_LIST_END, NULL, NULL},
};

/* The library's locks are pthread mutexes: sessions run on several workers at once. */
static void *mutex_new(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));
	if (m)
		pthread_mutex_init(m, NULL);
	return m;
}
static int mutex_lock(void *m)
{
	return pthread_mutex_lock(m) == 0 ? SASL_OK : SASL_FAIL;
}
static int mutex_unlock(void *m)
{
	return pthread_mutex_unlock(m) == 0 ? SASL_OK : SASL_FAIL;
}
static void mutex_free(void *m)
{
	pthread_mutex_destroy(m);
	free(m);
}

/* Whether the library, set up, has a GSSAPI plugin to offer (a probe session's list). */
static bool has_gssapi(const struct config *cfg)
{
	sasl_conn_t *probe = NULL;
	const char *list = NULL;
	bool ok = sasl_server_new("ldap", cfg->sasl_host[0] ? cfg->sasl_host : NULL,
	                          cfg->sasl_realm[0] ? cfg->sasl_realm : NULL, NULL, NULL, NULL, 0,
	                          &probe) == SASL_OK &&
	          sasl_listmech(probe, NULL, "", " ", "", &list, NULL, NULL) == SASL_OK && list &&
	          strcasestr(list, "GSSAPI") != NULL;
	sasl_dispose(&probe);
	return ok;
}

int sasl_setup(const struct config *cfg, struct sasl_server **out)
{
	*out = NULL;
	if (access(cfg->sasl_keytab, R_OK) != 0) {
		log_info("SASL GSSAPI not offered: sasl_keytab %s: %s", cfg->sasl_keytab,
		         strerror(errno));
		return 0;
	}
	/* Read by MIT's acceptor in every session: set before a worker runs. */
	if (setenv("KRB5_KTNAME", cfg->sasl_keytab, 1) < 0) {
		log_error("SASL: setting KRB5_KTNAME: %s", strerror(errno));
		return -1;
	}
	sasl_set_mutex(mutex_new, mutex_lock, mutex_unlock, mutex_free);
	int rc = sasl_server_init(callbacks, "minidir");
	if (rc != SASL_OK) {
		log_error("SASL: the library did not start: %s", sasl_errstring(rc, NULL, NULL));
		return -1;
	}
	if (!has_gssapi(cfg)) {
		log_info("SASL GSSAPI not offered: Cyrus SASL has no GSSAPI plugin here (Debian: "
		         "libsasl2-modules-gssapi-mit)");
		sasl_server_done();
		return 0;
	}
	struct sasl_server *s = calloc(1, sizeof(*s));
	if (!s) {
		sasl_server_done();
		return -1;
	}
	strcpy(s->mechs, "GSSAPI");
	log_info("SASL GSSAPI offered: service ldap/%s@%s, keytab %s, security strength %d to "
	         "%d",
	         cfg->sasl_host[0] ? cfg->sasl_host : "(this machine's name)",
	         cfg->sasl_realm[0] ? cfg->sasl_realm : "(the default realm)", cfg->sasl_keytab,
	         cfg->sasl_minssf, cfg->sasl_maxssf);
	*out = s;
	return 0;
}

void sasl_teardown(struct sasl_server *s)
{
	if (!s)
		return;
	free(s);
	/* No sasl_server_done: it unloads the plugins, and memory the GSSAPI plugin's
	 * libraries still hold then shows as a leak (228 bytes under LeakSanitizer, whatever
	 * the binds); the process ends after this. */
}

const char *sasl_mechanisms(const struct sasl_server *s)
{
	return s ? s->mechs : "";
}

bool sasl_offers(const struct sasl_server *s, const char *mech, size_t len)
{
	return s && len == 6 && strncasecmp(mech, "GSSAPI", 6) == 0;
}
