/*
 * test_exec.c - the program executor: matching, dependencies, streaming,
 * calc, mcast lowering, deadlock reports, determinism, and that recording
 * op times or messages leaves a run unchanged.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "engine/exec.h"
#include "coll/coll.h"
#include "core/program.h"
#include "machines/machine.h"
#include "topo/topo.h"

static cs_topo_t *topo;
static cs_net_params_t np;
static cs_exec_env_t env;

static void setup(void)
{
    cs_error_t err;
    cr_assert_eq(cs_topo_new_complete(8, &topo, &err), CS_OK);
    cs_net_params_default(&np);
    np.send_overhead = 100; /* alpha */
    np.ser_num = 2;         /* beta: 2 ticks per byte */
    np.unit_bytes = 16;
    env = (cs_exec_env_t){topo, &np, 3, 1, 1e-9, NULL, NULL}; /* reduce: 3 ticks per byte */
}

static void teardown(void) { cs_topo_free(topo); }

static int run(cs_program_t *p, cs_net_mode_t mode, cs_exec_result_t *res, cs_error_t *err)
{
    cs_exec_opts_t o;
    int rc = cs_program_finalize(p, err);
    if (rc)
        return rc;
    cs_exec_opts_default(&o);
    o.record_op_times = 1;
    o.mode = mode;
    return cs_exec_run(&env, p, &o, res, err);
}

TestSuite(exec, .init = setup, .fini = teardown);

Test(exec, unmatched_recv_is_a_deadlock_naming_rank_and_op)
{
    cs_program_t *p = cs_program_new(4);
    cs_exec_result_t res;
    cs_error_t err;
    cs_program_send(p, 0, 1, 8, 0);
    cs_program_recv(p, 1, 0, 8, 0);
    int32_t r = cs_program_recv(p, 3, 2, 8, 5);
    cs_program_set_origin(p, r, 17, "waiter");
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_ERR_DEADLOCK);
    cr_assert(strstr(err.msg, "rank 3"), "%s", err.msg);
    cr_assert(strstr(err.msg, "waiter (line 17): recv 8b from 2 tag 5"), "%s", err.msg);
    cr_assert(strstr(err.msg, "no matching send"), "%s", err.msg);
    cr_assert_eq(cs_status_exit_code(CS_ERR_DEADLOCK), 3);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

Test(exec, dependency_cycle_is_reported_before_running)
{
    cs_program_t *p = cs_program_new(2);
    cs_error_t err;
    int32_t a = cs_program_calc(p, 0, 5, 0), b = cs_program_calc(p, 0, 5, 0),
            c = cs_program_calc(p, 0, 5, 0);
    cs_program_set_origin(p, a, 3, "a");
    cs_program_set_origin(p, b, 4, "b");
    cs_program_set_origin(p, c, 5, "c");
    cs_program_dep(p, b, a, CS_DEP_AFTER);
    cs_program_dep(p, c, b, CS_DEP_AFTER);
    cs_program_dep(p, a, c, CS_DEP_AFTER_START);
    cr_assert_eq(cs_program_finalize(p, &err), CS_ERR_DEADLOCK);
    cr_assert(strstr(err.msg, "cycle on rank 0"), "%s", err.msg);
    cr_assert(strstr(err.msg, "a") && strstr(err.msg, "b") && strstr(err.msg, "c"), "%s", err.msg);
    cs_program_free(p);
}

