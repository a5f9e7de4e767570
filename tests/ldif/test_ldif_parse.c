/*
 * Unit tests for minidir-import's LDIF reading: framing (ldif/ldif_reader.h) and the
 * one-pass record parser (ldif/ldif_parse.h): folded lines, base64, CR LF, comments,
 * empty values, options, every error with its line, the records left to libldap, and a
 * differential test against libldap's ldap_parse_ldif_record (the oracle here only) on
 * many generated and mutated records.
 */
#include <check.h>
#include <ldap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldif/ldif_parse.h"
#include "ldif/ldif_reader.h"
#include "protocol/buf.h"
#include "tests/check_run.h"

static struct ldif_entry entry;
static unsigned long bad_line;
static char why[512];

static void teardown(void)
{
	ldif_entry_free(&entry);
}

/* Parses text (NUL-terminated) as a record starting on line 1. */
static enum ldif_parse_result parse_at(const char *text, bool cut, bool first)
{
	bad_line = 0;
	why[0] = '\0';
	return ldif_parse_record(&entry, text, strlen(text), 1, cut, first, &bad_line, why,
	                         sizeof(why));
}

static enum ldif_parse_result parse(const char *text)
{
	return parse_at(text, false, false);
}

/* The mod of type (as spelled in the result), or NULL. */
static LDAPMod *mod_of(const char *type)
{
	for (int i = 0; entry.mods && entry.mods[i]; i++)
		if (strcmp(entry.mods[i]->mod_type, type) == 0)
			return entry.mods[i];
	return NULL;
}

static int nmods(void)
{
	int n = 0;
	while (entry.mods && entry.mods[n])
		n++;
	return n;
}

/* Checks that mod `type` holds exactly the values given (NULL-terminated list). */
static void expect_values(const char *type, const char *const *want, const size_t *lens)
{
	LDAPMod *m = mod_of(type);
	ck_assert_msg(m != NULL, "no mod %s", type);
	int i = 0;
	for (; want[i]; i++) {
		struct berval *v = m->mod_bvalues[i];
		ck_assert_msg(v != NULL, "%s: value %d missing", type, i);
		size_t len = lens ? lens[i] : strlen(want[i]);
		ck_assert_uint_eq(v->bv_len, len);
		ck_assert_mem_eq(v->bv_val, want[i], len);
		ck_assert_int_eq(v->bv_val[len], '\0');
	}
	ck_assert_ptr_null(m->mod_bvalues[i]);
}

START_TEST(plain_entry)
{
	ck_assert_int_eq(parse("dn: cn=a,dc=x\nobjectClass: top\ncn: a\nobjectClass: person\n"
	                       "CN: b\nsn:s\ncn;lang-en: c\n"),
	                 LDIF_PARSE_ENTRY);
	ck_assert_str_eq(entry.dn.bv_val, "cn=a,dc=x");
	ck_assert_uint_eq(entry.dn_line, 1);
	/* One mod per type, in order of first appearance, spelled as first written. */
	ck_assert_int_eq(nmods(), 4);
	ck_assert_str_eq(entry.mods[0]->mod_type, "objectClass");
	ck_assert_str_eq(entry.mods[1]->mod_type, "cn");
	ck_assert_str_eq(entry.mods[2]->mod_type, "sn");
	ck_assert_str_eq(entry.mods[3]->mod_type, "cn;lang-en");
	ck_assert_int_eq(entry.mods[0]->mod_op, LDAP_MOD_ADD | LDAP_MOD_BVALUES);
	expect_values("objectClass", (const char *[]){"top", "person", NULL}, NULL);
	expect_values("cn", (const char *[]){"a", "b", NULL}, NULL);
	expect_values("sn", (const char *[]){"s", NULL}, NULL);
	/* Each value's line. */
	ck_assert_uint_eq(ldif_entry_value_line(&entry, entry.mods[0], 1), 4);
	ck_assert_uint_eq(ldif_entry_value_line(&entry, entry.mods[1], 1), 5);
	ck_assert_uint_eq(ldif_entry_value_line(&entry, entry.mods[3], 0), 7);
	ck_assert_uint_eq(ldif_entry_value_line(&entry, entry.mods[3], 1), 0);
}
END_TEST

