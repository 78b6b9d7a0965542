/* SPDX-License-Identifier: MIT */
/*
 * Plan expansion: cells in mixed-radix order, per-job argv/env/cwd with parameters substituted,
 * smoke steps first with the reference leading, and the three orders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "configs/spec.h"
#include "runner/env.h"
#include "runner/plan.h"
#include "util/cleanup.h"
#include "util/rng.h"

static Spec *load(const char *yaml) {
        Diagnostics d = {};
        Spec *s = NULL;
        int r = spec_load_buffer("p.yaml", yaml, strlen(yaml), &d, &s);
        if (r < 0)
                fail_msg("spec did not load: %s", d.n_items ? d.items[0].message : "?");
        diag_clear(&d);
        return s;
}

static char *caller_env[] = { (char *) "PATH=/usr/bin:/bin", (char *) "HOME=/home/u", NULL };

static Plan *make_plan(const Spec *s, uint64_t seed) {
        Plan *p = NULL;
        _cleanup_free_ char *msg = NULL;
        int r = plan_new(s, &(PlanOptions){ .caller_env = caller_env, .seed = seed }, &p, &msg);
        if (r < 0)
                fail_msg("plan_new: %d %s", r, msg ? msg : "");
        return p;
}

static const char matrix_spec[] = "experiment: m\n"
                                  "command: [echo, \"{a}-{b}\", \"{{literal}}\"]\n"
                                  "cwd: /tmp\n"
                                  "params: {a: [x, y], b: [1, 2, 3]}\n"
                                  "env: {SIZE: \"{b}\"}\n"
                                  "allocators:\n"
                                  "  one: {}\n"
                                  "  two: {env: {TAG: \"{a}{b}\"}}\n"
                                  "  three: {command: [/bin/echo, \"{a}\"]}\n"
                                  "reference: two\n"
                                  "samples: 3\nwarmup: 1\nprobe: never\n";

/* A value that would drive a terminal (an escape sequence) or reorder what is shown (a
 * right-to-left override) is escaped in the cell's label; the child still gets it as written. */
static void test_label_escapes_controls(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load("experiment: t\ncommand: [echo, \"{v}\"]\n"
                                             "params: {v: [\"\\e[2Jred\", \"a\\u202Eb\", \"c\\\\d\\tt\"]}\n"
                                             "allocators: {glibc: {}}\nprobe: never\n");
        _cleanup_(plan_freep) Plan *p = make_plan(s, 1);
        static const char *const labels[] = { "v=\\x1b[2Jred", "v=a\\u{202e}b", "v=c\\\\d\\x09t" };
        for (size_t c = 0; c < 3; c++) {
                _cleanup_free_ char *l = plan_cell_label(p, c);
                assert_string_equal(l, labels[c]);
        }
        assert_string_equal(plan_job(p, 0, 0)->argv[1], "\x1b[2Jred");
}

static void test_cells_and_jobs(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load(matrix_spec);
        _cleanup_(plan_freep) Plan *p = make_plan(s, 1);
        assert_int_equal(p->n_cells, 6);
        assert_int_equal(p->n_variants, 3);
        static const char *const labels[] = { "a=x b=1", "a=x b=2", "a=x b=3",
                                              "a=y b=1", "a=y b=2", "a=y b=3" };
        for (size_t c = 0; c < 6; c++) {
                _cleanup_free_ char *l = plan_cell_label(p, c);
                assert_string_equal(l, labels[c]);
        }
        const PlanJob *j = plan_job(p, 4, 1); /* a=y b=2, variant two */
        assert_string_equal(j->exe, "/usr/bin/echo");
        assert_string_equal(j->argv[1], "y-2");
        assert_string_equal(j->argv[2], "{literal}");
        assert_null(j->argv[3]);
        assert_string_equal(j->cwd, "/tmp");
        assert_string_equal(env_get(j->envp, "SIZE"), "2");
        assert_string_equal(env_get(j->envp, "TAG"), "y2");
        assert_null(env_get(j->envp, "LD_PRELOAD"));
        j = plan_job(p, 3, 2);
        assert_string_equal(j->exe, "/bin/echo");
        assert_string_equal(j->argv[1], "y");
}

