/*
 * test_check.c - the --validate checker (src/coll/check.c) against
 * hand-built algorithms defined only here: correct ones must pass, and
 * deliberately wrong ones (a contribution dropped, one duplicated, a block
 * misplaced, a barrier left early) must fail with CS_ERR_VALIDATE and a
 * message naming the rank, the byte range and what is wrong.
  *
 * Also the rooted and symmetric algorithms broken on purpose (a binomial
 * reduce that forgets a child, a gather with a misplaced block, a ring
 * reduce-scatter that copies instead of adding, Bruck's allgather without
 * its final copy, a dissemination barrier one round short), which the
 * validation sweeps of the collective tests rely on.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define AB "alphabeta:topo=complete,p=16"

/* ---- hand-built algorithms ------------------------------------------------ */

/* Flat broadcast: the root sends the whole vector to everyone. */
static int flat_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    for (int r = 0; r < a->P; r++) {
        if (r == a->root)
            continue;
        cs_coll_send(b, a->root, r, 0, a->bytes, 0);
        cs_coll_recv(b, r, a->root, 0, a->bytes, 0);
    }
    return CS_OK;
}

/* Chain broadcast in 3 segments: rank i forwards a segment to i+1 once it
 * has received it from i-1 (explicit CS_DEP_AFTER on that recv), so the
 * segments overlap along the chain. */
static int chain_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int segs = 3;
    (void)err;
    for (int s = 0; s < segs; s++) {
        int64_t off, len;
        int32_t prev_recv = -1;
        cs_coll_split(a->bytes, segs, s, &off, &len);
        for (int i = 0; i + 1 < a->P; i++) {
            int from = (a->root + i) % a->P, to = (a->root + i + 1) % a->P;
            int32_t sd = cs_coll_send(b, from, to, off, len, s);
            if (prev_recv >= 0)
                cs_coll_dep(b, sd, prev_recv, CS_DEP_AFTER);
            prev_recv = cs_coll_recv(b, to, from, off, len, s);
        }
    }
    return CS_OK;
}

/* The same chain, but each forwarding send streams from the recv of the
 * same segment (explicit CS_DEP_STREAM), one segment. */
static int stream_bcast(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int32_t prev_recv = -1;
    (void)err;
    for (int i = 0; i + 1 < a->P; i++) {
        int from = (a->root + i) % a->P, to = (a->root + i + 1) % a->P;
        int32_t sd = cs_coll_send(b, from, to, 0, a->bytes, 0);
        if (prev_recv >= 0)
            cs_coll_dep(b, sd, prev_recv, CS_DEP_STREAM);
        prev_recv = cs_coll_recv(b, to, from, 0, a->bytes, 0);
    }
    return CS_OK;
}

/* Flat allreduce: everyone sends to rank 0, which reduces, then sends the
 * result back.  `mode`: 0 correct, 1 drops rank P-1's contribution, 2
 * reduces rank 1's twice. */
static int flat_allreduce_mode(cs_coll_builder_t *b, int mode)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    for (int r = 1; r < P; r++) {
        if (mode == 1 && r == P - 1)
            continue;
        cs_coll_send(b, r, 0, 0, a->bytes, 0);
        cs_coll_recv_reduce(b, 0, r, 0, a->bytes, 0);
        if (mode == 2 && r == 1) {
            cs_coll_send(b, r, 0, 0, a->bytes, 1);
            cs_coll_recv_reduce(b, 0, r, 0, a->bytes, 1);
        }
    }
    cs_coll_wait_all(b);
    for (int r = 1; r < P; r++) {
        cs_coll_send(b, 0, r, 0, a->bytes, 2);
        cs_coll_recv(b, r, 0, 0, a->bytes, 2);
    }
    return CS_OK;
}
static int allreduce_ok(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return flat_allreduce_mode(b, 0); }
static int allreduce_drop(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return flat_allreduce_mode(b, 1); }
static int allreduce_dup(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return flat_allreduce_mode(b, 2); }

/* Flat allgather: every rank sends its block to every other.  `swap`: rank
 * 0 stores the blocks of ranks 1 and 2 in each other's place. */
