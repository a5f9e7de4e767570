/* Unit tests for protocol/tlv.c: BER lengths, INTEGER encoding, TLV reading. */
#include <check.h>
#include <lber.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/tlv.h"
#include "tests/check_run.h"

/* ---- lengths ---- */

struct len_case {
	size_t len;
	size_t size;
	unsigned char enc[5];
};

static const struct len_case len_cases[] = {
    {0, 1, {0x00}},
    {1, 1, {0x01}},
    {127, 1, {0x7f}},
    {128, 2, {0x81, 0x80}},
    {255, 2, {0x81, 0xff}},
    {256, 3, {0x82, 0x01, 0x00}},
    {0x1234, 3, {0x82, 0x12, 0x34}},
    {65535, 3, {0x82, 0xff, 0xff}},
    {65536, 4, {0x83, 0x01, 0x00, 0x00}},
    {0xffffff, 4, {0x83, 0xff, 0xff, 0xff}},
    {0x1000000, 5, {0x84, 0x01, 0x00, 0x00, 0x00}},
    {0xffffffff, 5, {0x84, 0xff, 0xff, 0xff, 0xff}},
};

START_TEST(len_size_boundaries)
{
	const struct len_case *c = &len_cases[_i];
	ck_assert_msg(tlv_len_size(c->len) == c->size, "tlv_len_size(%zu) = %zu, expected %zu",
	              c->len, tlv_len_size(c->len), c->size);
}
END_TEST

START_TEST(put_len_bytes)
{
	const struct len_case *c = &len_cases[_i];
	unsigned char out[8];
	memset(out, 0xee, sizeof(out));
	size_t n = tlv_put_len(out, c->len);
	ck_assert_uint_eq(n, c->size);
	ck_assert_msg(memcmp(out, c->enc, n) == 0, "tlv_put_len(%zu): wrong bytes", c->len);
	/* Nothing written past the reported size. */
	for (size_t i = n; i < sizeof(out); i++)
		ck_assert_uint_eq(out[i], 0xee);
}
END_TEST

START_TEST(put_len_read_back_with_tlv_read)
{
	/* A header written by tlv_put_len reads back to the same length. */
	const struct len_case *c = &len_cases[_i];
	if (c->len > 70000)
		return; /* keep the allocation small */
	size_t total = 1 + c->size + c->len;
	unsigned char *p = calloc(1, total);
	ck_assert_ptr_nonnull(p);
	p[0] = 0x04;
	tlv_put_len(p + 1, c->len);
	const unsigned char *q = p, *val;
	unsigned char tag;
	size_t vlen;
	ck_assert(tlv_read(&q, p + total, &tag, &val, &vlen));
	ck_assert_uint_eq(tag, 0x04);
	ck_assert_uint_eq(vlen, c->len);
	ck_assert_ptr_eq(val, p + 1 + c->size);
	ck_assert_ptr_eq(q, p + total);
	free(p);
}
END_TEST

/* ---- integers ---- */

struct int_case {
	int32_t v;
	size_t n; /* content bytes */
	unsigned char content[4];
};

static const struct int_case int_cases[] = {
    {0, 1, {0x00}},
    {1, 1, {0x01}},
    {127, 1, {0x7f}},
    {128, 2, {0x00, 0x80}},
    {255, 2, {0x00, 0xff}},
    {256, 2, {0x01, 0x00}},
    {32767, 2, {0x7f, 0xff}},
    {32768, 3, {0x00, 0x80, 0x00}},
    {-1, 1, {0xff}},
    {-128, 1, {0x80}},
    {-129, 2, {0xff, 0x7f}},
    {-256, 2, {0xff, 0x00}},
    {-32768, 2, {0x80, 0x00}},
    {-32769, 3, {0xff, 0x7f, 0xff}},
    {0x800000, 4, {0x00, 0x80, 0x00, 0x00}},
    {INT32_MAX, 4, {0x7f, 0xff, 0xff, 0xff}},
    {INT32_MIN, 4, {0x80, 0x00, 0x00, 0x00}},
};

