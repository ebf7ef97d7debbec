/*
 * cmd_serve.c - `collsim serve` (issue 21, docs/api.md, docs/serve.md): the
 * JSON API and the page over HTTP on libevent's evhttp, jobs run by a pool
 * of worker threads (serve_jobs.c), routes in serve_http.c, request bodies
 * in serve_body.c.  This file is the command: its options, the event loop,
 * the signals and an orderly shutdown (stop accepting, cancel the jobs, join
 * the workers, free everything, remove the temporary folder, exit 130/143).
 *
 * Built when jansson is found (meson option `serve`); without it the
 * command says so and exits with the usage status.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app/app.h"

#if !CS_HAVE_SERVE

int cs_app_cmd_serve(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "collsim: serve: this collsim was built without jansson (libjansson-dev, "
                    "meson option serve): the server is not available\n");
    return CS_ERR_USAGE;
}

#else

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/thread.h>
#include <getopt.h>
#include <malloc.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api/loop.h"
#include "app/serve.h"
#include "core/units.h"
#include "io/plot.h"

/* A benchmark loop's iterations at most by default: the OSU loop of small
 * sizes (100 warm-up + 1,000 timed) fits, nccl-tests' 5 + 20 easily. */
#define SERVE_MAX_ITERATIONS (CS_LOOP_OSU_WARMUP + CS_LOOP_OSU_ITERATIONS)

typedef struct serve_args {
    const char *addr;
    int port;
    cs_serve_limits_t lim;
    const char *allow[CS_SERVE_MAX_ALLOW]; /* --allow-host */
    int nallow;
} serve_args_t;

static void serve_help(void)
{
    printf("Usage: collsim serve [--addr 127.0.0.1] [--port 8080] [OPTIONS]\n"
           "\n"
           "Serves the JSON API of docs/api.md and the page at http://ADDR:PORT/: runs,\n"
           "comparisons, sweeps and replays as jobs, their results and figures.  Prints\n"
           "'collsim serve: listening on http://ADDR:PORT/' once it listens; logs a line\n"
           "per request on standard error.  SIGINT or SIGTERM stops it (running jobs\n"
           "are cancelled).\n"
           "\n"
           "      --addr ADDR        the address to listen on (default 127.0.0.1: this\n"
           "                         machine only)\n"
           "      --port N           the port (default 8080; 0: a free one)\n"
           "      --jobs N           jobs run at once, one worker thread each (default 1)\n"
           "      --max-queue N      jobs waiting at most; more are refused with 429\n"
           "                         (default 64)\n"
           "      --max-ranks R      ranks of one run at most (default 4096)\n"
           "      --max-nodes N      nodes of one machine at most, refused before it is\n"
           "                         built (default 1048576: the Cerebras wafer fits)\n"
           "      --max-iterations N a benchmark loop's warm-up + timed iterations at\n"
           "                         most (default %d: OSU's loop of 100 + 1000)\n"
           "      --max-seconds S    wall time of one job at most (default 60)\n"
           "      --grace S          a cancelled job's worker that has not stopped S s\n"
           "                         later is given up, another takes its place\n"
           "                         (default 1; at exit the wait is at most 1 s)\n"
           "      --max-body BYTES   a request body at most (default 1MiB)\n"
           "      --keep SECONDS     how long a finished job is kept (default 600)\n"
           "      --allow-host NAME[:PORT]\n"
           "                         answer requests for this name too (a reverse proxy's;\n"
           "                         repeatable, at most 16).  Otherwise only ADDR:PORT is\n"
           "                         answered, and on loopback localhost:PORT,\n"
           "                         127.0.0.1:PORT and [::1]:PORT: other Host headers get\n"
           "                         421, pages of other sites 403 (docs/security.md)\n"
           "  -h, --help             show this help and exit\n"
           "\n"
           "Exit status: 0 never (it runs until stopped), 2 usage error or the address\n"
           "cannot be used, 130/143 stopped by SIGINT/SIGTERM.\n", SERVE_MAX_ITERATIONS);
}

static int64_t serve_int_opt(const char *opt, const char *text, int64_t lo, int64_t hi)
{
    int64_t v;
    cs_error_t err;
    if (cs_units_parse_int(text, &v, &err) != CS_OK)
        cs_app_usage_error("serve", "%s: %s", opt, err.msg);
    if (v < lo || v > hi)
        cs_app_usage_error("serve", "%s %s: expected %lld..%lld", opt, text, (long long)lo,
                           (long long)hi);
    return v;
}

