/*
 * figures.c - what the front ends share for figures (figures.h): short
 * machine names for titles and table rows, the title of a run, the
 * subtitle of a heatmap and the time syntax of --window and --frame-step.
 *
 * Moved down from src/app (issue 20) so that the library draws the same
 * figures as `collsim run` and `collsim compare`; the texts are unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/figures.h"
#include "coll/bandwidth.h"
#include "core/suggest.h"
#include "core/units.h"
#include "io/axis.h"
#include "io/heatmap.h"

void cs_figures_machine_short(const cs_machine_t *m, char *buf, size_t len)
{
    int rows = m->grid_rows, cols = m->grid_cols;
    const cs_topo_t *t = m->topo;
    if (rows <= 0)
        cs_topo_grid(t, &rows, &cols);
    /* "groq groq-dragonfly": the type once when the topology's name has it */
    const char *name = cs_topo_name(t);
    const char *type = m->type->name;
    int has_type = !strncmp(name, type, strlen(type));
    if (rows > 0 && cols > 0 && (int64_t)rows * cols == cs_topo_nodes(t))
        snprintf(buf, len, "%s%s%s %d\xc3\x97%d", has_type ? "" : type, has_type ? "" : " ",
                 name, rows, cols);
    else {
        /* in the machine's own words, as the summary says them: "of 64
         * hosts + 1 switch", "of 64 TSPs in 8 nodes" */
        char count[80];
        snprintf(buf, len, "%s%s%s of %s", has_type ? "" : type, has_type ? "" : " ", name,
                 cs_machine_count_text(m, count, sizeof count));
    }
}

const char *cs_figures_size_meaning(cs_coll_kind_t k)
{
    switch (k) {
    case CS_COLL_BROADCAST:
    case CS_COLL_REDUCE:
    case CS_COLL_ALLREDUCE: return "vector size";
    case CS_COLL_BARRIER: return "token size";
    default: return "block per rank";
    }
}

void cs_figures_run_title(const cs_machine_t *m, const cs_request_coll_t *c, const char *program,
                      int ranks, char *buf, size_t len)
{
    char mach[96], size[32];
    cs_figures_machine_short(m, mach, sizeof mach);
    if (!c) {
        snprintf(buf, len, "%s (%d ranks) on %s", program ? program : "program", ranks, mach);
        return;
    }
    const cs_coll_args_t *a = &c->args;
    cs_units_format_bytes(a->bytes, size, sizeof size);
    int vector = a->kind == CS_COLL_BROADCAST || a->kind == CS_COLL_REDUCE ||
                 a->kind == CS_COLL_ALLREDUCE;
    snprintf(buf, len, "%s/%s, %s%s, %d ranks on %s", cs_coll_name(a->kind), c->algo->name,
             size, vector ? "" : a->kind == CS_COLL_BARRIER ? " token" : " per rank", a->P, mach);
}

int cs_figures_parse_time(const char *text, double tick_seconds, cs_tick_t *out, cs_error_t *err)
{
    int64_t ticks;
    double s;
    const char *p = text;
    while (*p == '.' || (*p >= '0' && *p <= '9'))
        p++;
    if (*p == '\0' && p > text && !strchr(text, '.')) {
        int rc = cs_units_parse_int(text, &ticks, err);
        if (rc == CS_OK)
            *out = ticks;
        return rc;
    }
    if (*p == '\0')
        return cs_error_set(err, CS_ERR_USAGE, "'%s': a time needs a unit (ns, us, ms, s) or "
                            "is a whole number of ticks", text);
    int rc = cs_units_parse_seconds(text, 0, &s, err);
    if (rc)
        return rc;
    if (s < 0)
        return cs_error_set(err, CS_ERR_RANGE, "'%s': a time must be >= 0", text);
    double t = s / tick_seconds;
    if (t > 9e18)
        return cs_error_set(err, CS_ERR_RANGE, "'%s': too large", text);
    *out = (cs_tick_t)(t + 0.5);
    return CS_OK;
}

static const char *const metric_what[] = {"link utilisation", "bytes per link",
                                          "stall time per link",
                                          "peak k (messages wanting a link at once)"};

/* "66.7%", "1 MiB", "3" for a value of the metric. */
static void run_metric_text(cs_heatmap_metric_t mt, double v, char *buf, size_t len)
{
    if (mt == CS_HEATMAP_UTIL || mt == CS_HEATMAP_STALL)
        snprintf(buf, len, "%.1f%%", 100 * v);
    else if (mt == CS_HEATMAP_BYTES)
        cs_units_format_bytes((int64_t)llround(v), buf, len);
    else
        snprintf(buf, len, "%.0f", v);
}

