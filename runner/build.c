/* SPDX-License-Identifier: MIT */
/*
 * Building allocators from source (runner/build.h). Every tool (git, tar, cc, the build's
 * commands) runs as a child does, through the spawner: in the run's cgroup with its limits and
 * timeout, its output in a file, never sharing this process's terminal. Tools are found on the
 * caller's PATH by sh, as the user's own shell would.
 *
 * A cache entry is a directory KEY/ holding the built file, build.json (what build_json() says,
 * read back on a hit) and build.log; it is made in a scratch directory next to it and renamed
 * into place, so a half-made entry is never found. A failed build leaves its log as
 * KEY.failed.log and nothing in the cache.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "configs/catalog.h"
#include "runner/build.h"
#include "runner/output.h"
#include "runner/spawn.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/io.h"
#include "util/paths.h"
#include "util/strv.h"

#define BUILD_CACHE_VERSION "alloclab-build 1"
#define BUILD_LOG_TAIL      1200                  /* bytes of a failed build's log in its reason */
#define BUILD_TOOL_TIMEOUT  (300ULL * 1000000000) /* git and tar at most, besides the commands */
#define BUILD_LIST_MAX      (64 * 1024 * 1024)    /* bytes of the names of a tree's files */

/* The variables besides the compiler that change what a build makes. */
static const char *const build_variables[] = { "CC",       "CXX",     "CFLAGS",    "CXXFLAGS",
                                               "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", NULL };

/* ---- running tools ---------------------------------------------------------------------- */

/* sh runs a tool as `sh -c tool_script NAME ARGS...`: NAME found on PATH, ARGS as they are. */
static const char *const tool_script = "exec \"$0\" \"$@\"";

/* The caller's environment without the preload: borrowed strings in a vector of its own. */
static char **tool_env(const BuildRequest *rq) {
        size_t n = strv_length(rq->caller_env);
        char **envp = calloc(n + 1, sizeof(char *));
        for (size_t i = 0, k = 0; envp && i < n; i++)
                if (strncmp(rq->caller_env[i], "LD_PRELOAD=", 11) != 0)
                        envp[k++] = rq->caller_env[i];
        return envp;
}

/* Runs `sh -c script arg0 args...` in cwd, output to out_fd and err_fd, to its end. */
static int run_sh(const BuildRequest *rq, const char *cwd, const char *script, const char *const *args,
                  uint64_t timeout_ns, int out_fd, int err_fd, SpawnResult *res) {
        _cleanup_free_ char **envp = tool_env(rq);
        _cleanup_free_ char **argv = calloc(strv_length((char *const *) args) + 4, sizeof(char *));
        if (!envp || !argv)
                return -ENOMEM;
        size_t k = 0;
        argv[k++] = (char *) "sh";
        argv[k++] = (char *) "-c";
        argv[k++] = (char *) script;
        for (size_t i = 0; args && args[i]; i++)
                argv[k++] = (char *) args[i];
        SpawnRequest req = {
                .exe = "/bin/sh",
                .argv = argv,
                .envp = envp,
                .cwd = cwd,
                .timeout_ns = timeout_ns,
                .stdout_fd = out_fd,
                .stderr_fd = err_fd,
                .metrics_fd = err_fd,
                .probe_fd = -1,
                .cancel_fd = rq->cancel_fd,
                .cgroup = rq->cgroup,
                .cgroup_required = rq->cgroup_required,
        };
        int r = spawn_run(&req, res);
        if (rq->cgroup)
                cgroup_children_empty(rq->cgroup);
        if (r < 0)
                return r;
        return res->end == SPAWN_CANCELED ? -ECANCELED : 0;
}

static bool succeeded(const SpawnResult *res) {
        return res->end == SPAWN_EXITED && res->exit_code == 0 && !res->oom_killed;
}

/* Runs a program (args[0], found on PATH) in cwd. Returns 0 when it exited 0, with its standard
 * output (its first OUTPUT_SCAN_MAX bytes, trailing newlines cut) in *ret_out if non-NULL and its standard
 * error's first bytes in *ret_err if non-NULL; 1 when it failed (with *ret_err); -errno. */
static int tool(const BuildRequest *rq, const char *cwd, const char *const *args, char **ret_out,
                char **ret_err) {
        _cleanup_close_ int out = output_memfd("alloclab-build-tool");
        _cleanup_close_ int err = output_memfd("alloclab-build-tool");
        if (out < 0 || err < 0)
                return out < 0 ? out : err;
        SpawnResult res;
        int r = run_sh(rq, cwd, tool_script, args, BUILD_TOOL_TIMEOUT, out, err, &res);
        if (r < 0)
                return r;
        if (ret_err && !(*ret_err = output_excerpt(err)))
                *ret_err = strdup(res.end == SPAWN_EXITED && res.exit_code == 127 ? "not installed" : "");
        if (!succeeded(&res))
                return 1;
        if (!ret_out)
                return 0;
        _cleanup_free_ char *text = output_excerpt_all(out);
        if (!text && !(text = strdup("")))
                return -ENOMEM;
        for (size_t n = strlen(text); n > 0 && text[n - 1] == '\n'; n--)
                text[n - 1] = 0;
        *ret_out = TAKE_PTR(text);
        return 0;
}

