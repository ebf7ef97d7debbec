/*
 * alphabeta.c - the machine of the message-passing ("alpha-beta") lecture
 * (../shared/reference/alpha-beta.md, rules 1-5):
 *
 *   1. the network is connected (any of the standard shapes);
 *   2. links are full duplex: opposite directions never compete;
 *   3. a node does at most one send and one receive at a time;
 *   4. an uncontended n-byte message costs alpha + beta*n, whatever its path;
 *   5. k messages sharing a channel in one direction each see alpha + beta*n*k
 *      (only the beta term grows).
 *
 * Mapping onto the engine: alpha is the send overhead paid after the ports
 * are taken; beta is the serialisation time per byte of every channel (the
 * packet engine's cut-through with zero wire and router latency makes the
 * cost independent of the path); `hop` is an optional latency per
 * intermediate router, giving alpha + (H-1)*hop + beta*n over H hops, which
 * is the lecture's pipelined 1-D quiz a + t(P-1) + t(n-1) with hop = beta = t
 * (the note's reading: the first hop's delay is the word's own transfer).
 * Congestion arises from the engine's round-robin channel sharing, never
 * from a formula.
 *
 * The clock is a parameter (tick, default 1 ps) so that nanosecond betas
 * are exact integers; beta may be a fraction of a tick (kept as a ratio).
 */
#include "machines/machine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const keys[] = {"topo", "p", "rows", "cols", "alpha", "beta", "hop",
                                   "packet", "buf", "tick", "reduce", NULL};
static const char *const topos[] = {"line", "ring", "mesh", "torus", "complete", "hypercube", NULL};

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int topo_i, rc;
    int64_t p, rows, cols;
    double beta;
    cs_machine_ab_t ab;
    char text[512];

    if ((rc = cs_spec_get_choice(spec, "topo", topos, 1, &topo_i, err)) ||
        (rc = cs_spec_get_int(spec, "p", 8, 1, CS_TOPO_MAX_NODES, &p, err)) ||
        (rc = cs_spec_get_int(spec, "rows", 0, 0, CS_TOPO_MAX_NODES, &rows, err)) ||
        (rc = cs_spec_get_int(spec, "cols", 0, 0, CS_TOPO_MAX_NODES, &cols, err)) ||
        (rc = cs_spec_get_seconds(spec, "beta", 1e-9, &beta, err)) ||
        (rc = cs_machine_ab_read(spec, &ab, err)))
        return rc;

    /* topos[] lists the shapes in cs_topo_kind_t order */
    switch (topo_i) {
    case CS_TOPO_MESH:
    case CS_TOPO_TORUS:
        if (!rows && !cols) {
            int64_t s = (int64_t)llround(sqrt((double)p));
            if (s * s != p)
                return cs_error_set(err, CS_ERR_RANGE,
                                    "topo=%s needs rows= and cols=, or p a perfect square (got p=%lld)",
                                    topos[topo_i], (long long)p);
            rows = cols = s;
        } else if (!rows || !cols) {
            return cs_error_set(err, CS_ERR_RANGE, "topo=%s needs both rows= and cols=",
                                topos[topo_i]);
        }
        if (rows * cols > CS_TOPO_MAX_NODES)
            return cs_error_set(err, CS_ERR_RANGE, "rows*cols = %lld exceeds %d nodes",
                                (long long)(rows * cols), CS_TOPO_MAX_NODES);
        p = rows * cols;
        m->grid_rows = (int)rows;
        m->grid_cols = (int)cols;
        break;
    default:
        break;
    }
    if ((rc = cs_spec_check_nodes(spec, p, err)) ||
        (rc = cs_topo_new_shape((cs_topo_kind_t)topo_i, (int)p, (int)rows, (int)cols, &m->topo,
                                err)))
        return rc;

    /* the topology's best ring as the machine's ring hint */
    m->ring_order = cs_malloc((size_t)cs_topo_nodes(m->topo) * sizeof *m->ring_order);
    if (!cs_topo_ring_hint(m->topo, m->ring_order)) {
        free(m->ring_order);
        m->ring_order = NULL;
    }

    if ((rc = cs_machine_ab_apply(&ab, m, err)) ||
        (rc = cs_spec_tick_ratio("beta", beta, ab.tick, &m->net.ser_num, &m->net.ser_den, err)))
        return rc;

    if (topo_i == 2 || topo_i == 3)
        snprintf(text, sizeof text, "alphabeta:topo=%s,rows=%lld,cols=%lld", topos[topo_i],
                 (long long)rows, (long long)cols);
    else
        snprintf(text, sizeof text, "alphabeta:topo=%s,p=%lld", topos[topo_i], (long long)p);
    {
        char a[32], b[32], h[32], t[32], r[32];
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 ",alpha=%s,beta=%s,hop=%s,packet=%lld,buf=%lld,tick=%s,reduce=%s",
                 cs_units_spec_seconds(ab.alpha, a, sizeof a),
                 cs_units_spec_seconds(beta, b, sizeof b), cs_units_spec_seconds(ab.hop, h, sizeof h),
                 (long long)ab.packet, (long long)ab.buf, cs_units_spec_seconds(ab.tick, t, sizeof t),
                 cs_units_spec_seconds(ab.reduce, r, sizeof r));
    }
    m->spec = cs_strdup(text);
    return CS_OK;
}

