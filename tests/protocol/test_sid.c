/* protocol/sid.h: a SID's string form into AD's bytes, and the attributes that take it. */
#include <check.h>
#include <string.h>

#include "protocol/sid.h"
#include "tests/check_run.h"

START_TEST(string_form_to_bytes)
{
	unsigned char b[SID_MAX_BYTES];
	/* S-1-5-21-1004336348-1177238915-682003330-512, as [MS-DTYP] 2.4.2.2 lays it out. */
	static const unsigned char want[] = {
	    1,    5,    0,    0,    0,    0,    0,    5,    21,   0,    0,    0,    0xdc, 0xf4,
	    0xdc, 0x3b, 0x83, 0x3d, 0x2b, 0x46, 0x82, 0x8b, 0xa6, 0x28, 0x00, 0x02, 0x00, 0x00};
	const char *s = "S-1-5-21-1004336348-1177238915-682003330-512";
	ck_assert_int_eq(sid_from_string(s, strlen(s), b), (int)sizeof(want));
	ck_assert_mem_eq(b, want, sizeof(want));
	ck_assert_int_eq(sid_from_string("s-1-5-18", 8, b), 12); /* LocalSystem */
	ck_assert_int_eq(b[1], 1);
	ck_assert_int_eq(b[8], 18);
	ck_assert_int_eq(sid_from_string("S-1-5", 5, b), 8); /* no sub-authority */
}
END_TEST

START_TEST(not_a_sid)
{
	unsigned char b[SID_MAX_BYTES];
	const char *bad[] = {"S-",
	                     "S-1",
	                     "S-1-",
	                     "X-1-5-18",
	                     "S-256-5-18",
	                     "S-1-5-4294967296",
	                     "S-1-5-18-",
	                     "S-1-5--18",
	                     "S-1-5-18x",
	                     "S-1-281474976710656-1",
	                     "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15-16"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(sid_from_string(bad[i], strlen(bad[i]), b) == -1, "%s", bad[i]);
	const char *max = "S-1-5-1-2-3-4-5-6-7-8-9-10-11-12-13-14-15";
	ck_assert_int_eq(sid_from_string(max, strlen(max), b), SID_MAX_BYTES);
}
END_TEST

START_TEST(sid_attributes)
{
	ck_assert(sid_attribute("objectSid", 9));
	ck_assert(sid_attribute("OBJECTSID", 9));
	ck_assert(sid_attribute("sIDHistory", 10));
	ck_assert(!sid_attribute("objectGUID", 10));
	ck_assert(!sid_attribute("objectSidX", 10));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sid");
	TCase *tc = tcase_create("sid");
	tcase_add_test(tc, string_form_to_bytes);
	tcase_add_test(tc, not_a_sid);
	tcase_add_test(tc, sid_attributes);
	suite_add_tcase(s, tc);
	return check_run(s);
}
