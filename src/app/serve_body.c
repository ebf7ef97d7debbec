/*
 * serve_body.c - the request bodies of `collsim serve` (docs/api.md): JSON
 * read with jansson (strict, duplicate keys refused, error positions as
 * line:column), every field checked as `collsim run` checks the option of
 * the same name (cs_request_set: the same messages), the server's limits
 * applied, and the request written back in a canonical form (keys sorted,
 * sizes as integers, defaults filled) that keys the cache.
 *
 * Jansson is used here only, for reading; every response is written with
 * the command line's JSON writer (cs_json_write_string).  Nothing here opens
 * a file: a program or trace is text kept in memory.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/request.h"
#include "api/sizes.h"
#include "api/sweep.h"
#include "app/serve.h"
#include "coll/coll.h"
#include "io/algofile.h"
#include "io/result_json.h"
#include "machines/machine.h"

const char *cs_serve_kind_name(cs_serve_kind_t k)
{
    static const char *const names[CS_SERVE_NKINDS] = {"run", "compare", "sweep", "replay"};
    return k >= 0 && k < CS_SERVE_NKINDS ? names[k] : "?";
}

int cs_serve_fail(cs_serve_fail_t *f, int http, const char *field, int code, const char *fmt,
                  ...)
{
    va_list ap;
    f->http = http;
    snprintf(f->field, sizeof f->field, "%s", field ? field : "");
    va_start(ap, fmt);
    cs_error_vset(&f->e, code, fmt, ap);
    va_end(ap);
    return code;
}

void cs_serve_fail_object(FILE *out, const cs_serve_fail_t *f)
{
    fputs("{\"status\": ", out);
    cs_json_write_string(out, f->http == 409 ? "busy" : cs_status_key(f->e.code));
    if (f->field[0]) {
        fputs(", \"field\": ", out);
        cs_json_write_string(out, f->field);
    }
    fputs(", \"message\": ", out);
    cs_json_write_string(out, f->e.msg);
    fputc('}', out);
}

void cs_serve_fail_json(FILE *out, const cs_serve_fail_t *f)
{
    fputs("{\"error\": ", out);
    cs_serve_fail_object(out, f);
    fputs("}\n", out);
}

/* The keys each kind takes (any other is refused, naming it). */
static const char *const body_keys[CS_SERVE_NKINDS][17] = {
    {"machine", "coll", "algo", "bytes", "ranks", "root", "order", "opts", "mode", "validate",
     "program", "files", "iterations", "warmup", "between", "loop", NULL},
    {"machines", "coll", "algo", "bytes", "ranks", "root", "order", "opts", "mode", "validate",
     "files", NULL},
    {"machine", "coll", "algos", "bytes", "ranks", "root", "order", "opts", "mode", "validate",
     "files", NULL},
    {"machine", "format", "trace", "files", NULL},
};

static int body_known(cs_serve_kind_t k, const char *key)
{
    for (int i = 0; body_keys[k][i]; i++)
        if (!strcmp(body_keys[k][i], key))
            return 1;
    return 0;
}

/* ---- fields ------------------------------------------------------------- */

static int body_type(const char *key, const char *want, cs_serve_fail_t *f)
{
    return cs_serve_fail(f, 400, key, CS_ERR_USAGE, "%s: expected %s", key, want);
}

/* A string field (NULL when absent) copied into *out, at most `max` bytes. */
static int body_string(json_t *o, const char *key, size_t max, char **out, cs_serve_fail_t *f)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return CS_OK;
    if (!json_is_string(v))
        return body_type(key, "a string", f);
    if (json_string_length(v) > max)
        return cs_serve_fail(f, 422, key, CS_ERR_USAGE, "%s: longer than %zu bytes", key, max);
    *out = cs_strdup(json_string_value(v));
    return CS_OK;
}

/* Checks `value` as `collsim run` checks option `key` (cs_request_set). */
static int body_check(cs_request_t *r, const char *key, const char *value, cs_serve_fail_t *f)
{
    cs_error_t e;
    if (cs_request_set(r, key, value, &e) != CS_OK)
        return cs_serve_fail(f, 400, key, e.code, "%s", e.msg);
    return CS_OK;
}

/* An integer field given as a number or, for sizes, as text ("1MiB"). */
static int body_int(json_t *o, const char *key, int size, int64_t *out, int *has,
                    cs_serve_fail_t *f)
{
    json_t *v = json_object_get(o, key);
    *has = 0;
    if (!v || json_is_null(v))
        return CS_OK;
    *has = 1;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return CS_OK;
    }
    if (size && json_is_string(v)) {
        cs_request_t r;
        int rc;
        cs_request_init(&r);
        if ((rc = body_check(&r, key, json_string_value(v), f)))
            return rc;
        *out = r.bytes;
        return CS_OK;
    }
    return body_type(key, size ? "an integer or a size such as \"1MiB\"" : "an integer", f);
}

static int body_check_int(cs_request_t *r, const char *key, int64_t v, cs_serve_fail_t *f)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    return body_check(r, key, buf, f);
}

