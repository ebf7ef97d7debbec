/*
 * fuzz_netfile_yml.c - libFuzzer target: ASTRA-sim's analytical network
 * files (issue 31, topo/netfile_astra.c, read with libyaml), as
 * `--machine net:file=FILE,format=astra` reads them, so that the
 * multidim network and its routes are built too.
 *
 * Each input is also read from memory, as an inline file of a request to
 * `collsim serve` is (core/source.h): the two reads must agree on the
 * status, and a network read must have as many hosts as its lists say
 * (checked with a description's dims hint: the product of the sizes).
 * The seeds (tests/fuzz/corpus/netfile_yml) are ASTRA-sim's example
 * shapes, block and flow lists, and refused files (an alias, an unknown
 * topology, lists of different lengths, a size past the node limit).
 */
#include "fuzz_util.h"
#include "machines/machine.h"
#include "topo/netfile.h"
#include "topo/topo.h"

/* The machine's node limit here (the service's --max-nodes of a small
 * server). */
#define FUZZ_YML_MAX_NODES 4096

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    cs_topo_igraph_errors_as_codes();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char spec[4200];
    cs_machine_t *m = NULL;
    cs_error_t err = {0}, e_path = {0}, e_mem = {0};
    cs_netdesc_t *a = NULL, *b = NULL;
    const char *path = fuzz_file(data, size);
    snprintf(spec, sizeof spec, "net:file=%s,format=astra", path);
    /* the machine (its routes and tables) as the service builds one, under
     * a node limit: the description below is read whole, but building a
     * machine of 40,000 NPUs and a million links under the sanitizers takes
     * minutes and teaches the fuzzer nothing the limit's refusal does not */
    const cs_machine_env_t env = {NULL, FUZZ_YML_MAX_NODES};
    if (cs_machine_new_in(spec, &env, &m, &err) == CS_OK)
        cs_machine_free(m);
    /* a copy of exactly `size` bytes, so that reading past them is seen */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        abort();
    memcpy(copy, data, size);
    int rp = cs_netfile_read(&(cs_source_t){.name = path}, CS_NETFILE_ASTRA, 1e9, 0, &a,
                             &e_path);
    int rm = cs_netfile_read(&(cs_source_t){.name = path, .data = copy, .len = size},
                             CS_NETFILE_ASTRA, 1e9, 0, &b, &e_mem);
    if (rp != rm) {
        fprintf(stderr, "path and memory disagree: %d \"%s\" / %d \"%s\"\n", rp, e_path.msg, rm,
                e_mem.msg);
        abort();
    }
    if (rp == CS_OK) {
        int sizes[16], n = cs_netdesc_dims(a, sizes);
        int64_t hosts = 1;
        for (int i = 0; i < n; i++)
            hosts *= sizes[i];
        if (n < 1 || hosts != cs_netdesc_hosts(a) || cs_netdesc_hosts(b) != hosts) {
            fprintf(stderr, "%d dimensions of %lld hosts, the network has %d\n", n,
                    (long long)hosts, (int)cs_netdesc_hosts(a));
            abort();
        }
    }
    cs_netdesc_free(a);
    cs_netdesc_free(b);
    free(copy);
    return 0;
}
