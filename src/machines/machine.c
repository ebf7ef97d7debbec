/*
 * machine.c - the registry of machine types and the spec-string front door
 * (see machine.h), and the generic entries every machine shares: reports,
 * node labels, layouts and --predict through the type's table.  Adding a
 * machine means adding its type to `types` (docs/adding-a-machine.md).
 */
#include "machines/machine.h"
#include "core/suggest.h"

#include "topo/netdesc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const cs_machine_type_t cs_machine_alphabeta;
extern const cs_machine_type_t cs_machine_cerebras;
extern const cs_machine_type_t cs_machine_cns1;
extern const cs_machine_type_t cs_machine_cell;
extern const cs_machine_type_t cs_machine_groq;
extern const cs_machine_type_t cs_machine_loggp;
extern const cs_machine_type_t cs_machine_net;

static const cs_machine_type_t *const types[] = {
    &cs_machine_alphabeta,
    &cs_machine_cerebras,
    &cs_machine_cns1,
    &cs_machine_cell,
    &cs_machine_groq,
    &cs_machine_loggp,
    &cs_machine_net,
};

/* "type:preset[,rest]" -> "type:preset's keys[,rest]", or NULL if the spec
 * names no preset. */
static char *expand_preset(const char *text)
{
    const char *colon = strchr(text, ':');
    int n = (int)(sizeof types / sizeof types[0]);
    if (!colon)
        return NULL;
    for (int i = 0; i < n; i++) {
        const char *const *p = types[i]->presets;
        if (!p || strlen(types[i]->name) != (size_t)(colon - text) ||
            strncmp(text, types[i]->name, (size_t)(colon - text)))
            continue;
        for (; p[0]; p += 2) {
            size_t k = strlen(p[0]);
            if (!strncmp(colon + 1, p[0], k) && (colon[1 + k] == 0 || colon[1 + k] == ',')) {
                size_t len = strlen(text) + strlen(p[1]) + 2;
                char *out = cs_malloc(len);
                snprintf(out, len, "%.*s%s%s", (int)(colon - text + 1), text, p[1], colon + 1 + k);
                return out;
            }
        }
    }
    return NULL;
}

const cs_machine_type_t *const *cs_machine_types(int *count)
{
    *count = (int)(sizeof types / sizeof types[0]);
    return types;
}

/* The spec's text parsed (presets expanded) into *spec, its type found and
 * its keys checked against the type's: everything about a spec that needs
 * no machine built.  On error nothing is left to destroy. */
static int machine_parse(const char *spec_text, cs_spec_t *spec, const cs_machine_type_t **out,
                         cs_error_t *err)
{
    const cs_machine_type_t *type = NULL;
    int rc, n = (int)(sizeof types / sizeof types[0]);

    char *expanded = expand_preset(spec_text);
    rc = cs_spec_parse(expanded ? expanded : spec_text, spec, err);
    free(expanded);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (!strcmp(types[i]->name, spec->name))
            type = types[i];
    if (!type) {
        char names[256] = "";
        for (int i = 0; i < n; i++) {
            if (i)
                strcat(names, ", ");
            strncat(names, types[i]->name, sizeof names - strlen(names) - 3);
        }
        cs_suggest_t sg;
        char hint[96];
        cs_suggest_init(&sg, spec->name);
        for (int i = 0; i < n; i++)
            cs_suggest_add(&sg, types[i]->name);
        cs_error_set(err, CS_ERR_USAGE,
                     "unknown machine \"%s\"%s in spec \"%s\"; valid machines: %s", spec->name,
                     cs_suggest_hint(&sg, "\"", hint, sizeof hint), spec_text, names);
        cs_spec_destroy(spec);
        return CS_ERR_USAGE;
    }
    /* unknown keys first: `net:typo=1,n=10` must not build a million hosts
     * before it says so (found by tests/fuzz's spec target) */
    if ((rc = cs_spec_check_known(spec, type->keys, err))) {
        cs_spec_destroy(spec);
        return rc;
    }
    *out = type;
    return CS_OK;
}

int cs_machine_check_spec(const char *spec_text, cs_error_t *err)
{
    cs_spec_t spec;
    const cs_machine_type_t *type;
    int rc = machine_parse(spec_text, &spec, &type, err);
    if (rc == CS_OK)
        cs_spec_destroy(&spec);
    return rc;
}