/* A list of integers: a JSON integer, an array of them, or a text list in
 * the syntax of `collsim sweep --bytes` / `--ranks` ("4,8", "8..1MiB:x2").
 * *out is allocated (ascending and distinct for the text form). */
static int body_int_list(json_t *o, const char *key, int64_t **out, int *n, cs_serve_fail_t *f)
{
    json_t *v = json_object_get(o, key);
    cs_error_t e;
    *out = NULL;
    *n = 0;
    if (!v || json_is_null(v))
        return CS_OK;
    if (json_is_integer(v)) {
        *out = cs_malloc(sizeof **out);
        (*out)[0] = json_integer_value(v);
        *n = 1;
        return CS_OK;
    }
    if (json_is_string(v)) {
        if (cs_sizes_parse_alloc(json_string_value(v), out, n, &e) != CS_OK) {
            cs_error_prefix(&e, "--%s", key);
            return cs_serve_fail(f, 400, key, e.code, "%s", e.msg);
        }
        return CS_OK;
    }
    if (json_is_array(v)) {
        size_t m = json_array_size(v);
        if (m == 0 || m > CS_SIZES_MAX)
            return cs_serve_fail(f, 400, key, CS_ERR_USAGE, "%s: 1 to %d values, got %zu", key,
                                 CS_SIZES_MAX, m);
        *out = cs_malloc(m * sizeof **out);
        for (size_t i = 0; i < m; i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_integer(x))
                return body_type(key, "a list of integers", f);
            (*out)[i] = json_integer_value(x);
        }
        *n = (int)m;
        return CS_OK;
    }
    return body_type(key, "an integer, a list of integers or a text such as \"4,8\"", f);
}

/* ---- the canonical form ---------------------------------------------------- */

static void canon_key(FILE *c, int *first, const char *key)
{
    fputs(*first ? "{" : ", ", c);
    *first = 0;
    cs_json_write_string(c, key);
    fputs(": ", c);
}

static void canon_int(FILE *c, int has, int64_t v)
{
    if (has)
        fprintf(c, "%lld", (long long)v);
    else
        fputs("null", c);
}

static void canon_strings(FILE *c, char *const *v, int n)
{
    fputc('[', c);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", " : "", c);
        cs_json_write_string(c, v[i]);
    }
    fputc(']', c);
}

static void canon_ints(FILE *c, const int64_t *v, int n)
{
    fputc('[', c);
    for (int i = 0; i < n; i++)
        fprintf(c, "%s%lld", i ? ", " : "", (long long)v[i]);
    fputc(']', c);
}

/* ---- the kinds ------------------------------------------------------------- */

/* The fields every collective request shares (coll, algo, root, order,
 * opts, mode, validate) into b, checked on r. */
static int body_common(json_t *o, cs_request_t *r, cs_serve_body_t *b, cs_serve_fail_t *f)
{
    int rc, has;
    char *mode = NULL;
    json_t *v;
    if ((rc = body_string(o, "coll", CS_SERVE_MAX_TEXT, &b->coll, f)) ||
        (rc = body_string(o, "order", CS_SERVE_MAX_TEXT, &b->order, f)) ||
        (rc = body_string(o, "mode", CS_SERVE_MAX_TEXT, &mode, f)))
        return rc;
    b->mode = mode ? mode : cs_strdup("packet");
    if ((rc = body_check(r, "mode", b->mode, f)))
        return rc;
    if (b->coll && (rc = body_check(r, "coll", b->coll, f)))
        return rc;
    /* a node order by name only: an order FILE would open a path */
    if (b->order && strcmp(b->order, "natural") && strcmp(b->order, "ring") &&
        strcmp(b->order, "snake"))
        return cs_serve_fail(f, 400, "order", CS_ERR_USAGE,
                             "--order '%s': expected natural, ring or snake (the server "
                             "opens no file)", b->order);
    /* the default placement of a collective (a program places itself) */
    if (!b->order && b->coll)
        b->order = cs_strdup("natural");
    if (b->order && (rc = body_check(r, "order", b->order, f)))
        return rc;
    if ((rc = body_int(o, "root", 0, &b->root, &has, f)))
        return rc;
    b->has_root = has;
    if (has && (rc = body_check_int(r, "root", b->root, f)))
        return rc;
    if ((v = json_object_get(o, "validate")) && !json_is_null(v)) {
        if (!json_is_boolean(v))
            return body_type("validate", "true or false", f);
        b->validate = json_is_true(v);
        if (b->validate && (rc = body_check(r, "validate", "", f)))
            return rc;
    }
    if ((v = json_object_get(o, "opts")) && !json_is_null(v)) {
        if (!json_is_array(v))
            return body_type("opts", "a list of \"KEY=VALUE\" strings", f);
        if (json_array_size(v) > CS_SERVE_MAX_OPTS)
            return cs_serve_fail(f, 422, "opts", CS_ERR_USAGE, "opts: at most %d options",
                                 CS_SERVE_MAX_OPTS);
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_string(x) || json_string_length(x) > CS_SERVE_MAX_TEXT)
                return body_type("opts", "a list of \"KEY=VALUE\" strings", f);
            b->opts[b->nopts++] = cs_strdup(json_string_value(x));
            if ((rc = body_check(r, "opt", b->opts[b->nopts - 1], f)))
                return rc;
        }
    }
    return CS_OK;
}

