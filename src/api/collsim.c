/*
 * collsim.c - the public C interface of libcollsim (include/collsim/collsim.h,
 * issue 20): opaque handles over the one request path of src/api
 * (request.h: set -> prepare -> build -> run; report.h: the JSON), the
 * figure writers of src/io and the registries of machines and algorithms.
 *
 * What this file adds to the request path, and why:
 *   - a request owns copies of its strings (cs_request_t borrows them), so
 *     that a caller's buffers (a Python string) may go away after a set;
 *   - the keys the command line spreads over `run` and `replay` options
 *     (record=timeline, record=window:T0:T1) become request keys;
 *   - every entry point makes igraph quiet once (pthread_once) and keeps
 *     nothing between calls: no static mutable state here, so handles in
 *     different threads are independent (igraph, which is not thread-safe
 *     in Debian's build, is serialised below, in topo/topo_igraph.c);
 *   - a run that fails while running (a deadlock, a machine limit, a
 *     cancellation) still gives its result, as the executor keeps what
 *     happened until then (engine/exec.h).
 * Nothing is printed and nothing exits; errors come back as the command
 * line's messages.
 */
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collsim/collsim.h"

#include "api/catalog.h"
#include "api/figures.h"
#include "api/replay.h"
#include "api/report.h"
#include "api/request.h"
#include "api/sizes.h"
#include "coll/coll.h"
#include "core/error.h"
#include "core/outfile.h"
#include "io/heatmap.h"
#include "io/plot.h"
#include "io/result_json.h"
#include "io/timeline.h"
#include "machines/machine.h"
#include "topo/topo.h"

/* The statuses are the library's own numbers (collsim.h promises it). */
#define COLLSIM_SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(COLLSIM_SAME(COLLSIM_OK, CS_OK) && COLLSIM_SAME(COLLSIM_ERR_USAGE, CS_ERR_USAGE) &&
               COLLSIM_SAME(COLLSIM_ERR_PARSE, CS_ERR_PARSE) &&
               COLLSIM_SAME(COLLSIM_ERR_IO, CS_ERR_IO) &&
               COLLSIM_SAME(COLLSIM_ERR_NOMEM, CS_ERR_NOMEM) &&
               COLLSIM_SAME(COLLSIM_ERR_RANGE, CS_ERR_RANGE) &&
               COLLSIM_SAME(COLLSIM_ERR_DEADLOCK, CS_ERR_DEADLOCK) &&
               COLLSIM_SAME(COLLSIM_ERR_RUNTIME, CS_ERR_RUNTIME) &&
               COLLSIM_SAME(COLLSIM_ERR_VALIDATE, CS_ERR_VALIDATE) &&
               COLLSIM_SAME(COLLSIM_ERR_INTERNAL, CS_ERR_INTERNAL) &&
               COLLSIM_SAME(COLLSIM_ERR_CANCELLED, CS_ERR_CANCELLED) &&
               COLLSIM_SAME(COLLSIM_ERR_OOM, CS_ERR_OOM),
               "collsim_status and cs_status_t differ");
_Static_assert(COLLSIM_MESSAGE_MAX == CS_ERROR_MSG_MAX, "message sizes differ");
/* The cancel flag is handed to the executor as its sig_atomic_t flag. */
_Static_assert(sizeof(sig_atomic_t) == sizeof(int), "sig_atomic_t is not an int");

/* Every key, in the order of collsim.h (the message of an unknown key). */
static const char *const collsim_keys[] = {
    "machine", "coll", "algo", "bytes", "root", "ranks", "order", "opt", "validate",
    "windowed", "whole", "program", "trace", "format", "map", "algo-for", "flops", "skip-unknown",
    "comm-group", "mode", "queue",
    "force", "record", "scale", "size", "iterations", "warmup", "between", "loop", NULL};
#define COLLSIM_NKEYS ((int)(sizeof collsim_keys / sizeof collsim_keys[0]) - 1)

struct collsim_machine {
    cs_machine_t *m;
};

