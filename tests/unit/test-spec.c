/* SPDX-License-Identifier: MIT */
/*
 * Spec loader: a valid spec loads with every field as written, and a corpus of bad specs each
 * yields exactly the expected "FILE:LINE:COL: message" lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "configs/spec.h"
#include "configs/yamltree.h"
#include "util/cleanup.h"

#define HEAD "experiment: t\ncommand: [/bin/true]\nallocators: {glibc: {}}\n"

typedef struct BadSpec {
        const char *yaml;
        const char *expected; /* every diagnostic, joined with '\n' */
} BadSpec;

static const BadSpec bad_specs[] = {
        { HEAD "sample: 3\n", "t.yaml:4:1: unknown key 'sample' (did you mean 'samples'?)" },
        /* keys past the 31st of the table are suggested too (they were not) */
        { HEAD "aplha: 0.01\n", "t.yaml:4:1: unknown key 'aplha' (did you mean 'alpha'?)" },
        { HEAD "callgrind_thread: accept\n",
          "t.yaml:4:1: unknown key 'callgrind_thread' (did you mean 'callgrind_threads'?)" },
        { HEAD "frobnicate: 1\n", "t.yaml:4:1: unknown key 'frobnicate'" },
        /* it was accepted, and did nothing, beside any other metric */
        { HEAD "callgrind_threads: accept\n", "t.yaml:4:20: callgrind_threads: accept is for metric: "
                                              "instructions counted by callgrind; the metric "
                                              "here is wall" },
        { HEAD "metric: mem_peak_bytes\n", "t.yaml:4:9: metric mem_peak_bytes is read from the memory "
                                           "timeline: set memory_timeline: (e.g. '20ms')" },
        { HEAD "memory_timeline: 0.5ms\n",
          "t.yaml:4:18: memory_timeline '0.5ms' is out of range: from 1ms to 1min" },
        { HEAD "samples: [1]\n", "t.yaml:4:10: samples must be a scalar, got a list" },
        { HEAD "samples: 0\n", "t.yaml:4:10: samples must be between 1 and 10000, got 0" },
        { HEAD "samples: seven\n", "t.yaml:4:10: samples must be an integer from 1 to 10000, got 'seven'" },
        { HEAD "samples: 20000\n", "t.yaml:4:10: samples must be between 1 and 10000, got 20000" },
        { HEAD "warmup: 5000\n", "t.yaml:4:9: warmup must be between 0 and 1000, got 5000" },
        { "experiment: t\ncommand: [/bin/true]\nallocators:\n  je: {preload: jemaloc}\n",
          "t.yaml:4:17: unknown allocator 'jemaloc' (did you mean 'jemalloc'?) (known: glibc, jemalloc, "
          "mimalloc, tcmalloc, tcmalloc_minimal, tbbmalloc, scudo; or an absolute path)" },
        { "experiment: t\ncommand: [/bin/true]\nallocators:\n  x: {preload: lib/libfoo.so}\n",
          "t.yaml:4:16: preload path 'lib/libfoo.so' must be absolute" },
        { "experiment: t\ncommand: [echo, \"n={m}\"]\nparams: {n: [1]}\nallocators: {glibc: {}}\n",
          "t.yaml:2:21: undefined parameter '{m}'" },
        { "experiment: t\ncommand: [/bin/true]\nallocators: {glibc: {env: {X: \"{nope}\"}}}\n",
          "t.yaml:3:33: undefined parameter '{nope}'" },
        { HEAD "samples: 3\nsamples: 4\n", "t.yaml:5:1: duplicate key 'samples' (first defined at line 4)" },
        { "experiment: t\ncommand: [/bin/true]\nparams:\n  n: []\nallocators: {glibc: {}}\n",
          "t.yaml:4:6: parameter 'n' has no values: the matrix is empty" },
        { "experiment: t\nallocators: {glibc: {}}\n", "t.yaml:1:1: missing required key 'command'" },
        { "command: [/bin/true]\nallocators: {glibc: {}}\n",
          "t.yaml:1:1: missing required key 'experiment'" },
        { "experiment: t\ncommand: [/bin/true]\nallocators: {}\n",
          "t.yaml:3:13: allocators must name at least one variant" },
        { HEAD "baseline: jemalloc\n", "t.yaml:4:11: baseline 'jemalloc' is not one of the allocators" },
        { HEAD "reference: glib\n",
          "t.yaml:4:12: reference 'glib' is not one of the allocators (did you mean 'glibc'?)" },
        { HEAD "order: interleave\n",
          "t.yaml:4:8: unknown order 'interleave' (did you mean 'interleaved'?); expected one of: "
          "interleaved, randomized, blocked" },
        { HEAD "timeout: 5 parsecs\n",
          "t.yaml:4:10: timeout: cannot parse '5 parsecs' (expected e.g. '60s', '500ms', '2m')" },
        { HEAD "timeout: 100h\n", "t.yaml:4:10: timeout '100h' is out of range: from 1ms to 1d" },
        { HEAD "verify: stderr\n",
          "t.yaml:4:9: unknown verify 'stderr'; expected one of: stdout, none, file:PATH" },
        { HEAD "metric: 'reported:'\n", "t.yaml:4:9: metric 'reported:' needs a value after ':'" },
        { HEAD "env: {LD_PRELOAD: /x.so}\n", "t.yaml:4:7: set LD_PRELOAD with 'preload:', not in env" },
        { HEAD "env:\n  A: {b: c}\n", "t.yaml:5:6: environment value must be a scalar, got a mapping" },
        { HEAD "env: {1A: x}\n", "t.yaml:4:7: '1A' is not a valid environment variable name" },
        { "experiment: t\ncommand: []\nallocators: {glibc: {}}\n",
          "t.yaml:2:10: command must not be empty" },
        { "experiment: t\ncommand: [echo, \"{n\"]\nparams: {n: [1]}\nallocators: {glibc: {}}\n",
          "t.yaml:2:18: unclosed '{' (write '{{' for a literal brace)" },
        { "experiment: t\ncommand: \"echo }\"\nallocators: {glibc: {}}\n",
          "t.yaml:2:16: unmatched '}' (write '}}' for a literal brace)" },
        { "experiment: t\ncommand: [/bin/true\nallocators: {glibc: {}}\n",
          "t.yaml:3:11: YAML syntax error: did not find expected ',' or ']' while parsing a flow sequence" },
        { "- experiment: t\n", "t.yaml:1:1: spec must be a mapping, got a list" },
        { HEAD "description: \"a\xff\xfe\"\n", "t.yaml:4:16: invalid UTF-8 (invalid leading UTF-8 octet)" },
        { "", "t.yaml:1:1: spec is empty" },
        { HEAD "description: [[[[[[[[[[[[[[[[[[x]]]]]]]]]]]]]]]]]]\n",
          "t.yaml:4:29: nesting deeper than 16 levels" },
        { "experiment: t\ncommand: [/bin/true]\nallocators: {\"bad name\": {}}\n",
          "t.yaml:3:14: variant name 'bad name' must be 1-64 letters, digits, '_', '-' or '.'" },
        { "experiment: t\ncommand: [/bin/true]\nparams: {1n: [1]}\nallocators: {glibc: {}}\n",
          "t.yaml:3:10: parameter name '1n' must be an identifier" },
        { HEAD "---\nexperiment: u\n", "t.yaml:4:1: only one YAML document is allowed" },
        { "experiment: t\ncommand: [/bin/true]\nallocators:\n  je: {prelaod: jemalloc}\n",
          "t.yaml:4:8: unknown key 'prelaod' (did you mean 'preload'?)" },
        { "experiment: t\ncommand: [/bin/true]\nparams: {n: [1, 2, 1]}\nallocators: {glibc: {}}\n",
          "t.yaml:3:20: duplicate value '1' for parameter 'n'" },
        { "experiment: my experiment\ncommand: [/bin/true]\nallocators: {glibc: {}}\n",
          "t.yaml:1:13: experiment name 'my experiment' must be 1-64 letters, digits, '_', '-' or '.'" },
        { HEAD "output_limit: lots\n",
          "t.yaml:4:15: output_limit: cannot parse 'lots' (expected e.g. '64MiB', '4096')" },
        { HEAD "description: *nope\n", "t.yaml:4:14: unknown alias '*nope'" },
        { HEAD "schedule: \"0 61 * * *\"\n", "t.yaml:4:14: schedule: hour field: 61 is outside 0-23" },
        { HEAD "schedule: {every: 2x}\n",
          "t.yaml:4:19: every: cannot parse '2x' (expected e.g. '6h', '30m', '90s')" },
        { HEAD "schedule: {at: 3}\n", "t.yaml:4:11: schedule mapping must be {every: DURATION}" },
        { HEAD "metric: cycle\n",
          "t.yaml:4:9: unknown metric 'cycle' (did you mean 'cycles'?); expected one of: wall, user, sys, "
          "maxrss, page_faults, context_switches, cpu_migrations, cycles, instructions, dtlb_load_misses, "
          "cache_misses, reported:NAME" },
        { "experiment: t\ncommand: [/bin/true]\nallocators:\n  je: {preload: jemaloc}\nsamples: -1\norder: "
          "random\n",
          "t.yaml:4:17: unknown allocator 'jemaloc' (did you mean 'jemalloc'?) (known: glibc, jemalloc, "
          "mimalloc, tcmalloc, tcmalloc_minimal, tbbmalloc, scudo; or an absolute path)\n"
          "t.yaml:5:10: samples must be an integer from 1 to 10000, got '-1'\n"
          "t.yaml:6:8: unknown order 'random'; expected one of: interleaved, randomized, blocked" },
#define BUILD_VARIANT "experiment: t\ncommand: [/bin/true]\nallocators:\n  dev: {build: "
        { BUILD_VARIANT "{rev: v1}}\n", "t.yaml:4:16: missing required key 'source'" },
        { BUILD_VARIANT "{source: ., rev: --upload-pack=x}}\n",
          "t.yaml:4:33: rev '--upload-pack=x' must be a commit, tag or branch: one word, not starting with "
          "'-'" },
        { BUILD_VARIANT "{source: ., family: glibc}}\n", "t.yaml:4:36: family 'glibc' has no build defaults "
                                                         "in alloclab (known: jemalloc, mimalloc, tcmalloc, "
                                                         "tcmalloc_minimal)" },
        { BUILD_VARIANT "{source: ., output: ../libx.so}}\n",
          "t.yaml:4:36: output '../libx.so' must be a path inside the built tree, relative to it" },
        { BUILD_VARIANT "{source: ., commands: [make, \"  \"]}}\n",
          "t.yaml:4:45: a build command line must not be empty" },
        { BUILD_VARIANT "{source: .}, preload: jemalloc}\n",
          "t.yaml:4:3: variant 'dev': build makes the allocator, and preload names one: keep one" },
        { BUILD_VARIANT "{source: ., revision: v1}}\n", "t.yaml:4:28: unknown key 'revision'" },
        { "experiment: t\ncommand: [/bin/true]\nallocators:\n  fw: {forward: {prefix: je_}}\n",
          "t.yaml:4:3: variant 'fw': forward needs the library to forward to (library:, or a build: that "
          "makes it)" },
};