/* The collective's algorithm by name (NULL: its default): the registry's
 * name, or a refusal naming `field`. */
static int body_algo(cs_serve_body_t *b, const char *coll, const char *name, const char *field,
                     const cs_coll_algo_t **out, cs_serve_fail_t *f)
{
    cs_machine_env_t env = {b->files, 0};
    cs_coll_algo_t *owned = NULL;
    const char *file = NULL;
    cs_coll_kind_t k;
    cs_error_t e;
    if (cs_coll_parse(coll, &k, &e) != CS_OK)
        return cs_serve_fail(f, 400, "coll", e.code, "%s", e.msg);
    /* an algorithm file (msccl:NAME, io/algofile.h) is one of the
     * request's files, as a machine's file keys are: 422 for another name */
    if (name && cs_algofile_format(name, &file) && !cs_files_find(b->files, file))
        return cs_serve_fail(f, 422, field, CS_ERR_USAGE, "--algo %.256s names \"%.128s\", "
                             "which is none of the request's files: give the file's content in "
                             "\"files\" and its name here; no path is opened", name, file);
    /* read now, so that a bad file is refused at once; kept with the body
     * (its name and keys are borrowed by the points and the options' check) */
    if (cs_request_find_algo(k, name, &env, out, &owned, &e) != CS_OK)
        return cs_serve_fail(f, 400, file ? "files" : field, e.code, "%s", e.msg);
    if (owned) {
        b->algo_files = cs_realloc(b->algo_files, (size_t)(b->nalgo_files + 1) *
                                                      sizeof *b->algo_files);
        b->algo_files[b->nalgo_files++] = owned;
    }
    return CS_OK;
}

/* What can be refused before a job is made, without building a machine
 * (docs/api.md): the spec's syntax, machine type and key names, and a key
 * that names a file (the machine type's table says which) unless it names
 * one of the request's files - a key that writes one always (422: the
 * request is well formed, the server will not do it)... */
static int body_machine(const char *spec, const char *field, const cs_files_t *files,
                        cs_serve_fail_t *f)
{
    const char *key;
    cs_error_t e;
    if (cs_machine_check_files(spec, files, &key, &e) != CS_OK)
        return cs_serve_fail(f, key ? 422 : 400, field, e.code, "%s", e.msg);
    return CS_OK;
}

/* "files": {"NAME": "CONTENT", ...}, the only files a spec may name; NULL
 * when absent.  Names are plain names (core/source.h); the bytes count in
 * --max-body with the rest of the body. */
static int body_files(json_t *o, cs_serve_body_t *b, cs_serve_fail_t *f)
{
    json_t *v = json_object_get(o, "files"), *x;
    const char *name;
    cs_error_t e;
    if (!v || json_is_null(v))
        return CS_OK;
    if (!json_is_object(v))
        return body_type("files", "an object {\"NAME\": \"CONTENT\", ...}", f);
    b->files = cs_files_new();
    json_object_foreach(v, name, x) {
        if (!json_is_string(x))
            return body_type("files", "an object {\"NAME\": \"CONTENT\", ...}", f);
        if (cs_files_add(b->files, name, json_string_value(x), json_string_length(x), &e))
            return cs_serve_fail(f, 400, "files", e.code, "files: %s", e.msg);
    }
    return CS_OK;
}

/* The canonical "files": sorted by name, contents included (two requests
 * with other contents are other requests); null when absent. */
static void canon_files(FILE *c, int *first, const cs_serve_body_t *b)
{
    int n = cs_files_count(b->files), done[CS_FILES_MAX] = {0};
    canon_key(c, first, "files");
    if (!b->files) {
        fputs("null", c);
        return;
    }
    fputc('{', c);
    for (int k = 0; k < n; k++) {
        int min = -1;
        for (int i = 0; i < n; i++)
            if (!done[i] && (min < 0 || strcmp(cs_files_at(b->files, i)->name,
                                               cs_files_at(b->files, min)->name) < 0))
                min = i;
        done[min] = 1;
        const cs_source_t *s = cs_files_at(b->files, min);
        fputs(k ? ", " : "", c);
        cs_json_write_string(c, s->name);
        fputs(": ", c);
        cs_json_write_string(c, s->data);
    }
    fputc('}', c);
}

/* ...the options against the algorithms' keys (scoped: [ALGO:]KEY=VALUE,
 * as `collsim sweep --opt`)... */
static int body_opts(const cs_serve_body_t *b, const cs_coll_algo_t *const *algos, int n,
                     int scoped, cs_serve_fail_t *f)
{
    cs_error_t e;
    if (cs_sweep_check_opts((const char *const *)b->opts, b->nopts, algos, n, scoped, &e) !=
        CS_OK)
        return cs_serve_fail(f, 400, "opts", e.code, "%s", e.msg);
    return CS_OK;
}

/* ...and the root against the smallest rank count given (without one, the
 * machine's node count is known once it is built: the job fails then). */
