/*
 * machine.h - a machine: topology + network timing + node model + hints,
 * created from a spec string ("alphabeta:topo=ring,p=8") through a registry.
 *
 * A machine type is one constant table (cs_machine_type_t: keys, create,
 * destroy, engine, report, node labels, figure layout, closed-form model);
 * an instance (cs_machine_t) holds its data and a pointer to its type, which
 * is also its identity.  Everything above src/machines reaches a machine
 * through this header only (docs/adding-a-machine.md).
 *
 * Algorithms (src/coll) never include a machine header; they see a machine
 * only through the hints below, translated into rank space by
 * cs_machine_hints_init (the one dependency of this layer on coll.h is that
 * hint type).  Machines never include an algorithm.
 */
#ifndef CS_MACHINE_H
#define CS_MACHINE_H

#include <stdint.h>
#include <stdio.h>
#include "coll/coll.h" /* cs_coll_hints_t only: the vocabulary of hints */
#include "core/error.h"
#include "core/source.h"
#include "engine/exec.h"
#include "engine/net.h"
#include "core/units.h"
#include "topo/topo.h"

/* ---- figures -------------------------------------------------------------
 *
 * How figures (heatmaps, io/heatmap.h) draw a machine: the machine's type
 * says it (cs_machine_type_t.layout), with the parameters the drawing needs;
 * nothing is guessed from topology names. */
typedef enum cs_layout_kind {
    CS_LAYOUT_GRID = 1,  /* rows x cols in row-major order, optional wrap links */
    CS_LAYOUT_RING,      /* one circle, neighbours joined by arcs */
    CS_LAYOUT_CIRCLE,    /* nodes on a circle, links as chords */
    CS_LAYOUT_RINGS,     /* several rings (the Cell's EIBs) joined by straight links */
    CS_LAYOUT_DRAGONFLY, /* group matrix plus one group's links (node_group) */
    CS_LAYOUT_GRAPH,     /* igraph's force-directed layout */
    CS_LAYOUT_TREE       /* rows by level, hosts at the bottom (a fat-tree) */
} cs_layout_kind_t;

typedef struct cs_machine_layout {
    cs_layout_kind_t kind;
    int rows, cols;     /* GRID: the node grid (rows * cols = nodes) */
    int line;           /* GRID: a 1-D shape (rows = 1), folded as a snake when long */
    int wrap_x, wrap_y; /* GRID: wrap links along a row / along a column */
    int depth;          /* GRID: > 1 for a 3-D lattice of depth x-y slices of
                           rows x cols each (rows * cols * depth = nodes,
                           node = (z * rows + row) * cols + col), drawn as
                           slices side by side; 0 or 1: a plain grid */
    int wrap_z;         /* GRID with depth: links from the last slice to the first */
    int gray;           /* CIRCLE: nodes in Gray-code order (a hypercube's
                           dimension-0 neighbours side by side) */
    const int32_t *level; /* TREE: every node's level, 0 the bottom row
                           (borrowed from the machine) */
    int groups_all;     /* DRAGONFLY: node_group gives every node a real group,
                           the nodes that run no rank (switches) too */
} cs_machine_layout_t;

/* ---- closed-form models (--predict) ------------------------------------- */

/* What a model is asked: one collective as `collsim run` sets it up. */
typedef struct cs_model_request {
    cs_coll_kind_t kind;           /* the collective */
    const char *algo;              /* the suite's algorithm name ("binomial") */
    int P;                         /* ranks */
    int64_t bytes;                 /* as --bytes (per rank or vector, cs_coll_args_t) */
    int root;                      /* rooted collectives */
    int grid_rows, grid_cols;      /* the grid hint in rank space (0: none) */
    const cs_spec_kv_t *opts;      /* the --opt key/values (nopts of them) */
    int nopts;
} cs_model_request_t;

/* One closed form's value. */
typedef struct cs_model_form {
    double ticks;        /* in the machine's ticks (fractions allowed) */
    double seconds;      /* ticks * tick_seconds */
    char name[96];       /* the formula used, short: "thesis, printed form" */
} cs_model_form_t;

#define CS_MODEL_MAX_FORMS 2
/* A model's answer: one form or two (Cerebras: the printed form and, where
 * the printed one contradicts its proof, the re-derived one). */