struct collsim_request {
    cs_request_t req;          /* its strings point into `value` and `repeated` */
    char *value[COLLSIM_NKEYS];/* the copy of each key's current value */
    char **repeated;           /* the copies of repeatable keys' values (opt,
                                  algo-for: bounded by their own limits) */
    int nrepeated, caprepeated;
    int record_timeline;       /* record=timeline */
    const char *record_window; /* record=window:T0:T1: "T0:T1" (owned), or NULL */
    cs_replay_t replay;        /* trace, format, map, algo-for, flops */
    volatile int *cancel;
};

struct collsim_result {
    cs_request_run_t run;      /* the machine (borrowed) and the executor's result */
    cs_replay_run_t replay;    /* a trace's program and placement */
    const cs_program_t *prog;  /* run.program or replay.p */
    const cs_request_coll_t *coll; /* the collective, or NULL */
    const int32_t *rank_to_node;   /* NULL: rank r on node r */
    collsim_machine *own;      /* the machine collsim_run opened, or NULL */
    const collsim_machine *machine;
    char *program;             /* the request's program path (figure titles) */
    int validated;             /* 1, 0, -1 (collsim_result_validated) */
    int timeline;              /* messages and op times were recorded */
    cs_figures_window_t win;   /* record=window */
    char *scale, *size;        /* the request's scale and size (owned copies), or NULL */
    char *window_text;         /* owned copy win.text points to */
};

/* ---- entry points ---------------------------------------------------------- */

static pthread_once_t collsim_once = PTHREAD_ONCE_INIT;
/* The C locale, made once: written by collsim_init_once only. */
static locale_t collsim_c_locale;

/* igraph's default error handler aborts: make it return codes, once for the
 * process (its handlers are process-wide). */
