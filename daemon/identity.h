/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * The submitter's file permissions inside the root daemon. Whatever a job names (preload and
 * forward libraries, its program, cwd, the probe) is looked up, opened and hashed with the
 * submitter's identity, never with root's: between identity_enter() and identity_leave() the
 * daemon's filesystem uid and gid (setfsuid/setfsgid) and its supplementary groups are the
 * submitter's, and with them the kernel drops the file capabilities (CAP_DAC_OVERRIDE, ...).
 * The daemon is single-threaded, so nothing else runs meanwhile. Access checks must use the
 * effective identity (faccessat with AT_EACCESS), not access(), which asks for the real uid.
 */

#define IDENTITY_MAX_GROUPS       256
#define IDENTITY_ACCOUNT_CACHE    16
#define IDENTITY_ACCOUNT_TTL_USEC (10ULL * 1000000) /* a change of name or groups counts after this */

typedef struct Identity {
        bool entered; /* false: nothing to restore (not root, or the submitter is root) */
        uid_t fsuid;
        gid_t fsgid;
        int n_groups;
        gid_t groups[IDENTITY_MAX_GROUPS];
} Identity;

/* Takes uid:gid's file identity (with the user's groups, as the user database said at most
 * IDENTITY_ACCOUNT_TTL_USEC ago) when this process is root and uid is not. Returns 0 with *saved to pass to
 * identity_leave(), or -errno (nothing changed). */
int identity_enter(uid_t uid, gid_t gid, Identity *saved);

/* Back to the daemon's own file identity. Aborts if that fails: the daemon must never go on
 * with a user's identity, nor with root's where it means the user's. */
void identity_leave(Identity *saved);

/* The name of uid (NULL in *ret when it has none), as the user database said at most
 * IDENTITY_ACCOUNT_TTL_USEC ago. Returns 0 or -ENOMEM. */
int identity_user_name(uid_t uid, gid_t gid, char **ret);

/* The primary group of uid's account, when group member_of is one of the account's groups
 * (primary or supplementary): a spec file runs as its owner with the owner's own groups, never
 * with the file's group, which a setgid directory chooses. Returns 0 and *ret_gid, -ENOENT when
 * uid has no account, -EPERM when it is not in member_of, -ENOMEM. */
int identity_account_group(uid_t uid, gid_t member_of, gid_t *ret_gid);

/* Becomes uid:gid for good (uid, gid and the account's supplementary groups) when this process
 * is root and uid is not: what a forked runner or builder of a user's job does. Returns 0 or
 * -errno. */
int identity_become(uid_t uid, gid_t gid);
