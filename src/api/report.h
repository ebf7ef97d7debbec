/*
 * report.h - a run's result reported through one module: the lines of the
 * human summary (docs/cli.md), the versioned JSON result (docs/json.md,
 * written by io/result_json) and the CSV field quoting of the tables.
 *
 * Every function writes to the FILE it is given and nowhere else (a front
 * end can hand it standard output, a file or a memory stream); none opens
 * files or decides what is shown: the front end chooses and orders them.
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stdio.h>

#include "api/request.h"
#include "coll/bandwidth.h"
#include "core/error.h"
#include "core/program.h"
#include "engine/exec.h"
#include "machines/machine.h"

/* The summary lines `machine` (the normalised spec, nodes, channels) and
 * `mode` (the machine's own engine, else `mode`; the event queue). */
void cs_report_machine(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r,
                       cs_net_mode_t mode, cs_queue_kind_t queue);
/* The `program` line: its name (a path or the algorithm's source), ranks
 * and ops. */
void cs_report_program(FILE *f, const char *name, const cs_program_t *p);
/* The `collective` line (size, what it means, root, order) and the
 * `validation` line. */
void cs_report_collective(FILE *f, const cs_request_coll_t *c, int validated);
/* The lines `messages`, `finish`, `events` and the machine's own. */
void cs_report_result(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r);
/* The protocols the run's messages used (core/proto.h), a line each:
 * "protocol  LL, 56 messages (wire 2x data, +600 ns a message)"; nothing
 * for a run without one.  cs_report_result writes it after "messages". */
void cs_report_protocol(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r);
/* The lines `loop`, `average` and `iteration` of a benchmark loop
 * (c->loop; nothing for one call): the counts, nccl-tests' average and
 * the timed iterations' own mean, minimum and maximum (docs/loops.md). */
void cs_report_loop(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c);
/* The `model` lines (--predict): the machine's closed-form model of
 * collective c (cs_request_model) beside the simulated finish, one line per
 * form of the formula, or "none" and why. */
void cs_report_model(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c,
                     cs_tick_t simulated);
/* The bandwidths of collective c's run r on m as nccl-tests defines them
 * (coll/bandwidth.h, docs/bandwidth.md): S from c's kind, ranks and bytes,
 * t the run's finish in seconds, or a benchmark loop's average iteration
 * (c->loop: nccl-tests' timed loop / iterations).  Returns 1 with *out filled, or 0 when the
 * collective has none (a barrier moves no data). */
int cs_report_bandwidth_of(const cs_machine_t *m, const cs_request_coll_t *c,
                           const cs_exec_result_t *r, cs_bandwidth_t *out);
/* The summary lines `algbw` and `busbw` (GB/s, 10^9 bytes per second, as
 * nccl-tests prints them), or `bandwidth none` for a barrier. */
void cs_report_bandwidth(FILE *f, const cs_machine_t *m, const cs_request_coll_t *c,
                         const cs_exec_result_t *r);
/* The `wall` line (with_timing 0: "not shown"). */
void cs_report_wall(FILE *f, const cs_exec_result_t *r, int with_timing);
/* The busiest channels table (cs_net_busiest_channels). */
void cs_report_channels(FILE *f, const cs_machine_t *m, const cs_exec_result_t *r);

/* The JSON result (docs/json.md) to f; with_timing 0 writes the wall time
 * as 0; a loop's "loop" object from c->loop.  Errors of io/result_json. */
int cs_report_json(FILE *f, int with_timing, const cs_machine_t *m, const cs_program_t *p,
                   const cs_exec_result_t *r, int validated, int predict,
                   const cs_request_coll_t *c, cs_error_t *err);

#endif
