/*
 * progress.c - the progress line of long runs, sweeps, comparisons and
 * topology analysis (app.h), on standard error.
 *
 * On a terminal: a bar redrawn in place at most ten times a second, once
 * the work has taken more than a second (short commands never show it),
 * with the elapsed time, the time left (elapsed x (1 - f) / f, once a
 * fraction f is known: the rate so far, assumed to hold) and what the work
 * says of itself (a run: simulated time and events per second); cleared
 * before anything else is printed.  Off a terminal (a log, a CI job): a
 * plain line every PROGRESS_LOG_PERIOD seconds once the work has taken
 * that long, so that a log shows a long job alive and how far it got
 * without filling up with redraws.  --quiet silences both (p->quiet).
 * A run draws on it through the executor's poll callback
 * (cs_app_progress_attach).
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
#define PROGRESS_LOG_PERIOD 10.0 /* seconds between lines off a terminal */
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
    p->on = 1;
    p->tty = isatty(STDERR_FILENO);
    p->t0 = now_seconds();
    snprintf(p->what, sizeof p->what, "%s", what ? what : "");
}

/* "12 s", "3 min 20 s", "2 h 05 min": a duration a person reads at a glance. */
static void progress_duration(double s, char *buf, size_t len)
{
    if (s < 100)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%d min %02d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%d h %02d min", (int)(s / 3600), (int)fmod(s / 60, 60));
}

void cs_app_progress_show(cs_app_progress_t *p, double fraction, const char *detail)
{
    if (!p->on || p->quiet)
        return;
    double t = now_seconds(), el = t - p->t0;
    if (p->tty ? el < PROGRESS_DELAY || t - p->last < PROGRESS_PERIOD
               : el < PROGRESS_LOG_PERIOD || t - p->last < PROGRESS_LOG_PERIOD)
        return;
    p->last = t;
    char times[96], e[32], left[32];
    double f = fraction >= 0 ? fmin(fraction, 1.0) : -1;
    progress_duration(el, e, sizeof e);
    if (f > 0.001) {
        progress_duration(el * (1 - f) / f, left, sizeof left);
        snprintf(times, sizeof times, "%s, %s left", e, left);
    } else {
        snprintf(times, sizeof times, "%s", e);
    }
    if (!p->tty) {
        char pct[16] = "";
        if (f >= 0)
            snprintf(pct, sizeof pct, "%.0f%% ", 100 * f);
        fprintf(stderr, "collsim: %s: %s(%s)%s%s\n", p->what, pct, times,
                detail && detail[0] ? " " : "", detail ? detail : "");
        return;
    }
    char bar[PROGRESS_BAR + 1];
    int full = f >= 0 ? (int)floor(f * PROGRESS_BAR) : 0;
    for (int i = 0; i < PROGRESS_BAR; i++)
        bar[i] = i < full ? '#' : f >= 0 ? '.' : ' ';
    bar[PROGRESS_BAR] = '\0';
    if (f < 0) /* unknown: a marker that moves */
        bar[(int)(el * 8) % PROGRESS_BAR] = '#';
    char line[320];
    int n = snprintf(line, sizeof line, "[%s] %3.0f%% %s  %s%s%s", bar, f >= 0 ? 100 * f : 0.0,
                     times, p->what, detail && detail[0] ? ": " : "", detail ? detail : "");
    if (n > 79)
        n = 79;
    if (n < 0)
        n = 0;
    fprintf(stderr, "\r%.*s%*s", n, line, p->width > n ? p->width - n : 0, "");
    p->width = n;
    fflush(stderr);
}

void cs_app_progress_done(cs_app_progress_t *p)
{
    if (p->tty && p->width > 0) {
        fprintf(stderr, "\r%*s\r", p->width, "");
        fflush(stderr);
    }
    p->width = 0;
}

/* A cs_exec_opts_t.poll for one run (ctx: a cs_app_progress_t): simulated
 * time and the event rate since the start. */
static void progress_poll(void *ctx, cs_tick_t now, int32_t done, int32_t nops, uint64_t events)
{
    cs_app_progress_t *p = ctx;
    char detail[128], t[32];
    if (!p->on || p->quiet)
        return;
    double el = now_seconds() - p->t0;
    cs_units_format_seconds((double)now * p->tick_seconds, t, sizeof t);
    snprintf(detail, sizeof detail, "%s simulated, %.1f M events (%.2f M/s)", t,
             (double)events / 1e6, el > 0 ? (double)events / 1e6 / el : 0.0);
    cs_app_progress_show(p, nops > 0 ? (double)done / nops : -1, detail);
}

void cs_app_progress_attach(cs_app_progress_t *p, double tick_seconds, cs_exec_opts_t *opts)
{
    p->tick_seconds = tick_seconds;
    opts->poll = p->on && !p->quiet ? progress_poll : NULL;
    opts->poll_ctx = p;
    opts->cancel = cs_app_cancel_flag();
}

void cs_app_wrote(const cs_app_progress_t *p, const char *path, const char *what)
{
    if (p->quiet || !path || strcmp(path, "-") == 0)
        return;
    fprintf(stderr, "collsim: wrote %s%s%s%s\n", path, what ? " (" : "", what ? what : "",
            what ? ")" : "");
}
