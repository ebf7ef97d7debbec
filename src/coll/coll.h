/*
 * coll.h - the collective suite: algorithms written once against the program
 * model, a registry to find them by name ("allreduce/ring"), and the small
 * emission API every algorithm uses.
 *
 * An algorithm knows nothing of any machine.  It sees P ranks, a size, a
 * root, its options and the machine's *hints* in rank space (a ring order,
 * grid dimensions, hierarchy groups); it emits ops into a program.
 *
 * Sizes follow MPI counts (`--bytes`): n is the whole vector for broadcast,
 * reduce and allreduce; m is the per-rank block for allgather, gather,
 * scatter, reduce-scatter and alltoall (the buffer then holds P blocks of m
 * bytes, block i at [i*m, (i+1)*m)).  A barrier moves 0 or 1 byte tokens.
 *
 * Data layout for --validate (see check.c): every rank has one logical
 * buffer.  Every send/recv that an algorithm emits names the byte range it
 * carries, with cs_coll_send / cs_coll_recv; recvs either copy or reduce.
 * Ranges beyond the nominal buffer are scratch space.
 */
#ifndef CS_COLL_H
#define CS_COLL_H

#include <stdint.h>
#include "core/error.h"
#include "core/program.h"
#include "core/progen.h"
#include "core/units.h"

typedef enum cs_coll_kind {
    CS_COLL_BROADCAST, CS_COLL_REDUCE, CS_COLL_ALLREDUCE, CS_COLL_ALLGATHER,
    CS_COLL_REDUCE_SCATTER, CS_COLL_GATHER, CS_COLL_SCATTER, CS_COLL_BARRIER,
    CS_COLL_ALLTOALL, CS_COLL_NKINDS
} cs_coll_kind_t;

const char *cs_coll_name(cs_coll_kind_t k);     /* "broadcast", ... */
int cs_coll_parse(const char *name, cs_coll_kind_t *out, cs_error_t *err);
/* 1 if the collective has a root (broadcast, reduce, gather, scatter). */
int cs_coll_rooted(cs_coll_kind_t k);
/* Nominal buffer size of each rank for this collective and --bytes. */
int64_t cs_coll_buffer_bytes(cs_coll_kind_t k, int P, int64_t bytes);

/* The machine's hints, already translated into rank space by the caller
 * (cs_machine_hints_init in machines/machine.h): an algorithm never sees
 * node ids.  Every field may be absent; algorithms fall back without it. */
typedef struct cs_coll_hints {
    const int32_t *ring;     /* P ranks in the machine's best ring order, or NULL (identity) */
    const int32_t *ring_alt; /* an alternative ring (e.g. the thesis's even/odd ring), or NULL */
    int grid_rows, grid_cols;/* rank grid (rank = row*cols+col) when rows*cols == P, else 0 */
    const int32_t *group;    /* hierarchy: group id of each rank (chip, node, rack), or NULL */
    int ngroups;
    /* With group: ngroups*ngroups entries; gateway[g*ngroups+h] is the rank
     * of group g with a direct link to a rank of group h (its partner is
     * gateway[h*ngroups+g]), or -1 (no direct link, and g == h).  NULL: unknown. */
    const int32_t *gateway;
    /* The ranks form a lattice of ndims dimensions of sizes dims[0..ndims)
     * (dims[0] innermost: rank = c0 + d0 * (c1 + d1 * ...)), each dimension
     * its own network (a node's fast ring, then a switch between nodes):
     * for the per-dimension algorithms.  0: none. */
    int ndims;
    const int *dims;
} cs_coll_hints_t;
#define CS_COLL_MAX_DIMS 8

typedef struct cs_coll_args {
    cs_coll_kind_t kind;
    int P;               /* ranks */
    int64_t bytes;       /* MPI count semantics, see above */
    int root;
    int64_t unit;        /* the machine's packet size (a natural segment size) */
    const cs_coll_hints_t *hints;
    cs_spec_t *opts;     /* algorithm options (--opt k=v); read with cs_spec_get_* */
    int no_data;         /* 1: ops get no data descriptors.  Only --validate reads
                            them, and they cost about 17 bytes per op (issue 17) */
} cs_coll_args_t;

/* ---- emission ---------------------------------------------------------
 * A builder wraps the program.  Per rank it keeps the ops issued since the
 * last cs_coll_wait (outstanding) and the ops the next op must follow (the
 * ones completed by that wait), like MPI's isend/irecv + waitall.
 */
typedef struct cs_coll_builder cs_coll_builder_t; /* opaque */