/* The second line of a heatmap (figures.h). */
void cs_figures_heatmap_subtitle(const cs_machine_t *m, const cs_net_t *net,
                             const cs_heatmap_data_t *d, const char *window_note, char *buf,
                             size_t len)
{
    char t0[32], t1[32], hot[160] = "";
    int best = -1;
    for (int c = 0; c < d->nchans; c++)
        if (d->active[c] && (best < 0 || d->val[c] > d->val[best]))
            best = c;
    /* the plots' convention: four significant digits and "µs"
     * (cs_axis_format), not the summary's six digits and ASCII "us" */
    cs_axis_format((double)d->t0 * m->tick_seconds, 4, CS_AXIS_SECONDS, t0, sizeof t0);
    cs_axis_format((double)d->t1 * m->tick_seconds, 4, CS_AXIS_SECONDS, t1, sizeof t1);
    if (best >= 0) {
        char v[32], a[32], b[32];
        run_metric_text(d->metric, d->val[best], v, sizeof v);
        snprintf(hot, sizeof hot, " \xc2\xb7 hottest %s\xe2\x86\x92%s: %s",
                 cs_machine_node_label(m, cs_topo_channel_src(m->topo, best), a, sizeof a),
                 cs_machine_node_label(m, cs_topo_channel_dst(m->topo, best), b, sizeof b), v);
    }
    snprintf(buf, len, "%s, %s %s \xe2\x80\x93 %s \xc2\xb7 %s engine%s", metric_what[d->metric],
             window_note, d->t0 == 0 ? "0" : t0, t1, cs_net_engine_name(net), hot);
}

/* Time buckets (--window, --frames, --timeline) may take this much memory
 * at most: buckets per channel = this / (channels x a bucket's size). */
#define FIGURES_BUCKET_BYTES ((size_t)256 << 20)
#define FIGURES_MAX_BUCKETS 2048

int cs_figures_bucket_count(const cs_machine_t *m)
{
    size_t per = (size_t)cs_topo_channels(m->topo) * sizeof(cs_chan_stats_t) + 1;
    size_t n = FIGURES_BUCKET_BYTES / per;
    return n < 2 ? 2 : n > FIGURES_MAX_BUCKETS ? FIGURES_MAX_BUCKETS : (int)n;
}

int cs_figures_parse_window(const char *text, double tick_seconds, cs_figures_window_t *w,
                            cs_error_t *err)
{
    const char *colon;
    char lo[64], hi[64];
    int rc;
    memset(w, 0, sizeof *w);
    w->w1 = -1;
    w->text = text;
    if (!text)
        return CS_OK;
    colon = strchr(text, ':');
    if (!colon || strchr(colon + 1, ':'))
        return cs_error_set(err, CS_ERR_USAGE, "--window '%s': expected T0:T1 (either may "
                            "be left out, e.g. 2us: or :1000)", text);
    snprintf(lo, sizeof lo, "%.*s", (int)(colon - text), text);
    snprintf(hi, sizeof hi, "%s", colon + 1);
    w->has = 1;
    if ((lo[0] && (rc = cs_figures_parse_time(lo, tick_seconds, &w->w0, err))) ||
        (hi[0] && (rc = cs_figures_parse_time(hi, tick_seconds, &w->w1, err)))) {
        cs_error_prefix(err, "--window");
        return rc;
    }
    if (w->w1 >= 0 && w->w1 <= w->w0)
        return cs_error_set(err, CS_ERR_RANGE, "--window '%s': the end must come after "
                            "the start (%lld <= %lld ticks)", text,
                            (long long)w->w1, (long long)w->w0);
    return CS_OK;
}

int cs_figures_parse_style(const char *scale, const char *size, int metric,
                           cs_heatmap_style_t *st, cs_error_t *err)
{
    int rc;
    memset(st, 0, sizeof *st);
    if (scale && (rc = cs_heatmap_parse_scale(scale, (cs_heatmap_metric_t)metric, &st->lo,
                                              &st->hi, err)))
        return rc;
    if (scale)
        st->range_why = "colour range fixed by --scale";
    if (size && (rc = cs_heatmap_parse_size(size, &st->size, err)))
        return rc;
    return CS_OK;
}

