/*
 * benchtable.c - one row of a benchmark table (benchtable.h): the
 * collective built at a size, run with the --validate checker when asked,
 * the wrong bytes counted instead of failing, and the ranks' finish times
 * reduced to the maximum, minimum and mean that nccl-tests and OSU print.
 */
#include <string.h>

#include "api/benchtable.h"
#include "coll/check.h"
#include "engine/net.h"

/* The seed of the checker's keys (the verdict does not depend on it). */
#define BENCHTABLE_SEED 0x62656e6368ULL

int cs_benchtable_point_run(const cs_request_t *base, const cs_machine_t *m,
                            cs_request_coll_t *c, int64_t bytes, int validate,
                            const volatile sig_atomic_t *cancel, cs_benchtable_point_t *pt,
                            const char **engine, cs_error_t *err)
{
    cs_program_t *p = NULL;
    cs_coll_check_t *check = NULL;
    cs_exec_result_t res;
    cs_exec_opts_t opts;
    int rc;

    memset(&res, 0, sizeof res);
    memset(pt, 0, sizeof *pt);
    pt->bytes = bytes;
    pt->wrong_bytes = -1;
    /* TODO(loops): the benchmark loop's iterations and average once branch
     * loops is merged; until then one call */
    pt->iterations = 1;
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
    /* every rank calls at 0, as after the barrier both tools put before
     * their timers; a rank's latency is then its finish */
    double sum = 0, lo = 0;
    for (int r = 0; r < res.nranks; r++) {
        double t = res.rank_finish ? (double)res.rank_finish[r] * m->tick_seconds : 0;
        sum += t;
        lo = r == 0 || t < lo ? t : lo;
    }
    pt->t_max = (double)res.finish * m->tick_seconds;
    pt->t_min = lo;
    pt->t_avg = res.nranks > 0 ? sum / res.nranks : 0;
out:
    cs_exec_result_destroy(&res);
    cs_coll_check_free(check);
    cs_program_free(p);
    return rc;
}
