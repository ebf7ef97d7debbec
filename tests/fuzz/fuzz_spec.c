/*
 * fuzz_spec.c - libFuzzer target: machine spec strings as --machine takes
 * them, through cs_machine_new for every machine type (the spec names it).
 * Numbers are kept small (fuzz_small_numbers) so that a machine is at most
 * a few thousand nodes, and so are the fat-tree's levels and a dragonfly's
 * routers (fuzz_too_big); keys that name files (file, schedule, dump) are left to
 * their own targets, so that nothing is written.
 */
#include "fuzz_util.h"
#include "machines/machine.h"

/* The value of KEY= in the spec (at its start or after ',' or ':'), or -1. */
static long fuzz_key(const char *s, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = strstr(s, key); p; p = strstr(p + 1, key))
        if ((p == s || p[-1] == ',' || p[-1] == ':') && p[n] == '=')
            return strtol(p + n + 1, NULL, 10); /* LONG_MAX past it */
    return -1;
}

/* Machines that grow faster than their numbers: the k-ary n-tree's hosts
 * grow as k^n, so n stays at most 3; a dragonfly has a(ah + 1) routers, so
 * that stays at most 4096 (a = 58, h = 20 is 67,338 routers and 134,676
 * hosts: 6 s and 580 MB under the sanitizers, a legitimate machine that
 * only slows the search). */
static int fuzz_too_big(const char *s)
{
    long n = fuzz_key(s, "n"), a = fuzz_key(s, "a"), h = fuzz_key(s, "h");
    if (n > 3)
        return 1;
    if (!strstr(s, "dragonfly") || a <= 0 || h <= 0)
        return 0;
    /* bounded first: the product of two unbounded keys overflowed
     * (h = 3333...3, regress-dragonfly-h-overflow) */
    return a > 4096 || h > 4096 || a * (a * h + 1) > 4096;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    if (fuzz_small_numbers(s, 64, 4096) && !fuzz_too_big(s) && !strstr(s, "file") &&
        !strstr(s, "schedule") &&
        !strstr(s, "dump") && cs_machine_new(s, &m, &err) == CS_OK)
        cs_machine_free(m);
    free(s);
    return 0;
}
