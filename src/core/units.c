/*
 * units.c - the quantities users type (durations, byte counts, frequencies,
 * counts) and the `name:key=value,...` spec strings (see units.h).
 *
 * Everything here is front-end code: it runs once per option, so it favours
 * exactness and clear messages over speed.  Every error message quotes the
 * text that was given and says what would have been valid; the spec
 * look-ups put `spec "<text>": key '<key>': ` in front, so a user always
 * learns which key of which spec was wrong.
 *
 * Accepted forms (surrounding ASCII white space is ignored everywhere, and a
 * space may separate a number from its unit):
 *
 * - Durations: a non-negative decimal number ("2.5", ".5", "1e-9") and a
 *   unit: s, ms, us (also "µs" and "μs" in UTF-8), ns, ps.  Units are
 *   case-sensitive, because "Ms" would be a megasecond.  A bare number is in
 *   `bare_unit_s` seconds; a bare_unit_s <= 0 means a unit is required.
 *   The value is divided by an exact power of ten (1e9 for ns) rather than
 *   multiplied by an inexact one, so "3ns" is exactly the double 3e-9.
 * - Byte counts: a non-negative decimal and an optional suffix:
 *     none, B or b                                   bytes
 *     K, M, G, T in either case, alone or followed by B, i or iB
 *                                                    powers of 1024
 *   so "1k", "1K", "1KB", "1kB", "1Ki" and "1KiB" are all 1024.  That is
 *   nccl-tests' reading (`-b 8 -e 128M`: K, M, G are powers of 1024, in
 *   either case), JEDEC's for KB, MB, GB, and collsim's own before 0.2 for
 *   K, M, G and KiB; it differs from SI only for "kB", "KB", "MB", "GB",
 *   "TB", which were powers of 1000 until the grammar was made one (a
 *   message size of "1MB" in a benchmark script means 1 MiB, and a
 *   1,000,000-byte message is written 1000000).  Bandwidths keep SI
 *   prefixes (GB/s is 10^9 bytes a second, as nccl-tests reports them).
 *   The arithmetic is exact
 *   integer arithmetic, never a double: "1.5KiB" is 1536, "0.5B" and
 *   "1.0001KiB" are rejected as not whole bytes, and results beyond INT64_MAX
 *   are rejected.  Negative counts and exponents ("1e6") are rejected.
 * - Frequencies: a positive decimal and an optional unit Hz, kHz, MHz, GHz,
 *   matched without regard to case (no one means millihertz for a clock).
 *   A bare number is in Hz.
 * - Plain integers: decimal digits only, no sign, up to INT64_MAX.
 *
 * Numbers are scanned here first (digits, point, exponent) and only then
 * converted with strtod/strtoll, whose end pointer must match the scan: that
 * excludes the forms strtod would also accept ("0x1p3", "inf", "nan").
 * strtod follows the C locale's decimal point; collsim never calls setlocale.
 *
 * Error codes: malformed text is CS_ERR_USAGE; a well-formed value outside
 * what is representable or allowed (overflow, [lo, hi]) is CS_ERR_RANGE.
 * On error nothing is written to *out.
 */
#include "core/units.h"
#include "core/checked.h"
#include "core/suggest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scanning helpers ---- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static const char *skip_space(const char *p)
{
    while (is_space(*p))
        p++;
    return p;
}

/* End of the text with trailing white space removed (not before `from`). */
static const char *trim_end(const char *from, const char *end)
{
    while (end > from && is_space(end[-1]))
        end--;
    return end;
}

/* End of a C decimal number starting at p ("12", "1.5", ".5", "5.", "1e-9"),
 * or p itself when there is none.  The exponent is taken only when digits
 * follow it, so "1e" leaves "e" as the unit. */
static const char *scan_decimal(const char *p)
{
    const char *q = p;
    int digits = 0;
    while (is_digit(*q)) {
        q++;
        digits++;
    }
    if (*q == '.') {
        q++;
        while (is_digit(*q)) {
            q++;
            digits++;
        }
    }
    if (!digits)
        return p;
    if (*q == 'e' || *q == 'E') {
        const char *r = q + 1;
        if (*r == '+' || *r == '-')
            r++;
        if (is_digit(*r)) {
            while (is_digit(*r))
                r++;
            q = r;
        }
    }
    return q;
}

