/*
 * cmd_replay.c - `collsim replay`: a trace (a GOAL schedule or a SimGrid
 * time-independent trace) replayed on one machine, or on several for a
 * comparison table (docs/replay.md, docs/cli.md).
 *
 * The pipeline: make the machine; read the trace (a TI trace's collectives
 * are expanded with the suite's algorithms, chosen by --algo-for, for the
 * machine's packet size and hints in rank space); place the trace's ranks
 * on the machine's nodes (--map); run; report with the summary and JSON
 * writers of `collsim run` (api/report.h).  The engine's options (--mode,
 * --queue) are a request's fields (api/request.h).  With --machines the trace is read
 * again for every machine, because a TI trace's expansion depends on it.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "coll/coll.h"
#include "engine/net.h"
#include "core/lines.h"
#include "core/program.h"
#include "core/units.h"
#include "io/goal.h"
#include "io/ti.h"
#include "machines/machine.h"

#define REPLAY_MAX_MACHINES 32

typedef enum { FMT_AUTO, FMT_GOAL, FMT_TI } replay_fmt_t;

typedef struct replay_args {
    const char *trace;
    const char *machines[REPLAY_MAX_MACHINES]; /* --machines, split */
    char *machines_buf;                        /* what they point into (owned) */
    int nmachines;
    replay_fmt_t format;
    const char *map;   /* NULL: linear */
    const char *json;
    int with_timing;
    cs_request_t req;  /* --machine, the engine's mode and queue */
    double flops;
    const cs_coll_algo_t *algo[CS_COLL_NKINDS];
    const char *algo_text[CS_COLL_NKINDS]; /* the options after ':' or NULL */
    const char *algo_arg[CS_COLL_NKINDS];  /* the --algo-for as typed */
} replay_args_t;

/* One replay's products. */
typedef struct replay_run {
    cs_machine_t *m;
    cs_program_t *p;
    cs_request_coll_t place; /* rank_to_node (NULL until placed), hints; no algorithm */
    cs_ti_info_t info;
    int is_ti;
    cs_exec_result_t res;
    cs_spec_t opts[CS_COLL_NKINDS];
    int has_opts[CS_COLL_NKINDS];
    const replay_args_t *a;
} replay_run_t;

static void replay_help(void)
{
    char queues[256];
    cs_request_queue_names(queues, sizeof queues, ", ");
    printf("Usage: collsim replay TRACE --machine SPEC [OPTIONS]\n"
           "   or: collsim replay TRACE --machines 'SPEC;SPEC;...' [OPTIONS]\n"
           "\n"
           "Replays a trace on a machine and prints a summary (or writes JSON); with\n"
           "--machines, one row per machine.  TRACE is a GOAL schedule or a SimGrid\n"
           "time-independent trace (one combined file, or an index of per-rank files).\n"
           "\n"
           "  -m, --machine SPEC       the machine (see 'collsim list machines')\n"
           "      --machines LIST      several machines separated by ';': a table\n"
           "  -f, --format FMT         goal, ti or auto (default: from the content)\n"
           "      --map MAP            trace rank r runs on node: linear (r, the default),\n"
           "                           ring (the machine's ring order), snake (boustrophedon\n"
           "                           over its grid), random:SEED (a shuffle), or a FILE of\n"
           "                           `rank node` lines\n"
           "      --algo-for C=A[:k=v,...]  the algorithm (and options) of collective C in\n"
           "                           a TI trace, e.g. allreduce=ring (repeatable; default:\n"
           "                           the collective's default)\n"
           "      --flops RATE         TI compute speed in flop/s (default 1G: 1 flop = 1 ns);\n"
           "                           suffixes k, M, G, T\n"
           "  -M, --mode MODE          network fidelity: packet (default) or fluid\n"
           "      --force              run a packet-mode run above the work limit (docs/limits.md)\n"
           "  -j, --json FILE          write the JSON result to FILE ('-' = stdout)\n"
           "      --no-timing          no wall-clock fields (identical output every run)\n"
           "  -q, --queue KIND         event queue: %s (default %s)\n"
           "  -h, --help               show this help and exit\n"
           "\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 5 model error.\n",
           queues, cs_queue_kind_name(CS_QUEUE_DEFAULT));
}

/* "2.5G" -> 2.5e9 */
static int parse_rate(const char *text, double *out)
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

