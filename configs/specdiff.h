/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/*
 * What differs between two spec texts, key by key: "samples: 7 -> 10",
 * "allocators.jemalloc.env.MALLOC_CONF: narenas:2 -> narenas:4", "allocators.tbb: only in run 5
 * (...)".
 * Compares the YAML trees, so comments, quoting style and layout do not count, nor a top-level
 * setting's default spelled out or its value written another way (`timeout: 60s` and `1m`:
 * spec_same_setting()); mappings by key, lists item by item when their lengths agree, else as a
 * whole.
 */

#define SPECDIFF_MAX_LINES 20 /* past this, one line says how many more */

/* Sets *ret to a NULL-terminated list of lines (strv; empty when the trees are equal), calling
 * the sides name_a and name_b. Returns 0, -EINVAL when a text does not parse as YAML, -ENOMEM. */
int spec_diff(const char *a, const char *b, const char *name_a, const char *name_b, char ***ret);
