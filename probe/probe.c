/* SPDX-License-Identifier: MIT */
/*
 * liballoclab-probe.so: an LD_PRELOAD interposer for the malloc family, placed first in
 * LD_PRELOAD. It forwards every call to the next definition (dlsym(RTLD_NEXT)), or in forward
 * mode to a privately loaded library's prefixed family, and reports into the shared memory the
 * runner handed over (probe/report.h):
 *   - which shared object provides the malloc the program reaches and its allocator family;
 *   - when the runner requests them (smoke runs, `alloclab census`): the allocator's version and
 *     effective options, every loaded object that implements an allocator (the census), and
 *     live/peak requested and usable bytes;
 *   - per-thread call counters and bytes requested.
 *
 * Invariants:
 *   - never allocates through malloc on its own behalf; calls made while dlsym() resolves are
 *     served from a static bump arena whose blocks free/realloc/malloc_usable_size recognise;
 *   - a run that does not count (timed samples) jumps straight to the allocator (direct); a
 *     run that counts (smoke runs, census, `probe: counters`) takes the slow path, which
 *     counts only the outermost call, with a depth guard in initial-exec TLS (ThreadState);
 *   - no locks in counting: each thread owns a counter slot and is its only writer; threads
 *     past PROBE_MAX_SLOTS share the last slot through atomic read-modify-writes;
 *   - the probe's own work never changes errno: free() leaves it as the allocator's free()
 *     does; posix_memalign() leaves *p alone on error; calloc() and reallocarray() check for
 *     overflow before forwarding;
 *   - fork-safe: the child's threads take fresh slots.
 * Peak live bytes: each thread flushes its live-byte delta into a shared total when the delta
 * exceeds PROBE_FLUSH_BYTES, and the peak is taken over those totals, so it can be low by at
 * most PROBE_FLUSH_BYTES per thread. This keeps counting free of shared cache lines. Where
 * requested sizes are tracked too (smoke runs, census) every change is flushed: the peak is
 * exact there, and never below the requested peak.
 * Peak requested bytes (smoke runs, census): a free() subtracts what its block's call asked for,
 * which no allocator keeps, so the probe keeps each live block's requested size in a table of
 * its own memory (mmap), under a spin lock: the one lock, taken only in runs that are not timed.
 *
 * C++ operator new and delete (every form) are interposed too: Debian's jemalloc, mimalloc and
 * tcmalloc define their own, which C++ programs call without passing through malloc.
 *
 * Deliberately not done: interposing dlopen() (it would change the caller glibc uses for
 * $ORIGIN and RUNPATH lookups); objects loaded later are caught by the census at exit.
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
#include <sched.h>
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

#include "probe/interposer.h"
#include "probe/report.h"

#define PROBE_ARENA_SIZE  (256 * 1024)
#define PROBE_FLUSH_BYTES (64 * 1024)

Family next;
char forward_prefix[16]; /* forward mode's symbol prefix, also a jemalloc prefix candidate */
/* Whether a function's blocks may be measured with next.usable_size: not when that function
 * comes from another object than usable_size (an allocator that lacks pvalloc leaves it to
 * glibc, and asking jemalloc for the size of a glibc block would crash the program). */
static bool measurable[_PROBE_FUNCTION_MAX];
static bool counting;  /* counters were requested: every call takes the slow path */
static bool measuring; /* live bytes were requested and can be measured too */
static bool tracking;  /* live bytes were requested: requested sizes are tracked (blocks below) */
/* Calls go straight to the allocator: the probe is ready and counts nothing. */
static bool direct;
int init_state;              /* 0: not yet, 1: resolving, 2: ready */
ProbeReport fallback_report; /* no runner: nobody reads it, so nothing is requested */
ProbeReport *report = &fallback_report;
int report_fd = -1;         /* the report's memfd, kept for the programs this one executes */
int32_t process_index = -1; /* this process's entry in report->processes; -1: unlisted */

/* What the slow path keeps of its thread, in one initial-exec TLS block. Only the outermost
 * call is counted: a call the allocator (or something it calls, or the probe itself) makes
 * from inside one finds depth above 0. */
typedef struct ThreadState {
        int depth;            /* nesting of malloc-family calls; depth 0 is counted */
        bool shared;          /* slot is the last one, shared by the threads past PROBE_MAX_SLOTS */
        ProbeSlot *slot;      /* this thread's counters; NULL until its first counted call */
        int64_t pending_live; /* live-byte change not yet added to the report's total */
} ThreadState;
static TLS ThreadState this_thread;

/* ---- bootstrap arena ------------------------------------------------------------------ */

static char arena[PROBE_ARENA_SIZE] __attribute__((aligned(64)));
/* Bytes of the arena handed out, or ARENA_SEALED: the probe became ready without serving a
 * call from it (the usual case), so no block is the arena's and a direct free() need not ask
 * (forward_free). */
static size_t arena_used;
#define ARENA_SEALED SIZE_MAX

typedef struct ArenaHeader {
        size_t size;
        size_t pad;
} ArenaHeader;

/* Whether p came from the arena: one unsigned comparison. */
static inline bool in_arena(const void *p) {
        return (uintptr_t) p - (uintptr_t) arena < sizeof(arena);
}

static void *after_seal(size_t size, size_t align);

static void *arena_alloc(size_t size, size_t align) {
        if (align < sizeof(ArenaHeader))
                align = sizeof(ArenaHeader);
        size_t used = __atomic_load_n(&arena_used, __ATOMIC_RELAXED);
        for (;;) {
                if (used == ARENA_SEALED)
                        return after_seal(size, align);
                uintptr_t start = (uintptr_t) arena + used + sizeof(ArenaHeader);
                uintptr_t p = (start + align - 1) & ~(uintptr_t) (align - 1);
                if (size > sizeof(arena) || p + size > (uintptr_t) arena + sizeof(arena)) {
                        errno = ENOMEM;
                        return NULL;
                }
                size_t end = p + size - (uintptr_t) arena;
                if (__atomic_compare_exchange_n(&arena_used, &used, end, false, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED)) {
                        ((ArenaHeader *) p)[-1].size = size;
                        __atomic_fetch_add(&report->bootstrap_bytes, size, __ATOMIC_RELAXED);
                        return (void *) p; /* static storage is zeroed: calloc needs nothing */
                }
        }
}

