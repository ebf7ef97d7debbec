/*
 * fuzz_chakra.c - libFuzzer target: Chakra execution traces (io/chakra.c).
 * The input is one rank's file, or several ranks' files joined by the
 * marker "\n@@RANK@@\n" (at most FUZZ_CHAKRA_NODES ranks, as a machine of
 * that many nodes would allow), read as cs_chakra_read_buffers reads a
 * trace's files; collectives are expanded with the suite's defaults.
 */
#include "fuzz_util.h"
#include "io/chakra.h"

#define FUZZ_CHAKRA_NODES 16
#define MARK "\n@@RANK@@\n"

static int fuzz_chakra_prepare(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err)
{
    (void)ctx, (void)err, (void)P;
    *hints = NULL;
    return CS_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[FUZZ_CHAKRA_NODES];
    size_t len[FUZZ_CHAKRA_NODES];
    size_t ml = sizeof MARK - 1, start = 0;
    int P = 0;
    for (size_t i = 0; i + ml <= size && P < FUZZ_CHAKRA_NODES - 1; i++)
        if (!memcmp(data + i, MARK, ml)) {
            part[P] = data + start;
            len[P++] = i - start;
            start = i + ml;
            i += ml - 1;
        }
    part[P] = data + start;
    len[P++] = size - start;
    cs_chakra_opts_t o;
    cs_program_t *p = NULL;
    cs_chakra_info_t info;
    cs_error_t err = {0};
    cs_chakra_opts_default(&o);
    o.prepare = fuzz_chakra_prepare;
    o.max_ranks = FUZZ_CHAKRA_NODES;
    o.skip_unknown = size & 1; /* both ways, decided by the input */
    if (cs_chakra_read_buffers(part, len, P, "fuzz", &o, &p, &info, &err) == CS_OK)
        cs_program_free(p);
    return 0;
}
