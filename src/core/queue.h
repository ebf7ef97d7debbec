/*
 * queue.h - the event queue of the simulation kernel.
 *
 * A priority queue of events ordered by (time, seq): seq is a counter that
 * cs_queue_push assigns, so events at equal time pop in insertion order and
 * every run of the same inputs pops the same sequence.  The order is part of
 * the contract, not an option.
 *
 * Three implementations share this interface (chosen at cs_queue_new): a
 * binary heap, a 4-ary heap, and a time-bucket queue (a heap of distinct
 * times with a FIFO of events per time, queue_tb.c); all pop the same order.  tools/bench measures both on the simulator's
 * workloads; CS_QUEUE_DEFAULT names the faster one.
 */
#ifndef CS_QUEUE_H
#define CS_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t cs_tick_t;
#define CS_TICK_MAX INT64_MAX

typedef struct cs_event {
    cs_tick_t time;
    uint64_t seq;     /* assigned by cs_queue_push */
    uint32_t kind;    /* handler selector, meaning owned by the caller */
    uint32_t a;       /* payload */
    uint64_t b;       /* payload */
} cs_event_t;

typedef enum cs_queue_kind {
    CS_QUEUE_BINARY = 0,
    CS_QUEUE_QUAD = 1,
    CS_QUEUE_TIMEBUCKET = 2 /* heap of distinct times, FIFO per time */
} cs_queue_kind_t;

extern const cs_queue_kind_t CS_QUEUE_DEFAULT;

typedef struct cs_queue cs_queue_t; /* opaque */

/* Returns a new empty queue (never NULL: allocation failure aborts). */
cs_queue_t *cs_queue_new(cs_queue_kind_t kind);
/* Frees the queue and the events still in it; accepts NULL. */
void cs_queue_free(cs_queue_t *q);

/* Inserts an event; O(log n).  Returns the seq it was given. */
uint64_t cs_queue_push(cs_queue_t *q, cs_tick_t time, uint32_t kind, uint32_t a, uint64_t b);
/* Removes the least (time, seq) event into *out.  Returns 0 when empty
 * (and leaves *out untouched), 1 otherwise. */
int cs_queue_pop(cs_queue_t *q, cs_event_t *out);
/* Peeks at the least event without removing it; 0 when empty. */
int cs_queue_peek(const cs_queue_t *q, cs_event_t *out);
size_t cs_queue_size(const cs_queue_t *q);
/* Largest size the queue has had (for benchmarks and memory reports). */
size_t cs_queue_peak(const cs_queue_t *q);
const char *cs_queue_kind_name(cs_queue_kind_t kind);

#endif
