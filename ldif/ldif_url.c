/* "type:< URL" values: local files, read with a cap (see ldif_url.h). */
#include "ldif/ldif_url.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A hex digit's value, or -1. */
static int hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The path of a file: URL, %XX decoded, into path (pathlen bytes, NUL-terminated).
 * Returns 0, or -1 with why. */
static int url_path(const char *url, size_t len, char *path, size_t pathlen, char *why,
                    size_t whylen)
{
	if (len < 5 || strncasecmp(url, "file:", 5) != 0) {
		snprintf(why, whylen, "%.*s: only file: URLs can be read",
		         (int)(len > 200 ? 200 : len), url);
		return -1;
	}
	size_t i = 5, n = 0;
	if (len - i >= 2 && url[i] == '/' && url[i + 1] == '/')
		i += 2;
	for (; i < len; i++) {
		char c = url[i];
		if (c == '%' && i + 2 < len && hex(url[i + 1]) >= 0 && hex(url[i + 2]) >= 0) {
			c = (char)(hex(url[i + 1]) << 4 | hex(url[i + 2]));
			i += 2;
		}
		if (c == '\0' || n + 1 >= pathlen) {
			snprintf(why, whylen,
			         c ? "path too long" : "a NUL byte (%%00) in the path");
			return -1;
		}
		path[n++] = c;
	}
	if (n == 0) {
		snprintf(why, whylen, "no path after \"file:\"");
		return -1;
	}
	path[n] = '\0';
	return 0;
}

int ldif_url_read(const char *url, size_t len, size_t max, struct buf *out, char *why,
                  size_t whylen)
{
	char path[4096];
	if (url_path(url, len, path, sizeof(path), why, whylen) < 0)
		return -1;
	/* O_NONBLOCK: opening a FIFO does not wait for a writer (it is refused below). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, whylen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (unsigned long long)st.st_size > max) {
		if (!S_ISREG(st.st_mode))
			snprintf(why, whylen, "%s: not a regular file", path);
		else
			snprintf(why, whylen, "%s: %lld bytes, more than the %zu left", path,
			         (long long)st.st_size, max);
		close(fd);
		return -1;
	}
	/* The size may change while it is read: read to the end, but never past max. */
	size_t start = out->len, want = (size_t)st.st_size + 1;
	if (want > max + 1)
		want = max + 1;
	int rc = 0;
	for (;;) {
		if (out->cap - out->len < want && buf_reserve(out, want) < 0) {
			snprintf(why, whylen, "out of memory");
			rc = -1;
			break;
		}
		ssize_t got = read(fd, out->data + out->len, out->cap - out->len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(why, whylen, "%s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		out->len += (size_t)got;
		if (out->len - start > max) {
			snprintf(why, whylen, "%s: more than the %zu bytes left", path, max);
			rc = -1;
			break;
		}
		want = 4096;
	}
	close(fd);
	if (rc < 0)
		out->len = start;
	return rc;
}