START_TEST(folded_lines)
{
	ck_assert_int_eq(parse("dn: cn=a,\n dc=x\n# a comment\n  folded into it\ncn: a\n b\n  c\n"
	                       "description:\n  lead\nsn: s\n"),
	                 LDIF_PARSE_ENTRY);
	ck_assert_str_eq(entry.dn.bv_val, "cn=a,dc=x");
	expect_values("cn", (const char *[]){"ab c", NULL}, NULL);
	/* White space before the value, across a fold, is FILL. */
	expect_values("description", (const char *[]){"lead", NULL}, NULL);
	ck_assert_uint_eq(ldif_entry_value_line(&entry, mod_of("sn"), 0), 10);
}
END_TEST

START_TEST(base64_values)
{
	ck_assert_int_eq(parse("dn:: Y249YSxkYz14\ncn:: Zm9v\nsn::YmF\n yZA==\nx:: AAEC\n"
	                       "y:: /+7d\n"),
	                 LDIF_PARSE_ENTRY);
	ck_assert_str_eq(entry.dn.bv_val, "cn=a,dc=x");
	expect_values("cn", (const char *[]){"foo", NULL}, NULL);
	expect_values("sn", (const char *[]){"bard", NULL}, NULL);
	expect_values("x", (const char *[]){"\0\1\2", NULL}, (size_t[]){3});
	expect_values("y", (const char *[]){"\xff\xee\xdd", NULL}, NULL);
}
END_TEST

START_TEST(crlf_and_empty_values)
{
	ck_assert_int_eq(parse("dn: cn=a,dc=x\r\ncn: a\r\n b\r\ndescription:\r\nsn:: \r\n Zm9v\r\n"
	                       "x: in\rside\r\r\n"),
	                 LDIF_PARSE_ENTRY);
	ck_assert_str_eq(entry.dn.bv_val, "cn=a,dc=x");
	expect_values("cn", (const char *[]){"ab", NULL}, NULL);
	expect_values("description", (const char *[]){"", NULL}, NULL);
	expect_values("sn", (const char *[]){"foo", NULL}, NULL);
	/* As libldap: a CR anywhere in a plain value is dropped. */
	expect_values("x", (const char *[]){"inside", NULL}, NULL);
}
END_TEST

START_TEST(version_and_comments)
{
	ck_assert_int_eq(parse_at("version: 1\n", false, true), LDIF_PARSE_NONE);
	ck_assert_int_eq(parse_at("# only\n#  a comment\n", false, true), LDIF_PARSE_NONE);
	ck_assert_int_eq(parse_at("# c\nversion:1\ndn: dc=x\ncn: a\n", false, true),
	                 LDIF_PARSE_ENTRY);
	ck_assert_str_eq(entry.dn.bv_val, "dc=x");
	ck_assert_uint_eq(entry.dn_line, 3);
	ck_assert_int_eq(nmods(), 1);
	ck_assert_int_eq(parse_at("dn: dc=x\n", false, true), LDIF_PARSE_ENTRY);
	ck_assert_int_eq(nmods(), 0);
}
END_TEST

