/*
 * sizes.c - the size lists of `collsim sweep --bytes` and `--ranks`
 * (sizes.h): items N or LO..HI with a geometric (:xF) or arithmetic (:+S)
 * step, sorted and made distinct.
 *
 * Moved down from src/app/cmd_sweep.c (issue 20) so that the library parses
 * sizes as the command line does (collsim_parse_sizes); messages unchanged.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/sizes.h"
#include "core/units.h"

/* A geometric range is refused when it would take more steps than this
 * (x1.000001 from 1 byte): the steps are counted before they are made. */
#define SIZES_MAX_STEPS 100000

static int sizes_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int sizes_add(int64_t *sizes, int *n, int64_t v, const char *text, cs_error_t *err)
{
    if (*n == CS_SIZES_MAX)
        return cs_error_set(err, CS_ERR_RANGE, "'%s' gives more than %d sizes", text,
                            CS_SIZES_MAX);
    sizes[(*n)++] = v;
    return CS_OK;
}

/* One item of --bytes: N, or LO..HI with an optional :xF or :+S step.
 * `item` is a NUL-terminated copy that may be cut up. */
static int sizes_parse_item(char *item, int64_t *sizes, int *n, cs_error_t *err)
{
    char *dots = strstr(item, ".."), *step, *end;
    int64_t lo, hi, add = 0, v;
    double factor = 2;
    int rc;
    if (!dots) {
        if ((rc = cs_units_parse_bytes(item, &v, err)))
            return rc;
        return sizes_add(sizes, n, v, item, err);
    }
    *dots = '\0';
    if ((step = strchr(dots + 2, ':')))
        *step++ = '\0';
    if ((rc = cs_units_parse_bytes(item, &lo, err)) ||
        (rc = cs_units_parse_bytes(dots + 2, &hi, err)))
        return rc;
    if (lo > hi)
        return cs_error_set(err, CS_ERR_USAGE, "range %s..%s is empty: %lld B is above %lld B",
                            item, dots + 2, (long long)lo, (long long)hi);
    if (step && step[0] == 'x') {
        errno = 0;
        factor = strtod(step + 1, &end);
        if (end == step + 1 || *end || errno || !(factor > 1) || !isfinite(factor))
            return cs_error_set(err, CS_ERR_USAGE, "step '%s': the factor must be a number "
                                "above 1, as in x2 or x1.5", step);
    } else if (step && step[0] == '+') {
        if ((rc = cs_units_parse_bytes(step + 1, &add, err)))
            return rc;
        if (add < 1)
            return cs_error_set(err, CS_ERR_USAGE, "step '%s': add at least 1 byte", step);
    } else if (step) {
        return cs_error_set(err, CS_ERR_USAGE, "step '%s': expected xF (multiply) or +S (add)",
                            step);
    }
    if (add) {
        if ((hi - lo) / add >= CS_SIZES_MAX)
            return cs_error_set(err, CS_ERR_RANGE, "%lld..%lld:+%lld gives more than %d sizes",
                                (long long)lo, (long long)hi, (long long)add, CS_SIZES_MAX);
        for (v = lo;; v += add) { /* v + add may pass INT64_MAX: stop before */
            if ((rc = sizes_add(sizes, n, v, "--bytes", err)))
                return rc;
            if (v > hi - add)
                break;
        }
        return CS_OK;
    }
    if (lo < 1)
        return cs_error_set(err, CS_ERR_USAGE, "range %s..%s: a geometric range starts at 1 "
                            "byte or more (add 0 as a separate item)", item, dots + 2);
    /* LO*F^k from the start each time, so that no rounding accumulates;
     * sizes that round to the same byte count are kept once (below) */
    /* the loop below runs until LO*F^k passes HI + 0.5 (not HI: with
     * 1..1:x1.00000000002 that is 2e10 steps) */
    if (log(((double)hi + 0.5) / (double)lo) / log(factor) > SIZES_MAX_STEPS)
        return cs_error_set(err, CS_ERR_RANGE, "%lld..%lld:x%g takes more than %d steps",
                            (long long)lo, (long long)hi, factor, SIZES_MAX_STEPS);
    for (int k = 0;; k++) {
        double x = (double)lo * pow(factor, k);
        /* 2^63 and above: hi near INT64_MAX rounds up to it as a double,
         * and llround cannot give it */
        if (x > (double)hi + 0.5 || x >= 0x1p63)
            break;
        v = llround(x);
        if (v > hi)
            break;
        if (*n > 0 && sizes[*n - 1] == v)
            continue;
        if ((rc = sizes_add(sizes, n, v, "--bytes", err)))
            return rc;
    }
    return CS_OK;
}

int cs_sizes_parse(const char *text, int64_t *sizes, int *n, cs_error_t *err)
{
    char buf[256];
    const char *p = text;
    int rc, k = 0;
    *n = 0;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return cs_error_set(err, CS_ERR_USAGE, "empty item in '%s'", text);
        if (len >= sizeof buf)
            return cs_error_set(err, CS_ERR_USAGE, "item too long in '%s'", text);
        memcpy(buf, p, len);
        buf[len] = '\0';
        if ((rc = sizes_parse_item(buf, sizes, n, err)))
            return rc;
        if (!p[len])
            break;
        p += len + 1;
    }
    qsort(sizes, (size_t)*n, sizeof *sizes, sizes_cmp_i64);
    for (int i = 0; i < *n; i++)
        if (k == 0 || sizes[i] != sizes[k - 1])
            sizes[k++] = sizes[i];
    *n = k;
    return CS_OK;
}

int cs_sizes_parse_alloc(const char *text, int64_t **sizes, int *n, cs_error_t *err)
{
    int64_t *v = cs_malloc(CS_SIZES_MAX * sizeof *v);
    int rc = cs_sizes_parse(text, v, n, err);
    if (rc) {
        free(v);
        v = NULL;
        *n = 0;
    }
    *sizes = v;
    return rc;
}
