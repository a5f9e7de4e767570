/*
 * A worker's event loop: accept on its own listening sockets, hand the sockets and
 * their events to the layer above (worker_hooks), move to a reloaded database between
 * rounds, sweep once a second, stop when woken.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "server/clock.h"
#include "server/access_log.h"
#include "server/db/db.h"
#include "server/log.h"
#include "server/net/engine.h"
#include "server/net/net.h"
#include "server/net/net_worker.h"
#include "server/net/worker.h"

/* Pending connections closed at most per shedding. */
#define WORKER_SHED_MAX 1024

/* The pause before a wait that failed for want of memory is tried again (wait_failed). */
#define WAIT_RETRY_NS 10000000

/* Stops or restarts watching w's listening sockets (their backlog waits in the kernel). */
static void set_listening(struct worker *w, bool on)
{
	struct net_worker *nw = net_worker(w);
	if (nw->listen_paused == !on || (on && __atomic_load_n(&nw->listen_held, __ATOMIC_ACQUIRE)))
		return;
	nw->engine->listen(w, on);
	nw->listen_paused = !on;
}

void worker_fd_freed(struct worker *w)
{
	struct net_worker *nw = net_worker(w);
	if (nw->reservefd < 0)
		nw->reservefd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nw->reservefd >= 0)
		set_listening(w, true);
}

/*
 * Out of descriptors. The spare descriptor is given up to accept and close the
 * pending connections (the clients see the connection closed rather than hang),
 * then taken back. Every worker accepts under srv->accept_lock read-locked and sheds
 * under it write-locked, so the number freed here is not taken by another worker's
 * accept in between. If the spare
 * is lost anyway (another thread opened a file), the listeners are left alone
 * until a connection of this worker closes or the next sweep gets the spare
 * back, so that a listener that stays readable cannot spin the loop.
 */
