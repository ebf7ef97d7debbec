/*
 * cmd_bench.c - `collsim bench`: times the simulator itself on fixed
 * workloads (a benchmark, not a test: it checks nothing but that the runs
 * finish).
 *
 * Workloads are built in code with the cs_program_* API so that they need no
 * files and are identical on every machine; the permutation uses a fixed
 * PRNG (splitmix64, cs_shuffle) with a fixed seed for the same reason.
 *
 * Each run (workload x mode x queue) executes in a forked child, so that the
 * peak resident set size the child reports (getrusage ru_maxrss) belongs to
 * that run alone rather than to the largest run so far.  --no-fork runs
 * in-process (for debuggers); RSS is then the process's peak so far.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "core/shuffle.h"
#include "coll/coll.h"
#include "engine/exec.h"
#include "engine/net.h"
#include "core/program.h"
#include "core/units.h"
#include "io/chakra.h"
#include "io/chakra_write.h"
#include "io/goal.h"
#include "io/ti.h"
#include "machines/machine.h"

typedef struct bench_workload {
    const char *name;
    const char *summary;
    const char *machine; /* spec string */
    /* Builds the (finalized) program for machine m; `path` is the
     * workload's data file in the --data folder (NULL if it has none).
     * NULL for a collective of the suite, which `coll` names. */
    int (*build)(const cs_machine_t *m, const char *path, cs_program_t **out, cs_error_t *err);
    /* A collective of the suite (build == NULL): rank r on node r, root 0,
     * the machine's hints, through the request path as `collsim run
     * --coll` builds it; bytes as typed, options KEY=VALUE or NULL. */
    const char *coll, *algo, *bytes, *opt1, *opt2;
    /* For a machine with its own engine: run in packet mode only (the
     * mode does not apply), in one row per queue. */
    int own_engine;
    /* Data file the workload reads from the --data folder, or NULL; the
     * row is skipped (with a note saying how to make the file) when it is
     * missing.  These are the peers' workloads: the same file feeds the
     * peer, so both read the same input. */
    const char *file;
    const char *make_file; /* command that writes it */
    /* A collective built while it runs (`run --windowed`): no build time
     * of its own, and its bytes per op are what a window costs. */
    int windowed;
    /* Only reads its trace (issue 34): the row is the reading alone (CPU
     * and wall seconds to a finalized program, ops per CPU second, peak
     * RSS per op), with no machine run after it. */
    int read_only;
    /* Writes the input a reading row reads into the temporary file `path`
     * (the row's data file then), before the timing starts; NULL: none. */
    int (*write_input)(const cs_machine_t *m, const char *path, cs_error_t *err);
    /* Minutes of fluid mode (hours of packets): runs only when named
     * (--workload), and only in fluid mode. */
    int heavy;
} bench_workload_t;

#define BENCH_RING_BYTES (INT64_C(1) << 20)
#define BENCH_PERM_BYTES (INT64_C(64) << 10)
#define BENCH_PERM_SEED  UINT64_C(0x636f6c6c73696d31) /* "collsim1" */

/* Names and finalizes a workload's program into *out; frees it on failure. */
static int bench_finish(cs_program_t *p, const char *source, cs_program_t **out, cs_error_t *err)
{
    cs_program_set_source(p, source);
    int rc = cs_program_finalize(p, err);
    if (rc != CS_OK) {
        cs_program_free(p);
        return rc;
    }
    *out = p;
    return CS_OK;
}

/* Rank r sends to r+1 and receives from r-1: every ring channel in one
 * direction carries exactly one message, the other direction none. */
static int bench_build_ring(const cs_machine_t *m, const char *path, cs_program_t **out,
                            cs_error_t *err)
{
    (void)path;
    int nodes = cs_machine_nodes(m);
    cs_program_t *p = cs_program_new(nodes);
    for (int r = 0; r < nodes; r++) {
        cs_program_send(p, r, (r + 1) % nodes, BENCH_RING_BYTES, 0);
        cs_program_recv(p, r, (r - 1 + nodes) % nodes, BENCH_RING_BYTES, 0);
    }
    return bench_finish(p, "bench:ring-shift", out, err);
}

/* A uniformly shuffled permutation (cs_shuffle: the same sequence on
 * every platform, which is all a fixed benchmark needs) with its fixed
 * points removed by swapping each with its successor (neither position is
 * fixed afterwards), so that every rank really sends over the network. */
static void bench_permutation(int n, uint64_t seed, int32_t *perm)
{
    cs_shuffle(n, seed, perm);
    for (int i = 0; n > 1 && i < n; i++) {
        if (perm[i] == i) {
            int k = (i + 1) % n;
            int32_t tmp = perm[i];
            perm[i] = perm[k];
            perm[k] = tmp;
        }
    }
}

/* A random permutation of `bytes`-byte messages over every rank node. */
static int bench_perm(const cs_machine_t *m, int64_t bytes, cs_program_t **out, cs_error_t *err)
{
    int nodes = cs_machine_nodes(m);
    int32_t *perm = cs_malloc((size_t)nodes * sizeof *perm);
    int32_t *inv = cs_malloc((size_t)nodes * sizeof *inv);
    bench_permutation(nodes, BENCH_PERM_SEED, perm);
    for (int r = 0; r < nodes; r++)
        inv[perm[r]] = r;

    cs_program_t *p = cs_program_new(nodes);
    for (int r = 0; r < nodes; r++) {
        cs_program_send(p, r, perm[r], bytes, 0);
        cs_program_recv(p, r, inv[r], bytes, 0);
    }
    free(perm);
    free(inv);
    return bench_finish(p, "bench:permutation", out, err);
}

