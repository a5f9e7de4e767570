/*
 * What the integration clients (ldapclient.c, faultclient.c) share: failing with
 * a "not ok" line, and a TCP connection to the server under test.
 */
#ifndef MINIDIR_TESTS_INTEGRATION_CLIENT_H
#define MINIDIR_TESTS_INTEGRATION_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
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

#endif
