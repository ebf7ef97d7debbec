/*
 * cerebras.c - the Cerebras wafer-scale engine as a machine
 * (reference/cerebras-wse.md; engine in cerebras_fabric.c, the thesis's
 * analytic model for --predict in cerebras_model.c; docs/cerebras.md).
 *
 *   cerebras:rows=M,cols=N[,tr=2,colors=24,buf=2,clock=1.1GHz]
 *   cerebras:wafer          850 x 1000 PEs, the thesis's 850,000
 *
 * One tick is one cycle.  A rank is a PE (row-major).  Reductions cost no
 * extra time: the thesis's class-O ops add as part of the send or store
 * (reduce_num = 0).  Hints: the grid, and as ring the thesis's even/odd ring
 * (0, 2, 4, ..., 5, 3, 1; Fig. 6.2) on a single row or column, so that the
 * suite's generic ring allreduce is the thesis's ring allreduce (Lemma 7.2),
 * and a Hamiltonian cycle of the mesh otherwise.
 */
#include "machines/cerebras.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machines/cerebras_fabric.h"

static const char *const keys[] = {"rows", "cols", "tr", "colors", "buf", "clock", NULL};
static const char *const presets[] = {"wafer", "rows=850,cols=1000", NULL, NULL};

static int net_new(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks, cs_net_t **out,
                   cs_error_t *err)
{
    const cs_cerebras_t *c = ctx;
    cs_fabric_params_t fp = {c->rows, c->cols, c->tr, c->buf, c->colors};
    return cs_fabric_new(&fp, c->topo, sim, hooks, out, err);
}

/* 0, 2, 4, ... up the even positions, then down the odd ones. */
static void even_odd_ring(int P, int32_t *order)
{
    int k = 0;
    for (int i = 0; i < P; i += 2)
        order[k++] = i;
    for (int i = P - 1 - (P % 2 == 1); i >= 1; i -= 2)
        order[k++] = i;
}

/* The summary of a run: the colors and router configurations the lowering
 * needed (nothing for `collsim topo`). */
static void report(const cs_machine_t *m, const cs_net_t *net, FILE *f)
{
    const cs_cerebras_t *c = m->impl;
    int pe, cpe, peak, configs;
    if (!net)
        return;
    peak = cs_fabric_colors_peak(net, &pe, NULL);
    configs = cs_fabric_configs_peak(net, &cpe);
    fprintf(f, "colors    at most %d live at one router (PE (%d,%d)); at most %d router "
            "configurations per color (PE (%d,%d))%s\n",
            peak, pe / c->cols, pe % c->cols, configs, cpe / c->cols, cpe % c->cols,
            configs > 4 ? ": more than the 4 a router holds, reconfiguration not charged" : "");
}

static int create(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err)
{
    int64_t rows, cols, tr, colors, buf;
    double hz;
    int rc;
    const char *clock;
    char text[256];

    if ((rc = cs_spec_get_int(spec, "rows", 0, 1, CS_TOPO_MAX_NODES, &rows, err)) ||
        (rc = cs_spec_get_int(spec, "cols", 0, 1, CS_TOPO_MAX_NODES, &cols, err)) ||
        (rc = cs_spec_get_int(spec, "tr", CS_CEREBRAS_TR_DEFAULT, 1, 1000, &tr, err)) ||
        (rc = cs_spec_get_int(spec, "colors", 24, 0, 1 << 20, &colors, err)) ||
        (rc = cs_spec_get_int(spec, "buf", 2, 1, 1 << 20, &buf, err)))
        return rc;
    if (!cs_spec_get(spec, "rows") || !cs_spec_get(spec, "cols"))
        return cs_error_set(err, CS_ERR_USAGE,
                            "cerebras needs rows= and cols= (or the preset cerebras:wafer)");
    if (rows * cols > CS_TOPO_MAX_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "rows*cols = %lld exceeds %d PEs",
                            (long long)(rows * cols), CS_TOPO_MAX_NODES);
    clock = cs_spec_get(spec, "clock");
    hz = 1.1e9;
    if (clock && (rc = cs_units_parse_hz(clock, &hz, err))) {
        cs_error_prefix(err, "key 'clock'");
        return rc;
    }
    if (!(hz > 0))
        return cs_error_set(err, CS_ERR_RANGE, "key 'clock': must be > 0");
    if ((rc = cs_spec_check_nodes(spec, rows * cols, err)) ||
        (rc = cs_topo_new_mesh((int)rows, (int)cols, &m->topo, err)))
        return rc;

    cs_cerebras_t *c = cs_calloc(1, sizeof *c);
    c->rows = (int)rows;
    c->cols = (int)cols;
    c->tr = (int)tr;
    c->buf = (int)buf;
    c->colors = (int)colors;
    c->topo = m->topo;
    m->impl = c;
    m->tick_seconds = 1.0 / hz;
    m->reduce_num = 0;
    m->reduce_den = 1;
    /* the algorithms' natural segment (a hint only: the fabric streams by
     * wavelet whatever the program's message sizes) */
    m->net.unit_bytes = 4096;
    m->grid_rows = (int)rows;
    m->grid_cols = (int)cols;
    m->ring_order = cs_malloc((size_t)(rows * cols) * sizeof *m->ring_order);
    if (rows == 1 || cols == 1)
        even_odd_ring((int)(rows * cols), m->ring_order);
    else if (!cs_topo_ring_hint(m->topo, m->ring_order)) {
        free(m->ring_order);
        m->ring_order = NULL;
    }
    snprintf(text, sizeof text, "cerebras:rows=%lld,cols=%lld,tr=%lld,colors=%lld,buf=%lld,clock=%gGHz",
             (long long)rows, (long long)cols, (long long)tr, (long long)colors, (long long)buf,
             hz / 1e9);
    m->spec = cs_strdup(text);
    return CS_OK;
}

