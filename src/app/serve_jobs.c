/*
 * serve_jobs.c - the jobs of `collsim serve` (docs/api.md): a table of jobs
 * behind one mutex, a FIFO queue of at most --max-queue jobs, --jobs worker
 * threads that run each job's points through the request path of src/api
 * (prepare -> build -> run, as `collsim run` does) and keep the runs for the
 * figures, a cache of done jobs keyed by the normalised request, and expiry.
 *
 * Hand-off to the event loop: the loop reads a job's state under the mutex
 * when a client asks (clients poll GET /api/jobs/ID), so a finished run
 * needs no wake-up.  Figures are the one reply that waits for a worker: a
 * finished figure goes on a done list and the worker activates one event of
 * the loop (event_active, thread-safe with evthread_use_pthreads), whose
 * callback sends the replies on the loop's thread, where evhttp must be
 * used.
 */
#include <event2/event.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/compare.h"
#include "api/figures.h"
#include "api/replay.h"
#include "api/report.h"
#include "api/request.h"
#include "api/sweep.h"
#include "app/serve.h"
#include "coll/coll.h"
#include "core/units.h"
#include "engine/net.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/result_json.h"
#include "io/timeline.h"
#include "machines/machine.h"

/* Time buckets kept per channel for the heatmaps' windows and the
 * timelines' link counters: at most this many per run (the command line's
 * budget, cs_figures_bucket_count, is for one run; a server keeps many). */
#define SERVE_MAX_BUCKETS 256
/* Runs whose program has more ops keep no op times (no timeline.json): 16
 * bytes an op. */
#define SERVE_TIMELINE_MAX_OPS (1 << 22)
/* The source name of a program or trace sent in a request (the command
 * line says "<stdin>" for standard input). */
#define SERVE_SOURCE "<request>"

/* One point of a job that ran, kept for its figures. */
typedef struct serve_run {
    cs_request_run_t run;      /* machine (owned, or the job's shared one), program, result */
    cs_replay_run_t replay;    /* a replay's program and placement */
    const cs_program_t *prog;
    const cs_request_coll_t *coll;
    const int32_t *rank_to_node;
    int timeline;              /* op times were recorded */
    char title[320];           /* the figures' title */
    char name[96];             /* the machine's short name */
    double seconds;
    int ranks;
} serve_run_t;

struct cs_serve_job {
    char id[17];
    cs_serve_body_t body;
    cs_serve_state_t state;
    volatile sig_atomic_t cancel;
    int timed_out;
    double progress;
    double t_submit, t_start, t_end;
    cs_serve_fail_t fail;
    char *result;
    size_t result_len;
    serve_run_t *runs;
    int nruns;
    cs_machine_t *shared;      /* a sweep's one machine */
    int refs;                  /* figures being drawn from it */
    int dead;                  /* out of the table: freed when refs is 0 */
    cs_serve_job_t *next;      /* the table, newest first */
    cs_serve_job_t *qnext;     /* the queue */
    cs_serve_t *s;
};

/* A figure to draw, then its answer. */
typedef struct serve_task {
    cs_serve_job_t *job;
    cs_serve_figreq_t q;
    cs_serve_figure_done_fn done;
    void *ctx;
    char *data;
    size_t len;
    cs_serve_fail_t fail;
    int failed;
    struct serve_task *next;
} serve_task_t;

struct cs_serve {
    cs_serve_limits_t lim;
    struct event_base *base;
    struct event *done_ev;
    char tmpdir[256];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *threads;
    int nthreads;
    cs_serve_job_t *jobs;
    cs_serve_job_t *qhead, *qtail;
    int queued, running;
    serve_task_t *thead, *ttail; /* figures to draw */
    serve_task_t *done;          /* figures drawn, for the loop */
    int stop;
    uint64_t seq, seed;
};

const char *cs_serve_state_name(cs_serve_state_t s)
{
    static const char *const names[] = {"queued", "running", "done", "failed", "cancelled"};
    return s >= 0 && s <= CS_SERVE_CANCELLED ? names[s] : "?";
}

