/*
 * shuffle.c - seeded permutations (shuffle.h).  Moved down from the command
 * line (issue 20) so that the library places random:SEED ranks as it does.
 */
#include "core/shuffle.h"

/* splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and the same sequence
 * on every platform. */
static uint64_t shuffle_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void cs_shuffle(int n, uint64_t seed, int32_t *perm)
{
    uint64_t state = seed;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(shuffle_splitmix64(&state) % (uint64_t)(i + 1));
        int32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
}
