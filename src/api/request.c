/*
 * request.c - the one request path (request.h): a request's fields parsed
 * and checked once, the collective resolved against the machine (algorithm,
 * ranks, root, placement, hints in rank space, options), built and run in
 * the machine's environment, validated when asked.
 *
 * Moved here from `collsim run` (issue 16) so that run, sweep, compare,
 * replay, export and bench share one implementation, and so that a library
 * or a service can call it: no printing, no exit, no state between calls.
 * The messages are those the command line has always printed (tests/app
 * check them): they name the option the user typed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/request.h"
#include "coll/nccl.h"
#include "core/checked.h"
#include "core/units.h"
#include "io/algofile.h"
#include "io/goal.h"

/* The seed of validation's random keys: fixed, so runs are reproducible. */
#define REQUEST_VALIDATE_SEED 0x636f6c6c73696dULL
/* A windowed run keeps each op's successors as a linked list of 16-byte
 * edges where a whole program has a contiguous table of 4-byte entries:
 * with many dependencies per op that costs more than the window saves
 * (allreduce/gateway on Groq, about 20 per op: 2x the CPU and 2.2x the
 * memory), so by default a collective whose first window has more runs
 * whole.  Rings and pipelines have 1 to 2.  A join (core/program.h) stands
 * for such a fan-in, all-to-all between two stages whose ops are then
 * enabled at once, so a window holds whole stages: a first window with a
 * join runs whole too (allreduce/gateway on 10,440 TSPs with joins:
 * windowed 9.0 s and 1.29 GB of CPU and peak RSS, whole 6.0 s and 0.92 GB). */
#define REQUEST_WINDOW_MAX_FANIN 4
/* how far the default's probe builds: this many times the ops of the first window
 * (2 finds the gateway's second stage on 10,440 TSPs; a ring of 1,024 pays 9 MB) */
#define REQUEST_WINDOW_PROBE 2
/* A collective whose ops are all ready at time 0 (the full wafer's two-phase
 * reduce: 4.19 M ops, every stream posted at cycle 0) is whole after the
 * probe's first step, and the window would hold all of it plus its own
 * per-op lists (1,181 MB against 1,005 MB whole): above this many ops such a
 * program is rebuilt whole.  Below, the window's cost is too small to repay
 * a second build. */
#define REQUEST_WINDOW_MIN_REBUILD (1 << 16)
/* At most this many queue kinds are looked for (cs_queue_kind_name names
 * the ones past the last "unknown"). */
#define REQUEST_MAX_QUEUE_KINDS 16

/* ---- fields ---------------------------------------------------------------- */

void cs_request_init(cs_request_t *r)
{
    memset(r, 0, sizeof *r);
    r->mode = CS_NET_PACKET;
    r->queue = CS_QUEUE_DEFAULT;
    cs_loop_spec_init(&r->loop);
}

int cs_request_add_opt(cs_request_t *r, const char *kv, cs_error_t *err)
{
    if (strchr(kv, ','))
        return cs_error_set(err, CS_ERR_USAGE, "--opt '%s': one KEY=VALUE per --opt (no commas)",
                            kv);
    if (r->nopts == CS_REQUEST_MAX_OPTS)
        return cs_error_set(err, CS_ERR_USAGE, "at most %d --opt options", CS_REQUEST_MAX_OPTS);
    r->opts[r->nopts++] = kv;
    return CS_OK;
}

/* An integer field: `what` names the option in the message. */
static int request_int(const char *what, const char *text, int64_t *out, cs_error_t *err)
{
    cs_error_t e;
    if (cs_units_parse_int(text, out, &e) != CS_OK)
        return cs_error_set(err, CS_ERR_USAGE, "%s: %s", what, e.msg);
    return CS_OK;
}

int cs_request_set(cs_request_t *r, const char *key, const char *value, cs_error_t *err)
{
    cs_error_t e;
    int64_t v;
    int rc;
    if (!strcmp(key, "machine"))
        r->machine = value;
    else if (!strcmp(key, "program"))
        r->program = value;
    else if (!strcmp(key, "coll"))
        r->coll = value;
    else if (!strcmp(key, "algo"))
        r->algo = value;
    else if (!strcmp(key, "order"))
        r->order = value;
    else if (!strcmp(key, "validate"))
        r->validate = 1;
    else if (!strcmp(key, "force"))
        r->force = 1;
    else if (!strcmp(key, "windowed"))
        r->windowed = 1;
    else if (!strcmp(key, "whole"))
        r->windowed = -1;
    else if (!strcmp(key, "bytes")) {
        if (cs_units_parse_bytes(value, &v, &e) != CS_OK)
            return cs_error_set(err, CS_ERR_USAGE, "--bytes: %s", e.msg);
        r->bytes = v;
        r->bytes_text = value;
    } else if (!strcmp(key, "root")) {
        if ((rc = request_int("--root", value, &v, err)))
            return rc;
        r->root = v;
        r->has_root = 1;
    } else if (!strcmp(key, "ranks")) {
        if ((rc = request_int("--ranks", value, &v, err)))
            return rc;
        if (v < 1)
            return cs_error_set(err, CS_ERR_USAGE, "--ranks: need at least 1 rank, got %s",
                                value);
        r->ranks = v;
    } else if (!strcmp(key, "opt")) {
        if (!strchr(value, '=') || value[0] == '=')
            return cs_error_set(err, CS_ERR_USAGE, "--opt '%s': expected KEY=VALUE", value);
        return cs_request_add_opt(r, value, err);
    } else if (!strcmp(key, "mode")) {
        cs_net_mode_t mode;
        if (cs_net_parse_mode(value, &mode, &e) != CS_OK)
            return cs_error_set(err, CS_ERR_USAGE, "--mode: %s", e.msg);
        r->mode = mode;
    } else if (!strcmp(key, "queue")) {
        cs_queue_kind_t q;
        if (cs_request_parse_queue(value, &q, &e) != CS_OK)
            return cs_error_set(err, CS_ERR_USAGE, "--queue: %s", e.msg);
        r->queue = q;
    } else if (!strcmp(key, "iterations") || !strcmp(key, "warmup") ||
               !strcmp(key, "between") || !strcmp(key, "loop")) {
        return cs_loop_set(&r->loop, key, value, err);
    } else {
        return cs_error_set(err, CS_ERR_USAGE, "unknown request field '%s'; valid: machine, "
                            "program, coll, algo, order, bytes, root, ranks, opt, validate, force, "
                            "windowed, whole, mode, queue, iterations, warmup, between, loop", key);
    }
    return CS_OK;
}

