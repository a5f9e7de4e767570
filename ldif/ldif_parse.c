#include "ldif/ldif_parse.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ldif/ldif_url.h"

/* Longest attribute description, in characters. */
#define LDIF_MAX_TYPE 127

/*
 * A walk through one logical line: q..e is what is left of the current physical line
 * (its LF, and one CR before it, excluded; a continuation's leading space too), next the
 * physical line after it.
 */
struct cursor {
	const char *q, *e, *next, *end; /* end: the record's */
	unsigned long line;             /* q's physical line */
	bool folded;                    /* a continuation line was entered */
};

/* The state of one record's scan. */
struct scan {
	struct ldif_entry *e;
	char *out; /* where the next type or value byte goes, in e->bytes */
	bool has_cr, libldap;
	int k, dn_k; /* the current non-comment line's index; the dn line's (-1: none yet) */
	size_t nlines;
	unsigned long url_line; /* the first "type:< URL" line (0: none) */
	unsigned long *line;
	char *why;
	size_t whylen;
};

/* A logical line's type and value as the checks see them. */
struct logical {
	const char *type;
	size_t tlen;
	bool colon;
	int kind; /* 0 plain, ':' base64, '<' URL (FILL skipped before ':' or '<') */
	bool url; /* "type:<": a URL value (libldap reads "type: <" as a plain value) */
	size_t b64;
	int pad;
	bool version_ok; /* the value is exactly "1" */
	struct berval val;
	unsigned long start, end; /* physical lines */
};

static void cursor_at(struct cursor *c, const char *s)
{
	const char *nl = memchr(s, '\n', (size_t)(c->end - s));
	c->q = s;
	c->e = nl ? nl : c->end;
	c->next = nl ? nl + 1 : c->end;
	if (c->e > c->q && c->e[-1] == '\r')
		c->e--;
}

/* Enters the next physical line if it continues this logical line; false if not. */
static bool cursor_more(struct cursor *c)
{
	if (c->next >= c->end || *c->next != ' ')
		return false;
	c->line++;
	c->folded = true;
	cursor_at(c, c->next + 1);
	return true;
}

/* The logical line's next character, or -1 at its end. */
static int cursor_peek(struct cursor *c)
{
	while (c->q == c->e)
		if (!cursor_more(c))
			return -1;
	return (unsigned char)*c->q;
}

__attribute__((format(printf, 4, 5))) static enum ldif_parse_result
fail(struct scan *s, unsigned long at, bool syntax, const char *fmt, ...)
{
	*s->line = at;
	size_t n = 0;
	if (syntax)
		n = (size_t)snprintf(s->why, s->whylen, "LDIF syntax error: ");
	if (n < s->whylen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->why + n, s->whylen - n, fmt, ap);
		va_end(ap);
	}
	return LDIF_PARSE_ERROR;
}

/* Character c as a message shows it: itself when printable, else as \\xNN (a value, so
 * that fail()'s format stays a literal its caller's compiler checks). */
struct shown_char {
	char text[8];
};
static struct shown_char shown_char(unsigned char c)
{
	struct shown_char sc;
	snprintf(sc.text, sizeof(sc.text), isprint(c) ? "%c" : "\\x%02x", c);
	return sc;
}

/* Whether c may stand in an attribute description (ALPHA DIGIT "-" ";" "."): a table, as
 * every character of every type of the file is tested. */
static bool type_char(unsigned char c)
{
	static const bool ok[256] = {
	    /* 0x00-0x2f: '-' '.' */
	    ['-'] = 1,
	    ['.'] = 1,
	    /* 0x30-0x3f: digits, ';' */
	    ['0'] = 1,
	    ['1'] = 1,
	    ['2'] = 1,
	    ['3'] = 1,
	    ['4'] = 1,
	    ['5'] = 1,
	    ['6'] = 1,
	    ['7'] = 1,
	    ['8'] = 1,
	    ['9'] = 1,
	    [';'] = 1,
	    /* letters */
	    ['A'] = 1,
	    ['B'] = 1,
	    ['C'] = 1,
	    ['D'] = 1,
	    ['E'] = 1,
	    ['F'] = 1,
	    ['G'] = 1,
	    ['H'] = 1,
	    ['I'] = 1,
	    ['J'] = 1,
	    ['K'] = 1,
	    ['L'] = 1,
	    ['M'] = 1,
	    ['N'] = 1,
	    ['O'] = 1,
	    ['P'] = 1,
	    ['Q'] = 1,
	    ['R'] = 1,
	    ['S'] = 1,
	    ['T'] = 1,
	    ['U'] = 1,
	    ['V'] = 1,
	    ['W'] = 1,
	    ['X'] = 1,
	    ['Y'] = 1,
	    ['Z'] = 1,
	    ['a'] = 1,
	    ['b'] = 1,
	    ['c'] = 1,
	    ['d'] = 1,
	    ['e'] = 1,
	    ['f'] = 1,
	    ['g'] = 1,
	    ['h'] = 1,
	    ['i'] = 1,
	    ['j'] = 1,
	    ['k'] = 1,
	    ['l'] = 1,
	    ['m'] = 1,
	    ['n'] = 1,
	    ['o'] = 1,
	    ['p'] = 1,
	    ['q'] = 1,
	    ['r'] = 1,
	    ['s'] = 1,
	    ['t'] = 1,
	    ['u'] = 1,
	    ['v'] = 1,
	    ['w'] = 1,
	    ['x'] = 1,
	    ['y'] = 1,
	    ['z'] = 1,
	};
	return ok[c];
}