static int flat_allgather_mode(cs_coll_builder_t *b, int swap)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int s = 0; s < a->P; s++)
        for (int d = 0; d < a->P; d++) {
            int place = s;
            if (s == d)
                continue;
            if (swap && d == 0 && (s == 1 || s == 2))
                place = 3 - s;
            cs_coll_send(b, s, d, s * m, m, 0);
            cs_coll_recv(b, d, s, place * m, m, 0);
        }
    return CS_OK;
}
static int allgather_ok(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return flat_allgather_mode(b, 0); }
static int allgather_swap(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return flat_allgather_mode(b, 1); }

/* Barrier: everyone notifies rank 0, which then releases everyone; with
 * `early`, rank P-1 is never released (it leaves having heard only itself). */
static int barrier_mode(cs_coll_builder_t *b, int early)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int r = 1; r < a->P; r++) {
        cs_coll_send(b, r, 0, 0, 0, 0);
        cs_coll_recv(b, 0, r, 0, 0, 0);
    }
    cs_coll_wait_all(b);
    for (int r = 1; r < a->P; r++) {
        if (early && r == a->P - 1)
            continue;
        cs_coll_send(b, 0, r, 0, 0, 1);
        cs_coll_recv(b, r, 0, 0, 0, 1);
    }
    return CS_OK;
}
static int barrier_ok(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return barrier_mode(b, 0); }
static int barrier_early(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return barrier_mode(b, 1); }

/* Broadcast over P = 3 that moves data through scratch space at offsets
 * whose piece boundaries do not line up with the source's (the checker
 * must split pieces on the fly).  With `swap`, rank 1 stores the two halves
 * of the vector in each other's place. */
static int shifty_bcast_mode(cs_coll_builder_t *b, int swap)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t n = a->bytes, h = n / 2;
    cs_coll_send(b, 0, 1, 0, h, 0);
    cs_coll_recv(b, 1, 0, swap ? n - h : 0, h, 0);
    cs_coll_send(b, 0, 1, h, n - h, 1);
    cs_coll_recv(b, 1, 0, swap ? 0 : h, n - h, 1);
    cs_coll_wait_all(b);
    /* rank 1 -> scratch of rank 2 (no boundary at 1000 + h there) */
    cs_coll_send(b, 1, 2, 0, n, 2);
    cs_coll_recv(b, 2, 1, 1000, n, 2);
    cs_coll_wait_all(b);
    /* back to rank 1's scratch, then to rank 2's vector */
    cs_coll_send(b, 2, 1, 1000, n, 3);
    cs_coll_recv(b, 1, 2, 3000, n, 3);
    cs_coll_wait_all(b);
    cs_coll_send(b, 1, 2, 3000, n, 4);
    cs_coll_recv(b, 2, 1, 0, n, 4);
    return CS_OK;
}
static int shifty_ok(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return shifty_bcast_mode(b, 0); }
static int shifty_swap(cs_coll_builder_t *b, cs_error_t *e) { (void)e; return shifty_bcast_mode(b, 1); }

/* A recv whose range is shorter than the send's. */
static int bad_lengths(cs_coll_builder_t *b, cs_error_t *e)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)e;
    cs_coll_send(b, 0, 1, 0, a->bytes, 0);
    cs_coll_recv(b, 1, 0, 0, a->bytes + 8, 0);
    return CS_OK;
}

/* Random allgather: every block is cut into 1..3 random segments and each
 * segment spreads from its owner along a random tree (a rank forwards a
 * segment only after it has received it).  `rnd_mutation` breaks exactly
 * one transfer: 1 drops it (its subtree receives nothing), 2 sends it a
 * second time and reduces it into the copy (a duplicate), 3 writes it one
 * block further (misplaced).  (Reducing into a block that holds nothing yet
 * would not be a mutation: the empty value is the identity of the sum.) */