static int body_root(const cs_serve_body_t *b, const int64_t *ranks, int nranks,
                     cs_serve_fail_t *f)
{
    int64_t P = INT64_MAX;
    for (int i = 0; i < nranks; i++)
        if (ranks[i] < P)
            P = ranks[i];
    if (b->has_root && nranks && b->root >= P)
        return cs_serve_fail(f, 400, "root", CS_ERR_RANGE, "--root %lld is outside ranks 0..%lld",
                             (long long)b->root, (long long)P - 1);
    return CS_OK;
}

static int body_ranks_limit(int64_t P, const cs_serve_limits_t *lim, cs_serve_fail_t *f)
{
    if (P > lim->max_ranks)
        return cs_serve_fail(f, 422, "ranks", CS_ERR_RANGE,
                             "--ranks %lld: more than the server's limit of %lld ranks "
                             "(--max-ranks)", (long long)P, (long long)lim->max_ranks);
    return CS_OK;
}

static int body_algo(cs_serve_body_t *b, const char *coll, const char *name, const char *field,
                     const cs_coll_algo_t **out, cs_serve_fail_t *f);

/* A run's benchmark loop (api/loop.h): each key of CS_SERVE_LOOP_KEYS
 * checked by cs_request_set as `collsim run --KEY` checks it (iterations: a
 * number or "default"; warmup: a number; between, loop: words), its text
 * kept in b->loop for the run. */
static int body_loop(json_t *o, cs_request_t *r, cs_serve_body_t *b, cs_serve_fail_t *f)
{
    static const char *const keys[] = CS_SERVE_LOOP_KEYS;
    for (int k = 0; k < 4; k++) {
        json_t *v = json_object_get(o, keys[k]);
        char buf[32];
        const char *text;
        int rc;
        if (!v || json_is_null(v))
            continue;
        if (json_is_integer(v) && k < 2) {
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
            text = buf;
        } else if (json_is_string(v) && k != 1 && json_string_length(v) <= CS_SERVE_MAX_TEXT) {
            text = json_string_value(v);
        } else {
            return body_type(keys[k], k == 0   ? "an integer or \"default\""
                                      : k == 1 ? "an integer"
                                      : k == 2 ? "\"none\", \"barrier\" or \"barrier:ALGO\""
                                               : "\"nccl-tests\" or \"osu\"", f);
        }
        if ((rc = body_check(r, keys[k], text, f)))
            return rc;
        b->loop[k] = cs_strdup(text);
    }
    /* the barrier's algorithm by name now, as any algorithm of the body */
    if (r->loop.barrier_algo) {
        const cs_coll_algo_t *al;
        int rc = body_algo(b, "barrier", r->loop.barrier_algo, "between", &al, f);
        if (rc)
            cs_error_prefix(&f->e, "--between");
        return rc;
    }
    return CS_OK;
}

/* The first loop key given, for a refusal about the loop as a whole. */
static const char *body_loop_key(const cs_serve_body_t *b)
{
    static const char *const keys[] = CS_SERVE_LOOP_KEYS;
    for (int k = 0; k < 4; k++)
        if (b->loop[k])
            return keys[k];
    return NULL;
}

/* A loop multiplies a run's work by its iterations: warm-up + timed within
 * --max-iterations (the counts of a style resolved at the run's size, as
 * the run will resolve them), refused naming the key that asked for more. */
static int body_loop_limit(const cs_request_t *r, const cs_serve_body_t *b,
                           const cs_serve_limits_t *lim, cs_serve_fail_t *f)
{
    int64_t w, n;
    if (r->loop.style == CS_LOOP_STYLE_NONE)
        return CS_OK;
    cs_loop_counts(&r->loop, b->bytes, &w, &n);
    if (w + n <= lim->max_iterations)
        return CS_OK;
    const char *key = b->loop[0] ? "iterations" : b->loop[1] ? "warmup" : body_loop_key(b);
    return cs_serve_fail(f, 422, key, CS_ERR_RANGE,
                         "--%s: a loop of %lld warm-up + %lld timed iterations is more than the "
                         "server's limit of %lld iterations in all (--max-iterations)", key,
                         (long long)w, (long long)n, (long long)lim->max_iterations);
}

/* The loop's canonical keys: between, iterations, loop, warmup as the run
 * resolves them (the style's counts at the run's size, its name), all null
 * without a loop. */
static void canon_loop_between(FILE *c, int *first, const cs_request_t *r)
{
    canon_key(c, first, "between");
    if (r->loop.style == CS_LOOP_STYLE_NONE) {
        fputs("null", c);
    } else if (!r->loop.barrier) {
        cs_json_write_string(c, "none");
    } else {
        char name[CS_SERVE_MAX_TEXT + 16];
        snprintf(name, sizeof name, "barrier%s%s", r->loop.barrier_algo ? ":" : "",
                 r->loop.barrier_algo ? r->loop.barrier_algo : "");
        cs_json_write_string(c, name);
    }
}

