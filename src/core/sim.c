/*
 * sim.c - the discrete-event kernel (see sim.h).
 *
 * Deliberately tiny: the loop pops an event, advances the clock and calls
 * the handler registered under the event's kind.  Time never goes backwards
 * (asserted: an event scheduled in the past is a bug in a model, and
 * silently reordering it would corrupt results).
 */
#include "core/sim.h"

#include <stdlib.h>
#include "core/checked.h"
#include "core/error.h"
#include "core/queue_hot.h"

typedef struct handler {
    cs_sim_handler_fn fn;
    void *ctx;
} handler_t;

struct cs_sim {
    cs_queue_t *q;
    cs_tick_t now;
    uint64_t events;
    int stop;
    int overflow;       /* an event was asked for after CS_TICK_LIMIT */
    cs_tick_t over_at;  /* the clock when it was */
    uint32_t nhandlers;
    handler_t handlers[CS_SIM_MAX_HANDLERS];
    uint64_t poll_every;
    void (*poll)(void *ctx, cs_tick_t now, uint64_t events);
    void *poll_ctx;
};

cs_sim_t *cs_sim_new(cs_queue_kind_t queue_kind)
{
    cs_sim_t *s = cs_calloc(1, sizeof *s);
    s->q = cs_queue_new(queue_kind);
    return s;
}

void cs_sim_free(cs_sim_t *s)
{
    if (!s)
        return;
    cs_queue_free(s->q);
    free(s);
}

uint32_t cs_sim_register(cs_sim_t *s, cs_sim_handler_fn fn, void *ctx)
{
    CS_ASSERT(s->nhandlers < CS_SIM_MAX_HANDLERS);
    s->handlers[s->nhandlers] = (handler_t){fn, ctx};
    return s->nhandlers++;
}

void cs_sim_at(cs_sim_t *s, cs_tick_t t, uint32_t h, uint32_t a, uint64_t b)
{
    CS_ASSERT(t >= s->now);
    if (t > CS_TICK_LIMIT) {
        /* beyond the clock's maximum (a checked product saturated, or a
         * sum passed it): stop rather than report a wrong time */
        if (!s->overflow)
            s->over_at = s->now;
        s->overflow = 1;
        s->stop = 1;
        return;
    }
    cs_queue_push_hot(s->q, t, h, a, b);
}

uint64_t cs_sim_run(cs_sim_t *s)
{
    cs_event_t ev;
    uint64_t n = 0, next = s->poll ? s->poll_every : UINT64_MAX;
    s->stop = s->overflow;
    while (!s->stop && cs_queue_pop_hot(s->q, &ev)) {
        s->now = ev.time;
        s->handlers[ev.kind].fn(s->handlers[ev.kind].ctx, &ev);
        if (++n == next) {
            s->poll(s->poll_ctx, s->now, s->events + n);
            next += s->poll_every;
        }
    }
    s->events += n;
    return n;
}

void cs_sim_set_poll(cs_sim_t *s, uint64_t every, void (*fn)(void *ctx, cs_tick_t now,
                                                             uint64_t events),
                     void *ctx)
{
    s->poll_every = every;
    s->poll = every ? fn : NULL;
    s->poll_ctx = ctx;
}

void cs_sim_stop(cs_sim_t *s) { s->stop = 1; }
cs_tick_t cs_sim_now(const cs_sim_t *s) { return s->now; }
int cs_sim_overflow(const cs_sim_t *s, cs_tick_t *at)
{
    if (s->overflow && at)
        *at = s->over_at;
    return s->overflow;
}
uint64_t cs_sim_events(const cs_sim_t *s) { return s->events; }
size_t cs_sim_queue_peak(const cs_sim_t *s) { return cs_queue_peak(s->q); }