static int bench_build_perm(const cs_machine_t *m, const char *path, cs_program_t **out,
                            cs_error_t *err)
{
    (void)path;
    return bench_perm(m, BENCH_PERM_BYTES, out, err);
}

/* Issue 18's scale: permutations of 1 MiB messages on users' networks. */
static int bench_build_perm_1m(const cs_machine_t *m, const char *path, cs_program_t **out,
                               cs_error_t *err)
{
    (void)path;
    return bench_perm(m, INT64_C(1) << 20, out, err);
}

/* The adversarial group shift, minimal routing's worst case on a dragonfly
 * (Kim et al. 2008): rank r sends 1 MiB to rank (r + s) mod n, s the
 * number of ranks in the machine's first node group, so that every host of
 * group i sends to the same host of group i + 1. */
static int bench_build_shift_1m(const cs_machine_t *m, const char *path, cs_program_t **out,
                                cs_error_t *err)
{
    int nodes = cs_machine_nodes(m), s = 0;
    const int64_t bytes = INT64_C(1) << 20;
    (void)path;
    if (!m->node_group)
        return cs_error_set(err, CS_ERR_USAGE, "bench:group-shift: the machine has no groups");
    while (s < nodes && m->node_group[s] == m->node_group[0])
        s++;
    cs_program_t *p = cs_program_new(nodes);
    for (int r = 0; r < nodes; r++) {
        cs_program_send(p, r, (r + s) % nodes, bytes, 0);
        cs_program_recv(p, r, (r - s % nodes + nodes) % nodes, bytes, 0);
    }
    return bench_finish(p, "bench:group-shift", out, err);
}

/* The workload's collective of the suite (bench_workload_t.coll), prepared
 * into c (destroy it after the run: a window's generator reads it). */
static int bench_prepare_coll(const cs_machine_t *m, const bench_workload_t *w,
                              cs_request_coll_t *c, cs_error_t *err)
{
    cs_request_t req;
    int rc;
    cs_request_init(&req);
    if ((rc = cs_request_set(&req, "coll", w->coll, err)) ||
        (rc = cs_request_set(&req, "algo", w->algo, err)) ||
        (rc = cs_request_set(&req, "bytes", w->bytes, err)) ||
        (w->opt1 && (rc = cs_request_set(&req, "opt", w->opt1, err))) ||
        (w->opt2 && (rc = cs_request_set(&req, "opt", w->opt2, err))))
        return rc;
    return cs_request_coll_prepare(&req, m, c, err);
}

/* Trace replay: a synthetic SimGrid TI trace of BENCH_TI_OPS ops (64 ranks;
 * per iteration each rank posts an irecv from its left neighbour and an
 * isend to its right one, waits for both and computes 1000 flops) written
 * to a temporary file and read back: the row times the replay, a comment
 * line before it the reading (ops per second). */
