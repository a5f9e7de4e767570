/*
 * memo_bytes = auto (the default): the memos' budget sized from the memory this process
 * may use, so that a large file gets the memos it needs without tuning and a small
 * container is not asked for more than it has. The memos take only what the file's
 * entries need (storage/db.h's db_open_served: pages are touched as entries are first
 * read), so the budget is a ceiling, not an allocation: a quarter of the limit, the rest
 * left to the page cache that holds the file's pages (which a cgroup's limit counts too)
 * and to the connections.
 *
 * The limit: the lowest memory limit of this process's cgroup and its ancestors (cgroup
 * v2's memory.max, v1's memory.limit_in_bytes; "max" or a value near 2^63 is none), and
 * the machine's memory (sysconf's physical pages) when lower or when no cgroup says.
 *
 * Thread rules: any thread; reads files, keeps nothing.
 */
#ifndef MINIDIR_SERVER_DB_MEMO_AUTO_H
#define MINIDIR_SERVER_DB_MEMO_AUTO_H

#include <stddef.h>

/* The share of the limit the memos may take, 1/MEMO_AUTO_SHARE. */
#define MEMO_AUTO_SHARE 4

/*
 * The memory this process may use, in bytes, as read from proc_cgroup (/proc/self/cgroup)
 * under the cgroup file systems mounted at sys_cgroup (/sys/fs/cgroup: v2 there or in its
 * unified/, v1 in its memory/), against machine_bytes; where the figure came from into
 * from[0..cap) ("the machine's memory", "the cgroup limit of /sys/fs/cgroup/...").
 */
size_t memo_auto_limit(const char *proc_cgroup, const char *sys_cgroup, size_t machine_bytes,
                       char *from, size_t cap);

/* The budget memo_bytes = auto stands for here: memo_auto_limit of this process / 4; the
 * words for the log into why[0..cap) ("a quarter of the N bytes ... (FROM)"). */
size_t memo_auto_bytes(char *why, size_t cap);

#endif
