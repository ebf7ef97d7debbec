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
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define MACHINE "alphabeta:topo=complete,p=100"
#define MAX_REPORTED 40

static const int Ps[] = {1, 2, 3, 5, 7, 8, 13, 16, 64, 100};

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
        static const int hp[] = {7, 16, 100};
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
        if (d[i].op == pred)
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