static void collsim_init_once(void)
{
    cs_topo_igraph_errors_as_codes();
    collsim_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

static void collsim_init(void)
{
    pthread_once(&collsim_once, collsim_init_once);
}

/* Every entry point that parses or writes numbers runs in the C locale, for
 * this thread only (uselocale): collsim's texts ("1.5KiB", the JSON, figure
 * labels) have a decimal point whatever setlocale the host program made.
 * Returns the thread's locale to restore, or 0 when the C locale could not
 * be made (then the host's, which is the C locale unless it set one). */
static locale_t collsim_enter(void)
{
    collsim_init();
    return collsim_c_locale ? uselocale(collsim_c_locale) : (locale_t)0;
}

static void collsim_leave(locale_t old)
{
    if (old)
        uselocale(old);
}

/* Copies a cs_error_t into the caller's error (when given) and returns its
 * code. */
static int collsim_fail(collsim_error *out, const cs_error_t *e)
{
    if (out) {
        out->code = e->code;
        snprintf(out->message, sizeof out->message, "%s", e->msg);
    }
    return e->code;
}

static int collsim_set_error(collsim_error *out, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int collsim_set_error(collsim_error *out, int code, const char *fmt, ...)
{
    cs_error_t e;
    va_list ap;
    va_start(ap, fmt);
    cs_error_vset(&e, code, fmt, ap);
    va_end(ap);
    return collsim_fail(out, &e);
}

static void collsim_ok(collsim_error *out)
{
    if (out) {
        out->code = COLLSIM_OK;
        out->message[0] = '\0';
    }
}

const char *collsim_version(void)
{
    return COLLSIM_VERSION;
}

int collsim_version_number(void)
{
    int a = 0, b = 0, c = 0;
    if (sscanf(COLLSIM_VERSION, "%d.%d.%d", &a, &b, &c) < 1)
        return 0;
    return a * 10000 + b * 100 + c;
}

const char *collsim_status_name(int code)
{
    return cs_status_key(code);
}

void collsim_free(void *p)
{
    free(p);
}

void collsim_cleanup(void)
{
    cs_plot_cleanup();
}

/* ---- machines ---------------------------------------------------------------- */

static int machine_open_in_c(const char *spec, collsim_machine **out, collsim_error *err)
{
    cs_error_t e;
    cs_machine_t *m = NULL;
    int rc;
    *out = NULL;
    if (!spec)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "missing --machine SPEC");
    if ((rc = cs_machine_new(spec, &m, &e)))
        return collsim_fail(err, &e);
    *out = cs_malloc(sizeof **out);
    (*out)->m = m;
    collsim_ok(err);
    return COLLSIM_OK;
}

void collsim_machine_close(collsim_machine *m)
{
    if (!m)
        return;
    cs_machine_free(m->m);
    free(m);
}

const char *collsim_machine_spec(const collsim_machine *m)
{
    return m->m->spec;
}

const char *collsim_machine_type(const collsim_machine *m)
{
    return m->m->type->name;
}

int collsim_machine_nodes(const collsim_machine *m)
{
    return cs_topo_nodes(m->m->topo);
}

/* The short name and node labels of the figures and of compare's table
 * (api/figures.h, machines/machine.h), copied as snprintf does. */
int collsim_machine_name(const collsim_machine *m, char *buf, size_t len)
{
    char text[256];
    cs_figures_machine_short(m->m, text, sizeof text);
    return snprintf(buf, len, "%s", text);
}

int collsim_machine_node_name(const collsim_machine *m, int node, char *buf, size_t len)
{
    char text[128];
    if (node < 0 || node >= cs_topo_nodes(m->m->topo)) {
        if (len > 0)
            buf[0] = '\0';
        return -1;
    }
    return snprintf(buf, len, "%s", cs_machine_node_label(m->m, node, text, sizeof text));
}

int collsim_machine_channels(const collsim_machine *m)
{
    return cs_topo_channels(m->m->topo);
}

double collsim_machine_tick_seconds(const collsim_machine *m)
{
    return m->m->tick_seconds;
}

/* ---- requests ---------------------------------------------------------------- */

/* The index of key in collsim_keys, or -1. */
static int collsim_key_index(const char *key)
{
    for (int i = 0; collsim_keys[i]; i++)
        if (!strcmp(key, collsim_keys[i]))
            return i;
    return -1;
}

static int collsim_unknown_key(const char *key, collsim_error *err)
{
    char valid[512] = "";
    for (int i = 0; collsim_keys[i]; i++) {
        strcat(valid, i ? ", " : "");
        strcat(valid, collsim_keys[i]);
    }
    return collsim_set_error(err, COLLSIM_ERR_USAGE, "unknown request key '%s'; valid: %s",
                             key ? key : "(null)", valid);
}

collsim_request *collsim_request_new(void)
{
    collsim_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    cs_request_init(&r->req);
    cs_replay_init(&r->replay);
    return r;
}

void collsim_request_free(collsim_request *r)
{
    if (!r)
        return;
    for (int i = 0; i < COLLSIM_NKEYS; i++)
        free(r->value[i]);
    for (int i = 0; i < r->nrepeated; i++)
        free(r->repeated[i]);
    free(r->repeated);
    free(r);
}

/* A copy of value for key k: kept for the request's lifetime when k is
 * repeatable, else until the key's next value. */
typedef struct collsim_copy {
    char *text;
    int key;
} collsim_copy_t;

static collsim_copy_t collsim_copy(const char *value, int key)
{
    collsim_copy_t c = {cs_strdup(value), key};
    return c;
}

static int collsim_is_repeatable(int key)
{
    return !strcmp(collsim_keys[key], "opt") || !strcmp(collsim_keys[key], "algo-for");
}

/* The copy was taken: it replaces the key's previous value (which nothing
 * points to any more) or joins the repeated ones. */
static void collsim_commit(collsim_request *r, collsim_copy_t c)
{
    if (collsim_is_repeatable(c.key)) {
        r->repeated = cs_grow(r->repeated, r->nrepeated, &r->caprepeated, 8,
                              sizeof *r->repeated);
        r->repeated[r->nrepeated++] = c.text;
    } else {
        free(r->value[c.key]);
        r->value[c.key] = c.text;
    }
}

static int collsim_is_flag(const char *key)
{
    return !strcmp(key, "validate") || !strcmp(key, "windowed") || !strcmp(key, "whole") ||
           !strcmp(key, "force");
}

/* record=timeline | window:T0:T1 | none.  The window's times need the
 * machine's clock: only their form is checked here, the rest at the run. */
static int collsim_set_record(collsim_request *r, const char *value, collsim_error *err)
{
    if (!strcmp(value, "timeline")) {
        r->record_timeline = 1;
    } else if (!strcmp(value, "none") || !strcmp(value, "0")) {
        r->record_timeline = 0;
        r->record_window = NULL;
    } else if (!strncmp(value, "window:", 7) && strchr(value + 7, ':') &&
               !strchr(strchr(value + 7, ':') + 1, ':')) {
        collsim_copy_t c = collsim_copy(value + 7, collsim_key_index("record"));
        r->record_window = c.text;
        collsim_commit(r, c);
    } else {
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "record: unknown value '%s'; valid: "
                                 "timeline, window:T0:T1 (either time may be left out), none",
                                 value);
    }
    collsim_ok(err);
    return COLLSIM_OK;
}

