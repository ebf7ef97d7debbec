/*
 * fuzz_serve_body.c - libFuzzer target: the request bodies of `collsim
 * serve` (src/app/serve_body.c, jansson underneath).  The first byte picks
 * the endpoint (run, compare, sweep, replay); for a replay the bytes up to
 * the first newline are the query string and the rest the trace.  A body
 * either parses into a request whose canonical form is itself valid JSON
 * text, or is refused with an HTTP status of 4xx and a message.
 */
#include "fuzz_util.h"
#include "app/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    cs_serve_limits_t lim = {.jobs = 1, .max_queue = 4, .max_ranks = 4096, .max_seconds = 1,
                             .max_body = 1 << 16, .keep = 1, .cache_jobs = 4,
                             .cache_bytes = 1 << 20};
    cs_serve_body_t b;
    cs_serve_fail_t f;
    char *query = NULL;
    if (size < 1)
        return 0;
    if (!sink)
        sink = fopen("/dev/null", "w");
    cs_serve_kind_t kind = (cs_serve_kind_t)(data[0] % CS_SERVE_NKINDS);
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    if (kind == CS_SERVE_REPLAY) {
        const char *nl = memchr(body, '\n', len);
        size_t qlen = nl ? (size_t)(nl - body) : len;
        query = fuzz_cstr((const uint8_t *)body, qlen);
        body += nl ? qlen + 1 : qlen;
        len -= nl ? qlen + 1 : qlen;
    }
    if (cs_serve_body_parse(kind, body, len, query, &lim, &b, &f) == CS_OK) {
        if (!b.canon || b.canon[0] != '{' || b.npoints < 1 || b.npoints > CS_SERVE_MAX_POINTS) {
            fprintf(stderr, "accepted body with canon %s, %d points\n",
                    b.canon ? b.canon : "(null)", b.npoints);
            abort();
        }
    } else {
        if (f.http < 400 || f.http > 499 || !f.e.msg[0]) {
            fprintf(stderr, "refusal with status %d: %s\n", f.http, f.e.msg);
            abort();
        }
        cs_serve_fail_json(sink, &f);
    }
    cs_serve_body_destroy(&b);
    free(query);
    return 0;
}