/* Each base64 digit's value, 64 for any other byte. */
static unsigned char b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return (unsigned char)(c - 'A');
	if (c >= 'a' && c <= 'z')
		return (unsigned char)(c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (unsigned char)(c - '0' + 52);
	return c == '+' ? 62 : c == '/' ? 63 : 64;
}

/* The attribute description up to ':' (copied to s->out, NUL-terminated). */
static enum ldif_parse_result scan_type(struct scan *s, struct cursor *c, struct logical *l)
{
	char *t = s->out;
	for (;;) {
		/* Most of the characters of a file: the type's, on its one physical line. */
		const char *q = c->q, *stop = c->e;
		if ((size_t)(stop - q) > LDIF_MAX_TYPE - l->tlen)
			stop = q + (LDIF_MAX_TYPE - l->tlen);
		while (q < stop && type_char((unsigned char)*q))
			q++;
		size_t n = (size_t)(q - c->q);
		memcpy(s->out, c->q, n);
		s->out += n;
		l->tlen += n;
		c->q = q;
		int ch = cursor_peek(c);
		if (ch < 0)
			break;
		if (ch == ':') {
			c->q++;
			l->colon = true;
			break;
		}
		if (!type_char((unsigned char)ch) || l->tlen >= LDIF_MAX_TYPE)
			return fail(
			    s, c->line, true,
			    "invalid character '%s' in an attribute description (or a missing ':')",
			    shown_char((unsigned char)ch).text);
	}
	*s->out++ = '\0';
	l->type = t;
	if (c->folded)
		s->libldap = true; /* libldap keeps the fold's CRs in the type */
	return LDIF_PARSE_ENTRY;
}

/* A base64 value: checked character by character, decoded into s->out unless decode is
 * false. */
static enum ldif_parse_result scan_base64(struct scan *s, struct cursor *c, struct logical *l,
                                          bool decode)
{
	unsigned char quad[4];
	int n = 0;
	char *v = s->out;
	for (int ch; (ch = cursor_peek(c)) >= 0; c->q++) {
		if (ch == '=')
			l->pad++;
		else if (l->pad)
			return fail(
			    s, c->line, true,
			    "bad base64 value: '%s' after '=' padding (padding ends a value)",
			    shown_char((unsigned char)ch).text);
		else if (b64_value((unsigned char)ch) == 64)
			return fail(s, c->line, true, "bad base64 value: invalid character '%s'",
			            shown_char((unsigned char)ch).text);
		l->b64++;
		if (!decode)
			continue;
		quad[n++] = (unsigned char)ch;
		if (n < 4)
			continue;
		n = 0;
		unsigned d[4];
		for (int i = 0; i < 4; i++)
			d[i] = quad[i] == '=' ? 0 : b64_value(quad[i]);
		*s->out++ = (char)(d[0] << 2 | d[1] >> 4);
		if (quad[2] != '=')
			*s->out++ = (char)((d[1] & 15) << 4 | d[2] >> 2);
		if (quad[2] != '=' && quad[3] != '=')
			*s->out++ = (char)((d[2] & 3) << 6 | d[3]);
	}
	l->val.bv_val = v;
	l->val.bv_len = (size_t)(s->out - v);
	*s->out++ = '\0';
	return LDIF_PARSE_ENTRY;
}

/* Removes every CR of v[0..n); returns the length left. */
static size_t drop_cr(char *v, size_t n)
{
	char *w = v;
	for (size_t i = 0; i < n; i++)
		if (v[i] != '\r')
			*w++ = v[i];
	return (size_t)(w - v);
}

/* A plain value as libldap reads it: leading white space (FILL, folds) dropped, the
 * physical lines joined, every CR dropped. */