/* ---- --predict: the lecture's closed forms (alpha-beta.md §8) -----------
 *
 * a = alpha, b = beta (ticks, per byte), P ranks, n the vector (broadcast,
 * reduce, allreduce) or m = the block per rank (scatter, gather, allgather,
 * reduce-scatter; the lecture's n = m P), L = ceil(log2 P).  The forms hold
 * where every message is uncontended (a complete graph; a ring for the ring
 * algorithms) and P divides the vector where it is split; they leave out
 * the reduction's compute (reduce=0) and the per-hop latency (hop=0), as
 * the lecture does. */
typedef struct ab_form {
    cs_coll_kind_t kind;
    const char *algo;
    const char *name;   /* the formula, as printed */
    double (*ticks)(int P, int L, double n, double a, double b);
} ab_form_t;

static double ab_tree(int P, int L, double n, double a, double b)
{
    (void)P;
    return L * (a + b * n);
}
static double ab_flat(int P, int L, double n, double a, double b)
{
    (void)L;
    return (P - 1) * (a + b * n);
}
static double ab_dc_scatter(int P, int L, double m, double a, double b)
{
    return a * L + b * m * (P - 1);
}
static double ab_ring_allreduce(int P, int L, double n, double a, double b)
{
    (void)L;
    return 2.0 * (P - 1) * (a + b * n / P);
}
static double ab_scatter_allgather(int P, int L, double n, double a, double b)
{
    return a * (L + P - 1) + 2.0 * b * n * (P - 1) / P;
}
static double ab_reduce_bcast(int P, int L, double n, double a, double b)
{
    return 2.0 * ab_tree(P, L, n, a, b);
}
static double ab_gather_bcast(int P, int L, double m, double a, double b)
{
    return ab_dc_scatter(P, L, m, a, b) + ab_tree(P, L, m * P, a, b);
}
/* barriers move 1-byte tokens: the tree's gather and release, the flat
 * one's P-1 tokens in and P-1 out */
static double ab_barrier_tree(int P, int L, double n, double a, double b)
{
    (void)n;
    return 2.0 * ab_tree(P, L, 1, a, b);
}
static double ab_barrier_flat(int P, int L, double n, double a, double b)
{
    (void)n;
    return 2.0 * ab_flat(P, L, 1, a, b);
}