static void parse_algo_for(replay_args_t *a, const char *arg)
{
    cs_error_t err = {0};
    const char *eq = strchr(arg, '=');
    char coll[64], algo[128];
    cs_coll_kind_t kind;
    if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof coll)
        cs_app_usage_error("replay", "--algo-for '%s': expected COLL=ALGO[:key=value,...]", arg);
    snprintf(coll, sizeof coll, "%.*s", (int)(eq - arg), arg);
    const char *colon = strchr(eq + 1, ':');
    size_t n = colon ? (size_t)(colon - eq - 1) : strlen(eq + 1);
    if (n == 0 || n >= sizeof algo)
        cs_app_usage_error("replay", "--algo-for '%s': expected COLL=ALGO[:key=value,...]", arg);
    snprintf(algo, sizeof algo, "%.*s", (int)n, eq + 1);
    if (cs_coll_parse(coll, &kind, &err) != CS_OK)
        cs_app_usage_error("replay", "--algo-for '%s': %s", arg, err.msg);
    if (a->algo[kind])
        cs_app_usage_error("replay", "--algo-for '%s': %s already has an algorithm (%s)", arg,
                           cs_coll_name(kind), a->algo_arg[kind]);
    if (cs_coll_find(kind, algo, &a->algo[kind], &err) != CS_OK)
        cs_app_usage_error("replay", "--algo-for '%s': %s", arg, err.msg);
    a->algo_text[kind] = colon ? colon + 1 : NULL;
    a->algo_arg[kind] = arg;
}

static void split_machines(replay_args_t *a, const char *list)
{
    a->machines_buf = cs_strdup(list);
    a->nmachines = cs_app_split_list(a->machines_buf, " \t", a->machines, REPLAY_MAX_MACHINES);
    if (a->nmachines < 0)
        cs_app_usage_error("replay", "--machines: at most %d machines", REPLAY_MAX_MACHINES);
    if (!a->nmachines)
        cs_app_usage_error("replay", "--machines '%s': no machine spec (separate specs with ';')",
                           list);
}

static void replay_parse_args(int argc, char **argv, replay_args_t *a)
{
    enum { OPT_NO_TIMING = 256, OPT_MAP, OPT_ALGO_FOR, OPT_MACHINES, OPT_FLOPS };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"machines", required_argument, NULL, OPT_MACHINES},
        {"format", required_argument, NULL, 'f'},
        {"map", required_argument, NULL, OPT_MAP},
        {"algo-for", required_argument, NULL, OPT_ALGO_FOR},
        {"flops", required_argument, NULL, OPT_FLOPS},
        {"mode", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, CS_APP_OPT_FORCE},
        {"json", required_argument, NULL, 'j'},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"queue", required_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *machines = NULL;
    int c;

    memset(a, 0, sizeof *a);
    a->with_timing = 1;
    cs_request_init(&a->req);
    a->flops = 1e9;
    while ((c = getopt_long(argc, argv, ":m:f:M:j:q:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MACHINES: machines = optarg; break;
        case 'f':
            if (!strcmp(optarg, "goal"))
                a->format = FMT_GOAL;
            else if (!strcmp(optarg, "ti"))
                a->format = FMT_TI;
            else if (!strcmp(optarg, "auto"))
                a->format = FMT_AUTO;
            else
                cs_app_usage_error("replay", "--format '%s': expected goal, ti or auto", optarg);
            break;
        case OPT_MAP: a->map = optarg; break;
        case OPT_ALGO_FOR: parse_algo_for(a, optarg); break;
        case OPT_FLOPS:
            if (!parse_rate(optarg, &a->flops))
                cs_app_usage_error("replay", "--flops '%s': expected a rate in flop/s > 0 "
                                             "(e.g. 1e9, 2.5G)", optarg);
            break;
        case 'j': a->json = optarg; break;
        case OPT_NO_TIMING: a->with_timing = 0; break;
        case 'h': replay_help(); exit(0);
        default: cs_app_option("replay", &a->req, c, argv);
        }
    }
    if (optind < argc)
        a->trace = argv[optind++];
    if (optind < argc)
        cs_app_usage_error("replay", "unexpected argument '%s' (one trace per replay)",
                           argv[optind]);
    if (!a->trace)
        cs_app_usage_error("replay", "missing the TRACE file");
    if (a->req.machine && machines)
        cs_app_usage_error("replay", "--machine and --machines exclude each other");
    if (!a->req.machine && !machines)
        cs_app_usage_error("replay", "missing --machine SPEC (or --machines 'A;B;...')");
    if (machines && a->json)
        cs_app_usage_error("replay", "--json writes one run's result; it cannot be used with "
                                     "--machines");
    if (machines)
        split_machines(a, machines);
}

