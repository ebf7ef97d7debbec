/*
 * net_internal.h - state shared by net.c (posting, ports, statistics) and
 * the two fidelity modes net_packet.c and net_fluid.c.  Not a public header:
 * only those three files include it.
 */
#ifndef CS_NET_INTERNAL_H
#define CS_NET_INTERNAL_H

#include "engine/net.h"

#define NIL32 UINT32_MAX
#define NIL64 UINT64_MAX

/* Packet mode: state of one message at one hop.  Units of a message stay in
 * order, so counts are enough: no per-unit objects exist. */
typedef struct hop_state {
    int32_t chan;
    uint8_t vc;
    uint8_t queued;   /* in the channel's wait queue */
    uint32_t ready;   /* units whose head reached this hop's input and wait */
    uint32_t sent;    /* units started on this hop */
    uint64_t next;    /* wait-queue link: (msg << 16 | hop) or NIL64 */
} hop_state_t;

enum msg_state { MSG_FREE, MSG_WAIT_PORTS, MSG_OVERHEAD, MSG_ACTIVE, MSG_FINISHING };

typedef struct msg {
    int32_t src, dst;
    int64_t bytes;
    int64_t gate;       /* bytes that may be injected */
    int64_t arrived;    /* bytes delivered at the destination */
    uint64_t user;
    uint64_t post_seq;
    int32_t nhops;
    uint8_t state;
    uint8_t watch;
    uint8_t local;      /* src == dst: a local copy, no ports, no overhead */
    cs_hop_t *path;     /* nhops entries (packet: unused, see hs) */
    /* port wait lists (doubly linked, by source and by destination) */
    uint32_t src_prev, src_next, dst_prev, dst_next;
    /* packet mode */
    hop_state_t *hs;    /* nhops entries */
    uint32_t npk;       /* units */
    uint32_t released;  /* units released at the source by the gate */
    uint32_t delivered; /* units delivered */
    /* fluid mode */
    double remaining;   /* bytes not yet across the bottleneck */
    double rate;        /* bytes per tick */
    cs_tick_t last;     /* time `remaining` was last brought up to date */
    uint64_t version;   /* invalidates scheduled fluid events */
    int64_t reported;   /* progress reported so far (watched flows) */
    uint32_t active_idx;/* index in the fluid active array */
    cs_tick_t t_start;  /* fluid: when the flow began */
    uint8_t frozen;     /* fluid: water-filling scratch */
    uint8_t fresh;      /* fluid: needs a step even if its rate is unchanged */
    uint32_t next_free;
} msg_t;

typedef struct chan_state {
    uint64_t wq_head, wq_tail; /* packet: waiting (msg, hop) */
    uint64_t cur;              /* packet: (msg, hop) on the wire */
    int32_t occ[2];            /* packet: downstream buffer use per vc */
    uint8_t busy, stalled;
    cs_tick_t stall_since;
    int32_t k_now;             /* messages currently wanting the channel */
    int64_t ser_num, ser_den;
    cs_tick_t wire;
    cs_tick_t ser_unit;        /* ser(unit_bytes), cached */
    /* fluid */
    double cap;                /* bytes per tick */
    double left;               /* water-filling scratch: capacity not yet given */
    int32_t nflows;            /* water-filling scratch: unfrozen flows through it */
    uint32_t fl_epoch;         /* water-filling scratch: last recomputation that used it */
    uint32_t fl_ver;           /* water-filling scratch: invalidates heap entries */
    uint32_t fl_first;         /* water-filling scratch: offset in the flow adjacency */
} chan_state_t;

struct cs_net {
    const cs_net_ops_t *ops; /* a machine's own engine, or NULL: this one */
    void *impl;
    cs_sim_t *sim;
    const cs_topo_t *topo;
    cs_net_params_t p;
    cs_net_mode_t mode;
    cs_net_hooks_t hooks;
    int nnodes, nchans;
    chan_state_t *ch;
    cs_chan_stats_t *stats;
    cs_chanrec_t *rec;         /* time buckets, or NULL */
    /* ports */
    int32_t *send_busy, *recv_busy;
    uint32_t *src_wait_head, *src_wait_tail, *dst_wait_head, *dst_wait_tail;
    /* messages */
    msg_t *msgs;
    uint32_t nmsgs, cap_msgs, free_head;
    int64_t active;
    uint64_t post_seq;
    cs_hop_t *route_buf;
    int max_route;
    /* handlers */
    uint32_t h_overhead, h_complete, h_head, h_free, h_deliver, h_fstep, h_frecompute,
        h_fprogress;
    /* fluid */
    uint32_t *fl_active;
    uint32_t fl_n, fl_cap;
    int fl_dirty;
    uint32_t fl_epoch;
    int32_t *fl_chans;         /* channels used by the current recomputation */
    uint32_t *fl_adj;          /* flows of each used channel (CSR by fl_first) */
    uint32_t *fl_fill;
    void *fl_heap;             /* (key, channel, version) min-heap */
    size_t fl_scratch_cap, fl_heap_cap;
};

static inline uint64_t hop_key(uint32_t m, uint32_t h) { return ((uint64_t)m << 16) | h; }
static inline uint32_t key_msg(uint64_t k) { return (uint32_t)(k >> 16); }
static inline uint32_t key_hop(uint64_t k) { return (uint32_t)(k & 0xffff); }

static inline cs_tick_t net_ser(const chan_state_t *c, int64_t bytes)
{
    /* ceil(bytes * num / den) without overflow for realistic sizes */
    __int128 x = (__int128)bytes * c->ser_num;
    return (cs_tick_t)((x + c->ser_den - 1) / c->ser_den);
}

/* net.c services for the modes */
/* Accounts `busy` ticks of transmission, `bytes` and `units` to a channel,
 * spread over [start, start + span) for the time buckets. */
static inline void cs_net_i_record(cs_net_t *n, int chan, cs_tick_t start, cs_tick_t span,
                                   cs_tick_t busy, int64_t bytes, int64_t units)
{
    cs_chan_stats_t *s = &n->stats[chan];
    s->bytes += bytes;
    s->units += units;
    s->busy += busy;
    if (n->rec)
        cs_chanrec_busy(n->rec, chan, start, span, busy, bytes, units);
}
void cs_net_i_record_stall(cs_net_t *n, int chan, cs_tick_t start, cs_tick_t dur);
void cs_net_i_k_change(cs_net_t *n, msg_t *m, int delta); /* all channels of the path */
void cs_net_i_k_dec(cs_net_t *n, int chan);
void cs_net_i_arrived(cs_net_t *n, uint32_t id, int64_t bytes_total, cs_tick_t now);

/* packet mode */
void cs_net_packet_init(cs_net_t *n);
void cs_net_packet_start(cs_net_t *n, uint32_t id);
void cs_net_packet_gate(cs_net_t *n, uint32_t id);
void cs_net_packet_explain(const cs_net_t *n, char *buf, size_t len);
/* fluid mode */
void cs_net_fluid_init(cs_net_t *n);
void cs_net_fluid_start(cs_net_t *n, uint32_t id);
void cs_net_fluid_gate(cs_net_t *n, uint32_t id);
void cs_net_fluid_free(cs_net_t *n);

#endif
