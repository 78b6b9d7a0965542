/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * SHA-256 (FIPS 180-4), for identities that users compare across machines: the verbatim
 * spec and every preloaded library. None of the project's dependencies exports it.
 */

#define SHA256_DIGEST_SIZE 32
#define SHA256_HEX_SIZE    (SHA256_DIGEST_SIZE * 2 + 1)

typedef struct Sha256 {
        uint32_t state[8];
        uint64_t length; /* bytes hashed so far */
        uint8_t block[64];
        size_t fill;
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *data, size_t n);
void sha256_final(Sha256 *s, uint8_t ret_digest[SHA256_DIGEST_SIZE]);

/* One-shot digest of a buffer as lowercase hex. */
void sha256_hex(const void *data, size_t n, char ret_hex[SHA256_HEX_SIZE]);

/* Digest of a whole file as lowercase hex. Returns 0 or -errno. */
int sha256_file_hex(const char *path, char ret_hex[SHA256_HEX_SIZE]);
