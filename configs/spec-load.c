/* SPDX-License-Identifier: MIT */
/*
 * Spec loader: YAML tree -> validated Spec, through declarative field tables (one row per
 * key: name, parser, offset, required). The loader reports every problem it can find in one
 * pass, each with the position of the offending node; it stops only on -ENOMEM.
 *
 * Invariants of a loaded Spec: every template names a defined parameter, baseline and
 * reference name existing variants, every number is within its SPEC_MAX_* limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configs/catalog.h"
#include "configs/spec.h"
#include "configs/spec-size.h"
#include "configs/schema.h"
#include "configs/yamltree.h"
#include "util/io.h"
#include "util/strv.h"
#include "util/suggest.h"
#include "util/template.h"
#include "util/text.h"
#include "util/units.h"

/* A scalar that may hold {param} placeholders, and what it becomes in a child. */
typedef struct Template {
        const YamlNode *node;
        bool path;     /* a path (cwd, stdin, verify file), else an argument or a variable */
        bool literal;  /* no template at all (the calibration command): only measured */
        size_t prefix; /* bytes before the template in what the child gets ("KEY=") ... */
        size_t skip;   /* ... or of the node's value that are not the template ("file:") */
} Template;

typedef struct SpecState {
        Spec *spec;
        const YamlNode *baseline; /* resolved once all variants are known */
        const YamlNode *reference;
        const YamlNode *aa_check;  /* the key's value, for errors about the A/A copy */
        const YamlNode *samples;   /* the key's value, for errors about adaptive samples */
        const YamlNode *calibrate; /* the key's value when it is a command, for its size */
        Template *templates;
        size_t n_templates;
} SpecState;

static SpecState *state(Loader *l) {
        return l->userdata;
}

static int remember(Loader *l, Template t) {
        Template *grown = realloc(state(l)->templates, (state(l)->n_templates + 1) * sizeof(Template));
        if (!grown)
                return -ENOMEM;
        state(l)->templates = grown;
        state(l)->templates[state(l)->n_templates++] = t;
        return 0;
}

static int remember_argument(Loader *l, const YamlNode *n) {
        return remember(l, (Template){ .node = n });
}

static int parse_path_template(Loader *l, const YamlNode *n, void *field) {
        int r = schema_parse_string(l, n, field);
        return r < 0 ? r : remember(l, (Template){ .node = n, .path = true });
}

static int parse_experiment_name(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "experiment");
        if (r < 0)
                return r;
        if (!schema_is_identifier(n->value, true))
                return schema_error(l, n,
                                    "experiment name '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                                    n->value);
        return schema_parse_string(l, n, field);
}

/* A command is a list of arguments, or a single string run with /bin/sh -c; `what` names the key
 * in messages. */
static int parse_argv(Loader *l, const YamlNode *n, const char *what, char ***field) {
        _cleanup_strv_free_ char **argv = NULL;
        int r;

        if (n && n->kind == YAMLTREE_NODE_SCALAR && !yamltree_is_null(n)) {
                if ((r = strv_append(&argv, "/bin/sh")) < 0 || (r = strv_append(&argv, "-c")) < 0 ||
                    (r = strv_append(&argv, n->value)) < 0 || (r = remember_argument(l, n)) < 0)
                        return r;
        } else {
                r = schema_expect_kind(l, n, YAMLTREE_NODE_SEQUENCE, what);
                if (r < 0)
                        return r;
                if (n->n_items == 0)
                        return schema_error(l, n, "%s must not be empty", what);
                if (n->n_items > SPEC_MAX_ARGS)
                        return schema_error(l, n, "%s has more than %d arguments", what, SPEC_MAX_ARGS);
                for (size_t i = 0; i < n->n_items; i++) {
                        r = schema_expect_scalar(l, n->items[i], "argument");
                        if (r < 0)
                                return r;
                        if ((r = strv_append(&argv, n->items[i]->value)) < 0 ||
                            (r = remember_argument(l, n->items[i])) < 0)
                                return r;
                }
                if (argv[0][0] == 0)
                        return schema_error(l, n->items[0], "%s: the program name must not be empty", what);
        }
        strv_free(*field);
        *field = TAKE_PTR(argv);
        return 0;
}

static int parse_command(Loader *l, const YamlNode *n, void *field) {
        return parse_argv(l, n, "command", field);
}

static int parse_setup(Loader *l, const YamlNode *n, void *field) {
        return parse_argv(l, n, "setup", &((Spec *) field)->hooks[SPEC_HOOK_SETUP]);
}

static int parse_prepare(Loader *l, const YamlNode *n, void *field) {
        return parse_argv(l, n, "prepare", &((Spec *) field)->hooks[SPEC_HOOK_PREPARE]);
}

static int parse_cleanup(Loader *l, const YamlNode *n, void *field) {
        return parse_argv(l, n, "cleanup", &((Spec *) field)->hooks[SPEC_HOOK_CLEANUP]);
}

static int parse_env(Loader *l, const YamlNode *n, void *field) {
        _cleanup_strv_free_ char **env = NULL;
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_MAPPING, "env");
        if (r < 0)
                return r;
        if (n->n_items > SPEC_MAX_ENV)
                return schema_error(l, n, "env has more than %d variables", SPEC_MAX_ENV);
        for (size_t i = 0; i < n->n_items; i++) {
                const YamlNode *k = n->keys[i], *v = n->items[i];
                if (!schema_is_identifier(k->value, false)) {
                        r = schema_error(l, k, "'%s' is not a valid environment variable name", k->value);
                        continue;
                }
                if (strcmp(k->value, "LD_PRELOAD") == 0) {
                        r = schema_error(l, k, "set LD_PRELOAD with 'preload:', not in env");
                        continue;
                }
                if (strncmp(k->value, "ALLOCLAB_", 9) == 0) {
                        r = schema_error(l, k, "'%s': the ALLOCLAB_ prefix is reserved", k->value);
                        continue;
                }
                int q = schema_expect_scalar(l, v, "environment value");
                if (q < 0) {
                        r = q;
                        continue;
                }
                if ((q = strv_env_set(&env, k->value, v->value)) < 0 ||
                    (q = remember(l, (Template){ .node = v, .prefix = strlen(k->value) + 1 })) < 0)
                        return q;
        }
        if (r < 0)
                return r;
        strv_free(*(char ***) field);
        *(char ***) field = TAKE_PTR(env);
        return 0;
}

static int parse_preload(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "preload");
        if (r < 0)
                return r;
        if (n->value[0] != '/' && strchr(n->value, '/'))
                return schema_error(l, n, "preload path '%s' must be absolute", n->value);
        if (n->value[0] != '/' && !catalog_find(n->value)) {
                _cleanup_free_ char *said = catalog_unknown(n->value);
                return said ? schema_error(l, n, "%s", said) : -ENOMEM;
        }
        return schema_parse_string(l, n, field);
}

static int parse_absolute_path(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "library");
        if (r < 0)
                return r;
        if (n->value[0] != '/')
                return schema_error(l, n, "library path '%s' must be absolute", n->value);
        return schema_parse_string(l, n, field);
}

static int parse_symbol_prefix(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "prefix");
        if (r < 0)
                return r;
        if (strlen(n->value) > 15 || (n->value[0] && !schema_is_identifier(n->value, false)))
                return schema_error(l, n, "prefix '%s' must be a C identifier of at most 15 characters",
                                    n->value);
        return schema_parse_string(l, n, field);
}

static const Field forward_fields[] = {
        { "library", parse_absolute_path, offsetof(SpecVariant, forward_library), false },
        { "prefix", parse_symbol_prefix, offsetof(SpecVariant, forward_prefix), true },
};

static int parse_forward(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_fields(l, n, "forward", forward_fields, ELEMENTSOF(forward_fields), field);
}

static int parse_build_source(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "source");
        if (r < 0)
                return r;
        if (n->value[0] == 0 || !text_is_clean(n->value))
                return schema_error(l, n, "source must name a git repository or a directory");
        return schema_parse_string(l, n, field);
}

/* A revision git takes as one (v1.2, HEAD~3, a hash): one word, never an option. */
static int parse_build_rev(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "rev");
        if (r < 0)
                return r;
        const char *v = n->value;
        if (v[0] == 0 || v[0] == '-' || strlen(v) > 255 || v[strcspn(v, " \t")] != 0 || !text_is_clean(v))
                return schema_error(
                        l, n, "rev '%s' must be a commit, tag or branch: one word, not starting with '-'",
                        v);
        return schema_parse_string(l, n, field);
}

static int parse_build_family(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "family");
        if (r < 0)
                return r;
        const CatalogEntry *e = catalog_find(n->value);
        if (!e || !e->build_commands)
                return schema_error(l, n, "family '%s' has no build defaults in alloclab (known: %s)",
                                    n->value, catalog_build_families());
        return schema_parse_string(l, n, field);
}

