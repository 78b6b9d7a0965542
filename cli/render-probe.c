/* SPDX-License-Identifier: MIT */
/* A probe report (runner/probe-json.h form) for people: alloclab census and allocators. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/render-figures.h"
#include "cli/render.h"
#include "runner/options.h"
#include "util/cleanup.h"

/* GLIBC_TUNABLES as set, the entries the loader has no tunable for apart: those it ignores. */
static void print_tunables(FILE *f, const char *tunables) {
        _cleanup_free_ char *copy = strdup(tunables);
        if (!copy)
                return;
        size_t ignored = 0, shown = 0;
        char *save = NULL;
        for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
                char *name = strndup(item, strcspn(item, "="));
                bool known = name && options_tunable_known(name);
                free(name);
                if (known)
                        fprintf(f, "%s%s", shown++ ? ":" : "", item);
                ignored += !known;
        }
        if (ignored) {
                fprintf(f, "%s(ignored, not tunables of the loader:", shown ? " " : "");
                strcpy(copy, tunables);
                for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
                        char *name = strndup(item, strcspn(item, "="));
                        if (name && !options_tunable_known(name))
                                fprintf(f, " %s", item);
                        free(name);
                }
                fputc(')', f);
        }
        fputc('\n', f);
}

static void print_option_list(FILE *f, json_t *options, const char *indent) {
        const char *key;
        json_t *value;
        size_t n = 0, width = 0;
        json_object_foreach(options, key, value) {
                if (strlen(key) > width)
                        width = strlen(key);
        }
        json_object_foreach(options, key, value) {
                const char *text = json_string_value(value);
                fprintf(f, "%s%-*s ", indent, (int) width, key);
                if (!text || !*text) /* an environment setting the process did not have */
                        fprintf(f, "(not set: the allocator's defaults)\n");
                else if (strcmp(key, "GLIBC_TUNABLES") == 0)
                        print_tunables(f, text);
                else
                        fprintf(f, "%s\n", text);
                n++;
        }
        if (n == 0)
                fprintf(f, "%s(none reported)\n", indent);
}

/* The started process's program, when it executed another (the final one is what the report's
 * allocator, options and census describe), and the tree, when there is more than one process
 * or a program left it (executed without the probe). */
static void render_process_tree(FILE *f, json_t *processes) {
        size_t n = json_array_size(processes);
        json_t *first = json_array_get(processes, 0);
        if (!first)
                return;
        json_int_t pid = json_integer_value(json_object_get(first, "pid"));
        const char *program = NULL;
        bool left = false;
        size_t i;
        json_t *p;
        json_array_foreach(processes, i, p) {
                if (json_integer_value(json_object_get(p, "pid")) == pid)
                        program = json_string_value(json_object_get(p, "program"));
                left |= json_is_object(json_object_get(p, "exec_without_probe"));
        }
        if (n < 2 && !left)
                return; /* a tree of one, the started program alone */
        const char *began = json_string_value(json_object_get(first, "program"));
        if (program && began && strcmp(program, began) != 0)
                fprintf(f, "program: %s (the started process executed it; it began as %s)\n", program,
                        began);
        fprintf(f, "process tree (%zu process%s; malloc-family calls):\n", n, n == 1 ? "" : "es");
        json_array_foreach(processes, i, p) {
                json_int_t parent = json_integer_value(json_object_get(p, "parent"));
                fprintf(f, "  #%zu pid %lld %s", i,
                        (long long) json_integer_value(json_object_get(p, "pid")),
                        json_string_value(json_object_get(p, "how")));
                if (parent >= 0)
                        fprintf(f, " from #%lld", (long long) parent);
                json_int_t copies = json_integer_value(json_object_get(p, "allocator_copies"));
                fprintf(f, ": %s, %s (%s), %lld calls%s\n", json_string_value(json_object_get(p, "program")),
                        json_string_value(json_object_get(p, "allocator")),
                        json_string_value(json_object_get(p, "family")),
                        (long long) json_integer_value(json_object_get(p, "calls")),
                        copies > 1 ? ", WARNING: more than one allocator copy loaded" : "");
                json_t *unprobed = json_object_get(p, "exec_without_probe");
                if (json_is_object(unprobed))
                        fprintf(f,
                                "      then executed %s without the probe (LD_PRELOAD=%s): not followed\n",
                                json_string_value(json_object_get(unprobed, "program")),
                                json_string_value(json_object_get(unprobed, "preload")));
        }
}

