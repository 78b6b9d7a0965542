/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/hook.h"
#include "runner/output.h"
#include "runner/spawn.h"
#include "util/cleanup.h"
#include "util/strv.h"

/* How a hook ended, when not with 0: its tree's memory limit, the timeout, or as any child. */
static const char *describe_end(const SpawnResult *r, const Plan *p, char *buf, size_t size) {
        if (r->oom_killed)
                snprintf(buf, size, "its tree reached memory_max");
        else if (r->end == SPAWN_TIMEOUT)
                snprintf(buf, size, "still running after the timeout (%.3g s)",
                         (double) p->spec->timeout_ns / 1e9);
        else
                spawn_describe_end(r, buf, size);
        return buf;
}

int hook_run(const Plan *p, const PlanJob *job, SpecHook h, int cancel_fd, char **ret_why,
             char **ret_output) {
        const PlanHook *hook = &job->hooks[h];
        /* The job's environment without the preload: borrowed strings, a vector of its own. */
        size_t n = strv_length(job->envp);
        _cleanup_free_ char **envp = calloc(n + 1, sizeof(char *));
        if (!envp)
                return -ENOMEM;
        for (size_t i = 0, k = 0; i < n; i++)
                if (strncmp(job->envp[i], "LD_PRELOAD=", 11) != 0)
                        envp[k++] = job->envp[i];
        /* Everything it prints goes to one file, shown when it fails. */
        _cleanup_close_ int output = output_memfd("alloclab-hook");
        if (output < 0)
                return output;
        SpawnRequest req = {
                .exe = hook->exe,
                .argv = hook->argv,
                .envp = envp,
                .cwd = job->cwd,
                .timeout_ns = p->spec->timeout_ns,
                .stdout_fd = output,
                .stderr_fd = output,
                .metrics_fd = output,
                .probe_fd = -1,
                .cancel_fd = cancel_fd,
                .cpus = p->cpus.pinned ? &p->cpus.child : NULL,
                .runner_cpus = p->cpus.pinned ? &p->cpus.runner : NULL,
                .cgroup = p->cgroup,
                .cgroup_required = p->spec->memory_max || p->spec->pids_max,
        };
        SpawnResult res;
        int r = spawn_run(&req, &res);
        cgroup_children_empty(p->cgroup); /* a daemon it left must not run into the next child */
        if (r < 0)
                return r;
        if (res.end == SPAWN_CANCELED)
                return -ECANCELED;
        if (res.end == SPAWN_EXITED && res.exit_code == 0 && !res.oom_killed)
                return 0;
        /* Named as the spec wrote it: the script of a string hook, else its program. */
        bool script = strv_length(hook->argv) == 3 && strcmp(hook->argv[0], "/bin/sh") == 0 &&
                      strcmp(hook->argv[1], "-c") == 0;
        char end[160];
        if (asprintf(ret_why, "%s '%s' failed: %s", spec_hook_to_string(h), hook->argv[script ? 2 : 0],
                     describe_end(&res, p, end, sizeof(end))) < 0)
                return -ENOMEM;
        *ret_output = output_excerpt(output);
        return 1;
}
