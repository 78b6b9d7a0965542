/* SPDX-License-Identifier: MIT */
#pragma once

/* A command of main.c's table: its name, function, usage line and summary for --help. */
typedef struct Command {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *usage;
        const char *summary;
} Command;

/* The commands, each defined in its cmd-*.c and called from main.c's command table: argv[0] is
 * the command's name; they return the process's exit status (cli.h's EXIT_*). */
int cmd_run(int argc, char **argv);
int cmd_quick(int argc, char **argv);
int cmd_suite(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_export_bundle(int argc, char **argv); /* export --bundle */
int cmd_import(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_allocators(int argc, char **argv);
int cmd_census(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_schedules(int argc, char **argv);
