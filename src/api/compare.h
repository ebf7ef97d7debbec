/*
 * compare.h - one collective algorithm on several machines (`collsim
 * compare`, `POST /api/compare`): each machine runs exactly what `collsim
 * run --machine SPEC --coll C --algo A --bytes N` would (the request path),
 * and the comparison is reported as a row per machine (and size) and as
 * one JSON document, {"coll", "algo", "bytes", "runs": [<run JSON>, ...]}
 * in the order of the machines (docs/api.md; `collsim compare --json
 * FILE`).  Like for like (issue 32): every machine runs the same rank
 * count, by default the most that every machine can hold
 * (cs_compare_common_ranks), and the figures give times in seconds.
 * Nothing here prints; errors come back in a cs_error_t.
 */
#ifndef CS_COMPARE_H
#define CS_COMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "api/request.h"
#include "core/error.h"
#include "engine/exec.h"
#include "machines/machine.h"

/* One machine's outcome. */
typedef struct cs_compare_row {
    const char *spec;         /* as given (borrowed) */
    char name[96];            /* short name */
    char norm[512];           /* normalised spec */
    int rc;                   /* CS_OK or the failure */
    char err[CS_ERROR_MSG_MAX];
    int ranks;
    cs_tick_t ticks;
    double seconds;
    /* nccl-tests' algorithm and bus bandwidths (coll/bandwidth.h), bytes
     * per second, 0 for a barrier or a run of no time */
    double bandwidth, busbw;
    char link[80];            /* busiest channel "u->v" (node names), or "-" */
    double link_util;         /* its busy share of the run */
    uint64_t events;
    double wall;
    int64_t bytes;            /* the size this row ran */
    char engine[48];          /* the engine that ran: "packet", "fluid" or the
                                 machine's own ("groq scheduler") */
} cs_compare_row_t;

/* What a front end does between the steps of a machine's run; either may
 * be NULL.  prepared: after the machine is made and the collective
 * resolved (run->coll.args.P known), before the program is built; a
 * non-zero return (with err set) ends the run with that status.  setup:
 * adds to the executor's options (progress, cancellation, figure
 * buckets). */
typedef struct cs_compare_hooks {
    int (*prepared)(void *ctx, const cs_request_run_t *run, cs_error_t *err);
    void (*setup)(void *ctx, const cs_machine_t *m, cs_exec_opts_t *opts);
    void *ctx;
} cs_compare_hooks_t;

/* Runs collective request base on machine `spec` into run (zeroed by
 * cs_request_run_init first; the caller destroys it whatever the result)
 * and fills row (its name and spec as soon as the machine exists).  A
 * channel engine's machine runs in packet mode whatever base->mode says
 * (--mode is the channel engines').  with_timing 0 leaves row->wall 0. */
int cs_compare_run(const cs_request_t *base, const char *spec, int with_timing,
                   const cs_compare_hooks_t *hooks, cs_compare_row_t *row,
                   cs_request_run_t *run, cs_error_t *err);

/* The most ranks that every machine of specs[0..n) can hold: the smallest
 * count of nodes that can run a rank (cs_machine_nodes) among the specs
 * that make a machine; a spec that does not is skipped (its own run says
 * why).  Returns that count, 0 when no spec makes a machine; *which (may
 * be NULL) gets the index of the first machine that has only that many
 * (-1 with 0).  Each machine is made and freed here, within env (NULL: as
 * cs_machine_new; the service passes its request's files). */
int64_t cs_compare_common_ranks(const char *const *specs, int n, const cs_machine_env_t *env,
                                int *which);

/* The engines of a comparison for a figure's title, from the rows'
 * `engine`s (n of them): "packet engine" when one engine ran them all,
 * "engines: packet, loggp" for two, else "each machine's own engine"
 * with ", channel engine: packet" when some machines ran on it. */
void cs_compare_engines_text(const char *const *engines, int n, char *buf, size_t len);

/* The document: begin, then each run's JSON (cs_compare_json_run, the run
 * JSON of `collsim run --json`, index 0, 1, ...), then end.  "bytes" is
 * the first size; with more than one size, "sizes" lists them all. */
void cs_compare_json_begin(FILE *f, const char *coll, const char *algo, const int64_t *sizes,
                           int nsizes);
int cs_compare_json_run(FILE *f, int index, int with_timing, const cs_request_run_t *run,
                        cs_error_t *err);
void cs_compare_json_end(FILE *f);

/* What a comparison's figure says besides its numbers. */
typedef struct cs_compare_figure {
    const char *title;      /* NULL: made from the fields below */
    const char *coll, *algo;
    int ranks;              /* the ranks on every machine; -1: they
                               differ (the title says so); 0: not said */
    const char *engines;    /* cs_compare_engines_text, or NULL */
    int logy;               /* bars: 1 log, 0 linear, -1 log when the
                               times span more than a factor 30 */
    int ticks;              /* times in machine ticks (plain numbers)
                               rather than seconds with SI prefixes */
    int elements4;          /* lines: sizes in 4-byte elements */
    const char *xlabel;     /* lines: NULL "size (bytes)" */
    int y;                  /* cs_figures_y_t: values are times (0, the
                               default) or bandwidths in bytes per second,
                               drawn and labelled as such (`--y`) */
} cs_compare_figure_t;

/* The bar chart of a comparison at one size (`collsim compare --plot`):
 * one bar per machine, labels[i] under it, its time values[i] (seconds, or
 * ticks with fig->ticks; or its bandwidth with fig->y) on the axis and, with four significant digits in
 * the axis's unit, above it.  Title made: "COLL/ALGO, SIZE, P ranks on N
 * machines (ENGINES)".  Errors as cs_plot_write_bars gives them. */
int cs_compare_plot_bars(const char *path, const cs_compare_figure_t *fig, int64_t bytes, int n,
                         const char *const *labels, const double *values, cs_error_t *err);

/* The line plot of a comparison over sizes: log-log, time (as for the
 * bars) against size, one line per machine (labels[k] its legend entry),
 * values[k * nsizes + i] the time of machine k at sizes[i] (NaN: none, the
 * line breaks).  Title made: "COLL/ALGO, P ranks on N machines (ENGINES)".
 * Errors as cs_plot_write gives them. */
int cs_compare_plot_lines(const char *path, const cs_compare_figure_t *fig, int nsizes,
                          const int64_t *sizes, int n, const char *const *labels,
                          const double *values, cs_error_t *err);

#endif
