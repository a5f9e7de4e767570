/*
 * The configuration file: "key = value" lines (libinih), '#' or ';'
 * comments, no sections. conf/minidir.conf documents every key. Relative
 * paths are taken from the directory the program runs in, as slapd does.
 *
 * The keys are config.c's key table (config_keys, read through conf/keyval.h): a key is
 * added there, one line, with the function that reads its value (conf/config_set.h).
 */
#ifndef MINIDIR_CONF_CONFIG_H
#define MINIDIR_CONF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/access_rule.h"
#include "conf/ip_net.h"
#include "conf/listen_addr.h"
#include "conf/send_policies.h"
#include "conf/metrics_addr.h"
#include "conf/syncrepl.h"

#define CONFIG_MAX_LISTEN 16
/* Networks proxy_from names at most. */
#define CONFIG_MAX_PROXY_FROM 32
#define CONFIG_MAX_INDEX 32
#define CONFIG_MAX_ACCESS 128
/* Longest line libinih reads whole, with its newline (INI_MAX_LINE). */
#define CONFIG_MAX_LINE 200

/* SEND_CORK_TOGGLE, SEND_NODELAY_ONCE, ...: see conf/send_policies.h. */
enum send_policy_id {
#define SEND_POLICY_ENUM(E, ident, name) SEND_##E,
	SEND_POLICY_LIST(SEND_POLICY_ENUM)
#undef SEND_POLICY_ENUM
	    SEND_POLICY_N
};

/* What the workers' event loops wait with (io_engine). */
enum io_engine { IO_ENGINE_EPOLL, IO_ENGINE_IO_URING };

/* Whether the database file is read with the kernel's read-ahead (database_readahead):
 * auto decides at each open from the file's size and the memory the process may use. */
enum db_readahead { DB_READAHEAD_AUTO, DB_READAHEAD_ON, DB_READAHEAD_OFF };

/* Who may read cn=monitor. */
enum monitor_access { MONITOR_ROOTDN, MONITOR_AUTHENTICATED, MONITOR_ANONYMOUS, MONITOR_NONE };

/* Client certificates (tls_verify_client), as slapd's TLSVerifyClient. */
enum tls_verify { TLS_VERIFY_NEVER, TLS_VERIFY_ALLOW, TLS_VERIFY_DEMAND };

