/*
 * The network room's door for start-up and the monitor: the worker's thread, its engine's
 * name, the send policy for a config value and its name. server/net/ owns the event loop and its
 * engines, the listening sockets, connections and their buffers, TLS, the send policies
 * and the framing of replies.
 *
 * Not an umbrella: it includes none of the room's headers. The room's public headers, the
 * only ones of server/net/ that other rooms include (the list is scripts/layers.sh's), each
 * declare what other rooms use of one part of it:
 *   net.h         this one (start-up, the monitor).
 *   conn.h        struct conn's public part and the calls on a connection (server/ops/);
 *                 conn_worker_init and conn_worker_free (start-up). The rest of a
 *                 connection is conn_impl.h's, private: scripts/layers.sh keeps it in.
 *   net_worker.h  struct net_worker, which struct ops_worker embeds (server/ops/ops.h) and
 *                 start-up allocates (srv->workers) and wakes (its wakefd).
 *   reply.h       how an operation answers (server/ops/, the monitor).
 *   tls.h         the server's TLS context (start-up), a session's peer subject (the
 *                 bind), kernel TLS found (the monitor).
 *   tls_socket.h  a TLS session that drives its own socket (the HTTP endpoint's
 *                 metrics_tls, server/monitor/http.c).
 *   listeners.h   binding and opening the listening sockets (start-up and main).
 *   conn_list.h   the connections of all workers, copied (the monitor).
 * The room's own: addr_served.h, conn_impl.h, engine.h, engine_uring.h, policy.h,
 * proxy_header.h, slab.h, tls_session.h, worker.h.
 *
 * Operations (server/ops/) are reached only through the dispatch callback a
 * connection is given (struct server's dispatch, called in conn_input.c's
 * conn_dispatch_request), never by name: net/ includes nothing of ops/.
 */
#ifndef MINIDIR_SERVER_NET_NET_H
#define MINIDIR_SERVER_NET_NET_H

#include "conf/config.h"

struct send_policy;
struct worker;

/* worker.c: the thread body of worker arg (a struct worker *), set up by conn_worker_init
 * and listeners_bind. Runs until srv->stopping is set and its wakefd is signalled. */
void *worker_main(void *arg);

/* worker.c: the name of w's engine ("epoll", "io_uring"), once listeners_bind has chosen
 * it (a static string). */
const char *worker_engine_name(struct worker *w);

/* policy.c: the policy for a config value (every value of enum send_policy_id has one; a
 * static table). */
const struct send_policy *policy_for(enum send_policy_id id);
/* policy.c: p's config name ("batch", ...; a static string). */
const char *policy_name(const struct send_policy *p);

#endif
