/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/callgrind.h"
#include "util/cleanup.h"
#include "util/doomed.h"
#include "util/io.h"
#include "util/strv.h"

int callgrind_new(const char *valgrind, Callgrind **ret) {
        _cleanup_free_ Callgrind *cg = calloc(1, sizeof(Callgrind));
        if (!cg)
                return -ENOMEM;
        const char *tmp = getenv("TMPDIR");
        if (asprintf(&cg->log_dir, "%s/alloclab-callgrind.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
                return -ENOMEM;
        if (!(cg->valgrind = strdup(valgrind)) || !mkdtemp(cg->log_dir)) {
                int r = cg->valgrind ? -errno : -ENOMEM;
                free(cg->valgrind);
                free(cg->log_dir);
                return r;
        }
        cg->log_dir_doomed = doomed_register(cg->log_dir, true);
        *ret = TAKE_PTR(cg);
        return 0;
}

/* Removes every log of the directory; the sum of their counts into *ret_sum when not NULL.
 * Returns how many logs had a count, or -errno. */
static int logs_take(const Callgrind *cg, uint64_t *ret_sum) {
        int dir_fd = open(cg->log_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = dir_fd >= 0 ? fdopendir(dir_fd) : NULL;
        if (!d) {
                if (dir_fd >= 0)
                        close(dir_fd);
                return -errno;
        }
        int counted = 0, r = 0;
        uint64_t sum = 0;
        for (struct dirent *e; (e = readdir(d));) {
                if (e->d_name[0] == '.')
                        continue;
                int fd = openat(dir_fd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                _cleanup_free_ char *text = NULL;
                size_t size;
                int q = fd >= 0 ? read_text_fd(fd, 1 << 20, &text, &size) : -errno;
                if (fd >= 0)
                        close(fd);
                (void) unlinkat(dir_fd, e->d_name, 0);
                if (q == -ENOMEM) {
                        r = q;
                        break;
                }
                /* "==PID== Collected : 19590573": the process's total, at its exit */
                for (const char *at = text ? strstr(text, "== Collected : ") : NULL; at;
                     at = strstr(at + 1, "== Collected : ")) {
                        sum += strtoull(at + strlen("== Collected : "), NULL, 10);
                        counted++;
                }
        }
        closedir(d);
        if (ret_sum)
                *ret_sum = sum;
        return r < 0 ? r : counted;
}

void callgrind_free(Callgrind *cg) {
        if (!cg)
                return;
        (void) logs_take(cg, NULL);
        (void) rmdir(cg->log_dir);
        doomed_forget(cg->log_dir_doomed);
        free(cg->log_dir);
        free(cg->valgrind);
        free(cg);
}

char **callgrind_argv(const Callgrind *cg, const char *exe, char *const *argv) {
        _cleanup_free_ char *log_file = NULL;
        if (asprintf(&log_file, "--log-file=%s/%%p.%%n", cg->log_dir) < 0)
                return NULL;
        /* Its call graph goes to /dev/null: only the count is wanted. */
        const char *head[] = { cg->valgrind,           "--tool=callgrind", "--callgrind-out-file=/dev/null",
                               "--trace-children=yes", log_file,           exe };
        _cleanup_strv_free_ char **v = NULL;
        for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
                if (strv_append(&v, head[i]) < 0)
                        return NULL;
        for (size_t i = 1; argv[0] && argv[i]; i++)
                if (strv_append(&v, argv[i]) < 0)
                        return NULL;
        return TAKE_PTR(v);
}

int callgrind_collect(const Callgrind *cg, uint64_t *ret_instructions) {
        int n = logs_take(cg, ret_instructions);
        return n < 0 ? n : n == 0 ? -ENODATA : 0;
}
