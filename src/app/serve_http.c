/*
 * serve_http.c - the routes of `collsim serve` over libevent's evhttp
 * (docs/api.md): one generic callback that decodes the path
 * (evhttp_uri, evhttp_uridecode), picks the endpoint, answers JSON written
 * with the command line's writer into a memory stream, and logs one line
 * per request (method, path, status, bytes, milliseconds).  No HTTP is
 * parsed here: evhttp does it, within the limits cmd_serve.c sets.
 *
 * Before any route runs, a request is checked against the two ways a web
 * page in the user's browser could use a server on the user's machine
 * (docs/security.md): cross-site requests (CSRF: refused by Origin,
 * Sec-Fetch-Site and a JSON-only Content-Type, which a page of another site
 * cannot send without a CORS preflight this server never grants) and DNS
 * rebinding (a name of the attacker's resolving to 127.0.0.1: refused by a
 * Host that must name this server).
 */
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <sys/queue.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api/catalog.h"
#include "app/serve.h"

#define HTTP_JSON "application/json; charset=utf-8"
/* the bound address and the loopback names (twice each on port 80), plus
 * each --allow-host name as given and with the port (and bare on port 80) */
#define HTTP_MAX_HOSTS (8 + 3 * CS_SERVE_MAX_ALLOW)
#define HTTP_HOST_LEN 272 /* a DNS name (253), brackets, ':' and a port */

typedef struct serve_http {
    cs_serve_t *s;
    FILE *log;
    cs_serve_limits_t lim;
    /* the Host values accepted, compared case-insensitively (names are) */
    int nhosts;
    char hosts[HTTP_MAX_HOSTS][HTTP_HOST_LEN];
} serve_http_t;

static double http_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const char *http_reason(int code)
{
    switch (code) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 421: return "Misdirected Request";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 503: return "Service Unavailable";
    default: return code < 500 ? "Error" : "Internal Server Error";
    }
}

static const char *http_method(enum evhttp_cmd_type t)
{
    switch (t) {
    case EVHTTP_REQ_GET: return "GET";
    case EVHTTP_REQ_POST: return "POST";
    case EVHTTP_REQ_HEAD: return "HEAD";
    case EVHTTP_REQ_PUT: return "PUT";
    case EVHTTP_REQ_DELETE: return "DELETE";
    case EVHTTP_REQ_OPTIONS: return "OPTIONS";
    case EVHTTP_REQ_TRACE: return "TRACE";
    case EVHTTP_REQ_CONNECT: return "CONNECT";
    case EVHTTP_REQ_PATCH: return "PATCH";
    default: return "?";
    }
}

/* Sends the reply and logs it. */
static void http_send(serve_http_t *h, struct evhttp_request *req, double t0, int code,
                      const char *ctype, const char *data, size_t len)
{
    struct evkeyvalq *out = evhttp_request_get_output_headers(req);
    struct evbuffer *buf = evbuffer_new();
    const char *uri = evhttp_request_get_uri(req);
    evhttp_add_header(out, "Content-Type", ctype);
    evhttp_add_header(out, "X-Content-Type-Options", "nosniff");
    /* jobs change under the client; the catalogue is small: never cached */
    evhttp_add_header(out, "Cache-Control", "no-store");
    /* never inside another site's frame, where its page could steer the
     * user's clicks on the form (clickjacking) */
    evhttp_add_header(out, "X-Frame-Options", "DENY");
    evhttp_add_header(out, "Content-Security-Policy", "frame-ancestors 'none'");
    /* HEAD: the headers a GET would get, and no body (evhttp sent the
     * body and no length) */
    if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD) {
        char n[32];
        snprintf(n, sizeof n, "%zu", len);
        evhttp_add_header(out, "Content-Length", n);
    } else if (buf && len) {
        evbuffer_add(buf, data, len);
    }
    fprintf(h->log, "%s %.200s %d %zu %.1f ms\n", http_method(evhttp_request_get_command(req)),
            uri ? uri : "?", code, len, 1e3 * (http_now() - t0));
    fflush(h->log);
    evhttp_send_reply(req, code, http_reason(code), buf);
    if (buf)
        evbuffer_free(buf);
}

