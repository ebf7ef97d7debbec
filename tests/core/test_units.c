/*
 * test_units.c - parsing of durations, byte counts, frequencies, integers,
 * the formatting helpers, and spec strings.
 *
 * Tables of valid inputs with their exact values, and of invalid inputs with
 * a fragment their message must contain: an error that does not quote the
 * offending text (and, for specs, the key) is a failing test here.
 */
#include "core/units.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ---- */

static void assert_msg_has(const cs_error_t *err, const char *fragment, const char *input)
{
    cr_assert(strstr(err->msg, fragment) != NULL,
              "input \"%s\": message \"%s\" lacks \"%s\"", input, err->msg, fragment);
}

typedef struct bad_case {
    const char *text;
    int code;             /* expected status */
    const char *fragment; /* must appear in the message */
} bad_case_t;

/* ---- durations ---- */

Test(units, seconds_valid)
{
    static const struct {
        const char *text;
        double want;
    } ok[] = {
        {"3s", 3.0},        {"1ms", 1e-3},      {"1us", 1e-6},      {"2.5ns", 2.5e-9},
        {"10ps", 10e-12},   {"3ns", 3e-9},      {"0s", 0.0},        {"0", 0.0},
        {".5us", 0.5e-6},   {"5.us", 5e-6},     {"1e-9", 1e-9},     {"1e3ns", 1e-6},
        {"2E-3s", 2e-3},    {"  7 ns ", 7e-9},  {"1.5 s", 1.5},     {"1\xc2\xb5s", 1e-6},
        {"1\xce\xbcs", 1e-6}, {"42", 42.0},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cs_error_t err = {0};
        double v = -1;
        int rc = cs_units_parse_seconds(ok[i].text, 1.0, &v, &err);
        cr_assert_eq(rc, CS_OK, "\"%s\": %s", ok[i].text, err.msg);
        /* Dividing by exact powers of ten makes these exact. */
        cr_assert(v == ok[i].want, "\"%s\" gave %.17g, want %.17g", ok[i].text, v, ok[i].want);
    }
}

Test(units, seconds_bare_unit)
{
    double v;
    cr_assert_eq(cs_units_parse_seconds("5", 1e-9, &v, NULL), CS_OK);
    cr_assert_float_eq(v, 5e-9, 1e-24);
    cr_assert_eq(cs_units_parse_seconds("5", 1e-3, &v, NULL), CS_OK);
    cr_assert_float_eq(v, 5e-3, 1e-18);
    /* A unit overrides the bare unit. */
    cr_assert_eq(cs_units_parse_seconds("5s", 1e-9, &v, NULL), CS_OK);
    cr_assert(v == 5.0);
    /* bare_unit_s <= 0: a unit is required. */
    cs_error_t err = {0};
    v = -7;
    cr_assert_eq(cs_units_parse_seconds("5", 0, &v, &err), CS_ERR_USAGE);
    assert_msg_has(&err, "\"5\" needs a unit", "5");
    cr_assert(v == -7, "*out must be untouched on error");
    cr_assert_eq(cs_units_parse_seconds("5us", 0, &v, &err), CS_OK);
}

