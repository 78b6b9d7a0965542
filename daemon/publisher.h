/* SPDX-License-Identifier: MIT */
#pragma once

#include <systemd/sd-event.h>

#include "daemon/manager.h"

/*
 * The site of the daemon's database (configuration publish_dir:, docs/site.md), published after
 * each finished job by `alloclab publish DIR --db DATABASE` in a child process: the event loop
 * keeps answering while it runs, and the queue is held meanwhile, so that no measurement shares
 * the machine with it. A job that ends while a publish runs gets one more publish after it.
 * The site's files are as readable as the database (the command's rule): to the group readers
 * of a system database, what `alloclab runs` shows them.
 */

typedef struct Publisher Publisher;

/* dir and db_path are copied; manager is borrowed. Returns 0 or -errno. */
int publisher_new(sd_event *event, Manager *manager, const char *dir, const char *db_path, Publisher **ret);

/* Publishes now, or after the publish that runs. Failures are logged. */
void publisher_request(Publisher *p);

/* Ends a publish still running (its pages are each written whole or not at all). */
Publisher *publisher_free(Publisher *p);