/* Whether [b, e) equals the NUL-terminated s; `nocase` folds ASCII case. */
static int range_eq(const char *b, const char *e, const char *s, int nocase)
{
    size_t n = (size_t)(e - b);
    if (strlen(s) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char x = b[i], y = s[i];
        if (nocase) {
            if (x >= 'A' && x <= 'Z')
                x = (char)(x - 'A' + 'a');
            if (y >= 'A' && y <= 'Z')
                y = (char)(y - 'A' + 'a');
        }
        if (x != y)
            return 0;
    }
    return 1;
}

/* A number followed by an optional unit, split for the parsers below. */
typedef struct number_unit {
    double value;     /* the number, >= 0 */
    const char *unit; /* the unit text, [unit, unit_end); empty when bare */
    const char *unit_end;
} number_unit_t;

/* Parses "[ws] decimal [ws] [unit] [ws]".  `what` names the quantity for
 * messages ("a duration such as 2.5ns or 1us"). */
static int parse_number_unit(const char *text, const char *what, number_unit_t *nu,
                             cs_error_t *err)
{
    const char *p = skip_space(text);
    if (*p == '-')
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\" (negative values are not allowed)",
                            what, text);
    const char *q = scan_decimal(p);
    if (q == p)
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\"", what, text);
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end != q)
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\"", what, text);
    if (errno == ERANGE || !isfinite(v))
        return cs_error_set(err, CS_ERR_RANGE, "the number in \"%s\" is out of range", text);
    nu->value = v;
    nu->unit = skip_space(q);
    nu->unit_end = trim_end(nu->unit, nu->unit + strlen(nu->unit));
    return CS_OK;
}

/* ---- durations ---- */

typedef struct time_unit {
    const char *name;
    double per_second; /* exact power of ten: the value is divided by it */
} time_unit_t;

static const time_unit_t time_units[] = {
    {"s", 1.0},
    {"ms", 1e3},
    {"us", 1e6},
    {"\xc2\xb5s", 1e6}, /* µs, U+00B5 MICRO SIGN */
    {"\xce\xbcs", 1e6}, /* μs, U+03BC GREEK SMALL LETTER MU */
    {"ns", 1e9},
    {"ps", 1e12},
};

#define DURATION_WHAT "a duration such as 3s, 1ms, 2.5us, 10ns or 500ps"

int cs_units_parse_seconds(const char *text, double bare_unit_s, double *out, cs_error_t *err)
{
    number_unit_t nu;
    double v;
    int rc;
    if (!text)
        text = "";
    if ((rc = parse_number_unit(text, DURATION_WHAT, &nu, err)))
        return rc;
    if (nu.unit == nu.unit_end) {
        if (!(bare_unit_s > 0))
            return cs_error_set(err, CS_ERR_USAGE,
                                "duration \"%s\" needs a unit: s, ms, us, ns or ps", text);
        v = nu.value * bare_unit_s;
    } else {
        const time_unit_t *u = NULL;
        for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++)
            if (range_eq(nu.unit, nu.unit_end, time_units[i].name, 0))
                u = &time_units[i];
        if (!u)
            return cs_error_set(err, CS_ERR_USAGE,
                                "unknown time unit \"%.*s\" in \"%s\"; valid units: s, ms, us, ns, ps",
                                (int)(nu.unit_end - nu.unit), nu.unit, text);
        v = nu.value / u->per_second;
    }
    if (!isfinite(v))
        return cs_error_set(err, CS_ERR_RANGE, "duration \"%s\" is out of range", text);
    *out = v;
    return CS_OK;
}

/* ---- byte counts ---- */

/* The multiplier of a size suffix [s, e): 1 for "B" or "b", else a prefix
 * letter K, M, G, T, P or E in either case, optionally followed by "i" and
 * then by "B" or "b" -- always a power of 1024 (P and E so that every size
 * cs_units_format_bytes prints reads back).  0 when it is none of these. */
