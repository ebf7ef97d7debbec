/*
 * sim.h - the discrete-event kernel: a clock, an event queue and a table of
 * handlers.  Modules (the network engine, the executor, a machine's node
 * model) register a handler and schedule events for it; the kernel pops
 * events in (time, insertion) order and dispatches them.  There is no other
 * global state: two simulations can run side by side.
 */
#ifndef CS_SIM_H
#define CS_SIM_H

#include <stdint.h>
#include "core/queue.h"

typedef struct cs_sim cs_sim_t; /* opaque */

typedef void (*cs_sim_handler_fn)(void *ctx, const cs_event_t *ev);

#define CS_SIM_MAX_HANDLERS 16

cs_sim_t *cs_sim_new(cs_queue_kind_t queue_kind);
void cs_sim_free(cs_sim_t *s); /* accepts NULL; does not free handler contexts */

/* Registers a handler; returns its id (used as cs_event_t.kind). */
uint32_t cs_sim_register(cs_sim_t *s, cs_sim_handler_fn fn, void *ctx);

/* Schedules an event for handler `h` at absolute time t >= now.  A time
 * after CS_TICK_LIMIT (core/checked.h: the clock's maximum; a saturated
 * CS_TICK_OVER included) schedules nothing: it stops the run and marks the
 * simulation as overflowed (cs_sim_overflow), and cs_sim_run returns at
 * once from then on. */
void cs_sim_at(cs_sim_t *s, cs_tick_t t, uint32_t h, uint32_t a, uint64_t b);

/* Runs until the queue is empty or cs_sim_stop is called; returns the number
 * of events processed by this call. */
uint64_t cs_sim_run(cs_sim_t *s);
void cs_sim_stop(cs_sim_t *s);
/* Calls fn(ctx, now, events dispatched) after every `every` events of
 * cs_sim_run (0 or fn NULL: never); for progress reports.  fn must not
 * schedule events. */
void cs_sim_set_poll(cs_sim_t *s, uint64_t every, void (*fn)(void *ctx, cs_tick_t now,
                                                             uint64_t events),
                     void *ctx);

cs_tick_t cs_sim_now(const cs_sim_t *s);
/* Nonzero when an event was asked for after the clock's maximum; *at (if
 * not NULL) gets the clock at the first such request. */
int cs_sim_overflow(const cs_sim_t *s, cs_tick_t *at);
uint64_t cs_sim_events(const cs_sim_t *s);   /* total dispatched */
size_t cs_sim_queue_peak(const cs_sim_t *s);

#endif
