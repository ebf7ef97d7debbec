/*
 * suggest.c - the nearest valid name to a mistyped one (suggest.h).
 *
 * The distance is the optimal string alignment variant of the
 * Damerau-Levenshtein distance (Damerau 1964, "A technique for computer
 * detection and correction of spelling errors"; the restricted form as in
 * Boytsov 2011, "Indexing methods for approximate dictionary searching"),
 * the one most spell checkers and git's "did you mean" use: a swapped pair
 * of letters ("rnu" for "run", "mahcine" for "machine") is one edit, as a
 * typist makes it.  Three rows of a small fixed matrix suffice; names
 * are short, so the cost is nothing next to the error it decorates.
 *
 * The threshold scales with the word: a third of its length, so that "rign"
 * finds "ring" (1 edit of 4) but "zz" finds nothing rather than any
 * two-letter key.
 */
#include "core/suggest.h"

#include <stdio.h>
#include <string.h>

static int fold(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int min3(int a, int b, int c)
{
    int m = a < b ? a : b;
    return m < c ? m : c;
}

int cs_suggest_distance(const char *a, const char *b)
{
    /* rows i-2, i-1 and i of the (len(a)+1) x (len(b)+1) matrix */
    int r0[CS_SUGGEST_MAX_LEN + 1], r1[CS_SUGGEST_MAX_LEN + 1], r2[CS_SUGGEST_MAX_LEN + 1];
    int *pp = r0, *prev = r1, *cur = r2;
    size_t n = a ? strlen(a) : 0, m = b ? strlen(b) : 0;
    if (n > CS_SUGGEST_MAX_LEN)
        n = CS_SUGGEST_MAX_LEN;
    if (m > CS_SUGGEST_MAX_LEN)
        m = CS_SUGGEST_MAX_LEN;
    for (size_t j = 0; j <= m; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int cost = fold((unsigned char)a[i - 1]) != fold((unsigned char)b[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j - 2]) &&
                fold((unsigned char)a[i - 2]) == fold((unsigned char)b[j - 1]) &&
                pp[j - 2] + 1 < cur[j])
                cur[j] = pp[j - 2] + 1;
        }
        int *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[m];
}

int cs_suggest_limit(size_t len)
{
    if (len < 3)
        return 0;
    return len / 3 > 3 ? 3 : (int)(len / 3);
}

void cs_suggest_init(cs_suggest_t *s, const char *word)
{
    s->word = word;
    s->best = NULL;
    s->best_dist = 0;
    s->limit = word ? cs_suggest_limit(strlen(word)) : 0;
}

void cs_suggest_add(cs_suggest_t *s, const char *candidate)
{
    if (!s->word || !s->word[0] || !candidate || !candidate[0])
        return;
    /* the word itself is no suggestion (a valid name refused for another
     * reason, or offered twice) */
    if (strcmp(s->word, candidate) == 0)
        return;
    int d = cs_suggest_distance(s->word, candidate);
    /* a candidate no longer than the edits would be a guess, not a fix */
    if (d > s->limit || (size_t)d >= strlen(candidate))
        return;
    if (!s->best || d < s->best_dist) {
        s->best = candidate;
        s->best_dist = d;
    }
}

void cs_suggest_add_list(cs_suggest_t *s, const char *const *list)
{
    for (int i = 0; list && list[i]; i++)
        cs_suggest_add(s, list[i]);
}

const char *cs_suggest_best(const cs_suggest_t *s)
{
    return s->best;
}

const char *cs_suggest_hint(const cs_suggest_t *s, const char *quote, char *buf, size_t len)
{
    if (!len)
        return buf;
    buf[0] = '\0';
    if (s->best)
        snprintf(buf, len, " (did you mean %s%s%s?)", quote, s->best, quote);
    return buf;
}
