/*
 * bind_passthrough_cache (minidir.conf(5)): the verifiers of binds the provider accepted,
 * so that while it cannot be reached a user who bound lately still binds. A verifier is
 * an Argon2id hash of the password (a salt of its own, BIND_CACHE_T_COST passes over
 * BIND_CACHE_M_COST KiB), kept in memory only, never written; at most BIND_CACHE_MAX users
 * (one verifier each, the oldest replaced), each usable for ttl seconds after the bind
 * that made it. The provider's 49 for a user forgets its verifier.
 *
 * What it risks, said in the man page: while the provider cannot be reached, a password
 * changed or an account disabled there meanwhile is not seen here (the replica cannot
 * hear of it either), so the old password keeps working up to ttl; and anyone who can
 * read the process's memory may try to guess the passwords of the verifiers (slowed by
 * Argon2id, not stopped).
 *
 * Thread rules: any thread (a mutex guards the table; hashing is done outside it). The
 * chain threads (chain.c) call it, not the workers: a hash takes about 30 ms.
 */
#ifndef MINIDIR_SERVER_REPLICA_BIND_CACHE_H
#define MINIDIR_SERVER_REPLICA_BIND_CACHE_H

#include <lber.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define BIND_CACHE_MAX 10000
#define BIND_CACHE_T_COST 3
#define BIND_CACHE_M_COST 12288

struct bind_cache;

/* A cache whose verifiers last ttl seconds (> 0), or NULL when out of memory. */
struct bind_cache *bind_cache_new(int ttl);
void bind_cache_free(struct bind_cache *c); /* NULL: nothing */

/* After the provider accepted user's (limit_key_dn of the DN, nonzero) password cred at
 * now: remembers its verifier in place of user's earlier one. Returns 0, or -1 when the
 * hash could not be made (nothing remembered). */
int bind_cache_remember(struct bind_cache *c, uint64_t user, const struct berval *cred, time_t now);

/* The provider refused user's password: its verifier is forgotten. */
void bind_cache_forget(struct bind_cache *c, uint64_t user);

/* Whether cred is the password of user's verifier, made less than ttl seconds before now;
 * *age the seconds since (when true). */
bool bind_cache_matches(struct bind_cache *c, uint64_t user, const struct berval *cred, time_t now,
                        long *age);

#endif
