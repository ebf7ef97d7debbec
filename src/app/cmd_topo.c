/*
 * cmd_topo.c - `collsim topo`: the shape of a machine's network.
 *
 * Prints node, link and channel counts, the degree range, and (through
 * igraph, cs_topo_stats) the diameter and the average distance, which cost
 * O(nodes * links) and so are skipped above TOPO_MAX_NODES_FOR_PATHS nodes.
 * Optionally writes the link graph as GraphML or Graphviz DOT.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/app.h"
#include "machines/machine.h"
#include "topo/netdesc.h"
#include "topo/netfile.h"
#include "topo/topo.h"

/* All-pairs BFS on 20,000 nodes of degree 4 is ~1e9 edge visits at most: a
 * few seconds, the most a describe command should take. */
#define TOPO_MAX_NODES_FOR_PATHS 20000

typedef struct topo_args {
    const char *machine;
    const char *graphml; /* output paths or NULL */
    const char *dot;
    int quiet; /* --quiet */
} topo_args_t;

static void topo_help(void)
{
    printf("Usage: collsim topo --machine SPEC [--graphml FILE] [--dot FILE]\n"
           "\n"
           "Describes the topology of a machine: nodes, links, channels, degree range,\n"
           "diameter and average distance (the last two only up to %d nodes).\n"
           "\n"
           "  -m, --machine SPEC   machine, e.g. alphabeta:topo=torus,rows=8,cols=8\n"
           "  -g, --graphml FILE   also write the link graph as GraphML\n"
           "  -d, --dot FILE       also write the link graph as Graphviz DOT\n"
           "      --quiet          no progress line on standard error\n"
           "  -h, --help           show this help and exit\n",
           TOPO_MAX_NODES_FOR_PATHS);
}

