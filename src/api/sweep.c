/*
 * sweep.c - the points of a sweep (sweep.h): the collective prepared per
 * algorithm and rank count, each size built and run, and the JSON document
 * of the points.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compare.h"
#include "api/figures.h"
#include "api/report.h"
#include "api/sweep.h"
#include "core/units.h"
#include "io/plot.h"
#include "io/result_json.h"

const char *cs_sweep_opt_scope(const char *opt, const char **kv, char *buf, size_t len)
{
    const char *colon = strchr(opt, ':'), *eq = strchr(opt, '=');
    *kv = opt;
    if (!colon || (eq && eq < colon))
        return NULL;
    snprintf(buf, len, "%.*s", (int)(colon - opt), opt);
    *kv = colon + 1;
    return buf;
}

int cs_sweep_check_opts(const char *const *opts, int nopts, const cs_coll_algo_t *const *algos,
                        int nalgos, int scoped, cs_error_t *err)
{
    for (int i = 0; i < nopts; i++) {
        char scope[128], key[128];
        const char *kv = opts[i], *name = NULL;
        int found = 0;
        if (scoped)
            name = cs_sweep_opt_scope(opts[i], &kv, scope, sizeof scope);
        if (!strchr(kv, '=') || kv[0] == '=')
            return cs_error_set(err, CS_ERR_USAGE, "--opt '%s': expected %sKEY=VALUE", opts[i],
                                scoped ? "[ALGO:]" : "");
        snprintf(key, sizeof key, "%.*s", (int)(strchr(kv, '=') - kv), kv);
        for (int k = 0; k < nalgos; k++) {
            const cs_coll_algo_t *al = algos[k];
            int takes = 0;
            char valid[512] = "";
            if (name && strcmp(name, al->name))
                continue;
            found = 1;
            for (int j = 0; al->keys && al->keys[j]; j++) {
                takes |= !strcmp(al->keys[j], key);
                strncat(valid, j ? ", " : "", sizeof valid - strlen(valid) - 1);
                strncat(valid, al->keys[j], sizeof valid - strlen(valid) - 1);
            }
            if (!takes)
                return cs_error_set(err, CS_ERR_USAGE, "--opt '%s': %s/%s takes %s%s%s%s",
                                    opts[i], cs_coll_name(al->kind), al->name,
                                    valid[0] ? "only " : "no options", valid,
                                    name || !scoped ? "" : "; scope the option as ALGO:",
                                    name || !scoped ? "" : kv);
        }
        if (name && !found)
            return cs_error_set(err, CS_ERR_USAGE, "--opt '%s': '%s' is not in --algos", opts[i],
                                name);
    }
    return CS_OK;
}

int cs_sweep_prepare(const cs_request_t *base, const cs_coll_algo_t *algo, int64_t P,
                     const cs_machine_t *m, cs_request_coll_t *c, cs_error_t *err)
{
    cs_request_t req = *base;
    req.nopts = 0;
    for (int i = 0; i < base->nopts; i++) {
        char scope[128];
        const char *kv, *name = cs_sweep_opt_scope(base->opts[i], &kv, scope, sizeof scope);
        if (!name || !strcmp(name, algo->name))
            req.opts[req.nopts++] = kv;
    }
    req.algo = algo->name;
    req.ranks = P;
    return cs_request_coll_prepare(&req, m, c, err);
}

int cs_sweep_point(const cs_request_t *base, const cs_machine_t *m, cs_request_coll_t *c,
                   int64_t bytes, const volatile sig_atomic_t *cancel, FILE *json,
                   int with_timing, cs_exec_result_t *res, cs_error_t *err)
{
    cs_program_t *p = NULL;
    cs_exec_opts_t opts;
    int rc;
    c->args.bytes = bytes;
    /* --algos nccl: NCCL's choice for this size */
    if (c->has_nccl && (rc = cs_request_nccl_choose(c, err)))
        return rc;
    if ((rc = cs_request_coll_build(c, &p, err)))
        return rc;
    cs_exec_opts_default(&opts);
    opts.mode = base->mode;
    opts.rank_to_node = c->rank_to_node;
    if (base->force)
        opts.max_work = 0;
    opts.cancel = cancel;
    rc = cs_request_exec(m, p, &opts, res, err);
    if (rc == CS_OK && json)
        rc = cs_sweep_json_point(json, with_timing, m, p, res, 0, c, err);
    cs_program_free(p);
    return rc;
}

