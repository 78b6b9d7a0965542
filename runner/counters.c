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
        *ret_why = unavailable_because(errno, counter_events[c].type != PERF_TYPE_SOFTWARE);
        return false;
}

char *counters_describe(void) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        int hardware_error = 0, software_error = 0;
        const char *sep = "";
        for (int c = 0; c < N_COUNTERS; c++) {
                bool hardware = counter_events[c].type != PERF_TYPE_SOFTWARE;
                int fd = counter_open((Counter) c);
                if (fd >= 0) {
                        close(fd);
                        fprintf(f, "%s%s", sep, counter_names[c]);
                        sep = " ";
                } else if (hardware && !hardware_error)
                        hardware_error = errno;
                else if (!hardware && !software_error)
                        software_error = errno;
        }
        if (!*sep)
                fputs("none", f);
        if (software_error)
                fprintf(f, "; software counters unavailable: %s (perf_event_open: %s)",
                        unavailable_because(software_error, false), strerror(software_error));
        if (hardware_error)
                fprintf(f, "; hardware counters unavailable: %s (perf_event_open: %s)",
                        unavailable_because(hardware_error, true), strerror(hardware_error));
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}