static uint64_t rnd_state;
static int rnd_mutation;
static uint64_t rnd_next(void)
{
    uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int random_allgather(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P, edges = 0, victim;
    int64_t m = a->bytes;
    int32_t order[64], got[64];
    (void)err;
    cr_assert_leq(P, 64);
    /* count the edges first so that the victim is uniform among them */
    uint64_t saved = rnd_state;
    for (int s = 0; s < P; s++) {
        int segs = 1 + (int)(rnd_next() % 3);
        for (int g = 0; g < segs; g++) {
            int64_t off, len;
            cs_coll_split(m, segs, g, &off, &len);
            if (len > 0) /* empty segments are not sent (nothing to break) */
                edges += P - 1;
            for (int i = 1; i < P; i++)
                rnd_next(), rnd_next();
        }
    }
    rnd_state = saved;
    victim = edges ? (int)(rnd_next() % (uint64_t)edges) : -1;
    rnd_state = saved;
    edges = 0;
    for (int s = 0; s < P; s++) {
        int segs = 1 + (int)(rnd_next() % 3);
        for (int g = 0; g < segs; g++) {
            int64_t off, len;
            cs_coll_split(m, segs, g, &off, &len);
            off += (int64_t)s * m;
            for (int i = 0; i < P; i++)
                order[i] = (s + i) % P;
            for (int i = 1; i < P; i++) { /* a random permutation of the others */
                int j = 1 + (int)(rnd_next() % (uint64_t)(P - 1));
                int32_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            got[0] = -1;
            for (int i = 1; i < P; i++) {
                int pi = (int)(rnd_next() % (uint64_t)i), from = order[pi], to = order[i];
                if (len == 0)
                    continue;
                int tag = 1000 * s + 10 * g;
                int32_t sd = cs_coll_send(b, from, to, off, len, tag);
                if (got[pi] >= 0)
                    cs_coll_dep(b, sd, got[pi], CS_DEP_AFTER);
                int mutate = edges++ == victim ? rnd_mutation : 0;
                if (mutate == 1) { /* dropped: the message goes to scratch */
                    got[i] = cs_coll_recv(b, to, from, (int64_t)P * m + 7, len, tag);
                } else if (mutate == 2) {
                    cs_program_t *prog = cs_coll_program(b);
                    int32_t first = cs_coll_recv(b, to, from, off, len, tag);
                    int32_t again = cs_coll_send(b, from, to, off, len, tag + 1);
                    if (got[pi] >= 0)
                        cs_coll_dep(b, again, got[pi], CS_DEP_AFTER);
                    /* the duplicate is reduced after the copy (else the copy
                     * would hide it): a recv built by hand to name its order */
                    got[i] = cs_program_recv(prog, to, from, len, tag + 1);
                    cs_program_set_data(prog, got[i], off, len, CS_DATA_REDUCE);
                    cs_program_dep(prog, got[i], first, CS_DEP_AFTER);
                } else if (mutate == 3) {
                    got[i] = cs_coll_recv(b, to, from, (off + m) % ((int64_t)P * m), len, tag);
                } else {
                    got[i] = cs_coll_recv(b, to, from, off, len, tag);
                }
            }
        }
    }
    return CS_OK;
}

#define ALGO(var, k, nm, fn) \
    static const cs_coll_algo_t var = {k, nm, "test only", "test", "", NULL, fn, NULL}
ALGO(a_flat_bcast, CS_COLL_BROADCAST, "t-flat", flat_bcast);
ALGO(a_chain_bcast, CS_COLL_BROADCAST, "t-chain", chain_bcast);
ALGO(a_stream_bcast, CS_COLL_BROADCAST, "t-stream", stream_bcast);
ALGO(a_allreduce_ok, CS_COLL_ALLREDUCE, "t-flat", allreduce_ok);
ALGO(a_allreduce_drop, CS_COLL_ALLREDUCE, "t-drop", allreduce_drop);
ALGO(a_allreduce_dup, CS_COLL_ALLREDUCE, "t-dup", allreduce_dup);
ALGO(a_allgather_ok, CS_COLL_ALLGATHER, "t-flat", allgather_ok);
ALGO(a_allgather_swap, CS_COLL_ALLGATHER, "t-swap", allgather_swap);
ALGO(a_barrier_ok, CS_COLL_BARRIER, "t-star", barrier_ok);
ALGO(a_barrier_early, CS_COLL_BARRIER, "t-early", barrier_early);
ALGO(a_shifty_ok, CS_COLL_BROADCAST, "t-shifty", shifty_ok);
ALGO(a_shifty_swap, CS_COLL_BROADCAST, "t-shifty-swap", shifty_swap);
ALGO(a_bad_lengths, CS_COLL_BROADCAST, "t-lengths", bad_lengths);
ALGO(a_random_allgather, CS_COLL_ALLGATHER, "t-random", random_allgather);

static h_run_t run_mode(const cs_coll_algo_t *a, int P, int64_t bytes, int root,
                        cs_net_mode_t mode)
{
    return h_run_algo(AB, a, P, bytes, root, NULL, mode, 1, NULL);
}

static h_run_t run(const cs_coll_algo_t *a, int P, int64_t bytes, int root)
{
    return run_mode(a, P, bytes, root, CS_NET_PACKET);
}

/* Correct programs pass in both network modes (the verdict depends only on
 * which messages carry what, not on timing). */
static void expect_ok(const cs_coll_algo_t *a, int P, int64_t bytes, int root)
{
    for (int mode = 0; mode < 2; mode++) {
        cs_net_mode_t md = mode ? CS_NET_FLUID : CS_NET_PACKET;
        h_run_t r = run_mode(a, P, bytes, root, md);
        cr_expect_eq(r.rc, CS_OK, "%s/%s P=%d n=%lld root=%d %s: %s", cs_coll_name(a->kind),
                     a->name, P, (long long)bytes, root, cs_net_mode_name(md), r.err.msg);
        h_done(&r);
    }
}

/* Runs a wrong algorithm and checks that validation fails with a message
 * containing every fragment in `want` (NULL-terminated). */
static void expect_caught(const cs_coll_algo_t *a, int P, int64_t bytes, int root,
                          const char *const *want)
{
    h_run_t r = run(a, P, bytes, root);
    cr_expect_eq(r.rc, CS_ERR_VALIDATE, "%s/%s P=%d n=%lld: expected a validation error, got %d: %s",
                 cs_coll_name(a->kind), a->name, P, (long long)bytes, r.rc, r.err.msg);
    for (int i = 0; want[i]; i++)
        cr_expect(strstr(r.err.msg, want[i]) != NULL, "message \"%s\" lacks \"%s\"", r.err.msg,
                  want[i]);
    h_done(&r);
}

/* ---- correct programs pass -------------------------------------------------- */

Test(check, correct_broadcasts_pass)
{
    static const int Ps[] = {1, 2, 3, 5, 8};
    static const int64_t ns[] = {0, 1, 7, 1000};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++) {
            expect_ok(&a_flat_bcast, Ps[i], ns[j], 0);
            expect_ok(&a_flat_bcast, Ps[i], ns[j], Ps[i] - 1);
            expect_ok(&a_chain_bcast, Ps[i], ns[j], Ps[i] / 2);
            expect_ok(&a_stream_bcast, Ps[i], ns[j], 0);
        }
}

Test(check, correct_allreduce_passes)
{
    static const int Ps[] = {1, 2, 3, 7, 16};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        expect_ok(&a_allreduce_ok, Ps[i], 1, 0);
        expect_ok(&a_allreduce_ok, Ps[i], 1000, 0);
    }
}

