/*
 * groq_sched.c - the Groq machine's engine: every vector of every message
 * gets a conflict-free slot on every link of its source route when the
 * message is compiled (model in groq_sched.h, docs/groq.md).
 *
 * Calendars.  A link direction's reservations are a sorted array of disjoint
 * half-open intervals [a, b) of ticks; touching intervals are merged, and
 * intervals that ended before the current time are dropped (no later
 * request can reach back before now).  Earliest fit of one vector ready at
 * r: the first gap at or after r that is at least `slot` long.
 *
 * Runs.  A message on one path is placed run by run: a run is n vectors
 * ready at r, r + slot, ...; on each link the run goes into the gaps in
 * order, which splits it into output runs (one when the link is free), and
 * the output runs plus the hop latency are the next link's input.  This is
 * exactly per-vector earliest fit in order (a vector placed in a gap is
 * never overtaken: any earlier gap that fits was taken by the vector before
 * it), at a cost per run, not per vector.  Messages with several candidate
 * paths, or with vectors from an explicit schedule, are placed vector by
 * vector.
 *
 * Deliveries follow from the reservations: a message completes when its
 * last vector has arrived; a watched message (streaming) reports progress
 * as each vector arrives, in vector order (a vector that comes early on a
 * shorter path counts when the ones before it are in).
 */
#include "machines/groq_sched.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/outfile.h"

#define NONE (-1)

typedef struct ival {
    int64_t a, b;
} ival_t;

typedef struct cal {
    ival_t *iv;
    int32_t lo, n, cap;     /* live intervals iv[lo .. n) */
    int64_t *ends;          /* ends of message windows still ahead (peak k),
                               sorted: live ends[elo .. nends) */
    int32_t elo, nends, cap_ends;
    int64_t last_msg, last_end;
} cal_t;

typedef struct run {
    int64_t t, n; /* n vectors at t, t + slot, ... */
} run_t;

typedef struct arr {
    int64_t t0, n, step; /* n vectors arriving at t0, t0 + step, ... */
} arr_t;

/* The candidate paths of a message placed vector by vector (several paths
 * or an explicit schedule): one block, freed once the message is compiled. */
typedef struct gpaths {
    int64_t *fit;            /* per path and hop: the last earliest fit found there, a
                                lower bound for the next vector's (calendars only fill) */
    int64_t *lb;             /* per path: max over hops j of fit + (hops - j) t_hop, a
                                lower bound for the next vector's arrival */
    int32_t *chan, *off;     /* path j is chan[off[j] .. off[j + 1]) */
} gpaths_t;

/* A watched message's arrivals in vector order, runs v[pos ..) still to
 * report (`used` vectors of v[pos] reported already). */
typedef struct garr {
    int64_t n, cap, pos, used;
    arr_t v[];
} garr_t;

/* One posted message.  The full machine's all-reduces post millions, all
 * kept until the end (their handles stay valid), so what only some
 * messages need lives behind a pointer: the paths, and the arrivals of a
 * watched message. */
typedef struct gmsg {
    int64_t bytes, gate;
    int64_t nvec, compiled, delivered;
    int64_t last;            /* latest arrival so far */
    uint64_t user;
    int64_t fixed;           /* first entry of this message in g->fixed, or NONE */
    gpaths_t *paths;         /* NULL with one path and no explicit schedule */
    garr_t *arr;             /* watched: arrivals (NULL until the first) */
    int32_t src, dst;
    int32_t npaths;          /* 0 until first compiled */
    uint8_t watch, local, done, armed;
} gmsg_t;
_Static_assert(sizeof(gmsg_t) <= 96, "gmsg_t grew: the full machine posts millions");

typedef struct runbuf {
    run_t *r;
    int64_t n, cap;
} runbuf_t;

typedef struct sched {
    const cs_groq_t *g;
    cs_sim_t *sim;
    cs_net_t *net;   /* the wrapper (its recorder takes the time buckets) */
    cs_net_hooks_t hooks;
    int nchans;
    cal_t *cal;
    cs_chan_stats_t *stats;
    gmsg_t *m;
    int64_t nm, cap_m;
    int64_t active;
    runbuf_t rin, rout;
    FILE *dump; /* dump_file's stream, NULL: no dump */
    /* the dump= file, whole or absent (core/outfile.h): renamed into place
     * by gs_free only when gs_error found the run and every write fine
     * (gs_error gets a const sched_t: the state lives behind a pointer) */
    struct dump_file {
        cs_outfile_t *o;
        int ok;
    } *dump_file;
    cs_groq_stats_t st;
    cs_error_t err;
    uint32_t h_arrive, h_done, h_local;
} sched_t;

