/*
 * tracecoll.c - a trace's collective call expanded by the suite on a group
 * of ranks and spliced into the program (tracecoll.h).
 *
 * The call is built once per (kind, size, root, group size) into a program
 * of its own (kept in a small round-robin cache, as traces repeat their
 * calls), its sources and sinks per rank found from the dependency tables,
 * and its ops copied into the trace's program in id order (the order is
 * part of a program, core/program.h), with calc ticks converted to the
 * trace's nanoseconds.  Moved from io/ti.c (issue 31), unchanged in effect.
 */
#include "io/tracecoll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"

#define TRACECOLL_CACHE 8

typedef struct cached {
    cs_program_t *prog;
    cs_coll_kind_t kind;
    int64_t bytes;
    int32_t root;
    int G;
    int32_t **src_ops, **sink_ops; /* per group rank: the call's first / last ops */
    int32_t *nsrc, *nsink;
} cached_t;

struct cs_tracecoll {
    const cs_tracecoll_opts_t *o;
    cached_t cache[TRACECOLL_CACHE];
    int victim;
    int32_t *map, cap_map;   /* call op -> program op */
};

static void *grow(void *v, int32_t *cap, int32_t n, size_t size)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 4;
    return cs_realloc(v, (size_t)*cap * size);
}

static void cached_free(cached_t *c)
{
    if (!c->prog)
        return;
    for (int i = 0; i < c->G; i++) {
        free(c->src_ops[i]);
        free(c->sink_ops[i]);
    }
    free(c->src_ops);
    free(c->sink_ops);
    free(c->nsrc);
    free(c->nsink);
    cs_program_free(c->prog);
    memset(c, 0, sizeof *c);
}

cs_tracecoll_t *cs_tracecoll_new(const cs_tracecoll_opts_t *opts)
{
    cs_tracecoll_t *tc = cs_calloc(1, sizeof *tc);
    tc->o = opts;
    return tc;
}

void cs_tracecoll_free(cs_tracecoll_t *tc)
{
    if (!tc)
        return;
    for (int i = 0; i < TRACECOLL_CACHE; i++)
        cached_free(&tc->cache[i]);
    free(tc->map);
    free(tc);
}

const char *cs_tracecoll_name(char *buf, size_t n, cs_coll_kind_t kind, int64_t bytes,
                              int32_t root)
{
    char r[32] = "";
    if (kind == CS_COLL_BARRIER) {
        snprintf(buf, n, "barrier");
        return buf;
    }
    if (root >= 0)
        snprintf(r, sizeof r, ", root %d", root);
    snprintf(buf, n, "%s of %lld bytes%s", cs_coll_name(kind), (long long)bytes, r);
    return buf;
}

