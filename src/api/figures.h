/*
 * figures.h - the texts the front ends put on figures: short machine names
 * (titles, table rows), the title of a run, the second line of a heatmap,
 * and the time syntax of --window and --frame-step.  Nothing is printed:
 * each function writes into the buffer it is given.
 */
#ifndef CS_FIGURES_H
#define CS_FIGURES_H

#include <stddef.h>

#include "api/request.h"
#include "core/error.h"
#include "core/sim.h"
#include "engine/exec.h"
#include "engine/net.h"
#include "io/axis.h"
#include "io/heatmap.h"
#include "machines/machine.h"

/* "alphabeta torus 8x8", "cell eib of 16 nodes": type, topology, size. */
void cs_figures_machine_short(const cs_machine_t *m, char *buf, size_t len);
/* What a size means for collective k, for axis labels: "vector size"
 * (broadcast, reduce, allreduce), "token size" (barrier), else "block per
 * rank" (collsim run --bytes, docs/cli.md). */
const char *cs_figures_size_meaning(cs_coll_kind_t k);
/* The title of a run's figures: "allreduce/ring, 1 MiB, 64 ranks on
 * alphabeta torus 8x8" (c NULL: "PROGRAM (P ranks) on ..."). */
void cs_figures_run_title(const cs_machine_t *m, const cs_request_coll_t *c, const char *program,
                          int ranks, char *buf, size_t len);
/* The second line of a heatmap: the metric, the window ("whole run",
 * "window", "frame 3 of 20,") with its times, the engine and the hottest
 * channel with its value. */
void cs_figures_heatmap_subtitle(const cs_machine_t *m, const cs_net_t *net,
                                 const cs_heatmap_data_t *d, const char *window_note,
                                 char *buf, size_t len);
/* A time: a whole number of ticks ("1000") or a duration with a unit
 * ("2.5us"), converted to ticks of tick_seconds (rounded). */
int cs_figures_parse_time(const char *text, double tick_seconds, cs_tick_t *out,
                          cs_error_t *err);

/* ---- windows and heatmaps of a run (`collsim run --window --heatmap`) ---- */

/* A time window T0:T1 of a run (either side may be left out). */
typedef struct cs_figures_window {
    int has;              /* 0: the whole run */
    cs_tick_t w0, w1;     /* w1 < 0: the end of the run */
    const char *text;     /* as typed, for messages (borrowed) */
} cs_figures_window_t;

/* Parses "T0:T1" (times of cs_figures_parse_time) into w; errors name
 * --window.  text NULL: the whole run. */
int cs_figures_parse_window(const char *text, double tick_seconds, cs_figures_window_t *w,
                            cs_error_t *err);
/* Time buckets per channel of machine m that keep the channel records of a
 * windowed run within a fixed memory budget (256 MiB, at most 2048). */
int cs_figures_bucket_count(const cs_machine_t *m);

/* Draws the heatmap of run r of machine m (layout h) with `metric` over
 * window w (its buckets recorded: cs_exec_opts_t.bucket_width) to path, the
 * subtitle saying which window, with style st (NULL: the defaults);
 * *whole (may be NULL) tells whether it was the whole run.  Errors as cs_heatmap_write
 * prefixed "--heatmap: ", and CS_ERR_RANGE naming --window when the run
 * ended before the window starts. */
int cs_figures_heatmap(cs_heatmap_t *h, const cs_machine_t *m, const cs_exec_result_t *r,
                       int metric, const cs_figures_window_t *w, const cs_heatmap_style_t *st,
                       const char *title, const char *path, int *whole, cs_error_t *err);

/* Parses the figure options every front end shares, each may be NULL:
 * --scale for metric m and --size, into st (zeroed first).  Errors name
 * the option. */
int cs_figures_parse_style(const char *scale, const char *size, int metric,
                           cs_heatmap_style_t *st, cs_error_t *err);

/* ---- what a sweep's or comparison's y axis shows (`--y`) ---- */

/* The quantity on the y axis: the time, or one of nccl-tests' bandwidths
 * of that time (coll/bandwidth.h, docs/bandwidth.md). */
typedef enum cs_figures_y {
    CS_FIGURES_Y_TIME = 0,
    CS_FIGURES_Y_ALGBW, /* algbw = S / t */
    CS_FIGURES_Y_BUSBW  /* busbw = algbw x the collective's factor */
} cs_figures_y_t;

/* "time", "algbw" or "busbw" into *out; anything else is CS_ERR_USAGE
 * naming --y, the valid names and the nearest one ("did you mean"). */
int cs_figures_parse_y(const char *text, cs_figures_y_t *out, cs_error_t *err);
/* The name of y as --y takes it ("busbw"). */
const char *cs_figures_y_name(cs_figures_y_t y);
/* CS_OK when collective k has quantity y (a barrier moves no data: no
 * bandwidth), else CS_ERR_USAGE naming --y and the collective. */
int cs_figures_check_y(cs_figures_y_t y, cs_coll_kind_t k, cs_error_t *err);
/* The default y axis label of a bandwidth: "bus bandwidth (busbw; 1 GB/s =
 * 10⁹ B/s)", saying the prefixes are decimal; NULL for the time, whose
 * label is the caller's. */
const char *cs_figures_y_label(cs_figures_y_t y);
/* The unit of y's axis: CS_AXIS_BYTES_PER_S for a bandwidth; for the time
 * CS_AXIS_SECONDS, or CS_AXIS_PLAIN when it is in machine ticks. */
cs_axis_unit_t cs_figures_y_unit(cs_figures_y_t y, int ticks);
/* The value drawn for a run of collective k on P ranks with --bytes
 * `bytes` that took `seconds`: the seconds themselves, or the bandwidth in
 * bytes per second; NaN when seconds is NaN (a point that failed) or the
 * bandwidth is not defined (seconds <= 0). */
double cs_figures_y_value(cs_figures_y_t y, cs_coll_kind_t k, int P, int64_t bytes,
                          double seconds);

#endif