static void scan_plain(struct scan *s, struct cursor *c, struct logical *l)
{
	for (int ch; (ch = cursor_peek(c)) >= 0 && isspace(ch);)
		c->q++;
	char *v = s->out;
	if (c->next >= c->end || *c->next != ' ') { /* one physical line, most values */
		size_t n = (size_t)(c->e - c->q);
		memcpy(v, c->q, n);
		s->out += n;
		c->q = c->e;
		if (s->has_cr && memchr(v, '\r', n))
			s->out = v + drop_cr(v, n);
		l->val.bv_val = v;
		l->val.bv_len = (size_t)(s->out - v);
		*s->out++ = '\0';
		return;
	}
	do {
		size_t n = (size_t)(c->e - c->q);
		memcpy(s->out, c->q, n);
		if (s->has_cr && memchr(s->out, '\r', n))
			n = drop_cr(s->out, n);
		s->out += n;
		c->q = c->e;
	} while (cursor_more(c));
	l->val.bv_val = v;
	l->val.bv_len = (size_t)(s->out - v);
	*s->out++ = '\0';
}

/* The value after the type's ':': its kind, its checks, and (unless the record is for
 * libldap) its bytes. */
static enum ldif_parse_result scan_value(struct scan *s, struct cursor *c, struct logical *l,
                                         bool version)
{
	/* libldap takes ':' or '<' as the kind only right after the type's ':'. */
	int lib_kind = c->q < c->e && (*c->q == ':' || *c->q == '<') ? *c->q : 0;
	if (lib_kind)
		l->kind = *c->q++;
	while (c->q < c->e && *c->q == ' ') /* FILL, on the type's line */
		c->q++;
	for (int ch; (ch = cursor_peek(c)) >= 0; c->q++) {
		if (l->kind == 0 && (ch == ':' || ch == '<'))
			l->kind = ch;
		else if (ch != ' ')
			break; /* FILL ends */
	}
	if (l->kind != lib_kind)
		s->libldap = true;
	if (l->kind == ':')
		return scan_base64(s, c, l, !s->libldap);
	if (lib_kind == '<') { /* the URL, as a plain value (fetch_urls reads it) */
		l->url = true;
		scan_plain(s, c, l);
		return LDIF_PARSE_ENTRY;
	}
	if (version && l->kind == 0) {
		l->version_ok = cursor_peek(c) == '1' && (c->q++, cursor_peek(c) < 0);
	} else if (l->kind == 0 && !s->libldap) {
		scan_plain(s, c, l);
		return LDIF_PARSE_ENTRY;
	}
	while (cursor_more(c))
		;
	return LDIF_PARSE_ENTRY;
}

/* The checks of a complete logical line, in the order they are reported. */
static enum ldif_parse_result check_line(struct scan *s, const struct logical *l, bool first)
{
	if (!l->colon)
		return fail(s, l->start, true, "line has no ':' (not \"type: value\")");
	if (l->tlen == 0)
		return fail(s, l->start, true, "missing attribute description before ':'");
	/* RFC 4512 2.5: options = *( SEMI option ), option = 1*keychar; slapadd refuses an
	 * empty one ("zero length option is invalid") and an empty type. */
	const char *semi = memchr(l->type, ';', l->tlen);
	if (semi) {
		const char *end = l->type + l->tlen;
		if (semi == l->type)
			return fail(s, l->start, true,
			            "missing attribute type before ';' in \"%s\"", l->type);
		for (const char *p = semi; p < end; p++)
			if (*p == ';' && (p + 1 == end || p[1] == ';'))
				return fail(
				    s, l->start, true,
				    "empty option in the attribute description \"%s\" (a ';' "
				    "at its end or \";;\")",
				    l->type);
	}
	bool is_dn = same_type(l->type, l->tlen, "dn", 2);
	if (s->dn_k < 0) {
		if (s->k == 0 && first && same_type(l->type, l->tlen, "version", 7))
			return l->kind == 0 && l->version_ok
			           ? LDIF_PARSE_NONE
			           : fail(s, l->start, true,
			                  "unsupported LDIF version (only \"version: 1\" exists)");
		if (!is_dn)
			return fail(s, l->start, true,
			            "a record must start with \"dn:\", not \"%s:\"", l->type);
	} else if (is_dn) {
		return fail(s, l->start, true,
		            "\"dn:\" inside a record: a blank line is missing before it");
	} else if (s->k == s->dn_k + 1 && same_type(l->type, l->tlen, "control", 7)) {
		return fail(s, l->start, true,
		            "LDIF controls are not supported (minidir imports entries)");
	}
	if (l->url && (s->dn_k < 0 || s->e->url_max == 0))
		return fail(s, l->start, false,
		            "\"%s:<\" takes its value from a URL (%.*s): refused%s", l->type,
		            (int)(l->val.bv_len > 200 ? 200 : l->val.bv_len), l->val.bv_val,
		            s->dn_k < 0 ? " for a DN"
		                        : " (minidir-import reads files only with "
		                          "--allow-url-values)");
	if (l->kind == ':' && l->b64 == 0)
		return fail(s, l->start, true, "empty base64 value after \"::\"");
	if (l->kind == ':' && (l->b64 % 4 != 0 || l->pad > 2))
		return fail(
		    s, l->end, true,
		    "bad base64 value: %zu characters, not a multiple of 4 (bad padding, or "
		    "cut short)",
		    l->b64);
	return LDIF_PARSE_ENTRY;
}

