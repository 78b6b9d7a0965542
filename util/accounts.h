/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Names of accounts for messages: the name where the account has one, else the number. */

#define ACCOUNT_NAME_MAX 48

/* "alice", or "uid 1234" for a uid without an account. */
void account_user_name(uid_t uid, char buf[ACCOUNT_NAME_MAX]);

/* "alloclab", or "1234" for a gid without a group. */
void account_group_name(gid_t gid, char buf[ACCOUNT_NAME_MAX]);

/* Who may read a file, by its owner, group and mode: "root and the members of group alloclab",
 * or "root" when its group may not. */
void account_readers(const struct stat *st, char *buf, size_t size);