/* The allocator's own figures at exit (runner/allocator-stats.h), from the probe's JSON. */
static void print_allocator_stats(FILE *f, json_t *stats) {
        if (!json_is_object(stats)) {
                fprintf(f, "allocator statistics at exit: not read (asked of smoke runs and census; "
                           "written when the started process exits normally)\n");
                return;
        }
        json_t *figures = json_object_get(stats, "figures");
        AllocatorFigures a;
        allocator_figures_from_json(figures, &a);
        char text[256] = "not read from its text";
        if (json_is_object(figures))
                render_allocator_figures(&a, text, sizeof(text));
        fprintf(f, "allocator statistics at exit (%s%s): %s\n",
                json_string_value(json_object_get(stats, "format")),
                json_is_true(json_object_get(stats, "truncated")) ? ", cut short" : "", text);
}

/* How many processes the tree had: its listed processes' distinct pids (an exec keeps the pid). */
static int64_t tree_processes(json_t *processes) {
        int64_t n = 0;
        size_t i, k;
        json_t *p, *q;
        json_array_foreach(processes, i, p) {
                bool seen = false;
                json_array_foreach(processes, k, q) {
                        if (k >= i)
                                break;
                        seen |= json_integer_value(json_object_get(q, "pid")) ==
                                json_integer_value(json_object_get(p, "pid"));
                }
                n += !seen;
        }
        return n;
}

