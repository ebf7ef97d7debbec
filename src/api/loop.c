/*
 * loop.c - benchmark loops (loop.h, docs/loops.md): the collective's
 * program repeated as nccl-tests (src/common.cu: warm-up iterations, then
 * the timed loop) and the OSU micro-benchmarks (osu_util: skip, then
 * iterations) repeat their calls, timed per iteration by the executor's
 * spans and validated per iteration.
 *
 * Layout of the loop program, in op ids (the ids are the program's order,
 * core/program.h, so each copy keeps the body's order and its times):
 *   [iteration 0's ops][its joins][between's ops][its joins][iteration 1] ...
 * A join is a calc of zero ticks and zero bytes on one rank, after every
 * op of that rank in the part before it; the first ops of the next part on
 * that rank (those without a dependency of their own) come after it.  So a
 * rank goes on as soon as it is done, whatever the others do: the overlap
 * between iterations is the simulation's, not an assumption.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/loop.h"
#include "coll/check.h"
#include "core/checked.h"
#include "core/suggest.h"
#include "core/units.h"

/* An iteration's checker: made when its first message leaves, verified and
 * freed when its last data recv is done (or at the end). */
enum { CHECK_NONE, CHECK_LIVE, CHECK_DONE };
typedef struct loop_check {
    cs_coll_check_t *check;
    int64_t recvs_done;
    int state;
} loop_check_t;

struct cs_loop {
    cs_program_t *body, *odd, *between, *prog;
    int64_t odd_at;
    int64_t warmup, iterations, total;
    char between_name[96];
    cs_loop_style_t style;
    /* parts: ops [first[s], end[s]) (joins excluded); iter[s]: the
     * iteration, or -1 for the program between iterations */
    int32_t nparts;
    int32_t *first, *end;
    int64_t *iter;
    int64_t *part_of_iter;   /* total entries: the part of each iteration */
    /* validation */
    const cs_coll_args_t *args;
    uint64_t seed;
    loop_check_t *checks;    /* total entries, NULL without validation */
    int64_t recvs_body, recvs_odd; /* data recvs of one iteration */
    cs_exec_observer_t obs;
    int fail_code;
    char fail_msg[CS_ERROR_MSG_MAX];
    /* results */
    int64_t *start, *stop;
    cs_result_loop_t res;
};

/* ---- options ----------------------------------------------------------------- */

void cs_loop_spec_init(cs_loop_spec_t *s)
{
    memset(s, 0, sizeof *s);
    s->warmup = -1;
}

const char *cs_loop_style_name(cs_loop_style_t s)
{
    return s == CS_LOOP_STYLE_NCCL ? "nccl-tests" : s == CS_LOOP_STYLE_OSU ? "osu" : "custom";
}

/* A count of iterations from text: lo..CS_LOOP_MAX_ITERATIONS. */
static int loop_count(const char *opt, const char *text, int64_t lo, int64_t *out,
                      cs_error_t *err)
{
    cs_error_t e;
    int64_t v;
    if (cs_units_parse_int(text, &v, &e) != CS_OK)
        return cs_error_set(err, CS_ERR_USAGE, "%s: %s", opt, e.msg);
    if (v < lo || v > CS_LOOP_MAX_ITERATIONS)
        return cs_error_set(err, CS_ERR_USAGE, "%s %s: expected %lld to %d iterations%s", opt,
                            text, (long long)lo, CS_LOOP_MAX_ITERATIONS,
                            lo ? " (or 'default': nccl-tests' 20)" : "");
    *out = v;
    return CS_OK;
}

