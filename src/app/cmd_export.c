/*
 * cmd_export.c - `collsim export`: one algorithm of the suite written as a
 * GOAL schedule (docs/replay.md, docs/goal.md), so that LogGOPSim or any
 * GOAL tool can run it, and `collsim replay` gives back exactly the time of
 * `collsim run --coll`; or as MSCCL XML (--format msccl, docs/msccl.md
 * "Export"), so that the MSCCL executor runs it on GPUs and `--algo
 * msccl:FILE` gives back the same program; or as per-rank Chakra execution
 * traces (--format chakra -o PREFIX, docs/chakra.md "Export") that
 * ASTRA-sim runs and `collsim replay --format chakra` reads back.  Chakra
 * also takes a trace as input (--trace FILE: a GOAL program, or a TI trace
 * whose collectives the suite expands for the machine, read as `collsim
 * replay` reads them, api/replay.h).
 *
 * The collective is prepared as `collsim run` prepares it (the request
 * path, api/request.h): with --machine, the algorithm sees that machine's
 * packet size and hints for natural placement, which is what a run on it
 * would see; without, a default packet size and no hints.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/replay.h"
#include "app/app.h"
#include "coll/coll.h"
#include "core/units.h"
#include "io/chakra_write.h"
#include "io/goal.h"
#include "io/msccl_write.h"
#include "machines/machine.h"

/* Without --machine: a neutral machine for the algorithm's defaults. */
#define EXPORT_DEFAULT_MACHINE "alphabeta:topo=line"

typedef struct export_args {
    cs_request_t req;    /* the collective; machine NULL: none given */
    const char *out;
    int msccl;           /* --format msccl */
    int chakra;          /* --format chakra */
    cs_replay_t trace;   /* --trace FILE and its options (chakra only) */
    int64_t chunks;      /* --chunks K (msccl), 0: the smallest that fits */
} export_args_t;

/* MSCCL XML without --bytes: a size that P and the pieces of the usual
 * splits divide (the file itself runs at any size its chunks divide). */
#define EXPORT_MSCCL_BLOCK 65536

static void export_help(void)
{
    printf("Usage: collsim export --coll NAME [--algo NAME] --ranks P --bytes N\n"
           "                      [--format goal|msccl|chakra] [--chunks K] [--root R]\n"
           "                      [--opt KEY=VALUE ...] [--machine SPEC] [-o FILE]\n"
           "       collsim export --format chakra --trace FILE [--trace-format goal|ti|auto]\n"
           "                      [--algo-for COLL=ALGO ...] [--flops RATE]\n"
           "                      (--machine SPEC | --ranks P) -o PREFIX\n"
           "\n"
           "Writes a collective built by an algorithm of the suite as a GOAL schedule, or as\n"
           "MSCCL XML that the MSCCL executor runs and '--algo msccl:FILE' reads back as the\n"
           "same program (docs/msccl.md, \"Export\"), or as Chakra execution traces, one\n"
           "file PREFIX.R.et per rank, that ASTRA-sim runs and 'collsim replay --format\n"
           "chakra' reads back as the same program (docs/chakra.md, \"Export\").\n"
           "\n"
           "      --coll NAME        broadcast, reduce, allreduce, allgather, reduce-scatter,\n"
           "                         gather, scatter, barrier, alltoall\n"
           "      --algo NAME        the algorithm (default: the collective's default)\n"
           "      --ranks P          ranks (default: every node of --machine)\n"
           "      --bytes N          size, as for 'collsim run' (units K, KiB, MB, ...); msccl\n"
           "                         without it: 64 KiB per rank (P x 64 KiB for allreduce,\n"
           "                         broadcast, reduce)\n"
           "      --root R           root of broadcast, reduce, gather, scatter (default 0)\n"
           "      --opt KEY=VALUE    an algorithm option (repeatable)\n"
           "      --format FORMAT    goal (GOAL text, the default), msccl (MSCCL XML) or\n"
           "                         chakra (needs -o PREFIX); what a format cannot express\n"
           "                         is refused with the reason (a multicast, a streamed\n"
           "                         dependency for msccl, ...)\n"
           "      --trace FILE       chakra: export this GOAL program or TI trace instead of\n"
           "                         a collective (TI collectives expanded by the suite for\n"
           "                         --machine, or a line of --ranks P nodes, as 'collsim\n"
           "                         replay' does)\n"
           "      --trace-format F   goal, ti or auto (default: told from the content)\n"
           "      --algo-for C=A     a TI collective's algorithm, as for 'collsim replay'\n"
           "      --flops RATE       TI compute speed in flop/s (default 1G)\n"
           "      --chunks K         msccl: nchunksperloop, the buffer cut in K chunks (default:\n"
           "                         the smallest count that makes every message whole chunks)\n"
           "  -m, --machine SPEC     build as for this machine (its packet size and hints,\n"
           "                         natural placement), as 'collsim run' would\n"
           "  -o, --output FILE      write to FILE (default: standard output); chakra: the\n"
           "                         files' PREFIX (the set is written whole or not at all)\n"
           "  -h, --help             show this help and exit\n");
}