static size_t arena_size(const void *p) {
        return ((const ArenaHeader *) p)[-1].size;
}

/* What a direct free() forwards to: next.free once the arena is sealed (resolve()), else
 * this. */
static void free_outside_arena(void *p) {
        if (!in_arena(p))
                next.free(p);
}
static void (*forward_free)(void *) = free_outside_arena;

/* ---- small string helpers (no allocation, always terminated) -------------------------- */

void copy_text(char *dst, size_t size, const char *src) {
        size_t n = src ? strnlen(src, size - 1) : 0;
        memcpy(dst, src ? src : "", n);
        dst[n] = 0;
}

void join_text(char *dst, size_t size, const char *a, const char *b) {
        copy_text(dst, size, a);
        size_t n = strlen(dst);
        copy_text(dst + n, size - n, b);
}

/* ---- resolution ----------------------------------------------------------------------- */

/* Looks name up in one object's own dynamic symbol table through its GNU hash table, without
 * dlsym(): a failed dlsym() costs an error object and a longjmp, and the census asks each
 * object for a dozen names it mostly lacks. Returns NULL when absent or not defined there. */
const ElfW(Sym) * find_symbol(const struct link_map *map, const char *name) {
        const ElfW(Sym) *symtab = NULL;
        const char *strtab = NULL;
        const uint32_t *gnu = NULL;
        if (!map->l_ld || (map->l_name && strncmp(map->l_name, "linux-vdso", 10) == 0))
                return NULL;
        for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
                /* The loader relocates these in place; an unrelocated one is an offset. */
                ElfW(Addr) ptr = d->d_un.d_ptr < map->l_addr ? d->d_un.d_ptr + map->l_addr : d->d_un.d_ptr;
                if (d->d_tag == DT_SYMTAB)
                        symtab = (const ElfW(Sym) *) ptr;
                else if (d->d_tag == DT_STRTAB)
                        strtab = (const char *) ptr;
                else if (d->d_tag == DT_GNU_HASH)
                        gnu = (const uint32_t *) ptr;
                if (symtab && strtab && gnu)
                        break;
        }
        if (!symtab || !strtab || !gnu)
                return NULL;
        uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2], bloom_shift = gnu[3];
        const ElfW(Addr) *bloom = (const ElfW(Addr) *) &gnu[4];
        const uint32_t *buckets = (const uint32_t *) &bloom[bloom_size];
        const uint32_t *chain = &buckets[nbuckets];
        if (nbuckets == 0 || bloom_size == 0)
                return NULL;
        uint32_t h = 5381;
        for (const unsigned char *c = (const unsigned char *) name; *c; c++)
                h = h * 33 + *c;
        const unsigned bits = sizeof(ElfW(Addr)) * 8;
        ElfW(Addr) word = bloom[(h / bits) % bloom_size];
        ElfW(Addr) mask = ((ElfW(Addr)) 1 << (h % bits)) | ((ElfW(Addr)) 1 << ((h >> bloom_shift) % bits));
        if ((word & mask) != mask)
                return NULL;
        for (uint32_t i = buckets[h % nbuckets]; i >= symoffset; i++) {
                uint32_t h2 = chain[i - symoffset];
                if ((h | 1) == (h2 | 1) && strcmp(name, strtab + symtab[i].st_name) == 0)
                        return symtab[i].st_shndx != SHN_UNDEF ? &symtab[i] : NULL;
                if (h2 & 1)
                        break;
        }
        return NULL;
}

void *symbol_address(const struct link_map *map, const char *name) {
        const ElfW(Sym) *sym = find_symbol(map, name);
        if (!sym || (ELF64_ST_TYPE(sym->st_info) != STT_FUNC && ELF64_ST_TYPE(sym->st_info) != STT_OBJECT))
                return NULL;
        return (void *) (map->l_addr + sym->st_value);
}

/* The next definition of name after this probe in the global search order: what
 * dlsym(RTLD_NEXT) returns, found through the hash tables directly, since each dlsym() call
 * costs tens of microseconds at start-up. IFUNCs (and anything unusual) go to dlsym(). */
void *next_definition(const char *name) {
        struct dl_find_object probe_object;
        if (_dl_find_object((void *) next_definition, &probe_object) != 0)
                return dlsym(RTLD_NEXT, name);
        for (struct link_map *map = probe_object.dlfo_link_map->l_next; map; map = map->l_next) {
                const ElfW(Sym) *sym = find_symbol(map, name);
                if (!sym)
                        continue;
                if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC)
                        return dlsym(RTLD_NEXT, name);
                return (void *) (map->l_addr + sym->st_value);
        }
        return NULL;
}

/* Looks up prefix+name in handle (RTLD_NEXT or a dlopen handle), trying each name in a
 * NULL-terminated list. */