/* Writes a JSON document with write(f, arg) and sends it. */
static void http_json(serve_http_t *h, struct evhttp_request *req, double t0, int code,
                      void (*write)(FILE *, const void *), const void *arg)
{
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    if (!f) {
        static const char oom[] = "{\"error\": {\"status\": \"oom\", \"message\": \"out of "
                                  "memory\"}}\n";
        http_send(h, req, t0, 500, HTTP_JSON, oom, sizeof oom - 1);
        return;
    }
    write(f, arg);
    fclose(f);
    http_send(h, req, t0, code, HTTP_JSON, doc, len);
    free(doc);
}

static void write_fail(FILE *f, const void *arg) { cs_serve_fail_json(f, arg); }

static void http_fail(serve_http_t *h, struct evhttp_request *req, double t0,
                      const cs_serve_fail_t *fail)
{
    http_json(h, req, t0, fail->http ? fail->http : 500, write_fail, fail);
}

static void http_refuse(serve_http_t *h, struct evhttp_request *req, double t0, int code,
                        const char *field, const char *msg)
{
    cs_serve_fail_t f;
    cs_serve_fail(&f, code, field, CS_ERR_USAGE, "%s", msg);
    http_fail(h, req, t0, &f);
}

static void http_wrong_method(serve_http_t *h, struct evhttp_request *req, double t0,
                              const char *allow)
{
    char msg[128];
    evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", allow);
    snprintf(msg, sizeof msg, "%s is not allowed here (allowed: %s)",
             http_method(evhttp_request_get_command(req)), allow);
    http_refuse(h, req, t0, 405, NULL, msg);
}

/* ---- who may ask ------------------------------------------------------------- */

/* Whether a Host value (or an Origin's host part) names this server. */
static int http_host_ok(const serve_http_t *h, const char *host)
{
    for (int i = 0; i < h->nhosts; i++)
        if (!strcasecmp(h->hosts[i], host))
            return 1;
    return 0;
}

/* Whether a Content-Type is application/json, parameters (charset) aside;
 * media types are case-insensitive (RFC 9110 8.3.1). */
static int http_is_json(const char *ctype)
{
    static const char want[] = "application/json";
    size_t n;
    if (!ctype)
        return 0;
    ctype += strspn(ctype, " \t");
    n = strcspn(ctype, ";");
    while (n && (ctype[n - 1] == ' ' || ctype[n - 1] == '\t'))
        n--;
    return n == sizeof want - 1 && !strncasecmp(ctype, want, n);
}

/* The checks every request passes before its route (docs/security.md, in
 * this order): one Host naming this server (400 none or several, 421 another
 * name: DNS rebinding), an Origin, when sent, of this server (403: another
 * site's page), no cross-site fetch without an Origin (403, but a link
 * followed to a page of this server), a POST's body declared JSON (415).
 * Returns 1 when the request was refused (and answered). */
