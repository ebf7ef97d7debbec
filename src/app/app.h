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

#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api/figures.h"
#include "api/replay.h"
#include "api/report.h"
#include "api/sizes.h"
#include "api/request.h"
#include "coll/coll.h"
#include "core/error.h"
#include "core/outfile.h"
#include "core/queue.h"
#include "machines/machine.h"

/* Subcommands: argv[0] is the subcommand name, options follow. */
int cs_app_cmd_run(int argc, char **argv);
int cs_app_cmd_topo(int argc, char **argv);
int cs_app_cmd_list(int argc, char **argv);
int cs_app_cmd_bench(int argc, char **argv);
int cs_app_cmd_sweep(int argc, char **argv);
int cs_app_cmd_benchtable(int argc, char **argv);
int cs_app_cmd_compare(int argc, char **argv);
int cs_app_cmd_replay(int argc, char **argv);
int cs_app_cmd_export(int argc, char **argv);
int cs_app_cmd_serve(int argc, char **argv);
int cs_app_cmd_complete(int argc, char **argv);
int cs_app_cmd_merge(int argc, char **argv);

/* The name of command i (0, 1, ...), NULL past the last one `collsim
 * --help` lists (hidden ones are not named): what `collsim complete`
 * offers first. */
const char *cs_app_command_name(int i);
/* Prints the long options of command cmd that start with prefix ("--name"
 * a line) from its own getopt table and exits 0; returns when cmd is no
 * command. */
void cs_app_command_options(const char *cmd, const char *prefix);

/* Prints "collsim: <message>" on stderr and returns err->code (so a command
 * can `return cs_app_report(&err);`). */
int cs_app_report(const cs_error_t *err);

/* Prints "collsim: <cmd>: <message>" and "Try 'collsim <cmd> --help'." on
 * stderr, then exits with the usage status (2). */
void cs_app_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* The options that are request fields (api/request.h), one code each for
 * every command: a command puts the ones it takes in its longopts (with the
 * short letters 'm' --machine, 'p' --program, 'M' --mode, 'q' --queue) and
 * hands what getopt_long returns to cs_app_option, so that a field is
 * parsed in one place whatever the command. */
enum {
    CS_APP_OPT_COLL = 0x1000, CS_APP_OPT_ALGO, CS_APP_OPT_BYTES, CS_APP_OPT_ROOT,
    CS_APP_OPT_RANKS, CS_APP_OPT_ORDER, CS_APP_OPT_OPT, CS_APP_OPT_VALIDATE, CS_APP_OPT_WINDOWED,
    CS_APP_OPT_FORCE, CS_APP_OPT_ITERATIONS, CS_APP_OPT_WARMUP, CS_APP_OPT_BETWEEN,
    CS_APP_OPT_LOOP
};
/* The default branch of a command's getopt_long switch: sets the request
 * field of option c (what getopt_long returned) from optarg
 * (cs_request_set), and exits with a usage error naming the option when the
 * value is none; for any other c, a getopt failure (cs_app_getopt_error with
 * longopts, the command's table). */
void cs_app_option(const char *cmd, cs_request_t *r, int c, char **argv,
                   const struct option *longopts);
/* After a command's options: a usage error for an operand left over
 * ("unexpected argument"). */
void cs_app_no_operands(const char *cmd, int argc, char **argv);
/* cs_request_add_opt for `cmd` (an --opt whose form the command checked
 * itself): a usage error for a comma in it or one too many. */
void cs_app_add_opt(const char *cmd, cs_request_t *r, const char *kv);

/* Reports a getopt_long failure (unknown option, missing argument) for
 * subcommand `cmd` and exits with the usage status.  `c` is what getopt_long
 * returned ('?' or ':'); the option string must start with ':'.  longopts
 * (the command's table) names the nearest option of a misspelt one ("did
 * you mean") and the candidates of an ambiguous prefix; it also answers
 * `collsim complete`'s hidden query for the command's options (printed on
 * standard output, exit 0), so that completion reads the same table. */
void cs_app_getopt_error(const char *cmd, int c, char **argv, const struct option *longopts)
    __attribute__((noreturn));

/* Whether an output file of option `opt` can be written, asked before the
 * work that makes it: the file, or else its folder, must be writable.
 * Creates nothing.  CS_ERR_IO naming the option, the path and the folder
 * if not. */
int cs_app_check_writable(const char *opt, const char *path, cs_error_t *err);
/* The folder of option `opt`, made unless it exists: CS_ERR_IO naming the
 * option and the path when it cannot be made or is not a folder. */
