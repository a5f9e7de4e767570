/*
 * Failed simple binds counted per bind DN and per client address (bind_fail_limit,
 * bind_fail_window; docs/reliability.md): once either count of a bind reaches the limit
 * within its window, binds for that DN or from that address are refused without a
 * password check until the window ends.
 *
 * The window is fixed: it starts with a key's first counted failure and lasts
 * window seconds, after which the count starts again from 0; so a DN or an address gets at
 * most limit checks per window. A bind is counted as a failure before its check
 * (bind_limit_try), so that binds checked at the same time on other workers cannot pass
 * the limit between them; bind_limit_succeeded takes the count back for the address and
 * clears the DN's.
 *
 * The table is fixed in size (BIND_LIMIT_SETS sets of BIND_LIMIT_WAYS keys, made at
 * start-up, 16 bytes a key: 512 KiB): a key goes into the set its low bits name, and a new key in a
 * full set takes the place of one whose window ended, else of an address (under the limit
 * the one with the fewest failures, else the one at it whose window ends first), else of
 * the DN with the fewest failures under the limit. A DN at the limit is never given up
 * while its window runs, so nothing a client sends (addresses from a whole IPv6 range, or
 * DNs over ldapi://) unlocks it early; when every key of a set is such a DN, a new key of
 * that set is not counted (untracked, shown by cn=limits) and its binds are checked
 * unlimited until one of them ends: filling a set takes N failures for each of its 8 DNs
 * within one window, at a place the seeded keys do not let a client choose. One mutex for all
 * workers (a connection goes to a worker by the kernel's hash, so a table per worker would
 * let a client spread its guesses over them), taken only by simple binds with a password.
 * Any thread.
 */
#ifndef MINIDIR_SERVER_BIND_LIMIT_H
#define MINIDIR_SERVER_BIND_LIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define BIND_LIMIT_SETS 4096
#define BIND_LIMIT_WAYS 8

struct bind_limit;

/* A table counting up to limit (>= 1) failures per key over window (>= 1) seconds, or NULL
 * out of memory. */
struct bind_limit *bind_limit_new(unsigned limit, unsigned window);
void bind_limit_free(struct bind_limit *bl);

/*
 * A bind of DN key dn from address key addr (0: none, ldapi://) at now (clock_seconds):
 * false if either is at the limit in its window (the bind is refused, nothing counted),
 * else true with one failure counted for each, which bind_limit_succeeded takes back.
 */
bool bind_limit_try(struct bind_limit *bl, uint64_t dn, uint64_t addr, time_t now);

/* The bind bind_limit_try let through succeeded: the DN's count is cleared (whoever
 * knows the password may reset it), the address's loses that bind's failure only (a
 * client that knows one password does not get more guesses at others). */
void bind_limit_succeeded(struct bind_limit *bl, uint64_t dn, uint64_t addr);

struct bind_limit_counts {
	uint64_t dns_over;   /* DNs at the limit in their window now */
	uint64_t addrs_over; /* addresses at the limit in their window now */
	uint64_t tracked;    /* keys with failures in their window */
	uint64_t evicted;    /* keys replaced by another before their window ended, all time */
	uint64_t untracked;  /* keys not counted: their set was all DNs at the limit, all time */
};

/* What the table holds at now (cn=limits,cn=monitor): a walk of the whole table under
 * the mutex (BIND_LIMIT_SETS * BIND_LIMIT_WAYS keys). */
void bind_limit_counts(struct bind_limit *bl, time_t now, struct bind_limit_counts *out);

#endif
