/* SPDX-License-Identifier: MIT */
/* Names of accounts for messages (see accounts.h). */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>

#include "util/accounts.h"

void account_user_name(uid_t uid, char buf[ACCOUNT_NAME_MAX]) {
        const struct passwd *pw = getpwuid(uid);
        if (pw)
                snprintf(buf, ACCOUNT_NAME_MAX, "%s", pw->pw_name);
        else
                snprintf(buf, ACCOUNT_NAME_MAX, "uid %u", (unsigned) uid);
}

void account_group_name(gid_t gid, char buf[ACCOUNT_NAME_MAX]) {
        const struct group *g = getgrgid(gid);
        if (g)
                snprintf(buf, ACCOUNT_NAME_MAX, "%s", g->gr_name);
        else
                snprintf(buf, ACCOUNT_NAME_MAX, "%u", (unsigned) gid);
}

void account_readers(const struct stat *st, char *buf, size_t size) {
        char owner[ACCOUNT_NAME_MAX], group[ACCOUNT_NAME_MAX];
        account_user_name(st->st_uid, owner);
        account_group_name(st->st_gid, group);
        if (st->st_mode & S_IRGRP)
                snprintf(buf, size, "%s and the members of group %s", owner, group);
        else
                snprintf(buf, size, "%s", owner);
}
