/* SPDX-License-Identifier: MIT */
/*
 * The probe off the direct path: the constructor and destructor, which allocator serves the
 * program and how it is configured (identify), every allocator copy loaded (the census), and
 * the exec and spawn wrappers that hand the report over to the programs this one runs. Only the
 * constructor, the destructor and those wrappers run this code; it calls into probe.c, never
 * the other way.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <malloc.h>
#include <mimalloc.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/report.h"
#include "probe/interposer.h"

/* ---- identity and census (constructor and destructor only) ---------------------------- */

static bool defines(void *map, const char *name) {
        return find_symbol(map, name) != NULL;
}

/* The main program's link map: the head of the loader's list, reached from the probe's own
 * entry. Not through _r_debug: that is ld.so's symbol, and linking ld.so puts it early in every
 * program's search order, where each later symbol lookup of the loader pays for checking it. */
static struct link_map *first_object(void) {
        struct link_map *map = object_of((void *) first_object);
        while (map && map->l_prev)
                map = map->l_prev;
        return map;
}

static void add_option(const char *name, const char *value) {
        if (report->n_options >= PROBE_MAX_OPTIONS)
                return;
        ProbeOption *o = &report->options[report->n_options++];
        copy_text(o->name, sizeof(o->name), name);
        copy_text(o->value, sizeof(o->value), value);
}

typedef int (*MallctlFn)(const char *, void *, size_t *, void *, size_t);

static void identify_jemalloc(void *map, const char *prefix) {
        char name[64];
        join_text(name, sizeof(name), prefix, "mallctl");
        MallctlFn mallctl = (MallctlFn) symbol_address(map, name);
        if (!mallctl)
                return;
        const char *version = NULL;
        size_t len = sizeof(version);
        if (mallctl("version", &version, &len, NULL, 0) == 0 && version)
                copy_text(report->allocator_version, sizeof(report->allocator_version), version);
        static const struct {
                const char *name;
                char type; /* b bool, u unsigned, z size_t, s ssize_t, S string */
        } options[] = {
                { "opt.dirty_decay_ms", 's' },
                { "opt.muzzy_decay_ms", 's' },
                { "opt.background_thread", 'b' },
                { "opt.max_background_threads", 'z' },
                { "opt.narenas", 'u' },
                { "opt.percpu_arena", 'S' },
                { "opt.tcache", 'b' },
                { "opt.tcache_max", 'z' },
                { "opt.thp", 'S' },
                { "opt.metadata_thp", 'S' },
                { "opt.oversize_threshold", 'z' },
                { "opt.retain", 'b' },
                { "opt.dss", 'S' },
                { "opt.junk", 'S' },
                { "opt.zero", 'b' },
                { "opt.abort_conf", 'b' },
        };
        for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
                char value[PROBE_TEXT_MAX];
                union {
                        bool b;
                        unsigned u;
                        size_t z;
                        ssize_t s;
                        const char *S;
                } v = {};
                size_t size = options[i].type == 'b'   ? sizeof(bool)
                              : options[i].type == 'u' ? sizeof(unsigned)
                              : options[i].type == 'S' ? sizeof(const char *)
                                                       : sizeof(size_t);
                if (mallctl(options[i].name, &v, &size, NULL, 0) != 0)
                        continue;
                switch (options[i].type) {
                case 'b':
                        snprintf(value, sizeof(value), "%s", v.b ? "true" : "false");
                        break;
                case 'u':
                        snprintf(value, sizeof(value), "%u", v.u);
                        break;
                case 'z':
                        snprintf(value, sizeof(value), "%zu", v.z);
                        break;
                case 's':
                        snprintf(value, sizeof(value), "%zd", v.s);
                        break;
                default:
                        snprintf(value, sizeof(value), "%s", v.S ? v.S : "");
                }
                add_option(options[i].name + 4, value); /* without "opt." */
        }
}