/* One shell command line, or a list of them. */
static int parse_build_commands(Loader *l, const YamlNode *n, void *field) {
        _cleanup_strv_free_ char **lines = NULL;
        int r;
        if (n && n->kind == YAMLTREE_NODE_SCALAR) {
                if ((r = strv_append(&lines, n->value)) < 0)
                        return r;
        } else {
                if ((r = schema_expect_kind(l, n, YAMLTREE_NODE_SEQUENCE, "commands")) < 0)
                        return r;
                if (n->n_items == 0 || n->n_items > SPEC_MAX_ARGS)
                        return schema_error(l, n, "commands must list 1 to %d command lines", SPEC_MAX_ARGS);
                for (size_t i = 0; i < n->n_items; i++) {
                        if ((r = schema_expect_scalar(l, n->items[i], "command line")) < 0)
                                return r;
                        if ((r = strv_append(&lines, n->items[i]->value)) < 0)
                                return r;
                }
        }
        for (size_t i = 0; lines[i]; i++)
                if (lines[i][strspn(lines[i], " \t")] == 0)
                        return schema_error(l, n->kind == YAMLTREE_NODE_SEQUENCE ? n->items[i] : n,
                                            "a build command line must not be empty");
        strv_free(*(char ***) field);
        *(char ***) field = TAKE_PTR(lines);
        return 0;
}

/* A file of the built tree: relative, and inside it. */
static int parse_build_output(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "output");
        if (r < 0)
                return r;
        const char *v = n->value;
        bool climbs = strcmp(v, "..") == 0 || strncmp(v, "../", 3) == 0 || strstr(v, "/../") ||
                      (strlen(v) >= 3 && strcmp(v + strlen(v) - 3, "/..") == 0);
        if (v[0] == 0 || v[0] == '/' || climbs || !text_is_clean(v))
                return schema_error(l, n, "output '%s' must be a path inside the built tree, relative to it",
                                    v);
        return schema_parse_string(l, n, field);
}

static const Field build_fields[] = {
        { "source", parse_build_source, offsetof(SpecVariant, build.source), true },
        { "rev", parse_build_rev, offsetof(SpecVariant, build.rev), false },
        { "family", parse_build_family, offsetof(SpecVariant, build.family), false },
        { "commands", parse_build_commands, offsetof(SpecVariant, build.commands), false },
        { "output", parse_build_output, offsetof(SpecVariant, build.output), false },
};

static int parse_build(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_fields(l, n, "build", build_fields, ELEMENTSOF(build_fields), field);
}

static const Field variant_fields[] = {
        { "preload", parse_preload, offsetof(SpecVariant, preload), false },
        { "forward", parse_forward, 0, false },
        { "build", parse_build, 0, false },
        { "env", parse_env, offsetof(SpecVariant, env), false },
        { "command", parse_command, offsetof(SpecVariant, command), false },
        { "cwd", parse_path_template, offsetof(SpecVariant, cwd), false },
};

/* map[key], or NULL. */
static const YamlNode *value_of(const YamlNode *map, const char *key) {
        for (size_t i = 0; map && map->kind == YAMLTREE_NODE_MAPPING && i < map->n_items; i++)
                if (strcmp(map->keys[i]->value, key) == 0)
                        return map->items[i];
        return NULL;
}

/* The position of map[key]'s value (of the key itself for a null value), or `otherwise`. */
static SpecPosition position_of(const YamlNode *map, const char *key, SpecPosition otherwise) {
        for (size_t i = 0; map && map->kind == YAMLTREE_NODE_MAPPING && i < map->n_items; i++)
                if (strcmp(map->keys[i]->value, key) == 0) {
                        const YamlNode *at = map->items[i] ? map->items[i] : map->keys[i];
                        return (SpecPosition){ at->line, at->column };
                }
        return otherwise;
}

/* Where each variable of map[key] (an env mapping, parsed into env in its order) is written:
 * *ret holds as many positions as env variables, or stays NULL where there is no such map. */
static int env_var_positions(const YamlNode *map, char *const *env, SpecPosition **ret) {
        const YamlNode *vars = NULL;
        for (size_t i = 0; map && map->kind == YAMLTREE_NODE_MAPPING && i < map->n_items; i++)
                if (strcmp(map->keys[i]->value, "env") == 0)
                        vars = map->items[i];
        if (!vars || vars->kind != YAMLTREE_NODE_MAPPING || vars->n_items != strv_length(env))
                return 0;
        SpecPosition *at = calloc(vars->n_items + 1, sizeof(*at));
        if (!at)
                return -ENOMEM;
        for (size_t i = 0; i < vars->n_items; i++)
                at[i] = (SpecPosition){ vars->keys[i]->line, vars->keys[i]->column };
        free(*ret);
        *ret = at;
        return 0;
}

static SpecPosition *positions_copy(const SpecPosition *at, size_t n) {
        SpecPosition *copy = at ? calloc(n + 1, sizeof(*copy)) : NULL;
        return copy ? memcpy(copy, at, n * sizeof(*copy)) : NULL;
}

/* Positions of what each variant names, for the plan's messages (runner/plan.c): the plan finds
 * a missing file, and says where the spec names it; and of each environment variable, for the
 * check of allocator options (cli/cmd-run.c). */
static int remember_positions(Spec *s, const YamlNode *root) {
        const YamlNode *variants = NULL;
        for (size_t i = 0; i < root->n_items; i++)
                if (strcmp(root->keys[i]->value, "allocators") == 0)
                        variants = root->items[i];
        SpecPosition command = position_of(root, "command", (SpecPosition){ root->line, root->column });
        SpecPosition cwd = position_of(root, "cwd", (SpecPosition){});
        for (SpecHook h = 0; h < _SPEC_HOOK_MAX; h++)
                s->hook_at[h] = position_of(root, spec_hook_to_string(h), (SpecPosition){});
        s->stdin_at = position_of(root, "stdin", (SpecPosition){});
        s->metric_at = position_of(root, "metric", (SpecPosition){});
        for (size_t v = 0; v < s->n_variants && variants && v < variants->n_items; v++) {
                SpecVariant *sv = &s->variants[v];
                const YamlNode *key = variants->keys[v], *map = variants->items[v];
                sv->preload_at = position_of(map, "preload", (SpecPosition){ key->line, key->column });
                sv->forward_at = position_of(value_of(map, "forward"), "library", sv->preload_at);
                sv->build.at = position_of(map, "build", sv->preload_at);
                const YamlNode *build = value_of(map, "build");
                sv->build.source_at = position_of(build, "source", sv->build.at);
                sv->build.rev_at = position_of(build, "rev", sv->build.at);
                sv->command_at = position_of(map, "command", command);
                sv->cwd_at = position_of(map, "cwd", cwd);
                sv->env_at = position_of(map, "env", (SpecPosition){});
                if (env_var_positions(map, sv->env, &sv->env_var_at) < 0)
                        return -ENOMEM;
        }
        return env_var_positions(root, s->env, &s->env_var_at);
}

static int parse_variants(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_MAPPING, "allocators");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return schema_error(l, n, "allocators must name at least one variant");
        if (n->n_items > SPEC_MAX_VARIANTS)
                return schema_error(l, n, "more than %d variants", SPEC_MAX_VARIANTS);
        s->variants = calloc(n->n_items, sizeof(SpecVariant));
        if (!s->variants)
                return -ENOMEM;
        s->n_variants = n->n_items;
        for (size_t i = 0; i < n->n_items; i++) {
                SpecVariant *v = &s->variants[i];
                if (!(v->name = strdup(n->keys[i]->value)))
                        return -ENOMEM;
                if (!schema_is_identifier(v->name, true)) {
                        r = schema_error(l, n->keys[i],
                                         "variant name '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                                         v->name);
                        continue;
                }
                if (yamltree_is_null(n->items[i]))
                        continue; /* "glibc:" alone: a variant with nothing to change */
                int q = schema_parse_fields(l, n->items[i], "allocator", variant_fields,
                                            ELEMENTSOF(variant_fields), v);
                if (q == -ENOMEM)
                        return q;
                if (q >= 0 && v->build.source && (v->preload || v->forward_library))
                        q = schema_error(
                                l, n->keys[i],
                                "variant '%s': build makes the allocator, and %s names one: keep one",
                                v->name, v->preload ? "preload" : "forward's library");
                else if (q >= 0 && v->forward_prefix && !v->forward_library && !v->build.source)
                        q = schema_error(l, n->keys[i],
                                         "variant '%s': forward needs the library to forward to (library:, "
                                         "or a build: that makes it)",
                                         v->name);
                if (q < 0)
                        r = q;
        }
        return r;
}