static int http_refused(serve_http_t *h, struct evhttp_request *req, double t0)
{
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    const char *host = NULL, *origin, *site, *ctype;
    struct evkeyval *e;
    int nhost = 0;
    char msg[800]; /* within a cs_error_t's message */
    TAILQ_FOREACH(e, in, next)
        if (!strcasecmp(e->key, "Host")) {
            host = e->value;
            nhost++;
        }
    if (nhost != 1) {
        /* HTTP/1.1 requires exactly one (RFC 9112 3.2); browsers send it */
        http_refuse(h, req, t0, 400, NULL,
                    nhost ? "the request has several Host headers"
                          : "the request has no Host header (HTTP/1.1 requires one)");
        return 1;
    }
    if (!http_host_ok(h, host)) {
        /* the names accepted, as many as the message holds */
        snprintf(msg, sizeof msg, "Host '%.80s' is not a name of this server (--allow-host "
                 "adds one; docs/security.md); it answers to %s", host, h->hosts[0]);
        for (int i = 1; i < h->nhosts; i++) {
            size_t used = strlen(msg);
            int fits = used + strlen(h->hosts[i]) + 8 < sizeof msg;
            snprintf(msg + used, sizeof msg - used, ", %s", fits ? h->hosts[i] : "...");
            if (!fits)
                break;
        }
        http_refuse(h, req, t0, 421, NULL, msg);
        return 1;
    }
    origin = evhttp_find_header(in, "Origin");
    if (origin) {
        const char *rest = !strncasecmp(origin, "http://", 7)    ? origin + 7
                           : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                                 : NULL;
        if (!rest || !http_host_ok(h, rest)) {
            snprintf(msg, sizeof msg, "Origin '%.100s' is not this server: a page of another "
                     "site may not use this API (docs/security.md)", origin);
            http_refuse(h, req, t0, 403, NULL, msg);
            return 1;
        }
    } else if ((site = evhttp_find_header(in, "Sec-Fetch-Site")) &&
               !strcasecmp(site, "cross-site")) {
        /* a link to the page (or a figure) followed from another site is a
         * top-level navigation: the other site cannot read what it shows */
        const char *mode = evhttp_find_header(in, "Sec-Fetch-Mode");
        const char *dest = evhttp_find_header(in, "Sec-Fetch-Dest");
        int link = (m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD) && mode && dest &&
                   !strcasecmp(mode, "navigate") && !strcasecmp(dest, "document");
        if (!link) {
            http_refuse(h, req, t0, 403, NULL,
                        "a request from a page of another site (Sec-Fetch-Site: cross-site) "
                        "is refused (docs/security.md)");
            return 1;
        }
    }
    if (m == EVHTTP_REQ_POST && !http_is_json(ctype = evhttp_find_header(in, "Content-Type"))) {
        if (ctype)
            snprintf(msg, sizeof msg, "Content-Type '%.100s': a POST takes a JSON body "
                     "(Content-Type: application/json)", ctype);
        else
            snprintf(msg, sizeof msg, "a POST takes a JSON body and says so "
                     "(Content-Type: application/json)");
        http_refuse(h, req, t0, 415, NULL, msg);
        return 1;
    }
    return 0;
}

/* ---- endpoints ---------------------------------------------------------------- */

static void write_machines(FILE *f, const void *arg) { (void)arg; cs_catalog_machines_json(f); }
static void write_algorithms(FILE *f, const void *arg)
{
    (void)arg;
    cs_catalog_algorithms_json(f);
}
static void write_health(FILE *f, const void *arg) { cs_serve_health_json((cs_serve_t *)arg, f); }

typedef struct submitted {
    const char *id;
    int cached;
} submitted_t;

static void write_submitted(FILE *f, const void *arg)
{
    const submitted_t *s = arg;
    fprintf(f, "{\"id\": \"%s\", \"state\": \"%s\", \"cached\": %s}\n", s->id,
            s->cached ? "done" : "queued", s->cached ? "true" : "false");
}

static void http_post(serve_http_t *h, struct evhttp_request *req, double t0,
                      cs_serve_kind_t kind, const char *query)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(in);
    cs_serve_body_t b;
    cs_serve_fail_t f;
    char id[17], loc[64];
    int cached;
    /* one contiguous block (not NUL-terminated: jansson's json_loadb) */
    const char *body = len ? (const char *)evbuffer_pullup(in, -1) : "";
    int failed = cs_serve_body_parse(kind, body, len, query, &h->lim, &b, &f) ||
                 cs_serve_submit(h->s, &b, id, &cached, &f);
    cs_serve_body_destroy(&b);
    if (failed) {
        http_fail(h, req, t0, &f);
        return;
    }
    snprintf(loc, sizeof loc, "/api/jobs/%s", id);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Location", loc);
    submitted_t sub = {id, cached};
    http_json(h, req, t0, cached ? 200 : 202, write_submitted, &sub);
}

