/*
 * cmd_export.c - `collsim export`: one algorithm of the suite written as a
 * GOAL schedule (docs/replay.md, docs/goal.md), so that LogGOPSim or any
 * GOAL tool can run it, and `collsim replay` gives back exactly the time of
 * `collsim run --coll`.
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

#include "app/app.h"
#include "coll/coll.h"
#include "core/units.h"
#include "io/goal.h"
#include "machines/machine.h"

/* Without --machine: a neutral machine for the algorithm's defaults. */
#define EXPORT_DEFAULT_MACHINE "alphabeta:topo=line"

typedef struct export_args {
    cs_request_t req;    /* the collective; machine NULL: none given */
    const char *out;
} export_args_t;

static void export_help(void)
{
    printf("Usage: collsim export --coll NAME [--algo NAME] --ranks P --bytes N\n"
           "                      [--format goal] [--root R] [--opt KEY=VALUE ...]\n"
           "                      [--machine SPEC] [-o FILE]\n"
           "\n"
           "Writes a collective built by an algorithm of the suite as a GOAL schedule.\n"
           "\n"
           "      --coll NAME        broadcast, reduce, allreduce, allgather, reduce-scatter,\n"
           "                         gather, scatter, barrier, alltoall\n"
           "      --algo NAME        the algorithm (default: the collective's default)\n"
           "      --ranks P          ranks (default: every node of --machine)\n"
           "      --bytes N          size, as for 'collsim run' (units K, KiB, MB, ...)\n"
           "      --root R           root of broadcast, reduce, gather, scatter (default 0)\n"
           "      --opt KEY=VALUE    an algorithm option (repeatable)\n"
           "      --format goal      the output format (GOAL text, the only one)\n"
           "  -m, --machine SPEC     build as for this machine (its packet size and hints,\n"
           "                         natural placement), as 'collsim run' would\n"
           "  -o, --output FILE      write to FILE (default: standard output)\n"
           "  -h, --help             show this help and exit\n");
}

static void export_parse_args(int argc, char **argv, export_args_t *a)
{
    enum { OPT_OPT = 256, OPT_FORMAT };
    static const struct option longopts[] = {
        {"coll", required_argument, NULL, CS_APP_OPT_COLL},
        {"algo", required_argument, NULL, CS_APP_OPT_ALGO},
        {"bytes", required_argument, NULL, CS_APP_OPT_BYTES},
        {"root", required_argument, NULL, CS_APP_OPT_ROOT},
        {"ranks", required_argument, NULL, CS_APP_OPT_RANKS},
        {"opt", required_argument, NULL, OPT_OPT},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"machine", required_argument, NULL, 'm'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    memset(a, 0, sizeof *a);
    cs_request_init(&a->req);
    while ((c = getopt_long(argc, argv, ":m:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': a->out = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "goal"))
                cs_app_usage_error("export", "--format '%s': only goal is written", optarg);
            break;
        case OPT_OPT:
            if (!strchr(optarg, '=') || optarg[0] == '=' || strchr(optarg, ','))
                cs_app_usage_error("export", "--opt '%s': expected one KEY=VALUE", optarg);
            cs_app_add_opt("export", &a->req, optarg);
            break;
        case 'h': export_help(); exit(0);
        default: cs_app_option("export", &a->req, c, argv);
        }
    }
    cs_app_no_operands("export", argc, argv);
    if (!a->req.coll)
        cs_app_usage_error("export", "missing --coll NAME");
    if (!a->req.machine && !a->req.ranks)
        cs_app_usage_error("export", "missing --ranks P (or --machine SPEC, whose nodes are "
                                     "the ranks)");
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
    cs_request_t req = a.req;
    if (!a.req.machine) {
        /* a line of exactly P nodes (its hints are dropped below) */
        snprintf(spec, sizeof spec, "%s,p=%lld", EXPORT_DEFAULT_MACHINE, (long long)a.req.ranks);
        req.machine = spec;
    }
    rc = cs_request_prepare(&req, &run, &err);
    const cs_machine_t *m = run.machine;
    const cs_request_coll_t *coll = &run.coll;
    if (rc == CS_OK && !a.req.machine) {
        /* no machine: no hints at all */
        memset(&run.coll.hints, 0, sizeof run.coll.hints);
        run.coll.args.unit = 4096;
    }
    if (rc == CS_OK)
        rc = cs_request_build(&req, &run, &err);
    if (rc == CS_OK) {
        cs_app_out_t out;
        FILE *f = NULL;
        rc = cs_app_out_open(NULL, a.out ? a.out : "-", &out, &err);
        if (rc == CS_OK) {
            f = out.f;
            char size[32];
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
    if (rc != CS_OK)
        cs_app_report(&err);
    cs_request_run_destroy(&run);
    return rc;
}