static int parse_params(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_MAPPING, "params");
        if (r < 0)
                return r;
        if (n->n_items > SPEC_MAX_PARAMS)
                return schema_error(l, n, "more than %d parameters", SPEC_MAX_PARAMS);
        s->params = calloc(n->n_items, sizeof(SpecParam));
        if (!s->params && n->n_items > 0)
                return -ENOMEM;
        s->n_params = n->n_items;
        size_t cells = 1;
        for (size_t i = 0; i < n->n_items; i++) {
                const YamlNode *k = n->keys[i], *v = n->items[i];
                SpecParam *p = &s->params[i];
                if (!(p->name = strdup(k->value)))
                        return -ENOMEM;
                if (!schema_is_identifier(k->value, false)) {
                        r = schema_error(l, k, "parameter name '%s' must be an identifier", k->value);
                        continue;
                }
                /* A single scalar is a one-value axis, convenient for pinning a parameter. */
                if (v && v->kind == YAMLTREE_NODE_SCALAR && !yamltree_is_null(v)) {
                        if (strv_append(&p->values, v->value) < 0)
                                return -ENOMEM;
                        p->n_values = 1;
                        continue;
                }
                int q = schema_expect_kind(l, v, YAMLTREE_NODE_SEQUENCE, "parameter values");
                if (q < 0) {
                        r = q;
                        continue;
                }
                if (v->n_items == 0) {
                        r = schema_error(l, v, "parameter '%s' has no values: the matrix is empty",
                                         k->value);
                        continue;
                }
                if (v->n_items > SPEC_MAX_PARAM_VALUES) {
                        r = schema_error(l, v, "parameter '%s' has more than %d values", k->value,
                                         SPEC_MAX_PARAM_VALUES);
                        continue;
                }
                for (size_t j = 0; j < v->n_items; j++) {
                        q = schema_expect_scalar(l, v->items[j], "parameter value");
                        if (q < 0) {
                                r = q;
                                break;
                        }
                        for (size_t m = 0; m < j; m++)
                                if (strcmp(v->items[m]->value, v->items[j]->value) == 0)
                                        q = schema_error(l, v->items[j],
                                                         "duplicate value '%s' for parameter '%s'",
                                                         v->items[j]->value, k->value);
                        if (q < 0) {
                                r = q;
                                break;
                        }
                        if (strv_append(&p->values, v->items[j]->value) < 0)
                                return -ENOMEM;
                        p->n_values++;
                }
                /* Saturates at the first excess, reported once after every parameter is named:
                 * a loaded-but-failed Spec still has a name for each of its n_params. */
                cells = cells > SPEC_MAX_CELLS ? cells : cells * v->n_items;
        }
        if (cells > SPEC_MAX_CELLS)
                r = schema_error(l, n, "the parameter matrix has more than %d cells", SPEC_MAX_CELLS);
        return r;
}

/* baseline and reference name variants that may come later in the file: keep the nodes and
 * resolve them once all variants are known. */
static int parse_baseline(Loader *l, const YamlNode *n, void *field) {
        (void) field;
        int r = schema_expect_scalar(l, n, "variant name");
        if (r >= 0)
                state(l)->baseline = n;
        return r;
}

static int parse_reference(Loader *l, const YamlNode *n, void *field) {
        (void) field;
        int r = schema_expect_scalar(l, n, "variant name");
        if (r >= 0)
                state(l)->reference = n;
        return r;
}

static int parse_samples_bound(Loader *l, const YamlNode *n, void *field) {
        uint64_t v;
        int r = schema_parse_uint(l, n, "samples bound", 2, SPEC_MAX_SAMPLES, &v);
        if (r >= 0)
                *(unsigned *) field = (unsigned) v;
        return r;
}

typedef struct SamplesRange {
        unsigned min, max;
} SamplesRange;

static const Field samples_fields[] = {
        { "min", parse_samples_bound, offsetof(SamplesRange, min), true },
        { "max", parse_samples_bound, offsetof(SamplesRange, max), true },
};

/* samples: N, auto, or {min: N, max: M} (adaptive between the two). */
static int parse_samples(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        state(l)->samples = n;
        if (n && n->kind == YAMLTREE_NODE_SCALAR && strcmp(n->value, "auto") == 0) {
                s->samples_auto = true;
                s->samples = SPEC_AUTO_MAX_SAMPLES;
                return 0;
        }
        if (n && n->kind == YAMLTREE_NODE_MAPPING) {
                SamplesRange range = {};
                int r = schema_parse_fields(l, n, "samples", samples_fields, ELEMENTSOF(samples_fields),
                                            &range);
                if (r < 0)
                        return r;
                if (range.min > range.max)
                        return schema_error(l, n, "samples: min %u is more than max %u", range.min,
                                            range.max);
                s->samples_auto = true;
                s->samples_min = range.min;
                s->samples = range.max;
                return 0;
        }
        uint64_t v;
        int r = schema_parse_uint(l, n, "samples", 1, SPEC_MAX_SAMPLES, &v);
        if (r >= 0)
                s->samples = (unsigned) v;
        return r;
}

static int parse_warmup(Loader *l, const YamlNode *n, void *field) {
        uint64_t v;
        int r = schema_parse_uint(l, n, "warmup", 0, SPEC_MAX_WARMUP, &v);
        if (r >= 0)
                *(unsigned *) field = (unsigned) v;
        return r;
}

static int parse_seed(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        int r = schema_parse_uint(l, n, "seed", 0, UINT64_MAX, &s->seed);
        if (r >= 0)
                s->has_seed = true;
        return r;
}

static int parse_timeout(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_quantity(l, n, "timeout", units_duration_ns, 1e9, "'60s', '500ms', '2m'",
                                     1000000, SPEC_MAX_TIMEOUT_NS, field);
}

static int parse_memory_timeline(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_quantity(l, n, "memory_timeline", units_duration_ns, 1e9, "'20ms', '100ms'",
                                     SPEC_MIN_TIMELINE_PERIOD_NS, SPEC_MAX_TIMELINE_PERIOD_NS, field);
}

static int parse_output_limit(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_quantity(l, n, "output_limit", units_size_bytes, 1, "'64MiB', '4096'", 1,
                                     SPEC_MAX_OUTPUT_LIMIT, field);
}

static int parse_memory_max(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_quantity(l, n, "memory_max", units_size_bytes, 1, "'512MiB', '2G'",
                                     SPEC_MIN_MEMORY_MAX, SPEC_MAX_MEMORY_MAX, field);
}

static int parse_pids_max(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_uint(l, n, "pids_max", 1, SPEC_MAX_PIDS_MAX, field);
}

static const char *const order_words[] = { "interleaved", "randomized", "blocked", NULL };
static const char *const verify_words[] = { "stdout", "none", "file:PATH", NULL };
static const char *const metric_words[] = { "wall",
                                            "user",
                                            "sys",
                                            "maxrss",
                                            "page_faults",
                                            "context_switches",
                                            "cpu_migrations",
                                            "cycles",
                                            "instructions",
                                            "dtlb_load_misses",
                                            "cache_misses",
                                            "reported:NAME",
                                            NULL };
static const char *const on_failure_words[] = { "continue", "stop", NULL };
static const char *const probe_words[] = { "smoke", "always", "never", "counters", NULL };
static const char *const outliers_words[] = { "flag", "exclude", NULL };
static const char *const correction_words[] = { "holm", "bh", "none", NULL };

/* One of two words into a bool field: true for the second. */
static int parse_either(Loader *l, const YamlNode *n, const char *what, const char *no, const char *yes,
                        void *field) {
        const char *const words[] = { no, yes, NULL };
        unsigned v;
        int r = schema_parse_keyword(l, n, what, words, &v, NULL);
        if (r >= 0)
                *(bool *) field = v == 1;
        return r;
}

static int parse_history(Loader *l, const YamlNode *n, void *field) {
        return parse_either(l, n, "history", "medians", "ratios", field);
}

static int parse_callgrind_threads(Loader *l, const YamlNode *n, void *field) {
        return parse_either(l, n, "callgrind_threads", "refuse", "accept", field);
}

static int parse_env_offset(Loader *l, const YamlNode *n, void *field) {
        return parse_either(l, n, "env_offset", "none", "random", field);
}

static int parse_outliers(Loader *l, const YamlNode *n, void *field) {
        unsigned v;
        int r = schema_parse_keyword(l, n, "outliers", outliers_words, &v, NULL);
        if (r >= 0)
                *(SpecOutliers *) field = (SpecOutliers) v;
        return r;
}

static int parse_correction(Loader *l, const YamlNode *n, void *field) {
        unsigned v;
        int r = schema_parse_keyword(l, n, "correction", correction_words, &v, NULL);
        if (r >= 0)
                *(SpecCorrection *) field = (SpecCorrection) v;
        return r;
}

