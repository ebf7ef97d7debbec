/*
 * serve.h - the modules of `collsim serve` (issue 21, docs/api.md): the HTTP
 * front end over libevent's evhttp, a pool of worker threads running jobs
 * through the request path of src/api, and the JSON request bodies read
 * with jansson.  src/app only.
 *
 *   serve_body.c  a request body (JSON, or a trace and a query) -> a checked,
 *                 normalised cs_serve_body_t (the only file that sees jansson)
 *   serve_jobs.c  jobs: the table, the FIFO queue, the workers, the cache,
 *                 expiry, the figures drawn off the event loop
 *   serve_http.c  routes, responses and the per-request log line
 *   cmd_serve.c   the command: options, the loop, signals, shutdown
 */
#ifndef CS_SERVE_H
#define CS_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/source.h"

#define CS_SERVE_MAX_MACHINES 16  /* a compare's machines */
#define CS_SERVE_MAX_POINTS 256   /* a sweep's runs (algorithms x ranks x sizes) */
#define CS_SERVE_MAX_OPTS 64      /* "opts" entries (CS_REQUEST_MAX_OPTS) */
#define CS_SERVE_MAX_TEXT 4096    /* a string field other than program / trace */
#define CS_SERVE_BODY_SLACK 65536 /* bytes over --max-body still read (a JSON 413) */

typedef enum cs_serve_kind {
    CS_SERVE_RUN, CS_SERVE_COMPARE, CS_SERVE_SWEEP, CS_SERVE_REPLAY, CS_SERVE_NKINDS
} cs_serve_kind_t;

/* "run", "compare", "sweep", "replay". */
const char *cs_serve_kind_name(cs_serve_kind_t k);

/* What the server allows (the command's options). */
typedef struct cs_serve_limits {
    int jobs;            /* worker threads */
    int max_queue;       /* queued jobs (429 beyond) */
    int64_t max_ranks;   /* ranks of one run */
    int64_t max_nodes;   /* nodes of one machine, refused before it is built */
    int64_t max_iterations; /* a benchmark loop's warm-up + timed iterations (a
                            loop multiplies a run's work by them) */
    double max_seconds;  /* wall time of one job */
    double grace;        /* seconds a cancelled job's worker may take to come
                            back before it is given up (the executor looks
                            at the flag every 2^16 events: far less) */
    size_t max_body;     /* bytes of a request body (413 beyond) */
    double keep;         /* seconds a finished job is kept */
    int cache_jobs;      /* finished jobs kept at most (the oldest go first) */
    size_t cache_bytes;  /* bytes of their results kept at most */
} cs_serve_limits_t;

/* A refusal: the HTTP status, the JSON field at fault ("" for none) and the
 * error as the command line words it. */
typedef struct cs_serve_fail {
    int http;
    char field[48];
    cs_error_t e;
} cs_serve_fail_t;

/* Fills f and returns f->e.code (code: a cs_status_t). */
int cs_serve_fail(cs_serve_fail_t *f, int http, const char *field, int code, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));
/* Writes the error object {"status", "field", "message"} ("field" when
 * one is named; status "busy" for a 409). */
void cs_serve_fail_object(FILE *out, const cs_serve_fail_t *f);
/* Writes the error document {"error": {...}} (cs_serve_fail_object). */
void cs_serve_fail_json(FILE *out, const cs_serve_fail_t *f);

/* The loop keys of a run's body, in the order of cs_serve_body_t.loop (the
 * options of `collsim run` of the same names, docs/loops.md). */
#define CS_SERVE_LOOP_KEYS {"iterations", "warmup", "between", "loop"}
/* The most pixels of a PNG figure drawn for a request (size=): 16 Mpixels,
 * 64 MiB of surface; SVG has none (points, not pixels). */
#define CS_SERVE_MAX_PIXELS (INT64_C(1) << 24)

/* One run of a job: which machine (index into machine[]), algorithm, size
 * and ranks (0: every node). */
typedef struct cs_serve_point {
    int machine;
    const char *algo;    /* borrowed from the body, or a registry name */
    int64_t bytes;
    int64_t ranks;
} cs_serve_point_t;

