/* SPDX-License-Identifier: MIT */
/*
 * `alloclab bisect`: the first commit at which a variant built from source (spec build:) got
 * worse. Each commit measured is a run of its own (stored, experiment NAME-bisect): the variant
 * built at the known good commit (the baseline, "good") against it built at the commit
 * ("candidate"), interleaved, with the spec's samples and verdict rule; a commit is bad when the
 * candidate is worse than good by at least min_effect with significance in some cell, good
 * otherwise, and skipped when it does not build. Both ends are measured first (the bad end must
 * be bad), then the middle of what is left, as `git bisect` does.
 *
 * With --at REV it measures one commit and exits as `git bisect run` wants: 0 good, 1 bad, 125
 * cannot be tested, 255 (stop the bisection) when something else went wrong.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/measure.h"
#include "cli/render.h"
#include "configs/spec-text.h"
#include "db/query.h"
#include "runner/build.h"
#include "util/cleanup.h"
#include "util/strv.h"

extern char **environ;

static const char bisect_usage[] =
        "Usage: alloclab bisect SPEC --variant NAME --good REV --bad REV [--db PATH] [--samples N]\n"
        "       alloclab bisect SPEC --variant NAME --good REV --at REV [--db PATH] [--samples N]\n"
        "\n"
        "Finds the first commit at which variant NAME of SPEC, built from source (build:), got worse\n"
        "than at --good: slower (or worse in the spec's metric) by at least min_effect, with the\n"
        "significance of the spec's verdicts, in some cell. Each commit measured is one run against\n"
        "the variant built at --good, stored under the experiment <experiment>-bisect; commits that\n"
        "do not build are skipped. Prints the path it took and the first bad commit.\n"
        "\n"
        "  --at REV        measure REV only, and exit as `git bisect run` wants: 0 good, 1 bad,\n"
        "                  125 does not build, 255 something else failed (git bisect stops). E.g.\n"
        "                  git bisect start BAD GOOD && git bisect run alloclab bisect SPEC \\\n"
        "                      --variant NAME --good GOOD --at HEAD\n"
        "  --samples N     samples per commit (default: the spec's)\n"
        "  --db PATH       database file (default: $ALLOCLAB_DB, else $XDG_DATA_HOME/alloclab/results.db)\n"
        "\n"
        "Exit status: 0 found (or --at: good); 1 --at: bad; 2 usage; 3 invalid spec; 4 environment\n"
        "or database error; 5 interrupted; 10 the bad end is not worse than the good one, or does\n"
        "not build: nothing to bisect; 11 a commit worse by min_effect that the run cannot tell from\n"
        "noise (more --samples).\n";

#define EXIT_NOTHING_TO_BISECT 10
#define EXIT_UNDECIDED         11
#define GIT_BISECT_SKIP        125
#define GIT_BISECT_ABORT       255

typedef enum Outcome {
        OUTCOME_GOOD,
        OUTCOME_BAD,
        OUTCOME_SKIP,
        OUTCOME_UNDECIDED, /* worse by min_effect or more, and not significantly: cannot tell */
} Outcome;

typedef struct Bisect {
        const Spec *spec;
        const SpecVariant *variant;
        MeasureOptions measure;
        BuildRequest git; /* runs git in the variant's repository */
        char *repo;       /* the repository's directory (the source, resolved) */
        char *good;       /* the commit --good names */
        char experiment[65];
        unsigned measured; /* commits measured (both ends included) */
} Bisect;

static void bisect_done(Bisect *b) {
        free(b->repo);
        free(b->good);
}