static int parse_probe(Loader *l, const YamlNode *n, void *field) {
        unsigned v;
        int r = schema_parse_keyword(l, n, "probe", probe_words, &v, NULL);
        if (r >= 0)
                *(SpecProbe *) field = (SpecProbe) v;
        return r;
}

/* preload_ignore: [PROGRAM...], base names of programs (or "*"), at most SPEC_MAX_VARIANTS. */
static int parse_preload_ignore(Loader *l, const YamlNode *n, void *field) {
        char ***list = field;
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_SEQUENCE, "preload_ignore");
        if (r < 0)
                return r;
        if (n->n_items > SPEC_MAX_VARIANTS)
                return schema_error(l, n, "preload_ignore: more than %d programs", SPEC_MAX_VARIANTS);
        for (size_t i = 0; i < n->n_items; i++) {
                const YamlNode *item = n->items[i];
                if ((r = schema_expect_scalar(l, item, "preload_ignore entry")) < 0)
                        return r;
                if (!*item->value || strchr(item->value, '/'))
                        return schema_error(
                                l, item,
                                "preload_ignore: expected a program's base name (or \"*\"), got '%s'",
                                item->value);
                if (strv_append(list, item->value) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int parse_order(Loader *l, const YamlNode *n, void *field) {
        unsigned v;
        int r = schema_parse_keyword(l, n, "order", order_words, &v, NULL);
        if (r >= 0)
                *(SpecOrder *) field = (SpecOrder) v;
        return r;
}

static int parse_on_failure(Loader *l, const YamlNode *n, void *field) {
        unsigned v;
        int r = schema_parse_keyword(l, n, "on_failure", on_failure_words, &v, NULL);
        if (r >= 0)
                *(SpecOnFailure *) field = (SpecOnFailure) v;
        return r;
}

/* A keyword that may carry an argument ("file:PATH"): the argument is copied into *ret_arg. */
static int parse_keyword_arg(Loader *l, const YamlNode *n, const char *what, const char *const *words,
                             unsigned *ret, char **ret_arg) {
        const char *arg = NULL;
        int r = schema_parse_keyword(l, n, what, words, ret, &arg);
        if (r < 0 || !arg)
                return r;
        free(*ret_arg);
        *ret_arg = strdup(arg);
        return *ret_arg ? 0 : -ENOMEM;
}

static int parse_verify(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        unsigned v;
        int r = parse_keyword_arg(l, n, "verify", verify_words, &v, &s->verify_path);
        if (r < 0)
                return r;
        s->verify = (SpecVerify) v;
        if (s->verify != SPEC_VERIFY_FILE)
                return 0;
        return remember(
                l, (Template){ .node = n, .path = true, .skip = strlen(n->value) - strlen(s->verify_path) });
}

static int parse_metric(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        unsigned v;
        if (n->kind == YAMLTREE_NODE_SCALAR && schema_is_identifier(n->value, true) &&
            (spec_timeline_figure(n->value) || spec_probe_figure(n->value))) {
                s->metric = SPEC_METRIC_REPORTED;
                return (s->metric_name = strdup(n->value)) ? 0 : -ENOMEM;
        }
        int r = parse_keyword_arg(l, n, "metric", metric_words, &v, &s->metric_name);
        if (r < 0)
                return r;
        s->metric = (SpecMetric) v;
        if (s->metric == SPEC_METRIC_REPORTED && !schema_is_identifier(s->metric_name, true))
                return schema_error(
                        l, n, "reported metric name '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                        s->metric_name);
        return 0;
}

static int parse_metric_from(Loader *l, const YamlNode *n, void *field) {
        static const char *const words[] = { "stdout", "stderr", NULL };
        unsigned v;
        int r = schema_parse_keyword(l, n, "from", words, &v, NULL);
        if (r >= 0)
                *(bool *) field = v == 1;
        return r;
}

static int parse_metric_better(Loader *l, const YamlNode *n, void *field) {
        static const char *const words[] = { "lower", "higher", NULL };
        unsigned v;
        int r = schema_parse_keyword(l, n, "better", words, &v, NULL);
        if (r >= 0)
                *(bool *) field = v == 1;
        return r;
}

/* A POSIX extended regular expression that compiles, with at most one group. */
/* A POSIX extended regular expression (matched line by line) that compiles: its groups into
 * *ret_groups. */
static int check_regex(Loader *l, const YamlNode *n, const char *what, size_t *ret_groups) {
        int r = schema_expect_scalar(l, n, what);
        if (r < 0)
                return r;
        regex_t re;
        int e = regcomp(&re, n->value, REG_EXTENDED | REG_NEWLINE);
        if (e != 0) {
                char why[256];
                regerror(e, &re, why, sizeof(why));
                return schema_error(l, n, "%s is not a POSIX extended regular expression: %s", what, why);
        }
        *ret_groups = re.re_nsub;
        regfree(&re);
        /* Perl's classes compile, as a letter: a pattern with \d would never match a digit. */
        static const char *const posix[][2] = { { "d", "[0-9]" },        { "D", "[^0-9]" },
                                                { "s", "[[:space:]]" },  { "S", "[^[:space:]]" },
                                                { "w", "[[:alnum:]_]" }, { "W", "[^[:alnum:]_]" } };
        for (const char *c = n->value; *c; c++) {
                if (*c != '\\' || !c[1])
                        continue;
                for (size_t i = 0; i < ELEMENTSOF(posix); i++)
                        if (c[1] == posix[i][0][0])
                                return schema_error(
                                        l, n,
                                        "%s: '\\%c' is Perl's, not POSIX extended regular "
                                        "expression syntax (it would match the letter '%c'): write %s",
                                        what, c[1], c[1], posix[i][1]);
                c++; /* an escaped character, \\ included */
        }
        return 0;
}

static int parse_metric_pattern(Loader *l, const YamlNode *n, void *field) {
        size_t groups;
        int r = check_regex(l, n, "pattern", &groups);
        if (r < 0)
                return r;
        if (groups > 1)
                return schema_error(l, n,
                                    "pattern has %zu groups: the value is its one group's text, or the "
                                    "whole match without a group",
                                    groups);
        return schema_parse_string(l, n, field);
}

/* verify_ignore: [REGEX, ...]: lines of the verified output left out of the comparison. */
static int parse_verify_ignore(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_SEQUENCE, "verify_ignore");
        if (r < 0)
                return r;
        if (n->n_items == 0 || n->n_items > SPEC_MAX_VERIFY_IGNORE)
                return schema_error(l, n, "verify_ignore takes 1 to %d patterns", SPEC_MAX_VERIFY_IGNORE);
        for (size_t i = 0; i < n->n_items; i++) {
                size_t groups;
                int q = check_regex(l, n->items[i], "verify_ignore pattern", &groups);
                if (q == -ENOMEM)
                        return q;
                if (q < 0) {
                        r = q;
                        continue;
                }
                if (strv_append((char ***) field, n->items[i]->value) < 0)
                        return -ENOMEM;
        }
        return r;
}

/* Text shown after a metric's values: printable, at most SPEC_MAX_UNIT bytes. */
static int parse_metric_unit(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "unit");
        if (r < 0)
                return r;
        size_t len = strlen(n->value);
        bool printable = len > 0;
        for (const unsigned char *c = (const unsigned char *) n->value; *c; c++)
                printable &= *c >= 0x20 && *c != 0x7f;
        if (!printable || len > SPEC_MAX_UNIT)
                return schema_error(l, n, "unit must be 1-%d printable bytes", SPEC_MAX_UNIT);
        return schema_parse_string(l, n, field);
}

static const Field metric_def_fields[] = {
        { "pattern", parse_metric_pattern, offsetof(SpecMetricDef, pattern), false },
        { "from", parse_metric_from, offsetof(SpecMetricDef, from_stderr), false },
        { "unit", parse_metric_unit, offsetof(SpecMetricDef, unit), false },
        { "better", parse_metric_better, offsetof(SpecMetricDef, higher_is_better), false },
};

/* metrics: {NAME: {pattern, from, unit, better}}: metrics read from the output, and how any
 * reported metric is shown and judged. */
static int parse_metrics(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_MAPPING, "metrics");
        if (r < 0)
                return r;
        if (n->n_items > SPEC_MAX_METRIC_DEFS)
                return schema_error(l, n, "more than %d metrics", SPEC_MAX_METRIC_DEFS);
        if (!(s->metric_defs = calloc(n->n_items + 1, sizeof(SpecMetricDef))))
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                const YamlNode *k = n->keys[i], *v = n->items[i];
                SpecMetricDef *d = &s->metric_defs[s->n_metric_defs++];
                if (!(d->name = strdup(k->value)))
                        return -ENOMEM;
                int q = 0;
                if (!schema_is_identifier(k->value, true))
                        q = schema_error(l, k,
                                         "metric name '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                                         k->value);
                else if (v && !yamltree_is_null(v) &&
                         (q = schema_parse_fields(l, v, "metric", metric_def_fields,
                                                  ELEMENTSOF(metric_def_fields), d)) >= 0 &&
                         d->from_stderr && !d->pattern)
                        q = schema_error(l, v, "metric %s: from needs a pattern", d->name);
                for (size_t j = 0; q >= 0 && v && v->kind == YAMLTREE_NODE_MAPPING && j < v->n_items; j++)
                        if (strcmp(v->keys[j]->value, "pattern") == 0)
                                d->pattern_at = (SpecPosition){ v->items[j]->line, v->items[j]->column };
                if (q == -ENOMEM)
                        return q;
                r = q < 0 ? q : r;
        }
        return r;
}

