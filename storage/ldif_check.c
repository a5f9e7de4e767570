#include "storage/ldif_check.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* One logical line (a line and its continuations) as it is walked. */
struct logical {
	char type[128]; /* the attribute description, before ':' */
	size_t tlen;
	bool in_type; /* still reading the type */
	bool comment;
	int kind;    /* 0 plain, ':' base64, '<' URL */
	char val[8]; /* the start of a plain value (for "version") */
	size_t vlen;
	bool started; /* the value's first character was seen (FILL skipped) */
	size_t b64;   /* base64 characters, padding included */
	int pad;
	unsigned long start, end; /* physical lines */
};

static bool b64_char(unsigned char c)
{
	return isalnum(c) || c == '+' || c == '/';
}

static int fail(unsigned long *line, unsigned long at, char *why, size_t whylen, const char *fmt,
                const char *arg)
{
	*line = at;
	snprintf(why, whylen, fmt, arg);
	return -1;
}

/* fail() naming character c: itself when printable, else as \\xNN. */
static int fail_char(unsigned long *line, unsigned long at, char *why, size_t whylen,
                     const char *fmt, unsigned char c)
{
	char shown[8];
	snprintf(shown, sizeof(shown), isprint(c) ? "%c" : "\\x%02x", c);
	return fail(line, at, why, whylen, fmt, shown);
}

/* Whether c may stand in an attribute description (ALPHA DIGIT "-" ";" "."): a table, as
 * every character of every type of the file is tested. */
static bool type_char(unsigned char c)
{
	static const unsigned char ok[32] = {
	    [5] = 0x60,                                         /* '-' '.' */
	    [6] = 0xff,                                         /* '0'-'7' */
	    [7] = 0x0b,                                         /* '8' '9' ';' */
	    [8] = 0xfe,                                         /* 'A'-'G' */
	    [9] = 0xff,  [10] = 0xff, [11] = 0x07,              /* 'H'-'Z' */
	    [12] = 0xfe, [13] = 0xff, [14] = 0xff, [15] = 0x07, /* 'a'-'z' */
	};
	return ok[c >> 3] & (1u << (c & 7));
}

/* Consumes one character of a logical line's text at physical line at. */
static int take_char(struct logical *l, unsigned char c, unsigned long at, unsigned long *line,
                     char *why, size_t whylen)
{
	if (l->comment)
		return 0;
	if (l->in_type) {
		if (c == ':') {
			l->in_type = false;
			l->type[l->tlen] = '\0';
			return 0;
		}
		if (!type_char(c) || l->tlen + 1 >= sizeof(l->type))
			return fail_char(
			    line, at, why, whylen,
			    "invalid character '%s' in an attribute description (or a missing "
			    "':')",
			    c);
		l->type[l->tlen++] = (char)c;
		return 0;
	}
	if (!l->started && l->kind == 0 && l->b64 == 0 && (c == ':' || c == '<')) {
		l->kind = c;
		return 0;
	}
	if (!l->started && c == ' ')
		return 0; /* FILL */
	l->started = true;
	if (l->kind == 0 && l->vlen + 1 < sizeof(l->val))
		l->val[l->vlen++] = (char)c;
	if (l->kind != ':')
		return 0;
	if (c == '=') {
		l->pad++;
	} else if (l->pad) {
		return fail_char(line, at, why, whylen,
		                 "bad base64 value: '%s' after '=' padding (padding ends a value)",
		                 c);
	} else if (!b64_char(c)) {
		return fail_char(line, at, why, whylen, "bad base64 value: invalid character '%s'",
		                 c);
	}
	l->b64++;
	return 0;
}

/* Whether the rest of l's characters can change nothing take_char records: a comment, or
 * a plain or URL value once the start kept for "version" is full. */
static bool settled(const struct logical *l)
{
	return l->comment ||
	       (!l->in_type && l->kind != ':' && l->started && l->vlen + 1 >= sizeof(l->val));
}

