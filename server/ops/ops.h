/*
 * Operations: one handler per request type, chosen from a table by the
 * request's protocolOp tag (ops.c). Every handler runs on the connection's
 * worker thread, answers only through the reply API (reply.h), and reads the
 * database generation the worker serves (db_worker(w)->gen, server/db/generation.h) inside the
 * worker's read transaction (db_worker(w)->txn, renewed and reset by the handler); a search that
 * outlives a reload keeps reading its own generation. A request's strings point into the
 * connection's input and are valid only during the call; a handler that must keep something copies
 * it, except where stated below.
 *
 * This header is the room's public one, and a map of its files: each group names the file
 * it lives in. Start-up reaches the room through its life cycle (lifecycle.c) and
 * ops_dispatch (struct server's dispatch), the network room only through that callback.
 */
#ifndef MINIDIR_SERVER_OPS_OPS_H
#define MINIDIR_SERVER_OPS_OPS_H

#include <stdint.h>

#include "protocol/buf.h"
#include "protocol/request.h"
#include "protocol/response.h"
#include "protocol/tlv.h"
#include "server/net/conn.h"
#include "server/net/net_worker.h"

/*
 * The operations' part of a worker, owned by server/ops/: the event loop's part first
 * (struct net_worker, which begins with the database's and the shared struct worker),
 * then the caches the operations keep between requests. The top of a worker's stack of
 * parts: every worker is one (srv->workers[i] points to one), so ops_worker(w) is a
 * cast, no pointer to follow.
 */
struct ops_worker {
	struct net_worker net;        /* first: ops_worker() casts to it and back */
	struct access_rules *rules;   /* the access rules it hands to operations that
	                                 start, held (access.c; NULL until the first) */
	unsigned long rules_borrowed; /* its operations running under rules, which
	                                 borrow its reference (access_op_init) */
	struct buf extra;             /* operational attributes of the entry being sent */
	struct buf base_dn;           /* the last search base as sent, and its key (op_search.c) */
	struct buf base_key;
	uint64_t bind_took_ns; /* how long failed binds take to check, on average (op_bind.c) */
};

/* w's operations part: w is the base of a struct ops_worker, as every worker is. */
static inline struct ops_worker *ops_worker(struct worker *w)
{
	return (struct ops_worker *)w;
}

/* --- lifecycle.c: what the room keeps, from start-up to shut-down ----------------------- */

/*
 * Makes the room's part of srv (ops_impl.h) and compiles srv->cfg's access rules
 * (access.h) against the schema loaded into it: before the workers start, on the main
 * thread. Returns 0, or -1 after logging "config:line: access: reason" or running out of
 * memory (ops_stop frees what it made either way).
 */
int ops_start(struct server *srv);
/*
 * At a SIGHUP, n being the file as read again (main thread): if its access lines differ from
 * those of the rules in use, compiles them (taking them from n) and makes them the rules
 * of every operation that starts from now on, logging "SIGHUP: access rules replaced ...";
 * a rule that does not compile is logged at its line and the running rules are kept.
 */
void ops_reload_access(struct server *srv, struct config *n);
/* Frees what worker w kept for operations (the access rules' decisions, the computed
 * attributes' buffer, the last search base): after its thread has stopped. */
void ops_worker_free(struct worker *w);
/* Frees the room's part of srv (ops_impl.h: the access rules, the root DSE and cn=Subschema
 * records): after every worker has stopped and been freed; NULL-safe. */
void ops_stop(struct server *srv);
/*
 * True, after logging a warning naming rootpw's FILE:LINE, when srv->cfg's rootpw lets
 * the examples' password ("secret") bind: checked with password_check, so plaintext and
 * every hash of it that verifies are caught. At start-up and by minidir -t, once: a
 * changed rootpw needs a restart.
 */
bool ops_rootpw_is_example(const struct server *srv);

/* --- ops.c: the dispatch table, Unbind, Abandon, the write operations ------------------ */

/*
 * Runs req on c: traces it for the access log (op_trace, when the log is on), refuses a
 * critical control its operation does not apply (RFC 4511 4.1.11, op_controls' rows for
 * op_apply_of(req->op)) and, under require_tls, what needs TLS (confidentialityRequired),
 * counts the operation, calls its handler. An unknown operation closes c. req stays the
 * caller's, but a handler may take parts of it (op_search takes req->mem, the arena its
 * filter lives in).
 */
void ops_dispatch(struct conn *c, struct ldap_request *req);
/* The result tag of an operation (LDAP_RES_*), 0 for Unbind and Abandon, which have
 * none (critical.c). */