static uint64_t byte_suffix(const char *s, const char *e)
{
    static const char prefixes[] = "kmgtpe";
    size_t n = (size_t)(e - s);
    if (n == 1 && (*s == 'B' || *s == 'b'))
        return 1;
    if (n < 1 || n > 3)
        return 0;
    char c = (*s >= 'A' && *s <= 'Z') ? (char)(*s - 'A' + 'a') : *s;
    const char *at = strchr(prefixes, c);
    if (!at || !c)
        return 0;
    const char *q = s + 1;
    if (q < e && *q == 'i')
        q++;
    if (q < e && (*q == 'B' || *q == 'b'))
        q++;
    if (q != e)
        return 0;
    uint64_t mult = 1;
    for (const char *p = prefixes; p <= at; p++)
        mult *= 1024;
    return mult;
}

#define BYTES_WHAT "a byte count such as 4096, 64K or 1.5MiB"
#define BYTE_SUFFIXES "B; K, M, G, T, P, E in either case, alone or with B, i or iB (powers of 1024)"

int cs_units_parse_bytes(const char *text, int64_t *out, cs_error_t *err)
{
    if (!text)
        text = "";
    const char *p = skip_space(text);
    if (*p == '-')
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\" (a byte count cannot be negative)",
                            BYTES_WHAT, text);

    /* The mantissa as an integer and a count of decimals: "1.50" is 15 and
     * 1 decimal (trailing zeros of the fraction do not count). */
    uint64_t mant = 0;
    int decimals = 0, digits = 0, overflow = 0;
    const char *q = p;
    for (; is_digit(*q); q++, digits++) {
        unsigned d = (unsigned)(*q - '0');
        if (mant > (UINT64_MAX - d) / 10)
            overflow = 1;
        else
            mant = mant * 10 + d;
    }
    if (*q == '.') {
        const char *f = ++q;
        while (is_digit(*q))
            q++;
        digits += (int)(q - f);
        const char *fe = q;
        while (fe > f && fe[-1] == '0')
            fe--;
        for (; f < fe; f++, decimals++) {
            unsigned d = (unsigned)(*f - '0');
            if (mant > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                mant = mant * 10 + d;
        }
    }
    if (!digits)
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\"", BYTES_WHAT, text);

    const char *s = skip_space(q);
    const char *se = trim_end(s, s + strlen(s));
    uint64_t mult = 1;
    if (s != se) {
        mult = byte_suffix(s, se);
        if (!mult) {
            /* A letter starts a misspelt suffix; anything else ("1.2.3",
             * "12 34") is simply not a byte count. */
            if ((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (unsigned char)*s >= 0x80)
                return cs_error_set(err, CS_ERR_USAGE,
                                    "unknown size suffix \"%.*s\" in \"%s\"; valid suffixes: %s",
                                    (int)(se - s), s, text, BYTE_SUFFIXES);
            return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\"", BYTES_WHAT, text);
        }
    }

    if (overflow)
        return cs_error_set(err, CS_ERR_RANGE, "byte count \"%s\" is too large (at most %lld bytes)",
                            text, (long long)INT64_MAX);
    /* 10^19 is the largest power of ten in a uint64; more decimals than that
     * cannot come from a real size. */
    if (decimals > 19)
        return cs_error_set(err, CS_ERR_USAGE, "byte count \"%s\" has too many decimals", text);
    uint64_t pow10 = 1;
    for (int i = 0; i < decimals; i++)
        pow10 *= 10;
    /* value = mant * mult / 10^decimals, exactly: cancel the common factor
     * first so that nothing overflows before the final range check. */
    uint64_t g = cs_gcd_u64(mult, pow10);
    uint64_t num = mult / g, den = pow10 / g;
    if (mant % den != 0)
        return cs_error_set(err, CS_ERR_USAGE, "byte count \"%s\" is not a whole number of bytes",
                            text);
    uint64_t whole = mant / den;
    if (whole != 0 && num > (uint64_t)INT64_MAX / whole)
        return cs_error_set(err, CS_ERR_RANGE, "byte count \"%s\" is too large (at most %lld bytes)",
                            text, (long long)INT64_MAX);
    *out = (int64_t)(whole * num);
    return CS_OK;
}

