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

/* seconds -> whole ticks, or an error naming the key if not a whole number */
static int to_ticks(const char *key, double s, double tick, cs_tick_t *out, cs_error_t *err)
{
    double t = s / tick;
    double r = nearbyint(t);
    if (s < 0)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': must be >= 0", key);
    if (fabs(t - r) > 1e-6 * (r > 1 ? r : 1))
        return cs_error_set(err, CS_ERR_RANGE,
                            "key '%s': %g s is not a whole number of %g s ticks; choose a finer tick=",
                            key, s, tick);
    if (r > 9e18)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': too large", key);
    *out = (cs_tick_t)r;
    return CS_OK;
}

/* seconds per byte -> num/den ticks per byte, exactly (den a power of ten) */
static int to_ratio(const char *key, double s, double tick, int64_t *num, int64_t *den,
                    cs_error_t *err)
{
    double t = s / tick;
    if (s < 0)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': must be >= 0", key);
    for (int64_t d = 1; d <= 1000000; d *= 10) {
        double v = t * (double)d, r = nearbyint(v);
        if (fabs(v - r) <= 1e-6 * (r > 1 ? r : 1) && r < 9e15) {
            *num = (int64_t)r;
            *den = d;
            return CS_OK;
        }
    }
    return cs_error_set(err, CS_ERR_RANGE,
                        "key '%s': %g s per byte is not a multiple of a millionth of the %g s tick",
                        key, s, tick);
}

/* "1us", "0.25ns", "0s": the largest unit that keeps the number >= 1, so the
 * normalised spec reads like what users type. */
static const char *spec_time(double s, char *buf, size_t len)
{
    static const struct { const char *unit; double scale; } units[] = {
        {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}};
    size_t i = 0;
    while (i + 1 < sizeof units / sizeof *units && s > 0 && s < units[i].scale * (1 - 1e-9))
        i++;
    snprintf(buf, len, "%.12g%s", s / units[i].scale, units[i].unit);
    return buf;
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int topo_i, rc;
    int64_t p, rows, cols, buf, packet;
    double alpha, beta, hop, tick, reduce;
    char text[512];

    if ((rc = cs_spec_get_choice(spec, "topo", topos, 1, &topo_i, err)) ||
        (rc = cs_spec_get_int(spec, "p", 8, 1, CS_TOPO_MAX_NODES, &p, err)) ||
        (rc = cs_spec_get_int(spec, "rows", 0, 0, CS_TOPO_MAX_NODES, &rows, err)) ||
        (rc = cs_spec_get_int(spec, "cols", 0, 0, CS_TOPO_MAX_NODES, &cols, err)) ||
        (rc = cs_spec_get_seconds(spec, "alpha", 1e-6, &alpha, err)) ||
        (rc = cs_spec_get_seconds(spec, "beta", 1e-9, &beta, err)) ||
        (rc = cs_spec_get_seconds(spec, "hop", 0, &hop, err)) ||
        (rc = cs_spec_get_seconds(spec, "tick", 1e-12, &tick, err)) ||
        (rc = cs_spec_get_seconds(spec, "reduce", 0, &reduce, err)) ||
        (rc = cs_spec_get_bytes(spec, "packet", 4096, &packet, err)) ||
        (rc = cs_spec_get_int(spec, "buf", 8, 0, 1 << 20, &buf, err)))
        return rc;
    if (tick <= 0)
        return cs_error_set(err, CS_ERR_RANGE, "key 'tick': must be > 0");
    if (packet < 1)
        return cs_error_set(err, CS_ERR_RANGE, "key 'packet': must be at least 1 byte");

    switch (topo_i) {
    case 0: rc = cs_topo_new_line((int)p, &m->topo, err); break;
    case 1: rc = cs_topo_new_ring((int)p, &m->topo, err); break;
    case 2:
    case 3:
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
        rc = topo_i == 2 ? cs_topo_new_mesh((int)rows, (int)cols, &m->topo, err)
                         : cs_topo_new_torus((int)rows, (int)cols, &m->topo, err);
        m->grid_rows = (int)rows;
        m->grid_cols = (int)cols;
        break;
    case 4: rc = cs_topo_new_complete((int)p, &m->topo, err); break;
    default: rc = cs_topo_new_hypercube((int)p, &m->topo, err); break;
    }
    if (rc)
        return rc;

    /* the topology's best ring as the machine's ring hint */
    m->ring_order = cs_malloc((size_t)cs_topo_nodes(m->topo) * sizeof *m->ring_order);
    if (!cs_topo_ring_hint(m->topo, m->ring_order)) {
        free(m->ring_order);
        m->ring_order = NULL;
    }

    m->tick_seconds = tick;
    m->net.unit_bytes = packet;
    m->net.buf_units = (int)buf;
    m->net.send_ports = 1;
    m->net.recv_ports = 1;
    m->net.wire_lat = 0;
    if ((rc = to_ticks("alpha", alpha, tick, &m->net.send_overhead, err)) ||
        (rc = to_ticks("hop", hop, tick, &m->net.router_lat, err)) ||
        (rc = to_ratio("beta", beta, tick, &m->net.ser_num, &m->net.ser_den, err)) ||
        (rc = to_ratio("reduce", reduce, tick, &m->reduce_num, &m->reduce_den, err)))
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
                 spec_time(alpha, a, sizeof a), spec_time(beta, b, sizeof b),
                 spec_time(hop, h, sizeof h), (long long)packet, (long long)buf,
                 spec_time(tick, t, sizeof t), spec_time(reduce, r, sizeof r));
    }
    m->spec = cs_strdup(text);
    return CS_OK;
}

const cs_machine_type_t cs_machine_alphabeta = {
    .name = "alphabeta",
    .summary = "the lecture's message-passing model: alpha + beta*n, one send and one receive "
               "at a time, k-way congestion",
    .usage = "alphabeta:topo=line|ring|mesh|torus|complete|hypercube,p=N[,rows=R,cols=C]"
             "[,alpha=1us][,beta=1ns][,hop=0][,packet=4KiB][,buf=8][,tick=1ps][,reduce=0]",
    .keys = keys,
    .create = create,
};
