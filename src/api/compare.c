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

void cs_compare_json_begin(FILE *f, const char *coll, const char *algo, int64_t bytes)
{
    fputs("{\"coll\": ", f);
    cs_json_write_string(f, coll);
    fputs(", \"algo\": ", f);
    cs_json_write_string(f, algo);
    fprintf(f, ", \"bytes\": %lld, \"runs\": [\n", (long long)bytes);
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

int cs_compare_plot(const char *path, const char *title, const char *coll, const char *algo,
                    int64_t bytes, int n, const char *const *labels, const double *seconds,
                    int logy, cs_error_t *err)
{
    char **texts = cs_calloc((size_t)n + 1, sizeof *texts);
    double *values = cs_calloc((size_t)n + 1, sizeof *values);
    double lo = HUGE_VAL, hi = 0;
    char made[320], size[32];
    for (int i = 0; i < n; i++) {
        values[i] = seconds[i] * 1e6;
        texts[i] = cs_malloc(32);
        cs_units_format_seconds(seconds[i], texts[i], 32);
        if (values[i] > 0) {
            lo = fmin(lo, values[i]);
            hi = fmax(hi, values[i]);
        }
    }
    if (!title) {
        cs_units_format_bytes(bytes, size, sizeof size);
        snprintf(made, sizeof made, "%s/%s, %s, on %d machines", coll, algo, size, n);
    }
    int rc = cs_plot_write_bars(path, title ? title : made, "time (\xc2\xb5s)", n, labels, values,
                                (const char *const *)texts, logy >= 0 ? logy : hi > 30 * lo,
                                err);
    for (int i = 0; i < n; i++)
        free(texts[i]);
    free(texts);
    free(values);
    return rc;
}