/* One of --trace's options (api/replay.h), a usage error if refused. */
static void export_trace_set(export_args_t *a, const char *key, const char *value)
{
    cs_error_t err = {0};
    if (cs_replay_set(&a->trace, key, value, &err) != CS_OK) {
        if (!strcmp(key, "format")) /* replay's message names its own --format */
            cs_app_usage_error("export", "--trace-format '%s': expected goal, ti or auto",
                               value);
        cs_app_usage_error("export", "%s", err.msg);
    }
}

static void export_parse_args(int argc, char **argv, export_args_t *a)
{
    enum { OPT_OPT = 256, OPT_FORMAT, OPT_CHUNKS, OPT_TRACE, OPT_TRACE_FORMAT, OPT_ALGO_FOR,
           OPT_FLOPS };
    static const struct option longopts[] = {
        {"coll", required_argument, NULL, CS_APP_OPT_COLL},
        {"algo", required_argument, NULL, CS_APP_OPT_ALGO},
        {"bytes", required_argument, NULL, CS_APP_OPT_BYTES},
        {"root", required_argument, NULL, CS_APP_OPT_ROOT},
        {"ranks", required_argument, NULL, CS_APP_OPT_RANKS},
        {"opt", required_argument, NULL, OPT_OPT},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"chunks", required_argument, NULL, OPT_CHUNKS},
        {"trace", required_argument, NULL, OPT_TRACE},
        {"trace-format", required_argument, NULL, OPT_TRACE_FORMAT},
        {"algo-for", required_argument, NULL, OPT_ALGO_FOR},
        {"flops", required_argument, NULL, OPT_FLOPS},
        {"machine", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    memset(a, 0, sizeof *a);
    cs_request_init(&a->req);
    cs_replay_init(&a->trace);
    while ((c = getopt_long(argc, argv, ":m:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out = optarg; break;
        case OPT_FORMAT:
            a->msccl = !strcmp(optarg, "msccl");
            a->chakra = !strcmp(optarg, "chakra");
            if (!a->msccl && !a->chakra && strcmp(optarg, "goal"))
                cs_app_usage_error("export", "--format '%s': only goal, msccl and chakra are "
                                   "written", optarg);
            break;
        case OPT_TRACE: export_trace_set(a, "trace", optarg); break;
        case OPT_TRACE_FORMAT: export_trace_set(a, "format", optarg); break;
        case OPT_ALGO_FOR: export_trace_set(a, "algo-for", optarg); break;
        case OPT_FLOPS: export_trace_set(a, "flops", optarg); break;
        case OPT_CHUNKS: {
            char *end;
            errno = 0;
            long long k = strtoll(optarg, &end, 10);
            if (end == optarg || *end || errno || k < 1 || k > CS_MSCCL_WRITE_MAX_CHUNKS)
                cs_app_usage_error("export", "--chunks '%s': expected a count in 1..%d", optarg,
                                   CS_MSCCL_WRITE_MAX_CHUNKS);
            a->chunks = k;
            break;
        }
        case OPT_OPT:
            if (!strchr(optarg, '=') || optarg[0] == '=' || strchr(optarg, ','))
                cs_app_usage_error("export", "--opt '%s': expected one KEY=VALUE", optarg);
            cs_app_add_opt("export", &a->req, optarg);
            break;
        case 'h': export_help(); exit(0);
        default: cs_app_option("export", &a->req, c, argv, longopts);
        }
    }
    cs_app_no_operands("export", argc, argv);
    if (a->chakra && !a->out)
        cs_app_usage_error("export", "--format chakra writes one file per rank: give their "
                                     "prefix with -o PREFIX");
    if (a->trace.trace && !a->chakra)
        cs_app_usage_error("export", "--trace is for --format chakra (a GOAL program is "
                                     "already GOAL)");
    if (!a->trace.trace) {
        cs_error_t e = {0};
        if (cs_replay_check_unused(&a->trace, &e) != CS_OK)
            cs_app_usage_error("export", "%s", e.msg);
    } else if (a->req.coll) {
        cs_app_usage_error("export", "--trace and --coll exclude each other (export one "
                                     "program)");
    }
    if (a->trace.trace) {
        if (!a->req.machine && !a->req.ranks)
            cs_app_usage_error("export", "--trace needs --machine SPEC (the machine TI "
                                         "collectives are built for) or --ranks P (a line of "
                                         "P nodes)");
        if (a->req.algo || a->req.bytes_text || a->req.has_root || a->req.nopts || a->chunks)
            cs_app_usage_error("export", "--trace exports the trace's own ops: --algo, "
                                         "--bytes, --root, --opt and --chunks are for --coll");
        return;
    }
    if (!a->req.coll)
        cs_app_usage_error("export", "missing --coll NAME");
    if (!a->req.machine && !a->req.ranks)
        cs_app_usage_error("export", "missing --ranks P (or --machine SPEC, whose nodes are "
                                     "the ranks)");
    if (a->chunks && !a->msccl)
        cs_app_usage_error("export", "--chunks is for --format msccl");
}

/* --trace: the trace read as `collsim replay` reads it, written as
 * Chakra (the writer refuses before writing anything). */
static int export_trace(const export_args_t *a, cs_error_t *err)
{
    char spec[96];
    cs_machine_t *m = NULL;
    cs_replay_run_t rr;
    int rc;
    memset(&rr, 0, sizeof rr);
    if (!a->req.machine)
        snprintf(spec, sizeof spec, "%s,p=%lld", EXPORT_DEFAULT_MACHINE,
                 (long long)a->req.ranks);
    rc = cs_machine_new(a->req.machine ? a->req.machine : spec, &m, err);
    if (rc == CS_OK)
        rc = cs_replay_load(&a->trace, m, &rr, err);
    if (rc == CS_OK && (rc = cs_chakra_write(rr.p, a->out, err)))
        cs_error_prefix(err, "%s", a->trace.trace);
    cs_replay_run_destroy(&rr);
    cs_machine_free(m);
    return rc;
}

int cs_app_cmd_export(int argc, char **argv)
{
    export_args_t a;
    cs_error_t err = {0};
    cs_request_run_t run;
    char spec[96];
    int rc;

    cs_request_run_init(&run);
    export_parse_args(argc, argv, &a);
    if (a.trace.trace) {
        rc = export_trace(&a, &err);
        goto done;
    }
    cs_request_t req = a.req;
    if (!a.req.machine) {
        /* a line of exactly P nodes (its hints are dropped below) */
        snprintf(spec, sizeof spec, "%s,p=%lld", EXPORT_DEFAULT_MACHINE, (long long)a.req.ranks);
        req.machine = spec;
    }
    if (a.msccl && !a.req.bytes_text) { /* made P x 64 KiB for a vector below */
        req.bytes = EXPORT_MSCCL_BLOCK;
        req.bytes_text = "64KiB";
    }
    rc = cs_request_prepare(&req, &run, &err);
    const cs_machine_t *m = run.machine;
    const cs_request_coll_t *coll = &run.coll;
    if (rc == CS_OK && !a.req.machine) {
        /* no machine: no hints at all */
        memset(&run.coll.hints, 0, sizeof run.coll.hints);
        run.coll.args.unit = 4096;
    }
    if (rc == CS_OK && a.msccl) {
        /* the writer reads every message's buffer range */
        run.coll.args.no_data = 0;
        if (!a.req.bytes_text) {
            cs_coll_kind_t k = run.coll.args.kind;
            run.coll.args.bytes = EXPORT_MSCCL_BLOCK *
                                  (k == CS_COLL_ALLREDUCE || k == CS_COLL_BROADCAST ||
                                   k == CS_COLL_REDUCE ? run.coll.args.P : 1);
        }
    }
    if (rc == CS_OK && a.chakra)
        run.coll.args.no_data = 0; /* the placement goes along (collsim_data) */
    req.keep_program = 1; /* written out whole */
    if (rc == CS_OK)
        rc = cs_request_build(&req, &run, &err);
    if (rc == CS_OK && a.chakra) {
        rc = cs_chakra_write(run.program, a.out, &err);
        if (rc != CS_OK)
            cs_error_prefix(&err, "%s/%s", cs_coll_name(coll->algo->kind), coll->algo->name);
        goto done;
    }
    if (rc == CS_OK) {
        cs_app_out_t out;
        FILE *f = NULL;
        rc = cs_app_out_open(NULL, a.out ? a.out : "-", &out, &err);
        if (rc == CS_OK) {
            f = out.f;
            char size[32];
            if (a.msccl) {
                char name[160];
                snprintf(name, sizeof name, "%s/%s", cs_coll_name(coll->algo->kind),
                         coll->algo->name);
                cs_msccl_write_opts_t wo = {name, a.chunks, NULL};
                rc = cs_msccl_write(run.program, &coll->args, &wo, f, &err);
                if (rc != CS_OK && a.out)
                    cs_error_prefix(&err, "%s", a.out);
                rc = cs_app_out_close(&out, rc, &err);
                goto done;
            }
            cs_units_format_bytes(coll->args.bytes, size, sizeof size);
            fprintf(f, "// collsim export: %s/%s, %d ranks, %s", cs_coll_name(coll->algo->kind),
                    coll->algo->name, coll->args.P, size);
            if (cs_coll_rooted(coll->args.kind))
                fprintf(f, ", root %d", coll->args.root);
            for (int i = 0; i < a.req.nopts; i++)
                fprintf(f, ", %s", a.req.opts[i]);
            fprintf(f, "\n// built for %s\n",
                    a.req.machine ? m->spec : "no machine (no hints, 4 KiB segments)");
            rc = cs_goal_write(run.program, f, &err);
            if (rc != CS_OK && a.out)
                cs_error_prefix(&err, "%s", a.out);
            rc = cs_app_out_close(&out, rc, &err);
        }
    }
done:
    if (rc != CS_OK)
        cs_app_report(&err);
    cs_request_run_destroy(&run);
    return rc;
}
