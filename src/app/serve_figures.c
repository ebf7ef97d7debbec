/*
 * serve_figures.c - the figures of `collsim serve`'s jobs (docs/api.md):
 * heatmaps (SVG, PNG) with a metric and a time window, timelines, and the
 * plots of comparisons and sweeps, drawn by the command line's writers
 * (api/figures.h, io/heatmap.h, io/timeline.h, io/plot.h) on a worker
 * thread into the server's folder, read back and removed.  The loop only
 * checks the request (cs_serve_figure) and sends the bytes when drawn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/compare.h"
#include "api/figures.h"
#include "api/sweep.h"
#include "app/serve_internal.h"
#include "core/units.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/timeline.h"
#include "machines/machine.h"

/* Reads and removes a file the worker wrote. */
static int serve_slurp(const char *path, char **data, size_t *len, cs_error_t *err)
{
    FILE *f = fopen(path, "rb");
    long n;
    *data = NULL;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        if (f)
            fclose(f);
        unlink(path);
        return cs_error_set(err, CS_ERR_IO, "cannot read the figure back");
    }
    *data = cs_malloc((size_t)n + 1);
    *len = fread(*data, 1, (size_t)n, f);
    fclose(f);
    unlink(path);
    return CS_OK;
}

static int serve_draw_plot(const cs_serve_job_t *j, const char *path, cs_error_t *err)
{
    const cs_serve_body_t *b = &j->body;
    int n = j->nruns, rc;
    if (b->kind == CS_SERVE_COMPARE) {
        /* `collsim compare --plot`'s bars (api/compare.h): the ranks in the
         * title when every machine ran as many, else beside each name */
        const char **labels = cs_calloc((size_t)n, sizeof *labels);
        const char **engines = cs_calloc((size_t)n, sizeof *engines);
        char(*names)[128] = cs_calloc((size_t)n, sizeof *names);
        double *seconds = cs_calloc((size_t)n, sizeof *seconds);
        char engtext[160];
        int P = j->runs[0].ranks;
        for (int i = 1; i < n; i++)
            if (j->runs[i].ranks != P)
                P = -1;
        for (int i = 0; i < n; i++) {
            if (P >= 0)
                snprintf(names[i], sizeof names[i], "%s", j->runs[i].name);
            else
                snprintf(names[i], sizeof names[i], "%s (%d ranks)", j->runs[i].name,
                         j->runs[i].ranks);
            labels[i] = names[i];
            engines[i] = cs_net_engine_name(j->runs[i].run.result.net);
            seconds[i] = j->runs[i].seconds;
        }
        cs_compare_engines_text(engines, n, engtext, sizeof engtext);
        cs_compare_figure_t fig = {NULL, b->coll, b->points[0].algo, P, engtext, -1, 0, 0, NULL,
                                   CS_FIGURES_Y_TIME};
        rc = cs_compare_plot_bars(path, &fig, b->bytes, n, labels, seconds, err);
        free(labels);
        free(engines);
        free(names);
        free(seconds);
        return rc;
    }
    /* a sweep: `collsim sweep --plot`'s figure (api/sweep.h), in seconds */
    int na = b->nalgos, nr = b->nranks, ns = b->nsizes;
    const cs_serve_run_t *r0 = &j->runs[0];
    const char **algos = cs_calloc((size_t)na, sizeof *algos);
    const char *spec = b->machine[0], *shorts = r0->name;
    const char *engine = cs_net_engine_name(r0->run.result.net);
    int *ranks = cs_calloc((size_t)nr, sizeof *ranks);
    int64_t *sizes = cs_calloc((size_t)ns, sizeof *sizes);
    double *ticks = cs_calloc((size_t)n, sizeof *ticks);
    double tick_s = r0->run.machine->tick_seconds;
    for (int k = 0; k < na; k++)
        algos[k] = b->points[k * nr * ns].algo;
    for (int jj = 0; jj < nr; jj++)
        ranks[jj] = j->runs[jj * ns].ranks;
    for (int i = 0; i < ns; i++)
        sizes[i] = b->points[i].bytes;
    for (int i = 0; i < n; i++)
        ticks[i] = (double)j->runs[i].run.result.finish;
    cs_sweep_figure_t fig = {NULL, NULL, NULL, j->runs[0].coll->args.kind, 1, &spec, &shorts,
                             &engine, &tick_s, na, algos, nr, ranks, ns, sizes, 0, 0,
                             CS_FIGURES_Y_TIME, 0};
    rc = cs_sweep_plot(path, &fig, ticks, NULL, err);
    free(algos);
    free(ranks);
    free(sizes);
    free(ticks);
    return rc;
}

/* A heatmap's style from the query's scale= and size= (the grammar,
 * messages and caption of --scale and --size: the figure is the command
 * line's, pixel for pixel). */
static int serve_style(const cs_serve_figreq_t *q, cs_heatmap_metric_t mt, cs_heatmap_style_t *st,
                       cs_error_t *err)
{
    int rc = cs_figures_parse_style(q->scale[0] ? q->scale : NULL, q->size[0] ? q->size : NULL,
                                    (int)mt, st, err);
    /* a figure to see now: encoded for speed (io/png_fast.h) */
    st->png_fast = 1;
    return rc;
}

