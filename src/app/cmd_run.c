/*
 * cmd_run.c - `collsim run`: one program on one machine, reported as a
 * short human summary or as the versioned JSON result (docs/json.md).
 *
 * The program is either a GOAL schedule (--program) or a collective built
 * by an algorithm of the suite (--coll, --algo; src/coll), placed on the
 * machine's nodes in a chosen order (--order) and optionally validated
 * (--validate, src/coll/check.c).  The algorithm sees the machine only
 * through hints in rank space (cs_machine_hints_init; DESIGN.md: algorithms
 * never see node ids).  That preparation (cs_app_coll_prepare, app.h) is
 * shared with `collsim sweep`, compare and export.
 *
 * The command is a pipeline of small steps (parse options, make the machine,
 * obtain the program, check it fits, execute, report) so that other sources
 * of programs (other trace formats) and other outputs (CSV, timelines,
 * heatmaps) can be added as one option plus one step each.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "coll/check.h"
#include "coll/coll.h"
#include "engine/exec.h"
#include "engine/net.h"
#include "core/program.h"
#include "core/units.h"
#include "io/goal.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/result_json.h"
#include "io/timeline.h"
#include "machines/cerebras.h"
#include "machines/machine.h"

#define RUN_TOP_CHANNELS 5
#define RUN_MAX_OPTS 64
/* Time buckets (--window, --frames, --timeline) may take this much memory
 * at most: buckets per channel = this / (channels x a bucket's size). */
#define RUN_BUCKET_BYTES ((size_t)256 << 20)
#define RUN_MAX_BUCKETS 2048
#define RUN_MAX_FRAMES 1000
#define RUN_DEFAULT_FRAMES 20
/* The seed of --validate's random keys: fixed, so runs are reproducible. */
#define RUN_VALIDATE_SEED 0x636f6c6c73696dULL

/* Everything the command line says about one run. */
typedef struct run_args {
    const char *machine; /* spec string */
    const char *program; /* GOAL file */
    const char *json;    /* output path, "-" for stdout, NULL for the summary */
    int with_timing;     /* 0 with --no-timing */
    cs_net_mode_t mode;
    cs_queue_kind_t queue;
    /* a collective instead of --program */
    const char *coll, *algo, *order;
    const char *bytes_text;       /* --bytes as typed */
    int64_t bytes;
    int64_t root, ranks;          /* ranks 0: every node */
    int has_root;
    const char *opts[RUN_MAX_OPTS]; /* --opt key=val */
    int nopts;
    int validate;
    int predict;
    /* figures */
    const char *heatmap, *window, *frames, *frame_step, *timeline;
    cs_heatmap_metric_t metric;
    int has_metric;
    int64_t timeline_limit;
} run_args_t;

static void run_help(void)
{
    char queues[256];
    cs_app_queue_names(queues, sizeof queues, ", ");
    printf("Usage: collsim run --machine SPEC --program FILE.goal [OPTIONS]\n"
           "   or: collsim run --machine SPEC --coll NAME [--algo NAME] --bytes N [OPTIONS]\n"
           "\n"
           "Runs a program or a collective on a machine and prints a summary (or writes\n"
           "JSON).\n"
           "\n"
           "  -m, --machine SPEC     machine, e.g. alphabeta:topo=ring,p=8\n"
           "                         (see 'collsim list machines')\n"
           "  -p, --program FILE     program as a GOAL schedule (text form; '-' = stdin)\n"
           "\n"
           "A collective instead of --program (see 'collsim list algorithms'):\n"
           "      --coll NAME        broadcast, reduce, allreduce, allgather, reduce-scatter,\n"
           "                         gather, scatter, barrier, alltoall\n"
           "      --algo NAME        the algorithm (default: the collective's first listed)\n"
           "      --bytes N          size: the whole vector for broadcast, reduce, allreduce;\n"
           "                         the per-rank block for allgather, gather, scatter,\n"
           "                         reduce-scatter, alltoall; the token for barrier\n"
           "                         (default 0); units K, KiB, MB, ...\n"
           "      --root R           root rank of broadcast, reduce, gather, scatter (default 0)\n"
           "      --ranks P          ranks (default: every node; with an order FILE, its length)\n"
           "      --order ORDER      rank i runs on the order's i-th node: natural (node ids),\n"
           "                         ring (the machine's ring order), snake (boustrophedon over\n"
           "                         the machine's grid), or a FILE with one node id per line\n"
           "      --opt KEY=VALUE    an algorithm option (repeatable)\n"
           "      --validate         check that every rank ends with the right data, every\n"
           "                         contribution exactly once (exit status 4 if not)\n"
           "      --predict          (cerebras) also print the thesis's cycle model for the\n"
           "                         algorithm, where it has one\n"
           "\n"
           "Figures (docs/figures.md):\n"
           "      --heatmap FILE     draw the links on the machine's layout (.png, .svg, .pdf)\n"
           "      --metric M         util (default), bytes, stall or k\n"
           "      --window T0:T1     only this time window (ticks, or times such as 2us;\n"
           "                         either side may be left out)\n"
           "      --frames DIR       one heatmap per time window: DIR/frame-0001.png, ...\n"
           "      --frame-step T     the windows' length (default: the run in 20 frames)\n"
           "      --timeline FILE    the run in Chrome trace event format (Perfetto)\n"
           "      --timeline-limit N at most N trace events (default %d); larger runs are\n"
           "                         sampled\n"
           "\n"
           "Output and engine:\n"
           "  -M, --mode MODE        network fidelity: packet (default) or fluid\n"
           "  -j, --json FILE        write the JSON result to FILE ('-' = stdout)\n"
           "                         instead of printing the summary\n"
           "      --no-timing        write wall_seconds and events_per_second as 0,\n"
           "                         so that repeated runs give identical output\n"
           "  -q, --queue KIND       event queue: %s (default %s)\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 4 validation failed,\n"
           "5 model error.\n",
           CS_TIMELINE_MAX_EVENTS, queues, cs_queue_kind_name(CS_QUEUE_DEFAULT));
}

