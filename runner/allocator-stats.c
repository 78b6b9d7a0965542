/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/report.h"
#include "runner/allocator-stats.h"

#define FIGURE(name)                                                                                        \
        { #name, offsetof(AllocatorFigures, name) }
const AllocatorFigure allocator_figures[N_ALLOCATOR_FIGURES] = {
        FIGURE(allocated), FIGURE(active), FIGURE(resident),
        FIGURE(committed), FIGURE(mapped), FIGURE(retained),
};
_Static_assert(sizeof(AllocatorFigures) == N_ALLOCATOR_FIGURES * sizeof(int64_t), "every figure listed");

static const char *const format_names[] = {
        [PROBE_STATS_NONE] = "none",
        [PROBE_STATS_JEMALLOC_JSON] = "jemalloc malloc_stats_print JSON",
        [PROBE_STATS_MIMALLOC_TEXT] = "mimalloc mi_stats_print_out",
        [PROBE_STATS_GLIBC_XML] = "glibc malloc_info XML",
        [PROBE_STATS_TCMALLOC_TEXT] = "tcmalloc MallocExtension_GetStats",
};

/* jemalloc: {"jemalloc": {"stats": {"allocated": N, "active": N, "resident": N, "mapped": N,
 * "retained": N, ...}}}: the figures by their own names (it has no "committed"). */
static int jemalloc_figures(const char *text, AllocatorFigures *ret) {
        json_t *root = json_loads(text, 0, NULL);
        json_t *stats = json_object_get(json_object_get(root, "jemalloc"), "stats");
        int found = 0;
        for (size_t i = 0; i < N_ALLOCATOR_FIGURES; i++) {
                json_t *v = json_object_get(stats, allocator_figures[i].name);
                if (json_is_integer(v)) {
                        *allocator_figure_in(ret, i) = json_integer_value(v);
                        found++;
                }
        }
        json_decref(root);
        return found > 0 ? 0 : -EBADMSG;
}

/* The value of the last `<TAG type="TYPE" ... size="N"/>` in text (the top-level totals follow
 * every heap's), or -1. */
static int64_t last_size(const char *text, const char *tag_and_type) {
        const char *at = NULL;
        for (const char *p = text; (p = strstr(p, tag_and_type)); p++)
                at = p;
        const char *size = at ? strstr(at, "size=\"") : NULL;
        const char *end = at ? strchr(at, '>') : NULL;
        return size && end && size < end ? strtoll(size + 6, NULL, 10) : -1;
}

/* glibc: malloc_info's totals over its arenas: mapped = the arenas' system memory and the
 * mmapped chunks; allocated = that minus the free chunks (fast bins and the rest), so with the
 * chunk headers. It knows nothing resident. */
static int glibc_figures(const char *text, AllocatorFigures *ret) {
        int64_t system = last_size(text, "<system type=\"current\""),
                mmapped = last_size(text, "<total type=\"mmap\"");
        int64_t fast = last_size(text, "<total type=\"fast\""),
                rest = last_size(text, "<total type=\"rest\"");
        if (system < 0 || mmapped < 0 || fast < 0 || rest < 0)
                return -EBADMSG;
        ret->mapped = system + mmapped;
        ret->allocated = ret->mapped - fast - rest;
        return 0;
}

/* "  12.5 MiB" or "0" or "837": bytes, or -1. */
static int64_t mimalloc_amount(const char **at) {
        char *end;
        double v = strtod(*at, &end);
        if (end == *at)
                return -1;
        const char *unit = end + strspn(end, " ");
        static const struct {
                const char *name;
                double scale;
        } units[] = { { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 }, { "B", 1.0 } };
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (strncmp(unit, units[i].name, strlen(units[i].name)) == 0) {
                        *at = unit + strlen(units[i].name);
                        return (int64_t) (v * units[i].scale);
                }
        *at = end;
        return (int64_t) v;
}

/* The "current" column (the fourth amount) of mimalloc's row "LABEL:", or -1. */
static int64_t mimalloc_current(const char *text, const char *label) {
        const char *row = strstr(text, label);
        if (!row)
                return -1;
        const char *at = row + strlen(label);
        int64_t v = -1;
        for (int column = 0; column < 4; column++)
                if ((v = mimalloc_amount(&at)) < 0)
                        return -1;
        return v;
}

/* mimalloc: reserved (mapped) and committed address space; a release build (Debian's) counts
 * neither the blocks allocated nor what is resident. */
static int mimalloc_figures(const char *text, AllocatorFigures *ret) {
        ret->mapped = mimalloc_current(text, " reserved:");
        ret->committed = mimalloc_current(text, "committed:");
        return ret->mapped >= 0 || ret->committed >= 0 ? 0 : -EBADMSG;
}

/* The bytes of tcmalloc's line "MALLOC: [+=] N (...) LABEL", or -1. */
static int64_t tcmalloc_line(const char *text, const char *label) {
        for (const char *line = text; line && *line;
             line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);
                const char *found = strstr(line, label);
                if (strncmp(line, "MALLOC:", 7) != 0 || !found || found >= line + len)
                        continue;
                const char *n = line + 7 + strspn(line + 7, " +=");
                return strtoll(n, NULL, 10);
        }
        return -1;
}

