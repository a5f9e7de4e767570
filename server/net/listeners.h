/*
 * The listening sockets: one per address per worker (SO_REUSEPORT; an ldapi:// socket is
 * one, watched by every worker through its own dup), bound at start-up while the process
 * may still be root. A replica with listen_after_refresh keeps them bound but not
 * listening (a connection is refused, so a load balancer's health check fails) until its
 * consumer's first refresh of this run has committed, or until that many seconds have
 * passed; then they listen, once.
 *
 * Thread rules: listeners_bind and listeners_hold_tick on the main thread;
 * listeners_open from any thread (the consumer's, the main one), once in effect.
 */
#ifndef MINIDIR_SERVER_NET_LISTENERS_H
#define MINIDIR_SERVER_NET_LISTENERS_H

#include <stdbool.h>

struct config;
struct server;

/*
 * Binds every listening address for every worker (after server_init), gives each worker
 * its engine (io_engine, or MINIDIR_IO_ENGINE; io_uring falls back to epoll, logged) and
 * registers each worker's wake-up descriptor; listens at once unless the config holds them
 * (listen_after_refresh on a replica: logs "holding ldap://HOST:PORT/ closed ..."
 * instead of "listening on ..."). Refuses, returning -1 after logging why, an address
 * that another process already listens on, even one with SO_REUSEPORT such as a second
 * minidir, or holds bound for listen_after_refresh (addr_served.h).
 */
int listeners_bind(struct server *srv);

/*
 * Makes the bound sockets listen and adds them to the workers' epoll sets; logs
 * "listening on URL ..." for each address, and why (NULL: nothing more). The first call
 * does it; later ones return 0 at once. Returns 0, or -1 after logging a listen or
 * epoll_ctl that failed (at start-up the server then stops; held, the addresses left stay
 * closed). What the replica's on_first_refresh callback calls (server/start/startup.c).
 */
int listeners_open(struct server *srv, const char *why);

/* Once a second: when the hold's bound has passed, logs why and listens anyway. */
void listeners_hold_tick(struct server *srv);

/* Warns (log_warning, with the config's FILE:LINE) when proxy_from holds every address of
 * a family (0.0.0.0/0, ::/0): anyone who reaches a pldap:// or pldaps:// listener could
 * then claim any client address, in the log and in access rules. Returns true if it
 * warned. Called at start-up, so by minidir -t too. */
bool listeners_proxy_from_open(const struct config *cfg);

#endif
