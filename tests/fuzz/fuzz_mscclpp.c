/*
 * fuzz_mscclpp.c - libFuzzer target: MSCCL++ JSON execution plans
 * (src/io/mscclpp.c), read from memory as the service would pass them (a
 * cs_source_t with data).  A plan the reader accepts is also read through
 * the format table, built for its own GPUs and run on a complete
 * alpha-beta machine of that many nodes, with validation: the reader
 * promises that an accepted plan never deadlocks (every wait has its
 * signal and every op can run), so a deadlock there is a bug and aborts; a
 * wrong data placement is only the plan's fault.  Built only with jansson.
 */
#include "fuzz_algofile.h"
#include "io/mscclpp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_source_t src = {"fuzz.json", (const char *)data, size};
    cs_mscclpp_t *m = NULL;
    cs_error_t err = {0};
    cs_mscclpp_info_t in;
    if (cs_mscclpp_read(&src, &m, &err))
        return 0;
    cs_mscclpp_info(m, &in);
    cs_mscclpp_free(m);
    fuzz_algofile_check("mscclpp", &src, in.kind, "mscclpp:fuzz.json", in.ngpus, in.nchunks,
                        in.nops, "MSCCL++ plan");
    return 0;
}