/* ---- placement ------------------------------------------------------------- */

/* A map file: `rank node` per line, '#' comments.  Every rank 0..P-1 once,
 * every node at most once. */
static int read_map_file(const char *path, const cs_machine_t *m, int P, int32_t *map,
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

/* rank_to_node for P ranks as --map says, and the hints in rank space. */
static int place_ranks(replay_run_t *run, int P, cs_error_t *err)
{
    const cs_machine_t *m = run->m;
    const char *map = run->a->map ? run->a->map : "linear";
    int nodes = cs_machine_nodes(m), rc = CS_OK;
    if (P > nodes)
        return cs_error_set(err, CS_ERR_RANGE, "%s: the trace has %d ranks but machine '%s' "
                            "has only %d nodes; choose a machine with at least %d nodes",
                            run->a->trace, P, m->spec, nodes, P);
    cs_request_coll_t *c = &run->place;
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
        cs_app_shuffle(nodes, (uint64_t)seed, perm);
        memcpy(c->rank_to_node, perm, (size_t)P * sizeof *perm);
        free(perm);
    } else {
        rc = read_map_file(map, m, P, c->rank_to_node, err);
    }
    if (rc)
        return rc;
    cs_request_placement_hints(m, P, c);
    return CS_OK;
}

/* The TI reader asks for the hints once it knows P. */
static int ti_prepare(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err)
{
    replay_run_t *run = ctx;
    int rc = place_ranks(run, P, err);
    *hints = rc ? NULL : &run->place.hints;
    return rc;
}

/* ---- one replay -------------------------------------------------------------- */

