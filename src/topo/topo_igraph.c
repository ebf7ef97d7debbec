/*
 * topo_igraph.c - analysis and export of topologies (contract in topo.h):
 * conversion to an igraph graph, exact graph statistics through igraph 0.10
 * (degrees, connectivity, diameter, mean distance), GraphML through igraph's
 * writer, and Graphviz DOT written here.
 *
 * Everything works on the undirected link graph (one edge per link, the
 * edge of link l from cs_topo_channel_src/dst of channel 2l) and uses only
 * the public topology API.  igraph's attribute handler is process-global, so
 * this file installs none: the GraphML carries the structure only.  igraph's
 * error handler is global too and its default aborts (on running out of
 * memory, or a write to a full disk in the GraphML writer): the application
 * calls cs_topo_igraph_errors_as_codes once at start-up so that every
 * failure comes back as the error code the functions below turn into a
 * cs_error_t (igraph 0.10 manual, "Error handling": a handler that returns
 * must free igraph's temporaries with IGRAPH_FINALLY_FREE).
 */
#include "topo/topo.h"

#include <igraph.h>
#include <pthread.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* igraph's error: free what igraph was building and return; the caller
 * sees the code.  Silent: only the application prints. */
static void igraph_error_quiet(const char *reason, const char *file, int line,
                               igraph_error_t igraph_errno)
{
    (void)reason;
    (void)file;
    (void)line;
    (void)igraph_errno;
    IGRAPH_FINALLY_FREE();
}

static void igraph_warning_quiet(const char *reason, const char *file, int line)
{
    (void)reason;
    (void)file;
    (void)line;
}

static pthread_once_t igraph_lock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t igraph_mutex;

static void igraph_lock_init(void)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&igraph_mutex, &a);
    pthread_mutexattr_destroy(&a);
}

void cs_topo_igraph_lock(void)
{
    pthread_once(&igraph_lock_once, igraph_lock_init);
    CS_ASSERT(pthread_mutex_lock(&igraph_mutex) == 0);
}

void cs_topo_igraph_unlock(void)
{
    CS_ASSERT(pthread_mutex_unlock(&igraph_mutex) == 0);
}

void cs_topo_igraph_errors_as_codes(void)
{
    cs_topo_igraph_lock();
    igraph_set_error_handler(igraph_error_quiet);
    igraph_set_warning_handler(igraph_warning_quiet);
    cs_topo_igraph_unlock();
}

static int igraph_fail(cs_error_t *err, igraph_error_t e, const char *what)
{
    int code = e == IGRAPH_ENOMEM ? CS_ERR_OOM : e == IGRAPH_EFILE ? CS_ERR_IO : CS_ERR_INTERNAL;
    if (e == IGRAPH_ENOMEM)
        return cs_error_set(err, code, "out of memory (igraph %s)", what);
    return cs_error_set(err, code, "igraph %s failed: %s", what, igraph_strerror(e));
}

static int topo_to_igraph_unlocked(const cs_topo_t *t, void *graph, cs_error_t *err)
{
    igraph_t *g = graph;
    igraph_vector_int_t edges;
    int links = cs_topo_channels(t) / 2;
    igraph_error_t e = igraph_vector_int_init(&edges, 2 * (igraph_integer_t)links);
    if (e != IGRAPH_SUCCESS) {
        igraph_fail(err, e, "vector allocation");
        cs_error_prefix(err, "%s (%d nodes, %d links)", cs_topo_name(t), cs_topo_nodes(t), links);
        return err ? err->code : CS_ERR_OOM;
    }
    for (int l = 0; l < links; l++) {
        VECTOR(edges)[2 * (igraph_integer_t)l] = cs_topo_channel_src(t, 2 * l);
        VECTOR(edges)[2 * (igraph_integer_t)l + 1] = cs_topo_channel_dst(t, 2 * l);
    }
    if (e == IGRAPH_SUCCESS)
        e = igraph_create(g, &edges, cs_topo_nodes(t), IGRAPH_UNDIRECTED);
    igraph_vector_int_destroy(&edges);
    if (e != IGRAPH_SUCCESS) {
        igraph_fail(err, e, "graph construction");
        cs_error_prefix(err, "%s (%d nodes, %d links)", cs_topo_name(t), cs_topo_nodes(t), links);
        return err ? err->code : CS_ERR_OOM;
    }
    return CS_OK;
}

