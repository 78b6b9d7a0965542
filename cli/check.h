/* SPDX-License-Identifier: MIT */
#pragma once

#include "configs/spec.h"
#include "runner/plan.h"

/* What `check` checks of a loaded spec on this machine, said as it says it: the plan (files
 * found, not identified), settings of another allocator (warnings), and every variant whose
 * allocator would ignore or reject its options. Returns EXIT_OK with *ret, or EXIT_ENVIRONMENT
 * (said). run and the daemon meet the same at the smoke run; submit asks first. */
int cli_check_plan(const char *command, const Spec *spec, Plan **ret);

/* The plan check makes (files found, not identified), without a word: plan_new()'s result. */
int cli_plan_for_check(const Spec *spec, Plan **ret, char **ret_message);

/* The part of it about a plan made: settings of another allocator, options ignored or rejected. */
int cli_check_options(const char *command, const Plan *plan);
