/* SPDX-License-Identifier: MIT */
/*
 * alloclab-workload MODE [ARGS]: small, real children for the integration tests.
 *
 *   which            allocate and free a deterministic pattern, print a checksum (same under
 *                    every allocator) and report "malloc_provider.<file> 1" on the metrics fd:
 *                    the shared object that provides the malloc this program calls (dladdr)
 *   usable           print malloc_usable_size(malloc(1)): differs between allocators
 *   crash            dereference NULL (SIGSEGV)
 *   exit CODE        exit with CODE
 *   hang PIDFILE     fork a grandchild that writes its pid to PIDFILE, then both sleep forever
 *   daemon PIDFILE MS
 *                    double-fork a setsid() daemon that writes its pid to PIDFILE, then burns MS
 *                    milliseconds of its own CPU time and exits (MS = 0: sleeps forever); this
 *                    process waits until the daemon is done (or has written its pid, with 0),
 *                    without ever wait()ing for it, and exits 0
 *   sleep MS         sleep MS milliseconds, print "slept"
 *   touch MB MS      allocate MB MiB and write every page, then sleep MS milliseconds, print "touched"
 *   steps MB STEP MS allocate MB MiB in steps of STEP MiB (64 KiB blocks, each written), marking
 *                    `phase stepK` on the metrics fd after step K (1, 2, ...) and sleeping MS
 *                    milliseconds; then free it all (newest first), mark `phase free`, sleep MS
 *                    and print "stepped"
 *   hugepage MB      map MB MiB (2 MiB aligned), madvise(MADV_HUGEPAGE), write every page and keep
 *                    it until the exit, print "huge"
 *   keep N SIZE      N blocks of SIZE bytes, written and kept until the exit, print "kept"
 *   untouched MB     malloc MB MiB and never write it, print "untouched"
 *   spin N           N iterations of a dependent integer loop (a calibrated amount of CPU work),
 *                    print "spun"
 *   report NAME V    report metric NAME with value V, print "reported"
 *   env FILE         write the environment to FILE, one variable per line, and print "ok"
 *   envsize          report metric env_bytes: what the environment occupies on the initial stack
 *                    (strings with terminators, pointers with the NULL), print "ok"
 *   threads N ITER   N threads (at most 128) each make ITER aligned_alloc(64, 100) + free pairs
 *   churn N          N malloc + free pairs of 16 to 512 bytes over 64 live blocks, each written;
 *                    print a checksum
 *   vallocs N        N valloc(100) + free pairs, print "ok"
 *   fork             100 valloc + free in a forked child, then 100 in the parent
 *   semantics        check the malloc family's documented behaviour (free keeps errno,
 *                    posix_memalign leaves *p alone on error, overflow-checked calloc and
 *                    reallocarray, alignment, usable size); print "ok" or the first broken one
 *                    and exit 1
 *   crashalloc       10 pvalloc that are never freed, then SIGSEGV
 *   dlopen LIB       dlopen LIB and exit normally
 *   ids              report metrics uid, gid, euid, egid, groups (how many supplementary),
 *                    root_group (1 when gid 0 is among them), umask (in octal digits), print "ids"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static FILE *metrics(void) {
        const char *fd = getenv("ALLOCLAB_METRICS_FD");
        return fd ? fdopen(atoi(fd), "w") : NULL;
}

static int which(void) {
        uint64_t sum = 0;
        void *blocks[1000];
        for (int round = 0; round < 50; round++) {
                for (int i = 0; i < 1000; i++) {
                        size_t size = (size_t) (i * 37 % 4096) + 1;
                        blocks[i] = malloc(size);
                        if (!blocks[i])
                                return 2;
                        memset(blocks[i], i & 0xff, size);
                        sum += ((unsigned char *) blocks[i])[size - 1] + size;
                }
                for (int i = 0; i < 1000; i++)
                        free(blocks[i]);
        }
        printf("checksum %llu\n", (unsigned long long) sum);

        Dl_info info;
        void *(*volatile fn)(size_t) = malloc; /* the malloc this program's calls reach */
        if (!dladdr((void *) fn, &info) || !info.dli_fname)
                return 3;
        const char *base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        FILE *m = metrics();
        if (m) {
                fprintf(m, "malloc_provider.%s 1\n", base);
                fclose(m);
        }
        return 0;
}