/* Column of byte `offset` of a scalar's value, where the source form makes it knowable. */
static unsigned template_column(const YamlNode *n, size_t offset) {
        if (strchr(n->value, '\n') || n->quote == '|')
                return n->column;
        if (n->quote == '"' && memchr(n->value, '\\', offset))
                return n->column;
        return n->column + (n->quote ? 1 : 0) + (unsigned) offset;
}

/* "0 3 * * *", "@daily", "every 6h", or {every: 6h}. */
static int parse_schedule(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        if (n && n->kind == YAMLTREE_NODE_MAPPING) {
                if (n->n_items != 1 || strcmp(n->keys[0]->value, "every") != 0)
                        return schema_error(l, n, "schedule mapping must be {every: DURATION}");
                uint64_t ns;
                int r = schema_parse_quantity(l, n->items[0], "every", units_duration_ns, 1e9,
                                              "'6h', '30m', '90s'", SCHEDULE_MIN_INTERVAL_S * 1000000000ULL,
                                              SCHEDULE_MAX_INTERVAL_S * 1000000000ULL, &ns);
                if (r < 0)
                        return r;
                schedule_interval((int64_t) (ns / 1000000000ULL), &s->schedule);
                s->has_schedule = true;
                return asprintf(&s->schedule_text, "every %s", n->items[0]->value) < 0 ? -ENOMEM : 0;
        }
        int r = schema_expect_scalar(l, n, "schedule");
        if (r < 0)
                return r;
        ScheduleError e;
        if (schedule_parse(n->value, &s->schedule, &e) < 0)
                return diag_add(l->diag, n->line, template_column(n, e.offset), "schedule: %s", e.message);
        s->has_schedule = true;
        return (s->schedule_text = strdup(n->value)) ? 0 : -ENOMEM;
}

/* "10%" or a fraction such as 0.1; between 0.1% and 1000%. */
/* A fraction in [min, max], written as a percentage ('10%') or a plain number (0.1). */
static int parse_fraction(Loader *l, const YamlNode *n, const char *what, double min, double max,
                          void *field) {
        int r = schema_expect_scalar(l, n, what);
        if (r < 0)
                return r;
        static const Unit percent[] = { { "%", 0.01 }, {} };
        double v;
        if (units_parse(n->value, percent, 1, &v) < 0)
                return schema_error(l, n, "%s: cannot parse '%s' (expected e.g. '10%%' or 0.1)", what,
                                    n->value);
        if (v < min || v > max)
                return schema_error(l, n, "%s '%s' is out of range (%g%% to %g%%)", what, n->value,
                                    100 * min, 100 * max);
        *(double *) field = v;
        return 0;
}

static int parse_threshold(Loader *l, const YamlNode *n, void *field) {
        return parse_fraction(l, n, "regression_threshold", 0.001, 10, field);
}

static int parse_min_effect(Loader *l, const YamlNode *n, void *field) {
        return parse_fraction(l, n, "min_effect", 0, 1, field);
}

static int parse_alpha(Loader *l, const YamlNode *n, void *field) {
        return parse_fraction(l, n, "alpha", 1e-6, 0.5, field);
}

static int parse_bool(Loader *l, const YamlNode *n, void *field) {
        return parse_either(l, n, "value", "false", "true", field);
}

static int parse_limit(Loader *l, const YamlNode *n, const char *what, double max, double *ret) {
        int r = schema_expect_scalar(l, n, what);
        if (r < 0)
                return r;
        static const Unit none[] = { {} };
        if (units_parse(n->value, none, 1, ret) < 0 || *ret < 0 || *ret > max)
                return schema_error(l, n, "%s: expected a number from 0 to %g, got '%s'", what, max,
                                    n->value);
        return 0;
}

static int parse_quiet_psi(Loader *l, const YamlNode *n, void *field) {
        return parse_limit(l, n, "max_cpu_some_avg10", 100, field);
}

static int parse_quiet_load(Loader *l, const YamlNode *n, void *field) {
        return parse_limit(l, n, "max_load1", 100000, field);
}

static int parse_quiet_wait(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_quantity(l, n, "max_wait", units_duration_ns, 1e9, "'10s', '500ms'", 0,
                                     3600ULL * 1000000000, field);
}

static int parse_quiet_on_busy(Loader *l, const YamlNode *n, void *field) {
        return parse_either(l, n, "on_busy", "mark", "skip", field);
}

static int parse_quiet_other_cpu(Loader *l, const YamlNode *n, void *field) {
        return parse_limit(l, n, "max_other_cpu", 4096, field);
}

static const Field quiet_fields[] = {
        { "max_other_cpu", parse_quiet_other_cpu, offsetof(SpecQuiet, max_other_cpu), false },
        { "max_cpu_some_avg10", parse_quiet_psi, offsetof(SpecQuiet, max_cpu_some_avg10), false },
        { "max_load1", parse_quiet_load, offsetof(SpecQuiet, max_load1), false },
        { "max_wait", parse_quiet_wait, offsetof(SpecQuiet, max_wait_ns), false },
        { "on_busy", parse_quiet_on_busy, offsetof(SpecQuiet, skip_busy), false },
};

/* quiet: {max_other_cpu: 0.1, max_cpu_some_avg10: 5, max_load1: 1.5, max_wait: 10s}, or off */
static int parse_quiet(Loader *l, const YamlNode *n, void *field) {
        SpecQuiet *q = field;
        if (n && n->kind == YAMLTREE_NODE_SCALAR) {
                static const char *const words[] = { "off", NULL };
                unsigned v;
                int r = schema_parse_keyword(l, n, "quiet", words, &v, NULL);
                if (r >= 0)
                        *q = (SpecQuiet){};
                return r;
        }
        *q = (SpecQuiet){ .enabled = true,
                          .max_other_cpu = SPEC_DEFAULT_QUIET_OTHER_CPU,
                          .max_cpu_some_avg10 = -1,
                          .max_load1 = -1,
                          .max_wait_ns = SPEC_DEFAULT_QUIET_WAIT_NS };
        return schema_parse_fields(l, n, "quiet", quiet_fields, ELEMENTSOF(quiet_fields), q);
}

/* cpus: auto, or a list of CPU numbers. */
/* calibrate: true | false | [COMMAND...]: a literal command (no templates: it runs once per
 * variant, not per cell). */
static int parse_calibrate(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        if (n && n->kind == YAMLTREE_NODE_SCALAR)
                return parse_bool(l, n, &s->calibrate);
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_SEQUENCE, "calibrate");
        if (r < 0)
                return r;
        if (n->n_items == 0 || n->n_items > SPEC_MAX_ARGS)
                return schema_error(l, n, "calibrate: expected true, false or a command of 1 to %d words",
                                    SPEC_MAX_ARGS);
        _cleanup_strv_free_ char **argv = NULL;
        for (size_t i = 0; i < n->n_items; i++)
                if ((r = schema_expect_scalar(l, n->items[i], "calibrate command argument")) < 0 ||
                    (r = strv_append(&argv, n->items[i]->value)) < 0 ||
                    (r = remember(l, (Template){ .node = n->items[i], .literal = true })) < 0)
                        return r;
        state(l)->calibrate = n;
        if (argv[0][0] == 0)
                return schema_error(l, n->items[0], "calibrate command name must not be empty");
        strv_free(s->calibrate_command);
        s->calibrate_command = TAKE_PTR(argv);
        s->calibrate = true;
        return 0;
}

