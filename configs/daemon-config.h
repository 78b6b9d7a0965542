/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "configs/diag.h"

/*
 * alloclabd's configuration file (YAML). Every field is optional; NULL or 0 means the default
 * the daemon documents, and a command-line option overrides the file.
 */

typedef struct DaemonConfig {
        char *database;
        char *specs_dir;
        char *socket;
        char *socket_group; /* group that may connect to a socket the daemon binds itself */
        uint64_t idle_timeout_usec;
        char *probe;
        char *machine; /* the machine name runs are filed under (docs/fleet.md) */
        /* Retention after each finished job (alloclab prune): the last prune_keep_last runs of
         * each experiment on each machine keep their samples, and only runs started at least
         * prune_older_than_s ago lose theirs; 0: not set (no pruning when neither is) */
        uint64_t prune_keep_last, prune_older_than_s;
        /* The site alloclab publish writes after each finished job (docs/site.md), or NULL */
        char *publish_dir;
} DaemonConfig;

DaemonConfig *daemon_config_free(DaemonConfig *c);
static inline void daemon_config_freep(DaemonConfig **c) {
        daemon_config_free(*c);
}

/* Loads a configuration file. Returns 0; -EINVAL with every problem in d; -errno when the file
 * cannot be read (nothing added to d). */
int daemon_config_load_file(const char *path, Diagnostics *d, DaemonConfig **ret);
