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

#include "configs/catalog.h"
#include "probe/report.h"
#include "runner/env.h"
#include "runner/options.h"
#include "runner/output.h"
#include "runner/spawn.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/strv.h"
#include "util/suggest.h"

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

/* The names that start with prefix among the NUL-terminated strings of the file at path
 * ("TCMALLOC_RELEASE_RATE"), each once: what a misspelt name may have meant. */
static int file_names_with_prefix(const char *path, const char *prefix, char ***ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
                return 0;
        const char *map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
                return 0;
        const char *end = map + st.st_size;
        size_t lp = strlen(prefix);
        int r = 0;
        for (const char *at = map; r >= 0 && (at = memmem(at, (size_t) (end - at), prefix, lp)); at += lp) {
                if (at > map && at[-1] != 0)
                        continue; /* inside another string */
                const char *c = at + lp;
                while (c < end && (isupper((unsigned char) *c) || isdigit((unsigned char) *c) || *c == '_'))
                        c++;
                if (c == end || *c != 0 || c == at + lp)
                        continue;
                _cleanup_free_ char *name = strndup(at, (size_t) (c - at));
                if (!name)
                        r = -ENOMEM;
                else if (!strv_contains(*ret, name))
                        r = strv_consume(ret, TAKE_PTR(name));
        }
        munmap((void *) map, (size_t) st.st_size);
        return r;
}

