/* SPDX-License-Identifier: MIT */
/*
 * The daemon's configuration through the same schema machinery as specs, so a bad file gets
 * the same FILE:LINE:COL diagnostics.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "configs/daemon-config.h"
#include "configs/schema.h"
#include "configs/yamltree.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/units.h"

DaemonConfig *daemon_config_free(DaemonConfig *c) {
        if (!c)
                return NULL;
        free(c->database);
        free(c->specs_dir);
        free(c->socket);
        free(c->socket_group);
        free(c->probe);
        free(c->machine);
        free(c->publish_dir);
        free(c);
        return NULL;
}

static int parse_path(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "path");
        if (r < 0)
                return r;
        if (n->value[0] != '/')
                return schema_error(l, n, "path '%s' must be absolute", n->value);
        return schema_parse_string(l, n, field);
}

static int parse_group(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "socket_group");
        if (r < 0)
                return r;
        if (!schema_is_identifier(n->value, true))
                return schema_error(l, n, "'%s' is not a group name", n->value);
        return schema_parse_string(l, n, field);
}

static int parse_machine(Loader *l, const YamlNode *n, void *field) {
        int r = schema_expect_scalar(l, n, "machine");
        if (r < 0)
                return r;
        if (!schema_is_identifier(n->value, true))
                return schema_error(l, n, "machine name '%s' must be 1-64 letters, digits, '_', '-' or '.'",
                                    n->value);
        return schema_parse_string(l, n, field);
}

static int parse_prune_keep_last(Loader *l, const YamlNode *n, void *field) {
        return schema_parse_uint(l, n, "prune_keep_last", 1, 1000000000, field);
}

static int parse_prune_older_than(Loader *l, const YamlNode *n, void *field) {
        uint64_t ns;
        int r = schema_parse_quantity(l, n, "prune_older_than", units_duration_ns, 0, "'90d', '12h'",
                                      1000000000ULL, 100ULL * 365 * 86400 * 1000000000ULL, &ns);
        if (r >= 0)
                *(uint64_t *) field = ns / 1000000000ULL;
        return r;
}

static int parse_idle_timeout(Loader *l, const YamlNode *n, void *field) {
        uint64_t ns;
        int r = schema_parse_quantity(l, n, "idle_timeout", units_duration_ns, 1e9, "'30s', '2m'",
                                      100000000ULL, 3600ULL * 1000000000ULL, &ns);
        if (r >= 0)
                *(uint64_t *) field = ns / 1000;
        return r;
}

static const Field daemon_fields[] = {
        { "database", parse_path, offsetof(DaemonConfig, database), false },
        { "specs_dir", parse_path, offsetof(DaemonConfig, specs_dir), false },
        { "socket", parse_path, offsetof(DaemonConfig, socket), false },
        { "socket_group", parse_group, offsetof(DaemonConfig, socket_group), false },
        { "idle_timeout", parse_idle_timeout, offsetof(DaemonConfig, idle_timeout_usec), false },
        { "probe", parse_path, offsetof(DaemonConfig, probe), false },
        { "machine", parse_machine, offsetof(DaemonConfig, machine), false },
        { "prune_keep_last", parse_prune_keep_last, offsetof(DaemonConfig, prune_keep_last), false },
        { "prune_older_than", parse_prune_older_than, offsetof(DaemonConfig, prune_older_than_s), false },
        { "publish_dir", parse_path, offsetof(DaemonConfig, publish_dir), false },
};

int daemon_config_load_file(const char *path, Diagnostics *d, DaemonConfig **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t n;
        int r = read_text_file(path, YAMLTREE_MAX_INPUT_BYTES, &buf, &n);
        if (r < 0 && r != -EFBIG)
                return r;
        if (!d->file && !(d->file = strdup(path)))
                return -ENOMEM;
        if (r == -EFBIG)
                return diag_add(d, 1, 1, "configuration is larger than %d bytes", YAMLTREE_MAX_INPUT_BYTES);
        _cleanup_(yamltree_node_freep) YamlNode *root = NULL;
        r = yamltree_parse(buf, n, d, &root);
        if (r < 0)
                return r;
        DaemonConfig *c = calloc(1, sizeof(DaemonConfig));
        if (!c)
                return -ENOMEM;
        if (root) { /* an empty file is a valid, all-defaults configuration */
                Loader l = { .diag = d };
                r = schema_parse_fields(&l, root, "configuration", daemon_fields, ELEMENTSOF(daemon_fields),
                                        c);
                if (r < 0) {
                        daemon_config_free(c);
                        return r;
                }
        }
        *ret = c;
        return 0;
}