static int topo_eccentricity_unlocked(const cs_topo_t *t, int node, int *out, cs_error_t *err)
{
    igraph_t g;
    igraph_vector_t ecc;
    int rc = topo_to_igraph_unlocked(t, &g, err);
    if (rc)
        return rc;
    igraph_error_t e = igraph_vector_init(&ecc, 1);
    if (e == IGRAPH_SUCCESS) {
        e = igraph_eccentricity(&g, &ecc, igraph_vss_1(node), IGRAPH_ALL);
        if (e == IGRAPH_SUCCESS)
            *out = (int)VECTOR(ecc)[0];
        igraph_vector_destroy(&ecc);
    }
    igraph_destroy(&g);
    return e == IGRAPH_SUCCESS ? CS_OK : igraph_fail(err, e, "eccentricity");
}

static int topo_group_diameter_unlocked(const cs_topo_t *t, const int32_t *group, int ngroups, int *out,
                           cs_error_t *err)
{
    igraph_t g;
    igraph_vector_int_t edges;
    igraph_real_t diam = 0;
    int links = cs_topo_channels(t) / 2, k = 0;
    igraph_error_t e = igraph_vector_int_init(&edges, 2 * (igraph_integer_t)links);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "vector allocation");
    /* links inside a group would be loops: they shorten no path */
    for (int l = 0; l < links; l++) {
        int a = group[cs_topo_channel_src(t, 2 * l)], b = group[cs_topo_channel_dst(t, 2 * l)];
        if (a != b) {
            VECTOR(edges)[k++] = a;
            VECTOR(edges)[k++] = b;
        }
    }
    e = igraph_vector_int_resize(&edges, k);
    if (e == IGRAPH_SUCCESS)
        e = igraph_create(&g, &edges, ngroups, IGRAPH_UNDIRECTED);
    igraph_vector_int_destroy(&edges);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "graph construction");
    e = igraph_diameter(&g, &diam, NULL, NULL, NULL, NULL, IGRAPH_UNDIRECTED, 1);
    igraph_destroy(&g);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "diameter");
    *out = (int)diam;
    return CS_OK;
}

/* The watcher of cs_topo_stats_watched.  igraph reports progress through
 * one handler per thread (igraph_set_progress_handler), with no context of
 * ours: the watcher is kept here for the length of one call, under the
 * igraph lock (cs_topo_igraph_lock), and cleared after it. */
static cs_topo_progress_fn watch_fn;
static void *watch_ctx;
static const char *watch_phase;

static void topo_watch_phase(const char *phase, double fraction)
{
    watch_phase = phase;
    if (watch_fn)
        watch_fn(watch_ctx, phase, fraction);
}

/* igraph's handler: percent in [0, 100] of the pass under way. */
static igraph_error_t topo_watch_igraph(const char *message, igraph_real_t percent, void *data)
{
    (void)message;
    (void)data;
    if (watch_fn)
        watch_fn(watch_ctx, watch_phase ? watch_phase : "distances", percent / 100.0);
    return IGRAPH_SUCCESS;
}

/* igraph's interruption check, which its mean-distance pass makes as it
 * goes (that pass has no progress reports of its own in igraph 0.10): a
 * sign of life without a fraction (-1); how often it comes is igraph's
 * habit, not its contract, so it is not counted into one. */
static igraph_error_t topo_watch_interrupt(void *data)
{
    (void)data;
    if (watch_fn && watch_phase && !strcmp(watch_phase, "mean distance"))
        watch_fn(watch_ctx, watch_phase, -1);
    return IGRAPH_SUCCESS;
}

/* Degrees and connectivity (O(n + m)), then, for graphs small enough,
 * diameter and mean distance (BFS from every node, O(n * m)). */
