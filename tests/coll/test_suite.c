/*
 * test_suite.c - every algorithm of the registry, run with --validate over
 * P in {1, 2, 3, 5, 7, 8, 13, 16, 64, 100}, sizes {0, 1, P-1, 1000, 4097,
 * 7P+1} (the last is never a multiple of P), roots 0 and P-1 for rooted
 * collectives, on alphabeta:topo=complete,p=100 in packet mode (issue 3:
 * "every algorithm for any P and any size").  A second pass, in fluid mode,
 * gives the algorithms non-trivial hints (a permuted ring, an alternative
 * ring, a grid, hierarchy groups) for P in {7, 16, 100}.
 *
 * The registry is filled by the file of each collective (src/coll/
 * broadcast.c, reduce.c, ...); this test picks up whatever is
 * registered.  A refusal (an error from building) is a failure unless the
 * algorithm's summary or options text documents a restriction
 * ("requires ...", "power of two", "only ...").
  *
 * Also the tests that span collectives, moved here from the files of their
 * papers: the registry's defaults, the trivial cases (0 bytes, one rank),
 * option checking, and the --validate sweeps over each family's table of
 * algorithms and options (the lecture's and generic MPI rooted ones in
 * formulas.h, the symmetric ones, the Cerebras thesis's patterns over P in
 * {1,2,3,5,8,13,16} on a complete graph and a line, and the machine
 * papers' (Cell, CNS-1, Groq) with hierarchy and ring hints).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "formulas.h"
#include "harness.h"

#define MACHINE "alphabeta:topo=complete,p=100"
#define MAX_REPORTED 40

/* Under the sanitizers (tools/test's second pass, about 16x slower here)
 * P = 13, 16, 64 and 100 are left out: they take most of the time and
 * reach no code that P = 5 and 7 (odd, not powers of two) and 8 (a power
 * of two of three levels) do not (the plain pass runs them all). */
#if defined(__SANITIZE_ADDRESS__)
#define SUITE_PS 1, 2, 3, 5, 7, 8
#define SUITE_HINT_PS 7, 8
#else
#define SUITE_PS 1, 2, 3, 5, 7, 8, 13, 16, 64, 100
#define SUITE_HINT_PS 7, 16, 100
#endif
static const int Ps[] = {SUITE_PS};

typedef struct tally {
    int runs, ok, refused, failed, reported;
} tally_t;

static int documents_restriction(const cs_coll_algo_t *a)
{
    static const char *const words[] = {"requires", "power of two", "power-of-two", "only for",
                                        "only when", NULL};
    for (int i = 0; words[i]; i++)
        if ((a->summary && strstr(a->summary, words[i])) ||
            (a->options && strstr(a->options, words[i])))
            return 1;
    return 0;
}

/* Sizes for P ranks (deduplicated, ascending enough): --bytes semantics. */
static int sizes_for(cs_coll_kind_t k, int P, int64_t *out)
{
    int n = 0;
    int64_t cand[6] = {0, 1, P - 1, 1000, 4097, 7 * (int64_t)P + 1};
    if (k == CS_COLL_BARRIER) { /* a barrier moves 0- or 1-byte tokens */
        out[0] = 0;
        out[1] = 1;
        return 2;
    }
    for (int i = 0; i < 6; i++) {
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= out[j] == cand[i];
        if (!dup && cand[i] >= 0)
            out[n++] = cand[i];
    }
    return n;
}

static void one(tally_t *t, const cs_coll_algo_t *a, int P, int64_t bytes, int root,
                const cs_coll_hints_t *hints, const char *what)
{
    /* the hinted pass runs in fluid mode, so that both engines are covered */
    cs_net_mode_t mode = hints ? CS_NET_FLUID : CS_NET_PACKET;
    h_run_t r = h_run_algo(MACHINE, a, P, bytes, root, NULL, mode, 1, hints);
    t->runs++;
    if (r.rc == CS_OK) {
        t->ok++;
    } else if (r.prog == NULL && (r.rc == CS_ERR_RANGE || r.rc == CS_ERR_USAGE) &&
               documents_restriction(a)) {
        t->refused++;
    } else {
        t->failed++;
        if (t->reported++ < MAX_REPORTED)
            cr_expect_fail("%s/%s P=%d bytes=%lld root=%d%s: %s: %s", cs_coll_name(a->kind),
                           a->name, P, (long long)bytes, root, what, cs_status_name(r.rc),
                           r.err.msg);
    }
    h_done(&r);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs every algorithm of collective k; adds to *total, returns the number
 * of algorithms. */
static int run_kind(cs_coll_kind_t k, tally_t *total)
{
    int n;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    tally_t t;
    int nalgo = 0;
    double t0 = now_s();
    memset(&t, 0, sizeof t);
    t.reported = total->reported;
    for (int i = 0; i < n; i++) {
        const cs_coll_algo_t *a = all[i];
        if (a->kind != k)
            continue;
        nalgo++;
        for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
            int P = Ps[pi], roots[2] = {0, P - 1}, nroots;
            int64_t sizes[8];
            int ns = sizes_for(k, P, sizes);
            nroots = cs_coll_rooted(k) && P > 1 ? 2 : 1;
            for (int si = 0; si < ns; si++)
                for (int ri = 0; ri < nroots; ri++)
                    one(&t, a, P, sizes[si], roots[ri], NULL, "");
        }
    }
    /* second pass: the same algorithms given every kind of hint */
    for (int i = 0; i < n; i++) {
        const cs_coll_algo_t *a = all[i];
        static const int hp[] = {SUITE_HINT_PS};
        if (a->kind != k)
            continue;
        for (size_t pi = 0; pi < sizeof hp / sizeof *hp; pi++) {
            int P = hp[pi];
            int32_t ring[100], alt[100], group[100];
            cs_coll_hints_t h;
            memset(&h, 0, sizeof h);
            /* a ring that is a true permutation (stride coprime with P),
             * and an even/odd ring as the alternative */
            int stride = P % 3 ? 3 : 7, e = 0;
            for (int j = 0; j < P; j++)
                ring[j] = (int32_t)((int64_t)j * stride % P);
            for (int j = 0; j < P; j += 2)
                alt[e++] = j;
            for (int j = P - 1 - (P % 2 == 0 ? 0 : 1); j > 0; j -= 2)
                alt[e++] = j;
            cr_assert_eq(e, P);
            for (int j = 0; j < P; j++)
                group[j] = j / 4;
            h.ring = ring;
            h.ring_alt = alt;
            h.group = group;
            h.ngroups = (P + 3) / 4;
            if (P == 16)
                h.grid_rows = h.grid_cols = 4;
            if (P == 100)
                h.grid_rows = h.grid_cols = 10;
            for (int64_t bytes = 1; bytes <= 1000; bytes += 999)
                one(&t, a, P, k == CS_COLL_BARRIER ? 0 : bytes, cs_coll_rooted(k) ? P / 2 : 0, &h,
                    " (with hints, fluid mode)");
        }
    }
    printf("suite: %-14s %3d algorithm%s %5d validated runs: %d ok, %d refused (documented), "
           "%d failed  [%.1f s]\n",
           cs_coll_name(k), nalgo, nalgo == 1 ? ", " : "s,", t.runs, t.ok, t.refused, t.failed,
           now_s() - t0);
    fflush(stdout);
    total->runs += t.runs;
    total->ok += t.ok;
    total->refused += t.refused;
    total->failed += t.failed;
    total->reported = t.reported;
    return nalgo;
}