/* Loads yaml as "t.yaml"; returns the joined diagnostics (empty string when it loaded). */
static char *load_diagnostics(const char *yaml, size_t size) {
        Diagnostics d = {};
        Spec *s = NULL;
        int r = spec_load_buffer("t.yaml", yaml, size, &d, &s);
        char *out = NULL;
        size_t out_size = 0;
        FILE *f = open_memstream(&out, &out_size);
        assert_non_null(f);
        if (r < 0) {
                assert_int_not_equal(r, -ENOMEM);
                assert_null(s);
                for (size_t i = 0; i < d.n_items; i++) {
                        _cleanup_free_ char *line = diag_format(&d, i);
                        fprintf(f, "%s%s", i ? "\n" : "", line);
                }
        } else
                assert_int_equal(d.n_items, 0);
        fclose(f);
        spec_free(s);
        diag_clear(&d);
        return out;
}

static void test_bad_specs(void **state) {
        (void) state;
        for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++) {
                _cleanup_free_ char *got = load_diagnostics(bad_specs[i].yaml, strlen(bad_specs[i].yaml));
                if (strcmp(got, bad_specs[i].expected) != 0)
                        fail_msg("bad spec %zu:\n%s\nexpected:\n%s\ngot:\n%s", i, bad_specs[i].yaml,
                                 bad_specs[i].expected, got);
        }
}

