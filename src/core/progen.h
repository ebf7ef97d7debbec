/*
 * progen.h - a program generator: a program that is built while it runs,
 * a window of it at a time (issue 17).
 *
 * A materialised program of a P = 4,096 ring allreduce has 8.4 * 10^7 ops;
 * the ops in flight at any moment are a few per rank.  A generator builds
 * its (windowed, see program.h) program on demand, and the executor asks
 * for more only when it must, so that what is built but not done stays a
 * window, and releases what is done.
 *
 * The contract that makes a windowed run give the same events and times as
 * the materialised program (the executor checks both halves and reports a
 * break of them as an error, never as a different result):
 *   - an op is *closed* once no op added later will depend on it.  Before
 *     the executor starts an op it makes it closed (advance), so that its
 *     successors are all known when it starts or completes and enable them
 *     in the same order as a whole program's tables would;
 *   - once advance(g, -1) has returned, every op added later has at least
 *     one dependency: the ops ready at time 0 all exist before the run
 *     starts, and start in id order as in a whole program.
 * A generator closes ops rank by rank: closed_below[r] is the id below
 * which every op of rank r is closed (it only grows).
 */
#ifndef CS_PROGEN_H
#define CS_PROGEN_H

#include <stdint.h>
#include "core/error.h"
#include "core/program.h"

/* advance's `op` asking for the whole program. */
#define CS_PROGEN_ALL INT32_MAX

typedef struct cs_progen cs_progen_t;

typedef struct cs_progen_ops {
    /* Builds on until op `op` is closed (op >= 0), until every op still to
     * come will have a dependency (op == -1), or to the end (CS_PROGEN_ALL);
     * a generator may build further (in batches, to keep hand-overs rare).
     * Sets g->complete when the program is whole and checked.  Returns a
     * builder error (options, sizes) with its message. */
    int (*advance)(cs_progen_t *g, int32_t op, cs_error_t *err);
    /* Stops the generator wherever it is and frees it (the program too). */
    void (*destroy)(cs_progen_t *g);
} cs_progen_ops_t;

/* Public for the executor's hot path (cs_progen_closed). */
struct cs_progen {
    const cs_progen_ops_t *ops;
    cs_program_t *prog;          /* windowed, owned */
    const int32_t *closed_below; /* per rank */
    int complete;                /* the program is whole */
};

/* Is op `op` of rank `rank` closed? */
static inline int cs_progen_closed(const cs_progen_t *g, int32_t op, int rank)
{
    return g->complete || op < g->closed_below[rank];
}

static inline int cs_progen_advance(cs_progen_t *g, int32_t op, cs_error_t *err)
{
    return g->ops->advance(g, op, err);
}

static inline void cs_progen_free(cs_progen_t *g)
{
    if (g)
        g->ops->destroy(g);
}

#endif
