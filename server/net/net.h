/*
 * The network room's public header: what the other rooms of server/ use of it.
 * server/net/ owns the event loop and its engines (engine.h, worker.h), the
 * listening sockets (listeners.h), connections and their buffers (conn.h), TLS
 * (tls.h), the send policies (policy.h) and the framing of replies (reply.h).
 * Operations (server/ops/) are reached only through the dispatch callback a
 * connection is given (struct server's dispatch), never by name: net/ includes
 * nothing of ops/.
 */
#ifndef MINIDIR_SERVER_NET_NET_H
#define MINIDIR_SERVER_NET_NET_H

#include "server/net/conn.h"
#include "server/net/engine.h"
#include "server/net/listeners.h"
#include "server/net/policy.h"
#include "server/net/reply.h"
#include "server/net/tls.h"
#include "server/net/worker.h"

#endif
