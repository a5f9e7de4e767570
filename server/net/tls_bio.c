/* A BIO over a session's lent input and its output buffer: see tls_bio.h. */
#include "server/net/tls_bio.h"

#include <string.h>

static int io_read(BIO *b, char *data, size_t len, size_t *got)
{
	struct tls_bio_io *io = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	if (io->in_len == 0) {
		BIO_set_retry_read(b);
		*got = 0;
		return 0;
	}
	size_t n = len < io->in_len ? len : io->in_len;
	memcpy(data, io->in, n);
	io->in += n;
	io->in_len -= n;
	*got = n;
	return 1;
}

static int io_write(BIO *b, const char *data, size_t len, size_t *put)
{
	struct tls_bio_io *io = BIO_get_data(b);
	BIO_clear_retry_flags(b);
	*put = 0;
	if (!io->out || buf_append(io->out, data, len) < 0)
		return 0;
	*put = len;
	return 1;
}

static long io_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)num;
	(void)ptr;
	struct tls_bio_io *io = BIO_get_data(b);
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_PENDING:
		return (long)io->in_len;
	default: /* no EOF, nothing waiting to be written, no kernel TLS */
		return 0;
	}
}

static int io_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

BIO_METHOD *tls_bio_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "minidir session");
	if (m && (!BIO_meth_set_read_ex(m, io_read) || !BIO_meth_set_write_ex(m, io_write) ||
	          !BIO_meth_set_ctrl(m, io_ctrl) || !BIO_meth_set_create(m, io_create))) {
		BIO_meth_free(m);
		return NULL;
	}
	return m;
}

BIO *tls_bio_new(const BIO_METHOD *m, struct tls_bio_io *io)
{
	BIO *b = BIO_new(m);
	if (b)
		BIO_set_data(b, io);
	return b;
}
