#include "tools/searchrate/threads.h"

#include <stdio.h>
#include <string.h>

#include "tools/searchrate/pace.h"
#include "tools/searchrate/run.h"

static struct sr_thread *at(void *array, size_t size, int i)
{
	return (struct sr_thread *)((char *)array + (size_t)i * size);
}

/* A thread of either engine, from start to the end of the run. */
static void *thread_main(void *arg)
{
	struct sr_thread *th = arg;
	pacer_init(th->pacer, &th->run->cfg);
	while (!atomic_load_explicit(&th->run->stop, memory_order_relaxed))
		th->ops->round(th);
	for (int i = 0; i < th->nconns; i++)
		th->left_outstanding += th->ops->close_at_end(th, i);
	return NULL;
}

bool sr_threads_start(void *array, size_t size, int n)
{
	for (int i = 0; i < n; i++) {
		struct sr_thread *t = at(array, size, i);
		int err = pthread_create(&t->tid, NULL, thread_main, t);
		if (err) {
			fprintf(stderr, "searchrate: pthread_create: %s\n", strerror(err));
			return false;
		}
		t->started = true;
	}
	return true;
}

int sr_threads_join(void *array, size_t size, int n)
{
	int left = 0;
	for (int i = 0; array && i < n; i++) {
		struct sr_thread *t = at(array, size, i);
		if (!t->started)
			continue;
		pthread_join(t->tid, NULL);
		t->started = false;
		left += t->left_outstanding;
	}
	return left;
}
