/*
 * groq_sched.h - the Groq machine's network engine: software-scheduled
 * networking (paper §4; reference/groq-dragonfly.md §2; docs/groq.md),
 * behind the cs_net_ops_t interface.
 *
 * There is no back-pressure and no arbitration.  When a message is posted
 * (and as far as its gate allows) the engine "compiles" it: every vector
 * (a 320-byte flit, 328 bytes on the wire) gets, on every link direction of
 * its source route, a time slot of `slot` ticks that no other vector holds:
 *
 *   - a vector may start on the first link at the time it is compiled (or,
 *     with align=1, after the start-up alignment), and on link j+1 no
 *     earlier than its start on link j plus the hop latency (virtual
 *     cut-through; in between it waits in the intermediate TSP's SRAM, which
 *     is never full);
 *   - each link direction keeps a calendar of reserved intervals; a vector
 *     takes the earliest interval of `slot` ticks that is free (earliest
 *     fit), vectors of one message in order;
 *   - it arrives at the destination `hop` ticks after its start on the last
 *     link; the message is delivered when its last vector has arrived.
 *
 * Messages compiled earlier keep their slots: the schedule is greedy in
 * posting order (deterministic).  A message has one path (the minimal
 * route) unless the machine allows more (paths=k or auto): then each vector
 * takes the candidate path on which it arrives first (ties: the lower
 * path), which on idle links is the optimal split of a tensor over the
 * paths; or, with even=1, vector i takes path i mod k.
 *
 * Calendars hold intervals, not vectors: a run of back-to-back vectors is
 * one interval, and intervals that ended before the current time are
 * dropped, so memory follows the traffic in flight.
 */
#ifndef CS_GROQ_SCHED_H
#define CS_GROQ_SCHED_H

#include "engine/net.h"
#include "core/sim.h"
#include "machines/groq.h"

int cs_groq_sched_new(const cs_groq_t *g, cs_sim_t *sim, const cs_net_hooks_t *hooks,
                      cs_net_t **out, cs_error_t *err);

/* Totals of a run (the engine of a groq machine, else all zero). */
typedef struct cs_groq_stats {
    int64_t messages;        /* network messages (local copies excluded) */
    int64_t vectors;         /* vectors sent */
    int64_t vector_hops;     /* vector placements (vectors x hops) */
    int64_t nonminimal;      /* vectors sent on a path other than the minimal route */
    int64_t fixed;           /* vectors placed by the explicit schedule */
    double source_wait;      /* ticks vectors waited at their source for a free slot */
    double sram_wait;        /* ticks vectors waited in intermediate SRAM beyond the hop */
    int64_t max_intervals;   /* largest calendar (intervals on one link direction) */
} cs_groq_stats_t;
/* The scheduler's counters after a run; all zero if `n` is another engine
 * or NULL (checked with cs_net_impl_of). */
void cs_groq_sched_stats(const cs_net_t *n, cs_groq_stats_t *out);

#endif
