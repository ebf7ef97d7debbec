/*
 * replay.c - a trace replayed on a machine (replay.h, docs/replay.md): the
 * options of `collsim replay`, reading a GOAL or SimGrid TI trace (a TI
 * trace's collectives expanded with the suite's algorithms, chosen by
 * --algo-for, for the machine's packet size and hints in rank space), and
 * placing its ranks on the machine's nodes (--map: linear, ring, snake,
 * random:SEED or a file).
 *
 * Moved down from src/app/cmd_replay.c (issue 20) so that the library
 * replays traces as the command line does; the messages are unchanged.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/replay.h"
#include "core/lines.h"
#include "core/shuffle.h"
#include "core/units.h"
#include "io/algofile.h"

/* ---- options ------------------------------------------------------------------ */

void cs_replay_init(cs_replay_t *a)
{
    memset(a, 0, sizeof *a);
    a->flops = 1e9;
}

int cs_replay_is_key(const char *key)
{
    return !strcmp(key, "trace") || !strcmp(key, "format") || !strcmp(key, "map") ||
           !strcmp(key, "algo-for") || !strcmp(key, "flops") || !strcmp(key, "skip-unknown") ||
           !strcmp(key, "comm-group");
}

/* "2.5G" -> 2.5e9 */
static int replay_parse_rate(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno)
        return 0;
    switch (*end) {
    case 'k': v *= 1e3, end++; break;
    case 'M': v *= 1e6, end++; break;
    case 'G': v *= 1e9, end++; break;
    case 'T': v *= 1e12, end++; break;
    default: break;
    }
    if (*end || !(v > 0) || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* --algo-for COLL=ALGO[:key=value,...] */
static int replay_set_algo_for(cs_replay_t *a, const char *arg, cs_error_t *err)
{
    cs_error_t e = {0};
    const char *eq = strchr(arg, '=');
    const cs_coll_algo_t *algo_p = NULL;
    char coll[64], algo[128];
    cs_coll_kind_t kind;
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof coll)
        return cs_error_set(err, CS_ERR_USAGE, "--algo-for '%s': expected "
                            "COLL=ALGO[:key=value,...]", arg);
    snprintf(coll, sizeof coll, "%.*s", (int)(eq - arg), arg);
    const char *colon = strchr(eq + 1, ':');
    size_t n = colon ? (size_t)(colon - eq - 1) : strlen(eq + 1);
    if (n == 0 || n >= sizeof algo)
        return cs_error_set(err, CS_ERR_USAGE, "--algo-for '%s': expected "
                            "COLL=ALGO[:key=value,...]", arg);
    snprintf(algo, sizeof algo, "%.*s", (int)n, eq + 1);
    if (cs_coll_parse(coll, &kind, &e) != CS_OK)
        return cs_error_set(err, CS_ERR_USAGE, "--algo-for '%s': %s", arg, e.msg);
    if (a->algo[kind] || a->algo_file[kind])
        return cs_error_set(err, CS_ERR_USAGE, "--algo-for '%s': %s already has an algorithm "
                            "(%s)", arg, cs_coll_name(kind), a->algo_arg[kind]);
    /* FORMAT:FILE (allreduce=msccl:ring.xml): the rest is the file's name,
     * with no options (a file algorithm takes none); read with the trace */
    const char *file;
    if (cs_algofile_format(eq + 1, &file)) {
        a->algo_file[kind] = eq + 1;
        a->algo_arg[kind] = arg;
        return CS_OK;
    }
    if (cs_coll_find(kind, algo, &algo_p, &e) != CS_OK)
        return cs_error_set(err, CS_ERR_USAGE, "--algo-for '%s': %s", arg, e.msg);
    a->algo[kind] = algo_p;
    a->algo_text[kind] = colon ? colon + 1 : NULL;
    a->algo_arg[kind] = arg;
    return CS_OK;
}