#define BENCH_TI_RANKS 64
#define BENCH_TI_OPS 3000000
static int bench_build_replay_ti(const cs_machine_t *m, const char *path, cs_program_t **out,
                                 cs_error_t *err)
{
    (void)path; /* writes its own file */
    const char *dir = getenv("TMPDIR");
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/collsim-bench-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    int P = BENCH_TI_RANKS, iters = BENCH_TI_OPS / (3 * BENCH_TI_RANKS);
    for (int it = 0; it < iters; it++)
        for (int r = 0; r < P; r++)
            fprintf(f, "%d irecv %d 0 1024\n%d isend %d 0 1024\n%d waitall\n%d compute 1000\n", r,
                    (r + P - 1) % P, r, (r + 1) % P, r, r);
    long bytes = ftell(f);
    if (fclose(f) != 0) {
        unlink(tmp);
        return cs_error_set(err, CS_ERR_IO, "%s: write error: %s", tmp, strerror(errno));
    }
    cs_ti_opts_t o;
    struct timespec t0, t1;
    cs_ti_opts_default(&o);
    o.unit = m->net.unit_bytes;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = cs_ti_read_file(tmp, &o, out, NULL, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    unlink(tmp);
    if (rc == CS_OK) {
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        int32_t n = cs_program_nops(*out);
        printf("# replay-ti: read %ld ops (%.1f MB of TI text) in %.3f s: %.2f M ops/s\n",
               (long)n, (double)bytes / 1e6, s, s > 0 ? (double)n / s / 1e6 : 0.0);
    }
    return rc;
}

/* Issue 30: an MSCCL ring all-reduce of 1 MiB on BENCH_MSCCL_GPUS GPUs from
 * an XML file written here (the suite's chunking, as
 * tests/data/msccl/ring_allreduce_4.xml for 4 GPUs: GPU i sends to i+1,
 * P-1 reduce-scatter steps, then P-1 allgather steps) and read as `--algo
 * msccl:FILE`: a comment line times the reading and the program's
 * emission, the row the run (the same finish as ring-ar-1k: it is the
 * suite's ring). */
#define BENCH_MSCCL_GPUS 1024
static int bench_build_msccl(const cs_machine_t *m, const char *path, cs_program_t **out,
                             cs_error_t *err)
{
    (void)path; /* writes its own file */
    const int P = BENCH_MSCCL_GPUS;
    const char *dir = getenv("TMPDIR");
    char tmp[512], algo[600];
    snprintf(tmp, sizeof tmp, "%s/collsim-bench-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    FILE *f = fdopen(fd, "w");
    fprintf(f, "<algo name=\"ring_%d\" proto=\"Simple\" nchannels=\"1\" nchunksperloop=\"%d\" "
            "ngpus=\"%d\" coll=\"allreduce\" inplace=\"1\">\n", P, P, P);
    for (int i = 0; i < P; i++) {
        fprintf(f, " <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"0\" s_chunks=\"0\">\n"
                "  <tb id=\"0\" send=\"%d\" recv=\"%d\" chan=\"0\">\n", i, P, (i + 1) % P,
                (i + P - 1) % P);
        for (int s = 0; s < 2 * P - 1; s++) {
            /* send chunk i-1; reduce-and-send i-1-k; reduce, keep and send
             * chunk i; copy-and-send i-m; receive the last, i-(P-1) */
            const char *type = s == 0 ? "s" : s < P - 1 ? "rrs" : s == P - 1 ? "rrcs"
                                           : s < 2 * P - 2 ? "rcs" : "r";
            int chunk = s < P ? i - 1 - s : i - (s - P + 1);
            chunk = ((chunk % P) + P) % P;
            fprintf(f, "   <step s=\"%d\" type=\"%s\" srcbuf=\"i\" srcoff=\"%d\" dstbuf=\"i\" "
                    "dstoff=\"%d\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n", s, type,
                    chunk, chunk);
        }
        fputs("  </tb>\n </gpu>\n", f);
    }
    fputs("</algo>\n", f);
    long bytes = ftell(f);
    if (fclose(f) != 0) {
        unlink(tmp);
        return cs_error_set(err, CS_ERR_IO, "%s: write error: %s", tmp, strerror(errno));
    }
    cs_request_t req;
    cs_request_coll_t c;
    struct timespec t0, t1, t2;
    int rc;
    snprintf(algo, sizeof algo, "msccl:%s", tmp);
    cs_request_init(&req);
    memset(&c, 0, sizeof c);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if ((rc = cs_request_set(&req, "coll", "allreduce", err)) == CS_OK &&
        (rc = cs_request_set(&req, "algo", algo, err)) == CS_OK &&
        (rc = cs_request_set(&req, "bytes", "1MiB", err)) == CS_OK &&
        (rc = cs_request_coll_prepare(&req, m, &c, err)) == CS_OK) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        rc = cs_request_coll_build(&c, out, err);
        clock_gettime(CLOCK_MONOTONIC, &t2);
    }
    cs_request_coll_destroy(&c);
    unlink(tmp);
    if (rc == CS_OK) {
        double read = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        double emit = (double)(t2.tv_sec - t1.tv_sec) + 1e-9 * (double)(t2.tv_nsec - t1.tv_nsec);
        long steps = (long)P * (2 * P - 1);
        printf("# msccl-ring-1k: read %ld steps of %d GPUs (%.1f MB of XML) in %.3f s: %.2f M "
               "steps/s; %ld ops emitted in %.3f s\n", steps, P, (double)bytes / 1e6, read,
               read > 0 ? (double)steps / read / 1e6 : 0.0, (long)cs_program_nops(*out), emit);
    }
    return rc;
}

/* Issue 31: a Chakra trace of BENCH_CHAKRA_RANKS ranks, the suite's ring
 * all-reduce of 1 MiB written as PREFIX.R.et files (`collsim export
 * --format chakra`) in a temporary folder and read back as `collsim replay
 * --format chakra` reads it: a comment line times the writing and the
 * reading (wall and CPU seconds, ops per second of reading), the row the
 * replay (the same finish as ring-ar-1k: it is the same program).  The
 * written program is freed before the reading, so that the row's peak RSS
 * is the reader's and the run's, not the writer's input. */
#define BENCH_CHAKRA_RANKS 1024
static double bench_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench_build_chakra(const cs_machine_t *m, const char *path, cs_program_t **out,
                              cs_error_t *err)
{
    (void)path; /* writes its own files */
    const char *dir = getenv("TMPDIR");
    char tmp[512], prefix[600];
    cs_request_t req;
    cs_request_coll_t c;
    cs_program_t *ring = NULL;
    double w0 = 0, w1 = 0, r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    int rc;
    snprintf(tmp, sizeof tmp, "%s/collsim-bench-XXXXXX", dir && *dir ? dir : "/tmp");
    if (!mkdtemp(tmp))
        return cs_error_set(err, CS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    snprintf(prefix, sizeof prefix, "%s/ring", tmp);
    cs_request_init(&req);
    memset(&c, 0, sizeof c);
    if ((rc = cs_request_set(&req, "coll", "allreduce", err)) == CS_OK &&
        (rc = cs_request_set(&req, "algo", "ring", err)) == CS_OK &&
        (rc = cs_request_set(&req, "bytes", "1MiB", err)) == CS_OK &&
        (rc = cs_request_coll_prepare(&req, m, &c, err)) == CS_OK)
        rc = cs_request_coll_build(&c, &ring, err);
    cs_request_coll_destroy(&c);
    if (rc == CS_OK) {
        w0 = bench_seconds(CLOCK_MONOTONIC);
        rc = cs_chakra_write(ring, prefix, err);
        w1 = bench_seconds(CLOCK_MONOTONIC);
    }
    int32_t n = ring ? cs_program_nops(ring) : 0;
    cs_program_free(ring);
    if (rc == CS_OK) {
        cs_chakra_opts_t o;
        cs_chakra_opts_default(&o);
        o.unit = m->net.unit_bytes;
        o.max_ranks = cs_machine_nodes(m);
        c0 = bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
        r0 = bench_seconds(CLOCK_MONOTONIC);
        rc = cs_chakra_read(prefix, &o, out, NULL, err);
        r1 = bench_seconds(CLOCK_MONOTONIC);
        c1 = bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
    }
    for (int r = 0; r < BENCH_CHAKRA_RANKS; r++) {
        char f[640];
        snprintf(f, sizeof f, "%s.%d.et", prefix, r);
        unlink(f);
    }
    rmdir(tmp);
    if (rc == CS_OK) {
        double rd = r1 - r0, cpu = c1 - c0;
        printf("# chakra-ring-1k: %ld ops of %d ranks written as Chakra in %.3f s, read in "
               "%.3f s (%.3f s of CPU): %.2f M ops/s of reading (%.2f per CPU second); "
               "program %.1f MiB\n", (long)n, BENCH_CHAKRA_RANKS, w1 - w0, rd, cpu,
               rd > 0 ? (double)n / rd / 1e6 : 0.0, cpu > 0 ? (double)n / cpu / 1e6 : 0.0,
               (double)cs_program_bytes(*out) / (1024.0 * 1024.0));
    }
    return rc;
}

/* LogGOPSim's workload: a GOAL schedule (Schedgen's dissemination barrier,
 * written by tools/gen-goal) read from the --data folder. */
static int bench_build_goal(const cs_machine_t *m, const char *path, cs_program_t **out,
                            cs_error_t *err)
{
    (void)m;
    return cs_goal_read_file(path, out, err);
}

/* A TI trace (tools/gen-ti) read from the --data folder, as `collsim
 * replay --format ti` reads it (the machine's packet size, its nodes). */
static int bench_build_ti(const cs_machine_t *m, const char *path, cs_program_t **out,
                          cs_error_t *err)
{
    cs_ti_opts_t o;
    cs_ti_opts_default(&o);
    o.unit = m->net.unit_bytes;
    return cs_ti_read_file(path, &o, out, NULL, err);
}

/* GOAL as collsim writes it: the suite's ring all-reduce of 1 MiB on 1,024
 * ranks (ring-ar-1k's program) written with `// collsim order:` lines to
 * the temporary file `path`, and freed before the row reads it back (with
 * bench_build_goal): the reading that gives the ops their ids from the
 * order lines, which LogGOPSim's files lack. */
static int bench_write_goal_ring(const cs_machine_t *m, const char *path, cs_error_t *err)
{
    cs_request_t req;
    cs_request_coll_t c;
    cs_program_t *ring = NULL;
    int rc;
    FILE *f = fopen(path, "w");
    if (!f)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    cs_request_init(&req);
    memset(&c, 0, sizeof c);
    if ((rc = cs_request_set(&req, "coll", "allreduce", err)) == CS_OK &&
        (rc = cs_request_set(&req, "algo", "ring", err)) == CS_OK &&
        (rc = cs_request_set(&req, "bytes", "1MiB", err)) == CS_OK &&
        (rc = cs_request_coll_prepare(&req, m, &c, err)) == CS_OK &&
        (rc = cs_request_coll_build(&c, &ring, err)) == CS_OK)
        rc = cs_goal_write(ring, f, err);
    cs_request_coll_destroy(&c);
    cs_program_free(ring);
    if (fclose(f) != 0 && rc == CS_OK)
        rc = cs_error_set(err, CS_ERR_IO, "%s: write error: %s", path, strerror(errno));
    return rc;
}

static const bench_workload_t bench_workloads[] = {
    /* Reading alone (issue 34): ops per CPU second and bytes per op of a
     * trace read into a program (the machine only gives the packet size) */
    {"read-goal-1m", "reads goal-diss-1m's GOAL file (Schedgen's text, 4.2e7 ops), no run",
     "alphabeta:topo=ring,p=2", .build = bench_build_goal, .read_only = 1,
     .file = "dissemination-1048576.goal", .make_file = "tools/gen-goal dissemination 1048576"},
    {"read-goal-ring", "reads ring-ar-1k written as GOAL with op order lines (5.2e6 ops), no "
     "run", "alphabeta:topo=ring,p=1024,alpha=1us,beta=0.08ns",
     .build = bench_build_goal, .read_only = 1, .write_input = bench_write_goal_ring},
    {"read-ti-30m", "reads a combined SimGrid TI trace of 64 ranks (3e7 ops), no run",
     "alphabeta:topo=ring,p=64", .build = bench_build_ti, .read_only = 1,
     .file = "ring-64-30m.ti", .make_file = "tools/gen-ti ring 64 30000000"},
    {"ring-shift", "4096-rank ring shift of 1 MiB messages",
     "alphabeta:topo=ring,p=4096,packet=4KiB", .build = bench_build_ring},
    {"permutation", "random permutation of 64 KiB messages on a 64x64 torus",
     "alphabeta:topo=torus,rows=64,cols=64", .build = bench_build_perm},
    /* the full-wafer cases, on all 850,000 PEs */
    {"wafer-bcast", "2D broadcast of one wavelet from PE (0,0) over the whole wafer",
     "cerebras:wafer", .coll = "broadcast", .algo = "thesis", .bytes = "4", .own_engine = 1},
    {"wafer-reduce", "2D two-phase reduce of 1024 wavelets to PE (0,0) over the whole wafer",
     "cerebras:wafer", .coll = "reduce", .algo = "2d-two-phase", .bytes = "4096",
     .own_engine = 1},
    /* the Groq paper's hierarchical all-reduce: node groups from the
     * machine's hint, a stage's sends posted at once (a TSP drives all its
     * links), recursive doubling between nodes */
    {"groq-allred", "hierarchical all-reduce of 1 MiB on 10,440 Groq TSPs (inter=rdb, par=1)",
     "groq:racks=145", .coll = "allreduce", .algo = "hierarchical", .bytes = "1MiB",
     .opt1 = "par=1", .opt2 = "inter=rdb", .own_engine = 1},
    {"replay-ti", "a synthetic 3M-op SimGrid TI trace (64-rank ring exchange) read and "
     "replayed", "alphabeta:topo=ring,p=64", .build = bench_build_replay_ti},
    /* The peers' workloads (issue 17; parameters as the peers were run):
     * SimGrid's fluid model and ASTRA-sim's analytical backend on a ring. */
    {"ring-ar-1k", "ring all-reduce of 1 MiB on a 1,024-host ring (SimGrid, ASTRA-sim)",
     "alphabeta:topo=ring,p=1024,alpha=1us,beta=0.08ns", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB"},
    {"msccl-ring-1k", "ring-ar-1k from an MSCCL XML file of 1,024 GPUs, read as msccl:FILE",
     "alphabeta:topo=ring,p=1024,alpha=1us,beta=0.08ns", .build = bench_build_msccl},
    {"chakra-ring-1k", "ring-ar-1k written as a Chakra trace of 1,024 rank files and read "
     "back", "alphabeta:topo=ring,p=1024,alpha=1us,beta=0.08ns", .build = bench_build_chakra},
    {"ring-ar-1280", "ring all-reduce of 1 MiB on 1,280 hosts: flows a byte apart (SimGrid)",
     "alphabeta:topo=ring,p=1280,alpha=1us,beta=0.08ns", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB"},
    {"ring-ar-4k", "ring all-reduce of 1 MiB on a 4,096-host ring (SimGrid)",
     "alphabeta:topo=ring,p=4096,alpha=1us,beta=0.08ns", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB"},
    /* the same, built a window at a time while they run */
    {"ring-ar-1k-win", "ring-ar-1k, windowed (run --windowed)",
     "alphabeta:topo=ring,p=1024,alpha=1us,beta=0.08ns", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB", .windowed = 1},
    {"ring-ar-4k-win", "ring-ar-4k, windowed (run --windowed)",
     "alphabeta:topo=ring,p=4096,alpha=1us,beta=0.08ns", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB", .windowed = 1},
    /* issue 34's scale target: 1.34 * 10^9 ops, 5.4 * 10^8 messages, past
     * a whole program's 2^30 ops; windowed, as `collsim run` runs it */
    {"ring-ar-16k", "ring all-reduce of 1 MiB on 16,384 hosts, windowed; fluid, when named",
     "alphabeta:topo=ring,p=16384,alpha=1us,beta=0.08ns", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB", .windowed = 1, .heavy = 1},
    {"groq-gateway", "three-hop all-reduce of 320 B on 10,440 Groq TSPs (ISCA'22 5.6)",
     "groq:racks=145", .coll = "allreduce", .algo = "gateway", .bytes = "320", .own_engine = 1},
    /* Users' own networks at scale (issue 18): the three-level fat-tree of
     * 32-port switches (8,192 hosts) and a dragonfly of 4,224 hosts, and
     * a ring all-reduce on 1,024 hosts of each */
    {"ft8k-rab", "Rabenseifner all-reduce of 64 MiB on a fat-tree of 8,192 hosts (k = 32)",
     "net:gen=fattree,levels=3,down=16+16+32,up=1+16+16", .coll = "allreduce",
     .algo = "rabenseifner", .bytes = "64MiB"},
    {"ft8k-perm", "random permutation of 1 MiB messages on a fat-tree of 8,192 hosts (k = 32)",
     "net:gen=fattree,levels=3,down=16+16+32,up=1+16+16", .build = bench_build_perm_1m},
    {"df4k-rab", "Rabenseifner all-reduce of 64 MiB on a dragonfly of 4,224 hosts (minimal)",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33", .coll = "allreduce", .algo = "rabenseifner",
     .bytes = "64MiB"},
    {"df4k-rab-ugal", "the same with UGAL-L routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=ugal", .coll = "allreduce",
     .algo = "rabenseifner", .bytes = "64MiB"},
    {"df4k-perm", "random permutation of 1 MiB on a dragonfly of 4,224 hosts (minimal)",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33", .build = bench_build_perm_1m},
    {"df4k-perm-val", "the same with Valiant routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=valiant", .build = bench_build_perm_1m},
    {"df4k-perm-ugal", "the same with UGAL-L routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=ugal", .build = bench_build_perm_1m},
    {"df4k-perm-ugalg", "the same with UGAL-G routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=ugal-g", .build = bench_build_perm_1m},
    {"df4k-shift", "group shift of 1 MiB on the dragonfly of 4,224 hosts (minimal's worst "
     "case)", "net:gen=dragonfly,a=16,p=8,h=8,g=33", .build = bench_build_shift_1m},
    {"df4k-shift-val", "the same with Valiant routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=valiant", .build = bench_build_shift_1m},
    {"df4k-shift-ugal", "the same with UGAL-L routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=ugal", .build = bench_build_shift_1m},
    {"df4k-shift-ugalg", "the same with UGAL-G routing",
     "net:gen=dragonfly,a=16,p=8,h=8,g=33,routing=ugal-g", .build = bench_build_shift_1m},
    {"ft1k-ring", "ring all-reduce of 1 MiB on a fat-tree of 1,024 hosts (k = 32, n = 2)",
     "net:gen=fattree,k=32,n=2", .coll = "allreduce", .algo = "ring", .bytes = "1MiB"},
    {"df1k-ring", "ring all-reduce of 1 MiB on a dragonfly of 1,024 hosts",
     "net:gen=dragonfly,a=8,p=4,h=4,g=32", .coll = "allreduce", .algo = "ring",
     .bytes = "1MiB"},
    {"goal-diss-256k", "LogGOPSim's dissemination barrier, P = 262,144, from a GOAL file",
     "loggp:p=262144,L=3000,o=1500,g=1000,G=6", .build = bench_build_goal, .own_engine = 1,
     .file = "dissemination-262144.goal", .make_file = "tools/gen-goal dissemination 262144"},
    {"goal-diss-1m", "LogGOPSim's dissemination barrier, P = 1,048,576, from a GOAL file",
     "loggp:p=1048576,L=3000,o=1500,g=1000,G=6", .build = bench_build_goal, .own_engine = 1,
     .file = "dissemination-1048576.goal", .make_file = "tools/gen-goal dissemination 1048576"},
};
#define BENCH_NWORKLOADS ((int)(sizeof bench_workloads / sizeof bench_workloads[0]))

typedef struct bench_args {
    int workload; /* index, or -1 for all */
    int mode;     /* cs_net_mode_t, or -1 for both */
    int queue;    /* cs_queue_kind_t, or -1 for both */
    int fork_runs;
    int header;
    const char *data; /* folder of the workloads' data files */
} bench_args_t;

static void bench_help(void)
{
    char queues[256];
    cs_request_queue_names(queues, sizeof queues, "|");
    printf("Usage: collsim bench [--workload NAME|all] [--mode packet|fluid|all]\n"
           "                     [--queue KIND|all] [--data DIR] [--no-fork] [--no-header]\n"
           "\n"
           "Times the simulator on fixed workloads and prints one row per run: events,\n"
           "program ops, wall seconds to build (or read) the program and to simulate it,\n"
           "millions of events per second of the simulation, the peak resident set size\n"
           "of the run and that peak divided by the program's ops (bytes per op: the\n"
           "whole process, machine and executor included).  The read-* rows only read\n"
           "a trace (mode 'read'): build s is the reading's wall time, Mev/s its\n"
           "millions of ops per CPU second.\n"
           "\n"
           "  -w, --workload NAME  one workload or 'all' (default all: every workload but\n"
           "                       ring-ar-16k, minutes of CPU, which runs when named)\n"
           "  -M, --mode MODE      packet, fluid or 'all' (default all)\n"
           "  -q, --queue KIND     event queue: %s or 'all' (default %s)\n"
           "  -d, --data DIR       folder of the data files some workloads read (default\n"
           "                       bench-data); a row whose file is missing is skipped\n"
           "                       with the command that writes it (tools/bench does)\n"
           "      --no-fork        run in this process (peak RSS is then cumulative)\n"
           "      --no-header      do not print the column header\n"
           "  -h, --help           show this help and exit\n"
           "\n"
           "Workloads:\n",
           queues, cs_queue_kind_name(CS_QUEUE_DEFAULT));
    for (int i = 0; i < BENCH_NWORKLOADS; i++)
        printf("  %-14s %s\n                 on %s%s%s\n", bench_workloads[i].name,
               bench_workloads[i].summary, bench_workloads[i].machine,
               bench_workloads[i].file ? ", reads DIR/" : "",
               bench_workloads[i].file ? bench_workloads[i].file : "");
}

/* The value of --mode or --queue (a request field, api/request.h), or -1
 * for 'all'. */
static int bench_all_or(const char *key, const char *value)
{
    cs_request_t r;
    cs_error_t err;
    if (strcmp(value, "all") == 0)
        return -1;
    cs_request_init(&r);
    if (cs_request_set(&r, key, value, &err) != CS_OK)
        cs_app_usage_error("bench", "%s (or 'all')", err.msg);
    return strcmp(key, "mode") == 0 ? (int)r.mode : (int)r.queue;
}

static void bench_parse_args(int argc, char **argv, bench_args_t *a)
{
    enum { OPT_NO_FORK = 256, OPT_NO_HEADER };
    static const struct option longopts[] = {
        {"workload", required_argument, NULL, 'w'},
        {"mode", required_argument, NULL, 'M'},
        {"queue", required_argument, NULL, 'q'},
        {"data", required_argument, NULL, 'd'},
        {"no-fork", no_argument, NULL, OPT_NO_FORK},
        {"no-header", no_argument, NULL, OPT_NO_HEADER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    a->workload = -1;
    a->mode = -1;
    a->queue = (int)CS_QUEUE_DEFAULT;
    a->fork_runs = 1;
    a->header = 1;
    a->data = "bench-data";
    while ((c = getopt_long(argc, argv, ":w:M:q:d:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'w':
            a->workload = -2;
            if (strcmp(optarg, "all") == 0)
                a->workload = -1;
            for (int i = 0; i < BENCH_NWORKLOADS; i++)
                if (strcmp(optarg, bench_workloads[i].name) == 0)
                    a->workload = i;
            if (a->workload == -2) {
                char valid[256] = "all";
                for (int i = 0; i < BENCH_NWORKLOADS; i++) {
                    strncat(valid, ", ", sizeof valid - strlen(valid) - 1);
                    strncat(valid, bench_workloads[i].name, sizeof valid - strlen(valid) - 1);
                }
                cs_app_usage_error("bench", "unknown workload '%s'; valid: %s", optarg, valid);
            }
            break;
        case 'M': a->mode = bench_all_or("mode", optarg); break;
        case 'q': a->queue = bench_all_or("queue", optarg); break;
        case 'd': a->data = optarg; break;
        case OPT_NO_FORK: a->fork_runs = 0; break;
        case OPT_NO_HEADER: a->header = 0; break;
        case 'h': bench_help(); exit(0);
        default: cs_app_getopt_error("bench", c, argv, longopts);
        }
    }
    cs_app_no_operands("bench", argc, argv);
}

#define BENCH_ROW_FMT "%-14s %-6s %-10s %14s %11s %10s %8s %8s %7s %8s %6s\n"

static void bench_print_header(void)
{
    printf(BENCH_ROW_FMT, "workload", "mode", "queue", "finish", "events", "ops", "build s",
           "run s", "Mev/s", "RSS MiB", "B/op");
}

static double bench_seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* A reading row (bench_workload_t.read_only): the program just read, its
 * wall and CPU seconds; prints the row (ops per CPU second in the rate
 * column) and frees the program and machine. */
static int bench_read_row(const bench_workload_t *w, cs_program_t *p, cs_machine_t *m,
                          double wall, double cpu)
{
    struct rusage ru;
    int32_t nops = cs_program_nops(p);
    char ops[32], build[32], rate[32], rss[32], per_op[32];
    getrusage(RUSAGE_SELF, &ru);
    double rss_bytes = (double)ru.ru_maxrss * 1024.0; /* Linux: KiB */
    snprintf(ops, sizeof ops, "%ld", (long)nops);
    snprintf(build, sizeof build, "%.3f", wall);
    snprintf(rate, sizeof rate, "%.2f", cpu > 0 ? (double)nops / cpu / 1e6 : 0.0);
    snprintf(rss, sizeof rss, "%.1f", rss_bytes / (1024.0 * 1024.0));
    snprintf(per_op, sizeof per_op, "%.0f", nops > 0 ? rss_bytes / nops : 0.0);
    printf("# %s: read %ld ops in %.3f s (%.3f s of CPU): %.2f M ops per CPU second, "
           "program %.1f B/op, peak RSS %.1f B/op\n", w->name, (long)nops, wall, cpu,
           cpu > 0 ? (double)nops / cpu / 1e6 : 0.0,
           nops > 0 ? (double)cs_program_bytes(p) / nops : 0.0, nops > 0 ? rss_bytes / nops : 0.0);
    printf(BENCH_ROW_FMT, w->name, "read", "-", "-", "-", ops, build, "-", rate, rss, per_op);
    cs_program_free(p);
    cs_machine_free(m);
    return CS_OK;
}

/* One run, in whatever process calls it; prints its row.  `path` is the
 * workload's data file (NULL if it reads none). */
static int bench_run_one(const bench_workload_t *w, const char *path, cs_net_mode_t mode,
                         cs_queue_kind_t queue)
{
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    cs_program_t *p = NULL;
    cs_progen_t *gen = NULL;
    cs_request_coll_t c;
    cs_exec_result_t res;
    cs_exec_opts_t opts;
    struct timespec t0;
    double build_s = 0, cpu0;
    char tmp[512] = "";
    int rc;

    memset(&res, 0, sizeof res);
    memset(&c, 0, sizeof c);
    cs_exec_opts_default(&opts);
    opts.mode = mode;
    opts.queue = queue;
    opts.max_work = 0; /* measured workloads: large on purpose (ft8k-rab: 2^28 packets) */
    rc = cs_machine_new(w->machine, &m, &err);
    if (rc == CS_OK && w->write_input) {
        /* written before the clocks start: the row times the reading */
        const char *dir = getenv("TMPDIR");
        int fd;
        snprintf(tmp, sizeof tmp, "%s/collsim-bench-XXXXXX", dir && *dir ? dir : "/tmp");
        if ((fd = mkstemp(tmp)) < 0) {
            rc = cs_error_set(&err, CS_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        } else {
            close(fd);
            rc = w->write_input(m, tmp, &err);
            path = tmp;
        }
    }
    cpu0 = bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == CS_OK && w->build)
        rc = w->build(m, path, &p, &err);
    else if (rc == CS_OK && (rc = bench_prepare_coll(m, w, &c, &err)) == CS_OK)
        rc = w->windowed ? cs_coll_generate(c.algo, &c.args, 0, &gen, &err)
                         : cs_request_coll_build(&c, &p, &err);
    if (rc == CS_OK && gen) {
        p = gen->prog;
        rc = cs_request_exec_gen(m, gen, &opts, &res, &err);
    } else if (rc == CS_OK) {
        build_s = bench_seconds_since(&t0);
        if (w->read_only) {
            double cpu = bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
            if (tmp[0])
                unlink(tmp);
            return bench_read_row(w, p, m, build_s, cpu);
        }
        rc = cs_request_exec(m, p, &opts, &res, &err);
    }
    if (rc == CS_OK) {
        struct rusage ru;
        int32_t nops = cs_program_nops_visible(p);
        char finish[64], events[32], ops[32], build[32], run[32], rate[32], rss[32], per_op[32];
        getrusage(RUSAGE_SELF, &ru);
        /* Linux reports ru_maxrss in KiB. */
        double rss_bytes = (double)ru.ru_maxrss * 1024.0;
        cs_units_format_seconds((double)res.finish * m->tick_seconds, finish, sizeof finish);
        snprintf(events, sizeof events, "%llu", (unsigned long long)res.events);
        snprintf(ops, sizeof ops, "%ld", (long)nops);
        snprintf(build, sizeof build, "%.3f", build_s);
        snprintf(run, sizeof run, "%.3f", res.wall_seconds);
        snprintf(rate, sizeof rate, "%.2f",
                 res.wall_seconds > 0 ? (double)res.events / res.wall_seconds / 1e6 : 0.0);
        snprintf(rss, sizeof rss, "%.1f", rss_bytes / (1024.0 * 1024.0));
        snprintf(per_op, sizeof per_op, "%.0f", nops > 0 ? rss_bytes / nops : 0.0);
        printf(BENCH_ROW_FMT, w->name, w->own_engine ? "own" : cs_net_mode_name(mode),
               cs_queue_kind_name(queue), finish, events, ops, build, run, rate, rss, per_op);
    } else {
        cs_error_prefix(&err, "bench %s (%s, %s)", w->name, cs_net_mode_name(mode),
                        cs_queue_kind_name(queue));
        cs_app_report(&err);
    }
    if (tmp[0])
        unlink(tmp);
    cs_exec_result_destroy(&res);
    if (gen)
        cs_progen_free(gen); /* and its program */
    else
        cs_program_free(p);
    cs_request_coll_destroy(&c);
    cs_machine_free(m);
    return rc;
}

/* Maps a child's exit status back to a status code (the inverse of
 * cs_status_exit_code on its representative codes). */
static int bench_status_from_exit(int wstatus)
{
    if (!WIFEXITED(wstatus))
        return CS_ERR_INTERNAL;
    switch (WEXITSTATUS(wstatus)) {
    case 0: return CS_OK;
    case 2: return CS_ERR_USAGE;
    case 3: return CS_ERR_DEADLOCK;
    case 4: return CS_ERR_VALIDATE;
    case 5: return CS_ERR_RUNTIME;
    default: return CS_ERR_INTERNAL;
    }
}

static int bench_run_forked(const bench_workload_t *w, const char *path, cs_net_mode_t mode,
                            cs_queue_kind_t queue)
{
    /* Anything buffered would otherwise be printed by both processes. */
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        cs_error_t err;
        cs_error_set(&err, CS_ERR_RUNTIME, "bench: fork failed: %s", strerror(errno));
        return cs_app_report(&err);
    }
    if (pid == 0) {
        int rc = bench_run_one(w, path, mode, queue);
        fflush(stdout);
        exit(cs_status_exit_code(rc));
    }
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) {
            cs_error_t err;
            cs_error_set(&err, CS_ERR_RUNTIME, "bench: waitpid failed: %s", strerror(errno));
            return cs_app_report(&err);
        }
    }
    if (WIFSIGNALED(wstatus))
        fprintf(stderr, "collsim: bench %s (%s, %s): killed by signal %d\n", w->name,
                cs_net_mode_name(mode), cs_queue_kind_name(queue), WTERMSIG(wstatus));
    return bench_status_from_exit(wstatus);
}

int cs_app_cmd_bench(int argc, char **argv)
{
    static const cs_net_mode_t modes[] = {CS_NET_PACKET, CS_NET_FLUID};
    bench_args_t a;
    int worst = CS_OK;

    bench_parse_args(argc, argv, &a);
    if (a.header)
        bench_print_header();
    for (int wi = 0; wi < BENCH_NWORKLOADS; wi++) {
        const bench_workload_t *w = &bench_workloads[wi];
        char path[4096];
        if (a.workload >= 0 && a.workload != wi)
            continue;
        if (w->heavy && a.workload != wi)
            continue; /* only when named */
        if (w->file) {
            snprintf(path, sizeof path, "%s/%s", a.data, w->file);
            if (access(path, R_OK) != 0) {
                printf("# %s: skipped: no %s (write it with `%s > %s`)\n", w->name, path,
                       w->make_file, path);
                continue;
            }
        }
        for (int mi = 0; mi < 2; mi++) {
            if (a.mode >= 0 && a.mode != (int)modes[mi])
                continue;
            if ((w->own_engine || w->read_only) && modes[mi] != CS_NET_PACKET)
                continue; /* its engine has no modes, or there is no run */
            if (w->heavy && modes[mi] != CS_NET_FLUID)
                continue;
            for (int qi = 0; qi < cs_request_queue_kinds(); qi++) {
                cs_queue_kind_t queue = (cs_queue_kind_t)qi;
                if (a.queue >= 0 && a.queue != qi)
                    continue;
                if (w->read_only && a.queue < 0 && qi != (int)CS_QUEUE_DEFAULT)
                    continue; /* no run: one row */
                const char *file = w->file ? path : NULL;
                int rc = a.fork_runs ? bench_run_forked(w, file, modes[mi], queue)
                                     : bench_run_one(w, file, modes[mi], queue);
                /* Keep going: one failing workload should not hide the
                 * numbers of the others. */
                if (rc != CS_OK && worst == CS_OK)
                    worst = rc;
            }
        }
    }
    return worst;
}
