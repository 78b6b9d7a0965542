/* SPDX-License-Identifier: MIT */
#pragma once

#include <sys/types.h>

/*
 * Reads until size bytes or end of file, retrying on EINTR. Returns the number of bytes read
 * (less than size only at end of file) or -errno.
 */
ssize_t read_full(int fd, void *buf, size_t size);
