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
#include "engine/net.h"
#include "machines/machine.h"

/* "alphabeta torus 8x8", "cell eib of 16 nodes": type, topology, size. */
void cs_figures_machine_short(const cs_machine_t *m, char *buf, size_t len);
/* The title of a run's figures: "allreduce/ring, 1 MiB, 64 ranks on
 * alphabeta torus 8x8" (c NULL: "PROGRAM (P ranks) on ..."). */
void cs_figures_run_title(const cs_machine_t *m, const cs_request_coll_t *c, const char *program,
                          int ranks, char *buf, size_t len);
/* The second line of a heatmap: the metric, the window ("whole run",
 * "window", "frame 3 of 20,") with its times, the engine and the hottest
 * channel with its value. */
struct cs_heatmap_data;
void cs_figures_heatmap_subtitle(const cs_machine_t *m, const cs_net_t *net,
                                 const struct cs_heatmap_data *d, const char *window_note,
                                 char *buf, size_t len);
/* A time: a whole number of ticks ("1000") or a duration with a unit
 * ("2.5us"), converted to ticks of tick_seconds (rounded). */
int cs_figures_parse_time(const char *text, double tick_seconds, cs_tick_t *out,
                          cs_error_t *err);

#endif