static void canon_loop_counts(FILE *c, int *first, const cs_request_t *r, int64_t bytes,
                              int warmup_key)
{
    int64_t w = 0, n = 0;
    int on = r->loop.style != CS_LOOP_STYLE_NONE;
    if (on)
        cs_loop_counts(&r->loop, bytes, &w, &n);
    if (warmup_key) {
        canon_key(c, first, "warmup");
        canon_int(c, on, w);
        return;
    }
    canon_key(c, first, "iterations");
    canon_int(c, on, n);
    canon_key(c, first, "loop");
    if (on)
        cs_json_write_string(c, cs_loop_style_name(r->loop.style));
    else
        fputs("null", c);
}

static void body_common_canon(FILE *c, int *first, const cs_serve_body_t *b)
{
    canon_key(c, first, "mode");
    cs_json_write_string(c, b->mode);
    canon_key(c, first, "opts");
    canon_strings(c, b->opts, b->nopts);
    canon_key(c, first, "order");
    cs_json_write_string(c, b->order);
}

/* The keys after "ranks" in every kind's canonical form (sorted), and the
 * closing brace; loop: a run's request (its "warmup" last), NULL for the
 * kinds without loops. */
static void body_tail_canon(FILE *c, int *first, const cs_serve_body_t *b,
                            const cs_request_t *loop)
{
    canon_key(c, first, "root");
    canon_int(c, b->has_root, b->root);
    canon_key(c, first, "validate");
    fputs(b->validate ? "true" : "false", c);
    if (loop)
        canon_loop_counts(c, first, loop, b->bytes, 1);
    fputc('}', c);
}

static int body_run(json_t *o, const cs_serve_limits_t *lim, cs_serve_body_t *b, FILE *c,
                    cs_serve_fail_t *f)
{
    cs_request_t r;
    cs_error_t e;
    int rc, has_bytes = 0, has_ranks = 0, first = 1;
    int64_t ranks = 0;
    const char *algo = NULL;
    const cs_coll_algo_t *al = NULL;
    cs_request_init(&r);
    b->nmachines = 1;
    if ((rc = body_string(o, "machine", CS_SERVE_MAX_TEXT, &b->machine[0], f)) ||
        (rc = body_string(o, "program", lim->max_body, &b->program, f)) ||
        (rc = body_string(o, "algo", CS_SERVE_MAX_TEXT, &b->algo, f)) ||
        (rc = body_common(o, &r, b, f)) ||
        (rc = body_int(o, "bytes", 1, &b->bytes, &has_bytes, f)) ||
        (rc = body_int(o, "ranks", 0, &ranks, &has_ranks, f)) ||
        (rc = body_loop(o, &r, b, f)))
        return rc;
    if (b->machine[0] && ((rc = body_check(&r, "machine", b->machine[0], f)) ||
                          (rc = body_machine(b->machine[0], "machine", b->files, f))))
        return rc;
    if (b->program && (rc = body_check(&r, "program", "(the request's program)", f)))
        return rc;
    if (b->algo && (rc = body_check(&r, "algo", b->algo, f)))
        return rc;
    if (has_bytes && (rc = body_check_int(&r, "bytes", b->bytes, f)))
        return rc;
    if (has_ranks && ((rc = body_check_int(&r, "ranks", ranks, f)) ||
                      (rc = body_ranks_limit(ranks, lim, f))))
        return rc;
    if (cs_request_check_kind(&r, 1, &e) != CS_OK)
        return cs_serve_fail(f, 400, !b->machine[0] ? "machine" : b->program ? "program" : "coll",
                             e.code, "%s", e.msg);
    /* its only refusal a request can meet: a loop without a collective */
    if (cs_request_check_keys(&r, 0, &e) != CS_OK)
        return cs_serve_fail(f, 400, body_loop_key(b) ? body_loop_key(b) : "coll", e.code, "%s",
                             e.msg);
    if ((rc = body_loop_limit(&r, b, lim, f)))
        return rc;
    if (b->coll && ((rc = body_algo(b, b->coll, b->algo, "algo", &al, f)) ||
                    (rc = body_opts(b, &al, 1, 0, f)) ||
                    (rc = body_root(b, &ranks, has_ranks, f))))
        return rc;
    algo = al ? al->name : NULL;
    b->points = cs_calloc(1, sizeof *b->points);
    b->npoints = 1;
    b->points[0] = (cs_serve_point_t){0, algo, b->bytes, ranks};
    canon_key(c, &first, "algo");
    cs_json_write_string(c, algo);
    canon_loop_between(c, &first, &r);
    canon_key(c, &first, "bytes");
    canon_int(c, b->coll != NULL, b->bytes);
    canon_key(c, &first, "coll");
    cs_json_write_string(c, b->coll);
    canon_files(c, &first, b);
    canon_loop_counts(c, &first, &r, b->bytes, 0);
    canon_key(c, &first, "machine");
    cs_json_write_string(c, b->machine[0]);
    body_common_canon(c, &first, b);
    canon_key(c, &first, "program");
    cs_json_write_string(c, b->program);
    canon_key(c, &first, "ranks");
    canon_int(c, has_ranks, ranks);
    body_tail_canon(c, &first, b, &r);
    return CS_OK;
}

