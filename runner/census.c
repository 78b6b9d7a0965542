/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "configs/spec.h"
#include "runner/census.h"
#include "runner/options.h"
#include "runner/output.h"
#include "runner/plan.h"
#include "util/cleanup.h"
#include "util/strv.h"

/* The caller's environment without LD_PRELOAD, then the probe (first) and the allocator. */
static int census_env(char *const *caller_env, const char *probe, const char *allocator, char ***ret) {
        _cleanup_strv_free_ char **env = NULL;
        for (char *const *e = caller_env; *e; e++)
                if (strncmp(*e, "LD_PRELOAD=", 11) != 0 &&
                    strncmp(*e, PROBE_ENV_FD "=", strlen(PROBE_ENV_FD) + 1) != 0 &&
                    strv_append(&env, *e) < 0)
                        return -ENOMEM;
        _cleanup_free_ char *preload = NULL;
        char fd[16];
        snprintf(fd, sizeof(fd), "%d", PROBE_REPORT_FD);
        if (asprintf(&preload, "%s%s%s", probe, allocator ? ":" : "", allocator ? allocator : "") < 0 ||
            strv_env_set(&env, "LD_PRELOAD", preload) < 0 || strv_env_set(&env, PROBE_ENV_FD, fd) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(env);
        return 0;
}

int census_run(char *const *command, char *const *caller_env, const char *probe_path,
               const char *allocator_path, int cancel_fd, Census *ret) {
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_free_ char *exe = NULL;
        int r = census_env(caller_env, probe_path, allocator_path, &env);
        if (r >= 0)
                r = plan_resolve_exe(command[0], env, NULL, &exe);
        if (r < 0)
                return r;
        _cleanup_close_ int report_fd = probe_report_memfd(PROBE_REQUEST_SMOKE);
        _cleanup_close_ int metrics = output_memfd("alloclab-metrics");
        _cleanup_close_ int err = output_memfd("alloclab-census-stderr");
        if (report_fd < 0 || metrics < 0 || err < 0)
                return -ENOMEM;
        SpawnRequest req = {
                .exe = exe,
                .argv = command,
                .envp = env,
                .timeout_ns = SPEC_MAX_TIMEOUT_NS,
                .stdout_fd = STDERR_FILENO,
                .stderr_fd = err,
                .metrics_fd = metrics,
                .probe_fd = report_fd,
                .cancel_fd = cancel_fd,
        };
        *ret = (Census){};
        r = spawn_run(&req, &ret->spawn);
        if (r < 0)
                return r;
        /* All of it to the user, as the command printed it; the start read for a complaint. */
        char buf[65536];
        ssize_t n;
        for (off_t at = 0; (n = pread(err, buf, sizeof(buf), at)) > 0; at += n)
                if (write(STDERR_FILENO, buf, (size_t) n) < 0)
                        break;
        _cleanup_free_ char *said = output_excerpt_all(err);
        _cleanup_free_ char *complaint = options_complaint(said, env);
        snprintf(ret->complaint, sizeof(ret->complaint), "%s", complaint ? complaint : "");
        if (ret->spawn.end == SPAWN_EXEC_FAILED)
                return -ret->spawn.exec_errno;
        if (ret->spawn.end != SPAWN_CANCELED) {
                int q = probe_report_decode(report_fd, &ret->probe);
                if (q >= 0)
                        q = probe_report_stats(report_fd, &ret->probe, &ret->allocator_stats);
                ret->report_error = q < 0 ? q : 0;
        }
        return 0;
}

void census_done(Census *c) {
        free(c->allocator_stats);
        c->allocator_stats = NULL;
}
