/* SPDX-License-Identifier: MIT */
/*
 * Well-known paths shared by the daemon and the CLI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/paths.h"

char *paths_control_socket(void) {
        const char *explicit = getenv("ALLOCLAB_SOCKET");
        if (explicit && *explicit)
                return strdup(explicit);
        if (geteuid() == 0)
                return strdup("/run/alloclab/control.sock");
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        char *p = NULL;
        if (runtime && *runtime && asprintf(&p, "%s/alloclab/control.sock", runtime) < 0)
                return NULL;
        return p;
}
