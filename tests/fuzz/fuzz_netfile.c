/*
 * fuzz_netfile.c - libFuzzer targets: the network files of issue 18
 * (topo/netfile*.c), read as `--machine net:file=FILE,format=F` does, so
 * that the routes of the net machine are built too.  One source, three
 * targets: FUZZ_NETFILE_FORMAT is edgelist, graphml or simgrid.
 *
 * Each input is also read from memory, as an inline file of a request to
 * `collsim serve` is (issue 29, core/source.h), and the two reads must
 * agree on the status: a reader that took a path and bytes differently
 * (a NUL byte, an empty file, the end of the data) aborts the target.
 * The seeds of tests/fuzz/corpus include what issue 29 made errors (a
 * NaN bandwidth, a duplicated id, an undeclared endpoint, an entity
 * reference, a NUL byte, out-of-range values).
 *
 * igraph's default error handler aborts; the targets install collsim's
 * (cs_topo_igraph_errors_as_codes), as the command line does (issue 19,
 * D4): an igraph error then comes back as a code.
 */
#include "fuzz_util.h"
#include "machines/machine.h"
#include "topo/netfile.h"
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
    cs_error_t err = {0}, e_path = {0}, e_mem = {0};
    cs_netfile_format_t fmt;
    cs_netdesc_t *a = NULL, *b = NULL;
    const char *path = fuzz_file(data, size);
    snprintf(spec, sizeof spec, "net:file=%s,format=%s", path, FUZZ_NETFILE_FORMAT);
    if (cs_machine_new(spec, &m, &err) == CS_OK)
        cs_machine_free(m);
    if (cs_netfile_parse_format(FUZZ_NETFILE_FORMAT, &fmt, NULL) != CS_OK)
        abort();
    /* a copy of exactly `size` bytes, so that reading past them is seen */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    int rp = cs_netfile_read(&(cs_source_t){.name = path}, fmt, 1e9, 1e-6, &a, &e_path);
    int rm = cs_netfile_read(&(cs_source_t){.name = path, .data = copy, .len = size}, fmt, 1e9,
                             1e-6, &b, &e_mem);
    if (rp != rm) {
        fprintf(stderr, "path and memory disagree: %d \"%s\" / %d \"%s\"\n", rp, e_path.msg, rm,
                e_mem.msg);
        abort();
    }
    cs_netdesc_free(a);
    cs_netdesc_free(b);
    free(copy);
    return 0;
}