static double serve_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int serve_finished(cs_serve_state_t s)
{
    return s == CS_SERVE_DONE || s == CS_SERVE_FAILED || s == CS_SERVE_CANCELLED;
}

/* ---- the runs of a job (worker threads) ---------------------------------- */

static void serve_run_destroy(serve_run_t *r)
{
    cs_request_run_destroy(&r->run);
    cs_replay_run_destroy(&r->replay);
}

static void serve_job_drop_runs(cs_serve_job_t *j)
{
    for (int i = 0; i < j->nruns; i++)
        serve_run_destroy(&j->runs[i]);
    free(j->runs);
    j->runs = NULL;
    j->nruns = 0;
    cs_machine_free(j->shared);
    j->shared = NULL;
}

static void serve_job_free(cs_serve_job_t *j)
{
    serve_job_drop_runs(j);
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
    if (serve_now() - j->t_start > j->s->lim.max_seconds) {
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
static void serve_figure_opts(serve_run_t *sr, const cs_machine_t *m, serve_poll_t *poll,
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

static int pt_machine(const cs_serve_body_t *b, int i)
{
    return b->points[i].machine;
}

/* What a run that ended well keeps for the figures. */
static void serve_run_finish(const cs_serve_job_t *j, serve_run_t *sr)
{
    const cs_machine_t *m = sr->run.machine;
    const cs_serve_body_t *b = &j->body;
    sr->ranks = cs_program_nranks(sr->prog);
    sr->seconds = (double)sr->run.result.finish * m->tick_seconds;
    cs_figures_machine_short(m, sr->name, sizeof sr->name);
    cs_figures_run_title(m, sr->coll, b->kind == CS_SERVE_REPLAY ? "trace" :
                         b->program ? "program" : NULL, sr->ranks, sr->title, sizeof sr->title);
}

/* cs_compare_run's hook: the machine's node count checked, then the
 * server's options (cs_compare_setup_fn). */
typedef struct serve_setup {
    cs_serve_job_t *job;
    serve_run_t *sr;
    serve_poll_t *poll;
    cs_serve_fail_t *fail;
} serve_setup_t;

static int serve_prepared(void *ctx, const cs_request_run_t *run, cs_error_t *err)
{
    serve_setup_t *su = ctx;
    (void)err; /* the refusal goes to su->fail, whose cs_error_t err is */
    return serve_check_ranks(su->job, run->machine, run->coll.args.P, su->fail);
}

static void serve_setup(void *ctx, const cs_machine_t *m, cs_exec_opts_t *opts)
{
    serve_setup_t *su = ctx;
    su->sr->prog = su->sr->run.program;
    su->sr->coll = su->sr->run.is_coll ? &su->sr->run.coll : NULL;
    su->sr->rank_to_node = su->sr->run.coll.rank_to_node;
    serve_figure_opts(su->sr, m, su->poll, opts);
}

/* Runs point i of job j into sr. */
static int serve_run_point(cs_serve_job_t *j, int i, serve_run_t *sr, cs_serve_fail_t *f)
{
    cs_serve_t *s = j->s;
    const cs_serve_body_t *b = &j->body;
    char bytes[32], ranks[32], root[32], path[512] = "";
    cs_request_t r;
    cs_exec_opts_t opts;
    serve_poll_t poll = {j, i, b->npoints};
    cs_error_t *e = &f->e;
    int rc;

    serve_point_request(j, i, &r, bytes, ranks, root);
    cs_request_run_init(&sr->run);
    f->http = 422;
    if (b->kind == CS_SERVE_SWEEP) {
        if (!j->shared && (rc = cs_machine_new(b->machine[0], &j->shared, e)))
            return rc;
        rc = cs_request_prepare_on(&r, j->shared, &sr->run, e);
    } else if (b->kind == CS_SERVE_REPLAY) {
        rc = cs_machine_new(b->machine[0], &sr->run.machine, e);
    } else if (b->kind == CS_SERVE_COMPARE) {
        /* `collsim compare`'s run of one machine, the server's options added */
        cs_compare_row_t row;
        serve_setup_t su = {j, sr, &poll, f};
        cs_compare_hooks_t hooks = {serve_prepared, serve_setup, &su};
        memset(&row, 0, sizeof row);
        rc = cs_compare_run(&r, b->machine[pt_machine(b, i)], 0, &hooks, &row, &sr->run, e);
        if (rc == CS_OK)
            serve_run_finish(j, sr);
        return rc;
    } else {
        rc = cs_request_prepare(&r, &sr->run, e);
    }
    if (rc)
        return rc;
    const cs_machine_t *m = sr->run.machine;
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
        a.format = b->format_ti ? CS_REPLAY_TI : CS_REPLAY_GOAL;
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
        if (b->program) {
            char name[64];
            snprintf(name, sizeof name, "program-%s.goal", j->id);
            if ((rc = serve_write_temp(s, name, b->program, strlen(b->program), path,
                                       sizeof path, e)))
                return rc;
            r.program = path;
        }
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
        sr->prog = sr->run.program;
        sr->coll = sr->run.is_coll ? &sr->run.coll : NULL;
        sr->rank_to_node = sr->run.coll.rank_to_node;
        cs_request_exec_opts(&r, &sr->run, &opts);
        if (m->type->net_new && b->kind == CS_SERVE_COMPARE)
            opts.mode = CS_NET_PACKET; /* as `collsim compare`: --mode is the channel engines' */
    }
    serve_figure_opts(sr, m, &poll, &opts);
    if (b->kind == CS_SERVE_REPLAY)
        rc = cs_request_exec(m, sr->prog, &opts, &sr->run.result, e);
    else
        rc = cs_request_run(&sr->run, &opts, e);
    if (rc == CS_ERR_CANCELLED && j->timed_out)
        cs_error_set(e, CS_ERR_CANCELLED, "the job ran longer than the server's limit of %g s "
                     "(--max-seconds)", s->lim.max_seconds);
    if (rc)
        return rc;
    serve_run_finish(j, sr);
    return CS_OK;
}

/* The run JSON of `collsim run --json --no-timing` for sr. */
static int serve_run_json(FILE *f, const serve_run_t *sr, cs_error_t *err)
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
        cs_compare_json_begin(f, b->coll, b->points[0].algo, b->bytes);
        for (int i = 0; i < j->nruns && rc == CS_OK; i++)
            rc = cs_compare_json_run(f, i, 0, &j->runs[i].run, err);
        cs_compare_json_end(f);
    } else {
        cs_sweep_json_begin(f, b->machine[0], b->coll);
        for (int i = 0; i < j->nruns && rc == CS_OK; i++) {
            if (i)
                cs_sweep_json_next(f);
            rc = serve_run_json(f, &j->runs[i], err);
        }
        cs_sweep_json_end(f);
    }
    if (fclose(f) != 0 && rc == CS_OK)
        rc = cs_error_set(err, CS_ERR_OOM, "cannot write the result to memory");
    return rc;
}

