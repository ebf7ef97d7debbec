/*
 * benchtable_nccl.c - the table nccl-tests prints (NVIDIA/nccl-tests,
 * src/util.cu: writeDeviceReport, writeResultHeader, writeBenchmarkLine*,
 * writeResultFooter; columns documented in its doc/PERFORMANCE.md), filled
 * with simulated runs.
 *
 * The mapping (docs/bandwidth.md): the type is float, nccl-tests' default
 * (-d float), so a row's count is its bytes / 4 and every size must be a
 * multiple of 4.  `size` is nccl-tests' max(send bytes, receive bytes):
 * the vector for broadcast, reduce and allreduce, and the per-rank block x
 * ranks for allgather, reduce-scatter, alltoall, gather and scatter, whose
 * `count` is per rank (nccl-tests' paramcount).  algbw and busbw are
 * coll/bandwidth.h's in GB/s (10^9 bytes/s); time is a benchmark loop's
 * average iteration, the timed loop over its iterations as nccl-tests
 * divides its timer (by default nccl-tests' loop: 5 warm-up, 20 timed), or
 * one call's (the last rank's finish), as one nccl-tests process driving
 * every rank's GPU (-g P) measures it.  #wrong counts wrong float elements over all ranks
 * (wrong bytes / 4, rounded up), N/A without --validate, as with -c 0.
 * collsim has no buffers: the in-place columns repeat the out-of-place
 * ones (the same messages move; the local copy an out-of-place call makes
 * is not modelled).
 */
#include <stdio.h>
#include <string.h>

#include "coll/bandwidth.h"
#include "io/benchtable.h"

#define NCCL_ELEM 4 /* sizeof(float) */

/* nccl-tests' binary for each collective (NULL: it has none). */
static const char *nccl_program(cs_coll_kind_t k)
{
    switch (k) {
    case CS_COLL_ALLREDUCE: return "all_reduce_perf";
    case CS_COLL_ALLGATHER: return "all_gather_perf";
    case CS_COLL_REDUCE_SCATTER: return "reduce_scatter_perf";
    case CS_COLL_BROADCAST: return "broadcast_perf";
    case CS_COLL_REDUCE: return "reduce_perf";
    case CS_COLL_ALLTOALL: return "alltoall_perf";
    case CS_COLL_GATHER: return "gather_perf";
    case CS_COLL_SCATTER: return "scatter_perf";
    default: return NULL;
    }
}

static int nccl_check(const cs_benchtable_info_t *in, cs_error_t *err)
{
    if (!nccl_program(in->kind))
        return cs_error_set(err, CS_ERR_USAGE, "--format nccl: nccl-tests has no %s test "
                            "(try --format osu)", cs_coll_name(in->kind));
    for (int i = 0; i < in->nsizes; i++)
        if (in->sizes[i] % NCCL_ELEM)
            return cs_error_set(err, CS_ERR_USAGE,
                                "--format nccl: --bytes %lld is not a whole number of float "
                                "elements (4 bytes, nccl-tests' default type); use sizes that "
                                "are multiples of 4", (long long)in->sizes[i]);
    return CS_OK;
}

/* nccl-tests' `size` column: max(send bytes, receive bytes). */
static int64_t nccl_size(const cs_benchtable_info_t *in, int64_t bytes)
{
    return (int64_t)cs_bandwidth_size(in->kind, in->P, bytes);
}

/* The step of the sizes as nccl-tests' header states it: a constant factor,
 * a constant increment, or (a list with neither) 0(list). */
static void nccl_step(const cs_benchtable_info_t *in, long long *step, const char **kind)
{
    const int64_t *s = in->sizes;
    int n = in->nsizes, factor, incr = 1;
    if (n < 2) {
        *step = 1, *kind = "factor";
        return;
    }
    factor = s[0] > 0 && s[1] % s[0] == 0;
    for (int i = 1; i < n; i++) {
        factor &= s[i - 1] > 0 && s[i] == s[i - 1] * (s[1] / (s[0] > 0 ? s[0] : 1));
        incr &= s[i] - s[i - 1] == s[1] - s[0];
    }
    if (factor)
        *step = s[1] / s[0], *kind = "factor";
    else if (incr)
        *step = s[1] - s[0], *kind = "bytes";
    else
        *step = 0, *kind = "list";
}

