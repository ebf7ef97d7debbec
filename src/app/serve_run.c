/*
 * serve_run.c - the runs of a `collsim serve` job, on a worker thread
 * (docs/api.md): each point goes through the request path of src/api as
 * `collsim run` takes it (prepare -> build -> run; a comparison's machine
 * through api/compare.c as `collsim compare` runs it), with the executor's
 * poll callback reporting progress and enforcing --max-seconds, and the
 * cancel flag of DELETE.  The runs are kept for the figures; the result is
 * the document the command line writes (api/report.h, api/compare.h,
 * api/sweep.h).  Programs and traces sent as text are written to the
 * server's folder for the readers and removed at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/compare.h"
#include "api/figures.h"
#include "api/replay.h"
#include "api/report.h"
#include "api/request.h"
#include "api/sweep.h"
#include "app/serve_internal.h"
#include "coll/coll.h"
#include "machines/machine.h"

static void serve_run_destroy(cs_serve_run_t *r)
{
    cs_request_run_destroy(&r->run);
    cs_replay_run_destroy(&r->replay);
}

void cs_serve_job_drop_runs(cs_serve_job_t *j)
{
    for (int i = 0; i < j->nruns; i++)
        serve_run_destroy(&j->runs[i]);
    free(j->runs);
    j->runs = NULL;
    j->nruns = 0;
    cs_machine_free(j->shared);
    j->shared = NULL;
}

void cs_serve_job_free(cs_serve_job_t *j)
{
    cs_serve_job_drop_runs(j);
    cs_serve_body_destroy(&j->body);
    free(j->result);
    free(j);
}

/* The executor's progress callback: the job's share done, its wall-clock
 * limit. */
typedef struct serve_poll {
    cs_serve_job_t *job;
    int point, npoints;
} serve_poll_t;

static void serve_poll(void *ctx, cs_tick_t now, int32_t done_ops, int32_t nops, uint64_t events)
{
    serve_poll_t *p = ctx;
    cs_serve_job_t *j = p->job;
    (void)now;
    (void)events;
    double frac = nops > 0 ? (double)done_ops / nops : 0;
    pthread_mutex_lock(&j->s->mu);
    j->progress = (p->point + frac) / p->npoints;
    if (cs_serve_now() - j->t_start > j->s->lim.max_seconds) {
        j->timed_out = 1;
        j->cancel = 1;
    }
    pthread_mutex_unlock(&j->s->mu);
}

/* Writes text to a new file of the server's folder (programs and traces
 * are read from files by the request path). */
static int serve_write_temp(cs_serve_t *s, const char *name, const char *text, size_t len,
                            char *path, size_t plen, cs_error_t *err)
{
    snprintf(path, plen, "%s/%s", s->tmpdir, name);
    FILE *f = fopen(path, "wx");
    if (!f)
        return cs_error_set(err, CS_ERR_IO, "cannot write a temporary file");
    size_t w = fwrite(text, 1, len, f);
    if (fclose(f) != 0 || w != len) {
        unlink(path);
        return cs_error_set(err, CS_ERR_IO, "cannot write a temporary file");
    }
    return CS_OK;
}

/* An error about a temporary file names it as the request's text
 * (SERVE_SOURCE), wherever the path appears in the message. */
static void serve_unpath(cs_error_t *e, const char *path)
{
    char out[CS_ERROR_MSG_MAX];
    size_t n = 0, pl = strlen(path), sl = strlen(SERVE_SOURCE);
    for (const char *m = e->msg; *m && n + sl + 1 < sizeof out;) {
        if (pl && !strncmp(m, path, pl)) {
            memcpy(out + n, SERVE_SOURCE, sl);
            n += sl;
            m += pl;
        } else {
            out[n++] = *m++;
        }
    }
    out[n] = '\0';
    memcpy(e->msg, out, n + 1);
}

/* A TI trace in the combined form only: its first meaningful line reads
 * `<rank> <word>`; an index (a line naming a file) would open paths. */
static int serve_ti_combined(const char *t)
{
    while (*t) {
        const char *e = strchr(t, '\n');
        size_t n = e ? (size_t)(e - t) : strlen(t);
        const char *p = t;
        while (p < t + n && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p < t + n && *p != '#') {
            if (*p < '0' || *p > '9')
                return 0;
            while (p < t + n && *p >= '0' && *p <= '9')
                p++;
            return p < t + n && (*p == ' ' || *p == '\t');
        }
        t = e ? e + 1 : t + n;
    }
    return 0;
}