int cs_request_check_kind(const cs_request_t *r, int need_machine, cs_error_t *err)
{
    if (need_machine && !r->machine)
        return cs_error_set(err, CS_ERR_USAGE, "missing --machine SPEC");
    if (r->program && r->coll)
        return cs_error_set(err, CS_ERR_USAGE, "--program and --coll exclude each other: run a "
                            "GOAL schedule or a collective algorithm");
    if (!r->program && !r->coll)
        return cs_error_set(err, CS_ERR_USAGE, "missing --program FILE or --coll NAME");
    return CS_OK;
}

int cs_request_check_keys(const cs_request_t *r, int timeline, cs_error_t *err)
{
    (void)timeline; /* a windowed run keeps its ops for a timeline (engine/exec.h) */
    if (r->windowed > 0 && r->loop.style != CS_LOOP_STYLE_NONE)
        return cs_error_set(err, CS_ERR_USAGE, "--windowed and a benchmark loop (--iterations, "
                            "--warmup, --between, --loop) exclude each other: a loop repeats the "
                            "whole program, which a window does not keep");
    if (!r->coll && r->loop.style != CS_LOOP_STYLE_NONE)
        return cs_error_set(err, CS_ERR_USAGE, "a benchmark loop (--iterations, --warmup, "
                            "--between, --loop) needs --coll: it repeats a collective");
    if (!r->coll) {
        const char *only = r->algo ? "--algo" : r->bytes_text ? "--bytes" : r->has_root ? "--root"
                         : r->ranks ? "--ranks" : r->order ? "--order" : r->nopts ? "--opt"
                         : r->validate ? "--validate" : r->windowed > 0 ? "--windowed"
                         : r->windowed < 0 ? "--whole" : NULL;
        if (only)
            return cs_error_set(err, CS_ERR_USAGE, "%s needs --coll (it describes a collective "
                                "run)", only);
    }
    return CS_OK;
}

/* The queue kinds are enumerated through cs_queue_kind_name (which names an
 * unknown kind "unknown"), so that a new implementation in core/queue shows
 * up in --queue, in help texts and in `collsim bench` without edits here. */
int cs_request_queue_kinds(void)
{
    int n = 0;
    while (n < REQUEST_MAX_QUEUE_KINDS) {
        const char *name = cs_queue_kind_name((cs_queue_kind_t)n);
        if (!name || strcmp(name, "unknown") == 0)
            break;
        n++;
    }
    return n;
}

void cs_request_queue_names(char *buf, size_t len, const char *sep)
{
    buf[0] = '\0';
    for (int k = 0; k < cs_request_queue_kinds(); k++) {
        strncat(buf, k ? sep : "", len - strlen(buf) - 1);
        strncat(buf, cs_queue_kind_name((cs_queue_kind_t)k), len - strlen(buf) - 1);
    }
}

int cs_request_parse_queue(const char *text, cs_queue_kind_t *out, cs_error_t *err)
{
    char valid[256];
    for (int k = 0; k < cs_request_queue_kinds(); k++) {
        if (strcmp(text, cs_queue_kind_name((cs_queue_kind_t)k)) == 0) {
            *out = (cs_queue_kind_t)k;
            return CS_OK;
        }
    }
    cs_request_queue_names(valid, sizeof valid, ", ");
    return cs_error_set(err, CS_ERR_USAGE, "unknown event queue '%s'; valid: %s", text, valid);
}

/* ---- the collective ------------------------------------------------------------ */

void cs_request_coll_destroy(cs_request_coll_t *c)
{
    if (c->has_opts)
        cs_spec_destroy(&c->opts);
    cs_algofile_free(c->algo_file);
    free(c->rank_to_node);
    cs_machine_hints_destroy(&c->place);
    memset(c, 0, sizeof *c);
}

/* Reads an order file: one node id per line; blank lines and text after
 * '#' are ignored.  Errors name file:line.  *n gets the count. */
