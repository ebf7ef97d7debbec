/*
 * groq.h - the Groq Dragonfly of tensor streaming processors (Abts et al.,
 * "A Software-defined Tensor Streaming Multiprocessor for Large-scale
 * Machine Learning", ISCA'22; reference/groq-dragonfly.md; docs/groq.md).
 *
 *   groq:nodes=N    N <= 33 nodes of 8 TSPs, one link per node pair (264 TSPs)
 *   groq:racks=R    R <= 145 racks of 9 nodes (10,440 TSPs)
 *
 * This header is the wiring: TSP numbering, the port assignment rule, the
 * channel of every link, minimal and non-minimal source routes.  The
 * scheduler that places vectors on links (groq_sched.c) and the tests use
 * it; algorithms never do.
 *
 * Numbering.  TSP t of node n is TSP 8n + t; node j of rack A is node
 * 9A + j (racks mode).  Links are added class by class, so that link ids
 * (and channels 2l, 2l+1) follow from the endpoints:
 *   intra-node  28 per node (the K8), pair a < b of node n: l = 28n + pair(a, b);
 *   nodes mode  inter-node: pair G < H: l = 28N + pair(G, H) over N nodes;
 *   racks mode  intra-rack: 72 per rack, node pair j < j' of rack A, copy c:
 *               l = 28*9R + 72A + 2*pair(j, j') + c;
 *               inter-rack: pair A < B: l = 28*9R + 72R + pair(A, B) over R racks.
 * Channel 2l leaves the lower-numbered end (the lower node or rack).
 *
 * Port assignment (the paper gives none; docs/groq.md):
 *   nodes mode  global port k = 4t + m (k = 0..31) of node G is TSP t's port
 *               m and leads to node (G + k + 1) mod 33; node H = G + k + 1
 *               reaches back on its port 31 - k.  Each pair once.
 *   racks mode  each TSP has 2 intra-rack and 2 inter-rack ports.  Intra-rack
 *               port j = 2t + m (j = 0..15) of node n leads to node
 *               (n + (j mod 8) + 1) mod 9 as copy j / 8 (each node pair twice,
 *               the two copies on different TSPs); inter-rack port k = 2q + m
 *               (k = 0..143) of rack A, q = 8*node + t the TSP's index in the
 *               rack, leads to rack (A + k + 1) mod 145 (each pair once).
 *   With fewer nodes or racks, ports that would lead outside stay unused.
 */
#ifndef CS_GROQ_H
#define CS_GROQ_H

#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/sim.h"
#include "core/source.h"
#include "topo/topo.h"

#define CS_GROQ_NODE_TSPS 8     /* a = 8 TSPs per node (K8) */
#define CS_GROQ_RACK_NODES 9    /* nodes per rack */
#define CS_GROQ_MAX_NODES 33    /* g = a*h + 1 = 8*4 + 1 */
#define CS_GROQ_MAX_RACKS 145   /* g = a*h + 1 = 72*2 + 1 */
#define CS_GROQ_MAX_ROUTE 7     /* hops of a minimal route (racks mode) */
#define CS_GROQ_MAX_PATH 16     /* hops of any candidate path */

/* One placement of an explicit schedule (a line of a schedule file): vector
 * `vec` of network message `msg` (messages numbered 0, 1, ... in the order
 * the run posts them) starts on channel `chan` at tick `start`. */
typedef struct cs_groq_slot {
    int64_t msg, vec;
    int32_t chan;
    int32_t line;      /* line in the file, for messages */
    int64_t start;     /* ticks */
} cs_groq_slot_t;