/* ---- frequencies ---- */

typedef struct hz_unit {
    const char *name;
    double mult;
} hz_unit_t;

static const hz_unit_t hz_units[] = {
    {"Hz", 1.0}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9},
};

#define HZ_WHAT "a frequency such as 125MHz or 1.1GHz"

int cs_units_parse_hz(const char *text, double *out, cs_error_t *err)
{
    number_unit_t nu;
    double v;
    int rc;
    if (!text)
        text = "";
    if ((rc = parse_number_unit(text, HZ_WHAT, &nu, err)))
        return rc;
    v = nu.value;
    if (nu.unit != nu.unit_end) {
        const hz_unit_t *u = NULL;
        for (size_t i = 0; i < sizeof hz_units / sizeof hz_units[0]; i++)
            if (range_eq(nu.unit, nu.unit_end, hz_units[i].name, 1))
                u = &hz_units[i];
        if (!u)
            return cs_error_set(err, CS_ERR_USAGE,
                                "unknown frequency unit \"%.*s\" in \"%s\"; valid units: Hz, kHz, MHz, GHz",
                                (int)(nu.unit_end - nu.unit), nu.unit, text);
        v *= u->mult;
    }
    if (!isfinite(v))
        return cs_error_set(err, CS_ERR_RANGE, "frequency \"%s\" is out of range", text);
    if (!(v > 0))
        return cs_error_set(err, CS_ERR_RANGE, "a frequency must be positive, got \"%s\"", text);
    *out = v;
    return CS_OK;
}

/* ---- bandwidths ---- */

/* Bits ("bps") or bytes ("B/s", "Bps") per second, decimal prefixes (the
 * way links are sold: 100Gbps = 12.5e9 bytes/s) and binary ones for bytes
 * (GiB/s).  Case matters between b (bit) and B (byte). */
typedef struct bw_unit {
    const char *name;
    double bytes_per_s;
} bw_unit_t;

static const bw_unit_t bw_units[] = {
    {"bps", 0.125},    {"kbps", 125.0},      {"Kbps", 125.0},     {"Mbps", 125e3},
    {"Gbps", 125e6},   {"Tbps", 125e9},      {"B/s", 1.0},        {"Bps", 1.0},
    {"kB/s", 1e3},     {"KB/s", 1e3},        {"MB/s", 1e6},       {"GB/s", 1e9},
    {"TB/s", 1e12},    {"kBps", 1e3},        {"KBps", 1e3},       {"MBps", 1e6},
    {"GBps", 1e9},     {"TBps", 1e12},       {"KiB/s", 1024.0},   {"MiB/s", 1048576.0},
    {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0},
};

#define BW_WHAT "a bandwidth such as 100Gbps, 25GB/s or 12.5GBps"

int cs_units_parse_bandwidth(const char *text, double bare_unit, double *out, cs_error_t *err)
{
    number_unit_t nu;
    double v;
    int rc;
    if (!text)
        text = "";
    if ((rc = parse_number_unit(text, BW_WHAT, &nu, err)))
        return rc;
    v = nu.value;
    if (nu.unit == nu.unit_end) {
        if (!(bare_unit > 0))
            return cs_error_set(err, CS_ERR_USAGE, "bandwidth \"%s\" needs a unit, e.g. Gbps "
                                "(bits) or GB/s (bytes)", text);
        v *= bare_unit;
    } else {
        const bw_unit_t *u = NULL;
        for (size_t i = 0; i < sizeof bw_units / sizeof bw_units[0]; i++)
            if (range_eq(nu.unit, nu.unit_end, bw_units[i].name, 0))
                u = &bw_units[i];
        if (!u)
            return cs_error_set(err, CS_ERR_USAGE,
                                "unknown bandwidth unit \"%.*s\" in \"%s\"; valid units: bps, "
                                "kbps, Mbps, Gbps, Tbps (bits), B/s, kB/s, MB/s, GB/s, TB/s "
                                "(or Bps, ...), KiB/s, MiB/s, GiB/s, TiB/s",
                                (int)(nu.unit_end - nu.unit), nu.unit, text);
        v *= u->bytes_per_s;
    }
    if (!isfinite(v))
        return cs_error_set(err, CS_ERR_RANGE, "bandwidth \"%s\" is out of range", text);
    if (!(v > 0))
        return cs_error_set(err, CS_ERR_RANGE, "a bandwidth must be positive, got \"%s\"", text);
    *out = v;
    return CS_OK;
}

