/* The password classes of a file, and their record's bytes (password_record.h). */
#include "storage/password_record.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "storage/entry.h"
#include "password/password_class.h"

/*
 * The record, integers in native order (an LMDB file is read where it was written):
 *
 *   u8  PASSWORD_RECORD_VERSION
 *   u8  the number of classes, at most PASSWORD_RECORD_CLASSES; for each:
 *       u8 length of the class's text (< PASSWORD_RECORD_CLASS_LEN), the text,
 *       u64 its values (> 0), u32 length of the sample (> 0), the sample
 *   u64 unknown values; u16 length of the first's text (< PASSWORD_RECORD_FIRST_LEN), the text
 */
#define PASSWORD_RECORD_VERSION 1

void password_record_free(struct password_record *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->c[i].sample);
	memset(p, 0, sizeof(*p));
}

static int find_class(const struct password_record *p, const char *cls)
{
	for (int i = 0; i < p->n; i++)
		if (strcmp(p->c[i].cls, cls) == 0)
			return i;
	return -1;
}

/* Adds values of class cls; sample[0..len) is copied when the class is new. */
static int add_class(struct password_record *p, const char *cls, uint64_t values,
                     const char *sample, size_t len)
{
	int i = find_class(p, cls);
	if (i >= 0) {
		p->c[i].values += values;
		return 0;
	}
	if (p->n == PASSWORD_RECORD_CLASSES)
		return 0; /* not counted: the bound */
	char *copy = strndup(sample, len);
	if (!copy)
		return ENOMEM;
	struct password_class_count *c = &p->c[p->n++];
	snprintf(c->cls, sizeof(c->cls), "%s", cls);
	c->values = values;
	c->sample = copy;
	c->len = len;
	return 0;
}

int password_record_value(struct password_record *p, const char *v, size_t len, const char *dn,
                          size_t dnlen, int delta)
{
	if (!password_scheme_known(v, len)) {
		if (delta > 0 && p->unknown++ == 0) {
			const char *close = memchr(v, '}', len);
			snprintf(p->unknown_first, sizeof(p->unknown_first), "%.*s on %.*s",
			         (int)(close - v + 1), v, (int)dnlen, dn);
		} else if (delta < 0 && p->unknown > 0 && --p->unknown == 0) {
			p->unknown_first[0] = '\0';
		}
		/* Another unknown value taking the first's place would need a scan: the first
		 * stays named while others remain (it is what the warning's example is). */
		return 0;
	}
	char cls[PASSWORD_RECORD_CLASS_LEN];
	password_cost_class(v, len, cls, sizeof(cls));
	if (delta > 0)
		return add_class(p, cls, 1, v, len);
	int i = find_class(p, cls);
	if (i < 0 || --p->c[i].values > 0) {
		/*
		 * The sample is kept even when this was it: the decoy is only ever checked
		 * against (a failed bind's cost), never matched, so it need be a value of its
		 * class and nothing more; finding one still in use would mean reading entries.
		 */
		return 0;
	}
	free(p->c[i].sample);
	memmove(&p->c[i], &p->c[i + 1], (size_t)(p->n - i - 1) * sizeof(p->c[0]));
	p->n--;
	return 0;
}

int password_record_entry(struct password_record *p, const struct entry_view *e, int delta)
{
	const unsigned char *vals, *v;
	size_t vlen, len;
	if (!entry_find_attr(e, "userPassword", 12, &vals, &vlen))
		return 0;
	for (const unsigned char *r = vals; entry_next_value(&r, vals + vlen, &v, &len);) {
		int rc = password_record_value(p, (const char *)v, len, (const char *)e->dn,
		                               e->dnlen, delta);
		if (rc)
			return rc;
	}
	return 0;
}

int password_record_merge(struct password_record *to, const struct password_record *from)
{
	for (int i = 0; i < from->n; i++) {
		const struct password_class_count *c = &from->c[i];
		int rc = add_class(to, c->cls, c->values, c->sample, c->len);
		if (rc)
			return rc;
	}
	if (from->unknown && to->unknown == 0)
		memcpy(to->unknown_first, from->unknown_first, sizeof(to->unknown_first));
	to->unknown += from->unknown;
	return 0;
}

static int put(struct buf *out, const void *data, size_t len)
{
	return buf_append(out, data, len) < 0 ? ENOMEM : 0;
}