static void run_parse_args(int argc, char **argv, run_args_t *a)
{
    enum {
        OPT_NO_TIMING = 256, OPT_COLL, OPT_ALGO, OPT_BYTES, OPT_ROOT, OPT_RANKS, OPT_ORDER,
        OPT_OPT, OPT_VALIDATE, OPT_PREDICT, OPT_HEATMAP, OPT_METRIC, OPT_WINDOW, OPT_FRAMES,
        OPT_FRAME_STEP, OPT_TIMELINE, OPT_TIMELINE_LIMIT
    };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"program", required_argument, NULL, 'p'},
        {"coll", required_argument, NULL, OPT_COLL},
        {"algo", required_argument, NULL, OPT_ALGO},
        {"bytes", required_argument, NULL, OPT_BYTES},
        {"root", required_argument, NULL, OPT_ROOT},
        {"ranks", required_argument, NULL, OPT_RANKS},
        {"order", required_argument, NULL, OPT_ORDER},
        {"opt", required_argument, NULL, OPT_OPT},
        {"validate", no_argument, NULL, OPT_VALIDATE},
        {"predict", no_argument, NULL, OPT_PREDICT},
        {"heatmap", required_argument, NULL, OPT_HEATMAP},
        {"metric", required_argument, NULL, OPT_METRIC},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"frames", required_argument, NULL, OPT_FRAMES},
        {"frame-step", required_argument, NULL, OPT_FRAME_STEP},
        {"timeline", required_argument, NULL, OPT_TIMELINE},
        {"timeline-limit", required_argument, NULL, OPT_TIMELINE_LIMIT},
        {"mode", required_argument, NULL, 'M'},
        {"json", required_argument, NULL, 'j'},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"queue", required_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cs_error_t err = {0};
    int c;

    memset(a, 0, sizeof *a);
    a->with_timing = 1;
    a->mode = CS_NET_PACKET;
    a->queue = CS_QUEUE_DEFAULT;
    while ((c = getopt_long(argc, argv, ":m:p:M:j:q:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': a->machine = optarg; break;
        case 'p': a->program = optarg; break;
        case 'j': a->json = optarg; break;
        case OPT_NO_TIMING: a->with_timing = 0; break;
        case OPT_COLL: a->coll = optarg; break;
        case OPT_ALGO: a->algo = optarg; break;
        case OPT_ORDER: a->order = optarg; break;
        case OPT_VALIDATE: a->validate = 1; break;
        case OPT_PREDICT: a->predict = 1; break;
        case OPT_HEATMAP: a->heatmap = optarg; break;
        case OPT_WINDOW: a->window = optarg; break;
        case OPT_FRAMES: a->frames = optarg; break;
        case OPT_FRAME_STEP: a->frame_step = optarg; break;
        case OPT_TIMELINE: a->timeline = optarg; break;
        case OPT_METRIC:
            if (cs_heatmap_parse_metric(optarg, &a->metric, &err) != CS_OK)
                cs_app_usage_error("run", "--metric: %s", err.msg);
            a->has_metric = 1;
            break;
        case OPT_TIMELINE_LIMIT:
            if (cs_units_parse_int(optarg, &a->timeline_limit, &err) != CS_OK)
                cs_app_usage_error("run", "--timeline-limit: %s", err.msg);
            if (a->timeline_limit < 100)
                cs_app_usage_error("run", "--timeline-limit: at least 100 events, got %s",
                                   optarg);
            break;
        case OPT_BYTES:
            a->bytes = cs_app_bytes_arg("run", optarg);
            a->bytes_text = optarg;
            break;
        case OPT_ROOT:
            a->root = cs_app_root_arg("run", optarg);
            a->has_root = 1;
            break;
        case OPT_RANKS:
            a->ranks = cs_app_ranks_arg("run", optarg);
            break;
        case OPT_OPT:
            cs_app_push_kv_opt("run", optarg, a->opts, &a->nopts, RUN_MAX_OPTS);
            break;
        case 'M':
            a->mode = cs_app_mode_arg("run", optarg);
            break;
        case 'q':
            a->queue = cs_app_queue_arg("run", optarg);
            break;
        case 'h': run_help(); exit(0);
        default: cs_app_getopt_error("run", c, argv);
        }
    }
    if (optind < argc)
        cs_app_usage_error("run", "unexpected argument '%s'", argv[optind]);
    if (!a->machine)
        cs_app_usage_error("run", "missing --machine SPEC");
    if (a->program && a->coll)
        cs_app_usage_error("run", "--program and --coll exclude each other: run a GOAL "
                                  "schedule or a collective algorithm");
    if (!a->program && !a->coll)
        cs_app_usage_error("run", "missing --program FILE or --coll NAME");
    if (a->heatmap && cs_heatmap_check_path(a->heatmap, &err) != CS_OK)
        cs_app_usage_error("run", "--heatmap: %s", err.msg);
    if (!a->heatmap && !a->frames && (a->has_metric || a->window))
        cs_app_usage_error("run", "%s needs --heatmap FILE or --frames DIR",
                           a->has_metric ? "--metric" : "--window");
    if (a->frame_step && !a->frames)
        cs_app_usage_error("run", "--frame-step needs --frames DIR");
    if (a->frames && a->window)
        cs_app_usage_error("run", "--window and --frames exclude each other (frames cover "
                                  "the whole run)");
    if (a->timeline_limit && !a->timeline)
        cs_app_usage_error("run", "--timeline-limit needs --timeline FILE");
    if (!a->coll) {
        const char *only = a->algo ? "--algo" : a->bytes_text ? "--bytes" : a->has_root ? "--root"
                         : a->ranks ? "--ranks" : a->order ? "--order" : a->nopts ? "--opt"
                         : a->validate ? "--validate" : NULL;
        if (only)
            cs_app_usage_error("run", "%s needs --coll (it describes a collective run)", only);
    }
}

