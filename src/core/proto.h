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
 *
 * A send or mcast op carries its protocol (cs_op_t.proto, set by the
 * builder after cs_nccl_begin); its `bytes` stay the payload, which recvs
 * match and --validate tracks.  The executor hands the engine
 * cs_proto_wire(proto, bytes) and starts the message cs_proto_lat_default
 * later (or the program's own value, cs_program_set_proto_lat), so every
 * engine pays the protocol without knowing of it (docs/nccl.md,
 * "Protocols").
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
/* The wire bytes of a message of `len` data bytes of which `part` may go
 * now, proportionally (part * wire / len, rounded down; wire when part >=
 * len): a stream's gate in wire bytes.  And back: the data bytes that
 * `wpart` wire bytes of the message carry (rounded down; len when wpart >=
 * wire).  Both exact at the ends, monotonic in between. */
int64_t cs_proto_to_wire(cs_proto_t p, int64_t len, int64_t part);
int64_t cs_proto_to_data(cs_proto_t p, int64_t len, int64_t wpart);
/* The latency a message of the protocol pays before it enters the
 * network, in seconds: NCCL 2.30.7's hwLat for an NVLink ring
 * (src/graph/tuning.cc, hwLatencies[NCCL_HW_NVLINK][NCCL_ALGO_RING]):
 * LL 0.6 us, LL128 1.9 us, Simple 3.4 us; none 0.  A program may set its
 * own (cs_program_set_proto_lat; the algorithms' proto_lat=TIME). */
double cs_proto_lat_default(cs_proto_t p);

#endif