START_TEST(left_to_libldap)
{
	const char *texts[] = {
	    "dn: dc=x\nchangetype: add\ncn: a\n",
	    "dn: dc=x\nchangetype: modify\nadd: cn\ncn: a\n",
	    /* libldap reads these as plain values, not URLs: '<' after a space or a fold */
	    "dn: dc=x\ncn: < file:///etc/hostname\n",
	    "dn: dc=x\ncn:\n <file:///etc/hostname\n",
	    "dn: dc=x\nc\n n: a\n",
	    "dn: dc=x\ncn: :Zm9v\n",
	    "dn: dc=x\ncn: <a\n",
	    "dn: dc=x\ncn:\n :Zm9v\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		ck_assert_msg(parse(texts[i]) == LDIF_PARSE_LIBLDAP, "%s", texts[i]);
	/* changetype elsewhere is an attribute. */
	ck_assert_int_eq(parse("dn: dc=x\ncn: a\nchangetype: add\n"), LDIF_PARSE_ENTRY);
	ck_assert_ptr_nonnull(mod_of("changetype"));
}
END_TEST

/*
 * "type:< URL" (libldap, hence slapadd, reads the file): an error at the value's line while
 * url_max is 0, with the URL and what allows it; a DN from a URL always; with url_max set,
 * a URL value in a record left to libldap (which would read it with no cap) too.
 */
START_TEST(url_values_refused)
{
	const struct {
		const char *text;
		unsigned long line;
		const char *words;
	} cases[] = {
	    {"dn: dc=x\ncn: a\ndescription:< file:///etc/shadow\n", 3,
	     "\"description:<\" takes its value from a URL (file:///etc/shadow): refused "
	     "(minidir-import reads files only with --allow-url-values)"},
	    {"dn: dc=x\ncn: a\njpegPhoto:<file:///dev/zero\n", 3, "(file:///dev/zero)"},
	    {"dn: dc=x\ncn: a\ndescription:<\n file:///etc/\n shadow\n", 3, "(file:///etc/shadow)"},
	    {"dn:< file:///etc/shadow\ncn: a\n", 1, "refused for a DN"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(parse(cases[i].text) == LDIF_PARSE_ERROR, "%s accepted",
		              cases[i].text);
		ck_assert_uint_eq(bad_line, cases[i].line);
		ck_assert_msg(strstr(why, cases[i].words), "\"%s\" lacks \"%s\"", why,
		              cases[i].words);
	}
	entry.url_max = 1024;
	ck_assert_int_eq(parse("dn:< file:///etc/hostname\ncn: a\n"), LDIF_PARSE_ERROR);
	ck_assert_int_eq(
	    parse("dn: dc=x\nchangetype: add\ncn: a\ndescription:< file:///etc/hostname\n"),
	    LDIF_PARSE_ERROR);
	ck_assert_uint_eq(bad_line, 4);
	ck_assert_ptr_nonnull(strstr(why, "not supported"));
	ck_assert_int_eq(parse("dn: dc=x\nc\n n: a\ndescription:< file:///etc/hostname\n"),
	                 LDIF_PARSE_ERROR);
	ck_assert_uint_eq(bad_line, 4);
	entry.url_max = 0;
}
END_TEST

/* An empty option (a ';' at the end of the description, or ";;") or an empty type before
 * ';': errors at the line, as slapadd refuses them ("zero length option is invalid"); one
 * folded across lines too. Options with characters stay accepted. */
START_TEST(empty_options)
{
	const char *bad[] = {"description;x-;", "description;", "description;;lang-en",
	                     "cn;lang-en;", ";description"};
	char text[128];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "dn: dc=x\ncn: a\n%s: v\n", bad[i]);
		ck_assert_msg(parse(text) == LDIF_PARSE_ERROR, "%s accepted", bad[i]);
		ck_assert_uint_eq(bad_line, 3);
		ck_assert_msg(
		    strstr(why, bad[i][0] == ';' ? "missing attribute type" : "empty option"),
		    "%s: %s", bad[i], why);
	}
	ck_assert_int_eq(parse("dn: dc=x\ncn: a\ndescr\n iption;;x: v\n"), LDIF_PARSE_ERROR);
	ck_assert_uint_eq(bad_line, 3);
	ck_assert_int_eq(parse("dn: dc=x\ncn;lang-en: a\ndescription;x-: v\ncn;a;b: c\n"),
	                 LDIF_PARSE_ENTRY);
	ck_assert_ptr_nonnull(mod_of("description;x-"));
}
END_TEST

/* Options are kept lowercased and sorted, as slapd keeps and returns them
 * ("o;lang-zz;lang-y" comes back "o;lang-y;lang-zz"); the type name is kept as written,
 * and two spellings of one description become one mod. */