int cs_loop_set(cs_loop_spec_t *s, const char *key, const char *value, cs_error_t *err)
{
    int64_t v;
    int rc;
    if (!strcmp(key, "iterations")) {
        if (!strcmp(value, "default")) {
            s->iterations = 0;
            if (s->style != CS_LOOP_STYLE_OSU)
                s->style = CS_LOOP_STYLE_NCCL;
            return CS_OK;
        }
        if ((rc = loop_count("--iterations", value, 1, &v, err)))
            return rc;
        s->iterations = v;
        if (s->style == CS_LOOP_STYLE_NONE)
            s->style = CS_LOOP_STYLE_CUSTOM;
        return CS_OK;
    }
    if (!strcmp(key, "warmup")) {
        if ((rc = loop_count("--warmup", value, 0, &v, err)))
            return rc;
        s->warmup = v;
        if (s->style == CS_LOOP_STYLE_NONE)
            s->style = CS_LOOP_STYLE_CUSTOM;
        return CS_OK;
    }
    if (!strcmp(key, "between")) {
        if (!strcmp(value, "none")) {
            s->barrier = 0;
            s->barrier_algo = NULL;
        } else if (!strcmp(value, "barrier")) {
            s->barrier = 1;
            s->barrier_algo = NULL;
        } else if (!strncmp(value, "barrier:", 8) && value[8]) {
            s->barrier = 1;
            s->barrier_algo = value + 8;
        } else {
            return cs_error_set(err, CS_ERR_USAGE, "--between '%s': expected none, barrier or "
                                "barrier:ALGO (a barrier algorithm of 'collsim list algorithms')",
                                value);
        }
        if (s->style == CS_LOOP_STYLE_NONE)
            s->style = CS_LOOP_STYLE_CUSTOM;
        return CS_OK;
    }
    if (!strcmp(key, "loop")) {
        if (!strcmp(value, "nccl-tests") || !strcmp(value, "nccl"))
            s->style = CS_LOOP_STYLE_NCCL;
        else if (!strcmp(value, "osu"))
            s->style = CS_LOOP_STYLE_OSU;
        else {
            static const char *const styles[] = {"nccl-tests", "osu", NULL};
            char hint[96];
            cs_suggest_t sg;
            cs_suggest_init(&sg, value);
            cs_suggest_add_list(&sg, styles);
            return cs_error_set(err, CS_ERR_USAGE, "--loop '%s'%s: expected nccl-tests (%d "
                                "warm-up + %d timed) or osu (%d + %d up to %d bytes, %d + %d "
                                "above)", value, cs_suggest_hint(&sg, "'", hint, sizeof hint),
                                CS_LOOP_NCCL_WARMUP, CS_LOOP_NCCL_ITERATIONS,
                                CS_LOOP_OSU_WARMUP, CS_LOOP_OSU_ITERATIONS,
                                CS_LOOP_OSU_LARGE_BYTES, CS_LOOP_OSU_WARMUP_LARGE,
                                CS_LOOP_OSU_ITERATIONS_LARGE);
        }
        return CS_OK;
    }
    return cs_error_set(err, CS_ERR_INTERNAL, "loop: unknown key '%s'", key);
}

void cs_loop_counts(const cs_loop_spec_t *s, int64_t bytes, int64_t *warmup, int64_t *iterations)
{
    int64_t w = CS_LOOP_NCCL_WARMUP, n = CS_LOOP_NCCL_ITERATIONS;
    if (s->style == CS_LOOP_STYLE_OSU) {
        int large = bytes > CS_LOOP_OSU_LARGE_BYTES; /* OSU: size > LARGE_MESSAGE_SIZE */
        w = large ? CS_LOOP_OSU_WARMUP_LARGE : CS_LOOP_OSU_WARMUP;
        n = large ? CS_LOOP_OSU_ITERATIONS_LARGE : CS_LOOP_OSU_ITERATIONS;
    }
    *warmup = s->warmup >= 0 ? s->warmup : w;
    *iterations = s->iterations > 0 ? s->iterations : n;
}

/* ---- the loop program --------------------------------------------------------- */

/* The tags of q: their range, or an error for a recv of any tag. */
static int loop_tags(const cs_program_t *q, int32_t *lo, int32_t *hi, cs_error_t *err)
{
    int32_t n = cs_program_nops(q);
    *lo = INT32_MAX;
    *hi = -1;
    for (int32_t j = 0; j < n; j++) {
        const cs_op_t *o = cs_program_op(q, j);
        if (o->kind == CS_OP_CALC)
            continue;
        if (o->tag == CS_ANY)
            return cs_error_set(err, CS_ERR_USAGE, "a loop needs exact tags, and rank %d's op "
                                "%d receives any tag: iterations could not be kept apart",
                                o->rank, j);
        if (o->tag < *lo)
            *lo = o->tag;
        if (o->tag > *hi)
            *hi = o->tag;
    }
    if (*hi < 0)
        *lo = *hi = 0;
    return CS_OK;
}

