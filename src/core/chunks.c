/*
 * chunks.c - records in chunks that never move (see chunks.h).
 */
#include "core/chunks.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void cs_chunks_init(cs_chunks_t *c, size_t size, int shift)
{
    CS_ASSERT(shift >= 0 && shift < 40);
    memset(c, 0, sizeof *c);
    c->size = size;
    c->shift = shift;
    c->mask = ((int64_t)1 << shift) - 1;
    c->per = (int64_t)1 << shift;
}

void cs_chunks_init_flat(cs_chunks_t *c, size_t size, int64_t n)
{
    /* one chunk large enough for every index below 2^39 */
    cs_chunks_init(c, size, 39);
    c->chunk = cs_malloc(sizeof *c->chunk);
    c->chunk[0] = cs_calloc((size_t)(n > 0 ? n : 1), size);
    c->nchunks = c->live = 1;
    c->per = n > 0 ? n : 1;
}

void cs_chunks_free(cs_chunks_t *c)
{
    for (int64_t i = c->released; i < c->nchunks; i++)
        free(c->chunk[i]);
    free(c->chunk);
    c->chunk = NULL;
    c->nchunks = c->released = c->live = 0;
}

void *cs_chunks_ensure_slow(cs_chunks_t *c, int64_t i)
{
    int64_t k = i >> c->shift;
    CS_ASSERT(i >= 0 && k >= c->released);
    if (k >= c->nchunks) {
        int64_t n = c->nchunks ? c->nchunks : 16;
        while (n <= k)
            n *= 2;
        c->chunk = cs_realloc(c->chunk, (size_t)n * sizeof *c->chunk);
        memset(c->chunk + c->nchunks, 0, (size_t)(n - c->nchunks) * sizeof *c->chunk);
        c->nchunks = n;
    }
    if (!c->chunk[k]) {
        c->chunk[k] = cs_calloc((size_t)c->per, c->size);
        c->live++;
    }
    return cs_chunks_at(c, i);
}

void cs_chunks_release(cs_chunks_t *c, int64_t below)
{
    int64_t k = below >> c->shift; /* chunks below k lie wholly below `below` */
    if (k > c->nchunks)
        k = c->nchunks;
    for (; c->released < k; c->released++)
        if (c->chunk[c->released]) {
            free(c->chunk[c->released]);
            c->chunk[c->released] = NULL;
            c->live--;
        }
}

size_t cs_chunks_bytes(const cs_chunks_t *c)
{
    return (size_t)c->live * (size_t)c->per * c->size + (size_t)c->nchunks * sizeof *c->chunk;
}
