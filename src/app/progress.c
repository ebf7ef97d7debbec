/*
 * progress.c - the progress bar of long runs, sweeps and comparisons
 * (app.h): on standard error, only when it is a terminal, and only once the
 * work has taken more than a second, so that short commands and anything
 * redirected or piped never see it.  Redrawn at most ten times a second;
 * cleared before anything else is printed.  Also the one call that runs a
 * program on a machine for every command (cs_app_exec_run).
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

void cs_app_progress_init(cs_app_progress_t *p, const char *what, double tick_seconds)
{
    memset(p, 0, sizeof *p);
    p->on = isatty(STDERR_FILENO);
    p->t0 = now_seconds();
    p->tick_seconds = tick_seconds;
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

int cs_app_exec_run(const cs_machine_t *m, const cs_program_t *p, cs_exec_opts_t *opts,
                    cs_app_progress_t *progress, cs_exec_result_t *res, cs_error_t *err)
{
    cs_exec_env_t env;
    cs_machine_exec_env(m, &env);
    if (progress) {
        progress->tick_seconds = m->tick_seconds;
        opts->poll = progress->on ? cs_app_progress_poll : NULL;
        opts->poll_ctx = progress;
    }
    return cs_exec_run(&env, p, opts, res, err);
}

void cs_app_progress_poll(void *ctx, cs_tick_t now, int32_t done, int32_t nops,
                          uint64_t events)
{
    cs_app_progress_t *p = ctx;
    char detail[128], t[32];
    if (!p->on)
        return;
    cs_units_format_seconds((double)now * p->tick_seconds, t, sizeof t);
    snprintf(detail, sizeof detail, "%s simulated, %.1f M events", t, (double)events / 1e6);
    cs_app_progress_show(p, nops > 0 ? (double)done / nops : -1, detail);
}