/* The largest unit that keeps the number >= 1, so that a normalised spec
 * reads like what users type. */
const char *cs_units_spec_seconds(double s, char *buf, size_t len)
{
    static const struct { const char *unit; double scale; } units[] = {
        {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}};
    size_t i = 0;
    while (i + 1 < sizeof units / sizeof *units && s > 0 && s < units[i].scale * (1 - 1e-9))
        i++;
    snprintf(buf, len, "%.12g%s", s / units[i].scale, units[i].unit);
    return buf;
}

const char *cs_units_spec_bandwidth(double b, char *buf, size_t len)
{
    static const struct { const char *unit; double scale; } units[] = {
        {"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"kB/s", 1e3}, {"B/s", 1}};
    size_t i = 0;
    while (i + 1 < sizeof units / sizeof *units && b < units[i].scale * (1 - 1e-9))
        i++;
    snprintf(buf, len, "%.12g%s", b / units[i].scale, units[i].unit);
    return buf;
}

/* ---- integers ---- */

/* Parses "[ws] [sign] digits [ws]" into a signed int64.  `allow_sign` is 0
 * for counts; `what` names the expectation for messages. */
static int parse_int64(const char *text, int allow_sign, const char *what, int64_t *out,
                       cs_error_t *err)
{
    const char *p = skip_space(text);
    const char *d = p;
    if (allow_sign && (*d == '-' || *d == '+'))
        d++;
    if (!is_digit(*d)) {
        if (!allow_sign && *p == '-' && is_digit(p[1]))
            return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\" (negative values are not allowed)",
                                what, text);
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\"", what, text);
    }
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (*skip_space(end) != '\0')
        return cs_error_set(err, CS_ERR_USAGE, "expected %s, got \"%s\"", what, text);
    if (errno == ERANGE)
        return cs_error_set(err, CS_ERR_RANGE, "\"%s\" is out of range (integers are limited to [%lld, %lld])",
                            text, (long long)INT64_MIN, (long long)INT64_MAX);
    *out = (int64_t)v;
    return CS_OK;
}

int cs_units_parse_int(const char *text, int64_t *out, cs_error_t *err)
{
    return parse_int64(text ? text : "", 0, "a non-negative integer", out, err);
}

/* ---- formatting ---- */

/* Index of the largest unit (scale[0] is the largest) in which v >= 0 is
 * at least `one`.  The thresholds keep "%.6g" from printing a value as a
 * full unit of the smaller kind: 999.9997 ns would print "1000 ns", so at
 * or above 999.9995 ns it is shown in us ("1 us"); likewise 1023.996 KiB
 * (six digits: "1024") is shown in MiB. */
static int pick_unit(double v, const double *scale, int n, double one)
{
    for (int i = 0; i < n; i++)
        if (v * scale[i] >= one)
            return i;
    return n - 1;
}

void cs_units_format_seconds(double s, char *buf, size_t len)
{
    static const char *const names[] = {"s", "ms", "us", "ns", "ps"};
    static const double scale[] = {1.0, 1e3, 1e6, 1e9, 1e12};
    if (!buf || len == 0)
        return;
    if (s == 0 || !isfinite(s)) {
        snprintf(buf, len, "%g s", s);
        return;
    }
    int u = pick_unit(fabs(s), scale, 5, 999.9995 / 1000);
    snprintf(buf, len, "%.6g %s", s * scale[u], names[u]);
}

