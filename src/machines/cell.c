/*
 * cell.c - the Cell blade as a machine (Ali, Midkiff, Pai, ICS'09;
 * reference/cell-blade.md; engine in cell_eib.c; docs/cell.md).
 *
 *   cell:chips=1|2[,issue=12.5ns,flight=62.5ns,hop=0,bif_lat=0,bif_gap=27.5ns,
 *        bif_bw=20.48GB/s,put_max=1,notify=ls|mailbox,add_cycles=3]
 *
 * One tick is one core cycle (3.2 GHz); the EIB runs at half that.  Ranks
 * are physical SPE ids (chip 0: 0-7, chip 1: 8-15); the PPE, the MIC and
 * the two IOIF ramps of each chip are network nodes after the SPEs.  Every
 * default says where it comes from (docs/cell.md has the table):
 *   issue, flight  fitted: a 32-bit notification round trip of 150 ns
 *                  (= 2 (issue + flight)) and the 8-SPE one-to-all barrier
 *                  of 225 ns (7 releases issued one after the other);
 *   bif_gap        fitted: the 16-SPE rdb barrier of 525 ns (a cost per
 *                  command that crosses the BIF); bif_lat 0 (see docs);
 *   bif_bw         reading: "80% less than the EIB": 20% of 204.8 GB/s,
 *                  20.48 GB/s per direction;
 *   signal_read    fitted: the one-to-all barrier over signal registers in OR
 *                  mode, 400 ns on 8 SPEs;
 *   bus, 128-byte packets, 16 KiB per DMA, 3 per ring, 6 hops at most:
 *                  outside knowledge (Kistler et al. 2006), to verify.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "machines/cell_eib.h"
#include "machines/machine.h"

#define CORE_HZ 3.2e9

static const char *const keys[] = {"chips", "issue", "flight", "hop", "bif_lat", "bif_gap", "bif_bw",
                                   "put_max", "notify", "signal_read", "add_cycles", NULL};
static const char *const notifies[] = {"ls", "mailbox", "signal", NULL};

typedef struct cell_machine {
    cs_cell_params_t p;
    const cs_topo_t *topo;
} cell_machine_t;

static int net_new(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks, cs_net_t **out,
                   cs_error_t *err)
{
    const cell_machine_t *c = ctx;
    return cs_cell_eib_new(&c->p, c->topo, sim, hooks, out, err);
}

static cs_tick_t ticks(double s) { return (cs_tick_t)llround(s * CORE_HZ); }

/* Figures name the ramps: SPE ids, then each chip's PPE, IOIF1, BIF, MIC. */
static const char *node_label(const cs_machine_t *m, int node, char *buf, size_t len)
{
    static const char *const other[4] = {"PPE", "IOIF1", "BIF", "MIC"};
    if (node < m->rank_nodes)
        snprintf(buf, len, "SPE%d", node);
    else
        snprintf(buf, len, "%s%s", other[(node - m->rank_nodes) % 4],
                 m->rank_nodes > 8 ? ((node - m->rank_nodes) / 4 ? ".1" : ".0") : "");
    return buf;
}

/* Figures: the EIB's rings, one per chip, the BIF between them. */
static void layout(const cs_machine_t *m, cs_machine_layout_t *out)
{
    (void)m;
    out->kind = CS_LAYOUT_RINGS;
}

/* The summary of a run: the traffic counts the paper reasons with (data
 * messages over the BIF, DMA transfers under way on one EIB) and the gets
 * the engine had to start early (nothing for `collsim topo`). */
