/*
 * benchtable.h - simulated runs printed in the exact table layouts of the
 * benchmarks people already parse (`collsim bench-table`, docs/bandwidth.md):
 * nccl-tests (NVIDIA/nccl-tests: src/util.cu's header, row and footer
 * lines; columns size count type redop root, then time algbw busbw #wrong
 * out-of-place and in-place) and the OSU micro-benchmarks' collective
 * latency tests (OMB 7: `# Size  Avg Latency(us)`, with -f the min, max and
 * iterations columns, with -c a Validation column).
 *
 * One file per format (benchtable_nccl.c, benchtable_osu.c) behind the one
 * table of formats here.  A format maps collsim's --bytes (MPI counts,
 * coll/coll.h) onto the tool's own size and count columns, and refuses a
 * size or a collective the tool has no row for, naming it.
 */
#ifndef CS_BENCHTABLE_H
#define CS_BENCHTABLE_H

#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "core/error.h"

/* What holds for the whole table. */
typedef struct cs_benchtable_info {
    cs_coll_kind_t kind;
    int P;                 /* ranks */
    int root;              /* of a rooted collective */
    const char *machine;   /* the normalised spec */
    const char *algo;      /* the algorithm's name */
    const char *engine;    /* the engine that ran (packet, fluid, a machine's own) */
    int validate;          /* 1: rows carry wrong counts (-c / the #wrong column) */
    int full;              /* OSU's -f: min, max and iterations columns */
    const int64_t *sizes;  /* collsim's --bytes of every row, ascending */
    int nsizes;
    int64_t warmup, iterations; /* the first row's loop counts (nccl-tests' header) */
} cs_benchtable_info_t;

/* One row: a size's simulated run (seconds). */
typedef struct cs_benchtable_point {
    int64_t bytes;       /* collsim's --bytes */
    /* nccl-tests' time: a benchmark loop's average iteration (the timed
     * loop's span / iterations, as nccl-tests divides its timer), or one
     * call's finish (the last rank's) */
    double time;
    /* OSU's Avg, Min and Max: over a loop's timed iterations, each from
     * its first op's start to its last op's end; for one call, over the
     * ranks' finishes (every rank starting at 0) */
    double avg, min, max;
    int64_t warmup, iterations; /* the loop's counts; 0 and 1 for one call */
    int64_t wrong_bytes; /* bytes found wrong by --validate, summed over ranks (-1: not checked) */
} cs_benchtable_point_t;

/* A format: the tool's layout, one function per part of its output. */
typedef struct cs_benchtable_format {
    const char *name;    /* "nccl", "osu" */
    const char *summary; /* one line for --help */
    /* CS_OK, or CS_ERR_USAGE naming the collective or the size that the
     * tool has no row for (nccl-tests has no barrier; its float elements
     * need sizes that are multiples of 4) */
    int (*check)(const cs_benchtable_info_t *in, cs_error_t *err);
    void (*header)(FILE *f, const cs_benchtable_info_t *in);
    void (*row)(FILE *f, const cs_benchtable_info_t *in, const cs_benchtable_point_t *pt);
    /* the lines after the rows (nccl-tests' averages); pts are every row */
    void (*footer)(FILE *f, const cs_benchtable_info_t *in, const cs_benchtable_point_t *pts,
                   int n);
} cs_benchtable_format_t;

extern const cs_benchtable_format_t cs_benchtable_nccl;
extern const cs_benchtable_format_t cs_benchtable_osu;

/* The formats, NULL-terminated. */
const cs_benchtable_format_t *const *cs_benchtable_formats(void);
/* The format called `name`, or CS_ERR_USAGE listing the valid names. */
int cs_benchtable_find(const char *name, const cs_benchtable_format_t **out, cs_error_t *err);

#endif
