/*
 * msccl_write.h - a program of the collective suite written as MSCCL XML
 * (`collsim export --format msccl`, docs/msccl.md "Export"), the format
 * msccl.h reads: so that an algorithm designed in collsim runs on GPUs
 * through the MSCCL executor, and `--algo msccl:FILE` gives back the same
 * messages and the same times.
 *
 * Each rank becomes a <gpu>; its ops become steps (a send `s`, a recv `r`,
 * a recv and its reduction `rrc`, a recv forwarded `rcs` / `rrs`, a local
 * copy `cpy` / `re`), grouped into thread blocks that each hold the steps
 * of one stream of messages (one send or recv peer, one channel) or of
 * local copies, in dependency order; the waits a tb's order does not imply
 * become `depid`/`deps`, and `nop` steps when a step waits for more than
 * one other.  The chunk is the largest that cuts every message, offset and
 * the buffer exactly (or the count asked for).
 *
 * What the format cannot say is refused with the reason: multicasts, waits
 * other than "after completion" (streaming, after-start), computations that
 * are not the reduction of a received message, messages without a data
 * descriptor (built with no_data, or tokens of 0 bytes), a wait that names
 * only part of what one step does, and sizes that need more than
 * CS_MSCCL_WRITE_MAX_CHUNKS chunks.
 */
#ifndef CS_IO_MSCCL_WRITE_H
#define CS_IO_MSCCL_WRITE_H

#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"

/* The most chunks per loop the writer chooses or accepts: past it a
 * message's offset or size is a poor divisor of the buffer (an odd size),
 * and the executor's loop would move tiny chunks. */
#define CS_MSCCL_WRITE_MAX_CHUNKS 65536

typedef struct cs_msccl_write_opts {
    const char *name;  /* the algorithm, for <algo name> and every message ("allreduce/ring") */
    int64_t chunks;    /* nchunksperloop; 0: the smallest that makes every message whole */
    const char *proto; /* <algo proto>: NULL is "Simple" */
} cs_msccl_write_opts_t;

/* Writes the finalized program p, built by the suite for args a (kind, P,
 * bytes; root: the file is for that root) with data descriptors, as MSCCL
 * XML to f.  Errors: CS_ERR_RANGE "NAME cannot be written as MSCCL XML:
 * REASON" for what the format cannot say (nothing is written then), or a
 * chunk count that does not fit; CS_ERR_NOMEM for a program too large to
 * analyse (its ancestry tables would pass 1 GiB); CS_ERR_IO when f reports
 * a write error.  O(ops^2 / 8) bytes per rank for the ancestry of its ops.
 * A program with joins is written as the program they stand for
 * (cs_program_without_joins). */
int cs_msccl_write(const cs_program_t *p, const cs_coll_args_t *a,
                   const cs_msccl_write_opts_t *o, FILE *f, cs_error_t *err);

#endif