void cs_serve_draw(cs_serve_t *s, cs_serve_task_t *t, uint64_t seq)
{
    cs_serve_job_t *j = t->job;
    const cs_serve_run_t *sr = &j->runs[t->q.run];
    const cs_machine_t *m = sr->run.machine;
    cs_error_t *e = &t->fail.e;
    char path[512];
    static const char *const ext[] = {"svg", "png", "json", "svg"};
    int rc;
    snprintf(path, sizeof path, "%s/figure-%llu.%s", s->tmpdir, (unsigned long long)seq,
             ext[t->q.fig]);
    if (t->q.fig == CS_SERVE_FIG_PLOT) {
        rc = serve_draw_plot(j, path, e);
    } else if (t->q.fig == CS_SERVE_FIG_TIMELINE) {
        cs_timeline_opts_t to = {0, 0, sr->rank_to_node, sr->title};
        rc = cs_timeline_write(path, m, sr->prog, &sr->run.result, &to, NULL, e);
    } else {
        cs_heatmap_metric_t mt = CS_HEATMAP_UTIL;
        cs_figures_window_t w;
        cs_heatmap_style_t st;
        cs_heatmap_t *h = NULL;
        /* checked when asked for (cs_serve_figure) */
        cs_heatmap_parse_metric(t->q.metric, &mt, e);
        rc = cs_figures_parse_window(t->q.window[0] ? t->q.window : NULL, m->tick_seconds, &w, e);
        if (rc == CS_OK)
            rc = serve_style(&t->q, mt, &st, e);
        if (rc == CS_OK)
            rc = cs_heatmap_new(m, &h, e);
        if (rc == CS_OK)
            rc = cs_figures_heatmap(h, m, &sr->run.result, mt, &w, &st, sr->title, path, NULL,
                                    e);
        cs_heatmap_free(h);
    }
    if (rc == CS_OK)
        rc = serve_slurp(path, &t->data, &t->len, e);
    else
        unlink(path);
    if (rc) {
        t->failed = 1;
        t->fail.http = rc == CS_ERR_RANGE || rc == CS_ERR_USAGE ? 400 : 500;
        snprintf(t->fail.field, sizeof t->fail.field, "%s",
                 rc == CS_ERR_RANGE ? "window" : "");
    }
}

int cs_serve_figure(cs_serve_t *s, const char *id, const cs_serve_figreq_t *q,
                    cs_serve_figure_done_fn done, void *ctx, cs_serve_fail_t *f)
{
    int rc = CS_OK;
    pthread_mutex_lock(&s->mu);
    cs_serve_job_t *j = cs_serve_done_job(s, id, f);
    if (!j) {
        rc = f->e.code;
        goto out;
    }
    if (q->fig == CS_SERVE_FIG_PLOT && j->body.kind != CS_SERVE_COMPARE &&
        j->body.kind != CS_SERVE_SWEEP) {
        rc = cs_serve_fail(f, 404, NULL, CS_ERR_USAGE,
                           "plot.svg: a %s job has no plot (compare and sweep have)",
                           cs_serve_kind_name(j->body.kind));
        goto out;
    }
    if (q->run < 0 || q->run >= j->nruns) {
        rc = cs_serve_fail(f, 400, "run", CS_ERR_RANGE, "run=%d: the job has runs 0..%d",
                           q->run, j->nruns - 1);
        goto out;
    }
    const cs_serve_run_t *sr = &j->runs[q->run];
    cs_heatmap_metric_t mt;
    cs_figures_window_t w;
    cs_heatmap_style_t st;
    int heatmap = q->fig == CS_SERVE_FIG_HEATMAP_SVG || q->fig == CS_SERVE_FIG_HEATMAP_PNG;
    if (!heatmap && (q->scale[0] || q->size[0])) {
        const char *key = q->scale[0] ? "scale" : "size";
        rc = cs_serve_fail(f, 400, key, CS_ERR_USAGE, "%s: only heatmaps take it (heatmap.svg, "
                           "heatmap.png), as --%s is the heatmaps'", key, key);
        goto out;
    }
    if (heatmap && ((rc = cs_heatmap_parse_metric(q->metric, &mt, &f->e)) ||
                    (rc = cs_figures_parse_window(q->window[0] ? q->window : NULL,
                                                  sr->run.machine->tick_seconds, &w, &f->e)) ||
                    (rc = serve_style(q, mt, &st, &f->e)))) {
        f->http = 400;
        snprintf(f->field, sizeof f->field, "%s",
                 strstr(f->e.msg, "--window") ? "window" : strstr(f->e.msg, "--scale") ? "scale"
                 : strstr(f->e.msg, "--size") ? "size" : "metric");
        goto out;
    }
    if (q->fig == CS_SERVE_FIG_HEATMAP_PNG && q->size[0]) {
        /* a PNG's surface grows with its pixels: bounded before it is made */
        double pw, ph;
        cs_heatmap_file_size(&st.size, "x.png", &pw, &ph);
        if (pw * ph > (double)CS_SERVE_MAX_PIXELS) {
            rc = cs_serve_fail(f, 422, "size", CS_ERR_RANGE,
                               "--size %s: a PNG of %.0f x %.0f pixels; the server draws at most "
                               "%lld pixels (an SVG has no such limit)", q->size, pw, ph,
                               (long long)CS_SERVE_MAX_PIXELS);
            goto out;
        }
    }
    if (q->fig == CS_SERVE_FIG_TIMELINE && !sr->timeline) {
        rc = cs_serve_fail(f, 422, "run", CS_ERR_RANGE,
                           "timeline.json: the run has more than %d ops; the server kept no "
                           "op times", SERVE_TIMELINE_MAX_OPS);
        goto out;
    }
    cs_serve_task_t *t = cs_calloc(1, sizeof *t);
    t->job = j;
    t->q = *q;
    t->done = done;
    t->ctx = ctx;
    j->refs++;
    if (s->ttail)
        s->ttail->next = t;
    else
        s->thead = t;
    s->ttail = t;
    pthread_cond_signal(&s->cv);
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}
