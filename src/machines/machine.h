/*
 * machine.h - a machine: topology + network timing + node model + hints,
 * created from a spec string ("alphabeta:topo=ring,p=8") through a registry.
 *
 * Algorithms (src/coll) never include a machine header; they see a machine
 * only through the hints below, translated into rank space by
 * cs_machine_hints_init (the one dependency of this layer on coll.h is that
 * hint type).  Machines never include an algorithm.
 */
#ifndef CS_MACHINE_H
#define CS_MACHINE_H

#include <stdint.h>
#include "coll/coll.h" /* cs_coll_hints_t only: the vocabulary of hints */
#include "core/error.h"
#include "engine/exec.h"
#include "engine/net.h"
#include "core/units.h"
#include "topo/topo.h"

/* How figures (heatmaps, io/heatmap.h) draw a machine.  AUTO derives it
 * from the topology: line, mesh, torus, cylinder and custom topologies with
 * a grid hint -> GRID; ring -> RING; complete, hypercube -> CIRCLE; a custom
 * topology named "*dragonfly*" with node groups -> DRAGONFLY, named "*eib*"
 * -> RINGS; any other -> GRAPH (an igraph layout). */
typedef enum cs_layout_hint {
    CS_LAYOUT_AUTO = 0,
    CS_LAYOUT_GRID,      /* rows x cols, wrap links at the edges */
    CS_LAYOUT_RING,      /* one circle, neighbours joined by arcs */
    CS_LAYOUT_CIRCLE,    /* nodes on a circle, links as chords */
    CS_LAYOUT_RINGS,     /* several rings (the Cell's EIBs) joined by links (the BIF) */
    CS_LAYOUT_DRAGONFLY, /* group matrix plus one group's links (node_group) */
    CS_LAYOUT_GRAPH      /* igraph's force-directed layout */
} cs_layout_hint_t;

typedef struct cs_machine {
    const char *type;        /* registry name, e.g. "alphabeta" */
    char *spec;              /* normalised spec text, all keys with their values */
    cs_topo_t *topo;         /* owned */
    cs_net_params_t net;     /* network timing; per-channel arrays owned via `impl` */
    double tick_seconds;     /* the machine clock */
    /* calc(bytes) costs ceil(bytes * reduce_num / reduce_den) ticks. */
    int64_t reduce_num, reduce_den;
    /* Hints (never commands) for algorithms: a ring order of nodes (NULL =
     * identity) and grid dimensions (0 = none). */
    int32_t *ring_order;     /* owned, cs_topo_nodes entries, or NULL */
    int grid_rows, grid_cols;
    /* Nodes that can run ranks are 0..rank_nodes-1 (0: every node); the
     * others are network elements only (the Cell's PPE, MIC, IOIF, BIF). */
    int rank_nodes;
    /* Hierarchy hint: the group (chip, node, rack) of every node, 0..ngroups-1,
     * or NULL.  Owned. */
    int32_t *node_group;
    int ngroups;
    /* Figures: the layout (AUTO: from the topology) and optional node names
     * ("SPE3", "MIC"; NULL: node ids).  node_label writes into buf and
     * returns it, or returns NULL for "use the id". */
    cs_layout_hint_t layout;
    const char *(*node_label)(const struct cs_machine *m, int node, char *buf, size_t len);
    void *impl;              /* machine-private state */
    /* The machine's own network engine (ctx = impl), or NULL for the
     * channel engine (see cs_exec_env_t). */
    int (*net_new)(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks,
                   cs_net_t **out, cs_error_t *err);
    void (*destroy_impl)(void *impl);
    /* Optional: machine-specific lines for `collsim topo` (net NULL: e.g.
     * links by class) and for the summary of `collsim run` (net: the engine
     * after the run), written to f.  NULL: none. */
    void (*report)(const struct cs_machine *m, const cs_net_t *net, FILE *f);
} cs_machine_t;

/* A registry entry.  `keys` is NULL-terminated; `usage` shows the spec form. */
typedef struct cs_machine_type {
    const char *name;
    const char *summary;
    const char *usage;
    const char *const *keys;
    /* Named configurations, NULL-terminated pairs {name, "k=v,..."}:
     * "type:name[,k=v...]" expands to the pair's keys (then the rest). */
    const char *const *presets;
    /* Fills m (already zeroed, type set) from spec; unknown keys are checked
     * by the registry afterwards. */
    int (*create)(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err);
} cs_machine_type_t;

/* All registered machine types, in listing order. */
const cs_machine_type_t *const *cs_machine_types(int *count);

/* Creates a machine from "type[:key=value,...]".  Errors name the spec key
 * and list valid keys or types. */
int cs_machine_new(const char *spec_text, cs_machine_t **out, cs_error_t *err);
void cs_machine_free(cs_machine_t *m); /* accepts NULL */

/* The executor's view of the machine (borrowed pointers into m). */
void cs_machine_exec_env(const cs_machine_t *m, cs_exec_env_t *env);

/* Number of nodes that can run ranks (ranks a program may use at most). */
int cs_machine_nodes(const cs_machine_t *m);

/* The machine's hints in rank space, for P ranks placed on nodes
 * rank_to_node[0..P-1] (NULL: rank r on node r), as an algorithm sees them.
 * The one place where node hints become rank hints: `collsim run`, sweep,
 * compare, replay, export, bench and the tests' harness all use it.
 *   ring     the ranks sorted by their node's position in m->ring_order
 *            (absent without one: the identity);
 *   group    each rank's node group, groups no rank uses dropped and the
 *            rest renumbered in order of first use (absent unless at least
 *            two groups are used);
 *   grid     m's grid when the ranks are the whole grid in node order;
 *   gateway  with groups: for every ordered pair of groups g != h, the rank
 *            of g at one end of a link that joins a node of g directly to a
 *            node of h (its partner, at the other end, is gateway[h][g]);
 *            the link is the lowest-numbered such link (topology link
 *            order), so the choice is deterministic; -1 where no link joins
 *            the two groups directly (and on the diagonal).  Left out
 *            (NULL) when ngroups^2 exceeds CS_MACHINE_MAX_GATEWAY entries.
 * coll holds the hints (pass &h->coll as cs_coll_args_t.hints); the arrays
 * behind it are owned by h.  O(P + nodes + links + ngroups^2) time. */
#define CS_MACHINE_MAX_GATEWAY (INT64_C(1) << 24)
typedef struct cs_machine_hints {
    cs_coll_hints_t coll;        /* what algorithms see; points into the arrays below */
    int32_t *ring, *group, *gateway; /* owned, or NULL */
} cs_machine_hints_t;

void cs_machine_hints_init(cs_machine_hints_t *h, const cs_machine_t *m, int P,
                           const int32_t *rank_to_node);
/* Frees the arrays and zeroes h; accepts a zeroed struct. */
void cs_machine_hints_destroy(cs_machine_hints_t *h);

#endif
