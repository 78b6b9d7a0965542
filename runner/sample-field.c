/* SPDX-License-Identifier: MIT */
#include "runner/sample-field.h"

static bool exited(const Sample *s) {
        return s->spawn.end == SPAWN_EXITED;
}

static bool signaled(const Sample *s) {
        return s->spawn.end == SPAWN_SIGNALED;
}

static bool exec_failed(const Sample *s) {
        return s->spawn.end == SPAWN_EXEC_FAILED;
}

/* An output past the limit is not hashed, but its size is what the user needs to see. */
static bool output_sized(const Sample *s) {
        return s->output.hex[0] || s->status == SAMPLE_OUTPUT_LIMIT;
}

static bool mismatched(const Sample *s) {
        return s->status == SAMPLE_MISMATCH;
}

static bool quiet_checked(const Sample *s) {
        return s->quiet_checked;
}

static bool in_cgroup(const Sample *s) {
        return s->spawn.in_cgroup;
}

static bool measured_here(const Sample *s) {
        return !s->imported;
}

static bool env_offset_set(const Sample *s) {
        return s->env_offset >= 0;
}

static bool other_work_read(const Sample *s) {
        return s->other_work_read;
}

static bool counters_scaled(const Sample *s) {
        return s->spawn.counters.scaled != 0;
}

/* A counter's column is NULL where it could not be counted (runner/counters.h). */
#define COUNTED_(id, ...)                                                                                   \
        static bool counted_##id(const Sample *s) {                                                         \
                return counter_have(&s->spawn.counters, COUNTER_##id);                                      \
        }
COUNTERS(COUNTED_)

#define AT(member) offsetof(Sample, member)
#define COUNTER_FIELD_(id, name, ...)                                                                       \
        { name, SAMPLE_FIELD_U64, AT(spawn.counters.value[COUNTER_##id]), counted_##id, true },

/* Exported columns keep their order (users' scripts read exports by position); new ones are
 * appended after the last exported row. */
const SampleField sample_fields[] = {
        { "status", SAMPLE_FIELD_STATUS, AT(status), NULL, true },
        { NULL, SAMPLE_FIELD_END, AT(spawn.end), NULL, false },
        { "exit_code", SAMPLE_FIELD_INT, AT(spawn.exit_code), exited, true },
        { "signal", SAMPLE_FIELD_INT, AT(spawn.signal), signaled, true },
        { "exec_errno", SAMPLE_FIELD_INT, AT(spawn.exec_errno), exec_failed, false },
        { "wall_ns", SAMPLE_FIELD_U64, AT(spawn.wall_ns), NULL, true },
        { "user_us", SAMPLE_FIELD_USEC, AT(spawn.usage.ru_utime), NULL, true },
        { "sys_us", SAMPLE_FIELD_USEC, AT(spawn.usage.ru_stime), NULL, true },
        { "maxrss_kib", SAMPLE_FIELD_LONG, AT(spawn.usage.ru_maxrss), NULL, true },
        { "minflt", SAMPLE_FIELD_LONG, AT(spawn.usage.ru_minflt), NULL, true },
        { "majflt", SAMPLE_FIELD_LONG, AT(spawn.usage.ru_majflt), NULL, true },
        { "nvcsw", SAMPLE_FIELD_LONG, AT(spawn.usage.ru_nvcsw), NULL, true },
        { "nivcsw", SAMPLE_FIELD_LONG, AT(spawn.usage.ru_nivcsw), NULL, true },
        { "verified", SAMPLE_FIELD_BOOL, AT(verified), NULL, true },
        { "output_size", SAMPLE_FIELD_U64, AT(output.size), output_sized, false },
        { "output_hash", SAMPLE_FIELD_DIGEST, AT(output), NULL, true },
        { "mismatch_offset", SAMPLE_FIELD_U64, AT(mismatch_offset), mismatched, false },
        { "reference_size", SAMPLE_FIELD_U64, AT(reference_size), mismatched, false },
        { "stderr_excerpt", SAMPLE_FIELD_TEXT, AT(stderr_excerpt), NULL, false },
        { "detail", SAMPLE_FIELD_TEXT, AT(detail), NULL, true },
        { "leftover", SAMPLE_FIELD_BOOL, AT(spawn.leftover), NULL, false },
        /* schemas 11, 13, 15 and 17 */
        { NULL, SAMPLE_FIELD_BOOL, AT(quiet_checked), NULL, false },
        { "noisy", SAMPLE_FIELD_BOOL, AT(noisy), quiet_checked, true },
        { "cpu_some_avg10", SAMPLE_FIELD_DOUBLE, AT(cpu_some_avg10), quiet_checked, true },
        { "load1", SAMPLE_FIELD_DOUBLE, AT(load1), quiet_checked, true },
        { "quiet_wait_ns", SAMPLE_FIELD_U64, AT(quiet_wait_ns), quiet_checked, false },
        { "leftover_processes", SAMPLE_FIELD_U32, AT(spawn.leftover_processes), in_cgroup, true },
        { "cpu_us", SAMPLE_FIELD_U64, AT(spawn.tree_cpu_us), measured_here, true },
        { "cpu_source", SAMPLE_FIELD_SOURCE, AT(spawn.in_cgroup), measured_here, true },
        { "peak_kib", SAMPLE_FIELD_U64, AT(spawn.tree_peak_kib), measured_here, true },
        { "memory_source", SAMPLE_FIELD_SOURCE, AT(spawn.peak_from_cgroup), measured_here, true },
        { "env_offset", SAMPLE_FIELD_I64, AT(env_offset), env_offset_set, true },
        /* schema 26 */
        { "other_cpu_ns", SAMPLE_FIELD_U64, AT(other_cpu_ns), other_work_read, true },
        { "steal_ns", SAMPLE_FIELD_U64, AT(steal_ns), other_work_read, true },
        { NULL, SAMPLE_FIELD_BOOL, AT(spawn.oom_killed), NULL, false },
        { NULL, SAMPLE_FIELD_BOOL, AT(spawn.pids_limited), NULL, false },
        { NULL, SAMPLE_FIELD_BOOL, AT(imported), NULL, false },
        /* schema 28: the kernel's event counters, in their order, last */
        { NULL, SAMPLE_FIELD_U32, AT(spawn.counters.have), NULL, false },
        { "counters_scaled", SAMPLE_FIELD_U32, AT(spawn.counters.scaled), counters_scaled, false },
        COUNTERS(COUNTER_FIELD_)
};

const size_t n_sample_fields = sizeof(sample_fields) / sizeof(sample_fields[0]);
