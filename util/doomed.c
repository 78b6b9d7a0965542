/* SPDX-License-Identifier: MIT */
/* Files removed when a signal ends the process (see doomed.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/doomed.h"

#define DOOMED_MAX 64

static const int ending_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* A stack: slots below top hold registrations (NULL: forgotten) in the order made. */
static struct {
        char *path;
        bool directory;
} doomed[DOOMED_MAX];
static int top;
static unsigned live;
static struct sigaction earlier[ELEMENTSOF(ending_signals)];

static void remove_doomed(int sig) {
        int saved = errno;
        for (int i = top - 1; i >= 0; i--)
                if (doomed[i].path)
                        (void) (doomed[i].directory ? rmdir(doomed[i].path) : unlink(doomed[i].path));
        errno = saved;
        /* Ends the process as the signal would have: its default action, unblocked on return. */
        (void) signal(sig, SIG_DFL);
        (void) raise(sig);
}

static void ending_set(sigset_t *set) {
        sigemptyset(set);
        for (size_t i = 0; i < ELEMENTSOF(ending_signals); i++)
                sigaddset(set, ending_signals[i]);
}

/* Blocks the ending signals (so that the handler never sees a slot half written) or restores
 * the mask. */
static void hold_signals(bool hold, sigset_t *saved) {
        if (hold) {
                sigset_t set;
                ending_set(&set);
                (void) sigprocmask(SIG_BLOCK, &set, saved);
        } else
                (void) sigprocmask(SIG_SETMASK, saved, NULL);
}

int doomed_register(const char *path, bool directory) {
        char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        sigset_t saved;
        hold_signals(true, &saved);
        /* Newest on top: removed first, so what a directory holds goes before it. */
        int handle = top < DOOMED_MAX ? top : -ENOSPC;
        if (handle >= 0 && live == 0) {
                /* One handler at a time; a signal ignored (nohup) stays ignored. */
                struct sigaction sa = { .sa_handler = remove_doomed };
                ending_set(&sa.sa_mask);
                for (size_t i = 0; i < ELEMENTSOF(ending_signals) && handle >= 0; i++)
                        if (sigaction(ending_signals[i], &sa, &earlier[i]) < 0) {
                                handle = -errno;
                                while (i-- > 0)
                                        (void) sigaction(ending_signals[i], &earlier[i], NULL);
                        } else if (earlier[i].sa_handler == SIG_IGN)
                                (void) sigaction(ending_signals[i], &earlier[i], NULL);
        }
        if (handle >= 0) {
                doomed[handle].path = TAKE_PTR(copy);
                doomed[handle].directory = directory;
                top++;
                live++;
        }
        hold_signals(false, &saved);
        free(copy);
        return handle;
}

void doomed_forget(int handle) {
        if (handle < 0 || handle >= top || !doomed[handle].path)
                return;
        sigset_t saved;
        hold_signals(true, &saved);
        free(doomed[handle].path);
        doomed[handle].path = NULL;
        while (top > 0 && !doomed[top - 1].path)
                top--;
        if (--live == 0)
                for (size_t i = 0; i < ELEMENTSOF(ending_signals); i++)
                        (void) sigaction(ending_signals[i], &earlier[i], NULL);
        hold_signals(false, &saved);
}