int cs_sweep_json_point(FILE *f, int with_timing, const cs_machine_t *m, const cs_program_t *p,
                        const cs_exec_result_t *r, int validated, const cs_request_coll_t *c,
                        cs_error_t *err)
{
    cs_bandwidth_t bw;
    cs_result_nccl_t nccl;
    cs_result_info_t info = {.with_timing = with_timing, .validated = validated,
                             .point_algo = c->has_nccl ? "nccl" : c->algo->name,
                             .point_bytes = c->args.bytes,
                             .point_ranks = cs_program_nranks(p)};
    if (cs_report_bandwidth_of(m, c, r, &bw))
        info.bandwidth = &bw;
    if (cs_report_nccl_of(m, c, 0, &nccl))
        info.nccl = &nccl;
    return cs_result_write_json_info(f, m, p, r, &info, err);
}

void cs_sweep_json_begin(FILE *f, const char *machine, const char *coll)
{
    fputs("{\"machine\": ", f);
    cs_json_write_string(f, machine);
    fputs(", \"coll\": ", f);
    cs_json_write_string(f, coll);
    fputs(", \"points\": [\n", f);
}

void cs_sweep_json_begin_machines(FILE *f, const char *const *machines, int n,
                                  const char *coll)
{
    if (n == 1) {
        cs_sweep_json_begin(f, machines[0], coll);
        return;
    }
    fputs("{\"machines\": [", f);
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        cs_json_write_string(f, machines[i]);
    }
    fputs("], \"coll\": ", f);
    cs_json_write_string(f, coll);
    fputs(", \"points\": [\n", f);
}

void cs_sweep_json_next(FILE *f)
{
    fputs(",\n", f);
}

void cs_sweep_json_end(FILE *f)
{
    fputs("]}\n", f);
}

/* the value of point (mi, k, j, i) in a [machine][algo][ranks][size] array */
static double sweep_at(const cs_sweep_figure_t *fig, const double *v, int mi, int k, int j,
                       int i)
{
    return v[(((size_t)mi * fig->nalgos + k) * fig->nranks + j) * (size_t)fig->nsizes + i];
}

void cs_sweep_crossovers(const cs_sweep_figure_t *fig, const double *ticks, int mi, int j,
                         cs_sweep_cross_t *x)
{
    int ns = fig->nsizes;
    x->nccl = -1;
    for (int k = 0; k < fig->nalgos; k++)
        if (!strcmp(fig->algos[k], "nccl"))
            x->nccl = k;
    x->best = cs_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *x->best);
    x->nccl_slower = cs_calloc((size_t)(ns > 0 ? ns : 1), sizeof *x->nccl_slower);
    for (int i = 0; i < ns; i++) {
        double bt = NAN;
        x->best[i] = -1;
        for (int k = 0; k < fig->nalgos; k++) {
            double t = sweep_at(fig, ticks, mi, k, j, i);
            if (k != x->nccl && !isnan(t) && (x->best[i] < 0 || t < bt)) {
                x->best[i] = k;
                bt = t;
            }
        }
        if (x->nccl >= 0 && x->best[i] >= 0) {
            double tn = sweep_at(fig, ticks, mi, x->nccl, j, i);
            x->nccl_slower[i] = !isnan(tn) && tn > bt * (1 + 1e-9);
        }
    }
}

void cs_sweep_cross_destroy(cs_sweep_cross_t *x)
{
    free(x->best);
    free(x->nccl_slower);
    memset(x, 0, sizeof *x);
}

