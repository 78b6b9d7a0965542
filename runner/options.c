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

#include "probe/report.h"
#include "runner/options.h"
#include "runner/output.h"
#include "runner/spawn.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/strv.h"

/* How long a reader may take to list its names (it starts and exits at once). */
#define LIST_TIMEOUT_NS (10ULL * 1000 * 1000 * 1000)

/* Whether the file at path holds text followed by its NUL: where gperftools keeps the names it
 * passes to getenv(). Unreadable files answer true: the check never rejects what it cannot see. */
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

/* What exe prints on stdout and stderr when run with argv and envp, or NULL when it cannot be run
 * or (with must_succeed) did not exit 0 in time (the caller then rejects nothing). */
static char *output_of(const char *exe, char *const *argv, char *const *envp, bool must_succeed) {
        _cleanup_close_ int out = output_memfd("alloclab-options");
        if (out < 0)
                return NULL;
        SpawnRequest req = {
                .exe = exe,
                .argv = argv,
                .envp = envp,
                .timeout_ns = LIST_TIMEOUT_NS,
                .stdout_fd = out,
                .stderr_fd = out,
                .metrics_fd = out, /* it reports nothing */
                .probe_fd = -1,
                .cancel_fd = -1,
        };
        SpawnResult res;
        if (spawn_run(&req, &res) < 0 || res.end == SPAWN_EXEC_FAILED ||
            (must_succeed && (res.end != SPAWN_EXITED || res.exit_code != 0)))
                return NULL;
        return output_excerpt_all(out);
}

char *options_rejected(char *const *envp) {
        /* The shell allocates as it starts (true does not, and Scudo reads its options at the
         * first allocation). */
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) ":", NULL };
        _cleanup_free_ char *said = output_of("/bin/sh", argv, envp, false);
        return options_complaint(said);
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

/* The loader's tunables, one "NAME: value ..." per line, read once; NULL when it cannot list
 * them (before glibc 2.33). */
static const char *loader_tunables(const char *loader) {
        static char *text;
        static bool asked;
        if (!asked) {
                asked = true;
                char *argv[] = { (char *) loader, (char *) "--list-tunables", NULL }, *envp[] = { NULL };
                text = output_of(loader, argv, envp, true);
        }
        return text;
}

/* Whether text has a line that starts with name followed by end ("glibc.malloc.arena_max" and
 * ":"), or holds before name after (mimalloc's "option '" NAME "'"): name matched whole. */
static bool has_whole(const char *text, const char *before, const char *name, const char *end) {
        size_t lb = strlen(before), ln = strlen(name), le = strlen(end);
        for (const char *at = text; (at = strstr(at, name)); at++) {
                bool starts = lb ? (size_t) (at - text) >= lb && memcmp(at - lb, before, lb) == 0
                                 : at == text || at[-1] == '\n';
                if (starts && strncmp(at + ln, end, le) == 0)
                        return true;
        }
        return false;
}

/* "NAME is not an option of FILE (version V): it would be ignored", or for several "A, B are not
 * options of ...: they would be ignored", into f; a is NULL for the loader. */
static void say_unknown(FILE *f, char *const *names, const char *file, const Allocator *a) {
        size_t n = strv_length(names);
        bool version = a && a->version && strcmp(a->version, "unknown") != 0 && a->version[0];
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s", i ? ", " : "", names[i]);
        fprintf(f, " %s %s of %s%s%s%s: %s would be ignored", n == 1 ? "is not" : "are not",
                a ? (n == 1 ? "an option" : "options") : (n == 1 ? "a tunable" : "tunables"), file,
                version ? " (version " : "", version ? a->version : "", version ? ")" : "",
                n == 1 ? "it" : "they");
}

bool options_tunable_known(const char *name) {
        const char *loader = loader_path();
        if (!loader)
                return true;
        const char *known = loader_tunables(loader);
        return known ? has_whole(known, "", name, ":") : file_has_string(loader, name);
}

/* Each name of GLIBC_TUNABLES=name=value:name=value... against the loader's tunables: the unknown
 * ones into *list ("GLIBC_TUNABLES entry NAME"). */
