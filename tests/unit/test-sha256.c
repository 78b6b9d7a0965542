/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 against the FIPS 180-4 example vectors, and across block boundaries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/sha256.h"

static void test_vectors(void **state) {
        (void) state;
        char hex[SHA256_HEX_SIZE];
        sha256_hex("", 0, hex);
        assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        sha256_hex("abc", 3, hex);
        assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        sha256_hex(two_blocks, strlen(two_blocks), hex);
        assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_million_a(void **state) {
        (void) state;
        Sha256 s;
        uint8_t d[SHA256_DIGEST_SIZE];
        char chunk[1000];
        memset(chunk, 'a', sizeof(chunk));
        sha256_init(&s);
        for (int i = 0; i < 1000; i++)
                sha256_update(&s, chunk, sizeof(chunk));
        sha256_final(&s, d);
        static const uint8_t expected[] = { 0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
                                            0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
                                            0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0 };
        assert_memory_equal(d, expected, sizeof(expected));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vectors),
                cmocka_unit_test(test_million_a),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