/* The entry of type's file_keys for key, or NULL. */
static const cs_filekey_t *machine_file_key(const cs_machine_type_t *type, const char *key)
{
    for (const cs_filekey_t *f = type->file_keys; f && f->key; f++)
        if (!strcmp(f->key, key))
            return f;
    return NULL;
}

int cs_machine_file_key(const cs_machine_type_t *type, const char *key)
{
    const cs_filekey_t *f = machine_file_key(type, key);
    return f ? (int)f->mode : 0;
}

/* What a spec whose files come from `files` may not do (machine.h,
 * cs_machine_check_files). */
static int machine_check_files(const cs_machine_type_t *type, const cs_spec_t *spec,
                               const cs_files_t *files, const char **key, cs_error_t *err)
{
    int rc = CS_OK;
    for (int i = 0; i < spec->nkv && rc == CS_OK; i++) {
        const cs_spec_kv_t *kv = &spec->kv[i];
        const cs_filekey_t *fk = machine_file_key(type, kv->key);
        int mode = fk ? (int)fk->mode : 0;
        if (mode == CS_FILEKEY_WRITE)
            rc = cs_error_set(err, CS_ERR_USAGE, "key '%s' of %s writes a file (%s=FILE), "
                              "which a request cannot ask for", kv->key, type->name, kv->key);
        else if (mode == CS_FILEKEY_READ && !cs_files_find(files, kv->value))
            rc = cs_error_set(err, CS_ERR_USAGE, "key '%s' names \"%.*s\", which is none of "
                              "the request's files: give the file's content in \"files\" and "
                              "its name here (%s=NAME); no path is opened", kv->key,
                              CS_FILES_NAME_MAX, kv->value, kv->key);
        if (rc && key)
            *key = fk->key;
    }
    return rc;
}

int cs_machine_check_files(const char *spec_text, const cs_files_t *files, const char **key,
                           cs_error_t *err)
{
    cs_spec_t spec;
    const cs_machine_type_t *type;
    int rc = machine_parse(spec_text, &spec, &type, err);
    if (key)
        *key = NULL;
    if (rc)
        return rc;
    rc = machine_check_files(type, &spec, files, key, err);
    cs_spec_destroy(&spec);
    return rc;
}

int cs_machine_new(const char *spec_text, cs_machine_t **out, cs_error_t *err)
{
    return cs_machine_new_in(spec_text, NULL, out, err);
}

int cs_machine_new_in(const char *spec_text, const cs_machine_env_t *env, cs_machine_t **out,
                      cs_error_t *err)
{
    const cs_files_t *files = env ? env->files : NULL;
    cs_spec_t spec;
    const cs_machine_type_t *type = NULL;
    cs_machine_t *m;
    int rc;

    *out = NULL;
    if ((rc = machine_parse(spec_text, &spec, &type, err)))
        return rc;
    /* the tables' word first, then the readers' (core/source.h) again */
    if (files && (rc = machine_check_files(type, &spec, files, NULL, err))) {
        cs_spec_destroy(&spec);
        return rc;
    }
    spec.files = files;
    spec.max_nodes = env ? env->max_nodes : 0;
    m = cs_calloc(1, sizeof *m);
    m->type = type;
    m->reduce_den = 1;
    cs_net_params_default(&m->net);
    rc = type->create(&spec, m, err);
    if (!rc)
        rc = cs_spec_check_unused(&spec, type->keys, err);
    cs_spec_destroy(&spec);
    if (rc) {
        cs_machine_free(m);
        return rc;
    }
    if (!m->spec)
        m->spec = cs_strdup(spec_text);
    *out = m;
    return CS_OK;
}

void cs_machine_free(cs_machine_t *m)
{
    if (!m)
        return;
    if (m->type && m->type->destroy)
        m->type->destroy(m->impl);
    cs_topo_free(m->topo);
    free(m->ring_order);
    free(m->node_group);
    free(m->red_node);
    free(m->red_num);
    free(m->red_den);
    free(m->red_buf);
    free(m->spec);
    free(m);
}