int cs_app_make_folder(const char *opt, const char *path, cs_error_t *err);
/* Whether the folder of option `opt` could be made (or written into, when it
 * exists), creating nothing: CS_ERR_IO naming the option and the path. */
int cs_app_check_folder(const char *opt, const char *path, cs_error_t *err);

/* An output of option `opt`: standard output for "-", else a whole-or-absent
 * file (core/outfile.h).  cs_app_out_close commits when rc is CS_OK and no
 * signal came (cs_app_interrupted), else removes the temporary; it returns
 * rc, or the write error, or CS_ERR_CANCELLED. */
typedef struct cs_app_out {
    FILE *f;         /* where to write */
    cs_outfile_t *o; /* NULL for standard output */
} cs_app_out_t;
int cs_app_out_open(const char *opt, const char *path, cs_app_out_t *out, cs_error_t *err);
int cs_app_out_close(cs_app_out_t *out, int rc, cs_error_t *err);

/* ---- signals (main.c) ---------------------------------------------------- */

/* SIGINT and SIGTERM set a flag (to the signal's number) and nothing else:
 * runs stop at their next batch of events (cs_exec_opts_t.cancel), outputs
 * are not committed, and main exits with 128 + the number (130, 143).  A
 * second signal of the same kind ends the process at once. */
const volatile sig_atomic_t *cs_app_cancel_flag(void);
/* The signal received (SIGINT, SIGTERM) or 0. */
int cs_app_interrupted(void);
/* CS_ERR_CANCELLED with "interrupted" in err when a signal came, else CS_OK:
 * for the points between runs (a sweep's next size). */
int cs_app_check_interrupt(cs_error_t *err);

/* Splits buf in place at each ';' (a --machines list: specs hold commas)
 * into items[], trimming the characters of `blanks` at both ends of each
 * and leaving out the empty ones.  Returns how many, or -1 when there are
 * more than max. */
int cs_app_split_list(char *buf, const char *blanks, const char **items, int max);

/* The display width of UTF-8 text (short machine names hold "×", algorithm
 * sources "§"): one column per code point, not per byte; 0 for NULL. */
int cs_app_text_width(const char *s);

/* ---- results (main.c) ---------------------------------------------------- */

/* The JSON result (api/report.h: cs_report_json, with the model of
 * collective c when predict) to path, or to standard output for "-";
 * errors name the path. */
int cs_app_write_json(const char *path, int with_timing, const cs_machine_t *m,
                      const cs_program_t *p, const cs_exec_result_t *r, int validated,
                      int predict, const cs_request_coll_t *c, cs_error_t *err);

/* ---- progress (progress.c) --------------------------------------------- */

/* The progress line on standard error (docs/cli.md, "Progress"): on a
 * terminal a bar with the time left, after the work has taken a second,
 * redrawn at most ten times a second; elsewhere a plain line every ten
 * seconds after the first ten.  `quiet` (a command's --quiet, set after
 * init) silences it and the "wrote FILE" lines (cs_app_wrote). */
typedef struct cs_app_progress {
    int on;              /* drawing at all (cleared by nothing yet; init sets it) */
    int tty;             /* standard error is a terminal: a bar, else lines */
    int quiet;           /* --quiet: nothing on standard error but errors */
    double t0, last;     /* started, last drawn (monotonic seconds) */
    int width;           /* characters on the line now */
    double tick_seconds; /* the run's clock, for the poll callback (attach) */
    char what[96];
} cs_app_progress_t;

void cs_app_progress_init(cs_app_progress_t *p, const char *what);
/* fraction in [0, 1], or < 0 when unknown; detail may be NULL. */
void cs_app_progress_show(cs_app_progress_t *p, double fraction, const char *detail);
/* Clears the line (call before printing anything else). */
void cs_app_progress_done(cs_app_progress_t *p);
/* Lets a run of machine time tick_seconds draw on p: sets opts->poll
 * (only when the line can show) and opts->poll_ctx. */
void cs_app_progress_attach(cs_app_progress_t *p, double tick_seconds, cs_exec_opts_t *opts);
/* "collsim: wrote PATH (what)" on standard error after a file was written
 * whole, unless p->quiet; nothing for "-" (standard output) or NULL.  what
 * may be NULL. */
void cs_app_wrote(const cs_app_progress_t *p, const char *path, const char *what);

#endif
