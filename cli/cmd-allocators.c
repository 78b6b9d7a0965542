/* SPDX-License-Identifier: MIT */
/*
 * `alloclab allocators`: what each catalog name resolves to on this machine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "configs/catalog.h"
#include "runner/allocator.h"

static const char allocators_usage[] =
        "Usage: alloclab allocators\n"
        "\n"
        "Lists the allocator catalog: name, preloaded file, package version and sha256, or the\n"
        "package to install. Exit status 0 (even when some are not installed).\n";

int cmd_allocators(int argc, char **argv) {
        if (cli_wants_help(argc, argv, allocators_usage))
                return EXIT_OK;
        if (argc > 1) {
                cli_error("allocators", "takes no arguments");
                return EXIT_USAGE;
        }
        printf("%-17s %-48s %-16s %s\n", "NAME", "PATH", "VERSION", "SHA256");
        for (const CatalogEntry *e = catalog_entries(); e->name; e++) {
                Allocator a = {};
                int r = allocator_resolve(e->name, &a);
                if (r == -ENOMEM) {
                        cli_error("allocators", "out of memory");
                        return EXIT_ENVIRONMENT;
                }
                if (r < 0)
                        printf("%-17s not installed: apt-get install %s\n", e->name, e->package);
                else
                        printf("%-17s %-48s %-16s %s\n", e->name,
                               a.path ? a.path : "(none: built into libc)", a.version, a.sha256);
                allocator_done(&a);
        }
        return EXIT_OK;
}
