/*
 * cns1.c - the CNS-1 as a machine (Müller, "All-to-all Broadcast on the
 * CNS-1", ICSI TR-93-082; reference/cns1.md; docs/cns1.md).
 *
 *   cns1:rings=R[,ring=32,ov=5,vlr=32,cycle=8ns,iface=single|double|fast,
 *        links=1x|2x,bound=processor|link]
 *
 * A cylinder of R rings of `ring` nodes (wrap inside a ring, a mesh
 * without wrap across rings), links of 1 byte per cycle and direction, and
 * the network interface of the paper's §3 (engine in cns1_ni.c).  The
 * design alternatives of §5 (the note's §6):
 *   iface=double  two processor-to-node links: two send and two receive
 *                 buffers (the two-way ring's 2I);
 *   iface=fast    one processor link twice as fast: the buffers turn over in
 *                 ceil(m_length/2) + 1 cycles, the network links do not;
 *   links=2x      every link, the processor's included, twice as fast;
 *   bound=link    a node may use all its links at once (Δ = 4 buffers each
 *                 way) instead of one send and one receive.
 * Ring hint: the paper's snake (columns alternating direction, closed over
 * the wrap link), so that every ring edge is a distinct physical link.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machines/cns1_ni.h"
#include "machines/machine.h"

static const char *const keys[] = {"rings", "ring", "ov", "vlr", "cycle", "iface", "links",
                                   "bound", NULL};
static const char *const ifaces[] = {"single", "double", "fast", NULL};
static const char *const speeds[] = {"1x", "2x", NULL};
static const char *const bounds[] = {"processor", "link", NULL};

typedef struct cns1_machine {
    cs_cns1_params_t p;
    const cs_topo_t *topo;
} cns1_machine_t;

static int net_new(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks, cs_net_t **out,
                   cs_error_t *err)
{
    const cns1_machine_t *c = ctx;
    return cs_cns1_ni_new(&c->p, c->topo, sim, hooks, out, err);
}

/* --predict: the paper's all-to-all broadcast times (reference/cns1.md
 * §4-§6).  n_p = ceil(bytes / 4) elements per processor, sent as
 * x = ceil(n_p / vlr) messages of m_e = ceil(n_p / x) elements,
 * m_length = 4 m_e + header bytes:
 *   lower bound (§4)   T(p, n_p) = 4 ov + (m_length + 1)(p - 1) x, met by the
 *                      ring algorithm when x >= 2;
 *   short vectors (§5.3, x = 1)  (4 ov + m_length + 1)(p - 1);
 *   2I (§5.2, two processor links, the two-way ring, p even)
 *                      4 ov + (m_length + 1)(p / 2) x;
 *   2I' and 2I,2L (§5.2-§5.3, faster links)
 *                      4 ov + (ceil(m_length / 2) + 1)(p - 1) x.
 * Ranks on a ring of the machine (the cylinder's snake) throughout. */
