/*
 * compare.h - one collective algorithm on several machines (`collsim
 * compare`, `POST /api/compare`): each machine runs exactly what `collsim
 * run --machine SPEC --coll C --algo A --bytes N` would (the request path),
 * and the comparison is reported as a row per machine and as one JSON
 * document, {"coll", "algo", "bytes", "runs": [<run JSON>, ...]} in the
 * order of the machines (docs/api.md; `collsim compare --json FILE`).
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

/* The document: begin, then each run's JSON (cs_compare_json_run, the run
 * JSON of `collsim run --json`, index 0, 1, ...), then end. */
void cs_compare_json_begin(FILE *f, const char *coll, const char *algo, int64_t bytes);
int cs_compare_json_run(FILE *f, int index, int with_timing, const cs_request_run_t *run,
                        cs_error_t *err);
void cs_compare_json_end(FILE *f);

/* The bar chart of a comparison (`collsim compare --plot`, the server's
 * plot.svg): one bar per machine, labels[i] under it, its time seconds[i]
 * in µs with the time written above it.  title NULL: "COLL/ALGO, SIZE, on N
 * machines"; logy -1: a log axis when the times span more than a factor 30.
 * Errors as cs_plot_write_bars gives them. */
int cs_compare_plot(const char *path, const char *title, const char *coll, const char *algo,
                    int64_t bytes, int n, const char *const *labels, const double *seconds,
                    int logy, cs_error_t *err);

#endif