struct config {
	char path[4096];
	struct listen_addr listen[CONFIG_MAX_LISTEN];
	int nlisten;
	char database[4096];
	enum db_readahead database_readahead;
	char suffix[1024];
	int threads;
	char rootdn[1024];
	char rootpw[256];
	enum send_policy_id send_policy;
	size_t batch_bytes;
	enum io_engine io_engine;      /* epoll (default) or io_uring, falling back to epoll */
	char *index[CONFIG_MAX_INDEX]; /* malloc'd attribute names */
	int nindex;
	size_t max_pdu_bytes;              /* largest request of a bound client */
	size_t max_pdu_bytes_anonymous;    /* largest request of a client that has not bound */
	size_t max_input_bytes_per_worker; /* request bytes a worker buffers for all its clients */
	int pdu_timeout; /* seconds a request may take to arrive whole; 0: forever */
	size_t max_pending_bytes;
	enum monitor_access monitor_access;
	int write_timeout; /* seconds a client may leave output unread; 0: forever */
	int idle_timeout;  /* seconds a connection may sit without a request; 0: forever */
	char schema_dir[1024];
	/* schema_dir was not set and SCHEMA_DEFAULT_DIR does not exist: schema_dir is the
	 * source tree's schema/ beside the running program (conf/tree_schema.h) */
	bool schema_dir_from_tree;
	char schema[256];      /* space-separated schema names, read as schema_dir/NAME.schema */
	int sizelimit;         /* entries per search at most; 0: unlimited */
	int timelimit;         /* seconds per search at most; 0: unlimited */
	bool allow_anonymous;  /* anonymous clients may search */
	char access_log[1024]; /* none, stderr, syslog or a file path */
	char user[64];         /* switch to this user after binding ("" = stay) */
	char group[64];        /* and this group ("" = the user's primary group) */
	char pid_file[1024];   /* the process ID is written here ("" = none) */
	/* TLS (ldaps:// listeners and StartTLS): off while tls_cert_file is empty. */
	char tls_cert_file[1024]; /* PEM: the certificate, then its chain */
	char tls_key_file[1024];  /* PEM private key */
	char tls_ca_file[1024];   /* PEM CAs that client certificates must chain to */
	enum tls_verify tls_verify_client;
	char tls_ciphers[1024];      /* OpenSSL cipher list for TLS 1.2 ("" = OpenSSL's default) */
	char tls_ciphersuites[1024]; /* TLS 1.3 suites ("" = OpenSSL's default) */
	int tls_min_version;         /* 12 or 13 */
	int tls_handshake_timeout;   /* seconds a handshake may take */
	bool require_tls;            /* binds, searches, compares need TLS (rootDSE exempt) */
	bool tls_ktls;               /* kernel TLS for sending where the kernel has it (tls_ktls) */
	/* Access rules in order (conf/access_rule.h), malloc'd; without an access key the
	 * built-in two (userPassword for self and binding, everything else readable). */
	struct access_rule *access;
	int naccess;
	/* A search's cost, for all but the rootdn (adminLimitExceeded past either); 0: unlimited.
	 * Items of its filter (filter_items), and work evaluating it over all its candidates
	 * and pages (struct filter_ctx's units). */
	size_t max_filter_items;
	unsigned long long max_search_work;
	/* Entry IDs the in-chain items of one search may reach, all together (the rootdn's too:
	 * it bounds the memory and the walk's time); 0: unlimited. */
	size_t inchain_max;
	/* A replica (conf/syncrepl.h): set when the file has a syncrepl key. */
	struct syncrepl_conf syncrepl;
	char updateref[1024]; /* writes are referred here ("" = refused with 53) */
	/* A replica listens only once its first refresh has committed, or after this many
	 * seconds at most; 0: at once. */
	int listen_after_refresh;
	/* Abuse limits, read at start-up (docs/reliability.md); 0: off. Failed simple binds
	 * per bind DN and per client address within bind_fail_window seconds, after which
	 * their binds are refused unchecked for the rest of the window (server/bind_limit.h);
	 * connections open at once per client address (server/addr_conns.h). */
	int bind_fail_limit;
	int bind_fail_window;
	int max_conns_per_ip;
	/* A replica forwards password changes to its provider as the user (server/replica/
	 * replica.h, chain_submit); the answer waits up to chain_wait_ms for the change to
	 * arrive back. Off by default; only with syncrepl. */
	bool chain_passwd;
	int chain_wait_ms;
	/* Account state at bind (server/ops/account.h): the password policy of entries without
	 * pwdPolicySubentry (slapd's ppolicy_default; "": none), whether the Password Policy
	 * control tells a locked account so (slapd's ppolicy_use_lockout), and failed binds
	 * replayed to the provider, which counts them (chain_bind_failures; only with syncrepl). */
	char ppolicy_default[1024];
	bool ppolicy_use_lockout;
	bool chain_bind_failures;
	/* The operators' HTTP endpoint (server/monitor/http.h): off unless metrics_listen is
	 * set; an address off the loopback needs metrics_allow_remote. /readyz answers 503 on
	 * a replica more than ready_max_lag_ms behind (server/monitor/metrics.h says how
	 * measured). */
	struct metrics_addr metrics_listen;
	bool metrics_allow_remote;
	int ready_max_lag_ms;
	/* memberOf with groups in groups (storage/memberof_nested.h): read by minidir-import,
	 * which records it in the file; a replica's changes keep what the file records. */
	bool memberof_nested;
	/* Who may send a PROXY protocol header on a pldap:// or pldaps:// listener (required
	 * when there is one): the load balancers' addresses or networks. */
	struct ip_net proxy_from[CONFIG_MAX_PROXY_FROM];
	int nproxy_from;
	/* Dynamic groups (storage/dyngroup.h): minidir-import gives groupOfURLs entries the
	 * members their memberURL values find, at most dynamic_groups_max URLs in all. Off by
	 * default; not on a replica (syncrepl), which does not keep them. */
	bool dynamic_groups;
	int dynamic_groups_max;
	/* The memory the memos of a served file take at most, record and key memos together
	 * (storage/db.h, db_open_served): applied as each database file is opened (start-up,
	 * a new import); 0: no memos; SIZE_MAX ("unlimited"): no bound. */
	size_t memo_bytes;
	/* Every key the file set, as written, in file order: "KEY\tVALUE\n" each (malloc'd,
	 * freed by config_free; NULL for none). What a SIGHUP compares key by key to tell which
	 * changed (config_key_changed). */
	char *raw;
	size_t raw_len;
};

