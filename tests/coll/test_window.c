/*
 * test_window.c - windowed programs (issue 17): every algorithm of the
 * suite, built a window at a time while it runs (cs_coll_generate,
 * cs_exec_run_gen), gives the same run as its whole program: the same
 * status and error text, finish time, event and message counts, per-rank
 * finish times, and the same messages matched between the same send and
 * recv op ids in the same order.  Machines: the golden set's (alpha-beta
 * torus in packet and fluid mode, Cerebras, CNS-1, Groq, Cell, LogGP), all
 * their nodes, two sizes.  The builder hands over at every wait it can
 * (batch 1), so the window is as small as the contract allows.
 *
 * Also: the window's memory follows the ops in flight (a long ring
 * allreduce releases what it has run), per-op times (--timeline) equal to
 * the whole program's.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

typedef struct outcome {
    int rc;
    cs_error_t err;
    cs_exec_result_t res;
    size_t prog_bytes;   /* program memory when the run ended */
    int32_t nops;
} outcome_t;

static void run_one(const cs_machine_t *m, const cs_coll_algo_t *a, const cs_coll_args_t *args,
                    cs_net_mode_t mode, int windowed, int32_t batch, outcome_t *out)
{
    cs_exec_env_t env;
    cs_exec_opts_t o;
    memset(out, 0, sizeof *out);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.mode = mode;
    o.record_messages = 1;
    if (windowed) {
        cs_progen_t *g;
        out->rc = cs_coll_generate(a, args, batch, &g, &out->err);
        if (out->rc)
            return;
        out->rc = cs_exec_run_gen(&env, g, &o, &out->res, &out->err);
        out->prog_bytes = cs_program_bytes(g->prog);
        out->nops = cs_program_nops(g->prog);
        cs_progen_free(g);
    } else {
        cs_program_t *p;
        out->rc = cs_coll_build(a, args, &p, &out->err);
        if (out->rc)
            return;
        out->rc = cs_exec_run(&env, p, &o, &out->res, &out->err);
        out->prog_bytes = cs_program_bytes(p);
        out->nops = cs_program_nops(p);
        cs_program_free(p);
    }
}

/* Compares two outcomes; returns 0 or reports the first difference. */
static int same(const outcome_t *w, const outcome_t *f, const char *what)
{
    if (w->rc != f->rc || (w->rc && strcmp(w->err.msg, f->err.msg))) {
        cr_log_error("%s: status %d \"%s\" windowed, %d \"%s\" whole", what, w->rc, w->err.msg,
                     f->rc, f->err.msg);
        return 1;
    }
    if (w->rc)
        return 0;
    if (w->res.finish != f->res.finish || w->res.events != f->res.events ||
        w->res.messages != f->res.messages || w->nops != f->nops ||
        w->res.nmsgs != f->res.nmsgs) {
        cr_log_error("%s: finish %lld/%lld events %llu/%llu messages %lld/%lld ops %d/%d "
                     "(windowed/whole)", what, (long long)w->res.finish, (long long)f->res.finish,
                     (unsigned long long)w->res.events, (unsigned long long)f->res.events,
                     (long long)w->res.messages, (long long)f->res.messages, w->nops, f->nops);
        return 1;
    }
    for (int r = 0; r < f->res.nranks; r++)
        if (w->res.rank_finish[r] != f->res.rank_finish[r]) {
            cr_log_error("%s: rank %d finishes at %lld windowed, %lld whole", what, r,
                         (long long)w->res.rank_finish[r], (long long)f->res.rank_finish[r]);
            return 1;
        }
    for (int64_t i = 0; i < f->res.nmsgs; i++)
        if (w->res.msgs[i].send_op != f->res.msgs[i].send_op ||
            w->res.msgs[i].recv_op != f->res.msgs[i].recv_op) {
            cr_log_error("%s: message %lld is %d->%d windowed, %d->%d whole", what, (long long)i,
                         w->res.msgs[i].send_op, w->res.msgs[i].recv_op, f->res.msgs[i].send_op,
                         f->res.msgs[i].recv_op);
            return 1;
        }
    return 0;
}

static const struct {
    const char *spec;
    cs_net_mode_t mode;
} machines[] = {
    {"alphabeta:topo=torus,rows=8,cols=8", CS_NET_PACKET},
    {"alphabeta:topo=torus,rows=8,cols=8", CS_NET_FLUID},
    {"cerebras:rows=8,cols=8", CS_NET_PACKET},
    {"cns1:rings=2", CS_NET_PACKET},
    {"groq:nodes=8", CS_NET_PACKET},
    {"cell:chips=2", CS_NET_PACKET},
    {"loggp:p=64", CS_NET_PACKET},
};

