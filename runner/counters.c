/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner/counters.h"

#define COUNTER_NAME_(id, name, ...) [COUNTER_##id] = name,
const char *const counter_names[N_COUNTERS] = { COUNTERS(COUNTER_NAME_) };

typedef struct CounterEvent {
        uint32_t type;
        uint64_t config;
} CounterEvent;

#define COUNTER_EVENT_(id, name, type, config) [COUNTER_##id] = { type, config },
static const CounterEvent counter_events[N_COUNTERS] = { COUNTERS(COUNTER_EVENT_) };

static int counter_open(Counter c) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = counter_events[c].type,
                .config = counter_events[c].config,
                .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
                .disabled = 1,
                .inherit = 1,
                .enable_on_exec = 1,
        };
        return (int) syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Counters this machine does not have (no PMU): not asked for again. */
static uint32_t absent;

void counters_open(CounterSet *set) {
        for (int c = 0; c < N_COUNTERS; c++) {
                set->fd[c] = absent & (1u << c) ? -1 : counter_open((Counter) c);
                if (set->fd[c] < 0 && (errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP))
                        absent |= 1u << c;
        }
}

void counters_read(const CounterSet *set, CounterValues *ret) {
        *ret = (CounterValues){};
        for (int c = 0; c < N_COUNTERS; c++) {
                uint64_t v[3]; /* count, time enabled, time running */
                uint32_t bit = 1u << c;
                if (set->fd[c] < 0 || read(set->fd[c], v, sizeof(v)) != (ssize_t) sizeof(v))
                        continue;
                if (v[2] < v[1]) {
                        if (v[2] == 0)
                                continue; /* never on the PMU: nothing to scale */
                        v[0] = (uint64_t) ((double) v[0] * (double) v[1] / (double) v[2] + 0.5);
                        ret->scaled |= bit;
                }
                ret->value[c] = v[0];
                ret->have |= bit;
        }
}

void counters_close(CounterSet *set) {
        for (int c = 0; c < N_COUNTERS; c++)
                if (set->fd[c] >= 0) {
                        close(set->fd[c]);
                        set->fd[c] = -1;
                }
}

/* Why a counter of this kind cannot be opened, in words. */
static const char *unavailable_because(int error, bool hardware) {
        if (hardware && (error == ENOENT || error == EOPNOTSUPP || error == ENODEV))
                return "no PMU on this machine (most virtual machines have none)";
        if (error == EACCES || error == EPERM)
                return "not permitted (kernel.perf_event_paranoid, or CAP_PERFMON)";
        if (error == ENOSYS)
                return "this kernel has no perf_event_open";
        return "cannot be opened";
}

bool counters_can_open(Counter c, const char **ret_why) {
        int fd = counter_open(c);
        if (fd >= 0) {
                close(fd);
                return true;
        }
        int error = errno;
        bool hardware = counter_events[c].type != PERF_TYPE_SOFTWARE;
        int cycles = hardware ? counter_open(COUNTER_CYCLES) : -1;
        if (cycles >= 0) { /* there is a PMU: it does not count this event */
                close(cycles);
                *ret_why = "this machine's PMU does not count it";
                return false;
        }
        *ret_why = unavailable_because(error, hardware);
        return false;
}

char *counters_describe(void) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        /* Per kind (software, hardware): the first error, and the counters that failed. */
        int error[2] = {};
        unsigned opened[2] = {}, failed[2] = {};
        char failed_names[2][160] = { "", "" };
        const char *sep = "";
        for (int c = 0; c < N_COUNTERS; c++) {
                int hardware = counter_events[c].type != PERF_TYPE_SOFTWARE;
                int fd = counter_open((Counter) c);
                if (fd >= 0) {
                        close(fd);
                        opened[hardware]++;
                        fprintf(f, "%s%s", sep, counter_names[c]);
                        sep = " ";
                        continue;
                }
                if (!error[hardware])
                        error[hardware] = errno;
                size_t at = strlen(failed_names[hardware]);
                snprintf(failed_names[hardware] + at, sizeof(failed_names[hardware]) - at, "%s%s",
                         failed[hardware]++ ? " " : "", counter_names[c]);
        }
        if (!*sep)
                fputs("none", f);
        for (int hardware = 0; hardware < 2; hardware++) {
                if (!failed[hardware])
                        continue;
                const char *kind = hardware ? "hardware" : "software";
                /* Some of a kind open: the others are events this PMU (or kernel) does not count. */
                if (opened[hardware])
                        fprintf(f, "; not counted here: %s (perf_event_open: %s)", failed_names[hardware],
                                strerror(error[hardware]));
                else
                        fprintf(f, "; %s counters unavailable: %s (perf_event_open: %s)", kind,
                                unavailable_because(error[hardware], hardware), strerror(error[hardware]));
        }
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}
