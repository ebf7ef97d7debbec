/*
 * serve_jobs.c - the jobs of `collsim serve` (docs/api.md): a table of jobs
 * behind one mutex, a FIFO queue of at most --max-queue jobs, --jobs worker
 * threads that run each job's points through the request path of src/api
 * (prepare -> build -> run, as `collsim run` does) and keep the runs for the
 * figures, a cache of done jobs keyed by the normalised request, and expiry.
 *
 * A job's runs are serve_run.c's, its figures serve_figures.c's.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app/serve_internal.h"
#include "io/result_json.h"

const char *cs_serve_state_name(cs_serve_state_t s)
{
    static const char *const names[] = {"queued", "running", "done", "failed", "cancelled"};
    return s >= 0 && s <= CS_SERVE_CANCELLED ? names[s] : "?";
}

double cs_serve_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int serve_finished(cs_serve_state_t s)
{
    return s == CS_SERVE_DONE || s == CS_SERVE_FAILED || s == CS_SERVE_CANCELLED;
}

/* ---- the workers ---------------------------------------------------------------- */

/* A worker leaves (mutex held): counted out, and cs_serve_stop told. */
static void serve_leave(cs_serve_t *s)
{
    s->nlive--;
    pthread_cond_broadcast(&s->left);
}

static void serve_job_unref(cs_serve_job_t *j);