/* The request of point i of job j (strings borrowed from the body). */
static void serve_point_request(const cs_serve_job_t *j, int i, cs_request_t *r, char *bytes,
                                char *ranks, char *root)
{
    const cs_serve_body_t *b = &j->body;
    const cs_serve_point_t *pt = &b->points[i];
    cs_error_t e;
    cs_request_init(r);
    r->machine = b->machine[pt->machine];
    r->env = &j->env;
    r->coll = b->coll;
    r->algo = pt->algo;
    r->order = b->order;
    r->validate = b->validate;
    if (b->mode)
        cs_request_set(r, "mode", b->mode, &e);
    if (b->coll) {
        snprintf(bytes, 32, "%lld", (long long)pt->bytes);
        cs_request_set(r, "bytes", bytes, &e);
    }
    if (pt->ranks > 0) {
        snprintf(ranks, 32, "%lld", (long long)pt->ranks);
        cs_request_set(r, "ranks", ranks, &e);
    }
    if (b->has_root) {
        snprintf(root, 32, "%lld", (long long)b->root);
        cs_request_set(r, "root", root, &e);
    }
    static const char *const loop_keys[] = CS_SERVE_LOOP_KEYS;
    for (int k = 0; k < 4; k++) /* checked when the body was read */
        if (b->loop[k])
            cs_request_set(r, loop_keys[k], b->loop[k], &e);
    for (int k = 0; k < b->nopts; k++) {
        /* a sweep's options may be scoped to one algorithm, as on the
         * command line (ALGO:KEY=VALUE) */
        char scope[128];
        const char *kv = b->opts[k], *name = NULL;
        if (b->kind == CS_SERVE_SWEEP)
            name = cs_sweep_opt_scope(b->opts[k], &kv, scope, sizeof scope);
        if (!name || !strcmp(name, pt->algo))
            cs_request_add_opt(r, kv, &e);
    }
}

/* Adds to opts what the server needs of a run: progress, cancel, the
 * figures' buckets and (small programs) op times. */
static void serve_figure_opts(cs_serve_run_t *sr, const cs_machine_t *m, serve_poll_t *poll,
                              cs_exec_opts_t *opts)
{
    int nb = cs_figures_bucket_count(m);
    opts->bucket_width = 1;
    opts->max_buckets = nb < SERVE_MAX_BUCKETS ? nb : SERVE_MAX_BUCKETS;
    sr->timeline = cs_program_nops(sr->prog) <= SERVE_TIMELINE_MAX_OPS;
    opts->record_messages = sr->timeline;
    opts->record_op_times = sr->timeline;
    opts->poll = serve_poll;
    opts->poll_ctx = poll;
    opts->cancel = &poll->job->cancel;
    opts->max_work = CS_EXEC_WORK_LIMIT; /* never --force from a request */
}

/* Whether a run fits the server: the ranks it takes (every node of the
 * machine when the request names none) within --max-ranks. */
static int serve_check_ranks(const cs_serve_job_t *j, const cs_machine_t *m, int64_t P,
                             cs_serve_fail_t *f)
{
    if (P > j->s->lim.max_ranks)
        return cs_serve_fail(f, 422, "ranks", CS_ERR_RANGE,
                             "%lld ranks on machine '%s' (%d nodes): more than the server's "
                             "limit of %lld (--max-ranks); give \"ranks\"", (long long)P,
                             m->spec, cs_machine_nodes(m), (long long)j->s->lim.max_ranks);
    return CS_OK;
}

/* What a run that ended well keeps for the figures. */
static void serve_run_finish(const cs_serve_job_t *j, cs_serve_run_t *sr)
{
    const cs_machine_t *m = sr->run.machine;
    const cs_serve_body_t *b = &j->body;
    sr->ranks = cs_program_nranks(sr->prog);
    sr->seconds = (double)sr->run.result.finish * m->tick_seconds;
    cs_figures_machine_short(m, sr->name, sizeof sr->name);
    cs_figures_run_title(m, sr->coll, b->kind == CS_SERVE_REPLAY ? "trace" :
                         b->program ? "program" : NULL, sr->ranks, sr->title, sizeof sr->title);
}

/* What the figures read of a run the request path built: its program,
 * collective (NULL for a program) and placement. */
static void serve_run_built(cs_serve_run_t *sr)
{
    sr->prog = sr->run.program;
    sr->coll = sr->run.is_coll ? &sr->run.coll : NULL;
    sr->rank_to_node = sr->run.coll.rank_to_node;
}