int cs_machine_netdesc(const cs_machine_t *m, cs_netdesc_t **out, cs_error_t *err)
{
    int nodes = cs_topo_nodes(m->topo), hosts = cs_machine_nodes(m);
    int links = cs_topo_channels(m->topo) / 2, rc = CS_OK;
    char label[64];
    *out = NULL;
    if (m->type->net_new)
        return cs_error_set(err, CS_ERR_USAGE, "machine '%s' runs its own network engine: its "
                            "links have no bandwidth of the channel engine to write", m->type->name);
    cs_netdesc_t *d = cs_netdesc_new(m->spec);
    for (int v = 0; v < nodes; v++) {
        const char *l = m->type->node_label ? m->type->node_label(m, v, label, sizeof label)
                                            : NULL;
        cs_netdesc_add_node(d, v < hosts ? CS_NETNODE_HOST : CS_NETNODE_SWITCH, l,
                            m->node_group ? m->node_group[v] : -1);
    }
    for (int l = 0; l < links && rc == CS_OK; l++) {
        cs_tick_t lat = m->net.chan_wire_lat ? m->net.chan_wire_lat[2 * l] : m->net.wire_lat;
        rc = cs_netdesc_add_link(d, cs_topo_channel_src(m->topo, 2 * l),
                                 cs_topo_channel_dst(m->topo, 2 * l),
                                 cs_machine_channel_bandwidth(m, 2 * l),
                                 (double)lat * m->tick_seconds, 1, 0, err);
    }
    /* reducing switches (issue 36): the rate back from ticks per byte */
    for (int s = 0; s < m->nred && rc == CS_OK; s++)
        rc = cs_netdesc_set_reduce(d, m->red_node[s],
                                   (double)m->red_den[s] /
                                       ((double)m->red_num[s] * m->tick_seconds),
                                   m->red_buf[s], err);
    if (rc) {
        cs_netdesc_free(d);
        return rc;
    }
    /* a standard shape routes by its own rule: say which */
    cs_topo_kind_t k = cs_topo_kind(m->topo);
    int rows, cols;
    if (k == CS_TOPO_MESH || k == CS_TOPO_TORUS || k == CS_TOPO_CYLINDER) {
        char s[64];
        cs_topo_grid(m->topo, &rows, &cols);
        snprintf(s, sizeof s, "%s:%dx%d", cs_topo_kind_name(k), rows, cols);
        cs_netdesc_set_shape(d, s);
    } else if (k != CS_TOPO_CUSTOM) {
        cs_netdesc_set_shape(d, cs_topo_kind_name(k));
    }
    *out = d;
    return CS_OK;
}

int cs_machine_ab_read(cs_spec_t *spec, cs_machine_ab_t *ab, cs_error_t *err)
{
    int rc;
    if ((rc = cs_spec_get_seconds(spec, "alpha", 1e-6, &ab->alpha, err)) ||
        (rc = cs_spec_get_seconds(spec, "hop", 0, &ab->hop, err)) ||
        (rc = cs_spec_get_seconds(spec, "tick", 1e-12, &ab->tick, err)) ||
        (rc = cs_spec_get_seconds(spec, "reduce", 0, &ab->reduce, err)) ||
        (rc = cs_spec_get_bytes(spec, "packet", 4096, &ab->packet, err)) ||
        (rc = cs_spec_get_int(spec, "buf", 8, 0, 1 << 20, &ab->buf, err)))
        return rc;
    if (ab->tick <= 0)
        return cs_error_set(err, CS_ERR_RANGE, "key 'tick': must be > 0");
    if (ab->packet < 1)
        return cs_error_set(err, CS_ERR_RANGE, "key 'packet': must be at least 1 byte");
    return CS_OK;
}

int cs_machine_ab_apply(const cs_machine_ab_t *ab, cs_machine_t *m, cs_error_t *err)
{
    int rc;
    m->tick_seconds = ab->tick;
    m->net.unit_bytes = ab->packet;
    m->net.buf_units = (int)ab->buf;
    m->net.send_ports = 1;
    m->net.recv_ports = 1;
    m->net.wire_lat = 0;
    if ((rc = cs_spec_ticks("alpha", ab->alpha, ab->tick, 9e18, &m->net.send_overhead, err)) ||
        (rc = cs_spec_ticks("hop", ab->hop, ab->tick, 9e18, &m->net.router_lat, err)))
        return rc;
    return cs_spec_tick_ratio("reduce", ab->reduce, ab->tick, &m->reduce_num, &m->reduce_den, err);
}