static int fill_stats(const igraph_t *g, int n, int max_nodes_for_paths, cs_topo_stats_t *out,
                      cs_error_t *err)
{
    igraph_vector_int_t deg;
    igraph_bool_t conn = 0;
    igraph_error_t e = igraph_vector_int_init(&deg, 0);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "vector allocation");
    e = igraph_degree(g, &deg, igraph_vss_all(), IGRAPH_ALL, IGRAPH_LOOPS);
    if (e != IGRAPH_SUCCESS) {
        igraph_vector_int_destroy(&deg);
        return igraph_fail(err, e, "degree");
    }
    out->min_degree = (int)igraph_vector_int_min(&deg);
    out->max_degree = (int)igraph_vector_int_max(&deg);
    igraph_vector_int_destroy(&deg);

    e = igraph_is_connected(g, &conn, IGRAPH_WEAK);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "connectivity");
    out->connected = conn ? 1 : 0;
    /* Disconnected: some distances are infinite, so are both statistics;
     * -1 says "not a number" as for the skipped case. */
    if (!conn || n > max_nodes_for_paths)
        return CS_OK;

    igraph_real_t diam = -1, avg = -1;
    topo_watch_phase("diameter", 0);
    e = igraph_diameter(g, &diam, NULL, NULL, NULL, NULL, IGRAPH_UNDIRECTED, 0);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "diameter");
    topo_watch_phase("mean distance", -1);
    e = igraph_average_path_length(g, &avg, NULL, IGRAPH_UNDIRECTED, 0);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "average path length");
    out->diameter = diam;
    /* One node has no pairs (igraph gives NaN); its mean distance is 0. */
    out->avg_distance = isnan(avg) ? 0.0 : avg;
    return CS_OK;
}

static int topo_stats_unlocked(const cs_topo_t *t, int max_nodes_for_paths, cs_topo_stats_t *out,
                  cs_error_t *err)
{
    int n = cs_topo_nodes(t);
    out->nodes = n;
    out->channels = cs_topo_channels(t);
    out->links = out->channels / 2;
    out->min_degree = out->max_degree = 0;
    out->diameter = -1;
    out->avg_distance = -1;
    out->connected = 0;
    if (n == 0)
        return CS_OK; /* igraph calls the null graph disconnected too */

    igraph_t g;
    int rc = topo_to_igraph_unlocked(t, &g, err);
    if (rc)
        return rc;
    rc = fill_stats(&g, n, max_nodes_for_paths, out, err);
    igraph_destroy(&g);
    if (rc)
        cs_error_prefix(err, "statistics of %s", cs_topo_name(t));
    return rc;
}

static int topo_write_graphml_unlocked(const cs_topo_t *t, FILE *f, cs_error_t *err)
{
    igraph_t g;
    int rc = topo_to_igraph_unlocked(t, &g, err);
    if (rc)
        return rc;
    igraph_error_t e = igraph_write_graph_graphml(&g, f, 1);
    igraph_destroy(&g);
    if (e != IGRAPH_SUCCESS)
        return cs_error_set(err, e == IGRAPH_ENOMEM ? CS_ERR_OOM : CS_ERR_IO,
                            "writing GraphML of %s: %s", cs_topo_name(t), igraph_strerror(e));
    if (ferror(f))
        return cs_error_set(err, CS_ERR_IO, "writing GraphML of %s: write error", cs_topo_name(t));
    return CS_OK;
}

/* DOT: the name as a quoted ID (always valid, even for names such as
 * "graph" or "my-net"), the links in channel-id order (deterministic), and
 * the nodes without links, which would otherwise not appear. */