cs_coll_builder_t *cs_coll_builder_new(cs_program_t *p, const cs_coll_args_t *a);
void cs_coll_builder_free(cs_coll_builder_t *b);
cs_program_t *cs_coll_program(cs_coll_builder_t *b);
const cs_coll_args_t *cs_coll_args(const cs_coll_builder_t *b);
/* The algorithm the builder runs (set by cs_coll_build and the windowed
 * build before its build function is called; NULL before).  An algorithm
 * defined by data rather than code (a file: io/algofile.h) embeds its
 * cs_coll_algo_t first in a struct of its own and finds its data back
 * through this pointer: the registry's function pointers take no context. */
const struct cs_coll_algo *cs_coll_builder_algo(const cs_coll_builder_t *b);

/* The bytes a message of `len` data bytes puts on the wire, from now on
 * (NULL: len): a protocol that carries flags or headers in its lines
 * (MSCCL's LL and LL128, io/msccl.c) makes messages longer than the data
 * they move.  Data descriptors (what --validate tracks) keep len. */
void cs_coll_set_wire(cs_coll_builder_t *b, int64_t (*wire)(int64_t len, const void *ctx),
                      const void *ctx);

/* The protocol of the sends and mcasts emitted from now on (core/proto.h;
 * CS_PROTO_NONE: none, the default): the op keeps the data bytes and
 * carries the protocol, whose wire bytes and latency the executor applies
 * on every machine (cs_program_set_proto).  NCCL's algorithms set it
 * through cs_nccl_begin. */
void cs_coll_set_proto(cs_coll_builder_t *b, cs_proto_t proto);

/* Attaches op's data descriptor (cs_program_set_data), unless the args say
 * no_data. */
void cs_coll_set_data(cs_coll_builder_t *b, int32_t op, int64_t off, int64_t len,
                      cs_data_mode_t mode);
/* Sends [off, off+len) of `from`'s buffer to `to`.  Returns the op. */
int32_t cs_coll_send(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag);
/* Receives into [off, off+len) of `at` from `from`, copying. */
int32_t cs_coll_recv(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag);
/* Receives and reduces into [off, off+len): a recv plus a calc of len bytes
 * at the machine's reduction rate after it.  Returns the calc (the op that
 * completes when the data is reduced). */
int32_t cs_coll_recv_reduce(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len,
                            int tag);
/* One payload [off, off+len) to several ranks (each posts a cs_coll_recv). */
int32_t cs_coll_mcast(cs_coll_builder_t *b, int from, const int32_t *to, int n, int64_t off,
                      int64_t len, int tag);
/* Local work on a rank: fixed ticks plus bytes reduced. */
int32_t cs_coll_calc(cs_coll_builder_t *b, int rank, int64_t ticks, int64_t bytes);
/* A join on a rank (cs_program_join): with cs_coll_wait before and after
 * it, the rank's next ops follow everything it issued so far through one
 * op instead of an edge from each to each, and start as they would have
 * with those edges. */
int32_t cs_coll_join(cs_coll_builder_t *b, int rank);
/* waitall on `rank`: its next ops start after everything it issued so far. */
void cs_coll_wait(cs_coll_builder_t *b, int rank);
/* cs_coll_wait on every rank. */
void cs_coll_wait_all(cs_coll_builder_t *b);
/* Waits for what came in, not for what went out: `rank`'s next ops follow
 * the recvs and calcs it issued since its last wait, while its sends stay
 * outstanding (the next cs_coll_wait includes them).  For rounds whose sent
 * data is not written again before the send completes (or lives in a buffer
 * of its own per round), so that a send's completion -- on the Cell the
 * receiver's ACK -- does not hold back the next round.  A rank that only
 * sent goes on after what it waited for last. */
void cs_coll_wait_recvs(cs_coll_builder_t *b, int rank);
void cs_coll_wait_recvs_all(cs_coll_builder_t *b);
/* Explicit dependency between two ops of one rank (streaming, after-start). */
void cs_coll_dep(cs_coll_builder_t *b, int32_t op, int32_t pred, cs_dep_kind_t kind);

/* The same, skipping zero-length pieces (a size smaller than P leaves some
 * pieces empty): they return -1 for len == 0, which cs_coll_dep ignores. */
int32_t cs_coll_send_nz(cs_coll_builder_t *b, int from, int to, int64_t off, int64_t len, int tag);
int32_t cs_coll_recv_nz(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len, int tag);
int32_t cs_coll_recv_reduce_nz(cs_coll_builder_t *b, int at, int from, int64_t off, int64_t len,
                               int tag);

