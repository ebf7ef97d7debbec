/*
 * tracecoll.h - a trace's collective call expanded by the suite on a group
 * of ranks and spliced into the trace's program.
 *
 * Trace formats that record collectives as calls (SimGrid TI's `allreduce`
 * line, Chakra's COMM_COLL_NODE) share this: the call is built with an
 * algorithm of the suite (or an algorithm file) for the group's size, its
 * ops are copied into the trace's program with the group's ranks renamed to
 * the program's, in a tag space of their own (tags from opts.tag_base up, so
 * they never match the trace's point-to-point messages: MPI's communicator
 * context), and tied to the trace: on every member the call's first ops
 * follow the member's `pred` op and the member's `join` op follows its last
 * ones.  A small cache keeps the last calls built (traces repeat the same
 * call).
 *
 * Moved out of io/ti.c (issue 31) so that Chakra's reader expands its
 * collectives exactly as TI does; TI's messages are unchanged.
 */
#ifndef CS_IO_TRACECOLL_H
#define CS_IO_TRACECOLL_H

#include <stdint.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"

typedef struct cs_tracecoll_opts {
    /* the algorithm of each collective (NULL: the suite's default) and its
     * options (NULL: none); arrays of CS_COLL_NKINDS, borrowed */
    const cs_coll_algo_t *const *algo;
    cs_spec_t *const *algo_opts;
    int64_t unit;      /* the machine's packet size (>= 1; 0 taken as 1) */
    int32_t tag_base;  /* added to every tag of the call's ops */
    int32_t max_tag;   /* an algorithm tag above max_tag is refused (tag_base + max_tag
                          must fit an int) */
} cs_tracecoll_opts_t;

/* One call as every member of the group made it. */
typedef struct cs_tracecoll_call {
    cs_coll_kind_t kind;
    int64_t bytes;           /* the suite's MPI count semantics (coll.h) */
    int32_t root;            /* group rank of the root, -1: unrooted */
    int G;                   /* group size */
    const int32_t *members;  /* group rank g -> program rank; NULL: g itself */
    const int32_t *pred;     /* per group rank: op the first ops follow, or -1 */
    const uint8_t *pred_kind;/* per group rank: cs_dep_kind_t of pred (NULL: AFTER) */
    const int32_t *join;     /* per group rank: op that follows the last ops */
    const int32_t *line;     /* per group rank: the ops' origin line */
    const char *where;       /* "FILE:LINE" prefixed to a build error */
} cs_tracecoll_call_t;

typedef struct cs_tracecoll cs_tracecoll_t; /* opaque: the cache */

/* opts is borrowed until cs_tracecoll_free. */
cs_tracecoll_t *cs_tracecoll_new(const cs_tracecoll_opts_t *opts);
/* Frees the cache (accepts NULL); the programs spliced into stay. */
void cs_tracecoll_free(cs_tracecoll_t *tc);

/* Builds call c (hints: the machine's in the group's rank space, or NULL)
 * and copies its ops into p; *nops (may be NULL) gets the ops added.
 * Errors: the algorithm's (a size or group it cannot do), prefixed with
 * "WHERE: <call> with <coll>/<algo> on G ranks"; CS_ERR_INTERNAL for an
 * algorithm whose tags or fixed tick times a trace cannot carry, or when p
 * refuses an op.  p is not finalized. */
int cs_tracecoll_splice(cs_tracecoll_t *tc, cs_program_t *p, const cs_tracecoll_call_t *c,
                        const cs_coll_hints_t *hints, int64_t *nops, cs_error_t *err);

/* "allreduce of 1024 bytes, root 3" or "barrier", for messages. */
const char *cs_tracecoll_name(char *buf, size_t n, cs_coll_kind_t kind, int64_t bytes,
                              int32_t root);

#endif
