/*
 * LDIF import and export (RFC 2849 content records). Import reads the file with its
 * own reader, stricter than libldap's and with exact line numbers: ldif/ldif_reader.h
 * frames the records, ldif/ldif_parse.h checks and splits each one, and only the few it
 * leaves to libldap (a changetype line, say) go through ldap_parse_ldif_record. Export
 * (ldif/ldif_export.c) writes with libldap's ldif_put_wrap.
 *
 * Import is atomic: the new database is built in "<db>.tmp.<pid>" and renamed
 * over <db> only when every record was accepted, so a failed or interrupted
 * import leaves the previous database untouched; the temporary files of
 * imports killed outright (SIGKILL) are removed by the next one
 * (ldif/import_stale.h), a line on err each. Entries get IDs in file
 * order; parents must come before their children. Of the operational attributes
 * in the LDIF (as slapcat writes them) entryUUID is kept in the record, and
 * createTimestamp, modifyTimestamp, creatorsName, modifiersName and entryCSN in
 * the opattrs table (storage/entry_opattrs.h), as slapadd keeps them; the others
 * are not stored. An entry without them is served the import's own time and
 * creator. memberOf is computed from the
 * groups (storage/memberof.h), with dynamic_groups after the members of groupOfURLs
 * entries are (storage/dyngroup.h), and with a schema loaded the objectClass
 * index holds every entry under the superclasses of its classes too.
 *
 * Records are parsed on opts->threads threads (ldif/import_parse.h, import_queue.h)
 * while the calling thread writes them in one transaction through LMDB's writable map;
 * memory stays bounded whatever the file's size. A full disk shows as a SIGBUS on that
 * map: ldif_import handles SIGBUS while it runs (and restores the previous handler),
 * and reports "file:line: writing <db>.tmp.<pid>: reason".
 *
 * Thread rules: one ldif_import at a time in a process (it handles SIGINT, SIGTERM,
 * SIGXFSZ and SIGBUS, and names its temporary file in static storage).
 */
#ifndef MINIDIR_LDIF_LDIF_IMPORT_H
#define MINIDIR_LDIF_LDIF_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct import_opts {
	const char *suffix; /* every entry must be the suffix entry or below it */
	char *const *index; /* attributes to index for equality */
	int nindex;
	FILE *err;           /* where "file:line: reason" messages go */
	const char *creator; /* creatorsName/modifiersName of the entries ("" if none) */
	bool skip_schema;    /* no schema checking (slapadd -s); else storage/entry_schema.h */
	/* "type:< URL" values read their file (ldif/ldif_url.h: file: URLs, regular files,
	 * at most ENTRY_MAX_BYTES a record); false: such a value is an error at its line. */
	bool url_values;
	/* memberOf holds nested groups' closure (storage/memberof_nested.h), recorded in the
	 * file's meta table; false: direct membership only. */
	bool memberof_nested;
	/* 2 or more: records are parsed, checked and encoded on a thread of their own while
	 * this one writes them (ldif/import_parse.h); 0 or 1: one thread does both. The
	 * database is the same either way. */
	int threads;
	/* Called every so many entries with the entries stored and the bytes of the file read
	 * so far, of bytes_total; NULL: none. */
	void (*progress)(void *arg, size_t entries, long long bytes, long long bytes_total);
	void *progress_arg;
	/* true: the new file is given to uid:gid (fchown, which needs root) before it is
	 * renamed into place, so that it appears whole and already its reader's. */
	bool chown;
	uid_t uid;
	gid_t gid;
	/* dynamic_groups = yes: groupOfURLs entries get the members their memberURL values
	 * find (storage/dyngroup.h), at most dynamic_groups_max URLs in all. */
	bool dynamic_groups;
	int dynamic_groups_max;
};

/*
 * Imports ldif_path into a new database that replaces db_path (given to opts->uid:gid
 * first when opts->chown). Returns 0 and sets *count, or -1 after printing the first
 * problem as "file:line: reason" to opts->err (db_path is then unchanged).
 */
int ldif_import(const char *ldif_path, const char *db_path, const struct import_opts *opts,
                size_t *count);

/* Writes every entry of db_path as LDIF to out in ID (import) order, parents first (an
 * entry whose parent comes later in ID order, after a replica's move, goes right after
 * it; -1 when an entry's parent is missing); progress (NULL: none)
 * is called every so many entries with how many are written, of total. Returns 0 or
 * -1 with a message in err. */
int ldif_export(const char *db_path, FILE *out, char *err, size_t errlen,
                void (*progress)(void *arg, size_t done, size_t total), void *progress_arg);

#endif