START_TEST(options_normalized)
{
	ck_assert_int_eq(parse("dn: dc=x\nO;Lang-ZZ;lang-y;lang-x: a\no;lang-x;lang-y;lang-zz: b\n"
	                       "cn;lang-en;binary: c\ncn;x-b;x-a;x-ab: d\n"),
	                 LDIF_PARSE_ENTRY);
	ck_assert_int_eq(nmods(), 3);
	ck_assert_str_eq(entry.mods[0]->mod_type, "O;lang-x;lang-y;lang-zz");
	ck_assert_str_eq(entry.mods[1]->mod_type, "cn;binary;lang-en");
	ck_assert_str_eq(entry.mods[2]->mod_type, "cn;x-a;x-ab;x-b");
}
END_TEST

START_TEST(errors_and_lines)
{
#define TEXT(t) t, sizeof(t) - 1
	static const struct {
		const char *text;
		size_t len;
		bool cut, first;
		unsigned long line;
		const char *says;
	} cases[] = {
	    {TEXT("dn: dc=x\ncn: a\0b\n"), 0, 0, 2, "NUL byte in the line"},
	    {TEXT("dn: dc=x\ncn: a\n c\0\n"), 0, 0, 3, "NUL byte"},
	    {TEXT(" dn: dc=x\n"), 0, 0, 1, "continuation line"},
	    {TEXT("dn: dc=x\nc n: a\n"), 0, 0, 2,
	     "invalid character ' ' in an attribute description"},
	    {TEXT("dn: dc=x\ncn\n  x: a\n"), 0, 1, 3, "invalid character ' '"},
	    {TEXT("dn: dc=x\n\xc3\xa9: a\n"), 0, 0, 2, "invalid character '\\xc3'"},
	    {TEXT("dn: dc=x\ncn a\n"), 0, 0, 2, "invalid character ' '"},
	    {TEXT("dn: dc=x\n-\n"), 0, 0, 2, "line has no ':'"},
	    {TEXT("dn: dc=x\ncn\n"), 0, 0, 2, "line has no ':'"},
	    {TEXT("dn: dc=x\n: a\n"), 0, 0, 2, "missing attribute description"},
	    {TEXT("version: 2\n"), 0, 1, 1, "unsupported LDIF version"},
	    {TEXT("version: 1 \n"), 0, 1, 1, "unsupported LDIF version"},
	    {TEXT("version:: MQ==\n"), 0, 1, 1, "unsupported LDIF version"},
	    {TEXT("version: 1\n"), 0, 0, 1, "must start with \"dn:\", not \"version:\""},
	    {TEXT("cn: a\ndn: dc=x\n"), 0, 0, 1, "must start with \"dn:\", not \"cn:\""},
	    {TEXT("dn: dc=x\ncn: a\nDN: dc=y\n"), 0, 0, 3, "\"dn:\" inside a record"},
	    {TEXT("dn: dc=x\ncontrol: 1.2.3 true\n"), 0, 0, 2, "LDIF controls are not supported"},
	    {TEXT("dn: dc=x\ncn::\n"), 0, 0, 2, "empty base64 value"},
	    {TEXT("dn: dc=x\ncn:: Zm9\n"), 0, 0, 2, "3 characters, not a multiple of 4"},
	    {TEXT("dn: dc=x\ncn:: Zm\n 9\n"), 0, 0, 3, "3 characters"},
	    {TEXT("dn: dc=x\ncn:: Z===\n"), 0, 0, 2, "4 characters, not a multiple of 4"},
	    {TEXT("dn: dc=x\ncn:: Zg==Zm9v\n"), 0, 0, 2, "'Z' after '=' padding"},
	    {TEXT("dn: dc=x\ncn:: Zm9v\n !!!!\n"), 0, 0, 3, "invalid character '!'"},
	    {TEXT("dn: dc=x\ncn:: Zm 9v\n"), 0, 0, 2, "invalid character ' '"},
	    {TEXT("dn: dc=x\ncn:: Zm9v\tx\n"), 0, 0, 2, "invalid character '\\x09'"},
	    {TEXT("dn: dc=x\ncn: a\n b"), 1, 0, 3, "ends in the middle of a value"},
	    {TEXT("dn: dc=x\ncn:: Zm9v"), 1, 0, 2, "ends in the middle of a value"},
	    {TEXT("dn: dc=x\ncn\n x"), 1, 0, 3, "ends in the middle of a value"},
	    /* A cut plain value on one line is whole; a cut comment is no value. */
	    {TEXT("dn: dc=x\ncn: a\n: b"), 1, 0, 3, "missing attribute description"},
	    /* The first problem in file order wins. */
	    {TEXT("dn: dc=x\ncn:: !\nc n: a\n"), 0, 0, 2, "invalid character '!'"},
	    {TEXT("dn: dc=x\ncn:: Zm9\nc n: a\n"), 0, 0, 2, "not a multiple of 4"},
	};
#undef TEXT
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bad_line = 0;
		enum ldif_parse_result rc =
		    ldif_parse_record(&entry, cases[i].text, cases[i].len, 1, cases[i].cut,
		                      cases[i].first, &bad_line, why, sizeof(why));
		ck_assert_msg(rc == LDIF_PARSE_ERROR, "case %zu: %d, not an error", i, rc);
		ck_assert_msg(bad_line == cases[i].line, "case %zu: line %lu, not %lu (%s)", i,
		              bad_line, cases[i].line, why);
		ck_assert_msg(strstr(why, cases[i].says) != NULL, "case %zu: \"%s\" lacks \"%s\"",
		              i, why, cases[i].says);
		bool syntax = strncmp(why, "LDIF syntax error: ", 19) == 0;
		ck_assert_msg(syntax == (strstr(cases[i].says, "NUL") == NULL), "case %zu: %s", i,
		              why);
	}
	/* Lines count from first_line, cut or not. */
	const char *t = "dn: dc=x\ncn: a\nc n: b\n";
	ck_assert_int_eq(
	    ldif_parse_record(&entry, t, strlen(t), 40, false, false, &bad_line, why, sizeof(why)),
	    LDIF_PARSE_ERROR);
	ck_assert_uint_eq(bad_line, 42);
}
END_TEST

