/*
 * fuzz_units.c - libFuzzer target: sizes, durations, frequencies,
 * bandwidths and integers (core/units.c), every parser on the same text,
 * and the spec string "name:k=v,..." with its typed look-ups.  A size read
 * must be non-negative; a size formatted and parsed back must not fail.
 */
#include "fuzz_util.h"
#include "core/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size), buf[64];
    cs_error_t err = {0};
    double d;
    int64_t v;
    (void)cs_units_parse_seconds(s, 1e-6, &d, &err);
    (void)cs_units_parse_hz(s, &d, &err);
    (void)cs_units_parse_bandwidth(s, 1.0, &d, &err);
    (void)cs_units_parse_int(s, &v, &err);
    if (cs_units_parse_bytes(s, &v, &err) == CS_OK) {
        if (v < 0) {
            fprintf(stderr, "'%s' read as %lld bytes\n", s, (long long)v);
            abort();
        }
        cs_units_format_bytes(v, buf, sizeof buf);
    }
    cs_spec_t spec;
    if (cs_spec_parse(s, &spec, &err) == CS_OK) {
        for (int i = 0; i < spec.nkv; i++) {
            const char *key = spec.kv[i].key;
            (void)cs_spec_get_int(&spec, key, 0, 0, 1000, &v, &err);
            (void)cs_spec_get_seconds(&spec, key, 0, &d, &err);
            (void)cs_spec_get_bytes(&spec, key, 0, &v, &err);
            (void)cs_spec_get_bandwidth(&spec, key, 1, &d, &err);
        }
        static const char *const valid[] = {"a", "b", NULL};
        (void)cs_spec_check_unused(&spec, valid, &err);
        cs_spec_destroy(&spec);
    }
    free(s);
    return 0;
}