static int check_tunables(const char *tunables, char ***list) {
        _cleanup_free_ char *copy = strdup(tunables);
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
                item[strcspn(item, "=")] = 0;
                if (!*item || options_tunable_known(item))
                        continue;
                _cleanup_free_ char *name = NULL;
                if (asprintf(&name, "GLIBC_TUNABLES entry %s", item) < 0)
                        return -ENOMEM;
                if (strv_consume(list, TAKE_PTR(name)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* What mimalloc at path says with MIMALLOC_VERBOSE=1 and env's MIMALLOC_ variables: its option
 * table, and a warning for each deprecated name it still takes. Remembered for the last path
 * and variables (a run asks once per cell and variant). NULL when it cannot be asked. */
static const char *mimalloc_says(const char *path, char *const *env) {
        static char *key, *said;
        _cleanup_strv_free_ char **envp = NULL;
        _cleanup_free_ char *preload = NULL;
        if (asprintf(&preload, "LD_PRELOAD=%s", path) < 0 || strv_append(&envp, preload) < 0 ||
            strv_append(&envp, "MIMALLOC_VERBOSE=1") < 0)
                return NULL;
        for (char *const *e = env; e && *e; e++)
                if (strncmp(*e, "MIMALLOC_", 9) == 0 && strncmp(*e, "MIMALLOC_VERBOSE=", 17) != 0 &&
                    strv_append(&envp, *e) < 0)
                        return NULL;
        char *k = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&k, &size);
        if (!f)
                return NULL;
        for (char **e = envp; *e; e++)
                fprintf(f, "%s\n", *e);
        if (!memstream_text(f, &k))
                return NULL;
        if (key && strcmp(key, k) == 0) {
                free(k);
                return said;
        }
        free(key);
        free(said);
        key = k;
        char *argv[] = { (char *) "true", NULL };
        said = output_of("/bin/true", argv, envp, true);
        /* An older or newer mimalloc that lists nothing this way is not asked. */
        if (said && !strstr(said, "option '")) {
                free(said);
                said = NULL;
        }
        return said;
}

/* Whether mimalloc knows MIMALLOC_NAME (name: NAME in lower case, as its table spells it). */
static bool mimalloc_knows(const char *said, const char *name) {
        _cleanup_free_ char *deprecated = NULL;
        if (asprintf(&deprecated, "\"mimalloc_%s\" is deprecated", name) < 0)
                return true;
        return has_whole(said, "option '", name, "'") || strstr(said, deprecated);
}

int options_unknown(const Allocator *a, char *const *env, char **ret_message, char **ret_variable) {
        *ret_message = NULL;
        const char *first = NULL; /* the first variable env sets that names an unknown option */
        const char *base = a->path ? basename(a->path) : "";
        bool mimalloc = strstr(base, "mimalloc") != NULL;
        const char *prefix = mimalloc ? "MIMALLOC_" : strstr(base, "tcmalloc") ? "TCMALLOC_" : NULL;
        const char *said = NULL;
        bool asked = false;
        _cleanup_strv_free_ char **options = NULL, **tunables = NULL;
        int r = 0;
        for (char *const *e = env; e && *e && r >= 0; e++) {
                const char *eq = strchr(*e, '=');
                if (!eq)
                        continue;
                if (strncmp(*e, "GLIBC_TUNABLES=", 15) == 0) {
                        size_t before = strv_length(tunables);
                        r = check_tunables(eq + 1, &tunables);
                        if (!first && strv_length(tunables) > before)
                                first = *e;
                        continue;
                }
                size_t plen = prefix ? strlen(prefix) : 0;
                if (!prefix || strncmp(*e, prefix, plen) != 0 || eq == *e + plen)
                        continue;
                _cleanup_free_ char *name = strndup(*e, (size_t) (eq - *e));
                if (!name)
                        return -ENOMEM;
                bool known;
                if (mimalloc) {
                        if (!asked) {
                                said = mimalloc_says(a->path, env);
                                asked = true;
                        }
                        _cleanup_free_ char *lower = strdup(name + plen);
                        if (!lower)
                                return -ENOMEM;
                        for (char *c = lower; *c; c++)
                                *c = (char) tolower((unsigned char) *c);
                        known = !said || mimalloc_knows(said, lower);
                } else
                        known = file_has_string(a->path, name);
                if (!known) {
                        first = first ? first : *e;
                        r = strv_consume(&options, TAKE_PTR(name));
                }
        }
        if (r < 0)
                return r;
        size_t n = strv_length(options) + strv_length(tunables);
        if (n == 0)
                return 0;
        if (ret_variable && !(*ret_variable = strndup(first, strcspn(first, "="))))
                return -ENOMEM;
        size_t size = 0;
        FILE *f = open_memstream(ret_message, &size);
        if (!f)
                return -ENOMEM;
        if (options)
                say_unknown(f, options, a->path, a);
        if (tunables) {
                fputs(options ? "; " : "", f);
                say_unknown(f, tunables, loader_path(), NULL);
        }
        return memstream_text(f, ret_message) ? (int) n : -ENOMEM;
}

/* Allocator complaints about their configuration, as they print them on stderr. */
static const char *const config_complaints[] = {
        "<jemalloc>: Invalid conf",
        "<jemalloc>: Malformed conf",
        "<jemalloc>: Conf string ends with key",
        "mimalloc: warning: environment option",
        "mimalloc: error: ",
        "Scudo WARNING: found ", /* "... 1 unrecognized flag(s):" and the flags on the next lines */
        NULL,
};

char *options_complaint(const char *stderr_text) {
        for (size_t i = 0; stderr_text && config_complaints[i]; i++) {
                const char *hit = strstr(stderr_text, config_complaints[i]);
                if (!hit)
                        continue;
                /* A line that ends in ':' lists what it is about on the next, indented one:
                 * Scudo's "found 1 unrecognized flag(s):" and "    bogus=1". */
                size_t len = strcspn(hit, "\n");
                const char *next = hit[len] ? hit + len + 1 : "";
                size_t indent = strspn(next, " \t");
                char *line = NULL;
                if (len > 0 && hit[len - 1] == ':' && indent > 0 && next[indent] && next[indent] != '\n')
                        return asprintf(&line, "%.*s %.*s", (int) len, hit,
                                        (int) strcspn(next + indent, "\n"), next + indent) < 0
                                       ? NULL
                                       : line;
                return strndup(hit, len);
        }
        return NULL;
}

const char *options_own_layer(const char *program, const char *pythonmalloc) {
        if (!probe_uses_pymalloc(program, pythonmalloc))
                return NULL;
        return "serves objects up to 512 bytes from pymalloc's arenas, which the allocator under test "
               "never sees (alloclab census counts the malloc calls that reach it); PYTHONMALLOC=malloc "
               "in the environment routes them to malloc";
}
