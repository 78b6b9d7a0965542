/* SPDX-License-Identifier: MIT */
/*
 * Host facts, read once per run (never while a child runs).
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "runner/host.h"
#include "util/cleanup.h"

static char *first_line(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *line = NULL;
        size_t cap = 0;
        if (getline(&line, &cap, f) < 0) {
                free(line);
                return NULL;
        }
        line[strcspn(line, "\n")] = 0;
        return line;
}

static char *cpu_model(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
        if (!f)
                return NULL;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) > 0) {
                if (strncmp(line, "model name", 10) != 0)
                        continue;
                char *colon = strchr(line, ':');
                if (!colon)
                        break;
                colon += 1 + strspn(colon + 1, " \t");
                colon[strcspn(colon, "\n")] = 0;
                return strdup(colon);
        }
        return NULL;
}

static char *thp_mode(void) {
        _cleanup_free_ char *line = first_line("/sys/kernel/mm/transparent_hugepage/enabled");
        if (!line)
                return NULL;
        char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
        if (!close)
                return NULL;
        return strndup(open + 1, (size_t) (close - open - 1));
}

static int or_unknown(char **field, char *value) {
        *field = value ? value : strdup("unknown");
        return *field ? 0 : -ENOMEM;
}

int host_read(Host *ret) {
        Host h = {};
        struct utsname u;
        bool have_uname = uname(&u) >= 0;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        h.cpus = cpus > 0 ? (unsigned) cpus : 0;
        if (or_unknown(&h.hostname, have_uname ? strdup(u.nodename) : NULL) < 0 ||
            or_unknown(&h.kernel, have_uname ? strdup(u.release) : NULL) < 0 ||
            or_unknown(&h.cpu_model, cpu_model()) < 0 ||
            or_unknown(&h.glibc, strdup(gnu_get_libc_version())) < 0 || or_unknown(&h.thp, thp_mode()) < 0) {
                host_done(&h);
                return -ENOMEM;
        }
        *ret = h;
        return 0;
}

void host_done(Host *h) {
        free(h->hostname);
        free(h->kernel);
        free(h->cpu_model);
        free(h->glibc);
        free(h->thp);
        *h = (Host){};
}
