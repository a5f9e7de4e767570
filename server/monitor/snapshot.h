/*
 * /snapshot on the operators' HTTP endpoint (http.h): a consistent, compacted copy of the
 * database file served (storage/db.h's db_copy_to_fd: the entries and the replication
 * cookie of one read transaction), for a new replica's syncrepl seed=
 * (server/replica/replica.h, replica_seed). Off unless snapshot_allow names the client's
 * address (403 otherwise: the copy holds every entry, password hashes too).
 *
 * The answer: 200, Transfer-Encoding: chunked, the file's bytes, then the trailers
 * X-Snapshot-Bytes (its length) and its checksum (server/copy_digest.h: SHA-256 unless the
 * request asked for XXH3-128, as a replica does; the Trailer header names which); a copy
 * that fails midway ends without them, so that the reader sees it cut. HEAD answers the
 * headers alone.
 *
 * Bounded: SNAPSHOT_MAX_STREAMS copies at once, each on a thread of its own (one more is
 * answered 503), never on the endpoint's thread, so /readyz answers meanwhile; a client that
 * takes nothing for SNAPSHOT_STALL_MS loses its copy. A copy holds a read transaction of
 * the file for its length: a replica's file grows by what the provider changes meanwhile.
 *
 * Thread rules: snapshot_serve and snapshot_stop on the endpoint's thread (http.c).
 */
#ifndef MINIDIR_SERVER_MONITOR_SNAPSHOT_H
#define MINIDIR_SERVER_MONITOR_SNAPSHOT_H

#include <stdbool.h>
#include <sys/socket.h>

#include "server/copy_digest.h"

#define SNAPSHOT_MAX_STREAMS 2
#define SNAPSHOT_STALL_MS 30000

struct http_link;
struct server;
struct snapshot_streams; /* the copies under way (snapshot.c) */

/* What snapshot_serve did with the request. */
enum snapshot_answer {
	SNAPSHOT_STREAMING, /* a stream's thread took the link: it answers and closes it */
	SNAPSHOT_FORBIDDEN, /* the caller answers 403: peer not in snapshot_allow */
	SNAPSHOT_BUSY,      /* 503: SNAPSHOT_MAX_STREAMS under way */
	SNAPSHOT_HEAD,      /* HEAD, allowed: 200 without a body */
	SNAPSHOT_FAILED,    /* 500: out of memory or threads (logged) */
};

/*
 * Answers GET or HEAD /snapshot from peer on link (http_link.h): starts a stream, which
 * takes the link (*link is then closed: fd -1), or says what the caller answers (the link
 * is then still the caller's). *streams is made on first use (NULL before). digest: the
 * checksum the request asked for (COPY_DIGEST_ASK), else COPY_DIGEST_SHA256.
 */
enum snapshot_answer snapshot_serve(struct server *srv, struct snapshot_streams **streams,
                                    struct http_link *link, const struct sockaddr_storage *peer,
                                    bool head, enum copy_digest_kind digest);

/* Cuts the copies under way (their sockets shut down), joins their threads, frees
 * streams (NULL: nothing). Before the database is closed. */
void snapshot_stop(struct snapshot_streams *streams);

#endif
