/*
 * fuzz_serve_body.c - libFuzzer target: the request bodies of `collsim
 * serve` (src/app/serve_body.c, jansson underneath).  The first byte picks
 * the endpoint (run, compare, sweep, replay: all JSON).  A body either
 * parses into a request whose canonical form is itself valid JSON text, or
 * is refused with an HTTP status of 4xx and a message.  An accepted body
 * never names a path (issue 29): every spec key that names a file (the
 * machine types' file_keys) names one of the request's inline files, and
 * none writes one - checked again here on what was accepted.  An accepted
 * run's benchmark loop (issue 32) has at most --max-iterations warm-up +
 * timed iterations, the loop keys set again as the run will set them.
 */
#include "fuzz_util.h"
#include "api/request.h"
#include "app/serve.h"
#include "machines/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    cs_serve_limits_t lim = {.jobs = 1, .max_queue = 4, .max_ranks = 4096,
                             .max_nodes = 1 << 20, .max_seconds = 1, .grace = 1,
                             .max_body = 1 << 16, .keep = 1, .cache_jobs = 4,
                             .cache_bytes = 1 << 20, .max_iterations = 1100};
    cs_serve_body_t b;
    cs_serve_fail_t f;
    if (size < 1)
        return 0;
    if (!sink)
        sink = fopen("/dev/null", "w");
    cs_serve_kind_t kind = (cs_serve_kind_t)(data[0] % CS_SERVE_NKINDS);
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    if (cs_serve_body_parse(kind, body, len, NULL, &lim, &b, &f) == CS_OK) {
        if (!b.canon || b.canon[0] != '{' || b.npoints < 1 || b.npoints > CS_SERVE_MAX_POINTS) {
            fprintf(stderr, "accepted body with canon %s, %d points\n",
                    b.canon ? b.canon : "(null)", b.npoints);
            abort();
        }
        static const char *const loop_keys[] = CS_SERVE_LOOP_KEYS;
        cs_request_t r;
        cs_error_t le;
        cs_request_init(&r);
        for (int k = 0; k < 4; k++)
            if (b.loop[k] && cs_request_set(&r, loop_keys[k], b.loop[k], &le) != CS_OK) {
                fprintf(stderr, "accepted %s '%s': %s\n", loop_keys[k], b.loop[k], le.msg);
                abort();
            }
        if (r.loop.style != CS_LOOP_STYLE_NONE) {
            int64_t w, n;
            cs_loop_counts(&r.loop, b.bytes, &w, &n);
            if (w + n > lim.max_iterations) {
                fprintf(stderr, "accepted a loop of %lld + %lld iterations\n", (long long)w,
                        (long long)n);
                abort();
            }
        }
        for (int i = 0; i < b.nmachines; i++) {
            cs_error_t e;
            if (cs_machine_check_files(b.machine[i], b.files, NULL, &e) != CS_OK) {
                fprintf(stderr, "accepted machine %s: %s\n", b.machine[i], e.msg);
                abort();
            }
        }
    } else {
        if (f.http < 400 || f.http > 499 || !f.e.msg[0]) {
            fprintf(stderr, "refusal with status %d: %s\n", f.http, f.e.msg);
            abort();
        }
        cs_serve_fail_json(sink, &f);
    }
    cs_serve_body_destroy(&b);
    return 0;
}