static void *hammer(void *arg) {
        long iterations = *(long *) arg;
        for (long i = 0; i < iterations; i++) {
                void *p = aligned_alloc(64, 100);
                if (!p)
                        abort();
                *(volatile char *) p = 1;
                free(p);
        }
        return NULL;
}

/* N malloc + free pairs of small sizes over a ring of 64 live blocks, each block written: what a
 * malloc-heavy program does. Prints a checksum of what was written (the same under every
 * allocator). */
static void churn(long n) {
        enum { RING = 64 };
        unsigned char *ring[RING] = {};
        unsigned long sum = 0;
        for (long i = 0; i < n; i++) {
                size_t slot = (size_t) i % RING, size = 16 + (size_t) (i * 37 % 497);
                if (ring[slot]) {
                        sum += ring[slot][0];
                        free(ring[slot]);
                }
                ring[slot] = malloc(size);
                if (!ring[slot])
                        abort();
                memset(ring[slot], (int) (i & 0xff), size);
        }
        for (size_t i = 0; i < RING; i++)
                free(ring[i]);
        printf("churned %lu\n", sum);
}

static void vallocs(int n) {
        for (int i = 0; i < n; i++)
                free(valloc(100));
}

/* See "daemon" above. The daemon tells this process through a pipe when it is done. */
static void sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* steps MB STEP MS: see above. The marks are written unbuffered, at the moment they mean. */
static int steps(long total_mb, long step_mb, long ms) {
        enum { BLOCK = 64 << 10 };
        size_t per_step = (size_t) step_mb * ((1 << 20) / BLOCK), n = 0;
        size_t max = (size_t) total_mb * ((1 << 20) / BLOCK);
        char **blocks = calloc(max + 1, sizeof(char *));
        FILE *m = metrics();
        if (!blocks || !m || step_mb <= 0)
                return 2;
        setvbuf(m, NULL, _IONBF, 0);
        for (long step = 1; n < max; step++) {
                for (size_t i = 0; i < per_step && n < max; i++, n++) {
                        if (!(blocks[n] = malloc(BLOCK)))
                                return 3;
                        memset(blocks[n], (int) step, BLOCK);
                }
                fprintf(m, "phase step%ld\n", step);
                sleep_ms(ms);
        }
        while (n > 0)
                free(blocks[--n]);
        fprintf(m, "phase free\n");
        sleep_ms(ms);
        printf("stepped\n");
        return 0;
}

static int daemonize(const char *pidfile, long cpu_ms) {
        int done[2];
        if (pipe(done) < 0)
                return 2;
        pid_t middle = fork();
        if (middle < 0)
                return 2;
        if (middle == 0) {
                setsid();
                if (fork() != 0)
                        _exit(0); /* the daemon is nobody's child to wait for */
                FILE *f = fopen(pidfile, "w");
                if (f) {
                        fprintf(f, "%d\n", (int) getpid());
                        fclose(f);
                }
                if (cpu_ms == 0) {
                        (void) !write(done[1], "d", 1);
                        for (;;)
                                pause();
                }
                struct timespec t;
                do
                        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
                while (t.tv_sec * 1000 + t.tv_nsec / 1000000 < cpu_ms);
                (void) !write(done[1], "d", 1);
                _exit(0);
        }
        close(done[1]);
        waitpid(middle, NULL, 0);
        char c;
        return read(done[0], &c, 1) == 1 ? 0 : 3;
}