static int body_compare(json_t *o, const cs_serve_limits_t *lim, cs_serve_body_t *b, FILE *c,
                        cs_serve_fail_t *f)
{
    cs_request_t r;
    int rc, has_bytes = 0, has_ranks = 0, first = 1;
    int64_t ranks = 0;
    const char *algo = NULL;
    const cs_coll_algo_t *al = NULL;
    json_t *v = json_object_get(o, "machines");
    cs_request_init(&r);
    if (!v || !json_is_array(v))
        return cs_serve_fail(f, 400, "machines", CS_ERR_USAGE,
                             "machines: expected a list of 1 to %d machine specs",
                             CS_SERVE_MAX_MACHINES);
    if (json_array_size(v) < 1 || json_array_size(v) > CS_SERVE_MAX_MACHINES)
        return cs_serve_fail(f, 422, "machines", CS_ERR_USAGE,
                             "machines: 1 to %d machine specs, got %zu", CS_SERVE_MAX_MACHINES,
                             json_array_size(v));
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_string(x) || json_string_length(x) > CS_SERVE_MAX_TEXT)
            return body_type("machines", "a list of machine spec strings", f);
        b->machine[b->nmachines++] = cs_strdup(json_string_value(x));
        char field[32];
        snprintf(field, sizeof field, "machines[%zu]", i);
        if ((rc = body_machine(b->machine[i], field, b->files, f)))
            return rc;
    }
    if ((rc = body_string(o, "algo", CS_SERVE_MAX_TEXT, &b->algo, f)) ||
        (rc = body_common(o, &r, b, f)) ||
        (rc = body_int(o, "bytes", 1, &b->bytes, &has_bytes, f)) ||
        (rc = body_int(o, "ranks", 0, &ranks, &has_ranks, f)))
        return rc;
    if (!b->coll)
        return cs_serve_fail(f, 400, "coll", CS_ERR_USAGE, "missing --coll NAME");
    if (has_bytes && (rc = body_check_int(&r, "bytes", b->bytes, f)))
        return rc;
    if (has_ranks && ((rc = body_check_int(&r, "ranks", ranks, f)) ||
                      (rc = body_ranks_limit(ranks, lim, f))))
        return rc;
    if ((rc = body_algo(b, b->coll, b->algo, "algo", &al, f)) || (rc = body_opts(b, &al, 1, 0, f)) ||
        (rc = body_root(b, &ranks, has_ranks, f)))
        return rc;
    algo = al->name;
    b->points = cs_calloc((size_t)b->nmachines, sizeof *b->points);
    b->npoints = b->nmachines;
    for (int i = 0; i < b->nmachines; i++)
        b->points[i] = (cs_serve_point_t){i, algo, b->bytes, ranks};
    canon_key(c, &first, "algo");
    cs_json_write_string(c, algo);
    canon_key(c, &first, "bytes");
    canon_int(c, 1, b->bytes);
    canon_key(c, &first, "coll");
    cs_json_write_string(c, b->coll);
    canon_files(c, &first, b);
    canon_key(c, &first, "machines");
    canon_strings(c, b->machine, b->nmachines);
    body_common_canon(c, &first, b);
    canon_key(c, &first, "ranks");
    canon_int(c, has_ranks, ranks);
    body_tail_canon(c, &first, b, NULL);
    return CS_OK;
}

/* The algorithms of a sweep: "all", a list, or names joined by commas. */
static int body_algos(json_t *o, const char *coll, const cs_coll_algo_t **algos, int *n,
                      cs_serve_body_t *b, cs_serve_fail_t *f)
{
    json_t *v = json_object_get(o, "algos");
    cs_coll_kind_t k;
    cs_error_t e;
    int rc;
    *n = 0;
    if (cs_coll_parse(coll, &k, &e) != CS_OK)
        return cs_serve_fail(f, 400, "coll", e.code, "%s", e.msg);
    if (!v || json_is_null(v) || (json_is_string(v) && !strcmp(json_string_value(v), "all"))) {
        int count;
        const cs_coll_algo_t *const *all = cs_coll_algos(&count);
        for (int i = 0; i < count && *n < CS_SERVE_MAX_POINTS; i++)
            if (all[i]->kind == k)
                algos[(*n)++] = all[i];
        return CS_OK;
    }
    if (json_is_string(v)) {
        if (json_string_length(v) > CS_SERVE_MAX_TEXT)
            return body_type("algos", "a shorter list", f);
        b->algos_buf = cs_strdup(json_string_value(v));
        for (char *s = strtok(b->algos_buf, ", "); s; s = strtok(NULL, ", ")) {
            if (*n == CS_SERVE_MAX_POINTS)
                return cs_serve_fail(f, 422, "algos", CS_ERR_USAGE, "algos: too many");
            if ((rc = body_algo(b, coll, s, "algos", &algos[*n], f)))
                return rc;
            (*n)++;
        }
    } else if (json_is_array(v)) {
        if (json_array_size(v) > CS_SERVE_MAX_POINTS)
            return cs_serve_fail(f, 422, "algos", CS_ERR_USAGE, "algos: too many");
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_string(x))
                return body_type("algos", "a list of algorithm names, or \"all\"", f);
            if ((rc = body_algo(b, coll, json_string_value(x), "algos", &algos[*n], f)))
                return rc;
            (*n)++;
        }
    } else {
        return body_type("algos", "a list of algorithm names, or \"all\"", f);
    }
    if (*n == 0)
        return cs_serve_fail(f, 400, "algos", CS_ERR_USAGE, "algos: no algorithm");
    return CS_OK;
}

