/*
 * The database room's public header: generations of the database file served
 * (generation.h: which file a search reads, and when an old one is let go) and
 * the guard on the file mapped (file_guard.h: a lease against writes in place,
 * and a clear stop on a fault in a mapped page). The LMDB environment itself is
 * storage/db.h's.
 */
#ifndef MINIDIR_SERVER_DB_DB_H
#define MINIDIR_SERVER_DB_DB_H

#include "server/db/file_guard.h"
#include "server/db/generation.h"

#endif
