/* SPDX-License-Identifier: MIT */
/*
 * alloclab-stress MODE THREADS [SCALE]: allocator stress programs for `alloclab suite`, written
 * here from the published descriptions of the classic benchmarks (not from their code). Each
 * prints a line that depends only on MODE, THREADS and SCALE (never on addresses, timing or
 * which thread ran first), so that every allocator's output can be verified against glibc's.
 * SCALE is a percentage of the default amount of work (100).
 *
 *   larson         a server simulation (Larson & Krishnan): each thread replaces random blocks of
 *                  random size in its array of slots; after each round the arrays move on to the
 *                  next thread, which frees what another thread allocated
 *   xmalloc        producer/consumer (Lever & Boreham's xmalloc-test): THREADS threads only
 *                  allocate, in batches on one shared stack, and THREADS others only free them
 *   cache-scratch  passive false sharing (Hoard): the main thread allocates one small object per
 *                  thread; each thread frees its object, then allocates, writes and frees small
 *                  objects of the same size: an allocator that reuses the freed neighbours
 *                  makes threads write to one cache line
 *   cache-thrash   active false sharing (Hoard): each thread allocates, writes and frees small
 *                  objects; an allocator that serves threads from one cache line thrashes it
 *   mstress        threads started anew every round (after mimalloc-bench's mstress): objects of
 *                  random size die young, larger ones live as long as their thread, and some
 *                  move through a transfer array that outlives the threads
 *   frag           fragmentation: each thread allocates many objects of mixed sizes, frees nine
 *                  in ten of them scattered, allocates fewer, larger ones; the resident set then
 *                  is reported as metric rss_after_free_bytes on ALLOCLAB_METRICS_FD
 *   realloc        growth: buffers grown in small steps by realloc, interleaved so that growing
 *                  in place is not free, like string builders and vectors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 256

typedef struct Rng {
        uint64_t s;
} Rng;

/* splitmix64: each thread's sequence is fixed by its seed, so are the sizes it asks for. */
static uint64_t rng_next(Rng *r) {
        uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

static Rng rng_for(unsigned thread, uint64_t salt) {
        return (Rng){ .s = salt * 1000003u + thread };
}

static void die(const char *what) {
        fprintf(stderr, "alloclab-stress: %s: %s\n", what, strerror(errno));
        exit(2);
}

static void thread_start(pthread_t *t, void *(*fn)(void *), void *arg) {
        if ((errno = pthread_create(t, NULL, fn, arg)))
                die("pthread_create");
}

static void thread_join(pthread_t t) {
        if ((errno = pthread_join(t, NULL)))
                die("pthread_join");
}

static void *xmalloc(size_t n) {
        void *p = malloc(n);
        if (!p)
                die("malloc");
        return p;
}

/* A block carries its size in its first bytes and, past them, a tag in its last: a checked
 * free. Blocks are at least 8 bytes. */
static void *block_new(size_t size, uint64_t *sum) {
        unsigned char *p = xmalloc(size);
        memcpy(p, &size, sizeof(size));
        if (size > sizeof(size))
                p[size - 1] = (unsigned char) size;
        *sum += size;
        return p;
}

static void block_free(void *block) {
        if (!block)
                return;
        unsigned char *p = block;
        size_t size;
        memcpy(&size, p, sizeof(size));
        if (size > sizeof(size) && p[size - 1] != (unsigned char) size) {
                fprintf(stderr, "alloclab-stress: a block of %zu bytes was overwritten\n", size);
                abort();
        }
        free(p);
}

typedef struct Run {
        unsigned threads;
        unsigned scale; /* percent */
        pthread_barrier_t barrier;
        _Atomic uint64_t sum; /* what the threads add up: sizes asked for, checksums */
        void **shared;        /* per mode: arrays handed around, the exchange array */
        size_t n_shared;
} Run;

typedef struct Worker {
        Run *run;
        unsigned id;
} Worker;

static size_t scaled(const Run *run, size_t n) {
        size_t s = n * run->scale / 100;
        return s ? s : 1;
}

/* --- larson ------------------------------------------------------------------------------- */

#define LARSON_SLOTS 1000

static void *larson(void *arg) {
        Worker *w = arg;
        Run *run = w->run;
        Rng rng = rng_for(w->id, 1);
        uint64_t sum = 0;
        size_t rounds = 20, ops = scaled(run, 300000);
        for (size_t round = 0; round < rounds; round++) {
                /* This round's array: another thread's last round (allocated there). */
                void **slots = run->shared[(w->id + round) % run->threads];
                for (size_t i = 0; i < ops; i++) {
                        size_t k = rng_next(&rng) % LARSON_SLOTS;
                        block_free(slots[k]);
                        slots[k] = block_new(16 + rng_next(&rng) % 1009, &sum);
                }
                pthread_barrier_wait(&run->barrier);
        }
        atomic_fetch_add(&run->sum, sum);
        return NULL;
}

static void larson_setup(Run *run) {
        run->n_shared = run->threads;
        run->shared = xmalloc(run->threads * sizeof(void *));
        for (unsigned t = 0; t < run->threads; t++)
                run->shared[t] = calloc(LARSON_SLOTS, sizeof(void *));
}

static void larson_teardown(Run *run) {
        for (unsigned t = 0; t < run->threads; t++) {
                void **slots = run->shared[t];
                for (size_t k = 0; k < LARSON_SLOTS; k++)
                        block_free(slots[k]);
                free(slots);
        }
}

/* --- xmalloc: threads that only allocate, threads that only free ------------------------- */

/* As in xmalloc-test: each of THREADS producers allocates batches of objects and pushes them on
 * one shared stack; as many releasers pop them and free every object. No thread both allocates
 * and frees, so every free is remote, and up to XMALLOC_STACK batches are alive at once. */
#define XMALLOC_BATCH 4096
#define XMALLOC_STACK 100

typedef struct Batch {
        struct Batch *next;
        void *objects[XMALLOC_BATCH];
} Batch;

typedef struct Stack {
        pthread_mutex_t lock;
        pthread_cond_t changed;
        Batch *top;
        size_t n;
        unsigned producing; /* producers still at work */
} Stack;

/* mimalloc-bench runs xmalloc-test with objects of 64 bytes (-s 64). */
#define XMALLOC_OBJECT 64

static void *xmalloc_releaser(void *arg) {
        Stack *st = arg;
        for (;;) {
                pthread_mutex_lock(&st->lock);
                while (!st->top && st->producing > 0)
                        pthread_cond_wait(&st->changed, &st->lock);
                Batch *b = st->top;
                if (b) {
                        st->top = b->next;
                        st->n--;
                        pthread_cond_broadcast(&st->changed);
                }
                pthread_mutex_unlock(&st->lock);
                if (!b)
                        return NULL; /* every producer is done and the stack is empty */
                for (size_t i = 0; i < XMALLOC_BATCH; i++)
                        block_free(b->objects[i]);
                free(b);
        }
}

/* A producer, which starts its releaser: THREADS of each. */
static void *xmalloc_worker(void *arg) {
        Worker *w = arg;
        Run *run = w->run;
        Stack *st = (Stack *) run->shared[0];
        pthread_t releaser;
        thread_start(&releaser, xmalloc_releaser, st);
        uint64_t sum = 0;
        size_t batches = scaled(run, 200);
        for (size_t b = 0; b < batches; b++) {
                Batch *batch = xmalloc(sizeof(Batch));
                for (size_t i = 0; i < XMALLOC_BATCH; i++)
                        batch->objects[i] = block_new(XMALLOC_OBJECT, &sum);
                pthread_mutex_lock(&st->lock);
                while (st->n >= XMALLOC_STACK)
                        pthread_cond_wait(&st->changed, &st->lock);
                batch->next = st->top;
                st->top = batch;
                st->n++;
                pthread_cond_broadcast(&st->changed);
                pthread_mutex_unlock(&st->lock);
        }
        pthread_mutex_lock(&st->lock);
        st->producing--;
        pthread_cond_broadcast(&st->changed);
        pthread_mutex_unlock(&st->lock);
        thread_join(releaser);
        atomic_fetch_add(&run->sum, sum);
        return NULL;
}

static void xmalloc_setup(Run *run) {
        Stack *st = calloc(1, sizeof(Stack));
        if (!st)
                die("calloc");
        pthread_mutex_init(&st->lock, NULL);
        pthread_cond_init(&st->changed, NULL);
        st->producing = run->threads;
        run->n_shared = 1;
        run->shared = xmalloc(sizeof(void *));
        run->shared[0] = st;
}

static void xmalloc_teardown(Run *run) {
        free(run->shared[0]);
}

/* --- cache-scratch and cache-thrash -------------------------------------------------------- */

#define CACHE_OBJECT 8
#define CACHE_WRITES 500

static void write_object(volatile char *p) {
        for (size_t k = 0; k < CACHE_WRITES; k++)
                for (size_t i = 0; i < CACHE_OBJECT; i++)
                        p[i]++;
}

static void cache_loop(Run *run, Worker *w) {
        uint64_t sum = 0;
        size_t iterations = scaled(run, 150000) / run->threads;
        for (size_t i = 0; i < iterations; i++) {
                volatile char *p = xmalloc(CACHE_OBJECT);
                memset((char *) p, (int) w->id, CACHE_OBJECT);
                write_object(p);
                sum += (unsigned char) p[0];
                free((void *) p);
        }
        atomic_fetch_add(&run->sum, sum);
}

static void *cache_scratch(void *arg) {
        Worker *w = arg;
        free(w->run->shared[w->id]); /* the main thread's object, next to the others' */
        cache_loop(w->run, w);
        return NULL;
}

static void *cache_thrash(void *arg) {
        Worker *w = arg;
        cache_loop(w->run, w);
        return NULL;
}

static void cache_scratch_setup(Run *run) {
        run->n_shared = run->threads;
        run->shared = xmalloc(run->threads * sizeof(void *));
        for (unsigned t = 0; t < run->threads; t++)
                run->shared[t] = xmalloc(CACHE_OBJECT);
}

/* --- mstress ------------------------------------------------------------------------------ */

/* As in mimalloc-bench's mstress: rounds, each of THREADS new threads (threads start and end all
 * the time, and what a thread cached dies with it); each thread allocates objects of up to
 * 1 KiB and frees two in three of them at random, keeps larger ones (up to 100 KiB) alive until
 * it ends (1% of either kind 100 times larger), and swaps one in four with a shared transfer array
 * that outlives the rounds, so objects are freed by threads that did not allocate them, after
 * their own thread has ended. Threads do unequal work (1 to 8 parts). */
#define MSTRESS_ROUNDS   10
#define MSTRESS_TRANSFER 1000

typedef struct MstressThread {
        Run *run;
        unsigned id, round;
        uint64_t sum;
} MstressThread;

static bool chance(Rng *rng, unsigned percent) {
        return rng_next(rng) % 100 < percent;
}

static size_t mstress_size(Rng *rng, size_t words) {
        if (chance(rng, 1))
                words *= 100;
        return words * sizeof(uint64_t);
}

/* A block written through, as the original writes every word of its objects: the pages an
 * allocator hands out are touched, so one that returns memory to the system faults it in again. */
static void *block_written(size_t size, uint64_t *sum) {
        unsigned char *p = block_new(size, sum);
        if (size > sizeof(size) + 1)
                memset(p + sizeof(size), (unsigned char) size, size - sizeof(size) - 1);
        return p;
}

static void *mstress_thread(void *arg) {
        MstressThread *t = arg;
        Run *run = t->run;
        Rng rng = rng_for(t->id, 5 + 1000 * (uint64_t) t->round);
        size_t allocs = scaled(run, 1000) * (t->id % 8 + 1), retain = allocs / 2;
        void **data = xmalloc(allocs * sizeof(void *)), **kept = xmalloc(retain * sizeof(void *));
        size_t n_data = 0, n_kept = 0;
        while (allocs > 0 || retain > 0) {
                if (retain == 0 || (allocs > 0 && chance(&rng, 50))) {
                        data[n_data++] =
                                block_written(mstress_size(&rng, rng_next(&rng) % 128 + 1), &t->sum);
                        allocs--;
                } else {
                        kept[n_kept++] =
                                block_written(mstress_size(&rng, 10 * (rng_next(&rng) % 1280 + 1)), &t->sum);
                        retain--;
                }
                if (n_data > 0 && chance(&rng, 66)) {
                        size_t k = rng_next(&rng) % n_data;
                        block_free(data[k]);
                        data[k] = NULL;
                }
                if (n_data > 0 && chance(&rng, 25)) {
                        size_t k = rng_next(&rng) % n_data, x = rng_next(&rng) % MSTRESS_TRANSFER;
                        data[k] = atomic_exchange((_Atomic(void *) *) &run->shared[x], data[k]);
                }
        }
        for (size_t k = 0; k < n_kept; k++)
                block_free(kept[k]);
        for (size_t k = 0; k < n_data; k++)
                block_free(data[k]);
        free(kept);
        free(data);
        return NULL;
}

/* Worker THREAD starts its thread of each round, one after the other. */
static void *mstress(void *arg) {
        Worker *w = arg;
        uint64_t sum = 0;
        for (unsigned round = 0; round < MSTRESS_ROUNDS; round++) {
                MstressThread t = { .run = w->run, .id = w->id, .round = round };
                pthread_t tid;
                thread_start(&tid, mstress_thread, &t);
                thread_join(tid);
                sum += t.sum;
        }
        atomic_fetch_add(&w->run->sum, sum);
        return NULL;
}

static void mstress_setup(Run *run) {
        run->n_shared = MSTRESS_TRANSFER;
        if (!(run->shared = calloc(MSTRESS_TRANSFER, sizeof(void *))))
                die("calloc");
}

static void mstress_teardown(Run *run) {
        for (size_t e = 0; e < MSTRESS_TRANSFER; e++)
                block_free(run->shared[e]);
}

/* --- frag --------------------------------------------------------------------------------- */

static void *frag(void *arg) {
        Worker *w = arg;
        Run *run = w->run;
        Rng rng = rng_for(w->id, 6);
        uint64_t sum = 0;
        size_t n = scaled(run, 150000) / run->threads;
        void **blocks = xmalloc(n * sizeof(void *));
        for (size_t i = 0; i < n; i++)
                blocks[i] = block_new(16 + rng_next(&rng) % 1024, &sum);
        /* Nine in ten go, scattered: every page keeps a survivor. */
        for (size_t i = 0; i < n; i++)
                if (i % 10 != 0) {
                        block_free(blocks[i]);
                        blocks[i] = NULL;
                }
        /* Fewer, larger objects: can the allocator reuse the holes? */
        size_t m = n / 20;
        void **larger = xmalloc(m * sizeof(void *));
        for (size_t i = 0; i < m; i++)
                larger[i] = block_new(2048 + rng_next(&rng) % 2048, &sum);
        pthread_barrier_wait(&run->barrier); /* main measures the resident set */
        pthread_barrier_wait(&run->barrier);
        for (size_t i = 0; i < n; i++)
                block_free(blocks[i]);
        for (size_t i = 0; i < m; i++)
                block_free(larger[i]);
        free(blocks);
        free(larger);
        atomic_fetch_add(&run->sum, sum);
        return NULL;
}

static long resident_bytes(void) {
        FILE *f = fopen("/proc/self/statm", "re");
        long size = 0, resident = 0;
        if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
                die("/proc/self/statm");
        fclose(f);
        return resident * sysconf(_SC_PAGESIZE);
}

static void report_metric(const char *name, long value) {
        const char *fd = getenv("ALLOCLAB_METRICS_FD");
        if (!fd)
                return; /* run by hand */
        char line[128];
        int n = snprintf(line, sizeof(line), "%s %ld\n", name, value);
        if (write(atoi(fd), line, (size_t) n) != n)
                die("metrics");
}

/* --- realloc ------------------------------------------------------------------------------ */

#define REALLOC_BUFFERS 16
#define REALLOC_LIMIT   (64 * 1024)

static void *realloc_worker(void *arg) {
        Worker *w = arg;
        Run *run = w->run;
        Rng rng = rng_for(w->id, 7);
        uint64_t sum = 0;
        size_t rounds = scaled(run, 40);
        for (size_t round = 0; round < rounds; round++) {
                char *buf[REALLOC_BUFFERS] = {};
                size_t len[REALLOC_BUFFERS] = {};
                for (bool growing = true; growing;) {
                        growing = false;
                        for (size_t b = 0; b < REALLOC_BUFFERS; b++) {
                                if (len[b] >= REALLOC_LIMIT)
                                        continue;
                                size_t add = 16 + rng_next(&rng) % 49;
                                char *grown = realloc(buf[b], len[b] + add);
                                if (!grown)
                                        die("realloc");
                                memset(grown + len[b], (int) ('a' + (len[b] + b) % 26), add);
                                buf[b] = grown;
                                len[b] += add;
                                growing = true;
                        }
                }
                for (size_t b = 0; b < REALLOC_BUFFERS; b++) {
                        for (size_t i = 0; i < len[b]; i += 4096)
                                sum += (unsigned char) buf[b][i];
                        sum += len[b];
                        free(buf[b]);
                }
        }
        atomic_fetch_add(&run->sum, sum);
        return NULL;
}

/* ------------------------------------------------------------------------------------------ */

typedef struct Mode {
        const char *name;
        void *(*worker)(void *);
        void (*setup)(Run *);
        void (*teardown)(Run *);
        bool barrier_with_main; /* the main thread joins the barrier (frag) */
} Mode;

static const Mode modes[] = {
        { "larson", larson, larson_setup, larson_teardown, false },
        { "xmalloc", xmalloc_worker, xmalloc_setup, xmalloc_teardown, false },
        { "cache-scratch", cache_scratch, cache_scratch_setup, NULL, false },
        { "cache-thrash", cache_thrash, NULL, NULL, false },
        { "mstress", mstress, mstress_setup, mstress_teardown, false },
        { "frag", frag, NULL, NULL, true },
        { "realloc", realloc_worker, NULL, NULL, false },
};

static unsigned parse_number(const char *s, unsigned max, const char *what) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno || end == s || *end || v == 0 || v > max) {
                fprintf(stderr, "alloclab-stress: %s must be 1 to %u, not '%s'\n", what, max, s);
                exit(2);
        }
        return (unsigned) v;
}