/* Obtains the program the arguments name.  The one place to extend when
 * programs can also come from collective algorithms or other formats. */
static int run_load_program(const run_args_t *a, cs_program_t **out, cs_error_t *err)
{
    if (strcmp(a->program, "-") == 0)
        return cs_goal_read_stream(stdin, "<stdin>", out, err);
    return cs_goal_read_file(a->program, out, err);
}

/* ---- collectives --------------------------------------------------------- */

/* The collective part of the arguments. */
static void run_coll_req(const run_args_t *a, cs_app_coll_req_t *r)
{
    *r = (cs_app_coll_req_t){a->coll, a->algo, a->order, a->bytes_text, a->bytes,
                             a->root, a->ranks, a->has_root, a->opts, a->nopts};
}

void cs_app_coll_destroy(cs_app_coll_t *c)
{
    if (c->has_opts)
        cs_spec_destroy(&c->opts);
    free(c->rank_to_node);
    cs_machine_hints_destroy(&c->place);
    memset(c, 0, sizeof *c);
}

/* Reads an order file: one node id per line; blank lines and text after
 * '#' are ignored.  Errors name file:line.  *n gets the count. */
static int run_read_order_file(const char *path, int nodes, int32_t **out, int *n,
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

/* The node order --order names, as all the nodes it lists (*n of them). */
static int run_node_order(const cs_app_coll_req_t *a, const cs_machine_t *m, int32_t **out, int *n,
                          cs_error_t *err)
{
    int nodes = cs_machine_nodes(m);
    const char *o = a->order ? a->order : "natural";
    int32_t *v;
    if (strcmp(o, "natural") && strcmp(o, "ring") && strcmp(o, "snake"))
        return run_read_order_file(o, nodes, out, n, err);
    v = cs_malloc((size_t)nodes * sizeof *v);
    if (!strcmp(o, "natural")) {
        for (int i = 0; i < nodes; i++)
            v[i] = i;
    } else if (!strcmp(o, "ring")) {
        for (int i = 0; i < nodes; i++)
            v[i] = m->ring_order ? m->ring_order[i] : i;
    } else {
        int rows = m->grid_rows, cols = m->grid_cols, k = 0;
        if (rows <= 0 || cols <= 0 || (int64_t)rows * cols != nodes) {
            free(v);
            return cs_error_set(err, CS_ERR_USAGE,
                                "--order snake needs a machine with a grid (mesh, torus, ...); "
                                "'%s' has none; use natural, ring or a file",
                                m->spec);
        }
        /* boustrophedon: even rows left to right, odd rows right to left, so
         * consecutive ranks are always neighbours on a mesh */
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++)
                v[k++] = r * cols + (r % 2 ? cols - 1 - c : c);
    }
    *out = v;
    *n = nodes;
    return CS_OK;
}

/* Parses the --opt list into one spec (the algorithm reads it). */
static int run_coll_opts(const cs_app_coll_req_t *a, cs_app_coll_t *c, cs_error_t *err)
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

/* The machine's hints in rank space for the placement c->rank_to_node of P
 * ranks (app.h; shared with `collsim replay`). */
