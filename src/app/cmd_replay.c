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

#include "api/replay.h"
#include "app/app.h"
#include "app/par.h"
#include "coll/coll.h"
#include "engine/net.h"
#include "core/lines.h"
#include "core/program.h"
#include "core/units.h"
#include "io/goal.h"
#include "io/ti.h"
#include "machines/machine.h"

#define REPLAY_MAX_MACHINES 32

typedef struct replay_args {
    cs_replay_t rp;    /* the trace, --format, --map, --algo-for, --flops */
    const char *machines[REPLAY_MAX_MACHINES]; /* --machines, split */
    char *machines_buf;                        /* what they point into (owned) */
    int nmachines;
    const char *json;
    int with_timing;
    int quiet;         /* --quiet: no progress line, no "wrote FILE" */
    cs_request_t req;  /* --machine, the engine's mode and queue */
} replay_args_t;

/* One replay's products. */
typedef struct replay_run {
    cs_machine_t *m;
    cs_replay_run_t rr; /* the program, its placement, what the trace held */
    cs_exec_result_t res;
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
           "--machines, one row per machine.  TRACE is a GOAL schedule, a SimGrid\n"
           "time-independent trace (one combined file, or an index of per-rank files), or\n"
           "a Chakra execution trace (PREFIX of PREFIX.0.et .. PREFIX.(P-1).et, or one of\n"
           "those files; docs/chakra.md).\n"
           "\n"
           "  -m, --machine SPEC       the machine (see 'collsim list machines')\n"
           "      --machines LIST      several machines separated by ';': a table\n"
           "  -f, --format FMT         goal, ti, chakra or auto (default: from the content)\n"
           "      --map MAP            trace rank r runs on node: linear (r, the default),\n"
           "                           ring (the machine's ring order), snake (boustrophedon\n"
           "                           over its grid), random:SEED (a shuffle), or a FILE of\n"
           "                           `rank node` lines\n"
           "      --algo-for C=A[:k=v,...]  the algorithm (and options) of collective C in\n"
           "                           a TI or Chakra trace, e.g. allreduce=ring, or\n"
           "                           allreduce=msccl:FILE (repeatable; default: the\n"
           "                           collective's default)\n"
           "      --flops RATE         TI compute speed, and Chakra num_ops rate, in flop/s\n"
           "                           (default 1G: 1 flop = 1 ns); suffixes k, M, G, T\n"
           "      --skip-unknown       Chakra: skip unknown node types and attributes (as\n"
           "                           zero-time ops) and count them, instead of an error\n"
           "      --comm-group FILE    Chakra: process groups' ranks, ASTRA-sim's comm-group\n"
           "                           JSON ({\"1\": [0, 1], ...})\n"
           "  -M, --mode MODE          network fidelity: packet (default) or fluid\n"
           "      --force              run a packet-mode run above the work limit (docs/limits.md)\n"
           "  -j, --json FILE          write the JSON result to FILE ('-' = stdout)\n"
           "      --no-timing          no wall-clock fields (identical output every run)\n"
           "  -q, --queue KIND         event queue: %s (default %s)\n"
           "      --quiet              no progress line, no \"wrote FILE\" on standard error\n"
           "  -h, --help               show this help and exit\n",
           queues, cs_queue_kind_name(CS_QUEUE_DEFAULT));
    cs_par_help(stdout, CS_PAR_SHARD);
    printf("  (the machines of --machines are the points; one --machine is one run)\n"
           "\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 5 model error.\n");
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

/* One of the trace's options (api/replay.h), a usage error if refused. */
static void replay_set(replay_args_t *a, const char *key, const char *value)
{
    cs_error_t err = {0};
    if (cs_replay_set(&a->rp, key, value, &err) != CS_OK)
        cs_app_usage_error("replay", "%s", err.msg);
}

