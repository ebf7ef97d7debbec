/*
 * replay.h - a trace replayed on a machine (`collsim replay`, docs/replay.md):
 * the trace's options parsed from text, the trace read (a GOAL schedule, or
 * a SimGrid time-independent trace whose collectives are expanded with the
 * suite's algorithms for the machine), its ranks placed on the machine's
 * nodes, and the executor's options of the replay.
 *
 * Shared by the command line and the library (issue 20), so that both read
 * and place a trace the same way with the same messages.  Nothing here
 * prints or exits.
 */
#ifndef CS_REPLAY_H
#define CS_REPLAY_H

#include "api/request.h"
#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"
#include "engine/exec.h"
#include "io/tracefmt.h"
#include "machines/machine.h"

/* The options of a replay; strings are borrowed. */
typedef struct cs_replay {
    const char *trace;              /* the file; NULL: no replay */
    const cs_trace_format_t *format; /* NULL: auto (io/tracefmt.h's sniffers) */
    const char *map;                /* NULL: linear */
    double flops;                   /* TI compute speed, flop/s */
    const char *flops_text;         /* as typed, NULL: the default */
    const cs_coll_algo_t *algo[CS_COLL_NKINDS];
    /* an algorithm file (FORMAT:FILE, io/algofile.h) instead of algo: read
     * when the trace is (cs_replay_load), owned by the run */
    const char *algo_file[CS_COLL_NKINDS];
    const char *algo_text[CS_COLL_NKINDS]; /* the options after ':' or NULL */
    const char *algo_arg[CS_COLL_NKINDS];  /* the --algo-for as typed */
    int skip_unknown;               /* Chakra: skip unknown nodes and attributes */
    const char *comm_group;         /* Chakra: ASTRA-sim's comm-group JSON */
} cs_replay_t;

/* No trace, auto format, linear map, 1 Gflop/s, the default algorithms. */
void cs_replay_init(cs_replay_t *a);
/* Whether key is one of the replay's: trace, format, map, algo-for, flops,
 * skip-unknown, comm-group. */
int cs_replay_is_key(const char *key);
/* Sets one from its text (value borrowed), with the messages of `collsim
 * replay` ("--format 'x': expected goal, ti, chakra or auto", "--algo-for ...").
 * CS_ERR_USAGE; a unchanged then. */
int cs_replay_set(cs_replay_t *a, const char *key, const char *value, cs_error_t *err);
/* The replay's options given without a trace: CS_ERR_USAGE naming the
 * first ("--map needs a trace"), else CS_OK. */
int cs_replay_check_unused(const cs_replay_t *a, cs_error_t *err);
/* A request's fields that a replay cannot take (a program or a collective
 * and its fields): CS_ERR_USAGE naming the first, else CS_OK. */
int cs_replay_check_request(const cs_request_t *r, cs_error_t *err);

/* One replay's products. */
typedef struct cs_replay_run {
    cs_program_t *p;           /* owned */
    cs_request_coll_t place;   /* rank_to_node, hints; no algorithm */
    cs_trace_info_t info;
    const cs_trace_format_t *fmt;   /* the format read */
    cs_spec_t opts[CS_COLL_NKINDS]; /* --algo-for's options */
    int has_opts[CS_COLL_NKINDS];
    cs_coll_algo_t *algo_file[CS_COLL_NKINDS]; /* owned: read from cs_replay_t.algo_file */
} cs_replay_run_t;

/* Reads a->trace for machine m and places its ranks (--map).  Zeroes run
 * first; cs_replay_run_destroy it whatever happened.  Errors name the file
 * and line, or the option. */
int cs_replay_load(const cs_replay_t *a, const cs_machine_t *m, cs_replay_run_t *run,
                   cs_error_t *err);
void cs_replay_run_destroy(cs_replay_run_t *run);

/* The executor's options of a replay with request r's mode, queue and
 * force. */
void cs_replay_exec_opts(const cs_request_t *r, const cs_replay_run_t *run,
                         cs_exec_opts_t *opts);

/* A map file: `rank node` per line, '#' comments; every rank 0..P-1 once,
 * every node at most once; map[0..P) gets each rank's node.  Public for
 * tests/fuzz. */
int cs_replay_read_map(const char *path, const cs_machine_t *m, int P, int32_t *map,
                       cs_error_t *err);

#endif
