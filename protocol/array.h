/*
 * Growing a malloc'd array one element at a time, doubling its capacity: the one
 * place that logic lives. A macro (GNU statement expression, as GROW_BY_ONE in
 * schema.c) so that it keeps each array's own element type.
 *
 * Thread rules: none kept; the array is its caller's.
 */
#ifndef MINIDIR_PROTOCOL_ARRAY_H
#define MINIDIR_PROTOCOL_ARRAY_H

#include <stdbool.h>
#include <stdlib.h>

/*
 * Makes room for element n of arr (lvalue, malloc'd or NULL) whose capacity is cap
 * (lvalue, elements): when n has reached cap, reallocates to twice cap, or to first when
 * cap is 0. Evaluates to true, or to false when memory ran out (arr and cap unchanged).
 */
#define ARRAY_ROOM_FOR(arr, cap, n, first)                                                         \
	__extension__({                                                                            \
		bool room_ = (n) < (cap);                                                          \
		if (!room_) {                                                                      \
			size_t want_ = (cap) ? 2 * (cap) : (first);                                \
			__typeof__(arr) grown_ = realloc((arr), want_ * sizeof(*grown_));          \
			if (grown_) {                                                              \
				(arr) = grown_;                                                    \
				(cap) = want_;                                                     \
				room_ = true;                                                      \
			}                                                                          \
		}                                                                                  \
		room_;                                                                             \
	})

#endif