int cs_figures_heatmap(cs_heatmap_t *h, const cs_machine_t *m, const cs_exec_result_t *r,
                       int metric, const cs_figures_window_t *w, const cs_heatmap_style_t *st,
                       const char *title, const char *path, int *whole_out, cs_error_t *err)
{
    cs_heatmap_data_t d;
    char sub[320];
    int nchans = cs_topo_channels(m->topo), rc;
    cs_tick_t w0 = w->has ? w->w0 : 0;
    cs_tick_t w1 = w->has && w->w1 >= 0 ? w->w1 : r->finish;
    int whole = !w->has || (w0 == 0 && w1 >= r->finish);
    if (!whole && w0 >= r->finish)
        return cs_error_set(err, CS_ERR_RANGE, "--window %s: the run ended at %lld ticks, "
                            "before the window starts", w->text, (long long)r->finish);
    if (whole)
        w1 = r->finish;
    rc = cs_heatmap_data_from_net(r->net, nchans, (cs_heatmap_metric_t)metric, w0, w1, whole, &d,
                                  err);
    if (rc == CS_OK) {
        cs_figures_heatmap_subtitle(m, r->net, &d, whole ? "whole run" : "window", sub,
                                    sizeof sub);
        rc = cs_heatmap_write(h, &d, title, sub, st, path, err);
    }
    cs_heatmap_data_destroy(&d);
    if (rc)
        cs_error_prefix(err, "--heatmap");
    if (whole_out)
        *whole_out = whole;
    return rc;
}

/* ---- --y ------------------------------------------------------------------------------ */

static const char *const y_names[] = {"time", "algbw", "busbw", NULL};

int cs_figures_parse_y(const char *text, cs_figures_y_t *out, cs_error_t *err)
{
    for (int i = 0; y_names[i]; i++)
        if (!strcmp(text, y_names[i])) {
            *out = (cs_figures_y_t)i;
            return CS_OK;
        }
    cs_suggest_t sg;
    char hint[96];
    cs_suggest_init(&sg, text);
    cs_suggest_add_list(&sg, y_names);
    return cs_error_set(err, CS_ERR_USAGE, "--y: unknown quantity '%s'%s; valid: time, algbw, "
                        "busbw (docs/bandwidth.md)", text, cs_suggest_hint(&sg, "'", hint,
                                                                           sizeof hint));
}

const char *cs_figures_y_name(cs_figures_y_t y)
{
    return y_names[y <= CS_FIGURES_Y_BUSBW ? y : 0];
}

int cs_figures_check_y(cs_figures_y_t y, cs_coll_kind_t k, cs_error_t *err)
{
    if (y != CS_FIGURES_Y_TIME && !cs_bandwidth_defined(k))
        return cs_error_set(err, CS_ERR_USAGE, "--y %s: a %s moves no data, it has no "
                            "bandwidth (docs/bandwidth.md); --y time", cs_figures_y_name(y),
                            cs_coll_name(k));
    return CS_OK;
}

const char *cs_figures_y_label(cs_figures_y_t y)
{
    /* the prefixes are decimal, as nccl-tests' "GB/s" (10^9 B/s): said on
     * the axis, since GiB/s would differ by 7% */
    switch (y) {
    case CS_FIGURES_Y_ALGBW: return "algorithm bandwidth (algbw; 1 GB/s = 10\xe2\x81\xb9 B/s)";
    case CS_FIGURES_Y_BUSBW: return "bus bandwidth (busbw; 1 GB/s = 10\xe2\x81\xb9 B/s)";
    default: return NULL;
    }
}

cs_axis_unit_t cs_figures_y_unit(cs_figures_y_t y, int ticks)
{
    if (y != CS_FIGURES_Y_TIME)
        return CS_AXIS_BYTES_PER_S;
    return ticks ? CS_AXIS_PLAIN : CS_AXIS_SECONDS;
}

double cs_figures_y_value(cs_figures_y_t y, cs_coll_kind_t k, int P, int64_t bytes,
                          double seconds)
{
    cs_bandwidth_t bw;
    if (y == CS_FIGURES_Y_TIME || isnan(seconds))
        return seconds;
    cs_bandwidth_of(k, P, bytes, seconds, &bw);
    double v = y == CS_FIGURES_Y_ALGBW ? bw.algbw : bw.busbw;
    return v > 0 ? v : NAN;
}
