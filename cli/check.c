/* SPDX-License-Identifier: MIT */
/*
 * What `alloclab check` checks of a loaded spec on this machine (submit asks the same first): the
 * plan (files found, not identified), settings of another allocator, and options an allocator
 * would ignore or reject, each said at its place in the spec.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/check.h"
#include "cli/cli.h"
#include "db/session.h"
#include "runner/options.h"
#include "util/cleanup.h"
#include "util/paths.h"

extern char **environ;

/* A problem with variant v's allocator options, at the spec's line of variable (else of the
 * variant's env, else its preload), as a spec's problems are given: "FILE:LINE:COL: variant V:
 * ...". A variable the spec does not set but alloclab's environment does is said to come from
 * there. */
static void say_option_problem(const char *command, const Spec *spec, size_t v, const char *variable,
                               const char *what, const char *message) {
        const SpecVariant *sv = &spec->variants[v];
        SpecPosition at = spec_env_var_at(spec, v, variable);
        bool inherited = at.line == 0 && getenv(variable);
        if (at.line == 0)
                at = sv->env_at.line ? sv->env_at : sv->preload_at;
        cli_say_at(command, spec, at, "variant %s: %s%s%s%s%s", sv->name, what, message,
                   inherited ? " (" : "", inherited ? variable : "",
                   inherited ? " is set in alloclab's environment)" : "");
}

int cli_plan_for_check(const Spec *spec, Plan **ret, char **ret_message) {
        _cleanup_free_ char *probe = paths_probe();
        return session_check(spec,
                             &(PlanOptions){ .caller_env = environ, .probe_path = probe, .build = true },
                             ret, ret_message);
}

int cli_check_plan(const char *command, const Spec *spec, Plan **ret) {
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *message = NULL;
        int r = cli_plan_for_check(spec, &plan, &message);
        if (r < 0) {
                cli_plan_error(command, spec, message ? message : strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        if ((r = cli_check_options(command, plan)) != EXIT_OK)
                return r;
        *ret = TAKE_PTR(plan);
        return EXIT_OK;
}

int cli_check_options(const char *command, const Plan *plan) {
        const Spec *spec = plan->spec;
        cli_warn_foreign_settings(command, plan);
        /* What run would reject at the smoke run, as far as the allocators tell: every variant. */
        size_t rejected = 0;
        int r;
        for (size_t v = 0; v < plan->n_variants; v++) {
                _cleanup_free_ char *unknown = NULL, *variable = NULL;
                r = options_unknown(&plan->allocators[v], plan_job(plan, 0, v)->envp, &unknown, &variable);
                if (r < 0) {
                        cli_error(command, "%s", strerror(-r));
                        return EXIT_ENVIRONMENT;
                }
                if (r > 0) {
                        say_option_problem(command, spec, v, variable, "", unknown);
                        rejected++;
                }
                _cleanup_free_ char *complaint =
                        plan->allocators[v].path ? options_rejected(plan_job(plan, 0, v)->envp) : NULL;
                if (complaint) {
                        say_option_problem(command, spec, v, "MALLOC_CONF",
                                           "the allocator rejects its configuration: ", complaint);
                        rejected++;
                }
        }
        return rejected > 0 ? EXIT_ENVIRONMENT : EXIT_OK;
}