static void test_too_many_cells(void **state) {
        (void) state;
        const char *yaml = "experiment: t\ncommand: [/bin/true]\nallocators: {glibc: {}}\nparams:\n"
                           "  a: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]\n"
                           "  b: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]\n"
                           "  c: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]\n";
        _cleanup_free_ char *got = load_diagnostics(yaml, strlen(yaml));
        assert_string_equal(got, "t.yaml:5:3: the parameter matrix has more than 4096 cells");
}

/* A matrix that passes the cell limit before its last parameter, whose values are templated:
 * every parameter after the excess is still named (this crashed the loader on 63f6da7). */
static void test_too_many_cells_templated(void **state) {
        (void) state;
        for (int excess_at = 1; excess_at < 4; excess_at++) {
                char yaml[8192];
                size_t n = (size_t) snprintf(yaml, sizeof(yaml),
                                             "experiment: t\ncommand: [echo, \"{a}{b}{c}{d}\"]\n"
                                             "allocators: {glibc: {}}\nparams:\n");
                for (int p = 0; p < 4; p++) {
                        int values = p <= excess_at ? 65 : 1;
                        n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "  %c: [", 'a' + p);
                        for (int v = 0; v < values; v++)
                                n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "%s%d", v ? "," : "", v);
                        n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "]\n");
                }
                _cleanup_free_ char *got = load_diagnostics(yaml, n);
                assert_string_equal(got, "t.yaml:5:3: the parameter matrix has more than 4096 cells");
        }
}

