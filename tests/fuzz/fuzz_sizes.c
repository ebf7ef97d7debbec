/*
 * fuzz_sizes.c - libFuzzer target: sweep's --bytes lists and ranges
 * ("1K..1M:x2,3000"), api/sizes.c.  The sizes given back must be
 * ascending and distinct, as the sweep relies on.
 */
#include "fuzz_util.h"
#include "api/sizes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    int64_t *v = NULL;
    int n = 0;
    cs_error_t err = {0};
    if (cs_sizes_parse_alloc(s, &v, &n, &err) == CS_OK) {
        for (int i = 0; i < n; i++)
            if (v[i] < 0 || (i > 0 && v[i] <= v[i - 1])) {
                fprintf(stderr, "'%s': size %d is %lld\n", s, i, (long long)v[i]);
                abort();
            }
        free(v);
    }
    free(s);
    return 0;
}