int cs_replay_set(cs_replay_t *a, const char *key, const char *value, cs_error_t *err)
{
    if (!strcmp(key, "trace")) {
        a->trace = value;
    } else if (!strcmp(key, "format")) {
        const cs_trace_format_t *f = cs_trace_format_find(value);
        if (!f && strcmp(value, "auto")) {
            char names[128];
            cs_trace_format_names(names, sizeof names);
            return cs_error_set(err, CS_ERR_USAGE, "--format '%s': expected %s or auto", value,
                                names);
        }
        a->format = f;
    } else if (!strcmp(key, "skip-unknown")) {
        if (!strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "yes"))
            a->skip_unknown = 1;
        else if (!strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "no"))
            a->skip_unknown = 0;
        else
            return cs_error_set(err, CS_ERR_USAGE, "--skip-unknown '%s': expected 1 or 0",
                                value);
    } else if (!strcmp(key, "comm-group")) {
        a->comm_group = value;
    } else if (!strcmp(key, "map")) {
        a->map = value;
    } else if (!strcmp(key, "algo-for")) {
        return replay_set_algo_for(a, value, err);
    } else if (!strcmp(key, "flops")) {
        if (!replay_parse_rate(value, &a->flops))
            return cs_error_set(err, CS_ERR_USAGE, "--flops '%s': expected a rate in flop/s > 0 "
                                "(e.g. 1e9, 2.5G)", value);
        a->flops_text = value;
    } else {
        return cs_error_set(err, CS_ERR_USAGE, "unknown replay option '%s'; valid: trace, "
                            "format, map, algo-for, flops, skip-unknown, comm-group", key);
    }
    return CS_OK;
}

int cs_replay_check_unused(const cs_replay_t *a, cs_error_t *err)
{
    const char *what = NULL;
    if (a->trace)
        return CS_OK;
    if (a->format)
        what = "format";
    else if (a->map)
        what = "map";
    else if (a->flops_text)
        what = "flops";
    else if (a->skip_unknown)
        what = "skip-unknown";
    else if (a->comm_group)
        what = "comm-group";
    for (int k = 0; !what && k < CS_COLL_NKINDS; k++)
        if (a->algo[k] || a->algo_file[k])
            what = "algo-for";
    if (what)
        return cs_error_set(err, CS_ERR_USAGE, "%s needs a trace (it says how a trace is read "
                            "and placed)", what);
    return CS_OK;
}

int cs_replay_check_request(const cs_request_t *r, cs_error_t *err)
{
    const char *what = r->program ? "program" : r->coll ? "coll" : r->algo ? "algo"
                     : r->bytes_text ? "bytes" : r->has_root ? "root" : r->ranks ? "ranks"
                     : r->order ? "order" : r->nopts ? "opt" : r->validate ? "validate"
                     : r->windowed ? "windowed" : NULL;
    if (what)
        return cs_error_set(err, CS_ERR_USAGE, "trace and %s exclude each other: a replay runs "
                            "the trace's own ops (place them with map)", what);
    return CS_OK;
}

/* ---- placement ------------------------------------------------------------- */

