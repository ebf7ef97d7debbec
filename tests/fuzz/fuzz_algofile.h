/*
 * fuzz_algofile.h - what the targets of the algorithm file readers
 * (fuzz_msccl.c, fuzz_mscclpp.c) share (header only): an input the
 * format's reader accepted is read again through the format table, as
 * --algo reads it, and, when small, built for its own GPUs and run on a
 * complete alpha-beta machine of that many nodes, with validation.  Both
 * readers promise that an accepted file never deadlocks (every step can
 * run), so a deadlock there is a bug and aborts; a wrong data placement is
 * only the file's fault.
 */
#ifndef CS_FUZZ_ALGOFILE_H
#define CS_FUZZ_ALGOFILE_H

#include "fuzz_util.h"
#include "coll/check.h"
#include "engine/exec.h"
#include "io/algofile.h"

#define FUZZ_MAX_GPUS 16

/* Builds algorithm a for P ranks on 8 bytes a chunk and runs it with
 * validation; `what` names the format's files in the abort message. */
static inline void fuzz_algofile_run_it(cs_coll_algo_t *a, cs_coll_kind_t kind, int P,
                                        int nchunks, const char *what)
{
    /* one machine per size, made once: the run, not its making, is fuzzed */
    static cs_machine_t *machines[FUZZ_MAX_GPUS + 1];
    char spec[64];
    cs_error_t err = {0};
    cs_program_t *p = NULL;
    cs_coll_check_t *chk = NULL;
    int rc;
    if (!machines[P]) {
        snprintf(spec, sizeof spec, "alphabeta:topo=complete,p=%d", P);
        if (cs_machine_new(spec, &machines[P], &err)) {
            fprintf(stderr, "%s\n", err.msg);
            abort();
        }
    }
    /* 8 bytes a chunk whatever the collective (a block kind's --bytes is
     * per rank: C/P chunks of it) */
    int64_t bytes = (int64_t)nchunks * 8;
    cs_coll_args_t args = {kind, P, bytes, 0, 64, NULL, NULL, 0};
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
            fprintf(stderr, "an accepted %s deadlocks: %s\n", what, err.msg);
            abort();
        }
        if (!rc)
            (void)cs_coll_check_verify(chk, &err);
        cs_exec_result_destroy(&res);
    }
    cs_coll_check_free(chk);
    cs_program_free(p);
}

/* After the format's reader accepted src (a file of collective `kind`
 * for ngpus GPUs, nchunks chunks, nitems steps or ops): the same bytes
 * through the format table as `name` ("FORMAT:FILE"), which must accept
 * them too, then the run when the file is small enough. */
static inline void fuzz_algofile_check(const char *format, const cs_source_t *src,
                                       cs_coll_kind_t kind, const char *name, int ngpus,
                                       int nchunks, int64_t nitems, const char *what)
{
    cs_error_t err = {0};
    cs_coll_algo_t *a = NULL;
    if (cs_algofile_read(format, src, kind, name, &a, &err)) {
        fprintf(stderr, "read once, refused the second time: %s\n", err.msg);
        abort();
    }
    if (ngpus <= FUZZ_MAX_GPUS && nitems <= 4096 && nchunks <= 4096)
        fuzz_algofile_run_it(a, kind, ngpus, nchunks, what);
    cs_algofile_free(a);
}

#endif
