/*
 * proto.h - NCCL's protocols as a property of a message (issue 36):
 * Simple, LL and LL128 (NVIDIA/nccl, src/device/prims_*.h and
 * src/include/device.h).  A protocol changes the bytes a message puts on
 * the wire and the latency it pays besides the network's own:
 *   Simple  the data as it is; the receiver learns of it through a flag
 *           written after a fence (one more synchronisation per message)
 *   LL      8-byte stores of 4 data bytes and a 4-byte flag: twice the
 *           bytes, no fence
 *   LL128   128-byte lines of 120 data bytes and 8 of flag
 * CS_PROTO_NONE is collsim's own messages (every algorithm but NCCL's and
 * MSCCL's): the data, nothing more.
 */
#ifndef CS_PROTO_H
#define CS_PROTO_H

#include <stdint.h>

typedef enum cs_proto {
    CS_PROTO_NONE = 0, CS_PROTO_SIMPLE, CS_PROTO_LL, CS_PROTO_LL128, CS_PROTO_COUNT
} cs_proto_t;

/* "none", "Simple", "LL", "LL128" (NCCL's spelling). */
const char *cs_proto_name(cs_proto_t p);
/* Bytes on the wire for len data bytes. */
int64_t cs_proto_wire(cs_proto_t p, int64_t len);

#endif