/* Steps of one cell as a compact string: "S1 S0 S2 | W0 W1 W2 | ..." (phase letter + variant). */
static void cell_steps(const Plan *p, uint32_t cell, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        for (size_t i = 0; i < p->n_steps; i++) {
                const PlanStep *st = &p->steps[i];
                if (st->cell != cell)
                        continue;
                const char letter = st->phase == PHASE_SMOKE ? 'S' : st->phase == PHASE_WARMUP ? 'W' : 'T';
                n += (size_t) snprintf(buf + n, size - n, "%s%c%u", n ? " " : "", letter, st->variant);
        }
}

static void test_interleaved(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load(matrix_spec);
        _cleanup_(plan_freep) Plan *p = make_plan(s, 1);
        assert_int_equal(p->n_steps, 6 * 3 * (1 + 1 + 3));
        char buf[512];
        cell_steps(p, 0, buf, sizeof(buf));
        assert_string_equal(buf, "S1 S0 S2 W0 W1 W2 T0 T1 T2 T0 T1 T2 T0 T1 T2");
        /* Steps are grouped by cell, in cell order. */
        for (size_t i = 1; i < p->n_steps; i++)
                assert_true(p->steps[i - 1].cell <= p->steps[i].cell);
}

static void test_blocked(void **state) {
        (void) state;
        _cleanup_free_ char *yaml = NULL;
        assert_true(asprintf(&yaml, "%sorder: blocked\n", matrix_spec) > 0);
        _cleanup_(spec_freep) Spec *s = load(yaml);
        _cleanup_(plan_freep) Plan *p = make_plan(s, 1);
        char buf[512];
        cell_steps(p, 5, buf, sizeof(buf));
        assert_string_equal(buf, "S1 S0 S2 W0 T0 T0 T0 W1 T1 T1 T1 W2 T2 T2 T2");
}

static void test_randomized(void **state) {
        (void) state;
        _cleanup_free_ char *yaml = NULL;
        assert_true(asprintf(&yaml, "%sorder: randomized\n", matrix_spec) > 0);
        _cleanup_(spec_freep) Spec *s = load(yaml);
        _cleanup_(plan_freep) Plan *a = make_plan(s, 12345);
        _cleanup_(plan_freep) Plan *b = make_plan(s, 12345);
        _cleanup_(plan_freep) Plan *c = make_plan(s, 999);

        /* Same seed, same order; every round is a permutation of the variants. */
        assert_int_equal(a->n_steps, b->n_steps);
        assert_memory_equal(a->steps, b->steps, a->n_steps * sizeof(PlanStep));
        bool differs = false;
        for (size_t i = 0; i < a->n_steps; i++)
                differs |= a->steps[i].variant != c->steps[i].variant;
        assert_true(differs);
        for (size_t i = 0; i < a->n_steps;) {
                const PlanStep *st = &a->steps[i];
                if (st->phase == PHASE_SMOKE) {
                        i++;
                        continue;
                }
                unsigned seen = 0;
                for (size_t k = 0; k < 3; k++) {
                        assert_int_equal(a->steps[i + k].round, st->round);
                        assert_int_equal(a->steps[i + k].phase, st->phase);
                        seen |= 1u << a->steps[i + k].variant;
                }
                assert_int_equal(seen, 7);
                i += 3;
        }
}

static void test_missing_command(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load(
                "experiment: t\ncommand: [no-such-program-xyz]\nallocators: {glibc: {}}\nprobe: never\n");
        Plan *p = NULL;
        _cleanup_free_ char *msg = NULL;
        assert_int_equal(plan_new(s, &(PlanOptions){ .caller_env = caller_env, .seed = 1 }, &p, &msg),
                         -ENOENT);
        assert_null(p);
        assert_string_equal(msg, "p.yaml:2:10: cannot run 'no-such-program-xyz': No such file or directory");
}

/* A check prepares a variant's later cells only where the matrix changes its job: a program
 * named by a parameter is still looked for in every cell. */
