/*
 * suggest.h - "did you mean": the name nearest to a mistyped one, among the
 * names that were valid where it was looked up (commands, options, machine
 * types, spec keys, collectives, algorithms).
 *
 * A caller offers each valid name in turn to a cs_suggest_t and asks for
 * the best at the end, so any registry shape (a NULL-terminated list, a
 * table of structs, a filtered registry) can be searched without copying
 * it.  Nothing is allocated; the names offered must outlive the search.
 */
#ifndef CS_SUGGEST_H
#define CS_SUGGEST_H

#include <stddef.h>

/* A search in progress: the mistyped word and the nearest name so far. */
typedef struct cs_suggest {
    const char *word; /* what the user typed (borrowed) */
    const char *best; /* nearest candidate within the threshold, or NULL */
    int best_dist;    /* its distance */
    int limit;        /* the largest distance still offered (cs_suggest_limit) */
} cs_suggest_t;

/* The optimal-string-alignment distance (Damerau-Levenshtein restricted to
 * non-overlapping edits) between a and b: insertions, deletions,
 * substitutions and transpositions of two adjacent characters cost 1; ASCII
 * letters that differ only in case cost nothing.  Words longer than
 * CS_SUGGEST_MAX_LEN characters are compared on their first
 * CS_SUGGEST_MAX_LEN only (names are short; this bounds the work). */
#define CS_SUGGEST_MAX_LEN 63
int cs_suggest_distance(const char *a, const char *b);

/* The largest distance at which a candidate is still offered for a word of
 * `len` bytes: a third of its length, at most 3, and 0 below 3 characters
 * (one edit turns any two-letter word into many others). */
int cs_suggest_limit(size_t len);

/* Starts a search for `word` (NULL or "" finds nothing). */
void cs_suggest_init(cs_suggest_t *s, const char *word);
/* Offers one valid name (NULL is ignored).  The first of equally near
 * names wins, so the answer follows the caller's order: deterministic. */
void cs_suggest_add(cs_suggest_t *s, const char *candidate);
/* Offers every name of a NULL-terminated list (NULL: none). */
void cs_suggest_add_list(cs_suggest_t *s, const char *const *list);
/* The nearest name offered, or NULL when none was near enough. */
const char *cs_suggest_best(const cs_suggest_t *s);

/* The hint to put after the unknown name in an error message:
 * " (did you mean 'ring'?)" when the search found a name, else "", the name
 * between two `quote` strings (the quotes the message uses for names, "'"
 * or "\"").  Written into buf (always NUL-terminated) and returned. */
const char *cs_suggest_hint(const cs_suggest_t *s, const char *quote, char *buf, size_t len);

#endif