/* A request, parsed, checked and normalised.  Every string is owned.  A
 * spec key that names a file names one of `files`, and none writes one
 * (machines/machine.h, cs_machine_check_files): refused at parsing. */
typedef struct cs_serve_body {
    cs_serve_kind_t kind;
    char *machine[CS_SERVE_MAX_MACHINES];
    int nmachines;
    char *coll, *algo, *order, *mode;  /* algo NULL: the collective's default */
    cs_files_t *files;                 /* the request's inline files, or NULL:
                                          the only files its specs may name */
    char *program;                     /* GOAL text (run), NULL: a collective */
    char *trace;                       /* the trace (replay) */
    size_t trace_len;
    int format_ti;                     /* replay: 1 ti, 0 goal */
    int64_t root;
    int has_root;
    char *opts[CS_SERVE_MAX_OPTS];
    int nopts;
    int validate;
    /* a run's benchmark loop (api/loop.h) as given, one text per key of
     * CS_SERVE_LOOP_KEYS (NULL: not given), set on the request as the
     * command line sets its options */
    char *loop[4];
    char *algos_buf;                   /* sweep: the algorithm names */
    struct cs_coll_algo **algo_files;  /* algorithms read from the request's
                                          files (msccl:NAME), owned */
    int nalgo_files;
    cs_serve_point_t *points;          /* the runs, in result order */
    int npoints;
    int nalgos, nranks, nsizes;        /* sweep: points = algorithms x rank
                                          counts (nranks 1: every node) x sizes */
    int64_t bytes;                     /* run, compare: the size */
    char *canon;                       /* the normalised request (JSON text) */
} cs_serve_body_t;

/* Parses body[0..len) (not NUL-terminated) of a POST to kind's endpoint,
 * with query the URL's query string (refused unless NULL or empty).
 * Checks every field as `collsim run` checks its options (same messages)
 * and the server's limits; fills b (cs_serve_body_destroy it whatever the
 * result).  Refusals: 400 malformed JSON (line:column), unknown key, wrong
 * type or value; 422 over a limit (ranks, points, machines).  Opens no
 * file. */
int cs_serve_body_parse(cs_serve_kind_t kind, const char *body, size_t len, const char *query,
                        const cs_serve_limits_t *lim, cs_serve_body_t *b, cs_serve_fail_t *f);
void cs_serve_body_destroy(cs_serve_body_t *b);

/* ---- jobs (serve_jobs.c) ------------------------------------------------- */

typedef struct cs_serve cs_serve_t;
typedef struct cs_serve_job cs_serve_job_t;

typedef enum cs_serve_state {
    CS_SERVE_QUEUED, CS_SERVE_RUNNING, CS_SERVE_DONE, CS_SERVE_FAILED, CS_SERVE_CANCELLED
} cs_serve_state_t;

const char *cs_serve_state_name(cs_serve_state_t s);

/* The job table and its workers.  base: the loop the figures' replies go
 * back to (struct event_base *).  tmpdir: a private folder for the
 * temporary files of programs, traces and figures. */
int cs_serve_new(const cs_serve_limits_t *lim, void *base, const char *tmpdir, cs_serve_t **out,
                 cs_error_t *err);
/* Cancels every job and waits at most `grace` seconds for the workers to
 * leave: 0 when they all did (cs_serve_free then frees at once), else the
 * number still busy - a worker in a step that does not look at its cancel
 * flag (building a large machine) - and then nothing may be freed: the
 * caller ends the process (cmd_serve.c, docs/security.md). */
int cs_serve_stop(cs_serve_t *s, double grace);
/* cs_serve_stop without a deadline, then drops the pending figure replies
 * (their requests are libevent's: evhttp_free releases them) and frees
 * everything.  Accepts NULL. */
void cs_serve_free(cs_serve_t *s);
/* The watchdog, called by the loop a few times a second: fails a job that
 * has run longer than --max-seconds (whatever it is doing: building a
 * machine, reading its files, building the program), and gives up the
 * worker of a cancelled or timed-out job that has not come back within
 * the limits' grace, starting another in its place, so that the queue moves
 * on.  Returns how many workers it gave up. */