void cs_app_placement_hints(const cs_machine_t *m, int P, cs_app_coll_t *c)
{
    cs_machine_hints_destroy(&c->place);
    cs_machine_hints_init(&c->place, m, P, c->rank_to_node);
    c->hints = c->place.coll;
}

/* Everything before building: the algorithm, P, the placement and the
 * hints in rank space (app.h). */
int cs_app_coll_prepare(const cs_app_coll_req_t *a, const cs_machine_t *m, cs_app_coll_t *c,
                        cs_error_t *err)
{
    cs_coll_kind_t kind;
    int nodes = cs_machine_nodes(m), norder = 0, P, rc;
    int32_t *order = NULL;

    memset(c, 0, sizeof *c);
    if ((rc = cs_coll_parse(a->coll, &kind, err)))
        return rc;
    if ((rc = cs_coll_find(kind, a->algo, &c->algo, err)))
        return rc;
    if (a->has_root && !cs_coll_rooted(kind))
        return cs_error_set(err, CS_ERR_USAGE, "--root: %s has no root (rooted collectives: "
                            "broadcast, reduce, gather, scatter)", cs_coll_name(kind));
    if (!a->bytes_text && kind != CS_COLL_BARRIER)
        return cs_error_set(err, CS_ERR_USAGE, "missing --bytes N for %s", cs_coll_name(kind));
    if ((rc = run_node_order(a, m, &order, &norder, err)))
        return rc;
    snprintf(c->order_name, sizeof c->order_name, "%s", a->order ? a->order : "natural");

    P = a->ranks ? (int64_t)a->ranks > nodes ? -1 : (int)a->ranks : norder;
    if (P < 0 || P > norder) {
        int fileish = norder < nodes;
        free(order);
        if (fileish)
            return cs_error_set(err, CS_ERR_RANGE, "--ranks %lld: the order %s lists only %d "
                                "nodes", (long long)a->ranks, a->order, norder);
        return cs_error_set(err, CS_ERR_RANGE, "--ranks %lld: machine '%s' has only %d nodes",
                            (long long)a->ranks, m->spec, nodes);
    }
    if (a->has_root && (a->root < 0 || a->root >= P)) {
        free(order);
        return cs_error_set(err, CS_ERR_RANGE, "--root %lld is outside ranks 0..%d",
                            (long long)a->root, P - 1);
    }
    c->rank_to_node = cs_malloc((size_t)P * sizeof *c->rank_to_node);
    memcpy(c->rank_to_node, order, (size_t)P * sizeof *order);
    free(order);

    cs_app_placement_hints(m, P, c);
    if ((rc = run_coll_opts(a, c, err)))
        return rc;
    c->args = (cs_coll_args_t){kind, P, a->bytes, a->has_root ? (int)a->root : 0,
                               m->net.unit_bytes, &c->hints, c->has_opts ? &c->opts : NULL};
    return CS_OK;
}

/* cs_coll_build with the algorithm named in errors (app.h). */
int cs_app_coll_build(const cs_app_coll_t *c, cs_program_t **out, cs_error_t *err)
{
    int rc = cs_coll_build(c->algo, &c->args, out, err);
    if (rc)
        cs_error_prefix(err, "%s/%s", cs_coll_name(c->algo->kind), c->algo->name);
    return rc;
}

/* Limits are checked before a run starts (DESIGN.md, Errors). */
static int run_check_fits(const run_args_t *a, const cs_machine_t *m, const cs_program_t *p,
                          cs_error_t *err)
{
    int ranks = cs_program_nranks(p), nodes = cs_machine_nodes(m);
    if (ranks > nodes)
        return cs_error_set(err, CS_ERR_RANGE,
                            "%s: program has %d ranks but machine '%s' has only %d nodes; "
                            "choose a machine with at least %d nodes",
                            a->program, ranks, m->spec, nodes, ranks);
    return CS_OK;
}

/* Ranks the channels by busy ticks, then bytes, then id (lowest first), so
 * that the list is deterministic. */
static int run_chan_before(const cs_chan_stats_t *x, int xi, const cs_chan_stats_t *y, int yi)
{
    if (x->busy != y->busy)
        return x->busy > y->busy;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes;
    return xi < yi;
}

/* The busiest channels (app.h).  One pass with insertion into a tiny
 * sorted array: O(channels * n). */
int cs_app_busiest_channels(const cs_net_t *net, int nchan, int *top, int n)
{
    int count = 0;
    if (!net)
        return 0;
    for (int c = 0; c < nchan; c++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(net, c);
        if (!s || (s->bytes == 0 && s->busy == 0))
            continue;
        int pos = count;
        while (pos > 0 && run_chan_before(s, c, cs_net_chan_stats(net, top[pos - 1]), top[pos - 1]))
            pos--;
        if (pos >= n)
            continue;
        int last = count < n ? count : n - 1;
        memmove(top + pos + 1, top + pos, (size_t)(last - pos) * sizeof *top);
        top[pos] = c;
        if (count < n)
            count++;
    }
    return count;
}

/* --predict: the thesis's model value beside the simulated time.  Options
 * the model does not read (stream=) are not passed on. */