static const ab_form_t ab_forms[] = {
    {CS_COLL_BROADCAST, "binomial", "lecture 8.1: ceil(log2 P)(alpha + beta n)", ab_tree},
    {CS_COLL_REDUCE, "binomial", "lecture 8.1: ceil(log2 P)(alpha + beta n)", ab_tree},
    {CS_COLL_BROADCAST, "flat", "lecture rule 3: (P-1)(alpha + beta n)", ab_flat},
    {CS_COLL_REDUCE, "flat", "lecture rule 3: (P-1)(alpha + beta n)", ab_flat},
    {CS_COLL_SCATTER, "flat", "lecture 8.4: (P-1)(alpha + beta n/P)", ab_flat},
    {CS_COLL_GATHER, "flat", "lecture 8.4: (P-1)(alpha + beta n/P)", ab_flat},
    {CS_COLL_SCATTER, "binomial", "lecture 8.5: alpha ceil(log2 P) + beta n (P-1)/P", ab_dc_scatter},
    {CS_COLL_GATHER, "binomial", "lecture 8.5: alpha ceil(log2 P) + beta n (P-1)/P", ab_dc_scatter},
    {CS_COLL_ALLGATHER, "ring", "lecture 8.7: (P-1)(alpha + beta n/P)", ab_flat},
    {CS_COLL_REDUCE_SCATTER, "ring", "lecture 8.7: (P-1)(alpha + beta n/P)", ab_flat},
    {CS_COLL_ALLREDUCE, "ring", "lecture 8.9: 2(P-1)(alpha + beta n/P)", ab_ring_allreduce},
    {CS_COLL_BROADCAST, "scatter-allgather",
     "lecture 8.8: alpha (ceil(log2 P) + P-1) + 2 beta n (P-1)/P", ab_scatter_allgather},
    {CS_COLL_ALLREDUCE, "reduce-bcast", "lecture 8.1, 8.6: 2 ceil(log2 P)(alpha + beta n)",
     ab_reduce_bcast},
    {CS_COLL_ALLGATHER, "gather-bcast",
     "lecture 8.3: alpha ceil(log2 P) + beta n (P-1)/P + ceil(log2 P)(alpha + beta n)",
     ab_gather_bcast},
    {CS_COLL_BARRIER, "tree", "lecture 8.1 tree: 2 ceil(log2 P)(alpha + beta)", ab_barrier_tree},
    {CS_COLL_BARRIER, "flat", "lecture 8.4 pattern: 2(P-1)(alpha + beta)", ab_barrier_flat},
};

static int predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                   cs_error_t *err)
{
    double a = (double)m->net.send_overhead;
    double b = (double)m->net.ser_num / (double)m->net.ser_den;
    for (size_t i = 0; i < sizeof ab_forms / sizeof *ab_forms; i++) {
        const ab_form_t *f = &ab_forms[i];
        if (f->kind != req->kind || strcmp(f->algo, req->algo))
            continue;
        cs_model_set(out, req->P > 1 ? f->ticks(req->P, cs_coll_ceil_log2(req->P),
                                               (double)req->bytes, a, b)
                                     : 0.0,
                     f->name);
        out->show_seconds = 1;
        return CS_OK;
    }
    return cs_error_set(err, CS_ERR_RANGE, "the lecture gives no closed form for %s/%s",
                        cs_coll_name(req->kind), req->algo);
}

const cs_machine_type_t cs_machine_alphabeta = {
    .name = "alphabeta",
    .summary = "the lecture's message-passing model: alpha + beta*n, one send and one receive "
               "at a time, k-way congestion",
    .usage = "alphabeta:topo=line|ring|mesh|torus|complete|hypercube,p=N[,rows=R,cols=C]"
             "[,alpha=1us][,beta=1ns][,hop=0][,packet=4KiB][,buf=8][,tick=1ps][,reduce=0]",
    .keys = keys,
    .example = "alphabeta:topo=torus,rows=8,cols=8",
    .create = create,
    .layout = cs_machine_layout_topo,
    .predict = predict,
};