static int64_t now_of(const sched_t *s) { return cs_sim_now(s->sim); }

/* ---- calendars ------------------------------------------------------------- */

static void cal_prune(cal_t *c, int64_t now)
{
    while (c->lo < c->n && c->iv[c->lo].b <= now)
        c->lo++;
    if (c->lo >= 64 && 2 * c->lo >= c->n) {
        memmove(c->iv, c->iv + c->lo, (size_t)(c->n - c->lo) * sizeof *c->iv);
        c->n -= c->lo;
        c->lo = 0;
    }
}

/* First live index whose interval ends after t (n if none). */
static int32_t cal_find(const cal_t *c, int64_t t)
{
    int32_t lo = c->lo, hi = c->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (c->iv[mid].b > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Earliest start >= r of a free interval of length len. */
static int64_t cal_fit(const cal_t *c, int64_t r, int64_t len)
{
    int32_t i = cal_find(c, r);
    int64_t cur = r;
    while (i < c->n && c->iv[i].a < cur + len) {
        if (c->iv[i].b > cur)
            cur = c->iv[i].b;
        i++;
    }
    return cur;
}

/* Reserves [a, b), which must be free, at index p (the first interval
 * ending after a); returns the index of the interval that holds it now. */
static int32_t cal_insert_at(sched_t *s, cal_t *c, int32_t p, int64_t a, int64_t b)
{
    int left = p > c->lo && c->iv[p - 1].b == a;
    int right = p < c->n && c->iv[p].a == b;
    /* the invariant of software-scheduled networking: never two vectors on
     * one link direction at once */
    CS_ASSERT(p == c->n || c->iv[p].a >= b);
    CS_ASSERT(p == c->lo || c->iv[p - 1].b <= a);
    if (left && right) {
        c->iv[p - 1].b = c->iv[p].b;
        memmove(c->iv + p, c->iv + p + 1, (size_t)(c->n - p - 1) * sizeof *c->iv);
        c->n--;
        return p - 1;
    }
    if (left) {
        c->iv[p - 1].b = b;
        return p - 1;
    }
    if (right) {
        c->iv[p].a = a;
        return p;
    }
    c->iv = cs_grow(c->iv, c->n, &c->cap, 4, sizeof *c->iv);
    memmove(c->iv + p + 1, c->iv + p, (size_t)(c->n - p) * sizeof *c->iv);
    c->iv[p] = (ival_t){a, b};
    c->n++;
    if (c->n - c->lo > s->st.max_intervals)
        s->st.max_intervals = c->n - c->lo;
    return p;
}

static void cal_insert(sched_t *s, cal_t *c, int64_t a, int64_t b)
{
    cal_insert_at(s, c, cal_find(c, a), a, b);
}

static void runbuf_push(runbuf_t *rb, int64_t t, int64_t n, int64_t slot)
{
    if (rb->n > 0 && rb->r[rb->n - 1].t + rb->r[rb->n - 1].n * slot == t) {
        rb->r[rb->n - 1].n += n;
        return;
    }
    if (rb->n == rb->cap) {
        rb->cap = rb->cap ? 2 * rb->cap : 16;
        rb->r = cs_realloc(rb->r, (size_t)rb->cap * sizeof *rb->r);
    }
    rb->r[rb->n++] = (run_t){t, n};
}

/* Places the runs of `in` on calendar c, in order, each vector at the
 * earliest free slot at or after its ready time and after the previous
 * vector; the placements (start runs) go to `out`. */
static void cal_place_runs(sched_t *s, cal_t *c, const runbuf_t *in, runbuf_t *out)
{
    int64_t S = s->g->slot, prev_end = INT64_MIN;
    int32_t i = in->n ? cal_find(c, in->r[0].t) : c->n;
    out->n = 0;
    for (int64_t k = 0; k < in->n; k++) {
        int64_t r = in->r[k].t, n = in->r[k].n, j = 0;
        while (j < n) {
            int64_t cur = r + j * S;
            if (cur < prev_end)
                cur = prev_end;
            while (i < c->n && c->iv[i].b <= cur)
                i++;
            while (i < c->n && c->iv[i].a < cur + S) {
                if (c->iv[i].b > cur)
                    cur = c->iv[i].b;
                i++;
            }
            int64_t fit = n - j;
            if (i < c->n && (c->iv[i].a - cur) / S < fit)
                fit = (c->iv[i].a - cur) / S;
            CS_ASSERT(fit >= 1);
            runbuf_push(out, cur, fit, S);
            i = cal_insert_at(s, c, i, cur, cur + fit * S);
            prev_end = cur + fit * S;
            j += fit;
        }
    }
}

/* Sum of the start times of a run (for wait statistics). */
static double run_sum(int64_t t, int64_t n, int64_t slot)
{
    return (double)n * (double)t + (double)slot * (double)n * (double)(n - 1) / 2.0;
}

/* ---- statistics ----------------------------------------------------------------- */

/* First index in ends[elo .. nends) whose end is after t (nends if none). */
static int32_t ends_after(const cal_t *c, int64_t t)
{
    int32_t lo = c->elo, hi = c->nends;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (c->ends[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Inserts end e into the sorted ends, after any equal ones. */
static void ends_insert(cal_t *c, int64_t e)
{
    int32_t p = ends_after(c, e);
    c->ends = cs_grow(c->ends, c->nends, &c->cap_ends, 4, sizeof *c->ends);
    memmove(c->ends + p + 1, c->ends + p, (size_t)(c->nends - p) * sizeof *c->ends);
    c->ends[p] = e;
    c->nends++;
}

/* Message `msg` uses channel ch from `first` to `end`: peak k is the number
 * of messages whose windows on the channel overlap.  The ends are kept
 * sorted, so that the windows still open past `first` are counted by a
 * binary search and the ones past `now` dropped from the front: a link with
 * a backlog of b windows costs log b per placement, not b (the full
 * machine's gateway all-reduce queues hundreds on its global links). */
static void note_window(sched_t *s, int32_t ch, int64_t msg, int64_t first, int64_t end)
{
    cal_t *c = &s->cal[ch];
    int64_t now = now_of(s);
    int32_t k;
    if (c->last_msg == msg && c->nends > c->elo) {
        /* the message's window grows if its last end is still there (a
         * prune drops every copy of a value, so any copy is the one) */
        int32_t p = ends_after(c, c->last_end) - 1;
        if (p >= c->elo && c->ends[p] == c->last_end) {
            if (end > c->last_end) {
                memmove(c->ends + p, c->ends + p + 1, (size_t)(c->nends - p - 1) * sizeof *c->ends);
                c->nends--;
                ends_insert(c, end);
                c->last_end = end;
            }
            return;
        }
    }
    /* windows that ended by now are gone for good (time only moves on) */
    while (c->elo < c->nends && c->ends[c->elo] <= now)
        c->elo++;
    if (c->elo >= 64 && 2 * c->elo >= c->nends) {
        memmove(c->ends, c->ends + c->elo, (size_t)(c->nends - c->elo) * sizeof *c->ends);
        c->nends -= c->elo;
        c->elo = 0;
    }
    k = 1 + (c->nends - ends_after(c, first));
    ends_insert(c, end);
    c->last_msg = msg;
    c->last_end = end;
    if (k > s->stats[ch].peak_k)
        s->stats[ch].peak_k = k;
    cs_chanrec_peak(cs_net_recorder(s->net), ch, first, k);
}

/* `vectors` placed back to back from `start` carry `payload` bytes. */
static void note_use(sched_t *s, int32_t ch, int64_t start, int64_t vectors, int64_t payload)
{
    cs_chan_stats_t *st = &s->stats[ch];
    cs_chanrec_busy(cs_net_recorder(s->net), ch, start, vectors * s->g->slot,
                    vectors * s->g->slot, payload, vectors);
    st->bytes += payload;
    st->units += vectors;
    st->busy += vectors * s->g->slot;
    s->st.vector_hops += vectors;
}

/* Payload bytes of vectors [v0, v1) of m. */
static int64_t payload(const sched_t *s, const gmsg_t *m, int64_t v0, int64_t v1)
{
    int64_t vb = s->g->vec_bytes;
    int64_t hi = v1 * vb < m->bytes ? v1 * vb : m->bytes, lo = v0 * vb;
    return hi > lo ? hi - lo : 0;
}

/* ---- arrivals and delivery ------------------------------------------------------ */

static void arr_push(gmsg_t *m, int64_t t0, int64_t n, int64_t step)
{
    /* extend the last run unless its vectors have all been reported (the
     * reports have moved past it) */
    garr_t *A = m->arr;
    if (A && A->n > A->pos) {
        arr_t *L = &A->v[A->n - 1];
        if (L->n == 1 && (n == 1 || step == t0 - L->t0)) {
            L->step = t0 - L->t0;
            L->n += n;
            return;
        }
        if ((step == L->step || n == 1) && t0 == L->t0 + L->n * L->step) {
            L->n += n;
            return;
        }
    }
    if (!A || A->n == A->cap) {
        int64_t cap = A ? 2 * A->cap : 4;
        A = cs_realloc(A, sizeof *A + (size_t)cap * sizeof A->v[0]);
        if (!m->arr)
            A->n = A->pos = A->used = 0;
        A->cap = cap;
        m->arr = A;
    }
    A->v[A->n++] = (arr_t){t0, n, n > 1 ? step : 0};
}

/* The next n vectors (in vector order) arrive at t, t + step, ...; a vector
 * counts as arrived once every vector before it has. */
static void arrive(gmsg_t *m, int64_t t, int64_t n, int64_t step)
{
    if (!m->watch) {
        int64_t end = t + (n - 1) * step;
        if (end > m->last)
            m->last = end;
        return;
    }
    if (t < m->last) {
        /* the first vectors wait for earlier ones still on their way */
        int64_t c = step > 0 ? (m->last - t) / step + 1 : n;
        if (c > n)
            c = n;
        arr_push(m, m->last, c, 0);
        t += c * step;
        n -= c;
    }
    if (n > 0) {
        arr_push(m, t, n, step);
        m->last = t + (n - 1) * step;
    }
}

static int64_t next_arrival(const gmsg_t *m)
{
    const garr_t *A = m->arr;
    if (A && A->pos < A->n)
        return A->v[A->pos].t0 + A->used * A->v[A->pos].step;
    return NONE;
}

static void arm(sched_t *s, int64_t id)
{
    gmsg_t *m = &s->m[id];
    int64_t t = next_arrival(m);
    if (m->armed || t < 0)
        return;
    m->armed = 1;
    cs_sim_at(s->sim, t > now_of(s) ? t : now_of(s), s->h_arrive, (uint32_t)id, 0);
}

static void release(gmsg_t *m)
{
    free(m->arr);
    free(m->paths);
    m->arr = NULL;
    m->paths = NULL;
}

static void complete(sched_t *s, int64_t id)
{
    gmsg_t *m = &s->m[id];
    uint64_t user = m->user;
    m->done = 1;
    s->active--;
    release(m);
    if (s->hooks.completed)
        s->hooks.completed(s->hooks.ctx, user, now_of(s));
}

static void on_arrive(void *ctx, const cs_event_t *ev)
{
    sched_t *s = ctx;
    int64_t id = (int64_t)ev->a, now = now_of(s);
    gmsg_t *m = &s->m[id];
    m->armed = 0;
    garr_t *R = m->arr;
    while (R && R->pos < R->n) {
        const arr_t *A = &R->v[R->pos];
        int64_t left = A->n - R->used, t = A->t0 + R->used * A->step, k;
        if (t > now)
            break;
        k = A->step == 0 ? left : (now - t) / A->step + 1;
        if (k > left)
            k = left;
        R->used += k;
        m->delivered += k;
        if (R->used == A->n) {
            R->pos++;
            R->used = 0;
        }
    }
    if (m->delivered == m->nvec) {
        complete(s, id);
        return;
    }
    int64_t got = m->delivered * s->g->vec_bytes;
    uint64_t user = m->user;
    if (s->hooks.progress)
        s->hooks.progress(s->hooks.ctx, user, got < m->bytes ? got : m->bytes, 0, now);
    arm(s, id); /* the hook may have grown s->m: arm looks the message up again */
}

static void on_done(void *ctx, const cs_event_t *ev)
{
    complete(ctx, (int64_t)ev->a);
}

static void on_local(void *ctx, const cs_event_t *ev)
{
    sched_t *s = ctx;
    int64_t id = (int64_t)ev->a;
    gmsg_t *m = &s->m[id];
    if (m->done)
        return;
    if (m->gate >= m->bytes)
        complete(s, id);
    else if (m->watch && s->hooks.progress)
        s->hooks.progress(s->hooks.ctx, m->user, m->gate, 0, now_of(s));
}

/* ---- compiling a message ------------------------------------------------------------ */

static void dump_runs(sched_t *s, int64_t id, int64_t v0, int32_t ch, const runbuf_t *rb)
{
    for (int64_t k = 0; k < rb->n; k++)
        for (int64_t j = 0; j < rb->r[k].n; j++)
            cs_groq_schedule_write(s->g, s->dump, id, v0++, ch, rb->r[k].t + j * s->g->slot);
}

/* The candidate paths of a message, computed once. */
static void setup_paths(sched_t *s, gmsg_t *m)
{
    const cs_groq_t *g = s->g;
    int ncand = cs_groq_paths(g, m->src, m->dst);
    int k = g->paths == 0 ? ncand : g->paths < ncand ? g->paths : ncand;
    m->npaths = k;
    if (k == 1 && m->fixed == NONE)
        return;
    int32_t tmp[CS_GROQ_MAX_PATH];
    /* one block: the header, then the 64-bit arrays, then the 32-bit ones */
    size_t nfit = (size_t)k * CS_GROQ_MAX_PATH;
    gpaths_t *P = cs_calloc(1, sizeof *P + (nfit + (size_t)k) * sizeof(int64_t) +
                                   (nfit + (size_t)k + 1) * sizeof(int32_t));
    P->fit = (int64_t *)(P + 1);
    P->lb = P->fit + nfit;
    P->chan = (int32_t *)(P->lb + k);
    P->off = P->chan + nfit;
    P->off[0] = 0;
    for (int j = 0; j < k; j++) {
        int h = cs_groq_path(g, m->src, m->dst, j, tmp);
        memcpy(P->chan + P->off[j], tmp, (size_t)h * sizeof *tmp);
        P->off[j + 1] = P->off[j] + h;
    }
    m->paths = P;
}

/* Vectors [v0, v1) on the minimal route, run by run. */
static void place_runs(sched_t *s, int64_t id, int64_t v0, int64_t v1, int64_t ready)
{
    const cs_groq_t *g = s->g;
    gmsg_t *m = &s->m[id];
    int32_t ch[CS_GROQ_MAX_ROUTE];
    int h = cs_groq_route(g, m->src, m->dst, ch);
    int64_t S = g->slot, now = now_of(s);
    runbuf_t *in = &s->rin, *out = &s->rout;
    in->n = 0;
    runbuf_push(in, ready, v1 - v0, S);
    for (int j = 0; j < h; j++) {
        cal_t *c = &s->cal[ch[j]];
        double sin = 0, sout = 0;
        cal_prune(c, now);
        cal_place_runs(s, c, in, out);
        for (int64_t k = 0; k < in->n; k++)
            sin += run_sum(in->r[k].t, in->r[k].n, S);
        for (int64_t k = 0; k < out->n; k++)
            sout += run_sum(out->r[k].t, out->r[k].n, S);
        if (j == 0)
            s->st.source_wait += sout - sin;
        else
            s->st.sram_wait += sout - sin;
        for (int64_t k = 0, v = v0; k < out->n; v += out->r[k].n, k++)
            note_use(s, ch[j], out->r[k].t, out->r[k].n, payload(s, m, v, v + out->r[k].n));
        note_window(s, ch[j], id, out->r[0].t, out->r[out->n - 1].t + out->r[out->n - 1].n * S);
        if (s->dump)
            dump_runs(s, id, v0, ch[j], out);
        /* the next link's input: the placements plus the hop latency */
        runbuf_t *tmp = in;
        in = out;
        out = tmp;
        for (int64_t k = 0; k < in->n; k++)
            in->r[k].t += g->hop;
    }
    for (int64_t k = 0; k < in->n; k++)
        arrive(m, in->r[k].t, in->r[k].n, S);
}

/* Vector v placed by the explicit schedule: entries f[0..n).  Returns its
 * arrival, or -1 after a model error. */
static int64_t place_fixed(sched_t *s, int64_t id, int64_t v, const cs_groq_slot_t *f, int64_t n,
                           int64_t ready)
{
    const cs_groq_t *g = s->g;
    const gmsg_t *m = &s->m[id];
    const cs_topo_t *t = g->topo;
    if (cs_topo_channel_src(t, f[0].chan) != m->src ||
        cs_topo_channel_dst(t, f[n - 1].chan) != m->dst) {
        cs_error_set(&s->err, CS_ERR_RUNTIME,
                     "schedule %s:%d: vector %lld.%lld goes from TSP %d to TSP %d, but message "
                     "%lld runs from TSP %d to TSP %d",
                     g->schedule_path, f[0].line, (long long)id, (long long)v,
                     cs_topo_channel_src(t, f[0].chan), cs_topo_channel_dst(t, f[n - 1].chan),
                     (long long)id, m->src, m->dst);
        cs_sim_stop(s->sim);
        return -1;
    }
    if (f[0].start < ready) {
        cs_error_set(&s->err, CS_ERR_RUNTIME,
                     "schedule %s:%d: vector %lld.%lld is placed at %lld ps, but its message "
                     "can send it only from %lld ps on",
                     g->schedule_path, f[0].line, (long long)id, (long long)v,
                     (long long)f[0].start, (long long)ready);
        cs_sim_stop(s->sim);
        return -1;
    }
    for (int64_t j = 0; j < n; j++) {
        note_use(s, f[j].chan, f[j].start, 1, payload(s, m, v, v + 1));
        note_window(s, f[j].chan, id, f[j].start, f[j].start + g->slot);
        if (j > 0)
            s->st.sram_wait += (double)(f[j].start - f[j - 1].start - g->hop);
        if (s->dump)
            cs_groq_schedule_write(g, s->dump, id, v, f[j].chan, f[j].start);
    }
    s->st.fixed++;
    return f[n - 1].start + g->hop;
}

/* Vectors [v0, v1) one by one: explicit placements where the schedule has
 * them, else the candidate path where the vector arrives first (or path
 * v mod k with even spreading). */
static void place_vectors(sched_t *s, int64_t id, int64_t v0, int64_t v1, int64_t ready)
{
    const cs_groq_t *g = s->g;
    int64_t S = g->slot, now = now_of(s), start[CS_GROQ_MAX_PATH], best_start[CS_GROQ_MAX_PATH];
    gmsg_t *m = &s->m[id];
    gpaths_t *P = m->paths;
    int64_t fi = m->fixed;
    uint8_t *tried = cs_malloc((size_t)m->npaths);
    for (int64_t v = v0; v < v1; v++) {
        int64_t arrival = INT64_MAX;
        while (fi != NONE && fi < g->nfixed && g->fixed[fi].msg == id && g->fixed[fi].vec < v)
            fi++;
        if (fi != NONE && fi < g->nfixed && g->fixed[fi].msg == id && g->fixed[fi].vec == v) {
            int64_t n = 0;
            while (fi + n < g->nfixed && g->fixed[fi + n].msg == id && g->fixed[fi + n].vec == v)
                n++;
            arrival = place_fixed(s, id, v, g->fixed + fi, n, ready);
            if (arrival < 0) {
                free(tried);
                return;
            }
        } else {
            int best = -1, p0 = 0, p1 = m->npaths;
            if (g->even) {
                p0 = (int)(v % m->npaths);
                p1 = p0 + 1;
            }
            /* Every path has a lower bound of the vector's arrival there,
             * from the fits found before (an earliest fit never moves
             * back).  The paths are tried in increasing bound (ties: lower
             * index), so the best one tends to come first and the others are
             * cut without touching their calendars.  Ties go to the lowest
             * index, as in index order: the choice is the same, found sooner. */
            memset(tried + p0, 0, (size_t)(p1 - p0));
            for (;;) {
                int p = -1;
                int64_t plb = INT64_MAX;
                for (int q = p0; q < p1; q++) {
                    int64_t lb = P->lb[q];
                    int64_t lr = ready + (P->off[q + 1] - P->off[q]) * g->hop;
                    if (lr > lb)
                        lb = lr;
                    if (!tried[q] && lb < plb) {
                        plb = lb;
                        p = q;
                    }
                }
                if (p < 0 || plb > arrival || (plb == arrival && p > best))
                    break; /* neither this path nor any other left can win */
                tried[p] = 1;
                const int32_t *ch = P->chan + P->off[p];
                int h = P->off[p + 1] - P->off[p];
                int64_t t = ready, *fit = P->fit + (int64_t)p * CS_GROQ_MAX_PATH;
                int j = 0;
                for (; j < h; j++) {
                    cal_prune(&s->cal[ch[j]], now);
                    /* an earliest fit never moves back: start where the last
                     * one on this hop was (same result, no rescanning) */
                    start[j] = cal_fit(&s->cal[ch[j]], t > fit[j] ? t : fit[j], S);
                    fit[j] = start[j];
                    t = start[j] + g->hop;
                    int64_t lb = t + (h - 1 - j) * g->hop;
                    if (lb > P->lb[p])
                        P->lb[p] = lb;
                    if (lb > arrival || (lb == arrival && p > best))
                        break; /* already no better than the best */
                }
                if (j == h) {
                    arrival = t;
                    best = p;
                    memcpy(best_start, start, (size_t)h * sizeof *start);
                }
            }
            CS_ASSERT(best >= 0);
            const int32_t *ch = P->chan + P->off[best];
            int h = P->off[best + 1] - P->off[best];
            int64_t pay = payload(s, m, v, v + 1), want = ready + (v - v0) * S;
            for (int j = 0; j < h; j++) {
                cal_insert(s, &s->cal[ch[j]], best_start[j], best_start[j] + S);
                note_use(s, ch[j], best_start[j], 1, pay);
                note_window(s, ch[j], id, best_start[j], best_start[j] + S);
                if (j > 0)
                    s->st.sram_wait += (double)(best_start[j] - best_start[j - 1] - g->hop);
                if (s->dump)
                    cs_groq_schedule_write(g, s->dump, id, v, ch[j], best_start[j]);
            }
            if (best_start[0] > want)
                s->st.source_wait += (double)(best_start[0] - want);
            if (best > 0)
                s->st.nonminimal++;
        }
        arrive(m, arrival, 1, 0);
    }
    free(tried);
}

/* Places the vectors the gate allows that have no slots yet. */
static void compile(sched_t *s, int64_t id)
{
    const cs_groq_t *g = s->g;
    gmsg_t *m = &s->m[id];
    int64_t upto = m->gate >= m->bytes ? m->nvec : m->gate / g->vec_bytes;
    int64_t now = now_of(s), ready = now;
    if (upto <= m->compiled || s->err.code)
        return;
    if (g->align && ready < g->align_ticks)
        ready = g->align_ticks;
    if (m->npaths == 0)
        setup_paths(s, m);
    if (m->npaths == 1 && m->fixed == NONE)
        place_runs(s, id, m->compiled, upto, ready);
    else
        place_vectors(s, id, m->compiled, upto, ready);
    if (s->err.code)
        return;
    m->compiled = upto;
    if (m->watch)
        arm(s, id);
    else if (m->compiled == m->nvec)
        cs_sim_at(s->sim, m->last > now ? m->last : now, s->h_done, (uint32_t)id, 0);
    if (m->compiled == m->nvec && !m->watch) {
        free(m->paths);
        m->paths = NULL;
    }
}

/* ---- the interface ---------------------------------------------------------------- */

static uint32_t gs_post(void *impl, int src, int ndst, const int *dst, int64_t bytes,
                        int64_t gate_bytes, int watch, const uint64_t *users)
{
    sched_t *s = impl;
    const cs_groq_t *g = s->g;
    CS_ASSERT(ndst == 1);
    if (s->nm == s->cap_m) {
        s->cap_m = s->cap_m ? 2 * s->cap_m : 256;
        s->m = cs_realloc(s->m, (size_t)s->cap_m * sizeof *s->m);
    }
    int64_t id = s->nm++;
    CS_ASSERT(id <= UINT32_MAX);
    gmsg_t *m = &s->m[id];
    memset(m, 0, sizeof *m);
    m->src = src;
    m->dst = dst[0];
    m->bytes = bytes;
    m->gate = gate_bytes < bytes ? gate_bytes : bytes;
    m->nvec = bytes > 0 ? (bytes + g->vec_bytes - 1) / g->vec_bytes : 1;
    m->user = users[0];
    m->watch = (uint8_t)watch;
    m->local = src == dst[0];
    m->last = 0;
    m->fixed = NONE;
    s->active++;
    if (m->local) {
        /* a copy in the TSP's own SRAM: no link, no time */
        cs_sim_at(s->sim, now_of(s), s->h_local, (uint32_t)id, 0);
        return (uint32_t)id;
    }
    s->st.messages++;
    s->st.vectors += m->nvec;
    if (g->nfixed > 0) {
        int64_t lo = 0, hi = g->nfixed;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (g->fixed[mid].msg < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < g->nfixed && g->fixed[lo].msg == id)
            m->fixed = lo;
    }
    compile(s, id);
    return (uint32_t)id;
}

static void gs_gate(void *impl, uint32_t id, int64_t gate_bytes, int64_t rate)
{
    sched_t *s = impl;
    gmsg_t *m = &s->m[id];
    (void)rate; /* this engine reports no rates, so none comes back */
    if (gate_bytes > m->bytes)
        gate_bytes = m->bytes;
    if (gate_bytes <= m->gate || m->done)
        return;
    m->gate = gate_bytes;
    if (m->local)
        cs_sim_at(s->sim, now_of(s), s->h_local, id, 0);
    else
        compile(s, id);
}

static int64_t gs_active(const void *impl) { return ((const sched_t *)impl)->active; }

static int gs_explain(const void *impl, cs_error_t *err)
{
    const sched_t *s = impl;
    int64_t waiting = 0, ex = NONE;
    for (int64_t i = 0; i < s->nm; i++)
        if (!s->m[i].done) {
            waiting++;
            if (ex == NONE)
                ex = i;
        }
    if (ex == NONE)
        return cs_error_set(err, CS_ERR_DEADLOCK, "groq: no message is stuck");
    const gmsg_t *m = &s->m[ex];
    return cs_error_set(err, CS_ERR_DEADLOCK,
                        "groq: %lld message(s) never delivered, e.g. TSP %d -> %d: %lld of %lld "
                        "vectors scheduled, waiting for data (%lld of %lld bytes allowed)",
                        (long long)waiting, m->src, m->dst, (long long)m->compiled,
                        (long long)m->nvec, (long long)m->gate, (long long)m->bytes);
}

static int gs_error(const void *impl, cs_error_t *err)
{
    const sched_t *s = impl;
    if (!s->err.code && s->dump_file) {
        int rc = cs_outfile_check(s->dump_file->o, err);
        s->dump_file->ok = rc == CS_OK;
        return rc;
    }
    if (!s->err.code)
        return CS_OK;
    if (err)
        *err = s->err;
    return s->err.code;
}

static const cs_chan_stats_t *gs_chan_stats(const void *impl, int chan)
{
    return &((const sched_t *)impl)->stats[chan];
}

static void gs_free(void *impl)
{
    sched_t *s = impl;
    if (!s)
        return;
    for (int i = 0; i < s->nchans; i++) {
        free(s->cal[i].iv);
        free(s->cal[i].ends);
    }
    for (int64_t i = 0; i < s->nm; i++)
        release(&s->m[i]);
    if (s->dump_file) {
        /* a rename that fails now cannot be reported: gs_error checked the
         * writes and cs_groq_new that the folder is writable */
        if (s->dump_file->ok)
            cs_outfile_commit(s->dump_file->o, NULL);
        else
            cs_outfile_abort(s->dump_file->o);
        free(s->dump_file);
    }
    free(s->cal);
    free(s->stats);
    free(s->m);
    free(s->rin.r);
    free(s->rout.r);
    free(s);
}

static const cs_net_ops_t groq_ops = {
    .name = "groq scheduler",
    .has_mcast = 0,
    .post = gs_post,
    .gate = gs_gate,
    .active = gs_active,
    .explain_stuck = gs_explain,
    .error = gs_error,
    .chan_stats = gs_chan_stats,
    .free = gs_free,
};

int cs_groq_sched_new(const cs_groq_t *g, cs_sim_t *sim, const cs_net_hooks_t *hooks,
                      cs_net_t **out, cs_error_t *err)
{
    *out = NULL;
    sched_t *s = cs_calloc(1, sizeof *s);
    s->g = g;
    s->sim = sim;
    if (hooks)
        s->hooks = *hooks;
    s->nchans = cs_topo_channels(g->topo);
    s->cal = cs_calloc((size_t)s->nchans + 1, sizeof *s->cal);
    for (int i = 0; i < s->nchans; i++)
        s->cal[i].last_msg = NONE;
    s->stats = cs_calloc((size_t)s->nchans + 1, sizeof *s->stats);
    /* the explicit schedule's slots are taken before anything is compiled */
    for (int64_t i = 0; i < g->nfixed; i++)
        cal_insert(s, &s->cal[g->fixed[i].chan], g->fixed[i].start,
                   g->fixed[i].start + g->slot);
    if (g->dump_path) {
        cs_outfile_t *o;
        int rc = cs_outfile_open("key 'dump'", g->dump_path, &o, err);
        if (rc) {
            gs_free(s);
            return rc;
        }
        s->dump_file = cs_calloc(1, sizeof *s->dump_file);
        s->dump_file->o = o;
        s->dump = cs_outfile_stream(o);
    }
    if (s->dump)
        fprintf(s->dump, "# collsim groq schedule: MESSAGE.VECTOR FROM->TO SLOT (slot number "
                         "of %lld ps, or a time)\n",
                (long long)g->slot);
    s->h_arrive = cs_sim_register(sim, on_arrive, s);
    s->h_done = cs_sim_register(sim, on_done, s);
    s->h_local = cs_sim_register(sim, on_local, s);
    *out = s->net = cs_net_new_engine(&groq_ops, s, g->topo);
    return CS_OK;
}

void cs_groq_sched_stats(const cs_net_t *n, cs_groq_stats_t *out)
{
    const sched_t *s = cs_net_impl_of(n, &groq_ops);
    memset(out, 0, sizeof *out);
    if (s)
        *out = s->st;
}
