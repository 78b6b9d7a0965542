/* SPDX-License-Identifier: MIT */
/*
 * The driver of a fuzz target without libFuzzer (gcc builds, CI):
 *
 *   fuzz-NAME [--runs N] [--seed S] [--max-len L] [CORPUS...]
 *
 * Runs the target once on the empty input and on every corpus file (a directory stands for
 * the regular files in it), then on N inputs made from them by random mutations: bit flips,
 * interesting bytes and integers, insertions, deletions, repeats and splices, at most L bytes
 * long. The mutations follow from S alone, so a run is reproducible. A bug stops the process,
 * through a sanitizer, a target's own abort() or a signal; the input that did it is then
 * written to ./crash-NAME, which replays it when given as the corpus.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak)); /* fuzz.h: optional */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

typedef struct Input {
        uint8_t *data;
        size_t size;
} Input;

static Input *corpus;
static size_t n_corpus;
static uint64_t rng;

/* The input running now, for the crash file. */
static const uint8_t *current;
static size_t current_size;
static char crash_path[256];

static void save_current(void) {
        int fd = open(crash_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return;
        (void) !write(fd, current, current_size);
        close(fd);
        static const char msg[] = "the input is in ";
        (void) !write(STDERR_FILENO, msg, sizeof(msg) - 1);
        (void) !write(STDERR_FILENO, crash_path, strlen(crash_path));
        (void) !write(STDERR_FILENO, "\n", 1);
}

static void on_fatal_signal(int sig) {
        save_current();
        signal(sig, SIG_DFL);
        raise(sig);
}

static void add_input(const uint8_t *data, size_t size) {
        Input *grown = realloc(corpus, (n_corpus + 1) * sizeof(*corpus));
        uint8_t *copy = malloc(size ? size : 1);
        if (!grown || !copy) {
                fprintf(stderr, "out of memory\n");
                exit(1);
        }
        corpus = grown;
        if (size)
                memcpy(copy, data, size);
        corpus[n_corpus++] = (Input){ copy, size };
}

static void add_file(const char *path) {
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                exit(1);
        }
        uint8_t buf[1 << 16];
        size_t size = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        add_input(buf, size);
}

static void add_path(const char *path) {
        struct stat st;
        if (stat(path, &st) < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                exit(1);
        }
        if (!S_ISDIR(st.st_mode)) {
                add_file(path);
                return;
        }
        struct dirent **names;
        int n = scandir(path, &names, NULL, alphasort); /* sorted: the same order every run */
        for (int i = 0; i < n; i++) {
                char file[4096];
                snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
                if (stat(file, &st) == 0 && S_ISREG(st.st_mode))
                        add_file(file);
                free(names[i]);
        }
        free(names);
}

/* xorshift64*: small, fast, and the same sequence from the same seed everywhere. */
static uint64_t random_below(uint64_t bound) {
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return bound ? (rng * 0x2545F4914F6CDD1DULL) % bound : 0;
}

static const uint8_t interesting_bytes[] = { 0,   1,   0x7f, 0x80, 0xff, '\n', ' ', ':', '-', '[', ']',
                                             '{', '}', ',',  '"',  '\'', '#',  '&', '*', '!', '%', '0' };
static const uint64_t interesting_ints[] = { 0,
                                             1,
                                             2,
                                             64,
                                             255,
                                             0x7fff,
                                             0xffff,
                                             0x7fffffff,
                                             0x80000000,
                                             0xffffffff,
                                             0x7fffffffffffffff,
                                             0x8000000000000000,
                                             0xffffffffffffffff };