static int parse_cpus(Loader *l, const YamlNode *n, void *field) {
        Spec *s = field;
        if (n->kind == YAMLTREE_NODE_SCALAR) {
                static const char *const words[] = { "auto", NULL };
                unsigned v;
                int r = schema_parse_keyword(l, n, "cpus", words, &v, NULL);
                if (r >= 0)
                        s->cpus = SPEC_CPUS_AUTO;
                return r;
        }
        int r = schema_expect_kind(l, n, YAMLTREE_NODE_SEQUENCE, "cpus (auto or a list of CPU numbers)");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return schema_error(l, n, "cpus: the list is empty");
        if (!(s->cpu_list = calloc(n->n_items, sizeof(uint16_t))))
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                uint64_t cpu;
                if ((r = schema_parse_uint(l, n->items[i], "CPU number", 0, SPEC_MAX_CPU, &cpu)) < 0)
                        return r;
                for (size_t k = 0; k < s->n_cpu_list; k++)
                        if (s->cpu_list[k] == cpu)
                                return schema_error(l, n->items[i], "cpus: CPU %llu is listed twice",
                                                    (unsigned long long) cpu);
                s->cpu_list[s->n_cpu_list++] = (uint16_t) cpu;
        }
        s->cpus = SPEC_CPUS_LIST;
        return 0;
}

static int parse_aa_check(Loader *l, const YamlNode *n, void *field) {
        state(l)->aa_check = n;
        return parse_bool(l, n, field);
}

static const Field spec_fields[] = {
        { "experiment", parse_experiment_name, offsetof(Spec, experiment), true },
        { "description", schema_parse_string, offsetof(Spec, description), false },
        { "command", parse_command, offsetof(Spec, command), true },
        { "cwd", parse_path_template, offsetof(Spec, cwd), false },
        { "setup", parse_setup, 0, false },
        { "prepare", parse_prepare, 0, false },
        { "cleanup", parse_cleanup, 0, false },
        { "stdin", parse_path_template, offsetof(Spec, stdin_path), false },
        { "params", parse_params, 0, false },
        { "env", parse_env, offsetof(Spec, env), false },
        { "allocators", parse_variants, 0, true },
        { "baseline", parse_baseline, 0, false },
        { "reference", parse_reference, 0, false },
        { "samples", parse_samples, 0, false },
        { "warmup", parse_warmup, offsetof(Spec, warmup), false },
        { "order", parse_order, offsetof(Spec, order), false },
        { "seed", parse_seed, 0, false },
        { "timeout", parse_timeout, offsetof(Spec, timeout_ns), false },
        { "verify", parse_verify, 0, false },
        { "metric", parse_metric, 0, false },
        { "metrics", parse_metrics, 0, false },
        { "verify_ignore", parse_verify_ignore, offsetof(Spec, verify_ignore), false },
        { "on_failure", parse_on_failure, offsetof(Spec, on_failure), false },
        { "output_limit", parse_output_limit, offsetof(Spec, output_limit), false },
        { "probe", parse_probe, offsetof(Spec, probe), false },
        { "preload_ignore", parse_preload_ignore, offsetof(Spec, preload_ignore), false },
        { "schedule", parse_schedule, 0, false },
        { "regression_threshold", parse_threshold, offsetof(Spec, regression_threshold), false },
        { "history", parse_history, offsetof(Spec, history_ratios), false },
        { "resume", parse_bool, offsetof(Spec, resume), false },
        { "min_effect", parse_min_effect, offsetof(Spec, min_effect), false },
        { "alpha", parse_alpha, offsetof(Spec, alpha), false },
        { "outliers", parse_outliers, offsetof(Spec, outliers), false },
        { "correction", parse_correction, offsetof(Spec, correction), false },
        { "env_offset", parse_env_offset, offsetof(Spec, env_offset_random), false },
        { "callgrind_threads", parse_callgrind_threads, offsetof(Spec, callgrind_threads_accepted), false },
        { "aa_check", parse_aa_check, offsetof(Spec, aa_check), false },
        { "cpus", parse_cpus, 0, false },
        { "quiet", parse_quiet, offsetof(Spec, quiet), false },
        { "calibrate", parse_calibrate, 0, false },
        { "memory_max", parse_memory_max, offsetof(Spec, memory_max), false },
        { "pids_max", parse_pids_max, offsetof(Spec, pids_max), false },
        { "memory_timeline", parse_memory_timeline, offsetof(Spec, memory_timeline_ns), false },
};
_Static_assert(ELEMENTSOF(spec_fields) <= SCHEMA_MAX_FIELDS, "every key can be suggested for a misspelling");

static int resolve_variant_ref(Loader *l, const YamlNode *n, const char *what, size_t *ret) {
        const Spec *s = state(l)->spec;
        const char *names[SPEC_MAX_VARIANTS + 1] = {};
        for (size_t i = 0; i < s->n_variants; i++) {
                names[i] = s->variants[i].name;
                if (strcmp(s->variants[i].name, n->value) == 0) {
                        *ret = i;
                        return 0;
                }
        }
        const char *sug = suggest_closest(n->value, names);
        if (sug)
                return schema_error(l, n, "%s '%s' is not one of the allocators (did you mean '%s'?)", what,
                                    n->value, sug);
        return schema_error(l, n, "%s '%s' is not one of the allocators", what, n->value);
}

/* aa_check: the baseline again, last, as "<baseline>-aa", so that the run measures what the same
 * configuration twice looks like on this machine (docs/analysis.md, A/A noise floor). */
static int add_aa_variant(Loader *l) {
        Spec *s = state(l)->spec;
        const SpecVariant *base = &s->variants[s->baseline];
        _cleanup_free_ char *name = NULL;
        if (asprintf(&name, "%s-aa", base->name) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_variants; i++)
                if (strcmp(s->variants[i].name, name) == 0)
                        return schema_error(l, state(l)->aa_check,
                                            "aa_check adds the variant '%s', and one of that name exists",
                                            name);
        if (s->n_variants >= SPEC_MAX_VARIANTS)
                return schema_error(l, state(l)->aa_check, "aa_check would make more than %d variants",
                                    SPEC_MAX_VARIANTS);
        SpecVariant *v = realloc(s->variants, (s->n_variants + 1) * sizeof(SpecVariant));
        if (!v)
                return -ENOMEM;
        s->variants = v;
        base = &v[s->baseline];
        SpecVariant copy = {
                .name = TAKE_PTR(name),
                .preload = base->preload ? strdup(base->preload) : NULL,
                .env = strv_copy(base->env),
                .env_var_at = positions_copy(base->env_var_at, strv_length(base->env)),
                .command = base->command ? strv_copy(base->command) : NULL,
                .cwd = base->cwd ? strdup(base->cwd) : NULL,
                .forward_library = base->forward_library ? strdup(base->forward_library) : NULL,
                .forward_prefix = base->forward_prefix ? strdup(base->forward_prefix) : NULL,
                .is_aa = true,
                .preload_at = base->preload_at,
                .forward_at = base->forward_at,
                .command_at = base->command_at,
                .cwd_at = base->cwd_at,
                .env_at = base->env_at,
        };
        v[s->n_variants++] = copy; /* owned by the spec from here, freed with it even if incomplete */
        if (base->build.source && spec_build_copy(&base->build, &v[s->n_variants - 1].build) < 0)
                return -ENOMEM;
        if ((base->preload && !copy.preload) || (base->env && !copy.env) ||
            (base->env_var_at && !copy.env_var_at) || (base->command && !copy.command) ||
            (base->cwd && !copy.cwd) || (base->forward_library && !copy.forward_library) ||
            (base->forward_prefix && !copy.forward_prefix))
                return -ENOMEM;
        return 0;
}

static int check_templates(Loader *l) {
        const Spec *s = state(l)->spec;
        const char *names[SPEC_MAX_PARAMS + 1] = {}; /* NULL-terminated, for suggest_closest */
        for (size_t i = 0; i < s->n_params; i++)
                names[i] = s->params[i].name;
        int r = 0;
        for (size_t i = 0; i < state(l)->n_templates; i++) {
                const YamlNode *n = state(l)->templates[i].node;
                TemplateError e;
                if (state(l)->templates[i].literal)
                        continue;
                if (template_expand(n->value, names, names, s->n_params, NULL, &e) >= 0)
                        continue;
                unsigned col = template_column(n, e.offset);
                if (e.problem == TEMPLATE_UNDEFINED) {
                        char word[64];
                        snprintf(word, sizeof(word), "%.*s", (int) e.length, n->value + e.offset);
                        /* A name of one or two letters is near every other: no guess then. */
                        const char *close = strlen(word) >= 3 ? suggest_closest(word, names) : NULL;
                        r = diag_add(l->diag, n->line, col, "undefined parameter '{%.*s}'%s%s%s",
                                     (int) e.length, n->value + e.offset, close ? " (did you mean '" : "",
                                     close ? close : "", close ? "'?)" : "");
                } else
                        r = diag_add(l->diag, n->line, col, "%s", template_problem_to_string(e.problem));
        }
        return r;
}

