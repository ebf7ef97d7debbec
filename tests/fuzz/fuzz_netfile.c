/*
 * fuzz_netfile.c - libFuzzer targets: the network files of issue 18
 * (topo/netfile*.c), read as `--machine net:file=FILE,format=F` does, so
 * that the routes of the net machine are built too.  One source, three
 * targets: FUZZ_NETFILE_FORMAT is edgelist, graphml or simgrid.
 *
 * igraph's default error handler aborts; netfile.c installs its own around
 * the GraphML reader, and the targets install igraph's "ignore" handler
 * for the rest, as the command line should (issue 19, D4): an igraph error
 * then comes back as a code.
 */
#include "fuzz_util.h"
#include "machines/machine.h"

#include <igraph.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    igraph_set_error_handler(igraph_error_handler_ignore);
    igraph_set_warning_handler(igraph_warning_handler_ignore);
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
