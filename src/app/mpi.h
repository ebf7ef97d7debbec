/*
 * mpi.h - the points of a command over the ranks of an MPI job (`mpirun -n K
 * collsim sweep ... --mpi`, docs/cluster.md), for par.c: rank 0 hands out
 * one point at a time to whichever rank is free (dynamic assignment: points
 * differ in cost by orders of magnitude), gathers the records and writes
 * the outputs; the other ranks run points until told to stop.  Only built
 * with the `mpi` meson feature (OpenMPI from Debian); par.c asks for it
 * behind CS_HAVE_MPI.
 */
#ifndef CS_APP_MPI_H
#define CS_APP_MPI_H

#include "app/par.h"

/* Gets a point's record (owned from then on) in the order of the list. */
typedef int (*cs_par_sink_fn)(void *ctx, int i, cs_rec_t *rec, cs_error_t *err);

/* MPI_Init (once per process) and this process's rank and the job's size. */
int cs_mpi_init(int *rank, int *size, cs_error_t *err);
void cs_mpi_finalize(void);

/* Rank 0: list[0..n) over ranks 1..size-1 (with size 1, here), handed out
 * in the order of order[] (positions in list), records to sink in list
 * order; progress may be NULL.  Stops early (every rank told) when sink
 * fails or a signal comes. */
int cs_mpi_master(const cs_par_ops_t *ops, const int *list, const int *order, int n,
                  cs_par_sink_fn sink, void *sctx, cs_app_progress_t *progress, int size,
                  cs_error_t *err);
/* Rank 0 that will not run the points: tells ranks 1..size-1 to stop. */
void cs_mpi_release(int size);
/* Ranks 1..size-1: runs the points rank 0 sends until it says stop. */
int cs_mpi_serve(const cs_par_ops_t *ops, const int *list, int n, cs_error_t *err);

#endif