static int body_sweep(json_t *o, const cs_serve_limits_t *lim, cs_serve_body_t *b, FILE *c,
                      cs_serve_fail_t *f)
{
    cs_request_t r;
    int rc, nsizes = 0, nranks = 0, nalgos = 0, first = 1;
    int64_t *sizes = NULL, *ranks = NULL;
    const cs_coll_algo_t *algos[CS_SERVE_MAX_POINTS];
    cs_request_init(&r);
    b->nmachines = 1;
    if ((rc = body_string(o, "machine", CS_SERVE_MAX_TEXT, &b->machine[0], f)) ||
        (rc = body_common(o, &r, b, f)))
        return rc;
    if (!b->machine[0])
        return cs_serve_fail(f, 400, "machine", CS_ERR_USAGE, "missing --machine SPEC");
    if ((rc = body_machine(b->machine[0], "machine", b->files, f)))
        return rc;
    if (!b->coll)
        return cs_serve_fail(f, 400, "coll", CS_ERR_USAGE, "missing --coll NAME");
    if ((rc = body_algos(o, b->coll, algos, &nalgos, b, f)) ||
        (rc = body_opts(b, algos, nalgos, 1, f)) ||
        (rc = body_int_list(o, "bytes", &sizes, &nsizes, f)) ||
        (rc = body_int_list(o, "ranks", &ranks, &nranks, f)))
        goto out;
    if (!nsizes) {
        rc = cs_serve_fail(f, 400, "bytes", CS_ERR_USAGE, "missing --bytes SIZES");
        goto out;
    }
    for (int i = 0; i < nsizes; i++)
        if ((rc = body_check_int(&r, "bytes", sizes[i], f)))
            goto out;
    for (int i = 0; i < nranks; i++)
        if ((rc = body_check_int(&r, "ranks", ranks[i], f)) ||
            (rc = body_ranks_limit(ranks[i], lim, f)))
            goto out;
    if ((rc = body_root(b, ranks, nranks, f)))
        goto out;
    long total = (long)nalgos * (nranks ? nranks : 1) * nsizes;
    if (total > CS_SERVE_MAX_POINTS) {
        rc = cs_serve_fail(f, 422, "bytes", CS_ERR_USAGE,
                           "a sweep of %ld runs (%d algorithms x %d rank counts x %d sizes): "
                           "the server runs at most %d", total, nalgos, nranks ? nranks : 1,
                           nsizes, CS_SERVE_MAX_POINTS);
        goto out;
    }
    b->points = cs_calloc((size_t)total, sizeof *b->points);
    b->nalgos = nalgos;
    b->nranks = nranks ? nranks : 1;
    b->nsizes = nsizes;
    for (int k = 0; k < nalgos; k++)
        for (int j = 0; j < (nranks ? nranks : 1); j++)
            for (int i = 0; i < nsizes; i++)
                b->points[b->npoints++] =
                    (cs_serve_point_t){0, algos[k]->name, sizes[i], nranks ? ranks[j] : 0};
    canon_key(c, &first, "algos");
    fputc('[', c);
    for (int k = 0; k < nalgos; k++) {
        fputs(k ? ", " : "", c);
        cs_json_write_string(c, algos[k]->name);
    }
    fputc(']', c);
    canon_key(c, &first, "bytes");
    canon_ints(c, sizes, nsizes);
    canon_key(c, &first, "coll");
    cs_json_write_string(c, b->coll);
    canon_files(c, &first, b);
    canon_key(c, &first, "machine");
    cs_json_write_string(c, b->machine[0]);
    body_common_canon(c, &first, b);
    canon_key(c, &first, "ranks");
    canon_ints(c, ranks, nranks);
    body_tail_canon(c, &first, b, NULL);
out:
    free(sizes);
    free(ranks);
    return rc;
}

