/*
 * algofile_internal.h - what the readers of algorithm files share, and
 * only they (private to src/io/algofile*.c, msccl.c and mscclpp.c; all in
 * algofile_emit.c).  MSCCL XML and MSCCL++ plans describe the same
 * things: buffers i, o and s counted in chunks of the collective's buffer,
 * local moves as messages of a GPU to itself, receives that copy or
 * reduce.  Cut and emitted one way here, so that the two formats price the
 * same bytes the same (docs/msccl.md) and a fix reaches both.
 */
#ifndef CS_IO_ALGOFILE_INTERNAL_H
#define CS_IO_ALGOFILE_INTERNAL_H

#include <stdint.h>

#include "coll/coll.h"
#include "core/error.h"

/* The buffers of both formats, in the order of their per-GPU chunk counts
 * (chunks[3]: input, output, scratch). */
enum { CS_ALGOFILE_BUF_I, CS_ALGOFILE_BUF_O, CS_ALGOFILE_BUF_S };

/* "n" where a collective's name takes "an" ("an allreduce"), else "": for
 * the readers' messages that name the file's collective. */
const char *cs_algofile_article(cs_coll_kind_t kind);

/* The bytes of a chunk (*q) for args a and a file of nchunks chunks over
 * ngpus GPUs: equal chunks keep every send and recv of a step the same
 * length; a block collective must cut each rank's block exactly, a vector
 * may end in a short chunk (padded: docs/msccl.md).  Error CS_ERR_RANGE
 * "FILE[:LINE]: COLL: each rank's block ... into RATIO%d/%d equal chunks"
 * (line <= 0: none; ratio names the counts, "" for none); err may be NULL. */
int cs_algofile_chunk_bytes(const cs_coll_args_t *a, int32_t nchunks, int32_t ngpus,
                            const char *file, int line, const char *ratio, int64_t *q,
                            cs_error_t *err);

/* Whether nchunks chunks of the collective's buffer and smax of scratch,
 * of q bytes each, fit collsim's buffers (CS_DATA_MAX_LEN): CS_ERR_RANGE
 * "FILE: N chunks of Q bytes are more than collsim's buffers hold" if not. */
int cs_algofile_check_fits(const char *file, int64_t nchunks, int64_t smax, int64_t q,
                           cs_error_t *err);

/* The byte offset of chunk c of buffer buf (CS_ALGOFILE_BUF_*) of GPU g,
 * chunks of q bytes: i and o on the collective's buffer, whole (a count
 * of nchunks) or the GPU's own block (any other count, `count` being it);
 * scratch after it, from byte `scratch`. */
int64_t cs_algofile_offset(int64_t q, int64_t scratch, int32_t nchunks, int32_t count, int buf,
                           int g, int64_t c);

/* A recv of [off, off+len) on rank g from `from` into b, copying or
 * reducing (a recv with a REDUCE descriptor and a calc at the reduction
 * rate after it, as cs_coll_recv_reduce, so that the caller can put its
 * own dependencies on the recv itself).  Returns the op that ends it;
 * *first gets the recv (either may be negative: the builder's "no op"). */
int32_t cs_algofile_recv_into(cs_coll_builder_t *b, int g, int from, int64_t off, int64_t len,
                              int tag, int reduce, int32_t *first);

#endif