static void test_check_only_cells(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load("experiment: t\ncommand: [/bin/true]\n"
                                             "params: {n: [/bin/true, no-such-program-xyz]}\n"
                                             "allocators: {glibc: {}, other: {command: [\"{n}\"]}}\n"
                                             "probe: never\n");
        Plan *p = NULL;
        _cleanup_free_ char *msg = NULL;
        assert_int_equal(
                plan_new(s, &(PlanOptions){ .caller_env = caller_env, .check_only = true }, &p, &msg),
                -ENOENT);
        assert_string_equal(
                msg,
                "p.yaml:4:42: variant other: cannot run 'no-such-program-xyz': No such file or directory");

        _cleanup_(spec_freep) Spec *fixed = load("experiment: t\ncommand: [/bin/true, \"{n}\"]\n"
                                                 "params: {n: [\"1\", \"2\"]}\n"
                                                 "allocators: {glibc: {}, other: {command: [/bin/false]}}\n"
                                                 "probe: never\n");
        _cleanup_(plan_freep) Plan *q = NULL;
        assert_int_equal(
                plan_new(fixed, &(PlanOptions){ .caller_env = caller_env, .check_only = true }, &q, NULL),
                0);
        assert_string_equal(plan_job(q, 1, 0)->argv[1], "2"); /* glibc's command names {n} */
        assert_string_equal(plan_job(q, 0, 1)->exe, "/bin/false");
        assert_null(plan_job(q, 1, 1)->argv); /* other's second cell: the same job as its first */

        /* With a memo, a second plan of the same spec answers its lookups from the first's. */
        Memo memo = {};
        PlanOptions with_memo = { .caller_env = caller_env, .check_only = true, .memo = &memo };
        _cleanup_(plan_freep) Plan *first = NULL, *second = NULL;
        assert_int_equal(plan_new(fixed, &with_memo, &first, NULL), 0);
        size_t n = memo.n;
        assert_true(n >= 2); /* /bin/true and /bin/false */
        assert_int_equal(plan_new(fixed, &with_memo, &second, NULL), 0);
        assert_int_equal(memo.n, n);
        assert_string_equal(plan_job(second, 0, 1)->exe, "/bin/false");
        memo_clear(&memo);
}

static void test_missing_preload(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load(
                "experiment: t\ncommand: [/bin/true]\nallocators: {x: {preload: /nonexistent/liba.so}}\n"
                "probe: never\n");
        Plan *p = NULL;
        _cleanup_free_ char *msg = NULL;
        assert_int_equal(plan_new(s, &(PlanOptions){ .caller_env = caller_env, .seed = 1 }, &p, &msg),
                         -ENOENT);
        assert_string_equal(
                msg,
                "p.yaml:3:27: variant x: cannot preload /nonexistent/liba.so: No such file or directory");
}

/* A matrix that names a missing program in every cell lists the first ten, then says so. */
static void test_problems_capped(void **state) {
        (void) state;
        _cleanup_(spec_freep) Spec *s = load("experiment: t\ncommand: [\"no-such-{n}\"]\n"
                                             "params: {n: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}\n"
                                             "allocators: {glibc: {}, other: {}}\nprobe: never\n");
        Plan *p = NULL;
        _cleanup_free_ char *msg = NULL;
        assert_int_equal(
                plan_new(s, &(PlanOptions){ .caller_env = caller_env, .check_only = true }, &p, &msg),
                -ENOENT);
        assert_null(p);
        char expected[2048] = "";
        for (int i = 1; i <= 10; i++)
                snprintf(expected + strlen(expected), sizeof(expected) - strlen(expected),
                         "p.yaml:2:10: cannot run 'no-such-%d': No such file or directory\n", i);
        strcat(expected, "(more problems not shown: fix these and check again)");
        assert_string_equal(msg, expected);
}

static void test_random_is_deterministic(void **state) {
        (void) state;
        uint64_t s1 = 7, s2 = 7;
        for (int i = 0; i < 100; i++)
                assert_int_equal(rng_next(&s1), rng_next(&s2));
        uint64_t s = 0;
        assert_int_equal(rng_next(&s), 0xe220a8397b1dcdafULL); /* splitmix64 reference value */
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cells_and_jobs),  cmocka_unit_test(test_label_escapes_controls),
                cmocka_unit_test(test_interleaved),     cmocka_unit_test(test_blocked),
                cmocka_unit_test(test_randomized),      cmocka_unit_test(test_missing_command),
                cmocka_unit_test(test_problems_capped), cmocka_unit_test(test_check_only_cells),
                cmocka_unit_test(test_missing_preload), cmocka_unit_test(test_random_is_deterministic),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