static void run_print_prediction(FILE *f, const cs_machine_t *m, const cs_app_coll_t *c,
                                 cs_tick_t simulated)
{
    const cs_cerebras_t *cb = cs_cerebras_of(m);
    const cs_coll_args_t *ca = &c->args;
    static const char *const model_keys[] = {"base", "inner", "g", NULL};
    char algo[256];
    int64_t S = 0;
    double cycles;
    cs_error_t e;
    if (!cb) {
        fprintf(f, "model     none: --predict needs a cerebras machine\n");
        return;
    }
    snprintf(algo, sizeof algo, "%s", c->algo->name);
    for (int i = 0; c->has_opts && i < c->opts.nkv; i++) {
        const cs_spec_kv_t *kv = &c->opts.kv[i];
        if (!strcmp(kv->key, "S"))
            S = atoll(kv->value);
        for (int k = 0; model_keys[k]; k++)
            if (!strcmp(kv->key, model_keys[k]))
                snprintf(algo + strlen(algo), sizeof algo - strlen(algo), "%s%s=%s",
                         strchr(algo, ':') ? "," : ":", kv->key, kv->value);
    }
    int64_t B = ca->bytes > 4 ? (ca->bytes + 3) / 4 : 1;
    if (cs_cerebras_predict(cs_coll_name(ca->kind), algo, ca->P, c->hints.grid_rows,
                            c->hints.grid_cols, B, cb->tr, S, ca->root, &cycles, &e)) {
        fprintf(f, "model     none: %s\n", e.msg);
        return;
    }
    fprintf(f, "model     %.2f cycles (thesis, printed form); simulated - model = %+.2f (%+.2f%%)\n",
            cycles, (double)simulated - cycles,
            cycles > 0 ? 100.0 * ((double)simulated - cycles) / cycles : 0.0);
    /* where the printed formula contradicts its proof, the re-derived one too */
    double re;
    snprintf(algo + strlen(algo), sizeof algo - strlen(algo), "%sform=rederived",
             strchr(algo, ':') ? "," : ":");
    if (!cs_cerebras_predict(cs_coll_name(ca->kind), algo, ca->P, c->hints.grid_rows,
                             c->hints.grid_cols, B, cb->tr, S, ca->root, &re, &e) &&
        re != cycles)
        fprintf(f, "          %.2f cycles (re-derived form); simulated - model = %+.2f (%+.2f%%)\n",
                re, (double)simulated - re, re > 0 ? 100.0 * ((double)simulated - re) / re : 0.0);
}

static void run_print_summary(FILE *f, const run_args_t *a, const cs_machine_t *m,
                              const cs_program_t *p, const cs_exec_result_t *r,
                              const cs_app_coll_t *c, int validated)
{
    char buf[64];

    cs_app_print_machine(f, m, r, a->mode, a->queue);
    fprintf(f, "program   %s: %d ranks, %ld ops\n",
            a->program ? a->program : cs_program_source(p), cs_program_nranks(p),
            (long)cs_program_nops(p));
    if (c) {
        const cs_coll_args_t *ca = &c->args;
        cs_units_format_bytes(ca->bytes, buf, sizeof buf);
        fprintf(f, "collective %s/%s, %s %s", cs_coll_name(ca->kind), c->algo->name, buf,
                ca->kind == CS_COLL_BROADCAST || ca->kind == CS_COLL_REDUCE ||
                        ca->kind == CS_COLL_ALLREDUCE ? "vector"
                : ca->kind == CS_COLL_BARRIER ? "token"
                                              : "per rank");
        if (cs_coll_rooted(ca->kind))
            fprintf(f, ", root %d", ca->root);
        fprintf(f, ", order %s\n", c->order_name);
        fprintf(f, "validation: %s\n", validated ? "ok" : "not requested (--validate)");
    }
    cs_app_print_result(f, m, r);
    if (a->predict && c)
        run_print_prediction(f, m, c, r->finish);
    cs_app_print_wall(f, r, a->with_timing);
    cs_app_print_channels(f, m, r);
}

/* machine and mode (app.h) */
void cs_app_print_machine(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r,
                          cs_net_mode_t mode, cs_queue_kind_t queue)
{
    fprintf(f, "machine   %s (%d nodes, %d channels)\n", m->spec, cs_topo_nodes(m->topo),
            cs_topo_channels(m->topo));
    fprintf(f, "mode      %s (queue %s)\n",
            r->net ? cs_net_engine_name(r->net) : cs_net_mode_name(mode),
            cs_queue_kind_name(queue));
}

/* messages, finish, events and the machine's own lines (app.h) */
void cs_app_print_result(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r)
{
    char buf[64];
    fprintf(f, "messages  %lld\n", (long long)r->messages);
    cs_units_format_seconds((double)r->finish * m->tick_seconds, buf, sizeof buf);
    fprintf(f, "finish    %lld ticks = %s\n", (long long)r->finish, buf);
    fprintf(f, "events    %llu\n", (unsigned long long)r->events);
    if (m->report)
        m->report(m, r->net, f);
}

