/*
 * benchtable_osu.c - the table of the OSU micro-benchmarks' blocking
 * collective latency tests (OMB 7: osu_allreduce, osu_bcast, ...; the
 * header and rows of util/osu_util_mpi.c's print_preamble,
 * print_only_header, print_stats and print_stats_validate: 10 columns of
 * size, then fields of 18 with 2 decimals, 12 for the iterations), filled
 * with simulated runs.
 *
 * The mapping (docs/bandwidth.md): OSU's size is bytes of MPI_CHAR, the
 * same as collsim's --bytes for every collective but reduce-scatter, whose
 * OSU size is the whole send vector (the per-rank block x ranks).  OSU
 * runs its loop with a barrier between calls (by default here too: the
 * OSU loop, 100 + 1,000 iterations up to 8 KiB, 10 + 100 above, barrier
 * between), times each rank's calls and prints the mean over ranks (Avg),
 * the fastest (Min) and the slowest (Max).  A simulation has no noise:
 * here Avg, Min and Max are over the timed iterations (each from its first
 * op's start to its last op's end); with one call (--single) over the
 * ranks' finishes, all ranks starting together.  Validation (-c) is Pass or
 * Fail from --validate.  The barrier test has no size column and one row.
 */
#include <stdio.h>

#include "coll/bandwidth.h"
#include "io/benchtable.h"

#define OSU_FIELD 18 /* FIELD_WIDTH of the MPI benchmarks */

static const char *osu_name(cs_coll_kind_t k)
{
    switch (k) {
    case CS_COLL_ALLREDUCE: return "Allreduce";
    case CS_COLL_ALLGATHER: return "Allgather";
    case CS_COLL_REDUCE_SCATTER: return "Reduce_scatter";
    case CS_COLL_BROADCAST: return "Broadcast";
    case CS_COLL_REDUCE: return "Reduce";
    case CS_COLL_ALLTOALL: return "All-to-All Personalized Exchange";
    case CS_COLL_GATHER: return "Gather";
    case CS_COLL_SCATTER: return "Scatter";
    case CS_COLL_BARRIER: return "Barrier";
    default: return "?";
    }
}

static int osu_check(const cs_benchtable_info_t *in, cs_error_t *err)
{
    if (in->kind == CS_COLL_BARRIER && in->nsizes != 1)
        return cs_error_set(err, CS_ERR_USAGE, "--format osu: osu_barrier prints one row, not "
                            "one per size; give one --bytes (or none)");
    return CS_OK;
}

/* OSU's size column for collsim's --bytes. */
static long long osu_size(const cs_benchtable_info_t *in, int64_t bytes)
{
    if (in->kind == CS_COLL_REDUCE_SCATTER)
        return (long long)cs_bandwidth_size(in->kind, in->P, bytes);
    return (long long)bytes;
}

static void osu_header(FILE *f, const cs_benchtable_info_t *in)
{
    fputc('\n', f);
    fprintf(f, "# collsim: a simulation in the OSU micro-benchmarks' layout "
               "(docs/bandwidth.md): %s on %s, %d ranks, %s engine\n",
            in->algo, in->machine, in->P, in->engine);
    fprintf(f, "# OSU MPI %s Latency Test\n", osu_name(in->kind));
    fputs("# Datatype: MPI_CHAR.\n", f);
    if (in->kind != CS_COLL_BARRIER)
        fprintf(f, "%-*s%*s", 10, "# Size", OSU_FIELD, "Avg Latency(us)");
    else
        fputs("# Avg Latency(us)", f);
    if (in->full)
        fprintf(f, "%*s%*s%*s", OSU_FIELD, "Min Latency(us)", OSU_FIELD, "Max Latency(us)", 12,
                "Iterations");
    if (in->validate)
        fprintf(f, "%*s", OSU_FIELD, "Validation");
    fputc('\n', f);
}

static void osu_row(FILE *f, const cs_benchtable_info_t *in, const cs_benchtable_point_t *pt)
{
    if (in->kind != CS_COLL_BARRIER)
        fprintf(f, "%-*lld%*.2f", 10, osu_size(in, pt->bytes), OSU_FIELD, pt->avg * 1e6);
    else
        fprintf(f, "%*.2f", 17, pt->avg * 1e6);
    if (in->full)
        fprintf(f, "%*.2f%*.2f%*lld", OSU_FIELD, pt->min * 1e6, OSU_FIELD, pt->max * 1e6, 12,
                (long long)pt->iterations);
    if (in->validate)
        fprintf(f, "%*s", OSU_FIELD, pt->wrong_bytes == 0 ? "Pass" : "Fail");
    fputc('\n', f);
}

static void osu_footer(FILE *f, const cs_benchtable_info_t *in, const cs_benchtable_point_t *pts,
                       int n)
{
    (void)f, (void)in, (void)pts, (void)n; /* OSU prints nothing after its rows */
}

const cs_benchtable_format_t cs_benchtable_osu = {
    "osu", "OSU micro-benchmarks (osu_allreduce, ...): # Size  Avg Latency(us), with --full "
           "Min, Max and Iterations",
    osu_check, osu_header, osu_row, osu_footer};