static void *serve_worker(void *arg)
{
    cs_serve_slot_t *slot = arg;
    cs_serve_t *s = slot->s;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && !s->thead && !s->qhead)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop)
            break;
        if (s->thead) {
            cs_serve_task_t *t = s->thead;
            s->thead = t->next;
            if (!s->thead)
                s->ttail = NULL;
            uint64_t seq = ++s->seq;
            pthread_mutex_unlock(&s->mu);
            cs_serve_draw(s, t, seq);
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
        j->t_start = cs_serve_now();
        j->refs++; /* expiry must not free it under this thread, given up or not */
        slot->job = j;
        pthread_mutex_unlock(&s->mu);
        cs_serve_job_run(j);
        pthread_mutex_lock(&s->mu);
        int abandoned = j->abandoned; /* read before j may be freed */
        serve_job_unref(j);
        if (abandoned) {
            /* given up: another thread has this slot; this one ends here */
            s->nabandoned--;
            serve_leave(s);
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        slot->job = NULL;
    }
    serve_leave(s);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Starts a worker in slot i (mutex held, or before any thread runs). */
static int serve_start(cs_serve_t *s, int i)
{
    s->slots[i].s = s;
    s->slots[i].job = NULL;
    s->slots[i].joinable = pthread_create(&s->slots[i].tid, NULL, serve_worker,
                                          &s->slots[i]) == 0;
    if (!s->slots[i].joinable)
        return -1;
    s->nlive++;
    return 0;
}

/* The end of a job whose worker is given up (mutex held), as the worker
 * would have written it: cancelled, or failed by the time limit. */
static void serve_give_up(cs_serve_t *s, cs_serve_slot_t *slot, double now)
{
    cs_serve_job_t *j = slot->job;
    j->abandoned = 1;
    s->running--;
    if (j->timed_out && j->state != CS_SERVE_CANCELLED) {
        j->state = CS_SERVE_FAILED;
        cs_serve_fail(&j->fail, 422, NULL, CS_ERR_CANCELLED, "the job ran longer than the "
                      "server's limit of %g s (--max-seconds)", s->lim.max_seconds);
    } else {
        j->state = CS_SERVE_CANCELLED;
    }
    j->t_end = now;
    fprintf(stderr, "collsim serve: job %s: its worker did not stop within %g s; given up, "
            "another takes its place\n", j->id, s->lim.grace);
    /* the thread goes on alone until its step ends, then leaves
     * (serve_worker); its slot gets a new one */
    pthread_detach(slot->tid);
    slot->joinable = 0;
    s->nabandoned++;
    if (serve_start(s, (int)(slot - s->slots)) != 0)
        fprintf(stderr, "collsim serve: cannot start a worker in place of a stuck one\n");
}

int cs_serve_watch(cs_serve_t *s)
{
    int n = 0;
    double now = cs_serve_now();
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->nthreads && !s->stop; i++) {
        cs_serve_job_t *j = s->slots[i].job;
        if (!j || j->abandoned || j->finishing)
            continue;
        if (!j->cancel && now - j->t_start > s->lim.max_seconds) {
            j->timed_out = 1;
            j->cancel = 1;
        }
        if (j->cancel && j->t_cancel == 0)
            j->t_cancel = now;
        if (j->cancel && now - j->t_cancel >= s->lim.grace &&
            s->nabandoned < SERVE_MAX_ABANDONED) {
            serve_give_up(s, &s->slots[i], now);
            n++;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Frees a job out of the table once no figure holds it (mutex held). */
static void serve_release(cs_serve_job_t *j, cs_serve_job_t **later)
{
    if (j->refs == 0) {
        j->next = *later;
        *later = j;
    }
}

/* A worker is done with j (mutex held): freed here when it has left the
 * table and nothing else holds it (serve_release's rule). */
static void serve_job_unref(cs_serve_job_t *j)
{
    if (--j->refs == 0 && j->dead)
        cs_serve_job_free(j);
}

/* The loop's side of the figures: send the answers drawn so far. */
static void serve_on_done(evutil_socket_t fd, short what, void *arg)
{
    cs_serve_t *s = arg;
    cs_serve_job_t *later = NULL;
    (void)fd;
    (void)what;
    pthread_mutex_lock(&s->mu);
    cs_serve_task_t *t = s->done;
    s->done = NULL;
    for (cs_serve_task_t *u = t; u; u = u->next)
        if (--u->job->refs == 0 && u->job->dead)
            serve_release(u->job, &later);
    pthread_mutex_unlock(&s->mu);
    while (t) {
        cs_serve_task_t *next = t->next;
        t->done(t->ctx, t->data, t->len, t->failed ? &t->fail : NULL);
        free(t->data);
        free(t);
        t = next;
    }
    while (later) {
        cs_serve_job_t *next = later->next;
        cs_serve_job_free(later);
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
    pthread_cond_init(&s->left, NULL);
    s->done_ev = event_new(base, -1, 0, serve_on_done, s);
    s->slots = cs_calloc((size_t)lim->jobs, sizeof *s->slots);
    pthread_mutex_lock(&s->mu);
    for (; s->nthreads < lim->jobs; s->nthreads++)
        if (serve_start(s, s->nthreads) != 0) {
            pthread_mutex_unlock(&s->mu);
            cs_serve_free(s);
            return cs_error_set(err, CS_ERR_RUNTIME, "cannot start worker thread %d",
                                s->nthreads + 1);
        }
    pthread_mutex_unlock(&s->mu);
    *out = s;
    return CS_OK;
}

int cs_serve_stop(cs_serve_t *s, double grace)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    double t = (double)until.tv_sec + 1e-9 * (double)until.tv_nsec + grace;
    until.tv_sec = (time_t)t;
    until.tv_nsec = (long)((t - (double)until.tv_sec) * 1e9);
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    for (cs_serve_job_t *j = s->jobs; j; j = j->next)
        j->cancel = 1;
    pthread_cond_broadcast(&s->cv);
    while (s->nlive > 0)
        if (grace >= 0 ? pthread_cond_timedwait(&s->left, &s->mu, &until) != 0
                       : pthread_cond_wait(&s->left, &s->mu) != 0)
            break;
    int busy = s->nlive;
    pthread_mutex_unlock(&s->mu);
    return busy;
}

void cs_serve_free(cs_serve_t *s)
{
    if (!s)
        return;
    cs_serve_stop(s, -1);
    /* every thread has left: the ones still in their slots are joined
     * (given-up ones were detached) */
    for (int i = 0; i < s->nthreads; i++)
        if (s->slots[i].joinable)
            pthread_join(s->slots[i].tid, NULL);
    /* figures not answered: their requests belong to evhttp; done() with
     * a NULL fail and no data only releases its context */
    for (cs_serve_task_t *lists[2] = {s->thead, s->done}, **l = lists; l < lists + 2; l++)
        for (cs_serve_task_t *t = *l, *next; t; t = next) {
            next = t->next;
            t->done(t->ctx, NULL, 0, NULL);
            /* a job expired while its figure was drawn is out of the table */
            if (--t->job->refs == 0 && t->job->dead)
                cs_serve_job_free(t->job);
            free(t->data);
            free(t);
        }
    for (cs_serve_job_t *j = s->jobs, *next; j; j = next) {
        next = j->next;
        cs_serve_job_free(j);
    }
    if (s->done_ev)
        event_free(s->done_ev);
    pthread_cond_destroy(&s->cv);
    pthread_cond_destroy(&s->left);
    pthread_mutex_destroy(&s->mu);
    free(s->slots);
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
    j->t_submit = cs_serve_now();
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

/* A queued job's place (mutex held): "position" (1: the next to start
 * when a worker is free), the jobs queued before it and the jobs on the
 * workers, each by kind, size and progress.  Other jobs' ids are left out:
 * they are not secrets (docs/security.md), but a client waiting for its
 * own job needs what is ahead of it, not handles to it.  Bounded: at most
 * --max-queue jobs ahead and --jobs workers. */
static void serve_queue_json(const cs_serve_t *s, const cs_serve_job_t *j, FILE *out)
{
    double now = cs_serve_now();
    int pos = 1;
    for (const cs_serve_job_t *q = s->qhead; q && q != j; q = q->qnext)
        pos++;
    fprintf(out, ", \"queue\": {\"position\": %d, \"workers\": %d, \"ahead\": [", pos,
            s->nthreads);
    for (const cs_serve_job_t *q = s->qhead; q && q != j; q = q->qnext) {
        fprintf(out, "%s{\"kind\": ", q == s->qhead ? "" : ", ");
        cs_json_write_string(out, cs_serve_kind_name(q->body.kind));
        fprintf(out, ", \"runs\": %d}", q->body.npoints);
    }
    fputs("], \"running\": [", out);
    int n = 0;
    for (int i = 0; i < s->nthreads; i++) {
        const cs_serve_job_t *r = s->slots[i].job;
        if (!r)
            continue;
        /* a cancelled job still holds its worker until its run stops */
        fprintf(out, "%s{\"kind\": ", n++ ? ", " : "");
        cs_json_write_string(out, cs_serve_kind_name(r->body.kind));
        fputs(", \"state\": ", out);
        cs_json_write_string(out, cs_serve_state_name(r->state));
        fprintf(out, ", \"runs\": %d, \"progress\": %.4f, \"elapsed\": %.3f}",
                r->body.npoints, r->progress, r->t_start > 0 ? now - r->t_start : 0.0);
    }
    fputs("]}", out);
}

int cs_serve_job_json(cs_serve_t *s, const char *id, FILE *out, cs_serve_fail_t *f)
{
    pthread_mutex_lock(&s->mu);
    cs_serve_job_t *j = serve_find(s, id);
    if (!j) {
        pthread_mutex_unlock(&s->mu);
        return serve_unknown(f, id);
    }
    double end = j->t_end > 0 ? j->t_end : cs_serve_now();
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
        fputs(", \"error\": ", out);
        cs_serve_fail_object(out, &j->fail);
    }
    if (j->state == CS_SERVE_QUEUED)
        serve_queue_json(s, j, out);
    fprintf(out, ", \"elapsed\": %.3f}\n", elapsed);
    pthread_mutex_unlock(&s->mu);
    return CS_OK;
}

/* A done job by id, or a refusal (mutex held). */
cs_serve_job_t *cs_serve_done_job(cs_serve_t *s, const char *id, cs_serve_fail_t *f)
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
    cs_serve_job_t *j = cs_serve_done_job(s, id, f);
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
        j->t_end = cs_serve_now();
    } else if (j->state == CS_SERVE_RUNNING) {
        /* the run stops at its next batch of events, or the next step's
         * start; the worker frees it (or the watchdog gives it up) */
        j->cancel = 1;
        j->t_cancel = cs_serve_now();
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
    double now = cs_serve_now();
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
        cs_serve_job_free(later);
        later = next;
    }
    if (n)
        malloc_trim(0); /* glibc keeps freed pages otherwise: the RSS would not go back */
    return n;
}