static int request_read_order_file(const char *path, int nodes, int32_t **out, int *n,
                               cs_error_t *err)
{
    FILE *f = fopen(path, "r");
    char line[256];
    int lineno = 0, count = 0, rc = CS_OK;
    int32_t *ids, *first_line;
    *out = NULL;
    *n = 0;
    if (!f)
        return cs_error_set(err, CS_ERR_IO,
                            "--order '%s': not natural, ring or snake, and cannot open it as a "
                            "file: %s",
                            path, strerror(errno));
    ids = cs_malloc((size_t)nodes * sizeof *ids);
    first_line = cs_calloc((size_t)nodes, sizeof *first_line); /* 0: not seen */
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end, *hash;
        long long v;
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: line too long", path, lineno);
            break;
        }
        if ((hash = strchr(p, '#')))
            *hash = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || *p == '\0')
            continue;
        errno = 0;
        v = strtoll(p, &end, 10);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end == p || *end || errno) {
            p[strcspn(p, "\r\n")] = '\0';
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: '%s' is not a node id (one integer per "
                              "line)", path, lineno, p);
            break;
        }
        if (v < 0 || v >= nodes) {
            rc = cs_error_set(err, CS_ERR_RANGE, "%s:%d: node %lld is outside the machine's "
                              "nodes 0..%d", path, lineno, v, nodes - 1);
            break;
        }
        if (first_line[v]) {
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: node %lld is listed twice (first at "
                              "line %d)", path, lineno, v, first_line[v]);
            break;
        }
        first_line[v] = lineno;
        ids[count++] = (int32_t)v;
    }
    if (rc == CS_OK && ferror(f))
        rc = cs_error_set(err, CS_ERR_IO, "%s: read error", path);
    if (rc == CS_OK && count == 0)
        rc = cs_error_set(err, CS_ERR_PARSE, "%s: lists no node ids", path);
    fclose(f);
    free(first_line);
    if (rc) {
        free(ids);
        return rc;
    }
    *out = ids;
    *n = count;
    return CS_OK;
}

/* Whether name is one of the orders of cs_request_node_order. */
static int request_is_node_order(const char *name)
{
    return !strcmp(name, "natural") || !strcmp(name, "ring") || !strcmp(name, "snake");
}

int cs_request_node_order(const cs_machine_t *m, const char *name, int n, int32_t *v)
{
    if (!strcmp(name, "ring")) {
        for (int i = 0; i < n; i++)
            v[i] = m->ring_order ? m->ring_order[i] : i;
    } else if (!strcmp(name, "snake")) {
        int rows = m->grid_rows, cols = m->grid_cols, k = 0;
        if (rows <= 0 || cols <= 0 || (int64_t)rows * cols != cs_machine_nodes(m))
            return -1;
        /* boustrophedon: even rows left to right, odd rows right to left, so
         * consecutive ranks are always neighbours on a mesh */
        for (int r = 0; r < rows && k < n; r++)
            for (int c = 0; c < cols && k < n; c++)
                v[k++] = r * cols + (r % 2 ? cols - 1 - c : c);
    } else {
        for (int i = 0; i < n; i++)
            v[i] = i;
    }
    return 0;
}

/* The node order --order names, as all the nodes it lists (*n of them). */
static int request_order(const cs_request_t *a, const cs_machine_t *m, int32_t **out, int *n,
                         cs_error_t *err)
{
    int nodes = cs_machine_nodes(m);
    const char *o = a->order ? a->order : "natural";
    int32_t *v;
    if (!request_is_node_order(o))
        return request_read_order_file(o, nodes, out, n, err);
    v = cs_malloc((size_t)nodes * sizeof *v);
    if (cs_request_node_order(m, o, nodes, v)) {
        free(v);
        return cs_error_set(err, CS_ERR_USAGE,
                            "--order snake needs a machine with a grid (mesh, torus, ...); "
                            "'%s' has none; use natural, ring or a file",
                            m->spec);
    }
    *out = v;
    *n = nodes;
    return CS_OK;
}

/* Parses the --opt list into one spec (the algorithm reads it). */
static int request_coll_opts(const cs_request_t *a, cs_request_coll_t *c, cs_error_t *err)
{
    size_t len = 8;
    char *text;
    int rc;
    if (!a->nopts)
        return CS_OK;
    for (int i = 0; i < a->nopts; i++)
        len += strlen(a->opts[i]) + 1;
    text = cs_malloc(len);
    strcpy(text, "opts:");
    for (int i = 0; i < a->nopts; i++) {
        if (i)
            strcat(text, ",");
        strcat(text, a->opts[i]);
    }
    rc = cs_spec_parse(text, &c->opts, err);
    free(text);
    if (rc) {
        cs_error_prefix(err, "--opt");
        return rc;
    }
    c->has_opts = 1;
    return CS_OK;
}

void cs_request_placement_hints(const cs_machine_t *m, int P, cs_request_coll_t *c)
{
    cs_machine_hints_destroy(&c->place);
    cs_machine_hints_init(&c->place, m, P, c->rank_to_node);
    c->hints = c->place.coll;
}

int cs_request_find_algo(cs_coll_kind_t kind, const char *name, const cs_machine_env_t *env,
                         const cs_coll_algo_t **out, cs_coll_algo_t **owned, cs_error_t *err)
{
    const char *file = NULL, *format = cs_algofile_format(name, &file);
    cs_source_t src = {file, NULL, 0};
    int rc;
    *owned = NULL;
    if (name && !strcmp(name, "nccl")) { /* chosen per call (cs_request_nccl_choose) */
        *out = cs_ncclpick_algo(kind);
        return CS_OK;
    }
    if (!format)
        return cs_coll_find(kind, name, out, err);
    *out = NULL;
    if (env && env->files) { /* a request's own files, never a path */
        const cs_source_t *f = cs_files_find(env->files, file);
        if (!f)
            return cs_error_set(err, CS_ERR_USAGE, "--algo %s: no file '%s' in the request's "
                                "files", name, file);
        src = *f;
    }
    if ((rc = cs_algofile_read(format, &src, kind, name, owned, err)))
        return rc;
    *out = *owned;
    return CS_OK;
}

