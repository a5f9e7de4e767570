/* Is an LMDB file whole: its length against its meta pages (db_file.h). */
#include "storage/db_impl.h"
#include "storage/db_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * LMDB's meta page as mdb.c lays it out, which lmdb.h does not export: the page header
 * (MDB_page up to its mp_ptrs, PAGEHDRSZ bytes) and then MDB_meta. This is LMDB's data
 * format version 1, unchanged since LMDB 0.9.0 (a file of another version is LMDB's to
 * refuse). The page size is kept in the free table's md_pad (mdb.c's mm_psize), page
 * numbers and transaction IDs are size_t (pgno_t, txnid_t), all in the host's byte order.
 */
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define LMDB_P_META 0x08u

struct lmdb_page_head {
	size_t pgno;
	uint16_t pad, flags;
	uint32_t bounds; /* mp_lower and mp_upper */
};

struct lmdb_table {
	uint32_t pad; /* the page size, in the free table of a meta page */
	uint16_t flags, depth;
	size_t branch_pages, leaf_pages, overflow_pages, entries, root;
};

struct lmdb_meta {
	uint32_t magic, version;
	void *address;
	size_t mapsize;
	struct lmdb_table tables[2]; /* the free table, the main table */
	size_t last_pg;              /* the last page in use */
	size_t txnid;                /* the newer of the two meta pages is the current one */
};

struct lmdb_meta_page {
	struct lmdb_page_head head;
	struct lmdb_meta meta;
};

/* LMDB puts MDB_meta right after the page header (METADATA(p)). */
_Static_assert(offsetof(struct lmdb_meta_page, meta) == sizeof(struct lmdb_page_head),
               "the meta follows the page header");

/* A page size LMDB could have written: a power of two it accepts. */
static bool page_size_ok(uint32_t psize)
{
	return psize >= 512 && psize <= 65536 && (psize & (psize - 1)) == 0;
}

/* Reads up to len bytes at off; short only at the end of the file. */
static ssize_t read_at(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* The bytes meta needs: pages 0 to its last page, and at least the two meta pages. */
static uint64_t meta_need(const struct lmdb_meta *meta, uint32_t psize)
{
	uint64_t last = meta->last_pg < 1 ? 1 : meta->last_pg;
	if (last >= UINT64_MAX / psize)
		return UINT64_MAX;
	return (last + 1) * psize;
}

static bool meta_ok(const struct lmdb_meta_page *p)
{
	return (p->head.flags & LMDB_P_META) && p->meta.magic == LMDB_MAGIC &&
	       p->meta.version == LMDB_DATA_VERSION;
}

static int read_fail(const char *path, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: reading it: %s", path, strerror(errno));
	return -1;
}

int db_file_check(int fd, const char *path, const char *remedy, uint64_t *need_out, char *err,
                  size_t errlen)
{
	if (need_out)
		*need_out = 0;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return read_fail(path, err, errlen);
	if (!S_ISREG(st.st_mode))
		return 0; /* LMDB says what it makes of it */
	uint64_t size = (uint64_t)st.st_size;
	/* LMDB makes its pages the size of the system's; a file too short to say its own. */
	long sys = sysconf(_SC_PAGESIZE);
	uint32_t psize = sys > 0 && page_size_ok((uint32_t)sys) ? (uint32_t)sys : 4096;
	struct lmdb_meta_page p[2];
	memset(p, 0, sizeof(p));
	const char *what = "meta pages need";
	uint64_t need;
	ssize_t n = 0;
	if (size > 0 && (n = read_at(fd, &p[0], sizeof(p[0]), 0)) < 0)
		return read_fail(path, err, errlen);
	if (size == 0) {
		need = 2 * (uint64_t)psize;
	} else if ((size_t)n < offsetof(struct lmdb_meta_page, meta.version) ||
	           p[0].meta.magic != LMDB_MAGIC) {
		return 0; /* not an LMDB file (or too little of one to tell): LMDB's message */
	} else if ((size_t)n < sizeof(p[0])) {
		/* The first meta page itself is cut: its page size, if that much is left. */
		uint32_t ps = p[0].meta.tables[0].pad;
		if ((size_t)n >= offsetof(struct lmdb_meta_page, meta.tables[0].flags) &&
		    page_size_ok(ps))
			psize = ps;
		need = 2 * (uint64_t)psize;
	} else {
		psize = p[0].meta.tables[0].pad;
		if (!meta_ok(&p[0]) || !page_size_ok(psize))
			return 0; /* LMDB refuses it with its own message */
		if ((n = read_at(fd, &p[1], sizeof(p[1]), psize)) < 0)
			return read_fail(path, err, errlen);
		if ((size_t)n < sizeof(p[1])) {
			/* The second meta page is cut: which meta is the newer, and so how long
			 * the file must be, is not known; the two meta pages are the least. */
			need = 2 * (uint64_t)psize;
		} else if (!meta_ok(&p[1])) {
			return 0;
		} else {
			/* LMDB reads from the newer meta page (the larger transaction ID). */
			const struct lmdb_meta_page *newer =
			    p[1].meta.txnid > p[0].meta.txnid ? &p[1] : &p[0];
			need = meta_need(&newer->meta, psize);
			what = "last page needs";
		}
	}
	if (size >= need)
		return 0;
	if (need_out)
		*need_out = need;
	snprintf(err, errlen, "%s: the file is cut short (%llu bytes, LMDB's %s %llu): %s", path,
	         (unsigned long long)size, what, (unsigned long long)need, remedy);
	return -1;
}

int db_file_pad(int fd, uint64_t need)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return errno;
	if ((uint64_t)st.st_size >= need)
		return 0;
	return ftruncate(fd, (off_t)need) < 0 ? errno : 0;
}
