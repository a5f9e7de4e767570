/*
 * mem_trim: hands the free pages inside malloc's heaps back to the system (glibc's
 * malloc_trim), for the sweeps that release idle connections' buffers. Under
 * AddressSanitizer or ThreadSanitizer, whose allocators replace glibc's, it does
 * nothing: glibc's heaps are then never set up by a malloc, and the first malloc_trim
 * sets them up, unlocked; two workers trimming at once raced there (a SEGV inside
 * malloc_trim, seen under SAN=1 with the descriptor limit reached on io_uring).
 */
#ifndef MINIDIR_SERVER_MEM_TRIM_H
#define MINIDIR_SERVER_MEM_TRIM_H

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MEM_TRIM_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEM_TRIM_SANITIZED 1
#endif

static inline void mem_trim(void)
{
#ifndef MEM_TRIM_SANITIZED
	malloc_trim(0);
#endif
}

#endif