unsigned char ops_response_tag(ber_tag_t op);
/*
 * RFC 4511 4.1.11 for an operation that applies only the controls whose op_controls row
 * has a bit of apply (OP_APPLY_*): when req carries a critical control not among them,
 * answers unavailableCriticalExtension (12) and returns true (the operation must not be
 * performed); else false, nothing sent (critical.c).
 */
bool ops_refuse_critical(struct conn *c, const struct ldap_request *req, unsigned apply);

/* --- op_controls.c: the controls minidir applies, one table ----------------------------- */

/* What applies a control: a bit per kind of operation (a search has three, by base). */
enum op_apply {
	OP_APPLY_SEARCH = 1u << 0,  /* a search of the database (the dispatch's check) */
	OP_APPLY_BUILTIN = 1u << 1, /* a search of the root DSE, cn=Subschema (search_builtin.c) */
	OP_APPLY_MONITOR = 1u << 2, /* a search of cn=monitor (op_search.c) */
	OP_APPLY_COMPARE = 1u << 3,
	OP_APPLY_WRITE = 1u << 4, /* add, modify, delete, modDN: refused anyway (read-only) */
	OP_APPLY_BIND = 1u << 5,
};
/* One control minidir applies. The OID is protocol/controls.h's CONTROL_* (its one
 * definition); the strings are static. */
struct op_control {
	const char *oid;
	const char *name; /* a short name, for people */
	unsigned applies; /* OP_APPLY_* bits of the operations that apply it */
	bool listed;      /* listed in the root DSE's supportedControl (op_rootdse.c) */
};
/* The table, op_controls[0..op_ncontrols), read-only: the critical-control check and
 * supportedControl are made from it, so that each control is added in one place. */
extern const struct op_control op_controls[];
extern const size_t op_ncontrols;
/* The OP_APPLY_* bit of a request's operation (LDAP_REQ_*); 0 for those that apply no
 * control (extended operations, Unbind, Abandon). */
unsigned op_apply_of(ber_tag_t op);
/* Rows the table may have (op_controls.c checks it at compile time). */
enum { OP_CONTROLS_MAX = 16 };
/* Sets oids[0..n) (oids has room for OP_CONTROLS_MAX; the strings are the table's) to the
 * OIDs of the controls with a bit of apply, and returns n. */
size_t op_controls_applied(unsigned apply, const char **oids);

/* --- op_trace.c: the access log's text of a request ------------------------------------ */

/*
 * Numbers req among c's operations and writes its access log text (what, on what, by whom)
 * into c->op_text for reply.c to finish with the result; Unbind and Abandon, which have no
 * result, are logged at once. Call only when access_log_on.
 */
void op_trace(struct conn *c, const struct ldap_request *req);

/* --- op_bind.c: simple binds, and the decoy that hides which DNs exist ---------------- */

#include "server/ops/account.h"

void op_bind(struct conn *c, struct ldap_request *req);
/* A SASL bind of a mechanism Cyrus SASL serves (GSSAPI), one step of it: op_bind_sasl.c. */
void op_bind_sasl(struct conn *c, const struct ldap_request *req);

/*
 * Picks g->bind_decoy: a stored password value of the costliest scheme in use
 * (every userPassword in g's database, and rootpw), which a failed bind that did no
 * costly check (an unknown DN, no userPassword, a cheap scheme) is checked against
 * too, and g->bind_pad_ns, the least time after which a failed bind is answered, so
 * that its answer tells neither whether the DN exists nor its scheme. Logs the
 * schemes in use with their counts, and values of an unknown scheme. Reads every
 * entry once (at start-up and for each database reload, on the main thread).
 * Returns 0, or -1 after logging why.
 */
struct db_gen;
int op_bind_prepare(struct server *srv, struct db_gen *g);

/* --- op_compare.c ------------------------------------------------------------------------ */

void op_compare(struct conn *c, struct ldap_request *req);

/* --- op_extended.c: the extended operations, one table ---------------------------------- */

/* One extended operation minidir answers. The OID is ldap.h's LDAP_EXOP_*; the strings
 * are static. */
struct op_extension {
	const char *oid;
	const char *name; /* a short name, for people */
	/* Answers req (its requestName is oid) on c, through the reply API. */
	void (*handler)(struct conn *c, struct ldap_request *req);
	/* Whether srv answers it (else it is an unknown one: protocolError); NULL: always. */
	bool (*answered)(const struct server *srv);
	/* Whether the root DSE lists it in supportedExtension; NULL: whenever answered. */
	bool (*listed)(const struct server *srv);
};
/* The table, op_extensions[0..op_nextensions), read-only: op_extended dispatches from it,
 * op_rootdse_build lists supportedExtension from it. */
