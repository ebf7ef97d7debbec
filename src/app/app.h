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
#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/queue.h"
#include "machines/machine.h"

/* Subcommands: argv[0] is the subcommand name, options follow. */
int cs_app_cmd_run(int argc, char **argv);
int cs_app_cmd_topo(int argc, char **argv);
int cs_app_cmd_list(int argc, char **argv);
int cs_app_cmd_bench(int argc, char **argv);
int cs_app_cmd_sweep(int argc, char **argv);
int cs_app_cmd_compare(int argc, char **argv);
int cs_app_cmd_replay(int argc, char **argv);
int cs_app_cmd_export(int argc, char **argv);

/* Prints "collsim: <message>" on stderr and returns err->code (so a command
 * can `return cs_app_report(&err);`). */
int cs_app_report(const cs_error_t *err);

/* Prints "collsim: <cmd>: <message>" and "Try 'collsim <cmd> --help'." on
 * stderr, then exits with the usage status (2). */
void cs_app_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* Appends one --opt value to opts[*n] (at most max): a usage error for a
 * value with a comma (one KEY=VALUE per --opt) or one too many.  Commands
 * that need KEY=VALUE check that themselves (sweep also takes ALGO:KEY=VALUE). */
void cs_app_push_opt(const char *cmd, const char *value, const char **opts, int *n, int max);

/* cs_app_push_opt for commands whose --opt is KEY=VALUE: first a usage
 * error for a value without a key and an '='. */
void cs_app_push_kv_opt(const char *cmd, const char *value, const char **opts, int *n, int max);

/* The values of the collective options of subcommand `cmd`: --bytes N (a
 * size, cs_units_parse_bytes), --root R (a rank) and --ranks P (a count of at
 * least 1).  A value that is none is a usage error (exit) naming the option. */
int64_t cs_app_bytes_arg(const char *cmd, const char *text);
int64_t cs_app_root_arg(const char *cmd, const char *text);
int64_t cs_app_ranks_arg(const char *cmd, const char *text);

/* Reports a getopt_long failure (unknown option, missing argument) for
 * subcommand `cmd` and exits with the usage status.  `c` is what getopt_long
 * returned ('?' or ':'); the option string must start with ':'. */
void cs_app_getopt_error(const char *cmd, int c, char **argv) __attribute__((noreturn));

/* Resets getopt's global state before a subcommand parses its own options
 * (glibc: optind = 0 reinitialises fully). */
void cs_app_getopt_reset(void);

/* Whether an output file of option `opt` can be written, asked before the
 * work that makes it: the file, or else its folder, must be writable.
 * Creates nothing.  CS_ERR_IO naming the option, the path and the folder
 * if not. */
int cs_app_check_writable(const char *opt, const char *path, cs_error_t *err);
/* The folder of option `opt`, made unless it exists: CS_ERR_IO naming the
 * option and the path when it cannot be made or is not a folder. */
int cs_app_make_folder(const char *opt, const char *path, cs_error_t *err);

/* Splits buf in place at each ';' (a --machines list: specs hold commas)
 * into items[], trimming the characters of `blanks` at both ends of each
 * and leaving out the empty ones.  Returns how many, or -1 when there are
 * more than max. */
int cs_app_split_list(char *buf, const char *blanks, const char **items, int max);

/* Writes s as one CSV field, quoted when it holds a comma, a quote or a
 * newline (RFC 4180: quotes doubled). */
void cs_app_csv_field(FILE *f, const char *s);

/* The display width of UTF-8 text (short machine names hold "×", algorithm
 * sources "§"): one column per code point, not per byte; 0 for NULL. */
int cs_app_text_width(const char *s);

/* perm[0..n) gets a shuffle of 0..n-1 (Fisher-Yates driven by splitmix64
 * from `seed`): the same permutation for a seed on every platform. */
void cs_app_shuffle(int n, uint64_t seed, int32_t *perm);

/* Event queue kinds: how many there are (kinds are 0..n-1), their names
 * joined by `sep` into buf, and parsing a name ("binary", "quad", ...). */
#define CS_APP_MAX_QUEUE_KINDS 16
int cs_app_queue_kinds(void);
void cs_app_queue_names(char *buf, size_t len, const char *sep);
int cs_app_parse_queue(const char *text, cs_queue_kind_t *out, cs_error_t *err);
/* The value of --mode / --queue for subcommand `cmd`: a usage error (exit)
 * naming the option when it is not a mode / queue kind. */
cs_net_mode_t cs_app_mode_arg(const char *cmd, const char *text);
cs_queue_kind_t cs_app_queue_arg(const char *cmd, const char *text);

/* ---- collectives from the command line (cmd_run.c; run, sweep, compare,
 *      export; replay places its ranks with cs_app_placement_hints) ------- */

/* What the command line says about one collective: the options of
 * `collsim run --coll` (docs/cli.md), borrowed strings. */
typedef struct cs_app_coll_req {
    const char *coll, *algo;      /* algo NULL: the collective's default */
    const char *order;            /* NULL: natural */
    const char *bytes_text;       /* --bytes as typed; NULL: not given */
    int64_t bytes;
    int64_t root, ranks;          /* ranks 0: every node (or the order file's) */
    int has_root;
    const char *const *opts;      /* nopts "key=value" texts (--opt) */
    int nopts;
} cs_app_coll_req_t;

/* A collective ready for cs_coll_build(c->algo, &c->args, ...): the
 * algorithm, its arguments with the machine's hints in rank space, and the
 * placement for cs_exec_opts_t.rank_to_node.  args points into the struct
 * itself, so it must not be copied or moved once prepared. */