static void replay_parse_args(int argc, char **argv, replay_args_t *a)
{
    enum { OPT_NO_TIMING = 256, OPT_MAP, OPT_ALGO_FOR, OPT_MACHINES, OPT_FLOPS, OPT_SKIP_UNKNOWN,
           OPT_COMM_GROUP, OPT_QUIET };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"machines", required_argument, NULL, OPT_MACHINES},
        {"format", required_argument, NULL, 'f'},
        {"map", required_argument, NULL, OPT_MAP},
        {"algo-for", required_argument, NULL, OPT_ALGO_FOR},
        {"flops", required_argument, NULL, OPT_FLOPS},
        {"skip-unknown", no_argument, NULL, OPT_SKIP_UNKNOWN},
        {"comm-group", required_argument, NULL, OPT_COMM_GROUP},
        {"mode", required_argument, NULL, 'M'},
        {"force", no_argument, NULL, CS_APP_OPT_FORCE},
        {"json", required_argument, NULL, 'j'},
        {"no-timing", no_argument, NULL, OPT_NO_TIMING},
        {"queue", required_argument, NULL, 'q'},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"help", no_argument, NULL, 'h'},
        CS_PAR_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *machines = NULL;
    int c;

    memset(a, 0, sizeof *a);
    a->with_timing = 1;
    cs_request_init(&a->req);
    cs_replay_init(&a->rp);
    while ((c = getopt_long(argc, argv, ":m:f:M:j:q:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_MACHINES: machines = optarg; break;
        case 'f': replay_set(a, "format", optarg); break;
        case OPT_MAP: replay_set(a, "map", optarg); break;
        case OPT_ALGO_FOR: replay_set(a, "algo-for", optarg); break;
        case OPT_FLOPS: replay_set(a, "flops", optarg); break;
        case OPT_SKIP_UNKNOWN: replay_set(a, "skip-unknown", "1"); break;
        case OPT_COMM_GROUP: replay_set(a, "comm-group", optarg); break;
        case 'j': a->json = optarg; break;
        case OPT_NO_TIMING: a->with_timing = 0; break;
        case OPT_QUIET: a->quiet = 1; break;
        case 'h': replay_help(); exit(0);
        default: cs_app_option("replay", &a->req, c, argv, longopts);
        }
    }
    if (optind < argc)
        a->rp.trace = argv[optind++];
    if (optind < argc)
        cs_app_usage_error("replay", "unexpected argument '%s' (one trace per replay)",
                           argv[optind]);
    if (!a->rp.trace)
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

/* ---- one replay -------------------------------------------------------------- */

static void run_destroy(replay_run_t *run)
{
    cs_replay_run_destroy(&run->rr);
    cs_exec_result_destroy(&run->res);
    cs_machine_free(run->m);
    memset(run, 0, sizeof *run);
}

static int replay_one(const replay_args_t *a, const char *spec, replay_run_t *run,
                      cs_error_t *err)
{
    int rc;
    memset(run, 0, sizeof *run);
    run->a = a;
    if ((rc = cs_machine_new(spec, &run->m, err)) ||
        (rc = cs_replay_load(&a->rp, run->m, &run->rr, err)))
        return rc;
    cs_exec_opts_t opts;
    cs_app_progress_t progress;
    cs_replay_exec_opts(&a->req, &run->rr, &opts);
    cs_app_progress_init(&progress, a->rp.trace);
    progress.quiet = a->quiet;
    cs_app_progress_attach(&progress, run->m->tick_seconds, &opts);
    rc = cs_request_exec(run->m, run->rr.p, &opts, &run->res, err);
    cs_app_progress_done(&progress);
    return rc;
}

static void print_summary(FILE *f, const replay_run_t *run)
{
    const cs_machine_t *m = run->m;
    const replay_args_t *a = run->a;
    const cs_program_t *p = run->rr.p;
    cs_report_machine(f, m, &run->res, a->req.mode, a->req.queue);
    const cs_trace_info_t *info = &run->rr.info;
    const cs_trace_format_t *fmt = run->rr.fmt;
    if (fmt->records) {
        fprintf(f, "trace     %s (%s, %d file%s): %d ranks, %lld %s -> %ld ops\n",
                a->rp.trace, fmt->name, info->files, info->files == 1 ? "" : "s",
                cs_program_nranks(p), (long long)info->records, fmt->records,
                (long)cs_program_nops(p));
        for (int i = 0; i < info->ncounts; i++)
            fprintf(f, "%s%s %lld", i ? ", " : "held      ", info->counts[i].name,
                    (long long)info->counts[i].value);
        if (info->ncounts)
            fprintf(f, "\n");
        int any = 0;
        for (int k = 0; k < CS_COLL_NKINDS; k++) {
            if (!info->calls[k])
                continue;
            const cs_coll_algo_t *algo = run->rr.algo_file[k] ? run->rr.algo_file[k]
                                                               : a->rp.algo[k];
            if (!algo)
                cs_coll_find((cs_coll_kind_t)k, NULL, &algo, NULL);
            fprintf(f, "%s%s/%s x %lld", any ? ", " : "collectives ", cs_coll_name(k),
                    algo ? algo->name : "?", (long long)info->calls[k]);
            any = 1;
        }
        if (any)
            fprintf(f, " (%lld ops)\n", (long long)info->coll_ops);
    } else {
        fprintf(f, "trace     %s (%s): %d ranks, %ld ops\n", a->rp.trace, fmt->name,
                cs_program_nranks(p), (long)cs_program_nops(p));
    }
    fprintf(f, "map       %s\n", run->rr.place.order_name);
    cs_report_result(f, m, &run->res);
    cs_report_wall(f, &run->res, a->with_timing);
    cs_report_channels(f, m, &run->res);
}

/* ---- several machines ---------------------------------------------------------- */

typedef struct replay_table_ctx {
    const replay_args_t *a;
    char (*names)[96];
    int width, worst;
} replay_table_ctx_t;

/* A machine of the table (par.h): its row after the name, or why it failed. */
static cs_rec_t *replay_row_run(void *ctx, int i, int worker)
{
    const replay_args_t *a = ((const replay_table_ctx_t *)ctx)->a;
    replay_args_t quiet;
    replay_run_t run;
    cs_error_t err = {0};
    char *line = NULL;
    size_t len = 0;
    if (worker) { /* no progress line from a worker */
        quiet = *a;
        quiet.quiet = 1;
        a = &quiet;
    }
    int rc = replay_one(a, a->machines[i], &run, &err);
    cs_rec_t *r = cs_rec_new();
    cs_rec_put_int(r, "rc", rc);
    if (rc) {
        cs_rec_put_str(r, "err", err.msg);
    } else {
        FILE *f = open_memstream(&line, &len);
        if (f) {
            char t[64];
            cs_units_format_seconds((double)run.res.finish * run.m->tick_seconds, t, sizeof t);
            fprintf(f, " %6d %14lld %14s %12llu", cs_program_nranks(run.rr.p),
                    (long long)run.res.finish, t, (unsigned long long)run.res.events);
            if (a->with_timing)
                fprintf(f, " %9.3f", run.res.wall_seconds);
            fclose(f);
            cs_rec_put(r, "row", line, len);
        }
        free(line);
    }
    run_destroy(&run);
    return r;
}

static int replay_row_take(void *ctx, int i, const cs_rec_t *r, cs_error_t *err)
{
    replay_table_ctx_t *t = ctx;
    int rc = (int)cs_rec_int(r, "rc", CS_ERR_INTERNAL);
    size_t len = 0;
    (void)err;
    printf("%s%*s", t->names[i], t->width - cs_app_text_width(t->names[i]), "");
    if (rc) {
        char msg[CS_ERROR_MSG_MAX];
        cs_rec_copy(r, "err", msg, sizeof msg);
        printf(" failed: %s\n", msg);
        if (t->worst == CS_OK)
            t->worst = rc;
    } else {
        const char *row = cs_rec_get(r, "row", &len);
        fwrite(row ? row : "", 1, row ? len : 0, stdout);
        printf("\n");
    }
    fflush(stdout); /* a row as soon as it is known, as the serial table */
    return CS_OK;
}

static int replay_table(const replay_args_t *a, cs_par_t *par)
{
    char names[REPLAY_MAX_MACHINES][96];
    replay_table_ctx_t t = {a, names, 7, CS_OK};
    cs_par_ops_t ops = {.run = replay_row_run, .take = replay_row_take, .ctx = &t};
    cs_error_t err = {0};
    int rc;
    if (!cs_par_writes(par)) { /* a shard, an MPI rank other than 0 */
        cs_app_progress_t p;
        cs_app_progress_init(&p, "replay");
        p.quiet = a->quiet;
        rc = cs_par_run(par, &ops, a->nmachines, &p, &err);
        cs_app_progress_done(&p);
        return rc ? cs_app_report(&err) : CS_OK;
    }
    if ((rc = cs_par_check(par, a->nmachines, &err))) /* a merge: nothing printed */
        return cs_app_report(&err);
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
        if (cs_app_text_width(names[i]) > t.width)
            t.width = cs_app_text_width(names[i]);
    }
    printf("trace %s\n", a->rp.trace);
    /* no wall column under --no-timing: it would be a column of 0.000 */
    printf("%-*s %6s %14s %14s %12s%s\n", t.width, "machine", "ranks", "ticks", "time",
           "events", a->with_timing ? "    wall s" : "");
    cs_app_progress_t p;
    cs_app_progress_init(&p, "replay");
    p.quiet = a->quiet;
    rc = cs_par_run(par, &ops, a->nmachines, &p, &err);
    cs_app_progress_done(&p);
    if (rc) {
        cs_app_report(&err);
        return rc;
    }
    if (t.worst != CS_OK)
        fprintf(stderr, "collsim: replay: some machines failed (see the table)\n");
    return t.worst;
}