/* Runs job j on a worker thread (the mutex not held). */
static void serve_job_run(cs_serve_job_t *j)
{
    cs_serve_t *s = j->s;
    cs_serve_fail_t f;
    int rc = CS_OK;
    memset(&f, 0, sizeof f);
    j->runs = cs_calloc((size_t)j->body.npoints, sizeof *j->runs);
    for (int i = 0; i < j->body.npoints && rc == CS_OK; i++) {
        if (j->cancel) {
            rc = j->timed_out ? cs_serve_fail(&f, 422, NULL, CS_ERR_CANCELLED,
                                              "the job ran longer than the server's limit of "
                                              "%g s (--max-seconds)", s->lim.max_seconds)
                              : CS_ERR_CANCELLED;
            break;
        }
        j->nruns = i + 1;
        rc = serve_run_point(j, i, &j->runs[i], &f);
        if (rc && j->body.kind == CS_SERVE_COMPARE && !strstr(f.e.msg, j->body.machine[i]))
            cs_error_prefix(&f.e, "%s", j->body.machine[i]);
    }
    if (rc == CS_OK)
        rc = serve_result_doc(j, &f.e);
    /* a job that will not be done gives its memory back now, before it
     * shows as finished (t_end): expiry may free it from then on */
    int cancelled = j->cancel && !j->timed_out;
    if (rc || cancelled) {
        serve_job_drop_runs(j);
        free(j->result);
        j->result = NULL;
        j->result_len = 0;
    }
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
    j->t_end = serve_now();
    pthread_mutex_unlock(&s->mu);
}