void render_probe(FILE *f, json_t *probe) {
        json_t *effective = json_object_get(probe, "effective");
        json_t *forward = json_object_get(probe, "forward");
        if (!json_is_true(json_object_get(probe, "loaded"))) {
                fprintf(f, "probe: did not load (LD_PRELOAD ignored: static binary or secure-execution "
                           "mode)\n");
                return;
        }
        const char *error = json_string_value(json_object_get(forward, "error"));
        if (error)
                fprintf(f, "forward mode refused: %s\n", error);
        json_t *processes = json_object_get(probe, "processes");
        render_process_tree(f, processes);
        /* A program that ran without the probe ran under what its LD_PRELOAD named: unknown here. */
        size_t unfollowed = 0;
        for (size_t k = 0; k < json_array_size(processes); k++)
                unfollowed +=
                        json_is_object(json_object_get(json_array_get(processes, k), "exec_without_probe"));
        /* A family the probe does not know (an allocator under development): said so, not "none". */
        const char *effective_family = json_string_value(json_object_get(effective, "family"));
        bool unknown = !effective_family || strcmp(effective_family, "none") == 0;
        fprintf(f, "effective allocator: %s (%s%s%s)", json_string_value(json_object_get(effective, "path")),
                unknown ? "a family alloclab does not know: no version or options read" : effective_family,
                *json_string_value(json_object_get(effective, "version")) ? " " : "",
                json_string_value(json_object_get(effective, "version")));
        if (unfollowed)
                fprintf(f,
                        " in the processes followed; not known for the %zu program%s that ran without the "
                        "probe",
                        unfollowed, unfollowed == 1 ? "" : "s");
        fputc('\n', f);
        fprintf(f, "effective options:\n");
        print_option_list(f, json_object_get(effective, "options"), "  ");

        json_t *census = json_object_get(probe, "census");
        size_t i;
        json_t *lib;
        fprintf(f, "census (objects implementing an allocator):\n");
        json_array_foreach(census, i, lib) {
                fprintf(f, "  %s:", json_string_value(json_object_get(lib, "path")));
                size_t k;
                json_t *family;
                json_array_foreach(json_object_get(lib, "families"), k, family)
                        fprintf(f, " %s", json_string_value(family));
                const char *prefix = json_string_value(json_object_get(lib, "prefix"));
                if (prefix && *prefix)
                        fprintf(f, " (prefix %s)", prefix);
                fputc('\n', f);
        }
        json_int_t copies = json_integer_value(json_object_get(probe, "allocator_copies"));
        if (copies > 1)
                fprintf(f,
                        "WARNING: %lld allocator implementations besides glibc's are loaded in one process;"
                        " memory from one freed by another corrupts the heap\n",
                        (long long) copies);

        json_t *counters = json_object_get(probe, "counters");
        json_t *calls = json_object_get(counters, "calls");
        fprintf(f, "counters:%s", json_is_object(calls) ? "" : " not counted");
        const char *key;
        json_t *value;
        json_object_foreach(calls, key, value) {
                if (json_integer_value(value))
                        fprintf(f, " %s=%lld", key, (long long) json_integer_value(value));
        }
        char requested[32] = "not measured", peak[32] = "not measured", threads[32] = "not counted";
        json_t *requested_bytes = json_object_get(counters, "bytes_requested");
        if (json_is_integer(requested_bytes))
                render_value("maxrss", (double) json_integer_value(requested_bytes), requested,
                             sizeof(requested));
        json_t *peak_bytes = json_object_get(counters, "peak_live_bytes");
        if (json_is_integer(peak_bytes))
                render_value("maxrss", (double) json_integer_value(peak_bytes), peak, sizeof(peak));
        char peak_requested[32] = "not measured";
        json_t *peak_requested_bytes = json_object_get(counters, "peak_live_requested_bytes");
        if (json_is_integer(peak_requested_bytes))
                render_value("maxrss", (double) json_integer_value(peak_requested_bytes), peak_requested,
                             sizeof(peak_requested));
        json_t *thread_count = json_object_get(counters, "threads");
        if (json_is_integer(thread_count))
                snprintf(threads, sizeof(threads), "%lld", (long long) json_integer_value(thread_count));
        /* Usable sizes are at least the requested ones: a usable peak below the requested one
         * missed blocks the allocator could not size (tcmalloc's, for the C++ runtime's pool). */
        char usable[64];
        snprintf(usable, sizeof(usable), "%s usable", peak);
        if (json_is_integer(peak_bytes) && json_is_integer(peak_requested_bytes) &&
            json_integer_value(peak_bytes) < json_integer_value(peak_requested_bytes))
                snprintf(usable, sizeof(usable),
                         "usable not known: the allocator could not size every block");
        fprintf(f, "\n  bytes requested %s, peak live %s requested (%s), threads %s%s\n", requested,
                peak_requested, usable, threads,
                json_is_true(json_object_get(probe, "exited"))
                        ? ""
                        : " (the process ended without running its exit handlers: _exit() or a signal)");
        json_t *memory = json_object_get(probe, "memory_at_exit");
        char text[320] = "not read (asked of smoke runs and census; read by processes that exit normally)";
        if (json_is_object(memory))
                render_exit_memory(json_integer_value(json_object_get(memory, "rss_bytes")),
                                   json_integer_value(json_object_get(memory, "pss_anon_bytes")),
                                   json_integer_value(json_object_get(memory, "anon_huge_bytes")),
                                   json_integer_value(json_object_get(probe, "memory_processes")),
                                   tree_processes(json_object_get(probe, "processes")), text, sizeof(text));
        fprintf(f, "memory at exit (smaps_rollup): %s\n", text);
        print_allocator_stats(f, json_object_get(probe, "allocator_stats"));
}
