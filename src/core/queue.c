/*
 * queue.c - the kernel's event queue (see queue.h): a min-heap of events
 * ordered by (time, seq), as a binary heap or a 4-ary heap.
 *
 * Workload: every simulated event is one push and one pop, with the heap
 * holding roughly one pending event per active channel or rank (10^3..10^5),
 * so this file is the simulator's hot path.  The choices follow from that:
 *
 * - Events are stored by value (32 bytes) in one growable array, root at
 *   index 0; no per-event allocation, no pointer chasing.
 * - Sifts move a hole and write the moving event once at the end, instead of
 *   swapping at every level (half the stores).
 * - The kind is switched on once per call; each heap has its own inlined
 *   loops, so there is no function pointer or arity variable in the inner loop.
 * - push compares times only: seq grows with every push, so the new event has
 *   the largest seq in the heap and loses every tie.  That is exactly the
 *   (time, seq) order, with one comparison instead of two.
 * - pop uses Floyd's bottom-up sift: the hole left by the root goes all the way
 *   down along the least children, then the last event (which, in a
 *   simulator, is usually one of the latest) sifts up from there, typically by
 *   zero or one level.  This skips the comparison against the moving event at
 *   every level on the way down.
 * - The choice of the least child is branch-free (the outcome is a coin flip
 *   that a branch predictor would miss half the time): with a 128-bit integer
 *   type the (time, seq) comparison is one compare-with-borrow.
 * - The array is offset so that ev[1] starts a 64-byte cache line: the two
 *   children of a binary node then share one line, the four children of a
 *   4-ary node fill exactly two, and the binary descent prefetches the two
 *   lines of the grandchildren while it compares the children.
 *
 * Measured when written (hold model: pop, then push at the popped time +
 * U[0,1000), 10^4 events, -O3, a shared 2-core AMD EPYC VM, ~11 ns of loop
 * and RNG overhead included): binary ~72 ns, 4-ary ~77 ns per pop+push.
 * Most of it is pop's descent, bound by the latency of one dependent load
 * and compare per level.  The cache-line offset and the binary prefetch
 * matter at 10^5 events (binary ~170 -> ~130 ns) more than at 10^4; splitting
 * keys from payloads and comparing by value in the 4-ary tournament changed
 * nothing measurable, so they were left out.  tools/bench has the current
 * numbers.
 *
 * The time-bucket queue (queue_tb.c, the default) lives in cs_queue by value
 * and its hot path is inline (queue_tb.h), as are push and pop themselves
 * (queue_hot.h, which the kernel includes so that an event costs no call
 * into this file); the heaps' push and pop are out of line so that path
 * needs no saved registers.
 *
 * seq is a uint64 counter: at 10^9 events per second it would take five
 * centuries to wrap, so wrap-around is not handled.
 */
#include "core/queue.h"

#include "core/error.h"
#include "core/queue_hot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The time-bucket queue: on the packet benchmarks it runs about twice as fast
 * as either heap (tools/bench prints all three). */
const cs_queue_kind_t CS_QUEUE_DEFAULT = CS_QUEUE_TIMEBUCKET;

/* Initial capacity in events (2 KiB): small queues never reallocate. */
#define QUEUE_INITIAL_CAP 64
#define QUEUE_LINE 64

_Static_assert(sizeof(cs_event_t) == 32, "the cache-line layout below assumes 32-byte events");

/* struct cs_queue is in queue_hot.h (shared with the kernel, sim.c). */

/* (time, seq) order.  Branch-free either way; the 128-bit form compiles to a
 * compare and a subtract-with-borrow.  time is signed, so its sign bit is
 * flipped to make the unsigned order agree with the signed one. */
static inline int ev_less(const cs_event_t *x, const cs_event_t *y)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128; /* quiet under -Wpedantic */
    u128 kx = (u128)((uint64_t)x->time ^ ((uint64_t)1 << 63)) << 64 | x->seq;
    u128 ky = (u128)((uint64_t)y->time ^ ((uint64_t)1 << 63)) << 64 | y->seq;
    return kx < ky;
#else
    return (x->time < y->time) | ((x->time == y->time) & (x->seq < y->seq));
#endif
}

/* Allocates room for cap events with &ev[1] on a cache-line boundary and
 * moves the current events there.  A plain realloc cannot keep the offset, so
 * growth copies by hand; it happens log2(peak) times in a run. */
static void queue_alloc(cs_queue_t *q, size_t cap)
{
    CS_ASSERT(cap <= (SIZE_MAX - QUEUE_LINE) / sizeof(cs_event_t));
    char *raw = cs_malloc(cap * sizeof(cs_event_t) + QUEUE_LINE);
    uintptr_t line1 = ((uintptr_t)raw + sizeof(cs_event_t) + QUEUE_LINE - 1)
                      & ~(uintptr_t)(QUEUE_LINE - 1);
    cs_event_t *ev = (cs_event_t *)(line1 - sizeof(cs_event_t));
    if (q->size)
        memcpy(ev, q->ev, q->size * sizeof *ev);
    free(q->raw);
    q->raw = raw;
    q->ev = ev;
    q->cap = cap;
}

/* Kept out of line so that push's fast path stays small. */
static void __attribute__((noinline)) queue_grow(cs_queue_t *q)
{
    queue_alloc(q, q->cap * 2);
}

cs_queue_t *cs_queue_new(cs_queue_kind_t kind)
{
    CS_ASSERT(kind == CS_QUEUE_BINARY || kind == CS_QUEUE_QUAD || kind == CS_QUEUE_TIMEBUCKET);
    cs_queue_t *q = cs_calloc(1, sizeof *q);
    q->kind = kind;
    if (kind == CS_QUEUE_TIMEBUCKET)
        cs_tbq_init(&q->tb);
    else
        queue_alloc(q, QUEUE_INITIAL_CAP);
    return q;
}

