/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/*
 * Text from outside (a child's stderr, an imported run, a submitted path, a file name) on its
 * way to people: a terminal obeys escape sequences in it (clear the screen, set the window
 * title, move the cursor), a log reader takes a newline in it for a new entry, and Unicode's
 * bidirectional controls reorder what is shown. Such characters are written as escapes instead
 * (\x1b, \u{202e}, and \\ for the backslash itself, so that a shown text reads back unambiguously).
 *
 * The characters meant: C0 controls and DEL, C1 controls (U+0080-U+009F, which some terminals
 * obey as ESC sequences), the line and paragraph separators (U+2028, U+2029: a new line to many
 * viewers), the bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069), characters that show as nothing (zero-width space, joiners,
 * word joiner and invisible operators, U+180E, U+200B-U+200D, U+2060-U+2065, U+206A-U+206F, the
 * byte order mark U+FEFF: a name with one looks like another, and columns shift), Unicode's
 * noncharacters (U+FDD0-U+FDEF and the last two code points of every plane, U+FFFE...: an XML
 * or XHTML reader refuses a document holding one), and bytes that are not UTF-8.
 */

/* Whether s is valid UTF-8 without any of those characters: what a name or a path that comes in
 * (a submitted spec path, an imported experiment or host) must be. */
bool text_is_clean(const char *s);

/* Writes s to f with those characters and backslashes escaped. */
void text_put_shown(FILE *f, const char *s);

typedef enum TextShowFlags {
        TEXT_ESCAPE_BACKSLASH = 1 << 0, /* "\\" for a backslash, so that the escapes read back */
        TEXT_KEEP_LAYOUT = 1 << 1,      /* '\n' and '\t' pass: the layout of a printed table */
        TEXT_PARTIAL = 1 << 2,          /* s is a piece of a stream: see the return value */
} TextShowFlags;

/* Writes n bytes of s (NUL bytes included, as \x00) to f as text_put_shown() does, as flags
 * say. Returns 0, or with TEXT_PARTIAL the length of a UTF-8 sequence that s ends in the middle
 * of: not written, for the caller to put in front of the next piece. */
size_t text_show(FILE *f, const char *s, size_t n, unsigned flags);

/* text_shown() as flags say (TEXT_PARTIAL aside). */
char *text_shown_as(const char *s, unsigned flags);

/* The same as a new string (caller frees), or NULL for want of memory. s may be NULL: NULL. */
char *text_shown(const char *s);

/* A copy of s for a stored text that takes none of those characters (import refuses them, see
 * db/bundle-check.c): s itself when clean, else as text_shown() shows it. NULL for NULL; *oom is set
 * when a copy could not be made. */
char *text_storable(const char *s, bool *oom);
