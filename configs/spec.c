/* SPDX-License-Identifier: MIT */
/*
 * The Spec model: ownership and small queries. Loading lives in spec-load.c so that consumers
 * of the model (runner, db) never see YAML.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "configs/spec.h"
#include "util/cleanup.h"
#include "util/strv.h"

/* The position of name in env, whose variables were written at env_at: line 0 if not there. */
static SpecPosition env_var_at(char *const *env, const SpecPosition *env_at, const char *name) {
        size_t n = strlen(name);
        for (size_t i = 0; env && env_at && env[i]; i++)
                if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
                        return env_at[i];
        return (SpecPosition){};
}

SpecPosition spec_env_var_at(const Spec *s, size_t v, const char *name) {
        SpecPosition at = env_var_at(s->variants[v].env, s->variants[v].env_var_at, name);
        return at.line ? at : env_var_at(s->env, s->env_var_at, name);
}

Spec *spec_free(Spec *s) {
        if (!s)
                return NULL;
        free(s->path);
        free(s->source);
        free(s->experiment);
        free(s->description);
        strv_free(s->command);
        strv_free(s->calibrate_command);
        strv_free(s->preload_ignore);
        free(s->cwd);
        for (size_t i = 0; i < _SPEC_HOOK_MAX; i++)
                strv_free(s->hooks[i]);
        free(s->stdin_path);
        for (size_t i = 0; i < s->n_params; i++) {
                free(s->params[i].name);
                strv_free(s->params[i].values);
        }
        free(s->params);
        free(s->cpu_list);
        strv_free(s->env);
        free(s->env_var_at);
        for (size_t i = 0; i < s->n_metric_defs; i++) {
                free(s->metric_defs[i].name);
                free(s->metric_defs[i].pattern);
                free(s->metric_defs[i].unit);
        }
        free(s->metric_defs);
        strv_free(s->verify_ignore);
        for (size_t i = 0; i < s->n_variants; i++) {
                free(s->variants[i].name);
                free(s->variants[i].preload);
                strv_free(s->variants[i].env);
                free(s->variants[i].env_var_at);
                strv_free(s->variants[i].command);
                free(s->variants[i].cwd);
                free(s->variants[i].forward_library);
                free(s->variants[i].forward_prefix);
                spec_build_done(&s->variants[i].build);
        }
        free(s->variants);
        free(s->verify_path);
        free(s->metric_name);
        free(s->schedule_text);
        free(s);
        return NULL;
}

void spec_build_done(SpecBuild *b) {
        free(b->source);
        free(b->rev);
        free(b->family);
        strv_free(b->commands);
        free(b->output);
        *b = (SpecBuild){};
}

int spec_build_copy(const SpecBuild *b, SpecBuild *ret) {
        *ret = (SpecBuild){ .at = b->at, .source_at = b->source_at, .rev_at = b->rev_at };
        if ((b->source && !(ret->source = strdup(b->source))) || (b->rev && !(ret->rev = strdup(b->rev))) ||
            (b->family && !(ret->family = strdup(b->family))) ||
            (b->commands && !(ret->commands = strv_copy(b->commands))) ||
            (b->output && !(ret->output = strdup(b->output)))) {
                spec_build_done(ret);
                return -ENOMEM;
        }
        return 0;
}

bool spec_builds(const Spec *s) {
        for (size_t v = 0; v < s->n_variants; v++)
                if (s->variants[v].build.source)
                        return true;
        return false;
}

size_t spec_n_cells(const Spec *s) {
        size_t n = 1;
        for (size_t i = 0; i < s->n_params; i++)
                n *= s->params[i].n_values;
        return n;
}

#define NAME_TABLE(fn, type, ...)                                                                           \
        const char *fn(type v) {                                                                            \
                static const char *const names[] = { __VA_ARGS__ };                                         \
                return (unsigned) v < ELEMENTSOF(names) ? names[v] : "?";                                   \
        }

NAME_TABLE(spec_hook_to_string, SpecHook, "setup", "prepare", "cleanup")
NAME_TABLE(spec_order_to_string, SpecOrder, "interleaved", "randomized", "blocked")
NAME_TABLE(spec_verify_to_string, SpecVerify, "stdout", "none", "file")
NAME_TABLE(spec_metric_to_string, SpecMetric, "wall", "user", "sys", "maxrss", "page_faults",
           "context_switches", "cpu_migrations", "cycles", "instructions", "dtlb_load_misses",
           "cache_misses", "reported")
NAME_TABLE(spec_on_failure_to_string, SpecOnFailure, "continue", "stop")
NAME_TABLE(spec_probe_to_string, SpecProbe, "smoke", "always", "never", "counters")
NAME_TABLE(spec_outliers_to_string, SpecOutliers, "flag", "exclude")
NAME_TABLE(spec_correction_to_string, SpecCorrection, "holm", "bh", "none")

bool spec_timeline_figure(const char *name) {
        size_t len = strlen(name);
        return len > 10 && strncmp(name, "mem_", 4) == 0 && strcmp(name + len - 6, "_bytes") == 0;
}

bool spec_probe_figure(const char *name) {
        size_t len = strlen(name);
        return strcmp(name, "exit_rss_bytes") == 0 || strcmp(name, "exit_pss_anon_bytes") == 0 ||
               strcmp(name, "exit_anon_huge_bytes") == 0 ||
               (len > 12 && strncmp(name, "alloc_", 6) == 0 && strcmp(name + len - 6, "_bytes") == 0);
}

const SpecMetricDef *spec_metric_def(const Spec *s, const char *name) {
        for (size_t i = 0; name && i < s->n_metric_defs; i++)
                if (strcmp(s->metric_defs[i].name, name) == 0)
                        return &s->metric_defs[i];
        return NULL;
}