static void *lookup(void *handle, const char *prefix, const char *const *names) {
        for (size_t i = 0; names[i]; i++) {
                char symbol[96];
                join_text(symbol, sizeof(symbol), prefix, names[i]);
                void *p = handle == RTLD_NEXT ? next_definition(symbol) : dlsym(handle, symbol);
                if (p)
                        return p;
        }
        return NULL;
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The link map of the object containing address p. _dl_find_object() (glibc 2.35) is a
 * lock-free lookup; dladdr1() would also scan the object's whole symbol table for the nearest
 * symbol, which at start-up, ten times over, costs more than everything else the probe does. */
struct link_map *object_of(const void *p) {
        if (!p)
                return NULL;
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
        struct dl_find_object found;
        return _dl_find_object((void *) p, &found) == 0 ? found.dlfo_link_map : NULL;
#else
        Dl_info info;
        struct link_map *map = NULL;
        return dladdr1(p, &info, (void **) &map, RTLD_DL_LINKMAP) ? map : NULL;
#endif
}

static void resolve_family(Family *f, void *handle, const char *prefix) {
        f->malloc = lookup(handle, prefix, NAMES("malloc"));
        f->free = lookup(handle, prefix, NAMES("free"));
        f->calloc = lookup(handle, prefix, NAMES("calloc"));
        f->realloc = lookup(handle, prefix, NAMES("realloc"));
        f->reallocarray = lookup(handle, prefix, NAMES("reallocarray"));
        f->posix_memalign = lookup(handle, prefix, NAMES("posix_memalign"));
        f->aligned_alloc = lookup(handle, prefix, NAMES("aligned_alloc"));
        f->memalign = lookup(handle, prefix, NAMES("memalign"));
        f->valloc = lookup(handle, prefix, NAMES("valloc"));
        f->pvalloc = lookup(handle, prefix, NAMES("pvalloc"));
        f->usable_size = lookup(handle, prefix, NAMES("malloc_usable_size", "usable_size", "malloc_size"));

        void *fns[_PROBE_FUNCTION_MAX] = {
                [PROBE_MALLOC] = (void *) f->malloc,
                [PROBE_CALLOC] = (void *) f->calloc,
                [PROBE_REALLOC] = (void *) f->realloc,
                [PROBE_REALLOCARRAY] = (void *) f->reallocarray,
                [PROBE_POSIX_MEMALIGN] = (void *) f->posix_memalign,
                [PROBE_ALIGNED_ALLOC] = (void *) f->aligned_alloc,
                [PROBE_MEMALIGN] = (void *) f->memalign,
                [PROBE_VALLOC] = (void *) f->valloc,
                [PROBE_PVALLOC] = (void *) f->pvalloc,
        };
        const void *sizer = object_of((void *) f->usable_size);
        for (unsigned i = 0; i < _PROBE_FUNCTION_MAX; i++)
                /* A missing function is derived from the family itself in forward mode. */
                measurable[i] = sizer && (!fns[i] || object_of(fns[i]) == sizer);
        /* C++ blocks come from the allocator's own operator new, or from the C++ runtime's, which
         * calls malloc: either way the allocator's usable size measures them. */
        measurable[PROBE_FREE] = measurable[PROBE_NEW] = measurable[PROBE_DELETE] = measurable[PROBE_MALLOC];
        counting = report->requests & PROBE_REQUEST_COUNTERS;
        if (counting)
                report->state |= PROBE_STATE_COUNTERS;
        if (counting && (report->requests & PROBE_REQUEST_LIVE_BYTES)) {
                tracking = true;
                __atomic_or_fetch(&report->state, PROBE_STATE_LIVE_REQUESTED, __ATOMIC_RELAXED);
        }
        if (!counting || !(report->requests & PROBE_REQUEST_LIVE_BYTES))
                memset(measurable, 0, sizeof(measurable));
        else if (measurable[PROBE_MALLOC]) {
                measuring = true;
                report->state |= PROBE_STATE_LIVE_BYTES;
        }
}

/* Forward mode: the whole family comes from one library loaded privately. The core entry
 * points must exist; the rest are derived in the wrappers below when missing. Returns false and
 * fills report->error when the library cannot serve. */
static bool resolve_forward(const char *library, const char *prefix) {
        copy_text(report->forward_library, sizeof(report->forward_library), library);
        void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                copy_text(report->error, sizeof(report->error), dlerror());
                return false;
        }
        resolve_family(&next, handle, prefix);
        const struct {
                const char *name;
                bool present;
        } core[] = {
                { "malloc", next.malloc },
                { "free", next.free },
                { "calloc", next.calloc },
                { "realloc", next.realloc },
                { "posix_memalign|aligned_alloc|memalign",
                  next.posix_memalign || next.aligned_alloc || next.memalign },
                { "malloc_usable_size|usable_size|malloc_size", next.usable_size },
        };
        char missing[PROBE_PATH_MAX] = "";
        for (size_t i = 0; i < sizeof(core) / sizeof(core[0]); i++)
                if (!core[i].present) {
                        size_t n = strlen(missing);
                        snprintf(missing + n, sizeof(missing) - n, "%s%s%s", n ? ", " : "", prefix,
                                 core[i].name);
                }
        if (missing[0]) {
                int n = snprintf(report->error, sizeof(report->error), "%s lacks core entry points: %s",
                                 library, missing);
                (void) n; /* a truncated message still names the library and the first gaps */
                return false;
        }
        return true;
}

/* Maps the runner's report. The descriptor is only trusted when it is what the runner makes: a
 * memfd of exactly the report's size, sealed against resizing. Anything else (the number may
 * name one of the program's own files in a process that inherited the environment) is left
 * alone. The variables are removed: a program this one executes gets them only when it loads
 * the probe too (hand_over()). Returns the entry of the process that executed this image (the
 * same process, or its parent for posix_spawn), or -1 for the started process. */
