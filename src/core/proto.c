/*
 * proto.c - NCCL's protocols' wire bytes and latencies (proto.h; NCCL
 * 2.30.7-1, src/include/device.h for the line formats, src/graph/tuning.cc
 * for the latencies).
 */
#include "core/proto.h"

const char *cs_proto_name(cs_proto_t p)
{
    static const char *const names[CS_PROTO_COUNT] = {"none", "Simple", "LL", "LL128"};
    return (unsigned)p < CS_PROTO_COUNT ? names[p] : "?";
}

int64_t cs_proto_wire(cs_proto_t p, int64_t len)
{
    switch (p) {
    case CS_PROTO_LL:    /* a 4-byte flag beside every 4 data bytes */
        return 2 * len;
    case CS_PROTO_LL128: /* 120 data bytes a 128-byte line, the last line whole */
        return (len + 119) / 120 * 128;
    default:
        return len;
    }
}

/* len and part are below 2^49 (the executor's CS_BYTES_MAX), the wire
 * below 2^50: the products fit in 128 bits. */
int64_t cs_proto_to_wire(cs_proto_t p, int64_t len, int64_t part)
{
    int64_t wire = cs_proto_wire(p, len);
    if (part >= len || wire == len)
        return part >= len ? wire : part;
    return part <= 0 ? 0 : (int64_t)((__int128)part * wire / len);
}

int64_t cs_proto_to_data(cs_proto_t p, int64_t len, int64_t wpart)
{
    int64_t wire = cs_proto_wire(p, len);
    if (wpart >= wire || wire == len)
        return wpart >= wire ? len : wpart;
    return wpart <= 0 ? 0 : (int64_t)((__int128)wpart * len / wire);
}

double cs_proto_lat_default(cs_proto_t p)
{
    /* hwLatencies[NCCL_HW_NVLINK][NCCL_ALGO_RING] = {LL, LL128, Simple} */
    switch (p) {
    case CS_PROTO_SIMPLE: return 3.4e-6;
    case CS_PROTO_LL:     return 0.6e-6;
    case CS_PROTO_LL128:  return 1.9e-6;
    default:              return 0;
    }
}
