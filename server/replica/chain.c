/*
 * chain_passwd (replica.h): a password change a client made on this replica, forwarded to
 * the provider as that client. A few threads of their own, so that a worker never waits
 * for the provider's round trip: each takes a job off a bounded queue, opens a connection
 * to the provider as the consumer does (replica_ldap_open: its TLS words), binds with the
 * client's DN and password, sends the change, and publishes the provider's result in the
 * job (done). The worker that queued it looks at done from its event loop (op_chain.c).
 * One connection per job: a password change is rare, and a pooled connection would have
 * to be rebound as each user anyway. chain_bind_failures uses the same threads for a bind
 * replayed (CHAIN_BIND: the bind alone, nobody waits for its result).
 */
#include "server/replica/replica.h"

#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.h"
#include "server/replica/bind_cache.h"

struct chain_pool {
	struct server *srv;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct chain_job *head, *tail;  /* queued, under lock */
	int jobs;                       /* queued or running, under lock */
	uint64_t users[CHAIN_MAX_JOBS]; /* each queued or running job's user; 0: free slot */
	bool stopping;                  /* under lock */
	pthread_t threads[CHAIN_THREADS];
	int nthreads;
	struct bind_cache *cache; /* bind_passthrough_cache's verifiers, or NULL */
};

struct chain_job *chain_job_new(enum chain_kind kind, const void *dn, size_t dnlen,
                                const void *cred, size_t credlen)
{
	struct chain_job *job = calloc(1, sizeof(*job));
	if (!job)
		return NULL;
	job->kind = kind;
	job->dn = strndup(dn, dnlen);
	job->cred.bv_val = malloc(credlen + 1);
	if (!job->dn || !job->cred.bv_val) {
		free(job->dn);
		free(job->cred.bv_val);
		free(job);
		return NULL;
	}
	memcpy(job->cred.bv_val, cred, credlen);
	job->cred.bv_val[credlen] = '\0';
	job->cred.bv_len = credlen;
	atomic_init(&job->done, false);
	atomic_init(&job->refs, 2);
	return job;
}

void chain_job_put(struct chain_job *job)
{
	if (!job || atomic_fetch_sub_explicit(&job->refs, 1, memory_order_acq_rel) != 1)
		return;
	explicit_bzero(job->cred.bv_val, job->cred.bv_len);
	free(job->cred.bv_val);
	if (job->value.bv_val)
		explicit_bzero(job->value.bv_val, job->value.bv_len); /* holds passwords too */
	free(job->value.bv_val);
	free(job->dn);
	free(job->target);
	for (LDAPMod **m = job->mods; m && *m; m++) /* userPassword values */
		for (struct berval **v = (*m)->mod_bvalues; v && *v; v++)
			explicit_bzero((*v)->bv_val, (*v)->bv_len);
	if (job->mods)
		ldap_mods_free(job->mods, 1);
	ldap_memfree(job->matched);
	ldap_memfree(job->msg);
	ber_bvfree(job->data);
	free(job);
}

/* libldap's own codes (negative: no result from the provider) as a result code. */
static int mapped(int rc)
{
	if (rc >= 0)
		return rc;
	switch (rc) {
	case LDAP_SERVER_DOWN:
	case LDAP_CONNECT_ERROR:
	case LDAP_TIMEOUT:
		return LDAP_UNAVAILABLE;
	default:
		return LDAP_OTHER;
	}
}

/* Ends job with rc and a message of ours: what, then detail. */
static void job_fail(struct chain_job *job, int rc, const char *what, const char *detail)
{
	char msg[600];
	snprintf(msg, sizeof(msg), "%s%s", what, detail);
	job->rc = rc;
	job->msg = strdup(msg); /* freed by ldap_memfree: libldap's is free() */
}

/* The provider's result of the request msgid on ld into job. */
static void take_result(LDAP *ld, int msgid, struct chain_job *job)
{
	LDAPMessage *res = NULL;
	struct timeval t = {CHAIN_TIMEOUT_S, 0};
	int rc = ldap_result(ld, msgid, LDAP_MSG_ALL, &t, &res);
	if (rc <= 0) {
		ldap_msgfree(res);
		job_fail(job, LDAP_UNAVAILABLE, "the provider did not answer: ",
		         rc == 0 ? "timed out" : ldap_err2string(mapped(rc)));
		return;
	}
	int code = LDAP_OTHER;
	if (ldap_parse_result(ld, res, &code, &job->matched, &job->msg, NULL, NULL, 0) !=
	    LDAP_SUCCESS) {
		ldap_msgfree(res);
		job_fail(job, LDAP_OTHER, "the provider's answer could not be read", "");
		return;
	}
	job->rc = code;
	if (job->kind == CHAIN_PASSWD)
		ldap_parse_extended_result(ld, res, NULL, &job->data, 0);
	ldap_msgfree(res);
}

/* Whether a line last said at *last (seconds) may be said again at now: once a minute at
 * most, whichever thread asks first (a client sends binds as fast as it likes: the log
 * must not follow). */
