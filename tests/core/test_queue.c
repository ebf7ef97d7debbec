/*
 * test_queue.c - the event queue against a trivially correct reference.
 *
 * The reference is an unsorted array whose pop scans for the least
 * (time, seq): too slow for a simulator, obviously right.  Both heaps run the
 * same random interleavings of push, pop and peek, with time distributions
 * chosen to stress what a heap gets wrong: many equal times (FIFO among ties
 * is the determinism contract), negative and extreme times (the signed order),
 * and sizes that cross the growth points.
 */
#include "core/queue.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const cs_queue_kind_t kinds[] = {CS_QUEUE_BINARY, CS_QUEUE_QUAD, CS_QUEUE_TIMEBUCKET};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* ---- reference ---- */

typedef struct ref {
    cs_event_t *ev;
    size_t n, cap;
} ref_t;

static int ref_less(const cs_event_t *x, const cs_event_t *y)
{
    if (x->time != y->time)
        return x->time < y->time;
    return x->seq < y->seq;
}

static void ref_push(ref_t *r, cs_event_t e)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 64;
        r->ev = realloc(r->ev, r->cap * sizeof *r->ev);
        cr_assert_not_null(r->ev);
    }
    r->ev[r->n++] = e;
}

/* Index of the least event; r->n must be > 0. */
static size_t ref_min(const ref_t *r)
{
    size_t m = 0;
    for (size_t i = 1; i < r->n; i++)
        if (ref_less(&r->ev[i], &r->ev[m]))
            m = i;
    return m;
}

static cs_event_t ref_pop(ref_t *r)
{
    size_t m = ref_min(r);
    cs_event_t e = r->ev[m];
    r->ev[m] = r->ev[--r->n];
    return e;
}

/* ---- helpers ---- */

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64: deterministic and independent of the C library. */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

enum dist { DIST_TIES, DIST_NARROW, DIST_WIDE, DIST_EXTREME, DIST_HOLD, NDIST };
static const char *dist_name[] = {"ties", "narrow", "wide", "extreme", "hold"};

static cs_tick_t draw_time(enum dist d, uint64_t *s, cs_tick_t now)
{
    static const cs_tick_t extremes[] = {INT64_MIN, INT64_MIN + 1, -1000, -1, 0, 1, 1000,
                                         INT64_MAX - 1, INT64_MAX};
    uint64_t r = rng_next(s);
    switch (d) {
    case DIST_TIES: return (cs_tick_t)(r % 3);
    case DIST_NARROW: return (cs_tick_t)(r % 64) - 32;
    case DIST_WIDE: return (cs_tick_t)r;
    case DIST_EXTREME: return extremes[r % (sizeof extremes / sizeof extremes[0])];
    case DIST_HOLD: return now + (cs_tick_t)(r % 8); /* the simulator's pattern */
    default: break;
    }
    return 0;
}

static void assert_same(const cs_event_t *got, const cs_event_t *want, const char *what,
                        cs_queue_kind_t k, enum dist d, long step)
{
    cr_assert(got->time == want->time && got->seq == want->seq && got->kind == want->kind &&
                  got->a == want->a && got->b == want->b,
              "%s heap, %s times, step %ld: %s gave (time %lld, seq %llu, a %u), "
              "reference (time %lld, seq %llu, a %u)",
              cs_queue_kind_name(k), dist_name[d], step, what, (long long)got->time,
              (unsigned long long)got->seq, got->a, (long long)want->time,
              (unsigned long long)want->seq, want->a);
}

/* Runs `steps` random operations on one heap against the reference.  The
 * push probability swings between phases so the size rises, falls and often
 * reaches zero (popping an empty queue is part of the mix). */
