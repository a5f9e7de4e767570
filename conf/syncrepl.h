/*
 * The syncrepl key: how a replica follows its provider (RFC 4533), written as slapd's
 * syncrepl directive, words "name=value" (a value may be in double quotes, with \" for a
 * quote inside) over one line and the continuation lines after it (lines that start with
 * white space; libinih hands each over as a further value of the same key):
 *
 *   syncrepl = rid=001 provider=ldap://127.0.0.1:389 bindmethod=simple
 *       binddn="cn=admin,dc=example,dc=com" credentials=secret
 *       searchbase="dc=example,dc=com" type=refreshAndPersist retry="5 5 60 +"
 *
 *   rid          1..999, the replica's number (required; it starts the directive)
 *   provider     ldap://HOST[:PORT] or ldaps://HOST[:PORT] (required)
 *   bindmethod   simple (the only one)
 *   binddn, credentials  the simple bind (both, or neither: an anonymous bind)
 *   searchbase   the DN replicated (required; must be the configured suffix)
 *   filter       default (objectClass=*)
 *   scope        sub (default), one, base, subord
 *   attrs        comma-separated attribute list, default "*,+"
 *   type         refreshOnly (default), refreshAndPersist, dirSync (an Active Directory
 *                provider followed by its DirSync control: server/replica/dirsync.h) or
 *                usnChanged (one polled by uSNChanged, for an account without the
 *                replication right: server/replica/usn.h)
 *   interval     refreshOnly, dirSync, usnChanged: dd:hh:mm:ss between refreshes (default
 *                00:00:05:00)
 *   retry        "INTERVAL COUNT ..." pairs, COUNT a number or + (forever); default "60 +"
 *   starttls     no (default), yes (go on without TLS if it fails) or critical
 *   tls_cacert   PEM CA file the provider's certificate must chain to
 *   tls_reqcert  demand (default) or never (the provider's certificate is not checked)
 *   network-timeout  seconds a connect may take (default 5)
 *   seed         http[s]://PEER/snapshot: a replica with no database file yet starts from a
 *                copy of a peer's (server/replica/seed.c), then follows from its cookie
 *
 * Thread rules: no global state.
 */
#ifndef MINIDIR_CONF_SYNCREPL_H
#define MINIDIR_CONF_SYNCREPL_H

#include <stdbool.h>
#include <stddef.h>

#define SYNCREPL_MAX_RETRY 8

enum syncrepl_type {
	SYNCREPL_REFRESH_ONLY,
	SYNCREPL_REFRESH_AND_PERSIST,
	SYNCREPL_DIRSYNC,
	SYNCREPL_USN_CHANGED
};
enum syncrepl_starttls { SYNCREPL_STARTTLS_NO, SYNCREPL_STARTTLS_YES, SYNCREPL_STARTTLS_CRITICAL };
enum syncrepl_scope {
	SYNCREPL_SCOPE_BASE,
	SYNCREPL_SCOPE_ONE,
	SYNCREPL_SCOPE_SUB,
	SYNCREPL_SCOPE_SUBORD
};

struct syncrepl_conf {
	bool set; /* a syncrepl key was read */
	int rid;
	char provider[1024];
	char binddn[1024];
	char credentials[256];
	char searchbase[1024];
	char filter[1024];
	enum syncrepl_scope scope;
	char attrs[1024]; /* comma-separated */
	enum syncrepl_type type;
	int interval; /* seconds */
	int retry_interval[SYNCREPL_MAX_RETRY];
	int retry_count[SYNCREPL_MAX_RETRY]; /* -1: forever */
	int nretry;
	enum syncrepl_starttls starttls;
	char tls_cacert[1024];
	bool tls_reqcert_never;
	int network_timeout; /* seconds */
	char seed[1024];     /* a peer's /snapshot URL, or empty */
};

/* The defaults, before any word. */
void syncrepl_defaults(struct syncrepl_conf *s);

/*
 * Reads one line's words into s. Returns 0, or -1 with the reason in why (an unknown
 * word, a bad value, a value too long, an open quote, a second rid).
 */
int syncrepl_parse(struct syncrepl_conf *s, const char *line, char *why, size_t whylen);

/*
 * Checks s once every line is read, against the configured suffix: the required words,
 * and searchbase equal to the suffix. Returns 0, or -1 with the reason in why.
 */
int syncrepl_check(const struct syncrepl_conf *s, const char *suffix, char *why, size_t whylen);

/* Whether s follows an Active Directory DC (type dirSync or usnChanged): polls, with the
 * DC's highestCommittedUSN as the provider's last change. */
bool syncrepl_is_ad(const struct syncrepl_conf *s);

/* s's scope as libldap's searches take it (ldap.h's LDAP_SCOPE_*). */
int syncrepl_ldap_scope(const struct syncrepl_conf *s);

#endif