/* Where a plan that is too large is reported: at the parameter matrix (or at the top when there
 * is none), since the matrix multiplies everything else. */
static SpecPosition matrix_position(const YamlNode *root) {
        const YamlNode *at = root;
        for (size_t i = 0; i < root->n_items; i++)
                if (strcmp(root->keys[i]->value, "params") == 0)
                        at = root->keys[i];
        return (SpecPosition){ at->line, at->column };
}

/* Every string a child gets fits the kernel's limit on one, and every path PATH_MAX, in the
 * cell that gives each parameter its longest value (measured, not expanded). */
static int check_string_sizes(Loader *l) {
        const Spec *s = state(l)->spec;
        int r = 0;
        for (size_t i = 0; i < state(l)->n_templates; i++) {
                const Template *t = &state(l)->templates[i];
                SpecExtent e = { .longest = strlen(t->node->value) };
                int q = t->literal ? 0 : spec_size_template(s, t->node->value + t->skip, &e);
                if (q < 0)
                        return q;
                size_t bytes = spec_size_add(spec_size_add(e.longest, t->prefix), 1); /* with its NUL */
                size_t limit = t->path ? SPEC_MAX_PATH_BYTES : SPEC_MAX_ARG_STRLEN;
                if (bytes <= limit)
                        continue;
                r = diag_add(l->diag, t->node->line, t->node->column,
                             "this %s %s %zu bytes%s, more than the %zu bytes a%s may have%s",
                             t->path     ? "path"
                             : t->prefix ? "variable"
                                         : "argument",
                             t->literal ? "is" : "expands to", bytes - 1,
                             t->literal ? "" : " with each parameter at its longest value", limit - 1,
                             t->path ? " path" : "n argument or a variable",
                             t->path ? " (PATH_MAX)" : " (the kernel's MAX_ARG_STRLEN)");
        }
        return r;
}

/* Where the spec sets variant v's environment: its own env, else the experiment's. */
static SpecPosition env_position(const YamlNode *root, const SpecVariant *v) {
        return v->env_at.line ? v->env_at : position_of(root, "env", v->command_at);
}

/* One child's arguments and environment fit SPEC_MAX_CHILD_BYTES, every environment being padded
 * to the largest (runner/env.c): each variant's command, each hook and the calibration command;
 * the plan's strings together fit SPEC_MAX_PLAN_BYTES. Reported at what is largest: the command
 * or hook, or the environment. */
static int check_child_sizes(Loader *l, const YamlNode *root) {
        const Spec *s = state(l)->spec;
        SpecExtent env[SPEC_MAX_VARIANTS], argv[SPEC_MAX_VARIANTS], hooks[_SPEC_HOOK_MAX] = {};
        size_t widest = 0; /* the variant with the largest environment */
        int r = 0, q;
        for (size_t v = 0; v < s->n_variants; v++) {
                const SpecVariant *sv = &s->variants[v];
                if ((q = spec_size_env(s, v, &env[v])) < 0 ||
                    (q = spec_size_argv(s, sv->command ? sv->command : s->command, &argv[v])) < 0)
                        return q;
                widest = env[v].longest > env[widest].longest ? v : widest;
        }
        for (SpecHook h = 0; h < _SPEC_HOOK_MAX; h++)
                if ((q = spec_size_argv(s, s->hooks[h], &hooks[h])) < 0)
                        return q;
        size_t padded = env[widest].longest;
        const char *paths[] = { s->cwd, s->stdin_path,
                                s->verify == SPEC_VERIFY_FILE ? s->verify_path : NULL };
        size_t plan = 0;
        for (size_t v = 0; v < s->n_variants; v++) {
                const SpecVariant *sv = &s->variants[v];
                size_t child = spec_size_add(argv[v].longest, padded);
                SpecPosition at = argv[v].longest >= padded ? sv->command_at
                                                            : env_position(root, &s->variants[widest]);
                if (child > SPEC_MAX_CHILD_BYTES)
                        r = diag_add(l->diag, at.line, at.column,
                                     "variant %s: a child would get %zu bytes of arguments and %zu bytes of "
                                     "environment from the spec%s%s%s, more than the %d bytes a child may "
                                     "have",
                                     sv->name, argv[v].longest, padded,
                                     widest == v ? ""
                                                 : " (every environment is padded to the largest, variant ",
                                     widest == v ? "" : s->variants[widest].name, widest == v ? "" : "'s)",
                                     SPEC_MAX_CHILD_BYTES);
                /* The plan: arguments, hooks and paths per job, and two padded environments. */
                plan = spec_size_add(plan, argv[v].total);
                for (SpecHook h = 0; h < _SPEC_HOOK_MAX; h++)
                        plan = spec_size_add(plan, hooks[h].total);
                for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                        SpecExtent e = {};
                        const char *path = i == 0 && sv->cwd ? sv->cwd : paths[i];
                        if (path && (q = spec_size_template(s, path, &e)) < 0)
                                return q;
                        plan = spec_size_add(plan, e.total);
                }
                plan = spec_size_add(plan, spec_size_mul(2 * padded, spec_n_cells(s)));
        }
        for (SpecHook h = 0; h < _SPEC_HOOK_MAX; h++)
                if (s->hooks[h] && spec_size_add(hooks[h].longest, padded) > SPEC_MAX_CHILD_BYTES)
                        r = diag_add(l->diag, s->hook_at[h].line, s->hook_at[h].column,
                                     "%s: the hook would get %zu bytes of arguments and %zu bytes of "
                                     "environment from the spec, more than the %d bytes a child may have",
                                     spec_hook_to_string(h), hooks[h].longest, padded, SPEC_MAX_CHILD_BYTES);
        const YamlNode *calibrate = state(l)->calibrate;
        size_t calibration = spec_size_literal_argv(s->calibrate_command);
        if (calibrate && spec_size_add(calibration, padded) > SPEC_MAX_CHILD_BYTES)
                r = diag_add(l->diag, calibrate->line, calibrate->column,
                             "calibrate: the command would get %zu bytes of arguments and %zu bytes of "
                             "environment from the spec, more than the %d bytes a child may have",
                             calibration, padded, SPEC_MAX_CHILD_BYTES);
        if (plan > SPEC_MAX_PLAN_BYTES) {
                SpecPosition at = matrix_position(root);
                r = diag_add(
                        l->diag, at.line, at.column,
                        "the plan would hold %zu bytes of arguments, environments and paths over %zu cells, "
                        "more than %d: fewer cells or variants, or shorter values",
                        plan, spec_n_cells(s), SPEC_MAX_PLAN_BYTES);
        }
        return r;
}

/* Whether what sizes are measured from is complete: every parameter has its values (one in error
 * may have none), and the matrix has at most SPEC_MAX_CELLS cells. */
static bool measurable(const Spec *s) {
        size_t cells = 1;
        for (size_t i = 0; i < s->n_params; i++) {
                if (s->params[i].n_values == 0 || cells > SPEC_MAX_CELLS)
                        return false;
                cells *= s->params[i].n_values;
        }
        return cells <= SPEC_MAX_CELLS;
}

/* The plan this spec makes must fit SPEC_MAX_PLAN_WORDS. */
static int check_plan_size(Loader *l, const YamlNode *root) {
        const Spec *s = state(l)->spec;
        size_t per_cell = 0;
        for (size_t v = 0; v < s->n_variants; v++) {
                const SpecVariant *sv = &s->variants[v];
                per_cell += strv_length(sv->command ? sv->command : s->command) + strv_length(s->env) +
                            strv_length(sv->env);
        }
        size_t cells = spec_n_cells(s);
        if (per_cell == 0 || cells <= SPEC_MAX_PLAN_WORDS / per_cell)
                return 0;
        SpecPosition at = matrix_position(root);
        return diag_add(l->diag, at.line, at.column,
                        "the plan would hold %zu cells x %zu arguments and variables of its variants, more "
                        "than %d: fewer cells, variants or variables",
                        cells, per_cell, SPEC_MAX_PLAN_WORDS);
}

/* What a key left out means. */
static void set_defaults(Spec *s) {
        s->samples = 7;
        s->warmup = 1;
        s->timeout_ns = SPEC_DEFAULT_TIMEOUT_NS;
        s->output_limit = SPEC_DEFAULT_OUTPUT_LIMIT;
        s->regression_threshold = SPEC_DEFAULT_REGRESSION_THRESHOLD;
        s->min_effect = SPEC_DEFAULT_MIN_EFFECT;
        s->alpha = SPEC_DEFAULT_ALPHA;
        s->correction = SPEC_CORRECTION_HOLM;
        s->quiet = (SpecQuiet){ .enabled = true,
                                .max_other_cpu = SPEC_DEFAULT_QUIET_OTHER_CPU,
                                .max_cpu_some_avg10 = -1,
                                .max_load1 = -1 };
}