/* 4096 cells x 16 variants x 258 words each: within every single limit, but a plan of 17M
 * strings (5.5 GB on 63f6da7); refused at the matrix, at once. */
static void test_plan_too_large(void **state) {
        (void) state;
        size_t size = 64 * 1024, n = 0;
        _cleanup_free_ char *yaml = malloc(size);
        assert_non_null(yaml);
        n += (size_t) snprintf(yaml + n, size - n,
                               "experiment: t\ncommand: [echo, \"{a}\"]\nparams:\n  a: [");
        for (int i = 0; i < 256; i++)
                n += (size_t) snprintf(yaml + n, size - n, "%s%d", i ? "," : "", i);
        n += (size_t) snprintf(yaml + n, size - n,
                               "]\n  b: [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]\nenv:\n");
        for (int i = 0; i < 256; i++)
                n += (size_t) snprintf(yaml + n, size - n, "  K%d: v\n", i);
        n += (size_t) snprintf(yaml + n, size - n, "allocators:\n");
        for (int i = 0; i < 16; i++)
                n += (size_t) snprintf(yaml + n, size - n, "  v%d: {}\n", i);
        _cleanup_free_ char *got = load_diagnostics(yaml, n);
        assert_string_equal(got,
                            "t.yaml:3:1: the plan would hold 4096 cells x 4128 arguments and variables of "
                            "its variants, more than 1048576: fewer cells, variants or variables");
}

/* Duplicate keys among many, found through the loader's hash of each mapping's keys (the
 * pairwise check took 7.8 s for 50,000 keys): the first definition's line is right. */
static void test_duplicate_among_many_keys(void **state) {
        (void) state;
        size_t size = 256 * 1024, n = 0;
        _cleanup_free_ char *yaml = malloc(size);
        assert_non_null(yaml);
        n += (size_t) snprintf(yaml + n, size - n,
                               "experiment: t\ncommand: [/bin/true]\nallocators: {glibc: {}}\n"
                               "description:\n");
        for (int i = 0; i < 20000; i++)
                n += (size_t) snprintf(yaml + n, size - n, "  k%d: v\n", i);
        n += (size_t) snprintf(yaml + n, size - n, "  k12345: again\n");
        _cleanup_free_ char *got = load_diagnostics(yaml, n);
        assert_string_equal(got, "t.yaml:20005:3: duplicate key 'k12345' (first defined at line 12350)");
}

static void test_too_many_variants(void **state) {
        (void) state;
        char yaml[4096];
        size_t n =
                (size_t) snprintf(yaml, sizeof(yaml), "experiment: t\ncommand: [/bin/true]\nallocators:\n");
        for (int i = 0; i < 65; i++)
                n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "  v%d: {}\n", i);
        _cleanup_free_ char *got = load_diagnostics(yaml, n);
        assert_string_equal(got, "t.yaml:4:3: more than 64 variants");
}

static void test_too_large(void **state) {
        (void) state;
        size_t size = YAMLTREE_MAX_INPUT_BYTES + 1;
        _cleanup_free_ char *yaml = malloc(size);
        assert_non_null(yaml);
        memset(yaml, '#', size);
        _cleanup_free_ char *got = load_diagnostics(yaml, size);
        assert_string_equal(got, "t.yaml:1:1: spec is larger than 1048576 bytes");
}

