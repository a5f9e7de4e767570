/*
 * libFuzzer target: one BER-encoded search filter (the Filter CHOICE of RFC
 * 4511) as it appears inside a SearchRequest. filter_decode decodes it; a filter
 * that decodes is evaluated against a fixed entry (with its DN, for :dn:
 * matches) and written in string form.
 */
#include <lber.h>
#include <ldap.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "protocol/buf.h"
#include "protocol/filter.h"
#include "protocol/schema.h"
#include "tests/tree_schema.h" /* the tree's schema/: fuzz/run.sh runs from the root */
#include "storage/entry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A gate that refuses userPassword, as the default access rules do for most clients. */
static bool allows_all_but_password(const struct attr_gate *g, const char *type, size_t len)
{
	(void)g;
	return !(len == 12 && strncasecmp(type, "userPassword", 12) == 0);
}
static const struct attr_gate no_password = {.allows = allows_all_but_password};

static const char dn[] = "uid=alice+cn=Alice Smith,ou=people,dc=example,dc=com";
static struct buf record;
static struct entry_view entry;

/* The entry filters are evaluated against, stored as storage/entry.c stores it. */
static void build_entry(void)
{
	static const char *const attrs[][5] = {
	    {"objectClass", "top", "person", "inetOrgPerson", NULL},
	    {"uid", "alice", NULL},
	    {"cn", "Alice Smith", "Ali", NULL},
	    {"sn", "Smith", NULL},
	    {"uidNumber", "10", NULL},
	    {"telephoneNumber", "+1 555-0100", NULL},
	    {"member", "UID=Bob, OU=People, DC=Example, DC=Com", "cn=x", NULL},
	    {"description;lang-en", "hello (world) *", "", NULL},
	    {"userPassword", "secret", NULL},
	    {"createTimestamp", "20260101000000Z", NULL},
	};
	enum { N = sizeof(attrs) / sizeof(attrs[0]) };
	LDAPMod mods[N], *modp[N + 1];
	struct berval vals[N][4], *valp[N][5];
	for (size_t i = 0; i < N; i++) {
		size_t j = 0;
		for (; attrs[i][j + 1]; j++) {
			vals[i][j].bv_val = (char *)attrs[i][j + 1];
			vals[i][j].bv_len = strlen(attrs[i][j + 1]);
			valp[i][j] = &vals[i][j];
		}
		valp[i][j] = NULL;
		mods[i].mod_op = LDAP_MOD_ADD | LDAP_MOD_BVALUES;
		mods[i].mod_type = (char *)attrs[i][0];
		mods[i].mod_bvalues = valp[i];
		modp[i] = &mods[i];
	}
	modp[N] = NULL;
	static const char key[] = "dc=com\0dc=example\0ou=people\0cn=alice smith+uid=alice\0";
	struct berval bdn = {sizeof(dn) - 1, (char *)dn};
	if (entry_encode(&record, 7, (const unsigned char *)key, sizeof(key) - 1, &bdn, modp) < 0 ||
	    entry_parse(record.data, record.len, &entry) < 0)
		__builtin_trap();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char err[256];
	schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err));
	build_entry();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ber_in in = ber_in_make(data, size);
	struct arena mem = {0};
	struct buf scratch = {0};
	struct filter *f = filter_decode(&in, &mem, &scratch);
	if (f) {
		struct buf text = {0};
		struct filter_ctx ctx = {.dn = (const unsigned char *)dn,
		                         .dnlen = sizeof(dn) - 1,
		                         .gate = (size & 1) ? &no_password : NULL,
		                         .scratch = &scratch};
		enum filter_result all = filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx);
		/* Counted, and again cut at a budget from the input's size: a cut evaluation
		 * ends past its limit, an uncut one gives the same answer as uncounted. */
		uint64_t work = 0, cut = 0;
		ctx.work = &work;
		if (filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx) != all)
			abort();
		ctx.work = &cut;
		ctx.work_limit = 1 + size % 64;
		enum filter_result r = filter_eval_ctx(f, entry.attrs, entry.attrslen, &ctx);
		if (cut <= ctx.work_limit ? r != all || cut != work : work <= ctx.work_limit)
			abort();
		if (filter_items(f) == 0)
			abort();
		filter_to_string(f, &text);
		buf_free(&text);
	}
	buf_free(&scratch);
	arena_free(&mem);
	return 0;
}