Test(window, every_algorithm_same_run_as_whole, .timeout = 600)
{
    static const int64_t sizes[] = {4097};
    int n, runs = 0, bad = 0, refused = 0, forward = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    for (size_t mi = 0; mi < sizeof machines / sizeof machines[0]; mi++) {
        cs_machine_t *m;
        cs_error_t err;
        cs_machine_hints_t mh;
        cr_assert_eq(cs_machine_new(machines[mi].spec, &m, &err), CS_OK, "%s", err.msg);
        int P = cs_machine_nodes(m);
        cs_machine_hints_init(&mh, m, P, NULL);
        for (int i = 0; i < n; i++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                char what[256];
                outcome_t w, f;
                cs_coll_args_t args = {all[i]->kind, P, sizes[si], P - 1, m->net.unit_bytes,
                                       &mh.coll, NULL, 1};
                snprintf(what, sizeof what, "%s/%s %lld B on %s %s", cs_coll_name(all[i]->kind),
                         all[i]->name, (long long)sizes[si], machines[mi].spec,
                         cs_net_mode_name(machines[mi].mode));
                run_one(m, all[i], &args, machines[mi].mode, 0, 0, &f);
                run_one(m, all[i], &args, machines[mi].mode, 1, 1, &w);
                runs++;
                refused += f.rc != CS_OK;
                if (f.rc == CS_OK && w.rc == CS_ERR_USAGE && strstr(w.err.msg, "point back")) {
                    /* the one algorithm whose ids put a dependency forward:
                     * refused windowed, with the reason */
                    cr_expect_str_eq(all[i]->name, "cns-two-way", "%s: %s", what, w.err.msg);
                    forward++;
                } else {
                    bad += same(&w, &f, what);
                }
                cs_exec_result_destroy(&w.res);
                cs_exec_result_destroy(&f.res);
            }
        cs_machine_hints_destroy(&mh);
        cs_machine_free(m);
    }
    cr_log_info("window: %d runs, %d refused alike, %d refused windowed (forward "
                "dependencies), %d different", runs, refused, forward, bad);
    cr_assert_eq(bad, 0, "%d of %d windowed runs differ from the whole program's", bad, runs);
    cr_assert_lt(refused, runs / 4, "most runs must run (%d refused)", refused);
}

/* A ring allreduce of many steps: the windowed run holds a few steps of
 * ops at a time, not the program. */
Test(window, memory_follows_the_ops_in_flight)
{
    cs_machine_t *m;
    cs_error_t err;
    const cs_coll_algo_t *a;
    cs_machine_hints_t mh;
    outcome_t w, f;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=256", &m, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &a, &err), CS_OK);
    cs_machine_hints_init(&mh, m, 256, NULL);
    cs_coll_args_t args = {CS_COLL_ALLREDUCE, 256, 1 << 20, 0, m->net.unit_bytes, &mh.coll,
                           NULL, 1};
    run_one(m, a, &args, CS_NET_FLUID, 0, 0, &f);
    run_one(m, a, &args, CS_NET_FLUID, 1, 4096, &w);
    cr_assert_eq(same(&w, &f, "ring allreduce P=256"), 0);
    cr_log_info("ops held at most: %lld of %d; program bytes at the end: whole %zu, window %zu",
                (long long)w.res.ops_held_peak, w.nops, f.prog_bytes, w.prog_bytes);
    cr_assert_gt(f.nops, 300000);
    cr_assert_eq(f.res.ops_held_peak, f.nops);
    /* a step is 3 * 256 ops; the window holds the batch, a few steps and the
     * ops of the chunk (2^16) the frontier is in */
    cr_assert_lt(w.res.ops_held_peak, 100000, "held %lld ops", (long long)w.res.ops_held_peak);
    cr_assert_lt(w.prog_bytes * 5, f.prog_bytes, "window %zu B vs whole %zu B", w.prog_bytes,
                 f.prog_bytes);
    cs_exec_result_destroy(&w.res);
    cs_exec_result_destroy(&f.res);
    cs_machine_hints_destroy(&mh);
    cs_machine_free(m);
}

