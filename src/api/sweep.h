/*
 * sweep.h - one collective on one machine with several algorithms over
 * sizes and rank counts (`collsim sweep`, `POST /api/sweep`): every point is
 * exactly a `collsim run --coll C --algo A --bytes N [--ranks P]`, the
 * collective prepared once per algorithm and rank count (cs_sweep_prepare)
 * and each size changing only its bytes (cs_sweep_point).  The JSON
 * document is {"machine", "coll", "points": [<run JSON>, ...]}, algorithm
 * by algorithm, then rank count, then size (docs/api.md; `collsim sweep
 * --json FILE`).  Nothing here prints.
 */
#ifndef CS_SWEEP_H
#define CS_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api/figures.h"
#include "api/request.h"
#include "coll/coll.h"
#include "core/error.h"
#include "engine/exec.h"
#include "machines/machine.h"

/* The algorithm an option is scoped to (ALGO:KEY=VALUE), copied into buf,
 * or NULL (it holds for every algorithm); *kv gets the KEY=VALUE part. */
const char *cs_sweep_opt_scope(const char *opt, const char **kv, char *buf, size_t len);

/* Checks options against the algorithms they apply to, before any run:
 * each KEY=VALUE (with `scoped`, [ALGO:]KEY=VALUE, ALGO one of algos) and
 * its KEY one that every algorithm it applies to takes (cs_coll_algo_t.keys).
 * Errors name the option ("--opt 'k=2': allreduce/ring takes no options"). */
int cs_sweep_check_opts(const char *const *opts, int nopts, const cs_coll_algo_t *const *algos,
                        int nalgos, int scoped, cs_error_t *err);

/* Prepares base's collective (its bytes: the first size) with algorithm
 * `algo` and P ranks (0: every node) on machine m into c, as `collsim run`
 * would, with the options of base that apply to algo (unscoped, or scoped
 * to it), scope removed.  cs_request_coll_destroy c afterwards. */
int cs_sweep_prepare(const cs_request_t *base, const cs_coll_algo_t *algo, int64_t P,
                     const cs_machine_t *m, cs_request_coll_t *c, cs_error_t *err);

/* One point: builds c's program for `bytes` and runs it on m with base's
 * mode and (unless base->force) the work limit; cancel may be NULL.  With
 * json non-NULL, also writes the run's JSON (with_timing as for
 * cs_report_json) to it.  res is the caller's to destroy. */
int cs_sweep_point(const cs_request_t *base, const cs_machine_t *m, cs_request_coll_t *c,
                   int64_t bytes, const volatile sig_atomic_t *cancel, FILE *json,
                   int with_timing, cs_exec_result_t *res, cs_error_t *err);

/* One point's run JSON (as cs_report_json without --predict) with the
 * "point" object {"algo", "bytes", "ranks"} of c's collective: each point
 * says what it is, whatever order the reader takes them in. */
int cs_sweep_json_point(FILE *f, int with_timing, const cs_machine_t *m, const cs_program_t *p,
                        const cs_exec_result_t *r, int validated, const cs_request_coll_t *c,
                        cs_error_t *err);

/* The document: begin, the points' JSON separated by cs_sweep_json_next
 * (before every point but the first), end.  A sweep over several machines
 * (`collsim sweep --machines`) begins with cs_sweep_json_begin_machines:
 * {"machines": [SPEC, ...], "coll", "points"}, each point's run JSON
 * naming its machine. */
void cs_sweep_json_begin(FILE *f, const char *machine, const char *coll);
void cs_sweep_json_begin_machines(FILE *f, const char *const *machines, int n,
                                  const char *coll);
void cs_sweep_json_next(FILE *f);
void cs_sweep_json_end(FILE *f);

/* ---- the plot (`collsim sweep --plot`, the service's plot.svg) ------------ */

/* What a sweep's plot shows.  Arrays are borrowed. */
typedef struct cs_sweep_figure {
    const char *title, *xlabel, *ylabel; /* NULL: made from the fields below */
    cs_coll_kind_t kind;
    int nmachines;
    const char *const *specs;    /* [machine]: the spec (the title, one machine) */
    const char *const *shorts;   /* [machine]: its short name (cs_figures_machine_short) */
    const char *const *engines;  /* [machine]: the engine that ran ("": none ran) */
    const double *tick_seconds;  /* [machine]: its clock */
    int nalgos;
    const char *const *algos;    /* [algo]: the algorithm's name */
    int nranks;
    const int *ranks;            /* [machine * nranks + j]: the ranks the points ran on */
    int nsizes;
    const int64_t *sizes;        /* ascending */
    int ticks;                   /* times in each machine's ticks, not seconds */
    int elements4;               /* sizes in 4-byte elements */
    cs_figures_y_t y;            /* time, or nccl-tests' algbw / busbw of it (--y) */
    /* `--algos nccl,...` (issue 36): the algorithm "nccl" (NCCL's choice)
     * is among algos.  The plot then marks, per machine and rank count,
     * the crossovers of the others (the sizes where the fastest changes)
     * and the sizes where NCCL's pick is slower than the fastest
     * (cs_sweep_crossovers).  0: not there (NCCL's choice is not compared). */
    int with_nccl;
} cs_sweep_figure_t;

/* What a sweep with NCCL's choice shows at one machine and rank count:
 * over sizes i = 0..nsizes-1, best[i] the fastest algorithm other than
 * "nccl" (-1: none ran), and nccl_slower[i] 1 where "nccl" ran slower than
 * it (by more than one part in 10^9).  ticks as for cs_sweep_plot. */
typedef struct cs_sweep_cross {
    int nccl;           /* the index of "nccl" in algos, -1: absent */
    int *best;          /* [nsizes] */
    int *nccl_slower;   /* [nsizes] */
} cs_sweep_cross_t;
/* Fills x (arrays allocated here, freed by cs_sweep_cross_destroy) for
 * machine mi and rank count j. */
void cs_sweep_crossovers(const cs_sweep_figure_t *fig, const double *ticks, int mi, int j,
                         cs_sweep_cross_t *x);
void cs_sweep_cross_destroy(cs_sweep_cross_t *x);
/* Writes the crossovers as text, a line per machine and rank count:
 * "crossovers ...: ring -> tree at 64 KiB; NCCL's pick slower than the
 * fastest at 1 MiB (tree, x1.23)".  Nothing without "nccl" in algos. */
void cs_sweep_crossovers_text(FILE *f, const cs_sweep_figure_t *fig, const double *ticks);

/* Draws time against size, log-log, one line per machine, algorithm and
 * rank count (against ranks when there is one size and several rank
 * counts) to path (io/plot.h: the extension gives the format).  ticks is
 * laid out [machine][algo][ranks][size], NaN for a point that did not run;
 * model (NULL: none) likewise, a line "ALGO (model)" beside each algorithm
 * that has one.  Times are drawn in seconds with SI prefixes unless
 * fig->ticks; fig->y draws a bandwidth of each time instead.  Errors as cs_plot_write gives them. */
int cs_sweep_plot(const char *path, const cs_sweep_figure_t *fig, const double *ticks,
                  const double *model, cs_error_t *err);

#endif
