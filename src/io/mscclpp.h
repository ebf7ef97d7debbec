/*
 * mscclpp.h - MSCCL++ JSON execution plans (what microsoft/mscclpp's Python
 * DSL writes and its executor runs, src/core/executor/execution_plan.cc):
 * read, checked, and emitted as a program of the collective suite
 * (docs/msccl.md, "MSCCL++ plans").
 *
 * A plan is read once (cs_mscclpp_read) and checked for everything that
 * does not depend on the run: fields present and of the right type, op
 * names known (and modelled), channels, remote buffers and peers that
 * exist, chunks within their buffers, every signal on a channel paired
 * with a wait on the peer's channel, and no op that could never run.
 * Syntax errors name "FILE:LINE:COLUMN" (jansson's position); everything
 * else "FILE: PATH" with the JSON path (gpus[2].threadblocks[0].ops[5]).
 * cs_mscclpp_emit then writes the program for the run's ranks (the plan's
 * number of GPUs) and size into a builder of coll.h.
 *
 * Built only with jansson (meson: CS_HAVE_JANSSON); without it algofile.c
 * refuses the format with a message saying so, and this header's
 * functions are not linked.
 */
#ifndef CS_IO_MSCCLPP_H
#define CS_IO_MSCCLPP_H

#include "coll/coll.h"
#include "core/error.h"
#include "core/source.h"

typedef struct cs_mscclpp cs_mscclpp_t; /* opaque: one plan, read and checked */

/* Reads and checks src.  CS_ERR_IO when it cannot be read, CS_ERR_PARSE
 * ("NAME:LINE:COL: ..." or "NAME: PATH: ...") for anything wrong in it,
 * CS_ERR_RANGE for an op that is valid MSCCL++ but not modelled (named).
 * On error *out is NULL. */
int cs_mscclpp_read(const cs_source_t *src, cs_mscclpp_t **out, cs_error_t *err);
void cs_mscclpp_free(cs_mscclpp_t *m); /* accepts NULL */

/* The plan's top-level values. */
typedef struct cs_mscclpp_info {
    const char *name;       /* "name" */
    const char *collective; /* "collective" as written */
    const char *protocol;   /* "Simple" or "LL": reported, not modelled */
    cs_coll_kind_t kind;
    int ngpus, nchunks, nthreadblocks, inplace;
    int64_t nops;
} cs_mscclpp_info_t;
void cs_mscclpp_info(const cs_mscclpp_t *m, cs_mscclpp_info_t *out);

/* Whether the plan's collective is `kind`: CS_ERR_USAGE naming both
 * otherwise. */
int cs_mscclpp_check_kind(const cs_mscclpp_t *m, cs_coll_kind_t kind, cs_error_t *err);

/* Emits the plan into b for the builder's args: every op becomes sends,
 * recvs (copying or reducing), reduction calcs and dependencies, with data
 * descriptors for --validate.  Errors: ranks other than the plan's GPUs, a
 * collective other than the plan's, a size the chunks cannot cut. */
int cs_mscclpp_emit(const cs_mscclpp_t *m, cs_coll_builder_t *b, cs_error_t *err);

#endif