/* name, with "(did you mean CLOSE?)" unless close is NULL, into *list. */
static int push_unknown(char ***list, const char *name, const char *close) {
        char *item = NULL;
        if (close ? asprintf(&item, "%s (did you mean %s?)", name, close) < 0 : !(item = strdup(name)))
                return -ENOMEM;
        return strv_consume(list, item);
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
        return options_complaint(said, envp);
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

/* Every NAME that text holds as has_whole() matches one (after before, or at a line's start when
 * before is "", and followed by the character end on its line), each once, appended to *ret: a
 * reader's listing of the names it knows. */
static int names_listed(const char *text, const char *before, char end, char ***ret) {
        size_t lb = strlen(before);
        for (const char *at = text; at && *at;) {
                if (lb) {
                        if (!(at = strstr(at, before)))
                                break;
                        at += lb;
                }
                size_t n = strcspn(at, (const char[]){ end, 0 }), line = strcspn(at, "\n");
                if (n < line && n > 0) {
                        _cleanup_free_ char *name = strndup(at, n);
                        if (!name || (!strv_contains(*ret, name) && strv_consume(ret, TAKE_PTR(name)) < 0))
                                return -ENOMEM;
                }
                if (!lb) /* the next line */
                        at += line + (at[line] != 0);
        }
        return 0;
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

/* The loader's tunable names ("glibc.malloc.arena_max"), from its --list-tunables. */
static int tunable_names(char ***ret) {
        const char *loader = loader_path();
        const char *known = loader ? loader_tunables(loader) : NULL;
        return known ? names_listed(known, "", ':', ret) : 0;
}

/* Each name of GLIBC_TUNABLES=name=value:name=value... against the loader's tunables: the unknown
 * ones into *list ("GLIBC_TUNABLES entry NAME", with the tunable it may have meant). */
static int check_tunables(const char *tunables, char ***list) {
        _cleanup_free_ char *copy = strdup(tunables);
        _cleanup_strv_free_ char **names = NULL;
        if (!copy)
                return -ENOMEM;
        char *save = NULL;
        for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
                item[strcspn(item, "=")] = 0;
                if (!*item || options_tunable_known(item))
                        continue;
                if (!names && tunable_names(&names) < 0)
                        return -ENOMEM;
                /* "malloc.arena_max": the whole name is glibc.malloc.arena_max */
                _cleanup_free_ char *name = NULL, *whole = NULL;
                if (asprintf(&name, "GLIBC_TUNABLES entry %s", item) < 0 ||
                    asprintf(&whole, "glibc.%s", item) < 0)
                        return -ENOMEM;
                const char *close = strv_contains(names, whole) ? whole
                                    : names ? suggest_closest(item, (const char *const *) names)
                                            : NULL;
                if (push_unknown(list, name, close) < 0)
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

/* The names of mimalloc's option table as variables ("MIMALLOC_SHOW_STATS"). */
static int mimalloc_names(const char *said, char ***ret) {
        _cleanup_strv_free_ char **names = NULL;
        if (names_listed(said, "option '", '\'', &names) < 0)
                return -ENOMEM;
        for (char **n = names; n && *n; n++) {
                _cleanup_free_ char *name = NULL;
                if (asprintf(&name, "MIMALLOC_%s", *n) < 0)
                        return -ENOMEM;
                for (char *c = name; *c; c++)
                        *c = (char) toupper((unsigned char) *c);
                if (strv_consume(ret, TAKE_PTR(name)) < 0)
                        return -ENOMEM;
        }
        return 0;
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
        const CatalogEntry *family = a->path ? catalog_find_family(a->path) : NULL;
        CatalogOptionNames listing = family ? family->option_names : CATALOG_OPTIONS_UNCHECKED;
        const char *prefix = listing != CATALOG_OPTIONS_UNCHECKED ? family->option_prefix : NULL;
        bool verbose = listing == CATALOG_OPTIONS_VERBOSE;
        const char *said = NULL;
        bool asked = false;
        _cleanup_strv_free_ char **options = NULL, **tunables = NULL, **candidates = NULL;
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
                if (verbose) {
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
                        if (!candidates)
                                r = verbose ? (said ? mimalloc_names(said, &candidates) : 0)
                                            : file_names_with_prefix(a->path, prefix, &candidates);
                        if (r >= 0)
                                r = push_unknown(
                                        &options, name,
                                        candidates ? suggest_closest(name, (const char *const *) candidates)
                                                   : NULL);
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

/* The first line of stderr_text where an allocator of the catalog complains about its
 * configuration. */
static const char *complaint_in(const char *stderr_text) {
        for (const CatalogEntry *e = catalog_entries(); stderr_text && e->name; e++)
                for (const char *const *c = e->complaints; c && *c; c++) {
                        const char *hit = strstr(stderr_text, *c);
                        if (hit)
                                return hit;
                }
        return NULL;
}

static char *complaint_line(const char *stderr_text) {
        const char *hit = complaint_in(stderr_text);
        if (!hit)
                return NULL;
        /* A line that ends in ':' lists what it is about on the next, indented one: Scudo's
         * "found 1 unrecognized flag(s):" and "    bogus=1". */
        size_t len = strcspn(hit, "\n");
        const char *next = hit[len] ? hit + len + 1 : "";
        size_t indent = strspn(next, " \t");
        char *line = NULL;
        if (len > 0 && hit[len - 1] == ':' && indent > 0 && next[indent] && next[indent] != '\n')
                return asprintf(&line, "%.*s %.*s", (int) len, hit, (int) strcspn(next + indent, "\n"),
                                next + indent) < 0
                               ? NULL
                               : line;
        return strndup(hit, len);
}

/* jemalloc's option names ("dirty_decay_ms"), as the jemalloc that envp's LD_PRELOAD names
 * prints them at exit with stats_print:true ("  opt.dirty_decay_ms: 10000"). */
static int jemalloc_names(char *const *envp, char ***ret) {
        const char *value = env_get(envp, "LD_PRELOAD");
        _cleanup_free_ char *preload = NULL;
        if (!value)
                return 0;
        if (asprintf(&preload, "LD_PRELOAD=%s", value) < 0)
                return -ENOMEM;
        char *argv[] = { (char *) "true", NULL };
        char *env[] = { preload, (char *) "MALLOC_CONF=stats_print:true", NULL };
        _cleanup_free_ char *said = output_of("/bin/true", argv, env, true);
        return said ? names_listed(said, "\n  opt.", ':', ret) : 0;
}

/* A complaint of jemalloc's about a key it does not know ("Invalid conf pair: dirty_decay:1"),
 * with the key it may have meant, or the complaint as it is. Takes complaint. */
static char *with_jemalloc_hint(char *complaint, char *const *envp) {
        static const char pair[] = "<jemalloc>: Invalid conf pair: ";
        if (!complaint || !envp || strncmp(complaint, pair, strlen(pair)) != 0)
                return complaint;
        _cleanup_free_ char *key = strndup(complaint + strlen(pair), strcspn(complaint + strlen(pair), ":"));
        _cleanup_strv_free_ char **names = NULL;
        if (!key || jemalloc_names(envp, &names) < 0 || !names || strv_contains(names, key))
                return complaint;
        /* "dirty_decay" for dirty_decay_ms: a name the key begins is what it meant */
        const char *close = NULL;
        for (char **n = names; *n && !close; n++)
                if (strncmp(*n, key, strlen(key)) == 0 && (*n)[strlen(key)] == '_')
                        close = *n;
        if (!close)
                close = suggest_closest(key, (const char *const *) names);
        char *hinted = NULL;
        if (!close || asprintf(&hinted, "%s (did you mean %s?)", complaint, close) < 0)
                return complaint;
        free(complaint);
        return hinted;
}

char *options_complaint(const char *stderr_text, char *const *envp) {
        return with_jemalloc_hint(complaint_line(stderr_text), envp);
}

const char *options_own_layer(const char *program, const char *pythonmalloc) {
        if (!probe_uses_pymalloc(program, pythonmalloc))
                return NULL;
        return "serves objects up to 512 bytes from pymalloc's arenas, which the allocator under test "
               "never sees (alloclab census counts the malloc calls that reach it); PYTHONMALLOC=malloc "
               "in the environment routes them to malloc";
}
