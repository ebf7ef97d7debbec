/*
 * fuzz_ti.c - libFuzzer target: SimGrid time-independent traces (io/ti.c),
 * read from a file as `collsim replay` does, with a machine of 64 nodes
 * (the prepare callback refuses more ranks, as replay's does for its
 * machine's node count, and max_ranks bounds the ranks before anything is
 * allocated for them: issue 19's D2, which this target found within
 * minutes before that check existed).
 */
#include "fuzz_util.h"
#include "io/ti.h"

#define FUZZ_TI_NODES 64

static int fuzz_ti_prepare(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err)
{
    (void)ctx;
    *hints = NULL;
    if (P > FUZZ_TI_NODES)
        return cs_error_set(err, CS_ERR_RANGE, "%d ranks on %d nodes", P, FUZZ_TI_NODES);
    return CS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_ti_opts_t o;
    cs_program_t *p = NULL;
    cs_ti_info_t info;
    cs_error_t err = {0};
    int is_ti;
    const char *path = fuzz_file(data, size);
    cs_ti_opts_default(&o);
    o.prepare = fuzz_ti_prepare;
    o.max_ranks = FUZZ_TI_NODES;
    (void)cs_ti_sniff(path, &is_ti, &err);
    if (cs_ti_read_file(path, &o, &p, &info, &err) == CS_OK)
        cs_program_free(p);
    return 0;
}