typedef struct cancelled {
    const char *id;
    cs_serve_state_t state;
} cancelled_t;

static void write_cancelled(FILE *f, const void *arg)
{
    const cancelled_t *c = arg;
    fprintf(f, "{\"id\": \"%s\", \"state\": \"%s\"}\n", c->id, cs_serve_state_name(c->state));
}

/* A figure's reply, sent when a worker has drawn it. */
typedef struct figure_ctx {
    serve_http_t *h;
    struct evhttp_request *req;
    double t0;
    const char *ctype;
} figure_ctx_t;

static void http_figure_done(void *arg, const char *data, size_t len, const cs_serve_fail_t *fail)
{
    figure_ctx_t *c = arg;
    if (fail)
        http_fail(c->h, c->req, c->t0, fail);
    else if (data)
        http_send(c->h, c->req, c->t0, 200, c->ctype, data, len);
    free(c);
}

/* The query of a figure: run, metric, window, and for heatmaps scale and
 * size (width and height are taken and ignored: size= sets a heatmap's
 * size, as --size does). */
static int http_figure_query(const char *query, cs_serve_figreq_t *q, cs_serve_fail_t *f)
{
    struct evkeyvalq kv;
    struct evkeyval *e;
    int rc = CS_OK;
    TAILQ_INIT(&kv);
    snprintf(q->metric, sizeof q->metric, "util");
    if (query && evhttp_parse_query_str(query, &kv) != 0)
        return cs_serve_fail(f, 400, NULL, CS_ERR_USAGE, "the query string is malformed");
    TAILQ_FOREACH(e, &kv, next) {
        char *end;
        if (!strcmp(e->key, "run")) {
            long v = strtol(e->value, &end, 10);
            if (!*e->value || *end || v < 0 || v > CS_SERVE_MAX_POINTS) {
                rc = cs_serve_fail(f, 400, "run", CS_ERR_USAGE,
                                   "run '%.32s': expected a run index", e->value);
                break;
            }
            q->run = (int)v;
        } else if (!strcmp(e->key, "metric") &&
                   strlen(e->value) < sizeof q->metric) {
            snprintf(q->metric, sizeof q->metric, "%s", e->value);
        } else if (!strcmp(e->key, "window") && strlen(e->value) < sizeof q->window) {
            snprintf(q->window, sizeof q->window, "%s", e->value);
        } else if (!strcmp(e->key, "scale") && strlen(e->value) < sizeof q->scale) {
            snprintf(q->scale, sizeof q->scale, "%s", e->value);
        } else if (!strcmp(e->key, "size") && strlen(e->value) < sizeof q->size) {
            snprintf(q->size, sizeof q->size, "%s", e->value);
        } else if (strcmp(e->key, "width") && strcmp(e->key, "height")) {
            rc = cs_serve_fail(f, 400, strlen(e->key) < sizeof f->field ? e->key : NULL,
                               CS_ERR_USAGE, "unknown or too long query key '%.32s'; valid: "
                               "run, metric, window, scale, size, width, height", e->key);
            break;
        }
    }
    evhttp_clear_headers(&kv);
    return rc;
}

