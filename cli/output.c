/* SPDX-License-Identifier: MIT */
/*
 * The filter of output.h: a fopencookie() stream over the original FILE. stdio hands the cookie
 * its buffer in pieces that may split a UTF-8 sequence: the piece's incomplete end waits for
 * the next one (at most 3 bytes), and is escaped if the stream closes first.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/output.h"
#include "util/cleanup.h"
#include "util/text.h"

typedef struct Filter {
        FILE *under;
        char pending[4];
        size_t n_pending;
        int error; /* errno of the first write to under that failed */
} Filter;

static Filter filters[2]; /* stdout's and stderr's */
static bool markdown;     /* stdout is Markdown: '<', '>' and '&' are entities (output_markdown()) */

/* Writes n bytes of text through f's filter; the end may be a piece of a UTF-8 sequence (its
 * length is returned, as text_show() does). In Markdown, where a text's '<b>' would be HTML,
 * '<', '>' and '&' are written as entities: alloclab's own Markdown holds no HTML. */
static size_t show(Filter *f, const char *text, size_t n) {
        if (!(markdown && f == &filters[0]))
                return text_show(f->under, text, n, TEXT_KEEP_LAYOUT | TEXT_PARTIAL);
        for (;;) {
                size_t plain = 0;
                while (plain < n && text[plain] != '<' && text[plain] != '>' && text[plain] != '&')
                        plain++;
                if (plain == n)
                        return text_show(f->under, text, n, TEXT_KEEP_LAYOUT | TEXT_PARTIAL);
                (void) text_show(f->under, text, plain, TEXT_KEEP_LAYOUT);
                fputs(text[plain] == '<' ? "&lt;" : text[plain] == '>' ? "&gt;" : "&amp;", f->under);
                text += plain + 1;
                n -= plain + 1;
        }
}

static ssize_t filter_write(void *cookie, const char *buf, size_t size) {
        Filter *f = cookie;
        size_t taken = 0;
        /* Complete the sequence the last piece ended in, a byte at a time. */
        while (f->n_pending > 0 && taken < size) {
                f->pending[f->n_pending++] = buf[taken++];
                size_t left = show(f, f->pending, f->n_pending);
                if (left == 0)
                        f->n_pending = 0;
                else if (left < f->n_pending) { /* written in part: keep what is still open */
                        memmove(f->pending, f->pending + f->n_pending - left, left);
                        f->n_pending = left;
                }
        }
        size_t left = show(f, buf + taken, size - taken);
        memcpy(f->pending + f->n_pending, buf + size - left, left);
        f->n_pending += left;
        if (ferror(f->under) && !f->error)
                f->error = errno ? errno : EIO;
        return ferror(f->under) ? -1 : (ssize_t) size;
}

static int filter_close(void *cookie) {
        Filter *f = cookie;
        (void) text_show(f->under, f->pending, f->n_pending, TEXT_KEEP_LAYOUT);
        f->n_pending = 0;
        return fflush(f->under) == 0 ? 0 : EOF;
}

static FILE *filtered(Filter *f, FILE *under, int mode) {
        *f = (Filter){ .under = under };
        FILE *out =
                fopencookie(f, "w", (cookie_io_functions_t){ .write = filter_write, .close = filter_close });
        if (out && setvbuf(out, NULL, mode, BUFSIZ) != 0) {
                fclose(out);
                return NULL;
        }
        return out;
}

/* At exit, before stdio flushes what is left: the filters' last pieces into the streams beneath,
 * which then take their places again. */
static void output_unguard(void) {
        if (!filters[0].under)
                return;
        FILE *out = stdout, *err = stderr;
        stdout = filters[0].under;
        stderr = filters[1].under;
        fclose(out);
        fclose(err);
        filters[0].under = filters[1].under = NULL;
}

int output_flush(void) {
        Filter *f = &filters[0];
        errno = 0;
        if (fflush(stdout) != 0 && !f->error)
                f->error = errno ? errno : EIO;
        errno = 0;
        if (f->under && fflush(f->under) != 0 && !f->error)
                f->error = errno ? errno : EIO;
        return f->error ? -f->error : ferror(stdout) ? -EIO : 0;
}

int output_guard(void) {
        FILE *out = filtered(&filters[0], stdout, _IOFBF);
        FILE *err = filtered(&filters[1], stderr, _IONBF);
        if (!out || !err) {
                if (out)
                        fclose(out);
                if (err)
                        fclose(err);
                return -ENOMEM;
        }
        /* A terminal shows stdout as it comes, as it did unfiltered. */
        if (isatty(fileno(stdout)))
                (void) setvbuf(out, NULL, _IOLBF, BUFSIZ);
        stdout = out;
        stderr = err;
        return atexit(output_unguard) == 0 ? 0 : -ENOMEM;
}

void output_markdown_cell(FILE *f, const char *s) {
        for (const char *c = s; *c; c++) {
                if (*c == '\n' || *c == '\r') {
                        fputc(' ', f);
                        continue;
                }
                /* ']' closes nothing that an escaped '[' did not open; a '_' inside a word (run_id)
                 * opens no emphasis. */
                bool in_word = *c == '_' && c > s && isalnum((unsigned char) c[-1]) &&
                               isalnum((unsigned char) c[1]);
                if (strchr("|\\*_`[~", *c) && !in_word)
                        fputc('\\', f);
                fputc(*c, f);
        }
}

void output_markdown(void) {
        markdown = true;
}

void output_raw(FILE *f, const char *seq) {
        for (size_t i = 0; i < ELEMENTSOF(filters); i++)
                if (f == (i == 0 ? stdout : stderr) && filters[i].under) {
                        fflush(f);
                        fputs(seq, filters[i].under);
                        return;
                }
        fputs(seq, f);
}
