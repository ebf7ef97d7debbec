/*
 * test_window_validate.c - --validate on windowed runs (issue 34): the
 * checker built from a first pass over the algorithm (cs_coll_check_new_gen)
 * and fed as the window takes its ops gives the verdict and the message of
 * the checker of the whole program (cs_coll_check_new), for every algorithm
 * of the suite at P in {1, 2, 3, 5, 8, 13} (powers of two and not), three
 * sizes and both roots, and for algorithms broken on purpose (a reduction
 * that drops a contribution, a misplaced block, a pipelined forward of the
 * wrong segment, unequal send and recv ranges, a barrier left early).  The
 * builder hands over at every wait it can (batch 1), so the window, and
 * what the checker gives back with it, is as small as the contract allows.
 * Also: the windowed checker's memory follows the window, not the program.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define AB "alphabeta:topo=complete,p=16"

typedef struct vout {
    int rc;
    cs_error_t err;
    cs_tick_t finish;
    int64_t held_peak; /* ops the executor held at once */
    int32_t nops;
} vout_t;

/* Builds (whole) or generates (windowed, batch) algorithm a, validates its
 * run on machine m. */
static vout_t validated(const cs_machine_t *m, const cs_coll_algo_t *a, const cs_coll_args_t *args,
                        cs_net_mode_t mode, int windowed, int32_t batch)
{
    vout_t v;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cs_coll_check_t *chk = NULL;
    memset(&v, 0, sizeof v);
    memset(&res, 0, sizeof res);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.mode = mode;
    if (windowed) {
        cs_progen_t *g;
        if ((v.rc = cs_coll_generate(a, args, batch, &g, &v.err)))
            return v;
        v.rc = cs_coll_check_new_gen(a, args, g, 12345, &chk, &v.err);
        if (!v.rc) {
            o.observer = cs_coll_check_observer(chk);
            v.rc = cs_exec_run_gen(&env, g, &o, &res, &v.err);
        }
        if (!v.rc)
            v.rc = cs_coll_check_verify(chk, &v.err);
        v.nops = cs_program_nops(g->prog);
        cs_coll_check_free(chk);
        cs_progen_free(g);
    } else {
        cs_program_t *p;
        if ((v.rc = cs_coll_build(a, args, &p, &v.err)))
            return v;
        v.rc = cs_coll_check_new(args, p, 12345, &chk, &v.err);
        if (!v.rc) {
            o.observer = cs_coll_check_observer(chk);
            v.rc = cs_exec_run(&env, p, &o, &res, &v.err);
        }
        if (!v.rc)
            v.rc = cs_coll_check_verify(chk, &v.err);
        v.nops = cs_program_nops(p);
        cs_coll_check_free(chk);
        cs_program_free(p);
    }
    v.finish = res.finish;
    v.held_peak = res.ops_held_peak;
    cs_exec_result_destroy(&res);
    return v;
}

/* Whole and windowed: the same status, message and finish.  Returns 1 when
 * equal, 2 when the window refuses an algorithm whose dependencies point
 * forward (it runs whole by default), 0 (logged) otherwise. */
static int compare(const cs_machine_t *m, const cs_coll_algo_t *a, const cs_coll_args_t *args,
                   cs_net_mode_t mode, const char *what)
{
    vout_t w = validated(m, a, args, mode, 0, 0), g = validated(m, a, args, mode, 1, 1);
    if (w.rc == CS_OK && g.rc == CS_ERR_USAGE && strstr(g.err.msg, "--whole"))
        return 2;
    if (w.rc != g.rc || strcmp(w.err.msg, g.err.msg) || w.finish != g.finish) {
        cr_log_error("%s/%s %s: whole %d \"%s\" finish %lld; windowed %d \"%s\" finish %lld",
                     cs_coll_name(a->kind), a->name, what, w.rc, w.err.msg, (long long)w.finish,
                     g.rc, g.err.msg, (long long)g.finish);
        return 0;
    }
    return 1;
}

#if defined(__SANITIZE_ADDRESS__)
#define WV_PS 1, 2, 3, 5, 8
#else
#define WV_PS 1, 2, 3, 5, 8, 13
#endif

