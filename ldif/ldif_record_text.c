/* The records left to libldap (LDIF_PARSE_LIBLDAP, ldif/ldif_parse.h): their text as
 * ldap_parse_ldif_record takes it, and the line of one of their attributes. */
#include "ldif/ldif_parse.h"

#include <string.h>
#include <strings.h>

int ldif_record_text(const char *text, size_t len, struct buf *out)
{
	const char *end = text + len;
	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		if (buf_append(out, p, n - (n > 0 && p[n - 1] == '\r')) < 0 ||
		    buf_append(out, "\n", 1) < 0)
			return -1;
		p = nl ? nl + 1 : end;
	}
	return buf_append(out, "", 1);
}

unsigned long ldif_record_type_line(const char *text, unsigned long first_line, const char *type,
                                    int n)
{
	size_t tlen = strlen(type);
	unsigned long line = first_line;
	for (const char *p = text; *p; line++) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		/* Not a continuation (" ...") or a comment: "type:", "type::" or "type:<". */
		if (p[0] != ' ' && p[0] != '#' && len > tlen && p[tlen] == ':' &&
		    strncasecmp(p, type, tlen) == 0 && n-- == 0)
			return line;
		p += len + (end != NULL);
	}
	return 0;
}