START_TEST(put_int_der_bytes)
{
	const struct int_case *c = &int_cases[_i];
	struct buf b = {0};
	ck_assert_int_eq(tlv_put_int(&b, 0x02, c->v), 0);
	ck_assert_msg(b.len == 2 + c->n, "tlv_put_int(%d): %zu bytes, expected %zu", (int)c->v,
	              b.len, 2 + c->n);
	ck_assert_uint_eq(b.data[0], 0x02);
	ck_assert_uint_eq(b.data[1], c->n);
	ck_assert_msg(memcmp(b.data + 2, c->content, c->n) == 0, "tlv_put_int(%d): wrong content",
	              (int)c->v);
	ck_assert_uint_eq(tlv_int_size(c->v), b.len);
	buf_free(&b);
}
END_TEST

START_TEST(put_int_matches_liblber)
{
	/* Same bytes as liblber's DER encoder, and liblber decodes the value back. */
	const struct int_case *c = &int_cases[_i];
	struct buf b = {0};
	ck_assert_int_eq(tlv_put_int(&b, 0x02, c->v), 0);

	BerElement *w = ber_alloc_t(LBER_USE_DER);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_ge(ber_printf(w, "i", (ber_int_t)c->v), 0);
	struct berval *flat = NULL;
	ck_assert_int_eq(ber_flatten(w, &flat), 0);
	ck_assert_uint_eq(flat->bv_len, b.len);
	ck_assert_msg(memcmp(flat->bv_val, b.data, b.len) == 0, "%d differs from liblber",
	              (int)c->v);
	ber_bvfree(flat);
	ber_free(w, 1);

	struct berval bv = {b.len, (char *)b.data};
	BerElement *r = ber_init(&bv);
	ck_assert_ptr_nonnull(r);
	ber_int_t got = 0;
	ck_assert_uint_eq(ber_get_int(r, &got), LBER_INTEGER);
	ck_assert_int_eq(got, c->v);
	ber_free(r, 1);
	buf_free(&b);
}
END_TEST

START_TEST(put_int_enumerated_tag)
{
	struct buf b = {0};
	ck_assert_int_eq(tlv_put_int(&b, 0x0a, 49), 0);
	const unsigned char want[] = {0x0a, 0x01, 0x31};
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert_mem_eq(b.data, want, sizeof(want));

	struct berval bv = {b.len, (char *)b.data};
	BerElement *r = ber_init(&bv);
	ber_int_t got = 0;
	ck_assert_uint_eq(ber_get_enum(r, &got), LBER_ENUMERATED);
	ck_assert_int_eq(got, 49);
	ber_free(r, 1);
	buf_free(&b);
}
END_TEST

START_TEST(put_int_appends)
{
	/* Several integers in a row land one after the other. */
	struct buf b = {0};
	for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++)
		ck_assert_int_eq(tlv_put_int(&b, 0x02, int_cases[i].v), 0);
	const unsigned char *p = b.data, *end = b.data + b.len, *val;
	unsigned char tag;
	size_t vlen;
	for (size_t i = 0; i < sizeof(int_cases) / sizeof(int_cases[0]); i++) {
		ck_assert(tlv_read(&p, end, &tag, &val, &vlen));
		ck_assert_uint_eq(tag, 0x02);
		ck_assert_uint_eq(vlen, int_cases[i].n);
		ck_assert_mem_eq(val, int_cases[i].content, vlen);
	}
	ck_assert_ptr_eq(p, end);
	buf_free(&b);
}
END_TEST

/* ---- tlv_put / tlv_read ---- */