/*
 * Puts the options of the attribute description type[0..len) in slapd's form, in place:
 * each lowercased (options are case-insensitive, RFC 4512 2.5) and sorted, so that
 * "o;LANG-zz;lang-y" is kept, and returned, as "o;lang-y;lang-zz" the way slapd
 * returns it. The type name before the first ';' is kept as written. A description
 * with more than 64 options (none has) is lowercased only.
 */
static void normalize_options(char *type, size_t len)
{
	char *semi = memchr(type, ';', len);
	if (!semi)
		return;
	char *end = type + len;
	for (char *p = semi + 1; p < end; p++)
		*p = (char)tolower((unsigned char)*p);
	struct opt {
		const char *s;
		size_t n;
	} opts[64];
	size_t n = 0;
	for (char *p = semi + 1; p < end;) {
		char *q = memchr(p, ';', (size_t)(end - p));
		if (!q)
			q = end;
		if (n == sizeof(opts) / sizeof(opts[0]))
			return;
		opts[n++] = (struct opt){p, (size_t)(q - p)};
		p = q + 1;
	}
	/* insertion sort: a handful of options */
	for (size_t i = 1; i < n; i++) {
		struct opt k = opts[i];
		size_t j = i;
		for (; j > 0; j--) {
			size_t m = opts[j - 1].n < k.n ? opts[j - 1].n : k.n;
			int c = memcmp(opts[j - 1].s, k.s, m);
			if (c < 0 || (c == 0 && opts[j - 1].n <= k.n))
				break;
			opts[j] = opts[j - 1];
		}
		opts[j] = k;
	}
	char tmp[1024];
	size_t olen = (size_t)(end - semi);
	if (olen > sizeof(tmp))
		return;
	char *w = tmp;
	for (size_t i = 0; i < n; i++) {
		*w++ = ';';
		memcpy(w, opts[i].s, opts[i].n);
		w += opts[i].n;
	}
	memcpy(semi, tmp, olen);
}

/* Keeps a checked line: the DN, or an attribute. */
static enum ldif_parse_result keep_line(struct scan *s, const struct logical *l)
{
	struct ldif_entry *e = s->e;
	if (s->dn_k < 0) {
		s->dn_k = s->k;
		e->dn = l->val;
		e->dn_line = l->start;
		return LDIF_PARSE_ENTRY;
	}
	if (s->k == s->dn_k + 1 && same_type(l->type, l->tlen, "changetype", 10)) {
		s->libldap = true;
		return LDIF_PARSE_ENTRY;
	}
	if (s->libldap)
		return LDIF_PARSE_ENTRY;
	if (e->lines.cap - e->lines.len < sizeof(struct attr_line) &&
	    buf_reserve(&e->lines, sizeof(struct attr_line)) < 0)
		return fail(s, l->start, false, "out of memory");
	normalize_options((char *)l->type, l->tlen); /* the scan's own output buffer */
	struct attr_line a = {l->type, l->tlen, l->val, l->start, 0, l->url, 0};
	memcpy(e->lines.data + e->lines.len, &a, sizeof(a));
	e->lines.len += sizeof(a);
	s->nlines++;
	return LDIF_PARSE_ENTRY;
}

/*
 * Replaces each URL value of the kept lines by the file it names (ldif/ldif_url.h),
 * at most e->url_max bytes for the record's URL values together, each followed by a NUL.
 * Pointers into e->files are set once every file is read (the buffer may move).
 */
