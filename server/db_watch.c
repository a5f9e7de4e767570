#include "server/db_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "server/log.h"

/* What the fault handler needs; set once before the workers start. A signal
 * handler can reach nothing else. */
static struct {
	uintptr_t map_start, map_end;
	char message[512];
	size_t message_len;
} fault;

/* A fault inside the mapped database: the file changed under the server. */
static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	uintptr_t a = (uintptr_t)si->si_addr;
	if (a >= fault.map_start && a < fault.map_end) {
		ssize_t n = write(STDERR_FILENO, fault.message, fault.message_len);
		(void)n;
		_exit(1);
	}
	signal(sig, SIG_DFL); /* any other fault is a bug: let it crash as usual */
	raise(sig);
}

/* The address range the database file is mapped at, from /proc/self/maps
 * (LMDB does not tell: mdb_env_info's me_mapaddr is only set for MDB_FIXEDMAP). */
static bool find_map(dev_t dev, ino_t ino, uintptr_t *start, uintptr_t *end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, inode;
		unsigned maj, min;
		if (sscanf(line, "%lx-%lx %*s %*s %x:%x %lu", &lo, &hi, &maj, &min, &inode) == 5 &&
		    inode == ino && makedev(maj, min) == dev) {
			*start = lo;
			*end = hi;
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void install_fault_handler(struct server *srv)
{
	if (!find_map(srv->db_dev, srv->db_ino, &fault.map_start, &fault.map_end)) {
		log_info("%s: the database map was not found in /proc/self/maps",
		         srv->cfg.database);
		return;
	}
	int n = snprintf(fault.message, sizeof(fault.message),
	                 "minidir: error: %s changed under the running server (written in place, "
	                 "not replaced by minidir-import); stopping\n",
	                 srv->cfg.database);
	fault.message_len = n > 0 && (size_t)n < sizeof(fault.message) ? (size_t)n : 0;
	struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

void db_watch_start(struct server *srv)
{
	install_fault_handler(srv);
	int fd = open(srv->cfg.database, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_ino != srv->db_ino || st.st_dev != srv->db_dev) {
		log_error("%s: cannot watch the database file: %s", srv->cfg.database,
		          fd < 0 ? strerror(errno) : "it was replaced while opening");
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fcntl(fd, F_SETSIG, DB_WATCH_SIGNAL) < 0 || fcntl(fd, F_SETLEASE, F_RDLCK) < 0) {
		log_info("%s: no lease on the database file (%s): writing it in place (instead of "
		         "minidir-import) would stop the server abruptly",
		         srv->cfg.database, strerror(errno));
		close(fd);
		return;
	}
	srv->db_watch_fd = fd;
}

void db_watch_stop(struct server *srv)
{
	if (srv->db_watch_fd >= 0) {
		close(srv->db_watch_fd);
		srv->db_watch_fd = -1;
	}
}
