/*
 * queue_tb.h - private to queue.c and queue_hot.h (the kernel's inline push
 * and pop): the time-bucket queue (a heap of distinct times, each with a
 * FIFO of its events).  See queue_tb.c.
 *
 * The struct and the two hot operations (push into a bucket that exists,
 * pop from the head bucket) are here, inline, because they are the
 * simulator's innermost loop: every event is one push and one pop, and the
 * calls cost as much as the work (measured: ~30% fewer instructions per push
 * and pop on the ring shift once inlined into cs_queue_push/pop).  The rest
 * (a new time, an emptied time, growth) is in queue_tb.c, out of line.
 */
#ifndef CS_QUEUE_TB_H
#define CS_QUEUE_TB_H

#include "core/queue.h"

#define CS_TBQ_NIL UINT32_MAX

typedef struct cs_tbq_node {
    cs_event_t ev;
    uint32_t next;
} cs_tbq_node_t;

typedef struct cs_tbq_bucket {
    cs_tick_t time;
    uint32_t head, tail;
    uint32_t next_free;
} cs_tbq_bucket_t;

typedef struct cs_tbq_hentry {
    cs_tick_t time;
    uint32_t bucket; /* CS_TBQ_NIL = empty slot */
} cs_tbq_hentry_t;

typedef struct cs_tbq {
    cs_tbq_node_t *nodes;
    uint32_t nnodes, cap_nodes, free_node;
    cs_tbq_bucket_t *buckets;
    uint32_t nbuckets, cap_buckets, free_bucket;
    cs_tbq_hentry_t *heap;  /* min-heap on time (times are distinct) */
    uint32_t nheap;
    cs_tbq_hentry_t *table; /* linear probing, backward-shift deletion */
    uint32_t table_mask;
    uint32_t table_used;
    uint32_t last_bucket;   /* cache: the bucket of the latest push */
} cs_tbq_t;

void cs_tbq_init(cs_tbq_t *q);
void cs_tbq_fini(cs_tbq_t *q);
/* Out of line: push when the fast path cannot (a time other than the latest
 * push's, or no free node). */
void cs_tbq_push_slow(cs_tbq_t *q, const cs_event_t *e);
/* Out of line: bucket b (the heap's least time) became empty; drops it. */
void cs_tbq_bucket_done(cs_tbq_t *q, uint32_t b);

/* Appends a node to bucket b.  The fields are stored one by one, not
 * copied from an event built on the caller's stack: a 16-byte load of what
 * two 8-byte stores just wrote cannot be store-forwarded, and that stall
 * was a third of the ring shift's time (perf). */
static inline void cs_tbq_append_fields(cs_tbq_t *q, uint32_t b, uint32_t n, cs_tick_t time,
                                        uint64_t seq, uint32_t kind, uint32_t a, uint64_t pb)
{
    cs_tbq_node_t *nd = &q->nodes[n];
    nd->ev.time = time;
    nd->ev.seq = seq;
    nd->ev.kind = kind;
    nd->ev.a = a;
    nd->ev.b = pb;
    nd->next = CS_TBQ_NIL;
    cs_tbq_bucket_t *bk = &q->buckets[b];
    if (bk->tail == CS_TBQ_NIL)
        bk->head = n;
    else
        q->nodes[bk->tail].next = n;
    bk->tail = n;
}

static inline void cs_tbq_append(cs_tbq_t *q, uint32_t b, uint32_t n, const cs_event_t *e)
{
    cs_tbq_append_fields(q, b, n, e->time, e->seq, e->kind, e->a, e->b);
}

/* The bucket of time t if the hash table has it in its home slot (the
 * common case: the table is at most half full), else CS_TBQ_NIL.  The same
 * hash as queue_tb.c's table. */
static inline uint32_t cs_tbq_home(const cs_tbq_t *q, cs_tick_t t)
{
    uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ull;
    const cs_tbq_hentry_t *h = &q->table[(uint32_t)(x >> 32) & q->table_mask];
    return h->time == t ? h->bucket : CS_TBQ_NIL;
}

/* The fast path makes no call, so it needs no saved registers.  The latest
 * push's bucket is tried first (a ring's channels all push to one time),
 * then the table's home slot (a torus alternates between a few times, which
 * defeats a one-entry cache). */
static inline void cs_tbq_push(cs_tbq_t *q, cs_tick_t time, uint64_t seq, uint32_t kind,
                               uint32_t a, uint64_t pb)
{
    uint32_t b = q->last_bucket, n = q->free_node;
    /* last_bucket is NIL or a live bucket, which is never empty: the one
     * pop that empties a bucket drops it and clears last_bucket with it
     * (cs_tbq_bucket_done) */
    if (b == CS_TBQ_NIL || q->buckets[b].time != time) {
        b = cs_tbq_home(q, time);
        q->last_bucket = b;
    }
    if (__builtin_expect(b == CS_TBQ_NIL || n == CS_TBQ_NIL, 0)) {
        cs_event_t e = {.time = time, .seq = seq, .kind = kind, .a = a, .b = pb};
        cs_tbq_push_slow(q, &e);
        return;
    }
    q->free_node = q->nodes[n].next;
    cs_tbq_append_fields(q, b, n, time, seq, kind, a, pb);
}

/* The queue must not be empty. */
static inline void cs_tbq_pop(cs_tbq_t *q, cs_event_t *out)
{
    uint32_t b = q->heap[0].bucket;
    cs_tbq_bucket_t *bk = &q->buckets[b];
    uint32_t n = bk->head;
    cs_tbq_node_t *nd = &q->nodes[n];
    *out = nd->ev;
    bk->head = nd->next;
    nd->next = q->free_node;
    q->free_node = n;
    if (bk->head == CS_TBQ_NIL)
        cs_tbq_bucket_done(q, b);
}

/* The queue must not be empty. */
static inline const cs_event_t *cs_tbq_peek(const cs_tbq_t *q)
{
    return &q->nodes[q->buckets[q->heap[0].bucket].head].ev;
}

#endif
