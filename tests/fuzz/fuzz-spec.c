/* SPDX-License-Identifier: MIT */
/*
 * The spec loader: a spec is a user's file, so any bytes may be there. Input: YAML. Every
 * failure must come with at least one `file:line:col` diagnostic; a spec that loads is
 * expanded into a plan, as `alloclab check` and `run` do.
 */
#include <errno.h>
#include <stdlib.h>

#include "configs/spec.h"
#include "runner/plan.h"
#include "tests/fuzz/fuzz.h"
#include "util/cleanup.h"

static char *caller_env[] = { (char *) "PATH=/usr/bin:/bin", NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Diagnostics d = {};
        _cleanup_(spec_freep) Spec *spec = NULL;
        int r = spec_load_buffer("fuzz.yaml", (const char *) data, size, &d, &spec);
        if (r < 0 && r != -ENOMEM && d.n_items == 0)
                abort(); /* a refusal the user could not act on */
        for (size_t i = 0; i < d.n_items; i++)
                free(diag_format(&d, i));
        diag_clear(&d);
        if (r < 0)
                return 0;
        _cleanup_(plan_freep) Plan *plan = NULL;
        _cleanup_free_ char *message = NULL;
        (void) plan_new(
                spec,
                &(PlanOptions){ .caller_env = caller_env, .seed = 1, .probe_path = "liballoclab-probe.so" },
                &plan, &message);
        return 0;
}