int password_record_encode(const struct password_record *p, struct buf *out)
{
	uint8_t head[2] = {PASSWORD_RECORD_VERSION, (uint8_t)p->n};
	int rc = put(out, head, sizeof(head));
	for (int i = 0; !rc && i < p->n; i++) {
		const struct password_class_count *c = &p->c[i];
		uint8_t clen = (uint8_t)strlen(c->cls);
		uint32_t slen = (uint32_t)c->len;
		if (!(rc = put(out, &clen, 1)) && !(rc = put(out, c->cls, clen)) &&
		    !(rc = put(out, &c->values, sizeof(c->values))) &&
		    !(rc = put(out, &slen, sizeof(slen))))
			rc = put(out, c->sample, c->len);
	}
	uint16_t flen = (uint16_t)strlen(p->unknown_first);
	if (!rc && !(rc = put(out, &p->unknown, sizeof(p->unknown))) &&
	    !(rc = put(out, &flen, sizeof(flen))))
		rc = put(out, p->unknown_first, flen);
	return rc;
}

/* Reading a record: the bytes left, and why it is bad once it is. */
struct reader {
	const unsigned char *p, *end;
	char *why;
	size_t whylen;
};

__attribute__((format(printf, 2, 3))) static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, r->whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* The next n bytes into out (NULL: skipped, *at set to where they are). */
static int take(struct reader *r, void *out, size_t n, const unsigned char **at)
{
	if ((size_t)(r->end - r->p) < n)
		return bad(r, "cut short");
	if (out)
		memcpy(out, r->p, n);
	if (at)
		*at = r->p;
	r->p += n;
	return 0;
}

static int decode_class(struct reader *r, struct password_record *p, int i)
{
	/* Set before take() fills them: a build with fat LTO objects (the package's) cannot see
	 * that they are read only after take() succeeded. */
	uint8_t clen = 0;
	uint32_t slen = 0;
	uint64_t values = 0;
	const unsigned char *cls = NULL, *sample = NULL;
	if (take(r, &clen, 1, NULL) || take(r, NULL, clen, &cls) ||
	    take(r, &values, sizeof(values), NULL) || take(r, &slen, sizeof(slen), NULL) ||
	    take(r, NULL, slen, &sample))
		return -1;
	char text[PASSWORD_RECORD_CLASS_LEN], own[PASSWORD_RECORD_CLASS_LEN];
	if (clen >= sizeof(text) || memchr(cls, '\0', clen))
		return bad(r, "class %d: a bad name", i + 1);
	memcpy(text, cls, clen);
	text[clen] = '\0';
	if (values == 0 || slen == 0 || slen > ENTRY_MAX_BYTES)
		return bad(r, "class \"%s\": %llu values, a sample of %u bytes", text,
		           (unsigned long long)values, (unsigned)slen);
	/* The decoy's cost is the sample's: one of another class would misstate it. */
	if (!password_scheme_known((const char *)sample, slen) ||
	    (password_cost_class((const char *)sample, slen, own, sizeof(own)), strcmp(own, text)))
		return bad(r, "class \"%s\": its sample is of another class", text);
	if (find_class(p, text) >= 0)
		return bad(r, "class \"%s\" twice", text);
	return add_class(p, text, values, (const char *)sample, slen) ? bad(r, "out of memory") : 0;
}

int password_record_decode(struct password_record *p, const void *data, size_t len, char *why,
                           size_t whylen)
{
	memset(p, 0, sizeof(*p));
	struct reader r = {data, (const unsigned char *)data + len, why, whylen};
	uint8_t head[2] = {0};
	uint16_t flen = 0;
	const unsigned char *first = NULL; /* set, as decode_class's, for the package's build */
	int rc = take(&r, head, sizeof(head), NULL);
	if (!rc && head[0] != PASSWORD_RECORD_VERSION)
		rc = bad(&r, "version %u, not %u", head[0], PASSWORD_RECORD_VERSION);
	if (!rc && head[1] > PASSWORD_RECORD_CLASSES)
		rc = bad(&r, "%u classes, more than %d", head[1], PASSWORD_RECORD_CLASSES);
	for (int i = 0; !rc && i < head[1]; i++)
		rc = decode_class(&r, p, i);
	if (!rc)
		rc = take(&r, &p->unknown, sizeof(p->unknown), NULL) ||
		     take(&r, &flen, sizeof(flen), NULL) || take(&r, NULL, flen, &first);
	if (!rc && (flen >= sizeof(p->unknown_first) || (flen == 0) != (p->unknown == 0) ||
	            memchr(first, '\0', flen)))
		rc = bad(&r, "a bad first unknown value");
	if (!rc && r.p != r.end)
		rc = bad(&r, "%zu bytes after its end", (size_t)(r.end - r.p));
	if (rc) {
		password_record_free(p);
		return -1;
	}
	memcpy(p->unknown_first, first, flen);
	p->unknown_first[flen] = '\0';
	return 0;
}