static void http_job(serve_http_t *h, struct evhttp_request *req, double t0, const char *rest,
                     const char *query)
{
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    int get = m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD;
    char id[17];
    size_t n = strspn(rest, "0123456789abcdef");
    const char *sub = rest + n;
    cs_serve_fail_t f;
    if (n == 0 || n > 16 || (*sub && *sub != '/')) {
        http_refuse(h, req, t0, 404, NULL, "no such job");
        return;
    }
    memcpy(id, rest, n);
    id[n] = '\0';
    if (!*sub) {
        if (m == EVHTTP_REQ_DELETE) {
            cancelled_t c = {id, CS_SERVE_QUEUED};
            if (cs_serve_cancel(h->s, id, &c.state, &f))
                http_fail(h, req, t0, &f);
            else
                http_json(h, req, t0, 200, write_cancelled, &c);
        } else if (!get) {
            http_wrong_method(h, req, t0, "GET, DELETE");
        } else {
            char *tmp = NULL;
            size_t len = 0;
            FILE *doc = open_memstream(&tmp, &len);
            int rc = doc ? cs_serve_job_json(h->s, id, doc, &f)
                         : cs_serve_fail(&f, 500, NULL, CS_ERR_OOM, "out of memory");
            if (doc)
                fclose(doc);
            if (rc == CS_OK)
                http_send(h, req, t0, 200, HTTP_JSON, tmp, len);
            else
                http_fail(h, req, t0, &f);
            free(tmp);
        }
        return;
    }
    if (!get) {
        http_wrong_method(h, req, t0, "GET");
        return;
    }
    sub++;
    if (!strcmp(sub, "result")) {
        char *buf;
        size_t len;
        if (cs_serve_result(h->s, id, &buf, &len, &f)) {
            http_fail(h, req, t0, &f);
            return;
        }
        http_send(h, req, t0, 200, HTTP_JSON, buf, len);
        free(buf);
        return;
    }
    static const struct {
        const char *name, *ctype;
        cs_serve_fig_t fig;
    } figs[] = {
        {"heatmap.svg", "image/svg+xml", CS_SERVE_FIG_HEATMAP_SVG},
        {"heatmap.png", "image/png", CS_SERVE_FIG_HEATMAP_PNG},
        {"timeline.json", HTTP_JSON, CS_SERVE_FIG_TIMELINE},
        {"plot.svg", "image/svg+xml", CS_SERVE_FIG_PLOT},
    };
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        if (strcmp(sub, figs[i].name))
            continue;
        cs_serve_figreq_t q;
        memset(&q, 0, sizeof q);
        q.fig = figs[i].fig;
        if (http_figure_query(query, &q, &f)) {
            http_fail(h, req, t0, &f);
            return;
        }
        figure_ctx_t *c = calloc(1, sizeof *c);
        if (!c) {
            http_refuse(h, req, t0, 500, NULL, "out of memory");
            return;
        }
        *c = (figure_ctx_t){h, req, t0, figs[i].ctype};
        if (cs_serve_figure(h->s, id, &q, http_figure_done, c, &f)) {
            free(c);
            http_fail(h, req, t0, &f);
        }
        return; /* answered by http_figure_done */
    }
    http_refuse(h, req, t0, 404, NULL,
                "no such part of a job (result, heatmap.svg, heatmap.png, timeline.json, "
                "plot.svg)");
}

static void http_route(struct evhttp_request *req, void *arg)
{
    serve_http_t *h = arg;
    double t0 = http_now();
    const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
    const char *raw = uri ? evhttp_uri_get_path(uri) : NULL;
    const char *query = uri ? evhttp_uri_get_query(uri) : NULL;
    enum evhttp_cmd_type m = evhttp_request_get_command(req);
    int get = m == EVHTTP_REQ_GET || m == EVHTTP_REQ_HEAD;
    size_t len = 0;
    char *path;
    if (http_refused(h, req, t0))
        return;
    path = raw ? evhttp_uridecode(raw, 0, &len) : NULL;
    if (!path || strlen(path) != len) {
        http_refuse(h, req, t0, 400, NULL, "the path is malformed");
        free(path);
        return;
    }
    static const struct {
        const char *path;
        cs_serve_kind_t kind;
    } posts[] = {
        {"/api/run", CS_SERVE_RUN}, {"/api/compare", CS_SERVE_COMPARE},
        {"/api/sweep", CS_SERVE_SWEEP}, {"/api/replay", CS_SERVE_REPLAY},
    };
    static const struct {
        const char *path;
        void (*write)(FILE *, const void *);
    } gets[] = {
        {"/api/machines", write_machines}, {"/api/algorithms", write_algorithms},
        {"/api/health", write_health},
    };
    if (!strcmp(path, "/") || !strcmp(path, "/index.html")) {
        if (get)
            http_send(h, req, t0, 200, "text/html; charset=utf-8", cs_serve_page,
                      cs_serve_page_len);
        else
            http_wrong_method(h, req, t0, "GET");
        goto out;
    }
    for (size_t i = 0; i < sizeof posts / sizeof posts[0]; i++)
        if (!strcmp(path, posts[i].path)) {
            if (m == EVHTTP_REQ_POST)
                http_post(h, req, t0, posts[i].kind, query);
            else
                http_wrong_method(h, req, t0, "POST");
            goto out;
        }
    for (size_t i = 0; i < sizeof gets / sizeof gets[0]; i++)
        if (!strcmp(path, gets[i].path)) {
            if (get)
                http_json(h, req, t0, 200, gets[i].write, h->s);
            else
                http_wrong_method(h, req, t0, "GET");
            goto out;
        }
    if (!strncmp(path, "/api/jobs/", 10)) {
        http_job(h, req, t0, path + 10, query);
        goto out;
    }
    http_refuse(h, req, t0, 404, NULL, "no such path (see docs/api.md)");
out:
    free(path);
}

