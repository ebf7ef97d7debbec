/*
 * app.h - declarations shared by the files of the `collsim` command line
 * (src/app only; nothing below src/app may include this).
 *
 * Each subcommand is a function with main's signature that returns a
 * cs_status_t; main turns it into the process exit status with
 * cs_status_exit_code.  A subcommand reports its own errors on stderr as
 * "collsim: <message>" before returning, so main only exits.  The helpers
 * marked noreturn exit at once: they are for errors found before anything
 * was allocated (command-line usage), where there is nothing to clean up.
 */
#ifndef CS_APP_H
#define CS_APP_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"
#include "core/queue.h"

/* Subcommands: argv[0] is the subcommand name, options follow. */
int cs_app_cmd_run(int argc, char **argv);
int cs_app_cmd_topo(int argc, char **argv);
int cs_app_cmd_list(int argc, char **argv);
int cs_app_cmd_bench(int argc, char **argv);

/* Prints "collsim: <message>" on stderr and returns err->code (so a command
 * can `return cs_app_report(&err);`). */
int cs_app_report(const cs_error_t *err);

/* Prints "collsim: <cmd>: <message>" and "Try 'collsim <cmd> --help'." on
 * stderr, then exits with the usage status (2). */
void cs_app_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Reports a getopt_long failure (unknown option, missing argument) for
 * subcommand `cmd` and exits with the usage status.  `c` is what getopt_long
 * returned ('?' or ':'); the option string must start with ':'. */
void cs_app_getopt_error(const char *cmd, int c, char **argv) __attribute__((noreturn));

/* Resets getopt's global state before a subcommand parses its own options
 * (glibc: optind = 0 reinitialises fully). */
void cs_app_getopt_reset(void);

/* Event queue kinds: how many there are (kinds are 0..n-1), their names
 * joined by `sep` into buf, and parsing a name ("binary", "quad", ...). */
#define CS_APP_MAX_QUEUE_KINDS 16
int cs_app_queue_kinds(void);
void cs_app_queue_names(char *buf, size_t len, const char *sep);
int cs_app_parse_queue(const char *text, cs_queue_kind_t *out, cs_error_t *err);

#endif