int cs_app_cmd_replay(int argc, char **argv)
{
    return cs_app_replay_main(argc, argv, NULL);
}

int cs_app_replay_main(int argc, char **argv, const cs_shard_set_t *merged)
{
    cs_par_t par;
    replay_args_t a;
    replay_run_t run;
    cs_error_t err = {0};
    int rc;

    cs_par_args("replay", &argc, argv, CS_PAR_SHARD, &par);
    cs_par_set_merged(&par, merged);
    replay_parse_args(argc, argv, &a);
    if (!a.nmachines && (par.nshards || par.mpi))
        cs_app_usage_error("replay", "--shard and --mpi spread the machines of --machines; "
                           "one --machine is one run");
    if (a.nmachines) {
        rc = replay_table(&a, &par);
    } else {
        rc = replay_one(&a, a.req.machine, &run, &err);
        if (rc == CS_OK) {
            if (a.json) {
                rc = cs_app_write_json(a.json, a.with_timing, run.m, run.rr.p, &run.res, 0, 0,
                                       NULL, &err);
                if (rc == CS_OK && !a.quiet && strcmp(a.json, "-") != 0)
                    fprintf(stderr, "collsim: wrote %s (JSON result)\n", a.json);
            } else {
                print_summary(stdout, &run);
            }
        }
        if (rc != CS_OK)
            cs_app_report(&err);
        run_destroy(&run);
    }
    free(a.machines_buf);
    cs_par_destroy(&par);
    return rc;
}
