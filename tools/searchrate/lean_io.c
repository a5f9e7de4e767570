/* Blocking steps of the lean engine's connections: see lean_io.h. */
#include "tools/searchrate/lean_io.h"

#include <errno.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

bool lean_wait_fd(int fd, short events, int ms)
{
	struct pollfd p = {.fd = fd, .events = events};
	int n;
	while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
		;
	return n > 0;
}

long lean_read_one(int fd, unsigned char *buf, size_t cap, struct lb_msg *m)
{
	size_t have = 0, need;
	for (;;) {
		long k = lb_frame(buf, have, cap, m, &need);
		if (k != 0)
			return k > 0 ? k : 0;
		if (have == cap || !lean_wait_fd(fd, POLLIN, BIND_MS))
			return 0;
		ssize_t n = recv(fd, buf + have, cap - have, 0);
		if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
			return 0;
		if (n > 0)
			have += (size_t)n;
	}
}

bool lean_send_all(int fd, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (!(n < 0 && (errno == EINTR || errno == EAGAIN)) ||
		           !lean_wait_fd(fd, POLLOUT, BIND_MS)) {
			return false;
		}
	}
	return true;
}

int lean_bind_fd(const struct sr_config *cfg, int fd, char *diag, size_t diaglen)
{
	size_t dnlen = strlen(cfg->binddn), pwlen = strlen(cfg->bindpw);
	size_t cap = lb_bind_max(dnlen, pwlen);
	if (cap < 65536)
		cap = 65536;
	unsigned char *buf = malloc(cap);
	if (!buf)
		return LDAP_NO_MEMORY;
	size_t n = lb_put_bind(buf, 1, cfg->binddn, dnlen, cfg->bindpw, pwlen);
	struct lb_msg m;
	int rc = LDAP_SERVER_DOWN;
	if (lean_send_all(fd, buf, n)) {
		rc = LDAP_TIMEOUT;
		if (lean_read_one(fd, buf, cap, &m) > 0) {
			bool ours = m.op == LB_OP_BIND_RESPONSE && m.msgid == 1;
			rc = ours ? m.rc : LDAP_SERVER_DOWN;
			snprintf(diag, diaglen, "%.*s", (int)m.diaglen,
			         m.diag ? (const char *)m.diag : "");
		}
	}
	free(buf);
	return rc;
}
