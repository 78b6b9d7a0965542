/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "runner/metric.h"

static double timeval_seconds(const struct timeval *t) {
        return (double) t->tv_sec + (double) t->tv_usec / 1e6;
}

static double wall(const Sample *s) {
        return (double) s->spawn.wall_ns / 1e9;
}

static double user(const Sample *s) {
        return timeval_seconds(&s->spawn.usage.ru_utime);
}

static double sys(const Sample *s) {
        return timeval_seconds(&s->spawn.usage.ru_stime);
}

static double maxrss(const Sample *s) {
        return (double) s->spawn.usage.ru_maxrss * 1024.0;
}

static double counted(const Sample *s, Counter c) {
        return (double) s->spawn.counters.value[c];
}

#define COUNTER_OF_(id, ...)                                                                                \
        static double of_##id(const Sample *s) {                                                            \
                return counted(s, COUNTER_##id);                                                            \
        }
COUNTERS(COUNTER_OF_)

#define COUNTER_METRIC_(id, name, ...)                                                                      \
        { SPEC_METRIC_##id, of_##id, "CAST(s." name " AS REAL)", COUNTER_##id },

const BuiltinMetric builtin_metrics[N_BUILTIN_METRICS] = {
        /* time and memory, from wait4 */
        { SPEC_METRIC_WALL, wall, "s.wall_ns / 1e9", -1 },
        { SPEC_METRIC_USER, user, "s.user_us / 1e6", -1 },
        { SPEC_METRIC_SYS, sys, "s.sys_us / 1e6", -1 },
        { SPEC_METRIC_MAXRSS, maxrss, "s.maxrss_kib * 1024.0", -1 },
        /* the kernel's event counters, in their order */
        COUNTERS(COUNTER_METRIC_)
};

bool builtin_metric_measured(const BuiltinMetric *m, const Sample *s) {
        return m->counter < 0 || counter_have(&s->spawn.counters, (Counter) m->counter);
}

const BuiltinMetric *builtin_metric(const char *name) {
        for (size_t i = 0; name && i < N_BUILTIN_METRICS; i++)
                if (strcmp(builtin_metric_name(&builtin_metrics[i]), name) == 0)
                        return &builtin_metrics[i];
        return NULL;
}