/* ---- figures (worker threads) ----------------------------------------------- */

/* Reads and removes a file the worker wrote. */
static int serve_slurp(const char *path, char **data, size_t *len, cs_error_t *err)
{
    FILE *f = fopen(path, "rb");
    long n;
    *data = NULL;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        if (f)
            fclose(f);
        unlink(path);
        return cs_error_set(err, CS_ERR_IO, "cannot read the figure back");
    }
    *data = cs_malloc((size_t)n + 1);
    *len = fread(*data, 1, (size_t)n, f);
    fclose(f);
    unlink(path);
    return CS_OK;
}

static int serve_draw_plot(const cs_serve_job_t *j, const char *path, cs_error_t *err)
{
    const cs_serve_body_t *b = &j->body;
    int n = j->nruns, rc;
    char title[320], size[32];
    if (b->kind == CS_SERVE_COMPARE) {
        const char **labels = cs_calloc((size_t)n, sizeof *labels);
        char **texts = cs_calloc((size_t)n, sizeof *texts);
        double *values = cs_calloc((size_t)n, sizeof *values), lo = 1e300, hi = 0;
        for (int i = 0; i < n; i++) {
            labels[i] = j->runs[i].name;
            values[i] = j->runs[i].seconds * 1e6;
            texts[i] = cs_malloc(32);
            cs_units_format_seconds(j->runs[i].seconds, texts[i], 32);
            if (values[i] > 0) {
                lo = values[i] < lo ? values[i] : lo;
                hi = values[i] > hi ? values[i] : hi;
            }
        }
        cs_units_format_bytes(b->bytes, size, sizeof size);
        snprintf(title, sizeof title, "%s/%s, %s, on %d machines", b->coll, b->points[0].algo,
                 size, n);
        rc = cs_plot_write_bars(path, title, "time (\xc2\xb5s)", n, labels, values,
                                (const char *const *)texts, hi > 30 * lo, err);
        for (int i = 0; i < n; i++)
            free(texts[i]);
        free(texts);
        free(labels);
        free(values);
        return rc;
    }
    /* a sweep: one line per algorithm and rank count over the sizes */
    snprintf(title, sizeof title, "%s on %s (%s)", b->coll, b->machine[0], b->mode);
    cs_plot_t *p = cs_plot_new(title, "bytes", "time (ticks)", 1, 1);
    double *x = cs_malloc((size_t)n * sizeof *x), *y = cs_malloc((size_t)n * sizeof *y);
    for (int i = 0; i < n;) {
        int k = 0;
        const cs_serve_point_t *p0 = &b->points[i];
        char name[160];
        while (i + k < n && b->points[i + k].algo == p0->algo &&
               b->points[i + k].ranks == p0->ranks) {
            x[k] = (double)b->points[i + k].bytes;
            y[k] = (double)j->runs[i + k].run.result.finish;
            k++;
        }
        if (p0->ranks)
            snprintf(name, sizeof name, "%s, P=%lld", p0->algo, (long long)p0->ranks);
        else
            snprintf(name, sizeof name, "%s", p0->algo);
        cs_plot_add_series(p, name, (size_t)k, x, y);
        i += k;
    }
    rc = cs_plot_write(p, path, err);
    cs_plot_free(p);
    free(x);
    free(y);
    return rc;
}

