/* The calling thread's memo counters: see memo_counts.h. */
#include "storage/memo_counts.h"

_Thread_local struct db_memo_counts *db_memo_counts;