static bool once_a_minute(_Atomic long long *last, time_t now)
{
	long long was = atomic_load(last);
	return (long long)now - was >= 60 &&
	       atomic_compare_exchange_strong(last, &was, (long long)now);
}

/* A replayed bind's outcome: the provider's 49 (or 0) is what was meant; a provider that
 * did not answer is logged, once a minute at most (a client sends wrong passwords as
 * fast as it likes: the log must not follow). */
static void log_replay(const struct chain_job *job)
{
	static _Atomic long long last;
	if (job->rc == LDAP_SUCCESS || job->rc == LDAP_INVALID_CREDENTIALS ||
	    !once_a_minute(&last, time(NULL)))
		return;
	if (job->kind == CHAIN_VERIFY)
		log_info("bind_passthrough: the provider did not check the password of \"%.200s\" "
		         "(%d %s): the bind was answered %d; this is said once a minute",
		         job->dn, job->rc, job->msg ? job->msg : "", job->rc);
	else
		log_info("chain_bind_failures: a bind of \"%.200s\" was not replayed to the "
		         "provider (%d %s): it counts here only (bind_fail_limit); this is said "
		         "once a minute",
		         job->dn, job->rc, job->msg ? job->msg : "");
}

/* bind_passthrough_cache: a verified bind the provider could not be asked about, answered
 * by the verifier of the user's last bind there (bind_cache.h); logged once a minute. */
static void from_cache(struct chain_pool *p, struct chain_job *job)
{
	static _Atomic long long last;
	long age = 0;
	time_t now = time(NULL);
	if (!p->cache || job->kind != CHAIN_VERIFY || job->rc != LDAP_UNAVAILABLE ||
	    !bind_cache_matches(p->cache, job->user, &job->cred, now, &age))
		return;
	job->rc = LDAP_SUCCESS;
	job->from_cache = true;
	ldap_memfree(job->msg);
	job->msg = NULL;
	if (once_a_minute(&last, now))
		log_info(
		    "bind_passthrough_cache: the provider cannot be asked; \"%.200s\" bound by "
		    "the verifier of its bind %ld s ago; this is said once a minute",
		    job->dn, age);
}

/* A verified bind's answer, before the client has it: the provider's success remembered
 * (so that the client's next bind finds it), its 49 forgotten. The chain thread hashes
 * (one Argon2id, about 30 ms here), the worker never waits for it. */
static void keep_verifier(struct chain_pool *p, const struct chain_job *job)
{
	if (!p->cache || job->kind != CHAIN_VERIFY || job->from_cache)
		return;
	if (job->rc == LDAP_SUCCESS &&
	    bind_cache_remember(p->cache, job->user, &job->cred, time(NULL)) < 0)
		log_info("bind_passthrough_cache: the verifier of \"%.200s\" could not be made",
		         job->dn);
	else if (job->rc == LDAP_INVALID_CREDENTIALS)
		bind_cache_forget(p->cache, job->user);
}

static void forward(struct chain_pool *p, struct chain_job *job)
{
	const struct syncrepl_conf *s = &p->srv->cfg.syncrepl;
	char why[512];
	LDAP *ld = NULL;
	if (replica_ldap_open(s, CHAIN_TIMEOUT_S, &ld, why, sizeof(why)) < 0) {
		job_fail(job, LDAP_UNAVAILABLE, "the provider cannot be reached: ", why);
		goto out;
	}
	int msgid,
	    rc = ldap_sasl_bind(ld, job->dn, LDAP_SASL_SIMPLE, &job->cred, NULL, NULL, &msgid);
	if (rc == LDAP_SUCCESS) {
		take_result(ld, msgid, job);
		if (job->msg && job->rc == LDAP_SUCCESS) {
			ldap_memfree(job->msg);
			job->msg = NULL;
		}
		ldap_memfree(job->matched);
		job->matched = NULL;
		if (job->rc != LDAP_SUCCESS || job->kind == CHAIN_BIND || job->kind == CHAIN_VERIFY)
			goto out; /* the provider refused the bind: its answer is the client's */
	} else {
		job_fail(job, mapped(rc), "the provider cannot be reached: ", ldap_err2string(rc));
		goto out;
	}
	if (job->kind == CHAIN_PASSWD)
		rc = ldap_extended_operation(ld, LDAP_EXOP_MODIFY_PASSWD,
		                             job->has_value ? &job->value : NULL, NULL, NULL,
		                             &msgid);
	else
		rc = ldap_modify_ext(ld, job->target, job->mods, NULL, NULL, &msgid);
	if (rc != LDAP_SUCCESS)
		job_fail(job, mapped(rc), "forwarding to the provider: ", ldap_err2string(rc));
	else
		take_result(ld, msgid, job);
out:
	from_cache(p, job);
	if (job->kind == CHAIN_BIND || job->kind == CHAIN_VERIFY)
		log_replay(job);
	else if (job->rc != LDAP_SUCCESS)
		log_info("chain_passwd: %s for \"%.200s\": %d %s",
		         job->kind == CHAIN_PASSWD ? "Password Modify" : "modify of userPassword",
		         job->dn, job->rc, job->msg ? job->msg : "");
	if (ld)
		ldap_unbind_ext(ld, NULL, NULL);
}