double cs_machine_channel_bandwidth(const cs_machine_t *m, int c)
{
    int64_t num = m->net.chan_ser_num ? m->net.chan_ser_num[c] : m->net.ser_num;
    int64_t den = m->net.chan_ser_den ? m->net.chan_ser_den[c] : m->net.ser_den;
    if (m->type->net_new || num <= 0)
        return 0; /* a machine's own engine, or a free channel */
    return (double)den / ((double)num * m->tick_seconds);
}

int cs_machine_nodes(const cs_machine_t *m)
{
    return m->rank_nodes > 0 ? m->rank_nodes : cs_topo_nodes(m->topo);
}

const char *cs_machine_rank_noun(const cs_machine_t *m, int n)
{
    const cs_machine_type_t *ty = m->type;
    return ty->rank_noun[0] ? ty->rank_noun[n != 1] : n != 1 ? "nodes" : "node";
}

const char *cs_machine_count_text(const cs_machine_t *m, char *buf, size_t len)
{
    const cs_machine_type_t *ty = m->type;
    int all = cs_topo_nodes(m->topo), ranks = cs_machine_nodes(m), other = all - ranks;
    if (len == 0)
        return buf;
    /* snprintf's return is what it wanted to write: clamped, so that a
     * short buffer truncates instead of writing past its end */
    int n = snprintf(buf, len, "%d %s", ranks, cs_machine_rank_noun(m, ranks));
    size_t at = n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
    if (other > 0) {
        n = snprintf(buf + at, len - at, " + %d %s", other,
                     ty->other_noun[0] ? ty->other_noun[other != 1]
                     : other != 1 ? "network nodes" : "network node");
        at = n < 0 ? at : at + (size_t)n < len ? at + (size_t)n : len - 1;
    }
    if (ty->group_noun[0] && m->ngroups > 1)
        snprintf(buf + at, len - at, " in %d %s", m->ngroups, ty->group_noun[1]);
    return buf;
}

void cs_machine_exec_env(const cs_machine_t *m, cs_exec_env_t *env)
{
    env->topo = m->topo;
    env->net = &m->net;
    env->reduce_num = m->reduce_num;
    env->reduce_den = m->reduce_den;
    env->tick_seconds = m->tick_seconds;
    env->net_new = m->type->net_new;
    env->net_ctx = m->impl;
}

void cs_machine_report(const cs_machine_t *m, const cs_net_t *net, FILE *f)
{
    if (m->type->report)
        m->type->report(m, net, f);
}

const char *cs_machine_node_label(const cs_machine_t *m, int node, char *buf, size_t len)
{
    const char *s = m->type->node_label ? m->type->node_label(m, node, buf, len) : NULL;
    if (!s) {
        snprintf(buf, len, "%d", node);
        s = buf;
    }
    return s;
}

void cs_machine_layout(const cs_machine_t *m, cs_machine_layout_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = CS_LAYOUT_GRAPH;
    if (m->type->layout)
        m->type->layout(m, out);
}

void cs_machine_layout_topo(const cs_machine_t *m, cs_machine_layout_t *out)
{
    const cs_topo_t *t = m->topo;
    cs_topo_kind_t k = cs_topo_kind(t);
    int rows, cols, grid = 1;
    memset(out, 0, sizeof *out);
    if (k == CS_TOPO_RING) {
        out->kind = CS_LAYOUT_RING;
        return;
    }
    if (k == CS_TOPO_LINE) {
        rows = 1;
        cols = cs_topo_nodes(t);
    } else if (!cs_topo_grid(t, &rows, &cols)) {
        rows = m->grid_rows;
        cols = m->grid_cols;
        grid = rows > 0;
    }
    if (grid && (int64_t)rows * cols == cs_topo_nodes(t)) {
        out->kind = CS_LAYOUT_GRID;
        out->wrap_x = k == CS_TOPO_TORUS || k == CS_TOPO_CYLINDER;
        out->wrap_y = k == CS_TOPO_TORUS;
        out->line = k == CS_TOPO_LINE || rows == 1 || cols == 1;
        out->rows = out->line ? 1 : rows;
        out->cols = out->line ? rows * cols : cols;
        /* a 1-D shape that wraps is a ring */
        if (out->line && out->wrap_x)
            out->kind = CS_LAYOUT_RING;
    } else if (k == CS_TOPO_COMPLETE || k == CS_TOPO_HYPERCUBE) {
        out->kind = CS_LAYOUT_CIRCLE;
        out->gray = k == CS_TOPO_HYPERCUBE;
    } else {
        out->kind = CS_LAYOUT_GRAPH;
    }
}