/* Ops of q plus one join per rank that has ops. */
static int64_t loop_part_ops(const cs_program_t *q, uint8_t *seen)
{
    int32_t n = cs_program_nops(q);
    int ranks = cs_program_nranks(q), joins = 0;
    memset(seen, 0, (size_t)ranks);
    for (int32_t j = 0; j < n; j++) {
        int r = cs_program_op(q, j)->rank;
        joins += !seen[r];
        seen[r] = 1;
    }
    return (int64_t)n + joins;
}

/* Appends a copy of q to l->prog with tags moved by `shift`, after the
 * joins in join[] (-1: none), and makes the new joins in join[]. */
static void loop_append(cs_loop_t *l, const cs_program_t *q, int32_t shift, int32_t *join,
                        int32_t *first, int32_t *end)
{
    cs_program_t *p = l->prog;
    int32_t n = cs_program_nops(q), base = cs_program_nops(p);
    int ranks = cs_program_nranks(q);
    for (int32_t j = 0; j < n; j++)
        cs_program_copy_op(p, q, j, NULL, shift, -1); /* an error stays in p for finalize */
    for (int32_t j = 0; j < n; j++) {
        int np;
        const cs_dep_t *pred = cs_program_preds(q, j, &np);
        for (int k = 0; k < np; k++)
            cs_program_dep(p, base + j, base + cs_dep_op(pred[k]), cs_dep_kind(pred[k]));
        if (np == 0 && join[cs_program_op(q, j)->rank] >= 0)
            cs_program_dep(p, base + j, join[cs_program_op(q, j)->rank], CS_DEP_AFTER);
    }
    *first = base;
    *end = base + n;
    /* the joins: a rank with ops in q gets a new one after all of them */
    int32_t *fresh = cs_malloc((size_t)ranks * sizeof *fresh);
    for (int r = 0; r < ranks; r++)
        fresh[r] = -1;
    for (int32_t j = 0; j < n; j++) {
        int r = cs_program_op(q, j)->rank;
        if (fresh[r] < 0)
            fresh[r] = cs_program_calc(p, r, 0, 0);
        if (fresh[r] >= 0)
            cs_program_dep(p, fresh[r], base + j, CS_DEP_AFTER);
    }
    for (int r = 0; r < ranks; r++)
        if (fresh[r] >= 0)
            join[r] = fresh[r];
    free(fresh);
}

static const cs_program_t *loop_body_of(const cs_loop_t *l, int64_t it)
{
    return l->odd && it == l->odd_at ? l->odd : l->body;
}

void cs_loop_free(cs_loop_t *l)
{
    if (!l)
        return;
    if (l->checks)
        for (int64_t i = 0; i < l->total; i++)
            cs_coll_check_free(l->checks[i].check);
    free(l->checks);
    cs_program_free(l->body);
    cs_program_free(l->odd);
    cs_program_free(l->between);
    cs_program_free(l->prog);
    free(l->first);
    free(l->end);
    free(l->iter);
    free(l->part_of_iter);
    free(l->start);
    free(l->stop);
    free(l);
}

static void loop_parts_free(cs_loop_parts_t *parts)
{
    cs_program_free(parts->body);
    cs_program_free(parts->odd);
    cs_program_free(parts->between);
    parts->body = parts->odd = parts->between = NULL;
}

