/*
 * bench/idleconns.c: holds N idle LDAP connections on a server until a line arrives
 * on standard input; bench/idle.sh, bench/partial_pdu.sh and fault_test.sh measure
 * the server's memory meanwhile.
 *
 *   idleconns [-D DN -w PASSWORD] [-Z] [-S] [-p SENT/DECLARED] HOST PORT N
 *
 * Each connection binds (anonymously, or simply as DN with -D/-w) and its answer is
 * read before the next connection is made, so the server's backlog stays small.
 *   -Z  over TLS from the first byte (ldaps://; the certificate is not checked). Once the
 *       bind is answered the client frees its TLS state, leaving the socket open and
 *       quiet: the server holds an idle TLS connection, the client only a descriptor.
 *   -S  a stalled TLS handshake instead: the ClientHello is sent, nothing else (no
 *       bind); the server waits for the rest until its tls_handshake_timeout.
 *   -p  after the bind, the first SENT bytes of a request whose LDAPMessage declares
 *       DECLARED bytes of content (a request never finished), e.g. -p 200000/250000.
 *
 * Prints "held N" once every connection is made, then on the line from standard input
 * "server-closed K" (connections the server had closed or sent a Notice of
 * Disconnection on meanwhile) and "closed" after closing them all. Exits 1 with a
 * message if a connection or bind fails.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Appends an identifier and a definite length (long form as needed) at p. */
static unsigned char *put_head(unsigned char *p, unsigned char tag, size_t len)
{
	*p++ = tag;
	if (len < 0x80) {
		*p++ = (unsigned char)len;
		return p;
	}
	*p++ = 0x84;
	for (int s = 24; s >= 0; s -= 8)
		*p++ = (unsigned char)(len >> s);
	return p;
}

static size_t head_size(size_t len)
{
	return len < 0x80 ? 2 : 6;
}

/* BindRequest, message ID 1, version 3, simple; into out (room for 64 + dn + pw). */
static size_t bind_request(unsigned char *out, const char *dn, const char *pw)
{
	size_t dl = strlen(dn), pl = strlen(pw);
	size_t op = 3 + head_size(dl) + dl + head_size(pl) + pl;
	size_t msg = 3 + head_size(op) + op;
	unsigned char *p = put_head(out, 0x30, msg);
	p = put_head(p, 0x02, 1);
	*p++ = 1;
	p = put_head(p, 0x60, op);
	p = put_head(p, 0x02, 1);
	*p++ = 3;
	p = put_head(p, 0x04, dl);
	memcpy(p, dn, dl);
	p += dl;
	p = put_head(p, 0x80, pl);
	memcpy(p, pw, pl);
	p += pl;
	return (size_t)(p - out);
}

struct link {
	int fd;
	SSL *ssl;
};