Test(check, correct_allgather_and_barrier_pass)
{
    expect_ok(&a_allgather_ok, 5, 1, 0);
    expect_ok(&a_allgather_ok, 5, 333, 0);
    expect_ok(&a_barrier_ok, 1, 0, 0);
    expect_ok(&a_barrier_ok, 7, 0, 0);
    expect_ok(&a_barrier_ok, 7, 1, 0);
}

Test(check, unaligned_moves_split_pieces)
{
    expect_ok(&a_shifty_ok, 3, 10, 0);
    expect_ok(&a_shifty_ok, 3, 11, 0);
    const char *const want[] = {"rank 1 bytes [0, 5)", "rank 0's bytes [5, 10)",
                                "where rank 0's bytes [0, 5) belong", NULL};
    expect_caught(&a_shifty_swap, 3, 10, 0, want);
}

/* ---- wrong programs are caught --------------------------------------------- */

Test(check, dropped_contribution_is_caught)
{
    const char *const want[] = {"allreduce: rank 0 bytes [0, 1000)",
                                "misses a contribution (count 7 of 8)", "rank 7's", NULL};
    expect_caught(&a_allreduce_drop, 8, 1000, 0, want);
    const char *const want1[] = {"count 2 of 3", NULL};
    expect_caught(&a_allreduce_drop, 3, 1, 0, want1);
}