typedef struct cs_model {
    int nforms;
    cs_model_form_t form[CS_MODEL_MAX_FORMS];
    const char *unit;    /* what one tick is called in printouts ("cycles", "ticks") */
    int show_seconds;    /* 1: printouts add the seconds (ticks are not a natural unit) */
} cs_model_t;

/* ---- a machine instance ------------------------------------------------ */

struct cs_machine_type;

typedef struct cs_machine {
    const struct cs_machine_type *type; /* what it is; identity = this pointer */
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
    /* Dimensions hint: the rank nodes form a lattice (cs_coll_hints_t.dims);
     * ndims 0: none. */
    int ndims, dims[8];
    /* Switches that reduce in the network (issue 36: SHARP, NVLS): nred
     * nodes red_node[] (network nodes, not rank nodes), each combining
     * what it receives in ceil(bytes * red_num / red_den) ticks per byte
     * of result and holding at most red_buf bytes at once.  nred 0: none.
     * Owned. */
    int nred;
    int32_t *red_node;
    int64_t *red_num, *red_den, *red_buf;
    void *impl;              /* machine-private state, freed by type->destroy */
} cs_machine_t;

/* ---- keys that name files ----------------------------------------------------
 *
 * A spec key whose value names a file is declared in its type's table
 * (cs_machine_type_t.file_keys), with whether the machine reads or writes
 * it, so that a front end that must not touch files a request names
 * (`collsim serve`, docs/security.md) refuses them by reading the tables:
 * a new machine's file key is covered without touching the service. */
typedef enum cs_filekey_mode {
    CS_FILEKEY_READ = 1,  /* read through cs_source_from_spec (core/source.h) */
    CS_FILEKEY_WRITE      /* written; asked with cs_source_output_from_spec */
} cs_filekey_mode_t;

typedef struct cs_filekey {
    const char *key;      /* one of the type's keys */
    cs_filekey_mode_t mode;
} cs_filekey_t;

/* A machine-specific field of a result (cs_machine_type_t.fields): a
 * number, or a string when text is not NULL (static storage). */
typedef struct cs_machine_field {
    const char *key;
    const char *text;
    double number;
} cs_machine_field_t;
#define CS_MACHINE_MAX_FIELDS 8

/* ---- a machine type: one constant table ------------------------------------
 *
 * Everything that makes a kind of machine, in one place
 * (docs/adding-a-machine.md walks through it).  Optional entries are NULL. */
typedef struct cs_machine_type {
    /* registry name, the spec's prefix ("alphabeta") */
    const char *name;
    /* one line for `collsim machines` */
    const char *summary;
    /* the spec form, e.g. "alphabeta:topo=...,p=N[,alpha=1us]" */
    const char *usage;
    /* the spec keys create reads, NULL-terminated; others are refused */
    const char *const *keys;
    /* those of keys whose value names a file, terminated by {NULL}; NULL:
     * none.  create reads them only through core/source.h. */
    const cs_filekey_t *file_keys;
    /* a representative configuration of the type, a full spec that runs
     * the suite's collectives on some tens of ranks in well under a second
     * (`collsim compare` runs it when no --machines are given) */
    const char *example;
    /* named configurations, NULL-terminated pairs {name, "k=v,..."}:
     * "type:name[,k=v...]" expands to the pair's keys (then the rest) */
    const char *const *presets;
    /* fills m (zeroed, type set, reduce_den 1, default net params) from spec:
     * topology, clock, network parameters, hints, impl and the normalised
     * spec text.  Unknown keys are checked by the registry afterwards. */
    int (*create)(cs_spec_t *spec, cs_machine_t *m, cs_error_t *err);
    /* frees m->impl (called even when create failed half-way); NULL: nothing */
    void (*destroy)(void *impl);
    /* the machine's own network engine (ctx = m->impl); NULL: the generic
     * channel engine with m->net (see cs_exec_env_t) */
    int (*net_new)(const void *ctx, cs_sim_t *sim, const cs_net_hooks_t *hooks,
                   cs_net_t **out, cs_error_t *err);
    /* machine-specific lines for `collsim topo` (net NULL: e.g. links by
     * class) and the summary of `collsim run` (net: the engine after the
     * run), written to f; NULL: none */
    void (*report)(const cs_machine_t *m, const cs_net_t *net, FILE *f);
    /* machine-specific fields of the JSON result's `machine` object
     * (docs/json.md lists them): fills at most max of out and returns how
     * many; NULL: none */
    int (*fields)(const cs_machine_t *m, cs_machine_field_t *out, int max);
    /* node names for figures ("SPE3", "MIC"): writes into buf and returns
     * it, or returns NULL for "use the id"; NULL: ids everywhere */
    const char *(*node_label)(const cs_machine_t *m, int node, char *buf, size_t len);
    /* the figure layout and its parameters; NULL: GRAPH.  Machines on a
     * standard topology use cs_machine_layout_topo. */
    void (*layout)(const cs_machine_t *m, cs_machine_layout_t *out);
    /* the machine's closed-form model of a collective (--predict): fills out
     * (nforms >= 1) or returns CS_ERR_RANGE with a reason when it has no
     * formula for the request; NULL: the machine has no model at all */
    int (*predict)(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                   cs_error_t *err);
    /* what its nodes are called in figure titles and table rows, singular
     * and plural: nodes that run ranks ("TSP", "TSPs"), network-only nodes
     * ("switch", "switches"), node groups ("node", "nodes": a Groq node of 8
     * TSPs).  NULL: "node"/"nodes", "network node(s)", groups not said */
    const char *rank_noun[2], *other_noun[2], *group_noun[2];
} cs_machine_type_t;