/* One mutation of buf (size bytes, room for max): returns the new size. */
static size_t mutate_once(uint8_t *buf, size_t size, size_t max) {
        const Input *other = &corpus[random_below(n_corpus)];
        switch (random_below(8)) {
        case 0: /* flip a bit */
                if (size)
                        buf[random_below(size)] ^= (uint8_t) (1u << random_below(8));
                break;
        case 1: /* an interesting byte */
                if (size)
                        buf[random_below(size)] = interesting_bytes[random_below(sizeof(interesting_bytes))];
                break;
        case 2: { /* an interesting integer, 1 to 8 bytes of it */
                size_t width = 1 + random_below(8);
                if (size < width)
                        break;
                uint64_t v = interesting_ints[random_below(sizeof(interesting_ints) / sizeof(uint64_t))];
                memcpy(buf + random_below(size - width + 1), &v, width);
                break;
        }
        case 3: { /* insert random bytes */
                size_t n = 1 + random_below(8), at = random_below(size + 1);
                if (size + n > max)
                        break;
                memmove(buf + at + n, buf + at, size - at);
                for (size_t i = 0; i < n; i++)
                        buf[at + i] = (uint8_t) random_below(256);
                size += n;
                break;
        }
        case 4: { /* delete a range */
                if (!size)
                        break;
                size_t at = random_below(size), n = 1 + random_below(size - at < 16 ? size - at : 16);
                memmove(buf + at, buf + at + n, size - at - n);
                size -= n;
                break;
        }
        case 5: { /* repeat a range of itself somewhere else */
                if (!size)
                        break;
                size_t from = random_below(size), n = 1 + random_below(size - from < 32 ? size - from : 32);
                size_t at = random_below(size + 1);
                if (size + n > max)
                        break;
                uint8_t chunk[32];
                memcpy(chunk, buf + from, n);
                memmove(buf + at + n, buf + at, size - at);
                memcpy(buf + at, chunk, n);
                size += n;
                break;
        }
        case 6: { /* splice: keep a head, take another input's tail */
                size_t head = random_below(size + 1), from = random_below(other->size + 1);
                size_t tail = other->size - from;
                if (head + tail > max)
                        tail = max - head;
                memcpy(buf + head, other->data + from, tail);
                size = head + tail;
                break;
        }
        default: { /* insert a piece of another input */
                if (!other->size)
                        break;
                size_t from = random_below(other->size);
                size_t n = 1 + random_below(other->size - from < 64 ? other->size - from : 64);
                size_t at = random_below(size + 1);
                if (size + n > max)
                        break;
                memmove(buf + at + n, buf + at, size - at);
                memcpy(buf + at, other->data + from, n);
                size += n;
                break;
        }
        }
        return size;
}

static void run(const uint8_t *data, size_t size) {
        current = data;
        current_size = size;
        LLVMFuzzerTestOneInput(data, size);
}

int main(int argc, char **argv) {
        unsigned long long runs = 10000, seed = 1, max_len = 4096;
        const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        if (LLVMFuzzerInitialize)
                LLVMFuzzerInitialize(&argc, &argv);
        add_input(NULL, 0);
        for (int i = 1; i < argc; i++) {
                if (i + 1 < argc && strcmp(argv[i], "--runs") == 0)
                        runs = strtoull(argv[++i], NULL, 10);
                else if (i + 1 < argc && strcmp(argv[i], "--seed") == 0)
                        seed = strtoull(argv[++i], NULL, 10);
                else if (i + 1 < argc && strcmp(argv[i], "--max-len") == 0)
                        max_len = strtoull(argv[++i], NULL, 10);
                else if (argv[i][0] == '-') {
                        fprintf(stderr, "usage: %s [--runs N] [--seed S] [--max-len L] [CORPUS...]\n", name);
                        return 2;
                } else
                        add_path(argv[i]);
        }
        snprintf(crash_path, sizeof(crash_path), "crash-%s", name);
        if (__sanitizer_set_death_callback) /* the sanitizers report signals themselves */
                __sanitizer_set_death_callback(save_current);
        else
                for (int sig = 1; sig < NSIG; sig++)
                        if (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
                            sig == SIGABRT)
                                signal(sig, on_fatal_signal);

        for (size_t i = 0; i < n_corpus; i++)
                run(corpus[i].data, corpus[i].size);
        rng = seed * 0x9E3779B97F4A7C15ULL + 1;
        size_t cap = max_len;
        for (size_t i = 0; i < n_corpus; i++)
                if (corpus[i].size > cap)
                        cap = corpus[i].size;
        uint8_t *buf = malloc(cap);
        if (!buf)
                return 1;
        for (unsigned long long r = 0; r < runs; r++) {
                const Input *start = &corpus[random_below(n_corpus)];
                memcpy(buf, start->data, start->size);
                size_t size = start->size;
                for (uint64_t m = 1 + random_below(4); m > 0; m--)
                        size = mutate_once(buf, size, cap);
                run(buf, size);
        }
        printf("%s: %zu corpus inputs and %llu mutations of them (seed %llu), no failure\n", name, n_corpus,
               runs, seed);
        free(buf);
        return 0;
}
