/*
 * timeline.h - a run as a timeline in Chrome's trace event format (JSON),
 * which Perfetto (ui.perfetto.dev) and chrome://tracing open.
 *
 * Process 1 "ranks" has a track per rank (more than one when the rank's ops
 * overlap: a send and a recv at once, or sends waiting for the port): every
 * op is a slice from its start to its end, named "send 1 KiB -> 6",
 * "recv 1 KiB <- 1", "mcast 4 KiB -> 3 ranks", "calc 512 B", with its op id,
 * peer, bytes, tag and exact tick times as arguments.  Every message is a
 * flow arrow from its send's slice to the slice of the recv that took it.
 * Process 2 "links" has a counter track for each of the busiest channels
 * (their busy share over time, at most CS_TIMELINE_POINTS values each, a
 * value written only when it changes), when the run kept time buckets.
 * Times are microseconds (the format's unit), converted from the machine's
 * ticks; the arguments keep the ticks.
 *
 * Size limit: at most max_events trace events (default
 * CS_TIMELINE_MAX_EVENTS, about 150 bytes each).  A larger run is sampled:
 * every k-th rank is kept (ranks 0, k, 2k, ...; flows only between kept
 * ranks), the smallest k that fits; if one rank alone is too much, the
 * slices are cut at a time and the rest left out.  The file says so in
 * "otherData" (rank_stride, truncated_at_us), and so does the info.
 */
#ifndef CS_TIMELINE_H
#define CS_TIMELINE_H

#include <stdint.h>
#include "core/error.h"
#include "engine/exec.h"
#include "core/program.h"
#include "machines/machine.h"

#define CS_TIMELINE_MAX_EVENTS 250000
#define CS_TIMELINE_COUNTERS 8
#define CS_TIMELINE_POINTS 256 /* at most this many values per counter */

typedef struct cs_timeline_opts {
    int64_t max_events;           /* 0: CS_TIMELINE_MAX_EVENTS */
    int counters;                 /* busiest links charted; < 0: none, 0: default */
    const int32_t *rank_to_node;  /* NULL: rank r on node r */
    const char *title;            /* recorded in otherData (may be NULL) */
} cs_timeline_opts_t;

typedef struct cs_timeline_info {
    int64_t events;        /* trace events written */
    int64_t slices;        /* op slices written, of ops_total */
    int64_t ops_total;
    int64_t flows;         /* flow arrows */
    int rank_stride;       /* 1: every rank */
    int truncated;         /* slices cut at truncated_at */
    cs_tick_t truncated_at;
    int counters;          /* link counter tracks */
} cs_timeline_info_t;

/* Writes the timeline of run r (program p on machine m) to `path`.  It
 * needs r->ops (cs_exec_opts_t.record_op_times); flow arrows need r->msgs
 * (cs_exec_opts_t.record_messages); link counters need the time buckets
 * (cs_exec_opts_t.bucket_width).  Errors: no op times (CS_ERR_INTERNAL);
 * the file cannot be written (CS_ERR_IO, naming it).  info may be NULL. */
int cs_timeline_write(const char *path, const cs_machine_t *m, const cs_program_t *p,
                      const cs_exec_result_t *r, const cs_timeline_opts_t *o,
                      cs_timeline_info_t *info, cs_error_t *err);

#endif