/* The call's program, from the cache or built; *out its slot. */
static int build(cs_tracecoll_t *tc, const cs_tracecoll_call_t *c, const cs_coll_hints_t *hints,
                 cached_t **out, cs_error_t *err)
{
    const cs_tracecoll_opts_t *o = tc->o;
    int G = c->G, rc;
    for (int i = 0; i < TRACECOLL_CACHE; i++) {
        cached_t *e = &tc->cache[i];
        if (e->prog && e->kind == c->kind && e->bytes == c->bytes && e->root == c->root &&
            e->G == G) {
            *out = e;
            return CS_OK;
        }
    }
    int s = -1;
    for (int i = 0; i < TRACECOLL_CACHE && s < 0; i++)
        if (!tc->cache[i].prog)
            s = i;
    if (s < 0) {
        s = tc->victim++ % TRACECOLL_CACHE;
        cached_free(&tc->cache[s]);
    }
    const cs_coll_algo_t *algo = o->algo ? o->algo[c->kind] : NULL;
    if (!algo && (rc = cs_coll_find(c->kind, NULL, &algo, err)))
        return rc;
    cs_coll_args_t args = {c->kind, G, c->bytes, c->root >= 0 ? c->root : 0,
                           o->unit > 0 ? o->unit : 1, hints,
                           o->algo_opts ? o->algo_opts[c->kind] : NULL,
                           1 /* its ops are copied below without descriptors */};
    cs_program_t *cp;
    if (cs_coll_extra_ranks(algo, &args)) /* its switch ranks have no place in the trace */
        return cs_error_set(err, CS_ERR_USAGE, "%s: %s/%s runs on the network's reducing "
                            "switches as well as the ranks: it cannot expand a trace's "
                            "collective (run it with collsim run)", c->where,
                            cs_coll_name(algo->kind), algo->name);
    if ((rc = cs_coll_build(algo, &args, &cp, err))) {
        char name[128];
        cs_error_prefix(err, "%s: %s with %s/%s on %d ranks", c->where,
                        cs_tracecoll_name(name, sizeof name, c->kind, c->bytes, c->root),
                        cs_coll_name(algo->kind), algo->name, G);
        return rc;
    }
    double unit = cs_program_time_unit(cp);
    int32_t n = cs_program_nops(cp);
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *op = cs_program_op(cp, i);
        if (op->kind == CS_OP_CALC && op->ticks && !(unit > 0)) {
            cs_program_free(cp);
            return cs_error_set(err, CS_ERR_INTERNAL,
                                "%s/%s: a fixed calc time in machine ticks cannot be replayed "
                                "from a trace", cs_coll_name(algo->kind), algo->name);
        }
        if (op->kind != CS_OP_CALC && (op->tag == CS_ANY || op->tag > o->max_tag)) {
            cs_program_free(cp);
            return cs_error_set(err, CS_ERR_INTERNAL,
                                "%s/%s: tag %d does not fit the collectives' tag space",
                                cs_coll_name(algo->kind), algo->name, op->tag);
        }
    }
    cached_t *e = &tc->cache[s];
    e->prog = cp;
    e->kind = c->kind;
    e->bytes = c->bytes;
    e->root = c->root;
    e->G = G;
    e->src_ops = cs_calloc((size_t)G, sizeof *e->src_ops);
    e->sink_ops = cs_calloc((size_t)G, sizeof *e->sink_ops);
    e->nsrc = cs_calloc((size_t)G, sizeof *e->nsrc);
    e->nsink = cs_calloc((size_t)G, sizeof *e->nsink);
    int32_t *cap_src = cs_calloc((size_t)G, sizeof *cap_src);
    int32_t *cap_sink = cs_calloc((size_t)G, sizeof *cap_sink);
    for (int32_t i = 0; i < n; i++) {
        int np, ns, rk = cs_program_op(cp, i)->rank;
        cs_program_preds(cp, i, &np);
        cs_program_succs(cp, i, &ns);
        if (!np) {
            e->src_ops[rk] = grow(e->src_ops[rk], &cap_src[rk], e->nsrc[rk], sizeof(int32_t));
            e->src_ops[rk][e->nsrc[rk]++] = i;
        }
        if (!ns) {
            e->sink_ops[rk] = grow(e->sink_ops[rk], &cap_sink[rk], e->nsink[rk], sizeof(int32_t));
            e->sink_ops[rk][e->nsink[rk]++] = i;
        }
    }
    free(cap_src);
    free(cap_sink);
    *out = e;
    return CS_OK;
}

int cs_tracecoll_splice(cs_tracecoll_t *tc, cs_program_t *p, const cs_tracecoll_call_t *c,
                        const cs_coll_hints_t *hints, int64_t *nops, cs_error_t *err)
{
    cached_t *e = NULL;
    int rc = build(tc, c, hints, &e, err);
    if (rc)
        return rc;
    const cs_program_t *cp = e->prog;
    const int32_t *mem = c->members;
    double unit = cs_program_time_unit(cp);
    int32_t n = cs_program_nops(cp);
    if (n > tc->cap_map) {
        tc->cap_map = n;
        tc->map = cs_realloc(tc->map, (size_t)n * sizeof *tc->map);
    }
    int32_t *map = tc->map;
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *o = cs_program_op(cp, i);
        /* calc ticks in the trace's time unit */
        int64_t ns = o->kind == CS_OP_CALC && o->ticks
                         ? (int64_t)llround((double)o->ticks * (unit / 1e-9)) : 0;
        int32_t id = cs_program_copy_op(p, cp, i, mem, tc->o->tag_base, ns);
        if (id < 0) {
            cs_error_t e2;
            cs_program_finalize(p, &e2);
            return cs_error_set(err, CS_ERR_INTERNAL, "expanding a collective: %s", e2.msg);
        }
        map[i] = id;
        cs_program_set_origin(p, id, c->line[o->rank], NULL);
    }
    for (int32_t i = 0; i < n; i++) {
        int np;
        const cs_dep_t *d = cs_program_preds(cp, i, &np);
        for (int j = 0; j < np; j++)
            cs_program_dep(p, map[i], map[cs_dep_op(d[j])], cs_dep_kind(d[j]));
    }
    for (int g = 0; g < c->G; g++) {
        int32_t pred = c->pred[g];
        cs_dep_kind_t pk = c->pred_kind ? (cs_dep_kind_t)c->pred_kind[g] : CS_DEP_AFTER;
        if (pred >= 0)
            for (int32_t j = 0; j < e->nsrc[g]; j++)
                cs_program_dep(p, map[e->src_ops[g][j]], pred, pk);
        for (int32_t j = 0; j < e->nsink[g]; j++)
            cs_program_dep(p, c->join[g], map[e->sink_ops[g][j]], CS_DEP_AFTER);
        if (!e->nsink[g] && pred >= 0) /* no op on this rank: keep the order */
            cs_program_dep(p, c->join[g], pred, pk);
    }
    if (nops)
        *nops = n;
    return CS_OK;
}
