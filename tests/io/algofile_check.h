/*
 * algofile_check.h - what the tests of the algorithm file readers
 * (test_msccl.c, test_mscclpp.c) share (header only): their data files,
 * reading one through the format table as --algo does, the ring oracle
 * (the format's ring is the suite's ring and the alpha-beta formula) and
 * validation on several machines.  The formats differ; these checks do
 * not, so a change to one (a machine added, a tighter formula) reaches
 * both.
 */
#ifndef CS_TEST_ALGOFILE_CHECK_H
#define CS_TEST_ALGOFILE_CHECK_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "../coll/harness.h"
#include "io/algofile.h"

/* tests/data/DIR/NAME under the source root (a static buffer: the next
 * call overwrites it). */
static inline const char *algofile_data_path(const char *dir, const char *name)
{
    static char buf[4096];
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    snprintf(buf, sizeof buf, "%s/tests/data/%s/%s", root ? root : ".", dir, name);
    return buf;
}

/* The file at path read in `format` as an algorithm of `kind` (named
 * "FORMAT:test"); the test fails when it is refused. */
static inline cs_coll_algo_t *algofile_load(const char *format, const char *path,
                                            cs_coll_kind_t kind)
{
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cs_source_t src = {path, NULL, 0};
    char name[64];
    snprintf(name, sizeof name, "%s:test", format);
    int rc = cs_algofile_read(format, &src, kind, name, &a, &err);
    cr_assert_eq(rc, CS_OK, "%s: %s", path, err.msg);
    return a;
}

/* The 4-rank allreduce ring at path, in both network modes, takes the
 * suite's allreduce/ring time and 2(P-1)(alpha + beta n/P). */
static inline void algofile_ring_is_suite_ring(const char *format, const char *path)
{
    const char *spec = "alphabeta:topo=ring,p=4,alpha=1us,beta=1ns";
    int64_t n = 1 << 20;
    cs_coll_algo_t *a = algofile_load(format, path, CS_COLL_ALLREDUCE);
    for (int mode = 0; mode < 2; mode++) {
        cs_net_mode_t nm = mode ? CS_NET_FLUID : CS_NET_PACKET;
        h_run_t r = h_run_algo(spec, a, 4, n, 0, NULL, nm, 1, NULL);
        cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
        cs_tick_t suite = h_time(spec, "allreduce", "ring", 4, n, 0, NULL, nm);
        /* 2(P-1) (alpha + beta n/P), ticks of 1 ps */
        cs_tick_t formula = 6 * ((cs_tick_t)1000000 + (n / 4) * 1000);
        cr_expect_eq(r.finish, suite, "mode %d: %s %lld, suite %lld", mode, format,
                     (long long)r.finish, (long long)suite);
        cr_expect_eq(r.finish, formula, "mode %d: %s %lld, formula %lld", mode, format,
                     (long long)r.finish, (long long)formula);
        h_done(&r);
    }
    cs_algofile_free(a);
}

/* The algorithm at path (`file` in messages) runs for P ranks and `bytes`
 * with --validate on each of the n machines. */
static inline void algofile_validates_on(const char *format, const char *path, const char *file,
                                         cs_coll_kind_t kind, int P, int64_t bytes,
                                         const char *const *machines, size_t n)
{
    cs_coll_algo_t *a = algofile_load(format, path, kind);
    for (size_t i = 0; i < n; i++) {
        h_run_t r = h_run_algo(machines[i], a, P, bytes, 0, NULL, CS_NET_PACKET, 1, NULL);
        cr_expect_eq(r.rc, CS_OK, "%s on %s: %s", file, machines[i], r.err.msg);
        cr_expect_gt(r.finish, 0);
        h_done(&r);
    }
    cs_algofile_free(a);
}

#endif
