/*
 * The listen key's value (conf/config.c): one address a listener binds.
 *
 *   ldap://HOST:PORT, ldaps://HOST:PORT   a trailing "/" allowed; the port defaults to 389
 *                                         and 636; IPv6 in brackets ("[::1]:389")
 *   pldap://HOST:PORT, pldaps://HOST:PORT as ldap:// and ldaps://, each connection beginning
 *                                         with a PROXY protocol header (v1 or v2: slapd's
 *                                         words; the port defaults are the same)
 *   HOST:PORT                             ldap://
 *   ldapi://PATH                          a Unix socket, its absolute path as is or
 *                                         %-encoded as libldap writes it
 *
 * Thread rules: no state.
 */
#ifndef MINIDIR_CONF_LISTEN_ADDR_H
#define MINIDIR_CONF_LISTEN_ADDR_H

#include <stdbool.h>
#include <stddef.h>

/* What a listener speaks: ldap:// (StartTLS allowed), ldaps://, ldapi:// (a Unix socket). */
enum listen_scheme { LISTEN_LDAP, LISTEN_LDAPS, LISTEN_LDAPI };

struct listen_addr {
	enum listen_scheme scheme;
	bool proxy;     /* pldap://, pldaps://: a PROXY protocol header comes first */
	char host[256]; /* literal address or name; IPv6 without brackets (not ldapi) */
	char port[16];
	char path[108]; /* ldapi: the socket's path (sun_path) */
};

/*
 * Reads value into *a (cleared first). Returns 0, or -1 with the reason in why
 * ("listen: ..."): an unknown scheme, no port, a port out of 0..65535, a host or socket
 * path too long, a relative socket path.
 */
int listen_addr_parse(struct listen_addr *a, const char *value, char *why, size_t whylen);

#endif
