/*
 * The operators' HTTP endpoint (metrics_listen; docs/monitoring.md): /metrics,
 * /healthz, /readyz (metrics.h says what they answer) over HTTP/1.1, on a thread of its
 * own, never on the workers' loops: what it reads it reads without a lock a worker takes.
 *
 * Bounded (docs/reliability.md): HTTP_MAX_CONNS connections at a time (one more is
 * answered 503 and closed), HTTP_MAX_REQUEST bytes of request line and headers (431
 * past that), HTTP_READ_TIMEOUT_MS for the whole request (408), HTTP_WRITE_TIMEOUT_MS
 * for the answer; GET and HEAD only (405), no body read, Connection: close after each
 * answer. Out of file descriptors a connection is answered 503 with a spare one (logged
 * once), or the listener rests HTTP_FD_REST_MS: the thread never spins on it.
 */
#ifndef MINIDIR_SERVER_MONITOR_HTTP_H
#define MINIDIR_SERVER_MONITOR_HTTP_H

#define HTTP_MAX_CONNS 8
#define HTTP_MAX_REQUEST 8192
#define HTTP_READ_TIMEOUT_MS 5000
#define HTTP_WRITE_TIMEOUT_MS 5000
/* Out of descriptors with no spare to answer 503 with, the listener rests this long. */
#define HTTP_FD_REST_MS 250

struct server;

/*
 * Binds srv->cfg.metrics_listen and starts the endpoint's thread; nothing when the key
 * is not set. Returns 0, or -1 after logging why (the address in use, ...). The thread
 * reads srv's workers: start it after them.
 */
int http_start(struct server *srv);
/* Stops the thread and closes its sockets; nothing when none runs. Before the workers
 * are freed. */
void http_stop(struct server *srv);

#endif
