/*
 * proto.c - NCCL's protocols' wire bytes (proto.h).
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