START_TEST(put_and_read_roundtrip)
{
	const size_t sizes[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 100000};
	struct buf b = {0};
	unsigned char *val = malloc(100000);
	ck_assert_ptr_nonnull(val);
	for (size_t i = 0; i < 100000; i++)
		val[i] = (unsigned char)(i * 31);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		ck_assert_int_eq(tlv_put(&b, (unsigned char)(0x80 + i), val, sizes[i]), 0);
	const unsigned char *p = b.data, *end = b.data + b.len, *v;
	unsigned char tag;
	size_t vlen, expect_total = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		expect_total += 1 + tlv_len_size(sizes[i]) + sizes[i];
		ck_assert(tlv_read(&p, end, &tag, &v, &vlen));
		ck_assert_uint_eq(tag, 0x80 + i);
		ck_assert_uint_eq(vlen, sizes[i]);
		if (vlen)
			ck_assert_mem_eq(v, val, vlen);
	}
	ck_assert_ptr_eq(p, end);
	ck_assert_uint_eq(b.len, expect_total);
	free(val);
	buf_free(&b);
}
END_TEST

START_TEST(read_valid_forms)
{
	const unsigned char in[] = {0x04, 0x03, 'a', 'b', 'c', 0x30, 0x81, 0x01, 'x', 0x04, 0x00};
	const unsigned char *p = in, *end = in + sizeof(in), *v;
	unsigned char tag;
	size_t vlen;
	ck_assert(tlv_read(&p, end, &tag, &v, &vlen));
	ck_assert_uint_eq(tag, 0x04);
	ck_assert_uint_eq(vlen, 3);
	ck_assert_mem_eq(v, "abc", 3);
	ck_assert_ptr_eq(p, in + 5);
	ck_assert(tlv_read(&p, end, &tag, &v, &vlen)); /* long form for a short value */
	ck_assert_uint_eq(tag, 0x30);
	ck_assert_uint_eq(vlen, 1);
	ck_assert_uint_eq(v[0], 'x');
	ck_assert(tlv_read(&p, end, &tag, &v, &vlen)); /* empty value */
	ck_assert_uint_eq(vlen, 0);
	ck_assert_ptr_eq(p, end);
	ck_assert(!tlv_read(&p, end, &tag, &v, &vlen)); /* nothing left */
}
END_TEST

START_TEST(read_rejects_truncated)
{
	/* Every strict prefix of a valid element is rejected and *p is not moved. */
	const unsigned char shortf[] = {0x04, 0x05, 'h', 'e', 'l', 'l', 'o'};
	const unsigned char longf[] = {0x04, 0x82, 0x00, 0x03, 'a', 'b', 'c'};
	const unsigned char *inputs[] = {shortf, longf};
	const size_t lens[] = {sizeof(shortf), sizeof(longf)};
	for (size_t k = 0; k < 2; k++) {
		for (size_t n = 0; n < lens[k]; n++) {
			const unsigned char *p = inputs[k], *v;
			unsigned char tag;
			size_t vlen;
			ck_assert_msg(!tlv_read(&p, inputs[k] + n, &tag, &v, &vlen),
			              "input %zu truncated to %zu bytes accepted", k, n);
			ck_assert_ptr_eq(p, inputs[k]);
		}
		const unsigned char *p = inputs[k], *v;
		unsigned char tag;
		size_t vlen;
		ck_assert(tlv_read(&p, inputs[k] + lens[k], &tag, &v, &vlen));
	}
}
END_TEST

START_TEST(read_rejects_length_past_end)
{
	/* A huge declared length must not wrap around the end pointer. */
	const unsigned char in[] = {0x04, 0x84, 0xff, 0xff, 0xff, 0xff, 'a'};
	const unsigned char *p = in, *v;
	unsigned char tag;
	size_t vlen;
	ck_assert(!tlv_read(&p, in + sizeof(in), &tag, &v, &vlen));
}
END_TEST