/* All registered machine types, in listing order. */
const cs_machine_type_t *const *cs_machine_types(int *count);

/* Creates a machine from "type[:key=value,...]".  Errors name the spec key
 * and list valid keys or types. */
int cs_machine_new(const char *spec_text, cs_machine_t **out, cs_error_t *err);
/* Where a machine is built, when not at the command line (`collsim
 * serve`): the files its spec's file keys name (core/source.h; NULL:
 * paths) - then no key may write a file - and the most nodes it may have
 * (0: the core's limits). */
typedef struct cs_machine_env {
    const cs_files_t *files;
    int64_t max_nodes;
} cs_machine_env_t;
/* cs_machine_new within env (NULL: as cs_machine_new). */
int cs_machine_new_in(const char *spec_text, const cs_machine_env_t *env, cs_machine_t **out,
                      cs_error_t *err);
void cs_machine_free(cs_machine_t *m); /* accepts NULL */
/* What cs_machine_new checks of a spec before building anything: its
 * syntax, the machine type and the key names (not their values), with the
 * same messages.  For refusing a request at once (`collsim serve`). */
int cs_machine_check_spec(const char *spec_text, cs_error_t *err);
/* cs_machine_check_spec, and then what a spec may not do when its files
 * come from files (cs_machine_new_in): name a key that writes a file, or
 * give a key that reads one a value that is not one of files (NULL: none).
 * CS_ERR_USAGE naming the key; *key (when not NULL) points to the key at
 * fault in the type's table, or is NULL for a refusal of another kind. */
int cs_machine_check_files(const char *spec_text, const cs_files_t *files, const char **key,
                           cs_error_t *err);
/* The mode of type's key `key` if it names a file, else 0. */
int cs_machine_file_key(const cs_machine_type_t *type, const char *key);

/* The machine's lines for a report (type->report; nothing without one). */
void cs_machine_report(const cs_machine_t *m, const cs_net_t *net, FILE *f);

/* The machine's name for node n (type->node_label), else its id, in buf. */
const char *cs_machine_node_label(const cs_machine_t *m, int node, char *buf, size_t len);

/* The figure layout of m (type->layout; GRAPH without one). */
void cs_machine_layout(const cs_machine_t *m, cs_machine_layout_t *out);

/* The layout a standard topology implies, for the layout entry of machines
 * built on one: line, mesh, torus, cylinder (or a grid hint that covers the
 * nodes) -> GRID, except 1-D shapes with wrap -> RING; ring -> RING;
 * complete, hypercube (Gray order) -> CIRCLE; anything else -> GRAPH. */
void cs_machine_layout_topo(const cs_machine_t *m, cs_machine_layout_t *out);

/* The machine's closed-form value for req (type->predict): CS_OK and out,
 * or an error whose message says why there is none ("cell has no
 * closed-form model", "no formula for allgather/bruck") - the caller prints
 * "no model" with it.  out->form[i].seconds are filled from the ticks. */
int cs_machine_predict(const cs_machine_t *m, const cs_model_request_t *req, cs_model_t *out,
                       cs_error_t *err);

/* Fills the first form of out: ticks and the formula's name. */
void cs_model_set(cs_model_t *out, double ticks, const char *name);

/* The value of --opt key in req, or NULL. */
const char *cs_model_request_opt(const cs_model_request_t *req, const char *key);

