/*
 * test_fold.c - where the extra ranks of a non-power of two fold (option
 * fold=near|far, cs_coll_fold_t in src/coll/coll_internal.h; issue 33):
 * near is MPICH's rule (rank 2i+1 onto 2i, Thakur, Rabenseifner, Gropp
 * 2005), far the rule of Open MPI's coll/base recursive-doubling barrier
 * (rank Pp+i onto i).
 *
 *   - every algorithm that folds validates (--validate's checker: every rank
 *     ends with the right data, every contribution once) for P = 2..33 under
 *     both rules, at sizes that do and do not divide evenly;
 *   - with P a power of two nothing folds: both rules give the same time;
 *   - on a symmetric machine (alphabeta, complete graph) the rules differ
 *     only in who talks to whom, so the rdb barrier's time is the same
 *     formula under both: (log2 Pp + 2)(alpha + beta) for P not a power of
 *     two, log2 P (alpha + beta) else;
 *   - a value other than near / far is refused, naming the key, with a
 *     did-you-mean when one is close; fold= where it means nothing
 *     (hierarchical with inter=direct) is reported as unused.
 *
 * Which ranks cross the Cell blade's BIF under each rule is checked in
 * tests/machines/test_cell.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "formulas.h"
#include "harness.h"

#define SPEC "alphabeta:topo=complete,p=33"

typedef struct folder {
    const char *coll, *algo, *extra; /* extra options, or NULL */
    int rooted;
} folder_t;

/* Every algorithm that folds extra ranks (grep cs_coll_fold_rule). */
static const folder_t FOLDERS[] = {
    {"barrier", "rdb", NULL, 0},
    {"allreduce", "rdb", NULL, 0},
    {"allreduce", "rabenseifner", NULL, 0},
    {"allreduce", "rdb-barrier", NULL, 0},
    {"allreduce", "hybrid-b", NULL, 0},
    {"allreduce", "hierarchical", "inter=rdb,g=2", 0},
    {"allgather", "rdb", NULL, 0},
    {"reduce-scatter", "recursive-halving", NULL, 0},
    {"reduce", "rabenseifner", NULL, 1},
};
#define NFOLDERS (sizeof FOLDERS / sizeof FOLDERS[0])

static void opts_for(const folder_t *f, const char *rule, char *buf, size_t n)
{
    snprintf(buf, n, "fold=%s%s%s", rule, f->extra ? "," : "", f->extra ? f->extra : "");
}

Test(fold, every_folding_algorithm_validates_for_P_2_to_33_under_both_rules)
{
    static const char *const rules[] = {"near", "far"};
    /* 1 byte: most pieces and blocks empty; 77: uneven splits */
    static const int64_t sizes[] = {1, 77};
    int runs = 0;
    for (size_t i = 0; i < NFOLDERS; i++)
        for (int P = 2; P <= 33; P++)
            for (int k = 0; k < 2; k++)
                for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
                    const folder_t *f = &FOLDERS[i];
                    char opts[128];
                    /* a root inside the folded ranks and one beyond them */
                    int roots[2] = {P / 3, P - 1}, nroots = f->rooted ? 2 : 1;
                    opts_for(f, rules[k], opts, sizeof opts);
                    for (int q = 0; q < nroots; q++) {
                        h_run_t r = h_run(SPEC, f->coll, f->algo, P, sizes[s],
                                          f->rooted ? roots[q] : 0, opts, CS_NET_PACKET, 1);
                        cr_expect_eq(r.rc, CS_OK, "%s/%s P=%d %s %lld B root %d: %s", f->coll,
                                     f->algo, P, opts, (long long)sizes[s],
                                     f->rooted ? roots[q] : 0, r.err.msg);
                        h_done(&r);
                        runs++;
                    }
                }
    /* 8 unrooted algorithms, Rabenseifner's reduce at two roots */
    cr_expect_eq(runs, (8 + 2) * 32 * 2 * 2);
}

Test(fold, powers_of_two_fold_nothing)
{
    for (size_t i = 0; i < NFOLDERS; i++)
        for (int P = 2; P <= 32; P *= 2) {
            const folder_t *f = &FOLDERS[i];
            char near[128], far[128];
            opts_for(f, "near", near, sizeof near);
            opts_for(f, "far", far, sizeof far);
            cr_expect_eq(h_time(SPEC, f->coll, f->algo, P, 96, 0, near, CS_NET_PACKET),
                         h_time(SPEC, f->coll, f->algo, P, 96, 0, far, CS_NET_PACKET),
                         "%s/%s P=%d", f->coll, f->algo, P);
        }
}

Test(fold, rdb_time_is_the_same_formula_under_both_rules)
{
    static const char *const opts[] = {"fold=near", "fold=far"};
    for (size_t a = 0; a < NSYM_ABS; a++)
        for (int P = 2; P <= 33; P++) {
            const sym_ab_t *p = &SYM_ABS[a];
            int Lf = 0, n = 800;
            while ((2 << Lf) <= P)
                Lf++;
            /* the fold's two rounds only when something folds */
            int L = Lf + ((P & (P - 1)) ? 2 : 0);
            for (int k = 0; k < 2; k++) {
                sym_expect_time("barrier", "rdb", opts[k], P, 0, p, L * (sym_A(p) + sym_B(p)));
                sym_expect_time("allreduce", "rdb", opts[k], P, n, p,
                                L * (sym_A(p) + sym_B(p) * n));
            }
        }
}

Test(fold, bad_values_are_refused_naming_the_key)
{
    h_run_t r = h_run(SPEC, "barrier", "rdb", 15, 0, 0, "fold=nera", CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "'fold'") && strstr(r.err.msg, "did you mean \"near\""), "%s",
              r.err.msg);
    h_done(&r);
    r = h_run(SPEC, "allgather", "rdb", 15, 8, 0, "fold=sideways", CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "'fold'") && strstr(r.err.msg, "near, far"), "%s", r.err.msg);
    h_done(&r);
    /* hierarchical folds only with inter=rdb */
    r = h_run(SPEC, "allreduce", "hierarchical", 15, 8, 0, "fold=far", CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "'fold'") && strstr(r.err.msg, "not used"), "%s", r.err.msg);
    h_done(&r);
    /* an algorithm that does not fold has no such key */
    r = h_run(SPEC, "barrier", "dissemination", 15, 0, 0, "fold=far", CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "fold") != NULL, "%s", r.err.msg);
    h_done(&r);
}