Test(units, seconds_invalid)
{
    static const bad_case_t bad[] = {
        {"", CS_ERR_USAGE, "got \"\""},
        {"   ", CS_ERR_USAGE, "expected a duration"},
        {"us", CS_ERR_USAGE, "got \"us\""},
        {"12x", CS_ERR_USAGE, "unknown time unit \"x\" in \"12x\"; valid units: s, ms, us, ns, ps"},
        {"1 min", CS_ERR_USAGE, "unknown time unit \"min\""},
        {"1Ms", CS_ERR_USAGE, "unknown time unit \"Ms\""},
        {"1US", CS_ERR_USAGE, "unknown time unit \"US\""},
        {"-1us", CS_ERR_USAGE, "negative"},
        {"+1us", CS_ERR_USAGE, "got \"+1us\""},
        {"0x10", CS_ERR_USAGE, "got \"0x10\""},
        {"inf", CS_ERR_USAGE, "got \"inf\""},
        {"nan", CS_ERR_USAGE, "got \"nan\""},
        {"1e", CS_ERR_USAGE, "unknown time unit \"e\""},
        {"1.2.3s", CS_ERR_USAGE, "unknown time unit \".3s\""},
        {"1 2 s", CS_ERR_USAGE, "unknown time unit \"2 s\""},
        {"1e400s", CS_ERR_RANGE, "out of range"},
        {"1e-400s", CS_ERR_RANGE, "out of range"},
        {".", CS_ERR_USAGE, "got \".\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_error_t err = {0};
        double v = -7;
        int rc = cs_units_parse_seconds(bad[i].text, 1.0, &v, &err);
        cr_assert_eq(rc, bad[i].code, "\"%s\": rc %d, want %d (%s)", bad[i].text, rc, bad[i].code,
                     err.msg);
        cr_assert_eq(err.code, bad[i].code);
        assert_msg_has(&err, bad[i].fragment, bad[i].text);
        cr_assert(v == -7, "\"%s\": *out written on error", bad[i].text);
    }
    /* A bare-unit overflow is caught too; a NULL err only loses the message. */
    double v;
    cr_assert_eq(cs_units_parse_seconds("1e300", 1e300, &v, NULL), CS_ERR_RANGE);
    cr_assert_eq(cs_units_parse_seconds(NULL, 1.0, &v, NULL), CS_ERR_USAGE);
}

/* ---- byte counts ---- */

Test(units, bytes_valid)
{
    static const struct {
        const char *text;
        int64_t want;
    } ok[] = {
        {"0", 0},
        {"4096", 4096},
        {"100B", 100},
        {"100b", 100},
        {"100 B", 100},
        {"1K", 1024},
        {"1Ki", 1024},
        {"1KiB", 1024},
        {"64KiB", 65536},
        {"1M", 1048576},
        {"1MiB", 1048576},
        {"1G", 1073741824},
        {"2 GiB", 2147483648LL},
        {"1T", 1099511627776LL},
        {"1TiB", 1099511627776LL},
        /* one grammar: every prefix letter is a power of 1024, in either
         * case, with or without B (docs/cli.md, "Sizes") */
        {"1k", 1024},
        {"1kB", 1024},
        {"1KB", 1024},
        {"1kib", 1024},
        {"1kb", 1024},
        {"1Kb", 1024},
        {"128M", 134217728},
        {"128m", 134217728},
        {"1MB", 1048576},
        {"1.5MB", 1572864},
        {"1g", 1073741824},
        {"1GB", 1073741824},
        {"3TB", 3LL * 1099511627776LL},
        {"1.5KiB", 1536},
        {"0.5K", 512},
        {"0.25MiB", 262144},
        {"1.000KiB", 1024},
        {"2.", 2},
        {".5KiB", 512},
        {"0.0009765625kB", 1},
        {"  7  ", 7},
        {"9223372036854775807", INT64_MAX},
        {"8388607TiB", 8388607LL * 1099511627776LL},
        {"9223372036854775807.000", INT64_MAX},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cs_error_t err = {0};
        int64_t v = -1;
        int rc = cs_units_parse_bytes(ok[i].text, &v, &err);
        cr_assert_eq(rc, CS_OK, "\"%s\": %s", ok[i].text, err.msg);
        cr_assert_eq(v, ok[i].want, "\"%s\" gave %lld, want %lld", ok[i].text, (long long)v,
                     (long long)ok[i].want);
    }
}

Test(units, bytes_invalid)
{
    static const bad_case_t bad[] = {
        {"", CS_ERR_USAGE, "expected a byte count"},
        {"KiB", CS_ERR_USAGE, "got \"KiB\""},
        {"12x", CS_ERR_USAGE, "unknown size suffix \"x\" in \"12x\"; valid suffixes: B; K, M, G, T, P, E"},
        {"1kk", CS_ERR_USAGE, "unknown size suffix \"kk\""},
        {"1KiBB", CS_ERR_USAGE, "unknown size suffix \"KiBB\""},
        {"1Bi", CS_ERR_USAGE, "unknown size suffix \"Bi\""},
        {"1X", CS_ERR_USAGE, "unknown size suffix \"X\""},
        {"1iB", CS_ERR_USAGE, "unknown size suffix \"iB\""},
        {"1e6", CS_ERR_USAGE, "unknown size suffix \"e6\""},
        {"-1", CS_ERR_USAGE, "cannot be negative"},
        {"-1KiB", CS_ERR_USAGE, "got \"-1KiB\""},
        {"+1", CS_ERR_USAGE, "got \"+1\""},
        {"1.2.3", CS_ERR_USAGE, "got \"1.2.3\""},
        {"12 34", CS_ERR_USAGE, "got \"12 34\""},
        {".", CS_ERR_USAGE, "got \".\""},
        {"0.5B", CS_ERR_USAGE, "\"0.5B\" is not a whole number of bytes"},
        {"0.5", CS_ERR_USAGE, "not a whole number of bytes"},
        {"1.0001KiB", CS_ERR_USAGE, "not a whole number of bytes"},
        {"0.0001kB", CS_ERR_USAGE, "not a whole number of bytes"},
        {"0.001kB", CS_ERR_USAGE, "not a whole number of bytes"},
        {"9223372036854775808", CS_ERR_RANGE, "\"9223372036854775808\" is too large"},
        {"99999999999999999999999", CS_ERR_RANGE, "too large"},
        {"8388608TiB", CS_ERR_RANGE, "too large"},
        {"9223372036854775807KB", CS_ERR_RANGE, "too large"},
        {"0.000000000000000000001", CS_ERR_USAGE, "too many decimals"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_error_t err = {0};
        int64_t v = -7;
        int rc = cs_units_parse_bytes(bad[i].text, &v, &err);
        cr_assert_eq(rc, bad[i].code, "\"%s\": rc %d, want %d (%s)", bad[i].text, rc, bad[i].code,
                     err.msg);
        assert_msg_has(&err, bad[i].fragment, bad[i].text);
        cr_assert_eq(v, -7, "\"%s\": *out written on error", bad[i].text);
    }
}

/* ---- frequencies ---- */

Test(units, hz)
{
    static const struct {
        const char *text;
        double want;
    } ok[] = {
        {"1.1GHz", 1.1e9}, {"125MHz", 125e6}, {"1kHz", 1e3}, {"1khz", 1e3},
        {"2 MHZ", 2e6},    {"50", 50.0},      {"50Hz", 50.0}, {"0.5 GHz", 0.5e9},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cs_error_t err = {0};
        double v = -1;
        cr_assert_eq(cs_units_parse_hz(ok[i].text, &v, &err), CS_OK, "\"%s\": %s", ok[i].text,
                     err.msg);
        cr_assert_float_eq(v, ok[i].want, ok[i].want * 1e-15, "\"%s\" gave %.17g", ok[i].text, v);
    }
    static const bad_case_t bad[] = {
        {"0Hz", CS_ERR_RANGE, "must be positive, got \"0Hz\""},
        {"-1GHz", CS_ERR_USAGE, "negative"},
        {"3THz", CS_ERR_USAGE, "unknown frequency unit \"THz\" in \"3THz\"; valid units: Hz, kHz"},
        {"GHz", CS_ERR_USAGE, "expected a frequency"},
        {"fast", CS_ERR_USAGE, "got \"fast\""},
        {"1e400Hz", CS_ERR_RANGE, "out of range"},
        {"1e300GHz", CS_ERR_RANGE, "out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_error_t err = {0};
        double v = -7;
        int rc = cs_units_parse_hz(bad[i].text, &v, &err);
        cr_assert_eq(rc, bad[i].code, "\"%s\": rc %d (%s)", bad[i].text, rc, err.msg);
        assert_msg_has(&err, bad[i].fragment, bad[i].text);
        cr_assert(v == -7);
    }
}

/* ---- integers ---- */

Test(units, int_parse)
{
    static const struct {
        const char *text;
        int64_t want;
    } ok[] = {{"0", 0}, {"42", 42}, {" 42 ", 42}, {"007", 7}, {"9223372036854775807", INT64_MAX}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t v = -1;
        cs_error_t err = {0};
        cr_assert_eq(cs_units_parse_int(ok[i].text, &v, &err), CS_OK, "\"%s\": %s", ok[i].text,
                     err.msg);
        cr_assert_eq(v, ok[i].want);
    }
    static const bad_case_t bad[] = {
        {"", CS_ERR_USAGE, "expected a non-negative integer, got \"\""},
        {"x", CS_ERR_USAGE, "expected a non-negative integer, got \"x\""},
        {"12x", CS_ERR_USAGE, "got \"12x\""},
        {"1.5", CS_ERR_USAGE, "got \"1.5\""},
        {"1e3", CS_ERR_USAGE, "got \"1e3\""},
        {"-1", CS_ERR_USAGE, "negative values are not allowed"},
        {"+1", CS_ERR_USAGE, "got \"+1\""},
        {"0x10", CS_ERR_USAGE, "got \"0x10\""},
        {"1 2", CS_ERR_USAGE, "got \"1 2\""},
        {"9223372036854775808", CS_ERR_RANGE, "\"9223372036854775808\" is out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_error_t err = {0};
        int64_t v = -7;
        int rc = cs_units_parse_int(bad[i].text, &v, &err);
        cr_assert_eq(rc, bad[i].code, "\"%s\": rc %d (%s)", bad[i].text, rc, err.msg);
        assert_msg_has(&err, bad[i].fragment, bad[i].text);
        cr_assert_eq(v, -7);
    }
}

/* ---- formatting ---- */

Test(units, format_seconds)
{
    static const struct {
        double s;
        const char *want;
    } cases[] = {
        {2.048e-6, "2.048 us"}, {0, "0 s"},          {1, "1 s"},          {3600, "3600 s"},
        {1.5e-3, "1.5 ms"},     {3e-9, "3 ns"},      {1e-6, "1 us"},      {5e-13, "0.5 ps"},
        {250e-12, "250 ps"},    {-2e-6, "-2 us"},    {999.9997e-9, "1 us"}, {999.9e-9, "999.9 ns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        cs_units_format_seconds(cases[i].s, buf, sizeof buf);
        cr_assert_str_eq(buf, cases[i].want, "%.17g s formatted as \"%s\"", cases[i].s, buf);
    }
    char small[4];
    cs_units_format_seconds(2.048e-6, small, sizeof small);
    cr_assert_str_eq(small, "2.0", "truncated to the buffer, NUL-terminated");
    cs_units_format_seconds(1.0, small, 0); /* must not write */
}

Test(units, format_bytes)
{
    static const struct {
        int64_t b;
        const char *want;
    } cases[] = {
        {0, "0 B"},
        {100, "100 B"},
        {1023, "1023 B"},
        {1024, "1 KiB"},
        {4096, "4 KiB"},
        {1536 * 1024, "1.5 MiB"},
        {1025, "1025 B"},          /* 1.00098 KiB would not read back */
        {1000000, "1000000 B"},
        {3968, "3.875 KiB"},
        {1073741824, "1 GiB"},
        {-100, "-100 B"},
        {-4096, "-4 KiB"},
        {INT64_MAX, "9223372036854775807 B"},
        {INT64_MIN, "-9223372036854775808 B"},
        {(int64_t)1 << 62, "4 EiB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        cs_units_format_bytes(cases[i].b, buf, sizeof buf);
        cr_assert_str_eq(buf, cases[i].want, "%lld bytes formatted as \"%s\"",
                         (long long)cases[i].b, buf);
    }
}

/* Both ways: every size printed reads back to itself (powers of two and
 * their neighbours, multiples of every unit, pseudo-random values). */
Test(units, format_bytes_reads_back)
{
    uint64_t seed = 42;
    for (int i = 0; i < 20000; i++) {
        int64_t x;
        if (i < 63 * 3)
            x = ((int64_t)1 << (i / 3)) + (i % 3) - 1; /* 2^k - 1, 2^k, 2^k + 1 */
        else if (i < 4000)
            x = (int64_t)(i % 1000) << (10 * (i % 5)); /* m KiB, MiB, ... */
        else {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            x = (int64_t)(seed >> (1 + (i % 60)));
        }
        char buf[64];
        int64_t v = -1;
        cs_error_t err = {0};
        cs_units_format_bytes(x, buf, sizeof buf);
        cr_assert_eq(cs_units_parse_bytes(buf, &v, &err), CS_OK, "%lld printed as \"%s\": %s",
                     (long long)x, buf, err.msg);
        cr_assert_eq(v, x, "%lld printed as \"%s\" reads back as %lld", (long long)x, buf,
                     (long long)v);
    }
}

/* ---- spec strings ---- */

Test(spec, parse_forms)
{
    cs_spec_t s;
    cs_error_t err = {0};

    cr_assert_eq(cs_spec_parse("alphabeta", &s, &err), CS_OK, "%s", err.msg);
    cr_assert_str_eq(s.name, "alphabeta");
    cr_assert_eq(s.nkv, 0);
    cr_assert_str_eq(s.text, "alphabeta");
    cs_spec_destroy(&s);

    cr_assert_eq(cs_spec_parse("allreduce/ring:", &s, &err), CS_OK, "%s", err.msg);
    cr_assert_str_eq(s.name, "allreduce/ring");
    cr_assert_eq(s.nkv, 0);
    cs_spec_destroy(&s);

    cr_assert_eq(cs_spec_parse(" cerebras : rows = 16 ,cols=16,file=a:b=c", &s, &err), CS_OK,
                 "%s", err.msg);
    cr_assert_str_eq(s.name, "cerebras");
    cr_assert_eq(s.nkv, 3);
    cr_assert_str_eq(s.kv[0].key, "rows");
    cr_assert_str_eq(s.kv[0].value, "16");
    cr_assert_str_eq(s.kv[1].key, "cols");
    cr_assert_str_eq(s.kv[2].key, "file");
    cr_assert_str_eq(s.kv[2].value, "a:b=c", "only the first ':' and '=' split");
    for (int i = 0; i < s.nkv; i++)
        cr_assert_eq(s.kv[i].used, 0);
    cr_assert_str_eq(s.text, " cerebras : rows = 16 ,cols=16,file=a:b=c");
    cs_spec_destroy(&s);
    cr_assert_null(s.kv);
    cs_spec_destroy(&s); /* destroying twice, or a zeroed spec, is harmless */
    cs_spec_destroy(NULL);
}

Test(spec, parse_errors)
{
    static const bad_case_t bad[] = {
        {"", CS_ERR_USAGE, "spec \"\": empty name"},
        {":p=1", CS_ERR_USAGE, "spec \":p=1\": empty name"},
        {"  :p=1", CS_ERR_USAGE, "empty name"},
        {"p=4", CS_ERR_USAGE, "spec \"p=4\": no name"},
        {"a,b:p=4", CS_ERR_USAGE, "no name"},
        {"x:p", CS_ERR_USAGE, "spec \"x:p\": missing '=' after key 'p'"},
        {"x:p=1,q", CS_ERR_USAGE, "missing '=' after key 'q'"},
        {"x:=3", CS_ERR_USAGE, "spec \"x:=3\": empty key before '=3'"},
        {"x: =3", CS_ERR_USAGE, "empty key"},
        {"x:p=", CS_ERR_USAGE, "spec \"x:p=\": key 'p' has an empty value"},
        {"x:p= ", CS_ERR_USAGE, "key 'p' has an empty value"},
        {"x:p=1,", CS_ERR_USAGE, "spec \"x:p=1,\": empty entry"},
        {"x:,p=1", CS_ERR_USAGE, "empty entry"},
        {"x:p=1,,q=2", CS_ERR_USAGE, "empty entry"},
        {"x:p=1,p=2", CS_ERR_USAGE, "spec \"x:p=1,p=2\": duplicate key 'p'"},
        {"x:p=1,q=2, p =3", CS_ERR_USAGE, "duplicate key 'p'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_spec_t s;
        cs_error_t err = {0};
        int rc = cs_spec_parse(bad[i].text, &s, &err);
        cr_assert_eq(rc, bad[i].code, "\"%s\": rc %d (%s)", bad[i].text, rc, err.msg);
        assert_msg_has(&err, bad[i].fragment, bad[i].text);
        /* A failed parse leaves nothing to free and may still be destroyed. */
        cr_assert(s.name == NULL && s.kv == NULL && s.text == NULL && s.nkv == 0);
        cs_spec_destroy(&s);
    }
    cs_spec_t s;
    cr_assert_eq(cs_spec_parse(NULL, &s, NULL), CS_ERR_USAGE);
}

static const char *const ab_keys[] = {"topo", "p", "rows", "cols", "alpha", "beta", "hop", NULL};
static const char *const topos[] = {"line", "ring", "mesh", NULL};

/* Parses text, which must be valid. */
static void parse_ok(const char *text, cs_spec_t *s)
{
    cs_error_t err = {0};
    cr_assert_eq(cs_spec_parse(text, s, &err), CS_OK, "\"%s\": %s", text, err.msg);
}

Test(spec, get_and_defaults)
{
    cs_spec_t s;
    cs_error_t err = {0};
    parse_ok("alphabeta:topo=mesh,p=16,alpha=2us,beta=1e-9,hop=5,rows=-3", &s);

    int topo = -1;
    int64_t p = -1, cols = -1, rows = 0, pkt = -1;
    double alpha = -1, beta = -1, hop = -1, dflt_s = -1;
    cr_assert_eq(cs_spec_get_choice(&s, "topo", topos, 1, &topo, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(topo, 2);
    cr_assert_eq(cs_spec_get_int(&s, "p", 8, 1, 4096, &p, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(p, 16);
    cr_assert_eq(cs_spec_get_int(&s, "cols", 7, 0, 10, &cols, &err), CS_OK);
    cr_assert_eq(cols, 7, "absent key gives the default");
    cr_assert_eq(cs_spec_get_int(&s, "rows", 0, -10, 10, &rows, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(rows, -3, "negative integers are allowed when lo < 0");
    cr_assert_eq(cs_spec_get_seconds(&s, "alpha", 1e-6, &alpha, &err), CS_OK, "%s", err.msg);
    cr_assert(alpha == 2e-6);
    cr_assert_eq(cs_spec_get_seconds(&s, "beta", 0, &beta, &err), CS_OK, "%s", err.msg);
    cr_assert(beta == 1e-9);
    cr_assert_eq(cs_spec_get_seconds(&s, "hop", 0, &hop, &err), CS_OK, "%s", err.msg);
    cr_assert(hop == 5.0, "a bare number means seconds");
    cr_assert_eq(cs_spec_get_seconds(&s, "tick", 1e-12, &dflt_s, &err), CS_OK);
    cr_assert(dflt_s == 1e-12);
    cr_assert_eq(cs_spec_get_bytes(&s, "packet", 4096, &pkt, &err), CS_OK);
    cr_assert_eq(pkt, 4096);
    int c = -1;
    cr_assert_eq(cs_spec_get_choice(&s, "mode", topos, 0, &c, &err), CS_OK);
    cr_assert_eq(c, 0);

    cr_assert_eq(cs_spec_check_unused(&s, ab_keys, &err), CS_OK, "%s", err.msg);
    cr_assert_null(cs_spec_get(&s, "nonesuch"));
    cr_assert_str_eq(cs_spec_get(&s, "topo"), "mesh");
    cr_assert_null(cs_spec_get(NULL, "topo"));
    cs_spec_destroy(&s);

    parse_ok("x:packet=1.5KiB", &s);
    cr_assert_eq(cs_spec_get_bytes(&s, "packet", 4096, &pkt, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(pkt, 1536);
    cs_spec_destroy(&s);
}

Test(spec, get_marks_used)
{
    cs_spec_t s;
    parse_ok("x:a=1,b=2", &s);
    cr_assert_eq(s.kv[0].used, 0);
    cs_spec_get(&s, "a");
    cr_assert_eq(s.kv[0].used, 1);
    cr_assert_eq(s.kv[1].used, 0);
    cs_spec_destroy(&s);
}

/* Every typed look-up's error names the spec, the key and the text. */
Test(spec, typed_errors_name_the_key)
{
    static const struct {
        const char *text;
        const char *key;
        int code;
        const char *message; /* the whole message */
    } bad[] = {
        {"alphabeta:p=x", "p", CS_ERR_USAGE,
         "spec \"alphabeta:p=x\": key 'p': expected an integer, got \"x\""},
        {"alphabeta:p=1.5", "p", CS_ERR_USAGE,
         "spec \"alphabeta:p=1.5\": key 'p': expected an integer, got \"1.5\""},
        {"alphabeta:p=0", "p", CS_ERR_RANGE,
         "spec \"alphabeta:p=0\": key 'p': 0 is out of range; expected an integer in [1, 4096]"},
        {"alphabeta:p=5000", "p", CS_ERR_RANGE,
         "spec \"alphabeta:p=5000\": key 'p': 5000 is out of range; expected an integer in [1, 4096]"},
        {"alphabeta:p=-2", "p", CS_ERR_RANGE,
         "spec \"alphabeta:p=-2\": key 'p': -2 is out of range; expected an integer in [1, 4096]"},
        {"alphabeta:p=99999999999999999999", "p", CS_ERR_RANGE,
         "spec \"alphabeta:p=99999999999999999999\": key 'p': \"99999999999999999999\" is out of range"},
        {"alphabeta:alpha=fast", "alpha", CS_ERR_USAGE,
         "spec \"alphabeta:alpha=fast\": key 'alpha': expected a duration"},
        {"alphabeta:alpha=3furlongs", "alpha", CS_ERR_USAGE,
         "spec \"alphabeta:alpha=3furlongs\": key 'alpha': unknown time unit \"furlongs\""},
        {"alphabeta:alpha=-1us", "alpha", CS_ERR_USAGE,
         "spec \"alphabeta:alpha=-1us\": key 'alpha': expected a duration"},
        {"alphabeta:packet=12x", "packet", CS_ERR_USAGE,
         "spec \"alphabeta:packet=12x\": key 'packet': unknown size suffix \"x\""},
        {"alphabeta:packet=0.5", "packet", CS_ERR_USAGE,
         "spec \"alphabeta:packet=0.5\": key 'packet': byte count \"0.5\" is not a whole number"},
        {"alphabeta:topo=hex", "topo", CS_ERR_USAGE,
         "spec \"alphabeta:topo=hex\": key 'topo': expected one of line, ring, mesh, got \"hex\""},
        {"alphabeta:topo=Ring", "topo", CS_ERR_USAGE,
         "spec \"alphabeta:topo=Ring\": key 'topo': expected one of line, ring, mesh, got \"Ring\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cs_spec_t s;
        cs_error_t err = {0};
        parse_ok(bad[i].text, &s);
        int rc;
        int64_t iv = -7;
        double dv = -7;
        int cv = -7;
        if (!strcmp(bad[i].key, "p")) {
            rc = cs_spec_get_int(&s, "p", 8, 1, 4096, &iv, &err);
        } else if (!strcmp(bad[i].key, "alpha")) {
            rc = cs_spec_get_seconds(&s, "alpha", 1e-6, &dv, &err);
        } else if (!strcmp(bad[i].key, "packet")) {
            rc = cs_spec_get_bytes(&s, "packet", 4096, &iv, &err);
        } else {
            rc = cs_spec_get_choice(&s, "topo", topos, 1, &cv, &err);
        }
        cr_assert_eq(rc, bad[i].code, "\"%s\": rc %d (%s)", bad[i].text, rc, err.msg);
        cr_assert_eq(err.code, bad[i].code);
        cr_assert(strncmp(err.msg, bad[i].message, strlen(bad[i].message)) == 0,
                  "\"%s\": message\n  \"%s\"\ndoes not start with\n  \"%s\"", bad[i].text,
                  err.msg, bad[i].message);
        cr_assert(iv == -7 && dv == -7 && cv == -7, "\"%s\": *out written on error", bad[i].text);
        cs_spec_destroy(&s);
    }
}

Test(spec, check_unused)
{
    cs_spec_t s;
    cs_error_t err = {0};
    int64_t p;

    parse_ok("alphabeta:foo=1", &s);
    cr_assert_eq(cs_spec_check_unused(&s, ab_keys, &err), CS_ERR_USAGE);
    cr_assert_str_eq(err.msg, "unknown key 'foo' in spec \"alphabeta:foo=1\"; valid keys: topo, "
                              "p, rows, cols, alpha, beta, hop");
    cs_spec_destroy(&s);

    /* The first unknown key in the text is reported, after used ones. */
    parse_ok("alphabeta:p=4,bar=2,foo=1", &s);
    cr_assert_eq(cs_spec_get_int(&s, "p", 8, 1, 64, &p, &err), CS_OK);
    cr_assert_eq(cs_spec_check_unused(&s, ab_keys, &err), CS_ERR_USAGE);
    assert_msg_has(&err, "unknown key 'bar'", "alphabeta:p=4,bar=2,foo=1");
    cs_spec_destroy(&s);

    /* A valid key that was never looked up is reported as not applying. */
    parse_ok("alphabeta:rows=4", &s);
    cr_assert_eq(cs_spec_check_unused(&s, ab_keys, &err), CS_ERR_USAGE);
    assert_msg_has(&err, "key 'rows' in spec \"alphabeta:rows=4\" is not used", "rows");
    cs_spec_destroy(&s);

    /* No valid keys at all. */
    static const char *const none[] = {NULL};
    parse_ok("ring:x=1", &s);
    cr_assert_eq(cs_spec_check_unused(&s, none, &err), CS_ERR_USAGE);
    assert_msg_has(&err, "unknown key 'x' in spec \"ring:x=1\"; \"ring\" takes no keys", "x");
    cr_assert_eq(cs_spec_check_unused(&s, NULL, &err), CS_ERR_USAGE);
    cs_spec_destroy(&s);

    parse_ok("ring", &s);
    cr_assert_eq(cs_spec_check_unused(&s, NULL, &err), CS_OK);
    cs_spec_destroy(&s);
}

/* A very long choice list is truncated in the message, not overflowed. */
Test(spec, long_choice_list)
{
    static char names[200][24];
    const char *choices[201];
    for (int i = 0; i < 200; i++) {
        snprintf(names[i], sizeof names[i], "choice%03d", i);
        choices[i] = names[i];
    }
    choices[200] = NULL;
    cs_spec_t s;
    cs_error_t err = {0};
    int c = -1;
    parse_ok("x:k=nope", &s);
    cr_assert_eq(cs_spec_get_choice(&s, "k", choices, 0, &c, &err), CS_ERR_USAGE);
    assert_msg_has(&err, "key 'k': expected one of choice000, choice001", "x:k=nope");
    assert_msg_has(&err, "...", "x:k=nope");
    cr_assert_lt(strlen(err.msg), (size_t)CS_ERROR_MSG_MAX);
    cr_assert_eq(c, -1);
    cs_spec_destroy(&s);
}

/* Unknown keys are refused before any look-up (cs_spec_check_known), and
 * cs_spec_check_unused still tells a typo from a valid key the settings do
 * not use. */
Test(spec, unknown_keys_before_look_ups)
{
    static const char *const valid[] = {"rows", "cols", "topo", NULL};
    cs_spec_t s;
    cs_error_t err = {0};
    cr_assert_eq(cs_spec_parse("m:rows=2,colz=3", &s, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_spec_check_known(&s, valid, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "unknown key 'colz'"), "%s", err.msg);
    cs_spec_destroy(&s);
    cr_assert_eq(cs_spec_parse("m:topo=ring,cols=3", &s, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_spec_check_known(&s, valid, &err), CS_OK, "%s", err.msg);
    cr_assert_str_eq(cs_spec_get(&s, "topo"), "ring");
    cr_assert_eq(cs_spec_check_unused(&s, valid, &err), CS_ERR_USAGE);
    cr_assert(strstr(err.msg, "key 'cols'") && strstr(err.msg, "not used"), "%s", err.msg);
    cs_spec_destroy(&s);
}