static int request_set_in_c(collsim_request *r, const char *key, const char *value,
                        collsim_error *err)
{
    cs_error_t e;
    int rc, k = key ? collsim_key_index(key) : -1;
    if (k < 0)
        return collsim_unknown_key(key, err);
    if (collsim_is_flag(key)) {
        if (value && !strcmp(value, "0")) {
            if (!strcmp(key, "validate"))
                r->req.validate = 0;
            else if (!strcmp(key, "windowed") || !strcmp(key, "whole"))
                r->req.windowed = 0; /* back to the default: windowed where it can */
            else
                r->req.force = 0;
            collsim_ok(err);
            return COLLSIM_OK;
        }
        value = "1"; /* a constant: flags keep no text */
        if ((rc = cs_request_set(&r->req, key, value, &e)))
            return collsim_fail(err, &e);
        collsim_ok(err);
        return COLLSIM_OK;
    }
    if (!value)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "%s: needs a value", key);
    if (!strcmp(key, "record"))
        return collsim_set_record(r, value, err);
    if (!strcmp(key, "scale") || !strcmp(key, "size")) {
        /* figure keys: the size is checked now; the scale's units need the
         * heatmap's metric, so only its form is, the rest at the figure */
        cs_heatmap_size_t sz;
        if (key[1] == 'i' && cs_heatmap_parse_size(value, &sz, &e))
            return collsim_fail(err, &e);
        if (key[1] == 'c' && !strchr(value, ':'))
            return collsim_set_error(err, COLLSIM_ERR_USAGE, "scale '%s': expected LO:HI in "
                                     "the metric's units (util: %%, bytes: a size, k: "
                                     "messages)", value);
        collsim_commit(r, collsim_copy(value, k));
        collsim_ok(err);
        return COLLSIM_OK;
    }
    collsim_copy_t c = collsim_copy(value, k);
    if (cs_replay_is_key(key))
        rc = cs_replay_set(&r->replay, key, c.text, &e);
    else
        rc = cs_request_set(&r->req, key, c.text, &e);
    if (rc) {
        free(c.text); /* refused: the request still points to the old value */
        return collsim_fail(err, &e);
    }
    collsim_commit(r, c);
    collsim_ok(err);
    return COLLSIM_OK;
}

void collsim_request_set_cancel(collsim_request *r, volatile int *flag)
{
    r->cancel = flag;
}

/* ---- running ---------------------------------------------------------------- */

void collsim_result_free(collsim_result *res)
{
    if (!res)
        return;
    cs_request_run_destroy(&res->run);
    cs_replay_run_destroy(&res->replay);
    collsim_machine_close(res->own);
    free(res->program);
    free(res->window_text);
    free(res->scale);
    free(res->size);
    free(res);
}

/* Adds to the executor's options of request r what the result needs: the
 * buckets and records of the figures, the cancel flag. */
