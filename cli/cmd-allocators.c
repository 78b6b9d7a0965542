/* SPDX-License-Identifier: MIT */
/*
 * `alloclab allocators`: what each catalog name resolves to on this machine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/render.h"
#include "configs/catalog.h"
#include "runner/allocator.h"
#include "util/cleanup.h"

static const char allocators_usage[] =
        "Usage: alloclab allocators [--format table|json]\n"
        "       alloclab allocators --names\n"
        "\n"
        "Lists the allocator catalog: name, preloaded file, package version and sha256, or the\n"
        "package to install. Exit status 0 (even when some are not installed). --names prints\n"
        "the catalog's names alone, one per line, without looking for the files (for completion).\n";

int cmd_allocators(int argc, char **argv) {
        if (cli_wants_help(argc, argv, allocators_usage))
                return EXIT_OK;
        if (argc == 2 && strcmp(argv[1], "--names") == 0) {
                for (const CatalogEntry *e = catalog_entries(); e->name; e++)
                        puts(e->name);
                return EXIT_OK;
        }
        bool json = argc == 3 && strcmp(argv[1], "--format") == 0 && strcmp(argv[2], "json") == 0;
        if (argc > 1 && !json &&
            !(argc == 3 && strcmp(argv[1], "--format") == 0 && strcmp(argv[2], "table") == 0)) {
                cli_error("allocators", "takes only --format table|json, or --names");
                return EXIT_USAGE;
        }
        json_auto_t *list = json_array();
        static const char *const columns[] = { "NAME", "PATH", "VERSION", "SHA256" };
        json_auto_t *table =
                render_table_new(columns, ELEMENTSOF(columns)); /* columns as wide as their values */
        for (const CatalogEntry *e = catalog_entries(); e->name; e++) {
                Allocator a = {};
                int r = allocator_resolve(e->name, &a);
                if (r == -ENOMEM) {
                        cli_error("allocators", "out of memory");
                        return EXIT_ENVIRONMENT;
                }
                if (json)
                        json_array_append_new(
                                list, json_pack("{s:s, s:b, s:s, s:o, s:o, s:o}", "name", e->name,
                                                "installed", r >= 0, "package", e->package, "path",
                                                r >= 0 && a.path ? json_string(a.path) : json_null(),
                                                "version", r >= 0 ? json_string(a.version) : json_null(),
                                                "sha256", r >= 0 ? json_string(a.sha256) : json_null()));
                else {
                        _cleanup_free_ char *missing = NULL;
                        if (r < 0 && asprintf(&missing, "not installed: apt-get install %s", e->package) < 0)
                                return EXIT_ENVIRONMENT;
                        json_t *row[] = {
                                json_string(e->name),
                                json_string(r < 0    ? missing
                                            : a.path ? a.path
                                                     : "(none: built into libc)"),
                                json_string(r < 0 ? "-" : a.version),
                                json_string(r < 0 ? "-" : a.sha256),
                        };
                        render_table_add_row(table, row, ELEMENTSOF(row));
                }
                allocator_done(&a);
        }
        if (json) {
                if (json_dumpf(list, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0)
                        return EXIT_ENVIRONMENT;
                fputc('\n', stdout);
        } else if (!table || render_rows(stdout, FORMAT_TABLE, table) < 0)
                return EXIT_ENVIRONMENT;
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_ENVIRONMENT;
}