static void *chain_main(void *arg)
{
	struct chain_pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->head && !p->stopping)
			pthread_cond_wait(&p->cond, &p->lock);
		struct chain_job *job = p->head;
		if (!job)
			break; /* stopping, nothing left */
		p->head = job->next;
		if (!p->head)
			p->tail = NULL;
		bool stopping = p->stopping;
		pthread_mutex_unlock(&p->lock);
		if (stopping)
			job_fail(job, LDAP_UNAVAILABLE, "minidir is stopping", "");
		else
			forward(p, job);
		uint64_t user = job->user;
		if (!stopping)
			keep_verifier(p, job);
		atomic_store_explicit(&job->done, true, memory_order_release);
		chain_job_put(job);
		pthread_mutex_lock(&p->lock);
		p->jobs--;
		for (int i = 0; i < CHAIN_MAX_JOBS; i++)
			if (p->users[i] == user) {
				p->users[i] = 0;
				break;
			}
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int chain_start(struct server *srv)
{
	if (!srv->cfg.chain_passwd && !srv->cfg.chain_bind_failures && !srv->cfg.bind_passthrough)
		return 0;
	struct chain_pool *p = calloc(1, sizeof(*p));
	if (!p) {
		log_error("chain_passwd: out of memory");
		return -1;
	}
	p->srv = srv;
	if (srv->cfg.bind_passthrough && srv->cfg.bind_passthrough_cache > 0 &&
	    !(p->cache = bind_cache_new(srv->cfg.bind_passthrough_cache))) {
		free(p);
		log_error("bind_passthrough_cache: out of memory");
		return -1;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	/* The workers run already (server_start starts them first) and a bind may submit at
	 * once: they load the pool with acquire (chain_submit), so they see it made. */
	__atomic_store_n(&srv->chain, p, __ATOMIC_RELEASE);
	for (; p->nthreads < CHAIN_THREADS; p->nthreads++) {
		int rc = pthread_create(&p->threads[p->nthreads], NULL, chain_main, p);
		if (rc) {
			log_error("chain_passwd: starting a thread: %s", strerror(rc));
			return -1; /* chain_stop joins those that started */
		}
	}
	if (srv->cfg.chain_passwd)
		log_info("chain_passwd: password changes are forwarded to %s as the user (%d "
		         "threads, %d changes at most at a time), answered once they are back or "
		         "after %d ms",
		         srv->cfg.syncrepl.provider, CHAIN_THREADS, CHAIN_MAX_JOBS,
		         srv->cfg.chain_wait_ms);
	if (srv->cfg.bind_passthrough)
		log_info(
		    "bind_passthrough: the passwords of entries that have none here are checked "
		    "by binding to %s as the user (%d at most at a time, %d of one DN)",
		    srv->cfg.syncrepl.provider, CHAIN_MAX_JOBS, CHAIN_MAX_JOBS_PER_USER);
	if (p->cache)
		log_info(
		    "bind_passthrough_cache: while %s cannot be asked, a user who bound through "
		    "it in the last %d s binds with the same password (Argon2id verifiers in "
		    "memory, %d users at most)",
		    srv->cfg.syncrepl.provider, srv->cfg.bind_passthrough_cache, BIND_CACHE_MAX);
	if (srv->cfg.chain_bind_failures)
		log_info(
		    "chain_bind_failures: failed binds are replayed to %s, so that its password "
		    "policy counts them (%d at most at a time, %d of one DN)",
		    srv->cfg.syncrepl.provider, CHAIN_MAX_JOBS, CHAIN_MAX_JOBS_PER_USER);
	return 0;
}

void chain_stop(struct server *srv)
{
	struct chain_pool *p = srv->chain;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (int i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	bind_cache_free(p->cache);
	srv->chain = NULL;
	free(p);
}

int chain_submit(struct server *srv, struct chain_job *job)
{
	struct chain_pool *p = __atomic_load_n(&srv->chain, __ATOMIC_ACQUIRE);
	if (!p)
		return -1;
	pthread_mutex_lock(&p->lock);
	int rc = !p->stopping && p->jobs < CHAIN_MAX_JOBS ? 0 : CHAIN_FULL, mine = 0, slot = -1;
	for (int i = 0; i < CHAIN_MAX_JOBS; i++) {
		mine += p->users[i] == job->user;
		if (!p->users[i])
			slot = i;
	}
	if (rc == 0 && mine >= CHAIN_MAX_JOBS_PER_USER)
		rc = CHAIN_USER_FULL;
	if (rc == 0) {
		p->users[slot] = job->user; /* a slot is free: fewer than CHAIN_MAX_JOBS jobs */
		p->jobs++;
		job->next = NULL;
		if (p->tail)
			p->tail->next = job;
		else
			p->head = job;
		p->tail = job;
		pthread_cond_signal(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}
