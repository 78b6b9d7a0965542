/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "configs/spec.h"
#include "runner/cgroup.h"
#include "util/sha256.h"

/*
 * Allocators built from source (a variant's build key): the tree at a revision is copied out of
 * its repository, built by its commands in a scratch directory, and the file it makes is kept in
 * alloclab's build cache ($XDG_CACHE_HOME/alloclab/builds) under a key made of what decides the
 * result: the tree's content, the commands, the output asked for, the compiler and the build
 * variables of the environment. A build of the same key is never made twice.
 *
 * build_resolve() is cheap (git asks, no build) and says what a spec gets wrong (no such tree or
 * revision); build_make() builds, outside every clock, each command under the run's cgroup and
 * timeout; a build that fails is a result (Build.failure), not an error.
 */

typedef struct BuildRequest {
        const SpecBuild *build;
        const char *base_dir;    /* a relative source is relative to it; NULL: this process's cwd */
        char *const *caller_env; /* the environment the tools run with (without LD_PRELOAD) */
        uint64_t timeout_ns;     /* each command's, as a child's */
        CgroupRun *cgroup;       /* the commands run in its children's cgroup, or NULL */
        bool cgroup_required;    /* it holds the spec's limits: fail rather than go without */
        int cancel_fd;           /* readable: stop the build now; or -1 */
} BuildRequest;

typedef struct Build {
        /* From build_resolve(). */
        char *source;     /* the tree, absolute */
        char *commit;     /* the revision resolved (HEAD for the tree as it is); NULL: not git */
        char *subdir;     /* the source's directory inside its repository, or NULL at its top */
        char *tree;       /* what the tree holds: git's tree id, or a sha256 of its files (hex) */
        char *describe;   /* `git describe --always --tags` (with -dirty), or NULL */
        bool dirty;       /* the tree as it is, with changes not committed */
        char **commands;  /* what runs: the spec's or the family's; NULL: what the tree has */
        char *compiler;   /* the first line of --version of $CC (else cc), or "none" */
        char **variables; /* the caller's build variables that were set: "CFLAGS=-O3", ... */
        char key[SHA256_HEX_SIZE];
        char label[128]; /* build_label()'s */
        /* From build_make(). */
        char *path;    /* the built file in the cache; NULL when the build failed */
        char *failure; /* why it failed: "make exited with code 2: <the log's last lines>" */
        char *output;  /* the built file, relative to the tree */
        char sha256[SHA256_HEX_SIZE];
        bool cached;       /* found in the cache: nothing was built now */
        uint64_t build_ns; /* how long building it took (when it was built) */
} Build;

/* A variant's build as another process made it (the daemon's builder, daemon/builder.h): built
 * (or failed to be), or what was wrong with the spec's tree or revision. */
typedef struct BuildOutcome {
        Build build;
        char *problem;    /* build_resolve()'s message: nothing was built; or NULL */
        bool problem_rev; /* ... the revision is at fault (else the source) */
} BuildOutcome;

void build_outcome_done(BuildOutcome *o);

/* Finds the tree, resolves its revision and makes the cache key. Returns 0; -EINVAL when the
 * revision is at fault, another -errno for the source, with *ret_message ("rev v9 is not a
 * commit of ...", "source ../x: No such file or directory"); -ENOMEM. */
int build_resolve(const BuildRequest *rq, Build *b, char **ret_message);

/* Builds b (resolved) unless the cache has it: b->path, or b->failure. Returns 0 either way;
 * -ECANCELED when cancel_fd stopped it; -errno when this process failed (-ENOMEM, the spawner). */
int build_make(const BuildRequest *rq, Build *b);

/* Runs git (args[0] is "git") in dir as build_resolve() does (rq: the environment, no cgroup
 * needed). Returns 0 with its standard output in *ret_out, 1 when it failed, -errno. */
int build_git(const BuildRequest *rq, const char *dir, const char *const *args, char **ret_out);

/* What a run records of a build: a JSON object (source, commit, subdir, tree, describe, dirty,
 * commands, output, compiler, sha256, key, cached, build_seconds, path, failure), or NULL
 * (-ENOMEM). */
char *build_json(const Build *b);

/* The short name of what was built: `git describe`'s ("v1.2-3-gabc1234", "...-dirty"), else
 * "tree " and the start of the tree's hash (a plain directory). */
const char *build_label(const Build *b);

/* A Build back from build_json()'s text (as a process that built it reports it). Returns 0,
 * -EBADMSG when it is not one, -ENOMEM. */
int build_from_json(const char *text, Build *ret);

void build_done(Build *b);