static void nccl_header(FILE *f, const cs_benchtable_info_t *in)
{
    long long step;
    const char *kind;
    nccl_step(in, &step, &kind);
    fprintf(f, "# collsim: a simulation in nccl-tests' layout (docs/bandwidth.md): %s on %s, "
               "%s engine\n", in->algo, in->machine, in->engine);
    fprintf(f, "# Collective test starting: %s\n", nccl_program(in->kind));
    fprintf(f, "# nThread %d nGpus %d minBytes %lld maxBytes %lld step: %lld(%s) warmup iters: %d "
               "iters: %d agg iters: %d validation: %d graph: %d unalign: %d\n",
            1, in->P, (long long)nccl_size(in, in->sizes[0]),
            (long long)nccl_size(in, in->sizes[in->nsizes - 1]), step, kind, (int)in->warmup,
            (int)in->iterations, 1, in->validate, 0, 0);
    fputs("#\n", f);
    fputs("# Using devices\n", f);
    fprintf(f, "#  Rank %2d..%d: simulated, %s\n", 0, in->P - 1, in->machine);
    fputs("#\n", f);
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
               "in-place          \n", "", "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s \n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
            "");
}

/* A number in `width` columns as nccl-tests fits them: 2, 1 or 0 decimals,
 * else exponent notation. */
static void nccl_float(double v, int width, char *buf, size_t len)
{
    for (int prec = 2; prec >= 0; prec--)
        if (snprintf(buf, len, "%*.*f", width, prec, v) <= width)
            return;
    snprintf(buf, len, width >= 7 ? "%*.1e" : "%*.0e", width, v);
}

static void nccl_row(FILE *f, const cs_benchtable_info_t *in, const cs_benchtable_point_t *pt)
{
    int reduces = in->kind == CS_COLL_ALLREDUCE || in->kind == CS_COLL_REDUCE ||
                  in->kind == CS_COLL_REDUCE_SCATTER;
    char root[16], t[32], alg[32], bus[32];
    cs_bandwidth_t bw;
    cs_bandwidth_of(in->kind, in->P, pt->bytes, pt->time, &bw);
    snprintf(root, sizeof root, "%6d", cs_coll_rooted(in->kind) ? in->root : -1);
    nccl_float(pt->time * 1e6, 7, t, sizeof t);
    nccl_float(bw.algbw / 1e9, 6, alg, sizeof alg);
    nccl_float(bw.busbw / 1e9, 6, bus, sizeof bus);
    fprintf(f, "%12lld  %12lld  %8s  %6s  %6s", (long long)nccl_size(in, pt->bytes),
            (long long)(pt->bytes / NCCL_ELEM), "float", reduces ? "sum" : "none", root);
    for (int place = 0; place < 2; place++) { /* out-of-place, in-place: the same run */
        if (pt->wrong_bytes >= 0)
            fprintf(f, "  %7s  %6s  %6s  %6g", t, alg, bus,
                    (double)((pt->wrong_bytes + NCCL_ELEM - 1) / NCCL_ELEM));
        else
            fprintf(f, "  %7s  %6s  %6s    N/A", t, alg, bus);
    }
    fputc('\n', f);
}

static void nccl_footer(FILE *f, const cs_benchtable_info_t *in, const cs_benchtable_point_t *pts,
                        int n)
{
    double sum = 0;
    long long wrong = 0;
    for (int i = 0; i < n; i++) {
        cs_bandwidth_t bw;
        cs_bandwidth_of(in->kind, in->P, pts[i].bytes, pts[i].time, &bw);
        sum += 2 * bw.busbw / 1e9; /* both columns count in nccl-tests' average */
        /* nccl-tests counts the tests (sizes x placements) that had a
         * wrong element, not the elements */
        if (pts[i].wrong_bytes > 0)
            wrong += 2;
    }
    fprintf(f, "# %-20s : %lld %s\n", "Out of bounds values", wrong, wrong ? "FAILED" : "OK");
    fprintf(f, "# %-20s : %g \n", "Avg bus bandwidth", n ? sum / (2 * n) : 0.0);
    fputs("#\n", f);
    fprintf(f, "# Collective test concluded: %s\n", nccl_program(in->kind));
    fputs("#\n", f);
    fputs("\n", f);
}

const cs_benchtable_format_t cs_benchtable_nccl = {
    "nccl", "nccl-tests (all_reduce_perf, ...): size count type redop root, time algbw busbw "
            "#wrong out-of-place and in-place",
    nccl_check, nccl_header, nccl_row, nccl_footer};
