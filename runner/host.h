/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the machine was when a run was measured: enough to tell later whether two runs are
 * comparable. Read from uname, /proc and /sys; fields that cannot be read are "unknown".
 */

typedef struct Host {
        char *hostname;
        char *kernel; /* release */
        char *cpu_model;
        unsigned cpus; /* online */
        char *glibc;
        char *thp; /* transparent_hugepage/enabled, the bracketed choice */
} Host;

/* Fills *ret. Returns 0 or -ENOMEM; unreadable facts become "unknown". */
int host_read(Host *ret);
void host_done(Host *h);