void cs_model_set(cs_model_t *out, double ticks, const char *name)
{
    out->nforms = 1;
    out->form[0].ticks = ticks;
    snprintf(out->form[0].name, sizeof out->form[0].name, "%s", name);
}

const char *cs_model_request_opt(const cs_model_request_t *req, const char *key)
{
    for (int i = 0; i < req->nopts; i++)
        if (!strcmp(req->opts[i].key, key))
            return req->opts[i].value;
    return NULL;
}

int cs_machine_predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                       cs_error_t *err)
{
    memset(out, 0, sizeof *out);
    out->unit = "ticks";
    if (!m->type->predict)
        return cs_error_set(err, CS_ERR_RANGE, "%s has no closed-form model", m->type->name);
    int rc = m->type->predict(m, req, out, err);
    if (rc)
        return rc;
    CS_ASSERT(out->nforms >= 1 && out->nforms <= CS_MODEL_MAX_FORMS);
    for (int i = 0; i < out->nforms; i++)
        out->form[i].seconds = out->form[i].ticks * m->tick_seconds;
    return CS_OK;
}

/* ---- hints in rank space ---------------------------------------------------- */

/* The ring hint: the ranks sorted by their node's position in the ring
 * order (counting sort, O(nodes)). */
static int32_t *hints_ring(const cs_machine_t *m, int P, const int32_t *r2n)
{
    int nodes = cs_topo_nodes(m->topo), k = 0;
    int32_t *pos = cs_malloc((size_t)nodes * sizeof *pos);
    int32_t *rank_at = cs_malloc((size_t)nodes * sizeof *rank_at);
    int32_t *ring = cs_malloc((size_t)P * sizeof *ring);
    int nring = cs_machine_nodes(m);
    for (int i = 0; i < nodes; i++)
        pos[i] = rank_at[i] = -1;
    for (int i = 0; i < nring; i++)
        pos[m->ring_order[i]] = i;
    for (int r = 0; r < P; r++) {
        int node = r2n ? r2n[r] : r;
        CS_ASSERT(node >= 0 && node < nodes && pos[node] >= 0);
        rank_at[pos[node]] = r;
    }
    for (int i = 0; i < nring; i++)
        if (rank_at[i] >= 0)
            ring[k++] = rank_at[i];
    CS_ASSERT(k == P);
    free(rank_at);
    free(pos);
    return ring;
}

/* The gateway hint (machine.h): the links in id order, the first one to
 * join two groups names both of their gateways. */
static int32_t *hints_gateway(const cs_machine_t *m, int P, const int32_t *r2n,
                              const int32_t *group, int G)
{
    int nodes = cs_topo_nodes(m->topo), nch = cs_topo_channels(m->topo);
    int32_t *rank_of = cs_malloc((size_t)nodes * sizeof *rank_of);
    int32_t *gw = cs_malloc((size_t)G * (size_t)G * sizeof *gw);
    for (int i = 0; i < nodes; i++)
        rank_of[i] = -1;
    for (int r = 0; r < P; r++)
        rank_of[r2n ? r2n[r] : r] = r;
    for (int64_t i = 0; i < (int64_t)G * G; i++)
        gw[i] = -1;
    for (int c = 0; c < nch; c += 2) {
        int ru = rank_of[cs_topo_channel_src(m->topo, c)];
        int rv = rank_of[cs_topo_channel_dst(m->topo, c)];
        if (ru < 0 || rv < 0 || group[ru] == group[rv])
            continue;
        int64_t gh = (int64_t)group[ru] * G + group[rv], hg = (int64_t)group[rv] * G + group[ru];
        if (gw[gh] < 0) {
            gw[gh] = ru;
            gw[hg] = rv;
        }
    }
    free(rank_of);
    return gw;
}

