/*
 * Whether another process already serves an address this server is about to bind, so that
 * a second server never shares one. The workers' TCP sockets use SO_REUSEPORT, which lets
 * a second server of the same user bind the address and take a share of its connections;
 * an ldapi:// socket file a second server took for stale would be replaced.
 *
 * "Serves" includes "holds": a replica with listen_after_refresh keeps its sockets bound
 * but not listening until its first refresh has committed (listeners.h). Such a socket
 * refuses connections and does not stop a bind with SO_REUSEADDR, as a listening one does,
 * so it is found otherwise (addr_served.c): for TCP in the kernel's list of bound sockets
 * (sock_diag, Linux 6.8 and later), or, where that list is not available, by a bind
 * without SO_REUSEADDR that fails while /proc/net/tcp and tcp6 show nothing on the port
 * (no connection or TIME_WAIT that would explain it; with one there, a held socket goes
 * unseen on such kernels); for a Unix socket by its path in /proc/net/unix, as bound
 * (a second server naming the same file by another path is not seen).
 *
 * Both only look: nothing is left bound or open. Neither fails: what cannot be read
 * counts as not served.
 */
#ifndef MINIDIR_SERVER_NET_ADDR_SERVED_H
#define MINIDIR_SERVER_NET_ADDR_SERVED_H

#include <stdbool.h>
#include <sys/socket.h>

/* True if another socket listens on, or holds, the TCP address sa (AF_INET or AF_INET6,
 * a port other than 0). */
bool addr_tcp_served(const struct sockaddr *sa, socklen_t salen);

/* True if the socket file at path is served: a connection is accepted by a socket whose
 * listening process is alive, or a socket is still bound there, not listening. False for
 * a file left by a server that is gone, even while the kernel still accepts on its socket
 * (a killed process's io_uring ring is released after it has been reaped). */
bool addr_unix_served(const char *path);

#endif