int cs_replay_read_map(const char *path, const cs_machine_t *m, int P, int32_t *map,
                       cs_error_t *err)
{
    int nodes = cs_machine_nodes(m), lineno = 0, rc = CS_OK, got;
    cs_lines_t *f;
    if (cs_lines_open_file(path, &f) != CS_OK)
        return cs_error_set(err, CS_ERR_IO,
                            "--map '%s': not linear, ring, snake or random:SEED, and cannot open "
                            "it as a file: %s", path, strerror(errno));
    int *rank_line = cs_calloc((size_t)P, sizeof *rank_line);
    int *node_line = cs_calloc((size_t)nodes, sizeof *node_line);
    char *line = NULL;
    size_t cap = 0;
    while ((got = cs_lines_next_copy(f, &line, &cap)) > 0) {
        char *hash = strchr(line, '#'), *p = line, *e;
        long long rank, node;
        lineno++;
        if (hash)
            *hash = '\0';
        p += strspn(p, " \t\r\n");
        if (!*p)
            continue;
        errno = 0;
        rank = strtoll(p, &e, 10);
        if (e == p || (*e != ' ' && *e != '\t') || errno) {
            p[strcspn(p, "\r\n")] = '\0';
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: '%s': expected `rank node`", path,
                              lineno, p);
            break;
        }
        char *q = e + strspn(e, " \t");
        node = strtoll(q, &e, 10);
        e += strspn(e, " \t\r\n");
        if (e == q || *e || errno) {
            p[strcspn(p, "\r\n")] = '\0';
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: '%s': expected `rank node`", path,
                              lineno, p);
            break;
        }
        if (rank < 0 || rank >= P) {
            rc = cs_error_set(err, CS_ERR_RANGE, "%s:%d: rank %lld is outside the trace's ranks "
                              "0..%d", path, lineno, rank, P - 1);
            break;
        }
        if (node < 0 || node >= nodes) {
            rc = cs_error_set(err, CS_ERR_RANGE, "%s:%d: node %lld is outside the machine's "
                              "nodes 0..%d", path, lineno, node, nodes - 1);
            break;
        }
        if (rank_line[rank]) {
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: rank %lld is mapped twice (first at "
                              "line %d)", path, lineno, rank, rank_line[rank]);
            break;
        }
        if (node_line[node]) {
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: node %lld is given twice (first at "
                              "line %d, to another rank)", path, lineno, node, node_line[node]);
            break;
        }
        rank_line[rank] = node_line[node] = lineno;
        map[rank] = (int32_t)node;
    }
    if (!rc && got < 0)
        rc = cs_lines_error(got, path, lineno, err);
    for (int r = 0; r < P && !rc; r++)
        if (!rank_line[r])
            rc = cs_error_set(err, CS_ERR_PARSE, "%s: rank %d is not mapped; expected one `rank "
                              "node` line for each rank 0..%d", path, r, P - 1);
    free(line);
    free(rank_line);
    free(node_line);
    cs_lines_free(f);
    return rc;
}

/* What a reader's callback needs to place the ranks. */
typedef struct replay_ctx {
    const cs_replay_t *a;
    const cs_machine_t *m;
    cs_replay_run_t *run;
} replay_ctx_t;

/* rank_to_node for P ranks as --map says, and the hints in rank space. */
static int replay_place(const replay_ctx_t *x, int P, cs_error_t *err)
{
    const cs_machine_t *m = x->m;
    const char *map = x->a->map ? x->a->map : "linear";
    int nodes = cs_machine_nodes(m), rc = CS_OK;
    if (P > nodes)
        return cs_error_set(err, CS_ERR_RANGE, "%s: the trace has %d ranks but machine '%s' "
                            "has only %d %s; choose a machine with at least %d %s",
                            x->a->trace, P, m->spec, nodes, cs_machine_rank_noun(m, nodes), P,
                            cs_machine_rank_noun(m, P));
    cs_request_coll_t *c = &x->run->place;
    cs_request_coll_destroy(c);
    c->rank_to_node = cs_malloc((size_t)P * sizeof *c->rank_to_node);
    snprintf(c->order_name, sizeof c->order_name, "%s", map);
    if (!strcmp(map, "linear") || !strcmp(map, "ring") || !strcmp(map, "snake")) {
        /* linear is the natural order under the name traces use */
        if (cs_request_node_order(m, strcmp(map, "linear") ? map : "natural", P,
                                  c->rank_to_node))
            return cs_error_set(err, CS_ERR_USAGE, "--map snake needs a machine with a grid "
                                "(mesh, torus, ...); '%s' has none; use linear, ring, "
                                "random:SEED or a file", m->spec);
    } else if (!strncmp(map, "random:", 7)) {
        int64_t seed;
        cs_error_t e;
        if (cs_units_parse_int(map + 7, &seed, &e) != CS_OK)
            return cs_error_set(err, CS_ERR_USAGE, "--map '%s': the seed must be a "
                                "non-negative integer (random:42)", map);
        int32_t *perm = cs_malloc((size_t)nodes * sizeof *perm);
        cs_shuffle(nodes, (uint64_t)seed, perm);
        memcpy(c->rank_to_node, perm, (size_t)P * sizeof *perm);
        free(perm);
    } else {
        rc = cs_replay_read_map(map, m, P, c->rank_to_node, err);
    }
    if (rc)
        return rc;
    cs_request_placement_hints(m, P, c);
    return CS_OK;
}

