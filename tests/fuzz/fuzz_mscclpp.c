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
#include "fuzz_util.h"
#include "coll/check.h"
#include "engine/exec.h"
#include "io/algofile.h"
#include "io/mscclpp.h"

#define FUZZ_MAX_GPUS 16

static cs_machine_t *machines[FUZZ_MAX_GPUS + 1];

static void run_it(cs_coll_algo_t *a, const cs_mscclpp_info_t *in)
{
    char spec[64];
    cs_error_t err = {0};
    cs_program_t *p = NULL;
    cs_coll_check_t *chk = NULL;
    int P = in->ngpus, rc;
    if (!machines[P]) {
        snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d", P);
        if (cs_machine_new(spec, &machines[P], &err)) {
            fprintf(stderr, "%s\n", err.msg);
            abort();
        }
    }
    /* 8 bytes a chunk whatever the collective (a block kind's --bytes is
     * per rank: C/P chunks of it) */
    int64_t bytes = (int64_t)in->nchunks * 8;
    cs_coll_args_t args = {in->kind, P, bytes, 0, 64, NULL, NULL, 0};
    if (cs_coll_build(a, &args, &p, &err))
        return; /* a size the chunks cannot cut, ... */
    if (!cs_coll_check_new(&args, p, 1, &chk, &err)) {
        cs_exec_env_t env;
        cs_exec_opts_t o;
        cs_exec_result_t res;
        memset(&res, 0, sizeof res);
        cs_machine_exec_env(machines[P], &env);
        cs_exec_opts_default(&o);
        o.observer = cs_coll_check_observer(chk);
        rc = cs_exec_run(&env, p, &o, &res, &err);
        if (rc == CS_ERR_DEADLOCK) {
            fprintf(stderr, "an accepted MSCCL++ plan deadlocks: %s\n", err.msg);
            abort();
        }
        if (!rc)
            (void)cs_coll_check_verify(chk, &err);
        cs_exec_result_destroy(&res);
    }
    cs_coll_check_free(chk);
    cs_program_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cs_source_t src = {"fuzz.json", (const char *)data, size};
    cs_mscclpp_t *m = NULL;
    cs_error_t err = {0};
    cs_mscclpp_info_t in;
    cs_coll_algo_t *a = NULL;
    if (cs_mscclpp_read(&src, &m, &err))
        return 0;
    cs_mscclpp_info(m, &in);
    cs_mscclpp_free(m);
    /* the same bytes through the format table, as --algo reads them */
    if (cs_algofile_read("mscclpp", &src, in.kind, "mscclpp:fuzz.json", &a, &err)) {
        fprintf(stderr, "read once, refused the second time: %s\n", err.msg);
        abort();
    }
    if (in.ngpus <= FUZZ_MAX_GPUS && in.nops <= 4096 && in.nchunks <= 4096)
        run_it(a, &in);
    cs_algofile_free(a);
    return 0;
}
