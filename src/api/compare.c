/*
 * compare.c - a comparison of machines (compare.h): one machine's run
 * through the request path and its row (time, bandwidth, busiest link),
 * and the JSON document of the runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compare.h"
#include "api/figures.h"
#include "api/report.h"
#include "core/units.h"
#include "engine/net.h"
#include "io/plot.h"
#include "io/result_json.h"

int cs_compare_run(const cs_request_t *base, const char *spec, int with_timing,
                   const cs_compare_hooks_t *hooks, cs_compare_row_t *row,
                   cs_request_run_t *run, cs_error_t *err)
{
    cs_request_t req = *base;
    int rc;

    row->spec = spec;
    row->bytes = base->bytes;
    snprintf(row->name, sizeof row->name, "%s", spec);
    snprintf(row->link, sizeof row->link, "-");
    req.machine = spec;
    rc = cs_request_prepare(&req, run, err);
    const cs_machine_t *m = run->machine;
    const cs_exec_result_t *res = &run->result;
    if (m) {
        cs_figures_machine_short(m, row->name, sizeof row->name);
        snprintf(row->norm, sizeof row->norm, "%s", m->spec);
    }
    if (rc == CS_OK && hooks && hooks->prepared)
        rc = hooks->prepared(hooks->ctx, run, err);
    if (rc == CS_OK)
        rc = cs_request_build(&req, run, err);
    if (rc == CS_OK) {
        cs_exec_opts_t opts;
        cs_request_exec_opts(&req, run, &opts);
        if (m->type->net_new)
            opts.mode = CS_NET_PACKET; /* --mode is the channel engines' */
        if (hooks && hooks->setup)
            hooks->setup(hooks->ctx, m, &opts);
        rc = cs_request_run(run, &opts, err);
    }
    if (rc == CS_OK) {
        int c = -1; /* the busiest channel */
        cs_net_busiest_channels(res->net, &c, 1);
        row->ranks = run->coll.args.P;
        row->ticks = res->finish;
        row->seconds = (double)res->finish * m->tick_seconds;
        cs_bandwidth_t bw = {0};
        cs_report_bandwidth_of(m, &run->coll, res, &bw);
        row->bandwidth = bw.algbw;
        row->busbw = bw.busbw;
        row->events = res->events;
        snprintf(row->engine, sizeof row->engine, "%s", cs_net_engine_name(res->net));
        row->wall = with_timing ? res->wall_seconds : 0;
        if (c >= 0) {
            char u[32], v[32];
            snprintf(row->link, sizeof row->link, "%s\xe2\x86\x92%s",
                     cs_machine_node_label(m, cs_topo_channel_src(m->topo, c), u, sizeof u),
                     cs_machine_node_label(m, cs_topo_channel_dst(m->topo, c), v, sizeof v));
            row->link_util = res->finish > 0 ? (double)cs_net_chan_stats(res->net, c)->busy /
                                                   (double)res->finish
                                             : 0;
        }
    }
    return rc;
}

int64_t cs_compare_common_ranks(const char *const *specs, int n, const cs_machine_env_t *env,
                                int *which)
{
    int64_t P = 0;
    if (which)
        *which = -1;
    for (int i = 0; i < n; i++) {
        cs_machine_t *m = NULL;
        cs_error_t e;
        if (cs_machine_new_in(specs[i], env, &m, &e) != CS_OK)
            continue; /* its run reports it */
        int64_t nodes = cs_machine_nodes(m);
        if (P == 0 || nodes < P) {
            P = nodes;
            if (which)
                *which = i;
        }
        cs_machine_free(m);
    }
    return P;
}

void cs_compare_engines_text(const char *const *engines, int n, char *buf, size_t len)
{
    const char *first = NULL, *second = NULL, *channel = NULL;
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        const char *e = engines[i];
        if (!e || !e[0])
            continue;
        if (!strcmp(e, "packet") || !strcmp(e, "fluid"))
            channel = e; /* compare runs every channel engine in one mode */
        if (first && !strcmp(e, first))
            continue;
        if (second && !strcmp(e, second))
            continue;
        distinct++;
        if (!first)
            first = e;
        else if (!second)
            second = e;
    }
    if (distinct == 0)
        snprintf(buf, len, "%s", "");
    else if (distinct == 1)
        snprintf(buf, len, "%s engine", first);
    else if (distinct == 2)
        snprintf(buf, len, "engines: %s, %s", first, second);
    else
        snprintf(buf, len, "each machine's own engine%s%s", channel ? ", channel engine: " : "",
                 channel ? channel : "");
}

