/*
 * cmd_run.c - `collsim run`: one program on one machine, reported as a
 * short human summary or as the versioned JSON result (docs/json.md).
 *
 * The command is a pipeline of small steps (parse options, make the machine,
 * obtain the program, check it fits, execute, report) so that other sources
 * of programs (collective algorithms, other trace formats) and other outputs
 * (CSV, timelines, heatmaps) can be added as one option plus one step each.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "core/exec.h"
#include "core/net.h"
#include "core/program.h"
#include "core/units.h"
#include "io/goal.h"
#include "io/result_json.h"
#include "machines/machine.h"

#define RUN_TOP_CHANNELS 5

/* Everything the command line says about one run. */
typedef struct run_args {
    const char *machine; /* spec string */
    const char *program; /* GOAL file */
    const char *json;    /* output path, "-" for stdout, NULL for the summary */
    int with_timing;     /* 0 with --no-timing */
    cs_net_mode_t mode;
    cs_queue_kind_t queue;
} run_args_t;

static void run_help(void)
{
    char queues[256];
    cs_app_queue_names(queues, sizeof queues, ", ");
    printf("Usage: collsim run --machine SPEC --program FILE.goal [OPTIONS]\n"
           "\n"
           "Runs a program on a machine and prints a summary (or writes JSON).\n"
           "\n"
           "  -m, --machine SPEC     machine, e.g. alphabeta:topo=ring,p=8\n"
           "                         (see 'collsim list machines')\n"
           "  -p, --program FILE     program as a GOAL schedule (text form; '-' = stdin)\n"
           "  -M, --mode MODE        network fidelity: packet (default) or fluid\n"
           "  -j, --json FILE        write the JSON result to FILE ('-' = stdout)\n"
           "                         instead of printing the summary\n"
           "      --no-timing        write wall_seconds and events_per_second as 0,\n"
           "                         so that repeated runs give identical output\n"
           "  -q, --queue KIND       event queue: %s (default %s)\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 5 model error.\n",
           queues, cs_queue_kind_name(CS_QUEUE_DEFAULT));
}

static void run_parse_args(int argc, char **argv, run_args_t *a)
{
    enum { OPT_NO_TIMING = 256 };
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"program", required_argument, NULL, 'p'},
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
        case 'M':
            if (cs_net_parse_mode(optarg, &a->mode, &err) != CS_OK)
                cs_app_usage_error("run", "--mode: %s", err.msg);
            break;
        case 'q':
            if (cs_app_parse_queue(optarg, &a->queue, &err) != CS_OK)
                cs_app_usage_error("run", "--queue: %s", err.msg);
            break;
        case 'h': run_help(); exit(0);
        default: cs_app_getopt_error("run", c, argv);
        }
    }
    if (optind < argc)
        cs_app_usage_error("run", "unexpected argument '%s'", argv[optind]);
    if (!a->machine)
        cs_app_usage_error("run", "missing --machine SPEC");
    if (!a->program)
        cs_app_usage_error("run", "missing --program FILE");
}

/* Obtains the program the arguments name.  The one place to extend when
 * programs can also come from collective algorithms or other formats. */
static int run_load_program(const run_args_t *a, cs_program_t **out, cs_error_t *err)
{
    if (strcmp(a->program, "-") == 0)
        return cs_goal_read_stream(stdin, "<stdin>", out, err);
    return cs_goal_read_file(a->program, out, err);
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

/* Fills top[] with the ids of the busiest channels that carried traffic;
 * returns how many (at most n).  One pass with insertion into a tiny sorted
 * array: O(channels * n). */
static int run_busiest(const cs_exec_result_t *r, int nchan, int *top, int n)
{
    int count = 0;
    if (!r->net)
        return 0;
    for (int c = 0; c < nchan; c++) {
        const cs_chan_stats_t *s = cs_net_chan_stats(r->net, c);
        if (!s || (s->bytes == 0 && s->busy == 0))
            continue;
        int pos = count;
        while (pos > 0 &&
               run_chan_before(s, c, cs_net_chan_stats(r->net, top[pos - 1]), top[pos - 1]))
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

static void run_print_summary(FILE *f, const run_args_t *a, const cs_machine_t *m,
                              const cs_program_t *p, const cs_exec_result_t *r)
{
    const cs_topo_t *t = m->topo;
    char buf[64];
    int top[RUN_TOP_CHANNELS];

    fprintf(f, "machine   %s (%d nodes, %d channels)\n", m->spec, cs_topo_nodes(t),
            cs_topo_channels(t));
    fprintf(f, "mode      %s (queue %s)\n", cs_net_mode_name(a->mode),
            cs_queue_kind_name(a->queue));
    fprintf(f, "program   %s: %d ranks, %ld ops\n", a->program, cs_program_nranks(p),
            (long)cs_program_nops(p));
    fprintf(f, "messages  %lld\n", (long long)r->messages);
    cs_units_format_seconds((double)r->finish * m->tick_seconds, buf, sizeof buf);
    fprintf(f, "finish    %lld ticks = %s\n", (long long)r->finish, buf);
    fprintf(f, "events    %llu\n", (unsigned long long)r->events);
    if (a->with_timing) {
        double rate = r->wall_seconds > 0 ? (double)r->events / r->wall_seconds : 0.0;
        fprintf(f, "wall      %.6f s (%.3f M events/s)\n", r->wall_seconds, rate / 1e6);
    } else {
        fprintf(f, "wall      not shown (--no-timing)\n");
    }

    int n = run_busiest(r, cs_topo_channels(t), top, RUN_TOP_CHANNELS);
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

static int run_write_json(const run_args_t *a, const cs_machine_t *m, const cs_program_t *p,
                          const cs_exec_result_t *r, cs_error_t *err)
{
    if (strcmp(a->json, "-") == 0)
        return cs_result_write_json(stdout, m, p, r, a->with_timing, err);

    FILE *f = fopen(a->json, "w");
    if (!f)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open for writing: %s", a->json,
                            strerror(errno));
    int rc = cs_result_write_json(f, m, p, r, a->with_timing, err);
    if (fclose(f) != 0 && rc == CS_OK)
        rc = cs_error_set(err, CS_ERR_IO, "%s: error while writing: %s", a->json, strerror(errno));
    return rc;
}

int cs_app_cmd_run(int argc, char **argv)
{
    run_args_t a;
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    cs_program_t *p = NULL;
    cs_exec_result_t res;
    int rc;

    memset(&res, 0, sizeof res);
    run_parse_args(argc, argv, &a);

    rc = cs_machine_new(a.machine, &m, &err);
    if (rc == CS_OK)
        rc = run_load_program(&a, &p, &err);
    if (rc == CS_OK)
        rc = run_check_fits(&a, m, p, &err);
    if (rc == CS_OK) {
        cs_exec_env_t env = {
            .topo = m->topo,
            .net = &m->net,
            .reduce_num = m->reduce_num,
            .reduce_den = m->reduce_den,
            .tick_seconds = m->tick_seconds,
        };
        cs_exec_opts_t opts;
        cs_exec_opts_default(&opts);
        opts.mode = a.mode;
        opts.queue = a.queue;
        rc = cs_exec_run(&env, p, &opts, &res, &err);
    }
    if (rc == CS_OK) {
        if (a.json)
            rc = run_write_json(&a, m, p, &res, &err);
        else
            run_print_summary(stdout, &a, m, p, &res);
    }
    if (rc != CS_OK)
        cs_app_report(&err);

    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
    return rc;
}
