/* Whether another process serves or holds an address: see addr_served.h. */
#include "server/net/addr_served.h"

#include <errno.h>
#include <signal.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The state the kernel gives a TCP socket bound but not listening in its socket dump
 * (TCP_BOUND_INACTIVE, Linux 6.8; older headers lack the name). An older kernel lists
 * nothing for it. */
#define DIAG_BOUND_INACTIVE 13

static uint16_t port_of(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
	                                 : ((const struct sockaddr_in *)sa)->sin_port;
}

/* Whether a bind of a new socket to sa fails with EADDRINUSE; with reuseaddr, only a
 * listening socket (or one bound without SO_REUSEADDR) stops it, TIME_WAIT does not. */
static bool bind_in_use(const struct sockaddr *sa, socklen_t salen, bool reuseaddr)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0)
		return false;
	if (reuseaddr)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	bool in_use = bind(fd, sa, salen) < 0 && errno == EADDRINUSE;
	close(fd);
	return in_use;
}

/* Whether the dumped socket's local address overlaps sa's: the same, or either the
 * wildcard (which a bind of the other would conflict with). */
static bool same_address(const struct inet_diag_msg *m, const struct sockaddr *sa)
{
	static const uint32_t any[4];
	size_t n = sa->sa_family == AF_INET6 ? 16 : 4;
	const void *a = sa->sa_family == AF_INET6
	                    ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
	                    : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
	return memcmp(m->id.idiag_src, a, n) == 0 || memcmp(m->id.idiag_src, any, n) == 0 ||
	       memcmp(a, any, n) == 0;
}

/* Whether the kernel lists a TCP socket bound to sa's address and port, not listening. */
static bool diag_bound_inactive(const struct sockaddr *sa)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return false; /* no netlink here (a sandbox): /proc tells what it can */
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
	    .nlh = {.nlmsg_len = sizeof(msg),
	            .nlmsg_type = SOCK_DIAG_BY_FAMILY,
	            .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
	    .req = {.sdiag_family = (uint8_t)sa->sa_family,
	            .sdiag_protocol = IPPROTO_TCP,
	            .idiag_states = 1u << DIAG_BOUND_INACTIVE},
	};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	bool found = false, done = false;
	if (sendto(fd, &msg, sizeof(msg), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		done = true;
	long buf[2048]; /* aligned for the headers */
	while (!done) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		if (got <= 0)
			break;
		/* NLMSG_OK and NLMSG_NEXT compare the u32 length with an int: walked here. */
		for (size_t off = 0; !done && off + sizeof(struct nlmsghdr) <= (size_t)got;) {
			const struct nlmsghdr *h = (const void *)((const char *)buf + off);
			if (h->nlmsg_len < sizeof(*h) || h->nlmsg_len > (size_t)got - off)
				break;
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
				done = true;
			else if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*m)) &&
			         m->id.idiag_sport == port_of(sa) && same_address(m, sa))
				found = true;
			off += NLMSG_ALIGN(h->nlmsg_len);
		}
	}
	close(fd);
	return found;
}

/* Sockets /proc/net/tcp and tcp6 list on local port port (network order), in any state:
 * connections and TIME_WAIT; -1 when neither can be read. */
static int proc_tcp_on_port(uint16_t port)
{
	static const char *const files[] = {"/proc/net/tcp", "/proc/net/tcp6"};
	int count = -1;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f = fopen(files[i], "re");
		if (!f)
			continue;
		count = count < 0 ? 0 : count;
		char line[512];
		unsigned local;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x", &local) == 1 &&
			    local == ntohs(port))
				count++;
		fclose(f);
	}
	return count;
}

bool addr_tcp_served(const struct sockaddr *sa, socklen_t salen)
{
	if (bind_in_use(sa, salen, true) || diag_bound_inactive(sa))
		return true;
	/* Without the kernel's list: a bind without SO_REUSEADDR fails on a socket merely
	 * bound, but also on connections and TIME_WAIT of the port, which /proc shows (and
	 * is read first, so that none of those can come and go unseen in between). */
	return proc_tcp_on_port(port_of(sa)) == 0 && bind_in_use(sa, salen, false);
}

/* Whether process pid exists and has not exited (a zombie, not yet reaped, has). */
static bool process_alive(pid_t pid)
{
	if (kill(pid, 0) < 0 && errno != EPERM)
		return false;
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return true; /* no /proc here: kill said it exists */
	bool alive = true;
	if (fgets(line, sizeof(line), f)) {
		const char *end =
		    strrchr(line, ')'); /* the name in parentheses may hold anything */
		alive = !end || (end[1] == ' ' && end[2] != 'Z' && end[2] != 'X');
	}
	fclose(f);
	return alive;
}

/* Whether /proc/net/unix lists a socket bound at path (its last field). */
static bool proc_unix_bound(const char *path)
{
	FILE *f = fopen("/proc/net/unix", "re");
	if (!f)
		return false;
	char line[4096 + 128];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		int at = -1;
		/* Num RefCount Protocol Flags Type St Inode Path */
		sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %n", &at);
		if (at < 0)
			continue;
		line[strcspn(line, "\n")] = 0;
		found = strcmp(line + at, path) == 0;
	}
	fclose(f);
	return found;
}

bool addr_unix_served(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return false;
	bool served = connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	int err = errno;
	if (served) {
		/* Accepted, but a server killed outright can leave its listening socket accepting
		 * for seconds while the kernel tears its io_uring ring down (CI saw a restart
		 * refused so): served only if the process that listened is still there. */
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
			served = process_alive(cred.pid);
	}
	close(probe);
	if (served || err != ECONNREFUSED)
		return served;
	/* Refused: left by a server that is gone, or bound by one that does not listen yet. A
	 * server just killed may still be listed for a moment (an io_uring ring's files are
	 * released after its process has been reaped; CI saw a listing outlive 2 s on a busy
	 * machine), so a listing must stay for 5 s: start-up waits that long only when the
	 * socket is held, and goes on as soon as a stale one is gone. */
	for (int i = 0; i < 50 && proc_unix_bound(path); i++)
		nanosleep(&(struct timespec){.tv_nsec = 100 * 1000 * 1000}, NULL);
	return proc_unix_bound(path);
}