/* An in-network algorithm's ranks P.. are the reducing switches: each
 * runs on its switch (issue 36).  Again after `--algo nccl` chooses. */
static void request_place_switches(cs_request_coll_t *c)
{
    int P = c->args.P, extra = cs_coll_extra_ranks(c->algo, &c->args);
    if (extra > 0) {
        c->rank_to_node = cs_realloc(c->rank_to_node,
                                     (size_t)(P + extra) * sizeof *c->rank_to_node);
        memcpy(c->rank_to_node + P, c->place.sw_node, (size_t)extra * sizeof *c->rank_to_node);
    }
}

/* `--algo nccl` (api/ncclpick.h): the options NCCL's choice takes, read
 * once per prepared collective: nchannels (the communicator's channels,
 * before the model cuts them down for a small call), the other keys of
 * NCCL's algorithms but proto (chunk, ...: passed on to the algorithm
 * run), nvls and collnet (0 or 1: whether the machine has NVLink SHARP
 * or a network that reduces; default: what its reducing switches are,
 * request_nccl_switches), then the model's
 * inputs from the machine and the choice for c->args.bytes. */
/* What the machine's reducing switches (cs_coll_hints_t.nswitches) are to
 * NCCL: a switch whose member ranks all lie in one node (the group hint;
 * the whole machine without one) is NVLink SHARP, NVLS; one whose members
 * span nodes, or that has none of its own (above the leaves), is a
 * network that reduces, CollNet (SHARP). */
static void request_nccl_switches(const cs_request_coll_t *c, int64_t *nvls, int64_t *collnet)
{
    const cs_coll_hints_t *h = &c->hints;
    *nvls = *collnet = 0;
    for (int s = 0; s < h->nswitches; s++) {
        int32_t first = h->sw_first[s], end = h->sw_first[s + 1];
        int one_node = end > first;
        for (int32_t i = first + 1; i < end && h->group; i++)
            one_node &= h->group[h->sw_member[i]] == h->group[h->sw_member[first]];
        if (one_node)
            *nvls = 1;
        else
            *collnet = 1;
    }
}

static int request_nccl_setup(const cs_machine_t *m, cs_request_coll_t *c, cs_error_t *err)
{
    static const char *const valid[] = {CS_NCCL_KEYS, "nvls", "collnet", NULL};
    cs_nccl_opts_t o;
    int64_t nvls, collnet, nvls_d, collnet_d;
    int rc;
    request_nccl_switches(c, &nvls_d, &collnet_d);
    if (c->has_opts && cs_spec_get(&c->opts, "proto"))
        return cs_error_set(err, CS_ERR_USAGE, "--opt proto: --algo nccl chooses the protocol "
                            "as NCCL's model does; to fix one, run the algorithm itself "
                            "(--algo nccl-ring --opt proto=ll)");
    /* the options the chosen algorithm takes as they are (chunk, ...):
     * every one but the choice's own */
    for (int i = 0; c->has_opts && i < c->opts.nkv; i++) {
        const cs_spec_kv_t *kv = &c->opts.kv[i];
        size_t len = strlen(c->nccl_pass);
        if (!strcmp(kv->key, "nchannels") || !strcmp(kv->key, "nvls") ||
            !strcmp(kv->key, "collnet"))
            continue;
        if (snprintf(c->nccl_pass + len, sizeof c->nccl_pass - len, ",%s=%s", kv->key,
                     kv->value) >= (int)(sizeof c->nccl_pass - len))
            return cs_error_set(err, CS_ERR_USAGE, "--opt: the options of --algo nccl are "
                                "longer than %d characters", (int)sizeof c->nccl_pass - 1);
    }
    if ((rc = cs_nccl_opts_read(&c->args, &o, err)) ||
        (rc = cs_coll_opt_int(&c->args, "nvls", nvls_d, 0, 1, &nvls, err)) ||
        (rc = cs_coll_opt_int(&c->args, "collnet", collnet_d, 0, 1, &collnet, err)) ||
        (c->has_opts && (rc = cs_spec_check_unused(&c->opts, valid, err)))) {
        cs_error_prefix(err, "--opt");
        return rc;
    }
    if ((rc = cs_ncclpick_inputs(m, &c->args, c->rank_to_node, o.nchannels, (int)nvls,
                                 (int)collnet, &c->nccl.in, err)))
        return rc;
    c->has_nccl = 1;
    return cs_request_nccl_choose(c, err);
}