void cs_units_format_bytes(int64_t bytes, char *buf, size_t len)
{
    static const char *const names[] = {"EiB", "PiB", "TiB", "GiB", "MiB", "KiB"};
    if (!buf || len == 0)
        return;
    /* The magnitude as unsigned, so that INT64_MIN has one too. */
    uint64_t mag = bytes < 0 ? (uint64_t)0 - (uint64_t)bytes : (uint64_t)bytes;
    if (mag < 1024) {
        snprintf(buf, len, "%lld B", (long long)bytes);
        return;
    }
    double scale[6];
    for (int i = 0; i < 6; i++)
        scale[i] = ldexp(1.0, -10 * (6 - i)); /* exact powers of two */
    int u = pick_unit((double)mag, scale, 6, 1023.995 / 1024);
    snprintf(buf, len, "%.6g %s", (double)bytes * scale[u], names[u]);
    /* A size prints as what reads back to it (docs/cli.md, "Sizes"): a
     * binary unit only when six digits hold the size exactly ("1.5 KiB",
     * "3.875 KiB"), else the bytes ("1000000 B", not "976.562 KiB"). */
    char text[64];
    int64_t back = -1;
    snprintf(text, sizeof text, "%.6g %s", (double)mag * scale[u], names[u]);
    if (cs_units_parse_bytes(text, &back, NULL) != CS_OK || (uint64_t)back != mag)
        snprintf(buf, len, "%lld B", (long long)bytes);
}

/* ---- spec strings ---- */