/* One test for the whole registry, so that it prints one total (failures
 * name the collective, algorithm, P, size and root anyway). */
Test(suite, every_algorithm_any_p_any_size, .timeout = 600)
{
    tally_t total;
    int nalgo = 0;
    double t0 = now_s();
    memset(&total, 0, sizeof total);
    for (int k = 0; k < CS_COLL_NKINDS; k++)
        nalgo += run_kind((cs_coll_kind_t)k, &total);
    printf("suite: total: %d algorithms x P in {1,2,3,5,7,8,13,16,64,100} x sizes x roots "
           "(+ hints): %d validated runs, %d ok, %d refused (documented), %d failed in %.1f s\n",
           nalgo, total.runs, total.ok, total.refused, total.failed, now_s() - t0);
    if (total.reported > MAX_REPORTED)
        cr_log_warn("only the first %d failures were reported", MAX_REPORTED);
}

/* The suite must not be vacuous once algorithms are registered: every
 * registered algorithm has a name, a summary and a source, and names are
 * unique within a collective. */
Test(suite, registry_is_well_formed)
{
    int n;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    for (int i = 0; i < n; i++) {
        cr_expect(all[i]->name && all[i]->name[0], "algorithm %d has no name", i);
        cr_expect(all[i]->summary && all[i]->summary[0], "%s has no summary", all[i]->name);
        cr_expect(all[i]->source && all[i]->source[0], "%s has no source", all[i]->name);
        cr_expect(all[i]->options != NULL, "%s has no options text", all[i]->name);
        cr_expect(all[i]->build != NULL, "%s has no build function", all[i]->name);
        for (int j = 0; j < i; j++)
            cr_expect(all[j]->kind != all[i]->kind || strcmp(all[j]->name, all[i]->name),
                      "%s/%s is registered twice", cs_coll_name(all[i]->kind), all[i]->name);
    }
    printf("suite: registry holds %d algorithms\n", n);
}

/* docs/algorithms.md documents every registered algorithm (the issue asks
 * for the list; this keeps it from rotting). */
Test(suite, every_algorithm_is_documented)
{
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    char path[4096], name[256];
    cr_assert(root, "COLLSIM_SOURCE_ROOT is not set");
    snprintf(path, sizeof path, "%s/docs/algorithms.md", root);
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    cr_assert_eq(fread(text, 1, (size_t)len, f), (size_t)len);
    text[len] = 0;
    fclose(f);
    int n;
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "`%s/%s", cs_coll_name(all[i]->kind), all[i]->name);
        cr_assert(strstr(text, name), "%s is not in docs/algorithms.md", name + 1);
    }
    free(text);
}

/* cs_coll_wait_recvs: the next op follows the recvs (and calcs) only; the
 * sends stay outstanding until a full cs_coll_wait, and a rank that only
 * sent keeps following what it waited for last. */
static int follows(const cs_program_t *p, int32_t op, int32_t pred)
{
    int n;
    const cs_dep_t *d = cs_program_preds(p, op, &n);
    for (int i = 0; i < n; i++)
        if (cs_dep_op(d[i]) == pred)
            return 1;
    return 0;
}

Test(suite, wait_recvs_leaves_sends_outstanding)
{
    cs_coll_args_t a = {.kind = CS_COLL_ALLGATHER, .P = 2, .bytes = 8};
    cs_program_t *p = cs_program_new(2);
    cs_coll_builder_t *b = cs_coll_builder_new(p, &a);
    cs_error_t err;
    int32_t s0 = cs_coll_send(b, 0, 1, 0, 8, 0), r0 = cs_coll_recv(b, 0, 1, 8, 8, 0);
    int32_t s1 = cs_coll_send(b, 1, 0, 8, 8, 0), r1 = cs_coll_recv(b, 1, 0, 0, 8, 0);
    cs_coll_wait_recvs_all(b);
    int32_t c0 = cs_coll_calc(b, 0, 1, 0); /* after r0, not s0 */
    int32_t s1b = cs_coll_send(b, 1, 0, 0, 8, 1);
    cs_coll_wait_recvs(b, 1);               /* only sends: nothing changes */
    int32_t c1 = cs_coll_calc(b, 1, 1, 0); /* still after r1 only */
    cs_coll_wait_all(b);
    int32_t e1 = cs_coll_calc(b, 1, 1, 0); /* after s1, s1b and c1 */
    int32_t r0b = cs_coll_recv(b, 0, 1, 0, 8, 1);
    (void)r0b;
    cr_assert_eq(cs_program_finalize(p, &err), CS_OK, "%s", err.msg);
    cr_expect(follows(p, c0, r0) && !follows(p, c0, s0));
    cr_expect(follows(p, s1b, r1) && !follows(p, s1b, s1));
    cr_expect(follows(p, c1, r1) && !follows(p, c1, s1) && !follows(p, c1, s1b));
    cr_expect(follows(p, e1, s1) && follows(p, e1, s1b) && follows(p, e1, c1));
    cs_coll_builder_free(b);
    cs_program_free(p);
}