static void topo_parse_args(int argc, char **argv, topo_args_t *a)
{
    static const struct option longopts[] = {
        {"machine", required_argument, NULL, 'm'},
        {"graphml", required_argument, NULL, 'g'},
        {"dot", required_argument, NULL, 'd'},
        {"quiet", no_argument, NULL, 'Q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(a, 0, sizeof *a);
    while ((c = getopt_long(argc, argv, ":m:g:d:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': a->machine = optarg; break;
        case 'g': a->graphml = optarg; break;
        case 'd': a->dot = optarg; break;
        case 'Q': a->quiet = 1; break;
        case 'h': topo_help(); exit(0);
        default: cs_app_getopt_error("topo", c, argv, longopts);
        }
    }
    cs_app_no_operands("topo", argc, argv);
    if (!a->machine)
        cs_app_usage_error("topo", "missing --machine SPEC");
}

/* A diameter is a whole number of hops and prints without a fraction; an
 * average always shows four decimals, so columns of several runs line up. */
static void topo_print_hops(const char *label, double v, int whole, int too_large, int connected)
{
    if (too_large)
        printf("%-13s n/a (too large: more than %d nodes)\n", label, TOPO_MAX_NODES_FOR_PATHS);
    else if (!connected || v < 0)
        printf("%-13s infinite (graph is disconnected)\n", label);
    else if (whole && v == floor(v))
        printf("%-13s %.0f\n", label, v);
    else
        printf("%-13s %.4f\n", label, v);
}

/* Writes `path` with one of the writers below: a topology's (GraphML or
 * DOT of the structure) or a network description's (GraphML with timing). */
typedef int (*topo_writer_fn)(const cs_topo_t *t, FILE *f, cs_error_t *err);

static int topo_write(const cs_topo_t *t, const cs_netdesc_t *d, const char *path,
                      topo_writer_fn fn, cs_error_t *err)
{
    cs_app_out_t out;
    int rc = cs_app_out_open(NULL, path, &out, err);
    if (rc == CS_OK)
        rc = d ? cs_netfile_write_graphml(d, out.f, err) : fn(t, out.f, err);
    if (rc != CS_OK && rc != CS_ERR_OOM && !strstr(err->msg, path))
        cs_error_prefix(err, "%s", path);
    return cs_app_out_close(&out, rc, err);
}

/* GraphML that `net:file=` reads back to the same network: hosts, switches,
 * each link's bandwidth and latency (topo/netfile.h); a machine with its
 * own engine gets the structure only. */
static int topo_write_graphml(const cs_machine_t *m, const char *path, cs_error_t *err)
{
    cs_netdesc_t *d;
    if (m->type->net_new)
        return topo_write(m->topo, NULL, path, cs_topo_write_graphml, err);
    int rc = cs_machine_netdesc(m, &d, err);
    if (rc == CS_OK)
        rc = topo_write(NULL, d, path, NULL, err);
    cs_netdesc_free(d);
    return rc;
}

/* The bandwidth across the split of the rank nodes into their two halves
 * by id (a machine's own engine times its links itself: none). */
static int topo_print_bisection(const cs_machine_t *m, cs_error_t *err)
{
    int nodes = cs_topo_nodes(m->topo), hosts = cs_machine_nodes(m), links;
    double cut = 0;
    int rc;
    char b[32];
    if (m->type->net_new || hosts < 2)
        return CS_OK;
    links = cs_topo_channels(m->topo) / 2;
    double *cap = cs_malloc((size_t)(links ? links : 1) * sizeof *cap);
    int8_t *side = cs_malloc((size_t)nodes);
    for (int l = 0; l < links; l++)
        cap[l] = cs_machine_channel_bandwidth(m, 2 * l);
    for (int v = 0; v < nodes; v++)
        side[v] = (int8_t)(v >= hosts ? -1 : v >= hosts / 2);
    rc = cs_topo_cut(m->topo, cap, side, &cut, err);
    if (rc == CS_OK)
        printf("%-13s %s across nodes 0..%d | %d..%d (igraph max-flow; the bisection is at "
               "most this)\n", "bisection", cs_units_spec_bandwidth(cut, b, sizeof b),
               hosts / 2 - 1, hosts / 2, hosts - 1);
    free(cap);
    free(side);
    return rc;
}

/* The progress of the two distance passes, which take seconds from about
 * 10,000 nodes on.  Both are a BFS from every node, so each is counted as
 * half of the work, and the second (which igraph does not measure) is
 * expected to last as long as the first did. */
typedef struct topo_watch {
    cs_app_progress_t progress;
    double t_start;    /* of the first pass (seconds of progress.t0's clock) */
    double t_diameter; /* when the first pass ended, 0 before */
} topo_watch_t;

static double topo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* cs_topo_stats_watched's watcher (ctx: a topo_watch_t). */
static void topo_progress(void *ctx, const char *phase, double fraction)
{
    topo_watch_t *w = ctx;
    if (strcmp(phase, "diameter") == 0) {
        cs_app_progress_show(&w->progress, fraction < 0 ? 0 : fraction / 2, phase);
        return;
    }
    double now = topo_now();
    if (!w->t_diameter)
        w->t_diameter = now;
    double first = w->t_diameter - w->t_start, f = 0.5;
    if (first > 0)
        f += fmin(0.49, (now - w->t_diameter) / first / 2);
    cs_app_progress_show(&w->progress, f, phase);
}

int cs_app_cmd_topo(int argc, char **argv)
{
    topo_args_t a;
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    cs_topo_stats_t st;
    int rc;

    topo_parse_args(argc, argv, &a);
    memset(&st, 0, sizeof st);
    rc = cs_machine_new(a.machine, &m, &err);
    if (rc == CS_OK) {
        topo_watch_t w = {.t_start = topo_now()};
        cs_app_progress_init(&w.progress, a.machine);
        w.progress.quiet = a.quiet;
        rc = cs_topo_stats_watched(m->topo, TOPO_MAX_NODES_FOR_PATHS, topo_progress, &w, &st,
                                   &err);
        cs_app_progress_done(&w.progress);
    }
    if (rc == CS_OK) {
        int too_large = st.nodes > TOPO_MAX_NODES_FOR_PATHS;
        printf("%-13s %s\n", "machine", m->spec);
        printf("%-13s %s\n", "topology", cs_topo_name(m->topo));
        /* the graph's nodes, and what the machine calls them when that is
         * more than "N nodes" (a Groq "node" is 8 TSPs: "nodes 16" alone
         * would contradict groq:nodes=2) */
        char count[80], plain[32];
        cs_machine_count_text(m, count, sizeof count);
        snprintf(plain, sizeof plain, "%d nodes", st.nodes);
        if (strcmp(count, plain))
            printf("%-13s %d (%s)\n", "nodes", st.nodes, count);
        else
            printf("%-13s %d\n", "nodes", st.nodes);
        printf("%-13s %lld\n", "links", (long long)st.links);
        printf("%-13s %lld\n", "channels", (long long)st.channels);
        printf("%-13s %d..%d\n", "degree", st.min_degree, st.max_degree);
        topo_print_hops("diameter", st.diameter, 1, too_large, st.connected);
        topo_print_hops("avg distance", st.avg_distance, 0, too_large, st.connected);
        if (!too_large)
            printf("%-13s %s\n", "connected", st.connected ? "yes" : "no");
        rc = topo_print_bisection(m, &err);
        cs_machine_report(m, NULL, stdout);
    }
    if (rc == CS_OK && a.graphml) {
        rc = topo_write_graphml(m, a.graphml, &err);
        if (rc == CS_OK)
            printf("%-13s %s\n", "graphml", a.graphml);
    }
    if (rc == CS_OK && a.dot) {
        rc = topo_write(m->topo, NULL, a.dot, cs_topo_write_dot, &err);
        if (rc == CS_OK)
            printf("%-13s %s\n", "dot", a.dot);
    }
    if (rc != CS_OK)
        cs_app_report(&err);
    cs_machine_free(m);
    return rc;
}
