/*
 * result_json.h - the versioned JSON result of one run (`collsim run --json`).
 *
 * The schema is documented field by field in docs/json.md.  Any change to
 * the meaning or presence of a field bumps CS_RESULT_SCHEMA_VERSION; adding a
 * field does not.
 */
#ifndef CS_RESULT_JSON_H
#define CS_RESULT_JSON_H

#include <stdio.h>

#include "coll/bandwidth.h"
#include "core/error.h"
#include "engine/exec.h"
#include "core/program.h"
#include "machines/machine.h"

#define CS_RESULT_SCHEMA_VERSION 1

/* The collsim release recorded in results and printed by --version.  The
 * build may define it (from meson's project version); this default must be
 * kept equal to the version in meson.build. */
#ifndef COLLSIM_VERSION
#define COLLSIM_VERSION "0.1.0"
/* Writes s as a JSON string (quotes, escapes; invalid UTF-8 bytes become
 * U+FFFD, so the output is always valid JSON); NULL writes null.  For the
 * other JSON writers of src/io (timelines). */
void cs_json_write_string(FILE *f, const char *s);

#endif

/* Writes the result of running `p` on `m` as one JSON document (ending in a
 * newline) to f.  With with_timing == 0 the only non-deterministic fields
 * (wall_seconds, events_per_second) are written as 0, so that two runs of the
 * same inputs give byte-identical files.  Channels are listed only if they
 * carried bytes; machine.channels gives the total.
 * Errors: CS_ERR_IO when writing to f fails (the message says so; f is left
 * open).  Number formatting is locale-independent and deterministic. */
int cs_result_write_json(FILE *f, const cs_machine_t *m, const cs_program_t *p,
                         const cs_exec_result_t *r, int with_timing, cs_error_t *err);

/* A benchmark loop's times (issue 32, docs/loops.md), in ticks.  An
 * iteration's time runs from the earliest start of any of its ops to the
 * latest end of any of them; `avg_ticks` is nccl-tests' average: (end of
 * the last timed iteration - start of the first timed one) / iterations. */
typedef struct cs_result_loop {
    int64_t iterations, warmup;      /* timed, warm-up */
    const char *between;             /* "none", "barrier:ALGO" */
    const char *style;               /* "nccl-tests", "osu" or "custom": where the counts came from */
    double avg_ticks;                /* timed_ticks / iterations */
    int64_t timed_ticks;             /* end of the last timed - start of the first timed */
    double iteration_avg_ticks;      /* mean of the timed iterations' own times */
    int64_t iteration_min_ticks, iteration_max_ticks;
    int64_t first_ticks;             /* iteration 0's own time: the cold single call */
    const int64_t *start, *end;      /* per iteration (warm-up first), warmup + iterations */
} cs_result_loop_t;

/* NCCL's cost model of the run (issue 36, docs/nccl.md): the choice of
 * `--algo nccl`, or NCCL's estimate of an nccl-* run (--predict). */
typedef struct cs_result_nccl {
    int chosen;                /* 1: --algo nccl chose the algorithm */
    const char *algo;          /* NCCL's name ("Ring") */
    const char *suite_algo;    /* the suite's algorithm that ran ("nccl-ring") */
    const char *proto;         /* "Simple", "LL", "LL128" */
    int nchannels;             /* the channels the run used */
    int nodes;                 /* the model's nNodes */
    double bw_intra, bw_inter; /* the model's GB/s per channel */
    double estimate_seconds;   /* NCCL's time */
    /* the model's whole table for this call: every (algo, proto) it
     * considers, with its latency (us), bandwidth (GB/s) and time (us) */
    int nentries;
    struct cs_result_nccl_entry {
        const char *algo, *proto;
        double latency_us, bw_gbps, time_us;
    } entries[24];
} cs_result_nccl_t;

/* Facts about the run that the result alone does not hold. */
typedef struct cs_result_info {
    int with_timing; /* as above */
    int validated;   /* 1: --validate checked the final data placement and it
                        was right (a failed validation writes no result) */
    /* --predict: 1 writes a "model" object (docs/json.md), 0 leaves it out
     * (so results without --predict keep their exact form) */
    int predict;
    const cs_model_t *model;  /* the machine's model, or NULL: none, ... */
    const char *model_none;   /* ... for this reason */
    /* a sweep's point (docs/json.md): with point_algo non-NULL, a "point"
     * object {"algo", "bytes", "ranks"} says what the run is; NULL leaves
     * it out (`collsim run --json` keeps its exact form) */
    const char *point_algo;
    int64_t point_bytes;
    int point_ranks;
    /* a collective's bandwidths as nccl-tests defines them
     * (coll/bandwidth.h, docs/bandwidth.md): a "bandwidth" object after
     * "messages"; NULL leaves it out (programs, barriers) */
    const cs_bandwidth_t *bandwidth;
    /* a benchmark loop: a "loop" object (docs/json.md); NULL leaves it out */
    const cs_result_loop_t *loop;
    /* an "nccl" object (docs/json.md) before "validated"; NULL leaves it out */
    const cs_result_nccl_t *nccl;
} cs_result_info_t;

/* cs_result_write_json with the run's info (cs_result_write_json writes
 * "validated": false). */
int cs_result_write_json_info(FILE *f, const cs_machine_t *m, const cs_program_t *p,
                              const cs_exec_result_t *r, const cs_result_info_t *info,
                              cs_error_t *err);

/* Writes s as a JSON string (quotes, escapes; invalid UTF-8 bytes become
 * U+FFFD, so the output is always valid JSON); NULL writes null.  For the
 * other JSON writers of src/io (timelines). */
void cs_json_write_string(FILE *f, const char *s);

#endif
