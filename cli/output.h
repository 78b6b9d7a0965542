/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>

/*
 * What alloclab prints goes through one filter: stdout and stderr are replaced by streams that
 * escape every control character alloclab did not write itself (util/text.h), so that no stored
 * text (a child's stderr, an imported run, another user's spec path, what an allocator reports)
 * can drive the reader's terminal or hide in a file: in tables, Markdown, CSV and messages
 * alike. Newlines and tabs pass, as the layout of what is printed. alloclab's own escape
 * sequences (the table's colours, the progress line) are written with output_raw().
 */

/* Puts the filter in front of stdout and stderr (their descriptors stay as they are). Returns 0,
 * or -errno: then both are left unfiltered. */
int output_guard(void);

/* Writes out what stdout holds, through the filter: 0, or -errno when any of stdout's output
 * could not be written (a full disk, a closed pipe, /dev/full). */
int output_flush(void);

/* From now on stdout is Markdown: '<', '>' and '&' are written as entities, so that no stored
 * text becomes HTML where the Markdown is shown. */
void output_markdown(void);

/* Writes s as the text of a Markdown table cell: '|' (a column), line breaks (the row's end)
 * and Markdown's inline syntax ('\\', '*', '_', '`', '[', '~': emphasis, code, links,
 * strike-through) are escaped, so that a cell shows its text as it is. */
void output_markdown_cell(FILE *f, const char *s);

/* Writes seq to f as it is: f's pending text is flushed through the filter first, then seq
 * goes to the stream underneath. */
void output_raw(FILE *f, const char *seq);
