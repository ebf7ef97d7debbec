/*
 * mpi.c - a command's points over the ranks of an MPI job (mpi.h,
 * docs/cluster.md), built with the `mpi` meson feature (OpenMPI).
 *
 * Master and workers with point-to-point messages only: rank 0 sends a
 * point's position in the list (tag PAR_TASK) to each free rank, a worker
 * answers with the point's record bytes (tag PAR_REC), and rank 0 sends the
 * next position or -1 (stop).  Rank 0 keeps one point out per rank and so
 * knows which point a record is from by its sender; records that arrive
 * early wait until the ones before them are in, as in par.c's pool.  When
 * the run stops early (a failed point, a signal), rank 0 still collects the
 * record each busy rank owes before telling it to stop, so that no message
 * is left in flight at MPI_Finalize.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app/mpi.h"

enum { PAR_TASK = 1, PAR_REC = 2 };

int cs_mpi_init(int *rank, int *size, cs_error_t *err)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return cs_error_set(err, CS_ERR_RUNTIME, "MPI_Init failed");
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return CS_OK;
}

void cs_mpi_finalize(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
}

/* Receives one record from any rank: its sender and the record.  Asks
 * every millisecond rather than blocking in MPI_Probe: OpenMPI's blocking
 * waits spin, and rank 0 would take a core from the ranks that run points
 * (on 2 cores, 13% of one while it only waits). */
static int mpi_recv(int *src, cs_rec_t **rec, cs_error_t *err)
{
    MPI_Status st;
    int n = 0, flag = 0;
    for (;;) {
        MPI_Iprobe(MPI_ANY_SOURCE, PAR_REC, MPI_COMM_WORLD, &flag, &st);
        if (flag)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    MPI_Get_count(&st, MPI_CHAR, &n);
    char *buf = cs_malloc((size_t)n + 1);
    MPI_Recv(buf, n, MPI_CHAR, st.MPI_SOURCE, PAR_REC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    *src = st.MPI_SOURCE;
    int rc = cs_rec_parse(buf, (size_t)n, rec, err);
    if (rc)
        cs_error_prefix(err, "--mpi: the record from rank %d", st.MPI_SOURCE);
    free(buf);
    return rc;
}

int cs_mpi_master(const cs_par_ops_t *ops, const int *list, const int *order, int n,
                  cs_par_sink_fn sink, void *sctx, cs_app_progress_t *progress, int size,
                  cs_error_t *err)
{
    int rc = CS_OK, next = 0, taken = 0, done = 0, busy = 0;
    if (size < 2) { /* one rank: it runs them all */
        for (int k = 0; rc == CS_OK && k < n; k++)
            rc = sink(sctx, list[k], ops->run(ops->ctx, list[k], 0), err);
        return rc;
    }
    int *owner = cs_malloc((size_t)size * sizeof *owner); /* -1: idle */
    cs_rec_t **got = cs_calloc((size_t)(n > 0 ? n : 1), sizeof *got);
    for (int r = 1; r < size; r++) {
        int32_t k = next < n ? order[next++] : -1;
        owner[r] = k;
        busy += k >= 0;
        MPI_Send(&k, 1, MPI_INT32_T, r, PAR_TASK, MPI_COMM_WORLD);
    }
    while (busy > 0) {
        int src;
        cs_rec_t *rec = NULL;
        cs_error_t e;
        int rrc = mpi_recv(&src, &rec, &e);
        busy--;
        if (rrc != CS_OK && rc == CS_OK) {
            *err = e;
            rc = rrc;
        }
        if (rc == CS_OK && (rc = cs_app_check_interrupt(err)) == CS_OK) {
            got[owner[src]] = rec;
            rec = NULL;
            done++;
        }
        cs_rec_free(rec);
        /* after a failure, nothing new goes out: the busy ones finish */
        int32_t k = rc == CS_OK && next < n ? order[next++] : -1;
        owner[src] = k;
        busy += k >= 0;
        MPI_Send(&k, 1, MPI_INT32_T, src, PAR_TASK, MPI_COMM_WORLD);
        while (rc == CS_OK && taken < n && got[taken]) {
            rc = sink(sctx, list[taken], got[taken], err);
            got[taken++] = NULL;
        }
        if (progress && rc == CS_OK) {
            char detail[96];
            snprintf(detail, sizeof detail, "%d/%d points done, %d ranks", done, n, size - 1);
            cs_app_progress_show(progress, (double)done / n, detail);
        }
    }
    for (int k = 0; k < n; k++)
        cs_rec_free(got[k]);
    free(got);
    free(owner);
    return rc;
}

void cs_mpi_release(int size)
{
    int32_t stop = -1;
    for (int r = 1; r < size; r++)
        MPI_Send(&stop, 1, MPI_INT32_T, r, PAR_TASK, MPI_COMM_WORLD);
}

int cs_mpi_serve(const cs_par_ops_t *ops, const int *list, int n, cs_error_t *err)
{
    (void)err;
    for (;;) {
        int32_t k;
        MPI_Recv(&k, 1, MPI_INT32_T, 0, PAR_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (k < 0 || k >= n)
            return CS_OK;
        cs_rec_t *rec = ops->run(ops->ctx, list[k], 1);
        size_t len;
        const char *b = cs_rec_bytes(rec, &len);
        MPI_Send(b, (int)len, MPI_CHAR, 0, PAR_REC, MPI_COMM_WORLD);
        cs_rec_free(rec);
    }
}