int cs_topo_write_dot(const cs_topo_t *t, FILE *f, cs_error_t *err)
{
    int links = cs_topo_channels(t) / 2;
    fputs("graph \"", f);
    for (const char *s = cs_topo_name(t); *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputs("\" {\n", f);
    for (int u = 0; u < cs_topo_nodes(t); u++)
        if (cs_topo_degree(t, u) == 0)
            fprintf(f, "  %d;\n", u);
    for (int l = 0; l < links; l++)
        fprintf(f, "  %d -- %d;\n", cs_topo_channel_src(t, 2 * l), cs_topo_channel_dst(t, 2 * l));
    fputs("}\n", f);
    if (ferror(f))
        return cs_error_set(err, CS_ERR_IO, "writing DOT of %s: write error", cs_topo_name(t));
    return CS_OK;
}

static int topo_cut_unlocked(const cs_topo_t *t, const double *cap, const int8_t *side, double *out,
                cs_error_t *err)
{
    /* the links plus a source joined to side 0 and a sink joined to side
     * 1 by edges no cut would take (their capacity is all the links') */
    int links = cs_topo_channels(t) / 2, nodes = cs_topo_nodes(t), extra = 0;
    igraph_integer_t src = nodes, dst = (igraph_integer_t)nodes + 1;
    double total = 1;
    for (int l = 0; l < links; l++)
        total += cap[l];
    for (int v = 0; v < nodes; v++)
        extra += side[v] >= 0;
    igraph_vector_int_t edges;
    igraph_vector_t capv;
    igraph_t g;
    igraph_real_t value = 0;
    igraph_error_t e = igraph_vector_int_init(&edges, 2 * ((igraph_integer_t)links + extra));
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "vector allocation");
    e = igraph_vector_init(&capv, (igraph_integer_t)links + extra);
    if (e != IGRAPH_SUCCESS) {
        igraph_vector_int_destroy(&edges);
        return igraph_fail(err, e, "vector allocation");
    }
    igraph_integer_t k = 0;
    for (int l = 0; l < links; l++, k++) {
        VECTOR(edges)[2 * k] = cs_topo_channel_src(t, 2 * l);
        VECTOR(edges)[2 * k + 1] = cs_topo_channel_dst(t, 2 * l);
        VECTOR(capv)[k] = cap[l];
    }
    for (int v = 0; v < nodes; v++) {
        if (side[v] < 0)
            continue;
        VECTOR(edges)[2 * k] = side[v] ? v : src;
        VECTOR(edges)[2 * k + 1] = side[v] ? dst : v;
        VECTOR(capv)[k++] = total;
    }
    e = igraph_create(&g, &edges, (igraph_integer_t)nodes + 2, IGRAPH_UNDIRECTED);
    if (e == IGRAPH_SUCCESS) {
        e = igraph_maxflow_value(&g, &value, src, dst, &capv, NULL);
        igraph_destroy(&g);
    }
    igraph_vector_int_destroy(&edges);
    igraph_vector_destroy(&capv);
    if (e != IGRAPH_SUCCESS)
        return igraph_fail(err, e, "maximum flow");
    *out = value;
    return CS_OK;
}

/* ---- the public functions, each under the igraph lock ------------------------ */

int cs_topo_to_igraph(const cs_topo_t *t, void *graph, cs_error_t *err)
{
    cs_topo_igraph_lock();
    int rc = topo_to_igraph_unlocked(t, graph, err);
    cs_topo_igraph_unlock();
    return rc;
}

int cs_topo_eccentricity(const cs_topo_t *t, int node, int *out, cs_error_t *err)
{
    cs_topo_igraph_lock();
    int rc = topo_eccentricity_unlocked(t, node, out, err);
    cs_topo_igraph_unlock();
    return rc;
}

int cs_topo_group_diameter(const cs_topo_t *t, const int32_t *group, int ngroups, int *out,
                           cs_error_t *err)
{
    cs_topo_igraph_lock();
    int rc = topo_group_diameter_unlocked(t, group, ngroups, out, err);
    cs_topo_igraph_unlock();
    return rc;
}

int cs_topo_stats(const cs_topo_t *t, int max_nodes_for_paths, cs_topo_stats_t *out,
                  cs_error_t *err)
{
    cs_topo_igraph_lock();
    int rc = topo_stats_unlocked(t, max_nodes_for_paths, out, err);
    cs_topo_igraph_unlock();
    return rc;
}

int cs_topo_stats_watched(const cs_topo_t *t, int max_nodes_for_paths, cs_topo_progress_fn fn,
                          void *ctx, cs_topo_stats_t *out, cs_error_t *err)
{
    cs_topo_igraph_lock();
    watch_fn = fn;
    watch_ctx = ctx;
    watch_phase = NULL;
    igraph_progress_handler_t *old = igraph_set_progress_handler(fn ? topo_watch_igraph : NULL);
    igraph_interruption_handler_t *old_int =
        igraph_set_interruption_handler(fn ? topo_watch_interrupt : NULL);
    int rc = topo_stats_unlocked(t, max_nodes_for_paths, out, err);
    igraph_set_interruption_handler(old_int);
    igraph_set_progress_handler(old);
    watch_fn = NULL;
    watch_ctx = NULL;
    cs_topo_igraph_unlock();
    return rc;
}

int cs_topo_write_graphml(const cs_topo_t *t, FILE *f, cs_error_t *err)
{
    cs_topo_igraph_lock();
    int rc = topo_write_graphml_unlocked(t, f, err);
    cs_topo_igraph_unlock();
    return rc;
}

int cs_topo_cut(const cs_topo_t *t, const double *cap, const int8_t *side, double *out,
                cs_error_t *err)
{
    cs_topo_igraph_lock();
    int rc = topo_cut_unlocked(t, cap, side, out, err);
    cs_topo_igraph_unlock();
    return rc;
}
