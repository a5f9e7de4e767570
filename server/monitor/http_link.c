/* A client connection of the HTTP endpoint, plain or TLS (http_link.h). */
#include "server/monitor/http_link.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "server/log.h"
#include "server/net/tls_socket.h"

int http_link_handshake(struct http_link *l, const char *peer)
{
	if (!l->tls)
		return 0;
	switch (tls_socket_handshake(l->tls)) {
	case TLS_SOCKET_DONE:
		return 0;
	case TLS_SOCKET_WANT_READ:
		return POLLIN;
	case TLS_SOCKET_WANT_WRITE:
		return POLLOUT;
	default:
		log_debug("metrics_listen: TLS handshake with %s failed: %s", peer,
		          tls_socket_why(l->tls));
		return -1;
	}
}

ssize_t http_link_recv(struct http_link *l, void *p, size_t n)
{
	return l->tls ? tls_socket_read(l->tls, p, n) : recv(l->fd, p, n, 0);
}

void http_link_blocking(struct http_link *l, int timeout_ms)
{
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	int fl = fcntl(l->fd, F_GETFL);
	if (fl >= 0)
		fcntl(l->fd, F_SETFL,
		      fl & ~O_NONBLOCK); /* SO_SNDTIMEO bounds blocking sends only */
	setsockopt(l->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

int http_link_sendv(struct http_link *l, struct iovec *iov, int n)
{
	if (l->tls) {
		for (int i = 0; i < n; i++)
			if (iov[i].iov_len &&
			    tls_socket_write(l->tls, iov[i].iov_base, iov[i].iov_len) < 0)
				return -1;
		return 0;
	}
	while (n > 0) {
		struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
		ssize_t k = sendmsg(l->fd, &m, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++, n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

int http_link_send(struct http_link *l, const void *p, size_t n)
{
	struct iovec v = {(void *)p, n};
	return http_link_sendv(l, &v, 1);
}

void http_link_end(struct http_link *l)
{
	tls_socket_free(l->tls);
	l->tls = NULL;
	shutdown(l->fd, SHUT_WR);
}

void http_link_close(struct http_link *l)
{
	if (l->fd < 0)
		return;
	tls_socket_free(l->tls);
	l->tls = NULL;
	close(l->fd);
	l->fd = -1;
}
