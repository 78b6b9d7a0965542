/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runner/options.h"
#include "util/cleanup.h"

/* Whether the file at path holds text followed by its NUL: where its reader keeps the names it
 * knows. Unreadable files answer true: the check never rejects what it cannot see. */
static bool file_has_string(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
                return true;
        void *map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return true;
        bool found = memmem(map, (size_t) st.st_size, text, strlen(text) + 1) != NULL;
        munmap(map, (size_t) st.st_size);
        return found;
}

static int find_loader(struct dl_phdr_info *info, size_t size, void *data) {
        (void) size;
        const char *slash = strrchr(info->dlpi_name, '/');
        if (slash && strncmp(slash + 1, "ld-", 3) == 0) {
                snprintf(data, PATH_MAX, "%s", info->dlpi_name);
                return 1;
        }
        return 0;
}

/* The dynamic loader this process runs with: the children's, but for a program built for
 * another one. */
static const char *loader_path(void) {
        static char path[PATH_MAX];
        if (!path[0])
                (void) dl_iterate_phdr(find_loader, path);
        return path[0] ? path : NULL;
}

/* "NAME is not an option of FILE (version V): it would be ignored"; a is NULL for the loader. */
static int unknown(char **ret_message, const char *name, const char *file, const Allocator *a) {
        bool version = a && a->version && strcmp(a->version, "unknown") != 0;
        if (asprintf(ret_message, "%s is not %s of %s%s%s%s: it would be ignored", name,
                     a ? "an option" : "a tunable", file, version ? " (version " : "",
                     version ? a->version : "", version ? ")" : "") < 0)
                return -ENOMEM;
        return 1;
}

/* Which environment prefix configures the allocator in file, and how its reader spells the
 * names: mimalloc looks up "arena_eager_commit" for MIMALLOC_ARENA_EAGER_COMMIT, gperftools the
 * whole variable name. */
static const char *prefix_of(const char *file, bool *ret_lower) {
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        *ret_lower = strstr(base, "mimalloc") != NULL;
        return *ret_lower ? "MIMALLOC_" : strstr(base, "tcmalloc") ? "TCMALLOC_" : NULL;
}

/* Each name of GLIBC_TUNABLES=name=value:name=value... against the loader's tunables. */
static int check_tunables(const char *tunables, char **ret_message) {
        const char *loader = loader_path();
        if (!loader)
                return 0;
        _cleanup_free_ char *copy = strdup(tunables);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
                item[strcspn(item, "=")] = 0;
                if (*item && !file_has_string(loader, item)) {
                        _cleanup_free_ char *name = NULL;
                        if (asprintf(&name, "GLIBC_TUNABLES entry %s", item) < 0)
                                return -ENOMEM;
                        return unknown(ret_message, name, loader, NULL);
                }
        }
        return 0;
}

int options_unknown(const Allocator *a, char *const *env, char **ret_message) {
        *ret_message = NULL;
        bool lower = false;
        const char *prefix = a->path ? prefix_of(a->path, &lower) : NULL;
        for (char *const *e = env; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                if (!eq)
                        continue;
                if (strncmp(*e, "GLIBC_TUNABLES=", 15) == 0) {
                        int r = check_tunables(eq + 1, ret_message);
                        if (r != 0)
                                return r;
                        continue;
                }
                size_t plen = prefix ? strlen(prefix) : 0;
                if (!prefix || strncmp(*e, prefix, plen) != 0 || eq == *e + plen)
                        continue;
                _cleanup_free_ char *name = strndup(*e, (size_t) (eq - *e));
                _cleanup_free_ char *looked_for = strdup(lower ? name + plen : name);
                if (!name || !looked_for)
                        return -ENOMEM;
                for (char *c = looked_for; lower && *c; c++)
                        *c = (char) tolower((unsigned char) *c);
                if (!file_has_string(a->path, looked_for))
                        return unknown(ret_message, name, a->path, a);
        }
        return 0;
}
