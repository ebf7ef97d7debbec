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
 */
#include "core/queue_tb.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define NIL UINT32_MAX

typedef struct node {
    cs_event_t ev;
    uint32_t next;
} node_t;

typedef struct bucket {
    cs_tick_t time;
    uint32_t head, tail;
    uint32_t next_free;
} bucket_t;

typedef struct hentry {
    cs_tick_t time;
    uint32_t bucket; /* NIL = empty slot */
} hentry_t;

typedef struct hitem {
    cs_tick_t time;
    uint32_t bucket;
} hitem_t;

struct cs_tbq {
    node_t *nodes;
    uint32_t nnodes, cap_nodes, free_node;
    bucket_t *buckets;
    uint32_t nbuckets, cap_buckets, free_bucket;
    hitem_t *heap;     /* min-heap on time (times are distinct) */
    uint32_t nheap;
    hentry_t *table;   /* linear probing, backward-shift deletion */
    uint32_t table_mask;
    uint32_t table_used;
    uint32_t last_bucket; /* cache: the bucket of the latest push */
};

static inline uint32_t hash_time(cs_tick_t t, uint32_t mask)
{
    uint64_t x = (uint64_t)t * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32) & mask;
}

static void table_init(cs_tbq_t *q, uint32_t size)
{
    q->table = cs_malloc(size * sizeof *q->table);
    for (uint32_t i = 0; i < size; i++)
        q->table[i].bucket = NIL;
    q->table_mask = size - 1;
    q->table_used = 0;
}

static void table_insert(cs_tbq_t *q, cs_tick_t t, uint32_t b);

static void table_grow(cs_tbq_t *q)
{
    hentry_t *old = q->table;
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

cs_tbq_t *cs_tbq_new(void)
{
    cs_tbq_t *q = cs_calloc(1, sizeof *q);
    q->free_node = q->free_bucket = q->last_bucket = NIL;
    table_init(q, 64);
    return q;
}

void cs_tbq_free(cs_tbq_t *q)
{
    if (!q)
        return;
    free(q->nodes);
    free(q->buckets);
    free(q->heap);
    free(q->table);
    free(q);
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
    q->heap[i] = (hitem_t){t, b};
    table_insert(q, t, b);
    return b;
}

void cs_tbq_push(cs_tbq_t *q, const cs_event_t *e)
{
    uint32_t b = q->last_bucket;
    if (b == NIL || q->buckets[b].time != e->time || q->buckets[b].head == NIL) {
        b = table_find(q, e->time);
        if (b == NIL)
            b = bucket_new(q, e->time);
        q->last_bucket = b;
    }
    uint32_t n = node_alloc(q);
    q->nodes[n].ev = *e;
    q->nodes[n].next = NIL;
    bucket_t *bk = &q->buckets[b];
    if (bk->tail == NIL)
        bk->head = n;
    else
        q->nodes[bk->tail].next = n;
    bk->tail = n;
}

static void heap_pop_min(cs_tbq_t *q)
{
    hitem_t last = q->heap[--q->nheap];
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

int cs_tbq_pop(cs_tbq_t *q, cs_event_t *out)
{
    if (!q->nheap)
        return 0;
    uint32_t b = q->heap[0].bucket;
    bucket_t *bk = &q->buckets[b];
    uint32_t n = bk->head;
    *out = q->nodes[n].ev;
    bk->head = q->nodes[n].next;
    q->nodes[n].next = q->free_node;
    q->free_node = n;
    if (bk->head == NIL) {
        bk->tail = NIL;
        table_remove(q, bk->time);
        heap_pop_min(q);
        bk->next_free = q->free_bucket;
        q->free_bucket = b;
        if (q->last_bucket == b)
            q->last_bucket = NIL;
    }
    return 1;
}

int cs_tbq_peek(const cs_tbq_t *q, cs_event_t *out)
{
    if (!q->nheap)
        return 0;
    *out = q->nodes[q->buckets[q->heap[0].bucket].head].ev;
    return 1;
}
