/*
 * test_suggest.c - the "did you mean" module (core/suggest.h): the
 * distance against hand-computed values and against its definition written
 * as a plain recursion (an independent reference on random short words),
 * the length-scaled threshold, and the choice among candidates.
 */
#include "core/suggest.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* The optimal string alignment distance by its recursive definition
 * (Boytsov 2011, eq. for the restricted edit distance): exponential, fine
 * for words of up to six letters. */
static int osa_ref(const char *a, int i, const char *b, int j)
{
    if (i == 0)
        return j;
    if (j == 0)
        return i;
    int best = osa_ref(a, i - 1, b, j) + 1;
    int ins = osa_ref(a, i, b, j - 1) + 1;
    int sub = osa_ref(a, i - 1, b, j - 1) + (a[i - 1] != b[j - 1]);
    if (ins < best)
        best = ins;
    if (sub < best)
        best = sub;
    if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        int tr = osa_ref(a, i - 2, b, j - 2) + 1;
        if (tr < best)
            best = tr;
    }
    return best;
}

Test(suggest, distance_hand_values)
{
    cr_assert_eq(cs_suggest_distance("kitten", "sitting"), 3);
    cr_assert_eq(cs_suggest_distance("rnu", "run"), 1);         /* one swap */
    cr_assert_eq(cs_suggest_distance("mahcine", "machine"), 1);
    cr_assert_eq(cs_suggest_distance("rign", "ring"), 1);
    cr_assert_eq(cs_suggest_distance("", "abc"), 3);
    cr_assert_eq(cs_suggest_distance("abc", ""), 3);
    cr_assert_eq(cs_suggest_distance("same", "same"), 0);
    cr_assert_eq(cs_suggest_distance("RING", "ring"), 0);       /* case is free */
    /* "ca" -> "abc": 3 in the restricted form (2 in unrestricted
     * Damerau-Levenshtein): a swapped pair is not edited again */
    cr_assert_eq(cs_suggest_distance("ca", "abc"), 3);
}

Test(suggest, distance_matches_the_definition)
{
    unsigned seed = 12345;
    char a[7], b[7];
    for (int t = 0; t < 3000; t++) {
        int la = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 7;
        int lb = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 7;
        for (int i = 0; i < la; i++)
            a[i] = (char)('a' + ((seed = seed * 1103515245u + 12345u) >> 16) % 3);
        for (int i = 0; i < lb; i++)
            b[i] = (char)('a' + ((seed = seed * 1103515245u + 12345u) >> 16) % 3);
        a[la] = b[lb] = '\0';
        cr_assert_eq(cs_suggest_distance(a, b), osa_ref(a, la, b, lb), "\"%s\" vs \"%s\"", a, b);
    }
}

Test(suggest, long_words_are_cut_not_overrun)
{
    char a[200], b[200];
    memset(a, 'x', sizeof a - 1);
    memset(b, 'x', sizeof b - 1);
    a[199] = b[199] = '\0';
    b[10] = 'y';
    cr_assert_eq(cs_suggest_distance(a, b), 1);
    b[150] = 'z'; /* beyond the compared prefix */
    cr_assert_eq(cs_suggest_distance(a, b), 1);
}

Test(suggest, limit_scales_with_length)
{
    cr_assert_eq(cs_suggest_limit(1), 0);
    cr_assert_eq(cs_suggest_limit(2), 0);
    cr_assert_eq(cs_suggest_limit(3), 1);
    cr_assert_eq(cs_suggest_limit(5), 1);
    cr_assert_eq(cs_suggest_limit(6), 2);
    cr_assert_eq(cs_suggest_limit(9), 3);
    cr_assert_eq(cs_suggest_limit(40), 3);
}

Test(suggest, nearest_first_and_none_when_far)
{
    static const char *const cmds[] = {"run", "topo", "list", "sweep", "compare", NULL};
    cs_suggest_t s;
    cs_suggest_init(&s, "rnu");
    cs_suggest_add_list(&s, cmds);
    cr_assert_str_eq(cs_suggest_best(&s), "run");

    cs_suggest_init(&s, "comprae");
    cs_suggest_add_list(&s, cmds);
    cr_assert_str_eq(cs_suggest_best(&s), "compare");

    cs_suggest_init(&s, "nosuchcommand");
    cs_suggest_add_list(&s, cmds);
    cr_assert_null(cs_suggest_best(&s));

    /* two letters: only a case difference is offered */
    cs_suggest_init(&s, "zz");
    cs_suggest_add(&s, "z");
    cs_suggest_add(&s, "zy");
    cr_assert_null(cs_suggest_best(&s));
    cs_suggest_init(&s, "S");
    cs_suggest_add(&s, "p");
    cs_suggest_add(&s, "s");
    cr_assert_str_eq(cs_suggest_best(&s), "s");

    /* the word itself is not a suggestion; ties go to the first offered */
    cs_suggest_init(&s, "ring");
    cs_suggest_add(&s, "ring");
    cr_assert_null(cs_suggest_best(&s));
    cs_suggest_init(&s, "abcd");
    cs_suggest_add(&s, "abce");
    cs_suggest_add(&s, "abcf");
    cr_assert_str_eq(cs_suggest_best(&s), "abce");
    cs_suggest_add(&s, "abcd "); /* nearer (1 insertion, same as above): no change */
    cr_assert_str_eq(cs_suggest_best(&s), "abce");
    cs_suggest_add(&s, "ABCD"); /* distance 0 */
    cr_assert_str_eq(cs_suggest_best(&s), "ABCD");
}

Test(suggest, hint_text)
{
    cs_suggest_t s;
    char buf[64];
    cs_suggest_init(&s, "torsu");
    cs_suggest_add(&s, "torus");
    cr_assert_str_eq(cs_suggest_hint(&s, "'", buf, sizeof buf), " (did you mean 'torus'?)");
    cs_suggest_init(&s, "xyzzy");
    cs_suggest_add(&s, "torus");
    cr_assert_str_eq(cs_suggest_hint(&s, "'", buf, sizeof buf), "");
    cs_suggest_init(&s, NULL);
    cs_suggest_add(&s, "torus");
    cr_assert_null(cs_suggest_best(&s));
}