static void test_alias_bomb(void **state) {
        (void) state;
        /* Each level doubles the previous one: without limits this expands to 2^40 nodes. */
        char yaml[8192];
        size_t n = (size_t) snprintf(yaml, sizeof(yaml), HEAD "x0: &a0 [1, 1]\n");
        for (int i = 1; i < 40; i++)
                n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "x%d: &a%d [*a%d, *a%d]\n", i, i, i - 1,
                                       i - 1);
        _cleanup_free_ char *got = load_diagnostics(yaml, n);
        assert_string_equal(got, "t.yaml:18:18: document has more than 100000 nodes");
}

static void test_alias_count(void **state) {
        (void) state;
        char yaml[1024];
        size_t n = (size_t) snprintf(yaml, sizeof(yaml), HEAD "x: &a 1\ny: [");
        for (int i = 0; i < 40; i++)
                n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "*a, ");
        n += (size_t) snprintf(yaml + n, sizeof(yaml) - n, "1]\n");
        _cleanup_free_ char *got = load_diagnostics(yaml, n);
        assert_string_equal(got, "t.yaml:5:133: more than 32 aliases");
}

static void test_quickstart_loads(void **state) {
        (void) state;
        const char *yaml =
                "experiment: quickstart\n"
                "description: a JSON round trip\n"
                "command: [python3, -c, \"n={n}; d=[{{'k': i}} for i in range(n)]; print({width})\"]\n"
                "params:\n  n: [100000, 400000]\n  width: [8, 64, 128]\n"
                "env: {PYTHONHASHSEED: \"0\"}\n"
                "allocators:\n"
                "  glibc: {}\n"
                "  jemalloc: {preload: jemalloc, env: {MALLOC_CONF: \"dirty_decay_ms:500\"}}\n"
                "  mimalloc: {preload: mimalloc}\n"
                "  ref: {command: [/bin/echo, \"{n}\"]}\n"
                "baseline: jemalloc\nreference: glibc\nsamples: 9\nwarmup: 2\norder: randomized\nseed: 42\n"
                "timeout: 1.5s\nverify: file:out-{n}.txt\nmetric: reported:read_time\non_failure: stop\n"
                "output_limit: 2MiB\nschedule: \"30 3 * * mon-fri\"\n";
        Diagnostics d = {};
        _cleanup_(spec_freep) Spec *s = NULL;
        assert_int_equal(spec_load_buffer("q.yaml", yaml, strlen(yaml), &d, &s), 0);
        assert_string_equal(s->experiment, "quickstart");
        assert_string_equal(s->command[0], "python3");
        assert_string_equal(s->command[2], "n={n}; d=[{{'k': i}} for i in range(n)]; print({width})");
        assert_int_equal(s->n_params, 2);
        assert_string_equal(s->params[1].name, "width");
        assert_int_equal(s->params[1].n_values, 3);
        assert_int_equal(spec_n_cells(s), 6);
        assert_string_equal(s->env[0], "PYTHONHASHSEED=0");
        assert_int_equal(s->n_variants, 4);
        assert_null(s->variants[0].preload);
        assert_string_equal(s->variants[1].preload, "jemalloc");
        assert_string_equal(s->variants[1].env[0], "MALLOC_CONF=dirty_decay_ms:500");
        assert_string_equal(s->variants[3].command[0], "/bin/echo");
        assert_int_equal(s->baseline, 1);
        assert_int_equal(s->reference, 0);
        assert_int_equal(s->samples, 9);
        assert_int_equal(s->warmup, 2);
        assert_int_equal(s->order, SPEC_ORDER_RANDOMIZED);
        assert_true(s->has_seed);
        assert_int_equal(s->seed, 42);
        assert_int_equal(s->timeout_ns, 1500000000ULL);
        assert_int_equal(s->verify, SPEC_VERIFY_FILE);
        assert_string_equal(s->verify_path, "out-{n}.txt");
        assert_int_equal(s->metric, SPEC_METRIC_REPORTED);
        assert_string_equal(s->metric_name, "read_time");
        assert_int_equal(s->on_failure, SPEC_ON_FAILURE_STOP);
        assert_int_equal(s->output_limit, 2 * 1024 * 1024);
        assert_true(s->has_schedule);
        assert_int_equal(s->schedule.kind, SCHEDULE_CRON);
        assert_int_equal(s->schedule.weekdays, 0x3e); /* Monday to Friday */
        assert_int_equal(s->source_size, strlen(yaml));
        diag_clear(&d);
}

