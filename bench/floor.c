/*
 * bench/floor.c: the socket API's floor for a 1-entry LDAP lookup. A responder with
 * minidir's threading (THREADS epoll loops, one SO_REUSEPORT listener each, TCP_NODELAY,
 * run to completion) that does no LDAP work: every SearchRequest gets one fixed
 * SearchResultEntry of ENTRY_BYTES bytes and a SearchResultDone (success), written with
 * one send together with any other responses owed to requests already read, as
 * minidir's batch policy does; a BindRequest gets success, an UnbindRequest closes.
 * bench/floor.sh loads it beside minidir and prints minidir's cost as a multiple of it.
 *
 *   floor PORT THREADS ENTRY_BYTES     (PORT 0: any; prints "listening on PORT")
 *
 * Requests are framed by their BER length only (a message over 64 KiB or a malformed
 * length closes the connection); the message ID is copied from the request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define IN_CAP 65536
#define OUT_CAP (1 << 20)

struct client {
	int fd;
	size_t in_len;
	unsigned char in[IN_CAP];
};

static unsigned char entry_op[8192]; /* the SearchResultEntry protocolOp, fixed */
static size_t entry_op_len;
static int port;

/* A BER length at p[0..n): its value into *len and its size; 0 if incomplete, -1 if bad. */
static int ber_len(const unsigned char *p, size_t n, size_t *len)
{
	if (n < 1)
		return 0;
	if (p[0] < 0x80) {
		*len = p[0];
		return 1;
	}
	size_t k = p[0] & 0x7f;
	if (k == 0 || k > 3)
		return -1;
	if (n < 1 + k)
		return 0;
	*len = 0;
	for (size_t i = 0; i < k; i++)
		*len = *len << 8 | p[1 + i];
	return (int)(1 + k);
}

static size_t put_len(unsigned char *p, size_t len)
{
	if (len < 0x80) {
		p[0] = (unsigned char)len;
		return 1;
	}
	if (len < 0x100) {
		p[0] = 0x81;
		p[1] = (unsigned char)len;
		return 2;
	}
	p[0] = 0x82;
	p[1] = (unsigned char)(len >> 8);
	p[2] = (unsigned char)len;
	return 3;
}

/* LDAPMessage { msgid (as the request's INTEGER TLV), op } into out; its size. */
static size_t put_message(unsigned char *out, const unsigned char *id, size_t idlen,
                          const unsigned char *op, size_t oplen)
{
	size_t n = 0;
	out[n++] = 0x30;
	n += put_len(out + n, idlen + oplen);
	memcpy(out + n, id, idlen);
	memcpy(out + n + idlen, op, oplen);
	return n + idlen + oplen;
}

/* TAG, the length of VALUE and VALUE appended at out + *n. */
static void put_tlv(unsigned char *out, size_t *n, unsigned char tag, const void *value, size_t len)
{
	out[(*n)++] = tag;
	*n += put_len(out + *n, len);
	memcpy(out + *n, value, len);
	*n += len;
}

/* The canned entry: DN uid=floor,ou=people,dc=example,dc=com and one description value
 * padding the protocolOp to about size bytes. */
static void build_entry(size_t size)
{
	static const char dn[] = "uid=floor,ou=people,dc=example,dc=com";
	static const char type[] = "description";
	size_t fixed = 4 + 2 + strlen(dn) + 4 + 4 + 2 + strlen(type) + 4 + 4;
	size_t vlen = size > fixed + 1 ? size - fixed : 1;
	if (vlen > sizeof(entry_op) - 64 - fixed)
		vlen = sizeof(entry_op) - 64 - fixed;
	unsigned char val[8192], set[8192], attr[8192], list[8192], body[8192];
	size_t n = 0, a = 0, l = 0, b = 0;
	memset(val, 'x', vlen);
	put_tlv(set, &n, 0x04, val, vlen); /* SET OF value */
	put_tlv(attr, &a, 0x04, type, strlen(type));
	put_tlv(attr, &a, 0x31, set, n);
	put_tlv(list, &l, 0x30, attr, a);
	put_tlv(body, &b, 0x04, dn, strlen(dn));
	put_tlv(body, &b, 0x30, list, l);
	entry_op_len = 0;
	put_tlv(entry_op, &entry_op_len, 0x64, body, b);
}

