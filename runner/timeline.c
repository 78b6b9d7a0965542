/* SPDX-License-Identifier: MIT */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/output.h"
#include "runner/timeline.h"

const char *timeline_source_to_string(TimelineSource s) {
        switch (s) {
        case TIMELINE_CGROUP:
                return "cgroup memory.current";
        case TIMELINE_PROC:
                return "/proc statm";
        default:
                return "none";
        }
}

/* Reads exactly size bytes at offset into buf; -EBADMSG for fewer. */
static int read_at(int fd, void *buf, size_t size, off_t offset) {
        size_t got = 0;
        while (got < size) {
                ssize_t n = pread(fd, (char *) buf + got, size - got, offset + (off_t) got);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EBADMSG;
                got += (size_t) n;
        }
        return 0;
}

int timeline_read(int fd, Timeline *ret) {
        *ret = (Timeline){};
        TimelineHeader h;
        int r = read_at(fd, &h, sizeof(h), 0);
        if (r < 0)
                return r;
        if (h.source > TIMELINE_PROC || h.n_points > TIMELINE_MAX_POINTS || h.n_sizes > TIMELINE_MAX_SIZES)
                return -EBADMSG;
        Timeline t = { .source = (TimelineSource) h.source,
                       .error = h.error,
                       .period_ns = h.period_ns,
                       .thinned = h.thinned };
        t.points = calloc(h.n_points + 1, sizeof(TimelinePoint));
        t.sizes = calloc(h.n_sizes + 1, sizeof(TimelineSize));
        if (!t.points || !t.sizes) {
                timeline_done(&t);
                return -ENOMEM;
        }
        off_t at = sizeof(h);
        if ((r = read_at(fd, t.points, h.n_points * sizeof(TimelinePoint), at)) < 0 ||
            (r = read_at(fd, t.sizes, h.n_sizes * sizeof(TimelineSize),
                         at + (off_t) (h.n_points * sizeof(TimelinePoint)))) < 0) {
                timeline_done(&t);
                return r;
        }
        t.n_points = h.n_points;
        t.n_sizes = h.n_sizes;
        *ret = t;
        return 0;
}

void timeline_done(Timeline *t) {
        free(t->points);
        free(t->sizes);
        for (size_t i = 0; i < t->n_marks; i++)
                free(t->marks[i].name);
        free(t->marks);
        *t = (Timeline){};
}

Timeline *timeline_free(Timeline *t) {
        if (t)
                timeline_done(t);
        free(t);
        return NULL;
}

void timeline_figures(const Timeline *t, TimelineFigures *ret) {
        *ret = (TimelineFigures){ .have = t->n_points > 1 };
        if (!ret->have)
                return;
        const TimelinePoint *p = t->points;
        double weighted = 0, peak = 0;
        for (size_t i = 0; i < t->n_points; i++) {
                if (p[i].kib > peak)
                        peak = p[i].kib;
                if (i + 1 < t->n_points)
                        weighted += (double) p[i].kib * (double) (p[i + 1].t_ms - p[i].t_ms);
        }
        uint32_t span = p[t->n_points - 1].t_ms - p[0].t_ms;
        ret->peak = peak * 1024;
        ret->last = (double) p[t->n_points - 1].kib * 1024;
        /* Readings within one millisecond of each other (a very short child): their plain mean. */
        if (span == 0) {
                double sum = 0;
                for (size_t i = 0; i < t->n_points; i++)
                        sum += p[i].kib;
                ret->mean = sum / (double) t->n_points * 1024;
        } else
                ret->mean = weighted / span * 1024;
}

bool timeline_at_mark(const Timeline *t, const PhaseMark *m, double *ret_bytes, uint32_t *ret_t_ms) {
        /* The first tick whose size reading saw the mark's line, then the first reading at or
         * after that tick (the size is read before the memory, at the same tick). */
        size_t i = 0;
        while (i < t->n_sizes && t->sizes[i].size < m->end)
                i++;
        if (i == t->n_sizes)
                return false;
        uint32_t seen = t->sizes[i].t_ms;
        for (size_t k = 0; k < t->n_points; k++)
                if (t->points[k].t_ms >= seen) {
                        *ret_bytes = (double) t->points[k].kib * 1024;
                        *ret_t_ms = t->points[k].t_ms;
                        return true;
                }
        return false;
}

/* Keeps a mark's time for the record. */
static int keep_mark(Timeline *t, const char *name, uint32_t t_ms) {
        TimelineMark *grown = realloc(t->marks, (t->n_marks + 1) * sizeof(TimelineMark));
        if (!grown)
                return -ENOMEM;
        t->marks = grown;
        if (!(grown[t->n_marks].name = strdup(name)))
                return -ENOMEM;
        grown[t->n_marks++].t_ms = t_ms;
        return 0;
}

