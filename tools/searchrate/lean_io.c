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

long lean_read_one(struct lean_link *l, unsigned char *buf, size_t cap, struct lb_msg *m)
{
	size_t have = 0, need;
	for (;;) {
		long k = lb_frame(buf, have, cap, m, &need);
		if (k != 0)
			return k > 0 ? k : 0;
		if (have == cap)
			return 0;
		ssize_t n = lean_link_recv(l, buf + have, cap - have);
		if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
			return 0;
		if (n > 0)
			have += (size_t)n;
		else if (!lean_wait_fd(l->fd, l->want, BIND_MS))
			return 0;
	}
}

bool lean_send_all(struct lean_link *l, const unsigned char *buf, size_t len)
{
	while (len) {
		ssize_t n = lean_link_send(l, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (!(n < 0 && (errno == EINTR || errno == EAGAIN)) ||
		           !lean_wait_fd(l->fd, l->want, BIND_MS)) {
			return false;
		}
	}
	return true;
}

/* What one response to a request of ours (message ID 1) said: its result code, diag. */
static int lean_answer(struct lean_link *l, const unsigned char *req, size_t reqlen, unsigned op,
                       unsigned char *buf, size_t cap, char *diag, size_t diaglen)
{
	struct lb_msg m;
	if (!lean_send_all(l, req, reqlen))
		return LDAP_SERVER_DOWN;
	if (lean_read_one(l, buf, cap, &m) <= 0)
		return LDAP_TIMEOUT;
	snprintf(diag, diaglen, "%.*s", (int)m.diaglen, m.diag ? (const char *)m.diag : "");
	return m.op == op && m.msgid == 1 ? m.rc : LDAP_SERVER_DOWN;
}

int lean_starttls(struct lean_link *l, char *diag, size_t diaglen)
{
	/* LDAPMessage { 1, ExtendedRequest { requestName [0] "1.3.6.1.4.1.1466.20037" } } */
	static const unsigned char req[] = "\x30\x1d\x02\x01\x01\x77\x18\x80\x16"
	                                   "1.3.6.1.4.1.1466.20037";
	unsigned char buf[4096];
	return lean_answer(l, req, sizeof(req) - 1, LB_OP_EXTENDED_RESPONSE, buf, sizeof(buf), diag,
	                   diaglen);
}

int lean_bind(const struct sr_config *cfg, struct lean_link *l, char *diag, size_t diaglen)
{
	size_t dnlen = strlen(cfg->binddn), pwlen = strlen(cfg->bindpw);
	size_t cap = lb_bind_max(dnlen, pwlen);
	if (cap < 65536)
		cap = 65536;
	unsigned char *buf = malloc(cap);
	if (!buf)
		return LDAP_NO_MEMORY;
	size_t n = lb_put_bind(buf, 1, cfg->binddn, dnlen, cfg->bindpw, pwlen);
	int rc = lean_answer(l, buf, n, LB_OP_BIND_RESPONSE, buf, cap, diag, diaglen);
	free(buf);
	return rc;
}
