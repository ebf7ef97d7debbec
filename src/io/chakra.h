/*
 * chakra.h - MLCommons Chakra execution traces (ET) read into programs
 * (docs/chakra.md).
 *
 * A trace is one file per rank, PREFIX.0.et .. PREFIX.(P-1).et, each a
 * stream of length-delimited protobuf messages (a varint32 length, then the
 * message): one GlobalMetadata, then Nodes (src/io/chakra_et.proto, from
 * Chakra's schema/protobuf/et_def.proto).  Nodes form a DAG per rank: a
 * node starts once every node of its data_deps and ctrl_deps has completed.
 * What each node type becomes (the meanings checked against ASTRA-sim's
 * workload layer, astra-sim/workload/Workload.cc):
 *   COMP_NODE         a calc of duration_micros, or num_ops at
 *                     opts.flops_per_second when the duration is 0
 *   MEM_LOAD/STORE    a calc of their duration (0: counted as skipped)
 *   COMM_SEND/RECV    send / recv (comm_dst / comm_src, comm_size,
 *                     comm_tag), paired per (src, dst, tag) in order
 *   COMM_COLL_NODE    a collective of the suite (comm_type, comm_size read
 *                     as the rank's input buffer, as ASTRA-sim does) on the
 *                     ranks of its process group (pg_name), expanded by
 *                     io/tracecoll.h in a tag space of its own
 *   METADATA_NODE     no time; its process groups (a PyTorch trace's
 *                     `[{"pg_name": ..., "ranks": [...]}]`) are read
 * Unknown node types and attributes are errors naming file and node id,
 * or skipped (zero-time ops that keep the order) and counted with
 * opts.skip_unknown.
 *
 * Errors: CS_ERR_PARSE "FILE: byte OFF: node #I (id N): ..." for a broken
 * stream (a truncated varint, a length past the file's end, a message that
 * does not parse) and "FILE: node N: ..." for wrong contents (a dependency
 * on a missing node, a cycle, a peer out of range, an unmatched send or
 * recv, collectives that disagree across a group); CS_ERR_IO for a missing
 * or unreadable rank file (named); CS_ERR_RANGE for more ranks than
 * opts.max_ranks (checked before anything per rank is allocated).  On any
 * error *out is NULL and nothing leaks.
 *
 * Compiled only with protobuf-c (CS_HAVE_CHAKRA); without it every reader
 * returns CS_ERR_USAGE "this collsim was built without protobuf-c".
 * Memory: one rank's file and its nodes at a time (the files are read one
 * after the other; errors come rank by rank, a rank's own checks before the
 * next rank is read), then 8 bytes per op (its node's id) and 20 per send
 * or recv until the program is built: about 1.5 times the program's own
 * bytes at the peak.
 */
#ifndef CS_IO_CHAKRA_H
#define CS_IO_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"

/* Chakra's NodeType values 0..10 (INVALID_NODE .. CHECKPOINT_NODE). */
#define CS_CHAKRA_NTYPES 11
/* Collectives use tags from this base up, the trace's own tags below it. */
#define CS_CHAKRA_COLL_TAG_BASE (1 << 30)
#define CS_CHAKRA_MAX_TAG (CS_CHAKRA_COLL_TAG_BASE - 1)
/* The reader's own ceiling on ranks. */
#define CS_CHAKRA_MAX_RANKS (1 << 20)

typedef struct cs_chakra_opts {
    /* COMP_NODE's num_ops: ops per second (default 1e9) */
    double flops_per_second;
    /* the algorithm of each collective (NULL: the suite's default) and its
     * options (NULL: none) */
    const cs_coll_algo_t *algo[CS_COLL_NKINDS];
    cs_spec_t *algo_opts[CS_COLL_NKINDS];
    /* the machine's packet size, for algorithms' default segments */
    int64_t unit;
    /* As cs_ti_opts_t.prepare: called once P is known, before any
     * collective is expanded, to get the machine's hints in rank space. */
    int (*prepare)(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err);
    void *prepare_ctx;
    /* > 0: the machine's node count; more ranks are refused before any
     * per-rank allocation */
    int max_ranks;
    /* 1: unknown node types and attributes are skipped and counted */
    int skip_unknown;
    /* ASTRA-sim's comm-group JSON ({"1": [0, 1], ...}), or NULL */
    const char *comm_group;
} cs_chakra_opts_t;

/* What a trace held, for reports. */
typedef struct cs_chakra_info {
    int files;
    int64_t nodes;                       /* every node of every rank */
    int64_t types[CS_CHAKRA_NTYPES];     /* nodes per NodeType */
    int64_t calls[CS_COLL_NKINDS];       /* collective calls, once per group call */
    int64_t coll_ops;                    /* ops the collectives expanded into */
    int64_t groups;                      /* process groups used (all ranks included) */
    int64_t skipped_mem;                 /* memory nodes without a duration */
    int64_t skipped_nodes;               /* unknown node types skipped */
    int64_t skipped_attrs;               /* unknown attributes skipped */
} cs_chakra_info_t;

/* 1 when this collsim reads Chakra traces (built with protobuf-c). */
int cs_chakra_available(void);

void cs_chakra_opts_default(cs_chakra_opts_t *o);

/* The NodeType's name ("COMP_NODE"), or "?" out of range. */
const char *cs_chakra_type_name(int type);

/* Reads the trace `path` names: a prefix (PREFIX.N.et) or one rank's file
 * (X.N.et: the prefix is X).  P is the number of PREFIX.N.et files in the
 * prefix's directory; each of 0..P-1 must exist.  The program is
 * finalized, has time unit 1e-9 s, carries the prefix as its source and
 * each op's node id as its line.  info may be NULL. */
int cs_chakra_read(const char *path, const cs_chakra_opts_t *o, cs_program_t **out,
                   cs_chakra_info_t *info, cs_error_t *err);

/* Reads P ranks' bytes (data[i], len[i]: rank i's file), named
 * NAME.i.et in messages.  For tests and fuzzing. */
int cs_chakra_read_buffers(const uint8_t *const *data, const size_t *len, int P,
                           const char *name, const cs_chakra_opts_t *o, cs_program_t **out,
                           cs_chakra_info_t *info, cs_error_t *err);

/* Tells a Chakra trace from the path: *is_chakra = 1 if it names X.N.et,
 * or a prefix whose PREFIX.0.et exists, or a file that starts with a
 * length-delimited GlobalMetadata message.  Errors never: what is not a
 * Chakra trace is left to the other formats' sniffers. */
int cs_chakra_sniff(const char *path, int *is_chakra, cs_error_t *err);

#endif