int cs_loop_new(cs_loop_parts_t *parts, cs_loop_t **out, cs_error_t *err)
{
    cs_loop_t *l;
    int ranks = cs_program_nranks(parts->body), rc;
    int64_t total = parts->warmup + parts->iterations, ops = 0, per[3], tags = 0;
    int32_t lo[3], hi[3];
    const cs_program_t *q3[3] = {parts->body, parts->odd, parts->between};
    uint8_t *seen;

    *out = NULL;
    if (parts->iterations < 1 || parts->warmup < 0 || parts->iterations > CS_LOOP_MAX_ITERATIONS ||
        parts->warmup > CS_LOOP_MAX_ITERATIONS ||
        (parts->odd && (parts->odd_at < 0 || parts->odd_at >= total))) {
        loop_parts_free(parts);
        return cs_error_set(err, CS_ERR_INTERNAL, "loop: %lld warm-up and %lld timed iterations "
                            "outside the checked range", (long long)parts->warmup,
                            (long long)parts->iterations);
    }
    for (int k = 0; k < 3; k++)
        if (q3[k] && cs_program_nranks(q3[k]) != ranks) {
            loop_parts_free(parts);
            return cs_error_set(err, CS_ERR_INTERNAL, "loop: parts of different ranks");
        }
    /* the sizes first, from the parts alone: nothing proportional to the
     * counts is allocated before they pass */
    seen = cs_malloc((size_t)ranks + 1);
    for (int k = 0; k < 3; k++) {
        per[k] = q3[k] ? loop_part_ops(q3[k], seen) : 0;
        lo[k] = hi[k] = 0;
        if (q3[k] && (rc = loop_tags(q3[k], &lo[k], &hi[k], err))) {
            free(seen);
            loop_parts_free(parts);
            return rc;
        }
    }
    free(seen);
    ops = per[0] * total + (parts->odd ? per[1] - per[0] : 0) + per[2] * (total - 1);
    for (int k = 0; k < 3; k++) /* tag ranges: one per part, summed the same way */
        if (q3[k])
            tags += ((int64_t)hi[k] - lo[k] + 1) * (k == 2 ? total - 1 : k == 1 ? 1 : total);
    if (ops > parts->max_ops) {
        loop_parts_free(parts);
        return cs_error_set(err, CS_ERR_RANGE,
                            "--iterations: %lld iterations of %lld ops (a join per rank "
                            "included)%s make %lld ops, above "
                            "the limit of %lld (docs/limits.md); fewer iterations, or --force",
                            (long long)total, (long long)per[0],
                            parts->between ? " (and the barriers between)" : "",
                            (long long)ops, (long long)parts->max_ops);
    }
    if (tags > INT32_MAX) {
        loop_parts_free(parts);
        return cs_error_set(err, CS_ERR_RANGE, "--iterations: %lld iterations need %lld tags, "
                            "above 2^31 (each iteration's tags are kept apart); fewer "
                            "iterations", (long long)total, (long long)tags);
    }

    l = cs_calloc(1, sizeof *l);
    l->body = parts->body;
    l->odd = parts->odd;
    l->odd_at = parts->odd_at;
    l->between = parts->between;
    parts->body = parts->odd = parts->between = NULL;
    l->warmup = parts->warmup;
    l->iterations = parts->iterations;
    l->total = total;
    l->style = parts->style;
    snprintf(l->between_name, sizeof l->between_name, "%s",
             l->between && parts->between_name ? parts->between_name : "none");
    l->nparts = (int32_t)(total + (l->between ? total - 1 : 0));
    l->first = cs_malloc((size_t)l->nparts * sizeof *l->first);
    l->end = cs_malloc((size_t)l->nparts * sizeof *l->end);
    l->iter = cs_malloc((size_t)l->nparts * sizeof *l->iter);
    l->part_of_iter = cs_malloc((size_t)total * sizeof *l->part_of_iter);
    l->start = cs_malloc((size_t)total * sizeof *l->start);
    l->stop = cs_malloc((size_t)total * sizeof *l->stop);

    l->prog = cs_program_new(ranks);
    cs_program_set_limits(l->prog, (int32_t)(ops < CS_PROGRAM_MAX_OPS ? ops : CS_PROGRAM_MAX_OPS),
                          CS_PROGRAM_MAX_DEPS);
    cs_program_set_time_unit(l->prog, cs_program_time_unit(l->body));
    if (cs_program_source(l->body))
        cs_program_set_source(l->prog, cs_program_source(l->body));
    int32_t *join = cs_malloc((size_t)ranks * sizeof *join), next_tag = 0;
    for (int r = 0; r < ranks; r++)
        join[r] = -1;
    int32_t s = 0;
    for (int64_t it = 0; it < total; it++) {
        int k = l->odd && it == l->odd_at ? 1 : 0;
        l->iter[s] = it;
        l->part_of_iter[it] = s;
        loop_append(l, q3[k], next_tag - lo[k], join, &l->first[s], &l->end[s]);
        next_tag += hi[k] - lo[k] + 1;
        s++;
        if (l->between && it + 1 < total) {
            l->iter[s] = -1;
            loop_append(l, l->between, next_tag - lo[2], join, &l->first[s], &l->end[s]);
            next_tag += hi[2] - lo[2] + 1;
            s++;
        }
    }
    free(join);
    if ((rc = cs_program_finalize(l->prog, err))) {
        cs_error_prefix(err, "loop");
        cs_loop_free(l);
        return rc;
    }
    *out = l;
    return CS_OK;
}

