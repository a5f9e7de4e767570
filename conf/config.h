/*
 * The configuration file: "key = value" lines (libinih), '#' or ';'
 * comments, no sections. conf/minidir.conf documents every key. Relative
 * paths are taken from the directory the program runs in, as slapd does.
 *
 * The keys are the key table below (CONFIG_KEYS): one row a key declares its member of
 * struct config and gives conf/config.c's table (read through conf/keyval.h) its set
 * function, range, default and reload class.
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
#define CONFIG_MAX_PROXY_FROM 32 /* and snapshot_allow's */
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
/* memberof_nested: auto is no, but for a new replica of a 389-ds provider, whose memberOf
 * plugin nests (server/replica/ds389_policy.c). */
enum memberof_nested_mode { MEMBEROF_NESTED_NO, MEMBEROF_NESTED_YES, MEMBEROF_NESTED_AUTO };

/* Who may read cn=monitor. */
enum monitor_access { MONITOR_ROOTDN, MONITOR_AUTHENTICATED, MONITOR_ANONYMOUS, MONITOR_NONE };

/* Whether a SASL bind may act as another identity it names (authz_policy): never, or
 * as the bound entry's authzTo values allow (slapd's authz-policy to). */
enum authz_policy { AUTHZ_POLICY_NONE, AUTHZ_POLICY_TO };

/* One authz_regexp rule: an extended regular expression (matched without case against
 * the normal form of an authentication DN) and what it makes of it: a DN, or an LDAP URL
 * whose search finds one entry; $0-$9 are the match's groups. Both malloc'd. */
struct authz_regexp {
	char *match;
	char *replace;
};
#define CONFIG_MAX_AUTHZ_REGEXP 64

/* Client certificates (tls_verify_client), as slapd's TLSVerifyClient. */
enum tls_verify { TLS_VERIFY_NEVER, TLS_VERIFY_ALLOW, TLS_VERIFY_DEMAND };

/*
 * Every key of minidir.conf, one row a key, in the order SIGHUP's log and the man page's
 * reference list them: the key table. A row is
 *     KEY(name, C type, array bounds, set function, the table's other columns)
 * for a key that fills the struct config member of its own name (declared from the row),
 * or OWN_KEY(name, set function, columns) for one whose set function fills members of its
 * own (declared in struct config below). The columns (conf/keyval.h's struct kv_key): a
 * number's range (.min, .max), a choice's names (.names), the default as the file would
 * write it (.def; none: zero, empty or off), and what a SIGHUP does with a changed value
 * (.reload, enum config_reload; none: a restart is needed). Adding a key is one row here,
 * its entry in man/minidir.conf.5 and its line in conf/minidir.conf: scripts/conf_keys.sh
 * reads the names, defaults and reload classes from these rows and checks both documents.
 * The set functions and the choices' names are conf/config.c's and conf/config_set.h's.
 */
