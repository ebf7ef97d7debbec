/*
 * predict.h - test helper shared by tests/machines: a machine's closed-form
 * model (cs_machine_predict, --predict) beside the simulated time of the
 * same collective, set up as `collsim run` sets it up (natural order, the
 * machine's hints in rank space, the --opt key/values).  Header-only.
 */
#ifndef CS_TEST_MACHINES_PREDICT_H
#define CS_TEST_MACHINES_PREDICT_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../coll/harness.h"

/* The model of coll/algo on spec (P ranks, 0 = all nodes; opts "k=v,..." or
 * NULL).  Returns the status of cs_machine_predict; out and err filled. */
static inline int p_model(const char *spec, const char *coll, const char *algo, int P,
                          int64_t bytes, int root, const char *opts, cs_model_t *out,
                          cs_error_t *err)
{
    cs_machine_t *m;
    cs_machine_hints_t mh;
    cs_spec_t os;
    int rc, has_opts = 0;
    cr_assert_eq(cs_machine_new(spec, &m, err), CS_OK, "%s", err->msg);
    if (!P)
        P = cs_machine_nodes(m);
    cs_machine_hints_init(&mh, m, P, NULL);
    if (opts) {
        char text[512];
        snprintf(text, sizeof text, "opts:%s", opts);
        cr_assert_eq(cs_spec_parse(text, &os, err), CS_OK, "%s", err->msg);
        has_opts = 1;
    }
    cs_model_request_t req = {0, algo, P, bytes, root, mh.coll.grid_rows, mh.coll.grid_cols,
                              has_opts ? os.kv : NULL, has_opts ? os.nkv : 0};
    cr_assert_eq(cs_coll_parse(coll, &req.kind, err), CS_OK, "%s", err->msg);
    rc = cs_machine_predict(m, &req, out, err);
    if (has_opts)
        cs_spec_destroy(&os);
    cs_machine_hints_destroy(&mh);
    cs_machine_free(m);
    return rc;
}

/* Asserts that the model's first form equals the simulation (to a
 * millionth of a tick: the forms are exact here) and returns the time. */
static inline double p_expect_exact(const char *spec, const char *coll, const char *algo, int P,
                                    int64_t bytes, int root, const char *opts)
{
    cs_model_t mo;
    cs_error_t err;
    int rc = p_model(spec, coll, algo, P, bytes, root, opts, &mo, &err);
    cr_assert_eq(rc, CS_OK, "%s/%s on %s, P=%d, %lld bytes: no model: %s", coll, algo, spec, P,
                 (long long)bytes, err.msg);
    cs_tick_t sim = h_time(spec, coll, algo, P, bytes, root, opts, CS_NET_PACKET);
    cr_expect(fabs((double)sim - mo.form[0].ticks) <= 1e-6 * (mo.form[0].ticks + 1),
              "%s/%s on %s, P=%d, %lld bytes: simulated %lld ticks, model %.3f (%s)", coll, algo,
              spec, P, (long long)bytes, (long long)sim, mo.form[0].ticks, mo.form[0].name);
    return mo.form[0].ticks;
}

/* Asserts that there is no model and that the reason mentions `why`. */
static inline void p_expect_none(const char *spec, const char *coll, const char *algo,
                                 int64_t bytes, const char *why)
{
    cs_model_t mo;
    cs_error_t err;
    int rc = p_model(spec, coll, algo, 0, bytes, 0, NULL, &mo, &err);
    cr_expect_eq(rc, CS_ERR_RANGE, "%s/%s on %s: expected no model", coll, algo, spec);
    cr_expect(strstr(err.msg, why) != NULL, "%s/%s on %s: reason \"%s\" lacks \"%s\"", coll, algo,
              spec, err.msg, why);
}

#endif