int cs_request_nccl_choose(cs_request_coll_t *c, cs_error_t *err)
{
    static const char *const protos[CS_PROTO_COUNT] = {"none", "simple", "ll", "ll128"};
    cs_ncclpick_t *pk = &c->nccl;
    char size[32], opts[224];
    int rc;
    pk->in.bytes = c->args.bytes;
    if ((rc = cs_nccl_model(&pk->in, &pk->out, err))) {
        cs_error_prefix(err, "--algo nccl");
        return rc;
    }
    pk->chosen = 1;
    pk->algo = pk->out.algo;
    pk->proto = pk->out.proto;
    pk->nchannels = pk->out.nchannels;
    pk->estimate_us = pk->out.time_us;
    const char *name = cs_nccl_algo_suite(pk->algo);
    cs_units_format_bytes(c->args.bytes, size, sizeof size);
    /* the suite's nccl-nvls runs NVLS with CollNet where the network
     * reduces, NVLSTree where it does not: each only there */
    if ((pk->algo == CS_NCCL_NVLS_TREE && pk->in.collnet) ||
        (pk->algo == CS_NCCL_NVLS && pk->in.nnodes > 1 && !pk->in.collnet))
        return cs_error_set(err, CS_ERR_USAGE, "--algo nccl: NCCL's model picks %s/%s for %s "
                            "of %s on %d ranks in %d nodes; the suite's nccl-nvls runs %s on "
                            "this machine", cs_nccl_algo_name(pk->algo), cs_proto_name(pk->proto),
                            cs_coll_name(c->args.kind), size, c->args.P, pk->in.nnodes,
                            pk->in.collnet ? "NVLS with CollNet" : "NVLSTree");
    /* c->algo stays what it was on failure (a sweep's other sizes, its
     * --predict, read it) */
    const cs_coll_algo_t *found;
    if (!name || cs_coll_find(c->args.kind, name, &found, err) != CS_OK)
        return cs_error_set(err, CS_ERR_USAGE, "--algo nccl: NCCL's model picks %s/%s for %s "
                            "of %s on %d ranks in %d nodes, and the suite has no %s/%s to run "
                            "it", cs_nccl_algo_name(pk->algo), cs_proto_name(pk->proto),
                            cs_coll_name(c->args.kind), size, c->args.P, pk->in.nnodes,
                            cs_coll_name(c->args.kind), name ? name : "?");
    c->algo = found;
    /* the options of the suite's algorithm: the model's protocol and
     * channels, the user's others */
    snprintf(opts, sizeof opts, "opts:proto=%s,nchannels=%d%s", protos[pk->proto],
             pk->nchannels, c->nccl_pass);
    if (c->has_opts)
        cs_spec_destroy(&c->opts);
    c->has_opts = 0;
    c->args.opts = NULL;
    if ((rc = cs_spec_parse(opts, &c->opts, err)))
        return rc;
    c->has_opts = 1;
    c->args.opts = &c->opts;
    request_place_switches(c);
    return CS_OK;
}

int cs_request_nccl_estimate(const cs_machine_t *m, const cs_request_coll_t *c,
                             cs_ncclpick_t *out, cs_error_t *err)
{
    cs_nccl_opts_t o;
    cs_coll_args_t a = c->args;
    int rc, algo = c->algo ? cs_ncclpick_algo_of(c->algo->name) : -1;
    if (c->has_nccl) {
        *out = c->nccl;
        return CS_OK;
    }
    memset(out, 0, sizeof *out);
    if (algo < 0)
        return cs_error_set(err, CS_ERR_USAGE, "%s/%s is not one of NCCL's algorithms",
                            cs_coll_name(a.kind), c->algo ? c->algo->name : "?");
    if ((rc = cs_nccl_opts_read(&a, &o, err)))
        return rc;
    int nvls = algo == CS_NCCL_NVLS || algo == CS_NCCL_NVLS_TREE;
    int collnet = algo == CS_NCCL_COLLNET_DIRECT || algo == CS_NCCL_COLLNET_CHAIN;
    if ((rc = cs_ncclpick_inputs(m, &a, c->rank_to_node, o.nchannels, nvls, collnet, &out->in,
                                 err)) ||
        (rc = cs_nccl_model(&out->in, &out->out, err)))
        return rc;
    /* nccl-nvls between nodes is NVLSTree unless the network reduces */
    if (algo == CS_NCCL_NVLS && out->in.nnodes > 1 && !out->in.collnet)
        algo = CS_NCCL_NVLS_TREE;
    int p = o.proto == CS_PROTO_LL ? 0 : o.proto == CS_PROTO_LL128 ? 1 : 2;
    if (out->out.time[algo][p] < 0)
        return cs_error_set(err, CS_ERR_USAGE, "NCCL's model has no %s/%s for %s on %d ranks in "
                            "%d nodes (docs/nccl.md)", cs_nccl_algo_name((cs_nccl_algo_t)algo),
                            cs_proto_name(o.proto), cs_coll_name(a.kind), a.P, out->in.nnodes);
    out->algo = (cs_nccl_algo_t)algo;
    out->proto = o.proto;
    out->nchannels = o.nchannels;
    out->estimate_us = out->out.time[algo][p];
    return CS_OK;
}

/* Everything before building: the algorithm, P, the placement and the
 * hints in rank space. */