#define CHECK(condition)                                                                                    \
        do {                                                                                                \
                if (!(condition)) {                                                                         \
                        printf("broken: %s\n", #condition);                                                 \
                        return 1;                                                                           \
                }                                                                                           \
        } while (0)

/* See "semantics" above. Sizes come through a volatile so that the compiler cannot fold the
 * overflowing calls away. */
static int semantics(void) {
        static volatile size_t huge = SIZE_MAX / 2;
        /* GCC knows that free() keeps errno and would not read it again after a direct call. */
        static void (*volatile opaque_free)(void *) = free;
        for (int i = 0; i < 1000; i++) { /* the first calls and the steady state alike */
                void *q = malloc((size_t) i * 64 + 1);
                errno = 4321; /* malloc itself may change errno, even when it succeeds */
                opaque_free(q);
                opaque_free(NULL);
                CHECK(errno == 4321);
        }
        void *sentinel = &sentinel, *p = sentinel;
        CHECK(posix_memalign(&p, 3, 16) == EINVAL && p == sentinel);
        CHECK(posix_memalign(&p, 64, huge * 2) == ENOMEM && p == sentinel);
        CHECK(posix_memalign(&p, 64, 100) == 0 && (uintptr_t) p % 64 == 0);
        free(p);
        errno = 0;
        CHECK(calloc(huge, 3) == NULL && errno == ENOMEM);
        errno = 0;
        CHECK(reallocarray(NULL, huge, 3) == NULL && errno == ENOMEM);
        char *c = calloc(100, 10);
        CHECK(c && c[0] == 0 && c[999] == 0 && malloc_usable_size(c) >= 1000);
        c = realloc(c, 5000);
        CHECK(c && c[999] == 0 && malloc_usable_size(c) >= 5000);
        free(c);
        void *a = aligned_alloc(256, 512);
        CHECK(a && (uintptr_t) a % 256 == 0);
        free(a);
        printf("ok\n");
        return 0;
}

int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "";
        if (strcmp(mode, "which") == 0)
                return which();
        if (strcmp(mode, "usable") == 0) {
                void *p = malloc(1);
                printf("%zu\n", malloc_usable_size(p));
                free(p);
                return 0;
        }
        if (strcmp(mode, "crash") == 0) {
                volatile int *null = NULL;
                return *null;
        }
        if (strcmp(mode, "exit") == 0 && argc > 2)
                return atoi(argv[2]);
        if (strcmp(mode, "reexec") == 0 && argc > 2) {
                /* Re-executes itself once with LD_PRELOAD=argv[2] ("-": unset, "=": as it is), as
                 * wrappers that pick their own allocator do; then does what "which" does. */
                if (!getenv("WORKLOAD_REEXECED")) {
                        setenv("WORKLOAD_REEXECED", "1", 1);
                        if (strcmp(argv[2], "-") == 0)
                                unsetenv("LD_PRELOAD");
                        else if (strcmp(argv[2], "=") != 0)
                                setenv("LD_PRELOAD", argv[2], 1);
                        execv("/proc/self/exe", argv);
                        return 127;
                }
                return which();
        }
        if (strcmp(mode, "hang") == 0 && argc > 2) {
                pid_t pid = fork();
                if (pid == 0) {
                        FILE *f = fopen(argv[2], "w");
                        if (f) {
                                fprintf(f, "%d\n", (int) getpid());
                                fclose(f);
                        }
                        for (;;)
                                pause();
                }
                for (;;)
                        pause();
        }
        if (strcmp(mode, "daemon") == 0 && argc > 3)
                return daemonize(argv[2], atol(argv[3]));
        if (strcmp(mode, "sleep") == 0 && argc > 2) {
                long ms = atol(argv[2]);
                struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
                nanosleep(&ts, NULL);
                printf("slept\n");
                return 0;
        }
        if (strcmp(mode, "touch") == 0 && argc > 3) {
                size_t size = (size_t) atol(argv[2]) << 20;
                char *p = malloc(size);
                if (!p)
                        return 2;
                memset(p, 1, size);
                long ms = atol(argv[3]);
                struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
                nanosleep(&ts, NULL);
                printf("touched %d\n", p[size - 1]);
                free(p);
                return 0;
        }
        if (strcmp(mode, "steps") == 0 && argc > 4)
                return steps(atol(argv[2]), atol(argv[3]), atol(argv[4]));
        if (strcmp(mode, "hugepage") == 0 && argc > 2) {
                size_t size = (size_t) atol(argv[2]) << 20, huge = 2u << 20;
                char *map =
                        mmap(NULL, size + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (map == MAP_FAILED)
                        return 2;
                char *p = (char *) (((uintptr_t) map + huge - 1) & ~(uintptr_t) (huge - 1));
                if (madvise(p, size, MADV_HUGEPAGE) < 0)
                        return 3;
                memset(p, 1, size);
                printf("huge\n");
                return 0; /* kept until the exit */
        }
        if (strcmp(mode, "keep") == 0 && argc > 3) {
                long n = atol(argv[2]);
                size_t size = (size_t) atol(argv[3]);
                char **blocks = calloc((size_t) n + 1, sizeof(char *));
                for (long i = 0; blocks && i < n; i++)
                        if ((blocks[i] = malloc(size)))
                                memset(blocks[i], 1, size);
                printf("kept\n");
                return blocks ? 0 : 2; /* never freed: live until the exit */
        }
        if (strcmp(mode, "untouched") == 0 && argc > 2) {
                char *p = malloc((size_t) atol(argv[2]) << 20);
                printf("untouched\n");
                return p ? 0 : 2; /* asked for, never written, never freed */
        }
        if (strcmp(mode, "spin") == 0 && argc > 2) {
                uint64_t x = 1;
                for (long i = atol(argv[2]); i > 0; i--)
                        x = x * 6364136223846793005ULL +
                            1442695040888963407ULL; /* each step needs the last */
                printf("spun\n");
                return x == 0; /* keeps the loop; never true for this generator */
        }
        if (strcmp(mode, "report") == 0 && argc > 3) {
                FILE *m = metrics();
                if (!m)
                        return 4;
                fprintf(m, "%s %s\n", argv[2], argv[3]);
                fclose(m);
                printf("reported\n");
                return 0;
        }
        if (strcmp(mode, "envsize") == 0) {
                size_t bytes = sizeof(char *);
                for (char **e = environ; *e; e++)
                        bytes += strlen(*e) + 1 + sizeof(char *);
                FILE *m = metrics();
                if (!m)
                        return 4;
                fprintf(m, "env_bytes %zu\n", bytes);
                fclose(m);
                printf("ok\n");
                return 0;
        }
        if (strcmp(mode, "env") == 0 && argc > 2) {
                FILE *f = fopen(argv[2], "w");
                if (!f)
                        return 5;
                for (char **e = environ; *e; e++)
                        fprintf(f, "%s\n", *e);
                fclose(f);
                printf("ok\n");
                return 0;
        }
        if (strcmp(mode, "threads") == 0 && argc > 3) {
                int n = atoi(argv[2]);
                long iterations = atol(argv[3]);
                pthread_t threads[128];
                if (n < 1 || n > 128)
                        return 2;
                for (int i = 0; i < n; i++)
                        if (pthread_create(&threads[i], NULL, hammer, &iterations) != 0)
                                return 3;
                for (int i = 0; i < n; i++)
                        pthread_join(threads[i], NULL);
                printf("ok\n");
                return 0;
        }
        if (strcmp(mode, "churn") == 0 && argc > 2) {
                churn(atol(argv[2]));
                return 0;
        }
        if (strcmp(mode, "vallocs") == 0 && argc > 2) {
                vallocs(atoi(argv[2]));
                printf("ok\n");
                return 0;
        }
        if (strcmp(mode, "semantics") == 0)
                return semantics();
        if (strcmp(mode, "fork") == 0) {
                fflush(stdout);
                pid_t pid = fork();
                if (pid == 0) {
                        vallocs(100);
                        _exit(0);
                }
                int status;
                waitpid(pid, &status, 0);
                vallocs(100);
                printf("ok\n");
                return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
        }
        if (strcmp(mode, "ids") == 0) {
                FILE *m = metrics();
                if (!m)
                        return 4;
                gid_t groups[256];
                int n = getgroups(256, groups), root_group = getegid() == 0;
                for (int i = 0; i < n; i++)
                        root_group |= groups[i] == 0;
                fprintf(m, "uid %u\ngid %u\neuid %u\negid %u\ngroups %d\nroot_group %d\numask %o\n",
                        (unsigned) getuid(), (unsigned) getgid(), (unsigned) geteuid(), (unsigned) getegid(),
                        n, root_group, (unsigned) umask(0));
                fclose(m);
                printf("ids\n");
                return 0;
        }
        if (strcmp(mode, "crashalloc") == 0) {
                for (int i = 0; i < 10; i++)
                        *(volatile char *) pvalloc(100) = 1;
                raise(SIGSEGV);
        }
#ifndef WORKLOAD_STATIC /* dlopen() in a static program needs the shared libc anyway */
        if (strcmp(mode, "dlopen") == 0 && argc > 2) {
                if (!dlopen(argv[2], RTLD_NOW)) {
                        fprintf(stderr, "%s\n", dlerror());
                        return 4;
                }
                printf("ok\n");
                return 0;
        }
#endif
        fprintf(stderr, "usage: alloclab-workload which|usable|crash|exit N|hang PIDFILE|sleep MS|report "
                        "NAME V|env FILE\n");
        return 2;
}
