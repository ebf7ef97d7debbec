/*
 * test_rec.c - the records of src/app/rec.c, which carry a point's results
 * from the process that ran it to the one that writes (pipes, MPI, shard
 * files): every value comes back exactly as put (reals to the bit, text
 * with newlines and NUL bytes), fields in order, and malformed bytes are
 * refused with the field and the byte offset.
 */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "app/rec.h"

TestSuite(rec);

/* The record read back from its own bytes. */
static cs_rec_t *reparse(const cs_rec_t *r)
{
    size_t n;
    const char *b = cs_rec_bytes(r, &n);
    cs_rec_t *out = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_rec_parse(b, n, &out, &err), CS_OK, "%s", err.msg);
    return out;
}

Test(rec, values_come_back_exactly)
{
    static const double reals[] = {0.0, -0.0, 1.0 / 3.0, DBL_MAX, DBL_MIN, 4.9e-324, -2.5e-300,
                                   INFINITY, -INFINITY, 123456789.123456789};
    static const int64_t ints[] = {0, -1, INT64_MAX, INT64_MIN, 4141104000};
    cs_rec_t *r = cs_rec_new();
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        cs_rec_put_real(r, "real", reals[i]);
    cs_rec_put_real(r, "nan", NAN);
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        cs_rec_put_int(r, "int", ints[i]);
    const char text[] = "a,\"b\"\nline two\n\0after a NUL";
    cs_rec_put(r, "text", text, sizeof text);
    cs_rec_put_str(r, "empty", "");
    cs_rec_t *b = reparse(r);
    /* every field in order, by walking them */
    char key[CS_REC_KEY_MAX + 1];
    const char *v;
    size_t pos = 0, len, k = 0;
    while (cs_rec_next(b, &pos, key, &v, &len)) {
        if (!strcmp(key, "real")) {
            char buf[64];
            memcpy(buf, v, len);
            buf[len] = '\0';
            double x = strtod(buf, NULL);
            cr_assert(memcmp(&x, &reals[k], sizeof x) == 0, "real %zu: %s", k, buf);
            k++;
        }
    }
    cr_assert_eq(k, sizeof reals / sizeof reals[0]);
    cr_assert(isnan(cs_rec_real(b, "nan", 0)));
    cr_assert_eq(cs_rec_int(b, "int", 7), 0); /* the first of a repeated key */
    cr_assert_eq(cs_rec_int(b, "missing", 7), 7);
    cr_assert_eq(cs_rec_real(b, "text", 9.5), 9.5, "text is no real");
    const char *t = cs_rec_get(b, "text", &len);
    cr_assert_eq(len, sizeof text);
    cr_assert(memcmp(t, text, len) == 0);
    cr_assert_not_null(cs_rec_get(b, "empty", &len));
    cr_assert_eq(len, 0);
    char small[6];
    cs_rec_copy(b, "text", small, sizeof small);
    cr_assert_str_eq(small, "a,\"b\"");
    char *dup = cs_rec_dup(b, "missing");
    cr_assert_str_eq(dup, "");
    free(dup);
    /* a record inside a record (a shard's points) */
    cs_rec_t *outer = cs_rec_new();
    size_t n;
    const char *bytes = cs_rec_bytes(b, &n);
    cs_rec_put(outer, "record", bytes, n);
    cs_rec_t *o2 = reparse(outer), *inner = NULL;
    cs_error_t err;
    const char *iv = cs_rec_get(o2, "record", &len);
    cr_assert_eq(cs_rec_parse(iv, len, &inner, &err), CS_OK);
    cr_assert_eq(cs_rec_int(inner, "int", 7), 0);
    cs_rec_free(inner), cs_rec_free(o2), cs_rec_free(outer);
    /* all ints */
    pos = 0, k = 0;
    while (cs_rec_next(b, &pos, key, &v, &len))
        if (!strcmp(key, "int")) {
            char buf[32];
            memcpy(buf, v, len);
            buf[len] = '\0';
            cr_assert_eq(strtoll(buf, NULL, 10), ints[k], "int %zu: %s", k, buf);
            k++;
        }
    cr_assert_eq(k, sizeof ints / sizeof ints[0]);
    cs_rec_free(b);
    cs_rec_free(r);
}

Test(rec, malformed_bytes_are_refused)
{
    static const struct {
        const char *bytes, *says;
    } cases[] = {
        {"rc 1\n0", "runs past the end"},
        {"rc 1\n0x", "no newline after the value"},
        {"RC 1\n0\n", "no key"},
        {"rc\n0\n", "no key"},
        {"rc x\n0\n", "no length"},
        {"rc 99999999999999999999\n0\n", "no length"},
        {"rc 1\n0\nerr 5\nab\n", "field 2"},
        {"averyveryveryveryveryverylongkeyname 1\n0\n", "no key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_rec_t *r = (cs_rec_t *)1;
        cs_error_t err = {0};
        cr_assert_eq(cs_rec_parse(cases[i].bytes, strlen(cases[i].bytes), &r, &err),
                     CS_ERR_PARSE, "accepted: %s", cases[i].bytes);
        cr_assert_null(r);
        cr_assert_not_null(strstr(err.msg, cases[i].says), "%s: %s", cases[i].bytes, err.msg);
    }
    cs_rec_t *r = NULL;
    cs_error_t err;
    cr_assert_eq(cs_rec_parse("", 0, &r, &err), CS_OK, "no field is a record");
    cs_rec_free(r);
}