/* --predict: the thesis's model (cerebras_model.h) for the request.  The
 * options the model reads (base, inner, g; S the two-phase group size) are
 * passed on, the others (stream=) are not; B counts 32-bit wavelets.  Where
 * the printed formula contradicts its proof, the re-derived value is the
 * second form. */
static int predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                   cs_error_t *err)
{
    static const char *const model_keys[] = {"base", "inner", "g", NULL};
    const cs_cerebras_t *c = m->impl;
    const char *coll = cs_coll_name(req->kind);
    char algo[256];
    int64_t S = 0, B = req->bytes > 4 ? (req->bytes + 3) / 4 : 1;
    double cycles, re;
    int rc;
    snprintf(algo, sizeof algo, "%s", req->algo);
    for (int i = 0; i < req->nopts; i++) {
        const cs_spec_kv_t *kv = &req->opts[i];
        if (!strcmp(kv->key, "S"))
            S = atoll(kv->value);
        for (int k = 0; model_keys[k]; k++)
            if (!strcmp(kv->key, model_keys[k]))
                snprintf(algo + strlen(algo), sizeof algo - strlen(algo), "%s%s=%s",
                         strchr(algo, ':') ? "," : ":", kv->key, kv->value);
    }
    if ((rc = cs_cerebras_predict(coll, algo, req->P, req->grid_rows, req->grid_cols, B, c->tr, S,
                                  req->root, &cycles, err)))
        return rc;
    out->unit = "cycles";
    cs_model_set(out, cycles, "thesis, printed form");
    snprintf(algo + strlen(algo), sizeof algo - strlen(algo), "%sform=rederived",
             strchr(algo, ':') ? "," : ":");
    if (!cs_cerebras_predict(coll, algo, req->P, req->grid_rows, req->grid_cols, B, c->tr, S,
                             req->root, &re, NULL) &&
        re != cycles) {
        out->nforms = 2;
        out->form[1].ticks = re;
        snprintf(out->form[1].name, sizeof out->form[1].name, "re-derived form");
    }
    return CS_OK;
}

const cs_cerebras_t *cs_cerebras_of(const cs_machine_t *m)
{
    return m && m->type == &cs_machine_cerebras ? m->impl : NULL;
}

const cs_machine_type_t cs_machine_cerebras = {
    .name = "cerebras",
    .summary = "Cerebras wafer-scale engine: 2D mesh of PEs, wavelets on colors, multicast "
               "routers, ramps of T_R cycles, cycle-exact",
    .usage = "cerebras:rows=M,cols=N[,tr=2][,colors=24][,buf=2][,clock=1.1GHz] | cerebras:wafer",
    .keys = keys,
    .example = "cerebras:rows=8,cols=8",
    .presets = presets,
    .create = create,
    .destroy = free,
    .net_new = net_new,
    .report = report,
    .layout = cs_machine_layout_topo,
    .predict = predict,
};