static double serve_seconds_opt(const char *opt, const char *text, double lo)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || !(v >= lo) || v > 1e9)
        cs_app_usage_error("serve", "%s '%s': expected seconds, at least %g", opt, text, lo);
    return v;
}

/* --allow-host NAME[:PORT]: a DNS name or an IPv4 address (letters, digits,
 * '.', '-', '_'), or an IPv6 address in brackets, then an optional port
 * 1..65535: what a Host header carries, so that it can be compared as it
 * is (serve_http.c). */
static const char *serve_allow_opt(const char *text)
{
    size_t n;
    const char *p = text;
    if (*p == '[') {
        n = strspn(p + 1, "0123456789abcdefABCDEF:.");
        if (n == 0 || p[1 + n] != ']')
            cs_app_usage_error("serve", "--allow-host '%s': an IPv6 address goes in brackets, "
                               "e.g. [fd00::1]:8080", text);
        p += n + 2;
    } else {
        n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_");
        if (n == 0 || n > 253 || (p[n] && p[n] != ':'))
            cs_app_usage_error("serve", "--allow-host '%s': expected NAME or NAME:PORT, NAME a "
                               "host name or address as the Host header gives it", text);
        p += n;
    }
    if (*p == ':') {
        /* digits only: the Host header is compared as text */
        n = strspn(p + 1, "0123456789");
        if (n == 0 || n > 5 || p[1 + n] || atol(p + 1) < 1 || atol(p + 1) > 65535)
            cs_app_usage_error("serve", "--allow-host '%s': the port '%s' is not 1..65535",
                               text, p + 1);
    } else if (*p) {
        cs_app_usage_error("serve", "--allow-host '%s': expected NAME or NAME:PORT", text);
    }
    return text;
}

static void serve_parse_args(int argc, char **argv, serve_args_t *a)
{
    enum { OPT_ADDR = 256, OPT_PORT, OPT_JOBS, OPT_MAX_RANKS, OPT_MAX_NODES, OPT_MAX_SECONDS,
           OPT_GRACE, OPT_MAX_BODY, OPT_MAX_QUEUE, OPT_KEEP, OPT_ALLOW_HOST,
           OPT_MAX_ITERATIONS };
    static const struct option longopts[] = {
        {"addr", required_argument, NULL, OPT_ADDR},
        {"port", required_argument, NULL, OPT_PORT},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"max-ranks", required_argument, NULL, OPT_MAX_RANKS},
        {"max-nodes", required_argument, NULL, OPT_MAX_NODES},
        {"max-iterations", required_argument, NULL, OPT_MAX_ITERATIONS},
        {"max-seconds", required_argument, NULL, OPT_MAX_SECONDS},
        {"grace", required_argument, NULL, OPT_GRACE},
        {"max-body", required_argument, NULL, OPT_MAX_BODY},
        {"max-queue", required_argument, NULL, OPT_MAX_QUEUE},
        {"keep", required_argument, NULL, OPT_KEEP},
        {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cs_error_t err;
    int64_t v;
    int c;
    memset(a, 0, sizeof *a);
    a->addr = "127.0.0.1";
    a->port = 8080;
    /* 2^20 nodes: the full Cerebras wafer (850,000 PEs, 1.2 GB to run) and
     * every machine of the papers fit; a 2^26-node torus (3.7 GB before
     * its first event) does not */
    a->lim = (cs_serve_limits_t){.jobs = 1, .max_queue = 64, .max_ranks = 4096,
                                 .max_nodes = 1 << 20, .max_seconds = 60, .grace = 1,
                                 .max_iterations = SERVE_MAX_ITERATIONS,
                                 .max_body = 1 << 20, .keep = 600, .cache_jobs = 256,
                                 .cache_bytes = 256u << 20};
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_ADDR: a->addr = optarg; break;
        case OPT_PORT: a->port = (int)serve_int_opt("--port", optarg, 0, 65535); break;
        case OPT_JOBS: a->lim.jobs = (int)serve_int_opt("--jobs", optarg, 1, 64); break;
        case OPT_MAX_QUEUE:
            a->lim.max_queue = (int)serve_int_opt("--max-queue", optarg, 0, 100000);
            break;
        case OPT_MAX_RANKS:
            a->lim.max_ranks = serve_int_opt("--max-ranks", optarg, 1, INT32_MAX);
            break;
        case OPT_MAX_NODES:
            a->lim.max_nodes = serve_int_opt("--max-nodes", optarg, 1, INT32_MAX);
            break;
        case OPT_MAX_ITERATIONS:
            a->lim.max_iterations = serve_int_opt("--max-iterations", optarg, 1,
                                                  2 * CS_LOOP_MAX_ITERATIONS);
            break;
        case OPT_MAX_SECONDS:
            a->lim.max_seconds = serve_seconds_opt("--max-seconds", optarg, 0.001);
            break;
        case OPT_GRACE: a->lim.grace = serve_seconds_opt("--grace", optarg, 0.001); break;
        case OPT_KEEP: a->lim.keep = serve_seconds_opt("--keep", optarg, 0); break;
        case OPT_MAX_BODY:
            if (cs_units_parse_bytes(optarg, &v, &err) != CS_OK)
                cs_app_usage_error("serve", "--max-body: %s", err.msg);
            if (v < 64 || v > (INT64_C(1) << 30))
                cs_app_usage_error("serve", "--max-body %s: expected 64 bytes to 1GiB", optarg);
            a->lim.max_body = (size_t)v;
            break;
        case OPT_ALLOW_HOST:
            if (a->nallow == CS_SERVE_MAX_ALLOW)
                cs_app_usage_error("serve", "--allow-host: at most %d names",
                                   CS_SERVE_MAX_ALLOW);
            a->allow[a->nallow++] = serve_allow_opt(optarg);
            break;
        case 'h': serve_help(); exit(0);
        default: cs_app_getopt_error("serve", c, argv, longopts);
        }
    }
    cs_app_no_operands("serve", argc, argv);
}