/* The reducing switches in rank space (cs_coll_hints_t.nswitches): members
 * are the placed ranks linked to a switch, the parent a reducing neighbour
 * one level up: every node's distance from the rank nodes (breadth-first
 * over the links) orders the levels, so that a fat-tree's leaf finds a
 * spine and never another leaf, and the lowest node id among the spines
 * makes every leaf of a two-level tree pick the same one.  O(nodes +
 * channels). */
static void hints_switches(cs_machine_hints_t *h, const cs_machine_t *m, int P,
                           const int32_t *r2n)
{
    const cs_topo_t *t = m->topo;
    int nodes = cs_topo_nodes(t), nch = cs_topo_channels(t), S = m->nred;
    int rank_nodes = cs_machine_nodes(m);
    int32_t *first = cs_calloc((size_t)nodes + 1, sizeof *first);
    int32_t *adj = cs_malloc((size_t)(nch ? nch : 1) * sizeof *adj);
    int32_t *dist = cs_malloc((size_t)nodes * sizeof *dist);
    int32_t *queue = cs_malloc((size_t)nodes * sizeof *queue);
    int32_t *node_rank = cs_malloc((size_t)nodes * sizeof *node_rank);
    int32_t *node_sw = cs_malloc((size_t)nodes * sizeof *node_sw);
    int32_t head = 0, tail = 0;

    /* adjacency in channel order (a node's neighbours by channel id) */
    for (int c = 0; c < nch; c++)
        first[cs_topo_channel_src(t, c) + 1]++;
    for (int u = 0; u < nodes; u++)
        first[u + 1] += first[u];
    int32_t *fill = cs_malloc((size_t)(nodes ? nodes : 1) * sizeof *fill);
    memcpy(fill, first, (size_t)nodes * sizeof *fill);
    for (int c = 0; c < nch; c++)
        adj[fill[cs_topo_channel_src(t, c)]++] = cs_topo_channel_dst(t, c);
    free(fill);
    for (int u = 0; u < nodes; u++) {
        node_rank[u] = node_sw[u] = -1;
        dist[u] = u < rank_nodes ? 0 : -1;
        if (u < rank_nodes)
            queue[tail++] = u;
    }
    while (head < tail) {
        int32_t u = queue[head++];
        for (int32_t i = first[u]; i < first[u + 1]; i++)
            if (dist[adj[i]] < 0) {
                dist[adj[i]] = dist[u] + 1;
                queue[tail++] = adj[i];
            }
    }
    for (int r = 0; r < P; r++)
        node_rank[r2n ? r2n[r] : r] = r;
    for (int s = 0; s < S; s++)
        node_sw[m->red_node[s]] = s;

    h->sw_first = cs_malloc(((size_t)S + 1) * sizeof *h->sw_first);
    h->sw_parent = cs_malloc((size_t)S * sizeof *h->sw_parent);
    h->sw_node = cs_malloc((size_t)S * sizeof *h->sw_node);
    int32_t nmem = 0, nup = 0;
    for (int s = 0; s < S; s++) {
        int32_t u = m->red_node[s];
        for (int32_t i = first[u]; i < first[u + 1]; i++) {
            nmem += node_rank[adj[i]] >= 0;
            nup += node_sw[adj[i]] >= 0 && dist[adj[i]] > dist[u];
        }
    }
    h->sw_member = cs_malloc((size_t)(nmem ? nmem : 1) * sizeof *h->sw_member);
    h->sw_up_first = cs_malloc(((size_t)S + 1) * sizeof *h->sw_up_first);
    h->sw_up = cs_malloc((size_t)(nup ? nup : 1) * sizeof *h->sw_up);
    nmem = nup = 0;
    for (int s = 0; s < S; s++) {
        int32_t u = m->red_node[s];
        h->sw_first[s] = nmem;
        h->sw_up_first[s] = nup;
        h->sw_node[s] = u;
        for (int32_t i = first[u]; i < first[u + 1]; i++) {
            int32_t v = adj[i];
            if (node_rank[v] >= 0)
                h->sw_member[nmem++] = node_rank[v];
            else if (node_sw[v] >= 0 && dist[v] > dist[u])
                h->sw_up[nup++] = node_sw[v];
        }
        /* the switches above in node order (switch index order: red_node
         * is in node order); the parent is the first */
        for (int32_t i = h->sw_up_first[s] + 1; i < nup; i++)
            for (int32_t j = i; j > h->sw_up_first[s] && h->sw_up[j - 1] > h->sw_up[j]; j--) {
                int32_t x = h->sw_up[j];
                h->sw_up[j] = h->sw_up[j - 1];
                h->sw_up[j - 1] = x;
            }
        h->sw_parent[s] = nup > h->sw_up_first[s] ? h->sw_up[h->sw_up_first[s]] : -1;
        /* members in increasing rank order (insertion sort: a switch has
         * a few tens of ports) */
        for (int32_t i = h->sw_first[s] + 1; i < nmem; i++)
            for (int32_t j = i; j > h->sw_first[s] && h->sw_member[j - 1] > h->sw_member[j]; j--) {
                int32_t x = h->sw_member[j];
                h->sw_member[j] = h->sw_member[j - 1];
                h->sw_member[j - 1] = x;
            }
    }
    h->sw_first[S] = nmem;
    h->sw_up_first[S] = nup;
    free(first);
    free(adj);
    free(dist);
    free(queue);
    free(node_rank);
    free(node_sw);
    h->coll.nswitches = S;
    h->coll.sw_first = h->sw_first;
    h->coll.sw_member = h->sw_member;
    h->coll.sw_parent = h->sw_parent;
    h->coll.sw_up_first = h->sw_up_first;
    h->coll.sw_up = h->sw_up;
    h->coll.sw_num = m->red_num;
    h->coll.sw_den = m->red_den;
    h->coll.sw_buf = m->red_buf;
}

