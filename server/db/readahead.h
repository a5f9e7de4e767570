/*
 * Whether a database file is read with the kernel's read-ahead (database_readahead).
 *
 * A lookup touches a few pages of the file at random. When the page cache holds the whole
 * file, read-ahead costs nothing after the first pass and fills large folios, which the
 * kernel maps with huge pages (fewer TLB misses). When it cannot (a file larger than the
 * memory the process may use: the machine's, or its memory cgroup's limit, page cache
 * included), each fault reads megabytes around its page that no lookup asked for, and
 * those push out the pages the next lookups need: measured at 1M entries (a 770 MB file)
 * in a 300 MB cgroup, 60 lookups/s reading 5.7 MB a lookup with read-ahead, 1,500-5,200
 * with it off, reading 2-3 kB (bench/scale.sh MEMORY_MAX).
 *
 * Thread rules: any thread; reads /proc and /sys each call.
 */
#ifndef MINIDIR_SERVER_DB_READAHEAD_H
#define MINIDIR_SERVER_DB_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/config.h"

/*
 * The memory this process may use, in bytes: the smaller of the machine's (sysconf) and
 * the limits of its memory cgroup and that cgroup's parents (v2 memory.max, v1
 * memory.limit_in_bytes, where /sys/fs/cgroup shows them). *from says which ("the
 * machine" or "its memory cgroup"). Returns 0 when not even the machine's is known.
 */
uint64_t db_readahead_memory_limit(const char **from);

/*
 * Whether a file of size bytes is read without read-ahead under mode: on: false; off:
 * true; auto: the file is larger than half of db_readahead_memory_limit(), where the
 * pages of the file that lookups want stop fitting beside everything else. why
 * (NUL-terminated, for the log) says how it was decided.
 */
bool db_readahead_off(enum db_readahead mode, uint64_t size, char *why, size_t whylen);

#endif