static void usage(FILE *f) {
        fprintf(f, "Usage: alloclab-stress MODE THREADS [SCALE]\nModes:");
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                fprintf(f, " %s", modes[i].name);
        fprintf(f, "\nSCALE: percent of the default work (100).\n");
}

int main(int argc, char **argv) {
        if (argc < 3 || argc > 4) {
                usage(stderr);
                return 2;
        }
        const Mode *mode = NULL;
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
                if (strcmp(argv[1], modes[i].name) == 0)
                        mode = &modes[i];
        if (!mode) {
                usage(stderr);
                return 2;
        }
        Run run = {
                .threads = parse_number(argv[2], MAX_THREADS, "THREADS"),
                .scale = argc > 3 ? parse_number(argv[3], 10000, "SCALE") : 100,
        };
        pthread_barrier_init(&run.barrier, NULL, run.threads + mode->barrier_with_main);
        if (mode->setup)
                mode->setup(&run);
        pthread_t tids[MAX_THREADS];
        Worker workers[MAX_THREADS];
        for (unsigned t = 0; t < run.threads; t++) {
                workers[t] = (Worker){ .run = &run, .id = t };
                thread_start(&tids[t], mode->worker, &workers[t]);
        }
        if (mode->barrier_with_main) {
                pthread_barrier_wait(&run.barrier);
                report_metric("rss_after_free_bytes", resident_bytes());
                pthread_barrier_wait(&run.barrier);
        }
        for (unsigned t = 0; t < run.threads; t++)
                thread_join(tids[t]);
        if (mode->teardown)
                mode->teardown(&run);
        free(run.shared);
        printf("%s threads=%u scale=%u checksum=%llu\n", mode->name, run.threads, run.scale,
               (unsigned long long) atomic_load(&run.sum));
        return 0;
}
