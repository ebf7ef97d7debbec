/*
 * core/hash.h - FNV-1a, 64 bits (Fowler, Noll and Vo; the offset basis and
 * prime of the published 64-bit variant): the hash of the network readers'
 * node-name tables (topo/netfile) and of a shard's identity (app/shard).
 * Fast on short keys and byte-by-byte, so the same bytes give the same
 * hash on every machine; not a defence against inputs made to collide.
 */
#ifndef CS_CORE_HASH_H
#define CS_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CS_FNV1A64_INIT 0xcbf29ce484222325ull

/* h extended by n bytes of data (start with CS_FNV1A64_INIT). */
static inline uint64_t cs_fnv1a64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* h extended by the bytes of a NUL-terminated string (without the NUL). */
static inline uint64_t cs_fnv1a64_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

#endif