static int collsim_exec_opts(const collsim_request *r, collsim_result *res, cs_exec_opts_t *opts,
                             cs_error_t *e)
{
    const cs_machine_t *m = res->run.machine;
    int rc;
    int ks = collsim_key_index("scale"), kz = collsim_key_index("size");
    res->scale = r->value[ks] ? cs_strdup(r->value[ks]) : NULL;
    res->size = r->value[kz] ? cs_strdup(r->value[kz]) : NULL;
    if (r->record_window) {
        res->window_text = cs_strdup(r->record_window);
        if ((rc = cs_figures_parse_window(res->window_text, m->tick_seconds, &res->win, e))) {
            cs_error_prefix(e, "record");
            return rc;
        }
    }
    if (res->win.has || r->record_timeline) {
        opts->bucket_width = 1;
        opts->max_buckets = cs_figures_bucket_count(m);
    }
    res->timeline = r->record_timeline;
    opts->record_messages = r->record_timeline;
    opts->record_op_times = r->record_timeline;
    opts->cancel = (const volatile sig_atomic_t *)r->cancel;
    return CS_OK;
}

/* A trace replayed on m (`collsim replay`). */
static int collsim_do_replay(collsim_machine *m, const collsim_request *r, collsim_result *res,
                             int *keep, cs_error_t *e)
{
    cs_exec_opts_t opts;
    int rc;
    res->run.machine = m->m;
    res->run.machine_borrowed = 1;
    if ((rc = cs_replay_check_request(&r->req, e)) ||
        (rc = cs_request_check_keys(&r->req, 0, e)) ||
        (rc = cs_replay_load(&r->replay, m->m, &res->replay, e)))
        return rc;
    res->prog = res->replay.p;
    res->rank_to_node = res->replay.place.rank_to_node;
    res->program = cs_strdup(r->replay.trace);
    cs_replay_exec_opts(&r->req, &res->replay, &opts);
    if ((rc = collsim_exec_opts(r, res, &opts, e)))
        return rc;
    rc = cs_request_exec(m->m, res->prog, &opts, &res->run.result, e);
    *keep = rc == CS_OK || res->run.result.net != NULL;
    return rc;
}

/* Checks which keys go together, prepares, builds and runs.  Returns the
 * status; *keep tells whether res holds a run that can be read. */
static int collsim_do_run(collsim_machine *m, const collsim_request *r, collsim_result *res,
                          int *keep, cs_error_t *e)
{
    cs_exec_opts_t opts;
    int rc;
    *keep = 0;
    if (r->replay.trace)
        return collsim_do_replay(m, r, res, keep, e);
    if ((rc = cs_replay_check_unused(&r->replay, e)) ||
        (rc = cs_request_check_kind(&r->req, 0, e)) ||
        (rc = cs_request_check_keys(&r->req, r->record_timeline, e)) ||
        (rc = cs_request_prepare_on(&r->req, m->m, &res->run, e)) ||
        (rc = cs_request_build(&r->req, &res->run, e)))
        return rc;
    res->prog = res->run.program;
    res->coll = res->run.is_coll ? &res->run.coll : NULL;
    res->rank_to_node = res->run.coll.rank_to_node;
    if (r->req.program)
        res->program = cs_strdup(r->req.program);
    cs_request_exec_opts(&r->req, &res->run, &opts);
    if ((rc = collsim_exec_opts(r, res, &opts, e)))
        return rc;
    rc = cs_request_run(&res->run, &opts, e);
    if (rc == CS_ERR_VALIDATE) {
        /* a wrong placement is a result (collsim_result_validated), not a
         * failed run */
        res->validated = -1;
        *keep = 1;
        return CS_OK;
    }
    res->validated = res->run.validated ? 1 : 0;
    /* a run that started keeps what happened (exec.h) */
    *keep = rc == CS_OK || res->run.result.net != NULL;
    return rc;
}

static int run_on_in_c(collsim_machine *m, const collsim_request *r, collsim_result **out,
                   collsim_error *err)
{
    cs_error_t e = {0};
    collsim_result *res;
    int keep, rc;
    *out = NULL;
    if (!m || !r)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "collsim_run_on: %s is NULL",
                                 m ? "the request" : "the machine");
    res = cs_calloc(1, sizeof *res);
    cs_request_run_init(&res->run);
    res->machine = m;
    rc = collsim_do_run(m, r, res, &keep, &e);
    if (keep)
        *out = res;
    else
        collsim_result_free(res);
    if (rc)
        return collsim_fail(err, &e);
    collsim_ok(err);
    return COLLSIM_OK;
}

