/* SPDX-License-Identifier: MIT */
#pragma once

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