Test(exec, unreceived_message_is_an_error)
{
    cs_program_t *p = cs_program_new(2);
    cs_exec_result_t res;
    cs_error_t err;
    cs_program_send(p, 0, 1, 8, 4);
    cr_assert_eq(run(p, CS_NET_FLUID, &res, &err), CS_ERR_DEADLOCK);
    cr_assert(strstr(err.msg, "never received"), "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

Test(exec, message_larger_than_recv_is_an_error)
{
    cs_program_t *p = cs_program_new(2);
    cs_exec_result_t res;
    cs_error_t err;
    cs_program_send(p, 0, 1, 64, 0);
    cs_program_recv(p, 1, 0, 8, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_ERR_RUNTIME);
    cr_assert(strstr(err.msg, "does not fit"), "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Matching is in posting order per (src, tag), wildcards included. */
Test(exec, matching_order_and_wildcards)
{
    cs_program_t *p = cs_program_new(3);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t s1 = cs_program_send(p, 0, 2, 10, 1);
    int32_t s2 = cs_program_send(p, 0, 2, 20, 1);
    cs_program_dep(p, s2, s1, CS_DEP_AFTER);
    cs_program_send(p, 1, 2, 30, 7);
    int32_t r_any = cs_program_recv(p, 2, CS_ANY, 30, 7);
    int32_t r1 = cs_program_recv(p, 2, 0, 10, 1);
    int32_t r2 = cs_program_recv(p, 2, 0, 20, CS_ANY);
    cs_program_dep(p, r2, r1, CS_DEP_AFTER);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
    /* the second send's 20 bytes would not fit r1 if order were broken */
    cr_assert_lt(res.ops[r1].end, res.ops[r2].end);
    cr_assert_eq(res.ops[r_any].end, 100 + 2 * 30 + 100 + 2 * 10,
                 "receiver serialises: first the 10-byte message, then 30 bytes");
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

Test(exec, after_and_after_start_dependencies)
{
    cs_program_t *p = cs_program_new(2);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t c1 = cs_program_calc(p, 0, 1000, 0);
    int32_t s = cs_program_send(p, 0, 1, 8, 0);
    int32_t c2 = cs_program_calc(p, 0, 0, 10); /* 10 bytes at 3 ticks per byte */
    cs_program_dep(p, s, c1, CS_DEP_AFTER);
    cs_program_dep(p, c2, s, CS_DEP_AFTER_START);
    cs_program_recv(p, 1, 0, 8, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(res.ops[s].start, 1000);
    cr_assert_eq(res.ops[c2].start, 1000);
    cr_assert_eq(res.ops[c2].end, 1030);
    cr_assert_eq(res.ops[s].end, 1000 + 100 + 16);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Calcs share the rank's one CPU, first ready first served. */
Test(exec, calcs_serialise_on_the_cpu)
{
    cs_program_t *p = cs_program_new(1);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t a = cs_program_calc(p, 0, 50, 0), b = cs_program_calc(p, 0, 70, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(res.ops[a].end, 50);
    cr_assert_eq(res.ops[b].start, 50);
    cr_assert_eq(res.ops[b].end, 120);
    cr_assert_eq(res.finish, 120);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* A GOAL program's calc is in nanoseconds; the executor converts. */
Test(exec, calc_time_unit_conversion)
{
    cs_program_t *p = cs_program_new(1);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t a = cs_program_calc(p, 0, 5, 0);
    cs_program_set_time_unit(p, 1e-6); /* 5 us = 5000 ticks of 1 ns */
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(res.ops[a].end, 5000);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Without hardware multicast, mcast is unicasts serialised by the send port. */
Test(exec, mcast_lowered_to_serial_unicasts)
{
    cs_program_t *p = cs_program_new(4);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t dst[3] = {3, 1, 2}, r[4];
    int32_t m = cs_program_mcast(p, 0, dst, 3, 32, 9);
    for (int i = 1; i < 4; i++)
        r[i] = cs_program_recv(p, i, 0, 32, 9);
    for (int mi = 0; mi < 2; mi++) {
        cs_program_t *q = p;
        cr_assert_eq(run(q, mi ? CS_NET_FLUID : CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(res.ops[r[3]].end, 1 * (100 + 64));
        cr_assert_eq(res.ops[r[1]].end, 2 * (100 + 64));
        cr_assert_eq(res.ops[r[2]].end, 3 * (100 + 64));
        cr_assert_eq(res.ops[m].end, 3 * (100 + 64));
        cr_assert_eq(res.messages, 3);
        cs_exec_result_destroy(&res);
    }
    cs_program_free(p);
}

/* Streaming: a relay forwards unit by unit (receive, then send on) and so
 * finishes one unit after a direct transfer, not a whole message later. */
Test(exec, streaming_forward_is_pipelined)
{
    const int64_t n = 16 * 50;
    for (int mi = 0; mi < 2; mi++) {
        cs_program_t *p = cs_program_new(3);
        cs_exec_result_t res;
        cs_error_t err;
        cs_program_send(p, 0, 1, n, 0);
        int32_t r1 = cs_program_recv(p, 1, 0, n, 0);
        int32_t f = cs_program_send(p, 1, 2, n, 0);
        cs_program_dep(p, f, r1, CS_DEP_STREAM);
        int32_t r2 = cs_program_recv(p, 2, 1, n, 0);
        cr_assert_eq(run(p, mi ? CS_NET_FLUID : CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
        /* hop 1: alpha + 2n; the relay's alpha overlaps; its last unit leaves
         * after the first hop's last unit arrived: + one unit of 32 ticks */
        cr_assert_eq(res.ops[r1].end, 100 + 2 * n);
        cr_assert_eq(res.ops[r2].end, 100 + 2 * n + 2 * 16, "mode %d: %lld", mi,
                     (long long)res.ops[r2].end);
        cr_assert_eq(res.ops[f].start, 0, "streaming starts with its predecessor");
        cs_exec_result_destroy(&res);
        cs_program_free(p);
    }
}

/* Streaming through a reduction: receive, add (3 ticks per byte), forward. */
Test(exec, streaming_reduce_then_forward)
{
    const int64_t n = 16 * 20;
    cs_program_t *p = cs_program_new(3);
    cs_exec_result_t res;
    cs_error_t err;
    cs_program_send(p, 0, 1, n, 0);
    int32_t r1 = cs_program_recv(p, 1, 0, n, 0);
    int32_t add = cs_program_calc(p, 1, 0, n);
    int32_t f = cs_program_send(p, 1, 2, n, 0);
    cs_program_dep(p, add, r1, CS_DEP_STREAM);
    cs_program_dep(p, f, add, CS_DEP_STREAM);
    int32_t r2 = cs_program_recv(p, 2, 1, n, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
    /* the add (48 ticks per unit) is the bottleneck: units arrive every 32
     * ticks from t=132, the adds finish at 132 + 48*k (k = 1..20), and the
     * last forwarded unit takes 32 ticks more */
    cr_assert_eq(res.ops[r1].end, 100 + 2 * n);
    cr_assert_eq(res.ops[add].end, 100 + 32 + 48 * 20);
    cr_assert_eq(res.ops[r2].end, 100 + 32 + 48 * 20 + 32);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Same inputs, same outputs: per-op times of two runs agree exactly. */
Test(exec, deterministic)
{
    cs_program_t *p = cs_program_new(8);
    cs_exec_result_t a, b;
    cs_error_t err;
    for (int r = 0; r < 8; r++)
        for (int k = 1; k < 4; k++) {
            cs_program_send(p, r, (r + k) % 8, 100 * k + r, k);
            cs_program_recv(p, (r + k) % 8, r, 100 * k + r, k);
        }
    cr_assert_eq(run(p, CS_NET_PACKET, &a, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(run(p, CS_NET_PACKET, &b, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(memcmp(a.ops, b.ops, sizeof *a.ops * (size_t)cs_program_nops(p)), 0);
    cr_assert_eq(a.events, b.events);
    cs_exec_result_destroy(&a);
    cs_exec_result_destroy(&b);
    cs_program_free(p);
}

/* A message to oneself is a local copy: no time, no port taken. */
Test(exec, self_message_is_a_free_local_copy)
{
    for (int mi = 0; mi < 2; mi++) {
        cs_program_t *p = cs_program_new(2);
        cs_exec_result_t res;
        cs_error_t err;
        cs_program_send(p, 0, 1, 100, 0);
        int32_t r1 = cs_program_recv(p, 1, 0, 100, 0);
        cs_program_send(p, 1, 1, 100, 1);
        int32_t self = cs_program_recv(p, 1, 1, 100, 1);
        cr_assert_eq(run(p, mi ? CS_NET_FLUID : CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(res.ops[self].end, 0, "mode %d", mi);
        cr_assert_eq(res.ops[r1].end, 100 + 2 * 100, "the receive port stays free");
        cs_exec_result_destroy(&res);
        cs_program_free(p);
    }
}

/* Regression: progress hooks re-enter the executor (a send to oneself that
 * streams from a recv completes inside the hook and enables more than a
 * thousand new messages, which grows the message table): no stale pointer
 * may be used afterwards.  The ASan build of the suite catches it. */
Test(exec, hooks_survive_message_table_growth)
{
    for (int mi = 0; mi < 2; mi++) {
        cs_program_t *p = cs_program_new(2);
        cs_exec_result_t res;
        cs_error_t err;
        cs_program_send(p, 1, 0, 100, 0);
        int32_t r = cs_program_recv(p, 0, 1, 100, 0);
        int32_t self = cs_program_send(p, 0, 0, 100, 1);
        cs_program_dep(p, self, r, CS_DEP_STREAM);
        cs_program_recv(p, 0, 0, 100, 1);
        for (int i = 0; i < 1100; i++) {
            int32_t t = cs_program_send(p, 0, 1, 0, 2);
            cs_program_dep(p, t, self, CS_DEP_AFTER);
            cs_program_recv(p, 1, 0, 0, 2);
        }
        cr_assert_eq(run(p, mi ? CS_NET_FLUID : CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
        cs_exec_result_destroy(&res);
        cs_program_free(p);
    }
}

/* A deadlock with a message still in flight names the unmatched recv too. */
Test(exec, deadlock_report_names_ranks_even_with_messages_in_flight)
{
    cs_program_t *p = cs_program_new(3);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t r = cs_program_recv(p, 1, 2, 16, 0); /* never matched */
    int32_t f = cs_program_send(p, 1, 0, 16, 0);
    cs_program_dep(p, f, r, CS_DEP_STREAM);
    cs_program_recv(p, 0, 1, 16, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_ERR_DEADLOCK);
    cr_assert(strstr(err.msg, "rank 1") && strstr(err.msg, "recv 16b from 2"), "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Limits are checked before the run: more than 2^32 units is an error. */
Test(exec, too_many_units_is_a_clear_error)
{
    cs_program_t *p = cs_program_new(2);
    cs_exec_result_t res;
    cs_error_t err;
    np.unit_bytes = 1;
    cs_program_send(p, 0, 1, (int64_t)1 << 33, 0);
    cs_program_recv(p, 1, 0, (int64_t)1 << 33, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_ERR_RANGE);
    cr_assert(strstr(err.msg, "2^32 units"), "%s", err.msg);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Ties: messages that want one port at the same tick take it in the order
 * of their send ops' ids, whatever their ranks (the program's order, which
 * the suite's algorithms choose and GOAL files keep). */
Test(exec, same_tick_port_ties_follow_op_ids)
{
    for (int swap = 0; swap < 2; swap++) {
        cs_program_t *p = cs_program_new(3);
        cs_exec_result_t res;
        cs_error_t err;
        int32_t s[3];
        s[swap ? 1 : 2] = cs_program_send(p, swap ? 1 : 2, 0, 8, 0);
        s[swap ? 2 : 1] = cs_program_send(p, swap ? 2 : 1, 0, 8, 0);
        cs_program_recv(p, 0, CS_ANY, 8, 0);
        cs_program_recv(p, 0, CS_ANY, 8, 0);
        cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
        int32_t first = s[swap ? 1 : 2], second = s[swap ? 2 : 1];
        cr_assert_eq(res.ops[first].end, 116, "swap %d", swap);
        cr_assert_eq(res.ops[second].end, 232, "swap %d", swap);
        cs_exec_result_destroy(&res);
        cs_program_free(p);
    }
}

/* The ops one event enables start in id order, not in the order their
 * dependencies were added (which a GOAL file does not keep). */
Test(exec, enabled_ops_start_in_id_order)
{
    cs_program_t *p = cs_program_new(3);
    cs_exec_result_t res;
    cs_error_t err;
    int32_t c = cs_program_calc(p, 0, 10, 0);
    int32_t x = cs_program_send(p, 0, 1, 8, 0);
    int32_t y = cs_program_send(p, 0, 2, 8, 0);
    cs_program_dep(p, y, c, CS_DEP_AFTER); /* y's first */
    cs_program_dep(p, x, c, CS_DEP_AFTER);
    cs_program_recv(p, 1, 0, 8, 0);
    cs_program_recv(p, 2, 0, 8, 0);
    cr_assert_eq(run(p, CS_NET_PACKET, &res, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(res.ops[x].end, 10 + 116); /* x takes the send port first */
    cr_assert_eq(res.ops[y].end, 10 + 232);
    cs_exec_result_destroy(&res);
    cs_program_free(p);
}

/* Op times cost 16 bytes per op, so they are kept only on request
 * (opts.record_op_times); asking for them, or for the message list, must
 * not change the run.  Real algorithms on engines whose hooks come in
 * different orders (late release before or after completion: LogGP, Cell;
 * native multicast and streaming: Cerebras; the channel engine in both
 * modes), each run three ways: times and messages, neither, messages only. */
Test(exec, recording_op_times_or_messages_does_not_change_the_run)
{
    static const struct {
        const char *spec, *coll, *algo;
        int64_t bytes;
        cs_net_mode_t mode;
    } cases[] = {
        {"alphabeta:topo=ring,p=8,packet=256", "allreduce", "ring", 8192, CS_NET_PACKET},
        {"alphabeta:topo=ring,p=8,packet=256", "allreduce", "ring", 8192, CS_NET_FLUID},
        {"alphabeta:topo=torus,rows=3,cols=3,packet=256", "reduce", "segmented-binomial", 4096,
         CS_NET_PACKET},
        {"alphabeta:topo=line,p=6,packet=64", "reduce", "thesis-chain", 1024, CS_NET_FLUID},
        {"loggp:p=7,S=1000", "allreduce", "rdb", 4096, CS_NET_PACKET},
        {"loggp:p=6", "broadcast", "binomial", 64, CS_NET_PACKET},
        {"cell:chips=1", "broadcast", "simple", 4096, CS_NET_PACKET},
        {"cerebras:rows=3,cols=4", "broadcast", "thesis", 256, CS_NET_PACKET},
        {"cerebras:rows=3,cols=4", "reduce", "tree", 256, CS_NET_PACKET},
        {"cns1:rings=1,ring=8", "allreduce", "ring", 256, CS_NET_PACKET},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        cs_machine_t *m;
        cs_machine_hints_t mh;
        cs_program_t *p;
        cs_coll_kind_t kind;
        const cs_coll_algo_t *a;
        cs_exec_env_t e;
        cs_exec_result_t res[3];
        cs_error_t err;
        const char *what = cases[c].spec;
        cr_assert_eq(cs_machine_new(what, &m, &err), CS_OK, "%s", err.msg);
        int P = cs_machine_nodes(m);
        cs_machine_hints_init(&mh, m, P, NULL);
        cr_assert_eq(cs_coll_parse(cases[c].coll, &kind, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_coll_find(kind, cases[c].algo, &a, &err), CS_OK, "%s", err.msg);
        cs_coll_args_t args = {kind, P, cases[c].bytes, 0, m->net.unit_bytes, &mh.coll, NULL, 0};
        cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s: %s", what, err.msg);
        cs_machine_exec_env(m, &e);
        for (int k = 0; k < 3; k++) {
            cs_exec_opts_t o;
            cs_exec_opts_default(&o);
            o.mode = cases[c].mode;
            o.record_op_times = k == 0;
            o.record_messages = k != 1;
            cr_assert_eq(cs_exec_run(&e, p, &o, &res[k], &err), CS_OK, "%s: %s", what, err.msg);
        }
        cr_assert_not_null(res[0].ops);
        cr_assert_null(res[1].ops);
        cr_assert_null(res[2].ops);
        cr_assert_null(res[1].msgs);
        cr_assert_gt(res[0].messages, 0, "%s", what);
        for (int k = 1; k < 3; k++) {
            cr_assert_eq(res[k].finish, res[0].finish, "%s run %d", what, k);
            cr_assert_eq(res[k].messages, res[0].messages, "%s run %d", what, k);
            cr_assert_eq(res[k].events, res[0].events, "%s run %d", what, k);
            for (int r = 0; r < P; r++)
                cr_assert_eq(res[k].rank_finish[r], res[0].rank_finish[r], "%s run %d rank %d",
                             what, k, r);
        }
        /* the recorded times agree with what is kept online */
        cs_tick_t *last = cs_calloc((size_t)P, sizeof *last);
        for (int32_t i = 0; i < cs_program_nops(p); i++) {
            int r = cs_program_op(p, i)->rank;
            cr_assert_geq(res[0].ops[i].start, 0, "%s op %d", what, i);
            cr_assert_geq(res[0].ops[i].end, res[0].ops[i].start, "%s op %d", what, i);
            if (res[0].ops[i].end > last[r])
                last[r] = res[0].ops[i].end;
        }
        for (int r = 0; r < P; r++)
            cr_assert_eq(last[r], res[0].rank_finish[r], "%s rank %d", what, r);
        free(last);
        cr_assert_eq(res[2].nmsgs, res[0].nmsgs, "%s", what);
        cr_assert_eq(res[0].nmsgs, res[0].messages, "%s", what);
        for (int64_t i = 0; i < res[0].nmsgs; i++) {
            cr_assert_eq(res[2].msgs[i].send_op, res[0].msgs[i].send_op, "%s msg %lld", what,
                         (long long)i);
            cr_assert_eq(res[2].msgs[i].recv_op, res[0].msgs[i].recv_op, "%s msg %lld", what,
                         (long long)i);
            cr_assert_geq(res[0].msgs[i].recv_op, 0, "%s msg %lld", what, (long long)i);
        }
        for (int k = 0; k < 3; k++)
            cs_exec_result_destroy(&res[k]);
        cs_program_free(p);
        cs_machine_hints_destroy(&mh);
        cs_machine_free(m);
    }
}
