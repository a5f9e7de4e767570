/*
 * Is an LMDB file whole? A copy cut short (a full disk, an interrupted scp, a truncate)
 * still opens: LMDB reads its two meta pages with read(), not through the map, and maps
 * the file as it is. The first page read past the end of the file is then a SIGBUS, in
 * whatever program touches it first (the server at start-up or at a reload, minidir -t,
 * minidir-export, a replica). The meta pages say how long the file must be: the newer
 * meta's last page number (LMDB's mm_last_pg) plus one, times its page size. This checks
 * that before anyone maps the file; storage/db.c calls it for every existing file it
 * opens.
 *
 * A whole file can be shorter than that too: LMDB (without MDB_WRITEMAP) writes a page at
 * its commit, and a page a transaction took past the end of the file and freed again
 * before its commit (a change that deletes much: a replica's refresh that finds most
 * entries gone) is never written, though the last page number counts it. Such pages are
 * free, never read; db_write_commit pads the file to what its meta says (db_file_pad), so
 * that a file minidir wrote always passes the check.
 */
#ifndef MINIDIR_STORAGE_DB_FILE_H
#define MINIDIR_STORAGE_DB_FILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Checks the LMDB file open on fd (read with pread; the offset is not moved), named path
 * in the message. Returns 0 when the file is at least as long as its newer valid meta
 * page says, and also when it is not an LMDB file at all (no LMDB magic number where the
 * first meta page has it, a version or page size LMDB would refuse): LMDB's own open then
 * says what is wrong, as it always did. Returns -1 with one line in err when the file is
 * cut short:
 *
 *   PATH: the file is cut short (N bytes, LMDB's last page needs M): REMEDY
 *
 * (an empty file, or one shorter than the two meta pages, included: then M is what the
 * meta pages alone need), or when fstat or pread fail (PATH: reading it: ERROR). remedy
 * (borrowed) is the advice that ends the line. *need, when not NULL, is set to M (0 when
 * the file is whole or not LMDB's).
 */
int db_file_check(int fd, const char *path, const char *remedy, uint64_t *need, char *err,
                  size_t errlen);

/* Extends the file open on fd (for writing) with zero bytes to need bytes when it is
 * shorter (never shortens it; sparse: no disk block is taken). 0 or an errno. */
int db_file_pad(int fd, uint64_t need);

#endif
