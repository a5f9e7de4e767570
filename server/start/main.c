/* minidir: the server's command line, signals and lifetime; the pid file and the switch
 * away from root. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/cli.h"
#include "conf/config.h"
#include "server/db/db.h"
#include "server/net/listeners.h"
#include "server/log.h"
#include "server/start/startup.h"

/*
 * What a server started by root (or an init system without systemd) needs:
 * a pid file, and giving up root after the ports are bound (user/group keys).
 * Main thread only, after listeners_bind and before the workers start (main).
 */

/* Writes the process ID to cfg->pid_file (if set; mode 0644, replaced). Returns 0, or -1
 * after logging the file and the reason. */
static int daemon_write_pid(const struct config *cfg)
{
	if (!cfg->pid_file[0])
		return 0;
	FILE *f = fopen(cfg->pid_file, "w");
	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
		log_error("pid_file %s: %s", cfg->pid_file, strerror(errno));
		return -1;
	}
	return 0;
}

/* Removes the pid file (if set and still ours); a failure is only logged. */
static void daemon_remove_pid(const struct config *cfg)
{
	if (!cfg->pid_file[0])
		return;
	FILE *f = fopen(cfg->pid_file, "r");
	long pid = 0;
	bool ours = f && fscanf(f, "%ld", &pid) == 1 && pid == (long)getpid();
	if (f)
		fclose(f);
	if (ours && unlink(cfg->pid_file) < 0)
		log_info("pid_file %s: %s (left in place: after dropping root the directory may "
		         "not be writable)",
		         cfg->pid_file, strerror(errno));
}

/*
 * With cfg->user (and optionally cfg->group; else the user's primary group) set:
 * switches to them for good (supplementary groups, gid, uid), and checks that root
 * cannot be regained. Returns 0; -1 after logging why (an unknown name, not running as
 * root, a failed call): the server must not go on.
 */
static int daemon_drop_privileges(const struct config *cfg)
{
	if (!cfg->user[0])
		return 0;
	struct passwd *pw = getpwnam(cfg->user);
	if (!pw) {
		log_error("user %s: no such user", cfg->user);
		return -1;
	}
	gid_t gid = pw->pw_gid;
	if (cfg->group[0]) {
		struct group *gr = getgrnam(cfg->group);
		if (!gr) {
			log_error("group %s: no such group", cfg->group);
			return -1;
		}
		gid = gr->gr_gid;
	}
	if (geteuid() != 0) {
		log_error("user = %s: switching users needs root (minidir runs as uid %ld); leave "
		          "user and group unset",
		          cfg->user, (long)geteuid());
		return -1;
	}
	/* The pid file becomes the user's, so that the server can remove it at its stop. */
	if (cfg->pid_file[0] && chown(cfg->pid_file, pw->pw_uid, gid) < 0)
		log_info("pid_file %s: chown: %s", cfg->pid_file, strerror(errno));
	if (initgroups(pw->pw_name, gid) < 0 || setgid(gid) < 0 || setuid(pw->pw_uid) < 0) {
		log_error("user %s: %s", cfg->user, strerror(errno));
		return -1;
	}
	if (pw->pw_uid != 0 && setuid(0) == 0) {
		log_error("user %s: root could be regained after switching; stopping", cfg->user);
		return -1;
	}
	log_info("running as user %s (uid %ld), group %ld", cfg->user, (long)pw->pw_uid, (long)gid);
	return 0;
}

static const char usage[] =
    "usage: minidir -f CONFIG [-d] [-t | -c]\n"
    "\n"
    "A read-only LDAPv3 search server over a database built by minidir-import.\n"
    "Runs in the foreground and logs to standard error; SIGTERM or SIGINT stop it,\n"
    "SIGHUP re-reads the configuration (tunables, access rules, TLS files); a new\n"
    "minidir-import of the database is served within a second, without a restart.\n"
    "\n"
    "  -f CONFIG     configuration file (see conf/minidir.conf)\n"
    "  -d            debug logging: connections and operations\n"
    "  -t            check the configuration and database, then exit (binds no port)\n"
    "  -c, --can-serve\n"
    "                exit 0 if there is something to serve (the database file exists,\n"
    "                or a syncrepl key is set), 1 with one line on standard error if\n"
    "                not, 255 on a configuration error: the systemd unit's\n"
    "                ExecCondition= (255 fails the unit, 1 skips its start)\n"
    "  -h, --help    this help; --version: the version\n";

/*
 * --can-serve: whether the server has something to serve, for systemd's ExecCondition=
 * (packaging/minidir.service.in). A server without a database would stop at start-up
 * with an error, and the unit would be marked failed on a machine where the package was
 * only installed; an empty suffix served instead would answer noSuchObject to every
 * client as if the directory were empty (docs/install.md says why the first was chosen).
 * Exit statuses, as ExecCondition= reads them: 1..254 skip the unit (not failed), 255
 * fails it.
 */