void cs_sweep_crossovers_text(FILE *f, const cs_sweep_figure_t *fig, const double *ticks)
{
    if (!fig->with_nccl || (fig->nsizes == 1 && fig->nranks > 1))
        return;
    for (int mi = 0; mi < fig->nmachines; mi++)
        for (int j = 0; j < fig->nranks; j++) {
            cs_sweep_cross_t x;
            char size[32];
            int n = 0;
            cs_sweep_crossovers(fig, ticks, mi, j, &x);
            fprintf(f, "crossovers %s, %d ranks: ", fig->shorts ? fig->shorts[mi] : "",
                    fig->ranks[mi * fig->nranks + j]);
            for (int i = 1; i < fig->nsizes; i++)
                if (x.best[i] >= 0 && x.best[i - 1] >= 0 && x.best[i] != x.best[i - 1]) {
                    cs_units_format_bytes(fig->sizes[i], size, sizeof size);
                    fprintf(f, "%s%s -> %s at %s", n++ ? "; " : "", fig->algos[x.best[i - 1]],
                            fig->algos[x.best[i]], size);
                }
            if (!n)
                fputs("the fastest never changes", f);
            n = 0;
            for (int i = 0; i < fig->nsizes; i++)
                if (x.nccl_slower[i]) {
                    cs_units_format_bytes(fig->sizes[i], size, sizeof size);
                    fprintf(f, "%s%s (%s, x%.3g)", n++ ? ", " : "; NCCL's pick slower than the "
                            "fastest at ", size, fig->algos[x.best[i]],
                            sweep_at(fig, ticks, mi, x.nccl, j, i) /
                                sweep_at(fig, ticks, mi, x.best[i], j, i));
                }
            if (!n && x.nccl >= 0)
                fputs("; NCCL's pick is the fastest at every size", f);
            fputc('\n', f);
            cs_sweep_cross_destroy(&x);
        }
}

/* The marks of cs_sweep_crossovers on plot p: two series of markers
 * without lines (NaN between them), per machine and rank count. */
static void sweep_plot_crossovers(cs_plot_t *p, const cs_sweep_figure_t *fig,
                                  const double *ticks, double *x, double *y)
{
    for (int mi = 0; mi < fig->nmachines; mi++)
        for (int j = 0; j < fig->nranks; j++) {
            cs_sweep_cross_t cx;
            double scale = fig->ticks ? 1 : fig->tick_seconds[mi];
            int P = fig->ranks[mi * fig->nranks + j];
            char where[160] = "";
            cs_sweep_crossovers(fig, ticks, mi, j, &cx);
            if (fig->nmachines > 1 || fig->nranks > 1)
                snprintf(where, sizeof where, " (%s%sP=%d)",
                         fig->nmachines > 1 ? fig->shorts[mi] : "",
                         fig->nmachines > 1 ? ", " : "", P);
            for (int which = 0; which < 2; which++) {
                int any = 0;
                for (int i = 0; i < fig->nsizes; i++) {
                    int mark = which ? cx.nccl_slower[i]
                                     : i > 0 && cx.best[i] >= 0 && cx.best[i - 1] >= 0 &&
                                           cx.best[i] != cx.best[i - 1];
                    int k = which ? cx.nccl : cx.best[i];
                    x[i] = fig->elements4 ? (double)fig->sizes[i] / 4 : (double)fig->sizes[i];
                    y[i] = NAN;
                    if (mark) {
                        y[i] = cs_figures_y_value(fig->y, fig->kind, P, fig->sizes[i],
                                                  sweep_at(fig, ticks, mi, k, j, i) * scale);
                        any = 1;
                    }
                }
                if (!any)
                    continue;
                char name[256];
                snprintf(name, sizeof name, "%s%s",
                         which ? "NCCL's pick slower than the fastest"
                               : "crossover: the fastest changes", where);
                cs_plot_add_series(p, name, (size_t)fig->nsizes, x, y);
            }
            cs_sweep_cross_destroy(&cx);
        }
}

