/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdio.h>
#include <sys/types.h>

/*
 * Reads until size bytes or end of file, retrying on EINTR. Returns the number of bytes read
 * (less than size only at end of file) or -errno.
 */
ssize_t read_full(int fd, void *buf, size_t size);

/* The same from a file offset with pread() (the descriptor's position is left alone); offset -1
 * reads from the current position, as read_full(). */
ssize_t read_full_at(int fd, void *buf, size_t size, off_t offset);

/* Writes all of buf, retrying on EINTR and short writes. Returns 0 or -errno. */
int write_full(int fd, const void *buf, size_t size);

/* A whole file of at most max bytes into *ret (NUL-terminated, caller frees) and its size into
 * *ret_size (may be NULL). Returns 0, -EFBIG past max, -errno. */
int read_text_file(const char *path, size_t max, char **ret, size_t *ret_size);

/* The same for a regular file or memfd already open, from its start whatever its offset (a
 * child's output). Returns 0, -EFBIG past max, -errno. */
int read_text_fd(int fd, size_t max, char **ret, size_t *ret_size);

/* mkdir -p: path and each missing directory above it, made with mode. Returns 0 or -errno. */
int mkdir_parents(const char *path, mode_t mode);

/* Closes f, opened with open_memstream(text, ...), and gives the text written: *text, or NULL
 * (and *text freed) when a write failed for want of memory. */
char *memstream_text(FILE *f, char **text);

/* A file's mode and group, as given (not masked by the umask); gid (gid_t) -1: the process's. */
typedef struct FileAccess {
        mode_t mode;
        gid_t gid;
} FileAccess;

/* Writes size bytes to path whole or not at all: into PATH.partial beside it, renamed over path
 * (a full disk leaves the file before, or none, never a truncated one). access: the new file's
 * mode and group; NULL: 0666 under the umask. Returns 0 or -errno. */
int write_file_replacing(const char *path, const void *data, size_t size, const FileAccess *access);