/* tcmalloc: in use by the application (allocated), actual memory used (resident), virtual
 * address space used (mapped), released to the OS (retained). */
static int tcmalloc_figures(const char *text, AllocatorFigures *ret) {
        ret->allocated = tcmalloc_line(text, "Bytes in use by application");
        ret->resident = tcmalloc_line(text, "Actual memory used");
        ret->mapped = tcmalloc_line(text, "Virtual address space used");
        ret->retained = tcmalloc_line(text, "Bytes released to OS");
        return ret->allocated >= 0 ? 0 : -EBADMSG;
}

int allocator_stats_figures(uint32_t format, const char *text, AllocatorFigures *ret) {
        for (size_t i = 0; i < N_ALLOCATOR_FIGURES; i++)
                *allocator_figure_in(ret, i) = -1;
        if (!text)
                return -EBADMSG;
        switch (format) {
        case PROBE_STATS_JEMALLOC_JSON:
                return jemalloc_figures(text, ret);
        case PROBE_STATS_GLIBC_XML:
                return glibc_figures(text, ret);
        case PROBE_STATS_MIMALLOC_TEXT:
                return mimalloc_figures(text, ret);
        case PROBE_STATS_TCMALLOC_TEXT:
                return tcmalloc_figures(text, ret);
        default:
                return -EBADMSG;
        }
}

static json_t *bytes_or_null(int64_t v) {
        return v >= 0 ? json_integer(v) : json_null();
}

json_t *allocator_figures_json(const AllocatorFigures *f) {
        json_t *o = json_object();
        for (size_t i = 0; o && i < N_ALLOCATOR_FIGURES; i++) {
                char key[32];
                snprintf(key, sizeof(key), "%s_bytes", allocator_figures[i].name);
                if (json_object_set_new(o, key, bytes_or_null(allocator_figure_of(f, i))) < 0) {
                        json_decref(o);
                        return NULL;
                }
        }
        return o;
}

void allocator_figures_from_json(const json_t *figures, AllocatorFigures *ret) {
        for (size_t i = 0; i < N_ALLOCATOR_FIGURES; i++) {
                char key[32];
                snprintf(key, sizeof(key), "%s_bytes", allocator_figures[i].name);
                json_t *v = json_object_get(figures, key);
                *allocator_figure_in(ret, i) = json_is_integer(v) ? json_integer_value(v) : -1;
        }
}

json_t *allocator_stats_json(uint32_t format, const char *text, bool truncated) {
        AllocatorFigures f;
        bool read = allocator_stats_figures(format, text, &f) >= 0;
        json_t *figures = read ? allocator_figures_json(&f) : json_null();
        json_t *fragmentation = read && f.allocated > 0 && f.resident >= 0
                                        ? json_real((double) f.resident / (double) f.allocated)
                                        : json_null();
        const char *name =
                format < sizeof(format_names) / sizeof(format_names[0]) ? format_names[format] : "?";
        return json_pack("{s:s, s:b, s:o, s:o, s:s}", "format", name, "truncated", truncated, "figures",
                         figures, "fragmentation", fragmentation, "text", text ? text : "");
}
