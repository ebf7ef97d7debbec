/*
 * harness.h - test helper shared by tests/coll: builds a collective with an
 * algorithm of the suite, runs it on a machine, optionally validates it.
 * Header-only, for tests only (the app has its own runner).
 */
#ifndef CS_TEST_COLL_HARNESS_H
#define CS_TEST_COLL_HARNESS_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "coll/check.h"
#include "coll/coll.h"
#include "engine/exec.h"
#include "machines/machine.h"

typedef struct h_run {
    int rc;                /* status of build + run (+ verify) */
    cs_error_t err;
    cs_tick_t finish;
    cs_exec_result_t res;  /* kept for channel statistics; h_done frees it */
    cs_program_t *prog;
    cs_machine_t *m;
} h_run_t;

/* Runs algorithm `a` (any cs_coll_algo_t, also one defined only in a test)
 * on machine `spec`, P ranks (0 = all nodes), size `bytes`, root, options
 * ("k=v,k=v" or NULL), mode, and validation on/off.  `hints` NULL: the
 * machine's hints for rank r on node r (cs_machine_hints_init, what
 * `collsim run` gives with its natural order). */
static inline h_run_t h_run_algo(const char *spec, const cs_coll_algo_t *a, int P, int64_t bytes,
                                 int root, const char *opts, cs_net_mode_t mode, int validate,
                                 const cs_coll_hints_t *hints_in)
{
    h_run_t r;
    cs_spec_t ospec, *op = NULL;
    cs_machine_hints_t mh;
    cs_coll_args_t args;
    memset(&r, 0, sizeof r);
    if ((r.rc = cs_machine_new(spec, &r.m, &r.err)))
        return r;
    if (opts) {
        char text[512];
        snprintf(text, sizeof text, "opts:%s", opts);
        if ((r.rc = cs_spec_parse(text, &ospec, &r.err)))
            return r;
        op = &ospec;
    }
    memset(&mh, 0, sizeof mh);
    if (!P)
        P = cs_machine_nodes(r.m);
    if (!hints_in && P <= cs_machine_nodes(r.m))
        cs_machine_hints_init(&mh, r.m, P, NULL);
    args = (cs_coll_args_t){a->kind, P, bytes, root, r.m->net.unit_bytes,
                            hints_in ? hints_in : &mh.coll, op, 0};
    r.rc = cs_coll_build(a, &args, &r.prog, &r.err);
    if (!r.rc) {
        cs_exec_env_t env;
        cs_exec_opts_t o;
        cs_machine_exec_env(r.m, &env);
        cs_coll_check_t *chk = NULL;
        cs_exec_opts_default(&o);
        o.mode = mode;
        o.record_op_times = 1; /* res.ops: some tests compare op times */
        if (validate) {
            r.rc = cs_coll_check_new(&args, r.prog, 12345, &chk, &r.err);
            if (!r.rc)
                o.observer = cs_coll_check_observer(chk);
        }
        if (!r.rc)
            r.rc = cs_exec_run(&env, r.prog, &o, &r.res, &r.err);
        if (!r.rc && chk)
            r.rc = cs_coll_check_verify(chk, &r.err);
        cs_coll_check_free(chk);
        r.finish = r.res.finish;
    }
    if (op)
        cs_spec_destroy(op);
    cs_machine_hints_destroy(&mh);
    return r;
}

/* Runs collective `coll` with algorithm `algo` ("name" or NULL = default) on
 * machine `spec`, P ranks (0 = all nodes), size `bytes`, root, options
 * ("k=v,k=v" or NULL), mode, and validation on/off. */
static inline h_run_t h_run(const char *spec, const char *coll, const char *algo, int P,
                            int64_t bytes, int root, const char *opts, cs_net_mode_t mode,
                            int validate)
{
    h_run_t r;
    cs_coll_kind_t kind;
    const cs_coll_algo_t *a;
    memset(&r, 0, sizeof r);
    if ((r.rc = cs_coll_parse(coll, &kind, &r.err)) || (r.rc = cs_coll_find(kind, algo, &a, &r.err)))
        return r;
    return h_run_algo(spec, a, P, bytes, root, opts, mode, validate, NULL);
}

static inline void h_done(h_run_t *r)
{
    cs_exec_result_destroy(&r->res);
    cs_program_free(r->prog);
    cs_machine_free(r->m);
    memset(r, 0, sizeof *r);
}

/* Convenience: the finish time in ticks, asserting success. */
static inline cs_tick_t h_time(const char *spec, const char *coll, const char *algo, int P,
                               int64_t bytes, int root, const char *opts, cs_net_mode_t mode)
{
    h_run_t r = h_run(spec, coll, algo, P, bytes, root, opts, mode, 0);
    cr_assert_eq(r.rc, CS_OK, "%s/%s on %s P=%d n=%lld: %s", coll, algo ? algo : "(default)",
                 spec, P, (long long)bytes, r.err.msg);
    cs_tick_t t = r.finish;
    h_done(&r);
    return t;
}

/* Every algorithm of the suite on machine `spec` (all its nodes), `bytes`,
 * root, validated: each must run and hold the right data.  `skip` (or NULL)
 * names one "coll/name" the caller checks itself. */
static inline void h_expect_all_validate(const char *spec, int64_t bytes, int root,
                                         const char *skip)
{
    int n;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    for (int i = 0; i < n; i++) {
        char name[96];
        snprintf(name, sizeof name, "%s/%s", cs_coll_name(all[i]->kind), all[i]->name);
        if ((skip && !strcmp(skip, name)) || cs_coll_needs_switches(all[i]))
            continue; /* the in-network ones: tests/coll/test_nccl_innet.c */
        h_run_t r = h_run_algo(spec, all[i], 0, bytes, root, NULL, CS_NET_PACKET, 1, NULL);
        cr_expect_eq(r.rc, CS_OK, "%s on %s: %s", name, spec, r.err.msg);
        h_done(&r);
    }
}

#endif
