/*
 * par.h - where the points of a sweep, a comparison or a table of replays
 * run (docs/cluster.md): one after another in this process (the default),
 * in N worker processes of this machine (--jobs N), over the ranks of an MPI
 * job (--mpi, mpi.h), one slice of them into a shard file (--shard I/N,
 * shard.h), or nowhere (`collsim merge`: the records come from shard
 * files).  Whatever the place, the process that writes the outputs gets the
 * points' records (rec.h) in the serial run's order, so that its CSV, JSON
 * and figures are byte for byte those of the serial run.
 *
 * A command describes its points with two functions: run (one point, in
 * whichever process runs it) and take (one record, in order, in the
 * process that writes).  It calls cs_par_args before its own getopt (the
 * options are taken out of argv, so the command's parser never sees them),
 * then cs_par_run once; a process that does not write (a shard run, an MPI
 * rank other than 0) leaves right after it (cs_par_writes).
 */
#ifndef CS_APP_PAR_H
#define CS_APP_PAR_H

#include <getopt.h>
#include <stdio.h>

#include "app/app.h"
#include "app/rec.h"
#include "core/error.h"

typedef struct cs_shard_set cs_shard_set_t; /* shard.h */

typedef struct cs_par_ops {
    /* Runs point i (0-based, in the serial order) and returns its record,
     * never NULL, with at least "rc" (a cs_status_t) and, when rc is not
     * CS_OK, "err" (the message).  worker 1: in a process that is not the
     * one writing (no progress line, nothing on standard error). */
    cs_rec_t *(*run)(void *ctx, int i, int worker);
    /* Takes point i's record, in order; CS_OK to go on, else err is set and
     * no later point is wanted (where the serial run would have stopped).
     * The record stays the caller's. */
    int (*take)(void *ctx, int i, const cs_rec_t *rec, cs_error_t *err);
    void *ctx;
    /* May be NULL.  A relative estimate of point i's cost (a sweep: bytes
     * times ranks): workers are handed the costliest points first, so that
     * none is left running a large one alone at the end; the records are
     * still taken in the serial order. */
    double (*cost)(void *ctx, int i);
    /* a record whose rc is not CS_OK ends the run (a sweep without
     * --keep-going): a shard run then stops there, writing nothing */
    int stop_on_failure;
} cs_par_ops_t;

/* What the options said, and the command they came with. */
typedef struct cs_par {
    int jobs;                 /* --jobs: worker processes; 1: this process */
    int shard, nshards;       /* --shard I/N (1 <= I <= N); 0, 0 without */
    const char *shard_file;   /* --shard-file, or shard_default */
    char shard_default[64];   /* "shard-I-of-N.shard" */
    int mpi, rank, size;      /* --mpi: this rank of size */
    int mpi_done;             /* rank 0 has run the points (and stopped the ranks) */
    const char *cmd;          /* "sweep", "compare", "replay" */
    int argc;                 /* the command line without these options: */
    char **argv;              /* what a shard file keeps for the merge (a copy
                                 of the array, as typed, before getopt) */
    char identity[17];        /* a hash of argv and of the input files it names
                                 (shard.h), made for --shard and merge only */
    const cs_shard_set_t *merged; /* `collsim merge`'s records: no point runs */
} cs_par_t;

/* cs_par_args flags */
enum { CS_PAR_SHARD = 1 };

/* The option codes a command's getopt table lists (for completion and
 * "did you mean"); cs_par_args has taken the options out before getopt
 * runs, so a command's switch never sees them. */
#define CS_PAR_LONGOPTS                                                                        \
    {"jobs", required_argument, NULL, 0x2000}, {"shard", required_argument, NULL, 0x2001},     \
        {"shard-file", required_argument, NULL, 0x2002}, {"mpi", no_argument, NULL, 0x2003}

/* Takes --jobs N (0: one per core), --shard I/N, --shard-file FILE and
 * --mpi (long forms, "--opt V" or "--opt=V") out of argv[1..argc), before
 * "--", updating *argc; exits with a usage error naming cmd for a bad value
 * or combination (--shard without CS_PAR_SHARD in flags, --mpi in a build
 * without MPI).  Starts MPI for --mpi.  Computes par->identity for
 * --shard. */
void cs_par_args(const char *cmd, int *argc, char **argv, int flags, cs_par_t *par);
/* The records of a merge (NULL: none) for the command line par was read
 * from; computes par->identity, which the merge checks. */
void cs_par_set_merged(cs_par_t *par, const cs_shard_set_t *merged);
/* Frees the copy of the words; ends MPI when it was started. */
void cs_par_destroy(cs_par_t *par);
/* The options' lines for a command's --help. */
void cs_par_help(FILE *f, int flags);

/* Whether this process writes the command's outputs: not a shard run, not
 * an MPI rank other than 0. */
int cs_par_writes(const cs_par_t *par);

/* Under `collsim merge`: whether the shards are this command line's run
 * (the identity, so the input files, and the point count), asked before
 * anything is printed; CS_OK otherwise. */
int cs_par_check(const cs_par_t *par, int npoints, cs_error_t *err);

/* Runs the npoints points where par says, handing their records to
 * ops->take in order (when this process writes); for a shard run, runs its
 * slice and writes the shard file (saying so through progress, when given);
 * on an MPI rank other than 0, serves rank
 * 0 until it stops.  progress (may be NULL) counts finished points with the
 * time left when the points run elsewhere.  Returns CS_OK, take's status,
 * CS_ERR_CANCELLED on a signal (workers stopped), or a worker's failure
 * (a worker that died: its exit status or signal named). */
int cs_par_run(cs_par_t *par, const cs_par_ops_t *ops, int npoints,
               cs_app_progress_t *progress, cs_error_t *err);

/* The commands whose points run here, with the records of a merge (NULL:
 * the command as typed): what `collsim merge` calls with the command line
 * its shards kept. */
int cs_app_sweep_main(int argc, char **argv, const cs_shard_set_t *merged);
int cs_app_compare_main(int argc, char **argv, const cs_shard_set_t *merged);
int cs_app_replay_main(int argc, char **argv, const cs_shard_set_t *merged);

#endif