/* A fresh NUL-terminated copy of [b, e) without surrounding white space. */
static char *dup_trimmed(const char *b, const char *e)
{
    b = skip_space(b);
    if (b > e)
        b = e;
    e = trim_end(b, e);
    size_t n = (size_t)(e - b);
    char *s = cs_malloc(n + 1);
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

void cs_spec_destroy(cs_spec_t *spec)
{
    if (!spec)
        return;
    for (int i = 0; i < spec->nkv; i++) {
        free(spec->kv[i].key);
        free(spec->kv[i].value);
    }
    free(spec->kv);
    free(spec->name);
    free(spec->text);
    memset(spec, 0, sizeof *spec);
}

/* Parses one "key=value" entry [b, e) into spec->kv[spec->nkv]. */
static int spec_parse_entry(cs_spec_t *spec, const char *b, const char *e, cs_error_t *err)
{
    const char *eq = memchr(b, '=', (size_t)(e - b));
    char *key = dup_trimmed(b, eq ? eq : e);
    int rc = CS_OK;
    if (skip_space(b) >= trim_end(b, e)) {
        rc = cs_error_set(err, CS_ERR_USAGE,
                          "spec \"%s\": empty entry (a stray ','); expected key=value", spec->text);
    } else if (!eq) {
        rc = cs_error_set(err, CS_ERR_USAGE, "spec \"%s\": missing '=' after key '%s'", spec->text,
                          key);
    } else if (!key[0]) {
        char *rest = dup_trimmed(eq, e);
        rc = cs_error_set(err, CS_ERR_USAGE, "spec \"%s\": empty key before '%s'", spec->text, rest);
        free(rest);
    }
    if (rc) {
        free(key);
        return rc;
    }
    for (int i = 0; i < spec->nkv; i++) {
        if (!strcmp(spec->kv[i].key, key)) {
            rc = cs_error_set(err, CS_ERR_USAGE, "spec \"%s\": duplicate key '%s'", spec->text, key);
            free(key);
            return rc;
        }
    }
    char *value = dup_trimmed(eq + 1, e);
    if (!value[0]) {
        rc = cs_error_set(err, CS_ERR_USAGE, "spec \"%s\": key '%s' has an empty value", spec->text,
                          key);
        free(key);
        free(value);
        return rc;
    }
    spec->kv[spec->nkv].key = key;
    spec->kv[spec->nkv].value = value;
    spec->kv[spec->nkv].used = 0;
    spec->nkv++;
    return CS_OK;
}

int cs_spec_parse(const char *text, cs_spec_t *spec, cs_error_t *err)
{
    int rc;
    memset(spec, 0, sizeof *spec);
    if (!text)
        text = "";
    spec->text = cs_strdup(text);

    const char *colon = strchr(text, ':');
    const char *name_end = colon ? colon : text + strlen(text);
    spec->name = dup_trimmed(text, name_end);
    if (!spec->name[0]) {
        rc = cs_error_set(err, CS_ERR_USAGE,
                          "spec \"%s\": empty name; expected name or name:key=value,...", text);
        goto fail;
    }
    if (strpbrk(spec->name, "=,")) {
        rc = cs_error_set(err, CS_ERR_USAGE,
                          "spec \"%s\": no name before the key=value list; expected name:key=value,...",
                          text);
        goto fail;
    }
    if (!colon || *skip_space(colon + 1) == '\0')
        return CS_OK; /* "name" or "name:" */

    int n = 1;
    for (const char *c = colon + 1; *c; c++)
        n += *c == ',';
    spec->kv = cs_calloc((size_t)n, sizeof *spec->kv);
    for (const char *b = colon + 1;;) {
        const char *e = strchr(b, ',');
        if (!e)
            e = b + strlen(b);
        if ((rc = spec_parse_entry(spec, b, e, err)))
            goto fail;
        if (!*e)
            break;
        b = e + 1;
    }
    return CS_OK;

fail:
    cs_spec_destroy(spec);
    return rc;
}

int cs_spec_check_nodes(const cs_spec_t *spec, int64_t nodes, cs_error_t *err)
{
    if (spec->max_nodes > 0 && nodes > spec->max_nodes)
        return cs_error_set(err, CS_ERR_RANGE, "spec \"%s\": %lld nodes, more than the %lld "
                            "this build allows (collsim serve --max-nodes)", spec->text,
                            (long long)nodes, (long long)spec->max_nodes);
    return CS_OK;
}

const char *cs_spec_get(cs_spec_t *spec, const char *key)
{
    if (!spec)
        return NULL;
    for (int i = 0; i < spec->nkv; i++) {
        if (!strcmp(spec->kv[i].key, key)) {
            spec->kv[i].used = 1;
            return spec->kv[i].value;
        }
    }
    return NULL;
}

/* Puts the spec and key in front of a message from a units parser. */
static int spec_key_error(const cs_spec_t *spec, const char *key, int rc, cs_error_t *err)
{
    cs_error_prefix(err, "spec \"%s\": key '%s'", spec->text, key);
    return rc;
}

int cs_spec_get_int(cs_spec_t *spec, const char *key, int64_t dflt, int64_t lo, int64_t hi,
                    int64_t *out, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    int64_t x;
    int rc;
    if (!v) {
        *out = dflt;
        return CS_OK;
    }
    if ((rc = parse_int64(v, 1, "an integer", &x, err)))
        return spec_key_error(spec, key, rc, err);
    if (x < lo || x > hi)
        return cs_error_set(err, CS_ERR_RANGE,
                            "spec \"%s\": key '%s': %lld is out of range; expected an integer in [%lld, %lld]",
                            spec->text, key, (long long)x, (long long)lo, (long long)hi);
    *out = x;
    return CS_OK;
}

int cs_spec_get_seconds(cs_spec_t *spec, const char *key, double dflt, double *out, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    int rc;
    if (!v) {
        *out = dflt;
        return CS_OK;
    }
    if ((rc = cs_units_parse_seconds(v, 1.0, out, err)))
        return spec_key_error(spec, key, rc, err);
    return CS_OK;
}

int cs_spec_get_bandwidth(cs_spec_t *spec, const char *key, double dflt, double *out,
                          cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    int rc;
    if (!v) {
        *out = dflt;
        return CS_OK;
    }
    if ((rc = cs_units_parse_bandwidth(v, 0, out, err)))
        return spec_key_error(spec, key, rc, err);
    return CS_OK;
}

int cs_spec_get_bytes(cs_spec_t *spec, const char *key, int64_t dflt, int64_t *out, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    int rc;
    if (!v) {
        *out = dflt;
        return CS_OK;
    }
    if ((rc = cs_units_parse_bytes(v, out, err)))
        return spec_key_error(spec, key, rc, err);
    return CS_OK;
}

/* Writes "a, b, c" (the NULL-terminated list) into buf, truncating with
 * "..." if it does not fit. */
static void join_list(const char *const *items, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; items && items[i]; i++) {
        int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", items[i]);
        if (n < 0 || (size_t)n >= len - off) {
            if (len >= 4)
                memcpy(buf + len - 4, "...", 4);
            return;
        }
        off += (size_t)n;
    }
}