int cs_serve_watch(cs_serve_t *s);

/* Submits a parsed body (taken over: b is zeroed).  Answers from the cache
 * when a done job has the same normalised request (*cached = 1).  Writes
 * the job's id into id (17 bytes).  429 when the queue is full, 503 when
 * shutting down. */
int cs_serve_submit(cs_serve_t *s, cs_serve_body_t *b, char id[17], int *cached,
                    cs_serve_fail_t *f);
/* The job document of GET /api/jobs/ID into out; 404 for an unknown id. */
int cs_serve_job_json(cs_serve_t *s, const char *id, FILE *out, cs_serve_fail_t *f);
/* The result of a done job: a copy into *buf (to free), 404 / 409. */
int cs_serve_result(cs_serve_t *s, const char *id, char **buf, size_t *len, cs_serve_fail_t *f);
/* Cancels a queued or running job; *state gets its state afterwards. */
int cs_serve_cancel(cs_serve_t *s, const char *id, cs_serve_state_t *state, cs_serve_fail_t *f);
/* {"version", "jobs": {...}} */
void cs_serve_health_json(cs_serve_t *s, FILE *out);
/* Drops finished jobs older than --keep, then the oldest beyond the cache's
 * bounds; returns how many (the loop calls it each second). */
int cs_serve_expire(cs_serve_t *s);

/* A figure of a done job, drawn by a worker off the loop. */
typedef enum cs_serve_fig {
    CS_SERVE_FIG_HEATMAP_SVG, CS_SERVE_FIG_HEATMAP_PNG, CS_SERVE_FIG_TIMELINE,
    CS_SERVE_FIG_PLOT
} cs_serve_fig_t;

typedef struct cs_serve_figreq {
    cs_serve_fig_t fig;
    int run;            /* index into runs / points */
    char metric[16];
    char window[128];   /* "" for the whole run */
    char scale[64];     /* heatmaps: the colour range LO:HI ("": the data's) */
    char size[64];      /* heatmaps: the figure's size ("": the default) */
} cs_serve_figreq_t;

/* The answer of a figure: called on the loop's thread, once per
 * cs_serve_figure that returned CS_OK, with the bytes (borrowed for the
 * call) or a refusal; data and fail both NULL: the server is shutting down,
 * release ctx and answer nothing. */
typedef void (*cs_serve_figure_done_fn)(void *ctx, const char *data, size_t len,
                                        const cs_serve_fail_t *fail);

/* Queues the drawing of a figure of job id (ahead of queued jobs); done is
 * called later on the loop.  Refusals found at once (unknown job, not
 * done, bad parameter) return non-zero with f filled, and done is not
 * called. */
int cs_serve_figure(cs_serve_t *s, const char *id, const cs_serve_figreq_t *q,
                    cs_serve_figure_done_fn done, void *ctx, cs_serve_fail_t *f);

/* ---- HTTP (serve_http.c) ------------------------------------------------- */

#define CS_SERVE_MAX_ALLOW 16  /* --allow-host names */

/* Where the server listens, for the checks against cross-site requests and
 * DNS rebinding (docs/security.md): a request's Host must name it, and an
 * Origin, when sent, must be http(s):// and such a Host. */
typedef struct cs_serve_site {
    const char *addr;           /* the address bound (--addr), as given */
    int port;                   /* the port bound (the system's for --port 0) */
    const char *const *allow;   /* --allow-host NAME or NAME:PORT, nallow of them */
    int nallow;
} cs_serve_site_t;

/* Installs the routes of the API on http (struct evhttp *), answering from
 * s within lim, logging a line per request on log.  The Host values it
 * accepts are made from site at once (site is not kept).  Returns the
 * routes' state, to free() after evhttp_free; NULL when out of memory. */
void *cs_serve_http_new(void *http, cs_serve_t *s, const cs_serve_limits_t *lim,
                        const cs_serve_site_t *site, FILE *log);

/* The page, embedded at build time (serve_page.S). */
extern const char cs_serve_page[];
extern const unsigned int cs_serve_page_len;

#endif