extern const struct op_extension op_extensions[];
extern const size_t op_nextensions;
/* Rows the table may have (op_extended.c checks it at compile time). */
enum { OP_EXTENSIONS_MAX = 8 };
/* Whether srv lists x in supportedExtension (answered, and listed if that is set). */
bool op_extension_listed(const struct op_extension *x, const struct server *srv);
/* Runs the table's row whose OID is req's requestName, when srv answers it; else
 * protocolError ("unsupported extended operation"). */
void op_extended(struct conn *c, struct ldap_request *req);

/* --- op_chain.c: password changes forwarded to the provider (chain_passwd) -------------- */

/* The Password Modify extended operation (RFC 3062) on a replica with chain_passwd: the
 * client's own change forwarded (server/replica/replica.h, chain_submit), answered with
 * the provider's result once the change is back here or chain_wait_ms has passed. */
void op_chain_passwd(struct conn *c, struct ldap_request *req);
/* A modify (chain_passwd on) of the bound entry's own userPassword and nothing else:
 * forwarded as op_chain_passwd does, and true. False for any other modify, which the
 * caller refuses as any write. */
bool op_chain_modify(struct conn *c, struct ldap_request *req);

/* --- op_search.c, search_run.c, search_finish.c: the search cursor, a conn_task ------- */

/*
 * Starts a search (or, with a paged results cookie, the next page of the one parked on c).
 * A search of the database takes req's arena (req->mem, arena_take: req->u.search.filter
 * lives there, and the search itself is allocated there) and owns it until it ends; req
 * keeps its pointers into it (none is set to NULL). A search that cannot finish at
 * once (full socket, a slice of work used, even within one candidate, a page sent) stays as
 * c->task or, between pages, c->parked (search_op.h).
 */
void op_search(struct conn *c, struct ldap_request *req);
/* Appends (NUL-terminated) the DN of the deepest existing entry above key that aop's client
 * may know of (disclose on its entry, access.h): the matchedDN of noSuchObject, "" when there
 * is none. Inside w's read transaction. */
struct access_op;
void op_matched_dn(struct worker *w, struct access_op *aop, const struct buf *key, struct buf *out);

/* --- search_builtin.c: searches of built entries (root DSE, subschema) ------------------- */

/* Answers a search of one built entry record (the root DSE or cn=Subschema: ops_impl.h). */
void search_builtin(struct conn *c, struct ldap_request *req, const struct buf *record);
/* True if the reversed DN key is that of cn=Subschema. */
bool search_builtin_is_subschema(const struct buf *key);

/* --- op_rootdse.c: building the root DSE and cn=Subschema at start-up -------------------- */

/* Builds the root DSE / cn=Subschema records (ops_impl.h) of srv, after ops_start. Returns 0
 * or -1 (out of memory). */
int op_rootdse_build(struct server *srv);
int op_subschema_build(struct server *srv);

/* --- computed_attrs.c: operational attributes computed per entry ------------------------ */

/* The number of children of id in db, whoever asks (LMDB counts them): what
 * numSubordinates says to a client that may see every entry. */
size_t computed_attrs_all_children(const struct db *db, struct db_read *txn, entry_id id);
/* True if filter f tests an operational attribute computed_attrs_build computes. */
bool computed_attrs_in_filter(const struct filter *f);
/* Appends every computed operational attribute of entry id to out (for filters), as
 * computed_attrs_build. Returns 0 or -1 (out of memory). */
int computed_attrs_all(struct buf *out, const struct db *db, struct db_read *txn, entry_id id,
                       const struct entry_view *e, struct access_op *aop);

/* True if sel names an operational attribute computed_attrs_build computes. */
bool computed_attrs_requested(const struct attr_select *sel);
/*
 * Appends the operational attributes sel asks for of entry id (viewed as e)
 * to out: structuralObjectClass, entryDN, entryUUID, subschemaSubentry,
 * hasSubordinates, numSubordinates, memberOf. hasSubordinates and numSubordinates
 * count the children aop's client may read (those a one-level search returns it:
 * hidden ones are not told), or every child when aop is NULL; aop reads txn too.
 * Returns 0 or -1.
 */
int computed_attrs_build(struct buf *out, const struct attr_select *sel, const struct db *db,
                         struct db_read *txn, entry_id id, const struct entry_view *e,
                         struct access_op *aop);

#endif
