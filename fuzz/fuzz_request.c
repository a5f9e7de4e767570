/*
 * libFuzzer target: a stream of bytes from a client. frame_next cuts it into
 * LDAPMessages as a connection does, request_decode decodes each, and the DNs a
 * request names are normalized as the operations do (search base, bind and
 * compare DN); a search's filter is also written in string form, and each control's value
 * goes through the decoder the search would give it (paged results, sort, VLV, assertion,
 * Matched Values).
 */
#include <ldap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/ber_in.h"
#include "protocol/buf.h"
#include "protocol/controls.h"
#include "protocol/dn.h"
#include "protocol/filter.h"
#include "protocol/frame.h"
#include "protocol/request.h"
#include "protocol/schema.h"
#include "tests/tree_schema.h" /* the tree's schema/: fuzz/run.sh runs from the root */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	char err[256];
	/* With the schema, DNs and filters resolve aliases as in the server. Without it the
	 * target would fuzz another code path (no aliases, built-in rules) and still pass:
	 * a schema that does not load stops it before the first input. */
	if (schema_load(TEST_SCHEMA_DIR, TEST_SCHEMA_FILES, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_request: schema: %s\n", err);
		exit(1);
	}
	return 0;
}

static bool is_control(const struct request_control *ctl, const char *oid)
{
	return ctl->oid.bv_len == strlen(oid) && memcmp(ctl->oid.bv_val, oid, ctl->oid.bv_len) == 0;
}

/* Decodes a control's value as op_search.c and search_checks.c do; what it gives is dropped. */
static void decode_control(const struct request_control *ctl, struct arena *mem,
                           struct buf *scratch)
{
	if (!ctl->has_value)
		return;
	int size, n;
	struct berval cookie;
	struct sort_key keys[CONTROL_MAX_SORT_KEYS];
	struct vlv_request vlv;
	struct ber_in in = ber_in_make(ctl->value.bv_val, ctl->value.bv_len);
	if (is_control(ctl, CONTROL_PAGED_RESULTS))
		(void)control_paged_decode(&ctl->value, &size, &cookie);
	else if (is_control(ctl, CONTROL_SORT_REQUEST))
		(void)control_sort_decode(&ctl->value, keys, &n);
	else if (is_control(ctl, CONTROL_VLV_REQUEST))
		(void)control_vlv_decode(&ctl->value, &vlv);
	else if (is_control(ctl, CONTROL_ASSERTION))
		(void)filter_decode(&in, mem, scratch);
	else if (is_control(ctl, CONTROL_MATCHED_VALUES))
		(void)filter_decode_values(&in, mem, scratch);
}

static void normalize(const struct berval *dn, struct buf *ndn, struct buf *key)
{
	ndn->len = key->len = 0;
	dn_normalize(dn->bv_val, dn->bv_len, ndn, key);
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	/* An exact-size copy: the decoder must read nothing past a PDU's end. */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, input, size);
	const uint8_t *data = copy;
	struct buf ndn = {0}, key = {0}, text = {0}, scratch = {0};
	struct arena mem = {0}; /* reset per request, as a worker's */
	size_t pdu_len;
	while (size > 0 && frame_next(data, size, 1 << 20, &pdu_len) == FRAME_OK) {
		struct ldap_request req;
		const char *why;
		arena_reset(&mem);
		if (request_decode(data, pdu_len, &req, &mem, &scratch, &why) == 0) {
			for (int i = 0; i < req.ncontrols; i++)
				decode_control(&req.controls[i], &mem, &scratch);
			if (req.op == LDAP_REQ_SEARCH) {
				normalize(&req.u.search.base, &ndn, &key);
				text.len = 0;
				filter_to_string(req.u.search.filter, &text);
			} else if (req.op == LDAP_REQ_BIND) {
				normalize(&req.u.bind.dn, &ndn, &key);
			} else if (req.op == LDAP_REQ_COMPARE) {
				normalize(&req.u.compare.dn, &ndn, &key);
			}
		}
		data += pdu_len;
		size -= pdu_len;
	}
	buf_free(&ndn);
	buf_free(&key);
	buf_free(&text);
	buf_free(&scratch);
	arena_free(&mem);
	free(copy);
	return 0;
}
