/*
 * test_bandwidth.c - nccl-tests' algbw and busbw (src/coll/bandwidth.c)
 * against values worked out by hand from nccl-tests' doc/PERFORMANCE.md:
 * the factor of every collective at a few rank counts, S from collsim's
 * --bytes (whole vector or per-rank block), and algbw = S / t.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "coll/bandwidth.h"

TestSuite(bandwidth);

/* The factors, by hand: 2(n-1)/n, (n-1)/n, 1. */
Test(bandwidth, factors)
{
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLREDUCE, 8), 1.75);  /* 14/8 */
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLREDUCE, 4), 1.5);   /* 6/4 */
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLREDUCE, 2), 1.0);   /* 2/2 */
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLREDUCE, 1), 0.0);   /* no link used */
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLGATHER, 8), 0.875); /* 7/8 */
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_REDUCE_SCATTER, 4), 0.75);
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLTOALL, 16), 0.9375); /* 15/16 */
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_GATHER, 2), 0.5);
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_SCATTER, 5), 0.8);
    for (int P = 1; P <= 64; P *= 4) {
        cr_assert_eq(cs_bandwidth_factor(CS_COLL_BROADCAST, P), 1.0);
        cr_assert_eq(cs_bandwidth_factor(CS_COLL_REDUCE, P), 1.0);
        cr_assert_eq(cs_bandwidth_factor(CS_COLL_BARRIER, P), 0.0);
    }
    cr_assert_eq(cs_bandwidth_factor(CS_COLL_ALLREDUCE, 0), 0.0);
    cr_assert_str_eq(cs_bandwidth_formula(CS_COLL_ALLREDUCE), "2(n-1)/n");
    cr_assert_str_eq(cs_bandwidth_formula(CS_COLL_ALLTOALL), "(n-1)/n");
    cr_assert_str_eq(cs_bandwidth_formula(CS_COLL_BROADCAST), "1");
    cr_assert_str_eq(cs_bandwidth_formula(CS_COLL_BARRIER), "none");
}

/* S: the whole vector for broadcast, reduce, allreduce (nccl-tests: count x
 * typesize); the per-rank block times n for the others (count x typesize x
 * nranks, count being the per-rank count). */
Test(bandwidth, sizes)
{
    cr_assert_eq(cs_bandwidth_size(CS_COLL_ALLREDUCE, 8, 1048576), 1048576.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_BROADCAST, 16, 5), 5.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_REDUCE, 3, 4096), 4096.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_ALLGATHER, 8, 1048576), 8388608.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_REDUCE_SCATTER, 4, 1000), 4000.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_ALLTOALL, 3, 7), 21.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_GATHER, 10, 100), 1000.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_SCATTER, 2, 64), 128.0);
    cr_assert_eq(cs_bandwidth_size(CS_COLL_BARRIER, 8, 1), 0.0);
    /* beyond int64: 2^48 bytes per rank on 2^20 ranks */
    cr_assert_eq(cs_bandwidth_size(CS_COLL_ALLGATHER, 1 << 20, (int64_t)1 << 48), ldexp(1, 68));
}

/* algbw = S / t and busbw = algbw x factor: 1 GB in 0.5 s is 2 GB/s; on 4
 * ranks an allreduce's busbw is 2 x 1.5 = 3 GB/s. */
Test(bandwidth, of)
{
    cs_bandwidth_t bw;
    cs_bandwidth_of(CS_COLL_ALLREDUCE, 4, 1000000000, 0.5, &bw);
    cr_assert_eq(bw.size_bytes, 1e9);
    cr_assert_eq(bw.seconds, 0.5);
    cr_assert_eq(bw.algbw, 2e9);
    cr_assert_eq(bw.busbw, 3e9);
    cr_assert_eq(bw.factor, 1.5);
    /* an allgather of 1 MB per rank on 8 ranks in 1 ms: S = 8 MB, 8 GB/s,
     * busbw 7 GB/s */
    cs_bandwidth_of(CS_COLL_ALLGATHER, 8, 1000000, 1e-3, &bw);
    cr_assert_float_eq(bw.algbw, 8e9, 1e-3);
    cr_assert_float_eq(bw.busbw, 7e9, 1e-3);
    /* no time, no bytes, a barrier: no bandwidth (never inf or NaN) */
    cs_bandwidth_of(CS_COLL_BROADCAST, 4, 1024, 0, &bw);
    cr_assert_eq(bw.algbw, 0.0);
    cr_assert_eq(bw.busbw, 0.0);
    cs_bandwidth_of(CS_COLL_BARRIER, 4, 1, 1e-6, &bw);
    cr_assert_eq(bw.algbw, 0.0);
    cr_assert_eq(bw.busbw, 0.0);
    cs_bandwidth_of(CS_COLL_ALLREDUCE, 4, 1024, NAN, &bw);
    cr_assert_eq(bw.algbw, 0.0);
    cr_assert(!cs_bandwidth_defined(CS_COLL_BARRIER));
    cr_assert(cs_bandwidth_defined(CS_COLL_ALLTOALL));
}
