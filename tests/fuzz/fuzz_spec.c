/*
 * fuzz_spec.c - libFuzzer target: machine spec strings as --machine takes
 * them, through cs_machine_new for every machine type (the spec names it).
 * Numbers are kept small (fuzz_small_numbers) so that a machine is at most
 * a few thousand nodes, and so are the fat-tree's levels (n=, whose hosts
 * grow as k^n); keys that name files (file, schedule, dump) are left to
 * their own targets, so that nothing is written.
 */
#include "fuzz_util.h"
#include "machines/machine.h"

/* Whether a key n= (the k-ary n-tree's levels) holds a number above 3. */
static int fuzz_deep_tree(const char *s)
{
    for (const char *p = strstr(s, "n="); p; p = strstr(p + 2, "n="))
        if ((p == s || p[-1] == ',' || p[-1] == ':') && atoi(p + 2) > 3)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    if (fuzz_small_numbers(s, 64, 4096) && !fuzz_deep_tree(s) && !strstr(s, "file") &&
        !strstr(s, "schedule") &&
        !strstr(s, "dump") && cs_machine_new(s, &m, &err) == CS_OK)
        cs_machine_free(m);
    free(s);
    return 0;
}