static int run_in_c(const collsim_request *r, collsim_result **out, collsim_error *err)
{
    collsim_machine *m = NULL;
    int rc;
    *out = NULL;
    if (!r)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "collsim_run: the request is NULL");
    if ((rc = collsim_machine_open(r->req.machine, &m, err)))
        return rc;
    rc = collsim_run_on(m, r, out, err);
    if (*out) {
        (*out)->own = m;
        (*out)->machine = m;
    } else {
        collsim_machine_close(m);
    }
    return rc;
}

/* ---- results ---------------------------------------------------------------- */

int64_t collsim_result_ticks(const collsim_result *res)
{
    return res->run.result.finish;
}

double collsim_result_seconds(const collsim_result *res)
{
    return (double)res->run.result.finish * res->run.machine->tick_seconds;
}

int collsim_result_validated(const collsim_result *res)
{
    return res->validated;
}

uint64_t collsim_result_events(const collsim_result *res)
{
    return res->run.result.events;
}

int64_t collsim_result_messages(const collsim_result *res)
{
    return res->run.result.messages;
}

const collsim_machine *collsim_result_machine(const collsim_result *res)
{
    return res->machine;
}

int collsim_result_ranks(const collsim_result *res)
{
    return res->run.result.nranks;
}

int collsim_result_rank_ticks(const collsim_result *res, int64_t *out, int n)
{
    const cs_exec_result_t *r = &res->run.result;
    int k = n < r->nranks ? n : r->nranks;
    for (int i = 0; i < k; i++)
        out[i] = r->rank_finish ? r->rank_finish[i] : 0;
    return k < 0 ? 0 : k;
}

int collsim_result_channels(const collsim_result *res)
{
    return cs_topo_channels(res->run.machine->topo);
}

int collsim_result_channel_records(const collsim_result *res, collsim_channel *out, int n)
{
    const cs_exec_result_t *r = &res->run.result;
    const cs_topo_t *t = res->run.machine->topo;
    int nch = cs_topo_channels(t), k = n < nch ? n : nch;
    for (int c = 0; c < k; c++) {
        const cs_chan_stats_t *s = r->net ? cs_net_chan_stats(r->net, c) : NULL;
        collsim_channel *o = &out[c];
        memset(o, 0, sizeof *o);
        o->src = cs_topo_channel_src(t, c);
        o->dst = cs_topo_channel_dst(t, c);
        if (!s)
            continue;
        o->bytes = s->bytes;
        o->units = s->units;
        o->busy_ticks = s->busy;
        o->stall_ticks = s->stall;
        o->peak_k = s->peak_k;
        o->utilisation = r->finish > 0 ? (double)s->busy / (double)r->finish : 0;
    }
    return k < 0 ? 0 : k;
}

int collsim_result_loop(const collsim_result *res, collsim_loop *out)
{
    const cs_result_loop_t *lp = res->coll ? res->coll->loop : NULL;
    memset(out, 0, sizeof *out);
    if (!lp)
        return 0;
    out->iterations = lp->iterations;
    out->warmup = lp->warmup;
    out->avg_ticks = lp->avg_ticks;
    out->timed_ticks = lp->timed_ticks;
    out->iteration_avg_ticks = lp->iteration_avg_ticks;
    out->iteration_min_ticks = lp->iteration_min_ticks;
    out->iteration_max_ticks = lp->iteration_max_ticks;
    out->first_ticks = lp->first_ticks;
    return 1;
}

int collsim_result_loop_times(const collsim_result *res, int64_t *start, int64_t *end, int n)
{
    const cs_result_loop_t *lp = res->coll ? res->coll->loop : NULL;
    int64_t total = lp ? lp->warmup + lp->iterations : 0;
    int k = n < total ? n : (int)total;
    for (int i = 0; i < k; i++) {
        start[i] = lp->start[i];
        end[i] = lp->end[i];
    }
    return k < 0 ? 0 : k;
}

/* ---- outputs ---------------------------------------------------------------- */

