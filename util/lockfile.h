/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * The measurement lock of a database: an flock() on DATABASE.lock, held by whoever measures into
 * that database (alloclabd for its lifetime, alloclab run for its run), so that two measurements
 * never overlap silently. The file names its holder ("alloclabd, pid 123") for the message of
 * whoever finds it taken. Unrelated to SQLite's own locks (a different file).
 */

#define LOCKFILE_HOLDER_MAX 128

/* Takes the lock of db_path for holder (a name; the file says "holder, pid N"). Returns the descriptor to
 * keep open while measuring (the lock goes with it); -EWOULDBLOCK when another holds it and wait is false
 * (its text in ret_holder), or -errno when the lock file cannot be opened (a read-only or foreign directory:
 * the caller decides whether to go on). With wait, blocks until the other holder is done. */
int lockfile_take(const char *db_path, const char *holder, bool wait, char ret_holder[LOCKFILE_HOLDER_MAX]);

/* Whether a process holds the lock of db_path now: whoever writes runs into it (alloclab run,
 * resume, import; alloclabd) holds it for as long as it does, whatever PID namespace either
 * process is in. */
bool lockfile_held(const char *db_path);
