/*
 * fuzz_order.c - libFuzzer target: --order files (one node id per line,
 * api/request.c), resolved as `collsim run --order FILE` does against a
 * 16-node LogGP machine (a broadcast of 1 KiB).
 */
#include "fuzz_util.h"
#include "api/request.h"

static cs_machine_t *fuzz_machine;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_machine = fuzz_loggp16();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_request_t r;
    cs_request_coll_t c;
    cs_error_t err = {0};
    cs_request_init(&r);
    memset(&c, 0, sizeof c);
    if (cs_request_set(&r, "machine", "loggp:p=16", &err) ||
        cs_request_set(&r, "coll", "broadcast", &err) ||
        cs_request_set(&r, "bytes", "1K", &err) ||
        cs_request_set(&r, "order", fuzz_file(data, size), &err)) {
        fprintf(stderr, "%s\n", err.msg);
        abort();
    }
    (void)cs_request_coll_prepare(&r, fuzz_machine, &c, &err);
    cs_request_coll_destroy(&c);
    return 0;
}