static void test_defaults_and_shell_command(void **state) {
        (void) state;
        const char *yaml = "experiment: t\ncommand: \"echo {{hi}}\"\nallocators:\n  glibc:\n  b: {preload: "
                           "/opt/x.so}\n";
        Diagnostics d = {};
        _cleanup_(spec_freep) Spec *s = NULL;
        assert_int_equal(spec_load_buffer("t.yaml", yaml, strlen(yaml), &d, &s), 0);
        assert_string_equal(s->command[0], "/bin/sh");
        assert_string_equal(s->command[1], "-c");
        assert_string_equal(s->command[2], "echo {{hi}}");
        assert_int_equal(spec_n_cells(s), 1);
        assert_int_equal(s->samples, 7);
        assert_int_equal(s->warmup, 1);
        assert_int_equal(s->order, SPEC_ORDER_INTERLEAVED);
        assert_int_equal(s->timeout_ns, SPEC_DEFAULT_TIMEOUT_NS);
        assert_int_equal(s->verify, SPEC_VERIFY_STDOUT);
        assert_int_equal(s->metric, SPEC_METRIC_WALL);
        assert_int_equal(s->baseline, 0);
        assert_int_equal(s->reference, 0);
        assert_string_equal(s->variants[1].preload, "/opt/x.so");
        diag_clear(&d);
}

/* A spec whose parameter a has a value of `value_len` bytes ('v...') and the value "b", then
 * `body` (more parameters, then other keys): loaded, its diagnostics returned. */
static char *load_with_value(size_t value_len, const char *body) {
        size_t size = value_len + 64 * 1024, n = 0;
        _cleanup_free_ char *yaml = malloc(size);
        assert_non_null(yaml);
        n += (size_t) snprintf(yaml + n, size - n, "experiment: t\nparams:\n  a: [\"");
        memset(yaml + n, 'v', value_len);
        n += value_len;
        n += (size_t) snprintf(yaml + n, size - n, "\", b]\n%s%s", body,
                               strstr(body, "allocators:") ? "" : "allocators: {glibc: {}}\n");
        return load_diagnostics(yaml, n);
}

#define assert_prefix(got, prefix) assert_memory_equal(got, prefix, strlen(prefix))

/* The bomb: 340 KB within every limit, 8 GB once expanded. Measured, not expanded: every
 * variable is refused where it is written, in a few milliseconds and kilobytes. */
static void test_expansion_bomb(void **state) {
        (void) state;
        size_t size = 400 * 1024, n = 0;
        _cleanup_free_ char *yaml = malloc(size);
        assert_non_null(yaml);
        n += (size_t) snprintf(yaml + n, size - n, "experiment: t\ncommand: [/bin/true]\nparams:\n  a: [\"");
        memset(yaml + n, 'x', 100000);
        n += 100000;
        n += (size_t) snprintf(yaml + n, size - n, "\"]\nenv:\n");
        for (int i = 0; i < 40; i++) {
                n += (size_t) snprintf(yaml + n, size - n, "  V%02d: \"", i);
                for (int k = 0; k < 2000; k++)
                        n += (size_t) snprintf(yaml + n, size - n, "{a}");
                n += (size_t) snprintf(yaml + n, size - n, "\"\n");
        }
        n += (size_t) snprintf(yaml + n, size - n, "allocators: {glibc: {}}\n");
        _cleanup_free_ char *got = load_diagnostics(yaml, n);
        const char *first = "t.yaml:6:8: this variable expands to 200000004 bytes with each parameter at "
                            "its longest value, more than the 131071 bytes an argument or a variable may "
                            "have (the kernel's MAX_ARG_STRLEN)\n";
        assert_memory_equal(got, first, strlen(first));
        size_t lines = 1;
        for (const char *c = got; *c; c++)
                lines += *c == '\n';
        assert_int_equal(lines, 40);
}

/* MAX_ARG_STRLEN counts the NUL: 131071 bytes pass, one more is refused, wherever the string
 * is (an argument, a hook's, a variable with its name); paths stop at PATH_MAX. */
