/*
 * pool.h - a pool of fixed-size records addressed by index, with a free
 * list, so that a simulation's per-message (or per-stream) records are
 * reused and their memory follows what is in flight rather than everything
 * a run ever created (issue 17).  A free record's first 4 bytes hold the
 * next free index, so records must be at least 4 bytes and a freed record's
 * first 4 bytes are not kept.  Indices stay valid across growth; pointers
 * (cs_pool_at, cs_pool_items) do not.
 *
 * The struct is public so that owners embed it by value and reach records
 * through a typed pointer to `items` on their hot path.
 */
#ifndef CS_POOL_H
#define CS_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_pool {
    char *items;
    size_t size;       /* bytes per record */
    int32_t used;      /* records ever handed out (free ones included) */
    int32_t cap, free_head;
} cs_pool_t;

void cs_pool_init(cs_pool_t *p, size_t size);
void cs_pool_free(cs_pool_t *p); /* releases the memory; init again to reuse */
/* A zeroed record: a free one if any, else a new one at the end. */
int32_t cs_pool_get(cs_pool_t *p);
/* A zeroed record at the end, never a free one: for owners that scan their
 * records in the order they were taken. */
int32_t cs_pool_append(cs_pool_t *p);
/* Gives record i back (its first 4 bytes become the free link). */
void cs_pool_put(cs_pool_t *p, int32_t i);

static inline void *cs_pool_at(const cs_pool_t *p, int32_t i)
{
    return p->items + (size_t)i * p->size;
}

#endif