/* cs_compare_run's hook: the machine's node count checked, then the
 * server's options (cs_compare_setup_fn). */
typedef struct serve_setup {
    cs_serve_job_t *job;
    cs_serve_run_t *sr;
    serve_poll_t *poll;
    cs_serve_fail_t *fail;
} serve_setup_t;

static int serve_prepared(void *ctx, const cs_request_run_t *run, cs_error_t *err)
{
    serve_setup_t *su = ctx;
    (void)err; /* the refusal goes to su->fail, whose cs_error_t err is */
    if (su->job->cancel) /* DELETE or the watchdog while the machine was built */
        return CS_ERR_CANCELLED;
    return serve_check_ranks(su->job, run->machine, run->coll.args.P, su->fail);
}

static void serve_setup(void *ctx, const cs_machine_t *m, cs_exec_opts_t *opts)
{
    serve_setup_t *su = ctx;
    serve_run_built(su->sr);
    serve_figure_opts(su->sr, m, su->poll, opts);
}

/* Runs point i of job j into sr. */
static int serve_run_point(cs_serve_job_t *j, int i, cs_serve_run_t *sr, cs_serve_fail_t *f)
{
    cs_serve_t *s = j->s;
    const cs_serve_body_t *b = &j->body;
    char bytes[32], ranks[32], root[32], path[512] = "";
    cs_request_t r;
    cs_exec_opts_t opts;
    serve_poll_t poll = {j, i, b->npoints};
    cs_error_t *e = &f->e;
    int rc;

    if (b->kind == CS_SERVE_COMPARE && b->points[i].ranks == 0) {
        /* like for like, as `collsim compare`: the most that every machine
         * holds, counted on machines built from the request's own files */
        int64_t P = cs_compare_common_ranks((const char *const *)j->body.machine,
                                            j->body.nmachines, &j->env, NULL);
        for (int k = 0; k < j->body.npoints; k++)
            j->body.points[k].ranks = P;
    }
    serve_point_request(j, i, &r, bytes, ranks, root);
    cs_request_run_init(&sr->run);
    f->http = 422;
    if (b->kind == CS_SERVE_SWEEP) {
        if (!j->shared && (rc = cs_machine_new_in(b->machine[0], &j->env, &j->shared, e)))
            return rc;
        rc = cs_request_prepare_on(&r, j->shared, &sr->run, e);
    } else if (b->kind == CS_SERVE_REPLAY) {
        rc = cs_machine_new_in(b->machine[0], &j->env, &sr->run.machine, e);
    } else if (b->kind == CS_SERVE_COMPARE) {
        /* `collsim compare`'s run of one machine, the server's options added */
        cs_compare_row_t row;
        serve_setup_t su = {j, sr, &poll, f};
        cs_compare_hooks_t hooks = {serve_prepared, serve_setup, &su};
        memset(&row, 0, sizeof row);
        rc = cs_compare_run(&r, b->machine[b->points[i].machine], 0, &hooks, &row, &sr->run, e);
        if (rc == CS_OK)
            serve_run_finish(j, sr);
        return rc;
    } else {
        /* a program's text goes to a file of the server's folder, the
         * request path reads it there (the name stays out of results) */
        if (b->program) {
            char name[64];
            snprintf(name, sizeof name, "program-%s.goal", j->id);
            if ((rc = serve_write_temp(s, name, b->program, strlen(b->program), path,
                                       sizeof path, e)))
                return rc;
            r.program = path;
        }
        rc = cs_request_prepare(&r, &sr->run, e);
    }
    if (rc) {
        if (path[0]) {
            unlink(path);
            serve_unpath(e, path);
        }
        return rc;
    }
    const cs_machine_t *m = sr->run.machine;
    if (j->cancel) /* DELETE or the watchdog while the machine was built */
        return CS_ERR_CANCELLED;
    if (sr->run.is_coll && (rc = serve_check_ranks(j, m, sr->run.coll.args.P, f)))
        return rc;
    if (b->kind == CS_SERVE_REPLAY) {
        cs_replay_t a;
        char name[64];
        cs_replay_init(&a);
        if (b->format_ti && !serve_ti_combined(b->trace))
            return cs_serve_fail(f, 400, "trace", CS_ERR_PARSE,
                                 "the TI trace must be a combined trace (`<rank> <action>` "
                                 "lines): an index names files, and the server opens none");
        snprintf(name, sizeof name, "trace-%s.%s", j->id, b->format_ti ? "ti" : "goal");
        if ((rc = serve_write_temp(s, name, b->trace, b->trace_len, path, sizeof path, e)))
            return rc;
        a.trace = path;
        a.format = cs_trace_format_find(b->format_ti ? "ti" : "goal");
        rc = cs_replay_load(&a, m, &sr->replay, e);
        unlink(path);
        if (rc) {
            serve_unpath(e, path);
            return rc;
        }
        /* not the temporary file's name: results must not depend on it */
        cs_program_set_source(sr->replay.p, SERVE_SOURCE);
        sr->prog = sr->replay.p;
        sr->rank_to_node = sr->replay.place.rank_to_node;
        cs_replay_exec_opts(&r, &sr->replay, &opts);
    } else {
        r.keep_program = 1; /* timelines on demand read every op (serve_prepare_exec) */
        rc = cs_request_build(&r, &sr->run, e);
        if (path[0])
            unlink(path);
        if (rc) {
            if (path[0])
                serve_unpath(e, path);
            return rc;
        }
        if (b->program)
            cs_program_set_source(sr->run.program, SERVE_SOURCE);
        serve_run_built(sr);
        cs_request_exec_opts(&r, &sr->run, &opts);
    }
    if (j->cancel) /* ... or while the program was built or read */
        return CS_ERR_CANCELLED;
    serve_figure_opts(sr, m, &poll, &opts);
    if (b->kind == CS_SERVE_REPLAY)
        rc = cs_request_exec(m, sr->prog, &opts, &sr->run.result, e);
    else
        rc = cs_request_run(&sr->run, &opts, e);
    if (rc)
        return rc;
    serve_run_finish(j, sr);
    return CS_OK;
}

