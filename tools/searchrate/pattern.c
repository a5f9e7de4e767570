/*
 * pattern.c: value patterns (see pattern.h). A pattern is parsed once into components,
 * literal runs and ranges, so that expanding it for each search is a copy per literal and
 * the digits of each range written by hand, with no parsing and no allocation in the load loop.
 */
#include "tools/searchrate/pattern.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum comp_kind { COMP_LITERAL, COMP_RANDOM, COMP_SEQUENTIAL };

struct pattern_comp {
	enum comp_kind kind;
	char *text; /* COMP_LITERAL */
	size_t len;
	int64_t lo;            /* COMP_RANDOM: inclusive bounds; COMP_SEQUENTIAL: first value */
	uint64_t span;         /* COMP_RANDOM: hi - lo */
	uint64_t count;        /* COMP_SEQUENTIAL: values before wrapping (0: all 2^64) */
	int64_t step;          /* COMP_SEQUENTIAL: signed step */
	_Atomic uint64_t next; /* COMP_SEQUENTIAL: shared by all threads */
	int width;             /* minimum digits, zero padded */
};

/* One bracketed range as written: [a-b] or [a:b:step], padded to width digits. */
struct range {
	int64_t a, b, step;
	char sep; /* '-' random, ':' sequential */
	int width;
};

uint64_t pattern_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniformly distributed integer in [0, n), n > 0. */
static uint64_t rand_below(uint64_t *state, uint64_t n)
{
	uint64_t threshold = (0 - n) % n;
	for (;;) {
		uint64_t r = pattern_rng_next(state);
		if (r >= threshold)
			return r % n;
	}
}

/* A new zeroed component at the end of p, or NULL when memory ran out. */
static struct pattern_comp *comp_add(struct pattern *p)
{
	struct pattern_comp *c = realloc(p->comps, (p->ncomps + 1) * sizeof(*c));
	if (!c)
		return NULL;
	p->comps = c;
	c = &p->comps[p->ncomps++];
	memset(c, 0, sizeof(*c));
	atomic_init(&c->next, 0);
	return c;
}

/* Adds the literal text[0..len) as a component (also when len is 0); false: out of memory. */
static bool comp_add_literal(struct pattern *p, const char *text, size_t len)
{
	struct pattern_comp *c = comp_add(p);
	if (!c || !(c->text = malloc(len + 1)))
		return false;
	c->kind = COMP_LITERAL;
	memcpy(c->text, text, len);
	c->len = len;
	p->maxlen += len;
	return true;
}

/* Adds a parsed range as a component; false: out of memory. */
static bool comp_add_range(struct pattern *p, const struct range *r)
{
	struct pattern_comp *c = comp_add(p);
	if (!c)
		return false;
	c->width = r->width;
	if (r->sep == '-') {
		c->kind = COMP_RANDOM;
		c->lo = r->a < r->b ? r->a : r->b;
		c->span = (uint64_t)(r->a < r->b ? r->b : r->a) - (uint64_t)c->lo;
	} else {
		c->kind = COMP_SEQUENTIAL;
		c->lo = r->a;
		uint64_t span = r->a <= r->b ? (uint64_t)r->b - (uint64_t)r->a
		                             : (uint64_t)r->a - (uint64_t)r->b;
		c->count =
		    span / (uint64_t)r->step + 1; /* span / 1 + 1 may wrap to 0: full range */
		c->step = r->a <= r->b ? r->step : -r->step;
	}
	p->maxlen += (r->width > 20 ? (size_t)r->width : 20) + 1;
	p->nranges++;
	return true;
}

/* Parses a signed decimal integer at *s (no spaces, no '+'), advancing *s. */
static bool parse_int_at(const char **s, int64_t *out)
{
	const char *p = *s;
	if (!(*p == '-' || (*p >= '0' && *p <= '9')))
		return false;
	if (*p == '-' && !(p[1] >= '0' && p[1] <= '9'))
		return false;
	char *end;
	errno = 0;
	long long v = strtoll(p, &end, 10);
	if (errno)
		return false;
	*out = v;
	*s = end;
	return true;
}

/* Parses the range whose '[' is at open and whose ']' is at close (NULL: none). */
static bool parse_range(const char *open, const char *close, struct range *r)
{
	const char *s = open + 1;
	*r = (struct range){.step = 1};
	if (!close || !parse_int_at(&s, &r->a))
		return false;
	r->sep = *s;
	if (r->sep != '-' && r->sep != ':')
		return false;
	s++;
	if (!parse_int_at(&s, &r->b))
		return false;
	if (r->sep == ':' && (*s == ':' || *s == 'x')) {
		s++;
		if (!parse_int_at(&s, &r->step) || r->step <= 0)
			return false;
	}
	if (*s == '%') {
		for (s++; *s == '0' || *s == '#'; s++)
			r->width += *s == '0';
		if (r->width > 20)
			return false;
	}
	return s == close;
}