/* Adds one accepted Host value (once; fmt's result cut at HTTP_HOST_LEN,
 * which cmd_serve.c's checks of --allow-host keep names within). */
static void http_add(serve_http_t *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void http_add(serve_http_t *h, const char *fmt, ...)
{
    char v[HTTP_HOST_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (h->nhosts < HTTP_MAX_HOSTS && !http_host_ok(h, v))
        snprintf(h->hosts[h->nhosts++], HTTP_HOST_LEN, "%s", v);
}

/* Adds NAME:PORT (an IPv6 address in brackets), and NAME alone on port 80,
 * which a browser leaves out as the scheme's default. */
static void http_add_host(serve_http_t *h, const char *name, int port)
{
    const char *open = strchr(name, ':') && name[0] != '[' ? "[" : "";
    const char *close = *open ? "]" : "";
    http_add(h, "%s%s%s:%d", open, name, close, port);
    if (port == 80)
        http_add(h, "%s%s%s", open, name, close);
}

/* Whether addr is a loopback address or the wildcard (which listens on
 * loopback too): then the loopback names reach this server. */
static int http_loopback(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (!strcasecmp(addr, "localhost"))
        return 1;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127 || a4.s_addr == 0;
    if (inet_pton(AF_INET6, addr, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || IN6_IS_ADDR_UNSPECIFIED(&a6);
    return 0;
}

void *cs_serve_http_new(void *http, cs_serve_t *s, const cs_serve_limits_t *lim,
                        const cs_serve_site_t *site, FILE *log)
{
    serve_http_t *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->s = s;
    h->log = log;
    h->lim = *lim;
    /* an IP literal or localhost cannot be rebound to another address by
     * an attacker's DNS: on loopback these are safe to accept */
    http_add_host(h, site->addr, site->port);
    if (http_loopback(site->addr)) {
        http_add_host(h, "localhost", site->port);
        http_add_host(h, "127.0.0.1", site->port);
        http_add_host(h, "::1", site->port);
    }
    /* --allow-host NAME: as a proxy passes it on (no port: the scheme's
     * default) and with the bound port; NAME:PORT exactly (cmd_serve.c
     * checked the form: a port follows the last ':' outside brackets) */
    for (int i = 0; i < site->nallow && i < CS_SERVE_MAX_ALLOW; i++) {
        const char *a = site->allow[i];
        if (!a) /* never (cmd_serve.c fills nallow entries); said for gcc -O3's format check */
            continue;
        const char *colon = strrchr(a, ':'), *br = strchr(a, ']');
        http_add(h, "%s", a);
        if (!colon || (br && colon < br))
            http_add_host(h, a, site->port);
    }
    evhttp_set_gencb(http, http_route, h);
    return h;
}
