/*
 * fuzz_ti.c - libFuzzer target: SimGrid time-independent traces (io/ti.c),
 * read from a file as `collsim replay` does, with a machine of 64 nodes
 * (the prepare callback refuses more ranks, as replay's does for its
 * machine's node count).
 *
 * The reader allocates for the largest rank before it asks (issue 19, D2:
 * "67108863 init" takes 4.7 GB), which this target found within minutes;
 * until D2's check lands, inputs whose lines start with a rank above
 * FUZZ_TI_RANK_MAX are skipped so that the search goes on past it.
 */
#include "fuzz_util.h"
#include "io/ti.h"

#define FUZZ_TI_NODES 64
#define FUZZ_TI_RANK_MAX 100000

/* Whether every line's first word, when a number, is at most
 * FUZZ_TI_RANK_MAX. */
static int fuzz_ti_small_ranks(const uint8_t *data, size_t size)
{
    size_t i = 0;
    while (i < size) {
        while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r'))
            i++;
        long v = 0;
        for (; i < size && data[i] >= '0' && data[i] <= '9'; i++)
            if ((v = v * 10 + (data[i] - '0')) > FUZZ_TI_RANK_MAX)
                return 0;
        while (i < size && data[i] != '\n')
            i++;
        i++;
    }
    return 1;
}

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
    if (!fuzz_ti_small_ranks(data, size))
        return 0;
    const char *path = fuzz_file(data, size);
    cs_ti_opts_default(&o);
    o.prepare = fuzz_ti_prepare;
    (void)cs_ti_sniff(path, &is_ti, &err);
    if (cs_ti_read_file(path, &o, &p, &info, &err) == CS_OK)
        cs_program_free(p);
    return 0;
}
