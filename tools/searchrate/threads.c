#include "tools/searchrate/threads.h"

#include <stdio.h>
#include <string.h>

static struct sr_thread *at(void *array, size_t size, int i)
{
	return (struct sr_thread *)((char *)array + (size_t)i * size);
}

bool sr_threads_start(void *array, size_t size, int n, void *(*fn)(void *))
{
	for (int i = 0; i < n; i++) {
		struct sr_thread *t = at(array, size, i);
		int err = pthread_create(&t->tid, NULL, fn, t);
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