Test(window_validate, every_algorithm_as_whole, .timeout = 600)
{
    static const int Ps[] = {WV_PS};
    int n, runs = 0, same = 0, refused = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    cs_machine_t *m;
    cs_error_t err;
    cs_machine_hints_t mh;
    cr_assert_eq(cs_machine_new(AB, &m, &err), CS_OK, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        const cs_coll_algo_t *a = all[i];
        for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
            int P = Ps[pi], nroots = cs_coll_rooted(a->kind) && P > 1 ? 2 : 1;
            int64_t sizes[3] = {1, 1000, 7 * (int64_t)P + 1};
            cs_machine_hints_init(&mh, m, P, NULL);
            for (int si = 0; si < 3; si++)
                for (int ri = 0; ri < nroots; ri++) {
                    int64_t bytes = a->kind == CS_COLL_BARRIER ? 0 : sizes[si];
                    cs_coll_args_t args = {a->kind, P, bytes, ri ? P - 1 : 0, m->net.unit_bytes,
                                           &mh.coll, NULL, 0};
                    char what[96];
                    int rc;
                    snprintf(what, sizeof what, "P=%d n=%lld root=%d", P, (long long)bytes,
                             args.root);
                    rc = compare(m, a, &args, CS_NET_PACKET, what);
                    runs++;
                    same += rc == 1;
                    if (rc == 2) {
                        refused++;
                        cr_expect_str_eq(a->name, "cns-two-way", "%s/%s refused windowed",
                                         cs_coll_name(a->kind), a->name);
                    }
                }
            cs_machine_hints_destroy(&mh);
        }
    }
    printf("window_validate: %d runs, %d the same whole and windowed, %d refused windowed "
           "(dependencies on later ops)\n", runs, same, refused);
    cr_expect_eq(same + refused, runs);
    cr_expect_gt(same, 1000);
    cs_machine_free(m);
}

/* Fluid mode and a permuted ring hint: the verdict does not depend on
 * timing, and a permuted ring moves blocks elsewhere. */
Test(window_validate, fluid_with_a_permuted_ring)
{
    int n, runs = 0, same = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    cs_machine_t *m;
    cs_error_t err;
    int32_t ring[7];
    cs_coll_hints_t h;
    cr_assert_eq(cs_machine_new(AB, &m, &err), CS_OK, "%s", err.msg);
    memset(&h, 0, sizeof h);
    for (int j = 0; j < 7; j++)
        ring[j] = (int32_t)(j * 3 % 7);
    h.ring = ring;
    for (int i = 0; i < n; i++) {
        const cs_coll_algo_t *a = all[i];
        cs_coll_args_t args = {a->kind, 7, a->kind == CS_COLL_BARRIER ? 0 : 1000,
                               cs_coll_rooted(a->kind) ? 3 : 0, m->net.unit_bytes, &h, NULL, 0};
        int rc = compare(m, a, &args, CS_NET_FLUID, "P=7 fluid, ring hint");
        runs++;
        same += rc != 0;
    }
    cr_expect_eq(same, runs);
    cs_machine_free(m);
}

/* ---- broken on purpose ------------------------------------------------------ */

/* A ring allreduce (reduce-scatter, allgather) whose last reduce-scatter
 * step copies instead of adding: each block misses a contribution. */