static const unsigned char done_op[] = {0x65, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00};
static const unsigned char bind_op[] = {0x61, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00};

/* Answers every whole request in c->in into out; returns -1 to close (unbind, bad input). */
static int answer(struct client *c, unsigned char *out, size_t *olen)
{
	size_t pos = 0;
	int rc = 0;
	while (rc == 0 && pos < c->in_len) {
		const unsigned char *p = c->in + pos;
		size_t left = c->in_len - pos, len = 0;
		if (p[0] != 0x30)
			return -1;
		int h = ber_len(p + 1, left - 1, &len);
		if (h < 0 || 1 + (size_t)h + len > IN_CAP)
			return -1;
		if (h == 0 || left < 1 + (size_t)h + len)
			break;
		const unsigned char *m = p + 1 + h, *id = m;
		size_t idlen, optag_at;
		if (m[0] != 0x02 || m[1] > 4)
			return -1;
		idlen = 2 + (size_t)m[1];
		optag_at = idlen;
		unsigned char tag = m[optag_at];
		if (*olen + entry_op_len + 64 > OUT_CAP)
			break; /* the rest after this flush */
		if (tag == 0x63) {
			*olen += put_message(out + *olen, id, idlen, entry_op, entry_op_len);
			*olen += put_message(out + *olen, id, idlen, done_op, sizeof(done_op));
		} else if (tag == 0x60) {
			*olen += put_message(out + *olen, id, idlen, bind_op, sizeof(bind_op));
		} else if (tag == 0x42) {
			rc = -1;
		}
		pos += 1 + (size_t)h + len;
	}
	memmove(c->in, c->in + pos, c->in_len - pos);
	c->in_len -= pos;
	return rc;
}

static int listen_on(int p)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1024) < 0) {
		perror("floor: listen");
		exit(1);
	}
	return fd;
}

static void close_client(int ep, struct client *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static void *loop(void *arg)
{
	int lfd = (int)(intptr_t)arg, ep = epoll_create1(0), one = 1;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL}, evs[64];
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	unsigned char *out = malloc(OUT_CAP);
	for (;;) {
		int n = epoll_wait(ep, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			struct client *c = evs[i].data.ptr;
			if (!c) {
				int fd;
				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					c = calloc(1, sizeof(*c));
					c->fd = fd;
					struct epoll_event cev = {.events = EPOLLIN, .data.ptr = c};
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
				}
				continue;
			}
			ssize_t r = read(c->fd, c->in + c->in_len, IN_CAP - c->in_len);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				close_client(ep, c);
				continue;
			}
			c->in_len += (size_t)r;
			size_t olen = 0;
			int rc = answer(c, out, &olen);
			/* A load generator reads what it asked for: a short write is not expected
			 * here, and the floor does not pay for output buffering it would not need.
			 */
			if (olen && send(c->fd, out, olen, MSG_NOSIGNAL) < 0 && errno != EAGAIN)
				rc = -1;
			if (rc < 0)
				close_client(ep, c);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: floor PORT THREADS ENTRY_BYTES\n");
		return 2;
	}
	int threads = atoi(argv[2]);
	build_entry((size_t)atol(argv[3]));
	int first = listen_on(atoi(argv[1]));
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	getsockname(first, (struct sockaddr *)&a, &alen);
	port = ntohs(a.sin_port);
	printf("listening on %d (entry %zu bytes)\n", port, entry_op_len);
	fflush(stdout);
	pthread_t t;
	for (int i = 1; i < threads; i++)
		pthread_create(&t, NULL, loop, (void *)(intptr_t)listen_on(port));
	loop((void *)(intptr_t)first);
	return 0;
}
