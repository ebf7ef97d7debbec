/*
 * msccl.h - MSCCL XML algorithms (the format the MSCCL executor of
 * NCCL/RCCL runs, written by msccl-tools, TACCL and TE-CCL): read, checked,
 * and emitted as a program of the collective suite (docs/msccl.md).
 *
 * A file is read once (cs_msccl_read) and checked for everything that does
 * not depend on the run: elements, attributes and step types known, ids
 * and peers in range, buffers within their chunks, dependencies present
 * and acyclic, every thread block's sends paired with a receiving thread
 * block's recvs, and no step that could never run.  Each error names
 * "FILE:LINE".  cs_msccl_emit then writes the program for the run's ranks
 * (which must be the file's ngpus) and size into a builder of coll.h.
 *
 * Readers reach the file through a cs_source_t: a path at the command
 * line, or bytes in memory (a file that a request to the service carries
 * inline), named in messages as the user named it.
 */
#ifndef CS_IO_MSCCL_H
#define CS_IO_MSCCL_H

#include "coll/coll.h"
#include "core/error.h"
#include "core/source.h"

typedef struct cs_msccl cs_msccl_t; /* opaque: one file, read and checked */

/* Reads and checks src.  CS_ERR_IO when it cannot be read, CS_ERR_PARSE
 * "NAME:LINE: ..." for anything wrong in it, CS_ERR_OOM when libxml2 runs
 * out of memory.  On error *out is NULL. */
int cs_msccl_read(const cs_source_t *src, cs_msccl_t **out, cs_error_t *err);
void cs_msccl_free(cs_msccl_t *m); /* accepts NULL */

/* The <algo> element's values. */
typedef struct cs_msccl_info {
    const char *name;     /* name="..." or "" */
    const char *coll;     /* coll="..." as written */
    cs_coll_kind_t kind;  /* the suite's collective it is */
    int ngpus, nchunks, nchannels, nthreadblocks;
    int64_t nsteps;
    int inplace;          /* 1 unless inplace="0" */
    const char *proto;    /* "Simple", "LL", "LL128" (default Simple): reported, not modelled */
    const char *redop;    /* redop="..." or "" */
    int line;             /* of <algo> */
} cs_msccl_info_t;
void cs_msccl_info(const cs_msccl_t *m, cs_msccl_info_t *out);

/* Whether the file's collective is `kind`: CS_ERR_USAGE "NAME:LINE: ..."
 * naming both otherwise. */
int cs_msccl_check_kind(const cs_msccl_t *m, cs_coll_kind_t kind, cs_error_t *err);

/* Emits the algorithm into b for the builder's args (ranks, size, kind):
 * every step becomes its sends, recvs (copying or reducing) and reduction
 * calcs, with data descriptors for --validate.  Errors ("NAME:LINE: ..."):
 * ranks other than ngpus, a collective other than the file's, a size the
 * chunks cannot divide where validation needs them equal. */
int cs_msccl_emit(const cs_msccl_t *m, cs_coll_builder_t *b, cs_error_t *err);

/* The option an MSCCL algorithm takes: proto=off|on prices the file's
 * protocol (<algo proto>) in the messages' wire bytes: LL 2x (a 16-byte
 * line carries 8 data bytes and two 4-byte flags), LL128 whole 128-byte
 * lines of 120 data bytes (NCCL's lines); Simple and off: the data. */
#define CS_MSCCL_OPTIONS                                                                 \
    "proto=off|on: price LL (2x) and LL128 (128-byte lines of 120 data bytes) on the wire " \
    "(default off)"
extern const char *const cs_msccl_keys[];

/* Names the chunks of the byte ranges a --validate message gives ("bytes
 * [0, 262144)" gets " (chunk 0 of 4)"), so that a wrong file's report
 * says which chunk of which rank is wrong; msg is rewritten in place
 * (len bytes).  Nothing changes when a does not fit the file. */
void cs_msccl_explain(const cs_msccl_t *m, const cs_coll_args_t *a, char *msg, size_t len);

#endif