/* Options: the value of `key` in args->opts, or dflt when the key (or the
 * whole option set) is absent; range and parse errors name the key. */
int cs_coll_opt_int(const cs_coll_args_t *a, const char *key, int64_t dflt, int64_t lo,
                    int64_t hi, int64_t *out, cs_error_t *err);
int cs_coll_opt_choice(const cs_coll_args_t *a, const char *key, const char *const *choices,
                       int dflt, int *out, cs_error_t *err);

/* Helpers every algorithm needs. */
/* Block i of n bytes split into `parts` nearly equal parts: the first
 * n % parts blocks get one byte more (so any n works, not only multiples). */
void cs_coll_split(int64_t n, int parts, int i, int64_t *off, int64_t *len);
/* The ring in rank space: hints->ring or the identity; pos[ring[i]] = i. */
void cs_coll_ring(const cs_coll_args_t *a, int32_t *ring, int32_t *pos);
/* Near-square grid for 2D algorithms: the hint when it covers P ranks,
 * else the factorisation rows*cols = P with rows <= cols closest to square. */
void cs_coll_grid(const cs_coll_args_t *a, int *rows, int *cols);
int cs_coll_ceil_log2(int64_t x);

/* ---- registry ---------------------------------------------------------- */
typedef struct cs_coll_algo {
    cs_coll_kind_t kind;
    const char *name;        /* unique within the collective, e.g. "ring" */
    const char *summary;     /* one line */
    const char *source;      /* "lecture", "Cerebras thesis Ch. 5", "Cell paper §3.2", ... */
    const char *options;     /* "seg=BYTES (default: unit)" or "" */
    const char *const *keys; /* option keys, NULL-terminated (NULL: none) */
    /* Emits the collective into the builder.  Errors: options out of range
     * (naming the key), sizes the algorithm cannot do. */
    int (*build)(cs_coll_builder_t *b, cs_error_t *err);
    /* An upper bound on the ops build emits for these args (exact when no
     * piece is empty), from the algorithm's closed form, so that a program
     * too long for the run is refused before it is built
     * (cs_coll_check_count); -1 when it cannot tell (options).  NULL: not
     * known; the limit is then met when the op is added. */
    int64_t (*max_ops)(const cs_coll_args_t *a);
} cs_coll_algo_t;

/* All algorithms, grouped by collective in listing order. */
const cs_coll_algo_t *const *cs_coll_algos(int *count);
/* Finds "coll/name" or, with name NULL, the collective's default algorithm. */
int cs_coll_find(cs_coll_kind_t k, const char *name, const cs_coll_algo_t **out, cs_error_t *err);

/* The algorithm's op count bound (max_ops), or -1 when it has none. */
int64_t cs_coll_max_ops(const cs_coll_algo_t *algo, const cs_coll_args_t *a);
/* Refuses, before anything is built, a program whose op count bound passes
 * `limit` (CS_PROGRAM_MAX_OPS for a whole program,
 * CS_PROGRAM_MAX_WINDOW_OPS for a windowed one; lower in tests), with
 * CS_ERR_NOMEM and a message that names the algorithm once, the bound and
 * the limit, and for a whole program the windowed run.  CS_OK when the
 * algorithm states no bound. */
int cs_coll_check_count(const cs_coll_algo_t *algo, const cs_coll_args_t *a, int64_t limit,
                        int windowed, cs_error_t *err);

/* Builds the program of one collective: creates it, runs the algorithm,
 * checks unused options, finalizes.  Refuses a program longer than a whole
 * program holds before building it (cs_coll_check_count).  On error *out
 * is NULL. */
int cs_coll_build(const cs_coll_algo_t *algo, const cs_coll_args_t *a, cs_program_t **out,
                  cs_error_t *err);

/* The same program as a generator (core/progen.h): built a window at a
 * time while the executor runs it, as a coroutine on a stack of its own
 * that the executor resumes (coll/window.c).  `batch`: ops built beyond what the
 * executor asks for at each turn (<= 0: 2^16; 1 makes the most turns, for
 * tests).  Without args->no_data the program keeps data descriptors for
 * --validate (coll/check.h, cs_coll_check_new_gen).  The checks of
 * cs_coll_build are made here (the op count against
 * CS_PROGRAM_MAX_WINDOW_OPS) or by the first advance (the algorithm's
 * own); args must outlive the generator. */
int cs_coll_generate(const cs_coll_algo_t *algo, const cs_coll_args_t *a, int32_t batch,
                     cs_progen_t **out, cs_error_t *err);

#endif
