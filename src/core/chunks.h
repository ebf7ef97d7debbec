/*
 * chunks.h - an array of fixed-size records kept in chunks of 2^shift
 * records, so that records never move when the array grows and a prefix
 * of it can be given back.  It is what lets a program be run while it is
 * built (issue 17, windowed programs): the builder appends ops while the
 * executor holds pointers to older ones, and the memory of the ops that
 * are done is released chunk by chunk, so that a run's memory follows the
 * ops in flight rather than the program's length.
 *
 * A flat array is the special case of one chunk (cs_chunks_init_flat), so
 * that owners that may be either way have one access path.  The struct is
 * public for the inline accessor on the hot path.
 */
#ifndef CS_CHUNKS_H
#define CS_CHUNKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_chunks {
    char **chunk;     /* chunk i holds records [i << shift, (i + 1) << shift) */
    size_t size;      /* bytes per record */
    int shift;
    int64_t mask;     /* (1 << shift) - 1 */
    int64_t nchunks;  /* slots in `chunk` */
    int64_t released; /* chunks below this were given back (NULL) */
    int64_t live;     /* chunks allocated now */
    int64_t per;      /* records a chunk holds */
} cs_chunks_t;

/* Chunks of 2^shift records of `size` bytes; nothing is allocated yet. */
void cs_chunks_init(cs_chunks_t *c, size_t size, int shift);
/* One zeroed chunk of n records (n >= 0): a flat array. */
void cs_chunks_init_flat(cs_chunks_t *c, size_t size, int64_t n);
void cs_chunks_free(cs_chunks_t *c); /* accepts a zeroed struct */
/* Record i, its chunk allocated (zeroed) if it is not yet.  i must not lie
 * in a released chunk.  (Inline when the chunk exists: a window calls it
 * for every op and dependency.) */
void *cs_chunks_ensure_slow(cs_chunks_t *c, int64_t i);
static inline void *cs_chunks_ensure(cs_chunks_t *c, int64_t i)
{
    int64_t k = i >> c->shift;
    if (i >= 0 && k >= c->released && k < c->nchunks && c->chunk[k])
        return c->chunk[k] + (size_t)(i & c->mask) * c->size;
    return cs_chunks_ensure_slow(c, i);
}
/* Gives back the chunks whose records all lie below `below`. */
void cs_chunks_release(cs_chunks_t *c, int64_t below);
/* Bytes held: the chunks allocated now and the chunk table. */
size_t cs_chunks_bytes(const cs_chunks_t *c);

/* Record i of an allocated chunk. */
static inline void *cs_chunks_at(const cs_chunks_t *c, int64_t i)
{
    return c->chunk[i >> c->shift] + (size_t)(i & c->mask) * c->size;
}

#endif
