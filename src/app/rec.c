/*
 * rec.c - a point's record (rec.h): named, length-prefixed fields in one
 * growing buffer, written by the process that ran the point and read by
 * the one that writes the outputs (pipes, MPI messages, shard files).
 * Own code rather than the JSON of jansson: jansson is optional in this
 * build (the `serve` feature) and --jobs must not be; and a length prefix
 * carries a CSV row or a JSON fragment byte for byte without escaping.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/rec.h"

struct cs_rec {
    char *buf;
    size_t len, cap;
};

cs_rec_t *cs_rec_new(void)
{
    cs_rec_t *r = cs_malloc(sizeof *r);
    memset(r, 0, sizeof *r);
    return r;
}

void cs_rec_free(cs_rec_t *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r);
}

static void rec_reserve(cs_rec_t *r, size_t more)
{
    if (r->len + more + 1 <= r->cap)
        return;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < r->len + more + 1)
        cap *= 2;
    r->buf = cs_realloc(r->buf, cap);
    r->cap = cap;
}

static int rec_key_ok(const char *key, size_t n)
{
    if (n == 0 || n > CS_REC_KEY_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((key[i] >= 'a' && key[i] <= 'z') || (key[i] >= '0' && key[i] <= '9') ||
              key[i] == '_'))
            return 0;
    return 1;
}

void cs_rec_put(cs_rec_t *r, const char *key, const char *val, size_t len)
{
    char head[CS_REC_KEY_MAX + 32];
    assert(rec_key_ok(key, strlen(key)));
    int n = snprintf(head, sizeof head, "%s %zu\n", key, len);
    rec_reserve(r, (size_t)n + len + 1);
    memcpy(r->buf + r->len, head, (size_t)n);
    r->len += (size_t)n;
    if (len)
        memcpy(r->buf + r->len, val, len);
    r->len += len;
    r->buf[r->len++] = '\n';
    r->buf[r->len] = '\0';
}

void cs_rec_put_str(cs_rec_t *r, const char *key, const char *s)
{
    cs_rec_put(r, key, s ? s : "", s ? strlen(s) : 0);
}

void cs_rec_put_int(cs_rec_t *r, const char *key, int64_t v)
{
    char b[32];
    int n = snprintf(b, sizeof b, "%" PRId64, v);
    cs_rec_put(r, key, b, (size_t)n);
}

void cs_rec_put_real(cs_rec_t *r, const char *key, double v)
{
    char b[64];
    /* hexadecimal: every bit of the double survives the trip */
    int n = isnan(v) ? snprintf(b, sizeof b, "nan") : snprintf(b, sizeof b, "%a", v);
    cs_rec_put(r, key, b, (size_t)n);
}

/* Reads the field at *pos of buf[0..n): 0 at the end, 1 with it, -1 when
 * malformed (why: what is wrong). */
static int rec_field(const char *buf, size_t n, size_t *pos, char *key, const char **val,
                     size_t *len, const char **why)
{
    size_t p = *pos, k = 0;
    if (p >= n)
        return 0;
    while (p + k < n && buf[p + k] != ' ' && k <= CS_REC_KEY_MAX)
        k++;
    if (p + k >= n || buf[p + k] != ' ' || !rec_key_ok(buf + p, k)) {
        *why = "no key of [a-z0-9_] (at most 32 characters) followed by a space";
        return -1;
    }
    memcpy(key, buf + p, k);
    key[k] = '\0';
    p += k + 1;
    size_t v = 0, digits = 0;
    while (p < n && buf[p] >= '0' && buf[p] <= '9' && digits < 19) {
        v = v * 10 + (size_t)(buf[p] - '0');
        p++;
        digits++;
    }
    if (digits == 0 || p >= n || buf[p] != '\n') {
        *why = "no length (decimal digits and a newline) after the key";
        return -1;
    }
    p++;
    if (v > n - p || n - p - v < 1) {
        *why = "the length runs past the end";
        return -1;
    }
    if (buf[p + v] != '\n') {
        *why = "no newline after the value";
        return -1;
    }
    *val = buf + p;
    *len = v;
    *pos = p + v + 1;
    return 1;
}

int cs_rec_next(const cs_rec_t *r, size_t *pos, char *key, const char **val, size_t *len)
{
    const char *why;
    return rec_field(r->buf, r->len, pos, key, val, len, &why) == 1;
}

const char *cs_rec_get(const cs_rec_t *r, const char *key, size_t *len)
{
    char k[CS_REC_KEY_MAX + 1];
    const char *v;
    size_t pos = 0, n;
    while (cs_rec_next(r, &pos, k, &v, &n))
        if (!strcmp(k, key)) {
            if (len)
                *len = n;
            return v;
        }
    return NULL;
}

char *cs_rec_dup(const cs_rec_t *r, const char *key)
{
    size_t n = 0;
    const char *v = cs_rec_get(r, key, &n);
    char *s = cs_malloc(n + 1);
    if (v && n)
        memcpy(s, v, n);
    s[v ? n : 0] = '\0';
    return s;
}

void cs_rec_copy(const cs_rec_t *r, const char *key, char *buf, size_t len)
{
    size_t n = 0;
    const char *v = cs_rec_get(r, key, &n);
    if (!len)
        return;
    if (!v)
        n = 0;
    if (n >= len)
        n = len - 1;
    if (n)
        memcpy(buf, v, n);
    buf[n] = '\0';
}

/* The value of key as a C string in b (size bytes), for the number
 * parsers: 0 if it is absent, empty or too long to be a number. */
static int rec_number(const cs_rec_t *r, const char *key, char *b, size_t size)
{
    size_t n = 0;
    const char *v = cs_rec_get(r, key, &n);
    if (!v || n == 0 || n >= size)
        return 0;
    memcpy(b, v, n);
    b[n] = '\0';
    return 1;
}

int64_t cs_rec_int(const cs_rec_t *r, const char *key, int64_t dflt)
{
    char b[32], *end;
    if (!rec_number(r, key, b, sizeof b))
        return dflt;
    errno = 0;
    long long x = strtoll(b, &end, 10);
    return *end || errno ? dflt : (int64_t)x;
}

double cs_rec_real(const cs_rec_t *r, const char *key, double dflt)
{
    char b[64], *end;
    if (!rec_number(r, key, b, sizeof b))
        return dflt;
    double x = strtod(b, &end);
    return *end ? dflt : x;
}

const char *cs_rec_bytes(const cs_rec_t *r, size_t *len)
{
    *len = r->len;
    return r->buf ? r->buf : "";
}

int cs_rec_parse(const char *buf, size_t n, cs_rec_t **out, cs_error_t *err)
{
    char key[CS_REC_KEY_MAX + 1];
    const char *val, *why = NULL;
    size_t pos = 0, len;
    int field = 0, got;
    *out = NULL;
    while ((got = rec_field(buf, n, &pos, key, &val, &len, &why)) == 1)
        field++;
    if (got < 0)
        return cs_error_set(err, CS_ERR_PARSE, "field %d at byte %zu: %s", field + 1, pos, why);
    cs_rec_t *r = cs_rec_new();
    rec_reserve(r, n);
    if (n)
        memcpy(r->buf, buf, n);
    r->len = n;
    r->buf[n] = '\0';
    *out = r;
    return CS_OK;
}