static void shed_connections(struct worker *w, int lfd, int err)
{
	struct net_worker *nw = net_worker(w);
	unsigned long shed = 0;
	if (nw->reservefd >= 0) {
		close(nw->reservefd);
		nw->reservefd = -1;
		for (int fd;
		     shed < WORKER_SHED_MAX && (fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0;
		     shed++)
			close(fd);
		nw->reservefd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	STAT_ADD(w->stats.connections_shed, shed);
	if (nw->reservefd < 0)
		set_listening(w, false);
	log_error("worker %d: accept: %s; %lu pending connections closed%s", w->id, strerror(err),
	          shed, nw->reservefd < 0 ? ", accepting again when a descriptor is free" : "");
}

/* What accept failing with err means: shedding, pausing, a log line. */
static void accept_failed(struct worker *w, int err)
{
	if (err == ENOBUFS || err == ENOMEM) {
		/* The kernel is short of memory: listen again at the next sweep. */
		log_error("worker %d: accept: %s", w->id, strerror(err));
		set_listening(w, false);
	} else if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR && err != ECONNABORTED &&
	           err != EMFILE && err != ENFILE)
		log_error("worker %d: accept: %s", w->id, strerror(err));
}

/* epoll: listener li is readable. */
static void accept_all(struct worker *w, int li)
{
	struct net_worker *nw = net_worker(w);
	int lfd = nw->listenfd[li];
	pthread_rwlock_t *lock = &w->srv->accept_lock;
	for (int i = 0; i < 64; i++) {
		pthread_rwlock_rdlock(lock);
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int err = errno;
		pthread_rwlock_unlock(lock);
		if (fd < 0 && (err == EMFILE || err == ENFILE)) {
			pthread_rwlock_wrlock(lock); /* no other accept until the spare is back */
			shed_connections(w, lfd, err);
			pthread_rwlock_unlock(lock);
		}
		if (fd < 0) {
			accept_failed(w, err);
			return;
		}
		nw->hooks->accepted(w, fd, nw->listen_addr[li]);
	}
}

/* io_uring: the kernel accepted fd on listener li, or failed with -fd. */
static void accepted(struct worker *w, int li, int fd)
{
	struct net_worker *nw = net_worker(w);
	if (fd >= 0) {
		nw->hooks->accepted(w, fd, nw->listen_addr[li]);
		return;
	}
	if (-fd == EMFILE || -fd == ENFILE) {
		pthread_rwlock_wrlock(&w->srv->accept_lock);
		shed_connections(w, nw->listenfd[li], -fd);
		pthread_rwlock_unlock(&w->srv->accept_lock);
	}
	accept_failed(w, -fd);
}

static void event(struct worker *w, void *handler, uint32_t events)
{
	net_worker(w)->hooks->event(handler, events);
}

static const struct engine_upcalls upcalls = {
    .listener_ready = accept_all,
    .accepted = accepted,
    .event = event,
};

/*
 * w's wait failed with err. Short of kernel memory (ENOMEM, ENOBUFS; EAGAIN from io_uring,
 * which could not allocate for its submissions) the worker pauses WAIT_RETRY_NS and waits
 * again, for as long as the shortage lasts: its clients wait, none is dropped, and the line
 * is rate-limited (log.h). Any other failure would leave the connections queued on the
 * worker's listening socket (SO_REUSEPORT) unanswered, and its share of new ones: the
 * worker ends (closing its connections) and wakes the main loop (SIGTERM, which only the
 * main thread takes), which sees worker_failed and stops the server with status 1 (a
 * supervisor starts it again). True: wait again.
 */
static bool wait_failed(struct worker *w, int err)
{
	const char *engine = net_worker(w)->engine->name;
	if (err == ENOMEM || err == ENOBUFS || err == EAGAIN) {
		log_error("worker %d: %s wait: %s; waiting again in %d ms", w->id, engine,
		          strerror(err), WAIT_RETRY_NS / 1000000);
		nanosleep(&(struct timespec){.tv_nsec = WAIT_RETRY_NS}, NULL);
		return true;
	}
	log_error("worker %d: %s wait: %s; stopping the server", w->id, engine, strerror(err));
	w->srv->worker_failed = 1;
	kill(getpid(), SIGTERM);
	return false;
}

const char *worker_engine_name(struct worker *w)
{
	return net_worker(w)->engine->name;
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct net_worker *nw = net_worker(w);
	time_t last_sweep = clock_seconds();
	db_gen_worker_start(w);
	for (;;) {
		/* Wakes once a second at least, to close clients past write_timeout or
		 * idle_timeout, and when the first of the waking queue is due (conn.h,
		 * conn_wake_at). */
		uint64_t timeout = nw->ready ? 0 : 1000000000u;
		if (timeout && nw->wake_ns) {
			uint64_t now = clock_ns();
			if (nw->wake_ns <= now)
				timeout = 0;
			else if (nw->wake_ns - now < timeout)
				timeout = nw->wake_ns - now;
		}
		if (nw->engine->wait(w, timeout) < 0 && !wait_failed(w, errno))
			break;
		if (w->srv->stopping)
			break;
		nw->round_ns = clock_ns();
		/* Between operations: a new import, if one was published, serves from here on. */
		db_gen_worker_switch(w);
		nw->engine->dispatch(w, &upcalls);
		if (__atomic_exchange_n(&nw->listen_release, false, __ATOMIC_ACQ_REL))
			set_listening(w, true); /* listeners_open: they listen now */
		nw->hooks->run_ready(w);
		access_log_tick(w); /* a few writes a second for all the lines */
		time_t now = clock_seconds();
		if (now != last_sweep) {
			last_sweep = now;
			/* Retries a lost spare descriptor and paused listeners. */
			worker_fd_freed(w);
			nw->hooks->sweep(w, now);
			db_gen_worker_sweep(w); /* searches on a database two reloads old */
		}
	}
	nw->hooks->stop(w);
	nw->engine->teardown(w);
	return NULL;
}
