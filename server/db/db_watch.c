#include "server/db/db_watch.h"

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

/* What the fault handler needs: the address ranges of the database files mapped
 * (one per generation still open: generation.h), and the line to write. A signal
 * handler can reach nothing else. A slot is free when its start is 0; it is
 * filled start first and emptied end first, so that it never covers a range
 * it should not while it changes. */
static struct {
	struct {
		uintptr_t start, end; /* atomic */
	} maps[DB_WATCH_MAPS];
	char message[512];
	size_t message_len;
	struct sigaction before_bus, before_segv; /* the handlers ours replaced */
	bool installed;
} fault;

/* A fault inside a mapped database: the file changed under the server. */
static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	for (int i = 0; i < DB_WATCH_MAPS; i++) {
		uintptr_t lo = __atomic_load_n(&fault.maps[i].start, __ATOMIC_RELAXED);
		uintptr_t hi = __atomic_load_n(&fault.maps[i].end, __ATOMIC_RELAXED);
		if (lo && a >= lo && a < hi) {
			ssize_t n = write(STDERR_FILENO, fault.message, fault.message_len);
			(void)n;
			_exit(1);
		}
	}
	/* Any other fault is a bug: it goes to the handler there was before ours (a
	 * sanitizer's report, under SAN=1), or crashes as usual (a core dump). */
	const struct sigaction *before = sig == SIGBUS ? &fault.before_bus : &fault.before_segv;
	if ((before->sa_flags & SA_SIGINFO) && before->sa_sigaction) {
		before->sa_sigaction(sig, si, ctx);
		return;
	}
	if (before->sa_handler != SIG_DFL && before->sa_handler != SIG_IGN) {
		before->sa_handler(sig);
		return;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The address range the database file is mapped at, from /proc/self/maps
 * (LMDB does not say where it mapped a file it chose the place of: storage/db.h db_map). */
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

int db_watch_map_add(dev_t dev, ino_t ino, const char *path)
{
	uintptr_t lo, hi;
	if (!find_map(dev, ino, &lo, &hi)) {
		log_info("%s: the database map was not found in /proc/self/maps", path);
		return -1;
	}
	for (int i = 0; i < DB_WATCH_MAPS; i++)
		if (__atomic_load_n(&fault.maps[i].start, __ATOMIC_ACQUIRE) == 0) {
			__atomic_store_n(&fault.maps[i].start, lo, __ATOMIC_RELEASE);
			__atomic_store_n(&fault.maps[i].end, hi, __ATOMIC_RELEASE);
			return i;
		}
	log_info("%s: more than %d database generations mapped; a fault in this one would "
	         "not be told apart",
	         path, DB_WATCH_MAPS);
	return -1;
}

void db_watch_map_remove(int slot)
{
	if (slot < 0 || slot >= DB_WATCH_MAPS)
		return;
	__atomic_store_n(&fault.maps[slot].end, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&fault.maps[slot].start, 0, __ATOMIC_RELEASE);
}

static void install_fault_handler(struct server *srv)
{
	int n = snprintf(fault.message, sizeof(fault.message),
	                 "minidir: error: %s changed under the running server (written in place, "
	                 "not replaced by minidir-import); stopping\n",
	                 srv->cfg.database);
	fault.message_len = n > 0 && (size_t)n < sizeof(fault.message) ? (size_t)n : 0;
	if (fault.installed)
		return; /* once: a second install would keep ours as the one before */
	struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &fault.before_bus);
	sigaction(SIGSEGV, &sa, &fault.before_segv);
	fault.installed = true;
}

int db_watch_lease(const char *path, dev_t dev, ino_t ino, int *fd_out)
{
	*fd_out = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_ino != ino || st.st_dev != dev) {
		int err = fd < 0 ? errno : ESTALE;
		if (fd >= 0)
			close(fd);
		errno = err;
		return -1;
	}
	if (fcntl(fd, F_SETSIG, DB_WATCH_SIGNAL) < 0 || fcntl(fd, F_SETLEASE, F_RDLCK) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return 1;
	}
	*fd_out = fd;
	return 0;
}

void db_watch_set(struct server *srv, int fd)
{
	if (srv->db_watch_fd >= 0)
		close(srv->db_watch_fd); /* the file it leased was replaced: nobody opens it by path
		                          */
	srv->db_watch_fd = fd;
}

int db_watch_start(struct server *srv, dev_t dev, ino_t ino)
{
	install_fault_handler(srv);
	int slot = db_watch_map_add(dev, ino, srv->cfg.database);
	int fd, rc = db_watch_lease(srv->cfg.database, dev, ino, &fd);
	if (rc < 0)
		log_error("%s: cannot watch the database file: %s", srv->cfg.database,
		          errno == ESTALE ? "it was replaced while opening" : strerror(errno));
	else if (rc > 0)
		log_info("%s: no lease on the database file (%s): writing it in place (instead of "
		         "minidir-import) would stop the server abruptly",
		         srv->cfg.database, strerror(errno));
	else
		db_watch_set(srv, fd);
	return slot;
}

void db_watch_stop(struct server *srv)
{
	if (srv->db_watch_fd >= 0) {
		close(srv->db_watch_fd);
		srv->db_watch_fd = -1;
	}
}