Test(check, duplicated_contribution_is_caught)
{
    const char *const want[] = {"allreduce: rank 0 bytes [0, 1000)", "duplicate (count 9 of 8)",
                                "rank 1's contribution twice", NULL};
    expect_caught(&a_allreduce_dup, 8, 1000, 0, want);
    const char *const want1[] = {"duplicate (count 3 of 2)", NULL};
    expect_caught(&a_allreduce_dup, 2, 1, 0, want1);
}

Test(check, misplaced_block_is_caught)
{
    /* m = 100: block 1 is [100, 200), block 2 is [200, 300) */
    const char *const want[] = {"allgather: rank 0 bytes [100, 200)",
                                "holds rank 2's bytes [200, 300) (its block 2)",
                                "where rank 1's bytes [100, 200) (its block 1) belong", NULL};
    expect_caught(&a_allgather_swap, 4, 100, 0, want);
}

Test(check, early_barrier_exit_is_caught)
{
    const char *const want[] = {"barrier: rank 6 leaves without having heard", "from rank 0",
                                "(6 ranks unheard)", NULL};
    expect_caught(&a_barrier_early, 7, 0, 0, want);
    const char *const want2[] = {"rank 1 leaves", "from rank 0 (1 rank unheard)", NULL};
    expect_caught(&a_barrier_early, 2, 0, 0, want2);
}

Test(check, unequal_ranges_are_reported)
{
    const char *const want[] = {"rank 1", "must have equal length", NULL};
    expect_caught(&a_bad_lengths, 2, 16, 0, want);
}

/* A property test: random correct allgathers pass; the same with one recv
 * dropped, turned into a reduction, or written one block off all fail. */
Test(check, random_allgathers_and_their_mutants)
{
    int caught[4] = {0}, runs = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        int P = 2 + (int)(seed % 8);
        int64_t m = 1 + (int64_t)((seed * 7919) % 40);
        for (int mut = 0; mut < 4; mut++) {
            rnd_state = seed;
            rnd_mutation = mut;
            h_run_t r = run(&a_random_allgather, P, m, 0);
            runs++;
            if (mut == 0) {
                cr_expect_eq(r.rc, CS_OK, "seed %llu P=%d m=%lld: %s", (unsigned long long)seed,
                             P, (long long)m, r.err.msg);
            } else {
                cr_expect_eq(r.rc, CS_ERR_VALIDATE, "seed %llu P=%d m=%lld mutation %d: rc %d %s",
                             (unsigned long long)seed, P, (long long)m, mut, r.rc, r.err.msg);
                caught[mut] += r.rc == CS_ERR_VALIDATE;
            }
            h_done(&r);
        }
    }
    cr_log_info("random allgathers: %d runs; caught %d drops, %d duplicates, %d misplacements",
                runs, caught[1], caught[2], caught[3]);
}

/* ---- limits ------------------------------------------------------------------ */

static cs_program_t *empty_program(int P)
{
    cs_program_t *p = cs_program_new(P);
    cs_error_t err;
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    return p;
}

Test(check, barrier_rank_limit)
{
    cs_program_t *p = empty_program(40000);
    cs_coll_args_t a = {CS_COLL_BARRIER, 40000, 0, 0, 0, NULL, NULL, 0};
    cs_coll_check_t *c = NULL;
    cs_error_t err;
    cr_expect_eq(cs_coll_check_new(&a, p, 1, &c, &err), CS_ERR_NOMEM);
    cr_expect(strstr(err.msg, "40000 ranks exceed the limit of 32768") != NULL, "%s", err.msg);
    cr_expect_null(c);
    cs_program_free(p);
}

Test(check, state_memory_limit)
{
    /* 40000 ranks x ~10000 pieces x 12 bytes is far above 2 GiB */
    int P = 40000;
    cs_program_t *p = cs_program_new(P);
    cs_coll_args_t a = {CS_COLL_ALLREDUCE, P, 100000, 0, 0, NULL, NULL, 0};
    cs_coll_check_t *c = NULL;
    cs_error_t err;
    for (int i = 0; i < 5000; i++) {
        int32_t op = cs_program_send(p, 0, 1, 3, 0);
        cs_program_set_data(p, op, 20 * i, 3, CS_DATA_COPY);
    }
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(cs_coll_check_new(&a, p, 1, &c, &err), CS_ERR_NOMEM);
    cr_expect(strstr(err.msg, "validation state would take") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "limit is 2048 MiB") != NULL, "%s", err.msg);
    cr_expect_null(c);
    cs_program_free(p);
}