START_TEST(many_types)
{
	/* More types than the linear search: the hash table finds them again. */
	char text[65536];
	size_t n = (size_t)snprintf(text, sizeof(text), "dn: dc=x\n");
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 300; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d: v%d\n",
			                      round ? "T" : "t", i, round);
	ck_assert_int_eq(parse(text), LDIF_PARSE_ENTRY);
	ck_assert_int_eq(nmods(), 300);
	for (int i = 0; i < 300; i++) {
		char type[16];
		snprintf(type, sizeof(type), "t%d", i);
		expect_values(type, (const char *[]){"v0", "v1", NULL}, NULL);
		ck_assert_uint_eq(ldif_entry_value_line(&entry, entry.mods[i], 1),
		                  (unsigned long)(2 + 300 + i));
	}
}
END_TEST

/* A file with text, for the reader. */
static void write_file(const char *path, const char *text, size_t len)
{
	FILE *fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text, 1, len, fp), len);
	fclose(fp);
}

START_TEST(reader_framing)
{
	char path[] = "/tmp/minidir-ldif-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	const char text[] = "\n\r\ndn: a\r\ncn: b\n\n\n# c\n\rx\r\n\r\ndn: c\n d";
	write_file(path, text, sizeof(text) - 1);
	struct ldif_reader r;
	ck_assert_int_eq(ldif_reader_open(&r, path), 0);
	struct ldif_record rec;
	unsigned long line;
	char msg[256];
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(rec.first_line, 3);
	ck_assert_uint_eq(rec.last_line, 4);
	ck_assert_uint_eq(rec.len, 13);
	ck_assert_mem_eq(rec.text, "dn: a\r\ncn: b\n", 13);
	ck_assert(!rec.cut);
	/* A lone CR is a blank line; "\rx" is not. */
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(rec.first_line, 7);
	ck_assert_uint_eq(rec.last_line, 8);
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(rec.first_line, 10);
	ck_assert_uint_eq(rec.last_line, 11);
	ck_assert_uint_eq(rec.len, 8);
	ck_assert(rec.cut);
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(r.line, 11);
	ck_assert_int_eq(r.offset, (long long)sizeof(text) - 1);
	ldif_reader_close(&r);

	/* A byte order mark; a directory (a read error). */
	write_file(path,
	           "\xEF\xBB\xBF"
	           "dn: a\n",
	           9);
	ck_assert_int_eq(ldif_reader_open(&r, path), 0);
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)), -1);
	ck_assert_uint_eq(line, 1);
	ck_assert_ptr_nonnull(strstr(msg, "byte order mark"));
	ldif_reader_close(&r);
	ck_assert_int_eq(ldif_reader_open(&r, "/tmp"), 0);
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)), -1);
	ck_assert_uint_eq(line, 1);
	ck_assert_ptr_nonnull(strstr(msg, "read error: Is a directory"));
	ldif_reader_close(&r);

	/* Records longer than one read, and many of them. */
	size_t big = 5u << 20, n = 0;
	char *t = malloc(big + 4096);
	ck_assert_ptr_nonnull(t);
	n += (size_t)sprintf(t + n, "dn: x\ndescription: ");
	memset(t + n, 'a', 3u << 20);
	n += 3u << 20;
	t[n++] = '\n';
	unsigned long records = 1;
	while (n < big) {
		n += (size_t)sprintf(t + n, "\ndn: y%lu\ncn: z\n", records);
		records++;
	}
	write_file(path, t, n);
	ck_assert_int_eq(ldif_reader_open(&r, path), 0);
	unsigned long got = 0, at = 1;
	while (ldif_reader_next(&r, &rec, &line, msg, sizeof(msg)) == 1) {
		ck_assert_uint_eq(rec.first_line, at);
		ck_assert_mem_eq(rec.text, got ? "dn: y" : "dn: x", 5);
		at = rec.last_line + 2;
		got++;
	}
	ck_assert_uint_eq(got, records);
	ldif_reader_close(&r);
	free(t);
	unlink(path);
}
END_TEST