START_TEST(read_rejects_long_tags_and_lengths)
{
	const unsigned char *v;
	unsigned char tag;
	size_t vlen;
	/* Multi-byte tag numbers (low five bits all set). */
	const unsigned char t1[] = {0x1f, 0x20, 0x01, 0x00};
	const unsigned char t2[] = {0xbf, 0x81, 0x00, 0x00};
	const unsigned char t3[] = {0x5f, 0x01, 0x00};
	/* Indefinite length, and more than four length octets. */
	const unsigned char l1[] = {0x30, 0x80, 0x04, 0x00, 0x00, 0x00};
	const unsigned char l2[] = {0x04, 0x85, 0x00, 0x00, 0x00, 0x00, 0x01, 'x'};
	const unsigned char *bad[] = {t1, t2, t3, l1, l2};
	const size_t lens[] = {sizeof(t1), sizeof(t2), sizeof(t3), sizeof(l1), sizeof(l2)};
	for (size_t i = 0; i < 5; i++) {
		const unsigned char *p = bad[i];
		ck_assert_msg(!tlv_read(&p, bad[i] + lens[i], &tag, &v, &vlen), "case %zu accepted",
		              i);
	}
	/* Tag 30 (0x1e) is still a one-byte tag. */
	const unsigned char ok[] = {0x1e, 0x00};
	const unsigned char *p = ok;
	ck_assert(tlv_read(&p, ok + sizeof(ok), &tag, &v, &vlen));
	ck_assert_uint_eq(tag, 0x1e);
}
END_TEST

/* The next of Marsaglia's xorshift32 sequence in *x (pseudo-random test inputs that repeat). */
static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/* Checks one tlv_read over in[0..len): a result inside the input, *p moved only on success. */
static bool read_in_bounds(const unsigned char *in, size_t len, const unsigned char **p)
{
	const unsigned char *start = *p, *v = NULL;
	unsigned char tag;
	size_t vlen = 0;
	if (!tlv_read(p, in + len, &tag, &v, &vlen)) {
		ck_assert_ptr_eq(*p, start);
		return false;
	}
	ck_assert(v >= start + 2 && v <= in + len);
	ck_assert_uint_le(vlen, (size_t)(in + len - v));
	ck_assert_ptr_eq(*p, v + vlen);
	ck_assert_uint_ne(tag & 0x1f, 0x1f);
	return true;
}

START_TEST(read_arbitrary_bytes_stays_in_bounds)
{
	/*
	 * Client bytes reach tlv_read (request.c checks a request's trailing
	 * Controls element with it): on any input it must stay inside [*p, end).
	 * Every two-byte input, then pseudo-random inputs read element after
	 * element and from every offset (values' insides too), each in a heap block of its exact
	 * size so that AddressSanitizer (make test SAN=1) sees a read one byte past it.
	 */
	for (unsigned i = 0; i < 65536; i++) {
		unsigned char *in = malloc(2);
		in[0] = (unsigned char)(i >> 8);
		in[1] = (unsigned char)i;
		const unsigned char *p = in;
		read_in_bounds(in, 2, &p);
		free(in);
	}
	uint32_t x = 2463534242u;
	for (int round = 0; round < 20000; round++) {
		size_t len = xorshift(&x) % 48;
		unsigned char *in = malloc(len ? len : 1);
		for (size_t i = 0; i < len; i++) {
			xorshift(&x);
			/* Mostly small lengths and long-form length bytes, so that reads succeed
			 * often. */
			in[i] = (unsigned char)(x % 4 == 0   ? 0x80 | (x >> 8) % 6
			                        : x % 4 == 1 ? (x >> 8) % 8
			                                     : x >> 8);
		}
		const unsigned char *p = in;
		while (read_in_bounds(in, len, &p))
			continue;
		for (size_t off = 0; off < len; off++) {
			const unsigned char *q = in + off;
			read_in_bounds(in, len, &q);
		}
		free(in);
	}
}
END_TEST

/* tlv_read_inline must give tlv_read's results, element for element, on any bytes: every
 * three-byte input after four kinds of tag byte, then pseudo-random ones rich in 0x81/0x82 length
 * forms (its inline cases) and in lengths just past the end, each in a block of its exact size
 * (ASan). */
