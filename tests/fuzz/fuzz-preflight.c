/* SPDX-License-Identifier: MIT */
/*
 * Pre-flight's ELF reader: it maps the program to run (or a script's interpreter) and the
 * library to preload, whatever they contain. Input: the file, judged as both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runner/preflight.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
        if (fd < 0)
                abort();
        if (write(fd, data, size) != (ssize_t) size)
                abort();
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        char *why = NULL;
        (void) preflight_check(path, path, &why);
        free(why);
        close(fd);
        return 0;
}