/*
 * The differential test: records built from random lines (types in several spellings,
 * plain values with spaces, tabs, CRs and high bytes, base64 values, empty values), folded
 * at random places, with comments and CR LF line ends, some mutated; every record
 * ldif_parse_record accepts must parse to the same DN and mods with libldap.
 */
static unsigned long long rnd_state = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (unsigned)(rnd_state % n);
}

static void put_base64(struct buf *b, const unsigned char *v, size_t n)
{
	static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned x = (unsigned)v[i] << 16 | (i + 1 < n ? (unsigned)v[i + 1] << 8 : 0) |
		             (i + 2 < n ? v[i + 2] : 0);
		char q[4] = {d[x >> 18], d[(x >> 12) & 63], i + 1 < n ? d[(x >> 6) & 63] : '=',
		             i + 2 < n ? d[x & 63] : '='};
		buf_append(b, q, 4);
	}
}

/* One random logical line (without its LF) into b. */
static void random_line(struct buf *b)
{
	static const char *types[] = {"cn",          "CN",   "cn;lang-en", "sn", "description",
	                              "objectClass", "mail", "x-a",        "Sn", "changetype"};
	static const char plain[] = "abc XYZ=,:<\t\r\xc3\xa9\x01";
	const char *t = types[rnd(sizeof(types) / sizeof(types[0]))];
	buf_append(b, t, strlen(t));
	unsigned kind = rnd(10);
	unsigned char v[24];
	size_t n = rnd(sizeof(v));
	for (size_t i = 0; i < n; i++)
		v[i] = kind < 5 ? (unsigned char)plain[rnd(sizeof(plain) - 1)]
		                : (unsigned char)rnd(256);
	if (kind < 6) {
		buf_append(b, ":", 1);
		for (unsigned s = rnd(3); s > 0; s--)
			buf_append(b, " ", 1);
		if (kind == 5)
			n = 0;
		buf_append(b, v, n);
	} else {
		buf_append(b, "::", 2);
		for (unsigned s = rnd(3); s > 0; s--)
			buf_append(b, " ", 1);
		put_base64(b, v, n ? n : 1);
	}
}