static void test_string_limits(void **state) {
        (void) state;
        _cleanup_free_ char *fits = load_with_value(131070, "command: [echo, \"{a}x\"]\n");
        assert_string_equal(fits, "");
        _cleanup_free_ char *arg = load_with_value(131070, "command: [echo, \"{a}xy\"]\n");
        assert_string_equal(arg, "t.yaml:4:17: this argument expands to 131072 bytes with each parameter at "
                                 "its longest value, more than the 131071 bytes an argument or a variable "
                                 "may have (the kernel's MAX_ARG_STRLEN)");
        _cleanup_free_ char *var = load_with_value(131068, "command: [echo]\nenv: {AB: \"{a}\"}\n");
        assert_string_equal(var, "");
        _cleanup_free_ char *var2 = load_with_value(131069, "command: [echo]\nenv: {AB: \"{a}\"}\n");
        assert_prefix(var2, "t.yaml:5:11: this variable expands to 131072 bytes");
        _cleanup_free_ char *hook = load_with_value(70000, "command: [echo]\nsetup: \"echo {a}{a}\"\n");
        assert_prefix(hook, "t.yaml:5:8: this argument expands to 140005 bytes");
        _cleanup_free_ char *cwd = load_with_value(4094, "command: [echo]\ncwd: \"/{a}\"\n");
        assert_string_equal(cwd, "");
        _cleanup_free_ char *cwd2 = load_with_value(4095, "command: [echo]\ncwd: \"/{a}\"\n");
        assert_string_equal(cwd2, "t.yaml:5:6: this path expands to 4096 bytes with each parameter at its "
                                  "longest value, more than the 4095 bytes a path may have (PATH_MAX)");
        _cleanup_free_ char *stdin_path = load_with_value(5000, "command: [echo]\nstdin: \"{a}\"\n");
        assert_prefix(stdin_path, "t.yaml:5:8: this path expands to 5000 bytes");
        _cleanup_free_ char *verify = load_with_value(5000, "command: [echo]\nverify: \"file:{a}\"\n");
        assert_prefix(verify, "t.yaml:5:9: this path expands to 5000 bytes");
        _cleanup_free_ char *variant_cwd =
                load_with_value(5000, "command: [echo]\nallocators: {glibc: {cwd: \"{a}\"}}\n");
        assert_prefix(variant_cwd, "t.yaml:");
}

/* A child's arguments plus the largest environment (every one is padded to it) fit 1 MiB; the
 * plan's strings together 128 MiB. */
static void test_child_and_plan_limits(void **state) {
        (void) state;
        /* 9 variables of 120,000 bytes: each fits, together 1,080,000 do not. */
        _cleanup_free_ char *env = load_with_value(
                120000, "command: [echo]\nenv: {A: \"{a}\", B: \"{a}\", C: \"{a}\", D: \"{a}\", E: \"{a}\", "
                        "F: \"{a}\", G: \"{a}\", H: \"{a}\", I: \"{a}\"}\n");
        assert_string_equal(
                env,
                "t.yaml:5:6: variant glibc: a child would get 13 bytes of arguments and "
                "1080099 bytes of environment from the spec, more than the 1048576 bytes a child may have");
        /* The padding counts: a variant with a long command next to one with a long environment. */
        _cleanup_free_ char *padded = load_with_value(
                120000, "command: [echo, \"{a}\", \"{a}\", \"{a}\", \"{a}\", \"{a}\"]\nallocators:\n"
                        "  glibc: {}\n  big: {env: {A: \"{a}\", B: \"{a}\", C: \"{a}\", D: \"{a}\"}}\n");
        assert_string_equal(
                padded,
                "t.yaml:4:10: variant glibc: a child would get 600058 bytes of arguments and "
                "480044 bytes of environment from the spec (every environment is padded to the largest, "
                "variant big's), more than the 1048576 bytes a child may have\n"
                "t.yaml:4:10: variant big: a child would get 600058 bytes of arguments and 480044 bytes "
                "of environment from the spec, more than the 1048576 bytes a child may have");
        _cleanup_free_ char *hook = load_with_value(
                120000, "command: [echo]\nprepare: [echo, \"{a}\", \"{a}\", \"{a}\", \"{a}\", \"{a}\", "
                        "\"{a}\", \"{a}\", \"{a}\", \"{a}\"]\n");
        assert_string_equal(
                hook, "t.yaml:5:10: prepare: the hook would get 1080094 bytes of arguments and 0 "
                      "bytes of environment from the spec, more than the 1048576 bytes a child may have");
        /* 100,000 bytes of environment in 2 x 256 x 8 = 4096 cells: 800 MiB of padded
         * environments. */
        char body[4096];
        size_t n = (size_t) snprintf(body, sizeof(body), "  c: [");
        for (int i = 0; i < 256; i++)
                n += (size_t) snprintf(body + n, sizeof(body) - n, "%s%d", i ? "," : "", i);
        snprintf(body + n, sizeof(body) - n,
                 "]\n  d: [0,1,2,3,4,5,6,7]\ncommand: [echo]\nenv: {A: \"{a}\"}\n");
        _cleanup_free_ char *plan = load_with_value(100000, body);
        assert_prefix(plan, "t.yaml:2:1: the plan would hold ");
        assert_non_null(strstr(plan, "bytes of arguments, environments and paths over 4096 cells, more than "
                                     "134217728: fewer cells or variants, or shorter values"));
}