static int load_trace(replay_run_t *run, cs_error_t *err)
{
    const replay_args_t *a = run->a;
    int rc, is_ti = a->format == FMT_TI;
    if (a->format == FMT_AUTO && (rc = cs_ti_sniff(a->trace, &is_ti, err)))
        return rc;
    run->is_ti = is_ti;
    if (!is_ti) {
        for (int k = 0; k < CS_COLL_NKINDS; k++)
            if (a->algo[k])
                return cs_error_set(err, CS_ERR_USAGE, "--algo-for %s: %s is a GOAL schedule, "
                                    "which names its own ops; --algo-for applies to TI traces",
                                    a->algo_arg[k], a->trace);
        if ((rc = cs_goal_read_file(a->trace, &run->p, err)))
            return rc;
        return place_ranks(run, cs_program_nranks(run->p), err);
    }
    cs_ti_opts_t o;
    cs_ti_opts_default(&o);
    o.flops_per_second = a->flops;
    o.unit = run->m->net.unit_bytes;
    o.prepare = ti_prepare;
    o.prepare_ctx = run;
    o.max_ranks = cs_machine_nodes(run->m);
    for (int k = 0; k < CS_COLL_NKINDS; k++) {
        o.algo[k] = a->algo[k];
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
    if ((rc = cs_ti_read_file(a->trace, &o, &run->p, &run->info, err)))
        return rc;
    /* a trace without collectives never asked for the placement */
    if (!run->place.rank_to_node)
        rc = place_ranks(run, cs_program_nranks(run->p), err);
    return rc;
}

static void run_destroy(replay_run_t *run)
{
    for (int k = 0; k < CS_COLL_NKINDS; k++)
        if (run->has_opts[k])
            cs_spec_destroy(&run->opts[k]);
    cs_request_coll_destroy(&run->place);
    cs_exec_result_destroy(&run->res);
    cs_program_free(run->p);
    cs_machine_free(run->m);
    memset(run, 0, sizeof *run);
}

static int replay_one(const replay_args_t *a, const char *spec, replay_run_t *run,
                      cs_error_t *err)
{
    int rc;
    memset(run, 0, sizeof *run);
    run->a = a;
    if ((rc = cs_machine_new(spec, &run->m, err)) || (rc = load_trace(run, err)))
        return rc;
    cs_exec_opts_t opts;
    cs_app_progress_t progress;
    cs_exec_opts_default(&opts);
    opts.mode = a->req.mode;
    opts.queue = a->req.queue;
    opts.rank_to_node = run->place.rank_to_node;
    if (a->req.force)
        opts.max_work = 0;
    cs_app_progress_init(&progress, a->trace);
    cs_app_progress_attach(&progress, run->m->tick_seconds, &opts);
    rc = cs_request_exec(run->m, run->p, &opts, &run->res, err);
    cs_app_progress_done(&progress);
    return rc;
}

static void print_summary(FILE *f, const replay_run_t *run)
{
    const cs_machine_t *m = run->m;
    const replay_args_t *a = run->a;
    const cs_program_t *p = run->p;
    cs_report_machine(f, m, &run->res, a->req.mode, a->req.queue);
    if (run->is_ti) {
        fprintf(f, "trace     %s (ti, %d file%s): %d ranks, %lld actions -> %ld ops\n", a->trace,
                run->info.files, run->info.files == 1 ? "" : "s", cs_program_nranks(p),
                (long long)run->info.actions, (long)cs_program_nops(p));
        int any = 0;
        for (int k = 0; k < CS_COLL_NKINDS; k++) {
            if (!run->info.calls[k])
                continue;
            const cs_coll_algo_t *algo = a->algo[k];
            if (!algo)
                cs_coll_find((cs_coll_kind_t)k, NULL, &algo, NULL);
            fprintf(f, "%s%s/%s x %lld", any ? ", " : "collectives ", cs_coll_name(k),
                    algo ? algo->name : "?", (long long)run->info.calls[k]);
            any = 1;
        }
        if (any)
            fprintf(f, " (%lld ops)\n", (long long)run->info.coll_ops);
    } else {
        fprintf(f, "trace     %s (goal): %d ranks, %ld ops\n", a->trace, cs_program_nranks(p),
                (long)cs_program_nops(p));
    }
    fprintf(f, "map       %s\n", run->place.order_name);
    cs_report_result(f, m, &run->res);
    cs_report_wall(f, &run->res, a->with_timing);
    cs_report_channels(f, m, &run->res);
}

/* ---- several machines ---------------------------------------------------------- */

static int replay_table(const replay_args_t *a)
{
    int worst = CS_OK;
    char names[REPLAY_MAX_MACHINES][96];
    int width = 7;
    replay_run_t run;
    /* the machine column: short names ("alphabeta torus 8x8") */
    for (int i = 0; i < a->nmachines; i++) {
        cs_machine_t *m;
        cs_error_t e;
        if (cs_machine_new(a->machines[i], &m, &e) == CS_OK) {
            cs_figures_machine_short(m, names[i], sizeof names[i]);
            cs_machine_free(m);
        } else {
            snprintf(names[i], sizeof names[i], "%.90s", a->machines[i]);
        }
        if (cs_app_text_width(names[i]) > width)
            width = cs_app_text_width(names[i]);
    }
    printf("trace %s\n", a->trace);
    printf("%-*s %6s %14s %14s %12s %9s\n", width, "machine", "ranks", "ticks", "time",
           "events", "wall s");
    for (int i = 0; i < a->nmachines; i++) {
        cs_error_t err = {0};
        int rc = replay_one(a, a->machines[i], &run, &err);
        printf("%s%*s", names[i], width - cs_app_text_width(names[i]), "");
        if (rc) {
            printf(" failed: %s\n", err.msg);
            if (worst == CS_OK)
                worst = rc;
        } else {
            char t[64];
            cs_units_format_seconds((double)run.res.finish * run.m->tick_seconds, t, sizeof t);
            printf(" %6d %14lld %14s %12llu %9.3f\n", cs_program_nranks(run.p),
                   (long long)run.res.finish, t, (unsigned long long)run.res.events,
                   a->with_timing ? run.res.wall_seconds : 0.0);
        }
        run_destroy(&run);
    }
    if (worst != CS_OK)
        fprintf(stderr, "collsim: replay: some machines failed (see the table)\n");
    return worst;
}

int cs_app_cmd_replay(int argc, char **argv)
{
    replay_args_t a;
    replay_run_t run;
    cs_error_t err = {0};
    int rc;

    replay_parse_args(argc, argv, &a);
    if (a.nmachines) {
        rc = replay_table(&a);
    } else {
        rc = replay_one(&a, a.req.machine, &run, &err);
        if (rc == CS_OK) {
            if (a.json)
                rc = cs_app_write_json(a.json, a.with_timing, run.m, run.p, &run.res, 0, 0, NULL, &err);
            else
                print_summary(stdout, &run);
        }
        if (rc != CS_OK)
            cs_app_report(&err);
        run_destroy(&run);
    }
    free(a.machines_buf);
    return rc;
}

int cs_app_replay_read_map(const char *path, const cs_machine_t *m, int P, int32_t *map,
                           cs_error_t *err)
{
    return read_map_file(path, m, P, map, err);
}
