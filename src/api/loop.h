/*
 * loop.h - benchmark loops (issue 32, docs/loops.md): a collective run back
 * to back as nccl-tests and the OSU micro-benchmarks run it, W warm-up and
 * N timed iterations in one simulation, timed per iteration.
 *
 * The loop is a program made of the collective's program repeated: the
 * ops of iteration i+1 on a rank start once every op of iteration i on
 * that rank has completed (a zero-cost join op per rank and iteration
 * carries the dependency), so iterations overlap across ranks as they do
 * on a real machine, and nothing synchronises the ranks unless a barrier
 * program is put between iterations (--between barrier[:ALGO]).  Each
 * iteration's tags are moved to a range of their own, so a message of one
 * iteration can never match a recv of another.
 *
 * With --validate every iteration gets its own checker (coll/check.h),
 * made when the iteration's first message leaves and verified as soon as
 * its last data-carrying recv has completed, so that only the iterations
 * in flight hold checker state.
 *
 * Nothing here prints or exits; errors name the option (--iterations,
 * --warmup, --between, --loop).
 */
#ifndef CS_LOOP_H
#define CS_LOOP_H

#include <stdint.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"
#include "engine/exec.h"
#include "io/result_json.h"

/* nccl-tests' defaults (src/common.cu: -w 5 -n 20). */
#define CS_LOOP_NCCL_WARMUP 5
#define CS_LOOP_NCCL_ITERATIONS 20
/* The OSU micro-benchmarks' collective defaults (osu_util: skip 100 and
 * 1,000 iterations up to LARGE_MESSAGE_SIZE, 8 KiB; 10 and 100 above). */
#define CS_LOOP_OSU_LARGE_BYTES 8192
#define CS_LOOP_OSU_WARMUP 100
#define CS_LOOP_OSU_ITERATIONS 1000
#define CS_LOOP_OSU_WARMUP_LARGE 10
#define CS_LOOP_OSU_ITERATIONS_LARGE 100
/* The most iterations (warm-up and timed each) a loop may ask for: checked
 * when parsed, before anything is allocated. */
#define CS_LOOP_MAX_ITERATIONS 1000000
/* The most ops a loop program may have without --force (about 40 bytes an
 * op: 640 MiB); with --force, CS_PROGRAM_MAX_OPS. */
#define CS_LOOP_MAX_OPS (INT64_C(1) << 24)

typedef enum cs_loop_style {
    CS_LOOP_STYLE_NONE = 0, /* no loop: one call */
    CS_LOOP_STYLE_CUSTOM,   /* --iterations N and/or --warmup W */
    CS_LOOP_STYLE_NCCL,     /* --iterations default, --loop nccl-tests */
    CS_LOOP_STYLE_OSU       /* --loop osu: the counts depend on the size */
} cs_loop_style_t;

/* What the options ask for.  Zero it (or cs_loop_spec_init); strings are
 * borrowed. */
typedef struct cs_loop_spec {
    cs_loop_style_t style;
    int64_t iterations;       /* 0: the style's default */
    int64_t warmup;           /* -1: the style's default */
    int barrier;              /* 1: a barrier between iterations */
    const char *barrier_algo; /* its algorithm, NULL: the barrier's default */
} cs_loop_spec_t;

void cs_loop_spec_init(cs_loop_spec_t *s);
/* The options, each from its text: --iterations N|default, --warmup W,
 * --between none|barrier[:ALGO], --loop nccl-tests|osu.  CS_ERR_USAGE
 * naming the option for 0, a negative number, a number above
 * CS_LOOP_MAX_ITERATIONS, an unknown word; s is unchanged then. */
int cs_loop_set(cs_loop_spec_t *s, const char *key, const char *value, cs_error_t *err);
/* The counts for a collective of `bytes` (OSU's depend on it). */
void cs_loop_counts(const cs_loop_spec_t *s, int64_t bytes, int64_t *warmup, int64_t *iterations);
/* The style's name for reports: "nccl-tests", "osu", "custom". */
const char *cs_loop_style_name(cs_loop_style_t s);

typedef struct cs_loop cs_loop_t; /* opaque */

/* The parts of a loop.  The programs are finalized and have the same ranks;
 * cs_loop_new takes them (frees them, also on error). */
typedef struct cs_loop_parts {
    cs_program_t *body;     /* every iteration's program */
    cs_program_t *between;  /* NULL, or a program run between iterations */
    const char *between_name; /* "barrier:ALGO" for reports (copied); NULL: "none" */
    cs_loop_style_t style;
    int64_t warmup, iterations; /* 0 <= warmup, 1 <= iterations, each <= CS_LOOP_MAX_ITERATIONS */
    int64_t max_ops;        /* refuse a loop program of more ops (CS_LOOP_MAX_OPS) */
    /* Tests only: iteration odd_at (0-based, warm-up included) runs `odd`
     * instead of body, so that a test can break one iteration and see
     * --validate fail; NULL: none.  Same ranks as body. */
    cs_program_t *odd;
    int64_t odd_at;
} cs_loop_parts_t;

/* Builds the loop program.  Errors: CS_ERR_RANGE when the loop would exceed
 * parts->max_ops ops (naming the count and --force) or its tags would not
 * fit in 31 bits; CS_ERR_USAGE for a program whose recvs take any tag
 * (CS_ANY: iterations could not be kept apart).  On error *out is NULL. */
int cs_loop_new(cs_loop_parts_t *parts, cs_loop_t **out, cs_error_t *err);
void cs_loop_free(cs_loop_t *l); /* accepts NULL */
/* The loop program (owned by the loop). */
const cs_program_t *cs_loop_program(const cs_loop_t *l);
/* Validates every iteration against collective `a` (borrowed: it must
 * outlive the loop's run), with checker keys from `seed`. */
void cs_loop_validate(cs_loop_t *l, const cs_coll_args_t *a, uint64_t seed);
/* 1 when cs_loop_validate was called. */
int cs_loop_validating(const cs_loop_t *l);
/* Sets the executor's spans (one per iteration and per in-between
 * program) and, when validating, the loop's observer. */
void cs_loop_exec_opts(cs_loop_t *l, cs_exec_opts_t *opts);
/* After the run: computes the loop's times from r->spans and, when
 * validating, verifies every iteration not verified yet.  CS_ERR_VALIDATE
 * naming the first wrong iteration ("iteration 2 of 25 (timed 2 of 20):
 * ..."), or CS_ERR_NOMEM if a checker could not be made. */
int cs_loop_finish(cs_loop_t *l, const cs_exec_result_t *r, cs_error_t *err);
/* The times (valid after cs_loop_finish succeeded; owned by the loop). */
const cs_result_loop_t *cs_loop_result(const cs_loop_t *l);

#endif
