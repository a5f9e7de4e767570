/*
 * What the integration clients (ldapclient.c, faultclient.c) share: failing with
 * a "not ok" line, a TCP connection to the server under test, and a bound libldap one.
 */
#ifndef MINIDIR_TESTS_INTEGRATION_CLIENT_H
#define MINIDIR_TESTS_INTEGRATION_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <ldap.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Prints "not ok - MESSAGE" and exits 1. */
#define FAIL(...)                                                                                  \
	do {                                                                                       \
		printf("not ok - ");                                                               \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		exit(1);                                                                           \
	} while (0)

/* A blocking socket connected to host:port (IPv4 literal), with SO_RCVBUF rcvbuf if > 0. */
static inline int client_connect(const char *host, const char *port, int rcvbuf)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		FAIL("socket: %s", strerror(errno));
	if (rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	inet_pton(AF_INET, host, &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		FAIL("connect %s:%s: %s", host, port, strerror(errno));
	return fd;
}

/* A libldap handle on ldap://host:port, bound (simple) as dn with pw; FAIL naming what when
 * it cannot be. */
static inline LDAP *client_bind(const char *host, const char *port, const char *dn, const char *pw,
                                const char *what)
{
	char uri[256];
	snprintf(uri, sizeof(uri), "ldap://%s:%s", host, port);
	LDAP *ld;
	int v3 = LDAP_VERSION3;
	struct berval cred = {strlen(pw), (char *)pw};
	if (ldap_initialize(&ld, uri) || ldap_set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3) ||
	    ldap_sasl_bind_s(ld, dn, LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL) != LDAP_SUCCESS)
		FAIL("%s: bind as %s failed", what, dn);
	return ld;
}

#endif