static void identify_mimalloc(void *map, const char *prefix) {
        (void) prefix;
        int (*version)(void) = (int (*)(void)) symbol_address(map, "mi_version");
        long (*option_get)(mi_option_t) = (long (*)(mi_option_t)) symbol_address(map, "mi_option_get");
        if (!version)
                return;
        int v = version();
        snprintf(report->allocator_version, sizeof(report->allocator_version), "%d.%d.%d", v / 100,
                 (v % 100) / 10, v % 10);
        /* Option numbers are only meaningful for the mimalloc this probe was built against. */
        if (!option_get || v != MI_MALLOC_VERSION)
                return;
        static const struct {
                const char *name;
                mi_option_t option;
        } options[] = {
                { "show_errors", mi_option_show_errors },
                { "show_stats", mi_option_show_stats },
                { "verbose", mi_option_verbose },
                { "eager_commit", mi_option_eager_commit },
                { "large_os_pages", mi_option_large_os_pages },
                { "reserve_huge_os_pages", mi_option_reserve_huge_os_pages },
                { "reserve_os_memory", mi_option_reserve_os_memory },
                { "page_reset", mi_option_page_reset },
                { "abandoned_page_decommit", mi_option_abandoned_page_decommit },
                { "eager_commit_delay", mi_option_eager_commit_delay },
                { "decommit_delay", mi_option_decommit_delay },
                { "use_numa_nodes", mi_option_use_numa_nodes },
                { "limit_os_alloc", mi_option_limit_os_alloc },
                { "allow_decommit", mi_option_allow_decommit },
                { "segment_decommit_delay", mi_option_segment_decommit_delay },
                { "decommit_extend_delay", mi_option_decommit_extend_delay },
        };
        for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
                char value[PROBE_TEXT_MAX];
                snprintf(value, sizeof(value), "%ld", option_get(options[i].option));
                add_option(options[i].name, value);
        }
}

static void identify_tcmalloc(void *map, const char *prefix) {
        (void) prefix;
        const char *(*version)(int *, int *, const char **) =
                (const char *(*) (int *, int *, const char **) ) symbol_address(map, "tc_version");
        int (*property)(const char *, size_t *) =
                (int (*)(const char *, size_t *)) symbol_address(map, "MallocExtension_GetNumericProperty");
        if (version) {
                int major = 0, minor = 0;
                const char *patch = NULL;
                copy_text(report->allocator_version, sizeof(report->allocator_version),
                          version(&major, &minor, &patch));
        }
        if (!property)
                return;
        static const char *const properties[] = {
                "tcmalloc.max_total_thread_cache_bytes",     "tcmalloc.aggressive_memory_decommit",
                "tcmalloc.current_total_thread_cache_bytes", "tcmalloc.pageheap_free_bytes",
                "tcmalloc.pageheap_unmapped_bytes",
        };
        for (size_t i = 0; i < sizeof(properties) / sizeof(properties[0]); i++) {
                size_t v;
                char value[PROBE_TEXT_MAX];
                if (!property(properties[i], &v))
                        continue;
                snprintf(value, sizeof(value), "%zu", v);
                add_option(properties[i], value);
        }
}

/* Scudo has no version call; its options are what SCUDO_OPTIONS says (it parses them at start). */
static void identify_scudo(void *map, const char *prefix) {
        (void) map;
        (void) prefix;
        const char *options = getenv("SCUDO_OPTIONS");
        add_option("SCUDO_OPTIONS", options ? options : "");
}

static void identify_glibc(void *map, const char *prefix) {
        (void) map;
        (void) prefix;
        copy_text(report->allocator_version, sizeof(report->allocator_version), gnu_get_libc_version());
        const char *tunables = getenv("GLIBC_TUNABLES");
        add_option("GLIBC_TUNABLES", tunables ? tunables : "");
}

/* The probe's row of each family (probe/report.h). */
typedef struct FamilyRow {
        uint32_t bit;
        const char *marker, *also, *shim;
        bool prefixed;
        void (*identify)(void *map, const char *prefix);
} FamilyRow;