static bool same_text(const char *a, const char *b) { /* NULL equals only NULL */
        return a == b || (a && b && strcmp(a, b) == 0);
}

/* metrics: defines the same metrics the same way, in any order, defaults written or not. */
static bool same_metric_defs(const Spec *a, const Spec *b) {
        if (a->n_metric_defs != b->n_metric_defs)
                return false;
        for (size_t i = 0; i < a->n_metric_defs; i++) {
                const SpecMetricDef *x = &a->metric_defs[i], *y = spec_metric_def(b, x->name);
                if (!y || !same_text(x->pattern, y->pattern) || !same_text(x->unit, y->unit) ||
                    x->from_stderr != y->from_stderr || x->higher_is_better != y->higher_is_better)
                        return false;
        }
        return true;
}

int spec_same_setting(const char *key, const YamlNode *a, const YamlNode *b) {
        const Field *f = NULL;
        for (size_t i = 0; i < ELEMENTSOF(spec_fields) && !f; i++)
                if (strcmp(spec_fields[i].key, key) == 0)
                        f = &spec_fields[i];
        if (!f)
                return 0;
        const YamlNode *value[2] = { a, b };
        _cleanup_(spec_freep) Spec *first = calloc(1, sizeof(Spec));
        _cleanup_(spec_freep) Spec *second = calloc(1, sizeof(Spec));
        Spec *parsed[2] = { first, second };
        if (!first || !second)
                return -ENOMEM;
        SpecState st[2] = {};
        int same = 1;
        for (size_t i = 0; i < 2; i++) {
                set_defaults(parsed[i]);
                st[i].spec = parsed[i];
                Diagnostics d = {};
                Loader l = { .diag = &d, .userdata = &st[i] };
                int r = value[i] && !yamltree_is_null(value[i])
                                ? f->parse(&l, value[i], (char *) parsed[i] + f->offset)
                                : 0;
                diag_clear(&d);
                if (r == -ENOMEM)
                        same = r;
                /* Not known: a value in error, one resolved later (a variant's name), or one kept
                 * apart from the spec (a string: compared as written). */
                else if (r < 0 || st[i].baseline || st[i].reference || st[i].n_templates > 0)
                        same = same < 0 ? same : 0;
                free(st[i].templates);
        }
        if (same == 1 && f->parse == parse_metrics)
                same = same_metric_defs(parsed[0], parsed[1]);
        else if (same == 1 && memcmp(parsed[0], parsed[1], sizeof(Spec)) != 0)
                same = 0;
        return same;
}

int spec_load_buffer(const char *path, const char *data, size_t size, Diagnostics *d, Spec **ret) {
        _cleanup_(spec_freep) Spec *s = calloc(1, sizeof(Spec));
        if (!s)
                return -ENOMEM;
        if (!d->file && !(d->file = strdup(path)))
                return -ENOMEM;
        if (!(s->path = strdup(path)) || !(s->source = malloc(size + 1)))
                return -ENOMEM;
        memcpy(s->source, data, size);
        s->source[size] = 0;
        s->source_size = size;
        set_defaults(s);

        /* UTF-16 (a Windows editor's "Unicode") is all NUL bytes to a reader of UTF-8: say so. */
        const unsigned char *b = (const unsigned char *) data;
        if (size >= 2 &&
            ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff) ||
             (size >= 4 && ((b[0] && !b[1] && b[2] && !b[3]) || (!b[0] && b[1] && !b[2] && b[3])))))
                return diag_add(d, 1, 1, "spec is UTF-16: save it as UTF-8");
        const char *nul = memchr(data, 0, size);
        if (nul) {
                unsigned line = 1, column = 1;
                for (const char *c = data; c < nul; c++, column++)
                        if (*c == '\n')
                                line++, column = 0;
                return diag_add(d, line, column, "spec contains a NUL byte");
        }

        _cleanup_(yamltree_node_freep) YamlNode *root = NULL;
        int r = yamltree_parse(data, size, d, &root);
        if (r < 0)
                return r;
        if (!root)
                return diag_add(d, 1, 1, "spec is empty");

        SpecState st = { .spec = s };
        Loader l = { .diag = d, .userdata = &st };
        r = schema_parse_fields(&l, root, "spec", spec_fields, ELEMENTSOF(spec_fields), s);
        if (r >= 0 && s->variants)
                r = remember_positions(s, root); /* before the A/A copy, which takes its baseline's */
        if (r != -ENOMEM && s->variants) {
                if (st.baseline) {
                        int q = resolve_variant_ref(&l, st.baseline, "baseline", &s->baseline);
                        r = q < 0 ? q : r;
                }
                s->reference = s->baseline;
                if (st.reference) {
                        int q = resolve_variant_ref(&l, st.reference, "reference", &s->reference);
                        r = q < 0 ? q : r;
                }
                if (r >= 0 && s->aa_check)
                        r = add_aa_variant(&l);
        }
        /* Adaptive samples stop a cell between rounds: blocked order has none. */
        if (r >= 0 && s->samples_auto && s->order == SPEC_ORDER_BLOCKED)
                r = schema_error(&l, st.samples, "samples: auto needs order interleaved or randomized");
        if (r >= 0 && s->verify_ignore && s->verify == SPEC_VERIFY_NONE) {
                SpecPosition at = position_of(root, "verify_ignore", (SpecPosition){ 1, 1 });
                r = diag_add(d, at.line, at.column, "verify_ignore needs a verified output: verify is none");
        }
        /* mem_*_bytes are memory_timeline's figures (runner/timeline.h): without it, none. */
        if (r >= 0 && s->metric == SPEC_METRIC_REPORTED && !s->memory_timeline_ns &&
            spec_timeline_figure(s->metric_name))
                r = diag_add(
                        d, s->metric_at.line, s->metric_at.column,
                        "metric %s is read from the memory timeline: set memory_timeline: (e.g. '20ms')",
                        s->metric_name);
        if (r >= 0 && s->metric == SPEC_METRIC_REPORTED && s->probe != SPEC_PROBE_COUNTERS &&
            spec_probe_figure(s->metric_name))
                r = diag_add(d, s->metric_at.line, s->metric_at.column,
                             "metric %s is read by the probe at each sample's exit: set probe: counters",
                             s->metric_name);
        if (r >= 0 && s->callgrind_threads_accepted && s->metric != SPEC_METRIC_INSTRUCTIONS) {
                SpecPosition at = position_of(root, "callgrind_threads", (SpecPosition){ 1, 1 });
                r = diag_add(
                        d, at.line, at.column,
                        "callgrind_threads: accept is for metric: instructions counted by callgrind; the "
                        "metric here is %s",
                        s->metric == SPEC_METRIC_REPORTED ? s->metric_name
                                                          : spec_metric_to_string(s->metric));
        }
        bool templates_ok = false;
        if (r != -ENOMEM) {
                int q = check_templates(&l);
                templates_ok = q >= 0;
                r = q < 0 ? q : r;
        }
        /* Sizes are measured whenever the templates and the matrix can be, beside whatever else
         * is wrong: every problem at once. A child's and the plan's sizes only when no string
         * alone is too long already, and the plan's word count is within its limit. */
        if (r != -ENOMEM && templates_ok && measurable(s)) {
                int q = check_plan_size(&l, root);
                if (q >= 0)
                        q = check_string_sizes(&l);
                if (q >= 0 && s->n_variants > 0)
                        q = check_child_sizes(&l, root);
                r = q < 0 ? q : r;
        }
        free(st.templates);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int spec_load_fd(int fd, const char *path, Diagnostics *d, Spec **ret) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EISDIR;
        if (st.st_size > YAMLTREE_MAX_INPUT_BYTES) {
                if (!d->file && !(d->file = strdup(path)))
                        return -ENOMEM;
                return diag_add(d, 1, 1, "spec is larger than %d bytes", YAMLTREE_MAX_INPUT_BYTES);
        }
        _cleanup_free_ char *buf = malloc((size_t) st.st_size + 1);
        if (!buf)
                return -ENOMEM;
        /* One byte more than expected tells a file that grew while we read it: refuse it. */
        ssize_t have = read_full(fd, buf, (size_t) st.st_size + 1);
        if (have < 0)
                return (int) have;
        if ((size_t) have > (size_t) st.st_size) {
                if (!d->file && !(d->file = strdup(path)))
                        return -ENOMEM;
                return diag_add(d, 1, 1, "spec changed while being read");
        }
        return spec_load_buffer(path, buf, (size_t) have, d, ret);
}

int spec_load_file(const char *path, Diagnostics *d, Spec **ret) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        return spec_load_fd(fd, path, d, ret);
}
