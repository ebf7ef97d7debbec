/*
 * shuffle.h - a seeded permutation that is the same on every platform
 * (Fisher-Yates driven by splitmix64, Steele, Lea and Flood 2014): random
 * rank placements (`replay --map random:SEED`) and the benchmark's
 * workloads.  No state outside the call.
 */
#ifndef CS_SHUFFLE_H
#define CS_SHUFFLE_H

#include <stdint.h>

/* perm[0..n) gets a shuffle of 0..n-1 for `seed`. */
void cs_shuffle(int n, uint64_t seed, int32_t *perm);

#endif