int cs_request_coll_prepare(const cs_request_t *a, const cs_machine_t *m, cs_request_coll_t *c,
                            cs_error_t *err)
{
    cs_coll_kind_t kind;
    int nodes = cs_machine_nodes(m), norder = 0, P, rc;
    int32_t *order = NULL;

    memset(c, 0, sizeof *c);
    if ((rc = cs_coll_parse(a->coll, &kind, err)))
        return rc;
    if ((rc = cs_request_find_algo(kind, a->algo, a->env, &c->algo, &c->algo_file, err)))
        return rc;
    /* `--algo nccl`: the algorithm is chosen below, once the ranks are known */
    int nccl = c->algo == cs_ncclpick_algo(kind);
    if (a->has_root && !cs_coll_rooted(kind))
        return cs_error_set(err, CS_ERR_USAGE, "--root: %s has no root (rooted collectives: "
                            "broadcast, reduce, gather, scatter)", cs_coll_name(kind));
    if (!a->bytes_text && kind != CS_COLL_BARRIER)
        return cs_error_set(err, CS_ERR_USAGE, "missing --bytes N for %s", cs_coll_name(kind));
    if ((rc = request_order(a, m, &order, &norder, err)))
        return rc;
    snprintf(c->order_name, sizeof c->order_name, "%s", a->order ? a->order : "natural");

    P = a->ranks ? (int64_t)a->ranks > nodes ? -1 : (int)a->ranks : norder;
    if (P < 0 || P > norder) {
        int fileish = norder < nodes;
        free(order);
        if (fileish)
            return cs_error_set(err, CS_ERR_RANGE, "--ranks %lld: the order %s lists only %d "
                                "nodes", (long long)a->ranks, a->order, norder);
        return cs_error_set(err, CS_ERR_RANGE, "--ranks %lld: machine '%s' has only %d %s",
                            (long long)a->ranks, m->spec, nodes, cs_machine_rank_noun(m, nodes));
    }
    if (a->has_root && (a->root < 0 || a->root >= P)) {
        free(order);
        return cs_error_set(err, CS_ERR_RANGE, "--root %lld is outside ranks 0..%d",
                            (long long)a->root, P - 1);
    }
    c->rank_to_node = cs_malloc((size_t)P * sizeof *c->rank_to_node);
    memcpy(c->rank_to_node, order, (size_t)P * sizeof *order);
    free(order);

    cs_request_placement_hints(m, P, c);
    if ((rc = request_coll_opts(a, c, err)))
        return rc;
    c->args = (cs_coll_args_t){kind, P, a->bytes, a->has_root ? (int)a->root : 0,
                               m->net.unit_bytes, &c->hints, c->has_opts ? &c->opts : NULL,
                               !a->validate};
    int rc2 = nccl ? request_nccl_setup(m, c, err) : CS_OK;
    if (rc2 == CS_OK)
        request_place_switches(c);
    return rc2;
}

int cs_request_model(const cs_machine_t *m, const cs_request_coll_t *c, cs_model_t *out,
                     cs_error_t *err)
{
    const cs_coll_args_t *ca = &c->args;
    cs_model_request_t req = {ca->kind, c->algo->name, ca->P, ca->bytes, ca->root,
                              c->hints.grid_rows, c->hints.grid_cols,
                              c->has_opts ? c->opts.kv : NULL, c->has_opts ? c->opts.nkv : 0};
    return cs_machine_predict(m, &req, out, err);
}

/* Issue 19: a collective's size is bounded like an op's (core/checked.h),
 * before an algorithm multiplies it. */
static int request_check_bytes(const cs_request_coll_t *c, cs_error_t *err)
{
    if (c->args.bytes > CS_BYTES_MAX)
        return cs_error_set(err, CS_ERR_RANGE,
                            "--bytes %lld exceeds the maximum of %lld bytes (2^48, 256 TiB; "
                            "docs/limits.md)", (long long)c->args.bytes, (long long)CS_BYTES_MAX);
    return CS_OK;
}

int cs_request_coll_build(const cs_request_coll_t *c, cs_program_t **out, cs_error_t *err)
{
    int rc = request_check_bytes(c, err);
    return rc ? rc : cs_coll_build(c->algo, &c->args, out, err);
}

/* ---- a whole run ------------------------------------------------------------------- */

void cs_request_run_init(cs_request_run_t *run)
{
    memset(run, 0, sizeof *run);
}

void cs_request_run_destroy(cs_request_run_t *run)
{
    cs_coll_check_free(run->check);
    cs_request_coll_destroy(&run->coll);
    cs_exec_result_destroy(&run->result);
    if (run->gen)
        cs_progen_free(run->gen); /* its program too */
    else if (!run->loop)
        cs_program_free(run->program);
    cs_loop_free(run->loop); /* its program too */
    if (!run->machine_borrowed)
        cs_machine_free(run->machine);
    memset(run, 0, sizeof *run);
}

int cs_request_prepare(const cs_request_t *r, cs_request_run_t *run, cs_error_t *err)
{
    int rc;
    if (!r->machine)
        return cs_error_set(err, CS_ERR_USAGE, "missing --machine SPEC");
    if (!r->program == !r->coll)
        return cs_error_set(err, CS_ERR_USAGE, "a request runs either a program or a "
                            "collective (--program or --coll)");
    if ((rc = cs_machine_new_in(r->machine, r->env, &run->machine, err)))
        return rc;
    run->is_coll = r->coll != NULL;
    if (run->is_coll)
        return cs_request_coll_prepare(r, run->machine, &run->coll, err);
    return CS_OK;
}

int cs_request_prepare_on(const cs_request_t *r, cs_machine_t *m, cs_request_run_t *run,
                          cs_error_t *err)
{
    if (!r->program == !r->coll)
        return cs_error_set(err, CS_ERR_USAGE, "a request runs either a program or a "
                            "collective (--program or --coll)");
    run->machine = m;
    run->machine_borrowed = 1;
    run->is_coll = r->coll != NULL;
    if (run->is_coll)
        return cs_request_coll_prepare(r, run->machine, &run->coll, err);
    return CS_OK;
}

