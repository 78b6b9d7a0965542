/* SPDX-License-Identifier: MIT */
/*
 * `alloclab quick`: an experiment from the command line, without a file (hyperfine's habit).
 * The options become a spec's YAML text, which loads, is checked, runs and is stored exactly as
 * a spec file would be; --print-spec shows it, to keep as a file.
 */
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/measure.h"
#include "configs/catalog.h"
#include "configs/schema.h"
#include "configs/spec-text.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/sha256.h"
#include "util/strv.h"
#include "util/suggest.h"

/* The usage before and after the -a option's lines (usage_text()). */
static const char usage_head[] =
        "Usage: alloclab quick -a ALLOCATORS [OPTIONS] [--] COMMAND [ARGS...]\n"
        "       alloclab quick -a ALLOCATORS [OPTIONS] 'SHELL COMMAND'\n"
        "\n"
        "Measures COMMAND under each allocator, verifies the outputs and stores the run, as `run`\n"
        "does with a spec file. One operand with spaces or shell syntax runs with /bin/sh -c.\n"
        "\n";
static const char usage_tail[] =
        "  -e, --env [VARIANT:]KEY=VALUE  a variable for every child, or for VARIANT's (repeatable)\n"
        "  --param NAME=V1,V2,... a parameter axis: {NAME} in COMMAND is its value (repeatable)\n"
        "  -r, --samples N|auto   timed samples per cell and variant (default 10); auto: from the\n"
        "                         fewest that can give a verdict (5, more when the comparisons\n"
        "                         share alpha) to 50, until every ratio is known within 2% (spec\n"
        "                         samples: auto)\n"
        "  -w, --warmup N         warm-up runs per cell and variant (default 1)\n"
        "  -p, --prepare CMD      shell command before every run, outside the clock\n"
        "  -s, --setup CMD        shell command before a variant's first run in each cell\n"
        "  -c, --cleanup CMD      shell command after each cell, for every variant set up\n"
        "  --input FILE           COMMAND's standard input (default /dev/null)\n"
        "  --verify stdout|none   compare every output with the baseline's (default stdout)\n"
        "  --timeout DURATION     per child (default 600s)\n"
        "  --name NAME            experiment name (default quick-PROGRAM-HASH: a hash of the\n"
        "                         whole command, so that another command is another experiment)\n"
        "  --print-spec           print the spec this makes and exit\n"
        "  --db PATH, --format F, --quiet, --label TEXT, --commit REV, --machine NAME\n"
        "                         as for `alloclab run`\n"
        "\n"
        "Exit status as for `alloclab run`.\n";

#define QUICK_MAX_VARIANTS SPEC_MAX_VARIANTS
#define QUICK_MAX_PARAMS   SPEC_MAX_PARAMS

typedef struct Quick {
        char **variants; /* "NAME=ALLOCATOR" or "ALLOCATOR" */
        char **env;      /* "[VARIANT:]KEY=VALUE" */
        char **params;   /* "NAME=V1,V2" */
        unsigned samples, warmup;
        bool samples_auto; /* --samples auto */
        const char *hooks[_SPEC_HOOK_MAX];
        const char *input, *verify, *timeout, *name;
        bool print_spec;
        char **command;
} Quick;

static void quick_done(Quick *q) {
        strv_free(q->variants);
        strv_free(q->env);
        strv_free(q->params);
}