const cs_program_t *cs_loop_program(const cs_loop_t *l) { return l->prog; }

/* ---- validation: one checker per iteration ------------------------------------ */

static int64_t loop_data_recvs(const cs_program_t *q)
{
    int64_t n = 0;
    for (int32_t j = 0; j < cs_program_nops(q); j++)
        n += cs_program_op(q, j)->kind == CS_OP_RECV && cs_program_data(q, j) != NULL;
    return n;
}

/* The part that op belongs to (the last part starting at or before it). */
static int32_t loop_part(const cs_loop_t *l, int32_t op)
{
    int32_t lo = 0, hi = l->nparts;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (l->first[mid] <= op)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static void loop_fail(cs_loop_t *l, int code, int64_t it, const char *msg)
{
    char head[160];
    if (l->fail_code)
        return;
    l->fail_code = code;
    if (it < l->warmup)
        snprintf(head, sizeof head, "iteration %lld of %lld (warm-up %lld of %lld): ",
                 (long long)it + 1, (long long)l->total, (long long)it + 1, (long long)l->warmup);
    else
        snprintf(head, sizeof head, "iteration %lld of %lld (timed %lld of %lld): ",
                 (long long)it + 1, (long long)l->total, (long long)(it - l->warmup + 1),
                 (long long)l->iterations);
    /* the checker's message is cut to what fits after the iteration */
    snprintf(l->fail_msg, sizeof l->fail_msg, "%s%.*s", head,
             (int)(sizeof l->fail_msg - strlen(head) - 1), msg);
}

/* Verifies iteration it's checker and frees it. */
static void loop_verify(cs_loop_t *l, int64_t it)
{
    loop_check_t *c = &l->checks[it];
    cs_error_t e;
    if (c->state == CHECK_DONE)
        return;
    if (c->state == CHECK_NONE) { /* no message left (a run of one rank) */
        if (cs_coll_check_new(l->args, loop_body_of(l, it), l->seed, &c->check, &e)) {
            loop_fail(l, e.code, it, e.msg);
            c->state = CHECK_DONE;
            return;
        }
    }
    if (cs_coll_check_verify(c->check, &e))
        loop_fail(l, e.code, it, e.msg);
    cs_coll_check_free(c->check);
    c->check = NULL;
    c->state = CHECK_DONE;
}

static uint64_t loop_on_send(void *ctx, int32_t op, int src, const cs_data_t *d)
{
    cs_loop_t *l = ctx;
    int32_t s = loop_part(l, op);
    int64_t it = s >= 0 ? l->iter[s] : -1;
    loop_check_t *c;
    cs_error_t e;
    if (it < 0 || op >= l->end[s])
        return 0;
    c = &l->checks[it];
    if (c->state == CHECK_NONE) {
        if (cs_coll_check_new(l->args, loop_body_of(l, it), l->seed, &c->check, &e)) {
            loop_fail(l, e.code, it, e.msg);
            c->state = CHECK_DONE;
            return 0;
        }
        c->state = CHECK_LIVE;
    }
    if (c->state != CHECK_LIVE)
        return 0;
    const cs_exec_observer_t *o = cs_coll_check_observer(c->check);
    uint64_t tok = o->send_start(o->ctx, op - l->first[s], src, d);
    CS_ASSERT(tok <= UINT32_MAX); /* a snapshot's index: the iteration goes above it */
    return ((uint64_t)(it + 1) << 32) | tok;
}

static void loop_on_recv(void *ctx, int32_t op, int dst, const cs_data_t *rd, const cs_data_t *sd,
                         uint64_t token)
{
    cs_loop_t *l = ctx;
    int32_t s = loop_part(l, op);
    int64_t it = s >= 0 ? l->iter[s] : -1, from = (int64_t)(token >> 32) - 1;
    loop_check_t *c;
    if (it < 0 || op >= l->end[s])
        return;
    c = &l->checks[it];
    if (from != it) {
        char msg[160];
        snprintf(msg, sizeof msg, "rank %d's recv (op %d) took a message of iteration %lld", dst,
                 op - l->first[s], (long long)from + 1);
        loop_fail(l, CS_ERR_VALIDATE, it, msg);
        return;
    }
    if (c->state != CHECK_LIVE)
        return;
    const cs_exec_observer_t *o = cs_coll_check_observer(c->check);
    o->recv_done(o->ctx, op - l->first[s], dst, rd, sd, token & UINT32_MAX);
    if (++c->recvs_done == (loop_body_of(l, it) == l->odd ? l->recvs_odd : l->recvs_body))
        loop_verify(l, it); /* nothing of this iteration moves any more */
}

void cs_loop_validate(cs_loop_t *l, const cs_coll_args_t *a, uint64_t seed)
{
    l->args = a;
    l->seed = seed;
    l->checks = cs_calloc((size_t)l->total, sizeof *l->checks);
    l->recvs_body = loop_data_recvs(l->body);
    l->recvs_odd = l->odd ? loop_data_recvs(l->odd) : 0;
    l->obs = (cs_exec_observer_t){l, loop_on_send, loop_on_recv};
}

int cs_loop_validating(const cs_loop_t *l) { return l->checks != NULL; }

void cs_loop_exec_opts(cs_loop_t *l, cs_exec_opts_t *opts)
{
    opts->span_first = l->first;
    opts->span_end = l->end;
    opts->nspans = l->nparts;
    if (l->checks)
        opts->observer = &l->obs;
}

/* ---- times ------------------------------------------------------------------------ */

int cs_loop_finish(cs_loop_t *l, const cs_exec_result_t *r, cs_error_t *err)
{
    cs_result_loop_t *o = &l->res;
    int64_t prev = 0, last = 0;
    double sum = 0; /* up to 2^20 iterations of up to 2^62 ticks: beyond int64 */
    CS_ASSERT(r->spans && r->nspans == l->nparts);
    for (int64_t it = 0; it < l->total; it++) {
        const cs_op_times_t *t = &r->spans[l->part_of_iter[it]];
        /* an iteration without ops (one rank) takes no time where it is */
        l->start[it] = t->start >= 0 ? t->start : prev;
        l->stop[it] = t->end >= 0 ? t->end : l->start[it];
        prev = l->stop[it];
    }
    memset(o, 0, sizeof *o);
    o->iterations = l->iterations;
    o->warmup = l->warmup;
    o->between = l->between_name;
    o->style = cs_loop_style_name(l->style);
    o->start = l->start;
    o->end = l->stop;
    o->first_ticks = l->stop[0] - l->start[0];
    o->iteration_min_ticks = INT64_MAX;
    for (int64_t it = l->warmup; it < l->total; it++) {
        int64_t d = l->stop[it] - l->start[it];
        sum += (double)d;
        if (l->stop[it] > last)
            last = l->stop[it];
        if (d < o->iteration_min_ticks)
            o->iteration_min_ticks = d;
        if (d > o->iteration_max_ticks)
            o->iteration_max_ticks = d;
    }
    o->iteration_avg_ticks = sum / (double)l->iterations;
    /* nccl-tests stops its timer when every rank is done: the latest end
     * of any timed iteration (one rank may end iteration k after another
     * ended k+1); the first timed iteration starts first, as each rank
     * starts iteration k+1 after its own k */
    o->timed_ticks = last - l->start[l->warmup];
    o->avg_ticks = (double)o->timed_ticks / (double)l->iterations;
    if (l->checks)
        for (int64_t it = 0; it < l->total; it++)
            loop_verify(l, it);
    if (l->fail_code)
        return cs_error_set(err, l->fail_code, "%s", l->fail_msg);
    return CS_OK;
}

const cs_result_loop_t *cs_loop_result(const cs_loop_t *l) { return &l->res; }
