/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "util/cleanup.h"

/*
 * Bundles: runs carried from one database to another as a file (docs/fleet.md). A bundle is an
 * SQLite database of this schema holding only the chosen runs and what they refer to (hosts,
 * experiments, specs, allocators with their sha256, cells, variants, samples, statistics,
 * probe reports, calibration), with the same row ids as their source, plus a table `bundle`
 * that says what the file is. Runs are known across databases by their UUID.
 */

#define BUNDLE_FORMAT        "alloclab-bundle"
#define BUNDLE_VERSION       1
/* The oldest schema whose tables this alloclab's are: a bundle of it imports as it is (schemas 19
 * and 20 added only indexes). */
#define BUNDLE_OLDEST_SCHEMA 18

/* Writes runs run_ids[0..n) of s (none of them running) into a new bundle at path, replacing
 * what is there only once complete. Returns 0, -ENOENT (no such run), -EBUSY (a run is still
 * running), -EIO, -ENOMEM; *ret_message (if non-NULL) says why. */
int bundle_export(Store *s, const int64_t *run_ids, size_t n, const char *path, char **ret_message);

/* What import does with a run filed under a machine name known here with another host
 * fingerprint (another machine-id: another machine under that name; the same one: the same
 * machine after a kernel, firmware or setting change). */
typedef enum MachinePolicy {
        MACHINE_REFUSE, /* refuse the whole import (the default) */
        MACHINE_SPLIT,  /* file the run under "NAME.FINGERPRINT8": a series of its own */
        MACHINE_ACCEPT, /* the same machine: the run joins NAME's series (a new baseline there) */
        _MACHINE_POLICY_MAX,
} MachinePolicy;

extern const char *const machine_policy_names[_MACHINE_POLICY_MAX];

typedef struct BundleOptions {
        MachinePolicy machine_policy;
} BundleOptions;

typedef struct BundleTally {
        size_t runs;     /* runs added */
        size_t present;  /* runs whose UUID was here already: nothing added */
        int64_t samples; /* samples added */
        size_t pruned;   /* of the runs added, those pruned (without their measured samples) */
        /* Of the runs added, those whose machine name was known here with another host fingerprint:
         * filed apart (split_as: the first one's new machine name), or accepted into its series */
        size_t split, accepted;
        char split_as[80];
} BundleTally;

/* Bundle files being imported: each copied into a private directory and checked alone. */
typedef struct BundleFiles BundleFiles;

/*
 * Copies and checks the bundles paths[0..n), each alone, before any database is opened: a file
 * that is not a bundle or is damaged, of a schema other than this alloclab's, or with a value
 * no run has is refused. Returns 0 and *ret, -E2BIG (more files than one import takes),
 * -EBADMSG (damaged or not a bundle), -EPROTO (schema), -ENOMEM, or -errno, with *ret_message
 * (if non-NULL) naming the file and the reason.
 */
int bundle_files_check(char *const *paths, size_t n, BundleFiles **ret, char **ret_message);
void bundle_files_free(BundleFiles *f);
DEFINE_POINTER_CLEANUP(BundleFiles, bundle_files_free);

/*
 * Merges checked bundle files into s in one transaction: a run whose UUID is here with other
 * content, or (by o->machine_policy) a machine name seen here with another fingerprint, refuses
 * the whole import with nothing written. Each new run gets new local ids (its UUID kept); a run present
 * already adds nothing. Returns 0, -EEXIST (UUID with other content), -EXDEV (host), -EIO, -ENOMEM, with
 * *ret_message (if non-NULL) naming the file and the reason.
 */
int bundle_import(Store *s, BundleFiles *files, const BundleOptions *o, BundleTally *ret,
                  char **ret_message);
