/*
 * benchtable.c - one row of a benchmark table (benchtable.h): the
 * collective at a size as a benchmark loop through the request path, or
 * as one call; the --validate checker on one call, the wrong bytes
 * counted instead of failing; the times reduced to what nccl-tests and OSU
 * print.
 */
#include <string.h>

#include "api/benchtable.h"
#include "coll/check.h"
#include "engine/net.h"

/* The seed of the checker's keys (the verdict does not depend on it). */
#define BENCHTABLE_SEED 0x62656e6368ULL

/* One call of prepared collective c at `bytes`: each rank's finish, and
 * with validate the wrong bytes.  Fills pt's one-call fields unless
 * `counts_only` (then only wrong_bytes: the times are a loop's). */
static int point_one_call(const cs_request_t *base, const cs_machine_t *m, cs_request_coll_t *c,
                          int64_t bytes, int validate, const volatile sig_atomic_t *cancel,
                          cs_benchtable_point_t *pt, int counts_only, const char **engine,
                          cs_error_t *err)
{
    cs_program_t *p = NULL;
    cs_coll_check_t *check = NULL;
    cs_exec_result_t res;
    cs_exec_opts_t opts;
    int rc;

    memset(&res, 0, sizeof res);
    c->args.bytes = bytes;
    c->args.no_data = !validate;
    if ((rc = cs_request_coll_build(c, &p, err))) {
        cs_error_prefix(err, "%s/%s", cs_coll_name(c->algo->kind), c->algo->name);
        return rc;
    }
    if (validate && (rc = cs_coll_check_new(&c->args, p, BENCHTABLE_SEED, &check, err)))
        goto out;
    cs_exec_opts_default(&opts);
    opts.mode = base->mode;
    opts.queue = base->queue;
    opts.rank_to_node = c->rank_to_node;
    opts.observer = check ? cs_coll_check_observer(check) : NULL;
    opts.cancel = cancel;
    if (base->force)
        opts.max_work = 0;
    if ((rc = cs_request_exec(m, p, &opts, &res, err)))
        goto out;
    if (engine)
        *engine = res.net ? cs_net_engine_name(res.net) : cs_net_mode_name(base->mode);
    if (check) {
        cs_error_t verdict;
        int vrc = cs_coll_check_verify_count(check, &pt->wrong_bytes, &verdict);
        if (vrc != CS_OK && pt->wrong_bytes < 0) { /* malformed, not merely wrong */
            *err = verdict;
            cs_error_prefix(err, "validation failed");
            rc = vrc;
            goto out;
        }
    }
    if (!counts_only) {
        /* every rank calls at 0, as after the barrier both tools put
         * before their timers; a rank's latency is then its finish */
        double sum = 0, lo = 0;
        for (int r = 0; r < res.nranks; r++) {
            double t = res.rank_finish ? (double)res.rank_finish[r] * m->tick_seconds : 0;
            sum += t;
            lo = r == 0 || t < lo ? t : lo;
        }
        pt->time = pt->max = (double)res.finish * m->tick_seconds;
        pt->min = lo;
        pt->avg = res.nranks > 0 ? sum / res.nranks : 0;
        pt->warmup = 0;
        pt->iterations = 1;
    }
out:
    cs_exec_result_destroy(&res);
    cs_coll_check_free(check);
    cs_program_free(p);
    return rc;
}

/* A benchmark loop at `bytes` through the request path: its times. */
static int point_loop(const cs_request_t *base, cs_machine_t *m, int64_t bytes,
                      const volatile sig_atomic_t *cancel, cs_benchtable_point_t *pt,
                      const char **engine, cs_error_t *err)
{
    cs_request_t req = *base;
    cs_request_run_t run;
    cs_exec_opts_t opts;
    int rc;
    req.bytes = bytes;
    req.bytes_text = "(bench-table)"; /* set: the value is req.bytes */
    req.validate = 0;                 /* checked on a call of its own */
    cs_request_run_init(&run);
    if ((rc = cs_request_prepare_on(&req, m, &run, err)) == CS_OK &&
        (rc = cs_request_build(&req, &run, err)) == CS_OK) {
        cs_request_exec_opts(&req, &run, &opts);
        opts.cancel = cancel;
        rc = cs_request_run(&run, &opts, err);
    }
    if (rc == CS_OK && run.coll.loop) {
        const cs_result_loop_t *lp = run.coll.loop;
        double tick = m->tick_seconds;
        pt->time = lp->avg_ticks * tick;
        pt->avg = lp->iteration_avg_ticks * tick;
        pt->min = (double)lp->iteration_min_ticks * tick;
        pt->max = (double)lp->iteration_max_ticks * tick;
        pt->warmup = lp->warmup;
        pt->iterations = lp->iterations;
        if (engine)
            *engine = run.result.net ? cs_net_engine_name(run.result.net)
                                     : cs_net_mode_name(base->mode);
    } else if (rc == CS_OK) {
        rc = cs_error_set(err, CS_ERR_INTERNAL, "bench-table: the loop reported no times");
    }
    cs_request_run_destroy(&run);
    return rc;
}

int cs_benchtable_point_run(const cs_request_t *base, cs_machine_t *m, cs_request_coll_t *c,
                            int64_t bytes, int validate, const volatile sig_atomic_t *cancel,
                            cs_benchtable_point_t *pt, const char **engine, cs_error_t *err)
{
    int rc;
    memset(pt, 0, sizeof *pt);
    pt->bytes = bytes;
    pt->wrong_bytes = -1;
    if (base->loop.style == CS_LOOP_STYLE_NONE)
        return point_one_call(base, m, c, bytes, validate, cancel, pt, 0, engine, err);
    if ((rc = point_loop(base, m, bytes, cancel, pt, engine, err)))
        return rc;
    return validate ? point_one_call(base, m, c, bytes, 1, cancel, pt, 1, NULL, err) : CS_OK;
}
