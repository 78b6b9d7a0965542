/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * Files a command makes and removes itself when done (an export's FILE.partial, an import's
 * private copy), removed also when SIGINT, SIGTERM or SIGHUP ends the process first: a handler
 * (async-signal-safe: unlink() and rmdir() of names copied beforehand) removes what is
 * registered, newest first, and the signal then ends the process as it would have. The
 * handlers are installed while anything is registered, the signals' earlier dispositions
 * restored after. A process that blocks these signals (alloclab run reads them through a
 * signalfd) is not ended by them, and nothing is removed.
 */

/* Registers path (a directory: removed with rmdir(), so after what it holds). Returns a handle
 * for doomed_forget(), or -ENOMEM, -ENOSPC (too many at once) or -errno from sigaction(). */
int doomed_register(const char *path, bool directory);

/* Forgets a registration (the file was kept, renamed or removed by its maker); a negative
 * handle is ignored. */
void doomed_forget(int handle);
