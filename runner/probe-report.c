/* SPDX-License-Identifier: MIT */
/*
 * Decoding never trusts the child: the report is copied out of the mapping first (the child is
 * gone by then, but a grandchild could still write), sizes and magic are checked, every string
 * is re-terminated and every count clamped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runner/probe-report.h"
#include "util/cleanup.h"
#include "util/io.h"

int probe_report_memfd(uint32_t requests) {
        int fd = memfd_create("alloclab-probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return negative_errno();
        /* The seals are the probe's proof that the descriptor it is handed is this report. */
        if (ftruncate(fd, PROBE_REPORT_FILE) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0 ||
            pwrite(fd, &requests, sizeof(requests), offsetof(ProbeReport, requests)) != sizeof(requests)) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

#define TERMINATE(a) ((a)[sizeof(a) - 1] = 0)

int probe_report_decode(int fd, ProbeResult *ret) {
        void *m = mmap(NULL, sizeof(ProbeReport), PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
                return negative_errno();
        int r = probe_report_decode_buffer(m, sizeof(ProbeReport), ret);
        munmap(m, sizeof(ProbeReport));
        return r;
}

int probe_report_stats(int fd, const ProbeResult *r, char **ret) {
        *ret = NULL;
        uint64_t size = r->report.stats_size;
        if (!r->loaded || r->report.stats_format == PROBE_STATS_NONE || size == 0)
                return 0;
        if (size > PROBE_STATS_MAX)
                return -EBADMSG;
        char *text = malloc(size + 1);
        if (!text)
                return -ENOMEM;
        ssize_t n = read_full_at(fd, text, size, (off_t) sizeof(ProbeReport));
        if (n != (ssize_t) size) {
                free(text);
                return n < 0 ? (int) n : -EBADMSG;
        }
        text[size] = 0;
        *ret = text;
        return 0;
}

int probe_report_decode_buffer(const void *data, size_t size, ProbeResult *ret) {
        *ret = (ProbeResult){};
        ProbeReport *c = &ret->report;
        if (size != sizeof(ProbeReport))
                return -EBADMSG;
        memcpy(c, data, sizeof(*c));

        if (c->magic == 0 && c->state == 0) {
                /* The probe never wrote it: nothing else in it is the probe's either (a program
                 * the probe did not enter may have written the descriptor it inherited). */
                memset(c, 0, sizeof(*c));
                return 0;
        }
        if (c->magic != PROBE_REPORT_MAGIC || c->version != PROBE_REPORT_VERSION ||
            c->size != sizeof(ProbeReport))
                return -EBADMSG;

        ret->loaded = c->state & PROBE_STATE_LOADED;
        ret->exited = c->state & PROBE_STATE_EXITED;
        ret->forward_failed = c->state & PROBE_STATE_FORWARD_FAILED;
        ret->counted = c->state & PROBE_STATE_COUNTERS;
        ret->live_measured = c->state & PROBE_STATE_LIVE_BYTES;
        ret->requested_tracked = c->state & PROBE_STATE_LIVE_REQUESTED;
        ret->options_known = c->state & PROBE_STATE_OPTIONS;
        ret->census_known = c->state & PROBE_STATE_CENSUS;
        ret->exec_seen = c->state & PROBE_STATE_EXEC;
        TERMINATE(c->exec_path);
        TERMINATE(c->exec_preload);
        TERMINATE(c->effective_path);
        TERMINATE(c->effective_prefix);
        TERMINATE(c->allocator_version);
        TERMINATE(c->forward_library);
        TERMINATE(c->error);
        if (c->n_options > PROBE_MAX_OPTIONS)
                c->n_options = PROBE_MAX_OPTIONS;
        for (uint32_t i = 0; i < c->n_options; i++) {
                TERMINATE(c->options[i].name);
                TERMINATE(c->options[i].value);
        }
        if (c->n_libraries > PROBE_MAX_LIBRARIES)
                c->n_libraries = PROBE_MAX_LIBRARIES;
        for (uint32_t i = 0; i < c->n_libraries; i++) {
                TERMINATE(c->libraries[i].path);
                TERMINATE(c->libraries[i].prefix);
        }

        ret->n_processes = c->n_processes < PROBE_MAX_PROCESSES ? c->n_processes : PROBE_MAX_PROCESSES;
        for (uint32_t i = 0; i < ret->n_processes; i++) {
                ProbeProcess *p = &c->processes[i];
                TERMINATE(p->program);
                TERMINATE(p->effective_path);
                TERMINATE(p->unprobed_exec);
                TERMINATE(p->unprobed_preload);
                TERMINATE(p->preload);
                if (p->parent < -1 || p->parent >= (int32_t) ret->n_processes)
                        p->parent = -1;
                if (p->memory_read) {
                        ret->memory_processes++;
                        ret->rss_kib += p->rss_kib;
                        ret->pss_anon_kib += p->pss_anon_kib;
                        ret->anon_huge_kib += p->anon_huge_kib;
                }
        }

        /* Summed as the probe's counters wrap: modulo 2^64 (a thread's live bytes go negative
         * when it frees what another allocated; a corrupt report must not make this UB). */
        uint32_t slots = c->n_slots < PROBE_MAX_SLOTS ? c->n_slots : PROBE_MAX_SLOTS;
        uint64_t live = 0;
        uint32_t threads_of[PROBE_MAX_PROCESSES + 1] = {}; /* the last: of no known process */
        for (uint32_t s = 0; s < slots; s++) {
                int32_t process = c->slots[s].process;
                uint32_t *of = &threads_of[process >= 0 && (uint32_t) process < ret->n_processes
                                                   ? (uint32_t) process
                                                   : PROBE_MAX_PROCESSES];
                if (++*of > ret->threads_in_one_process)
                        ret->threads_in_one_process = *of;
                for (unsigned f = 0; f < _PROBE_FUNCTION_MAX; f++) {
                        ret->calls[f] += c->slots[s].calls[f];
                        if (process >= 0 && (uint32_t) process < ret->n_processes)
                                ret->process_calls[process] += c->slots[s].calls[f];
                }
                ret->bytes_requested += c->slots[s].bytes_requested;
                live += (uint64_t) c->slots[s].live_bytes;
        }
        ret->live_bytes = (int64_t) live;
        ret->threads = c->n_slots;
        ret->peak_live_bytes = c->peak_live_bytes > ret->live_bytes ? c->peak_live_bytes : ret->live_bytes;
        return 0;
}

#define FAMILY_NAME(id, name, ...) { PROBE_FAMILY_##id, name },
const ProbeFamilyName probe_family_names[PROBE_N_FAMILIES] = { PROBE_FAMILIES(FAMILY_NAME) };
#undef FAMILY_NAME

const char *probe_family_name(uint32_t families) {
        for (size_t i = 0; i < ELEMENTSOF(probe_family_names); i++)
                if (families & probe_family_names[i].bit)
                        return probe_family_names[i].name;
        return "none";
}

const char *probe_function_name(ProbeFunction f) {
        static const char *const names[_PROBE_FUNCTION_MAX] = {
                "malloc",        "free",     "calloc", "realloc", "reallocarray",       "posix_memalign",
                "aligned_alloc", "memalign", "valloc", "pvalloc", "malloc_usable_size", "new",
                "delete",
        };
        return (unsigned) f < _PROBE_FUNCTION_MAX ? names[f] : "?";
}

const char *probe_process_how(uint32_t how) {
        switch (how) {
        case PROBE_PROCESS_STARTED:
                return "started";
        case PROBE_PROCESS_FORKED:
                return "forked";
        case PROBE_PROCESS_EXECUTED:
                return "executed";
        case PROBE_PROCESS_SPAWNED:
                return "spawned";
        default:
                return "?";
        }
}

unsigned probe_allocator_copies(const ProbeResult *r) {
        unsigned n = 0;
        for (uint32_t i = 0; i < r->report.n_libraries; i++)
                n += (r->report.libraries[i].families & ~(uint32_t) PROBE_FAMILY_GLIBC) != 0;
        return n;
}
