/*
 * fuzz_groq_sched.c - libFuzzer target: Groq schedule files
 * (`groq:...,schedule=FILE`, machines/groq.c), read as --machine does on a
 * 2-node (16-TSP) Groq machine.
 */
#include "fuzz_util.h"
#include "machines/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[128];
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    snprintf(spec, sizeof spec, "groq:nodes=2,schedule=%s", fuzz_file(data, size));
    if (cs_machine_new(spec, &m, &err) == CS_OK)
        cs_machine_free(m);
    return 0;
}