void cs_queue_free(cs_queue_t *q)
{
    if (!q)
        return;
    if (q->kind == CS_QUEUE_TIMEBUCKET)
        cs_tbq_fini(&q->tb);
    free(q->raw);
    free(q);
}

/* ---- both heaps: children of i are arity*i+1 .. arity*i+arity ---- */

/* Push and sift-up are the same walk toward the root in both heaps, with
 * the parent (i - 1) / arity; one copy of each serves both, and with a
 * constant arity the compiler specialises it as it did the two copies. */

/* Push: only the time decides (see the top comment). */
static inline void heap_push(cs_event_t *ev, size_t i, cs_event_t e, size_t arity)
{
    while (i > 0) {
        size_t p = (i - 1) / arity;
        if (!(e.time < ev[p].time))
            break;
        ev[i] = ev[p];
        i = p;
    }
    ev[i] = e;
}

/* Sift-up with the full order: `e` may be older than its ancestors. */
static inline void heap_sift_up(cs_event_t *ev, size_t i, cs_event_t e, size_t arity)
{
    while (i > 0) {
        size_t p = (i - 1) / arity;
        if (!ev_less(&e, &ev[p]))
            break;
        ev[i] = ev[p];
        i = p;
    }
    ev[i] = e;
}

/* ---- binary heap: children of i are 2i+1, 2i+2 ---- */

/* Fills the hole at ev[0] of a heap whose events are ev[0..n-1] plus `last`
 * (just removed from ev[n]). */
static inline void binary_pop(cs_event_t *ev, size_t n, cs_event_t last)
{
    size_t i = 0, c;
    /* Descend while both children exist, moving the lesser one up. */
    while ((c = 2 * i + 1) + 1 < n) {
        /* Grandchildren 2c+1, 2c+2 and 2c+3, 2c+4: two whole lines.  Near
         * the bottom these lie past the array; a prefetch never faults, and
         * the address is formed as an integer so no out-of-bounds pointer
         * exists. */
        uintptr_t gc = (uintptr_t)ev + (2 * c + 1) * sizeof *ev;
        __builtin_prefetch((const void *)gc);
        __builtin_prefetch((const void *)(gc + QUEUE_LINE));
        c += ev_less(&ev[c + 1], &ev[c]);
        ev[i] = ev[c];
        i = c;
    }
    if (c < n) { /* a single child at the bottom */
        ev[i] = ev[c];
        i = c;
    }
    heap_sift_up(ev, i, last, 2);
}

/* ---- 4-ary heap: children of i are 4i+1 .. 4i+4 ---- */

static inline void quad_pop(cs_event_t *ev, size_t n, cs_event_t last)
{
    size_t i = 0, c;
    /* Descend while all four children exist: a two-round tournament, whose
     * first round is two independent comparisons. */
    while ((c = 4 * i + 1) + 3 < n) {
        size_t m01 = c + ev_less(&ev[c + 1], &ev[c]);
        size_t m23 = c + 2 + ev_less(&ev[c + 3], &ev[c + 2]);
        size_t m = ev_less(&ev[m23], &ev[m01]) ? m23 : m01;
        ev[i] = ev[m];
        i = m;
    }
    if (c < n) { /* one to three children at the bottom */
        size_t m = c;
        for (size_t k = c + 1; k < n; k++)
            if (ev_less(&ev[k], &ev[m]))
                m = k;
        ev[i] = ev[m];
        i = m;
    }
    heap_sift_up(ev, i, last, 4);
}

/* ---- public interface ---- */

/* The heaps' push and pop, out of line so that the time-bucket fast path of
 * cs_queue_push/pop (the default) needs no saved registers. */
void __attribute__((noinline)) cs_queue_heaps_push(cs_queue_t *q, cs_event_t e)
{
    if (q->size == q->cap)
        queue_grow(q);
    size_t i = q->size++;
    if (q->size > q->peak)
        q->peak = q->size;
    if (q->kind == CS_QUEUE_QUAD)
        heap_push(q->ev, i, e, 4);
    else
        heap_push(q->ev, i, e, 2);
}

void __attribute__((noinline)) cs_queue_heaps_pop(cs_queue_t *q, cs_event_t *out)
{
    *out = q->ev[0];
    size_t n = --q->size;
    if (n == 0)
        return;
    cs_event_t last = q->ev[n];
    if (q->kind == CS_QUEUE_QUAD)
        quad_pop(q->ev, n, last);
    else
        binary_pop(q->ev, n, last);
}

uint64_t cs_queue_push(cs_queue_t *q, cs_tick_t time, uint32_t kind, uint32_t a, uint64_t b)
{
    return cs_queue_push_hot(q, time, kind, a, b);
}

int cs_queue_pop(cs_queue_t *q, cs_event_t *out)
{
    return cs_queue_pop_hot(q, out);
}

int cs_queue_peek(const cs_queue_t *q, cs_event_t *out)
{
    if (q->size == 0)
        return 0;
    if (q->kind == CS_QUEUE_TIMEBUCKET) {
        *out = *cs_tbq_peek(&q->tb);
        return 1;
    }
    *out = q->ev[0];
    return 1;
}

size_t cs_queue_size(const cs_queue_t *q)
{
    return q->size;
}

size_t cs_queue_peak(const cs_queue_t *q)
{
    return q->peak;
}

const char *cs_queue_kind_name(cs_queue_kind_t kind)
{
    switch (kind) {
    case CS_QUEUE_BINARY: return "binary";
    case CS_QUEUE_QUAD: return "quad";
    case CS_QUEUE_TIMEBUCKET: return "timebucket";
    }
    return "unknown";
}
