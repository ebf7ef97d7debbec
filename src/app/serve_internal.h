/*
 * serve_internal.h - what the job modules of `collsim serve` share
 * (serve_jobs.c: the table, queue, workers, cache; serve_run.c: a job's
 * runs; serve_figures.c: the figures): the job, the figure task and the
 * server's state, all behind the server's one mutex (cs_serve_t.mu).
 * src/app only; the front end sees serve.h.
 */
#ifndef CS_SERVE_INTERNAL_H
#define CS_SERVE_INTERNAL_H

#include <event2/event.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "api/replay.h"
#include "api/request.h"
#include "app/serve.h"

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
typedef struct cs_serve_run {
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
} cs_serve_run_t;

struct cs_serve_job {
    char id[17];
    cs_serve_body_t body;
    cs_machine_env_t env;      /* its machines' files and node limit */
    cs_serve_state_t state;
    volatile sig_atomic_t cancel;
    int timed_out;
    double t_cancel;           /* when cancel was set (the watchdog's grace) */
    int abandoned;             /* its worker was given up (serve_jobs.c): the
                                  job's end was written without it */
    int finishing;             /* its worker is writing its end: not given up */
    double progress;
    double t_submit, t_start, t_end;
    cs_serve_fail_t fail;
    char *result;
    size_t result_len;
    cs_serve_run_t *runs;
    int nruns;
    cs_machine_t *shared;      /* a sweep's one machine */
    int refs;                  /* figures being drawn from it, and its worker */
    int dead;                  /* out of the table: freed when refs is 0 */
    cs_serve_job_t *next;      /* the table, newest first */
    cs_serve_job_t *qnext;     /* the queue */
    cs_serve_t *s;
};

/* A figure to draw, then its answer. */
typedef struct cs_serve_task {
    cs_serve_job_t *job;
    cs_serve_figreq_t q;
    cs_serve_figure_done_fn done;
    void *ctx;
    char *data;
    size_t len;
    cs_serve_fail_t fail;
    int failed;
    struct cs_serve_task *next;
} cs_serve_task_t;

/* A worker's place: the thread in it now (a worker given up is replaced
 * in its place) and the job it runs. */
typedef struct cs_serve_slot {
    struct cs_serve *s;
    pthread_t tid;
    int joinable;             /* tid runs and is not detached */
    cs_serve_job_t *job;      /* NULL: idle or drawing */
} cs_serve_slot_t;

/* Workers given up and still running at once, at most: beyond, a stuck
 * job keeps its worker (the CPU a stuck build may take stays bounded). */
#define SERVE_MAX_ABANDONED 4

struct cs_serve {
    cs_serve_limits_t lim;
    struct event_base *base;
    struct event *done_ev;
    char tmpdir[256];
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* work for the workers */
    pthread_cond_t left;     /* a worker left (cs_serve_stop waits on it) */
    cs_serve_slot_t *slots;
    int nthreads;            /* slots with a thread started */
    int nlive;               /* threads that have not returned, given up ones too */
    int nabandoned;          /* given up and still running */
    cs_serve_job_t *jobs;
    cs_serve_job_t *qhead, *qtail;
    int queued, running;
    cs_serve_task_t *thead, *ttail; /* figures to draw */
    cs_serve_task_t *done;          /* figures drawn, for the loop */
    int stop;
    uint64_t seq, seed;
};

/* Monotonic seconds. */
double cs_serve_now(void);

/* serve_run.c: runs job j's points on the calling worker (the mutex not
 * held), then sets its state under the mutex (unless the job was given up:
 * then it only drops what it made); frees what a job keeps. */
void cs_serve_job_run(cs_serve_job_t *j);
void cs_serve_job_drop_runs(cs_serve_job_t *j);
void cs_serve_job_free(cs_serve_job_t *j);

/* serve_jobs.c: the done job of id, or NULL with a refusal in f (404, 409);
 * the mutex held. */
cs_serve_job_t *cs_serve_done_job(cs_serve_t *s, const char *id, cs_serve_fail_t *f);

/* serve_figures.c: draws task t (a worker, the mutex not held; seq names
 * its temporary file); the answer or the refusal goes into t. */
void cs_serve_draw(cs_serve_t *s, cs_serve_task_t *t, uint64_t seq);

#endif