static int collsim_json_to(FILE *f, const collsim_result *res, int flags, cs_error_t *e)
{
    return cs_report_json(f, !(flags & COLLSIM_NO_TIMING), res->run.machine, res->prog,
                          &res->run.result, res->validated > 0, 0, res->coll, e);
}

static int result_json_in_c(const collsim_result *res, int flags, char **out, size_t *len,
                        collsim_error *err)
{
    cs_error_t e;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    int rc;
    *out = NULL;
    if (!f)
        return collsim_set_error(err, COLLSIM_ERR_OOM, "cannot open a memory stream for the "
                                 "JSON result");
    rc = collsim_json_to(f, res, flags, &e);
    if (fclose(f) != 0 && rc == CS_OK)
        rc = cs_error_set(&e, CS_ERR_OOM, "cannot write the JSON result to memory");
    if (rc) {
        free(buf);
        return collsim_fail(err, &e);
    }
    *out = buf;
    if (len)
        *len = n;
    collsim_ok(err);
    return COLLSIM_OK;
}

static int result_write_json_in_c(const collsim_result *res, int flags, const char *path,
                              collsim_error *err)
{
    cs_error_t e;
    cs_outfile_t *o = NULL;
    int rc;
    if (!path)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "--json: the path is NULL");
    if ((rc = cs_outfile_open("--json", path, &o, &e)))
        return collsim_fail(err, &e);
    rc = collsim_json_to(cs_outfile_stream(o), res, flags, &e);
    if (rc == CS_OK)
        rc = cs_outfile_commit(o, &e);
    else
        cs_outfile_abort(o);
    if (rc)
        return collsim_fail(err, &e);
    collsim_ok(err);
    return COLLSIM_OK;
}

/* The title of the result's figures (as `collsim run` gives them). */
static void collsim_title(const collsim_result *res, char *buf, size_t len)
{
    cs_figures_run_title(res->run.machine, res->coll, res->program,
                         cs_program_nranks(res->prog), buf, len);
}

static int result_heatmap_in_c(const collsim_result *res, const char *path, const char *metric,
                               const char *scale, const char *size, collsim_error *err)
{
    cs_error_t e;
    cs_heatmap_metric_t mt = CS_HEATMAP_UTIL;
    cs_heatmap_t *h = NULL;
    char title[320];
    int rc;
    if (!path)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "--heatmap: the path is NULL");
    if (metric && cs_heatmap_parse_metric(metric, &mt, &e) != CS_OK) {
        cs_error_prefix(&e, "--metric");
        return collsim_fail(err, &e);
    }
    if ((rc = cs_heatmap_check_path(path, &e))) {
        cs_error_prefix(&e, "--heatmap");
        return collsim_fail(err, &e);
    }
    if (!res->run.result.net)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "--heatmap: the run recorded no "
                                 "channels");
    collsim_title(res, title, sizeof title);
    /* no cs_plot_cleanup here: it releases fontconfig's process-wide data,
     * which another thread may be drawing with */
    cs_heatmap_style_t st;
    /* this call's scale and size, else the request's (NULL: none) */
    if ((rc = cs_figures_parse_style(scale ? scale : res->scale, size ? size : res->size, mt, &st,
                                     &e)))
        return collsim_fail(err, &e);
    rc = cs_heatmap_new(res->run.machine, &h, &e);
    if (rc == CS_OK)
        rc = cs_figures_heatmap(h, res->run.machine, &res->run.result, mt, &res->win, &st,
                                title, path, NULL, &e);
    cs_heatmap_free(h);
    if (rc)
        return collsim_fail(err, &e);
    collsim_ok(err);
    return COLLSIM_OK;
}

static int result_timeline_in_c(const collsim_result *res, const char *path, collsim_error *err)
{
    cs_error_t e;
    char title[320];
    const cs_request_run_t *run = &res->run;
    int rc;
    if (!path)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "--timeline: the path is NULL");
    if (!res->timeline)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "--timeline needs the request's "
                                 "record=timeline (the run keeps every message only then)");
    collsim_title(res, title, sizeof title);
    cs_timeline_opts_t to = {0, 0, res->rank_to_node, title};
    if ((rc = cs_timeline_write(path, run->machine, res->prog, &run->result, &to, NULL, &e))) {
        cs_error_prefix(&e, "--timeline");
        return collsim_fail(err, &e);
    }
    collsim_ok(err);
    return COLLSIM_OK;
}