static void same_as_tlv_read(const unsigned char *in, size_t len)
{
	for (size_t off = 0; off <= len; off++) {
		const unsigned char *p = in + off, *q = in + off, *v1 = NULL, *v2 = NULL;
		unsigned char t1 = 0, t2 = 0;
		size_t l1 = 0, l2 = 0;
		for (;;) {
			bool a = tlv_read(&p, in + len, &t1, &v1, &l1);
			bool b = tlv_read_inline(&q, in + len, &t2, &v2, &l2);
			/* Compared here, asserted only on a difference: each ck_assert records its
			 * place with a write to check's pipe, and this runs millions of times. */
			if (a != b || p != q || (a && (t1 != t2 || v1 != v2 || l1 != l2)))
				ck_abort_msg(
				    "tlv_read and tlv_read_inline differ at offset %zu of %zu "
				    "bytes: %d/%d, tag %u/%u, length %zu/%zu",
				    off, len, a, b, t1, t2, l1, l2);
			if (!a)
				break;
		}
	}
}

START_TEST(read_inline_same_as_read)
{
	static const unsigned char tags[] = {0x04, 0x30, 0x64, 0x1f};
	/* One 3-byte allocation, rewritten for each input: a read past its end is caught by
	 * ASan all the same, without 262,144 allocations (over 30 s under ASan on a busy
	 * machine, past check's timeout). */
	unsigned char *in3 = malloc(3);
	for (unsigned i = 0; i < sizeof(tags) << 16; i++) {
		in3[0] = tags[i >> 16];
		in3[1] = (unsigned char)(i >> 8);
		in3[2] = (unsigned char)i;
		same_as_tlv_read(in3, 3);
	}
	free(in3);
	uint32_t x = 88172645u;
	for (int round = 0; round < 3000; round++) {
		size_t len = xorshift(&x) % 64;
		unsigned char *in = malloc(len ? len : 1);
		for (size_t i = 0; i < len; i++) {
			xorshift(&x);
			in[i] = (unsigned char)(x % 5 == 0   ? 0x81 + (x >> 8) % 2
			                        : x % 5 == 1 ? (x >> 8) % 8
			                        : x % 5 == 2 ? 0x80 | (x >> 8) % 6
			                                     : x >> 8);
		}
		same_as_tlv_read(in, len);
		free(in);
	}
	/* Its inline forms on a real element: 0x81 and 0x82 lengths, content reaching the end. */
	unsigned char e[4 + 300];
	memset(e, 'v', sizeof(e));
	e[0] = 0x04, e[1] = 0x82, e[2] = 0x01, e[3] = 0x2c; /* 300 */
	same_as_tlv_read(e, sizeof(e));
	same_as_tlv_read(e, sizeof(e) - 1); /* one byte short */
	e[1] = 0x81, e[2] = 0xc8;           /* 200 */
	same_as_tlv_read(e, 3 + 200);
}
END_TEST

static Suite *tlv_suite(void)
{
	Suite *s = suite_create("tlv");
	TCase *tc = tcase_create("lengths");
	int nlen = (int)(sizeof(len_cases) / sizeof(len_cases[0]));
	tcase_add_loop_test(tc, len_size_boundaries, 0, nlen);
	tcase_add_loop_test(tc, put_len_bytes, 0, nlen);
	tcase_add_loop_test(tc, put_len_read_back_with_tlv_read, 0, nlen);
	suite_add_tcase(s, tc);

	tc = tcase_create("integers");
	int nint = (int)(sizeof(int_cases) / sizeof(int_cases[0]));
	tcase_add_loop_test(tc, put_int_der_bytes, 0, nint);
	tcase_add_loop_test(tc, put_int_matches_liblber, 0, nint);
	tcase_add_test(tc, put_int_enumerated_tag);
	tcase_add_test(tc, put_int_appends);
	suite_add_tcase(s, tc);

	tc = tcase_create("tlv");
	tcase_add_test(tc, put_and_read_roundtrip);
	tcase_add_test(tc, read_valid_forms);
	tcase_add_test(tc, read_rejects_truncated);
	tcase_add_test(tc, read_rejects_length_past_end);
	tcase_add_test(tc, read_rejects_long_tags_and_lengths);
	tcase_add_test(tc, read_arbitrary_bytes_stays_in_bounds);
	tcase_add_test(tc, read_inline_same_as_read);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return check_run(tlv_suite());
}