/* Limits are checked before a run starts (DESIGN.md, Errors). */
static int request_check_fits(const cs_request_t *r, const cs_machine_t *m, const cs_program_t *p,
                              cs_error_t *err)
{
    int ranks = cs_program_nranks(p), nodes = cs_machine_nodes(m);
    if (ranks > nodes)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s: program has %d ranks but machine '%s' has only %d %s; "
                            "choose a machine with at least %d %s",
                            r->program, ranks, m->spec, nodes, cs_machine_rank_noun(m, nodes),
                            ranks, cs_machine_rank_noun(m, ranks));
    return CS_OK;
}

/* The barrier between a loop's iterations (--between barrier[:ALGO]): the
 * suite's barrier on the collective's ranks, with its hints, without data
 * descriptors (validation checks the iterations, not the barriers). */
static int request_loop_barrier(const cs_request_t *r, const cs_request_coll_t *c,
                                cs_program_t **out, char *name, size_t len, cs_error_t *err)
{
    const cs_coll_algo_t *algo;
    cs_coll_algo_t *owned = NULL;
    cs_coll_args_t a = c->args;
    int rc = cs_request_find_algo(CS_COLL_BARRIER, r->loop.barrier_algo, r->env, &algo, &owned,
                                  err);
    if (rc) {
        cs_error_prefix(err, "--between");
        return rc;
    }
    a.kind = CS_COLL_BARRIER;
    a.bytes = 0;
    a.root = 0;
    a.opts = NULL;
    a.no_data = 1;
    snprintf(name, len, "barrier:%s", algo->name);
    rc = cs_coll_build(algo, &a, out, err);
    if (rc)
        cs_error_prefix(err, "--between barrier/%s", algo->name);
    cs_algofile_free(owned);
    return rc;
}

/* The loop program of a built collective (api/loop.h): run->program
 * becomes the loop's. */
static int request_build_loop(const cs_request_t *r, cs_request_run_t *run, cs_error_t *err)
{
    cs_request_coll_t *c = &run->coll;
    cs_loop_parts_t parts = {0};
    char name[96] = "none";
    int rc;
    if (r->loop.barrier && cs_coll_extra_ranks(c->algo, &c->args))
        return cs_error_set(err, CS_ERR_USAGE, "--between barrier: %s/%s runs on the "
                            "network's reducing switches as well as the ranks, and the barrier "
                            "on the ranks only (loop without it: --between none)",
                            cs_coll_name(c->algo->kind), c->algo->name);
    parts.body = run->program;
    run->program = NULL;
    if (r->loop.barrier &&
        (rc = request_loop_barrier(r, c, &parts.between, name, sizeof name, err))) {
        cs_program_free(parts.body);
        return rc;
    }
    parts.between_name = name;
    parts.style = r->loop.style;
    cs_loop_counts(&r->loop, c->args.bytes, &parts.warmup, &parts.iterations);
    parts.max_ops = r->force ? CS_PROGRAM_MAX_OPS : CS_LOOP_MAX_OPS;
    if ((rc = cs_loop_new(&parts, &run->loop, err)))
        return rc;
    run->program = (cs_program_t *)cs_loop_program(run->loop);
    if (r->validate)
        cs_loop_validate(run->loop, &c->args, REQUEST_VALIDATE_SEED);
    return CS_OK;
}

/* Names the algorithm in a build error, once: the program's own errors
 * (cs_program_finalize) name it already (issue 34 saw it twice). */
static void request_name_error(const cs_request_coll_t *c, cs_error_t *err)
{
    char name[128];
    size_t n = (size_t)snprintf(name, sizeof name, "%s/%s: ", cs_coll_name(c->algo->kind),
                                c->algo->name);
    if (strncmp(err->msg, name, n) != 0)
        cs_error_prefix(err, "%.*s", (int)(n - 2), name);
}

int cs_request_windowed(const cs_request_t *r, const cs_request_coll_t *c)
{
    if (r->windowed > 0)
        return 1; /* asked for: what needs the whole program is refused */
    return r->windowed == 0 && r->coll && !r->keep_program &&
           r->loop.style == CS_LOOP_STYLE_NONE && c->algo && !c->algo_file &&
           !cs_coll_extra_ranks(c->algo, &c->args); /* switches as ranks: whole programs */
}

