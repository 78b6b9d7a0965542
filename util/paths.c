/* SPDX-License-Identifier: MIT */
/*
 * Well-known paths shared by the daemon and the CLI.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/paths.h"

char *paths_control_socket(void) {
        return paths_control_socket_for(geteuid() == 0);
}

char *paths_control_socket_for(bool system) {
        const char *explicit = getenv("ALLOCLAB_SOCKET");
        if (explicit && *explicit)
                return strdup(explicit);
        if (system)
                return strdup("/run/alloclab/control.sock");
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        char *p = NULL;
        if (runtime && *runtime && asprintf(&p, "%s/alloclab/control.sock", runtime) < 0)
                return NULL;
        return p;
}

/* The first of the candidates (relative to the running binary's directory) that exists, as a
 * real path; NULL when none does. */
static char *beside_binary(const char *const *candidates, size_t n) {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (len <= 0)
                return NULL;
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (!slash)
                return NULL;
        *slash = 0;
        for (size_t i = 0; i < n; i++) {
                char *p = NULL;
                if (asprintf(&p, "%s%s", exe, candidates[i]) < 0)
                        return NULL;
                char *real = realpath(p, NULL);
                free(p);
                if (real && access(real, R_OK) == 0)
                        return real;
                free(real);
        }
        return NULL;
}

/* $VARIABLE when set (and readable), else what beside_binary() finds. */
static char *find(const char *variable, const char *const *candidates, size_t n) {
        const char *explicit = getenv(variable);
        if (explicit && *explicit)
                return access(explicit, R_OK) == 0 ? strdup(explicit) : NULL;
        return beside_binary(candidates, n);
}

char *paths_probe(void) {
        static const char *const candidates[] = { "/../probe/liballoclab-probe.so",
                                                  "/../" ALLOCLAB_LIBDIR "/alloclab/liballoclab-probe.so" };
        return find("ALLOCLAB_PROBE", candidates, sizeof(candidates) / sizeof(candidates[0]));
}

char *paths_spawner(void) {
        static const char *const candidates[] = { "/../runner/alloclab-spawner",
                                                  "/../" ALLOCLAB_LIBDIR "/alloclab/alloclab-spawner" };
        return find("ALLOCLAB_SPAWNER", candidates, sizeof(candidates) / sizeof(candidates[0]));
}

char *paths_cache(char *const *env, const char *name) {
        const char *xdg = NULL, *home = NULL;
        for (char *const *e = env; e && *e; e++) {
                if (strncmp(*e, "XDG_CACHE_HOME=", 15) == 0)
                        xdg = *e + 15;
                else if (strncmp(*e, "HOME=", 5) == 0)
                        home = *e + 5;
        }
        char *dir = NULL;
        if (xdg && xdg[0] == '/')
                return asprintf(&dir, "%s/alloclab/%s", xdg, name) < 0 ? NULL : dir;
        return home && home[0] == '/' && asprintf(&dir, "%s/.cache/alloclab/%s", home, name) >= 0 ? dir
                                                                                                  : NULL;
}

char *paths_workloads(void) {
        static const char *const candidates[] = { "/../workloads",
                                                  "/../" ALLOCLAB_LIBDIR "/alloclab/workloads" };
        return find("ALLOCLAB_WORKLOADS", candidates, sizeof(candidates) / sizeof(candidates[0]));
}

char *paths_cli(void) {
        static const char *const candidates[] = { "/../cli/alloclab", "/alloclab", "/../bin/alloclab" };
        return find("ALLOCLAB_CLI", candidates, sizeof(candidates) / sizeof(candidates[0]));
}