void cs_machine_hints_init(cs_machine_hints_t *h, const cs_machine_t *m, int P,
                           const int32_t *rank_to_node)
{
    int nodes = cs_machine_nodes(m);
    memset(h, 0, sizeof *h);
    CS_ASSERT(P >= 0 && P <= nodes);
    if (m->ring_order && P > 0) {
        h->ring = hints_ring(m, P, rank_to_node);
        h->coll.ring = h->ring;
    }
    /* each rank's group is its node's; groups no rank uses are dropped and
     * the rest renumbered in order of first use */
    if (m->node_group && m->ngroups > 1) {
        int32_t *renum = cs_malloc((size_t)m->ngroups * sizeof *renum);
        int used = 0;
        for (int g = 0; g < m->ngroups; g++)
            renum[g] = -1;
        h->group = cs_malloc((size_t)(P > 0 ? P : 1) * sizeof *h->group);
        for (int r = 0; r < P; r++) {
            int g = m->node_group[rank_to_node ? rank_to_node[r] : r];
            if (renum[g] < 0)
                renum[g] = used++;
            h->group[r] = renum[g];
        }
        free(renum);
        if (used > 1) {
            h->coll.group = h->group;
            h->coll.ngroups = used;
            if ((int64_t)used * used <= CS_MACHINE_MAX_GATEWAY) {
                h->gateway = hints_gateway(m, P, rank_to_node, h->group, used);
                h->coll.gateway = h->gateway;
            }
        }
    }
    /* the grid and the dimensions hold when the ranks are all the nodes
     * in node order */
    int natural = P == nodes;
    for (int r = 0; r < P && natural && rank_to_node; r++)
        natural = rank_to_node[r] == r;
    if (natural && m->grid_rows > 0 && (int64_t)m->grid_rows * m->grid_cols == P) {
        h->coll.grid_rows = m->grid_rows;
        h->coll.grid_cols = m->grid_cols;
    }
    if (natural && m->ndims > 0) {
        h->coll.ndims = m->ndims;
        h->coll.dims = m->dims;
    }
    if (m->nred > 0)
        hints_switches(h, m, P, rank_to_node);
}

void cs_machine_hints_destroy(cs_machine_hints_t *h)
{
    free(h->ring);
    free(h->group);
    free(h->gateway);
    free(h->sw_first);
    free(h->sw_member);
    free(h->sw_parent);
    free(h->sw_up_first);
    free(h->sw_up);
    free(h->sw_node);
    memset(h, 0, sizeof *h);
}