/* The run JSON of `collsim run --json --no-timing` for sr. */
static int serve_run_json(FILE *f, const cs_serve_run_t *sr, cs_error_t *err)
{
    return cs_report_json(f, 0, sr->run.machine, sr->prog, &sr->run.result,
                          sr->run.validated, 0, sr->coll, err);
}

/* The result document of a job (docs/api.md). */
static int serve_result_doc(cs_serve_job_t *j, cs_error_t *err)
{
    const cs_serve_body_t *b = &j->body;
    FILE *f = open_memstream(&j->result, &j->result_len);
    int rc = CS_OK;
    if (!f)
        return cs_error_set(err, CS_ERR_OOM, "cannot open a memory stream");
    if (b->kind == CS_SERVE_RUN || b->kind == CS_SERVE_REPLAY) {
        rc = serve_run_json(f, &j->runs[0], err);
    } else if (b->kind == CS_SERVE_COMPARE) {
        cs_compare_json_begin(f, b->coll, b->points[0].algo, &b->bytes, 1);
        for (int i = 0; i < j->nruns && rc == CS_OK; i++)
            rc = cs_compare_json_run(f, i, 0, &j->runs[i].run, err);
        cs_compare_json_end(f);
    } else {
        cs_sweep_json_begin(f, b->machine[0], b->coll);
        for (int i = 0; i < j->nruns && rc == CS_OK; i++) {
            if (i)
                cs_sweep_json_next(f);
            const cs_serve_run_t *sr = &j->runs[i];
            rc = cs_sweep_json_point(f, 0, sr->run.machine, sr->prog, &sr->run.result,
                                     sr->run.validated, sr->coll, err);
        }
        cs_sweep_json_end(f);
    }
    if (fclose(f) != 0 && rc == CS_OK)
        rc = cs_error_set(err, CS_ERR_OOM, "cannot write the result to memory");
    return rc;
}

/* The field of the request a failed point's error is about, when the
 * refusal named none (docs/api.md: every error about a field names it):
 * derived here, in one place, from what the command line's message names -
 * the option it starts with ("--root 99 is outside ranks 0..7"), the
 * algorithm options' spec ("... in spec \"opts:k=2\""), a machine's spec,
 * one of the request's files ("net.edges:3: ..."), or the request's text
 * (SERVE_SOURCE: the program, the trace).  A message that names none of
 * them (the work limit) leaves the field empty. */