static int broken_ring(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    (void)err;
    for (int s = 0; s < 2 * (P - 1); s++) {
        for (int i = 0; i < P; i++) {
            int to = (i + 1) % P, from = (i + P - 1) % P;
            int sb = ((i - s) % P + P) % P, rb = ((from - s) % P + P) % P;
            int64_t so, sl, ro, rl;
            cs_coll_split(a->bytes, P, sb, &so, &sl);
            cs_coll_split(a->bytes, P, rb, &ro, &rl);
            cs_coll_send(b, i, to, so, sl, s);
            if (s < P - 2)
                cs_coll_recv_reduce(b, i, from, ro, rl, s);
            else
                cs_coll_recv(b, i, from, ro, rl, s);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* An allgather that puts rank 1's block where rank 2's belongs. */
static int broken_allgather(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    (void)err;
    for (int r = 0; r < a->P; r++)
        for (int q = 0; q < a->P; q++)
            if (q != r) {
                cs_coll_send(b, r, q, r * m, m, 0);
                cs_coll_recv(b, q, r, (r == 1 && a->P > 2 ? 2 : r) * m, m, 0);
            }
    return CS_OK;
}

/* A pipelined chain broadcast in segments whose forwards stream from the
 * recv of the segment, but send the next segment's bytes: the streaming
 * snapshot is taken once the recv delivered, and holds the wrong data. */
static int broken_stream_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int segs = 4;
    (void)err;
    for (int s = 0; s < segs; s++) {
        int64_t off, len, woff, wlen;
        int32_t prev_recv = -1;
        cs_coll_split(a->bytes, segs, s, &off, &len);
        cs_coll_split(a->bytes, segs, (s + 1) % segs, &woff, &wlen);
        for (int i = 0; i + 1 < a->P; i++) {
            int32_t sd;
            if (prev_recv >= 0 && i == 2 && wlen == len) { /* forwards the wrong segment */
                sd = cs_coll_send(b, i, i + 1, woff, wlen, s);
            } else {
                sd = cs_coll_send(b, i, i + 1, off, len, s);
            }
            if (prev_recv >= 0)
                cs_coll_dep(b, sd, prev_recv, CS_DEP_STREAM);
            prev_recv = cs_coll_recv(b, i + 1, i, off, len, s);
        }
    }
    return CS_OK;
}

/* The same chain, right: it must pass both ways (the streaming snapshot
 * waits for the recv it streams from). */
static int stream_chain(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int segs = 4;
    (void)err;
    for (int s = 0; s < segs; s++) {
        int64_t off, len;
        int32_t prev_recv = -1;
        cs_coll_split(a->bytes, segs, s, &off, &len);
        for (int i = 0; i + 1 < a->P; i++) {
            int32_t sd = cs_coll_send(b, i, i + 1, off, len, s);
            if (prev_recv >= 0)
                cs_coll_dep(b, sd, prev_recv, CS_DEP_STREAM);
            prev_recv = cs_coll_recv(b, i + 1, i, off, len, s);
        }
    }
    return CS_OK;
}

/* A broadcast whose recv on rank 1 names a range a byte shorter than the
 * send's (the message fits: only the data descriptors differ). */
static int broken_lengths(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    for (int r = 1; r < a->P; r++) {
        cs_coll_send(b, 0, r, 0, a->bytes, 0);
        int32_t rv = cs_coll_recv(b, r, 0, 0, a->bytes, 0);
        if (r == 1)
            cs_coll_set_data(b, rv, 0, a->bytes - 1, CS_DATA_COPY);
    }
    return CS_OK;
}

/* A barrier whose last rank leaves without hearing from anyone. */
static int broken_barrier(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    for (int r = 1; r < a->P - 1; r++) {
        cs_coll_send(b, r, 0, 0, 0, 0);
        cs_coll_recv(b, 0, r, 0, 0, 0);
    }
    cs_coll_wait(b, 0);
    for (int r = 1; r < a->P; r++) {
        cs_coll_send(b, 0, r, 0, 0, 1);
        cs_coll_recv(b, r, 0, 0, 0, 1);
    }
    return CS_OK;
}

Test(window_validate, broken_algorithms_fail_with_the_whole_checkers_message)
{
    static const cs_coll_algo_t algos[] = {
        {CS_COLL_ALLREDUCE, "broken-ring", "test", "test", "", NULL, broken_ring, NULL},
        {CS_COLL_ALLGATHER, "broken-flat", "test", "test", "", NULL, broken_allgather, NULL},
        {CS_COLL_BROADCAST, "broken-stream", "test", "test", "", NULL, broken_stream_chain, NULL},
        {CS_COLL_BROADCAST, "broken-lengths", "test", "test", "", NULL, broken_lengths, NULL},
        {CS_COLL_BARRIER, "broken-barrier", "test", "test", "", NULL, broken_barrier, NULL},
    };
    static const char *const want[] = {"misses", "holds no data where rank 1's",
                                       "rank 3 bytes [0, 3000): holds no data where rank 0's",
                                       "must have equal length", "barrier: rank"};
    static const int Ps[] = {5, 8, 13};
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new(AB, &m, &err), CS_OK, "%s", err.msg);
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++)
        for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
            int P = Ps[pi];
            cs_coll_args_t args = {algos[i].kind, P, algos[i].kind == CS_COLL_BARRIER ? 0 : 4000,
                                   0, m->net.unit_bytes, NULL, NULL, 0};
            vout_t w = validated(m, &algos[i], &args, CS_NET_PACKET, 0, 0);
            for (int bi = 0; bi < 2; bi++) {
                int32_t batch = bi ? 1 << 16 : 1;
                vout_t g = validated(m, &algos[i], &args, CS_NET_PACKET, 1, batch);
                cr_expect_eq(w.rc, CS_ERR_VALIDATE, "%s P=%d whole: %d %s", algos[i].name, P,
                             w.rc, w.err.msg);
                cr_expect(strstr(w.err.msg, want[i]) != NULL, "%s P=%d: \"%s\" lacks \"%s\"",
                          algos[i].name, P, w.err.msg, want[i]);
                cr_expect_eq(g.rc, w.rc, "%s P=%d batch %d: %d %s", algos[i].name, P, batch,
                             g.rc, g.err.msg);
                cr_expect_str_eq(g.err.msg, w.err.msg, "%s P=%d batch %d", algos[i].name, P,
                                 batch);
            }
        }
    /* the right chain passes both ways */
    {
        const cs_coll_algo_t ok = {CS_COLL_BROADCAST, "stream", "test", "test", "", NULL,
                                   stream_chain, NULL};
        cs_coll_args_t args = {CS_COLL_BROADCAST, 13, 4000, 0, m->net.unit_bytes, NULL, NULL, 0};
        vout_t w = validated(m, &ok, &args, CS_NET_PACKET, 0, 0);
        vout_t g = validated(m, &ok, &args, CS_NET_PACKET, 1, 1);
        cr_expect_eq(w.rc, CS_OK, "%s", w.err.msg);
        cr_expect_eq(g.rc, CS_OK, "%s", g.err.msg);
        cr_expect_eq(g.finish, w.finish);
    }
    cs_machine_free(m);
}

