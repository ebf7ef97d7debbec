/*
 * sorted.h - lookup in a sorted array of int64_t.
 *
 * The checker's byte bounds (coll/check.c) and the GOAL reader's ranks that
 * have ops (io/goal.c) each searched a sorted array with their own copy of
 * the same binary search; this is the one copy, here in core because both
 * layers may include it.
 */
#ifndef CS_SORTED_H
#define CS_SORTED_H

#include <stdint.h>

/* Index i with v[i] == x in sorted v[0..n), or -(insertion point) - 1 when
 * x is absent (so a result < 0 means "not there"). */
static inline int32_t cs_sorted_find(const int64_t *v, int32_t n, int64_t x)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == x ? lo : -lo - 1;
}

#endif
