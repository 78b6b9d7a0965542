/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/cpus.h"
#include "util/cleanup.h"

char *cpus_format(const cpu_set_t *set) {
        char *out = calloc(1, 8 * CPU_SETSIZE), *p = out;
        if (!out)
                return NULL;
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
                if (!CPU_ISSET(cpu, set))
                        continue;
                int last = cpu;
                while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
                        last++;
                p += sprintf(p, "%s%d", p == out ? "" : ",", cpu);
                if (last > cpu)
                        p += sprintf(p, "-%d", last);
                cpu = last;
        }
        return out;
}

/* The CPUs sharing a core with cpu (itself included), from sysfs; just cpu when unknown. */
static void smt_siblings(int cpu, cpu_set_t *ret) {
        CPU_ZERO(ret);
        CPU_SET(cpu, ret);
        char path[128], list[256];
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
        FILE *f = fopen(path, "re");
        if (!f)
                return;
        bool ok = fgets(list, sizeof(list), f) != NULL;
        fclose(f);
        for (char *p = list; ok && *p && *p != '\n';) {
                char *end;
                long a = strtol(p, &end, 10), b = a;
                if (end == p)
                        break;
                if (*end == '-')
                        b = strtol(end + 1, &end, 10);
                for (long c = a; c <= b && c < CPU_SETSIZE; c++)
                        if (c >= 0)
                                CPU_SET((int) c, ret);
                p = *end == ',' ? end + 1 : end;
        }
}

static int highest(const cpu_set_t *set) {
        for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
                if (CPU_ISSET(cpu, set))
                        return cpu;
        return -1;
}

int cpus_place(const Spec *s, CpuPlacement *ret, char **ret_message) {
        *ret = (CpuPlacement){};
        if (s->cpus == SPEC_CPUS_NONE)
                return 0;
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
                return negative_errno();
        CPU_ZERO(&ret->child);
        if (s->cpus == SPEC_CPUS_AUTO) {
                int cpu = highest(&allowed);
                if (CPU_COUNT(&allowed) < 2 || cpu <= 0)
                        return 0; /* nowhere away from the runner to go */
                CPU_SET(cpu, &ret->child);
                cpu_set_t siblings;
                smt_siblings(cpu, &siblings);
                CPU_AND(&siblings, &siblings, &allowed);
                CPU_XOR(&ret->runner, &allowed, &siblings); /* allowed minus the child's core */
        } else {
                for (size_t i = 0; i < s->n_cpu_list; i++) {
                        if (!CPU_ISSET(s->cpu_list[i], &allowed)) {
                                _cleanup_free_ char *list = cpus_format(&allowed);
                                if (ret_message &&
                                    asprintf(ret_message, "cpus: CPU %u is not available here (allowed: %s)",
                                             (unsigned) s->cpu_list[i], list ? list : "?") < 0)
                                        *ret_message = NULL;
                                return -EINVAL;
                        }
                        CPU_SET(s->cpu_list[i], &ret->child);
                }
                CPU_XOR(&ret->runner, &allowed, &ret->child);
        }
        if (CPU_COUNT(&ret->runner) == 0) { /* SMT siblings only, or every CPU listed */
                CPU_XOR(&ret->runner, &allowed, &ret->child);
                if (CPU_COUNT(&ret->runner) == 0)
                        ret->runner = allowed;
        }
        ret->pinned = true;
        return 0;
}