static int32_t attach_report(void) {
        const char *fd_text = getenv(PROBE_ENV_FD), *parent_text = getenv(PROBE_ENV_PARENT);
        if (!fd_text)
                return -1;
        int fd = atoi(fd_text);
        int32_t parent = parent_text ? atoi(parent_text) : -1;
        unsetenv(PROBE_ENV_FD);
        unsetenv(PROBE_ENV_PARENT);
        struct stat st;
        int seals = fcntl(fd, F_GET_SEALS);
        if (seals < 0 || !(seals & F_SEAL_SHRINK) || !(seals & F_SEAL_GROW) || fstat(fd, &st) < 0 ||
            st.st_size != (off_t) PROBE_REPORT_FILE)
                return -1;
        void *m = mmap(NULL, sizeof(ProbeReport), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        /* The program must not see an extra descriptor where it expects its own: kept out of
         * its way, close-on-exec, for the programs it executes. */
        if (m != MAP_FAILED)
                report_fd = fcntl(fd, F_DUPFD_CLOEXEC, PROBE_KEPT_FD_MIN);
        close(fd);
        if (m == MAP_FAILED)
                return -1;
        report = m;
        return parent >= 0 && parent < PROBE_MAX_PROCESSES ? parent : -1;
}

/* The path of this process's program into buf (empty when unreadable); false when unreadable. */
bool own_program(char *buf, size_t size) {
        ssize_t len = readlink("/proc/self/exe", buf, size - 1);
        buf[len > 0 ? len : 0] = 0;
        return len > 0;
}

/* This process's entry, or NULL when unlisted (or without a runner). */
ProbeProcess *this_process(void) {
        return process_index >= 0 ? &report->processes[process_index] : NULL;
}

/* Takes the next entry of the tree for this process. A forked child is its parent's program,
 * served by its parent's allocator; any other new image reads its own. */
static void claim_process(int32_t parent, uint32_t how) {
        uint32_t i = __atomic_fetch_add(&report->n_processes, 1, __ATOMIC_RELAXED);
        process_index = i < PROBE_MAX_PROCESSES ? (int32_t) i : -1;
        ProbeProcess *self = this_process();
        if (!self) { /* past the table: what the proof and the notes need, in bits */
                const char *preload = getenv("LD_PRELOAD");
                if (strcmp(preload ? preload : "", report->processes[0].preload) != 0)
                        __atomic_or_fetch(&report->state, PROBE_STATE_UNLISTED_FOREIGN, __ATOMIC_RELAXED);
                char program[PROBE_PATH_MAX];
                if (how != PROBE_PROCESS_FORKED && own_program(program, sizeof(program)) &&
                    probe_uses_pymalloc(program, getenv("PYTHONMALLOC")))
                        __atomic_or_fetch(&report->state, PROBE_STATE_UNLISTED_PYMALLOC, __ATOMIC_RELAXED);
                return;
        }
        self->pid = getpid();
        self->parent = parent;
        self->how = how;
        if (how == PROBE_PROCESS_FORKED && parent >= 0) {
                const ProbeProcess *p = &report->processes[parent];
                memcpy(self->program, p->program, sizeof(self->program));
                memcpy(self->effective_path, p->effective_path, sizeof(self->effective_path));
                self->family = p->family;
                self->copies = p->copies;
                memcpy(self->preload, p->preload, sizeof(self->preload));
                return;
        }
        (void) own_program(self->program, sizeof(self->program));
        copy_text(self->preload, sizeof(self->preload), getenv("LD_PRELOAD"));
}

static void blocks_take(void);
static void blocks_give(void);

static void child_after_fork(void) {
        blocks_give();
        this_thread = (ThreadState){ 0 };
        if (report != &fallback_report)
                claim_process(process_index, PROBE_PROCESS_FORKED);
}

static void resolve(void) {
        int expected = 0;
        if (!__atomic_compare_exchange_n(&init_state, &expected, 1, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
                return;
        int32_t parent = attach_report();
        report->magic = PROBE_REPORT_MAGIC;
        report->version = PROBE_REPORT_VERSION;
        report->size = sizeof(ProbeReport);
        if (parent < 0)
                report->pid = getpid(); /* the started process */
        if (report != &fallback_report)
                claim_process(parent, parent < 0                                  ? PROBE_PROCESS_STARTED
                                      : report->processes[parent].pid == getpid() ? PROBE_PROCESS_EXECUTED
                                                                                  : PROBE_PROCESS_SPAWNED);

        const char *library = getenv(PROBE_ENV_FORWARD_LIBRARY);
        if (library && *library) {
                const char *prefix = getenv(PROBE_ENV_FORWARD_PREFIX);
                copy_text(forward_prefix, sizeof(forward_prefix), prefix);
                if (!resolve_forward(library, prefix ? prefix : "")) {
                        report->state |= PROBE_STATE_FORWARD_FAILED;
                        static const char msg[] = "alloclab probe: forward mode refused: ";
                        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
                        (void) !write(STDERR_FILENO, report->error, strlen(report->error));
                        (void) !write(STDERR_FILENO, "\n", 1);
                        _exit(127);
                }
        } else
                resolve_family(&next, RTLD_NEXT, "");
        pthread_atfork(blocks_take, blocks_give, child_after_fork);
        report->state |= PROBE_STATE_LOADED;
        size_t unused = 0;
        if (__atomic_compare_exchange_n(&arena_used, &unused, ARENA_SEALED, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
                forward_free = next.free;
        __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
        if (!counting)
                __atomic_store_n(&direct, true, __ATOMIC_RELEASE);
}

static inline bool ready(void) {
        int s = __atomic_load_n(&init_state, __ATOMIC_ACQUIRE);
        if (LIKELY(s == 2))
                return true;
        if (s == 0)
                resolve();
        return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2;
}

/* ---- counting ------------------------------------------------------------------------- */

static ProbeSlot *slot(void) {
        if (LIKELY(this_thread.slot != NULL))
                return this_thread.slot;
        uint32_t i = __atomic_fetch_add(&report->n_slots, 1, __ATOMIC_RELAXED);
        this_thread.shared = i >= PROBE_MAX_SLOTS - 1;
        this_thread.slot = &report->slots[this_thread.shared ? PROBE_MAX_SLOTS - 1 : i];
        if (!this_thread.shared)
                this_thread.slot->process = process_index;
        else if (i == PROBE_MAX_SLOTS - 1)
                this_thread.slot->process = -1; /* shared by the processes of later threads */
        return this_thread.slot;
}

static inline void add(uint64_t *counter, uint64_t v, bool shared) {
        if (UNLIKELY(shared))
                __atomic_fetch_add(counter, v, __ATOMIC_RELAXED);
        else
                __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

void flush_live(void) {
        int64_t total = __atomic_add_fetch(&report->live_bytes, this_thread.pending_live, __ATOMIC_RELAXED);
        this_thread.pending_live = 0;
        int64_t peak = __atomic_load_n(&report->peak_live_bytes, __ATOMIC_RELAXED);
        while (total > peak && !__atomic_compare_exchange_n(&report->peak_live_bytes, &peak, total, true,
                                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
}

/* Records one outermost call and the bytes it requested, when the run counts. */
static void count(ProbeFunction f, size_t requested) {
        if (!counting)
                return; /* a call made before the probe went direct */
        ProbeSlot *s = slot();
        bool shared = this_thread.shared;
        add(&s->calls[f], 1, shared);
        if (requested)
                add(&s->bytes_requested, requested, shared);
}

/* A section of the slow path: calls inside it are nested and not counted. */
static inline bool enter(void) {
        return this_thread.depth++ == 0;
}

static inline void leave(void) {
        this_thread.depth--;
}

/* ---- requested sizes of live blocks (smoke runs, census: `tracking`) -------------------- */

typedef struct Block {
        uintptr_t p; /* 0: an empty entry */
        uint64_t size;
} Block;

/* Open addressing with linear probing, at most half full; its own pages, never the allocator's. */
static Block *blocks;
static size_t blocks_mask, blocks_used;
static int blocks_lock;

static void blocks_take(void) {
        if (!tracking)
                return;
        while (__atomic_exchange_n(&blocks_lock, 1, __ATOMIC_ACQUIRE))
                sched_yield();
}

static void blocks_give(void) {
        __atomic_store_n(&blocks_lock, 0, __ATOMIC_RELEASE);
}

static inline size_t block_home(uintptr_t p, size_t mask) {
        return (size_t) (((uint64_t) p >> 4) * 0x9E3779B97F4A7C15ULL >> 17) & mask;
}

static bool blocks_grow(void) {
        size_t capacity = blocks ? 2 * (blocks_mask + 1) : 4096;
        Block *t = mmap(NULL, capacity * sizeof(Block), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
        if (t == MAP_FAILED)
                return false;
        for (size_t i = 0; blocks && i <= blocks_mask; i++) {
                if (!blocks[i].p)
                        continue;
                size_t j = block_home(blocks[i].p, capacity - 1);
                while (t[j].p)
                        j = (j + 1) & (capacity - 1);
                t[j] = blocks[i];
        }
        if (blocks)
                munmap(blocks, (blocks_mask + 1) * sizeof(Block));
        blocks = t;
        blocks_mask = capacity - 1;
        return true;
}

uint64_t probe_table_kib(void) {
        blocks_take();
        uint64_t pages = 0;
        size_t page = (size_t) sysconf(_SC_PAGESIZE), size = blocks ? (blocks_mask + 1) * sizeof(Block) : 0;
        unsigned char resident[1024];
        for (size_t at = 0; at < size; at += sizeof(resident) * page) {
                size_t chunk = size - at < sizeof(resident) * page ? size - at : sizeof(resident) * page;
                if (mincore((char *) blocks + at, chunk, resident) < 0)
                        break;
                for (size_t i = 0; i < (chunk + page - 1) / page; i++)
                        pages += resident[i] & 1;
        }
        blocks_give();
        return pages * (page / 1024);
}

/* The entry of p, or of the empty slot where it would go. */
static size_t block_find(uintptr_t p) {
        size_t i = block_home(p, blocks_mask);
        while (blocks[i].p && blocks[i].p != p)
                i = (i + 1) & blocks_mask;
        return i;
}

/* Empties entry i, moving later entries of its run back so that every lookup still finds them. */
static void block_remove(size_t i) {
        for (size_t j = (i + 1) & blocks_mask; blocks[j].p; j = (j + 1) & blocks_mask) {
                size_t home = block_home(blocks[j].p, blocks_mask);
                bool movable = i <= j ? home <= i || home > j : home <= i && home > j;
                if (movable) {
                        blocks[i] = blocks[j];
                        i = j;
                }
        }
        blocks[i].p = 0;
        blocks_used--;
}

/* An outermost call freed `gone` and/or returned `block` for `size` requested bytes: the live
 * requested total follows, its peak too. Blocks the probe never saw (allocated before it was
 * ready, or by a call it does not interpose) subtract nothing. */
static void track(void *gone, void *block, size_t size) {
        int64_t delta = 0;
        bool lost = false;
        int saved = errno; /* the program sees the allocator's errno, not the table's */
        blocks_take();
        if (gone && blocks) {
                size_t i = block_find((uintptr_t) gone);
                if (blocks[i].p) {
                        delta -= (int64_t) blocks[i].size;
                        block_remove(i);
                }
        }
        if (block) {
                if (2 * (blocks_used + 1) > (blocks ? blocks_mask + 1 : 0) && !blocks_grow())
                        lost = true;
                else {
                        size_t i = block_find((uintptr_t) block);
                        if (blocks[i].p)
                                delta -= (int64_t) blocks[i].size; /* a block the probe missed freeing */
                        else
                                blocks_used++;
                        blocks[i] = (Block){ (uintptr_t) block, size };
                        delta += (int64_t) size;
                }
        }
        blocks_give();
        errno = saved;
        if (lost) /* no memory for the table: the figure would be wrong, so there is none */
                __atomic_and_fetch(&report->state, ~(uint32_t) PROBE_STATE_LIVE_REQUESTED, __ATOMIC_RELAXED);
        if (!delta)
                return;
        int64_t total = __atomic_add_fetch(&report->live_requested, delta, __ATOMIC_RELAXED);
        int64_t peak = __atomic_load_n(&report->peak_live_requested, __ATOMIC_RELAXED);
        while (total > peak && !__atomic_compare_exchange_n(&report->peak_live_requested, &peak, total, true,
                                                            __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                ;
}

/* Records the change in usable bytes an outermost call made (smoke runs only: `measuring`). */
static void count_live(int64_t live_delta) {
        if (!live_delta)
                return;
        ProbeSlot *s = slot();
        add((uint64_t *) &s->live_bytes, (uint64_t) live_delta, this_thread.shared);
        this_thread.pending_live += live_delta;
        /* Where requested sizes are tracked (smoke runs, census: nothing is timed, a lock is taken
         * anyway) the peak is exact, so that it can stand beside the requested peak. */
        if (tracking || this_thread.pending_live > PROBE_FLUSH_BYTES ||
            this_thread.pending_live < -PROBE_FLUSH_BYTES)
                flush_live();
}

static inline size_t usable(void *p) {
        return p && next.usable_size ? next.usable_size(p) : 0;
}

static inline int64_t measured(ProbeFunction f, void *p) {
        return measurable[f] ? (int64_t) usable(p) : 0;
}

/* ---- derived entry points (forward mode may lack them) --------------------------------- */

static void *aligned(size_t alignment, size_t size) {
        if (next.memalign)
                return next.memalign(alignment, size);
        if (next.aligned_alloc)
                return next.aligned_alloc(alignment, (size + alignment - 1) & ~(alignment - 1));
        void *p = NULL;
        int r = next.posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size);
        if (r != 0) {
                errno = r;
                return NULL;
        }
        return p;
}

/* A call of another thread that found the probe resolving and then the arena sealed: the probe
 * is about to be ready (resolve() seals right before), so it waits for that and is served by
 * the allocator, zeroed as the arena's blocks are (calloc). */
static NOINLINE void *after_seal(size_t size, size_t align) {
        while (!interposer_resolved())
                sched_yield();
        void *p = aligned(align, size);
        if (p)
                memset(p, 0, size);
        return p;
}

static bool valid_alignment(size_t a) {
        return a != 0 && (a & (a - 1)) == 0;
}

/* ---- the interposed family ------------------------------------------------------------ */

/* First in every interposed function: in a run that does not count, once the probe is ready,
 * returns `call`, a tail call for the functions that forward as they are (malloc, free, calloc,
 * realloc: a test of `direct`, then a jump to the allocator, which returns straight to the
 * program). Nothing is stored: a store on every call, even to a line of its own, costs
 * allocation-bound programs several percent (bench/probe-overhead.sh). */
#define DIRECT(call)                                                                                        \
        do {                                                                                                \
                if (LIKELY(__atomic_load_n(&direct, __ATOMIC_ACQUIRE)))                                     \
                        return call;                                                                        \
        } while (0)

/* The slow path: runs `call`, counting it when it is the outermost one, with the depth guard,
 * live bytes in smoke runs (usable, and requested: the block returned and the one it freed), and
 * `unready` before the probe has resolved the next allocator. */
#define GUARDED(result, call, function, requested, live_delta_expr, block_expr, gone_expr, unready)         \
        do {                                                                                                \
                if (UNLIKELY(!ready()))                                                                     \
                        result = unready;                                                                   \
                else {                                                                                      \
                        if (enter())                                                                        \
                                count(function, requested);                                                 \
                        result = call;                                                                      \
                        if (UNLIKELY(measuring) && this_thread.depth == 1)                                  \
                                count_live(live_delta_expr);                                                \
                        if (UNLIKELY(tracking) && this_thread.depth == 1)                                   \
                                track(gone_expr, block_expr, requested);                                    \
                        leave();                                                                            \
                }                                                                                           \
        } while (0)

/* The slow paths of the hottest functions are out of line: the direct path then saves no
 * register. */
static NOINLINE void *malloc_slow(size_t size) {
        void *p;
        GUARDED(p, next.malloc(size), PROBE_MALLOC, size, measured(PROBE_MALLOC, p), p, NULL,
                arena_alloc(size, 16));
        return p;
}

EXPORT void *malloc(size_t size) {
        DIRECT(next.malloc(size));
        return malloc_slow(size);
}

/* free() is not GUARDED: in smoke runs it measures the block before the call. What the probe
 * does before it (resolving, measuring) keeps errno; what next.free does to it is the
 * program's to see. */
static NOINLINE void free_slow(void *p) {
        if (in_arena(p))
                return;
        int saved = errno;
        if (!ready()) {
                errno = saved;
                return;
        }
        bool outermost = enter();
        int64_t size = outermost && measuring ? measured(PROBE_FREE, p) : 0;
        if (outermost && UNLIKELY(tracking) && p) /* before: then another thread may get the address */
                track(p, NULL, 0);
        errno = saved;
        if (p)
                next.free(p);
        if (outermost) {
                count(PROBE_FREE, 0);
                count_live(-size);
        }
        leave();
}

EXPORT void free(void *p) {
        if (LIKELY(__atomic_load_n(&direct, __ATOMIC_ACQUIRE))) {
                forward_free(p);
                return;
        }
        free_slow(p);
}

static NOINLINE void *calloc_slow(size_t n, size_t size, size_t total) {
        void *p;
        GUARDED(p, next.calloc(n, size), PROBE_CALLOC, total, measured(PROBE_CALLOC, p), p, NULL,
                arena_alloc(total, 16));
        return p;
}

EXPORT void *calloc(size_t n, size_t size) {
        size_t total;
        if (__builtin_mul_overflow(n, size, &total)) {
                errno = ENOMEM;
                return NULL;
        }
        DIRECT(next.calloc(n, size));
        return calloc_slow(n, size, total);
}

/* realloc() of a bootstrap block, or before the probe is ready (when every block is one). */
static NOINLINE void *realloc_from_arena(void *old, size_t size) {
        void *p = malloc(size);
        if (p && old)
                memcpy(p, old, arena_size(old) < size ? arena_size(old) : size);
        return p;
}

/* The usable size of the block a realloc is given, for the live-byte change of smoke runs. */
static inline int64_t before_realloc(ProbeFunction f, void *old) {
        return UNLIKELY(measuring) && this_thread.depth == 0 ? measured(f, old) : 0;
}

static NOINLINE void *realloc_slow(void *old, size_t size) {
        int64_t before = before_realloc(PROBE_REALLOC, old);
        void *p;
        GUARDED(p, next.realloc(old, size), PROBE_REALLOC, size,
                p ? measured(PROBE_REALLOC, p) - before : (size == 0 ? -before : 0), p,
                p || size == 0 ? old : NULL, realloc_from_arena(old, size));
        return p;
}

EXPORT void *realloc(void *old, size_t size) {
        if (UNLIKELY(in_arena(old)))
                return realloc_from_arena(old, size);
        DIRECT(next.realloc(old, size));
        return realloc_slow(old, size);
}

static inline void *forward_reallocarray(void *old, size_t n, size_t size, size_t total) {
        return next.reallocarray ? next.reallocarray(old, n, size) : next.realloc(old, total);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size) {
        size_t total;
        if (__builtin_mul_overflow(n, size, &total)) {
                errno = ENOMEM;
                return NULL;
        }
        if (UNLIKELY(in_arena(old)))
                return realloc_from_arena(old, total);
        DIRECT(forward_reallocarray(old, n, size, total));
        int64_t before = before_realloc(PROBE_REALLOCARRAY, old);
        void *p;
        GUARDED(p, forward_reallocarray(old, n, size, total), PROBE_REALLOCARRAY, total,
                p ? measured(PROBE_REALLOCARRAY, p) - before : 0, p, p ? old : NULL,
                realloc_from_arena(old, total));
        return p;
}

/* Returns 0 with the block in *ret, or the error with *ret untouched, whatever the next
 * allocator does with it on error. */
static inline int forward_posix_memalign(void **ret, size_t alignment, size_t size) {
        void *p = NULL;
        int r = next.posix_memalign ? next.posix_memalign(&p, alignment, size)
                                    : ((p = aligned(alignment, size)) ? 0 : ENOMEM);
        if (r == 0)
                *ret = p;
        return r;
}

static int arena_posix_memalign(void **ret, size_t alignment, size_t size) {
        void *p = arena_alloc(size, alignment);
        if (!p)
                return ENOMEM;
        *ret = p;
        return 0;
}

EXPORT int posix_memalign(void **ret, size_t alignment, size_t size) {
        if (!valid_alignment(alignment) || alignment % sizeof(void *) != 0)
                return EINVAL;
        DIRECT(forward_posix_memalign(ret, alignment, size));
        int r;
        GUARDED(r, forward_posix_memalign(ret, alignment, size), PROBE_POSIX_MEMALIGN, size,
                r == 0 ? measured(PROBE_POSIX_MEMALIGN, *ret) : 0, r == 0 ? *ret : NULL, NULL,
                arena_posix_memalign(ret, alignment, size));
        return r;
}

static inline void *forward_aligned_alloc(size_t alignment, size_t size) {
        return next.aligned_alloc ? next.aligned_alloc(alignment, size) : aligned(alignment, size);
}

EXPORT void *aligned_alloc(size_t alignment, size_t size) {
        DIRECT(forward_aligned_alloc(alignment, size));
        void *p;
        GUARDED(p, forward_aligned_alloc(alignment, size), PROBE_ALIGNED_ALLOC, size,
                measured(PROBE_ALIGNED_ALLOC, p), p, NULL, arena_alloc(size, alignment));
        return p;
}

EXPORT void *memalign(size_t alignment, size_t size) {
        DIRECT(aligned(alignment, size));
        void *p;
        GUARDED(p, aligned(alignment, size), PROBE_MEMALIGN, size, measured(PROBE_MEMALIGN, p), p, NULL,
                arena_alloc(size, alignment));
        return p;
}

EXPORT void *valloc(size_t size) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        DIRECT(next.valloc ? next.valloc(size) : aligned(page, size));
        void *p;
        GUARDED(p, next.valloc ? next.valloc(size) : aligned(page, size), PROBE_VALLOC, size,
                measured(PROBE_VALLOC, p), p, NULL, arena_alloc(size, page));
        return p;
}

EXPORT void *pvalloc(size_t size) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        size_t rounded = size ? (size + page - 1) & ~(page - 1) : page;
        if (rounded < size) {
                errno = ENOMEM;
                return NULL;
        }
        DIRECT(next.pvalloc ? next.pvalloc(size) : aligned(page, rounded));
        void *p;
        GUARDED(p, next.pvalloc ? next.pvalloc(size) : aligned(page, rounded), PROBE_PVALLOC, size,
                measured(PROBE_PVALLOC, p), p, NULL, arena_alloc(rounded, page));
        return p;
}

EXPORT size_t malloc_usable_size(void *p) {
        if (!p)
                return 0;
        if (in_arena(p))
                return arena_size(p);
        DIRECT(usable(p));
        size_t n;
        GUARDED(n, usable(p), PROBE_MALLOC_USABLE_SIZE, 0, 0, NULL, NULL, 0);
        return n;
}

/* ---- C++ operator new and delete ------------------------------------------------------ */

/* Every form (array, nothrow, aligned, sized delete) is forwarded to its next definition: the
 * preloaded allocator's where it has its own (jemalloc, mimalloc, tcmalloc), else the C++
 * runtime's, whose own malloc and free calls are then nested and not counted again. Each is
 * resolved at its first call: a C++ runtime may come with a dlopen() after the probe's start.
 * The symbol names are the Itanium C++ ABI's for LP64 (size_t is `m`). */

/* The next definition of symbol, remembered in *slot. */
static void *cxx_next(void **slot, const char *symbol) {
        void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
        if (UNLIKELY(!fn)) {
                fn = next_definition(symbol);
                __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
        }
        return fn;
}

/* A new without a next definition (no C++ runtime defines it, which a C++ program cannot be):
 * the C family's block; a throwing form cannot throw from here, and aborts instead. */
static void *cxx_new_without_runtime(size_t size, size_t align, bool nothrow) {
        void *p = align > 16 ? aligned(align, size ? size : 1) : next.malloc(size ? size : 1);
        if (!p && !nothrow)
                abort();
        return p;
}

/* What a delete does around the call, in a run that counts: like free_slow(). */
static bool delete_begin(void *p, int64_t *ret_live) {
        bool outermost = enter();
        *ret_live = outermost && measuring ? measured(PROBE_DELETE, p) : 0;
        if (outermost && UNLIKELY(tracking) && p)
                track(p, NULL, 0);
        return outermost;
}

static void delete_end(bool outermost, int64_t live) {
        if (outermost) {
                count(PROBE_DELETE, 0);
                count_live(-live);
        }
        leave();
}

/* operator new forms: function(params) under symbol, forwarded with args; size and align name
 * the request. */
#define CXX_NEW(function, symbol, Fn, params, args, align, nothrow)                                         \
        EXPORT void *function params __asm__(symbol);                                                       \
        void *function params {                                                                             \
                static void *resolved;                                                                      \
                Fn fn = (Fn) cxx_next(&resolved, symbol);                                                   \
                if (LIKELY(__atomic_load_n(&direct, __ATOMIC_ACQUIRE)) && fn)                               \
                        return fn args;                                                                     \
                void *p;                                                                                    \
                GUARDED(p, fn ? fn args : cxx_new_without_runtime(size, align, nothrow), PROBE_NEW, size,   \
                        measured(PROBE_NEW, p), p, NULL, arena_alloc(size, align));                         \
                return p;                                                                                   \
        }

/* operator delete forms: the same, for p. */
#define CXX_DELETE(function, symbol, Fn, params, args)                                                      \
        EXPORT void function params __asm__(symbol);                                                        \
        void function params {                                                                              \
                static void *resolved;                                                                      \
                Fn fn = (Fn) cxx_next(&resolved, symbol);                                                   \
                if (UNLIKELY(in_arena(p)))                                                                  \
                        return;                                                                             \
                if (LIKELY(__atomic_load_n(&direct, __ATOMIC_ACQUIRE)) && fn) {                             \
                        fn args;                                                                            \
                        return;                                                                             \
                }                                                                                           \
                if (!ready())                                                                               \
                        return;                                                                             \
                int64_t live;                                                                               \
                bool outermost = delete_begin(p, &live);                                                    \
                if (fn)                                                                                     \
                        fn args;                                                                            \
                else if (p)                                                                                 \
                        next.free(p);                                                                       \
                delete_end(outermost, live);                                                                \
        }

typedef void *(*CxxNew)(size_t);
typedef void *(*CxxNewNothrow)(size_t, const void *);
typedef void *(*CxxNewAligned)(size_t, size_t);
typedef void *(*CxxNewAlignedNothrow)(size_t, size_t, const void *);
typedef void (*CxxDelete)(void *);
typedef void (*CxxDeleteSized)(void *, size_t);
typedef void (*CxxDeleteNothrow)(void *, const void *);
typedef void (*CxxDeleteSizedAligned)(void *, size_t, size_t);
typedef void (*CxxDeleteAlignedNothrow)(void *, size_t, const void *);

CXX_NEW(cxx_new, "_Znwm", CxxNew, (size_t size), (size), 16, false)
CXX_NEW(cxx_new_array, "_Znam", CxxNew, (size_t size), (size), 16, false)
CXX_NEW(cxx_new_nothrow, "_ZnwmRKSt9nothrow_t", CxxNewNothrow, (size_t size, const void *nt), (size, nt), 16,
        true)
CXX_NEW(cxx_new_array_nothrow, "_ZnamRKSt9nothrow_t", CxxNewNothrow, (size_t size, const void *nt),
        (size, nt), 16, true)
CXX_NEW(cxx_new_aligned, "_ZnwmSt11align_val_t", CxxNewAligned, (size_t size, size_t align), (size, align),
        align, false)
CXX_NEW(cxx_new_array_aligned, "_ZnamSt11align_val_t", CxxNewAligned, (size_t size, size_t align),
        (size, align), align, false)
CXX_NEW(cxx_new_aligned_nothrow, "_ZnwmSt11align_val_tRKSt9nothrow_t", CxxNewAlignedNothrow,
        (size_t size, size_t align, const void *nt), (size, align, nt), align, true)
CXX_NEW(cxx_new_array_aligned_nothrow, "_ZnamSt11align_val_tRKSt9nothrow_t", CxxNewAlignedNothrow,
        (size_t size, size_t align, const void *nt), (size, align, nt), align, true)

CXX_DELETE(cxx_delete, "_ZdlPv", CxxDelete, (void *p), (p))
CXX_DELETE(cxx_delete_array, "_ZdaPv", CxxDelete, (void *p), (p))
CXX_DELETE(cxx_delete_sized, "_ZdlPvm", CxxDeleteSized, (void *p, size_t size), (p, size))
CXX_DELETE(cxx_delete_array_sized, "_ZdaPvm", CxxDeleteSized, (void *p, size_t size), (p, size))
CXX_DELETE(cxx_delete_nothrow, "_ZdlPvRKSt9nothrow_t", CxxDeleteNothrow, (void *p, const void *nt), (p, nt))
CXX_DELETE(cxx_delete_array_nothrow, "_ZdaPvRKSt9nothrow_t", CxxDeleteNothrow, (void *p, const void *nt),
           (p, nt))
CXX_DELETE(cxx_delete_aligned, "_ZdlPvSt11align_val_t", CxxDeleteSized, (void *p, size_t align), (p, align))
CXX_DELETE(cxx_delete_array_aligned, "_ZdaPvSt11align_val_t", CxxDeleteSized, (void *p, size_t align),
           (p, align))
CXX_DELETE(cxx_delete_sized_aligned, "_ZdlPvmSt11align_val_t", CxxDeleteSizedAligned,
           (void *p, size_t size, size_t align), (p, size, align))
CXX_DELETE(cxx_delete_array_sized_aligned, "_ZdaPvmSt11align_val_t", CxxDeleteSizedAligned,
           (void *p, size_t size, size_t align), (p, size, align))
CXX_DELETE(cxx_delete_aligned_nothrow, "_ZdlPvSt11align_val_tRKSt9nothrow_t", CxxDeleteAlignedNothrow,
           (void *p, size_t align, const void *nt), (p, align, nt))
CXX_DELETE(cxx_delete_array_aligned_nothrow, "_ZdaPvSt11align_val_tRKSt9nothrow_t", CxxDeleteAlignedNothrow,
           (void *p, size_t align, const void *nt), (p, align, nt))

/* ---- for census.c (off the direct path) ------------------------------------------------ */

bool interposer_ready(void) {
        return ready();
}

bool interposer_resolved(void) {
        return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2;
}

bool interposer_enter(void) {
        return enter();
}

void interposer_leave(void) {
        leave();
}