#define FAMILY_ROW(id, name, marker, also, shim, prefixed, identify)                                        \
        { PROBE_FAMILY_##id, marker, also, shim, prefixed, identify },
static const FamilyRow family_rows[PROBE_N_FAMILIES] = { PROBE_FAMILIES(FAMILY_ROW) };
#undef FAMILY_ROW

/* Symbol prefixes of jemalloc builds seen in the wild, for a prefixed marker; the forward-mode
 * prefix is tried too. */
static const char *const marker_prefixes[] = { "", "je_", "_rjem_", "rjem_", NULL };

/* Whether map defines the family's marker, under one of the prefixes when the family's is
 * prefixed: the prefix found into prefix. */
static bool has_marker(void *map, const char *marker, bool prefixed, char *prefix, size_t prefix_size) {
        if (!prefixed)
                return defines(map, marker);
        const char *candidates[sizeof(marker_prefixes) / sizeof(marker_prefixes[0]) + 1];
        size_t n = 0;
        for (size_t i = 0; marker_prefixes[i]; i++)
                candidates[n++] = marker_prefixes[i];
        if (forward_prefix[0])
                candidates[n++] = forward_prefix;
        for (size_t i = 0; i < n; i++) {
                char name[64];
                join_text(name, sizeof(name), candidates[i], marker);
                if (defines(map, name)) {
                        copy_text(prefix, prefix_size, candidates[i]);
                        return true;
                }
        }
        return false;
}

/* Allocator families of the object, and its symbol prefix. A forwarding shim (the tbbmalloc
 * proxy) counts only when `shims` is set: it serves malloc but implements nothing, so the
 * census must not count it as a second copy. */
static uint32_t families_of(void *map, bool shims, char *prefix, size_t prefix_size) {
        uint32_t f = 0;
        for (size_t i = 0; i < PROBE_N_FAMILIES; i++) {
                const FamilyRow *row = &family_rows[i];
                if ((has_marker(map, row->marker, row->prefixed, prefix, prefix_size) &&
                     (!row->also || defines(map, row->also))) ||
                    (shims && row->shim && defines(map, row->shim)))
                        f |= row->bit;
        }
        return f;
}

/* The object serving the started process's malloc (identify()), for its statistics at exit. */
static struct link_map *effective_map;

/* The object that serves the program's malloc: the first definition in the global scope,
 * unless that is this probe, in which case the one it forwards to. */
static void identify(void) {
        /* The first object in the global scope that defines malloc (the loader's list is in
         * that order for everything loaded at start-up). */
        struct link_map *map = first_object();
        while (map && !find_symbol(map, "malloc"))
                map = map->l_next;
        /* This probe's own object, found through a static function: the address of malloc
         * itself may be a canonical PLT entry in the main program. */
        if (map == object_of((void *) identify))
                map = object_of((void *) next.malloc);
        if (!map)
                return;
        char path[PROBE_PATH_MAX], prefix[sizeof(report->effective_prefix)] = "";
        if (map->l_name && map->l_name[0])
                copy_text(path, sizeof(path), map->l_name);
        else if (!own_program(path, sizeof(path)))
                copy_text(path, sizeof(path), "?");
        uint32_t family = families_of(map, true, prefix, sizeof(prefix));
        ProbeProcess *self = this_process();
        if (self) {
                memcpy(self->effective_path, path, sizeof(path));
                self->family = family;
        }
        /* The report's own identity, options and census are the started process's, as its
         * program is now: a wrapper's are replaced by the program it executes. */
        if (getpid() != report->pid)
                return;
        effective_map = map;
        memcpy(report->effective_path, path, sizeof(path));
        memcpy(report->effective_prefix, prefix, sizeof(prefix));
        report->effective_family = family;
        report->state |= PROBE_STATE_IDENTITY;
        if (!(report->requests & PROBE_REQUEST_IDENTITY))
                return;
        report->n_options = 0;
        for (size_t i = 0; i < PROBE_N_FAMILIES; i++)
                if ((report->effective_family & family_rows[i].bit) && family_rows[i].identify) {
                        family_rows[i].identify(map, report->effective_prefix);
                        break;
                }
        report->state |= PROBE_STATE_OPTIONS;
}

/* Number of objects the census saw, so the exit census runs only when something was loaded
 * since start-up. */
static unsigned census_objects;

/* Walks the loader's list of objects from the main program on and asks each which allocators it
 * implements (find_symbol: no lookups that fail through dlsym, no dlopen). */
static void census(void) {
        struct link_map *main_map = first_object();
        unsigned objects = 0;
        uint32_t n = 0;
        for (struct link_map *map = main_map; map; map = map->l_next) {
                objects++;
                char prefix[16] = "";
                uint32_t families = families_of(map, false, prefix, sizeof(prefix));
                if (!families || n >= PROBE_MAX_LIBRARIES)
                        continue;
                ProbeLibrary *lib = &report->libraries[n++];
                if (map == main_map) {
                        (void) own_program(lib->path, sizeof(lib->path));
                } else
                        copy_text(lib->path, sizeof(lib->path), map->l_name);
                lib->families = families;
                copy_text(lib->prefix, sizeof(lib->prefix), prefix);
        }
        census_objects = objects;
        report->n_libraries = n;
        report->state |= PROBE_STATE_CENSUS;
}

/* Loaded objects that implement an allocator other than glibc's: a process's copies. */
static uint32_t count_copies(void) {
        uint32_t n = 0;
        for (struct link_map *map = first_object(); map; map = map->l_next) {
                char prefix[16];
                n += (families_of(map, false, prefix, sizeof(prefix)) & ~(uint32_t) PROBE_FAMILY_GLIBC) != 0;
        }
        return n;
}

/* Whether objects were loaded or unloaded since the last census. */
static bool census_stale(void) {
        unsigned objects = 0;
        for (struct link_map *map = first_object(); map; map = map->l_next)
                objects++;
        return objects != census_objects;
}

/* ---- exec and spawn (cold) ------------------------------------------------------------ */

static const char *env_value(char *const envp[], const char *key) {
        size_t n = strlen(key);
        for (char *const *e = envp; e && *e; e++)
                if (strncmp(*e, key, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

/* An environment for a new image that loads the probe too, with the report's descriptor and
 * this process's entry; the descriptor is made inheritable until take_back(). NULL (nothing
 * handed over) when the new image does not load the probe, or on failure. The array lives in
 * its own mapping: the probe never allocates through malloc. */
typedef struct Handover {
        char **envp;
        size_t size;
} Handover;

static Handover hand_over(char *const envp[]) {
        const char *preload = env_value(envp, "LD_PRELOAD");
        if (report_fd < 0 || !preload || !strstr(preload, "liballoclab-probe.so"))
                return (Handover){ 0 };
        /* Still the report, sealed as the runner made it: a program that closed the descriptor
         * and reused its number must not have its own file made inheritable. */
        int seals = fcntl(report_fd, F_GET_SEALS);
        if (seals < 0 || !(seals & F_SEAL_SHRINK) || !(seals & F_SEAL_GROW))
                return (Handover){ 0 };
        size_t n = 0;
        while (envp[n])
                n++;
        size_t size = (n + 3) * sizeof(char *) + 2 * 64;
        char **out = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (out == MAP_FAILED)
                return (Handover){ 0 };
        char *fd_var = (char *) (out + n + 3), *parent_var = fd_var + 64;
        snprintf(fd_var, 64, "%s=%d", PROBE_ENV_FD, report_fd);
        snprintf(parent_var, 64, "%s=%d", PROBE_ENV_PARENT, (int) process_index);
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
                if (strncmp(envp[i], PROBE_ENV_FD "=", sizeof(PROBE_ENV_FD)) != 0 &&
                    strncmp(envp[i], PROBE_ENV_PARENT "=", sizeof(PROBE_ENV_PARENT)) != 0)
                        out[k++] = envp[i];
        out[k++] = fd_var;
        out[k++] = parent_var;
        out[k] = NULL;
        if (fcntl(report_fd, F_SETFD, 0) < 0) {
                munmap(out, size);
                return (Handover){ 0 };
        }
        return (Handover){ .envp = out, .size = size };
}

/* After an exec that failed, or a spawn: the descriptor is close-on-exec again. */
static void take_back(Handover h) {
        if (!h.envp)
                return;
        (void) fcntl(report_fd, F_SETFD, FD_CLOEXEC);
        munmap(h.envp, h.size);
}

/* An exec (or, with spawned, a spawn) of path with envp. The new image loads what its own
 * LD_PRELOAD says. For the started process replacing its image: recorded in the report's exec_*
 * fields for the runner to judge (a program that re-executes itself with another preload is not
 * measured under the allocator under test). For any process: a program that will not load the
 * probe is not in the tree, so it is named in the process's entry. The exec itself goes ahead
 * unchanged; one that fails takes its record back (exec_failed()). */
static void note_exec(const char *path, char *const envp[], bool handed, bool spawned) {
        if (report == &fallback_report)
                return;
        const char *preload = env_value(envp, "LD_PRELOAD");
        if (!spawned && getpid() == report->pid) {
                copy_text(report->exec_path, sizeof(report->exec_path), path);
                copy_text(report->exec_preload, sizeof(report->exec_preload), preload);
                report->exec_preload_set = preload != NULL;
                __atomic_fetch_or(&report->state, PROBE_STATE_EXEC, __ATOMIC_RELEASE);
        }
        ProbeProcess *self = this_process();
        if (!self && !handed) /* past the table: the proof needs to know it happened */
                __atomic_or_fetch(&report->state, PROBE_STATE_UNLISTED_FOREIGN, __ATOMIC_RELAXED);
        if (self && !handed) {
                copy_text(self->unprobed_preload, sizeof(self->unprobed_preload),
                          preload ? preload : "(unset)");
                copy_text(self->unprobed_exec, sizeof(self->unprobed_exec), path);
        }
}

static int exec_failed(Handover h) {
        int saved = errno;
        take_back(h);
        if (report != &fallback_report && getpid() == report->pid)
                __atomic_fetch_and(&report->state, ~(uint32_t) PROBE_STATE_EXEC, __ATOMIC_RELEASE);
        ProbeProcess *self = this_process();
        if (self)
                self->unprobed_exec[0] = 0;
        errno = saved;
        return -1;
}

/* The next definition of an exec function; resolved on use (execs are rare). */
static void *next_exec(const char *name) {
        interposer_enter(); /* dlsym may allocate: not the program's calls */
        void *f = next_definition(name);
        interposer_leave();
        return f;
}

typedef int (*ExecFn)(const char *, char *const[], char *const[]);
typedef int (*FexecveFn)(int, char *const[], char *const[]);
typedef int (*SpawnFn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                       char *const[], char *const[]);

/* execve and execvpe; each returns only when the exec failed. */
static int exec_through(const char *name, const char *path, char *const argv[], char *const envp[]) {
        ExecFn real = (ExecFn) next_exec(name);
        Handover h = hand_over(envp);
        note_exec(path, envp, h.envp != NULL, false);
        if (real)
                real(path, argv, h.envp ? h.envp : envp);
        return exec_failed(h);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[]) {
        return exec_through("execve", path, argv, envp);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) {
        return exec_through("execvpe", file, argv, envp);
}

/* The forms without an environment pass the process's own, as glibc's do. */
EXPORT int execv(const char *path, char *const argv[]) {
        return exec_through("execve", path, argv, environ);
}

EXPORT int execvp(const char *file, char *const argv[]) {
        return exec_through("execvpe", file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[]) {
        FexecveFn real = (FexecveFn) next_exec("fexecve");
        Handover h = hand_over(envp);
        note_exec("(a descriptor)", envp, h.envp != NULL, false);
        if (real)
                real(fd, argv, h.envp ? h.envp : envp);
        return exec_failed(h);
}

/* posix_spawn returns once the child has executed its program (or failed to), so the
 * descriptor is inheritable only meanwhile. */
static int spawn_through(const char *name, pid_t *pid, const char *path,
                         const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
                         char *const argv[], char *const envp[]) {
        SpawnFn real = (SpawnFn) next_exec(name);
        if (!real)
                return ENOSYS;
        Handover h = hand_over(envp);
        note_exec(path, envp, h.envp != NULL, true);
        int r = real(pid, path, actions, attr, argv, h.envp ? h.envp : envp);
        take_back(h);
        return r;
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                       const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
        return spawn_through("posix_spawn", pid, path, actions, attr, argv, envp);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
        return spawn_through("posix_spawnp", pid, file, actions, attr, argv, envp);
}

/* execl, execlp, execle gather their arguments on the stack and go through the vector forms. */
#define EXEC_MAX_ARGS 4096

/* Fills argv from first and the NULL-terminated rest of ap; false (E2BIG) past EXEC_MAX_ARGS. */
static bool gather_args(char **argv, const char *first, va_list *ap) {
        size_t n = 0;
        for (char *arg = (char *) first; n < EXEC_MAX_ARGS; arg = va_arg(*ap, char *)) {
                argv[n++] = arg;
                if (!arg)
                        return true;
        }
        errno = E2BIG;
        return false;
}

EXPORT int execl(const char *path, const char *arg, ...) {
        char *argv[EXEC_MAX_ARGS];
        va_list ap;
        va_start(ap, arg);
        bool ok = gather_args(argv, arg, &ap);
        va_end(ap);
        return ok ? execv(path, argv) : -1;
}

EXPORT int execlp(const char *file, const char *arg, ...) {
        char *argv[EXEC_MAX_ARGS];
        va_list ap;
        va_start(ap, arg);
        bool ok = gather_args(argv, arg, &ap);
        va_end(ap);
        return ok ? execvp(file, argv) : -1;
}

EXPORT int execle(const char *path, const char *arg, ...) {
        char *argv[EXEC_MAX_ARGS];
        va_list ap;
        va_start(ap, arg);
        bool ok = gather_args(argv, arg, &ap);
        char *const *envp = ok ? va_arg(ap, char *const *) : NULL;
        va_end(ap);
        return ok ? execve(path, argv, envp) : -1;
}

__attribute__((constructor)) static void probe_init(void) {
        if (!interposer_ready())
                return;
        interposer_enter(); /* what identification allocates is the probe's doing, not the program's */
        identify();
        ProbeProcess *self = this_process();
        if ((report->requests & PROBE_REQUEST_IDENTITY) && self)
                self->copies = count_copies();
        if ((report->requests & PROBE_REQUEST_IDENTITY) && getpid() == report->pid)
                census();
        interposer_leave();
}

/* The process's memory as the kernel sums its mappings, at its exit (PROBE_REQUEST_MEMORY): read
 * into the stack and parsed in place, nothing allocated. */
static void read_memory(ProbeProcess *self) {
        static const struct {
                const char *key; /* with its colon */
                size_t offset;
        } fields[] = {
                { "Rss:", offsetof(ProbeProcess, rss_kib) },
                { "Pss_Anon:", offsetof(ProbeProcess, pss_anon_kib) },
                { "AnonHugePages:", offsetof(ProbeProcess, anon_huge_kib) },
        };
        char text[4096];
        size_t used = 0;
        int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        for (ssize_t n; used < sizeof(text) - 1 && (n = read(fd, text + used, sizeof(text) - 1 - used)) > 0;)
                used += (size_t) n;
        close(fd);
        text[used] = 0;
        unsigned found = 0;
        for (char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
                for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
                        if (strncmp(line, fields[i].key, strlen(fields[i].key)) == 0) {
                                *(uint64_t *) ((char *) self + fields[i].offset) =
                                        strtoull(line + strlen(fields[i].key), NULL, 10);
                                found++;
                        }
        self->memory_read = found == sizeof(fields) / sizeof(fields[0]);
        /* Not the program's: the probe's table of live blocks, private anonymous memory. */
        uint64_t own = probe_table_kib();
        self->rss_kib -= own < self->rss_kib ? own : self->rss_kib;
        self->pss_anon_kib -= own < self->pss_anon_kib ? own : self->pss_anon_kib;
}

__attribute__((destructor)) static void probe_exit(void) {
        if (!interposer_resolved())
                return;
        interposer_enter();
        flush_live();
        bool started = getpid() == report->pid;
        if (started && (report->state & PROBE_STATE_CENSUS) && census_stale())
                census(); /* objects dlopen()ed since start-up */
        ProbeProcess *self = this_process();
        if (self && (report->requests & PROBE_REQUEST_MEMORY))
                read_memory(self);
        if (started && effective_map && (report->requests & PROBE_REQUEST_STATS))
                write_allocator_stats(effective_map, report->effective_family, report->effective_prefix);
        interposer_leave();
        if (started)
                report->state |= PROBE_STATE_EXITED;
}
