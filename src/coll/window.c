/*
 * window.c - a collective's program built while it runs (issue 17): the
 * suite's algorithms, unchanged, as program generators (core/progen.h).
 *
 * An algorithm is imperative code that emits a whole program (coll.h); to
 * build it a window at a time without rewriting 62 algorithms as
 * resumable state machines, the algorithm runs on a thread of its own and
 * the two sides take turns: the executor hands over when it must start an
 * op that is not closed yet, the builder hands back at the first wait after
 * which that op is closed and a batch of ops is built.  Only one side runs
 * at a time (a turn flag under a mutex), so the run is as deterministic as
 * a materialised one, and the mutex orders the builder's writes before the
 * executor's reads.
 *
 * The builder closes ops rank by rank (coll.c, cs_coll_builder_watch):
 * algorithms that emit step by step over all ranks (rings, recursive
 * doubling, pipelines) run in a window of a few steps; one that emits rank
 * after rank is built almost whole before its first op starts, because the
 * executor needs every op that is ready at time 0 (the last rank's first
 * ops) before it begins.  Either way the times are those of the whole
 * program.
 */
#include "coll/coll.h"
#include "coll/coll_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/progen.h"

/* Ops built beyond what the executor asked for, so that hand-overs (two
 * thread switches each) stay rare: at 2^16, a P = 4,096 ring allreduce of
 * 8.4 * 10^7 ops hands over about 1,300 times. */
#define WINDOW_BATCH_DEFAULT (1 << 16)

enum { TURN_RUN, TURN_BUILD };

typedef struct window {
    cs_progen_t g;               /* first: the executor's view */
    const cs_coll_algo_t *algo;
    cs_coll_args_t args;
    cs_coll_builder_t *b;
    int32_t *closed_below;
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn;
    int32_t want;                /* advance's request */
    int32_t resumed_at;          /* ops when the builder got the turn */
    int32_t batch;               /* ops to build beyond the request */
    int stopping;                /* destroy: build on without pausing */
    int rc;
    cs_error_t err;
} window_t;

/* Is the executor's request met?  (See cs_progen_ops_t.advance.) */
static int satisfied(const window_t *w)
{
    if (w->want == CS_PROGEN_ALL)
        return 0;
    if (w->want < 0)
        return cs_coll_builder_unchained(w->b) == 0;
    return w->want < w->closed_below[cs_program_op(w->g.prog, w->want)->rank];
}

static void hand_over(window_t *w, int to)
{
    pthread_mutex_lock(&w->mu);
    w->turn = to;
    pthread_cond_signal(&w->cv);
    while (w->turn == to)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* The builder's pause point, after every wait. */
static void at_wait(void *ctx)
{
    window_t *w = ctx;
    if (w->stopping || !satisfied(w) ||
        cs_program_nops(w->g.prog) - w->resumed_at < w->batch)
        return;
    hand_over(w, TURN_RUN);
    w->resumed_at = cs_program_nops(w->g.prog);
}

static void *builder_main(void *arg)
{
    window_t *w = arg;
    pthread_mutex_lock(&w->mu);
    while (w->turn != TURN_BUILD)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    w->rc = cs_coll_build_run(w->algo, w->b, &w->err);
    if (w->rc) /* worded as the request words a whole build's errors */
        cs_error_prefix(&w->err, "%s/%s", cs_coll_name(w->algo->kind), w->algo->name);
    pthread_mutex_lock(&w->mu);
    w->g.complete = 1;
    w->turn = TURN_RUN;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static int window_advance(cs_progen_t *g, int32_t op, cs_error_t *err)
{
    window_t *w = (window_t *)g;
    if (!g->complete) {
        w->want = op;
        w->resumed_at = cs_program_nops(g->prog);
        if (!w->started) {
            if (pthread_create(&w->thread, NULL, builder_main, w))
                return cs_error_set(err, CS_ERR_NOMEM, "cannot start the builder's thread");
            w->started = 1;
        }
        hand_over(w, TURN_BUILD);
    }
    if (g->complete && w->rc) {
        *err = w->err;
        return w->rc;
    }
    return CS_OK;
}

static void window_destroy(cs_progen_t *g)
{
    window_t *w = (window_t *)g;
    if (w->started) {
        if (!g->complete) {
            /* let the algorithm run out: every op it still adds fails at
             * once, so nothing more is built */
            w->stopping = 1;
            cs_program_set_limits(g->prog, cs_program_nops(g->prog), -1);
            hand_over(w, TURN_BUILD);
        }
        pthread_join(w->thread, NULL);
    }
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    cs_coll_builder_free(w->b);
    cs_program_free(g->prog);
    free(w->closed_below);
    free(w);
}

static const cs_progen_ops_t window_ops = {window_advance, window_destroy};

int cs_coll_generate(const cs_coll_algo_t *algo, const cs_coll_args_t *a, int32_t batch,
                     cs_progen_t **out, cs_error_t *err)
{
    window_t *w;
    int rc;
    *out = NULL;
    if ((rc = cs_coll_build_check(a, err)))
        return rc;
    if (!a->no_data)
        return cs_error_set(err, CS_ERR_USAGE, "a windowed program carries no data "
                            "descriptors: --validate needs the whole program");
    w = cs_calloc(1, sizeof *w);
    w->algo = algo;
    w->args = *a;
    w->batch = batch > 0 ? batch : WINDOW_BATCH_DEFAULT;
    w->g.ops = &window_ops;
    w->g.prog = cs_program_new(a->P);
    cs_program_set_windowed(w->g.prog);
    w->closed_below = cs_calloc((size_t)a->P, sizeof *w->closed_below);
    w->g.closed_below = w->closed_below;
    w->b = cs_coll_builder_new(w->g.prog, &w->args);
    cs_coll_builder_watch(w->b, w->closed_below, at_wait, w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->turn = TURN_RUN;
    *out = &w->g;
    return CS_OK;
}
