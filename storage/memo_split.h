/*
 * How a served file's memo budget (memo_bytes) is split between the record memo and the
 * key memo, as db_open_served says (storage/db.h): a pure function of the sizes, so that
 * the split is tested at any directory size without one.
 */
#ifndef MINIDIR_STORAGE_MEMO_SPLIT_H
#define MINIDIR_STORAGE_MEMO_SPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * budget: the bytes allowed (SIZE_MAX: no bound); direct: the direct array of every ID's
 * record place (SIZE_MAX where it cannot be made), direct_ok whether it can; key_want: the
 * key memo without a bound (key_memo_bytes_for with KEY_MEMO_UNBOUNDED_SLOTS). Sets *rec
 * and *key to each memo's share:
 *   - no bound: direct and key_want;
 *   - both fit: direct, and the rest of the budget to the key memo (key_memo_init takes
 *     from it only what the directory's keys need, KEY_MEMO_MAX_SLOTS at most);
 *   - else half each, and a memo that needs less than its half leaves the rest to the
 *     other.
 */
static inline void memo_split(size_t budget, size_t direct, bool direct_ok, size_t key_want,
                              size_t *rec, size_t *key)
{
	if (budget == SIZE_MAX)
		*rec = direct, *key = key_want;
	else if (direct <= budget && key_want <= budget - direct)
		*rec = direct, *key = budget - direct;
	else if (key_want <= budget / 2)
		*key = key_want, *rec = budget - key_want;
	else if (direct_ok && direct <= budget / 2)
		*rec = direct, *key = budget - direct;
	else
		*rec = budget / 2, *key = budget - *rec;
}

#endif
