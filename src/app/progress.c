/*
 * progress.c - the progress bar of long runs, sweeps and comparisons
 * (app.h): on standard error, only when it is a terminal, and only once the
 * work has taken more than a second, so that short commands and anything
 * redirected or piped never see it.  Redrawn at most ten times a second;
 * cleared before anything else is printed.  A run draws on it through the
 * executor's poll callback (cs_app_progress_attach).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "engine/exec.h"
#include "core/units.h"

#define PROGRESS_DELAY 1.0   /* seconds before the bar appears */
#define PROGRESS_PERIOD 0.1  /* seconds between redraws */
#define PROGRESS_BAR 24      /* characters of the bar itself */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cs_app_progress_init(cs_app_progress_t *p, const char *what)
{
    memset(p, 0, sizeof *p);
    p->on = isatty(STDERR_FILENO);
    p->t0 = now_seconds();
    snprintf(p->what, sizeof p->what, "%s", what ? what : "");
}

void cs_app_progress_show(cs_app_progress_t *p, double fraction, const char *detail)
{
    if (!p->on)
        return;
    double t = now_seconds();
    if (t - p->t0 < PROGRESS_DELAY || t - p->last < PROGRESS_PERIOD)
        return;
    p->last = t;
    char bar[PROGRESS_BAR + 1];
    int full = fraction >= 0 ? (int)floor(fmin(fraction, 1.0) * PROGRESS_BAR) : 0;
    for (int i = 0; i < PROGRESS_BAR; i++)
        bar[i] = i < full ? '#' : fraction >= 0 ? '.' : ' ';
    bar[PROGRESS_BAR] = '\0';
    if (fraction < 0) /* unknown: a marker that moves */
        bar[(int)((t - p->t0) * 8) % PROGRESS_BAR] = '#';
    char line[256];
    int n = snprintf(line, sizeof line, "[%s] %3.0f%% %4.0f s  %s%s%s", bar,
                     fraction >= 0 ? 100 * fmin(fraction, 1.0) : 0.0, t - p->t0, p->what,
                     detail && detail[0] ? ": " : "", detail ? detail : "");
    if (n > 78)
        n = 78;
    fprintf(stderr, "\r%.*s%*s", n, line, p->width > n ? p->width - n : 0, "");
    p->width = n;
    fflush(stderr);
}

void cs_app_progress_done(cs_app_progress_t *p)
{
    if (p->on && p->width > 0) {
        fprintf(stderr, "\r%*s\r", p->width, "");
        fflush(stderr);
    }
    p->width = 0;
}

/* A cs_exec_opts_t.poll for one run (ctx: a cs_app_progress_t). */
static void progress_poll(void *ctx, cs_tick_t now, int32_t done, int32_t nops, uint64_t events)
{
    cs_app_progress_t *p = ctx;
    char detail[128], t[32];
    if (!p->on)
        return;
    cs_units_format_seconds((double)now * p->tick_seconds, t, sizeof t);
    snprintf(detail, sizeof detail, "%s simulated, %.1f M events", t, (double)events / 1e6);
    cs_app_progress_show(p, nops > 0 ? (double)done / nops : -1, detail);
}

void cs_app_progress_attach(cs_app_progress_t *p, double tick_seconds, cs_exec_opts_t *opts)
{
    p->tick_seconds = tick_seconds;
    opts->poll = p->on ? progress_poll : NULL;
    opts->poll_ctx = p;
    opts->cancel = cs_app_cancel_flag();
}
