/* SPDX-License-Identifier: MIT */
/*
 * Filesystem identity switching for the root daemon (see identity.h). setfsuid() reports the
 * previous value rather than an error, so every switch is checked by reading the value back.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <time.h>
#include <unistd.h>

#include "daemon/identity.h"
#include "util/clock.h"

/* Accounts looked up recently: a burst of submissions by one user reads the user database
 * (getpwuid, getgrouplist: whole files, or a directory service) once, not once each. */
typedef struct Account {
        uid_t uid;
        gid_t gid;
        char *name; /* NULL: the uid has no name */
        int n_groups;
        gid_t groups[IDENTITY_MAX_GROUPS];
        uint64_t expires; /* CLOCK_MONOTONIC usec; 0: a free slot */
} Account;

static Account accounts[IDENTITY_ACCOUNT_CACHE];

/* uid's name and groups (gid and the user's supplementary groups), at most
 * IDENTITY_ACCOUNT_TTL_USEC old; NULL when out of memory. */
static const Account *account_of(uid_t uid, gid_t gid) {
        uint64_t now = now_usec();
        Account *slot = &accounts[0];
        for (Account *a = accounts; a < accounts + IDENTITY_ACCOUNT_CACHE; a++) {
                if (a->expires > now && a->uid == uid && a->gid == gid)
                        return a;
                if (a->expires < slot->expires)
                        slot = a; /* the oldest (or a free) slot takes the new account */
        }
        struct passwd *pw = getpwuid(uid);
        char *name = pw ? strdup(pw->pw_name) : NULL;
        if (pw && !name)
                return NULL;
        free(slot->name);
        *slot = (Account){ .uid = uid, .gid = gid, .name = name, .n_groups = IDENTITY_MAX_GROUPS };
        if (!name || getgrouplist(name, gid, slot->groups, &slot->n_groups) < 0) {
                slot->groups[0] = gid; /* a uid without a name, or too many groups: its own group only */
                slot->n_groups = 1;
        }
        slot->expires = now + IDENTITY_ACCOUNT_TTL_USEC;
        return slot;
}

int identity_user_name(uid_t uid, gid_t gid, char **ret) {
        const Account *a = account_of(uid, gid);
        *ret = NULL;
        return a && (!a->name || (*ret = strdup(a->name))) ? 0 : -ENOMEM;
}

int identity_enter(uid_t uid, gid_t gid, Identity *saved) {
        *saved = (Identity){};
        if (geteuid() != 0 || uid == 0)
                return 0;
        const Account *account = account_of(uid, gid);
        if (!account)
                return -ENOMEM;
        saved->n_groups = getgroups(IDENTITY_MAX_GROUPS, saved->groups);
        if (saved->n_groups < 0)
                return -errno;
        saved->fsgid = (gid_t) setfsgid((gid_t) -1);
        saved->fsuid = (uid_t) setfsuid((uid_t) -1);
        if (setgroups((size_t) account->n_groups, account->groups) < 0)
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

int identity_account_group(uid_t uid, gid_t member_of, gid_t *ret_gid) {
        struct passwd *pw = getpwuid(uid);
        if (!pw)
                return -ENOENT;
        gid_t primary = pw->pw_gid;
        const Account *a = account_of(uid, primary);
        if (!a)
                return -ENOMEM;
        for (int i = 0; i < a->n_groups; i++)
                if (a->groups[i] == member_of) {
                        *ret_gid = primary;
                        return 0;
                }
        return -EPERM;
}

int identity_become(uid_t uid, gid_t gid) {
        if (geteuid() != 0 || uid == 0)
                return 0;
        struct passwd *pw = getpwuid(uid);
        if (pw ? initgroups(pw->pw_name, gid) < 0 : setgroups(0, NULL) < 0)
                return -errno;
        if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                return -errno;
        return 0;
}