int cs_spec_get_choice(cs_spec_t *spec, const char *key, const char *const *choices, int dflt,
                       int *out, cs_error_t *err)
{
    const char *v = cs_spec_get(spec, key);
    if (!v) {
        *out = dflt;
        return CS_OK;
    }
    for (int i = 0; choices && choices[i]; i++) {
        if (!strcmp(choices[i], v)) {
            *out = i;
            return CS_OK;
        }
    }
    char list[CS_ERROR_MSG_MAX / 2], hint[96];
    cs_suggest_t sg;
    cs_suggest_init(&sg, v);
    cs_suggest_add_list(&sg, choices);
    join_list(choices, list, sizeof list);
    return cs_error_set(err, CS_ERR_USAGE,
                        "spec \"%s\": key '%s': expected one of %s, got \"%s\"%s", spec->text,
                        key, list, v, cs_suggest_hint(&sg, "\"", hint, sizeof hint));
}

static int spec_key_valid(const char *key, const char *const *valid)
{
    for (int j = 0; valid && valid[j]; j++)
        if (!strcmp(valid[j], key))
            return 1;
    return 0;
}

int cs_spec_check_known(const cs_spec_t *spec, const char *const *valid, cs_error_t *err)
{
    for (int i = 0; i < spec->nkv; i++) {
        const char *key = spec->kv[i].key;
        if (spec_key_valid(key, valid))
            continue;
        if (!valid || !valid[0])
            return cs_error_set(err, CS_ERR_USAGE,
                                "unknown key '%s' in spec \"%s\"; \"%s\" takes no keys", key,
                                spec->text, spec->name);
        char list[CS_ERROR_MSG_MAX / 2], hint[96];
        cs_suggest_t sg;
        cs_suggest_init(&sg, key);
        cs_suggest_add_list(&sg, valid);
        join_list(valid, list, sizeof list);
        return cs_error_set(err, CS_ERR_USAGE,
                            "unknown key '%s'%s in spec \"%s\"; valid keys: %s", key,
                            cs_suggest_hint(&sg, "'", hint, sizeof hint), spec->text, list);
    }
    return CS_OK;
}

int cs_spec_check_unused(const cs_spec_t *spec, const char *const *valid, cs_error_t *err)
{
    int rc = cs_spec_check_known(spec, valid, err);
    for (int i = 0; i < spec->nkv && !rc; i++)
        /* A valid key that no look-up asked for does not apply to the
         * other settings (say, rows= with a ring); saying "unknown" would
         * send the user looking for a typo. */
        if (!spec->kv[i].used)
            return cs_error_set(err, CS_ERR_USAGE,
                                "key '%s' in spec \"%s\" is not used with the other settings",
                                spec->kv[i].key, spec->text);
    return rc;
}

int cs_spec_ticks(const char *key, double s, double tick, double max_ticks, int64_t *out,
                  cs_error_t *err)
{
    double t = s / tick;
    double r = nearbyint(t);
    if (s < 0)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': must be >= 0", key);
    if (fabs(t - r) > 1e-6 * (r > 1 ? r : 1))
        return cs_error_set(err, CS_ERR_RANGE,
                            "key '%s': %g s is not a whole number of %g s ticks; choose a finer tick=",
                            key, s, tick);
    if (r > max_ticks)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': too large", key);
    *out = (int64_t)r;
    return CS_OK;
}

int cs_spec_tick_ratio(const char *key, double s, double tick, int64_t *num, int64_t *den,
                       cs_error_t *err)
{
    double t = s / tick;
    if (s < 0)
        return cs_error_set(err, CS_ERR_RANGE, "key '%s': must be >= 0", key);
    for (int64_t d = 1; d <= 1000000; d *= 10) {
        double v = t * (double)d, r = nearbyint(v);
        if (fabs(v - r) <= 1e-6 * (r > 1 ? r : 1) && r < 9e15) {
            *num = (int64_t)r;
            *den = d;
            return CS_OK;
        }
    }
    return cs_error_set(err, CS_ERR_RANGE,
                        "key '%s': %g s per byte is not a multiple of a millionth of the %g s tick",
                        key, s, tick);
}