void cs_compare_json_begin(FILE *f, const char *coll, const char *algo, const int64_t *sizes,
                           int nsizes)
{
    fputs("{\"coll\": ", f);
    cs_json_write_string(f, coll);
    fputs(", \"algo\": ", f);
    cs_json_write_string(f, algo);
    fprintf(f, ", \"bytes\": %lld, ", (long long)(nsizes > 0 ? sizes[0] : 0));
    if (nsizes > 1) {
        fputs("\"sizes\": [", f);
        for (int i = 0; i < nsizes; i++)
            fprintf(f, "%s%lld", i ? ", " : "", (long long)sizes[i]);
        fputs("], ", f);
    }
    fputs("\"runs\": [\n", f);
}

int cs_compare_json_run(FILE *f, int index, int with_timing, const cs_request_run_t *run,
                        cs_error_t *err)
{
    if (index)
        fputs(",\n", f);
    return cs_report_json(f, with_timing, run->machine, run->program, &run->result,
                          run->validated, 0, run->is_coll ? &run->coll : NULL, err);
}

void cs_compare_json_end(FILE *f)
{
    fputs("]}\n", f);
}

/* "allreduce/ring, 1 MiB, 16 ranks on 7 machines (each machine's own
 * engine)", "... on 7 machines with DIFFERENT rank counts (...)"; size NULL
 * for a line plot over sizes. */
static void compare_title(const cs_compare_figure_t *fig, const char *size, int n, char *buf,
                          size_t len)
{
    char ranks[48] = "", engines[160] = "";
    if (fig->ranks > 0)
        snprintf(ranks, sizeof ranks, "%d ranks ", fig->ranks);
    if (fig->engines && fig->engines[0])
        snprintf(engines, sizeof engines, " (%s)", fig->engines);
    snprintf(buf, len, "%s/%s%s%s, %son %d machine%s%s%s", fig->coll, fig->algo,
             size ? ", " : "", size ? size : "", ranks, n, n == 1 ? "" : "s",
             fig->ranks < 0 ? " with DIFFERENT rank counts" : "", engines);
}

static const char *compare_ylabel(const cs_compare_figure_t *fig)
{
    if (fig->y != CS_FIGURES_Y_TIME)
        return cs_figures_y_label((cs_figures_y_t)fig->y);
    return fig->ticks ? "time (ticks of each machine)" : "time";
}

int cs_compare_plot_bars(const char *path, const cs_compare_figure_t *fig, int64_t bytes, int n,
                         const char *const *labels, const double *values, cs_error_t *err)
{
    double lo = HUGE_VAL, hi = 0;
    char made[400], size[32];
    for (int i = 0; i < n; i++)
        if (values[i] > 0) {
            lo = fmin(lo, values[i]);
            hi = fmax(hi, values[i]);
        }
    if (!fig->title) {
        cs_units_format_bytes(bytes, size, sizeof size);
        compare_title(fig, size, n, made, sizeof made);
    }
    return cs_plot_write_bars(path, fig->title ? fig->title : made, compare_ylabel(fig), n,
                              labels, values, NULL, fig->logy >= 0 ? fig->logy : hi > 30 * lo,
                              cs_figures_y_unit((cs_figures_y_t)fig->y, fig->ticks), err);
}

int cs_compare_plot_lines(const char *path, const cs_compare_figure_t *fig, int nsizes,
                          const int64_t *sizes, int n, const char *const *labels,
                          const double *values, cs_error_t *err)
{
    char made[400], xlabel[64];
    double *x = cs_malloc((size_t)(nsizes > 0 ? nsizes : 1) * sizeof *x);
    if (!fig->title)
        compare_title(fig, NULL, n, made, sizeof made);
    snprintf(xlabel, sizeof xlabel, "size (%s)", fig->elements4 ? "4-byte elements" : "bytes");
    cs_plot_t *p = cs_plot_new(fig->title ? fig->title : made, fig->xlabel ? fig->xlabel : xlabel,
                               compare_ylabel(fig), 1, 1);
    cs_plot_set_yunit(p, cs_figures_y_unit((cs_figures_y_t)fig->y, fig->ticks));
    for (int i = 0; i < nsizes; i++)
        x[i] = fig->elements4 ? (double)sizes[i] / 4 : (double)sizes[i];
    for (int k = 0; k < n; k++)
        cs_plot_add_series(p, labels[k], (size_t)nsizes, x, values + (size_t)k * nsizes);
    int rc = cs_plot_write(p, path, err);
    cs_plot_free(p);
    free(x);
    return rc;
}
