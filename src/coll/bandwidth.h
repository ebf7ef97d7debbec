/*
 * bandwidth.h - a collective's bandwidth as nccl-tests defines it
 * (nccl-tests doc/PERFORMANCE.md and the *GetBw functions of its src/ files):
 * the algorithm bandwidth algbw = S / t and the bus bandwidth
 * busbw = algbw x a factor of the collective and the rank count n.
 *
 * S is nccl-tests' size of the operation, mapped onto collsim's --bytes
 * (MPI count semantics, coll.h) as docs/bandwidth.md tabulates:
 *   broadcast, reduce, allreduce   S = bytes (the whole vector)
 *   allgather, reduce-scatter,     S = bytes x n (bytes is the per-rank
 *   alltoall, gather, scatter        block: nccl-tests' count x typesize x n)
 *   barrier                        S = 0 (no data: no bandwidth)
 * and the factors are
 *   allreduce 2(n-1)/n; allgather, reduce-scatter, alltoall, gather,
 *   scatter (n-1)/n; broadcast, reduce 1; barrier 0.
 * (An allreduce with in-network reduction, (n-1)/(n+1) in NCCL's
 * accounting, has no machine here yet; docs/bandwidth.md.)
 *
 * Pure functions of their arguments: no state, no allocation.
 */
#ifndef CS_BANDWIDTH_H
#define CS_BANDWIDTH_H

#include <stdint.h>

#include "coll/coll.h"

/* The bandwidths of one run. */
typedef struct cs_bandwidth {
    double size_bytes; /* S, nccl-tests' size of the operation */
    double factor;     /* busbw / algbw */
    double seconds;    /* t, the time they are of */
    double algbw;      /* S / t in bytes per second; 0 when t <= 0 or S == 0 */
    double busbw;      /* algbw x factor, bytes per second */
} cs_bandwidth_t;

/* S for collective k on P ranks with collsim's --bytes `bytes`, in bytes
 * (a double: bytes x P may exceed what an int64 holds for no size collsim
 * refuses; exact below 2^53). */
double cs_bandwidth_size(cs_coll_kind_t k, int P, int64_t bytes);

/* busbw / algbw for collective k on P ranks (P >= 1; 0 for P < 1). */
double cs_bandwidth_factor(cs_coll_kind_t k, int P);

/* The factor's formula as text ("2(n-1)/n", "(n-1)/n", "1", "none"). */
const char *cs_bandwidth_formula(cs_coll_kind_t k);

/* 1 when collective k moves data that a bandwidth can be made of (every
 * collective but the barrier). */
int cs_bandwidth_defined(cs_coll_kind_t k);

/* Fills *out for collective k on P ranks, --bytes `bytes`, taking
 * `seconds`: S, the factor, algbw and busbw (both 0 when seconds <= 0,
 * not finite, or S == 0). */
void cs_bandwidth_of(cs_coll_kind_t k, int P, int64_t bytes, double seconds,
                     cs_bandwidth_t *out);

#endif
