/*
 * queue_tb.c - the time-bucket event queue: a binary heap over the distinct
 * pending times, each time holding a FIFO of its events, found through a
 * hash table.
 *
 * Why: network simulations with uniform links are synchronous.  A packet
 * workload has thousands of channels finishing units at the very same tick,
 * so a plain heap of events spends its time sifting ties (a pop of 10^4
 * events walks ~13 levels).  Here events at one time are a linked list:
 * push is a hash look-up and an append, pop is an unlink, and the heap only
 * moves when a time is first used or emptied.  Events at equal time leave in
 * push order, which is exactly the (time, seq) order of the heaps, so all
 * three queues pop identical sequences (tests/core/test_queue.c checks it).
 *
 * When every event has its own time this is a heap plus a hash look-up per
 * push: slower than the plain heaps by a constant.  tools/bench compares.
 *
 * The hot path (a push into an existing time, a pop that leaves its time
 * non-empty) is inline in queue_tb.h; this file has the rest.
 */
#include "core/queue_tb.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define NIL CS_TBQ_NIL

/* cs_tbq_home (queue_tb.h) computes the same hash inline. */
static inline uint32_t hash_time(cs_tick_t t, uint32_t mask)
{
    uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32) & mask;
}

static void table_init(cs_tbq_t *q, uint32_t size)
{
    q->table = cs_malloc(size * sizeof *q->table);
    /* times too: cs_tbq_home compares an empty slot's time before its
     * bucket (harmless, the bucket is NIL) and valgrind would say so */
    for (uint32_t i = 0; i < size; i++)
        q->table[i] = (cs_tbq_hentry_t){.time = 0, .bucket = NIL};
    q->table_mask = size - 1;
    q->table_used = 0;
}

static void table_insert(cs_tbq_t *q, cs_tick_t t, uint32_t b);

static void table_grow(cs_tbq_t *q)
{
    cs_tbq_hentry_t *old = q->table;
    uint32_t n = q->table_mask + 1;
    table_init(q, n * 2);
    for (uint32_t i = 0; i < n; i++)
        if (old[i].bucket != NIL)
            table_insert(q, old[i].time, old[i].bucket);
    free(old);
}

static void table_insert(cs_tbq_t *q, cs_tick_t t, uint32_t b)
{
    if ((q->table_used + 1) * 2 > q->table_mask + 1)
        table_grow(q);
    uint32_t i = hash_time(t, q->table_mask);
    while (q->table[i].bucket != NIL)
        i = (i + 1) & q->table_mask;
    q->table[i].time = t;
    q->table[i].bucket = b;
    q->table_used++;
}

static uint32_t table_find(const cs_tbq_t *q, cs_tick_t t)
{
    uint32_t i = hash_time(t, q->table_mask);
    while (q->table[i].bucket != NIL) {
        if (q->table[i].time == t)
            return q->table[i].bucket;
        i = (i + 1) & q->table_mask;
    }
    return NIL;
}

static void table_remove(cs_tbq_t *q, cs_tick_t t)
{
    uint32_t i = hash_time(t, q->table_mask), j;
    while (q->table[i].time != t || q->table[i].bucket == NIL)
        i = (i + 1) & q->table_mask;
    /* backward shift: keep every entry reachable from its home slot */
    for (j = (i + 1) & q->table_mask; q->table[j].bucket != NIL; j = (j + 1) & q->table_mask) {
        uint32_t home = hash_time(q->table[j].time, q->table_mask);
        /* entry j may move into hole i if its home is not in (i, j] */
        if (((j - home) & q->table_mask) >= ((j - i) & q->table_mask)) {
            q->table[i] = q->table[j];
            i = j;
        }
    }
    q->table[i].bucket = NIL;
    q->table_used--;
}

void cs_tbq_init(cs_tbq_t *q)
{
    memset(q, 0, sizeof *q);
    q->free_node = q->free_bucket = q->last_bucket = NIL;
    table_init(q, 64);
}

void cs_tbq_fini(cs_tbq_t *q)
{
    free(q->nodes);
    free(q->buckets);
    free(q->heap);
    free(q->table);
}

static uint32_t node_alloc(cs_tbq_t *q)
{
    if (q->free_node != NIL) {
        uint32_t i = q->free_node;
        q->free_node = q->nodes[i].next;
        return i;
    }
    if (q->nnodes == q->cap_nodes) {
        q->cap_nodes = q->cap_nodes ? q->cap_nodes * 2 : 256;
        CS_ASSERT(q->cap_nodes < NIL);
        q->nodes = cs_realloc(q->nodes, (size_t)q->cap_nodes * sizeof *q->nodes);
    }
    return q->nnodes++;
}

static uint32_t bucket_new(cs_tbq_t *q, cs_tick_t t)
{
    uint32_t b;
    if (q->free_bucket != NIL) {
        b = q->free_bucket;
        q->free_bucket = q->buckets[b].next_free;
    } else {
        if (q->nbuckets == q->cap_buckets) {
            q->cap_buckets = q->cap_buckets ? q->cap_buckets * 2 : 64;
            q->buckets = cs_realloc(q->buckets, (size_t)q->cap_buckets * sizeof *q->buckets);
            q->heap = cs_realloc(q->heap, (size_t)q->cap_buckets * sizeof *q->heap);
        }
        b = q->nbuckets++;
    }
    q->buckets[b].time = t;
    q->buckets[b].head = q->buckets[b].tail = NIL;
    /* heap insert (sift up) */
    uint32_t i = q->nheap++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (q->heap[parent].time <= t)
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = (cs_tbq_hentry_t){t, b};
    table_insert(q, t, b);
    return b;
}

void cs_tbq_push_slow(cs_tbq_t *q, const cs_event_t *e)
{
    uint32_t b = q->last_bucket;
    if (b == NIL || q->buckets[b].time != e->time) { /* see cs_tbq_push */
        b = table_find(q, e->time);
        if (b == NIL)
            b = bucket_new(q, e->time);
        q->last_bucket = b;
    }
    cs_tbq_append(q, b, node_alloc(q), e);
}

static void heap_pop_min(cs_tbq_t *q)
{
    cs_tbq_hentry_t last = q->heap[--q->nheap];
    uint32_t i = 0, n = q->nheap;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && q->heap[c + 1].time < q->heap[c].time)
            c++;
        if (last.time <= q->heap[c].time)
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (n)
        q->heap[i] = last;
}

void cs_tbq_bucket_done(cs_tbq_t *q, uint32_t b)
{
    cs_tbq_bucket_t *bk = &q->buckets[b];
    bk->tail = NIL;
    table_remove(q, bk->time);
    heap_pop_min(q);
    bk->next_free = q->free_bucket;
    q->free_bucket = b;
    if (q->last_bucket == b)
        q->last_bucket = NIL;
}