int cs_sweep_plot(const char *path, const cs_sweep_figure_t *fig, const double *ticks,
                  const double *model, cs_error_t *err)
{
    char title[512], xlabel[128], pdesc[64], engtext[160], where[160];
    int nm = fig->nmachines, nr = fig->nranks, ns = fig->nsizes, na = fig->nalgos;
    int by_ranks = ns == 1 && nr > 1, npts = by_ranks ? nr : ns;
    const int *Ps = fig->ranks;
    double *x = cs_malloc((size_t)(npts + 1) * sizeof *x);
    double *y = cs_malloc((size_t)(npts + 1) * sizeof *y);
    const char **eng = cs_calloc((size_t)(nm > 0 ? nm : 1), sizeof *eng);
    int rc, neng = 0;
    for (int mi = 0; mi < nm; mi++)
        if (fig->engines[mi][0])
            eng[neng++] = fig->engines[mi];
    cs_compare_engines_text(eng, neng, engtext, sizeof engtext);
    /* the rank counts; one machine's, or the common ones of several */
    if (nr > 1)
        snprintf(pdesc, sizeof pdesc, "%d..%d ranks", Ps[0], Ps[nr - 1]);
    else
        snprintf(pdesc, sizeof pdesc, "%d ranks", Ps[0]);
    if (nm > 1)
        snprintf(where, sizeof where, "%d machines", nm);
    else
        snprintf(where, sizeof where, "%s", fig->specs[0]);
    if (by_ranks) {
        char size[32];
        cs_units_format_bytes(fig->sizes[0], size, sizeof size);
        snprintf(title, sizeof title, "%s of %s on %s (%s)", cs_coll_name(fig->kind), size, where,
                 engtext);
        snprintf(xlabel, sizeof xlabel, "ranks");
    } else {
        snprintf(title, sizeof title, "%s on %s (%s, %s)", cs_coll_name(fig->kind), where, pdesc,
                 engtext);
        snprintf(xlabel, sizeof xlabel, "%s (%s)", cs_figures_size_meaning(fig->kind),
                 fig->elements4 ? "elements, 32-bit wavelets" : "bytes");
    }
    const char *ylabel = fig->ylabel                 ? fig->ylabel
                         : fig->y != CS_FIGURES_Y_TIME ? cs_figures_y_label(fig->y)
                         : fig->ticks                  ? "time (ticks)"
                                                       : "time";
    cs_plot_t *p = cs_plot_new(fig->title ? fig->title : title, fig->xlabel ? fig->xlabel : xlabel,
                               ylabel, 1, 1);
    cs_plot_set_yunit(p, cs_figures_y_unit(fig->y, fig->ticks));
    for (int mi = 0; mi < nm; mi++)
        for (int k = 0; k < na; k++)
            for (int j = 0; j < (by_ranks ? 1 : nr); j++)
                for (int which = 0; which < (model ? 2 : 1); which++) {
                    const double *v = which ? model : ticks;
                    double scale = fig->ticks ? 1 : fig->tick_seconds[mi];
                    char name[256], mach[112] = "";
                    int any = 0;
                    for (int i = 0; i < npts; i++) {
                        int jj = by_ranks ? i : j, ii = by_ranks ? 0 : i;
                        x[i] = by_ranks ? Ps[mi * nr + i]
                               : fig->elements4 ? (double)fig->sizes[i] / 4
                                                : (double)fig->sizes[i];
                        y[i] = v[(((size_t)mi * na + k) * nr + jj) * (size_t)ns + ii] * scale;
                        /* --y algbw, busbw: nccl-tests' bandwidth of that time */
                        y[i] = cs_figures_y_value(fig->y, fig->kind, Ps[mi * nr + jj],
                                                  fig->sizes[ii], y[i]);
                        any |= !isnan(y[i]);
                    }
                    if (which && !any)
                        continue; /* no model for this algorithm: no empty legend entry */
                    /* several machines: the machine first, the algorithm when there
                     * are several */
                    if (nm > 1)
                        snprintf(mach, sizeof mach, "%s%s", fig->shorts[mi], na > 1 ? ": " : "");
                    if (nr > 1 && !by_ranks)
                        snprintf(name, sizeof name, "%s%s, P=%d%s", mach,
                                 nm > 1 && na == 1 ? "" : fig->algos[k], Ps[mi * nr + j],
                                 which ? " (model)" : "");
                    else
                        snprintf(name, sizeof name, "%s%s%s", mach,
                                 nm > 1 && na == 1 ? "" : fig->algos[k],
                                 which ? " (model)" : "");
                    cs_plot_add_series(p, name, (size_t)npts, x, y);
                }
    if (fig->with_nccl && !by_ranks)
        sweep_plot_crossovers(p, fig, ticks, x, y);
    rc = cs_plot_write(p, path, err);
    cs_plot_free(p);
    free(eng);
    free(x);
    free(y);
    return rc;
}
