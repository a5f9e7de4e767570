/*
 * The network room's public header: what the other rooms of server/ use of it, and
 * the only header of server/net/ they include (scripts/layers.sh checks that).
 * server/net/ owns the event loop and its engines, the listening sockets,
 * connections and their buffers, TLS, the send policies and the framing of replies.
 *
 * Still an umbrella: the declarations stay in the headers below, which are public
 * for what this list says and the room's own for the rest.
 *   conn.h        for server/ops/: struct conn's public part (read-only to ops but for
 *                 its task slots, identity calls and access-log trace), struct conn_task,
 *                 conn_set_identity and conn_clear_identity, conn_start_tls,
 *                 conn_tls_active, conn_task_drop, conn_task_cancel, conn_make_ready,
 *                 conn_wake_at, conn_wake_cancel, conn_more_requests, conn_log_release,
 *                 conn_op_begin/done, conn_close_after, conn_closing; for start-up,
 *                 conn_worker_hooks (the loop's hooks), conn_size and CONN_IDENT_BYTES.
 *                 The rest of a connection is in conn_impl.h, the room's own.
 *   conn_list.h   for server/ops/ (cn=Monitor): the connections of all workers, copied.
 *   reply.h       for server/ops/: how an operation answers (the whole header).
 *   tls.h         for start-up (tls_setup, tls_reload, tls_teardown) and ops
 *                 (tls_peer_subject for the bind, tls_kernel for the monitor).
 *   listeners.h   for start-up and main (bind, open, the replica's hold).
 *   policy.h      for start-up: policy_for.
 *   worker.h      for start-up: worker_main, struct worker_hooks; with
 *                 net_worker.h, struct net_worker: start-up allocates the workers
 *                 (srv->workers) and frees their parts, the monitor reads the engine.
 *   engine.h      for start-up and the monitor: struct engine_ops (teardown, name).
 * The room's own, included by nothing outside it: conn_impl.h (private: never reached
 * from this header, scripts/layers.sh checks it), addr_served.h, engine_uring.h,
 * net_worker.h (but through worker.h), slab.h (but through net_worker.h, as struct
 * net_worker embeds the slabs) and tls_bio.h.
 *
 * Operations (server/ops/) are reached only through the dispatch callback a
 * connection is given (struct server's dispatch, called in conn_input.c's
 * conn_dispatch_request), never by name: net/ includes nothing of ops/.
 */
#ifndef MINIDIR_SERVER_NET_NET_H
#define MINIDIR_SERVER_NET_NET_H

#include "server/net/conn.h"
#include "server/net/conn_list.h"
#include "server/net/engine.h"
#include "server/net/listeners.h"
#include "server/net/policy.h"
#include "server/net/reply.h"
#include "server/net/tls.h"
#include "server/net/worker.h"

#endif