/* ---- what there is ------------------------------------------------------------- */

/* Closes memory stream f holding *buf and hands it out, or fails. */
static int collsim_stream_out(FILE *f, char **buf, char **out, collsim_error *err)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*buf);
        return collsim_set_error(err, COLLSIM_ERR_OOM, "cannot write the list to memory");
    }
    *out = *buf;
    collsim_ok(err);
    return COLLSIM_OK;
}

static int list_machines_in_c(char **out, collsim_error *err)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    *out = NULL;
    if (!f)
        return collsim_set_error(err, COLLSIM_ERR_OOM, "cannot open a memory stream");
    cs_catalog_machines_json(f);
    return collsim_stream_out(f, &buf, out, err);
}

static int list_algorithms_in_c(char **out, collsim_error *err)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    *out = NULL;
    if (!f)
        return collsim_set_error(err, COLLSIM_ERR_OOM, "cannot open a memory stream");
    cs_catalog_algorithms_json(f);
    return collsim_stream_out(f, &buf, out, err);
}

static int parse_sizes_in_c(const char *text, int64_t **out, int *n, collsim_error *err)
{
    cs_error_t e;
    *out = NULL;
    *n = 0;
    if (!text)
        return collsim_set_error(err, COLLSIM_ERR_USAGE, "sizes: the text is NULL");
    if (cs_sizes_parse_alloc(text, out, n, &e) != CS_OK) {
        cs_error_prefix(&e, "'%s'", text);
        return collsim_fail(err, &e);
    }
    collsim_ok(err);
    return COLLSIM_OK;
}

/* ---- the entry points that read or write numbers, in the C locale ---------------- */

int collsim_machine_open(const char *spec, collsim_machine **out, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = machine_open_in_c(spec, out, err);
    collsim_leave(old);
    return rc;
}

int collsim_request_set(collsim_request *r, const char *key, const char *value,
                        collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = request_set_in_c(r, key, value, err);
    collsim_leave(old);
    return rc;
}

int collsim_run_on(collsim_machine *m, const collsim_request *r, collsim_result **out,
                   collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = run_on_in_c(m, r, out, err);
    collsim_leave(old);
    return rc;
}

int collsim_run(const collsim_request *r, collsim_result **out, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = run_in_c(r, out, err);
    collsim_leave(old);
    return rc;
}

int collsim_result_json(const collsim_result *res, int flags, char **out, size_t *len,
                        collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = result_json_in_c(res, flags, out, len, err);
    collsim_leave(old);
    return rc;
}

int collsim_result_write_json(const collsim_result *res, int flags, const char *path,
                              collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = result_write_json_in_c(res, flags, path, err);
    collsim_leave(old);
    return rc;
}

int collsim_result_heatmap(const collsim_result *res, const char *path, const char *metric,
                           collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = result_heatmap_in_c(res, path, metric, NULL, NULL, err);
    collsim_leave(old);
    return rc;
}

int collsim_result_heatmap_style(const collsim_result *res, const char *path, const char *metric,
                                 const char *scale, const char *size, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = result_heatmap_in_c(res, path, metric, scale, size, err);
    collsim_leave(old);
    return rc;
}

int collsim_result_timeline(const collsim_result *res, const char *path, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = result_timeline_in_c(res, path, err);
    collsim_leave(old);
    return rc;
}

int collsim_list_machines(char **out, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = list_machines_in_c(out, err);
    collsim_leave(old);
    return rc;
}

int collsim_list_algorithms(char **out, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = list_algorithms_in_c(out, err);
    collsim_leave(old);
    return rc;
}

int collsim_parse_sizes(const char *text, int64_t **out, int *n, collsim_error *err)
{
    locale_t old = collsim_enter();
    int rc = parse_sizes_in_c(text, out, n, err);
    collsim_leave(old);
    return rc;
}