static enum ldif_parse_result fetch_urls(struct scan *s)
{
	struct ldif_entry *e = s->e;
	struct attr_line *lines = (struct attr_line *)e->lines.data;
	size_t used = 0;
	e->files.len = 0;
	for (size_t i = 0; i < s->nlines; i++) {
		if (!lines[i].url)
			continue;
		char why[512];
		size_t start = e->files.len;
		if (ldif_url_read(lines[i].val.bv_val, lines[i].val.bv_len, e->url_max - used,
		                  &e->files, why, sizeof(why)) < 0)
			return fail(s, lines[i].line, false,
			            "reading the value of \"%s:<\": %s (a record's URL values hold "
			            "%zu bytes at most)",
			            lines[i].type, why, e->url_max);
		lines[i].file_off = start;
		lines[i].val.bv_len = e->files.len - start;
		used += lines[i].val.bv_len;
		if (buf_append(&e->files, "", 1) < 0)
			return fail(s, lines[i].line, false, "out of memory");
	}
	for (size_t i = 0; i < s->nlines; i++)
		if (lines[i].url)
			lines[i].val.bv_val = (char *)e->files.data + lines[i].file_off;
	return LDIF_PARSE_ENTRY;
}

enum ldif_parse_result ldif_parse_record(struct ldif_entry *e, const char *text, size_t len,
                                         unsigned long first_line, bool cut, bool first,
                                         unsigned long *line, char *why, size_t whylen)
{
	struct scan s = {.e = e, .k = -1, .dn_k = -1, .line = line, .why = why, .whylen = whylen};
	e->dn = (struct berval){0, NULL};
	e->mods = NULL;
	e->mod0 = NULL;
	e->dn_line = 0;
	e->lines.len = 0;
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		unsigned long at = first_line;
		for (const char *p = text; (p = memchr(p, '\n', (size_t)(nul - p))) != NULL; p++)
			at++;
		return fail(&s, at, false, "NUL byte in the line (binary values must be base64)");
	}
	/* Types and values are never longer than the text they come from, but for the NUL
	 * after the last line's value when it has no LF. */
	e->bytes.len = 0;
	if (buf_reserve(&e->bytes, len + 2) < 0)
		return fail(&s, first_line, false, "out of memory");
	s.out = (char *)e->bytes.data;
	s.has_cr = memchr(text, '\r', len) != NULL;
	const char *end = text + len;
	struct cursor c = {.end = end, .line = first_line};
	if (len && text[0] == ' ')
		return fail(&s, first_line, true,
		            "continuation line (starting with a space) with no line before it");
	for (const char *p = text; p < end; p = c.next, c.line++) {
		cursor_at(&c, p);
		c.folded = false;
		if (*p == '#') { /* a comment, with its continuations */
			while (cursor_more(&c))
				;
			continue;
		}
		s.k++;
		struct logical l = {.start = c.line};
		enum ldif_parse_result rc = scan_type(&s, &c, &l);
		if (rc != LDIF_PARSE_ENTRY)
			return rc;
		/* (Without a ':', scan_type read the whole logical line.) */
		bool version =
		    s.k == 0 && first && s.dn_k < 0 && same_type(l.type, l.tlen, "version", 7);
		if (l.colon && (rc = scan_value(&s, &c, &l, version)) != LDIF_PARSE_ENTRY)
			return rc;
		l.end = c.line;
		if (cut && c.next >= end && (c.folded || l.kind == ':'))
			return fail(&s, c.line, true,
			            "the file ends in the middle of a value (no newline after the "
			            "last line): is it cut short?");
		if (l.url && !s.url_line)
			s.url_line = l.start;
		rc = check_line(&s, &l, first);
		if (rc == LDIF_PARSE_NONE) { /* "version: 1": nothing kept */
			s.out = (char *)l.type;
			continue;
		}
		if (rc != LDIF_PARSE_ENTRY || (rc = keep_line(&s, &l)) != LDIF_PARSE_ENTRY)
			return rc;
	}
	/* libldap would read the file itself, with no cap. */
	if (s.libldap && s.url_line)
		return fail(&s, s.url_line, false,
		            "a \"type:<\" URL value in a record with a changetype line, a folded "
		            "attribute description or a value starting with ':' or '<' after the "
		            "spaces: not supported");
	if (s.libldap)
		return LDIF_PARSE_LIBLDAP;
	if (s.dn_k < 0)
		return LDIF_PARSE_NONE;
	if (s.url_line && fetch_urls(&s) != LDIF_PARSE_ENTRY)
		return LDIF_PARSE_ERROR;
	if (ldif_entry_build_mods(e, s.nlines) < 0)
		return fail(&s, e->dn_line, false, "out of memory");
	return LDIF_PARSE_ENTRY;
}

/* The records left to libldap (LDIF_PARSE_LIBLDAP): their text as ldap_parse_ldif_record
 * takes it, and the line of one of their attributes. */
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