/* The calibration command is measured too, and sizes are reported beside other problems (a
 * reviewer's spec had its 1.25 MB of cleanup arguments unreported next to an unknown key). */
static void test_sizes_beside_other_problems(void **state) {
        (void) state;
        _cleanup_free_ char *calibrate =
                load_with_value(10, "command: [echo]\ncalibrate: [/bin/true, \"{a}\"]\n");
        assert_string_equal(calibrate, ""); /* literal: no template, "{a}" is two bytes and a name */
        size_t size = 1100 * 1024, n = 0;
        _cleanup_free_ char *big = malloc(size);
        assert_non_null(big);
        n += (size_t) snprintf(big + n, size - n,
                               "experiment: t\ncommand: [echo]\nallocators: {glibc: {}}\n"
                               "sampels: 3\ncalibrate: [/bin/true, \"");
        memset(big + n, 'q', 200000);
        n += 200000;
        n += (size_t) snprintf(big + n, size - n, "\"]\n");
        _cleanup_free_ char *got = load_diagnostics(big, n);
        assert_non_null(strstr(got, "t.yaml:4:1: unknown key 'sampels'"));
        assert_non_null(strstr(got, "t.yaml:5:24: this argument is 200000 bytes, more than the 131071"));
}

/* A NUL byte is reported where it is (it was at 1:1 wherever it was). */
static void test_nul_where_it_is(void **state) {
        (void) state;
        static const char yaml[] = "experiment: t\ncommand: [/bin/true]\nallocators: {glibc: {}}\0x: 1\n";
        _cleanup_free_ char *got = load_diagnostics(yaml, sizeof(yaml) - 1);
        assert_string_equal(got, "t.yaml:3:24: spec contains a NUL byte");
}

/* UTF-16, with a byte order mark or without (iconv -t UTF-16LE), is named: it was "a NUL byte". */
static void test_utf16(void **state) {
        (void) state;
        static const char le_bom[] = "\xff\xfe"
                                     "e\0x\0p\0",
                          be_bom[] = "\xfe\xff\0e\0x\0p", le[] = "e\0x\0p\0", be[] = "\0e\0x\0p";
        const struct {
                const char *yaml;
                size_t size;
        } cases[] = { { le_bom, sizeof(le_bom) - 1 },
                      { be_bom, sizeof(be_bom) - 1 },
                      { le, sizeof(le) - 1 },
                      { be, sizeof(be) - 1 } };
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                _cleanup_free_ char *got = load_diagnostics(cases[i].yaml, cases[i].size);
                assert_string_equal(got, "t.yaml:1:1: spec is UTF-16: save it as UTF-8");
        }
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf16),
                cmocka_unit_test(test_bad_specs),
                cmocka_unit_test(test_too_many_cells),
                cmocka_unit_test(test_too_many_cells_templated),
                cmocka_unit_test(test_plan_too_large),
                cmocka_unit_test(test_duplicate_among_many_keys),
                cmocka_unit_test(test_too_many_variants),
                cmocka_unit_test(test_too_large),
                cmocka_unit_test(test_alias_bomb),
                cmocka_unit_test(test_alias_count),
                cmocka_unit_test(test_quickstart_loads),
                cmocka_unit_test(test_defaults_and_shell_command),
                cmocka_unit_test(test_expansion_bomb),
                cmocka_unit_test(test_string_limits),
                cmocka_unit_test(test_child_and_plan_limits),
                cmocka_unit_test(test_sizes_beside_other_problems),
                cmocka_unit_test(test_nul_where_it_is),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
