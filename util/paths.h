/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>

/*
 * Where the daemon's control socket is, for the daemon and its clients alike:
 * $ALLOCLAB_SOCKET, else /run/alloclab/control.sock for root, else
 * $XDG_RUNTIME_DIR/alloclab/control.sock. Returns a new string, or NULL when no path can be
 * derived (no XDG_RUNTIME_DIR) or on -ENOMEM.
 */
char *paths_control_socket(void);

/* The same for an explicit choice: the system instance's socket or the user's. */
char *paths_control_socket_for(bool system);

/*
 * liballoclab-probe.so: $ALLOCLAB_PROBE, else next to the running binary in the build tree
 * (BIN/../probe/) or the install tree (BIN/../LIBDIR/alloclab/). NULL when not found.
 */
char *paths_probe(void);

/* alloclab-spawner, which creates the children (runner/spawner.c): $ALLOCLAB_SPAWNER, else
 * BIN/../runner/ (build tree) or BIN/../LIBDIR/alloclab/ (install tree). NULL when not found. */
char *paths_spawner(void);

/* The bundled workloads of `alloclab suite` (specs and programs): $ALLOCLAB_WORKLOADS, else
 * BIN/../workloads (build tree) or BIN/../LIBDIR/alloclab/workloads. NULL when not found. */
char *paths_workloads(void);

/* What alloclab keeps for the user in a cache, by the environment env (the caller's):
 * $XDG_CACHE_HOME/alloclab/NAME, else $HOME/.cache/alloclab/NAME. A new string, or NULL without
 * either (or on -ENOMEM). */
char *paths_cache(char *const *env, const char *name);

/* The alloclab command (cli/), for the daemon to run `alloclab publish`: $ALLOCLAB_CLI, else
 * beside the running binary (the build tree's cli/, or BINDIR beside SBINDIR). */
char *paths_cli(void);