/* A reader asks for the hints once it knows P. */
static int replay_prepare(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err)
{
    replay_ctx_t *x = ctx;
    int rc = replay_place(x, P, err);
    *hints = rc ? NULL : &x->run->place.hints;
    return rc;
}

/* ---- reading -------------------------------------------------------------------- */

int cs_replay_load(const cs_replay_t *a, const cs_machine_t *m, cs_replay_run_t *run,
                   cs_error_t *err)
{
    replay_ctx_t x = {a, m, run};
    int rc;
    const cs_trace_format_t *fmt = a->format;
    memset(run, 0, sizeof *run);
    if (!fmt && (rc = cs_trace_format_sniff(a->trace, &fmt, err)))
        return rc;
    run->fmt = fmt;
    for (int k = 0; k < CS_COLL_NKINDS && !fmt->expands_collectives; k++)
        if (a->algo[k] || a->algo_file[k])
            return cs_error_set(err, CS_ERR_USAGE, "--algo-for %s: %s is a GOAL schedule, "
                                "which names its own ops; --algo-for applies to TI and Chakra "
                                "traces", a->algo_arg[k], a->trace);
    if (strcmp(fmt->name, "chakra") && (a->skip_unknown || a->comm_group))
        return cs_error_set(err, CS_ERR_USAGE, "--%s: %s is read as %s; --skip-unknown and "
                            "--comm-group apply to Chakra traces",
                            a->skip_unknown ? "skip-unknown" : "comm-group", a->trace,
                            fmt->name);
    cs_trace_opts_t o;
    memset(&o, 0, sizeof o);
    o.flops_per_second = a->flops;
    o.unit = m->net.unit_bytes;
    o.prepare = replay_prepare;
    o.prepare_ctx = &x;
    o.max_ranks = cs_machine_nodes(m);
    o.skip_unknown = a->skip_unknown;
    o.comm_group = a->comm_group;
    for (int k = 0; k < CS_COLL_NKINDS && fmt->expands_collectives; k++) {
        o.algo[k] = a->algo[k];
        if (a->algo_file[k]) {
            if ((rc = cs_request_find_algo((cs_coll_kind_t)k, a->algo_file[k], NULL, &o.algo[k],
                                           &run->algo_file[k], err))) {
                cs_error_prefix(err, "--algo-for %s", a->algo_arg[k]);
                return rc;
            }
        }
        if (a->algo_text[k]) {
            char text[512];
            snprintf(text, sizeof text, "opts:%s", a->algo_text[k]);
            if ((rc = cs_spec_parse(text, &run->opts[k], err))) {
                cs_error_prefix(err, "--algo-for %s", a->algo_arg[k]);
                return rc;
            }
            run->has_opts[k] = 1;
            o.algo_opts[k] = &run->opts[k];
        }
    }
    if ((rc = fmt->read(a->trace, &o, &run->p, &run->info, err)))
        return rc;
    /* a trace without collectives never asked for the placement */
    if (!run->place.rank_to_node)
        rc = replay_place(&x, cs_program_nranks(run->p), err);
    return rc;
}

void cs_replay_run_destroy(cs_replay_run_t *run)
{
    for (int k = 0; k < CS_COLL_NKINDS; k++) {
        if (run->has_opts[k])
            cs_spec_destroy(&run->opts[k]);
        cs_algofile_free(run->algo_file[k]);
    }
    cs_request_coll_destroy(&run->place);
    cs_program_free(run->p);
    memset(run, 0, sizeof *run);
}

void cs_replay_exec_opts(const cs_request_t *r, const cs_replay_run_t *run,
                         cs_exec_opts_t *opts)
{
    cs_exec_opts_default(opts);
    opts->mode = r->mode;
    opts->queue = r->queue;
    opts->rank_to_node = run->place.rank_to_node;
    if (r->force)
        opts->max_work = 0;
}