/* Seconds a stopping server waits for its workers at most (cs_serve_stop):
 * with the loop's own stop, the server is gone within 2 s. */
#define SERVE_STOP_GRACE 1.0

/* The loop's own state. */
typedef struct serve_loop {
    struct event_base *base;
    cs_serve_t *s;
    int signal;
} serve_loop_t;

static void serve_on_signal(evutil_socket_t sig, short what, void *arg)
{
    serve_loop_t *l = arg;
    (void)what;
    l->signal = (int)sig;
    event_base_loopbreak(l->base);
}

/* A quarter of a second: the watchdog's resolution (a stuck job fails
 * within --max-seconds + --grace + 0.25 s) and expiry's. */
static void serve_on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    cs_serve_watch(arg);
    cs_serve_expire(arg);
}

/* Removes the temporary folder and what a stopped job may have left in it. */
static void serve_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
    rmdir(dir);
}

int cs_app_cmd_serve(int argc, char **argv)
{
    serve_args_t a;
    serve_loop_t loop = {0};
    struct evhttp *http = NULL;
    struct evhttp_bound_socket *sock = NULL;
    struct event *sigint = NULL, *sigterm = NULL, *tick = NULL;
    void *routes = NULL;
    cs_error_t err = {0};
    char tmpdir[256];
    const char *t = getenv("TMPDIR"), *tmp = t && *t ? t : "/tmp";
    int rc = CS_OK;

    serve_parse_args(argc, argv, &a);
    /* One malloc arena, before any thread starts (MALLOC_ARENA_MAX in the
     * environment still decides when set).  glibc gives every thread that
     * allocates (the loop, each worker) an arena of its own, and
     * malloc_trim after expiry cannot hand back the pages their fragments
     * pin: after a load round (bench/serve_load.py) the RSS stayed 10-30 MiB
     * above the start with the default arenas, within 0.5 MiB from round to
     * round with one.  The one lock costs some speed under load (the same
     * bench: 914 req/s, p50 5.4 ms against 1033 req/s, 3.6 ms with 8
     * arenas), a price for a long-running server's memory coming back. */
    if (!getenv("MALLOC_ARENA_MAX"))
        mallopt(M_ARENA_MAX, 1);
    snprintf(tmpdir, sizeof tmpdir, "%s/collsim-serve-XXXXXX", tmp);
    if (!mkdtemp(tmpdir)) {
        cs_error_set(&err, CS_ERR_IO, "serve: cannot make a temporary folder in %s: %s", tmp,
                     strerror(errno));
        return cs_app_report(&err);
    }
    /* workers activate the figures' event from their threads */
    if (evthread_use_pthreads() != 0 || !(loop.base = event_base_new())) {
        rc = cs_error_set(&err, CS_ERR_RUNTIME, "serve: cannot make the event loop");
        goto out;
    }
    if ((rc = cs_serve_new(&a.lim, loop.base, tmpdir, &loop.s, &err)))
        goto out;
    http = evhttp_new(loop.base);
    if (!http) {
        rc = cs_error_set(&err, CS_ERR_RUNTIME, "serve: cannot make the HTTP server");
        goto out;
    }
    /* bodies, headers and slow clients bounded by evhttp itself; a body a
     * little over --max-body is read and refused with the JSON error
     * (serve_body.c), a far larger one gets evhttp's own 413 unread */
    evhttp_set_max_body_size(http, (ev_ssize_t)(a.lim.max_body + CS_SERVE_BODY_SLACK));
    evhttp_set_max_headers_size(http, 16384);
    evhttp_set_timeout(http, 30);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
                                         EVHTTP_REQ_DELETE | EVHTTP_REQ_PUT |
                                         EVHTTP_REQ_PATCH | EVHTTP_REQ_OPTIONS);
    errno = 0;
    sock = evhttp_bind_socket_with_handle(http, a.addr, (ev_uint16_t)a.port);
    if (!sock) {
        rc = cs_error_set(&err, CS_ERR_USAGE, "serve: cannot listen on %s port %d: %s", a.addr,
                          a.port, errno ? strerror(errno) : "not an address of this machine");
        goto out;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    int port = a.port;
    if (getsockname(evhttp_bound_socket_get_fd(sock), (struct sockaddr *)&ss, &sl) == 0)
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    /* the routes once the port is known: a request's Host must name it
     * (no request is read before the loop runs) */
    cs_serve_site_t site = {a.addr, port, a.allow, a.nallow};
    if (!(routes = cs_serve_http_new(http, loop.s, &a.lim, &site, stderr))) {
        rc = cs_error_set(&err, CS_ERR_RUNTIME, "serve: cannot make the HTTP server");
        goto out;
    }
    sigint = evsignal_new(loop.base, SIGINT, serve_on_signal, &loop);
    sigterm = evsignal_new(loop.base, SIGTERM, serve_on_signal, &loop);
    tick = event_new(loop.base, -1, EV_PERSIST, serve_on_tick, loop.s);
    struct timeval quarter = {0, 250000};
    if (!sigint || !sigterm || !tick || event_add(sigint, NULL) || event_add(sigterm, NULL) ||
        event_add(tick, &quarter)) {
        rc = cs_error_set(&err, CS_ERR_RUNTIME, "serve: cannot watch the signals");
        goto out;
    }
    printf("collsim serve: listening on http://%s%s%s:%d/\n", strchr(a.addr, ':') ? "[" : "",
           a.addr, strchr(a.addr, ':') ? "]" : "", port);
    fflush(stdout);
    event_base_dispatch(loop.base);
    fprintf(stderr, "collsim serve: stopping (%s)\n",
            loop.signal == SIGINT ? "SIGINT" : loop.signal == SIGTERM ? "SIGTERM" : "loop ended");
out:
    /* stop accepting, then cancel and join the jobs before evhttp goes:
     * a worker may still hold a figure's request */
    if (sock)
        evhttp_del_accept_socket(http, sock);
    /* a worker in a step that does not look at its cancel flag (building a
     * large machine) is not waited for: SIGTERM must end the server within
     * 2 s whatever the workers do.  The process ends at once, without
     * freeing what such a worker still uses; the folder goes first. */
    double wait = a.lim.grace < SERVE_STOP_GRACE ? a.lim.grace : SERVE_STOP_GRACE;
    if (loop.s && cs_serve_stop(loop.s, wait) > 0) {
        serve_rmdir(tmpdir);
        fprintf(stderr, "collsim serve: a worker did not stop within %g s; exiting without "
                "it\n", wait);
        fflush(NULL);
        _exit(rc ? cs_status_exit_code(rc) : loop.signal ? 128 + loop.signal : 0);
    }
    cs_serve_free(loop.s);
    if (http)
        evhttp_free(http);
    free(routes);
    if (sigint)
        event_free(sigint); /* restores collsim's own handler (main.c) */
    if (sigterm)
        event_free(sigterm);
    if (tick)
        event_free(tick);
    if (loop.base)
        event_base_free(loop.base);
    libevent_global_shutdown();
    cs_plot_cleanup();
    serve_rmdir(tmpdir);
    if (rc)
        return cs_app_report(&err);
    if (loop.signal)
        raise(loop.signal); /* main.c's handler records it: exit 128 + the signal */
    return CS_OK;
}

#endif
