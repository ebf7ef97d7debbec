/*
 * fuzz_msccl.c - libFuzzer target: MSCCL XML algorithms (src/io/msccl.c),
 * read from memory as the service would pass them (a cs_source_t with
 * data).  A file the reader accepts is also built for its own ngpus and run
 * on a complete alpha-beta machine of that many nodes, with validation:
 * the reader promises that an accepted file never deadlocks (every step
 * can run), so a deadlock there is a bug and aborts; a wrong data
 * placement is only the file's fault.
 */
#include "fuzz_algofile.h"
#include "io/msccl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_source_t src = {"fuzz.xml", (const char *)data, size};
    cs_msccl_t *m = NULL;
    cs_error_t err = {0};
    cs_msccl_info_t in;
    if (cs_msccl_read(&src, &m, &err))
        return 0;
    cs_msccl_info(m, &in);
    cs_msccl_free(m);
    fuzz_algofile_check("msccl", &src, in.kind, "msccl:fuzz.xml", in.ngpus, in.nchunks,
                        in.nsteps, "MSCCL file");
    return 0;
}