static void run_random(cs_queue_kind_t k, enum dist d, uint64_t seed, long steps)
{
    cs_queue_t *q = cs_queue_new(k);
    ref_t r = {0};
    uint64_t s = seed;
    uint64_t next_seq = 0;
    int have_first = 0;
    size_t peak = 0;
    cs_tick_t now = 0;

    for (long step = 0; step < steps; step++) {
        long phase = (step / 2000) % 4;
        unsigned push_pct = phase == 0 ? 70 : phase == 1 ? 50 : phase == 2 ? 30 : 55;
        int op = (int)(rng_next(&s) % 100);
        if ((unsigned)op < push_pct) {
            cs_event_t e = {.time = draw_time(d, &s, now),
                            .kind = (uint32_t)(rng_next(&s) % 7),
                            .a = (uint32_t)step,
                            .b = rng_next(&s)};
            uint64_t seq = cs_queue_push(q, e.time, e.kind, e.a, e.b);
            if (!have_first) {
                next_seq = seq;
                have_first = 1;
            }
            cr_assert_eq(seq, next_seq, "%s: push returned seq %llu, expected %llu",
                         cs_queue_kind_name(k), (unsigned long long)seq,
                         (unsigned long long)next_seq);
            next_seq++;
            e.seq = seq;
            ref_push(&r, e);
            if (r.n > peak)
                peak = r.n;
        } else {
            cs_event_t got, peeked;
            memset(&got, 0xab, sizeof got);
            cs_event_t untouched = got;
            int pk = cs_queue_peek(q, &peeked);
            int rc = cs_queue_pop(q, &got);
            if (r.n == 0) {
                cr_assert_eq(pk, 0, "%s: peek on an empty queue returned %d",
                             cs_queue_kind_name(k), pk);
                cr_assert_eq(rc, 0, "%s: pop on an empty queue returned %d",
                             cs_queue_kind_name(k), rc);
                cr_assert(memcmp(&got, &untouched, sizeof got) == 0,
                          "%s: pop on an empty queue wrote *out", cs_queue_kind_name(k));
            } else {
                cr_assert_eq(pk, 1);
                cr_assert_eq(rc, 1);
                cs_event_t want = ref_pop(&r);
                assert_same(&got, &want, "pop", k, d, step);
                assert_same(&peeked, &want, "peek", k, d, step);
                now = got.time;
            }
        }
        cr_assert_eq(cs_queue_size(q), r.n, "%s, %s times, step %ld: size %zu, reference %zu",
                     cs_queue_kind_name(k), dist_name[d], step, cs_queue_size(q), r.n);
        cr_assert_eq(cs_queue_peak(q), peak, "%s: peak %zu, reference %zu",
                     cs_queue_kind_name(k), cs_queue_peak(q), peak);
    }
    /* Drain: the rest must come out in the reference's order too. */
    cs_event_t got;
    while (r.n > 0) {
        cr_assert_eq(cs_queue_pop(q, &got), 1);
        cs_event_t want = ref_pop(&r);
        assert_same(&got, &want, "drain pop", k, d, steps);
    }
    cr_assert_eq(cs_queue_pop(q, &got), 0);
    cr_assert_eq(cs_queue_size(q), 0);
    free(r.ev);
    cs_queue_free(q);
}

/* First index i where events[i-1], events[i] have equal times but are out of
 * insertion order (by their `a`, which the tests set to the push index), or
 * where time decreases; n when the sequence is correct. */
static size_t first_order_violation(const cs_event_t *ev, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (ev[i].time < ev[i - 1].time)
            return i;
        if (ev[i].time == ev[i - 1].time && ev[i].a < ev[i - 1].a)
            return i;
    }
    return n;
}

/* ---- tests ---- */

Test(queue, random_against_reference)
{
    for (size_t ki = 0; ki < NKINDS; ki++)
        for (int d = 0; d < NDIST; d++)
            for (uint64_t seed = 1; seed <= 3; seed++)
                run_random(kinds[ki], (enum dist)d, seed * 7919 + (uint64_t)d, 40000);
}

Test(queue, equal_times_pop_in_insertion_order)
{
    for (size_t ki = 0; ki < NKINDS; ki++) {
        cs_queue_t *q = cs_queue_new(kinds[ki]);
        enum { N = 1000 };
        for (uint32_t i = 0; i < N; i++)
            cs_queue_push(q, 42, 0, i, 0);
        for (uint32_t i = 0; i < N; i++) {
            cs_event_t e;
            cr_assert_eq(cs_queue_pop(q, &e), 1);
            cr_assert_eq(e.a, i, "%s heap: event %u of %d equal-time events popped at position %u",
                         cs_queue_kind_name(kinds[ki]), e.a, N, i);
        }
        cs_queue_free(q);
    }
}

/* A heap that ignored seq would scramble equal times as soon as events at
 * other times move them around; this mixes four times and pops interleaved
 * with pushes, and checks FIFO order within each time. */
Test(queue, ties_stay_fifo_among_other_times)
{
    for (size_t ki = 0; ki < NKINDS; ki++) {
        cs_queue_t *q = cs_queue_new(kinds[ki]);
        enum { N = 20000 };
        cs_event_t *out = malloc(N * sizeof *out);
        cr_assert_not_null(out);
        uint64_t s = 12345;
        size_t nout = 0;
        uint32_t pushed = 0;
        /* Times only grow with the pops (base), so the popped sequence is
         * sorted by time and FIFO within a time. */
        cs_tick_t base = 0;
        while (pushed < N) {
            cs_queue_push(q, base + (cs_tick_t)(rng_next(&s) % 4), 0, pushed, 0);
            pushed++;
            if (pushed > 500 && rng_next(&s) % 2) {
                cr_assert_eq(cs_queue_pop(q, &out[nout]), 1);
                base = out[nout].time;
                nout++;
            }
        }
        while (cs_queue_pop(q, &out[nout]))
            nout++;
        cr_assert_eq(nout, (size_t)N);
        size_t bad = first_order_violation(out, nout);
        cr_assert_eq(bad, nout, "%s heap: order broken at pop %zu: (time %lld, a %u) after "
                     "(time %lld, a %u)", cs_queue_kind_name(kinds[ki]), bad,
                     bad < nout ? (long long)out[bad].time : 0LL, bad < nout ? out[bad].a : 0,
                     bad < nout ? (long long)out[bad - 1].time : 0LL,
                     bad < nout ? out[bad - 1].a : 0);
        free(out);
        cs_queue_free(q);
    }
}

