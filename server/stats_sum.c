/* The workers' counters added up: see stats_sum.h. */
#include "server/stats_sum.h"

#include <string.h>

#include "server/server.h"

void stats_sum(struct server *srv, struct worker_stats *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < srv->nworkers; i++) {
		struct worker_stats *w = &srv->workers[i]->stats;
		for (int p = 0; p < SEND_POLICY_N; p++) {
			struct send_stats *a = &t->send[p], *b = &w->send[p];
			a->responses += STAT_READ(b->responses);
			a->pdus += STAT_READ(b->pdus);
			a->bytes += STAT_READ(b->bytes);
			a->send_calls += STAT_READ(b->send_calls);
			a->setsockopt_calls += STAT_READ(b->setsockopt_calls);
			a->eagain += STAT_READ(b->eagain);
			a->partial += STAT_READ(b->partial);
			a->tls_records += STAT_READ(b->tls_records);
			t->connections_by_policy[p] += STAT_READ(w->connections_by_policy[p]);
		}
		for (int o = 0; o < STAT_OP_N; o++) {
			t->ops[o] += STAT_READ(w->ops[o]);
			t->ops_done[o] += STAT_READ(w->ops_done[o]);
		}
		for (int k = 0; k < STAT_RES_N; k++)
			for (int r = 0; r < STAT_RESULT_CODES; r++)
				t->results[k][r] += STAT_READ(w->results[k][r]);
		t->connections_total += STAT_READ(w->connections_total);
		t->connections_current += STAT_READ(w->connections_current);
		t->connections_shed += STAT_READ(w->connections_shed);
		t->pdu_timeouts += STAT_READ(w->pdu_timeouts);
		t->input_shed += STAT_READ(w->input_shed);
		t->conns_per_ip_refused += STAT_READ(w->conns_per_ip_refused);
		t->binds_limited += STAT_READ(w->binds_limited);
		t->binds_refused_account += STAT_READ(w->binds_refused_account);
		t->binds_replayed += STAT_READ(w->binds_replayed);
		t->binds_replay_dropped += STAT_READ(w->binds_replay_dropped);
		t->proxy_refused += STAT_READ(w->proxy_refused);
		t->proxy_malformed += STAT_READ(w->proxy_malformed);
		t->tls.connections += STAT_READ(w->tls.connections);
		t->tls.handshakes += STAT_READ(w->tls.handshakes);
		t->tls.resumed += STAT_READ(w->tls.resumed);
		t->tls.failures += STAT_READ(w->tls.failures);
		t->tls.starttls += STAT_READ(w->tls.starttls);
		t->tls.ktls += STAT_READ(w->tls.ktls);
		t->entries_sent += STAT_READ(w->entries_sent);
		t->io_sends += STAT_READ(w->io_sends);
		t->io_sends_more += STAT_READ(w->io_sends_more);
		t->io_waits += STAT_READ(w->io_waits);
		t->memo.record_hits += STAT_READ(w->memo.record_hits);
		t->memo.record_misses += STAT_READ(w->memo.record_misses);
		t->memo.key_hits += STAT_READ(w->memo.key_hits);
		t->memo.key_misses += STAT_READ(w->memo.key_misses);
		for (int b = 0; b < STAT_LATENCY_BUCKETS; b++)
			t->latency[b] += STAT_READ(w->latency[b]);
		t->latency_sum_ns += STAT_READ(w->latency_sum_ns);
		uint64_t max = STAT_READ(w->latency_max_ns);
		if (max > t->latency_max_ns)
			t->latency_max_ns = max;
	}
}