static void serve_fail_field(const cs_serve_job_t *j, int i, cs_serve_fail_t *f)
{
    static const char *const opts[][2] = {
        {"root", "root"}, {"ranks", "ranks"}, {"bytes", "bytes"}, {"opt", "opts"},
        {"order", "order"}, {"mode", "mode"}, {"coll", "coll"}, {"validate", "validate"},
        {"algo", "algo"}, {"machine", "machine"}, {"program", "program"},
        {"iterations", "iterations"}, {"warmup", "warmup"}, {"between", "between"},
        {"loop", "loop"},
    };
    const cs_serve_body_t *b = &j->body;
    const char *msg = f->e.msg, *field = NULL;
    if (f->field[0])
        return;
    if (!strncmp(msg, "--", 2)) {
        size_t n = strspn(msg + 2, "abcdefghijklmnopqrstuvwxyz-");
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !field; k++)
            if (strlen(opts[k][0]) == n && !strncmp(msg + 2, opts[k][0], n))
                field = opts[k][1];
    }
    /* a reader's error names the inline file first ("net.edges:3: ...") */
    for (int k = 0; k < cs_files_count(b->files) && !field; k++) {
        const char *name = cs_files_at(b->files, k)->name;
        size_t n = strlen(name);
        if (!strncmp(msg, name, n) && msg[n] == ':')
            field = "files";
    }
    if (!field && strstr(msg, "spec \"opts:"))
        field = "opts";
    else if (!field && strstr(msg, SERVE_SOURCE))
        field = b->kind == CS_SERVE_REPLAY ? "trace" : "program";
    else if (!field && (strstr(msg, "spec \"") || strstr(msg, "machine \"")))
        field = "machine";
    if (!field)
        return;
    if (!strcmp(field, "algo") && b->kind == CS_SERVE_SWEEP)
        field = "algos";
    if (!strcmp(field, "machine") && b->kind == CS_SERVE_COMPARE)
        snprintf(f->field, sizeof f->field, "machines[%d]", b->points[i].machine);
    else
        snprintf(f->field, sizeof f->field, "%s", field);
}

/* Runs job j on a worker thread (the mutex not held). */
void cs_serve_job_run(cs_serve_job_t *j)
{
    cs_serve_t *s = j->s;
    cs_serve_fail_t f;
    int rc = CS_OK;
    memset(&f, 0, sizeof f);
    j->env = (cs_machine_env_t){j->body.files, s->lim.max_nodes};
    j->runs = cs_calloc((size_t)j->body.npoints, sizeof *j->runs);
    for (int i = 0; i < j->body.npoints && rc == CS_OK; i++) {
        if (j->cancel) {
            rc = CS_ERR_CANCELLED;
            break;
        }
        j->nruns = i + 1;
        rc = serve_run_point(j, i, &j->runs[i], &f);
        if (rc && rc != CS_ERR_CANCELLED)
            serve_fail_field(j, i, &f);
        if (rc && j->body.kind == CS_SERVE_COMPARE && !strstr(f.e.msg, j->body.machine[i]))
            cs_error_prefix(&f.e, "%s", j->body.machine[i]);
    }
    /* a cancel by the wall-clock limit (serve_poll), between points or
     * within one, is a failure that says so */
    if (rc == CS_ERR_CANCELLED && j->timed_out)
        rc = cs_serve_fail(&f, 422, NULL, CS_ERR_CANCELLED, "the job ran longer than the "
                           "server's limit of %g s (--max-seconds)", s->lim.max_seconds);
    if (rc == CS_OK)
        rc = serve_result_doc(j, &f.e);
    /* a job that will not be done gives its memory back now, before it
     * shows as finished (t_end): expiry may free it from then on */
    pthread_mutex_lock(&s->mu);
    int abandoned = j->abandoned;
    j->finishing = !abandoned; /* the watchdog lets it end as it does */
    pthread_mutex_unlock(&s->mu);
    int cancelled = j->cancel && !j->timed_out;
    if (rc || cancelled || abandoned) {
        cs_serve_job_drop_runs(j);
        free(j->result);
        j->result = NULL;
        j->result_len = 0;
    }
    if (abandoned)
        return; /* its end was written when it was given up (serve_jobs.c) */
    pthread_mutex_lock(&s->mu);
    s->running--;
    if (j->state == CS_SERVE_CANCELLED || cancelled) {
        /* DELETE said cancelled: it stays so (a run that ended meanwhile
         * keeps its memory until expiry) */
        j->state = CS_SERVE_CANCELLED;
    } else if (rc) {
        j->state = CS_SERVE_FAILED;
        if (!f.http)
            f.http = 422;
        f.e.code = rc;
        j->fail = f;
    } else {
        j->state = CS_SERVE_DONE;
        j->progress = 1;
    }
    j->t_end = cs_serve_now();
    pthread_mutex_unlock(&s->mu);
}