/* A replay: {"machine", "format", "trace", "files"}. */
static int body_replay(json_t *o, const cs_serve_limits_t *lim, cs_serve_body_t *b, FILE *c,
                       cs_serve_fail_t *f)
{
    char *format = NULL;
    int rc, first = 1;
    b->nmachines = 1;
    if ((rc = body_string(o, "machine", CS_SERVE_MAX_TEXT, &b->machine[0], f)) ||
        (rc = body_string(o, "format", CS_SERVE_MAX_TEXT, &format, f)) ||
        (rc = body_string(o, "trace", lim->max_body, &b->trace, f)))
        goto out;
    if (!b->machine[0] || !b->machine[0][0]) {
        rc = cs_serve_fail(f, 400, "machine", CS_ERR_USAGE, "missing --machine SPEC");
        goto out;
    }
    if ((rc = body_machine(b->machine[0], "machine", b->files, f)))
        goto out;
    if (format && !strcmp(format, "chakra")) {
        /* binary, one file per rank: a request's inline files are JSON strings */
        rc = cs_serve_fail(f, 400, "format", CS_ERR_USAGE,
                           "--format 'chakra': a Chakra trace is binary, one file per rank, and "
                           "a request carries text; replay it with the command line, the C "
                           "library or the Python module");
        goto out;
    }
    if (format && strcmp(format, "goal") && strcmp(format, "ti")) {
        rc = cs_serve_fail(f, 400, "format", CS_ERR_USAGE,
                           "--format '%.64s': expected goal or ti", format);
        goto out;
    }
    /* jansson refuses a NUL in a string (\u0000) unless asked */
    if (!b->trace || !b->trace[0]) {
        rc = cs_serve_fail(f, 400, "trace", CS_ERR_USAGE, "missing trace: the trace's text");
        goto out;
    }
    b->format_ti = format && !strcmp(format, "ti");
    b->trace_len = strlen(b->trace);
    b->points = cs_calloc(1, sizeof *b->points);
    b->npoints = 1;
    canon_files(c, &first, b);
    canon_key(c, &first, "format");
    cs_json_write_string(c, b->format_ti ? "ti" : "goal");
    canon_key(c, &first, "machine");
    cs_json_write_string(c, b->machine[0]);
    canon_key(c, &first, "trace");
    cs_json_write_string(c, b->trace);
    fputc('}', c);
out:
    free(format);
    return rc;
}

int cs_serve_body_parse(cs_serve_kind_t kind, const char *body, size_t len, const char *query,
                        const cs_serve_limits_t *lim, cs_serve_body_t *b, cs_serve_fail_t *f)
{
    json_error_t je;
    json_t *o = NULL;
    size_t clen = 0;
    int rc;
    FILE *c;
    memset(b, 0, sizeof *b);
    memset(f, 0, sizeof *f);
    b->kind = kind;
    if (len > lim->max_body)
        return cs_serve_fail(f, 413, NULL, CS_ERR_USAGE,
                             "the request body has %zu bytes, more than the server's %zu "
                             "(--max-body)", len, lim->max_body);
    c = open_memstream(&b->canon, &clen);
    if (!c)
        return cs_serve_fail(f, 500, NULL, CS_ERR_OOM, "cannot open a memory stream");
    if (query && *query) {
        rc = cs_serve_fail(f, 400, NULL, CS_ERR_USAGE,
                           "POST /api/%s takes no query string (the request is the body)",
                           cs_serve_kind_name(kind));
        goto out;
    }
    /* strict by default; the body is not NUL-terminated (json_loadb) */
    o = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
        rc = cs_serve_fail(f, 400, NULL, CS_ERR_PARSE, "request body:%d:%d: %s", je.line,
                           je.column, je.text);
        goto out;
    }
    if (!json_is_object(o)) {
        rc = cs_serve_fail(f, 400, NULL, CS_ERR_PARSE, "request body: expected a JSON object");
        goto out;
    }
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (!body_known(kind, key)) {
            char valid[256] = "";
            for (int i = 0; body_keys[kind][i]; i++) {
                strcat(valid, i ? ", " : "");
                strcat(valid, body_keys[kind][i]);
            }
            rc = cs_serve_fail(f, 400, strlen(key) < sizeof f->field ? key : NULL,
                               CS_ERR_USAGE, "unknown key '%.64s'; valid keys: %s", key, valid);
            goto out;
        }
    }
    if ((rc = body_files(o, b, f)))
        goto out;
    rc = kind == CS_SERVE_RUN       ? body_run(o, lim, b, c, f)
         : kind == CS_SERVE_COMPARE ? body_compare(o, lim, b, c, f)
         : kind == CS_SERVE_SWEEP   ? body_sweep(o, lim, b, c, f)
                                    : body_replay(o, lim, b, c, f);
out:
    json_decref(o);
    if (fclose(c) != 0 && rc == CS_OK)
        rc = cs_serve_fail(f, 500, NULL, CS_ERR_OOM, "cannot write the request to memory");
    return rc;
}

void cs_serve_body_destroy(cs_serve_body_t *b)
{
    if (!b)
        return;
    /* every slot: a replay's machine is set before its count, and a refusal
     * may come between */
    for (int i = 0; i < CS_SERVE_MAX_MACHINES; i++)
        free(b->machine[i]);
    for (int i = 0; i < b->nopts; i++)
        free(b->opts[i]);
    free(b->coll);
    free(b->algo);
    free(b->order);
    free(b->mode);
    free(b->program);
    free(b->trace);
    cs_files_free(b->files);
    for (int i = 0; i < b->nalgo_files; i++)
        cs_algofile_free(b->algo_files[i]);
    free(b->algo_files);
    for (int k = 0; k < 4; k++)
        free(b->loop[k]);
    free(b->algos_buf);
    free(b->points);
    free(b->canon);
    memset(b, 0, sizeof *b);
}