typedef struct cs_groq {
    int racks;               /* racks mode: racks; 0 in nodes mode */
    int nodes;               /* nodes of 8 TSPs */
    int tsps;
    int64_t links_node;      /* intra-node links (28 per node) */
    int64_t links_mid;       /* nodes mode: inter-node; racks mode: intra-rack */
    int64_t links_top;       /* racks mode: inter-rack; 0 in nodes mode */
    int64_t base_mid, base_top; /* first link id of the two classes */
    /* timing (ticks of 1 ps) */
    int64_t vec_bytes;       /* payload per vector (320) */
    int64_t wire_bytes;      /* on the wire per vector (328) */
    int64_t slot;            /* ticks a vector occupies a link direction */
    int64_t hop;             /* ticks from a vector's start on a link to its arrival */
    int paths;               /* most paths per message; 0 = auto (all candidates) */
    int even;                /* 1: vector i on path i mod paths (forced spreading) */
    int align;               /* 1: start-up alignment charged */
    int64_t align_ticks;     /* its cost: (floor(L/epoch)+1) * height epochs */
    int align_height;        /* spanning-tree height used (eccentricity of TSP 0) */
    int64_t link_cycles;     /* L */
    int64_t epoch_cycles;    /* 252 */
    double clock_hz;         /* 900 MHz */
    char *dump_path;         /* write the compiled schedule here, or NULL */
    char *schedule_path;     /* explicit schedule read from here, or NULL */
    cs_groq_slot_t *fixed;   /* its placements, sorted by (msg, vec, start) */
    int64_t nfixed;
    const cs_topo_t *topo;   /* the machine's (owned by the machine) */
} cs_groq_t;

/* The channel x -> y between two TSPs of one node (x != y). */
int cs_groq_local_chan(const cs_groq_t *g, int x, int y);

/* The link between two nodes of one group (nodes mode: any two nodes; racks
 * mode: two nodes of one rack, copy 0 or 1): the TSP of node `from` that
 * owns it and the TSP of node `to` where it lands; returns the channel
 * owner -> landing, or -1 if the machine has no such link. */
int cs_groq_node_link(const cs_groq_t *g, int from, int to, int copy, int *owner, int *landing);
/* The link between two racks (racks mode). */
int cs_groq_rack_link(const cs_groq_t *g, int from, int to, int *owner, int *landing);

/* The minimal source route src -> dst (src != dst): at most one global hop,
 * the fewest TSP hops among such routes (ties: copy 0).  Writes channels,
 * returns the hop count (<= CS_GROQ_MAX_ROUTE). */
int cs_groq_route(const cs_groq_t *g, int src, int dst, int32_t *chans);

/* Candidate paths src -> dst: path 0 is the minimal route; path j >= 1 goes
 * through an intermediate (another TSP of the node; the other copy of an
 * intra-rack link, then another node of the group; another rack), as the
 * minimal route to it and on from it.  cs_groq_paths gives their number,
 * cs_groq_path writes path j (<= CS_GROQ_MAX_PATH channels) and returns
 * its hop count. */
int cs_groq_paths(const cs_groq_t *g, int src, int dst);
int cs_groq_path(const cs_groq_t *g, int src, int dst, int j, int32_t *chans);

/* Wiring facts for reports and tests. */
typedef struct cs_groq_wiring {
    int group_diameter;  /* node-level (virtual-router) diameter of the link graph */
    int paper_diameter;  /* group_diameter + 2: the paper's count (1 + 1 + 1 for 264
                            TSPs; 2 + 1 + 2 for 10,440) */
    int max_route;       /* longest minimal route in TSP hops */
} cs_groq_wiring_t;
void cs_groq_wiring(const cs_groq_t *g, cs_groq_wiring_t *out);

/* Reads an explicit schedule ("M.V FROM->TO SLOT" per line, docs/groq.md)
 * into g->fixed and checks it: unknown links, a vector whose placements do
 * not form a path (or leave a hop before the hop latency has passed), and
 * two vectors on one link direction at once are errors naming the file and
 * line, the link, the slot and both vectors. */
int cs_groq_schedule_load(cs_groq_t *g, const cs_source_t *file, cs_error_t *err);

/* Writes a placement as a schedule line. */
void cs_groq_schedule_write(const cs_groq_t *g, FILE *f, int64_t msg, int64_t vec, int32_t chan,
                            int64_t start);

#endif