int build_git(const BuildRequest *rq, const char *dir, const char *const *args, char **ret_out) {
        return tool(rq, dir, args, ret_out, NULL);
}

/* ---- what the tree is ------------------------------------------------------------------- */

static void hex_of(const uint8_t digest[SHA256_DIGEST_SIZE], char ret[SHA256_HEX_SIZE]) {
        for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
                snprintf(ret + 2 * i, 3, "%02x", digest[i]);
}

/* Adds a file of the tree to h: its path, whether it is executable, and its content (a
 * symbolic link's target). */
static int hash_file(Sha256 *h, int dir_fd, const char *rel) {
        struct stat st;
        if (fstatat(dir_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno; /* a tracked file deleted: not in the tree */
        char kind = S_ISLNK(st.st_mode) ? 'l' : (st.st_mode & 0111) ? 'x' : 'f';
        sha256_update(h, rel, strlen(rel) + 1);
        sha256_update(h, &kind, 1);
        if (S_ISLNK(st.st_mode)) {
                char target[4096];
                ssize_t n = readlinkat(dir_fd, rel, target, sizeof(target));
                if (n < 0)
                        return -errno;
                sha256_update(h, target, (size_t) n);
                return 0;
        }
        if (!S_ISREG(st.st_mode))
                return 0;
        _cleanup_close_ int fd = openat(dir_fd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        char buf[65536];
        ssize_t n;
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                sha256_update(h, buf, (size_t) n);
        return n < 0 ? -errno : 0;
}

/* The files of a plain directory (relative paths, sorted, without .git), appended to *list. */
static int list_dir(int dir_fd, const char *prefix, char ***list) {
        _cleanup_close_ int fd =
                openat(dir_fd, prefix[0] ? prefix : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        struct dirent **names = NULL;
        int n = scandirat(fd, ".", &names, NULL, alphasort);
        if (n < 0)
                return -errno;
        int r = 0;
        for (int i = 0; i < n; i++) {
                const char *name = names[i]->d_name;
                _cleanup_free_ char *rel = NULL;
                struct stat st;
                if (r < 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, ".git") == 0)
                        ;
                else if (asprintf(&rel, "%s%s%s", prefix, prefix[0] ? "/" : "", name) < 0)
                        r = -ENOMEM;
                else if (fstatat(dir_fd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        r = -errno;
                else if (S_ISDIR(st.st_mode))
                        r = list_dir(dir_fd, rel, list);
                else
                        r = strv_append(list, rel);
                free(names[i]);
        }
        free(names);
        return r;
}

/* The files of a git tree as it is: tracked, or untracked and not ignored (sorted by git). */
static int list_tree(const BuildRequest *rq, const Build *b, bool untracked, char ***ret) {
        const char *args[] = {
                "git", "ls-files", "-z", untracked ? "-o" : "-c", "--exclude-standard", NULL
        };
        _cleanup_close_ int out = output_memfd("alloclab-build-files");
        _cleanup_close_ int err = output_memfd("alloclab-build-files");
        if (out < 0 || err < 0)
                return out < 0 ? out : err;
        SpawnResult res;
        int r = run_sh(rq, b->source, tool_script, args, BUILD_TOOL_TIMEOUT, out, err, &res);
        if (r < 0)
                return r;
        if (!succeeded(&res))
                return -EIO;
        _cleanup_free_ char *names = NULL;
        size_t size;
        if ((r = read_text_fd(out, BUILD_LIST_MAX, &names, &size)) < 0)
                return r;
        for (size_t at = 0; at < size; at += strlen(names + at) + 1)
                if (names[at] && (r = strv_append(ret, names + at)) < 0)
                        return r;
        return 0;
}

/* Whether a file of a tree as it is was made by a build (an object, a library, an archive, a
 * program): what an earlier build in the tree left is not the source, and copied into the build
 * it would pass for what the commands make ("up to date"). */
static bool is_build_product(int dir_fd, const char *rel) {
        _cleanup_close_ int fd = openat(dir_fd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        char magic[8];
        if (fd < 0 || read_full(fd, magic, sizeof(magic)) != (ssize_t) sizeof(magic))
                return false;
        return memcmp(magic, "\177ELF", 4) == 0 || memcmp(magic, "!<arch>\n", 8) == 0;
}

/* The files of the tree as it is: a git tree's tracked ones (not deleted) and its untracked ones,
 * a plain directory's all, but of those untracked what a build made there (is_build_product). */
static int tree_files(const BuildRequest *rq, const Build *b, int dir_fd, char ***ret) {
        _cleanup_strv_free_ char **tracked = NULL, **untracked = NULL;
        int r = b->commit ? list_tree(rq, b, false, &tracked) : 0;
        if (r >= 0)
                r = b->commit ? list_tree(rq, b, true, &untracked) : list_dir(dir_fd, "", &untracked);
        struct stat st;
        for (size_t i = 0; r >= 0 && tracked && tracked[i]; i++)
                if (fstatat(dir_fd, tracked[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
                        r = strv_append(ret, tracked[i]);
        for (size_t i = 0; r >= 0 && untracked && untracked[i]; i++)
                if (!is_build_product(dir_fd, untracked[i]))
                        r = strv_append(ret, untracked[i]);
        return r;
}

/* What the tree's content is, into b->tree: git's tree id where a commit is built, else a
 * hash of its files (paths, kinds, contents). */
static int tree_identity(const BuildRequest *rq, Build *b) {
        if (b->commit && !b->dirty) {
                _cleanup_free_ char *spec = NULL;
                /* COMMIT:subdir names the subdirectory's tree already (with ^{tree} after it, git
                 * reads that as part of the path). */
                if (b->subdir ? asprintf(&spec, "%s:%s", b->commit, b->subdir) < 0
                              : asprintf(&spec, "%s^{tree}", b->commit) < 0)
                        return -ENOMEM;
                const char *args[] = { "git", "rev-parse", "--verify", spec, NULL };
                int r = tool(rq, b->source, args, &b->tree, NULL);
                return r != 0 ? (r < 0 ? r : -EIO) : 0;
        }
        _cleanup_strv_free_ char **files = NULL;
        _cleanup_close_ int dir_fd = open(b->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        int r = tree_files(rq, b, dir_fd, &files);
        if (r < 0)
                return r;
        Sha256 h;
        sha256_init(&h);
        for (size_t i = 0; files && files[i]; i++)
                if ((r = hash_file(&h, dir_fd, files[i])) < 0)
                        return r;
        uint8_t digest[SHA256_DIGEST_SIZE];
        sha256_final(&h, digest);
        if (!(b->tree = malloc(SHA256_HEX_SIZE)))
                return -ENOMEM;
        hex_of(digest, b->tree);
        return 0;
}

static int make_key(const BuildRequest *rq, Build *b) {
        const SpecBuild *sb = rq->build;
        Sha256 h;
        sha256_init(&h);
        sha256_update(&h, BUILD_CACHE_VERSION "\n", strlen(BUILD_CACHE_VERSION) + 1);
        int r = tree_identity(rq, b);
        if (r < 0)
                return r;
        sha256_update(&h, "tree ", 5);
        sha256_update(&h, b->tree, strlen(b->tree) + 1);
        sha256_update(&h, "commands\n", 9);
        for (size_t i = 0; b->commands && b->commands[i]; i++)
                sha256_update(&h, b->commands[i], strlen(b->commands[i]) + 1);
        const char *output = sb->output   ? sb->output
                             : sb->family ? catalog_find(sb->family)->build_output
                                          : "";
        sha256_update(&h, "output\n", 7);
        sha256_update(&h, output, strlen(output) + 1);
        sha256_update(&h, b->compiler, strlen(b->compiler) + 1);
        for (size_t i = 0; b->variables && b->variables[i]; i++)
                sha256_update(&h, b->variables[i], strlen(b->variables[i]) + 1);
        uint8_t digest[SHA256_DIGEST_SIZE];
        sha256_final(&h, digest);
        hex_of(digest, b->key);
        return 0;
}

static int fail(char **ret_message, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char **ret_message, int error, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vasprintf(ret_message, fmt, ap);
        va_end(ap);
        return r < 0 ? -ENOMEM : error;
}

/* Where in its repository the source is ("" at the top), or NULL when it is in none. */
static int git_prefix(const BuildRequest *rq, const char *source, char **ret) {
        const char *args[] = { "git", "rev-parse", "--show-prefix", NULL };
        int r = tool(rq, source, args, ret, NULL);
        if (r == 1)
                *ret = NULL;
        return r < 0 ? r : 0;
}

/* The revision asked for (or HEAD) as a commit, its description, and for the tree as it is
 * whether it has changes. */
static int resolve_git(const BuildRequest *rq, Build *b, char **ret_message) {
        const char *rev = rq->build->rev ? rq->build->rev : "HEAD";
        _cleanup_free_ char *spec = NULL, *why = NULL;
        if (asprintf(&spec, "%s^{commit}", rev) < 0)
                return -ENOMEM;
        const char *parse[] = { "git", "rev-parse", "--verify", "--quiet", "--end-of-options", spec, NULL };
        int r = tool(rq, b->source, parse, &b->commit, NULL);
        if (r < 0)
                return r;
        if (r == 1 && !rq->build->rev) /* a repository without a commit yet: its files */
                return 0;
        if (r == 1)
                return fail(ret_message, -EINVAL, "build: rev %s is not a commit of %s", rev, b->source);
        if (!rq->build->rev) {
                _cleanup_free_ char *changes = NULL;
                const char *status[] = { "git", "status", "--porcelain", "--untracked-files=normal",
                                         "--",  ".",      NULL };
                if ((r = tool(rq, b->source, status, &changes, &why)) != 0)
                        return r < 0 ? r
                                     : fail(ret_message, -EIO, "build: git status in %s failed: %s",
                                            b->source, why);
                b->dirty = changes[0] != 0;
        }
        const char *describe[] = { "git", "describe", "--always", "--tags", b->commit, NULL };
        if ((r = tool(rq, b->source, describe, &b->describe, NULL)) < 0)
                return r;
        if (b->dirty && b->describe) {
                char *d = NULL;
                if (asprintf(&d, "%s-dirty", b->describe) < 0)
                        return -ENOMEM;
                free(b->describe);
                b->describe = d;
        }
        return 0;
}

static void set_label(Build *b) {
        snprintf(b->label, sizeof(b->label), "%s%.*s", b->describe ? b->describe : "tree ",
                 b->describe ? 0 : 8, b->tree ? b->tree : "?");
}

int build_resolve(const BuildRequest *rq, Build *b, char **ret_message) {
        const SpecBuild *sb = rq->build;
        *b = (Build){};
        _cleanup_free_ char *joined = NULL;
        if (sb->source[0] != '/' && rq->base_dir && asprintf(&joined, "%s/%s", rq->base_dir, sb->source) < 0)
                return -ENOMEM;
        const char *where = joined ? joined : sb->source;
        struct stat st;
        int r = stat(where, &st) < 0 ? negative_errno() : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
        if (r < 0)
                return fail(ret_message, r, "build: source %s: %s", sb->source, strerror(-r));
        if (!(b->source = realpath(where, NULL)))
                return -errno;
        _cleanup_free_ char *prefix = NULL;
        r = git_prefix(rq, b->source, &prefix);
        if (r < 0)
                return r;
        if (!prefix && sb->rev)
                return fail(ret_message, -EINVAL,
                            "build: rev %s names a commit, and %s is not in a git repository (or git is not "
                            "installed)",
                            sb->rev, b->source);
        if (prefix && (r = resolve_git(rq, b, ret_message)) < 0)
                return r;
        /* A subdirectory of a repository is built as its own tree: COMMIT:subdir. */
        if (prefix && prefix[0]) {
                prefix[strlen(prefix) - 1] = 0; /* git's trailing '/' */
                b->subdir = TAKE_PTR(prefix);
        }
        const CatalogEntry *family = sb->family ? catalog_find(sb->family) : NULL;
        if (sb->commands && !(b->commands = strv_copy(sb->commands)))
                return -ENOMEM;
        if (!sb->commands && family && !(b->commands = strv_copy((char *const *) family->build_commands)))
                return -ENOMEM;
        /* The build variables of the caller's environment, and the compiler CC names (else cc). */
        for (const char *const *v = build_variables; *v; v++) {
                ssize_t i = strv_env_find(rq->caller_env, *v, strlen(*v));
                if (i >= 0 && strv_append(&b->variables, rq->caller_env[i]) < 0)
                        return -ENOMEM;
        }
        ssize_t cc_var = strv_env_find(rq->caller_env, "CC", 2);
        _cleanup_free_ char *cc_name = strndup(cc_var >= 0 ? rq->caller_env[cc_var] + 3 : "cc",
                                               cc_var >= 0 ? strcspn(rq->caller_env[cc_var] + 3, " \t") : 2);
        if (!cc_name)
                return -ENOMEM;
        const char *cc[] = { cc_name[0] ? cc_name : "cc", "--version", NULL };
        if ((r = tool(rq, b->source, cc, &b->compiler, NULL)) < 0)
                return r;
        if (r == 1 && !(b->compiler = strdup("none")))
                return -ENOMEM;
        b->compiler[strcspn(b->compiler, "\n")] = 0;
        if ((r = make_key(rq, b)) < 0)
                return fail(ret_message, r, "build: cannot read the tree %s: %s", b->source,
                            r == -EIO ? "git could not (git rev-parse, git ls-files)" : strerror(-r));
        set_label(b);
        return 0;
}

/* ---- building --------------------------------------------------------------------------- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* rm -rf path (it may be missing). */
static int remove_tree(const char *path) {
        return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT ? -errno : 0;
}

#define BUILD_SCRATCH_STALE_S                                                                               \
        (7 * 24 * 3600) /* a build's scratch this old was left by a killed alloclab                         \
                         */

/* Removes the scratch directories of builds that never finished (alloclab killed meanwhile):
 * what is older than a week, as no build takes that long. */
static void remove_stale_scratch(const char *cache) {
        _cleanup_(closedirp) DIR *d = opendir(cache);
        struct dirent *e;
        struct stat st;
        time_t now = time(NULL);
        while (d && (e = readdir(d)))
                if (strncmp(e->d_name, ".tmp-", 5) == 0 &&
                    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
                    now - st.st_mtime > BUILD_SCRATCH_STALE_S) {
                        _cleanup_free_ char *path = NULL;
                        if (asprintf(&path, "%s/%s", cache, e->d_name) >= 0)
                                (void) remove_tree(path);
                }
}

/* The cache's entry for b->key, if it is there whole: b->path, output, sha256, build time. */
static int cache_lookup(Build *b, const char *entry) {
        _cleanup_free_ char *meta = NULL, *text = NULL;
        if (asprintf(&meta, "%s/build.json", entry) < 0)
                return -ENOMEM;
        int r = read_text_file(meta, 1 << 20, &text, NULL);
        if (r == -ENOENT)
                return 0;
        json_auto_t *doc = r < 0 ? NULL : json_loads(text, 0, NULL);
        const char *output = json_string_value(json_object_get(doc, "output"));
        const char *sha256 = json_string_value(json_object_get(doc, "sha256"));
        const json_t *commands = json_object_get(doc, "commands");
        _cleanup_free_ char *path = NULL;
        char actual[SHA256_HEX_SIZE];
        if (!output || !sha256 || strlen(sha256) != SHA256_HEX_SIZE - 1 || !json_is_array(commands) ||
            asprintf(&path, "%s/%s", entry, strrchr(output, '/') ? strrchr(output, '/') + 1 : output) < 0 ||
            sha256_file_hex(path, actual) < 0 || strcmp(actual, sha256) != 0)
                return remove_tree(entry) < 0 ? -EIO : 0; /* broken: built again */
        if (!b->commands) {
                size_t i;
                const json_t *line;
                json_array_foreach(commands, i,
                                   line) if (strv_append(&b->commands, json_string_value(line)) <
                                             0) return -ENOMEM;
        }
        if (!(b->output = strdup(output)))
                return -ENOMEM;
        b->path = TAKE_PTR(path);
        strcpy(b->sha256, sha256);
        b->build_ns = (uint64_t) (json_number_value(json_object_get(doc, "build_seconds")) * 1e9);
        b->cached = true;
        return 1;
}

/* The log's last lines (of its last BUILD_LOG_TAIL bytes, without the "$ command" lines this
 * file writes), on one line joined by " | ", for a reason shown in a table. */
static char *log_tail(const char *log) {
        _cleanup_close_ int fd = open(log, O_RDONLY | O_CLOEXEC);
        struct stat st;
        char buf[BUILD_LOG_TAIL + 1];
        if (fd < 0 || fstat(fd, &st) < 0)
                return strdup("");
        off_t from = st.st_size > BUILD_LOG_TAIL ? st.st_size - BUILD_LOG_TAIL : 0;
        ssize_t n = read_full_at(fd, buf, (size_t) (st.st_size - from), from);
        buf[n < 0 ? 0 : n] = 0;
        char *joined = NULL;
        size_t size = 0;
        _cleanup_fclose_ FILE *f = open_memstream(&joined, &size);
        if (!f)
                return NULL;
        bool first = true;
        char *line = from > 0 && strchr(buf, '\n') ? strchr(buf, '\n') + 1 : buf; /* whole lines only */
        for (char *next; line && *line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                line += strspn(line, " \t");
                if (!*line || strncmp(line, "$ ", 2) == 0)
                        continue;
                for (char *c = line; *c; c++)
                        if ((unsigned char) *c < ' ')
                                *c = ' ';
                fprintf(f, "%s%s", first ? "" : " | ", line);
                first = false;
        }
        return memstream_text(TAKE_PTR(f), &joined);
}

/* Runs a step of the build (a tool or a command line) with its output in the log. Returns 0
 * when it succeeded, 1 with b->failure set, -errno. */
static int build_step(const BuildRequest *rq, Build *b, const char *cwd, const char *script,
                      const char *const *args, const char *what, uint64_t timeout_ns, int log_fd,
                      const char *log) {
        SpawnResult res;
        dprintf(log_fd, "$ %s\n", what);
        int r = run_sh(rq, cwd, script, args, timeout_ns, log_fd, log_fd, &res);
        if (r < 0)
                return r;
        if (succeeded(&res))
                return 0;
        char end[160];
        if (res.oom_killed)
                snprintf(end, sizeof(end), "its tree reached memory_max");
        else if (res.end == SPAWN_TIMEOUT)
                snprintf(end, sizeof(end), "still running after the timeout (%.3g s)",
                         (double) timeout_ns / 1e9);
        else
                spawn_describe_end(&res, end, sizeof(end));
        _cleanup_free_ char *tail = log_tail(log);
        return asprintf(&b->failure, "`%s` failed: %s: %s", what, end, tail ? tail : "") < 0 ? -ENOMEM : 1;
}

/* Copies the tree into dir: the commit through git archive, the tree as it is through tar. */
static int export_tree(const BuildRequest *rq, Build *b, const char *scratch, const char *dir, int log_fd,
                       const char *log) {
        _cleanup_free_ char *tar = NULL, *treeish = NULL, *list = NULL;
        if (asprintf(&tar, "%s/source.tar", scratch) < 0 ||
            asprintf(&treeish, "%s%s%s", b->commit ? b->commit : "", b->subdir ? ":" : "",
                     b->subdir ? b->subdir : "") < 0 ||
            asprintf(&list, "%s/files", scratch) < 0)
                return -ENOMEM;
        int r;
        if (b->commit && !b->dirty) {
                /* From the repository's top: in a subdirectory, git archive looks for the subdirectory
                 * inside the tree it is given. */
                _cleanup_free_ char *top =
                        b->subdir ? strndup(b->source, strlen(b->source) - strlen(b->subdir) - 1)
                                  : strdup(b->source);
                const char *archive[] = { "git", "archive", "--format=tar", "-o", tar, treeish, NULL };
                r = top ? build_step(rq, b, top, tool_script, archive, "git archive", BUILD_TOOL_TIMEOUT,
                                     log_fd, log)
                        : -ENOMEM;
        } else {
                _cleanup_strv_free_ char **files = NULL;
                _cleanup_close_ int source_fd = open(b->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (source_fd < 0)
                        return -errno;
                r = tree_files(rq, b, source_fd, &files);
                _cleanup_fclose_ FILE *f = r < 0 ? NULL : fopen(list, "we");
                if (r < 0 || !f)
                        return r < 0 ? r : -errno;
                for (size_t i = 0; files && files[i]; i++)
                        fwrite(files[i], 1, strlen(files[i]) + 1, f);
                if (fflush(f) != 0)
                        return -errno;
                const char *pack[] = { "tar", "-C", b->source, "--null", "--no-recursion",
                                       "-T",  list, "-cf",     tar,      NULL };
                r = build_step(rq, b, b->source, tool_script, pack, "tar -c", BUILD_TOOL_TIMEOUT, log_fd,
                               log);
        }
        if (r != 0)
                return r;
        if (mkdir(dir, 0755) < 0)
                return -errno;
        const char *unpack[] = { "tar", "-xf", tar, "-C", dir, NULL };
        r = build_step(rq, b, scratch, tool_script, unpack, "tar -x", BUILD_TOOL_TIMEOUT, log_fd, log);
        (void) unlink(tar);
        return r;
}

/* What the tree has to be built with, when neither the spec nor a family says. */
static int detect_commands(const char *dir, Build *b) {
        static const struct {
                const char *file;
                const char *const commands[4];
        } ways[] = {
                { "CMakeLists.txt",
                  { "cmake -S . -B out -DCMAKE_BUILD_TYPE=Release", "cmake --build out -j\"$(nproc)\"" } },
                { "configure", { "./configure", "make -j\"$(nproc)\"" } },
                { "autogen.sh", { "./autogen.sh", "./configure", "make -j\"$(nproc)\"" } },
                { "GNUmakefile", { "make -j\"$(nproc)\"" } },
                { "Makefile", { "make -j\"$(nproc)\"" } },
                { "makefile", { "make -j\"$(nproc)\"" } },
        };
        for (size_t i = 0; i < ELEMENTSOF(ways); i++) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/%s", dir, ways[i].file) < 0)
                        return -ENOMEM;
                if (access(path, F_OK) < 0)
                        continue;
                b->commands = strv_copy((char *const *) ways[i].commands);
                return b->commands ? 1 : -ENOMEM;
        }
        return asprintf(&b->failure, "the tree has no CMakeLists.txt, configure, autogen.sh or Makefile: "
                                     "say how to build it "
                                     "(build: commands:)") < 0
                       ? -ENOMEM
                       : 0;
}

static bool is_shared_library(const char *name) {
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
        const char *so = strstr(base, ".so");
        return so && (so[3] == 0 || so[3] == '.');
}

/* The shared libraries in the tree (regular files, not the links to them). */
static int shared_libraries(const char *dir, char ***ret) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_strv_free_ char **all = NULL;
        if (fd < 0)
                return -errno;
        int r = list_dir(fd, "", &all);
        struct stat st;
        for (size_t i = 0; r >= 0 && all && all[i]; i++)
                if (is_shared_library(all[i]) && fstatat(fd, all[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISREG(st.st_mode))
                        r = strv_append(ret, all[i]);
        return r;
}

/* The file to preload: the one asked for, else the one shared library the build made. Returns
 * 1 (with b->output), 0 with b->failure, -errno. */
static int find_output(const BuildRequest *rq, Build *b, const char *dir, char *const *before) {
        const SpecBuild *sb = rq->build;
        const char *asked = sb->output   ? sb->output
                            : sb->family ? catalog_find(sb->family)->build_output
                                         : NULL;
        if (asked) {
                _cleanup_free_ char *path = NULL;
                struct stat st;
                if (asprintf(&path, "%s/%s", dir, asked) < 0)
                        return -ENOMEM;
                if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
                        return asprintf(&b->failure, "the build made no file %s to preload", asked) < 0
                                       ? -ENOMEM
                                       : 0;
                return (b->output = strdup(asked)) ? 1 : -ENOMEM;
        }
        _cleanup_strv_free_ char **after = NULL, **made = NULL;
        int r = shared_libraries(dir, &after);
        for (size_t i = 0; r >= 0 && after && after[i]; i++)
                if (!strv_contains(before, after[i]))
                        r = strv_append(&made, after[i]);
        if (r < 0)
                return r;
        if (strv_length(made) == 1)
                return (b->output = strdup(made[0])) ? 1 : -ENOMEM;
        _cleanup_free_ char *names = NULL;
        for (size_t i = 0; made && made[i] && i < 8; i++) {
                char *more = NULL;
                if (asprintf(&more, "%s%s%s", names ? names : "", names ? ", " : "", made[i]) < 0)
                        return -ENOMEM;
                free(names);
                names = more;
        }
        return asprintf(&b->failure, "the build made %s; say which file to preload (build: output:)",
                        made ? names : "no shared library") < 0
                       ? -ENOMEM
                       : 0;
}

/* Copies the built file (the file a link names) into the entry, hashing it. */
static int keep_output(Build *b, const char *dir, const char *scratch) {
        _cleanup_free_ char *from = NULL, *to = NULL;
        const char *base = strrchr(b->output, '/') ? strrchr(b->output, '/') + 1 : b->output;
        if (asprintf(&from, "%s/%s", dir, b->output) < 0 || asprintf(&to, "%s/%s", scratch, base) < 0)
                return -ENOMEM;
        _cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (in < 0 || out < 0)
                return -errno;
        Sha256 h;
        sha256_init(&h);
        char buf[65536];
        ssize_t n;
        int r;
        while ((n = read(in, buf, sizeof(buf))) > 0) {
                sha256_update(&h, buf, (size_t) n);
                if ((r = write_full(out, buf, (size_t) n)) < 0)
                        return r;
        }
        if (n < 0 || fsync(out) < 0)
                return -errno;
        uint8_t digest[SHA256_DIGEST_SIZE];
        sha256_final(&h, digest);
        hex_of(digest, b->sha256);
        return 0;
}

static int write_metadata(const Build *b, const char *scratch) {
        _cleanup_free_ char *json = build_json(b), *path = NULL;
        if (!json || asprintf(&path, "%s/build.json", scratch) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        int r = write_full(fd, json, strlen(json));
        return r < 0 ? r : fsync(fd) < 0 ? -errno : 0;
}

/* Exports, builds and keeps b's output in scratch. Returns 1 when built, 0 with b->failure. */
static int build_in(const BuildRequest *rq, Build *b, const char *scratch) {
        _cleanup_free_ char *dir = NULL, *log = NULL;
        if (asprintf(&dir, "%s/tree", scratch) < 0 || asprintf(&log, "%s/build.log", scratch) < 0)
                return -ENOMEM;
        _cleanup_close_ int log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (log_fd < 0)
                return -errno;
        int r = export_tree(rq, b, scratch, dir, log_fd, log);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!b->commands && (r = detect_commands(dir, b)) <= 0)
                return r;
        _cleanup_strv_free_ char **before = NULL;
        if ((r = shared_libraries(dir, &before)) < 0)
                return r;
        for (size_t i = 0; b->commands[i]; i++)
                if ((r = build_step(rq, b, dir, b->commands[i], NULL, b->commands[i], rq->timeout_ns, log_fd,
                                    log)) != 0)
                        return r < 0 ? r : 0;
        if ((r = find_output(rq, b, dir, before)) <= 0 || (r = keep_output(b, dir, scratch)) < 0)
                return r;
        return 1;
}

int build_make(const BuildRequest *rq, Build *b) {
        _cleanup_free_ char *cache = paths_cache(rq->caller_env, "builds"), *entry = NULL, *scratch = NULL;
        if (!cache)
                return asprintf(&b->failure, "no cache directory: set XDG_CACHE_HOME or HOME") < 0 ? -ENOMEM
                                                                                                   : 0;
        if (asprintf(&entry, "%s/%s", cache, b->key) < 0 || asprintf(&scratch, "%s/.tmp-XXXXXX", cache) < 0)
                return -ENOMEM;
        int r = mkdir_parents(cache, 0755);
        if (r < 0)
                return asprintf(&b->failure, "cannot make the cache %s: %s", cache, strerror(-r)) < 0
                               ? -ENOMEM
                               : 0;
        if ((r = cache_lookup(b, entry)) != 0)
                return r < 0 ? r : 0;
        remove_stale_scratch(cache);
        if (!mkdtemp(scratch))
                return asprintf(&b->failure, "cannot build in %s: %m", cache) < 0 ? -ENOMEM : 0;
        uint64_t start = now_ns();
        r = build_in(rq, b, scratch);
        b->build_ns = now_ns() - start;
        _cleanup_free_ char *tree = NULL, *log = NULL, *kept_log = NULL;
        if (asprintf(&tree, "%s/tree", scratch) < 0)
                r = -ENOMEM;
        else
                (void) remove_tree(tree);
        if (r > 0 && (r = write_metadata(b, scratch)) >= 0 && rename(scratch, entry) < 0) {
                r = errno == EEXIST || errno == ENOTEMPTY ? 0 : -errno;
                (void) remove_tree(scratch); /* another alloclab made it first: theirs is the same */
                if (r == 0) {
                        free(b->path);
                        free(b->output);
                        b->path = b->output = NULL;
                        r = cache_lookup(b, entry) > 0 ? 0 : -EIO;
                }
                return r;
        }
        if (r >= 0 && !b->failure) {
                const char *base = strrchr(b->output, '/') ? strrchr(b->output, '/') + 1 : b->output;
                return asprintf(&b->path, "%s/%s", entry, base) < 0 ? -ENOMEM : 0;
        }
        /* Failed: the whole log stays beside the cache, named in the reason. */
        if (r >= 0 && asprintf(&log, "%s/build.log", scratch) >= 0 &&
            asprintf(&kept_log, "%s.failed.log", entry) >= 0 && rename(log, kept_log) == 0) {
                char *said = NULL;
                if (asprintf(&said, "%s (whole log: %s)", b->failure, kept_log) >= 0) {
                        free(b->failure);
                        b->failure = said;
                }
        }
        (void) remove_tree(scratch);
        return r < 0 ? r : 0;
}

char *build_json(const Build *b) {
        json_auto_t *commands = json_array(), *variables = json_object();
        for (size_t i = 0; commands && b->commands && b->commands[i]; i++)
                if (json_array_append_new(commands, json_string(b->commands[i])) < 0)
                        return NULL;
        for (size_t i = 0; variables && b->variables && b->variables[i]; i++) {
                _cleanup_free_ char *name = strndup(b->variables[i], strcspn(b->variables[i], "="));
                if (!name ||
                    json_object_set_new(variables, name, json_string(strchr(b->variables[i], '=') + 1)) < 0)
                        return NULL;
        }
        json_auto_t *doc = json_pack(
                "{s:s, s:s?, s:s?, s:s?, s:s?, s:b, s:O, s:s?, s:s, s:O, s:s?, s:s, s:b, s:f, s:s?, s:s?}",
                "source", b->source, "commit", b->commit, "subdir", b->subdir, "tree", b->tree, "describe",
                b->describe, "dirty", b->dirty, "commands", commands, "output", b->output, "compiler",
                b->compiler, "variables", variables, "sha256", b->sha256[0] ? b->sha256 : NULL, "key",
                b->key, "cached", b->cached, "build_seconds", round((double) b->build_ns / 1e6) / 1e3,
                "path", b->path, "failure", b->failure);
        return doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
}

/* A string member of doc, copied into *ret (NULL stays NULL). Returns false on want of memory. */
static bool take_string(const json_t *doc, const char *key, char **ret) {
        const char *v = json_string_value(json_object_get(doc, key));
        return !v || (*ret = strdup(v));
}

int build_from_json(const char *text, Build *ret) {
        json_auto_t *doc = json_loads(text, 0, NULL);
        const char *key = json_string_value(json_object_get(doc, "key"));
        const char *sha256 = json_string_value(json_object_get(doc, "sha256"));
        const json_t *commands = json_object_get(doc, "commands");
        *ret = (Build){};
        if (!json_is_string(json_object_get(doc, "source")) || !key || strlen(key) != SHA256_HEX_SIZE - 1 ||
            (sha256 && strlen(sha256) != SHA256_HEX_SIZE - 1) || !json_is_array(commands))
                return -EBADMSG;
        size_t i;
        const json_t *line;
        json_array_foreach(commands, i, line) if (!json_is_string(line) ||
                                                  strv_append(&ret->commands, json_string_value(line)) < 0) {
                build_done(ret);
                return -ENOMEM;
        }
        const char *name;
        const json_t *value;
        json_object_foreach(json_object_get(doc, "variables"), name, value) {
                char *kv = NULL;
                if (!json_is_string(value) || asprintf(&kv, "%s=%s", name, json_string_value(value)) < 0 ||
                    strv_consume(&ret->variables, kv) < 0) {
                        build_done(ret);
                        return json_is_string(value) ? -ENOMEM : -EBADMSG;
                }
        }
        strcpy(ret->key, key);
        strcpy(ret->sha256, sha256 ? sha256 : "");
        ret->dirty = json_is_true(json_object_get(doc, "dirty"));
        ret->cached = json_is_true(json_object_get(doc, "cached"));
        ret->build_ns = (uint64_t) (json_number_value(json_object_get(doc, "build_seconds")) * 1e9);
        if (!take_string(doc, "source", &ret->source) || !take_string(doc, "commit", &ret->commit) ||
            !take_string(doc, "subdir", &ret->subdir) || !take_string(doc, "tree", &ret->tree) ||
            !take_string(doc, "describe", &ret->describe) || !take_string(doc, "output", &ret->output) ||
            !take_string(doc, "compiler", &ret->compiler) || !take_string(doc, "path", &ret->path) ||
            !take_string(doc, "failure", &ret->failure)) {
                build_done(ret);
                return -ENOMEM;
        }
        set_label(ret);
        return 0;
}

const char *build_label(const Build *b) {
        return b->label;
}

void build_done(Build *b) {
        free(b->source);
        free(b->commit);
        free(b->subdir);
        free(b->tree);
        free(b->describe);
        strv_free(b->commands);
        strv_free(b->variables);
        free(b->compiler);
        free(b->path);
        free(b->failure);
        free(b->output);
        *b = (Build){};
}

void build_outcome_done(BuildOutcome *o) {
        build_done(&o->build);
        free(o->problem);
        *o = (BuildOutcome){};
}