void cs_app_print_wall(FILE *f, const cs_exec_result_t *r, int with_timing)
{
    if (with_timing) {
        double rate = r->wall_seconds > 0 ? (double)r->events / r->wall_seconds : 0.0;
        fprintf(f, "wall      %.6f s (%.3f M events/s)\n", r->wall_seconds, rate / 1e6);
    } else {
        fprintf(f, "wall      not shown (--no-timing)\n");
    }
}

/* the busiest channels (app.h) */
void cs_app_print_channels(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r)
{
    const cs_topo_t *t = m->topo;
    char buf[64];
    int top[RUN_TOP_CHANNELS];

    int n = cs_app_busiest_channels(r->net, cs_topo_channels(t), top, RUN_TOP_CHANNELS);
    if (n == 0) {
        fprintf(f, "channels  none carried traffic\n");
        return;
    }
    fprintf(f, "busiest channels:\n");
    fprintf(f, "  %-17s %12s %8s %7s\n", "src -> dst", "bytes", "busy", "peak k");
    for (int i = 0; i < n; i++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(r->net, top[i]);
        char link[40];
        snprintf(link, sizeof link, "%d -> %d", cs_topo_channel_src(t, top[i]),
                 cs_topo_channel_dst(t, top[i]));
        cs_units_format_bytes(s->bytes, buf, sizeof buf);
        double busy = r->finish > 0 ? 100.0 * (double)s->busy / (double)r->finish : 0.0;
        fprintf(f, "  %-17s %12s %7.1f%% %7d\n", link, buf, busy, (int)s->peak_k);
    }
}

int cs_app_write_json(const char *path, int with_timing, const cs_machine_t *m,
                      const cs_program_t *p, const cs_exec_result_t *r, int validated,
                      cs_error_t *err)
{
    cs_result_info_t info = {with_timing, validated};
    if (strcmp(path, "-") == 0)
        return cs_result_write_json_info(stdout, m, p, r, &info, err);

    FILE *f = fopen(path, "w");
    if (!f)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open for writing: %s", path,
                            strerror(errno));
    int rc = cs_result_write_json_info(f, m, p, r, &info, err);
    if (fclose(f) != 0 && rc == CS_OK)
        rc = cs_error_set(err, CS_ERR_IO, "%s: error while writing: %s", path, strerror(errno));
    return rc;
}

/* ---- figures: heatmaps, frames, timelines ------------------------------- */

/* What the figure options mean once the machine's clock is known. */
typedef struct run_figs {
    int has_window;
    cs_tick_t w0, w1;     /* w1 < 0: the end of the run */
    cs_tick_t step;       /* --frame-step, 0: chosen after the run */
} run_figs_t;

/* Time buckets per channel within RUN_BUCKET_BYTES. */
static int run_bucket_count(const cs_machine_t *m)
{
    size_t per = (size_t)cs_topo_channels(m->topo) * sizeof(cs_chan_stats_t) + 1;
    size_t n = RUN_BUCKET_BYTES / per;
    return n < 2 ? 2 : n > RUN_MAX_BUCKETS ? RUN_MAX_BUCKETS : (int)n;
}

/* Parses --window and --frame-step, checks the output paths and sets the
 * executor's options the figures need. */
static int run_prepare_figures(const run_args_t *a, const cs_machine_t *m, run_figs_t *fg,
                               cs_exec_opts_t *opts, cs_error_t *err)
{
    int rc;
    memset(fg, 0, sizeof *fg);
    fg->w1 = -1;
    if (a->window) {
        const char *colon = strchr(a->window, ':');
        char lo[64], hi[64];
        if (!colon || strchr(colon + 1, ':'))
            return cs_error_set(err, CS_ERR_USAGE, "--window '%s': expected T0:T1 (either may "
                                "be left out, e.g. 2us: or :1000)", a->window);
        snprintf(lo, sizeof lo, "%.*s", (int)(colon - a->window), a->window);
        snprintf(hi, sizeof hi, "%s", colon + 1);
        fg->has_window = 1;
        if ((lo[0] && (rc = cs_app_parse_time(lo, m->tick_seconds, &fg->w0, err))) ||
            (hi[0] && (rc = cs_app_parse_time(hi, m->tick_seconds, &fg->w1, err)))) {
            cs_error_prefix(err, "--window");
            return rc;
        }
        if (fg->w1 >= 0 && fg->w1 <= fg->w0)
            return cs_error_set(err, CS_ERR_RANGE, "--window '%s': the end must come after "
                                "the start (%lld <= %lld ticks)", a->window,
                                (long long)fg->w1, (long long)fg->w0);
    }
    if (a->frame_step) {
        if ((rc = cs_app_parse_time(a->frame_step, m->tick_seconds, &fg->step, err))) {
            cs_error_prefix(err, "--frame-step");
            return rc;
        }
        if (fg->step < 1)
            return cs_error_set(err, CS_ERR_RANGE, "--frame-step '%s': less than one tick",
                                a->frame_step);
    }
    if (a->heatmap && (rc = cs_app_check_writable("--heatmap", a->heatmap, err)))
        return rc;
    if (a->timeline && (rc = cs_app_check_writable("--timeline", a->timeline, err)))
        return rc;
    if (a->frames) {
        if ((rc = cs_app_make_folder("--frames", a->frames, err)))
            return rc;
        if (access(a->frames, W_OK) != 0)
            return cs_error_set(err, CS_ERR_IO, "--frames %s: cannot write in it: %s",
                                a->frames, strerror(errno));
    }
    if (fg->has_window || a->frames || a->timeline) {
        /* frames get buckets of their own step, so that each frame is a
         * whole number of buckets while the run fits */
        opts->bucket_width = fg->step ? fg->step : 1;
        opts->max_buckets = run_bucket_count(m);
    }
    opts->record_messages = a->timeline != NULL;
    return CS_OK;
}

