/*
 * metrics_listen's value (minidir.conf(5)): where the operators' HTTP endpoint listens,
 * an IP address and a port, "127.0.0.1:9100" or "[::1]:9100". Literals only: no name is
 * looked up (a config file reads the same without DNS).
 *
 * Thread rules: no state.
 */
#ifndef MINIDIR_CONF_METRICS_ADDR_H
#define MINIDIR_CONF_METRICS_ADDR_H

#include <stdbool.h>
#include <sys/socket.h>

struct metrics_addr {
	bool set;                   /* false: no endpoint (the default) */
	bool loopback;              /* 127.0.0.0/8 or ::1 */
	struct sockaddr_storage sa; /* the address to bind */
	socklen_t salen;
	char text[80]; /* as written */
};

/*
 * Parses s into *a. Returns 0, or -1 with the reason in why ("expected ADDRESS:PORT,
 * ..."); *a is then unset.
 */
int metrics_addr_parse(struct metrics_addr *a, const char *s, char *why, size_t cap);

#endif