/* The window validates a ring allreduce holding a small part of its ops
 * at once: the checker's records go with the window's ops. */
Test(window_validate, memory_follows_the_window)
{
    const cs_coll_algo_t *a;
    cs_machine_t *m;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=64", &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &a, &err), CS_OK);
    cs_coll_args_t args = {CS_COLL_ALLREDUCE, 64, 64 * 100, 0, m->net.unit_bytes, NULL, NULL, 0};
    vout_t g = validated(m, a, &args, CS_NET_FLUID, 1, 1);
    cr_assert_eq(g.rc, CS_OK, "%s", g.err.msg);
    /* 5 ops per rank and step pair, P - 1 pairs: 20,160 ops; a window of a few
     * steps */
    cr_expect_eq(g.nops, 5 * 64 * 63 * 2 / 2);
    cr_expect_lt(g.held_peak, g.nops / 8, "held %lld of %d ops", (long long)g.held_peak, g.nops);
    cs_machine_free(m);
}

/* The checker's state limit (2 GiB) is checked before the first pass where
 * the collective alone passes it (a block collective has P pieces at
 * least): P = 16,384 is refused at once, nothing built. */
Test(window_validate, state_limit_before_the_first_pass)
{
    const cs_coll_algo_t *a;
    cs_error_t err;
    cs_progen_t *g;
    cs_coll_check_t *chk = NULL;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLGATHER, "ring", &a, &err), CS_OK);
    cs_coll_args_t args = {CS_COLL_ALLGATHER, 16384, 1024, 0, 4096, NULL, NULL, 0};
    cr_assert_eq(cs_coll_generate(a, &args, 0, &g, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(cs_coll_check_new_gen(a, &args, g, 1, &chk, &err), CS_ERR_NOMEM);
    cr_expect_null(chk);
    cr_expect(strstr(err.msg, "16384 ranks x 16384 pieces"), "%s", err.msg);
    cr_expect_eq(cs_program_nops(g->prog), 0);
    cs_progen_free(g);
}