/* The values key has in c's file, as written, each followed by a newline, in file order ("" when
 * the file does not set it). malloc'd, the caller's; NULL when out of memory. */
char *config_key_text(const struct config *c, const char *key);
/* True if the values key has in a's file differ from those in b's (config_key_text: all
 * lines of the key in order, so a key set on several lines, as access, counts as one);
 * true when out of memory (a change is never hidden). */
bool config_key_changed(const struct config *a, const struct config *b, const char *key);
/* Calls fn(key, arg) once for each key whose values differ between a's and b's files
 * (config_key_changed), in the order of the key table (conf/config.c). */
void config_changed_keys(const struct config *a, const struct config *b,
                         void (*fn)(const char *key, void *arg), void *arg);

/* What a SIGHUP does with a key whose value changed in the file: the key table's reload
 * column (conf/config.c); man/minidir.conf.5's RELOADING lists each class, and
 * scripts/conf_keys.sh checks the lists against the table. */
enum config_reload {
	CONFIG_RESTART,   /* nothing: the change is logged as needing a restart */
	CONFIG_AT_ONCE,   /* stored for requests that start afterwards (server.h's runtime
	                     values; send_policy: for connections accepted afterwards) */
	CONFIG_NEXT_FILE, /* stored for the next database file opened (a new import) */
	CONFIG_REOPENED,  /* access_log: its destination opened again, whether changed or not */
	CONFIG_TLS,       /* with TLS on at start-up: the TLS context made again from the files */
	CONFIG_RULES, /* access: the rules compiled again, for operations that start afterwards */
};
/* key's class; CONFIG_RESTART for a name the table lacks. */
enum config_reload config_key_reload(const char *key);
/* The name of the key table's i-th key, or NULL past its end. */
const char *config_key_at(size_t i);

/*
 * Reads path into cfg (defaults first, then the file). Returns 0, or -1 with
 * "path:line: reason" (or "path: reason") in err; cfg then owns nothing.
 */
int config_load(struct config *cfg, const char *path, char *err, size_t errlen);
void config_free(struct config *cfg);

/* The config-file name of a monitor_access value ("rootdn", ...). */
const char *config_monitor_access_name(enum monitor_access a);

/* A memo_bytes value as the config file writes it: "unlimited" for SIZE_MAX, "0 (no
 * memos)", else the number of bytes; in buf (CONFIG_MEMO_TEXT bytes), which it returns. */
#define CONFIG_MEMO_TEXT 32
const char *config_memo_bytes_text(size_t bytes, char buf[static CONFIG_MEMO_TEXT]);

/* The config-file name of a tls_verify_client value ("never", ...). */
const char *config_tls_verify_name(enum tls_verify v);

/* The config-file name of a send policy ("nodelay-once", ...). */
const char *config_policy_name(enum send_policy_id id);
/* "epoll" or "io_uring". */
const char *config_io_engine_name(enum io_engine e);

#endif
