/*
 * queue_hot.h - private to the kernel (sim.c) and queue.c: the event
 * queue's struct and its push and pop, inline.
 *
 * Why a second header: every simulated event is one cs_sim_at and one pop
 * of cs_sim_run, and the packet engine's events do a few dozen
 * instructions of their own, so the call from the kernel into queue.c
 * (a prologue, an epilogue and the event rebuilt on the way) was a tenth
 * of an event's cost (callgrind, torus permutation).  Everyone else uses
 * queue.h, where cs_queue_t stays opaque; this layout is not an interface.
 */
#ifndef CS_QUEUE_HOT_H
#define CS_QUEUE_HOT_H

#include "core/queue.h"
#include "core/queue_tb.h"

struct cs_queue {
    void *raw;        /* the allocation; ev points inside it (see queue_alloc) */
    cs_event_t *ev;   /* heap array, ev[0] is the least event */
    size_t size;      /* events in the heap */
    size_t cap;       /* events that fit in ev */
    size_t peak;      /* largest size so far */
    uint64_t next_seq;
    cs_queue_kind_t kind;
    cs_tbq_t tb;      /* CS_QUEUE_TIMEBUCKET: the whole queue lives here (by
                       * value: one pointer fewer on every push and pop) */
};

/* The heaps' push and pop (queue.c), out of line so that the time-bucket
 * fast path (the default) needs no saved registers. */
void cs_queue_heaps_push(cs_queue_t *q, cs_event_t e);
void cs_queue_heaps_pop(cs_queue_t *q, cs_event_t *out);

/* cs_queue_push and cs_queue_pop (queue.h has the contract). */
static inline uint64_t cs_queue_push_hot(cs_queue_t *q, cs_tick_t time, uint32_t kind,
                                         uint32_t a, uint64_t b)
{
    uint64_t seq = q->next_seq++;
    if (__builtin_expect(q->kind != CS_QUEUE_TIMEBUCKET, 0)) {
        cs_event_t e = {.time = time, .seq = seq, .kind = kind, .a = a, .b = b};
        cs_queue_heaps_push(q, e);
        return seq;
    }
    cs_tbq_push(&q->tb, time, seq, kind, a, b);
    if (++q->size > q->peak)
        q->peak = q->size;
    return seq;
}

static inline int cs_queue_pop_hot(cs_queue_t *q, cs_event_t *out)
{
    if (q->size == 0)
        return 0;
    if (__builtin_expect(q->kind != CS_QUEUE_TIMEBUCKET, 0)) {
        cs_queue_heaps_pop(q, out);
        return 1;
    }
    q->size--;
    cs_tbq_pop(&q->tb, out);
    return 1;
}

#endif