static int run_write_heatmap(const run_args_t *a, const cs_machine_t *m, const cs_exec_result_t *r,
                             cs_heatmap_t *h, const run_figs_t *fg, const char *title,
                             FILE *say, cs_error_t *err)
{
    cs_heatmap_data_t d;
    char sub[320];
    int nchans = cs_topo_channels(m->topo), rc;
    cs_tick_t w0 = fg->has_window ? fg->w0 : 0;
    cs_tick_t w1 = fg->has_window && fg->w1 >= 0 ? fg->w1 : r->finish;
    int whole = !fg->has_window || (w0 == 0 && w1 >= r->finish);
    if (!whole && w0 >= r->finish)
        return cs_error_set(err, CS_ERR_RANGE, "--window %s: the run ended at %lld ticks, "
                            "before the window starts", a->window, (long long)r->finish);
    if (whole)
        w1 = r->finish;
    rc = cs_heatmap_data_from_net(r->net, nchans, a->metric, w0, w1, whole, &d, err);
    if (rc == CS_OK) {
        cs_app_heatmap_subtitle(m, r->net, &d, whole ? "whole run" : "window", sub, sizeof sub);
        rc = cs_heatmap_write(h, &d, title, sub, 0, a->heatmap, err);
    }
    if (rc == CS_OK && say)
        fprintf(say, "heatmap   %s (%s, %s layout%s)\n", a->heatmap,
                cs_heatmap_metric_name(a->metric), cs_heatmap_layout_name(h),
                whole ? "" : ", window");
    cs_heatmap_data_destroy(&d);
    if (rc)
        cs_error_prefix(err, "--heatmap");
    return rc;
}

static int run_write_frames(const run_args_t *a, const cs_machine_t *m, const cs_exec_result_t *r,
                            cs_heatmap_t *h, const run_figs_t *fg, const char *title, FILE *say,
                            cs_error_t *err)
{
    int nchans = cs_topo_channels(m->topo), rc = CS_OK;
    cs_tick_t end = r->finish > 0 ? r->finish : 1;
    cs_tick_t w = cs_net_bucket_width(r->net), step = fg->step;
    if (!step) {
        /* the run in about RUN_DEFAULT_FRAMES frames of whole buckets */
        step = (end + RUN_DEFAULT_FRAMES - 1) / RUN_DEFAULT_FRAMES;
        if (w > 0)
            step = (step + w - 1) / w * w;
    }
    if ((end + step - 1) / step > RUN_MAX_FRAMES) {
        cs_tick_t more = (end + RUN_MAX_FRAMES - 1) / RUN_MAX_FRAMES;
        fprintf(stderr, "collsim: --frame-step: %lld frames would exceed %d; using a step of "
                "%lld ticks\n", (long long)((end + step - 1) / step), RUN_MAX_FRAMES,
                (long long)more);
        step = more;
    }
    int n = (int)((end + step - 1) / step);
    double vmax = 0;
    /* one scale for every frame, so that colours compare across frames */
    for (int pass = 0; pass < 2 && rc == CS_OK; pass++)
        for (int i = 0; i < n && rc == CS_OK; i++) {
            cs_heatmap_data_t d;
            cs_tick_t t0 = (cs_tick_t)i * step, t1 = t0 + step < end ? t0 + step : end;
            rc = cs_heatmap_data_from_net(r->net, nchans, a->metric, t0, t1, 0, &d, err);
            if (rc == CS_OK && pass == 0) {
                double mx = cs_heatmap_data_max(&d);
                if (mx > vmax)
                    vmax = mx;
            } else if (rc == CS_OK) {
                char path[4096 + 32], sub[320], note[64];
                snprintf(path, sizeof path, "%s/frame-%04d.png", a->frames, i + 1);
                snprintf(note, sizeof note, "frame %d of %d,", i + 1, n);
                cs_app_heatmap_subtitle(m, r->net, &d, note, sub, sizeof sub);
                rc = cs_heatmap_write(h, &d, title, sub, vmax, path, err);
            }
            cs_heatmap_data_destroy(&d);
        }
    if (rc)
        cs_error_prefix(err, "--frames");
    else if (say) {
        char st[32];
        cs_units_format_seconds((double)step * m->tick_seconds, st, sizeof st);
        fprintf(say, "frames    %s/frame-0001.png .. frame-%04d.png (%s, %s each, %s layout)\n",
                a->frames, n, cs_heatmap_metric_name(a->metric), st, cs_heatmap_layout_name(h));
        if (w > step)
            fprintf(say, "          note: the buckets grew to %lld ticks, coarser than a frame; "
                    "frames share them in proportion\n", (long long)w);
    }
    return rc;
}