static void serve_draw(cs_serve_t *s, serve_task_t *t, uint64_t seq)
{
    cs_serve_job_t *j = t->job;
    const serve_run_t *sr = &j->runs[t->q.run];
    const cs_machine_t *m = sr->run.machine;
    cs_error_t *e = &t->fail.e;
    char path[512];
    static const char *const ext[] = {"svg", "png", "json", "svg"};
    int rc;
    snprintf(path, sizeof path, "%s/figure-%llu.%s", s->tmpdir, (unsigned long long)seq,
             ext[t->q.fig]);
    if (t->q.fig == CS_SERVE_FIG_PLOT) {
        rc = serve_draw_plot(j, path, e);
    } else if (t->q.fig == CS_SERVE_FIG_TIMELINE) {
        cs_timeline_opts_t to = {0, 0, sr->rank_to_node, sr->title};
        rc = cs_timeline_write(path, m, sr->prog, &sr->run.result, &to, NULL, e);
    } else {
        cs_heatmap_metric_t mt = CS_HEATMAP_UTIL;
        cs_figures_window_t w;
        cs_heatmap_t *h = NULL;
        cs_heatmap_parse_metric(t->q.metric, &mt, e);
        rc = cs_figures_parse_window(t->q.window[0] ? t->q.window : NULL, m->tick_seconds, &w, e);
        if (rc == CS_OK)
            rc = cs_heatmap_new(m, &h, e);
        if (rc == CS_OK)
            rc = cs_figures_heatmap(h, m, &sr->run.result, mt, &w, sr->title, path, NULL, e);
        cs_heatmap_free(h);
    }
    if (rc == CS_OK)
        rc = serve_slurp(path, &t->data, &t->len, e);
    else
        unlink(path);
    if (rc) {
        t->failed = 1;
        t->fail.http = rc == CS_ERR_RANGE || rc == CS_ERR_USAGE ? 400 : 500;
        snprintf(t->fail.field, sizeof t->fail.field, "%s",
                 rc == CS_ERR_RANGE ? "window" : "");
    }
}

/* ---- the workers ---------------------------------------------------------------- */

static void *serve_worker(void *arg)
{
    cs_serve_t *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && !s->thead && !s->qhead)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop)
            break;
        if (s->thead) {
            serve_task_t *t = s->thead;
            s->thead = t->next;
            if (!s->thead)
                s->ttail = NULL;
            uint64_t seq = ++s->seq;
            pthread_mutex_unlock(&s->mu);
            serve_draw(s, t, seq);
            pthread_mutex_lock(&s->mu);
            t->next = s->done;
            s->done = t;
            event_active(s->done_ev, EV_READ, 0);
            continue;
        }
        cs_serve_job_t *j = s->qhead;
        s->qhead = j->qnext;
        if (!s->qhead)
            s->qtail = NULL;
        s->queued--;
        s->running++;
        j->state = CS_SERVE_RUNNING;
        j->t_start = serve_now();
        pthread_mutex_unlock(&s->mu);
        serve_job_run(j);
        pthread_mutex_lock(&s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Frees a job out of the table once no figure holds it (mutex held). */
static void serve_release(cs_serve_job_t *j, cs_serve_job_t **later)
{
    if (j->refs == 0) {
        j->next = *later;
        *later = j;
    }
}

/* The loop's side of the figures: send the answers drawn so far. */
static void serve_on_done(evutil_socket_t fd, short what, void *arg)
{
    cs_serve_t *s = arg;
    cs_serve_job_t *later = NULL;
    (void)fd;
    (void)what;
    pthread_mutex_lock(&s->mu);
    serve_task_t *t = s->done;
    s->done = NULL;
    for (serve_task_t *u = t; u; u = u->next)
        if (--u->job->refs == 0 && u->job->dead)
            serve_release(u->job, &later);
    pthread_mutex_unlock(&s->mu);
    while (t) {
        serve_task_t *next = t->next;
        t->done(t->ctx, t->data, t->len, t->failed ? &t->fail : NULL);
        free(t->data);
        free(t);
        t = next;
    }
    while (later) {
        cs_serve_job_t *next = later->next;
        serve_job_free(later);
        later = next;
    }
}

int cs_serve_new(const cs_serve_limits_t *lim, void *base, const char *tmpdir, cs_serve_t **out,
                 cs_error_t *err)
{
    cs_serve_t *s = cs_calloc(1, sizeof *s);
    *out = NULL;
    s->lim = *lim;
    s->base = base;
    snprintf(s->tmpdir, sizeof s->tmpdir, "%s", tmpdir);
    s->seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32 ^
              (uint64_t)(uintptr_t)s;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->done_ev = event_new(base, -1, 0, serve_on_done, s);
    s->threads = cs_calloc((size_t)lim->jobs, sizeof *s->threads);
    for (; s->nthreads < lim->jobs; s->nthreads++)
        if (pthread_create(&s->threads[s->nthreads], NULL, serve_worker, s) != 0) {
            cs_serve_free(s);
            return cs_error_set(err, CS_ERR_RUNTIME, "cannot start worker thread %d",
                                s->nthreads + 1);
        }
    *out = s;
    return CS_OK;
}

void cs_serve_free(cs_serve_t *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    for (cs_serve_job_t *j = s->jobs; j; j = j->next)
        j->cancel = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nthreads; i++)
        pthread_join(s->threads[i], NULL);
    /* figures not answered: their requests belong to evhttp; done() with
     * a NULL fail and no data only releases its context */
    for (serve_task_t *lists[2] = {s->thead, s->done}, **l = lists; l < lists + 2; l++)
        for (serve_task_t *t = *l, *next; t; t = next) {
            next = t->next;
            t->done(t->ctx, NULL, 0, NULL);
            free(t->data);
            free(t);
        }
    for (cs_serve_job_t *j = s->jobs, *next; j; j = next) {
        next = j->next;
        serve_job_free(j);
    }
    if (s->done_ev)
        event_free(s->done_ev);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s->threads);
    free(s);
}

