/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * Fuzz targets: each defines the libFuzzer entry point. Built with clang and
 * -DALLOCLAB_FUZZ_ENGINE=libfuzzer they are coverage-guided fuzzers; otherwise replay.c drives
 * them with their corpus and deterministic mutations of it (the ctest `fuzz/` tests, run under
 * ASan and UBSan by scripts/test.sh).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Optional: run once before the first input (libFuzzer and replay.c both call it when defined). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * Binary inputs that must match a layout are fuzzed as edits of a valid one, so that most
 * inputs get past the layout checks: `edits` is a sequence of (offset: 2 bytes little-endian,
 * modulo size; length: 1 byte; that many bytes, written at offset and cut at the end of buf).
 * Applies them to buf, which holds size bytes.
 */
void fuzz_apply_edits(uint8_t *buf, size_t size, const uint8_t *edits, size_t n_edits);
