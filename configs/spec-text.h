/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdio.h>

/*
 * Writing spec YAML: for the specs alloclab makes itself (`alloclab quick` from its command
 * line, `alloclab suite` from a workload and the installed allocators), which then load, are
 * checked and are stored exactly as a spec file would be.
 */

/* s as a double-quoted YAML scalar: every byte kept, control characters escaped. */
void spec_text_scalar(FILE *f, const char *s);

/* A flow sequence of scalars: ["a", "b"]. */
void spec_text_list(FILE *f, char *const *l);

/* s as a template scalar: {NAME} stays where NAME is one of names (each "NAME" or
 * "NAME=VALUES"; names may be NULL), every other brace is doubled so that it stays literal. */
void spec_text_template(FILE *f, const char *s, char *const *names);

/* The variant name of a preload value: a catalog name itself, a path to a catalog allocator's
 * file that allocator's name, another path its file's name up to the first dot (/x/libfoo.so.2
 * is libfoo). A new string, or NULL. */
char *spec_text_variant_name(const char *preload);

/* Whether c may stand in an experiment or variant name: a letter, digit, '_', '-' or '.'. */
bool spec_text_name_char(char c);

/* A name made of prefix and src[0..len) into buf (size > strlen(prefix)), every character a name
 * may not hold replaced by '_', at most 64 bytes. */
void spec_text_name(char *buf, size_t size, const char *prefix, const char *src, size_t len);

/* The spec whose YAML is source (size bytes) made into a comparison of variant's allocator at
 * two revisions: experiment `experiment`, variants names[0] (the baseline and reference) and
 * names[1] with variant's settings and its build at revs[0] and revs[1]; every other key as the
 * source has it but aa_check and schedule. Returns 0 and the YAML in *ret; -ENOENT when variant
 * is not a mapping of the allocators; -EINVAL (source does not parse), -ENOMEM. */
int spec_text_revisions(const char *source, size_t size, const char *experiment, const char *variant,
                        const char *const names[2], const char *const revs[2], char **ret);

/* A variant of `quick -a` or `suite --allocators` as a line of a spec's allocators mapping, left
 * open for more keys (the caller writes the closing "}"): ITEM is ALLOCATOR or NAME=ALLOCATOR,
 * ALLOCATOR a catalog name or a path (preload:) or SOURCE@REV (build: {source, rev}; SOURCE@
 * the tree as it is), the name by default its catalog name, file name, or source directory and
 * revision ("tree" for the tree as it is). Returns the
 * variant's name, or NULL (-ENOMEM, an empty name written). */
char *spec_text_variant_open(FILE *f, const char *item);