static int run_write_figures(const run_args_t *a, const cs_machine_t *m, const cs_program_t *p,
                             const cs_exec_result_t *r, const cs_app_coll_t *c,
                             const run_figs_t *fg, FILE *say, cs_error_t *err)
{
    char title[320];
    int rc = CS_OK;
    cs_app_run_title(m, c, a->program, cs_program_nranks(p), title, sizeof title);
    if (a->heatmap || a->frames) {
        cs_heatmap_t *h = NULL;
        rc = cs_heatmap_new(m, &h, err);
        if (rc == CS_OK && a->heatmap)
            rc = run_write_heatmap(a, m, r, h, fg, title, say, err);
        if (rc == CS_OK && a->frames)
            rc = run_write_frames(a, m, r, h, fg, title, say, err);
        cs_heatmap_free(h);
        cs_plot_cleanup(); /* the fonts: no leak reports at exit */
    }
    if (rc == CS_OK && a->timeline) {
        cs_timeline_opts_t to = {a->timeline_limit, 0, c ? c->rank_to_node : NULL, title};
        cs_timeline_info_t info;
        rc = cs_timeline_write(a->timeline, m, p, r, &to, &info, err);
        if (rc)
            cs_error_prefix(err, "--timeline");
        else if (say) {
            fprintf(say, "timeline  %s (%lld events: %lld of %lld ops, %lld messages, %d link "
                    "counters", a->timeline, (long long)info.events, (long long)info.slices,
                    (long long)info.ops_total, (long long)info.flows, info.counters);
            if (info.rank_stride > 1)
                fprintf(say, "; sampled: every %d%s rank", info.rank_stride,
                        info.rank_stride == 2 ? "nd" : info.rank_stride == 3 ? "rd" : "th");
            if (info.truncated) {
                char t[32];
                cs_units_format_seconds((double)info.truncated_at * m->tick_seconds, t,
                                        sizeof t);
                fprintf(say, "; cut at %s", t);
            }
            fprintf(say, ")\n");
        }
    }
    return rc;
}

int cs_app_cmd_run(int argc, char **argv)
{
    run_args_t a;
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    cs_program_t *p = NULL;
    cs_exec_result_t res;
    cs_app_coll_t coll;
    cs_app_coll_req_t req;
    cs_coll_check_t *chk = NULL;
    cs_app_progress_t progress;
    run_figs_t figs;
    int rc;

    memset(&res, 0, sizeof res);
    memset(&coll, 0, sizeof coll);
    run_parse_args(argc, argv, &a);

    rc = cs_machine_new(a.machine, &m, &err);
    if (rc == CS_OK && a.coll) {
        run_coll_req(&a, &req);
        rc = cs_app_coll_prepare(&req, m, &coll, &err);
        if (rc == CS_OK)
            rc = cs_app_coll_build(&coll, &p, &err);
        if (rc == CS_OK && a.validate)
            rc = cs_coll_check_new(&coll.args, p, RUN_VALIDATE_SEED, &chk, &err);
    } else if (rc == CS_OK) {
        rc = run_load_program(&a, &p, &err);
        if (rc == CS_OK)
            rc = run_check_fits(&a, m, p, &err);
    }
    if (rc == CS_OK) {
        cs_exec_opts_t opts;
        cs_exec_opts_default(&opts);
        opts.mode = a.mode;
        opts.queue = a.queue;
        opts.rank_to_node = coll.rank_to_node;
        opts.observer = chk ? cs_coll_check_observer(chk) : NULL;
        rc = run_prepare_figures(&a, m, &figs, &opts, &err);
        if (rc == CS_OK) {
            cs_app_progress_init(&progress, a.coll ? cs_program_source(p) : a.program,
                                 m->tick_seconds);
            rc = cs_app_exec_run(m, p, &opts, &progress, &res, &err);
            cs_app_progress_done(&progress);
        }
    }
    if (rc == CS_OK && chk && (rc = cs_coll_check_verify(chk, &err)))
        cs_error_prefix(&err, "validation failed");
    if (rc == CS_OK) {
        int validated = chk != NULL; /* and it passed: rc is CS_OK */
        if (a.json)
            rc = cs_app_write_json(a.json, a.with_timing, m, p, &res, validated, &err);
        else
            run_print_summary(stdout, &a, m, p, &res, a.coll ? &coll : NULL, validated);
    }
    if (rc == CS_OK && (a.heatmap || a.frames || a.timeline))
        rc = run_write_figures(&a, m, p, &res, a.coll ? &coll : NULL, &figs, a.json ? NULL : stdout,
                               &err);
    if (rc != CS_OK)
        cs_app_report(&err);

    cs_coll_check_free(chk);
    cs_app_coll_destroy(&coll);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
    return rc;
}