static int parse_quick(int argc, char **argv, Quick *q, MeasureOptions *m) {
        enum {
                OPT_PARAM = 256,
                OPT_INPUT,
                OPT_VERIFY,
                OPT_TIMEOUT,
                OPT_NAME,
                OPT_PRINT,
                OPT_DB,
                OPT_FORMAT,
                OPT_QUIET,
                OPT_LABEL,
                OPT_COMMIT,
                OPT_MACHINE
        };
        static const struct option options[] = {
                { "allocators", required_argument, NULL, 'a' },
                { "env", required_argument, NULL, 'e' },
                { "param", required_argument, NULL, OPT_PARAM },
                { "samples", required_argument, NULL, 'r' },
                { "runs", required_argument, NULL, 'r' },
                { "warmup", required_argument, NULL, 'w' },
                { "prepare", required_argument, NULL, 'p' },
                { "setup", required_argument, NULL, 's' },
                { "cleanup", required_argument, NULL, 'c' },
                { "input", required_argument, NULL, OPT_INPUT },
                { "verify", required_argument, NULL, OPT_VERIFY },
                { "timeout", required_argument, NULL, OPT_TIMEOUT },
                { "name", required_argument, NULL, OPT_NAME },
                { "print-spec", no_argument, NULL, OPT_PRINT },
                { "db", required_argument, NULL, OPT_DB },
                { "format", required_argument, NULL, OPT_FORMAT },
                { "quiet", no_argument, NULL, OPT_QUIET },
                { "label", required_argument, NULL, OPT_LABEL },
                { "commit", required_argument, NULL, OPT_COMMIT },
                { "machine", required_argument, NULL, OPT_MACHINE },
                {},
        };
        optind = 1;
        /* '+': the first operand is COMMAND, and its own options are its own. */
        for (int c; (c = getopt_long(argc, argv, "+a:e:r:w:p:s:c:", options, NULL)) >= 0;) {
                unsigned long long v;
                int r = 0;
                switch (c) {
                case 'a':
                        r = strv_append_list(&q->variants, optarg);
                        break;
                case 'e':
                        if (!strchr(optarg, '=')) {
                                cli_error("quick", "--env takes [VARIANT:]KEY=VALUE, not '%s'", optarg);
                                return EXIT_USAGE;
                        }
                        r = strv_append(&q->env, optarg);
                        break;
                case OPT_PARAM:
                        if (!strchr(optarg, '=') || strv_length(q->params) >= QUICK_MAX_PARAMS) {
                                cli_error("quick", "--param takes NAME=V1,V2,... (at most %d of them)",
                                          QUICK_MAX_PARAMS);
                                return EXIT_USAGE;
                        }
                        r = strv_append(&q->params, optarg);
                        break;
                case 'r':
                        if (strcmp(optarg, "auto") == 0) {
                                q->samples_auto = true;
                                break;
                        }
                        __attribute__((fallthrough));
                case 'w':
                        if (cli_parse_uint(optarg, c == 'r' ? SPEC_MAX_SAMPLES : SPEC_MAX_WARMUP, &v) < 0 ||
                            (c == 'r' && v == 0)) {
                                cli_error("quick", "--%s must be between %d and %d",
                                          c == 'r' ? "samples" : "warmup", c == 'r',
                                          c == 'r' ? SPEC_MAX_SAMPLES : SPEC_MAX_WARMUP);
                                return EXIT_USAGE;
                        }
                        *(c == 'r' ? &q->samples : &q->warmup) = (unsigned) v;
                        break;
                case 'p':
                        q->hooks[SPEC_HOOK_PREPARE] = optarg;
                        break;
                case 's':
                        q->hooks[SPEC_HOOK_SETUP] = optarg;
                        break;
                case 'c':
                        q->hooks[SPEC_HOOK_CLEANUP] = optarg;
                        break;
                case OPT_INPUT:
                        q->input = optarg;
                        break;
                case OPT_VERIFY:
                        q->verify = optarg;
                        break;
                case OPT_TIMEOUT:
                        q->timeout = optarg;
                        break;
                case OPT_NAME:
                        q->name = optarg;
                        break;
                case OPT_PRINT:
                        q->print_spec = true;
                        break;
                case OPT_DB:
                        m->db_path = optarg;
                        break;
                case OPT_FORMAT:
                        if (cli_format_option("quick", optarg, &m->format) != EXIT_OK)
                                return EXIT_USAGE;
                        break;
                case OPT_QUIET:
                        m->quiet = true;
                        break;
                case OPT_LABEL:
                        m->label = optarg;
                        break;
                case OPT_COMMIT:
                        m->commit = optarg;
                        break;
                case OPT_MACHINE:
                        m->machine = optarg;
                        break;
                default:
                        return EXIT_USAGE;
                }
                if (r < 0) {
                        cli_error("quick", "out of memory");
                        return EXIT_ENVIRONMENT;
                }
        }
        if (!q->variants) {
                cli_error("quick", "-a ALLOCATORS is required, e.g. -a glibc,jemalloc,mimalloc");
                return EXIT_USAGE;
        }
        if (optind >= argc) {
                cli_error("quick", "expected the COMMAND to measure after the options");
                return EXIT_USAGE;
        }
        q->command = argv + optind;
        if (q->command[1] && strpbrk(q->command[0], " \t") && access(q->command[0], X_OK) < 0) {
                cli_error("quick",
                          "'%s' and what follows look like several commands (hyperfine's habit); quick "
                          "measures one COMMAND under several allocators: run quick once per command, or "
                          "write a spec with a variant per command (an allocator's own command:, "
                          "docs/spec.md). A single operand with spaces runs with sh -c",
                          q->command[0]);
                return EXIT_USAGE;
        }
        if (q->print_spec && m->format != FORMAT_TABLE) {
                cli_error("quick",
                          "--print-spec prints YAML, in no other format; --format is for the results");
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* Whether a lone operand is a shell command rather than a program's name. */
static bool is_shell_command(char *const *command) {
        return command[0] && !command[1] && command[0][strcspn(command[0], " \t\n|&;<>()$`\\\"'*?[#~=%")];
}

/* quick-PROGRAM-HASH: the program's base name, cut to what an experiment name may hold, and the
 * first 6 hex digits of the sha256 of the whole command (its words, each ended by a NUL), so
 * that another command, or the same program with other arguments, is another experiment, whose
 * history never joins this one's; the same command, run again, continues it. */
static void default_name(char *const *command, bool shell, char *buf, size_t size) {
        const char *program = command[0];
        size_t len = shell ? strcspn(program, " \t\n") : strlen(program);
        const char *slash = memrchr(program, '/', len);
        if (slash) {
                len -= (size_t) (slash + 1 - program);
                program = slash + 1;
        }
        Sha256 h;
        uint8_t digest[SHA256_DIGEST_SIZE];
        sha256_init(&h);
        for (size_t i = 0; command[i]; i++)
                sha256_update(&h, command[i], strlen(command[i]) + 1);
        sha256_final(&h, digest);
        char base[64 - 7 + 1]; /* an experiment name holds 64 characters, 7 of them "-HASH" */
        spec_text_name(base, sizeof(base), "quick-", program, len);
        snprintf(buf, size, "%s-%02x%02x%02x", base, digest[0], digest[1], digest[2]);
}

/* The variables of --env that apply to `variant` (NULL: those for every child), as a flow map
 * after prefix; nothing when there are none. */
static void write_env(FILE *f, const char *prefix, char *const *env, const char *variant) {
        bool first = true;
        for (size_t i = 0; env && env[i]; i++) {
                const char *kv = env[i], *colon = strchr(kv, ':'), *eq = strchr(kv, '=');
                bool scoped = colon && colon < eq;
                if (variant ? !scoped || strncmp(kv, variant, (size_t) (colon - kv)) != 0 ||
                                      variant[colon - kv] != 0
                            : scoped)
                        continue;
                if (scoped)
                        kv = colon + 1;
                _cleanup_free_ char *key = strndup(kv, strcspn(kv, "="));
                fputs(first ? prefix : ", ", f);
                fputs(first ? "{" : "", f);
                spec_text_scalar(f, key ? key : "");
                fputs(": ", f);
                spec_text_scalar(f, strchr(kv, '=') + 1);
                first = false;
        }
        if (!first)
                fputs("}", f);
}

/* The spec the options describe, as YAML text. */
static char *quick_spec(const Quick *q) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        bool shell = is_shell_command(q->command);
        char name[80];
        default_name(q->command, shell, name, sizeof(name));
        fputs("# Made by alloclab quick; run it again with: alloclab run FILE\nexperiment: ", f);
        spec_text_scalar(f, q->name ? q->name : name);
        fputs("\ncommand: ", f);
        if (shell)
                spec_text_template(f, q->command[0], q->params);
        else {
                fputc('[', f);
                for (size_t i = 0; q->command[i]; i++) {
                        fputs(i ? ", " : "", f);
                        spec_text_template(f, q->command[i], q->params);
                }
                fputc(']', f);
        }
        if (q->params)
                fputs("\nparams:", f);
        for (size_t i = 0; q->params && q->params[i]; i++) {
                const char *eq = strchr(q->params[i], '=');
                _cleanup_free_ char *key = strndup(q->params[i], (size_t) (eq - q->params[i]));
                _cleanup_strv_free_ char **values = NULL;
                (void) strv_append_list(&values, eq + 1);
                fputs("\n  ", f);
                spec_text_scalar(f, key ? key : "");
                fputs(": ", f);
                spec_text_list(f, values);
        }
        write_env(f, "\nenv: ", q->env, NULL);
        for (SpecHook h = 0; h < _SPEC_HOOK_MAX; h++)
                if (q->hooks[h]) {
                        fprintf(f, "\n%s: ", spec_hook_to_string(h));
                        spec_text_template(f, q->hooks[h], q->params);
                }
        if (q->input) {
                fputs("\nstdin: ", f);
                spec_text_template(f, q->input, q->params);
        }
        fputs("\nallocators:", f);
        for (size_t i = 0; q->variants[i]; i++) {
                _cleanup_free_ char *variant = spec_text_variant_open(f, q->variants[i]);
                if (variant)
                        write_env(f, ", env: ", q->env, variant);
                fputs("}", f);
        }
        if (q->samples_auto)
                fprintf(f, "\nsamples: auto\nwarmup: %u\n", q->warmup);
        else
                fprintf(f, "\nsamples: %u\nwarmup: %u\n", q->samples, q->warmup);
        if (q->verify) {
                fputs("verify: ", f);
                spec_text_scalar(f, q->verify);
                fputc('\n', f);
        }
        if (q->timeout) {
                fputs("timeout: ", f);
                spec_text_scalar(f, q->timeout);
                fputc('\n', f);
        }
        return memstream_text(f, &text);
}

/* A `{NAME}` in word that names no --param but is close to one ("{rowz}" with --param rows):
 * said with the suggestion, since quick keeps every other brace literal (awk, JSON, ${VAR} of a
 * shell) and would run the typo as text. Returns EXIT_OK or EXIT_USAGE. */
static int check_references(const char *word, char *const *params) {
        const char *names[QUICK_MAX_PARAMS + 1] = {};
        char keys[QUICK_MAX_PARAMS][64];
        for (size_t i = 0; params && params[i] && i < QUICK_MAX_PARAMS; i++) {
                snprintf(keys[i], sizeof(keys[i]), "%.*s", (int) strcspn(params[i], "="), params[i]);
                names[i] = keys[i];
        }
        for (const char *p = strchr(word, '{'); p; p = strchr(p + 1, '{')) {
                size_t n = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
                if (n == 0 || n >= 64 || p[1 + n] != '}' || (p > word && p[-1] == '$'))
                        continue;
                char name[64];
                snprintf(name, sizeof(name), "%.*s", (int) n, p + 1);
                if (strv_contains((char **) names, name))
                        continue;
                const char *close = suggest_closest(name, names);
                if (close) {
                        cli_error("quick",
                                  "'{%s}' names no --param (did you mean '{%s}'?); a brace that names "
                                  "nothing close to a --param stays literal",
                                  name, close);
                        return EXIT_USAGE;
                }
        }
        return EXIT_OK;
}

/* The usage, with the catalog's names in the -a option's lines (words wrapped at 96 columns). */
static char *usage_text(void) {
        static const char indent[] = "                         ";
        _cleanup_free_ char *words = NULL;
        if (asprintf(&words,
                     "comma-separated variants (repeatable): catalog names (%s), paths of shared objects, "
                     "SOURCE@REV (a git repository built at a commit, tag or branch), or NAME=ALLOCATOR; "
                     "the first is "
                     "the baseline",
                     catalog_names()) < 0)
                return NULL;
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);
        if (!f)
                return NULL;
        fputs(usage_head, f);
        int column = fprintf(f, "  -a, --allocators LIST  ");
        char *save = NULL;
        for (char *word = strtok_r(words, " ", &save); word; word = strtok_r(NULL, " ", &save)) {
                if (column + 1 + (int) strlen(word) > 96)
                        column = fprintf(f, "\n%s", indent) - 1;
                else if (column > (int) strlen(indent))
                        column += fprintf(f, " ");
                column += fprintf(f, "%s", word);
        }
        fprintf(f, "\n%s", usage_tail);
        return memstream_text(f, &out);
}

