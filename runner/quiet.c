/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "runner/quiet.h"
#include "util/clock.h"

#define WINDOW_NS 100000000ULL /* the wait's poll, and the interval other work is read over */

static uint64_t timeval_ns(struct timeval tv) {
        return (uint64_t) tv.tv_sec * 1000000000 + (uint64_t) tv.tv_usec * 1000;
}

/* /proc/stat counts in USER_HZ units (a tick of the kernel's clock is at most that long). */
static uint64_t tick_ns(void) {
        long hz = sysconf(_SC_CLK_TCK);
        return hz > 0 ? 1000000000ULL / (uint64_t) hz : 10000000ULL;
}

void machine_times_read(MachineTimes *ret) {
        *ret = (MachineTimes){};
        struct rusage self;
        if (getrusage(RUSAGE_SELF, &self) == 0)
                ret->own_ns = timeval_ns(self.ru_utime) + timeval_ns(self.ru_stime);
        ret->at_ns = now_ns();
        FILE *f = fopen("/proc/stat", "re");
        if (!f)
                return;
        /* cpu user nice system idle iowait irq softirq steal (guest time is within user) */
        unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait,
                   &irq, &softirq, &steal) == 8) {
                uint64_t tick = tick_ns();
                ret->busy_ns = (user + nice + system + irq + softirq) * tick;
                ret->steal_ns = steal * tick;
                ret->valid = true;
        }
        fclose(f);
}

static uint64_t minus(uint64_t a, uint64_t b) {
        return a > b ? a - b : 0;
}

bool other_work_between(const MachineTimes *a, const MachineTimes *b, uint64_t children_cpu_ns,
                        OtherWork *ret) {
        *ret = (OtherWork){};
        if (!a->valid || !b->valid || b->at_ns < a->at_ns)
                return false;
        uint64_t own = children_cpu_ns + minus(b->own_ns, a->own_ns);
        *ret = (OtherWork){ .cpu_ns = minus(minus(b->busy_ns, a->busy_ns), own),
                            .steal_ns = minus(b->steal_ns, a->steal_ns),
                            .elapsed_ns = b->at_ns - a->at_ns };
        return true;
}

bool other_work_within(const SpecQuiet *q, const OtherWork *w) {
        if (q->max_other_cpu < 0)
                return true;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        /* Each reading is rounded down to a tick, and each CPU's share of an interval may be
         * charged a tick more or less than it ran. */
        double slack = (double) tick_ns() * (double) ((cpus > 0 ? cpus : 1) + 2);
        return (double) (w->cpu_ns + w->steal_ns) <= q->max_other_cpu * (double) w->elapsed_ns + slack;
}

/* Other work over the next 100 ms (no child of the run's runs in it): its CPUs into
 * ret->other_cpu, and whether it is within the limit. */
static bool other_work_now(const SpecQuiet *q, QuietReading *ret) {
        MachineTimes a, b;
        OtherWork w;
        machine_times_read(&a);
        nanosleep(&(struct timespec){ .tv_nsec = WINDOW_NS }, NULL);
        machine_times_read(&b);
        if (!other_work_between(&a, &b, 0, &w) || w.elapsed_ns == 0)
                return true; /* an unreadable figure never fails a limit */
        ret->other_cpu = (double) (w.cpu_ns + w.steal_ns) / (double) w.elapsed_ns;
        return other_work_within(q, &w);
}

static void quiet_read(QuietReading *ret) {
        *ret = (QuietReading){ NAN, NAN, NAN };
        FILE *f = fopen("/proc/pressure/cpu", "re");
        if (f) {
                double v;
                if (fscanf(f, "some avg10=%lf", &v) == 1)
                        ret->cpu_some_avg10 = v;
                fclose(f);
        }
        f = fopen("/proc/loadavg", "re");
        if (f) {
                double v;
                if (fscanf(f, "%lf", &v) == 1)
                        ret->load1 = v;
                fclose(f);
        }
}

static bool pressure_within(const SpecQuiet *q, const QuietReading *r) {
        if (q->max_cpu_some_avg10 >= 0 && !isnan(r->cpu_some_avg10) &&
            r->cpu_some_avg10 > q->max_cpu_some_avg10)
                return false;
        if (q->max_load1 >= 0 && !isnan(r->load1) && r->load1 > q->max_load1)
                return false;
        return true;
}

bool quiet_wait(const SpecQuiet *q, QuietReading *ret, uint64_t *ret_waited_ns) {
        uint64_t start = now_ns();
        /* A guard that never waits judges other work while the sample runs, not before it. */
        bool window = q->max_other_cpu >= 0 && (q->max_wait_ns > 0 || q->skip_busy);
        for (;;) {
                quiet_read(ret);
                bool within = window ? other_work_now(q, ret) : true;
                uint64_t waited = now_ns() - start;
                *ret_waited_ns = waited;
                if (within && pressure_within(q, ret))
                        return true;
                if (waited >= q->max_wait_ns)
                        return false;
                if (!window)
                        nanosleep(&(struct timespec){ .tv_nsec = WINDOW_NS }, NULL);
        }
}