/* clang-format off */
#define CONFIG_KEYS(KEY, OWN_KEY) \
	OWN_KEY(listen, set_listen) /* listen[], nlisten */ \
	KEY(database, char, [4096], config_set_database) \
	KEY(database_readahead, enum db_readahead, , config_set_choice, .names = readahead_names, .def = "auto") \
	KEY(suffix, char, [1024], config_set_suffix, .min = 1) \
	KEY(threads, int, , config_set_count, .min = 1, .max = 256, .def = "2") \
	KEY(rootdn, char, [1024], config_set_dn, .min = 0) \
	KEY(rootpw, char, [256], config_set_string) \
	/* after binding the sockets, switch to this user ("" = stay) and group ("" = the \
	   user's primary group); the process ID is written to pid_file ("" = none) */ \
	KEY(user, char, [64], config_set_string) \
	KEY(group, char, [64], config_set_string) \
	KEY(pid_file, char, [1024], config_set_string) \
	KEY(schema_dir, char, [1024], config_set_string, .def = SCHEMA_DEFAULT_DIR) \
	/* space-separated schema names, read as schema_dir/NAME.schema */ \
	KEY(schema, char, [256], config_set_string, .def = SCHEMA_DEFAULT_FILES) \
	OWN_KEY(index, set_index, .def = "objectClass, uid, cn, mail, member") /* index[], nindex */ \
	OWN_KEY(access, set_access, .reload = CONFIG_RULES) /* access, naccess */ \
	/* anonymous clients may search */ \
	KEY(allow_anonymous, bool, , config_set_bool, .def = "yes", .reload = CONFIG_AT_ONCE) \
	/* entries and seconds per search at most; 0: unlimited */ \
	KEY(sizelimit, int, , config_set_limit, .def = "500", .reload = CONFIG_AT_ONCE) \
	KEY(timelimit, int, , config_set_limit, .def = "3600", .reload = CONFIG_AT_ONCE) \
	/* A search's cost, for all but the rootdn (adminLimitExceeded past either); 0: \
	   unlimited. Items of its filter (filter_items), and work evaluating it over all its \
	   candidates and pages (struct filter_ctx's units). */ \
	KEY(max_filter_items, size_t, , config_set_filter_items, .max = 1L << 32, .def = "1000", .reload = CONFIG_AT_ONCE) \
	KEY(max_search_work, unsigned long long, , config_set_search_work, .max = 1L << 60, .def = "50000000", .reload = CONFIG_AT_ONCE) \
	/* Entry IDs the in-chain items of one search may reach, all together (the rootdn's \
	   too: it bounds the memory and the walk's time); 0: unlimited. */ \
	KEY(inchain_max, size_t, , config_set_filter_items, .max = 1L << 32, .def = "100000", .reload = CONFIG_AT_ONCE) \
	/* none, stderr, syslog or a file path */ \
	KEY(access_log, char, [1024], config_set_access_log, .def = "none", .reload = CONFIG_REOPENED) \
	/* who may read cn=monitor */ \
	KEY(monitor_access, enum monitor_access, , config_set_choice, .names = monitor_access_names, .def = "rootdn", .reload = CONFIG_AT_ONCE) \
	KEY(send_policy, enum send_policy_id, , config_set_choice, .names = policy_names, .def = "batch", .reload = CONFIG_AT_ONCE) \
	/* epoll (default) or io_uring, falling back to epoll */ \
	KEY(io_engine, enum io_engine, , config_set_choice, .names = io_engine_names, .def = "epoll") \
	KEY(batch_bytes, size_t, , config_set_size, .min = 512, .max = 16L << 20, .def = "64K", .reload = CONFIG_AT_ONCE) \
	/* the largest request of a bound client, of one that has not bound; the request bytes \
	   a worker buffers for all its clients */ \
	KEY(max_pdu_bytes, size_t, , config_set_size, .min = 1024, .max = 64L << 20, .def = "1M") \
	KEY(max_pdu_bytes_anonymous, size_t, , config_set_size, .min = 1024, .max = 64L << 20, .def = "256K") \
	KEY(max_input_bytes_per_worker, size_t, , config_set_size, .min = 64L << 10, .max = 1L << 30, .def = "16M") \
	KEY(max_pending_bytes, size_t, , config_set_size, .min = 4096, .max = 1L << 30, .def = "4M", .reload = CONFIG_AT_ONCE) \
	/* seconds a request may take to arrive whole, a client may leave output unread, a \
	   connection may sit without a request; 0: forever */ \
	KEY(pdu_timeout, int, , config_set_seconds, .min = 0, .max = 86400, .def = "10", .reload = CONFIG_AT_ONCE) \
	KEY(write_timeout, int, , config_set_seconds, .min = 0, .max = 86400, .def = "30", .reload = CONFIG_AT_ONCE) \
	KEY(idle_timeout, int, , config_set_seconds, .min = 0, .max = 86400, .def = "0", .reload = CONFIG_AT_ONCE) \
	/* TLS (ldaps:// listeners and StartTLS): off while tls_cert_file is empty. PEM files: \
	   the certificate then its chain, the private key, the CAs client certificates must \
	   chain to; OpenSSL's cipher list for TLS 1.2 and suites for 1.3 ("" = its default); \
	   tls_min_version is stored as 12 or 13. */ \
	KEY(tls_cert_file, char, [1024], config_set_string, .reload = CONFIG_TLS) \
	KEY(tls_key_file, char, [1024], config_set_string, .reload = CONFIG_TLS) \
	KEY(tls_ca_file, char, [1024], config_set_string, .reload = CONFIG_TLS) \
	KEY(tls_verify_client, enum tls_verify, , config_set_choice, .names = tls_verify_names, .def = "never", .reload = CONFIG_TLS) \
	KEY(tls_ciphers, char, [1024], config_set_string, .reload = CONFIG_TLS) \
	KEY(tls_ciphersuites, char, [1024], config_set_string, .reload = CONFIG_TLS) \
	KEY(tls_min_version, int, , config_set_tls_min_version, .def = "1.2", .reload = CONFIG_TLS) \
	KEY(tls_handshake_timeout, int, , config_set_seconds, .min = 1, .max = 3600, .def = "10", .reload = CONFIG_AT_ONCE) \
	/* binds, searches, compares need TLS (the root DSE exempt) */ \
	KEY(require_tls, bool, , config_set_bool, .def = "no", .reload = CONFIG_AT_ONCE) \
	/* kernel TLS for sending where the kernel has it */ \
	KEY(tls_ktls, bool, , config_set_bool, .def = "no") \
	/* A replica (conf/syncrepl.h): set when the file has a syncrepl key; writes are \
	   referred to updateref ("" = refused with 53). */ \
	KEY(syncrepl, struct syncrepl_conf, , config_set_syncrepl) \
	KEY(updateref, char, [1024], config_set_url) \
	/* A 389-ds provider: seconds between comparisons of the replica's entries with the \
	   provider's (server/replica/apply.h, replica_reconcile); 0: never. */ \
	KEY(reconcile_interval, int, , config_set_seconds, .min = 0, .max = 604800, .def = "3600") \
	/* A replica listens only once its first refresh has committed, or after this many \
	   seconds at most; 0: at once. */ \
	KEY(listen_after_refresh, int, , config_set_seconds, .min = 0, .max = 86400, .def = "0") \
	/* Abuse limits, read at start-up (docs/reliability.md); 0: off. Failed simple binds \
	   per bind DN and per client address within bind_fail_window seconds, after which \
	   their binds are refused unchecked for the rest of the window (server/bind_limit.h); \
	   connections open at once per client address (server/addr_conns.h). */ \
	KEY(bind_fail_limit, int, , config_set_count, .min = 0, .max = 1000000, .def = "0") \
	KEY(bind_fail_window, int, , config_set_seconds, .min = 1, .max = 86400, .def = "300") \
	KEY(max_conns_per_ip, int, , config_set_count, .min = 0, .max = 1000000, .def = "0") \
	/* A replica forwards password changes to its provider as the user (server/replica/ \
	   replica.h, chain_submit); the answer waits up to chain_wait_ms for the change to \
	   arrive back. Off by default; only with syncrepl. */ \
	KEY(chain_passwd, bool, , config_set_bool, .def = "no") \
	KEY(chain_wait_ms, int, , config_set_count, .min = 0, .max = 60000, .def = "2000") \
	/* Account state at bind (server/ops/account.h): the password policy of entries \
	   without pwdPolicySubentry (slapd's ppolicy_default; "": none), whether the Password \
	   Policy control tells a locked account so (slapd's ppolicy_use_lockout), and failed \
	   binds replayed to the provider, which counts them (only with syncrepl). */ \
	KEY(ppolicy_default, char, [1024], config_set_dn, .min = 1) \
	KEY(ppolicy_use_lockout, bool, , config_set_bool, .def = "no") \
	KEY(chain_bind_failures, bool, , config_set_bool, .def = "no") \
	/* A simple bind of an entry with no password here checked by the provider (an \
	   Active Directory DC never gives out its hashes): server/ops/op_bind.c. */ \
	KEY(bind_passthrough, bool, , config_set_bool, .def = "no") \
	/* Seconds a bind the provider accepted is remembered, for binds while it cannot be \
	   asked (server/replica/bind_cache.h); 0: never. */ \
	KEY(bind_passthrough_cache, int, , config_set_count, .min = 0, .max = 604800, .def = "0") \
	/* SASL GSSAPI binds (Kerberos, through Cyrus SASL: server/net/sasl.h): offered while \
	   sasl_keytab can be read; the service is ldap/sasl_host@sasl_realm (empty: the \
	   machine's name, the Kerberos default realm). sasl_minssf: the least security \
	   strength a SASL bind must end with (a GSSAPI layer's, or TLS's); sasl_maxssf: the \
	   most the GSSAPI layer may give (0: no layer). The identity it names is \
	   uid=USER,cn=REALM,cn=gssapi,cn=auth, made a DN by the first authz_regexp rule \
	   that matches (server/ops/authz_map.h: a DN, or an LDAP URL searched). A bind that \
	   asks to act as another identity (proxy authorization) is refused (50) unless \
	   authz_policy = to and the bound entry's authzTo allows it (server/ops/ \
	   authz_proxy.h), as slapd's authz-policy none and to. */ \
	KEY(sasl_keytab, char, [1024], config_set_string, .def = "/etc/krb5.keytab") \
	KEY(sasl_host, char, [256], config_set_string) \
	KEY(sasl_realm, char, [256], config_set_string) \
	KEY(sasl_minssf, int, , config_set_count, .min = 0, .max = 256, .def = "0") \
	KEY(sasl_maxssf, int, , config_set_count, .min = 0, .max = 256, .def = "256") \
	OWN_KEY(authz_regexp, set_authz_regexp) /* authz_regexp[], nauthz_regexp */ \
	KEY(authz_policy, enum authz_policy, , config_set_choice, .names = authz_policy_names, .def = "none") \
	/* The operators' HTTP endpoint (server/monitor/http.h): off unless metrics_listen is \
	   set; an address off the loopback needs metrics_allow_remote. /readyz answers 503 on \
	   a replica more than ready_max_lag_ms behind (server/monitor/metrics.h says how \
	   measured). */ \
	KEY(metrics_listen, struct metrics_addr, , config_set_metrics_listen) \
	KEY(metrics_allow_remote, bool, , config_set_bool, .def = "no") \
	/* The endpoint over TLS (https://) with tls_cert_file and tls_key_file, which it \
	   needs (server/net/tls_socket.h); no client certificate is asked for. */ \
	KEY(metrics_tls, bool, , config_set_bool, .def = "no") \
	KEY(ready_max_lag_ms, int, , config_set_count, .min = 100, .max = 86400000, .def = "30000") \
	/* Content Synchronization answered (RFC 4533: server/ops/search_sync.h), so that \
	   replicas follow this one: only on a replica (syncrepl); the changes kept for \
	   persistent searches (server/change_feed.h), past which one is refreshed again. */ \
	KEY(sync_provider, bool, , config_set_bool, .def = "no") \
	KEY(sync_provider_log, int, , config_set_count, .min = 100, .max = 1000000, .def = "10000") \
	/* Who may take /snapshot, a consistent copy of the database file with its cookie \
	   (server/monitor/snapshot.h; a new replica's syncrepl seed=): addresses or \
	   networks; none by default, which answers 403 to everyone. */ \
	OWN_KEY(snapshot_allow, set_snapshot_allow) /* snapshot_allow[], nsnapshot_allow */ \
	/* memberOf with groups in groups (storage/memberof_nested.h): read by \
	   minidir-import, which records it in the file; a replica's changes keep what the \
	   file records. auto: no, but yes for a new replica of a 389-ds provider. */ \
	KEY(memberof_nested, enum memberof_nested_mode, , config_set_choice, .names = memberof_nested_names, .def = "auto") \
	/* Who may send a PROXY protocol header on a pldap:// or pldaps:// listener (required \
	   when there is one): the load balancers' addresses or networks. */ \
	OWN_KEY(proxy_from, set_proxy_from) /* proxy_from[], nproxy_from */ \
	/* Dynamic groups (storage/dyngroup.h): minidir-import gives groupOfURLs entries the \
	   members their memberURL values find, at most dynamic_groups_max URLs in all. Off \
	   by default; not on a replica (syncrepl), which does not keep them. */ \
	KEY(dynamic_groups, bool, , config_set_bool, .def = "no") \
	KEY(dynamic_groups_max, int, , config_set_count, .min = 1, .max = 1000000, .def = "1000") \
	/* The memory the memos of a served file take at most, record and key memos \
	   together (storage/db.h, db_open_served): applied as each database file is opened \
	   (start-up, a new import); 0: no memos; SIZE_MAX ("unlimited"): no bound. */ \
	KEY(memo_bytes, size_t, , config_set_memo_bytes, .min = 0, .max = 1L << 40, .def = "auto", .reload = CONFIG_NEXT_FILE)
