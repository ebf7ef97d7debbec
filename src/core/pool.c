/*
 * pool.c - records reused through a free list (see pool.h).
 */
#include "core/pool.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define POOL_NONE (-1)

void cs_pool_init(cs_pool_t *p, size_t size)
{
    CS_ASSERT(size >= sizeof(int32_t));
    memset(p, 0, sizeof *p);
    p->size = size;
    p->free_head = POOL_NONE;
}

void cs_pool_free(cs_pool_t *p)
{
    free(p->items);
    p->items = NULL;
    p->used = p->cap = 0;
    p->free_head = POOL_NONE;
}

int32_t cs_pool_append(cs_pool_t *p)
{
    if (p->used == p->cap) {
        CS_ASSERT(p->cap < INT32_MAX / 2);
        p->cap = p->cap ? p->cap * 2 : 256;
        p->items = cs_realloc(p->items, (size_t)p->cap * p->size);
    }
    int32_t i = p->used++;
    memset(cs_pool_at(p, i), 0, p->size);
    return i;
}

int32_t cs_pool_get(cs_pool_t *p)
{
    int32_t i = p->free_head;
    if (i == POOL_NONE)
        return cs_pool_append(p);
    memcpy(&p->free_head, cs_pool_at(p, i), sizeof p->free_head);
    memset(cs_pool_at(p, i), 0, p->size);
    return i;
}

void cs_pool_put(cs_pool_t *p, int32_t i)
{
    memcpy(cs_pool_at(p, i), &p->free_head, sizeof p->free_head);
    p->free_head = i;
}