/* A random record into b (NUL-terminated, length without the NUL in *len). */
static void random_record(struct buf *b, size_t *len)
{
	b->len = b->off = 0;
	struct buf line = {0};
	bool crlf = rnd(4) == 0;
	unsigned lines = 1 + rnd(8);
	for (unsigned i = 0; i <= lines; i++) {
		line.len = 0;
		if (i == 0) {
			const char *dn = rnd(4) ? "dn: cn=a,dc=x" : "dn:: Y249YSxkYz14";
			buf_append(&line, dn, strlen(dn));
		} else if (rnd(10) == 0) {
			buf_append(&line, "# comment", 9);
		} else {
			random_line(&line);
		}
		/* Folds at random places (not before the first character). */
		size_t at = 0;
		while (line.len > at + 1 && rnd(3) == 0) {
			size_t cut = at + 1 + rnd((unsigned)(line.len - at - 1));
			buf_append(b, line.data + at, cut - at);
			buf_append(b, crlf ? "\r\n " : "\n ", crlf ? 3 : 2);
			at = cut;
		}
		buf_append(b, line.data + at, line.len - at);
		buf_append(b, crlf ? "\r\n" : "\n", crlf ? 2 : 1);
	}
	/* Mutations: a byte changed, inserted or removed. */
	for (unsigned m = rnd(4) == 0 ? 1 + rnd(2) : 0; m > 0 && b->len > 1; m--) {
		static const char bytes[] = " :<\r\n#=-a;\t";
		size_t at = rnd((unsigned)b->len);
		if (rnd(2))
			b->data[at] = (unsigned char)bytes[rnd(sizeof(bytes) - 1)];
		else
			memmove(b->data + at, b->data + at + 1, b->len - at - 1), b->len--;
	}
	*len = b->len;
	buf_append(b, "", 1);
	buf_free(&line);
}

static bool same_bv(const struct berval *a, const struct berval *b)
{
	return a->bv_len == b->bv_len && memcmp(a->bv_val, b->bv_val, a->bv_len) == 0;
}

/* A record of more LDIF text than LDIF_RECORD_MAX_BYTES is refused at its first line, and
 * the file is not read to the end of it: a first record that fits is framed, then the
 * long one (lines of 1 MiB, then one line with no end) stops the reader. */
START_TEST(reader_record_too_long)
{
	char path[] = "/tmp/minidir-ldif-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *fp = fdopen(fd, "wb");
	ck_assert_ptr_nonnull(fp);
	fputs("dn: a\ncn: b\n\ndn: c\n", fp);
	char *line = malloc(1u << 20);
	ck_assert_ptr_nonnull(line);
	memset(line, 'x', 1u << 20);
	memcpy(line, "cn: ", 4);
	line[(1u << 20) - 1] = '\n';
	for (unsigned i = 0; i < (LDIF_RECORD_MAX_BYTES >> 20) + 2; i++)
		ck_assert_uint_eq(fwrite(line, 1, 1u << 20, fp), 1u << 20);
	ck_assert_uint_eq(fwrite(line, 1, (1u << 20) - 1, fp), (1u << 20) - 1); /* no LF */
	free(line);
	fclose(fp);
	struct ldif_reader r;
	struct ldif_record rec;
	unsigned long at;
	char msg[256];
	ck_assert_int_eq(ldif_reader_open(&r, path), 0);
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &at, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(rec.first_line, 1);
	ck_assert_int_eq(ldif_reader_next(&r, &rec, &at, msg, sizeof(msg)), -1);
	ck_assert_uint_eq(at, 4);
	ck_assert_msg(strstr(msg, "more than 64 MiB of LDIF text") != NULL, "%s", msg);
	ck_assert_uint_le(r.cap, 2u * LDIF_RECORD_MAX_BYTES);
	ldif_reader_close(&r);
	unlink(path);
}
END_TEST