int cmd_quick(int argc, char **argv) {
        _cleanup_free_ char *usage = usage_text();
        if (!usage) {
                cli_error("quick", "out of memory");
                return EXIT_ENVIRONMENT;
        }
        if (cli_wants_help(argc, argv, usage))
                return EXIT_OK;
        _cleanup_(quick_done) Quick q = { .samples = 10, .warmup = 1 };
        MeasureOptions m = { .format = FORMAT_TABLE };
        int e = parse_quick(argc, argv, &q, &m);
        if (e != EXIT_OK)
                return e;
        for (size_t i = 0; q.params && q.command[i]; i++)
                if ((e = check_references(q.command[i], q.params)) != EXIT_OK)
                        return e;
        for (SpecHook h = 0; q.params && h < _SPEC_HOOK_MAX; h++)
                if (q.hooks[h] && (e = check_references(q.hooks[h], q.params)) != EXIT_OK)
                        return e;
        if (q.params && q.input && (e = check_references(q.input, q.params)) != EXIT_OK)
                return e;
        _cleanup_free_ char *text = quick_spec(&q);
        if (!text) {
                cli_error("quick", "out of memory");
                return EXIT_ENVIRONMENT;
        }
        if (q.print_spec) {
                fputs(text, stdout);
                return fflush(stdout) == 0 ? EXIT_OK : EXIT_ENVIRONMENT;
        }
        _cleanup_(spec_freep) Spec *spec = NULL;
        if ((e = cli_load_spec_text("quick", "quick", text, &spec)) != EXIT_OK) {
                fprintf(stderr,
                        "(positions are in the spec alloclab quick made: see it with --print-spec)\n");
                return e;
        }
        return cli_measure("quick", spec, &m, NULL);
}