/* clang-format on */

struct config {
	char path[4096];
	/* The members the OWN_KEY rows fill. */
	struct listen_addr listen[CONFIG_MAX_LISTEN];
	int nlisten;
	char *index[CONFIG_MAX_INDEX]; /* malloc'd attribute names */
	int nindex;
	/* Access rules in order (conf/access_rule.h), malloc'd; without an access key the
	 * built-in two (userPassword for self and binding, everything else readable). */
	struct access_rule *access;
	int naccess;
	struct ip_net proxy_from[CONFIG_MAX_PROXY_FROM];
	int nproxy_from;
	struct ip_net snapshot_allow[CONFIG_MAX_PROXY_FROM];
	int nsnapshot_allow;
	struct authz_regexp authz_regexp[CONFIG_MAX_AUTHZ_REGEXP]; /* in file order */
	int nauthz_regexp;
	/* schema_dir was not set and SCHEMA_DEFAULT_DIR does not exist: schema_dir is the
	 * source tree's schema/ beside the running program (conf/config.c) */
	bool schema_dir_from_tree;
	/* Every key the file set, as written, in file order: "KEY\tVALUE\n" each (malloc'd,
	 * freed by config_free; NULL for none). What a SIGHUP compares key by key to tell which
	 * changed (config_key_changed). */
	char *raw;
	size_t raw_len;
	/* One member per KEY row, named and typed as the row says. */
#define CONFIG_MEMBER(name, type, bounds, ...) type name bounds;
#define CONFIG_NO_MEMBER(name, ...)
	CONFIG_KEYS(CONFIG_MEMBER, CONFIG_NO_MEMBER)
#undef CONFIG_MEMBER
#undef CONFIG_NO_MEMBER
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

/* A memo_bytes value as the config file writes it: "unlimited" for SIZE_MAX, "auto" for
 * CONFIG_MEMO_AUTO, "0 (no memos)", else the number of bytes; in buf (CONFIG_MEMO_TEXT
 * bytes), which it returns. */
#define CONFIG_MEMO_TEXT 32
const char *config_memo_bytes_text(size_t bytes, char buf[static CONFIG_MEMO_TEXT]);

/* The config-file name of a tls_verify_client value ("never", ...). */
const char *config_tls_verify_name(enum tls_verify v);

/* The config-file name of a send policy ("nodelay-once", ...). */
const char *config_policy_name(enum send_policy_id id);
/* "epoll" or "io_uring". */
const char *config_io_engine_name(enum io_engine e);

#endif
