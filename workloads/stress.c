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
 *   xmalloc        producer/consumer (Lever & Boreham's xmalloc-test): each thread allocates
 *                  batches and hands them to the next thread, which frees them
 *   cache-scratch  passive false sharing (Hoard): the main thread allocates one small object per
 *                  thread; each thread frees its object, then allocates, writes and frees small
 *                  objects of the same size: an allocator that reuses the freed neighbours
 *                  makes threads write to one cache line
 *   cache-thrash   active false sharing (Hoard): each thread allocates, writes and frees small
 *                  objects; an allocator that serves threads from one cache line thrashes it
 *   mstress        long-lived and short-lived objects of a skewed size mix (after mimalloc-bench's
 *                  mstress): most die young, some live on in a per-thread ring, and some move to
 *                  other threads through a shared exchange array
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

static void *xmalloc(size_t n) {
        void *p = malloc(n);
        if (!p)
                die("malloc");
        return p;
}

/* A block carries its size in its first bytes and a tag in its last: a checked free. */
static void *block_new(size_t size, uint64_t *sum) {
        unsigned char *p = xmalloc(size);
        memcpy(p, &size, sizeof(size));
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
        if (p[size - 1] != (unsigned char) size) {
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

/* --- xmalloc: batches through a ring of queues --------------------------------------------- */

#define XMALLOC_BATCH 256
#define XMALLOC_QUEUE 16

typedef struct Queue {
        pthread_mutex_t lock;
        pthread_cond_t changed;
        void **items[XMALLOC_QUEUE];
        size_t head, n;
} Queue;

static void queue_push(Queue *q, void **batch) {
        pthread_mutex_lock(&q->lock);
        while (q->n == XMALLOC_QUEUE)
                pthread_cond_wait(&q->changed, &q->lock);
        q->items[(q->head + q->n++) % XMALLOC_QUEUE] = batch;
        pthread_cond_broadcast(&q->changed);
        pthread_mutex_unlock(&q->lock);
}

static void **queue_pop(Queue *q) {
        pthread_mutex_lock(&q->lock);
        while (q->n == 0)
                pthread_cond_wait(&q->changed, &q->lock);
        void **batch = q->items[q->head];
        q->head = (q->head + 1) % XMALLOC_QUEUE;
        q->n--;
        pthread_cond_broadcast(&q->changed);
        pthread_mutex_unlock(&q->lock);
        return batch;
}

static void *xmalloc_worker(void *arg) {
        Worker *w = arg;
        Run *run = w->run;
        Queue *mine = (Queue *) run->shared[w->id];
        Queue *before = (Queue *) run->shared[(w->id + run->threads - 1) % run->threads];
        Rng rng = rng_for(w->id, 2);
        uint64_t sum = 0;
        size_t batches = scaled(run, 3000);
        for (size_t b = 0; b < batches; b++) {
                void **batch = xmalloc(XMALLOC_BATCH * sizeof(void *));
                for (size_t i = 0; i < XMALLOC_BATCH; i++)
                        batch[i] = block_new(16 + rng_next(&rng) % 497, &sum);
                queue_push(mine, batch);
                /* The thread before produced this one: its blocks are freed here. */
                void **theirs = queue_pop(before);
                for (size_t i = 0; i < XMALLOC_BATCH; i++)
                        block_free(theirs[i]);
                free(theirs);
        }
        atomic_fetch_add(&run->sum, sum);
        return NULL;
}

static void xmalloc_setup(Run *run) {
        run->n_shared = run->threads;
        run->shared = xmalloc(run->threads * sizeof(void *));
        for (unsigned t = 0; t < run->threads; t++) {
                Queue *q = calloc(1, sizeof(Queue));
                if (!q)
                        die("calloc");
                pthread_mutex_init(&q->lock, NULL);
                pthread_cond_init(&q->changed, NULL);
                run->shared[t] = q;
        }
}

static void xmalloc_teardown(Run *run) {
        for (unsigned t = 0; t < run->threads; t++)
                free(run->shared[t]);
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

#define MSTRESS_KEEP     64
#define MSTRESS_EXCHANGE 256

/* Mostly small, sometimes large: 16 B to 64 KiB, each size class a quarter as likely as the
 * one below. */
static size_t skewed_size(Rng *rng) {
        uint64_t r = rng_next(rng);
        unsigned shift = 4;
        while (shift < 16 && (r & 3) == 0) {
                shift += 2;
                r >>= 2;
        }
        return ((size_t) 1 << shift) + (size_t) (r >> 8) % ((size_t) 1 << shift);
}

static void *mstress(void *arg) {
        Worker *w = arg;
        Run *run = w->run;
        Rng rng = rng_for(w->id, 5);
        uint64_t sum = 0;
        void *keep[MSTRESS_KEEP] = {};
        void *young[100];
        size_t rounds = scaled(run, 60000);
        for (size_t round = 0; round < rounds; round++) {
                for (size_t i = 0; i < 100; i++)
                        young[i] = block_new(skewed_size(&rng), &sum);
                /* One in ten lives on; what it replaces dies. */
                for (size_t i = 0; i < 100; i += 10) {
                        size_t k = rng_next(&rng) % MSTRESS_KEEP;
                        block_free(keep[k]);
                        keep[k] = young[i];
                        young[i] = NULL;
                }
                /* One moves to whichever thread takes its place in the exchange next. */
                size_t k = rng_next(&rng) % MSTRESS_KEEP, e = rng_next(&rng) % MSTRESS_EXCHANGE;
                void *old = atomic_exchange((_Atomic(void *) *) &run->shared[e], keep[k]);
                keep[k] = old;
                for (size_t i = 0; i < 100; i++)
                        block_free(young[i]);
        }
        for (size_t k = 0; k < MSTRESS_KEEP; k++)
                block_free(keep[k]);
        atomic_fetch_add(&run->sum, sum);
        return NULL;
}

static void mstress_setup(Run *run) {
        run->n_shared = MSTRESS_EXCHANGE;
        if (!(run->shared = calloc(MSTRESS_EXCHANGE, sizeof(void *))))
                die("calloc");
}

static void mstress_teardown(Run *run) {
        for (size_t e = 0; e < MSTRESS_EXCHANGE; e++)
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
                errno = pthread_create(&tids[t], NULL, mode->worker, &workers[t]);
                if (errno)
                        die("pthread_create");
        }
        if (mode->barrier_with_main) {
                pthread_barrier_wait(&run.barrier);
                report_metric("rss_after_free_bytes", resident_bytes());
                pthread_barrier_wait(&run.barrier);
        }
        for (unsigned t = 0; t < run.threads; t++)
                pthread_join(tids[t], NULL);
        if (mode->teardown)
                mode->teardown(&run);
        free(run.shared);
        printf("%s threads=%u scale=%u checksum=%llu\n", mode->name, run.threads, run.scale,
               (unsigned long long) atomic_load(&run.sum));
        return 0;
}