/* The checker used above must be able to fail. */
Test(queue, order_checker_detects_swapped_ties)
{
    cs_event_t ev[4] = {
        {.time = 1, .a = 0}, {.time = 2, .a = 2}, {.time = 2, .a = 1}, {.time = 3, .a = 3}};
    cr_assert_eq(first_order_violation(ev, 4), 2);
    cs_event_t dec[2] = {{.time = 5, .a = 0}, {.time = 4, .a = 1}};
    cr_assert_eq(first_order_violation(dec, 2), 1);
    cs_event_t ok[3] = {{.time = 1, .a = 5}, {.time = 1, .a = 6}, {.time = 2, .a = 0}};
    cr_assert_eq(first_order_violation(ok, 3), 3);
}

Test(queue, empty_queue)
{
    for (size_t ki = 0; ki < NKINDS; ki++) {
        cs_queue_t *q = cs_queue_new(kinds[ki]);
        cs_event_t e = {.time = 77, .seq = 88, .kind = 9, .a = 10, .b = 11};
        cr_assert_eq(cs_queue_pop(q, &e), 0);
        cr_assert_eq(cs_queue_peek(q, &e), 0);
        cr_assert(e.time == 77 && e.seq == 88 && e.kind == 9 && e.a == 10 && e.b == 11,
                  "an empty pop or peek must leave *out untouched");
        cr_assert_eq(cs_queue_size(q), 0);
        cr_assert_eq(cs_queue_peak(q), 0);
        cs_queue_free(q);
    }
    cs_queue_free(NULL);
}

Test(queue, payload_seq_and_peak)
{
    for (size_t ki = 0; ki < NKINDS; ki++) {
        cs_queue_t *q = cs_queue_new(kinds[ki]);
        uint64_t s0 = cs_queue_push(q, 10, 1, 2, 3);
        uint64_t s1 = cs_queue_push(q, 5, 4, 5, UINT64_MAX);
        uint64_t s2 = cs_queue_push(q, 10, UINT32_MAX, UINT32_MAX, 0);
        cr_assert(s1 == s0 + 1 && s2 == s1 + 1, "seq must grow by one per push");
        cr_assert_eq(cs_queue_size(q), 3);
        cr_assert_eq(cs_queue_peak(q), 3);

        cs_event_t e;
        cr_assert_eq(cs_queue_pop(q, &e), 1);
        cr_assert(e.time == 5 && e.seq == s1 && e.kind == 4 && e.a == 5 && e.b == UINT64_MAX);
        cr_assert_eq(cs_queue_pop(q, &e), 1);
        cr_assert(e.time == 10 && e.seq == s0 && e.kind == 1 && e.a == 2 && e.b == 3);
        cs_queue_push(q, 1, 0, 0, 0);
        cr_assert_eq(cs_queue_peak(q), 3, "peak is the maximum, not the current size");
        cr_assert_eq(cs_queue_pop(q, &e), 1);
        cr_assert_eq(e.time, 1);
        cr_assert_eq(cs_queue_pop(q, &e), 1);
        cr_assert(e.time == 10 && e.seq == s2 && e.kind == UINT32_MAX && e.a == UINT32_MAX);
        cr_assert_eq(cs_queue_size(q), 0);
        cr_assert_eq(cs_queue_peak(q), 3);
        cs_queue_free(q);
    }
}

/* Past many growth points, in reverse time order (every push sifts to the
 * root) and then popped sorted. */
Test(queue, growth_keeps_contents)
{
    for (size_t ki = 0; ki < NKINDS; ki++) {
        cs_queue_t *q = cs_queue_new(kinds[ki]);
        enum { N = 100000 };
        for (uint32_t i = 0; i < N; i++)
            cs_queue_push(q, (cs_tick_t)(N - i), 0, i, (uint64_t)i * 3);
        cr_assert_eq(cs_queue_peak(q), (size_t)N);
        for (uint32_t i = 0; i < N; i++) {
            cs_event_t e;
            cr_assert_eq(cs_queue_pop(q, &e), 1);
            cr_assert(e.time == (cs_tick_t)(i + 1) && e.a == N - 1 - i &&
                          e.b == (uint64_t)(N - 1 - i) * 3,
                      "%s heap: pop %u gave time %lld", cs_queue_kind_name(kinds[ki]), i,
                      (long long)e.time);
        }
        cs_queue_free(q);
    }
}

Test(queue, kind_names)
{
    cr_assert_str_eq(cs_queue_kind_name(CS_QUEUE_BINARY), "binary");
    cr_assert_str_eq(cs_queue_kind_name(CS_QUEUE_QUAD), "quad");
    cr_assert_str_eq(cs_queue_kind_name(CS_QUEUE_TIMEBUCKET), "timebucket");
    cr_assert(CS_QUEUE_DEFAULT == CS_QUEUE_BINARY || CS_QUEUE_DEFAULT == CS_QUEUE_QUAD ||
              CS_QUEUE_DEFAULT == CS_QUEUE_TIMEBUCKET);
    cr_assert_str_eq(cs_queue_kind_name((cs_queue_kind_t)99), "unknown");
}