int cs_request_build(const cs_request_t *r, cs_request_run_t *run, cs_error_t *err)
{
    int rc;
    if (!run->is_coll) {
        if (strcmp(r->program, "-") == 0)
            rc = cs_goal_read_stream(stdin, "<stdin>", &run->program, err);
        else
            rc = cs_goal_read_file(r->program, &run->program, err);
        return rc ? rc : request_check_fits(r, run->machine, run->program, err);
    }
    const cs_request_coll_t *c = &run->coll;
    if (cs_request_windowed(r, c)) {
        /* built while it runs (cs_request_run): only what the window needs */
        if ((rc = request_check_bytes(c, err)) ||
            (rc = cs_coll_generate(c->algo, &c->args, 0, &run->gen, err))) {
            request_name_error(c, err);
            return rc;
        }
        run->program = run->gen->prog;
        /* --validate: the checker's first pass over the algorithm, before
         * the generator builds its first op (the checker hears of its
         * streaming dependencies from the first on).  A dependency on a
         * later op makes the default run whole; any other error is the
         * request's. */
        if (r->validate && (rc = cs_coll_check_new_gen(c->algo, &c->args, run->gen,
                                                       REQUEST_VALIDATE_SEED, &run->check, err))) {
            cs_progen_free(run->gen);
            run->gen = NULL;
            run->program = NULL;
            if (r->windowed != 0 || rc != CS_ERR_USAGE) {
                request_name_error(c, err);
                return rc;
            }
        }
    }
    if (run->gen) {
        /* by default, an algorithm whose first ops depend on later ones
         * (allgather/cns-two-way) runs whole, and so does one with many
         * dependencies per op: the ops ready at time 0 are built now (the
         * executor asks for them first anyway) and tell */
        int probe = r->windowed == 0 ? cs_progen_advance(run->gen, -1, err) : CS_OK;
        int all_at_zero = probe == CS_OK && r->windowed == 0 && run->gen->complete &&
                          cs_program_nops(run->gen->prog) > REQUEST_WINDOW_MIN_REBUILD;
        /* a fan-in may begin only at a later stage (allreduce/gateway: every
         * op of its second stage after every op of the first; on 10,440 Groq
         * TSPs the first stage alone fills the first window, and windowed the
         * run took 2x the CPU and 2.4x the memory of the whole program): the
         * probe builds on to a few times the ops ready at time 0 */
        int32_t probe_to = REQUEST_WINDOW_PROBE * cs_program_nops(run->gen->prog);
        while (probe == CS_OK && r->windowed == 0 && !run->gen->complete &&
               cs_program_nops(run->gen->prog) < probe_to) {
            int32_t had = cs_program_nops(run->gen->prog);
            probe = cs_progen_advance(run->gen, had - 1, err);
            if (cs_program_nops(run->gen->prog) == had)
                break;
        }
        const cs_program_t *wp = run->gen->prog;
        if (all_at_zero || (probe != CS_OK && cs_program_points_forward(wp)) ||
            (probe == CS_OK && r->windowed == 0 &&
             (cs_program_deps_added(wp) > REQUEST_WINDOW_MAX_FANIN * (int64_t)cs_program_nops(wp) ||
              cs_program_njoins(wp) > 0))) {
            cs_coll_check_free(run->check);
            run->check = NULL;
            cs_progen_free(run->gen);
            run->gen = NULL;
            run->program = NULL;
        } else {
            return CS_OK; /* a builder error: the run reports it as a window's */
        }
    }
    if ((rc = cs_request_coll_build(c, &run->program, err))) {
        request_name_error(c, err);
        return rc;
    }
    if (r->loop.style != CS_LOOP_STYLE_NONE)
        return request_build_loop(r, run, err);
    if (r->validate)
        return cs_coll_check_new(&c->args, run->program, REQUEST_VALIDATE_SEED, &run->check, err);
    return CS_OK;
}

void cs_request_exec_opts(const cs_request_t *r, const cs_request_run_t *run,
                          cs_exec_opts_t *opts)
{
    cs_exec_opts_default(opts);
    opts->mode = r->mode;
    opts->queue = r->queue;
    opts->rank_to_node = run->coll.rank_to_node;
    opts->observer = run->check ? cs_coll_check_observer(run->check) : NULL;
    if (r->force)
        opts->max_work = 0;
    if (run->loop)
        cs_loop_exec_opts(run->loop, opts);
}

/* D8 of issue 19: fluid mode is the channel engine's; a machine with its
 * own engine has no fluid mode, and running its engine instead while the
 * summary says fluid would be a wrong answer. */
static int request_check_mode(const cs_machine_t *m, const cs_exec_opts_t *opts,
                              cs_error_t *err)
{
    if (opts->mode == CS_NET_FLUID && m->type->net_new)
        return cs_error_set(err, CS_ERR_USAGE,
                            "--mode fluid: machine '%s' runs its own engine, which has no "
                            "fluid mode; drop --mode fluid", m->type->name);
    return CS_OK;
}

int cs_request_exec(const cs_machine_t *m, const cs_program_t *p, const cs_exec_opts_t *opts,
                    cs_exec_result_t *res, cs_error_t *err)
{
    cs_exec_env_t env;
    int rc = request_check_mode(m, opts, err);
    if (rc)
        return rc;
    cs_machine_exec_env(m, &env);
    return cs_exec_run(&env, p, opts, res, err);
}

int cs_request_exec_gen(const cs_machine_t *m, cs_progen_t *g, const cs_exec_opts_t *opts,
                        cs_exec_result_t *res, cs_error_t *err)
{
    cs_exec_env_t env;
    int rc = request_check_mode(m, opts, err);
    if (rc)
        return rc;
    cs_machine_exec_env(m, &env);
    return cs_exec_run_gen(&env, g, opts, res, err);
}

int cs_request_run(cs_request_run_t *run, const cs_exec_opts_t *opts, cs_error_t *err)
{
    int rc;
    if (run->gen)
        rc = cs_request_exec_gen(run->machine, run->gen, opts, &run->result, err);
    else
        rc = cs_request_exec(run->machine, run->program, opts, &run->result, err);
    if (rc == CS_OK && run->loop) {
        if ((rc = cs_loop_finish(run->loop, &run->result, err))) {
            cs_algofile_explain(run->coll.algo_file, &run->coll.args, err);
            cs_error_prefix(err, "validation failed");
        } else {
            run->coll.loop = cs_loop_result(run->loop);
        }
        run->validated = rc == CS_OK && cs_loop_validating(run->loop);
        return rc;
    }
    if (rc == CS_OK && run->check && (rc = cs_coll_check_verify(run->check, err))) {
        cs_algofile_explain(run->coll.algo_file, &run->coll.args, err);
        cs_error_prefix(err, "validation failed");
    }
    run->validated = rc == CS_OK && run->check != NULL;
    return rc;
}
