/*
 * The part of minidir-import that needs no LMDB transaction: one LDIF record of the
 * file made ready to store. The parser frames the next record (ldif/ldif_reader.h),
 * checks its syntax and splits it into the DN and attributes in one pass
 * (ldif/ldif_parse.h; libldap's parser for the few records that one leaves to it),
 * normalizes the DN and checks it is under the suffix, checks objectClass and the schema
 * (storage/entry_schema.h), takes or makes the entryUUID, encodes the entry record
 * (storage/entry.h) and lists the equality index keys (storage/entry_index.h) and the
 * member DN keys (storage/memberof.h) the writer will store. What needs the
 * database (a duplicate DN, a missing parent, the parent's ID, the writes themselves)
 * is the writer's (ldif/ldif_import.c), which may run on another thread.
 *
 * A problem is not printed here: the item keeps it with its line and the point of the
 * writer's checks it comes after (enum import_fault), so that the writer reports the
 * first problem of the file, in file order and as one thread would, whichever thread
 * found it.
 *
 * Thread rules: a parser and the items it fills belong to one thread at a time; the
 * schema and the db's index list and suffix are only read (another thread may write the
 * database meanwhile).
 */
#ifndef MINIDIR_LDIF_IMPORT_PARSE_H
#define MINIDIR_LDIF_IMPORT_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/buf.h"
#include "storage/db.h"
#include "storage/entry_index.h"
#include "storage/entry_rdn.h"
#include "storage/entry_schema.h"
#include "ldif/ldif_parse.h"
#include "ldif/ldif_reader.h"

enum import_item_kind {
	IMPORT_ITEM_ENTRY, /* an entry record (or one that failed: see fault) */
	IMPORT_ITEM_NONE,  /* a record that holds no entry: "version: 1" or comments only */
	IMPORT_ITEM_END,   /* the end of the file (or a read error: see fault) */
};

/* Where the writer reports a problem the parser found, among its own checks. */
enum import_fault {
	IMPORT_FAULT_NONE,
	IMPORT_FAULT_FIRST, /* at once: LDIF syntax, the DN, the suffix, a read error */
	IMPORT_FAULT_ENTRY, /* after the duplicate and parent checks: class, schema, UUID, size */
	IMPORT_FAULT_INDEX, /* after the entry's own writes: a value its index cannot normalize */
};

struct import_item {
	enum import_item_kind kind;
	enum import_fault fault;
	/* The record as read (import_frame): text as in the file (LF or CR LF line ends) and a
	 * NUL after it, its physical lines, whether its last line lacks a newline, whether it
	 * is the file's first record. */
	struct buf text;
	unsigned long first_line, last_line;
	bool cut, first;
	unsigned long line; /* the record's "dn:" line (else its first): where it is reported */
	unsigned long fault_line; /* where fault is reported */
	struct buf msg;           /* fault's reason, NUL-terminated */
	long long offset;         /* bytes of the file read up to the end of this record */
	struct buf dn;            /* the DN as written, NUL-terminated */
	struct buf key;           /* its reversed normalized key (protocol/dn.h) */
	struct buf rec;           /* the entry record, parent ID 0: the writer sets it */
	unsigned char uuid[16];
	/* Index keys, each: u8 position in db->index, u16 length (native order), the key. */
	struct buf keys;
	struct buf members; /* member DN keys as memberof_collect appends them */
	/* createTimestamp, modifyTimestamp, creatorsName, modifiersName and entryCSN as the
	 * LDIF gives them (slapcat's, an export's), for the opattrs table
	 * (storage/entry_opattrs.h); empty: none, the import's own are answered. */
	struct buf opattrs;
	/* Where in rec the userPassword values are (their SET's content; pw_len 0: none):
	 * the writer counts them into the file's record of password classes. */
	size_t pw_off, pw_len;
};

/* The file's records, one after another: one thread at a time (the caller locks). */
struct import_parser {
	struct ldif_reader rd;
	long long size; /* bytes of the file */
	bool first;     /* no record read yet */
};

/* What one parsing thread needs of its own. */
struct import_worker {
	const struct db *db; /* suffix and index list, only read */
	bool skip_schema;    /* no schema checking (storage/entry_schema.h) */
	struct buf ndn, names, val;
	struct ldif_entry entry; /* the record parsed */
	/* For a record libldap parses: its text as it takes it, kept as read (raw, to find
	 * an attribute's line) and parsed in place (lib). */
	struct buf raw, lib;
	struct entry_rdn rdn;            /* the last entry's mods with its RDN values */
	struct entry_schema_memo schema; /* the last entry's shape */
	struct entry_index_memo index;   /* the last entry's objectClass keys */
	unsigned char random[4096];      /* entryUUIDs to come: random[0..random_left) */
	size_t random_left;
};

/* Opens path for p. Returns 0, or -1 with errno set. */
int import_parser_open(struct import_parser *p, const char *path);
void import_parser_close(struct import_parser *p);

/*
 * Reads the next record of the file into it (its buffers reused): the cheap, ordered part,
 * done under the caller's lock when several threads parse. Returns true when it is the
 * last item to read: an END item (a read error is its fault).
 */
bool import_frame(struct import_parser *p, struct import_item *it);

/* A worker for db (borrowed; its index list and suffix are only read). url_values: a
 * "type:< URL" value reads its file, up to ENTRY_MAX_BYTES a record (else it is an error;
 * ldif/ldif_parse.h). */
void import_worker_init(struct import_worker *w, const struct db *db, bool skip_schema,
                        bool url_values);
void import_worker_free(struct import_worker *w);

/* Checks, parses and encodes the record import_frame read into it. Never fails: a problem
 * is it->fault. Does nothing to an END item. */
void import_parse(struct import_worker *w, struct import_item *it);

void import_item_free(struct import_item *it);

#endif