/* ---- the loop's calls ---------------------------------------------------------- */

static cs_serve_job_t *serve_find(cs_serve_t *s, const char *id)
{
    for (cs_serve_job_t *j = s->jobs; j; j = j->next)
        if (!strcmp(j->id, id))
            return j;
    return NULL;
}

static int serve_unknown(cs_serve_fail_t *f, const char *id)
{
    return cs_serve_fail(f, 404, NULL, CS_ERR_USAGE, "no job '%.32s' (unknown, or expired)",
                         id);
}

int cs_serve_submit(cs_serve_t *s, cs_serve_body_t *b, char id[17], int *cached,
                    cs_serve_fail_t *f)
{
    int rc = CS_OK;
    *cached = 0;
    cs_serve_expire(s);
    pthread_mutex_lock(&s->mu);
    for (cs_serve_job_t *j = s->jobs; j; j = j->next)
        if (j->state == CS_SERVE_DONE && j->body.kind == b->kind &&
            !strcmp(j->body.canon, b->canon)) {
            memcpy(id, j->id, 17);
            *cached = 1;
            goto out;
        }
    if (s->stop) {
        rc = cs_serve_fail(f, 503, NULL, CS_ERR_CANCELLED, "the server is shutting down");
        goto out;
    }
    if (s->queued >= s->lim.max_queue) {
        rc = cs_serve_fail(f, 429, NULL, CS_ERR_NOMEM,
                           "%d jobs are queued, the server's limit (--max-queue): try later",
                           s->queued);
        goto out;
    }
    cs_serve_job_t *j = cs_calloc(1, sizeof *j);
    uint64_t x = s->seed + ++s->seq * 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    snprintf(j->id, sizeof j->id, "%016llx", (unsigned long long)(x ^ (x >> 31)));
    j->body = *b;
    memset(b, 0, sizeof *b);
    j->s = s;
    j->state = CS_SERVE_QUEUED;
    j->t_submit = serve_now();
    j->next = s->jobs;
    s->jobs = j;
    if (s->qtail)
        s->qtail->qnext = j;
    else
        s->qhead = j;
    s->qtail = j;
    s->queued++;
    memcpy(id, j->id, 17);
    pthread_cond_signal(&s->cv);
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int cs_serve_job_json(cs_serve_t *s, const char *id, FILE *out, cs_serve_fail_t *f)
{
    pthread_mutex_lock(&s->mu);
    cs_serve_job_t *j = serve_find(s, id);
    if (!j) {
        pthread_mutex_unlock(&s->mu);
        return serve_unknown(f, id);
    }
    double end = j->t_end > 0 ? j->t_end : serve_now();
    double elapsed = j->state == CS_SERVE_QUEUED || j->t_start == 0 ? 0 : end - j->t_start;
    fputs("{\"id\": ", out);
    cs_json_write_string(out, j->id);
    fputs(", \"kind\": ", out);
    cs_json_write_string(out, cs_serve_kind_name(j->body.kind));
    fputs(", \"state\": ", out);
    cs_json_write_string(out, cs_serve_state_name(j->state));
    fprintf(out, ", \"progress\": %.4f, \"runs\": %d, \"request\": %s", j->progress,
            j->body.npoints, j->body.canon);
    if (j->state == CS_SERVE_FAILED) {
        fputs(", \"error\": {\"status\": ", out);
        cs_json_write_string(out, cs_status_key(j->fail.e.code));
        if (j->fail.field[0]) {
            fputs(", \"field\": ", out);
            cs_json_write_string(out, j->fail.field);
        }
        fputs(", \"message\": ", out);
        cs_json_write_string(out, j->fail.e.msg);
        fputs("}", out);
    }
    fprintf(out, ", \"elapsed\": %.3f}\n", elapsed);
    pthread_mutex_unlock(&s->mu);
    return CS_OK;
}

/* A done job by id, or a refusal (mutex held). */
static cs_serve_job_t *serve_done_job(cs_serve_t *s, const char *id, cs_serve_fail_t *f)
{
    cs_serve_job_t *j = serve_find(s, id);
    if (!j) {
        serve_unknown(f, id);
        return NULL;
    }
    if (j->state != CS_SERVE_DONE) {
        cs_serve_fail(f, 409, NULL, CS_ERR_USAGE, "job %s is %s", j->id,
                      cs_serve_state_name(j->state));
        return NULL;
    }
    return j;
}

int cs_serve_result(cs_serve_t *s, const char *id, char **buf, size_t *len, cs_serve_fail_t *f)
{
    int rc = CS_OK;
    *buf = NULL;
    pthread_mutex_lock(&s->mu);
    cs_serve_job_t *j = serve_done_job(s, id, f);
    if (!j) {
        rc = f->e.code;
    } else {
        *buf = cs_malloc(j->result_len + 1);
        memcpy(*buf, j->result, j->result_len);
        *len = j->result_len;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int cs_serve_cancel(cs_serve_t *s, const char *id, cs_serve_state_t *state, cs_serve_fail_t *f)
{
    pthread_mutex_lock(&s->mu);
    cs_serve_job_t *j = serve_find(s, id);
    if (!j) {
        pthread_mutex_unlock(&s->mu);
        return serve_unknown(f, id);
    }
    if (j->state == CS_SERVE_QUEUED) {
        /* out of the queue: no worker will see it */
        cs_serve_job_t **p = &s->qhead, *prev = NULL;
        while (*p != j) {
            prev = *p;
            p = &(*p)->qnext;
        }
        *p = j->qnext;
        if (s->qtail == j)
            s->qtail = prev;
        s->queued--;
        j->state = CS_SERVE_CANCELLED;
        j->t_end = serve_now();
    } else if (j->state == CS_SERVE_RUNNING) {
        /* the run stops at its next batch of events; the worker frees it */
        j->cancel = 1;
        j->state = CS_SERVE_CANCELLED;
    }
    *state = j->state;
    pthread_mutex_unlock(&s->mu);
    return CS_OK;
}

void cs_serve_health_json(cs_serve_t *s, FILE *out)
{
    int done = 0;
    pthread_mutex_lock(&s->mu);
    for (cs_serve_job_t *j = s->jobs; j; j = j->next)
        done += serve_finished(j->state);
    fputs("{\"version\": ", out);
    cs_json_write_string(out, COLLSIM_VERSION);
    fprintf(out, ", \"jobs\": {\"queued\": %d, \"running\": %d, \"done\": %d}, "
            "\"workers\": %d}\n", s->queued, s->running, done, s->nthreads);
    pthread_mutex_unlock(&s->mu);
}

int cs_serve_expire(cs_serve_t *s)
{
    cs_serve_job_t *later = NULL;
    int n = 0, kept = 0;
    size_t bytes = 0;
    double now = serve_now();
    pthread_mutex_lock(&s->mu);
    for (cs_serve_job_t **p = &s->jobs; *p;) {
        cs_serve_job_t *j = *p;
        /* a cancelled job may still be on its worker: t_end is set when
         * it has left it */
        int fin = serve_finished(j->state) && j->t_end > 0;
        if (fin) {
            kept++;
            bytes += j->result_len;
        }
        if (fin && (now - j->t_end > s->lim.keep || kept > s->lim.cache_jobs ||
                    bytes > s->lim.cache_bytes)) {
            *p = j->next;
            j->dead = 1;
            serve_release(j, &later);
            n++;
            continue;
        }
        p = &j->next;
    }
    pthread_mutex_unlock(&s->mu);
    while (later) {
        cs_serve_job_t *next = later->next;
        serve_job_free(later);
        later = next;
    }
    if (n)
        malloc_trim(0); /* glibc keeps freed pages otherwise: the RSS would not go back */
    return n;
}

int cs_serve_figure(cs_serve_t *s, const char *id, const cs_serve_figreq_t *q,
                    cs_serve_figure_done_fn done, void *ctx, cs_serve_fail_t *f)
{
    int rc = CS_OK;
    pthread_mutex_lock(&s->mu);
    cs_serve_job_t *j = serve_done_job(s, id, f);
    if (!j) {
        rc = f->e.code;
        goto out;
    }
    if (q->fig == CS_SERVE_FIG_PLOT && j->body.kind != CS_SERVE_COMPARE &&
        j->body.kind != CS_SERVE_SWEEP) {
        rc = cs_serve_fail(f, 404, NULL, CS_ERR_USAGE,
                           "plot.svg: a %s job has no plot (compare and sweep have)",
                           cs_serve_kind_name(j->body.kind));
        goto out;
    }
    if (q->run < 0 || q->run >= j->nruns) {
        rc = cs_serve_fail(f, 400, "run", CS_ERR_RANGE, "run=%d: the job has runs 0..%d",
                           q->run, j->nruns - 1);
        goto out;
    }
    const serve_run_t *sr = &j->runs[q->run];
    cs_heatmap_metric_t mt;
    cs_figures_window_t w;
    if ((q->fig == CS_SERVE_FIG_HEATMAP_SVG || q->fig == CS_SERVE_FIG_HEATMAP_PNG) &&
        ((rc = cs_heatmap_parse_metric(q->metric, &mt, &f->e)) ||
         (rc = cs_figures_parse_window(q->window[0] ? q->window : NULL,
                                       sr->run.machine->tick_seconds, &w, &f->e)))) {
        f->http = 400;
        snprintf(f->field, sizeof f->field, "%s",
                 strstr(f->e.msg, "window") ? "window" : "metric");
        goto out;
    }
    if (q->fig == CS_SERVE_FIG_TIMELINE && !sr->timeline) {
        rc = cs_serve_fail(f, 422, "run", CS_ERR_RANGE,
                           "timeline.json: the run has more than %d ops; the server kept no "
                           "op times", SERVE_TIMELINE_MAX_OPS);
        goto out;
    }
    serve_task_t *t = cs_calloc(1, sizeof *t);
    t->job = j;
    t->q = *q;
    t->done = done;
    t->ctx = ctx;
    j->refs++;
    if (s->ttail)
        s->ttail->next = t;
    else
        s->thead = t;
    s->ttail = t;
    pthread_cond_signal(&s->cv);
out:
    pthread_mutex_unlock(&s->mu);
    return rc;
}
