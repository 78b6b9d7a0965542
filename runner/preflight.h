/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Pre-flight: reasons, read from the files alone, why a preload cannot take effect in a
 * program, found before the program runs:
 *   - the program is statically linked (no PT_INTERP): nothing is preloaded into it;
 *   - it is setuid, setgid or has file capabilities: the loader runs it in secure-execution
 *     mode and ignores LD_PRELOAD of non-system paths;
 *   - it defines malloc itself: its own calls never reach a preloaded allocator;
 *   - the allocator library does not define the core of the malloc family.
 * Scripts are judged by their interpreter ("#!"), one level deep.
 */

/*
 * Checks exe (and the preloaded library, unless NULL). Returns 0 when nothing stands in the
 * way, 1 with a reason in *ret_reason (a new string) when something does, -errno when a file
 * cannot be read.
 */
int preflight_check(const char *exe, const char *library, char **ret_reason);
