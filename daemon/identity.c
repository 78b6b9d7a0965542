/* SPDX-License-Identifier: MIT */
/*
 * Filesystem identity switching for the root daemon (see identity.h). setfsuid() reports the
 * previous value rather than an error, so every switch is checked by reading the value back.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <unistd.h>

#include "daemon/identity.h"

int identity_enter(uid_t uid, gid_t gid, Identity *saved) {
        *saved = (Identity){};
        if (geteuid() != 0 || uid == 0)
                return 0;
        gid_t groups[IDENTITY_MAX_GROUPS];
        int n = IDENTITY_MAX_GROUPS;
        struct passwd *pw = getpwuid(uid);
        if (!pw || getgrouplist(pw->pw_name, gid, groups, &n) < 0) {
                groups[0] = gid; /* a uid without a name, or too many groups: its own group only */
                n = 1;
        }
        saved->n_groups = getgroups(IDENTITY_MAX_GROUPS, saved->groups);
        if (saved->n_groups < 0)
                return -errno;
        saved->fsgid = (gid_t) setfsgid((gid_t) -1);
        saved->fsuid = (uid_t) setfsuid((uid_t) -1);
        if (setgroups((size_t) n, groups) < 0)
                return -errno;
        saved->entered = true; /* from here on, identity_leave() restores */
        (void) setfsgid(gid);
        (void) setfsuid(uid);
        if ((gid_t) setfsgid((gid_t) -1) != gid || (uid_t) setfsuid((uid_t) -1) != uid) {
                identity_leave(saved);
                return -EPERM;
        }
        return 0;
}

void identity_leave(Identity *saved) {
        if (!saved->entered)
                return;
        (void) setfsuid(saved->fsuid);
        (void) setfsgid(saved->fsgid);
        if ((uid_t) setfsuid((uid_t) -1) != saved->fsuid || (gid_t) setfsgid((gid_t) -1) != saved->fsgid ||
            setgroups((size_t) saved->n_groups, saved->groups) < 0)
                abort();
        saved->entered = false;
}