/* ==== the registry's defaults ================================================ */

Test(rooted, registry_lists_the_defaults_first)
{
    static const char *const want[][2] = {{"broadcast", "binomial"},
                                          {"reduce", "binomial"},
                                          {"scatter", "binomial"},
                                          {"gather", "binomial"}};
    for (int i = 0; i < 4; i++) {
        cs_coll_kind_t k;
        const cs_coll_algo_t *a;
        cs_error_t err;
        cr_assert_eq(cs_coll_parse(want[i][0], &k, &err), CS_OK);
        cr_assert_eq(cs_coll_find(k, NULL, &a, &err), CS_OK, "%s", err.msg);
        cr_assert_str_eq(a->name, want[i][1]);
        cr_assert(a->summary && a->summary[0] && a->source && a->source[0] && a->options);
    }
}

Test(symmetric_time, ring_is_the_default_allgather_and_reduce_scatter)
{
    const cs_coll_algo_t *a;
    cs_error_t err;
    cr_assert_eq(cs_coll_find(CS_COLL_ALLGATHER, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "ring");
    cr_assert_eq(cs_coll_find(CS_COLL_REDUCE_SCATTER, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "ring");
    cr_assert_eq(cs_coll_find(CS_COLL_ALLREDUCE, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "ring");
    cr_assert_eq(cs_coll_find(CS_COLL_BARRIER, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "dissemination");
    cr_assert_eq(cs_coll_find(CS_COLL_ALLTOALL, NULL, &a, &err), CS_OK);
    cr_expect_str_eq(a->name, "pairwise");
}

/* ==== trivial cases: 0 bytes and one rank ==================================== */

Test(rooted, zero_bytes_and_one_rank_emit_nothing_and_finish_at_zero)
{
    for (int i = 0; i < NROOTED_ALGOS; i++)
        for (int mi = 0; mi < 2; mi++) {
            int cases[][2] = {{1, 0}, {1, 1000}, {5, 0}, {8, 0}};
            for (int c = 0; c < 4; c++) {
                char s[128];
                snprintf(s, sizeof s, "alphabeta:topo=complete,p=%d", cases[c][0]);
                h_run_t r = h_run(s, ROOTED_ALGOS[i].coll, ROOTED_ALGOS[i].algo, cases[c][0],
                                  cases[c][1], cases[c][0] - 1, ROOTED_ALGOS[i].opts, MODES[mi], 1);
                cr_assert_eq(r.rc, CS_OK, "%s/%s P=%d n=%d: %s", ROOTED_ALGOS[i].coll,
                             ROOTED_ALGOS[i].algo, cases[c][0], cases[c][1], r.err.msg);
                cr_assert_eq(r.finish, 0, "%s/%s P=%d n=%d: %lld", ROOTED_ALGOS[i].coll,
                             ROOTED_ALGOS[i].algo, cases[c][0], cases[c][1], (long long)r.finish);
                h_done(&r);
            }
        }
}

/* ==== empty cases ============================================================ */

/* Zero-length pieces are not sent: a 0-byte collective emits no op and ends
 * at 0 (the barrier still exchanges its 0-byte tokens), and one rank never
 * talks to anyone. */
Test(papers, zero_bytes_and_one_rank_emit_nothing)
{
    /* the algorithms of the three machine papers (Cell, CNS-1, Groq
     * hierarchical), wherever their collective's file lists them */
    static const struct { cs_coll_kind_t k; const char *name; } papers[] = {
        {CS_COLL_BROADCAST, "opt"},         {CS_COLL_BROADCAST, "simple"},
        {CS_COLL_BROADCAST, "two-to-all"},  {CS_COLL_BROADCAST, "two-phase"},
        {CS_COLL_BROADCAST, "hybrid-segmented"}, {CS_COLL_REDUCE, "mailbox"},
        {CS_COLL_ALLREDUCE, "rdb-barrier"}, {CS_COLL_ALLREDUCE, "hybrid-a"},
        {CS_COLL_ALLREDUCE, "hybrid-b"},    {CS_COLL_ALLREDUCE, "hierarchical"},
        {CS_COLL_ALLGATHER, "hybrid"},      {CS_COLL_ALLGATHER, "cns-ring"},
        {CS_COLL_ALLGATHER, "cns-two-way"}, {CS_COLL_BARRIER, "mailbox"}};
    int seen = 0;
    for (size_t i = 0; i < sizeof papers / sizeof *papers; i++) {
        const cs_coll_algo_t *a = NULL;
        cs_error_t ferr = {0};
        int listed = cs_coll_find(papers[i].k, papers[i].name, &a, &ferr) == CS_OK;
        cr_assert(listed, "%s/%s is not in the registry", cs_coll_name(papers[i].k),
                  papers[i].name);
        for (int P = 1; P <= 16; P += 15)
            for (int64_t bytes = 0; bytes <= 100; bytes += 100) {
                h_run_t r = h_run_algo("alphabeta:topo=complete,p=16", a, P, bytes, P - 1, NULL,
                                       CS_NET_FLUID, 1, NULL);
                int empty = P == 1 || (bytes == 0 && a->kind != CS_COLL_BARRIER);
                cr_assert_eq(r.rc, CS_OK, "%s/%s P=%d bytes=%lld: %s", cs_coll_name(a->kind),
                             a->name, P, (long long)bytes, r.err.msg);
                if (empty) {
                    cr_expect_eq(cs_program_nops(r.prog), 0, "%s/%s P=%d bytes=%lld: %d ops",
                                 cs_coll_name(a->kind), a->name, P, (long long)bytes,
                                 cs_program_nops(r.prog));
                    cr_expect_eq(r.finish, 0);
                } else {
                    cr_expect_gt(cs_program_nops(r.prog), 0);
                }
                h_done(&r);
            }
        seen++;
    }
    cr_assert_eq(seen, 14);
}

/* ==== options ================================================================ */

static void expect_error(const char *coll, const char *algo, const char *opts, int code,
                         const char *needle)
{
    h_run_t r =
        h_run("alphabeta:topo=complete,p=8", coll, algo, 8, 1000, 0, opts, CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, code, "%s/%s %s: rc %d (%s)", coll, algo, opts, r.rc, r.err.msg);
    cr_assert(strstr(r.err.msg, needle), "%s/%s %s: \"%s\" lacks \"%s\"", coll, algo, opts,
              r.err.msg, needle);
    h_done(&r);
}

Test(rooted, options_are_checked_and_named_in_errors)
{
    expect_error("broadcast", "chain", "seg=0", CS_ERR_RANGE, "seg");
    expect_error("reduce", "segmented-binomial", "seg=0", CS_ERR_RANGE, "seg");
    expect_error("broadcast", "kchain", "k=0", CS_ERR_RANGE, "k");
    expect_error("reduce", "kchain", "k=-2", CS_ERR_RANGE, "k");
    expect_error("broadcast", "chain", "sge=10", CS_ERR_USAGE, "sge");
    expect_error("scatter", "binomial", "seg=10", CS_ERR_USAGE, "seg");
}

static void refused(const char *coll, const char *algo, int P, const char *opts, int code)
{
    h_run_t r = h_run("alphabeta:topo=complete,p=100", coll, algo, P, 100, 0, opts, CS_NET_PACKET,
                      0);
    cr_expect_neq(r.rc, CS_OK, "%s/%s P=%d %s was accepted", coll, algo, P, opts);
    if (code)
        cr_expect_eq(r.rc, code, "%s/%s %s: %s", coll, algo, opts, r.err.msg);
    cr_expect(r.err.msg[0], "%s/%s %s: no message", coll, algo, opts);
    h_done(&r);
}

Test(papers, options_are_checked)
{
    refused("allgather", "hybrid", 16, "y=3", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "y=32", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "x=0", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "x=6", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "x=2,y=4", CS_ERR_RANGE);
    refused("allgather", "hybrid", 12, "x=1", CS_ERR_RANGE);
    refused("allreduce", "hybrid-a", 12, "x=1", CS_ERR_RANGE);
    refused("allreduce", "hybrid-b", 16, "y=5", CS_ERR_RANGE);
    refused("allgather", "hybrid", 16, "k=2", 0);
    refused("allreduce", "rdb-barrier", 16, "every=0", CS_ERR_RANGE);
    refused("reduce", "mailbox", 16, "every=-1", 0);
    refused("barrier", "mailbox", 16, "fanin=1", CS_ERR_RANGE);
    refused("broadcast", "two-to-all", 16, "opt=2", CS_ERR_RANGE);
    refused("broadcast", "hybrid-segmented", 16, "opt=yes", 0);
    refused("broadcast", "opt", 16, "opt=1", 0); /* no options at all */
    refused("allgather", "cns-ring", 16, "stream=2", CS_ERR_RANGE);
    refused("allgather", "cns-two-way", 16, "offset=2s", CS_ERR_RANGE);
    refused("allgather", "cns-two-way", 16, "offset=fast", 0);
    refused("allreduce", "hierarchical", 16, "g=0", CS_ERR_RANGE);
    refused("allreduce", "hierarchical", 16, "g=17", CS_ERR_RANGE);
    refused("allreduce", "hierarchical", 16, "inter=ring", 0);
    refused("allreduce", "hierarchical", 16, "par=3", CS_ERR_RANGE);
    /* and the valid forms are accepted */
    {
        static const char *const ok[][3] = {
            {"allgather", "hybrid", "x=3,y=4"}, {"allgather", "hybrid", "y=16"},
            {"allreduce", "hybrid-b", "x=5"},   {"allgather", "cns-two-way", "offset=20ns"},
            {"allreduce", "hierarchical", "g=16,inter=rdb,par=1"}};
        for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
            h_run_t r = h_run("alphabeta:topo=complete,p=16", ok[i][0], ok[i][1], 16, 100, 0,
                              ok[i][2], CS_NET_PACKET, 1);
            cr_expect_eq(r.rc, CS_OK, "%s/%s %s: %s", ok[i][0], ok[i][1], ok[i][2], r.err.msg);
            h_done(&r);
        }
    }
}

Test(thesis, option_errors)
{
    static const struct {
        const char *coll, *algo, *opts, *needle;
    } bad[] = {
        {"reduce", "thesis-chain", "stream=2", "stream"},
        {"reduce", "thesis-chain", "S=3", "S"},
        {"reduce", "two-phase", "S=0", "S"},
        {"reduce", "left-right", "base=ring", "base"},
        {"reduce", "jump", "base=chain,S=2", "S"},
        {"reduce", "preorder", "TR=-1", "TR"},
        {"allreduce", "naive", "root=9", "root"},
        {"allreduce", "naive", "base=chain,inner=tree", "inner"},
        {"allreduce", "2d-naive", "base=ring", "base"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        h_run_t r = h_run("alphabeta:topo=complete,p=8", bad[i].coll, bad[i].algo, 8, 100, 0,
                          bad[i].opts, CS_NET_PACKET, 0);
        cr_expect_neq(r.rc, CS_OK, "%s/%s [%s] should fail", bad[i].coll, bad[i].algo,
                      bad[i].opts);
        cr_expect(strstr(r.err.msg, bad[i].needle) != NULL, "%s/%s [%s]: message \"%s\"",
                  bad[i].coll, bad[i].algo, bad[i].opts, r.err.msg);
        h_done(&r);
    }
}

/* ==== --validate of the symmetric collectives ================================= */

typedef struct variant {
    const char *coll, *algo, *opts;
} variant_t;

static const variant_t VARIANTS[] = {
    {"allgather", "ring", NULL},
    {"allgather", "rdb", NULL},
    {"allgather", "bruck", NULL},
    {"allgather", "gather-bcast", NULL},
    {"reduce-scatter", "ring", NULL},
    {"reduce-scatter", "recursive-halving", NULL},
    {"reduce-scatter", "pairwise", NULL},
    {"allreduce", "ring", NULL},
    {"allreduce", "rdb", NULL},
    {"allreduce", "rabenseifner", NULL},
    {"allreduce", "reduce-bcast", NULL},
    {"allreduce", "butterfly", NULL},
    {"allreduce", "butterfly", "g=3"},
    {"allreduce", "butterfly", "g=4,inner=ring"},
    {"allreduce", "butterfly", "g=7,inner=direct"},
    {"allreduce", "butterfly", "g=1000"},
    {"allreduce", "gateway", NULL},
    {"allreduce", "gateway", "g=1"},
    {"allreduce", "gateway", "g=3"},
    {"allreduce", "gateway", "g=1000"},
    {"barrier", "dissemination", NULL},
    {"barrier", "rdb", NULL},
    {"barrier", "flat", NULL},
    {"barrier", "tree", NULL},
    {"alltoall", "pairwise", NULL},
    {"alltoall", "bruck", NULL},
    {"alltoall", "flat", NULL},
};

static const int VPs[] = {SUITE_PS};

static int validate_one(const variant_t *v, int P, int64_t size, cs_net_mode_t mode,
                        const cs_coll_hints_t *h)
{
    const cs_coll_algo_t *a;
    cs_coll_kind_t k;
    cs_error_t err;
    h_run_t r;
    int ok;
    cr_assert_eq(cs_coll_parse(v->coll, &k, &err), CS_OK);
    cr_assert_eq(cs_coll_find(k, v->algo, &a, &err), CS_OK, "%s", err.msg);
    r = h_run_algo("alphabeta:topo=complete,p=100", a, P, size, 0, v->opts, mode, 1, h);
    ok = r.rc == CS_OK;
    cr_expect(ok, "%s/%s%s%s P=%d size=%lld %s%s: %s: %s", v->coll, v->algo, v->opts ? " " : "",
              v->opts ? v->opts : "", P, (long long)size, cs_net_mode_name(mode),
              h ? " (permuted ring)" : "", cs_status_name(r.rc), r.err.msg);
    h_done(&r);
    return ok;
}

Test(symmetric_validate, every_algorithm_any_P_any_size_packet)
{
    int runs = 0, ok = 0;
    for (size_t i = 0; i < sizeof VARIANTS / sizeof *VARIANTS; i++)
        for (size_t pi = 0; pi < sizeof VPs / sizeof *VPs; pi++) {
            int P = VPs[pi];
            int64_t sizes[] = {0, 1, P - 1, 1000, 4097, 7 * (int64_t)P + 1};
            for (size_t si = 0; si < 6; si++) {
                runs++;
                ok += validate_one(&VARIANTS[i], P, sizes[si], CS_NET_PACKET, NULL);
            }
        }
    cr_expect_eq(ok, runs);
    printf("symmetric: %d validated runs, %d ok\n", runs, ok);
}

Test(symmetric_validate, every_algorithm_fluid_and_permuted_ring)
{
    static const int Ps[] = {3, 8, 13, 64};
    int32_t ring[64];
    uint64_t seed = 7;
    cs_coll_hints_t h;
    for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++) {
        int P = Ps[pi];
        int64_t sizes[] = {1, P - 1, 5 * (int64_t)P + 3};
        f_shuffle(ring, P, &seed);
        memset(&h, 0, sizeof h);
        h.ring = ring;
        for (size_t i = 0; i < sizeof VARIANTS / sizeof *VARIANTS; i++)
            for (size_t si = 0; si < 3; si++) {
                validate_one(&VARIANTS[i], P, sizes[si], CS_NET_FLUID, NULL);
                validate_one(&VARIANTS[i], P, sizes[si], CS_NET_PACKET, &h);
            }
    }
}

Test(symmetric_opts, one_rank_emits_nothing)
{
    for (size_t i = 0; i < sizeof VARIANTS / sizeof *VARIANTS; i++) {
        h_run_t r = h_run("alphabeta:topo=complete,p=4", VARIANTS[i].coll, VARIANTS[i].algo, 1,
                          100, 0, VARIANTS[i].opts, CS_NET_PACKET, 1);
        cr_expect_eq(r.rc, CS_OK, "%s/%s: %s", VARIANTS[i].coll, VARIANTS[i].algo, r.err.msg);
        cr_expect_eq(r.finish, 0);
        cr_expect_eq(cs_program_nops(r.prog), 0, "%s/%s", VARIANTS[i].coll, VARIANTS[i].algo);
        h_done(&r);
    }
}

/* ==== --validate of the Cerebras thesis's patterns =========================== */

typedef struct vcase {
    const char *coll, *algo, *opts;
} vcase_t;

static const vcase_t THESIS_VCASES[] = {
    {"broadcast", "thesis", NULL},
    {"reduce", "scalar", NULL},
    {"reduce", "thesis-chain", NULL},
    {"reduce", "tree", NULL},
    {"reduce", "two-phase", NULL},
    {"reduce", "two-phase", "S=2"},
    {"reduce", "two-phase", "S=4"},
    {"reduce", "preorder", NULL},
    {"reduce", "preorder", "TR=0"},
    {"reduce", "left-right", NULL},
    {"reduce", "left-right", "base=tree"},
    {"reduce", "left-right", "base=two-phase,S=2"},
    {"reduce", "left-right", "base=scalar"},
    {"reduce", "left-right", "base=preorder"},
    {"reduce", "ring", NULL},
    {"reduce", "jump", NULL},
    {"reduce", "jump", "base=tree"},
    {"reduce", "jump", "base=two-phase"},
    {"reduce", "jump", "base=preorder"},
    {"reduce", "2d-chain", NULL},
    {"reduce", "2d-tree", NULL},
    {"reduce", "2d-two-phase", NULL},
    {"allreduce", "naive", NULL},
    {"allreduce", "naive", "base=tree"},
    {"allreduce", "naive", "base=two-phase,root=2"},
    {"allreduce", "naive", "base=scalar"},
    {"allreduce", "naive", "base=preorder"},
    {"allreduce", "naive", "base=left-right,inner=tree,root=3"},
    {"allreduce", "naive", "base=ring,root=1"},
    {"allreduce", "naive", "base=jump,inner=two-phase,root=4"},
    {"allreduce", "2d-naive", NULL},
    {"allreduce", "2d-naive", "base=tree,root=5"},
    {"allreduce", "2d-naive", "base=two-phase"},
};

static void validate_all(const char *topo, const int *Pv, int nP)
{
    static const int64_t vsizes[] = {1, 3, 7, 64, 1000};
    for (size_t ci = 0; ci < sizeof THESIS_VCASES / sizeof *THESIS_VCASES; ci++)
        for (int pi = 0; pi < nP; pi++)
            for (int si = 0; si < 5; si++)
                for (int st = 0; st < 2; st++) {
                    const vcase_t *c = &THESIS_VCASES[ci];
                    int P = Pv[pi];
                    char spec[160], opts[160];
                    snprintf(spec, sizeof spec, "alphabeta:topo=%s,p=%d,packet=16", topo, P);
                    snprintf(opts, sizeof opts, "%s%sstream=%d", c->opts ? c->opts : "",
                             c->opts ? "," : "", st);
                    if (!strcmp(c->coll, "broadcast"))
                        snprintf(opts, sizeof opts, "%s", "");
                    /* root= options beyond P do not apply: skip those */
                    const char *rp = c->opts ? strstr(c->opts, "root=") : NULL;
                    if (rp && atoi(rp + 5) >= P)
                        continue;
                    for (int root = 0; root < P; root += (P > 3 ? P / 3 : 1)) {
                        if (strcmp(c->coll, "reduce") && strcmp(c->coll, "broadcast") && root)
                            break;
                        h_run_t r = h_run(spec, c->coll, c->algo, P, vsizes[si], root,
                                          opts[0] ? opts : NULL, CS_NET_PACKET, 1);
                        cr_expect_eq(r.rc, CS_OK, "%s/%s [%s] on %s P=%d n=%lld root=%d: %s",
                                     c->coll, c->algo, opts, spec, P, (long long)vsizes[si], root,
                                     r.err.msg);
                        h_done(&r);
                    }
                }
}

Test(thesis, validate_complete)
{
    static const int Pv[] = {1, 2, 3, 5, 8, 13, 16};
    validate_all("complete", Pv, 7);
}

Test(thesis, validate_line)
{
    static const int Pv[] = {2, 5, 8};
    validate_all("line", Pv, 3);
}

/* ==== --validate of the machine papers' algorithms ============================ */

static const vcase_t PAPER_VCASES[] = {
    {"broadcast", "opt", NULL},
    {"broadcast", "simple", NULL},
    {"broadcast", "two-to-all", NULL},
    {"broadcast", "two-to-all", "opt=0"},
    {"broadcast", "two-phase", NULL},
    {"broadcast", "two-phase", "opt=0"},
    {"broadcast", "hybrid-segmented", NULL},
    {"broadcast", "hybrid-segmented", "opt=0"},
    {"reduce", "mailbox", NULL},
    {"reduce", "mailbox", "every=2"},
    {"allreduce", "rdb-barrier", NULL},
    {"allreduce", "rdb-barrier", "every=1"},
    {"allreduce", "hybrid-a", NULL},
    {"allreduce", "hybrid-a", "x=2"},
    {"allreduce", "hybrid-a", "x=3"},
    {"allreduce", "hybrid-b", NULL},
    {"allreduce", "hybrid-b", "x=2"},
    {"allreduce", "hybrid-b", "y=1"},
    {"allreduce", "hierarchical", NULL},
    {"allreduce", "hierarchical", "g=3"},
    {"allreduce", "hierarchical", "g=4,inter=rdb"},
    {"allreduce", "hierarchical", "par=1"},
    {"allgather", "hybrid", NULL},
    {"allgather", "hybrid", "x=2"},
    {"allgather", "hybrid", "y=1"},
    {"allgather", "cns-ring", NULL},
    {"allgather", "cns-ring", "stream=0"},
    {"allgather", "cns-two-way", NULL},
    {"allgather", "cns-two-way", "offset=0,stream=0"},
    {"barrier", "mailbox", NULL},
    {"barrier", "mailbox", "fanin=2"},
    {"barrier", "mailbox", "fanin=7"},
};
#define NPAPER_VCASES ((int)(sizeof PAPER_VCASES / sizeof *PAPER_VCASES))

static const int VPS[] = {SUITE_PS};
#define NVPS ((int)(sizeof VPS / sizeof *VPS))

/* Options out of range for P ranks are skipped (g > P, x > ceil(log2 P)+1). */
static int applicable(const vcase_t *c, int P)
{
    int g, x, lg = 0;
    while ((1 << lg) < P)
        lg++;
    if (c->opts && sscanf(c->opts, "g=%d", &g) == 1 && g > P)
        return 0;
    if (c->opts && sscanf(c->opts, "x=%d", &x) == 1 && x > lg + 1)
        return 0;
    return 1;
}

static int validate_case(const vcase_t *c, const cs_coll_hints_t *hints, int P, int64_t bytes,
                         int root, cs_net_mode_t mode)
{
    const cs_coll_algo_t *a;
    cs_coll_kind_t k;
    cs_error_t err;
    cr_assert_eq(cs_coll_parse(c->coll, &k, &err), CS_OK);
    cr_assert_eq(cs_coll_find(k, c->algo, &a, &err), CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo("alphabeta:topo=complete,p=100", a, P, bytes, root, c->opts, mode, 1,
                           hints);
    cr_expect_eq(r.rc, CS_OK, "%s/%s %s P=%d bytes=%lld root=%d %s%s: %s", c->coll, c->algo,
                 c->opts ? c->opts : "", P, (long long)bytes, root, cs_net_mode_name(mode),
                 hints ? " (hints)" : "", r.err.msg);
    h_done(&r);
    return 1;
}

Test(papers, validate_every_algorithm_over_P_sizes_and_roots, .timeout = 600)
{
    int runs = 0;
    for (int i = 0; i < NPAPER_VCASES; i++)
        for (int pi = 0; pi < NVPS; pi++) {
            int P = VPS[pi];
            int64_t sizes[] = {0, 1, P - 1 > 1 ? P - 1 : 2, 1000, 7 * (int64_t)P + 1};
            int roots[3], nr = f_roots_of(P, roots);
            int barrier = !strcmp(PAPER_VCASES[i].coll, "barrier");
            if (!applicable(&PAPER_VCASES[i], P))
                continue;
            for (int si = 0; si < (barrier ? 2 : 5); si++)
                for (int ri = 0; ri < (strcmp(PAPER_VCASES[i].coll, "broadcast") &&
                                               strcmp(PAPER_VCASES[i].coll, "reduce")
                                           ? 1
                                           : nr);
                     ri++)
                    runs += validate_case(&PAPER_VCASES[i], NULL, P, sizes[si], roots[ri],
                                          (si + ri) % 2 ? CS_NET_FLUID : CS_NET_PACKET);
        }
    printf("papers: %d validated runs\n", runs);
    cr_assert_gt(runs, 1000);
}

/* With hierarchy hints: the blade's two chips, interleaved groups
 * (rank r in group r % 3), uneven groups, one group, and a ring hint. */
Test(papers, validate_with_hints, .timeout = 600)
{
    int runs = 0;
    for (int pi = 0; pi < NVPS; pi++) {
        int P = VPS[pi];
        int32_t chips[100], inter[100], uneven[100], one[100], ring[100];
        cs_coll_hints_t hs[4];
        for (int r = 0; r < P; r++) {
            chips[r] = r < (P + 1) / 2 ? 0 : 1;
            inter[r] = r % 3;
            uneven[r] = r < 1 ? 0 : r < 4 ? 1 : 2 + (r % 2);
            one[r] = 0;
            ring[r] = (int32_t)((int64_t)(P - 1 - r) * (P % 3 ? 3 : 7) % P);
        }
        memset(hs, 0, sizeof hs);
        hs[0].group = chips;
        hs[0].ngroups = 2;
        hs[1].group = inter;
        hs[1].ngroups = 3;
        hs[2].group = uneven;
        hs[2].ngroups = 4; /* groups 2, 3 may be empty for small P */
        hs[3].group = one;
        hs[3].ngroups = 1;
        hs[3].ring = ring;
        for (int i = 0; i < NPAPER_VCASES; i++)
            for (int hi = 0; hi < 4; hi++) {
                int roots[3], nr = f_roots_of(P, roots);
                if (!applicable(&PAPER_VCASES[i], P))
                    continue;
                for (int ri = 0; ri < nr; ri++)
                    runs += validate_case(&PAPER_VCASES[i], &hs[hi], P,
                                          strcmp(PAPER_VCASES[i].coll, "barrier") ? 7 * P + 3 : 1,
                                          roots[ri], CS_NET_PACKET);
            }
    }
    printf("papers: %d validated runs with hints\n", runs);
    cr_assert_gt(runs, 1000);
}

/* ==== no_data: the same program without data descriptors ====================== */

/* A run that is not validated asks for no descriptors (cs_coll_args_t.no_data):
 * every algorithm must then emit the same ops and dependencies, only without
 * descriptors. */
Test(suite, no_data_changes_nothing_but_the_descriptors)
{
    int count, compared = 0;
    const cs_coll_algo_t *const *algos = cs_coll_algos(&count);
    cs_machine_t *m;
    cs_machine_hints_t mh;
    cs_error_t err;
    cr_assert_eq(cs_machine_new("alphabeta:topo=complete,p=8", &m, &err), CS_OK, "%s", err.msg);
    cs_machine_hints_init(&mh, m, 8, NULL);
    for (int i = 0; i < count; i++) {
        cs_program_t *p[2] = {NULL, NULL};
        int rc[2], described[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            cs_coll_args_t args = {algos[i]->kind, 8, 4096, 0, m->net.unit_bytes, &mh.coll,
                                   NULL, k};
            rc[k] = cs_coll_build(algos[i], &args, &p[k], &err);
        }
        cr_assert_eq(rc[1], rc[0], "%s/%s", cs_coll_name(algos[i]->kind), algos[i]->name);
        if (rc[0] == CS_OK) {
            cr_assert_eq(cs_program_nops(p[1]), cs_program_nops(p[0]), "%s", algos[i]->name);
            for (int32_t o = 0; o < cs_program_nops(p[0]); o++) {
                const cs_op_t *a = cs_program_op(p[0], o), *b = cs_program_op(p[1], o);
                int na, nb;
                const cs_dep_t *da = cs_program_preds(p[0], o, &na);
                const cs_dep_t *db = cs_program_preds(p[1], o, &nb);
                cr_assert(a->kind == b->kind && a->rank == b->rank && a->bytes == b->bytes &&
                              a->ticks == b->ticks && na == nb,
                          "%s op %d", algos[i]->name, o);
                for (int j = 0; j < na; j++)
                    cr_assert_eq(db[j], da[j], "%s op %d", algos[i]->name, o);
                for (int k = 0; k < 2; k++)
                    described[k] += cs_program_data(p[k], o) != NULL;
            }
            cr_assert_eq(described[1], 0, "%s", algos[i]->name);
            cr_assert(described[0] > 0 || cs_program_nops(p[0]) == 0, "%s", algos[i]->name);
            compared++;
        }
        cs_program_free(p[0]);
        cs_program_free(p[1]);
    }
    cr_assert_gt(compared, 40);
    cs_machine_hints_destroy(&mh);
    cs_machine_free(m);
}

/* Stall is the time during which at least one unit waited at a channel
 * (docs/figures.md), so no channel can stall longer than the run, nor a
 * bucket longer than its width.  The CNS-1 interface once summed the waits
 * of every message (a flat gather of 64 KiB on two rings stalled 981% of
 * the run on the root's link).  Every machine engine, in both modes of the
 * channel engine, on patterns that make many messages wait for one link;
 * at least the CNS-1 and packet runs must stall, so the bound is tested on
 * runs where it can fail. */
Test(stall, never_longer_than_the_run, .timeout = 600)
{
    static const struct {
        const char *spec;
        cs_net_mode_t mode;
        int must_stall;
    } ms[] = {
        {"cns1:rings=2", CS_NET_PACKET, 1},
        {"alphabeta:topo=torus,rows=4,cols=4,buf=1,packet=256B", CS_NET_PACKET, 1},
        {"alphabeta:topo=torus,rows=4,cols=4,buf=1,packet=256B", CS_NET_FLUID, 0},
        {"cerebras:rows=4,cols=4", CS_NET_PACKET, 0},
        {"groq:nodes=2", CS_NET_PACKET, 0},
        {"cell:chips=2", CS_NET_PACKET, 0},
        {"loggp:p=16", CS_NET_PACKET, 0},
    };
    static const char *const colls[][2] = {{"gather", "flat"}, {"alltoall", NULL},
                                           {"allreduce", "ring"}};
    for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
        cs_tick_t most = 0; /* the largest stall of the machine's runs */
        for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
            cs_machine_t *m;
            cs_error_t err;
            cs_machine_hints_t mh;
            cs_coll_kind_t kind;
            const cs_coll_algo_t *a;
            cs_program_t *p;
            cs_exec_env_t env;
            cs_exec_opts_t o;
            cs_exec_result_t res;
            cr_assert_eq(cs_machine_new(ms[mi].spec, &m, &err), CS_OK, "%s", err.msg);
            int P = cs_machine_nodes(m);
            cs_machine_hints_init(&mh, m, P, NULL);
            cr_assert_eq(cs_coll_parse(colls[ci][0], &kind, &err), CS_OK);
            cr_assert_eq(cs_coll_find(kind, colls[ci][1], &a, &err), CS_OK, "%s", err.msg);
            cs_coll_args_t args = {kind, P, 64 * 1024, 0, m->net.unit_bytes, &mh.coll, NULL, 0};
            cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s", err.msg);
            cs_machine_exec_env(m, &env);
            cs_exec_opts_default(&o);
            o.mode = ms[mi].mode;
            o.bucket_width = 1;
            o.max_buckets = 64;
            cr_assert_eq(cs_exec_run(&env, p, &o, &res, &err), CS_OK, "%s: %s", ms[mi].spec,
                         err.msg);
            cs_tick_t w = cs_net_bucket_width(res.net);
            int nb = cs_net_bucket_count(res.net);
            for (int c = 0; c < cs_topo_channels(m->topo); c++) {
                const cs_chan_stats_t *s = cs_net_chan_stats(res.net, c);
                if (!s)
                    continue;
                cr_assert_leq(s->stall, res.finish, "%s %s/%s channel %d: stall %lld > run %lld",
                              ms[mi].spec, colls[ci][0], a->name, c, (long long)s->stall,
                              (long long)res.finish);
                if (s->stall > most)
                    most = s->stall;
                for (int b = 0; b < nb; b++) {
                    const cs_chan_stats_t *bs = cs_net_chan_bucket(res.net, c, b);
                    if (bs)
                        cr_assert_leq(bs->stall, w, "%s %s channel %d bucket %d: stall %lld > "
                                      "width %lld", ms[mi].spec, colls[ci][0], c, b,
                                      (long long)bs->stall, (long long)w);
                }
            }
            cs_exec_result_destroy(&res);
            cs_program_free(p);
            cs_machine_hints_destroy(&mh);
            cs_machine_free(m);
        }
        cr_log_info("%s %s: largest stall %lld ticks", ms[mi].spec, cs_net_mode_name(ms[mi].mode),
                    (long long)most);
        if (ms[mi].must_stall)
            cr_assert_gt(most, 0, "%s: no run stalled, the bound was not tested", ms[mi].spec);
    }
}