Test(window, refuses_what_needs_the_whole_program)
{
    cs_machine_t *m;
    cs_error_t err;
    const cs_coll_algo_t *a;
    cs_progen_t *g;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=8", &m, &err), CS_OK);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &a, &err), CS_OK);
    cs_coll_args_t args = {CS_COLL_ALLREDUCE, 8, 1024, 0, m->net.unit_bytes, NULL, NULL, 0};
    /* (data descriptors for --validate are kept since issue 34:
     * test_window_validate.c) per-op times (--timeline) are kept, with the program's ops: the
     * same times as the whole program's, op by op */
    args.no_data = 1;
    cr_assert_eq(cs_coll_generate(a, &args, 0, &g, &err), CS_OK);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    cr_assert_eq(cs_exec_run_gen(&env, g, &o, &res, &err), CS_OK, "%s", err.msg);
    {
        cs_program_t *whole;
        cs_exec_result_t wres;
        cr_assert_eq(cs_coll_build(a, &args, &whole, &err), CS_OK);
        cr_assert_eq(cs_exec_run(&env, whole, &o, &wres, &err), CS_OK);
        cr_assert_eq(cs_program_nops(whole), cs_program_nops(g->prog));
        for (int32_t i = 0; i < cs_program_nops(whole); i++) {
            cr_assert_eq(res.ops[i].start, wres.ops[i].start, "op %d", i);
            cr_assert_eq(res.ops[i].end, wres.ops[i].end, "op %d", i);
            cr_assert_eq(cs_program_op(g->prog, i)->rank, cs_program_op(whole, i)->rank);
        }
        cs_exec_result_destroy(&wres);
        cs_program_free(whole);
    }
    cs_exec_result_destroy(&res);
    cs_progen_free(g);
    /* an option error of the algorithm comes from the first turn, worded as
     * a whole build words it */
    cs_spec_t opts;
    cr_assert_eq(cs_spec_parse("opts:seg=0", &opts, &err), CS_OK);
    const cs_coll_algo_t *pipe;
    cr_assert_eq(cs_coll_find(CS_COLL_BROADCAST, "segmented-binomial", &pipe, &err), CS_OK);
    cs_coll_args_t bargs = {CS_COLL_BROADCAST, 8, 1024, 0, m->net.unit_bytes, NULL, &opts, 1};
    cs_program_t *p;
    cs_error_t werr;
    int rc_whole = cs_coll_build(pipe, &bargs, &p, &err);
    cr_assert_neq(rc_whole, CS_OK);
    cr_assert_eq(cs_coll_generate(pipe, &bargs, 0, &g, &werr), CS_OK);
    o.record_op_times = 0;
    cr_assert_eq(cs_exec_run_gen(&env, g, &o, &res, &werr), rc_whole);
    cr_assert(strstr(werr.msg, err.msg), "windowed \"%s\" vs whole \"%s\"", werr.msg, err.msg);
    cs_exec_result_destroy(&res);
    cs_progen_free(g);
    cs_spec_destroy(&opts);
    cs_machine_free(m);
}

/* Asked to close an op it has not built yet (the default's probe builds on
 * ahead of the run: cs_request_build), the generator builds on instead of
 * reading an op that is not there; the run from there is the whole
 * program's. */
Test(window, advance_past_what_is_built)
{
    cs_machine_t *m;
    cs_error_t err;
    const cs_coll_algo_t *a;
    cs_progen_t *g;
    cs_exec_env_t env;
    cs_exec_opts_t o;
    cs_exec_result_t res, wres;
    cs_program_t *whole;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=16", &m, &err), CS_OK);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &a, &err), CS_OK);
    cs_coll_args_t args = {CS_COLL_ALLREDUCE, 16, 4096, 0, m->net.unit_bytes, NULL, NULL, 1};
    cr_assert_eq(cs_coll_generate(a, &args, 1, &g, &err), CS_OK);
    cr_assert_eq(cs_progen_advance(g, -1, &err), CS_OK, "%s", err.msg);
    int32_t had = cs_program_nops(g->prog);
    cr_assert_eq(cs_progen_advance(g, had + 100, &err), CS_OK, "%s", err.msg);
    cr_assert_gt(cs_program_nops(g->prog), had);
    cs_machine_exec_env(m, &env);
    cs_exec_opts_default(&o);
    cr_assert_eq(cs_exec_run_gen(&env, g, &o, &res, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_coll_build(a, &args, &whole, &err), CS_OK);
    cr_assert_eq(cs_exec_run(&env, whole, &o, &wres, &err), CS_OK);
    cr_assert_eq(res.finish, wres.finish);
    cr_assert_eq(res.events, wres.events);
    cs_exec_result_destroy(&wres);
    cs_exec_result_destroy(&res);
    cs_program_free(whole);
    cs_progen_free(g);
    cs_machine_free(m);
}

/* A run that fails while the builder is half way (an op too large for the
 * packet engine's counters): the same error as the whole program's, and
 * the generator stops cleanly (ASan: nothing leaks, no thread left). */
Test(window, fails_half_way_like_the_whole_program)
{
    cs_machine_t *m;
    cs_error_t err;
    const cs_coll_algo_t *a;
    outcome_t w, f;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=64", &m, &err), CS_OK);
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, "ring", &a, &err), CS_OK);
    cs_coll_args_t args = {CS_COLL_ALLREDUCE, 64, (int64_t)1 << 50, 0, m->net.unit_bytes, NULL,
                           NULL, 1};
    run_one(m, a, &args, CS_NET_PACKET, 0, 0, &f);
    run_one(m, a, &args, CS_NET_PACKET, 1, 1, &w);
    cr_assert_eq(f.rc, CS_ERR_RANGE, "%s", f.err.msg);
    cr_assert_eq(same(&w, &f, "ring allreduce of 2^50 bytes"), 0);
    cs_exec_result_destroy(&w.res);
    cs_exec_result_destroy(&f.res);
    cs_machine_free(m);
}