static int xsend(struct link *l, const void *p, size_t n)
{
	if (l->ssl)
		return SSL_write(l->ssl, p, (int)n) == (int)n ? 0 : -1;
	return send(l->fd, p, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

static int xrecv(struct link *l, unsigned char *p, size_t n)
{
	if (l->ssl)
		return SSL_read(l->ssl, p, (int)n);
	return (int)recv(l->fd, p, n, 0);
}

/* Sends the ClientHello on fd and nothing more. */
static int stall_handshake(SSL_CTX *ctx, int fd)
{
	SSL *ssl = SSL_new(ctx);
	BIO *rb = BIO_new(BIO_s_mem()), *wb = BIO_new(BIO_s_mem());
	SSL_set_bio(ssl, rb, wb);
	SSL_set_connect_state(ssl);
	SSL_do_handshake(ssl); /* wants to read: the ClientHello is in wb */
	char *hello;
	long n = BIO_get_mem_data(wb, &hello);
	int rc = n > 0 && send(fd, hello, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -1;
	SSL_free(ssl);
	return rc;
}

/* The connections the server closed or gave a Notice of Disconnection: readable now. */
static int server_closed(const int *fds, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		struct pollfd p = {.fd = fds[i], .events = POLLIN};
		if (poll(&p, 1, 0) == 1)
			k++;
	}
	return k;
}

/* What the command line asks. */
struct opts {
	const char *dn, *pw;
	bool tls, stall;
	size_t sent, declared; /* -p SENT/DECLARED; 0/0 without it */
	const char *host, *port;
	int n;
};

/* Reads the command line into o: 0, or 2 (the exit status) after a message. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.dn = "", .pw = ""};
	int opt;
	while ((opt = getopt(argc, argv, "D:w:ZSp:")) != -1) {
		switch (opt) {
		case 'D':
			o->dn = optarg;
			break;
		case 'w':
			o->pw = optarg;
			break;
		case 'Z':
			o->tls = true;
			break;
		case 'S':
			o->stall = o->tls = true;
			break;
		case 'p':
			if (sscanf(optarg, "%zu/%zu", &o->sent, &o->declared) != 2 ||
			    o->sent >= o->declared || o->declared < 256) {
				fprintf(stderr, "idleconns: -p SENT/DECLARED, SENT < DECLARED\n");
				return 2;
			}
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 3 || strlen(o->dn) > 4096 || strlen(o->pw) > 4096) {
	usage:
		fprintf(stderr, "usage: idleconns [-D DN -w PASSWORD] [-Z] [-S] "
		                "[-p SENT/DECLARED] HOST PORT N\n");
		return 2;
	}
	o->host = argv[optind];
	o->port = argv[optind + 1];
	o->n = atoi(argv[optind + 2]);
	return 0;
}

/* The first sent bytes of an LDAPMessage of declared bytes: message ID 2, then a search
 * request's head and zeros for its content (never complete, so never decoded). */
static unsigned char *partial_request(size_t sent, size_t declared)
{
	unsigned char *partial = calloc(1, sent);
	unsigned char head[16], *p = put_head(head, 0x30, declared);
	p = put_head(p, 0x02, 1);
	*p++ = 2;
	p = put_head(p, 0x63, declared - 9);
	memcpy(partial, head, (size_t)(p - head) < sent ? (size_t)(p - head) : sent);
	return partial;
}

/*
 * Opens connection i to sa and leaves it idle as o asks: a stalled handshake, or a bind
 * (req[0..reqlen)) answered, then the partial request if any. Returns its descriptor;
 * -1 after a message.
 */
static int hold_one(const struct opts *o, int i, const struct sockaddr_in *sa, SSL_CTX *ctx,
                    const unsigned char *req, size_t reqlen, const unsigned char *partial)
{
	struct link l = {.fd = socket(AF_INET, SOCK_STREAM, 0)};
	if (l.fd < 0 || connect(l.fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		fprintf(stderr, "idleconns: connection %d: %s\n", i, strerror(errno));
		return -1;
	}
	struct timeval tv = {.tv_sec = 10};
	setsockopt(l.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (o->stall) {
		if (stall_handshake(ctx, l.fd) < 0) {
			fprintf(stderr, "idleconns: ClientHello %d not sent\n", i);
			return -1;
		}
		return l.fd;
	}
	if (o->tls) {
		l.ssl = SSL_new(ctx);
		SSL_set_fd(l.ssl, l.fd);
		if (SSL_connect(l.ssl) != 1) {
			fprintf(stderr, "idleconns: TLS handshake %d failed\n", i);
			ERR_print_errors_fp(stderr);
			return -1;
		}
	}
	unsigned char buf[256];
	if (xsend(&l, req, reqlen) < 0 || xrecv(&l, buf, sizeof(buf)) <= 0 || buf[0] != 0x30) {
		fprintf(stderr, "idleconns: bind %d not answered\n", i);
		return -1;
	}
	/* The bind's resultCode: after the message ID (02 01 01) and 61 LEN 0a 01. */
	if (o->dn[0] && !(buf[1] < 0x80 && buf[5] == 0x61 && buf[9] == 0)) {
		fprintf(stderr, "idleconns: bind %d as %s refused\n", i, o->dn);
		return -1;
	}
	if (partial && xsend(&l, partial, o->sent) < 0) {
		fprintf(stderr, "idleconns: partial request %d not sent: %s\n", i, strerror(errno));
		return -1;
	}
	/* The socket stays open and quiet; the client's TLS state goes (no close_notify). */
	SSL_free(l.ssl);
	return l.fd;
}

int main(int argc, char **argv)
{
	struct opts o;
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	int n = o.n;
	int *fds = calloc((size_t)n, sizeof(int));
	unsigned char *req = malloc(64 + 2 * 4096), *partial = NULL;
	size_t reqlen = bind_request(req, o.dn, o.pw);
	if (o.declared)
		partial = partial_request(o.sent, o.declared);
	SSL_CTX *ctx = NULL;
	if (o.tls && !(ctx = SSL_CTX_new(TLS_client_method()))) {
		fprintf(stderr, "idleconns: SSL_CTX_new failed\n");
		return 1;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(o.port))};
	inet_pton(AF_INET, o.host, &sa.sin_addr);
	for (int i = 0; i < n; i++)
		if ((fds[i] = hold_one(&o, i, &sa, ctx, req, reqlen, partial)) < 0)
			return 1;
	printf("held %d\n", n);
	fflush(stdout);
	char line[16];
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	printf("server-closed %d\n", server_closed(fds, n));
	for (int i = 0; i < n; i++)
		close(fds[i]);
	printf("closed\n");
	fflush(stdout);
	SSL_CTX_free(ctx);
	free(partial);
	free(req);
	free(fds);
	return 0;
}