/* The executor's view of the machine (borrowed pointers into m). */
void cs_machine_exec_env(const cs_machine_t *m, cs_exec_env_t *env);

/* Bytes per second of channel c on the channel engine (m->net, with its
 * per-channel overrides); 0 for a machine with its own engine, whose
 * channels are not timed by m->net. */
double cs_machine_channel_bandwidth(const cs_machine_t *m, int c);

/* The machine's network by its parts (topo/netdesc.h), for writing it out
 * (`collsim topo --graphml`): rank nodes as hosts, the others as
 * switches, every link with its channel's bandwidth and latency, node
 * labels and groups.  CS_ERR_USAGE for a machine with its own engine,
 * whose links m->net does not time. */
struct cs_netdesc;
int cs_machine_netdesc(const cs_machine_t *m, struct cs_netdesc **out, cs_error_t *err);

/* What the alpha-beta machine and the net: machine share: a host's send
 * overhead (alpha), the latency per node crossed (hop), the clock (tick),
 * the reduction time per byte, the packet and the buffers per channel. */
typedef struct cs_machine_ab {
    double alpha, hop, tick, reduce; /* seconds */
    int64_t packet, buf;
} cs_machine_ab_t;
/* Reads them (defaults 1us, 0, 1ps, 0, 4 KiB, 8) and checks them; errors
 * name the key. */
int cs_machine_ab_read(cs_spec_t *spec, cs_machine_ab_t *ab, cs_error_t *err);
/* Sets them into m (clock, packet, buffers, send overhead, router latency,
 * reduction rate) with one send and one receive port per node. */
int cs_machine_ab_apply(const cs_machine_ab_t *ab, cs_machine_t *m, cs_error_t *err);

/* Number of nodes that can run ranks (ranks a program may use at most). */
int cs_machine_nodes(const cs_machine_t *m);
/* What n nodes that run ranks are called on m: "TSPs", "host", "SPEs", or
 * "node(s)" for a machine type without its own word (rank_noun). */
const char *cs_machine_rank_noun(const cs_machine_t *m, int n);
/* The machine's nodes counted in its own words (the type's rank_noun,
 * other_noun and group_noun): "64 hosts + 1 switch", "64 TSPs in 8 nodes",
 * "16 SPEs + 8 other ramps in 2 chips", "64 nodes" for a machine without
 * nouns.  Nodes that run ranks come first (a rank runs on them only);
 * groups are said when there are two or more.  The one place these words
 * are made: figure titles and table rows (api/figures.c) and the summary's
 * machine line (api/report.c) say the same.  Written into buf (always
 * NUL-terminated, truncated to len) and returned. */
const char *cs_machine_count_text(const cs_machine_t *m, char *buf, size_t len);

/* The machine's hints in rank space, for P ranks placed on nodes
 * rank_to_node[0..P-1] (NULL: rank r on node r), as an algorithm sees them.
 * The one place where node hints become rank hints: `collsim run`, sweep,
 * compare, replay, export, bench and the tests' harness all use it.
 *   ring     the ranks sorted by their node's position in m->ring_order
 *            (absent without one: the identity);
 *   group    each rank's node group, groups no rank uses dropped and the
 *            rest renumbered in order of first use (absent unless at least
 *            two groups are used);
 *   switches m's reducing switches in the order of m->red_node: each one's
 *            member ranks (those whose node has a link to it), the reducing
 *            switches above it (those it has a link to that lie farther from
 *            the rank nodes, in node order), its parent (the first of them;
 *            -1 for none), its rate and buffer;
 *   grid     m's grid when the ranks are the whole grid in node order;
 *   dims     m's dimensions, likewise when the ranks are all rank nodes in
 *            node order;
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
    /* the reducing switches (m->nred of them) in rank space: see
     * cs_coll_hints_t.nswitches; sw_node[s] is switch s's node, where an
     * in-network algorithm's rank P + s runs (the placement appends them).
     * Owned, or NULL without reducing switches. */
    int32_t *sw_first, *sw_member, *sw_parent, *sw_node, *sw_up_first, *sw_up;
} cs_machine_hints_t;

void cs_machine_hints_init(cs_machine_hints_t *h, const cs_machine_t *m, int P,
                           const int32_t *rank_to_node);
/* Frees the arrays and zeroes h; accepts a zeroed struct. */
void cs_machine_hints_destroy(cs_machine_hints_t *h);

#endif