enum { CAN_SERVE_YES = 0, CAN_SERVE_NO = 1, CAN_SERVE_CONFIG_ERROR = 255 };

/*
 * CAN_SERVE_YES when cfg has a syncrepl key (a replica makes its database) or something
 * is at cfg->database (whether it can be read is start-up's to say, with its error);
 * else CAN_SERVE_NO after one line on standard error: "minidir: no database at PATH and
 * no syncrepl: import one with minidir-import -f CONFIG data.ldif".
 */
static int can_serve_status(const struct config *cfg)
{
	if (cfg->syncrepl.set)
		return CAN_SERVE_YES;
	struct stat st;
	/* Only a path that names nothing means no database: a file start-up cannot read
	 * (EACCES on it or its directory) gets start-up's error, which says how to fix it. */
	if (stat(cfg->database, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return CAN_SERVE_YES;
	fprintf(stderr,
	        "minidir: no database at %s and no syncrepl: import one with minidir-import -f "
	        "%s data.ldif\n",
	        cfg->database, cfg->path);
	return CAN_SERVE_NO;
}

/* The signals the main thread takes with sigwait, blocked: workers inherit the mask. */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, DB_WATCH_SIGNAL);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* -t: the configuration and the database checked, every page read; binds no port.
 * Returns the exit status. */
static int check_and_exit(struct server *srv, const char *config)
{
	int status = server_check_pages(srv) < 0 ? 1 : 0;
	if (status == 0)
		printf("minidir: %s: configuration and database OK\n", config);
	server_stop(srv);
	return status;
}

/*
 * The main thread's life once serving: it takes the signals in set (SIGHUP reloads, a
 * lease broken on the database file or SIGTERM/SIGINT stop) and wakes once a second to
 * report log lines held back by rate limiting and to pick up a new import of the
 * database. Returns the exit status.
 */
static int serve_until_stopped(struct server *srv, const sigset_t *set)
{
	for (;;) {
		struct timespec second = {.tv_sec = 1};
		siginfo_t si;
		int sig = sigtimedwait(set, &si, &second);
		log_tick();
		if (srv->worker_failed) { /* its SIGTERM woke this wait */
			log_error("a worker stopped on a failed wait (logged above); stopping");
			return 1;
		}
		if (sig < 0) {
			server_db_check(srv);
			listeners_hold_tick(srv);
			continue;
		}
		if (sig == SIGHUP) {
			server_reload(srv);
			continue;
		}
		if (sig == DB_WATCH_SIGNAL && si.si_fd != srv->db_watch_fd)
			continue; /* the lease of a file replaced by a reload: nobody serves it */
		if (sig == DB_WATCH_SIGNAL) {
			log_error("%s is being written in place by another process (opened for "
			          "writing or truncated); stopping before it changes under the "
			          "server. Replace it with minidir-import, which writes a new file "
			          "and renames it.",
			          srv->cfg.database);
			return 1;
		}
		log_info("%s: stopping", strsignal(sig));
		return 0;
	}
}

int main(int argc, char **argv)
{
	bool check_only = false, can_serve = false;
	const struct cli_flag flags[] = {{'d', &log_debug_enabled, NULL, NULL},
	                                 {'t', &check_only, NULL, NULL},
	                                 {'c', &can_serve, NULL, "can-serve"}};
	struct cli cli = {.prog = "minidir", .usage = usage, .flags = flags, .nflags = 3};
	static struct server srv;
	int status = cli_parse(&cli, argc, argv);
	if (status >= 0)
		return status;
	if (cli_load_config(&cli, &srv.cfg) < 0)
		return can_serve ? CAN_SERVE_CONFIG_ERROR : 1;
	if (can_serve) {
		status = can_serve_status(&srv.cfg);
		config_free(&srv.cfg);
		return status;
	}
	sigset_t set;
	block_signals(&set);
	srv.check_only = check_only;
	if (server_init(&srv) < 0) {
		server_stop(&srv);
		return 1;
	}
	if (check_only)
		return check_and_exit(&srv, cli.config);
	/* Ports (389, 636), the pid file under /run and the database are opened as root;
	 * then root is given up, before any client is served. */
	if (listeners_bind(&srv) < 0 || daemon_write_pid(&srv.cfg) < 0 ||
	    daemon_drop_privileges(&srv.cfg) < 0 || server_start(&srv) < 0) {
		daemon_remove_pid(&srv.cfg);
		server_stop(&srv);
		return 1;
	}
	status = serve_until_stopped(&srv, &set);
	daemon_remove_pid(&srv.cfg);
	server_stop(&srv);
	log_info("stopped");
	return status;
}