typedef struct cs_app_coll {
    const cs_coll_algo_t *algo;
    cs_coll_args_t args;
    cs_coll_hints_t hints;
    cs_spec_t opts;
    int has_opts;
    int32_t *rank_to_node; /* P entries, owned */
    cs_machine_hints_t place; /* owns the arrays `hints` points to */
    char order_name[64];   /* for the summary */
} cs_app_coll_t;

/* Resolves the collective and algorithm, the ranks, root, placement, hints
 * and options against machine m.  Errors (unknown name, root or ranks out of
 * range, unreadable order file, malformed --opt) name the option.  Pass c
 * to cs_app_coll_destroy afterwards whatever the result. */
int cs_app_coll_prepare(const cs_app_coll_req_t *req, const cs_machine_t *m, cs_app_coll_t *c,
                        cs_error_t *err);
/* Builds the program of a prepared collective (cs_coll_build); errors are
 * prefixed with "COLL/ALGO: ". */
int cs_app_coll_build(const cs_app_coll_t *c, cs_program_t **out, cs_error_t *err);
/* Releases what c owns and zeroes it; accepts a zeroed struct. */
void cs_app_coll_destroy(cs_app_coll_t *c);
/* Fills c->hints (and c->place, which owns its arrays) with the machine's
 * hints in rank space for the placement c->rank_to_node of P ranks
 * (cs_machine_hints_init: ring, groups, grid, gateways).  (cs_app_coll_prepare
 * calls it.) */
void cs_app_placement_hints(const cs_machine_t *m, int P, cs_app_coll_t *c);

/* ---- results of a run (cmd_run.c; run and replay) ----------------------- */

/* The summary lines `machine` (the normalised spec, nodes, channels) and
 * `mode` (the machine's own engine, else `mode`; the event queue). */
void cs_app_print_machine(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r,
                          cs_net_mode_t mode, cs_queue_kind_t queue);
/* The summary lines `messages`, `finish`, `events` and the machine's own
 * (docs/cli.md). */
void cs_app_print_result(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r);
/* The `wall` line (with_timing 0: "not shown"). */
void cs_app_print_wall(FILE *f, const cs_exec_result_t *r, int with_timing);
/* Fills top[] with the ids of the busiest channels of net that carried
 * traffic (most busy ticks first, then most bytes, then lowest id); returns
 * how many (at most n, none for a NULL net). */
int cs_app_busiest_channels(const cs_net_t *net, int nchan, int *top, int n);
/* The busiest channels table. */
void cs_app_print_channels(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r);
/* The JSON result (docs/json.md) to path, or to standard output for "-". */
int cs_app_write_json(const char *path, int with_timing, const cs_machine_t *m,
                      const cs_program_t *p, const cs_exec_result_t *r, int validated,
                      cs_error_t *err);

/* ---- progress (progress.c) --------------------------------------------- */

/* A progress bar on standard error: only on a terminal, only after the work
 * has taken a second, redrawn at most ten times a second. */
typedef struct cs_app_progress {
    int on;              /* standard error is a terminal */
    double t0, last;     /* started, last drawn (monotonic seconds) */
    int width;           /* characters on the line now */
    double tick_seconds; /* for cs_app_progress_poll */
    char what[96];
} cs_app_progress_t;

void cs_app_progress_init(cs_app_progress_t *p, const char *what, double tick_seconds);
/* fraction in [0, 1], or < 0 when unknown; detail may be NULL. */
void cs_app_progress_show(cs_app_progress_t *p, double fraction, const char *detail);
/* Clears the line (call before printing anything else). */
void cs_app_progress_done(cs_app_progress_t *p);
/* A cs_exec_opts_t.poll for one run (ctx: a cs_app_progress_t). */
void cs_app_progress_poll(void *ctx, cs_tick_t now, int32_t done, int32_t nops,
                          uint64_t events);
/* Runs p on machine m (cs_exec_run in the machine's environment) with opts;
 * with a progress bar (not NULL) the run draws on it in m's time
 * (opts->poll is set).  The caller inits and clears the bar. */
int cs_app_exec_run(const cs_machine_t *m, const cs_program_t *p, cs_exec_opts_t *opts,
                    cs_app_progress_t *progress, cs_exec_result_t *res, cs_error_t *err);

/* ---- figures (figures.c) ------------------------------------------------ */

/* "alphabeta torus 8x8", "cell eib of 16 nodes": type, topology, size. */
void cs_app_machine_short(const cs_machine_t *m, char *buf, size_t len);
/* The machine's name for node n (its node_label, else the id), in buf. */
const char *cs_app_node_name(const cs_machine_t *m, int node, char *buf, size_t len);
/* The title of a run's figures: "allreduce/ring, 1 MiB, 64 ranks on
 * alphabeta torus 8x8" (c NULL: "PROGRAM (P ranks) on ..."). */
void cs_app_run_title(const cs_machine_t *m, const cs_app_coll_t *c, const char *program,
                      int ranks, char *buf, size_t len);
/* The second line of a heatmap: the metric, the window ("whole run",
 * "window", "frame 3 of 20,") with its times, the engine and the hottest
 * channel with its value. */
struct cs_heatmap_data;
void cs_app_heatmap_subtitle(const cs_machine_t *m, const cs_net_t *net,
                             const struct cs_heatmap_data *d, const char *window_note, char *buf,
                             size_t len);
/* A time: a whole number of ticks ("1000") or a duration with a unit
 * ("2.5us"), converted to ticks of tick_seconds (rounded). */
int cs_app_parse_time(const char *text, double tick_seconds, cs_tick_t *out, cs_error_t *err);

#endif
