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

const BuiltinMetric builtin_metrics[N_BUILTIN_METRICS] = {
        { SPEC_METRIC_WALL, wall, "s.wall_ns / 1e9" },
        { SPEC_METRIC_USER, user, "s.user_us / 1e6" },
        { SPEC_METRIC_SYS, sys, "s.sys_us / 1e6" },
        { SPEC_METRIC_MAXRSS, maxrss, "s.maxrss_kib * 1024.0" },
};

const BuiltinMetric *builtin_metric(const char *name) {
        for (size_t i = 0; name && i < N_BUILTIN_METRICS; i++)
                if (strcmp(builtin_metric_name(&builtin_metrics[i]), name) == 0)
                        return &builtin_metrics[i];
        return NULL;
}
