/*
 * fuzz_rankmap.c - libFuzzer target: replay's --map files (`rank node` per
 * line, api/replay.c) for 12 ranks on a 16-node LogGP machine.  A map
 * read must place every rank on a distinct node of the machine.
 */
#include "fuzz_util.h"
#include "api/replay.h"

static cs_machine_t *fuzz_machine;

#define FUZZ_RANKS 12

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_machine = fuzz_loggp16();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int32_t map[FUZZ_RANKS];
    int seen[16] = {0};
    cs_error_t err = {0};
    if (cs_replay_read_map(fuzz_file(data, size), fuzz_machine, FUZZ_RANKS, map, &err))
        return 0;
    for (int r = 0; r < FUZZ_RANKS; r++)
        if (map[r] < 0 || map[r] >= 16 || seen[map[r]]++) {
            fprintf(stderr, "rank %d on node %d\n", r, (int)map[r]);
            abort();
        }
    return 0;
}