static int predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                   cs_error_t *err)
{
    const cns1_machine_t *c = m->impl;
    const cs_cns1_params_t *q = &c->p;
    int64_t p = req->P, n_p = req->bytes > 4 ? (req->bytes + 3) / 4 : 1;
    int64_t x = (n_p + q->vlr - 1) / q->vlr, m_e = (n_p + x - 1) / x;
    int64_t ml = 4 * m_e + q->header, ov4 = 4 * (int64_t)q->ov;
    int ring = !strcmp(req->algo, "cns-ring"), two_way = !strcmp(req->algo, "cns-two-way");
    double bound = (double)(ov4 + (ml + 1) * (p - 1) * x);
    if (req->kind != CS_COLL_ALLGATHER)
        return cs_error_set(err, CS_ERR_RANGE,
                            "the paper models the all-to-all broadcast (allgather) only, not %s",
                            cs_coll_name(req->kind));
    out->unit = "cycles";
    out->show_seconds = 1;
    if (q->s_link == 2 || q->s_proc == 2) {
        /* the faster links' forms: the period of a message halves */
        if (x < 2)
            return cs_error_set(err, CS_ERR_RANGE,
                                "the paper's faster-link forms (§5.2-5.3) assume long vectors "
                                "(x >= 2 messages, more than %d bytes), not %lld bytes",
                                4 * q->vlr, (long long)req->bytes);
        cs_model_set(out, (double)(ov4 + ((ml + 1) / 2 + 1) * (p - 1) * x),
                     q->s_link == 2 ? "paper 5.3, 2I,2L: 4ov + (ceil(m_length/2) + 1)(p-1) x"
                                    : "paper 5.2, 2I': 4ov + (ceil(m_length/2) + 1)(p-1) x");
    } else if (q->nsend >= 2) {
        if (!two_way || p % 2 || x < 2)
            return cs_error_set(err, CS_ERR_RANGE,
                                "with more than one buffer each way the paper times the two-way "
                                "ring (cns-two-way, p even, more than %d bytes) only",
                                4 * q->vlr);
        cs_model_set(out, (double)(ov4 + (ml + 1) * (p / 2) * x),
                     "paper 5.2, 2I: 4ov + (m_length + 1)(p/2) x");
    } else if (ring && x == 1) {
        cs_model_set(out, (double)((ov4 + ml + 1) * (p - 1)),
                     "paper 4, short vectors: (4ov + m_length + 1)(p-1)");
        out->nforms = 2;
        out->form[1].ticks = bound;
        snprintf(out->form[1].name, sizeof out->form[1].name,
                 "paper 4, lower bound T(p, n_p)");
    } else {
        cs_model_set(out, bound,
                     ring ? "paper 4, ring = lower bound T(p, n_p) = 4ov + (m_length + 1)(p-1) x"
                          : "paper 4, lower bound T(p, n_p) = 4ov + (m_length + 1)(p-1) x");
    }
    if (p <= 1)
        out->form[0].ticks = out->form[1].ticks = 0;
    return CS_OK;
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int64_t rings, ring, ov, vlr;
    int iface, links, bound, rc;
    double cycle;
    char text[256];
    if ((rc = cs_spec_get_int(spec, "rings", 1, 1, 1 << 20, &rings, err)) ||
        (rc = cs_spec_get_int(spec, "ring", 32, 2, 1 << 20, &ring, err)) ||
        (rc = cs_spec_get_int(spec, "ov", 5, 0, 1000000, &ov, err)) ||
        (rc = cs_spec_get_int(spec, "vlr", 32, 1, 1 << 20, &vlr, err)) ||
        (rc = cs_spec_get_seconds(spec, "cycle", 8e-9, &cycle, err)) ||
        (rc = cs_spec_get_choice(spec, "iface", ifaces, 0, &iface, err)) ||
        (rc = cs_spec_get_choice(spec, "links", speeds, 0, &links, err)) ||
        (rc = cs_spec_get_choice(spec, "bound", bounds, 0, &bound, err)))
        return rc;
    if (!(cycle > 0))
        return cs_error_set(err, CS_ERR_RANGE, "key 'cycle': must be > 0");
    if (rings * ring > CS_TOPO_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "rings*ring = %lld exceeds %d nodes",
                            (long long)(rings * ring), CS_TOPO_MAX_NODES);
    if ((rc = cs_spec_check_nodes(spec, rings * ring, err)) ||
        (rc = cs_topo_new_cylinder((int)rings, (int)ring, &m->topo, err)))
        return rc;
    cns1_machine_t *c = cs_calloc(1, sizeof *c);
    c->topo = m->topo;
    c->p.ov = (int)ov;
    c->p.vlr = (int)vlr;
    c->p.header = 9;
    /* processor-bound: one send and one receive buffer (the paper's design);
     * two with two processor links; Δ = 4 when every link may be used */
    c->p.nsend = c->p.nrecv = bound ? 4 : iface == 1 ? 2 : 1;
    c->p.s_proc = iface == 2 || links == 1 ? 2 : 1;
    c->p.s_link = links == 1 ? 2 : 1;
    m->impl = c;
    m->tick_seconds = cycle;
    m->reduce_num = 0; /* the paper times transfers only */
    m->reduce_den = 1;
    m->net.unit_bytes = 4 * vlr; /* one NI message's payload: the natural segment */
    m->net.own_work_unit = 4 * vlr; /* the NI engine's events are per message: work estimate */
    m->grid_rows = (int)rings;
    m->grid_cols = (int)ring;
    m->ring_order = cs_malloc((size_t)(rings * ring) * sizeof *m->ring_order);
    cs_topo_ring_hint(m->topo, m->ring_order);
    snprintf(text, sizeof text,
             "cns1:rings=%lld,ring=%lld,ov=%lld,vlr=%lld,cycle=%gns,iface=%s,links=%s,bound=%s",
             (long long)rings, (long long)ring, (long long)ov, (long long)vlr, cycle * 1e9,
             ifaces[iface], speeds[links], bounds[bound]);
    m->spec = cs_strdup(text);
    return CS_OK;
}

const cs_machine_type_t cs_machine_cns1 = {
    .name = "cns1",
    .summary = "CNS-1: a cylinder of 32-node rings, 1 byte per cycle links, one send and one "
               "receive buffer per network interface, 2ov overheads",
    .usage = "cns1:rings=R[,ring=32][,ov=5][,vlr=32][,cycle=8ns][,iface=single|double|fast]"
             "[,links=1x|2x][,bound=processor|link]",
    .keys = keys,
    .example = "cns1:rings=2",
    .create = create,
    .destroy = free,
    .net_new = net_new,
    .layout = cs_machine_layout_topo,
    .predict = predict,
};