static bool bad_pattern(struct pattern *p, size_t offset, char *err, size_t errlen)
{
	snprintf(err, errlen,
	         "bad value pattern at offset %zu of \"%s\": expected [A-B], [A:B] or "
	         "[A:B:STEP] with integers (write [[ and ]] for literal brackets)",
	         offset, p->src);
	pattern_free(p);
	return false;
}

static bool out_of_memory(struct pattern *p, char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	pattern_free(p);
	return false;
}

/* The pattern's only component as one string, when it is a literal; false: out of memory. */
static bool set_fixed(struct pattern *p)
{
	if (p->ncomps != 1 || p->comps[0].kind != COMP_LITERAL)
		return true;
	p->fixed = malloc(p->comps[0].len + 1);
	if (!p->fixed)
		return false;
	memcpy(p->fixed, p->comps[0].text, p->comps[0].len);
	p->fixed[p->comps[0].len] = '\0';
	return true;
}

bool pattern_parse(struct pattern *p, const char *src, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->src = src;
	char *lit = malloc(strlen(src) + 1); /* the literal run being collected */
	if (!lit)
		return out_of_memory(p, err, errlen);
	size_t litlen = 0;
	bool ok = true;
	for (const char *s = src; *s && ok;) {
		if ((s[0] == '[' && s[1] == '[') || (s[0] == ']' && s[1] == ']')) {
			lit[litlen++] = s[0];
			s += 2;
			continue;
		}
		if (*s != '[') {
			lit[litlen++] = *s++;
			continue;
		}
		const char *close = strchr(s, ']');
		struct range r;
		if (!parse_range(s, close, &r)) {
			free(lit);
			return bad_pattern(p, (size_t)(s - src), err, errlen);
		}
		ok = (!litlen || comp_add_literal(p, lit, litlen)) && comp_add_range(p, &r);
		litlen = 0;
		s = close + 1;
	}
	if (ok && (litlen || p->ncomps == 0))
		ok = comp_add_literal(p, lit, litlen);
	free(lit);
	if (!ok || !set_fixed(p))
		return out_of_memory(p, err, errlen);
	return true;
}

/* The value of range c for this expansion. */
static int64_t comp_value(struct pattern_comp *c, uint64_t *rng)
{
	if (c->kind == COMP_RANDOM) {
		uint64_t off =
		    c->span == UINT64_MAX ? pattern_rng_next(rng) : rand_below(rng, c->span + 1);
		return (int64_t)((uint64_t)c->lo + off);
	}
	uint64_t k = atomic_fetch_add_explicit(&c->next, 1, memory_order_relaxed);
	if (c->count)
		k %= c->count;
	return (int64_t)((uint64_t)c->lo + k * (uint64_t)c->step);
}

/* v in decimal at out, zero padded to width characters as "%0*" PRId64 writes it (a minus sign
 * counts in the width); returns its length. snprintf took about 700 instructions a search. */
static size_t put_decimal(char *out, int64_t v, int width)
{
	char digits[20];
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	size_t n = 0, len = 0;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		out[len++] = '-';
	while (len + n < (size_t)width)
		out[len++] = '0';
	while (n)
		out[len++] = digits[--n];
	return len;
}

const char *pattern_expand(struct pattern *p, uint64_t *rng, char *buf)
{
	return pattern_expand_spans(p, rng, buf, NULL);
}

const char *pattern_expand_spans(struct pattern *p, uint64_t *rng, char *buf,
                                 struct pattern_span *spans)
{
	if (p->fixed)
		return p->fixed;
	size_t pos = 0;
	for (size_t i = 0; i < p->ncomps; i++) {
		struct pattern_comp *c = &p->comps[i];
		if (c->kind == COMP_LITERAL) {
			memcpy(buf + pos, c->text, c->len);
			pos += c->len;
			continue;
		}
		size_t w = put_decimal(buf + pos, comp_value(c, rng), c->width);
		if (spans)
			*spans++ = (struct pattern_span){pos, w};
		pos += w;
	}
	buf[pos] = '\0';
	return buf;
}

void pattern_rewind(struct pattern *p)
{
	for (size_t i = 0; i < p->ncomps; i++)
		atomic_store(&p->comps[i].next, 0);
}

void pattern_free(struct pattern *p)
{
	for (size_t i = 0; i < p->ncomps; i++)
		free(p->comps[i].text);
	free(p->comps);
	free(p->fixed);
	p->comps = NULL;
	p->ncomps = 0;
	p->fixed = NULL;
	p->maxlen = 0;
	p->nranges = 0;
}