/* ---- the checker's verdict does not depend on the seed ------------------------ */

Test(check, seeds_agree)
{
    for (uint64_t seed = 0; seed < 5; seed++) {
        h_run_t r;
        memset(&r, 0, sizeof r);
        cs_coll_hints_t h;
        memset(&h, 0, sizeof h);
        cs_machine_t *m = NULL;
        cs_error_t err;
        cr_assert_eq(cs_machine_new(AB, &m, &err), CS_OK, "%s", err.msg);
        cs_coll_args_t a = {CS_COLL_ALLREDUCE, 5, 64, 0, 4096, &h, NULL, 0};
        const cs_coll_algo_t *algos[2] = {&a_allreduce_ok, &a_allreduce_drop};
        for (int k = 0; k < 2; k++) {
            cs_program_t *p = NULL;
            cs_coll_check_t *c = NULL;
            cs_exec_env_t env;
            cs_exec_opts_t o;
            cs_exec_result_t res;
            memset(&res, 0, sizeof res);
            cr_assert_eq(cs_coll_build(algos[k], &a, &p, &err), CS_OK, "%s", err.msg);
            cr_assert_eq(cs_coll_check_new(&a, p, seed, &c, &err), CS_OK, "%s", err.msg);
            cs_machine_exec_env(m, &env);
            cs_exec_opts_default(&o);
            o.mode = CS_NET_FLUID;
            o.observer = cs_coll_check_observer(c);
            cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s", err.msg);
            cr_expect_eq(cs_coll_check_verify(c, &err), k ? CS_ERR_VALIDATE : CS_OK,
                         "seed %llu %s: %s", (unsigned long long)seed, algos[k]->name, err.msg);
            cs_coll_check_free(c);
            cs_exec_result_destroy(&res);
            cs_program_free(p);
        }
        cs_machine_free(m);
    }
}

/* ==== deliberately wrong rooted algorithms ===================================== */

/* The validation runs above mean something only if a wrong rooted
 * algorithm fails them: a binomial reduce that forgets its last child, and
 * a gather that puts one block at the wrong offset. */
static int bad_reduce(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    for (int r = 1; r < a->P - 1; r++) { /* rank P-1 never sends: dropped */
        cs_coll_send(b, r, 0, 0, a->bytes, 0);
        cs_coll_recv_reduce(b, 0, r, 0, a->bytes, 0);
    }
    return CS_OK;
}

static int bad_gather(cs_coll_builder_t *b, cs_error_t *err)
{
    (void)err;
    const cs_coll_args_t *a = cs_coll_args(b);
    int64_t m = a->bytes;
    for (int r = 1; r < a->P; r++) {
        int64_t at = r == 1 ? 2 * m : r * m; /* block 1 lands on block 2 */
        cs_coll_send(b, r, 0, r * m, m, 0);
        cs_coll_recv(b, 0, r, at, m, 0);
    }
    return CS_OK;
}

static int run_custom(cs_coll_kind_t kind, int (*build)(cs_coll_builder_t *, cs_error_t *),
                      cs_error_t *err)
{
    cs_coll_algo_t algo = {kind, "wrong", "deliberately wrong", "test", "", NULL, build, NULL};
    cs_machine_t *m;
    cs_coll_hints_t hints;
    cs_coll_args_t args;
    cs_program_t *p = NULL;
    cs_coll_check_t *chk = NULL;
    cs_exec_result_t res;
    cs_exec_opts_t o;
    int rc;
    memset(&hints, 0, sizeof hints);
    memset(&res, 0, sizeof res);
    cr_assert_eq(cs_machine_new("alphabeta:topo=complete,p=6", &m, err), CS_OK);
    args = (cs_coll_args_t){kind, 6, 100, 0, m->net.unit_bytes, &hints, NULL, 0};
    cr_assert_eq(cs_coll_build(&algo, &args, &p, err), CS_OK, "%s", err->msg);
    cs_exec_env_t env;
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    cr_assert_eq(cs_coll_check_new(&args, p, 7, &chk, err), CS_OK);
    o.observer = cs_coll_check_observer(chk);
    rc = cs_exec_run(&env, p, &o, &res, err);
    if (!rc)
        rc = cs_coll_check_verify(chk, err);
    cs_coll_check_free(chk);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
    cs_machine_free(m);
    return rc;
}