/* The record so far: where its dn is. */
struct record_state {
	bool first;
	int dn_k; /* index of the dn line among non-comment lines, -1 before it */
	unsigned long *dn_line;
};

/* Checks a logical line once it is complete; k counts the record's non-comment lines. */
static int end_logical(struct logical *l, int k, struct record_state *st, unsigned long *line,
                       char *why, size_t whylen)
{
	if (l->comment)
		return 0;
	if (l->in_type)
		return fail(line, l->start, why, whylen, "%s",
		            "line has no ':' (not \"type: value\")");
	if (l->tlen == 0)
		return fail(line, l->start, why, whylen, "%s",
		            "missing attribute description before ':'");
	bool is_dn = l->tlen == 2 && strcasecmp(l->type, "dn") == 0;
	if (st->dn_k < 0) {
		if (k == 0 && st->first && strcasecmp(l->type, "version") == 0)
			return l->kind == 0 && strcmp(l->val, "1") == 0
			           ? 0
			           : fail(line, l->start, why, whylen, "%s",
			                  "unsupported LDIF version (only \"version: 1\" exists)");
		if (!is_dn)
			return fail(line, l->start, why, whylen,
			            "a record must start with \"dn:\", not \"%s:\"", l->type);
		st->dn_k = k;
		*st->dn_line = l->start;
	} else if (is_dn) {
		return fail(line, l->start, why, whylen, "%s",
		            "\"dn:\" inside a record: a blank line is missing before it");
	} else if (k == st->dn_k + 1 && strcasecmp(l->type, "control") == 0) {
		return fail(line, l->start, why, whylen, "%s",
		            "LDIF controls are not supported (minidir imports entries)");
	}
	if (l->kind == ':' && l->b64 == 0)
		return fail(line, l->start, why, whylen, "%s", "empty base64 value after \"::\"");
	if (l->kind == ':' && (l->b64 % 4 != 0 || l->pad > 2)) {
		char n[32];
		snprintf(n, sizeof(n), "%zu", l->b64);
		return fail(line, l->end, why, whylen,
		            "bad base64 value: %s characters, not a multiple of 4 (bad padding, "
		            "or cut short)",
		            n);
	}
	return 0;
}

int ldif_check_record(const struct ldif_record *rec, bool first, unsigned long *dn_line,
                      unsigned long *line, char *why, size_t whylen)
{
	struct logical l;
	memset(&l, 0, sizeof(l));
	*dn_line = 0;
	struct record_state st = {.first = first, .dn_k = -1, .dn_line = dn_line};
	int k = -1; /* index of the current non-comment logical line */
	bool open = false, last_continued = false;
	unsigned long at = rec->first_line;
	for (const char *p = rec->text; *p; at++) {
		const char *nl = strchr(p, '\n');
		size_t n = (size_t)(nl - p);
		if (p[0] == ' ') {
			if (!open)
				return fail(
				    line, at, why, whylen, "%s",
				    "continuation line (starting with a space) with no line "
				    "before it");
			last_continued = true;
			p++, n--;
		} else {
			if (open && end_logical(&l, k, &st, line, why, whylen) < 0)
				return -1;
			memset(&l, 0, sizeof(l));
			l.comment = p[0] == '#';
			l.in_type = !l.comment;
			l.start = at;
			k += !l.comment;
			open = true;
			last_continued = false;
		}
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)p[i];
			/* The type's characters, most of what is read: take_char's first case. */
			if (l.in_type && type_char(c) && l.tlen + 1 < sizeof(l.type)) {
				l.type[l.tlen++] = (char)c;
				continue;
			}
			if (settled(&l))
				break;
			if (take_char(&l, c, at, line, why, whylen) < 0)
				return -1;
		}
		l.end = at;
		p = nl + 1;
	}
	if (rec->cut && !l.comment && (last_continued || l.kind == ':'))
		return fail(line, rec->last_line, why, whylen, "%s",
		            "the file ends in the middle of a value (no newline after the last "
		            "line): is it cut short?");
	return open ? end_logical(&l, k, &st, line, why, whylen) : 0;
}
