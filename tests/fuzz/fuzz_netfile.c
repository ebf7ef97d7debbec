/*
 * fuzz_netfile.c - libFuzzer targets: the network files of issue 18
 * (topo/netfile*.c), read as `--machine net:file=FILE,format=F` does, so
 * that the routes of the net machine are built too.  One source, three
 * targets: FUZZ_NETFILE_FORMAT is edgelist, graphml or simgrid.
 *
 * igraph's default error handler aborts; the targets install collsim's
 * (cs_topo_igraph_errors_as_codes), as the command line does (issue 19,
 * D4): an igraph error then comes back as a code.
 */
#include "fuzz_util.h"
#include "machines/machine.h"
#include "topo/topo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    cs_topo_igraph_errors_as_codes();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[128];
    cs_machine_t *m = NULL;
    cs_error_t err = {0};
    snprintf(spec, sizeof spec, "net:file=%s,format=%s", fuzz_file(data, size),
             FUZZ_NETFILE_FORMAT);
    if (cs_machine_new(spec, &m, &err) == CS_OK)
        cs_machine_free(m);
    return 0;
}