Test(rooted, validation_catches_a_dropped_contribution_and_a_misplaced_block)
{
    cs_error_t err;
    cr_assert_eq(run_custom(CS_COLL_REDUCE, bad_reduce, &err), CS_ERR_VALIDATE, "%s", err.msg);
    cr_assert_eq(run_custom(CS_COLL_GATHER, bad_gather, &err), CS_ERR_VALIDATE, "%s", err.msg);
}

/* ---- the validator catches broken variants ------------------------------- */

/* A ring reduce-scatter whose last step copies instead of adding: the
 * block ends with only two contributions. */
static int broken_rs(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int s = 0; s < P - 1; s++) {
        for (int i = 0; i < P; i++) {
            int ps = ((i - s - 1) % P + P) % P, pr = ((i - s - 2) % P + P) % P;
            cs_coll_send(b, i, (i + 1) % P, ps * m, m, 0);
            if (s == P - 2)
                cs_coll_recv(b, i, (i + P - 1) % P, pr * m, m, 0);
            else
                cs_coll_recv_reduce(b, i, (i + P - 1) % P, pr * m, m, 0);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* Bruck allgather without its final local copy: blocks 0..r-1 stay in the
 * scratch half of the extended buffer. */
static int broken_bruck(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    int P = a->P;
    int64_t m = a->bytes;
    (void)err;
    for (int d = 1; d < P; d *= 2) {
        int c = d < P - d ? d : P - d;
        for (int r = 0; r < P; r++) {
            cs_coll_send(b, r, (r - d + P) % P, r * m, c * m, 0);
            cs_coll_recv(b, r, (r + d) % P, (r + d) * m, c * m, 0);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

/* A dissemination barrier that stops one round early. */
static int broken_barrier(cs_coll_builder_t *b, cs_error_t *err)
{
    int P = cs_coll_args(b)->P;
    (void)err;
    for (int d = 1; 2 * d < P; d *= 2) {
        for (int r = 0; r < P; r++) {
            cs_coll_send(b, r, (r + d) % P, 0, 1, 0);
            cs_coll_recv(b, r, (r - d + P) % P, 0, 1, 0);
        }
        cs_coll_wait_all(b);
    }
    return CS_OK;
}

Test(symmetric_validate, broken_variants_are_caught)
{
    static const cs_coll_algo_t rs = {CS_COLL_REDUCE_SCATTER, "broken-ring", "test", "test", "",
                                      NULL, broken_rs, NULL};
    static const cs_coll_algo_t ag = {CS_COLL_ALLGATHER, "broken-bruck", "test", "test", "", NULL,
                                      broken_bruck, NULL};
    static const cs_coll_algo_t bar = {CS_COLL_BARRIER, "broken-dissemination", "test", "test",
                                       "", NULL, broken_barrier, NULL};
    static const int Ps[] = {3, 5, 8};
    for (size_t i = 0; i < sizeof Ps / sizeof *Ps; i++) {
        int P = Ps[i];
        h_run_t r = h_run_algo("alphabeta:topo=complete,p=8", &rs, P, 10, 0, NULL, CS_NET_PACKET,
                               1, NULL);
        cr_expect_eq(r.rc, CS_ERR_VALIDATE, "P=%d: %s", P, r.err.msg);
        cr_expect(strstr(r.err.msg, "misses"), "%s", r.err.msg);
        h_done(&r);
        r = h_run_algo("alphabeta:topo=complete,p=8", &ag, P, 10, 0, NULL, CS_NET_PACKET, 1,
                       NULL);
        cr_expect_eq(r.rc, CS_ERR_VALIDATE, "P=%d: %s", P, r.err.msg);
        h_done(&r);
        r = h_run_algo("alphabeta:topo=complete,p=8", &bar, P, 0, 0, NULL, CS_NET_PACKET, 1,
                       NULL);
        cr_expect_eq(r.rc, CS_ERR_VALIDATE, "P=%d: %s", P, r.err.msg);
        cr_expect(strstr(r.err.msg, "barrier"), "%s", r.err.msg);
        h_done(&r);
    }
}
