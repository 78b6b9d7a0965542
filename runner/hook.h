/* SPDX-License-Identifier: MIT */
#pragma once

#include "configs/spec.h"
#include "runner/plan.h"

/*
 * The spec's hooks (setup, prepare, cleanup): commands run around the measured children, never
 * inside a clock. A hook runs as a child of the run does (the job's cwd and environment, the
 * run's cgroup and timeout, stdin from /dev/null) but without the preload and the probe: it
 * prepares the experiment and is not part of what is measured.
 */

/*
 * Runs job's hook h to its end. cancel_fd (or -1) stops it when readable. Returns 0 when it
 * exited 0; 1 when it failed, with *ret_why ("setup 'prog' failed: exit code 1") and
 * *ret_output (the first bytes of what it printed, or NULL) for the caller to free; -ECANCELED;
 * -errno when this process failed.
 */
int hook_run(const Plan *p, const PlanJob *job, SpecHook h, int cancel_fd, char **ret_why,
             char **ret_output);
