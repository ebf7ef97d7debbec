/*
 * cell_eib.h - the Cell blade's network engine: the EIB of each chip, the
 * BIF between two chips and the paper's notification protocol (Ali,
 * Midkiff, Pai, ICS'09; reference/cell-blade.md §1-§2; docs/cell.md).
 *
 * Elements and rings.  Each chip has 12 ramps in ring order (PPE, SPE1,
 * SPE3, SPE5, SPE7, IOIF1, IOIF0/BIF, SPE6, SPE4, SPE2, SPE0, MIC) and four
 * 16-byte data rings, two clockwise and two counter-clockwise.  A packet
 * (at most 128 bytes, 8 beats of 16 bytes) is granted a ring in the
 * shorter direction (either at exactly 6 hops; never more), when its path
 * overlaps no transfer on that ring, the ring carries fewer than three, the
 * ring started nothing in the last three bus cycles, the chip's command bus
 * is free this bus cycle, and the source's on-ramp and the destination's
 * off-ramp are free.  It then holds all of them for its beats.
 *
 * BIF.  A packet between chips goes source -> BIF ramp (chip A's EIB), over
 * the BIF link (one per direction: bif_lat latency, bif_bw bandwidth, and
 * bif_gap once per command), then BIF ramp -> destination (chip B's EIB).
 *
 * Protocol.  Every DMA command (a put or a get of at most 16 KiB) takes
 * `issue` of its SPE's MFC (one command at a time) and `cmd` before its
 * first packet may be requested (plus bif_lat when it crosses chips).  A
 * message of at most `put_max` bytes is one put: data and notification
 * together.  A larger message: the sender puts its address (ADDR) into the
 * receiver's notification array; once the receiver has posted the matching
 * recv it gets the data (DMA get, 128-byte packets from the sender's
 * local store); the recv then completes and the receiver puts an ACK, whose
 * arrival completes the send.  notify=mailbox sends ADDR as two 32-bit
 * mailbox messages in sequence and the ACK as one, into a 4-entry inbound
 * FIFO that an SPE empties when it reads it (reading an ADDR pair as its
 * recv is posted, an ACK as it arrives); a write into a full mailbox loses
 * that newest entry and the run stops with an error.  notify=signal delivers
 * barrier tokens through the signal-notification registers in OR mode:
 * never lost, but the receiving SPU spends signal_read on each (the paper's
 * "extra control and computation code, such as the OR operation").
 */
#ifndef CS_CELL_EIB_H
#define CS_CELL_EIB_H

#include "engine/net.h"
#include "core/sim.h"
#include "topo/topo.h"

typedef enum cs_cell_notify { CS_CELL_LS = 0, CS_CELL_MAILBOX = 1, CS_CELL_SIGNAL = 2 } cs_cell_notify_t;

typedef struct cs_cell_params {
    int chips;               /* 1 or 2 */
    cs_tick_t issue;         /* MFC command issue, per command */
    cs_tick_t cmd;           /* command phase before a command's first packet */
    cs_tick_t bus;           /* one bus cycle (a beat) */
    cs_tick_t hop;           /* extra latency per ring hop */
    cs_tick_t bif_lat;       /* BIF latency, each crossing */
    int64_t bif_num, bif_den;/* BIF: ceil(bytes * num / den) ticks per packet, */
    cs_tick_t bif_gap;       /* plus bif_gap once per command that crosses */
    int put_max;             /* largest message sent as a single put */
    cs_cell_notify_t notify;
    int mailbox_depth;       /* inbound mailbox entries (4) */
    cs_tick_t signal_read;   /* notify=signal: SPU time to take one signal */
} cs_cell_params_t;

/* The topology node of ring position pos (0..11, EIB order) on chip ch:
 * SPEs are nodes 0..8*chips-1 (their physical ids), then each chip's PPE,
 * IOIF1, BIF and MIC.  The machine builds its topology with it. */
int cs_cell_ramp_node(int chips, int ch, int pos);

int cs_cell_eib_new(const cs_cell_params_t *cp, const cs_topo_t *topo, cs_sim_t *sim,
                    const cs_net_hooks_t *hooks, cs_net_t **out, cs_error_t *err);

/* Data messages (DMA gets, or puts of data) that crossed the BIF, in the
 * order they started: sender, receiver, bytes, start tick.  Returns the
 * count; *list points into the engine (valid until it is freed). */
typedef struct cs_cell_crossing {
    int32_t src, dst;
    int64_t bytes;
    cs_tick_t start;
} cs_cell_crossing_t;
/* The accessors here read the EIB's state through cs_net_impl_of: on another
 * engine (or NULL) they return 0 (crossings: an empty list). */
int cs_cell_eib_crossings(const cs_net_t *n, const cs_cell_crossing_t **list);
/* Gets the engine started before their recv was posted, because nothing
 * else could move (a program that posts recvs after its sends complete). */
int64_t cs_cell_eib_late_gets(const cs_net_t *n);
/* Most EIB transfers in flight at once on one chip (all four rings). */
int cs_cell_eib_peak_transfers(const cs_net_t *n);
/* Most data commands (DMA gets) under way at once on one chip: past their
 * command phase, their data not all in; a crossing counts on both chips. */
int cs_cell_eib_peak_data_transfers(const cs_net_t *n);

#endif