START_TEST(differential_against_libldap)
{
	struct buf rec = {0}, lib = {0};
	int compared = 0, rejected = 0, left = 0;
	for (int round = 0; round < 20000; round++) {
		size_t len;
		random_record(&rec, &len);
		/* The reader ends a record at a blank line: none inside one. */
		bool blank = false;
		for (size_t i = 0; i + 1 < len && !blank; i++)
			blank =
			    rec.data[i] == '\n' && (rec.data[i + 1] == '\n' ||
			                            (rec.data[i + 1] == '\r' &&
			                             (i + 2 == len || rec.data[i + 2] == '\n')));
		if (blank || len == 0 || rec.data[0] == '\n')
			continue;
		bool cut = rec.data[len - 1] != '\n';
		enum ldif_parse_result rc =
		    ldif_parse_record(&entry, (const char *)rec.data, len, 1, cut, false, &bad_line,
		                      why, sizeof(why));
		if (rc == LDIF_PARSE_ERROR) {
			rejected++;
			continue;
		}
		if (rc == LDIF_PARSE_LIBLDAP) {
			left++;
			continue;
		}
		lib.len = lib.off = 0;
		ck_assert_int_eq(ldif_record_text((const char *)rec.data, len, &lib), 0);
		struct berval bv = {lib.len - 1, (char *)lib.data};
		LDIFRecord lr;
		memset(&lr, 0, sizeof(lr));
		int lrc = ldap_parse_ldif_record(&bv, 1, &lr, "test",
		                                 LDIF_DEFAULT_ADD | LDIF_NO_CONTROLS);
		ck_assert_msg(lrc == 0, "libldap refused what the parser took: %s", rec.data);
		ck_assert_int_eq(rc, LDIF_PARSE_ENTRY);
		ck_assert_int_eq(lr.lr_op, LDAP_REQ_ADD);
		ck_assert_msg(same_bv(&lr.lr_dn, &entry.dn), "dn differs: %s", rec.data);
		int i = 0;
		for (; lr.lrop_mods[i]; i++) {
			LDAPMod *a = lr.lrop_mods[i], *b = entry.mods[i];
			ck_assert_msg(b != NULL, "a mod missing: %s", rec.data);
			ck_assert_str_eq(a->mod_type, b->mod_type);
			int j = 0;
			for (; a->mod_bvalues[j]; j++) {
				ck_assert_msg(b->mod_bvalues[j] != NULL, "value missing: %s",
				              rec.data);
				ck_assert_msg(same_bv(a->mod_bvalues[j], b->mod_bvalues[j]),
				              "%s value %d differs: %s", a->mod_type, j, rec.data);
			}
			ck_assert_ptr_null(b->mod_bvalues[j]);
		}
		ck_assert_ptr_null(entry.mods[i]);
		ldap_ldif_record_done(&lr);
		compared++;
	}
	/* The generator reaches every outcome. */
	ck_assert_int_gt(compared, 2000);
	ck_assert_int_gt(rejected, 500);
	ck_assert_int_gt(left, 100);
	buf_free(&rec);
	buf_free(&lib);
}
END_TEST

static Suite *ldif_parse_suite(void)
{
	Suite *s = suite_create("ldif parse");
	TCase *tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, plain_entry);
	tcase_add_test(tc, folded_lines);
	tcase_add_test(tc, base64_values);
	tcase_add_test(tc, crlf_and_empty_values);
	tcase_add_test(tc, version_and_comments);
	tcase_add_test(tc, left_to_libldap);
	tcase_add_test(tc, url_values_refused);
	tcase_add_test(tc, empty_options);
	tcase_add_test(tc, options_normalized);
	tcase_add_test(tc, errors_and_lines);
	tcase_add_test(tc, many_types);
	tcase_add_test(tc, reader_framing);
	tcase_add_test(tc, reader_record_too_long);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, differential_against_libldap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(ldif_parse_suite());
}