int timeline_add_metrics(Timeline *t, const PhaseMark *marks, size_t n_marks, Metric **list, size_t *n,
                         char **ret_why) {
        TimelineFigures f;
        timeline_figures(t, &f);
        if (!f.have)
                return 0;
        int r;
        if ((r = output_metric_set(list, n, "mem_peak_bytes", f.peak, ret_why)) < 0 ||
            (r = output_metric_set(list, n, "mem_mean_bytes", f.mean, ret_why)) < 0 ||
            (r = output_metric_set(list, n, "mem_last_bytes", f.last, ret_why)) < 0)
                return r;
        for (size_t i = 0; i < n_marks; i++) {
                double bytes;
                uint32_t t_ms;
                char name[OUTPUT_METRIC_NAME_MAX + 1];
                _Static_assert(OUTPUT_PHASE_NAME_MAX + sizeof("mem_at__bytes") - 1 == OUTPUT_METRIC_NAME_MAX,
                               "a phase's figure has a metric's name");
                snprintf(name, sizeof(name), "mem_at_%s_bytes", marks[i].name);
                if (!timeline_at_mark(t, &marks[i], &bytes, &t_ms))
                        continue;
                if ((r = output_metric_set(list, n, name, bytes, ret_why)) < 0 ||
                    (r = keep_mark(t, marks[i].name, t_ms)) < 0)
                        return r;
        }
        return 0;
}

const char *timeline_missing(const Timeline *t, const PhaseMark *marks, size_t n_marks, const char *metric,
                             char *buf, size_t size) {
        char period[32];
        double ms = (double) (t ? t->period_ns : 0) / 1e6;
        snprintf(period, sizeof(period), ms >= 1000 ? "%.4g s" : "%.4g ms", ms >= 1000 ? ms / 1000 : ms);
        size_t len = strlen(metric);
        if (strncmp(metric, "mem_at_", 7) != 0 || len < 14 || !t || t->n_points < 2) {
                snprintf(buf, size,
                         "the child ended before the first reading of its memory (every %s): give "
                         "memory_timeline a shorter period",
                         period);
                return buf;
        }
        const char *phase = metric + 7;
        int phase_len = (int) (len - 13);
        for (size_t i = 0; i < n_marks; i++)
                if ((int) strlen(marks[i].name) == phase_len &&
                    strncmp(marks[i].name, phase, (size_t) phase_len) == 0) {
                        snprintf(buf, size,
                                 "the program marked phase %s, then ended before the next reading of its "
                                 "memory "
                                 "(every %s): let it wait one period after the mark",
                                 marks[i].name, period);
                        return buf;
                }
        snprintf(buf, size, "the program wrote no 'phase %.*s' line to ALLOCLAB_METRICS_FD", phase_len,
                 phase);
        return buf;
}

TimelinePoint *timeline_points_le(const Timeline *t) {
        TimelinePoint *le = calloc(t->n_points + 1, sizeof(TimelinePoint));
        for (size_t i = 0; le && i < t->n_points; i++)
                le[i] = (TimelinePoint){ htole32(t->points[i].t_ms), htole32(t->points[i].kib) };
        return le;
}

json_t *timeline_marks_json(const Timeline *t, bool *ret_oom) {
        *ret_oom = false;
        if (t->n_marks == 0)
                return NULL;
        json_t *marks = json_array();
        for (size_t i = 0; marks && i < t->n_marks; i++)
                if (json_array_append_new(marks, json_pack("{s:s, s:I}", "name", t->marks[i].name, "t_ms",
                                                           (json_int_t) t->marks[i].t_ms)) < 0) {
                        json_decref(marks);
                        marks = NULL;
                }
        *ret_oom = !marks;
        return marks;
}

int timeline_decode(const void *points, size_t size, const char *marks, Timeline *ret) {
        *ret = (Timeline){};
        size_t n = size / sizeof(TimelinePoint);
        if (size % sizeof(TimelinePoint) || n > TIMELINE_MAX_POINTS)
                return -EBADMSG;
        json_t *list = marks ? json_loads(marks, 0, NULL) : json_array();
        Timeline t = { .points = calloc(n + 1, sizeof(TimelinePoint)),
                       .marks = calloc(json_array_size(list) + 1, sizeof(TimelineMark)) };
        int r = !list ? -EBADMSG : !t.points || !t.marks ? -ENOMEM : 0;
        for (size_t i = 0; r == 0 && i < n; i++) {
                TimelinePoint p;
                memcpy(&p, (const char *) points + i * sizeof(p), sizeof(p));
                t.points[t.n_points++] = (TimelinePoint){ le32toh(p.t_ms), le32toh(p.kib) };
        }
        size_t i;
        json_t *m;
        json_array_foreach(list, i, m) {
                const char *name = json_string_value(json_object_get(m, "name"));
                json_int_t t_ms = json_integer_value(json_object_get(m, "t_ms"));
                if (r < 0)
                        break;
                if (!name || t_ms < 0 || t_ms > UINT32_MAX)
                        r = -EBADMSG;
                else if (!(t.marks[t.n_marks].name = strdup(name)))
                        r = -ENOMEM;
                else
                        t.marks[t.n_marks++].t_ms = (uint32_t) t_ms;
        }
        json_decref(list);
        if (r < 0)
                timeline_done(&t);
        else
                *ret = t;
        return r;
}