static void report(const cs_machine_t *m, const cs_net_t *net, FILE *f)
{
    const cs_cell_crossing_t *x;
    int n, way[2] = {0, 0};
    int64_t bytes = 0, late;
    char text[32];
    if (!net)
        return;
    n = cs_cell_eib_crossings(net, &x);
    for (int i = 0; i < n; i++) {
        way[m->node_group[x[i].src]]++;
        bytes += x[i].bytes;
    }
    cs_units_format_bytes(bytes, text, sizeof text);
    if (m->ngroups > 1)
        fprintf(f, "bif       %d data messages crossed (%s): %d from chip 0, %d from chip 1\n", n,
                text, way[0], way[1]);
    fprintf(f, "eib       at most %d DMA gets of data under way on one chip, at most %d packets "
            "on its rings\n",
            cs_cell_eib_peak_data_transfers(net), cs_cell_eib_peak_transfers(net));
    late = cs_cell_eib_late_gets(net);
    if (late)
        fprintf(f, "late gets %lld: recvs posted after their sends' completion, data got into "
                "a buffer of the receiver's (docs/cell.md)\n", (long long)late);
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int64_t chips, put_max, add_cycles;
    double issue, flight, hop, bif_lat, bif_gap, signal_read, bif_bw = 20.48e9;
    int notify, rc;
    char text[320];
    if ((rc = cs_spec_get_int(spec, "chips", 2, 1, 2, &chips, err)) ||
        (rc = cs_spec_get_seconds(spec, "issue", 12.5e-9, &issue, err)) ||
        (rc = cs_spec_get_seconds(spec, "flight", 62.5e-9, &flight, err)) ||
        (rc = cs_spec_get_seconds(spec, "hop", 0, &hop, err)) ||
        (rc = cs_spec_get_seconds(spec, "bif_lat", 0, &bif_lat, err)) ||
        (rc = cs_spec_get_seconds(spec, "bif_gap", 27.5e-9, &bif_gap, err)) ||
        (rc = cs_spec_get_int(spec, "put_max", 1, 0, 1 << 20, &put_max, err)) ||
        (rc = cs_spec_get_choice(spec, "notify", notifies, 0, &notify, err)) ||
        (rc = cs_spec_get_seconds(spec, "signal_read", 21.875e-9, &signal_read, err)) ||
        (rc = cs_spec_get_int(spec, "add_cycles", 3, 0, 1 << 20, &add_cycles, err)))
        return rc;
    /* Bounded before ticks() converts them (llround beyond int64 is
     * unspecified, and the flight's subtraction overflowed): no latency of
     * the Cell comes near a second. */
    const struct {
        const char *key;
        double s;
    } times[] = {{"issue", issue},     {"flight", flight},   {"hop", hop},
                 {"bif_lat", bif_lat}, {"bif_gap", bif_gap}, {"signal_read", signal_read}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (times[i].s > 1.0)
            return cs_error_set(err, CS_ERR_RANGE, "key '%s': %g s is more than the 1 s a Cell "
                                "latency may be", times[i].key, times[i].s);
    const char *bw = cs_spec_get(spec, "bif_bw");
    if (bw) {
        char *end;
        bif_bw = strtod(bw, &end);
        if (!strcmp(end, "GB/s"))
            bif_bw *= 1e9;
        else if (!strcmp(end, "MB/s"))
            bif_bw *= 1e6;
        else if (*end || !(bif_bw > 0))
            return cs_error_set(err, CS_ERR_USAGE,
                                "key 'bif_bw': expected a rate like 5.12GB/s, got \"%s\"", bw);
    }
    /* ticks per byte below is core Hz / bif_bw as a fraction of whole kB/s:
     * from 1 MB/s (the fraction's denominator at least 1000) to 1 PB/s
     * (bytes x numerator stays far inside 128 bits); outside, a rate was
     * silently read as 1 MB/s (llround of 0, or of a value beyond int64) */
    if (!(bif_bw >= 1e6 && bif_bw <= 1e15))
        return cs_error_set(err, CS_ERR_RANGE,
                            "key 'bif_bw': %g B/s is outside the range of 1 MB/s to 1 PB/s",
                            bif_bw);
    if (flight * CORE_HZ < 2)
        return cs_error_set(err, CS_ERR_RANGE, "key 'flight': must be at least one bus cycle");
    int n = (int)(12 * chips);
    if ((rc = cs_spec_check_nodes(spec, n, err)))
        return rc;
    cs_topo_t *t = cs_topo_new_custom(n, "eib");
    for (int ch = 0; ch < chips; ch++)
        for (int s = 0; s < 12; s++)
            cs_topo_add_link(t, cs_cell_ramp_node((int)chips, ch, s),
                             cs_cell_ramp_node((int)chips, ch, (s + 1) % 12));
    if (chips == 2)
        cs_topo_add_link(t, cs_cell_ramp_node(2, 0, 6), cs_cell_ramp_node(2, 1, 6)); /* the BIF */
    m->topo = t;

    cell_machine_t *c = cs_calloc(1, sizeof *c);
    c->topo = t;
    c->p.chips = (int)chips;
    c->p.issue = ticks(issue);
    c->p.bus = 2; /* the EIB runs at half the core clock */
    c->p.cmd = ticks(flight) - c->p.bus; /* a put's flight = command phase + its one beat */
    c->p.hop = ticks(hop);
    c->p.bif_lat = ticks(bif_lat);
    c->p.bif_gap = ticks(bif_gap);
    /* ticks per byte = core Hz / bytes per second, kept as a ratio */
    c->p.bif_num = (int64_t)llround(CORE_HZ / 1e3);
    c->p.bif_den = (int64_t)llround(bif_bw / 1e3);
    c->p.put_max = notify == 1 && put_max > 4 ? 4 : (int)put_max; /* a mailbox entry: 32 bits */
    c->p.notify = (cs_cell_notify_t)notify;
    c->p.mailbox_depth = 4;
    c->p.signal_read = ticks(signal_read);
    m->impl = c;
    m->tick_seconds = 1.0 / CORE_HZ;
    /* SPU SIMD add of 16 bytes: two loads and a store on the one load/store
     * pipeline, so add_cycles = 3 core cycles per 16 bytes */
    m->reduce_num = add_cycles;
    m->reduce_den = 16;
    m->net.unit_bytes = 16384; /* one DMA command */
    m->net.own_work_unit = 128; /* the EIB's events are per 128-byte packet: work estimate */
    m->rank_nodes = (int)(8 * chips);
    m->node_group = cs_malloc((size_t)(8 * chips) * sizeof *m->node_group);
    for (int i = 0; i < 8 * chips; i++)
        m->node_group[i] = i / 8;
    m->ngroups = (int)chips;
    /* ring hint: each chip's SPEs in EIB order from the BIF side, the two
     * chips joined across the BIF (SPE7 -> SPE15 ... SPE14 -> SPE6) */
    static const int order[8] = {6, 4, 2, 0, 1, 3, 5, 7};
    m->ring_order = cs_malloc((size_t)(8 * chips) * sizeof *m->ring_order);
    for (int k = 0; k < 8; k++)
        m->ring_order[k] = order[k];
    if (chips == 2)
        for (int k = 0; k < 8; k++)
            m->ring_order[8 + k] = 8 + order[7 - k];
    snprintf(text, sizeof text,
             "cell:chips=%lld,issue=%gns,flight=%gns,hop=%gns,bif_lat=%gns,bif_gap=%gns,"
             "bif_bw=%gGB/s,put_max=%d,notify=%s,signal_read=%gns,add_cycles=%lld",
             (long long)chips, issue * 1e9, flight * 1e9, hop * 1e9, bif_lat * 1e9, bif_gap * 1e9,
             bif_bw / 1e9,
             c->p.put_max, notifies[notify], signal_read * 1e9, (long long)add_cycles);
    m->spec = cs_strdup(text);
    return CS_OK;
}

const cs_machine_type_t cs_machine_cell = {
    .name = "cell",
    .summary = "Cell blade: the EIB's four rings per chip, two chips over the BIF, SPE ranks, "
               "the ADDR / DMA get / ACK protocol",
    .usage = "cell:chips=1|2[,issue=12.5ns][,flight=62.5ns][,hop=0][,bif_lat=0]"
             "[,bif_gap=27.5ns][,bif_bw=20.48GB/s][,put_max=1][,notify=ls|mailbox|signal][,signal_read=21.875ns][,add_cycles=3]",
    .keys = keys,
    .example = "cell:chips=2",
    .create = create,
    .destroy = free,
    .net_new = net_new,
    .report = report,
    .node_label = node_label,
    .layout = layout,
    .rank_noun = {"SPE", "SPEs"},
    .other_noun = {"other ramp", "other ramps"},
    .group_noun = {"chip", "chips"},
};