/* A revision as a full commit id, said when it is not one. */
static int commit_of(Bisect *b, const char *rev, char **ret) {
        _cleanup_free_ char *spec = NULL;
        if (asprintf(&spec, "%s^{commit}", rev) < 0)
                return EXIT_ENVIRONMENT;
        const char *args[] = { "git", "rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL };
        int r = build_git(&b->git, b->repo, args, ret);
        if (r != 0) {
                cli_error("bisect", "%s is not a commit of %s", rev, b->repo);
                return r < 0 ? EXIT_ENVIRONMENT : EXIT_USAGE;
        }
        return EXIT_OK;
}

/* "abc1234 (its subject)": a commit as people name it. */
static char *describe(Bisect *b, const char *commit) {
        const char *args[] = { "git", "log", "-1", "--format=%h (%s)", commit, NULL };
        char *text = NULL;
        return build_git(&b->git, b->repo, args, &text) == 0 ? text : strdup(commit);
}

/* What one run of the variant at commit against it at the good commit says. */
typedef struct Step {
        Outcome outcome;
        int64_t run;
        double ratio, lo, hi; /* the worst cell's candidate / good */
        size_t n_worse, n_cells;
        char *why; /* skipped: the build's failure; otherwise the worst cell's verdict */
} Step;

/* Reads what run `run` found of the candidate (variant 1) against good (variant 0). */
static int judge(Bisect *b, int64_t run, Step *ret) {
        _cleanup_(store_freep) Store *store = NULL;
        _cleanup_(query_report_freep) Report *rep = NULL;
        int e = cli_open_for_reading("bisect", b->measure.db_path, &store);
        if (e != EXIT_OK)
                return e;
        int r = query_report(store, run, NULL, &rep);
        if (r < 0)
                return cli_query_failed("bisect", store, run, r);
        Verdict worse = rep->run.higher_is_better ? VERDICT_LOWER : VERDICT_HIGHER;
        *ret = (Step){ .outcome = OUTCOME_GOOD, .run = run, .ratio = NAN, .n_cells = rep->n_cells };
        bool compared = false, unclear = false;
        for (size_t c = 0; c < rep->n_cells; c++) {
                const ReportEntry *en = report_entry(rep, c, 1);
                if (en->excluded_reason && strncmp(en->excluded_reason, "build-failed: ", 14) == 0) {
                        ret->outcome = OUTCOME_SKIP;
                        ret->why = strdup(en->excluded_reason + 14);
                        return EXIT_OK;
                }
                if (!en->has_comparison)
                        continue;
                const Comparison *cmp = &en->comparison;
                bool is_worse = cmp->verdict == worse;
                double badness = rep->run.higher_is_better ? 1 / cmp->ratio : cmp->ratio;
                unclear |= cmp->verdict == VERDICT_INCONCLUSIVE && badness >= 1 + rep->min_effect;
                double worst = isnan(ret->ratio)           ? -INFINITY
                               : rep->run.higher_is_better ? 1 / ret->ratio
                                                           : ret->ratio;
                ret->n_worse += is_worse;
                if (!compared || badness > worst) {
                        ret->ratio = cmp->ratio;
                        ret->lo = cmp->lo;
                        ret->hi = cmp->hi;
                        free(ret->why);
                        ret->why = strdup(verdict_word(cmp->verdict, render_time_metric(rep->run.metric)));
                }
                compared = true;
        }
        if (!compared) {
                cli_error("bisect",
                          "run %lld compared nothing (every cell excluded, see alloclab show %lld)",
                          (long long) run, (long long) run);
                return EXIT_FAILURES;
        }
        if (ret->n_worse > 0)
                ret->outcome = OUTCOME_BAD;
        else if (unclear)
                ret->outcome = OUTCOME_UNDECIDED;
        return EXIT_OK;
}

/* Builds the variant at commit first: one that does not build is skipped without a run (the
 * run would measure the good build alone). Returns 1 when it built (into the cache, where the
 * run finds it), 0 with ret's skip, or the exit status said. */
static int build_first(Bisect *b, const char *commit, Step *ret) {
        SpecBuild at = b->variant->build;
        at.rev = (char *) commit;
        BuildRequest rq = b->git;
        rq.build = &at;
        Build made = {};
        _cleanup_free_ char *why = NULL;
        int r = build_resolve(&rq, &made, &why);
        if (r >= 0) {
                fprintf(stderr, "alloclab bisect: building %s at %s ...\n", b->variant->name,
                        build_label(&made));
                r = build_make(&rq, &made);
        }
        if (r < 0)
                cli_error("bisect", "cannot build %.12s: %s", commit, why ? why : strerror(-r));
        if (r >= 0 && made.failure)
                *ret = (Step){ .outcome = OUTCOME_SKIP, .why = TAKE_PTR(made.failure) };
        bool built = r >= 0 && !ret->why;
        build_done(&made);
        return r < 0 ? EXIT_ENVIRONMENT : built;
}

/* Measures the variant at commit against the good commit: one stored run. */
static int measure_at(Bisect *b, const char *commit, Step *ret) {
        int built = build_first(b, commit, ret);
        if (built != 1)
                return built; /* 0: EXIT_OK, skipped */
        const char *names[2] = { "good", "candidate" }, *revs[2] = { b->good, commit };
        const Spec *s = b->spec;
        _cleanup_free_ char *yaml = NULL, *label = NULL;
        int r = spec_text_revisions(s->source, s->source_size, b->experiment, b->variant->name, names, revs,
                                    &yaml);
        if (r < 0) {
                cli_error("bisect", "cannot write the spec of a step: %s", strerror(-r));
                return EXIT_ENVIRONMENT;
        }
        _cleanup_(spec_freep) Spec *step = NULL;
        int e = cli_load_spec_text("bisect", s->path, yaml, &step);
        if (e != EXIT_OK)
                return e;
        if (asprintf(&label, "bisect %s at %.12s", b->variant->name, commit) < 0)
                return EXIT_ENVIRONMENT;
        MeasureOptions o = b->measure;
        o.silent = true;
        o.label = label;
        o.commit = commit;
        int64_t run = 0;
        e = cli_measure("bisect", step, &o, &run);
        if (run == 0 || (e != EXIT_OK && e != EXIT_FAILURES && e != EXIT_EXCLUDED))
                return e == EXIT_OK ? EXIT_ENVIRONMENT : e;
        if ((e = judge(b, run, ret)) == EXIT_OK && ret->outcome != OUTCOME_SKIP)
                b->measured++; /* a commit that does not build is not measured */
        return e;
}

static void print_step(Bisect *b, const char *commit, const Step *st) {
        _cleanup_free_ char *name = describe(b, commit);
        if (st->outcome == OUTCOME_SKIP) {
                printf("  %-48.48s does not build: skipped\n", name);
                return;
        }
        printf("  %-48.48s %.3fx [%.3f, %.3f] %s, worse in %zu of %zu cells: %s (run %lld)\n", name,
               st->ratio, st->lo, st->hi, st->why ? st->why : "?", st->n_worse, st->n_cells,
               st->outcome == OUTCOME_BAD         ? "bad"
               : st->outcome == OUTCOME_UNDECIDED ? "cannot tell"
                                                  : "good",
               (long long) st->run);
        fflush(stdout);
}

/* A commit worse by min_effect or more that the run cannot tell from noise: neither good nor bad
 * can be said of it (calling it good would blame a later commit). */
static int undecided(const Bisect *b, const char *commit) {
        cli_error(
                "bisect",
                "%.12s is worse by at least %.3g%% in some cell, but not significantly with %u samples: "
                "it can be called neither good nor bad; measure with more (--samples), on a quieter machine",
                commit, 100 * b->spec->min_effect,
                b->measure.samples ? b->measure.samples : b->spec->samples);
        return EXIT_UNDECIDED;
}

/* The commits after good up to bad (bad last), oldest first, on the paths between them. */
static int commits_between(Bisect *b, const char *bad, char ***ret) {
        _cleanup_free_ char *range = NULL, *list = NULL;
        if (asprintf(&range, "%s..%s", b->good, bad) < 0)
                return EXIT_ENVIRONMENT;
        const char *args[] = { "git", "rev-list", "--reverse", "--ancestry-path", range, NULL };
        if (build_git(&b->git, b->repo, args, &list) != 0) {
                cli_error("bisect", "cannot list the commits %s in %s", range, b->repo);
                return EXIT_ENVIRONMENT;
        }
        for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n"))
                if (strv_append(ret, line) < 0)
                        return EXIT_ENVIRONMENT;
        if (strv_length(*ret) == 0) {
                cli_error("bisect", "no commit leads from --good to --bad: is --good an ancestor of --bad?");
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* The binary search over commits[0..n) (commits[n-1] is bad): the middle of what is left, or
 * the nearest not skipped. */
static int search(Bisect *b, char **commits) {
        size_t n = strv_length(commits);
        ssize_t lo = -1, hi = (ssize_t) n - 1; /* lo good (-1: --good), hi bad */
        _cleanup_free_ bool *skipped = calloc(n, sizeof(bool));
        if (!skipped)
                return EXIT_ENVIRONMENT;
        for (;;) {
                ssize_t mid = -1, middle = lo + (hi - lo) / 2;
                for (ssize_t d = 0; mid < 0 && d < hi - lo; d++)
                        for (int side = -1; side <= 1 && mid < 0; side += 2) {
                                ssize_t i = middle + side * d;
                                if (i > lo && i < hi && !skipped[i])
                                        mid = i;
                        }
                if (mid < 0)
                        break;
                Step st = {};
                int e = measure_at(b, commits[mid], &st);
                if (e != EXIT_OK) {
                        free(st.why);
                        return e;
                }
                print_step(b, commits[mid], &st);
                if (st.outcome == OUTCOME_UNDECIDED) {
                        free(st.why);
                        return undecided(b, commits[mid]);
                }
                if (st.outcome == OUTCOME_SKIP)
                        skipped[mid] = true;
                else if (st.outcome == OUTCOME_BAD)
                        hi = mid;
                else
                        lo = mid;
                free(st.why);
        }
        _cleanup_free_ char *first = describe(b, commits[hi]);
        if (hi - lo == 1)
                printf("first bad commit: %s\n", first);
        else {
                printf("the first bad commit is one of these (the others do not build):\n");
                for (ssize_t i = lo + 1; i <= hi; i++) {
                        _cleanup_free_ char *name = describe(b, commits[i]);
                        printf("  %s\n", name);
                }
        }
        printf("%u commits measured (both ends included), %zu between the ends\n", b->measured, n - 1);
        return EXIT_OK;
}

typedef struct BisectArgs {
        const char *variant, *good, *bad, *at;
} BisectArgs;

static int parse_options(int argc, char **argv, Bisect *b, BisectArgs *a) {
        static const struct option options[] = {
                { "variant", required_argument, NULL, 'v' },
                { "good", required_argument, NULL, 'g' },
                { "bad", required_argument, NULL, 'b' },
                { "at", required_argument, NULL, 'a' },
                { "db", required_argument, NULL, 'd' },
                { "samples", required_argument, NULL, 's' },
                {},
        };
        optind = 1;
        for (int c; (c = getopt_long(argc, argv, "", options, NULL)) >= 0;) {
                unsigned long long v;
                switch (c) {
                case 'v':
                        a->variant = optarg;
                        break;
                case 'g':
                        a->good = optarg;
                        break;
                case 'b':
                        a->bad = optarg;
                        break;
                case 'a':
                        a->at = optarg;
                        break;
                case 'd':
                        b->measure.db_path = optarg;
                        break;
                case 's':
                        if (cli_parse_uint(optarg, SPEC_MAX_SAMPLES, &v) < 0 || v == 0) {
                                cli_error("bisect", "--samples must be between 1 and %d", SPEC_MAX_SAMPLES);
                                return EXIT_USAGE;
                        }
                        b->measure.samples = (unsigned) v;
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind + 1 != argc || !a->variant || !a->good || !a->bad == !a->at) {
                cli_error(
                        "bisect",
                        "expected SPEC, --variant, --good, and --bad or --at (see alloclab bisect --help)");
                return EXIT_USAGE;
        }
        return EXIT_OK;
}

/* The variant to bisect: built from a git repository, and not the baseline. */
static int find_variant(Bisect *b, const char *name) {
        const Spec *s = b->spec;
        for (size_t v = 0; v < s->n_variants; v++)
                if (strcmp(s->variants[v].name, name) == 0)
                        b->variant = &s->variants[v];
        if (!b->variant) {
                cli_error("bisect", "%s has no variant %s", s->path, name);
                return EXIT_USAGE;
        }
        if (!b->variant->build.source) {
                cli_error("bisect",
                          "variant %s is not built from source (give it a build: with a git repository)",
                          name);
                return EXIT_USAGE;
        }
        Build where = {};
        _cleanup_free_ char *why = NULL;
        b->git = (BuildRequest){ .build = &b->variant->build,
                                 .caller_env = environ,
                                 .timeout_ns = b->spec->timeout_ns,
                                 .cancel_fd = -1 };
        int r = build_resolve(&b->git, &where, &why);
        if (r >= 0 && !where.commit)
                why = strdup("its source is not a git repository");
        if (r < 0 || !where.commit) {
                cli_error("bisect", "variant %s: %s", name, why ? why : strerror(-r));
                build_done(&where);
                return EXIT_USAGE;
        }
        b->repo = TAKE_PTR(where.source);
        build_done(&where);
        snprintf(b->experiment, sizeof(b->experiment), "%.57s-bisect", s->experiment);
        return EXIT_OK;
}

int cmd_bisect(int argc, char **argv) {
        if (cli_wants_help(argc, argv, bisect_usage))
                return EXIT_OK;
        _cleanup_(bisect_done) Bisect b = { .measure = { .format = FORMAT_TABLE } };
        BisectArgs a = {};
        int e = parse_options(argc, argv, &b, &a);
        if (e != EXIT_OK)
                return e;
        _cleanup_(spec_freep) Spec *spec = NULL;
        if ((e = cli_load_spec("bisect", argv[optind], &spec)) != EXIT_OK)
                return a.at ? GIT_BISECT_ABORT : e;
        b.spec = spec;
        _cleanup_free_ char *bad = NULL;
        if ((e = find_variant(&b, a.variant)) != EXIT_OK ||
            (e = commit_of(&b, a.good, &b.good)) != EXIT_OK ||
            (e = commit_of(&b, a.at ? a.at : a.bad, &bad)) != EXIT_OK)
                return a.at ? GIT_BISECT_ABORT : e;

        _cleanup_free_ char *good_name = describe(&b, b.good), *bad_name = describe(&b, bad);
        Step st = {};
        if (a.at) {
                printf("alloclab bisect: %s at %s against %s\n", a.variant, bad_name, good_name);
                e = measure_at(&b, bad, &st);
                if (e == EXIT_OK)
                        print_step(&b, bad, &st);
                free(st.why);
                /* git bisect stops where a guess would misplace the blame. */
                if (e == EXIT_OK && st.outcome == OUTCOME_UNDECIDED)
                        (void) undecided(&b, bad);
                return e != EXIT_OK || st.outcome == OUTCOME_UNDECIDED ? GIT_BISECT_ABORT
                       : st.outcome == OUTCOME_SKIP                    ? GIT_BISECT_SKIP
                                                                       : st.outcome == OUTCOME_BAD;
        }
        if (strcmp(b.good, bad) == 0) {
                cli_error("bisect", "--good and --bad are the same commit, %.12s: nothing between them",
                          bad);
                return EXIT_USAGE;
        }
        _cleanup_strv_free_ char **commits = NULL;
        if ((e = commits_between(&b, bad, &commits)) != EXIT_OK)
                return e;
        printf("alloclab bisect: %s of %s, from good %s to bad %s: %zu commits\n", a.variant,
               spec->experiment, good_name, bad_name, strv_length(commits));
        printf("each commit is measured in a run of its own beside %s built at the good commit, "
               "interleaved: "
               "the ratio is the commit's to the good one (the change of its ratio to any baseline); a "
               "commit "
               "is bad when worse by at least %.3g%% with significance in some cell\n",
               a.variant, 100 * spec->min_effect);
        b.measured = 1; /* the good end, measured in every run */
        e = measure_at(&b, bad, &st);
        if (e == EXIT_OK)
                print_step(&b, bad, &st);
        Outcome end = st.outcome;
        free(st.why);
        if (e != EXIT_OK)
                return e;
        if (end == OUTCOME_UNDECIDED)
                return undecided(&b, bad);
        if (end != OUTCOME_BAD) {
                cli_error("bisect", "%s: nothing to bisect (see the run above)",
                          end == OUTCOME_SKIP
                                  ? "the bad end does not build"
                                  : "the bad end is not worse than the good one by min_effect here");
                return EXIT_NOTHING_TO_BISECT;
        }
        return search(&b, commits);
}
