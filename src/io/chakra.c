/*
 * chakra.c - reading MLCommons Chakra execution traces into programs
 * (chakra.h, docs/chakra.md).  The wire format is Chakra's
 * schema/protobuf/et_def.proto (our copy: chakra_et.proto, decoded by
 * protobuf-c); the meaning of each node follows ASTRA-sim's workload layer
 * (astra-sim/workload/Workload.cc): durations in microseconds, comm_size
 * as the rank's input buffer of the collective (its Ring.cc: all-gather
 * sends comm_size per step, all-reduce comm_size / P), process groups by
 * pg_name from a comm-group JSON or a PyTorch metadata node, "" and "0"
 * meaning every rank.
 *
 * Reading goes rank by rank, one rank's file and nodes held at a time: the
 * rank's bytes are split into messages, each decoded by protobuf-c into an
 * arena reset per message, and every node kept as a small record (its
 * dependencies, what it becomes); the node ids are indexed, every
 * dependency checked and the DAG checked for cycles (naming node ids,
 * before the program's own check would name ops); then the rank's ops are
 * made in file order and tied by the nodes' dependencies.  What the later
 * passes need is all that stays: the sends and recvs (16 bytes each), the
 * collective nodes (each op's node id is its line).  Then sends and recvs are paired per (src, dst,
 * tag); each process group's collectives are matched across its ranks and
 * expanded by io/tracecoll.h; an export's op ids are given back.
 */
#include "io/chakra.h"

#include <stdio.h>
#include <string.h>

const char *cs_chakra_type_name(int type)
{
    static const char *const names[CS_CHAKRA_NTYPES] = {
        "INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE",
        "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE", "BATCH_NODE",
        "CHECKPOINT_NODE"};
    return type >= 0 && type < CS_CHAKRA_NTYPES ? names[type] : "?";
}

void cs_chakra_opts_default(cs_chakra_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->flops_per_second = 1e9;
    o->unit = 4096;
}

#if !CS_HAVE_CHAKRA

int cs_chakra_available(void) { return 0; }

static int unavailable(cs_error_t *err)
{
    return cs_error_set(err, CS_ERR_USAGE, "Chakra traces: this collsim was built without "
                        "protobuf-c (install libprotobuf-c-dev and protobuf-c-compiler, then "
                        "rebuild; meson option -Dchakra=enabled)");
}

int cs_chakra_read(const char *path, const cs_chakra_opts_t *o, cs_program_t **out,
                   cs_chakra_info_t *info, cs_error_t *err)
{
    (void)path, (void)o, (void)info;
    *out = NULL;
    return unavailable(err);
}

int cs_chakra_read_buffers(const uint8_t *const *data, const size_t *len, int P,
                           const char *name, const cs_chakra_opts_t *o, cs_program_t **out,
                           cs_chakra_info_t *info, cs_error_t *err)
{
    (void)data, (void)len, (void)P, (void)name, (void)o, (void)info;
    *out = NULL;
    return unavailable(err);
}

int cs_chakra_sniff(const char *path, int *is_chakra, cs_error_t *err)
{
    (void)path, (void)err;
    *is_chakra = 0;
    return CS_OK;
}

#else

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "chakra_et.pb-c.h"
#include "io/chakra_write.h"
#include "io/tracecoll.h"
#if CS_HAVE_JANSSON
#include <jansson.h>
#endif

int cs_chakra_available(void) { return 1; }

/* What a node becomes. */
enum { NK_CALC, NK_SEND, NK_RECV, NK_COLL };

/* A node of the rank being read, kept only until its ops are made; its
 * variable parts live in the rank's pools (crankbuf_t). */
typedef struct cnode {
    uint64_t id;
    int64_t ns;         /* calc: nanoseconds */
    int64_t size;       /* send / recv / coll: comm_size */
    int64_t ticks, calc_bytes; /* collsim_calc_ticks, collsim_calc_bytes */
    int64_t data[3];    /* collsim_data: off, len, mode */
    int64_t dep0;       /* deps[dep0 ..] of the pool: data_deps then ctrl_deps */
    int64_t kind0;      /* kinds[kind0 ..] of the pool: collsim_dep_kinds */
    int64_t pg;         /* coll: pg_name at this offset of the name pool, -1: none */
    int32_t ndeps, nkinds;
    int32_t index;      /* node # in the file */
    int32_t peer, tag;  /* send: dst, recv: src */
    int32_t op;         /* the op that completes the node */
    int32_t first;      /* coll: the op its dependencies gather on, or -1 */
    uint8_t type, kind, coll; /* NodeType, NK_*, CollectiveCommType */
    uint8_t has_ticks, has_data;
} cnode_t;

/* The rank being read: its nodes and their pools, reused rank after rank
 * so that the reader holds one rank's nodes at a time. */
typedef struct crankbuf {
    cnode_t *nodes;
    int32_t n, cap;
    uint64_t *deps;     /* every node's dependency ids */
    int32_t *dix;       /* the same resolved to node indices (check_dag) */
    int64_t ndeps, cap_deps, cap_dix;
    uint8_t *kinds;     /* collsim_dep_kinds */
    int64_t nkinds, cap_kinds;
    int32_t *slot;      /* id -> node index, open addressing (-1: empty) */
    uint32_t mask, cap_slot;
    /* check_dag's scratch */
    int32_t *indeg, *succ, *queue;
    int64_t *start;
    int64_t cap_n, cap_succ;
} crankbuf_t;

/* What is kept of a collective node once its rank is read. */
typedef struct ccoll {
    uint64_t id;
    int64_t size;       /* comm_size */
    int64_t pg;         /* pg_name at this offset of the name pool, -1: none */
    int32_t op, first;  /* as cnode_t */
    int32_t pred;       /* the op the collective's first ops follow, or -1 */
    int32_t group;      /* index in the reader's groups, once resolved */
    uint8_t coll;       /* CollectiveCommType */
} ccoll_t;

typedef struct crank {
    ccoll_t *colls;     /* its collective nodes in file order */
    int32_t n, cap;
    int32_t op0, op1;   /* the ops made from its nodes: op0 .. op1-1 */
} crank_t;

/* A send or recv, for pairing: 16 bytes, for the sort; sends sort first. */
typedef struct msg {
    int32_t src, dst, tag;
    uint32_t key;       /* the op, plus MSG_RECV for a recv */
} msg_t;
#define MSG_RECV (1u << 31) /* above every op id (CS_PROGRAM_MAX_OPS) */

/* An op whose node's id does not fit its line (INT_MAX and above). */
typedef struct bigid {
    int32_t op;
    uint64_t id;
} bigid_t;

/* protobuf-c allocates each decoded submessage, string and repeated field
 * on its own (a dozen mallocs for a node of collsim's export) and frees them
 * one by one; a message's allocations all die together, so they come from
 * a bump arena instead, reset before each message.  The block grows to the
 * largest message's needs (what does not fit is malloc'ed and freed at the
 * reset); a message's needs are bounded by its length, itself bounded by
 * the file's. */
typedef struct carena {
    char *base;
    size_t cap, used, spill;
    void *big;          /* allocations past the block, linked through their first word */
} carena_t;

typedef struct cgroup {
    char *name;
    int32_t *members;   /* sorted by group rank */
    int G;
    int from_file;      /* defined by --comm-group (else by a metadata node) */
    int used;
} cgroup_t;

typedef struct creader {
    const cs_chakra_opts_t *o;
    cs_error_t *err;
    const char *name;   /* the prefix */
    int P;
    crank_t *ranks;
    crankbuf_t buf;     /* the rank being read */
    carena_t arena;
    ProtobufCAllocator pba;
    msg_t *msgs;        /* every send and recv */
    int64_t nmsgs, cap_msgs;
    /* an op's node id is its line (cs_program_set_origin), or for ids from
     * INT_MAX up, in this table (in op order) */
    bigid_t *bigids;
    int64_t nbigids, cap_bigids;
    char *names;        /* pg_name pool */
    int64_t nnames, cap_names;
    cgroup_t *groups;
    int32_t ngroups, cap_groups;
    cs_program_t *p;
    cs_chakra_info_t info;
    int op_ids;         /* collsim_op_ids: -1 unknown yet, 0 no, 1 yes (all files agree) */
    double time_unit;   /* collsim_time_unit, when op_ids */
    char file[PATH_MAX + 32]; /* scratch for a rank file's name */
} creader_t;

static const char *rank_file(creader_t *r, int rank)
{
    snprintf(r->file, sizeof r->file, "%s.%d.et", r->name, rank);
    return r->file;
}

static int node_fail(creader_t *r, int rank, uint64_t id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int node_fail(creader_t *r, int rank, uint64_t id, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX - 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(r->err, CS_ERR_PARSE, "%s: node %llu: %s", rank_file(r, rank),
                        (unsigned long long)id, msg);
}

static int line_of(uint64_t id)
{
    return id > INT_MAX ? INT_MAX : (int)id;
}

static int cmp_bigid(const void *a, const void *b)
{
    int32_t x = ((const bigid_t *)a)->op, y = ((const bigid_t *)b)->op;
    return (x > y) - (x < y);
}

/* The id of the node that made op (an op made by make_ops). */
static uint64_t op_node(const creader_t *r, int32_t op)
{
    int line = cs_program_line(r->p, op);
    if (line < INT_MAX)
        return (uint64_t)line;
    bigid_t key = {op, 0};
    const bigid_t *b = bsearch(&key, r->bigids, (size_t)r->nbigids, sizeof key, cmp_bigid);
    return b ? b->id : (uint64_t)line;
}

static void *grow(void *v, int32_t *cap, int32_t n, size_t size)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 16;
    return cs_realloc(v, (size_t)*cap * size);
}

/* As grow, for arrays counted in 64 bits (room for `more` entries past n). */
static void *grow64(void *v, int64_t *cap, int64_t n, int64_t more, size_t size)
{
    if (n + more <= *cap)
        return v;
    int64_t c = *cap ? *cap : 16;
    while (c < n + more)
        c *= 2;
    *cap = c;
    return cs_realloc(v, (size_t)c * size);
}

/* ---- attributes -------------------------------------------------------------- */

/* An integer attribute of any integer (or bool) type; 0 if it is not one. */
static int attr_int(const ChakraProtoMsg__AttributeProto *a, int64_t *v, int *too_big)
{
    *too_big = 0;
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *v = a->sint32_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *v = a->sint64_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: *v = a->fixed32_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: *v = a->sfixed32_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: *v = a->sfixed64_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: *v = a->bool_val; return 1;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: {
        uint64_t u = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL
                         ? a->uint64_val : a->fixed64_val;
        if (u > INT64_MAX) {
            *too_big = 1;
            return 0;
        }
        *v = (int64_t)u;
        return 1;
    }
    default: return 0;
    }
}

/* The attributes collsim reads (A_*) and those it knows not to change the
 * replay (ASTRA-sim ignores them too, or they describe the host side). */
enum { A_COMM_TYPE, A_COMM_SIZE, A_COMM_SRC, A_COMM_DST, A_COMM_TAG, A_NUM_OPS, A_PG_NAME,
       A_NREAD };
static const char *const read_attrs[A_NREAD] = {"comm_type", "comm_size", "comm_src",
                                                "comm_dst", "comm_tag", "num_ops", "pg_name"};
static const char *const harmless_attrs[] = {
    "is_cpu_op", "op_schema", "rf_id", "fw_parent", "seq_id", "scope", "tid", "fw_tid",
    "stream", "tensor_size", "comm_priority", "involved_dim", "involve_dims", "name",
    "root_rank", NULL};

/* ---- collsim's own attributes (io/chakra_write.h, docs/chakra.md "Export") ----- */

/* What `collsim export --format chakra` keeps beside Chakra's fields, so
 * that its files read back as the same program: exact calc ticks and
 * reduced bytes, data descriptors, dependency kinds (cnode_t's ticks ..
 * kinds); in the metadata, op ids and the time unit.  Other traces have
 * none of them. */

static int collsim_list(const ChakraProtoMsg__AttributeProto *a, const int64_t **v, size_t *n)
{
    if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST || !a->int64_list)
        return 0;
    *v = a->int64_list->values;
    *n = a->int64_list->n_values;
    return 1;
}

/* A collsim_* attribute of node n (decoded m); errors name the node. */
static int collsim_attr(creader_t *r, int rank, cnode_t *n, const ChakraProtoMsg__Node *m,
                        const ChakraProtoMsg__AttributeProto *a)
{
    int64_t v = 0;
    const int64_t *l = NULL;
    size_t nl = 0;
    int big, type = (int)m->type;
    int calc = type == CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
    int msg = type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE ||
              type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
    if (!strcmp(a->name, CS_CHAKRA_ATTR_CALC_TICKS) || !strcmp(a->name, CS_CHAKRA_ATTR_CALC_BYTES)) {
        if (!calc)
            return node_fail(r, rank, n->id, "%s on a %s; expected it on a COMP_NODE", a->name,
                             cs_chakra_type_name(type));
        if (!attr_int(a, &v, &big) || v < 0)
            return node_fail(r, rank, n->id, "%s: expected an integer >= 0", a->name);
        if (!strcmp(a->name, CS_CHAKRA_ATTR_CALC_TICKS))
            n->ticks = v, n->has_ticks = 1;
        else
            n->calc_bytes = v;
        return CS_OK;
    }
    if (!strcmp(a->name, CS_CHAKRA_ATTR_DATA)) {
        if (!msg)
            return node_fail(r, rank, n->id, "%s on a %s; expected it on a send or recv", a->name,
                             cs_chakra_type_name(type));
        if (!collsim_list(a, &l, &nl) || nl != 3 || l[0] < 0 || l[1] < 0 ||
            l[1] >= CS_DATA_MAX_LEN || (l[2] != CS_DATA_COPY && l[2] != CS_DATA_REDUCE))
            return node_fail(r, rank, n->id, "%s: expected an int64_list of offset >= 0, length "
                             ">= 0 and mode 0 (copy) or 1 (reduce)", a->name);
        memcpy(n->data, l, sizeof n->data);
        n->has_data = 1;
        return CS_OK;
    }
    if (!strcmp(a->name, CS_CHAKRA_ATTR_DEP_KINDS)) {
        if (!collsim_list(a, &l, &nl) || nl != m->n_data_deps)
            return node_fail(r, rank, n->id, "%s: expected an int64_list of one kind per data_deps "
                             "entry (%zu)", a->name, m->n_data_deps);
        /* a second list replaces the first (its pool entries stay unused) */
        crankbuf_t *b = &r->buf;
        b->kinds = grow64(b->kinds, &b->cap_kinds, b->nkinds, (int64_t)nl, 1);
        n->kind0 = b->nkinds;
        n->nkinds = (int32_t)nl;
        for (size_t i = 0; i < nl; i++) {
            if (l[i] < CS_DEP_AFTER || l[i] > CS_DEP_STREAM)
                return node_fail(r, rank, n->id, "%s: kind %lld; expected 0 (after), 1 (after "
                                 "start) or 2 (streaming)", a->name, (long long)l[i]);
            b->kinds[b->nkinds++] = (uint8_t)l[i];
        }
        return CS_OK;
    }
    return node_fail(r, rank, n->id, "unknown attribute '%.64s' (collsim writes %s, %s, %s and %s)",
                     a->name, CS_CHAKRA_ATTR_CALC_TICKS, CS_CHAKRA_ATTR_CALC_BYTES,
                     CS_CHAKRA_ATTR_DATA, CS_CHAKRA_ATTR_DEP_KINDS);
}

/* The metadata's collsim attributes; every file must agree. */
static int collsim_metadata(creader_t *r, int rank, const ChakraProtoMsg__GlobalMetadata *g)
{
    int op_ids = 0, has_unit = 0;
    double unit = 0;
    int64_t ranks = -1;
    for (size_t i = 0; i < g->n_attr; i++) {
        const ChakraProtoMsg__AttributeProto *a = g->attr[i];
        int big;
        if (!strcmp(a->name, CS_CHAKRA_ATTR_OP_IDS))
            op_ids = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL &&
                     a->bool_val;
        else if (!strcmp(a->name, CS_CHAKRA_ATTR_TIME_UNIT)) {
            if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL ||
                !(a->double_val >= 0 && a->double_val < 1e6))
                return cs_error_set(r->err, CS_ERR_PARSE, "%s: metadata: %s: expected a "
                                    "double_val of seconds >= 0", rank_file(r, rank), a->name);
            unit = a->double_val;
            has_unit = 1;
        } else if (!strcmp(a->name, CS_CHAKRA_ATTR_RANKS) && !attr_int(a, &ranks, &big))
            ranks = -1;
    }
    if (op_ids && ranks != r->P)
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: metadata: %s %lld, but the trace has %d "
                            "rank files (a file of another export?)", rank_file(r, rank),
                            CS_CHAKRA_ATTR_RANKS, (long long)ranks, r->P);
    if (r->op_ids >= 0 && (op_ids != r->op_ids || (op_ids && unit != r->time_unit)))
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: metadata: %s or %s differ from %s's (a "
                            "file of another export?)", rank_file(r, rank), CS_CHAKRA_ATTR_OP_IDS,
                            CS_CHAKRA_ATTR_TIME_UNIT, rank_file(r, 0));
    r->op_ids = op_ids;
    r->time_unit = has_unit ? unit : 1e-9;
    return CS_OK;
}

/* The kind of node n's j-th dependency. */
static cs_dep_kind_t collsim_dep_kind(const crankbuf_t *b, const cnode_t *n, int32_t j)
{
    return j < n->nkinds ? (cs_dep_kind_t)b->kinds[n->kind0 + j] : CS_DEP_AFTER;
}

/* With collsim_op_ids: gives each op its node's id (one op per node, the
 * ids a permutation of 0..ops-1) and the export's time unit.  The nodes are
 * walked in file order through their ops (make_ops makes a rank's ops in
 * its nodes' order; a collective makes its gathering op, then its own). */
static int collsim_finish(creader_t *r)
{
    if (r->op_ids != 1)
        return CS_OK;
    int32_t nops = cs_program_nops(r->p);
    int32_t *new_id = cs_malloc(((size_t)nops + 1) * sizeof *new_id);
    uint8_t *seen = cs_calloc((size_t)nops + 1, 1);
    int64_t nodes = 0;
    int rc = CS_OK;
    for (int rk = 0; rk < r->P && !rc; rk++) {
        const crank_t *k = &r->ranks[rk];
        int32_t c = 0;
        for (int32_t op = k->op0; op < k->op1 && !rc; op++) {
            int coll = 0;
            if (c < k->n && op == k->colls[c].first)
                continue;
            if (c < k->n && op == k->colls[c].op)
                coll = 1, c++;
            uint64_t id = op_node(r, op);
            nodes++;
            if (coll || id >= (uint64_t)nops || seen[id])
                rc = node_fail(r, rk, id, "%s: node ids must be the ops' ids, each once, below "
                               "%d (a file edited after export?)", CS_CHAKRA_ATTR_OP_IDS, nops);
            else {
                seen[id] = 1;
                new_id[op] = (int32_t)id;
            }
        }
    }
    if (!rc && nodes != nops)
        rc = cs_error_set(r->err, CS_ERR_PARSE, "%s: %s: %lld nodes for %d ops", r->name,
                          CS_CHAKRA_ATTR_OP_IDS, (long long)nodes, nops);
    if (!rc)
        rc = cs_program_renumber(r->p, new_id, r->err);
    free(new_id);
    free(seen);
    return rc;
}

/* ---- one rank's bytes ---------------------------------------------------------- */

/* A varint32 length at *off; 0 with *trunc set when the bytes end first. */
static int read_varint32(const uint8_t *d, size_t len, size_t *off, uint64_t *v, int *bad)
{
    uint64_t x = 0;
    *bad = 0;
    for (int i = 0; i < 5; i++) {
        if (*off >= len)
            return 0;
        uint8_t b = d[(*off)++];
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    *bad = 1;
    return 0;
}

static void *arena_alloc(void *data, size_t size)
{
    carena_t *a = data;
    if (size > SIZE_MAX / 2)
        return NULL; /* protobuf-c fails the message */
    size = (size + 15) & ~(size_t)15;
    if (size <= a->cap - a->used) {
        void *v = a->base + a->used;
        a->used += size;
        return v;
    }
    /* past the block: its own malloc until the reset, which grows the block */
    a->spill += size;
    void **v = cs_malloc(size + 16);
    *v = a->big;
    a->big = v;
    return (char *)v + 16;
}

static void arena_free(void *data, void *v)
{
    (void)data, (void)v; /* everything goes at the reset */
}

static void arena_reset(carena_t *a)
{
    while (a->big) {
        void **v = a->big;
        a->big = *v;
        free(v);
    }
    if (a->spill || !a->base) {
        size_t want = a->used + a->spill;
        a->cap = a->cap ? a->cap : 64 * 1024;
        while (a->cap < want)
            a->cap *= 2;
        free(a->base);
        a->base = cs_malloc(a->cap);
    }
    a->used = a->spill = 0;
}

#define ERR_AT(fmt, ...)                                                                   \
    cs_error_set(r->err, CS_ERR_PARSE, "%s: byte %zu: %s" fmt, rank_file(r, rank), at,     \
                 what, __VA_ARGS__)

/* Fills the node record from a decoded Node; errors name the node id. */
static int take_node(creader_t *r, int rank, const ChakraProtoMsg__Node *m, cnode_t *n);

/* Message #index's name for errors (-1: the metadata); buf of 64 bytes. */
static void msg_name(char *buf, int32_t index)
{
    if (index < 0)
        snprintf(buf, 64, "the global metadata");
    else
        snprintf(buf, 64, "node #%d", (int)index);
}

/* Decodes rank's messages into r->buf's nodes. */
static int parse_rank(creader_t *r, int rank, const uint8_t *d, size_t len)
{
    crankbuf_t *k = &r->buf;
    size_t off = 0;
    int32_t index = -1; /* -1: the metadata message */
    k->n = 0;
    k->ndeps = k->nkinds = 0;
    r->info.files++;
    if (!len)
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: empty file; expected a length-delimited "
                            "GlobalMetadata message, then the nodes", rank_file(r, rank));
    while (off < len) {
        size_t at = off;
        uint64_t mlen;
        int bad, rc;
        char what[64]; /* the message's name, written on an error only */
        if (!read_varint32(d, len, &off, &mlen, &bad))
            return msg_name(what, index),
                   ERR_AT(": %s", bad ? "a length prefix longer than 5 bytes; expected a "
                          "varint32" : "the file ends inside a length prefix (truncated)");
        if (mlen > len - off)
            return msg_name(what, index),
                   ERR_AT(": a length prefix of %llu bytes runs past the file's end (%zu bytes "
                          "left); the file is truncated or not a Chakra trace",
                          (unsigned long long)mlen, len - off);
        /* the previous message's allocations go; this one's live until the next */
        arena_reset(&r->arena);
        if (index < 0) {
            ChakraProtoMsg__GlobalMetadata *g =
                chakra_proto_msg__global_metadata__unpack(&r->pba, (size_t)mlen, d + off);
            if (!g)
                return msg_name(what, index),
                       ERR_AT(": %llu bytes that do not parse as a GlobalMetadata message",
                              (unsigned long long)mlen);
            rc = collsim_metadata(r, rank, g);
        } else {
            ChakraProtoMsg__Node *m =
                chakra_proto_msg__node__unpack(&r->pba, (size_t)mlen, d + off);
            if (!m)
                return msg_name(what, index),
                       ERR_AT(": %llu bytes that do not parse as a Node message",
                              (unsigned long long)mlen);
            k->nodes = grow(k->nodes, &k->cap, k->n, sizeof *k->nodes);
            cnode_t *n = &k->nodes[k->n++];
            memset(n, 0, sizeof *n);
            n->index = index;
            rc = take_node(r, rank, m, n);
        }
        if (rc)
            return rc;
        off += (size_t)mlen;
        if (index == INT32_MAX - 1)
            return cs_error_set(r->err, CS_ERR_RANGE, "%s: more than %d nodes",
                                rank_file(r, rank), INT32_MAX - 1);
        index++;
    }
    return CS_OK;
}

/* ---- process groups ------------------------------------------------------------ */

static cgroup_t *find_group(creader_t *r, const char *name)
{
    for (int32_t i = 0; i < r->ngroups; i++)
        if (!strcmp(r->groups[i].name, name))
            return &r->groups[i];
    return NULL;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Adds group `name` with members (copied, checked); where names the source
 * in messages.  A second definition must agree with the first. */
static int add_group(creader_t *r, const char *where, const char *name, const int64_t *ranks,
                     int n, int from_file)
{
    int P = r->P;
    if (n == 0) /* PyTorch's empty list: every rank (as ASTRA-sim reads it) */
        n = P;
    if (n > P)
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s' lists %d ranks but "
                            "the trace has %d", where, name, n, P);
    int32_t *m = cs_malloc((size_t)n * sizeof *m);
    for (int i = 0; i < n; i++) {
        int64_t v = ranks ? ranks[i] : i;
        if (v < 0 || v >= P) {
            free(m);
            return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s': rank %lld is "
                                "outside the trace's ranks 0..%d", where, name, (long long)v,
                                P - 1);
        }
        m[i] = (int32_t)v;
    }
    qsort(m, (size_t)n, sizeof *m, cmp_i32);
    for (int i = 1; i < n; i++)
        if (m[i] == m[i - 1]) {
            int twice = m[i];
            free(m);
            return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s' lists rank %d "
                                "twice", where, name, twice);
        }
    cgroup_t *old = find_group(r, name);
    if (old) {
        int same = old->G == n && !memcmp(old->members, m, (size_t)n * sizeof *m);
        free(m);
        /* --comm-group overrides the trace's own metadata */
        if (same || old->from_file)
            return CS_OK;
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s' is defined again "
                            "with other ranks; expected one definition", where, name);
    }
    r->groups = grow(r->groups, &r->cap_groups, r->ngroups, sizeof *r->groups);
    r->groups[r->ngroups++] = (cgroup_t){cs_strdup(name), m, n, from_file, 0};
    return CS_OK;
}

#if CS_HAVE_JANSSON
/* A JSON array of integer ranks into add_group. */
static int add_json_group(creader_t *r, const char *where, const char *name, json_t *arr,
                          int from_file)
{
    if (!json_is_array(arr))
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s': expected an array "
                            "of ranks", where, name);
    size_t n = json_array_size(arr);
    if (n > (size_t)r->P)
        return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s' lists %zu ranks but "
                            "the trace has %d", where, name, n, r->P);
    int64_t *v = cs_malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(arr, i);
        if (!json_is_integer(x)) {
            free(v);
            return cs_error_set(r->err, CS_ERR_PARSE, "%s: process group '%s': entry %zu is "
                                "not an integer rank", where, name, i);
        }
        v[i] = json_integer_value(x);
    }
    int rc = add_group(r, where, name, v, (int)n, from_file);
    free(v);
    return rc;
}
#endif

/* ASTRA-sim's --comm-group-configuration: {"1": [0, 1], "2": [2, 3]}. */
static int read_comm_group_file(creader_t *r, const char *path)
{
#if CS_HAVE_JANSSON
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root && je.line <= 0)
        return cs_error_set(r->err, CS_ERR_IO, "--comm-group %s: %s", path, je.text);
    if (!root)
        return cs_error_set(r->err, CS_ERR_PARSE, "%s:%d: %s", path, je.line, je.text);
    int rc = CS_OK;
    if (!json_is_object(root)) {
        rc = cs_error_set(r->err, CS_ERR_PARSE, "%s: expected an object of process groups "
                          "({\"1\": [0, 1], ...}, ASTRA-sim's comm-group JSON)", path);
    } else {
        const char *key;
        json_t *val;
        json_object_foreach(root, key, val) {
            if ((rc = add_json_group(r, path, key, val, 1)))
                break;
        }
    }
    json_decref(root);
    return rc;
#else
    return cs_error_set(r->err, CS_ERR_USAGE, "--comm-group %s: this collsim was built "
                        "without jansson, which reads the comm-group JSON", path);
#endif
}

/* A PyTorch trace's process groups in a METADATA_NODE's inputs.values:
 * a JSON list (possibly inside a one-string list, as ASTRA-sim strips it)
 * of {"pg_name": "1", "ranks": [...]}. */
static int read_metadata_groups(creader_t *r, int rank, const cnode_t *n, const char *values)
{
    if (!strstr(values, "pg_name"))
        return CS_OK;
#if CS_HAVE_JANSSON
    char where[PATH_MAX + 64];
    snprintf(where, sizeof where, "%s: node %llu", rank_file(r, rank),
             (unsigned long long)n->id);
    json_t *root = json_loads(values, 0, NULL);
    if (root && json_is_array(root) && json_array_size(root) == 1 &&
        json_is_string(json_array_get(root, 0))) {
        json_t *inner = json_loads(json_string_value(json_array_get(root, 0)), 0, NULL);
        json_decref(root);
        root = inner;
    }
    if (!root || !json_is_array(root)) {
        json_decref(root);
        return node_fail(r, rank, n->id, "the process groups of this METADATA_NODE do not parse; "
                         "expected a JSON list of {\"pg_name\": ..., \"ranks\": [...]}");
    }
    int rc = CS_OK;
    size_t i;
    json_t *item;
    json_array_foreach(root, i, item) {
        json_t *name = json_object_get(item, "pg_name"), *ranks = json_object_get(item, "ranks");
        if (!json_is_string(name) || !ranks) {
            rc = node_fail(r, rank, n->id, "process group entry %zu has no string pg_name and "
                           "ranks", i);
            break;
        }
        if ((rc = add_json_group(r, where, json_string_value(name), ranks, 0)))
            break;
    }
    json_decref(root);
    return rc;
#else
    return node_fail(r, rank, n->id, "this METADATA_NODE defines process groups, which are JSON; "
                     "this collsim was built without jansson (give the groups' members with "
                     "--comm-group? that needs jansson too)");
#endif
}

/* ---- nodes --------------------------------------------------------------------- */

static int take_node(creader_t *r, int rank, const ChakraProtoMsg__Node *m, cnode_t *n)
{
    int64_t v[A_NREAD];
    int has[A_NREAD] = {0};
    const char *pg = NULL;
    int type = (int)m->type; /* an open enum: any value may come */
    n->id = m->id;
    n->type = (uint8_t)(type >= 0 && type < CS_CHAKRA_NTYPES ? type : 0);
    n->op = n->first = -1;
    r->info.nodes++;
    int known = type >= 0 && type < CS_CHAKRA_NTYPES;
    if (known)
        r->info.types[type]++;
    for (size_t i = 0; i < m->n_attr; i++) {
        const ChakraProtoMsg__AttributeProto *a = m->attr[i];
        int which = -1, big;
        /* the first byte before strcmp: most names differ there */
        for (int j = 0; j < A_NREAD && which < 0; j++)
            if (a->name[0] == read_attrs[j][0] && !strcmp(a->name, read_attrs[j]))
                which = j;
        if (which < 0 && !strncmp(a->name, "collsim_", 8)) {
            int rc = collsim_attr(r, rank, n, m, a);
            if (rc)
                return rc;
            continue;
        }
        if (which < 0) {
            int harmless = 0;
            for (int j = 0; harmless_attrs[j] && !harmless; j++)
                harmless = a->name[0] == harmless_attrs[j][0] &&
                           !strcmp(a->name, harmless_attrs[j]);
            if (harmless)
                continue;
            if (r->o->skip_unknown) {
                r->info.skipped_attrs++;
                continue;
            }
            return node_fail(r, rank, n->id, "unknown attribute '%.64s'; collsim reads comm_type, "
                             "comm_size, comm_src, comm_dst, comm_tag, num_ops and pg_name "
                             "(--skip-unknown skips others and counts them)", a->name);
        }
        if (which == A_PG_NAME) {
            if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
                return node_fail(r, rank, n->id, "attribute pg_name: expected a string_val");
            pg = a->string_val;
            has[which] = 1;
            continue;
        }
        if (!attr_int(a, &v[which], &big))
            return node_fail(r, rank, n->id, "attribute %s: %s", read_attrs[which],
                             big ? "larger than 2^63-1" : "expected an integer value");
        has[which] = 1;
    }
    int64_t ndeps = (int64_t)m->n_data_deps + (int64_t)m->n_ctrl_deps;
    if (ndeps > INT32_MAX)
        return node_fail(r, rank, n->id, "too many dependencies");
    crankbuf_t *k = &r->buf;
    k->deps = grow64(k->deps, &k->cap_deps, k->ndeps, ndeps, sizeof *k->deps);
    n->dep0 = k->ndeps;
    if (m->n_data_deps)
        memcpy(k->deps + k->ndeps, m->data_deps, m->n_data_deps * sizeof *k->deps);
    if (m->n_ctrl_deps)
        memcpy(k->deps + k->ndeps + m->n_data_deps, m->ctrl_deps,
               m->n_ctrl_deps * sizeof *k->deps);
    k->ndeps += ndeps;
    n->ndeps = (int32_t)ndeps;
    if (m->duration_micros > (uint64_t)INT64_MAX / 1000)
        return node_fail(r, rank, n->id, "duration_micros %llu is too large",
                         (unsigned long long)m->duration_micros);
    int64_t dur_ns = (int64_t)m->duration_micros * 1000;
    n->kind = NK_CALC;
    switch (known ? type : -1) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE:
        n->ns = dur_ns;
        if (!dur_ns && has[A_NUM_OPS]) {
            if (v[A_NUM_OPS] < 0)
                return node_fail(r, rank, n->id, "num_ops %lld is negative",
                                 (long long)v[A_NUM_OPS]);
            double ns = (double)v[A_NUM_OPS] / r->o->flops_per_second * 1e9;
            if (!(ns < 9e18))
                return node_fail(r, rank, n->id, "num_ops %lld at %g op/s is too long a time",
                                 (long long)v[A_NUM_OPS], r->o->flops_per_second);
            n->ns = (int64_t)llround(ns);
        }
        return CS_OK;
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE:
        n->ns = dur_ns;
        if (!dur_ns)
            r->info.skipped_mem++;
        return CS_OK;
    case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
        if (m->inputs && m->inputs->values)
            return read_metadata_groups(r, rank, n, m->inputs->values);
        return CS_OK;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE: {
        int send = type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE;
        int peer_a = send ? A_COMM_DST : A_COMM_SRC, self_a = send ? A_COMM_SRC : A_COMM_DST;
        if (!has[peer_a] || !has[A_COMM_SIZE])
            return node_fail(r, rank, n->id, "%s without %s; expected attributes %s and comm_size",
                             cs_chakra_type_name(type),
                             !has[peer_a] ? read_attrs[peer_a] : "comm_size",
                             read_attrs[peer_a]);
        if (v[peer_a] < 0 || v[peer_a] >= r->P)
            return node_fail(r, rank, n->id, "%s %lld is outside the trace's ranks 0..%d",
                             read_attrs[peer_a], (long long)v[peer_a], r->P - 1);
        if (has[self_a] && v[self_a] != rank)
            return node_fail(r, rank, n->id, "%s %lld is not this file's rank %d (a %s is issued "
                             "by its %s)", read_attrs[self_a], (long long)v[self_a], rank,
                             send ? "send" : "recv", send ? "sender" : "receiver");
        if (v[A_COMM_SIZE] < 0)
            return node_fail(r, rank, n->id, "comm_size %lld is negative", (long long)v[A_COMM_SIZE]);
        int64_t tag = has[A_COMM_TAG] ? v[A_COMM_TAG] : 0;
        /* collsim's export has no collectives (collsim_finish checks): its
         * tags (a TI trace's expanded collectives') may use the whole range */
        int32_t max_tag = r->op_ids == 1 ? INT32_MAX : CS_CHAKRA_MAX_TAG;
        if (tag < 0 || tag > max_tag)
            return node_fail(r, rank, n->id, "comm_tag %lld is outside 0..%d", (long long)tag,
                             max_tag);
        n->kind = send ? NK_SEND : NK_RECV;
        n->peer = (int32_t)v[peer_a];
        n->tag = (int32_t)tag;
        n->size = v[A_COMM_SIZE];
        return CS_OK;
    }
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE:
        if (!has[A_COMM_TYPE])
            return node_fail(r, rank, n->id, "COMM_COLL_NODE without comm_type");
        if (v[A_COMM_TYPE] < 0 || v[A_COMM_TYPE] > 9)
            return node_fail(r, rank, n->id, "comm_type %lld is not a Chakra collective (0 "
                             "ALL_REDUCE .. 9 BARRIER)", (long long)v[A_COMM_TYPE]);
        if (!has[A_COMM_SIZE] && v[A_COMM_TYPE] != 9)
            return node_fail(r, rank, n->id, "COMM_COLL_NODE without comm_size");
        n->size = has[A_COMM_SIZE] ? v[A_COMM_SIZE] : 0;
        if (n->size < 0)
            return node_fail(r, rank, n->id, "comm_size %lld is negative", (long long)n->size);
        n->kind = NK_COLL;
        n->coll = (uint8_t)v[A_COMM_TYPE];
        n->pg = -1;
        if (pg && *pg) {
            int64_t l = (int64_t)strlen(pg) + 1;
            r->names = grow64(r->names, &r->cap_names, r->nnames, l, 1);
            memcpy(r->names + r->nnames, pg, (size_t)l);
            n->pg = r->nnames;
            r->nnames += l;
        }
        return CS_OK;
    default:
        if (r->o->skip_unknown) {
            r->info.skipped_nodes++;
            return CS_OK; /* a zero-time op: its successors keep their order */
        }
        return node_fail(r, rank, n->id, "node type %d (%s) is not replayed; collsim reads "
                         "COMP, MEM_LOAD, MEM_STORE, COMM_SEND, COMM_RECV, COMM_COLL and "
                         "METADATA nodes (--skip-unknown skips others and counts them)",
                         type, cs_chakra_type_name(type));
    }
}

/* ---- the DAG ------------------------------------------------------------------- */

static uint32_t id_hash(uint64_t id)
{
    id *= 0x9e3779b97f4a7c15ULL;
    return (uint32_t)(id ^ (id >> 32));
}

static int32_t find_node(const crankbuf_t *k, uint64_t id)
{
    for (uint32_t h = id_hash(id) & k->mask;; h = (h + 1) & k->mask) {
        int32_t i = k->slot[h];
        if (i < 0 || k->nodes[i].id == id)
            return i;
    }
}

/* Indexes the rank's node ids, resolves every dependency to a node of the
 * file (k->dix), and checks that the dependencies have no cycle. */
static int check_dag(creader_t *r, int rank)
{
    crankbuf_t *k = &r->buf;
    uint32_t cap = 16;
    while (cap < 2u * (uint32_t)k->n)
        cap *= 2;
    if (cap > k->cap_slot) {
        free(k->slot);
        k->slot = cs_malloc((size_t)cap * sizeof *k->slot);
        k->cap_slot = cap;
    }
    k->mask = cap - 1;
    memset(k->slot, 0xff, (size_t)cap * sizeof *k->slot);
    for (int32_t i = 0; i < k->n; i++) {
        uint32_t h = id_hash(k->nodes[i].id) & k->mask;
        while (k->slot[h] >= 0) {
            if (k->nodes[k->slot[h]].id == k->nodes[i].id)
                return node_fail(r, rank, k->nodes[i].id, "node id used twice (node #%d and "
                                 "#%d); expected unique ids", k->nodes[k->slot[h]].index,
                                 k->nodes[i].index);
            h = (h + 1) & k->mask;
        }
        k->slot[h] = i;
    }
    int32_t n = k->n;
    k->dix = grow64(k->dix, &k->cap_dix, 0, k->ndeps, sizeof *k->dix);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < k->nodes[i].ndeps; j++) {
            int64_t e = k->nodes[i].dep0 + j;
            if ((k->dix[e] = find_node(k, k->deps[e])) < 0)
                return node_fail(r, rank, k->nodes[i].id, "depends on node %llu, which is not "
                                 "in the file", (unsigned long long)k->deps[e]);
        }
    /* Kahn: indegree per node, successors as a CSR */
    if (n + 1 > k->cap_n) {
        k->cap_n = 2 * ((int64_t)n + 1);
        free(k->indeg), free(k->start), free(k->queue);
        k->indeg = cs_malloc((size_t)k->cap_n * sizeof *k->indeg);
        k->start = cs_malloc((size_t)k->cap_n * sizeof *k->start);
        k->queue = cs_malloc((size_t)k->cap_n * sizeof *k->queue);
    }
    k->succ = grow64(k->succ, &k->cap_succ, 0, k->ndeps + 1, sizeof *k->succ);
    int32_t *indeg = k->indeg, *succ = k->succ, *queue = k->queue, head = 0, tail = 0;
    int64_t *start = k->start;
    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    for (int32_t i = 0; i < n; i++) {
        indeg[i] = k->nodes[i].ndeps;
        for (int32_t j = 0; j < k->nodes[i].ndeps; j++)
            start[k->dix[k->nodes[i].dep0 + j]]++;
    }
    for (int32_t i = 1; i <= n; i++)
        start[i] += start[i - 1];
    /* start[d] is d's list's end; filled from the end down, it ends as its
     * start (and start[n] as the total) */
    for (int32_t i = n - 1; i >= 0; i--)
        for (int32_t j = k->nodes[i].ndeps - 1; j >= 0; j--)
            succ[--start[k->dix[k->nodes[i].dep0 + j]]] = i;
    for (int32_t i = 0; i < n; i++)
        if (!indeg[i])
            queue[tail++] = i;
    while (head < tail) {
        int32_t i = queue[head++];
        for (int64_t s = start[i]; s < start[i + 1]; s++)
            if (!--indeg[succ[s]])
                queue[tail++] = succ[s];
    }
    if (tail == n)
        return CS_OK;
    /* every node left waits on another left: walk back to a repeat (the
     * queue, done with, holds the walk's marks) */
    int32_t at = 0;
    while (!indeg[at])
        at++;
    int32_t *seen = queue;
    memset(seen, 0, (size_t)n * sizeof *seen);
    int32_t step = 1;
    while (!seen[at]) {
        seen[at] = step++;
        const cnode_t *c = &k->nodes[at];
        for (int32_t j = 0; j < c->ndeps; j++) {
            int32_t d = k->dix[c->dep0 + j];
            if (indeg[d]) {
                at = d;
                break;
            }
        }
    }
    char ids[512] = "";
    size_t used = 0;
    int32_t cur = at, count = 0;
    do {
        if (used < sizeof ids - 40)
            used += (size_t)snprintf(ids + used, sizeof ids - used, "%s%llu",
                                     count ? " <- " : "", (unsigned long long)k->nodes[cur].id);
        count++;
        const cnode_t *c = &k->nodes[cur];
        for (int32_t j = 0; j < c->ndeps; j++) {
            int32_t d = k->dix[c->dep0 + j];
            if (indeg[d]) { /* the first loop's choice: back to `at` */
                cur = d;
                break;
            }
        }
    } while (cur != at && count < n);
    return node_fail(r, rank, k->nodes[at].id, "dependency cycle: node %s <- %llu; expected "
                     "the nodes' data_deps and ctrl_deps to form a DAG", ids,
                     (unsigned long long)k->nodes[at].id);
}

/* ---- ops ----------------------------------------------------------------------- */

/* Makes the rank's ops from r->buf's nodes, in file order, and ties them
 * by the nodes' dependencies; keeps what the later passes need: each op's
 * node id, the sends and recvs, the collective nodes. */
static int make_ops(creader_t *r, int rank)
{
    crankbuf_t *k = &r->buf;
    crank_t *rk = &r->ranks[rank];
    rk->op0 = cs_program_nops(r->p);
    for (int32_t i = 0; i < k->n; i++) {
        cnode_t *n = &k->nodes[i];
        int32_t op;
        switch (n->kind) {
        case NK_SEND: op = cs_program_send(r->p, rank, n->peer, n->size, n->tag); break;
        case NK_RECV: op = cs_program_recv(r->p, rank, n->peer, n->size, n->tag); break;
        case NK_COLL:
            if (n->ndeps > 1) { /* several predecessors: one zero-time op gathers them */
                n->first = cs_program_calc(r->p, rank, 0, 0);
                if (n->first >= 0)
                    cs_program_set_origin(r->p, n->first, line_of(n->id), NULL);
            }
            op = cs_program_calc(r->p, rank, 0, 0);
            break;
        default:
            op = n->has_ticks ? cs_program_calc(r->p, rank, n->ticks, n->calc_bytes)
                              : cs_program_calc(r->p, rank, n->ns, 0);
        }
        if (op >= 0 && n->has_data)
            cs_program_set_data(r->p, op, n->data[0], n->data[1], (cs_data_mode_t)n->data[2]);
        if (op < 0 || (n->kind == NK_COLL && n->ndeps > 1 && n->first < 0)) {
            cs_error_t e;
            cs_program_finalize(r->p, &e);
            return node_fail(r, rank, n->id, "%s", e.msg);
        }
        n->op = op;
        cs_program_set_origin(r->p, op, line_of(n->id), NULL);
        if (n->id >= INT_MAX) { /* op_node's exceptions */
            r->bigids = grow64(r->bigids, &r->cap_bigids, r->nbigids, 2, sizeof *r->bigids);
            if (n->first >= 0)
                r->bigids[r->nbigids++] = (bigid_t){n->first, n->id};
            r->bigids[r->nbigids++] = (bigid_t){op, n->id};
        }
        if (n->kind == NK_SEND || n->kind == NK_RECV) {
            int send = n->kind == NK_SEND;
            r->msgs = grow64(r->msgs, &r->cap_msgs, r->nmsgs, 1, sizeof *r->msgs);
            r->msgs[r->nmsgs++] = (msg_t){send ? rank : n->peer, send ? n->peer : rank, n->tag,
                                          (uint32_t)op | (send ? 0 : MSG_RECV)};
        }
    }
    rk->op1 = cs_program_nops(r->p);
    for (int32_t i = 0; i < k->n; i++) {
        const cnode_t *n = &k->nodes[i];
        const int32_t *dix = n->ndeps ? k->dix + n->dep0 : NULL; /* no pool without deps */
        if (n->kind == NK_COLL) {
            int32_t pred = n->ndeps == 0 ? -1 : n->ndeps == 1 ? k->nodes[dix[0]].op : n->first;
            rk->colls = grow(rk->colls, &rk->cap, rk->n, sizeof *rk->colls);
            rk->colls[rk->n++] = (ccoll_t){n->id, n->size, n->pg, n->op, n->first, pred, -1,
                                           n->coll};
            if (n->ndeps == 1)
                continue; /* its one predecessor is the collective's (tracecoll) */
        }
        int32_t at = n->kind == NK_COLL ? n->first : n->op;
        for (int32_t j = 0; j < n->ndeps; j++)
            cs_program_dep(r->p, at, k->nodes[dix[j]].op, collsim_dep_kind(k, n, j));
    }
    return CS_OK;
}

static int cmp_msg(const void *a, const void *b)
{
    const msg_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

/* The k-th send of each (src, dst, tag) meets its k-th recv (in op order,
 * the ranks' file order) and fits it.  Frees the list. */
static int pair_messages(creader_t *r)
{
    msg_t *m = r->msgs;
    int64_t n = r->nmsgs;
    int rc = CS_OK;
    if (n)
        qsort(m, (size_t)n, sizeof *m, cmp_msg);
    for (int64_t a = 0; a < n && !rc;) {
        int64_t b = a, s, ns = 0, nr = 0;
        while (b < n && m[b].src == m[a].src && m[b].dst == m[a].dst && m[b].tag == m[a].tag)
            (m[b].key & MSG_RECV ? nr++ : ns++), b++;
        for (s = 0; s < ns && s < nr; s++) {
            const msg_t *snd = &m[a + s], *rcv = &m[a + ns + s];
            int32_t sop = (int32_t)snd->key, rop = (int32_t)(rcv->key & ~MSG_RECV);
            int64_t sbytes = cs_program_op(r->p, sop)->bytes;
            int64_t rbytes = cs_program_op(r->p, rop)->bytes;
            if (sbytes > rbytes) {
                char other[PATH_MAX + 32];
                snprintf(other, sizeof other, "%s", rank_file(r, snd->src));
                rc = node_fail(r, rcv->dst, op_node(r, rop), "recv of %lld bytes from rank %d "
                               "(tag %d) is smaller than the %lld-byte message it takes (%s: "
                               "node %llu)", (long long)rbytes, snd->src, snd->tag,
                               (long long)sbytes, other, (unsigned long long)op_node(r, sop));
                break;
            }
        }
        if (!rc && ns != nr) {
            const msg_t *x = &m[a + (ns > nr ? nr : ns + ns)];
            int32_t op = (int32_t)(x->key & ~MSG_RECV);
            uint64_t id = op_node(r, op);
            long long bytes = (long long)cs_program_op(r->p, op)->bytes;
            rc = !(x->key & MSG_RECV) ? node_fail(r, x->src, id, "send to rank %d (tag %d, %lld bytes) is "
                                     "never received; expected a COMM_RECV_NODE on rank %d "
                                     "with comm_src %d and comm_tag %d", x->dst, x->tag, bytes,
                                     x->dst, x->src, x->tag)
                         : node_fail(r, x->dst, id, "recv from rank %d (tag %d, %lld bytes) "
                                     "has no matching send; expected a COMM_SEND_NODE on rank "
                                     "%d with comm_dst %d and comm_tag %d", x->src, x->tag,
                                     bytes, x->src, x->dst, x->tag);
        }
        a = b;
    }
    free(r->msgs);
    r->msgs = NULL;
    r->nmsgs = r->cap_msgs = 0;
    return rc;
}

/* ---- collectives --------------------------------------------------------------- */

static const cs_coll_kind_t coll_kind[10] = {
    CS_COLL_ALLREDUCE, CS_COLL_REDUCE, CS_COLL_ALLGATHER, CS_COLL_GATHER, CS_COLL_SCATTER,
    CS_COLL_BROADCAST, CS_COLL_ALLTOALL, CS_COLL_REDUCE_SCATTER, CS_COLL_REDUCE_SCATTER,
    CS_COLL_BARRIER};
static const char *const coll_names[10] = {
    "ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL",
    "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

/* Resolves every collective node's group. */
static int resolve_groups(creader_t *r)
{
    for (int rk = 0; rk < r->P; rk++)
        for (int32_t i = 0; i < r->ranks[rk].n; i++) {
            ccoll_t *n = &r->ranks[rk].colls[i];
            const char *name = n->pg >= 0 ? r->names + n->pg : "";
            cgroup_t *g = find_group(r, name);
            if (!g && (!strcmp(name, "") || !strcmp(name, "0"))) {
                int rc = add_group(r, "the default group", name, NULL, r->P, 0);
                if (rc)
                    return rc;
                g = &r->groups[r->ngroups - 1];
            }
            if (!g)
                return node_fail(r, rk, n->id, "process group '%s' is not defined; give its "
                                 "ranks with --comm-group FILE (ASTRA-sim's comm-group JSON) "
                                 "or in the trace's METADATA_NODE", name);
            n->group = (int32_t)(g - r->groups);
            if (!bsearch(&(int32_t){rk}, g->members, (size_t)g->G, sizeof(int32_t), cmp_i32))
                return node_fail(r, rk, n->id, "rank %d is not a member of process group '%s', "
                                 "on which this collective runs", rk, name);
            g->used = 1;
        }
    return CS_OK;
}

static int coll_bytes(creader_t *r, int rank, const ccoll_t *n, int G, int64_t *bytes)
{
    switch (coll_kind[n->coll]) {
    case CS_COLL_BARRIER: *bytes = 0; return CS_OK;
    case CS_COLL_REDUCE_SCATTER:
    case CS_COLL_ALLTOALL:
    case CS_COLL_SCATTER:
        /* comm_size is the whole input; the suite's count is one block of it */
        if (n->size % G)
            return node_fail(r, rank, n->id, "%s comm_size %lld is not a multiple of the %d "
                             "ranks of its group; expected the whole input buffer of P blocks",
                             coll_names[n->coll], (long long)n->size, G);
        *bytes = n->size / G;
        return CS_OK;
    default: *bytes = n->size; return CS_OK;
    }
}

static int expand_collectives(creader_t *r)
{
    int rc = CS_OK, any = 0;
    for (int32_t g = 0; g < r->ngroups; g++)
        any |= r->groups[g].used;
    if (!any)
        return CS_OK;
    const cs_coll_hints_t *hints = NULL;
    if (r->o->prepare && (rc = r->o->prepare(r->o->prepare_ctx, r->P, &hints, r->err)))
        return rc;
    cs_tracecoll_opts_t to = {r->o->algo, r->o->algo_opts, r->o->unit, CS_CHAKRA_COLL_TAG_BASE,
                              CS_CHAKRA_MAX_TAG};
    cs_tracecoll_t *tc = cs_tracecoll_new(&to);
    int P = r->P;
    int32_t *cursor = cs_calloc((size_t)P, sizeof *cursor); /* per rank: next node to look at */
    int32_t *pred = cs_malloc((size_t)P * sizeof *pred), *join = cs_malloc((size_t)P * sizeof *join);
    int32_t *line = cs_malloc((size_t)P * sizeof *line), *at = cs_malloc((size_t)P * sizeof *at);
    for (int32_t g = 0; g < r->ngroups && !rc; g++) {
        const cgroup_t *grp = &r->groups[g];
        if (!grp->used)
            continue;
        r->info.groups++;
        memset(cursor, 0, (size_t)P * sizeof *cursor);
        for (int64_t call = 0; !rc; call++) {
            /* each member's next collective on this group */
            int found = 0, missing = -1;
            for (int m = 0; m < grp->G; m++) {
                int rk = grp->members[m];
                crank_t *k = &r->ranks[rk];
                int32_t i = cursor[rk];
                while (i < k->n && k->colls[i].group != g)
                    i++;
                cursor[rk] = i;
                at[m] = i < k->n ? i : -1;
                if (at[m] >= 0)
                    found++;
                else if (missing < 0)
                    missing = m;
            }
            if (!found)
                break;
            int ref = 0;
            while (at[ref] < 0)
                ref++;
            int rref = grp->members[ref];
            const ccoll_t *c0 = &r->ranks[rref].colls[at[ref]];
            char other[PATH_MAX + 32];
            snprintf(other, sizeof other, "%s", rank_file(r, rref));
            if (missing >= 0) {
                rc = cs_error_set(r->err, CS_ERR_PARSE, "%s: node %llu: collective #%lld of "
                                  "process group '%s' (%s of %lld bytes) has no match on rank "
                                  "%d (%s), which makes fewer collectives in that group; "
                                  "expected every rank of the group to make the same "
                                  "collectives in the same order", other,
                                  (unsigned long long)c0->id, (long long)call + 1, grp->name,
                                  coll_names[c0->coll], (long long)c0->size,
                                  grp->members[missing], rank_file(r, grp->members[missing]));
                break;
            }
            for (int m = 0; m < grp->G && !rc; m++) {
                int rk = grp->members[m];
                const ccoll_t *c = &r->ranks[rk].colls[at[m]];
                if (c->coll != c0->coll || c->size != c0->size)
                    rc = node_fail(r, rk, c->id, "collective #%lld of process group '%s' is %s of "
                                   "%lld bytes but %s: node %llu is %s of %lld bytes; expected "
                                   "every rank of the group to make the same collectives in "
                                   "the same order", (long long)call + 1, grp->name,
                                   coll_names[c->coll], (long long)c->size, other,
                                   (unsigned long long)c0->id, coll_names[c0->coll],
                                   (long long)c0->size);
            }
            int64_t bytes = 0;
            if (rc || (rc = coll_bytes(r, rref, c0, grp->G, &bytes)))
                break;
            for (int m = 0; m < grp->G; m++) {
                const ccoll_t *c = &r->ranks[grp->members[m]].colls[at[m]];
                pred[m] = c->pred;
                join[m] = c->op;
                line[m] = line_of(c->id);
                cursor[grp->members[m]] = at[m] + 1;
            }
            int identity = grp->G == P;
            char where[PATH_MAX + 64];
            snprintf(where, sizeof where, "%s: node %llu", other, (unsigned long long)c0->id);
            cs_coll_kind_t kind = coll_kind[c0->coll];
            cs_tracecoll_call_t tcall = {kind, bytes, cs_coll_rooted(kind) ? 0 : -1, grp->G,
                                         identity ? NULL : grp->members, pred, NULL, join, line,
                                         where};
            int64_t nops = 0;
            rc = cs_tracecoll_splice(tc, r->p, &tcall, identity ? hints : NULL, &nops, r->err);
            r->info.coll_ops += nops;
            r->info.calls[kind]++;
        }
    }
    cs_tracecoll_free(tc);
    free(cursor);
    free(pred);
    free(join);
    free(line);
    free(at);
    return rc;
}

/* ---- driver -------------------------------------------------------------------- */

/* Frees what the passes keep (the program stays). */
static void reader_release(creader_t *r)
{
    crankbuf_t *k = &r->buf;
    free(k->nodes), free(k->deps), free(k->dix), free(k->kinds), free(k->slot);
    free(k->indeg), free(k->succ), free(k->queue), free(k->start);
    memset(k, 0, sizeof *k);
    arena_reset(&r->arena);
    free(r->arena.base);
    memset(&r->arena, 0, sizeof r->arena);
    if (r->ranks)
        for (int rk = 0; rk < r->P; rk++)
            free(r->ranks[rk].colls);
    free(r->ranks);
    r->ranks = NULL;
    free(r->msgs);
    free(r->bigids);
    free(r->names);
    r->msgs = NULL, r->bigids = NULL, r->names = NULL;
}

static void reader_free(creader_t *r)
{
    reader_release(r);
    for (int32_t g = 0; g < r->ngroups; g++) {
        free(r->groups[g].name);
        free(r->groups[g].members);
    }
    free(r->groups);
    cs_program_free(r->p);
}

static int check_ranks(const cs_chakra_opts_t *o, const char *name, int P, cs_error_t *err)
{
    if (o->max_ranks > 0 && P > o->max_ranks)
        return cs_error_set(err, CS_ERR_RANGE, "%s: the trace has %d ranks but the machine has "
                            "only %d nodes; choose a machine with at least %d nodes", name, P,
                            o->max_ranks, P);
    if (P > CS_CHAKRA_MAX_RANKS)
        return cs_error_set(err, CS_ERR_RANGE, "%s: the trace has %d ranks; at most %d", name, P,
                            CS_CHAKRA_MAX_RANKS);
    return CS_OK;
}

/* Where the ranks' bytes come from: rank's whole file, valid until the next
 * call. */
typedef int (*rank_bytes_fn)(void *ctx, int rank, const uint8_t **data, size_t *len,
                             cs_error_t *err);

/* The passes: each rank in turn is decoded, checked and made into ops (so
 * that one rank's bytes and nodes are held at a time), then the messages
 * are paired, the collectives expanded, the export's ids given back. */
static int read_trace(int P, const char *name, const cs_chakra_opts_t *o, rank_bytes_fn get,
                      void *ctx, cs_program_t **out, cs_chakra_info_t *info, cs_error_t *err)
{
    creader_t r;
    int rc;
    *out = NULL;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.err = err;
    r.name = name ? name : "<buffer>";
    r.op_ids = -1;
    if (P < 1)
        return cs_error_set(err, CS_ERR_PARSE, "%s: no rank file", r.name);
    if ((rc = check_ranks(o, r.name, P, err)))
        return rc;
    if (!(o->flops_per_second > 0))
        return cs_error_set(err, CS_ERR_USAGE, "Chakra: the compute rate must be > 0");
    r.P = P;
    r.ranks = cs_calloc((size_t)P, sizeof *r.ranks);
    r.pba = (ProtobufCAllocator){arena_alloc, arena_free, &r.arena};
    if (o->comm_group && (rc = read_comm_group_file(&r, o->comm_group)))
        goto out;
    r.p = cs_program_new(P);
    for (int rk = 0; rk < P && !rc; rk++) {
        const uint8_t *data;
        size_t len;
        if (!(rc = get(ctx, rk, &data, &len, err)) && !(rc = parse_rank(&r, rk, data, len)) &&
            !(rc = check_dag(&r, rk)))
            rc = make_ops(&r, rk);
    }
    if (!rc && !(rc = pair_messages(&r)) && !(rc = resolve_groups(&r)))
        rc = expand_collectives(&r);
    if (!rc)
        rc = collsim_finish(&r);
    if (rc)
        goto out;
    reader_release(&r); /* before finalize builds the program's tables */
    cs_program_set_source(r.p, r.name);
    cs_program_set_time_unit(r.p, r.op_ids == 1 ? r.time_unit : 1e-9);
    if ((rc = cs_program_finalize(r.p, err)))
        goto out;
    *out = r.p;
    r.p = NULL;
    if (info)
        *info = r.info;
out:
    reader_free(&r);
    return rc;
}

typedef struct buffers {
    const uint8_t *const *data;
    const size_t *len;
} buffers_t;

static int buffer_bytes(void *ctx, int rank, const uint8_t **data, size_t *len, cs_error_t *err)
{
    const buffers_t *b = ctx;
    (void)err;
    *data = b->data[rank];
    *len = b->len[rank];
    return CS_OK;
}

int cs_chakra_read_buffers(const uint8_t *const *data, const size_t *len, int P,
                           const char *name, const cs_chakra_opts_t *o, cs_program_t **out,
                           cs_chakra_info_t *info, cs_error_t *err)
{
    buffers_t b = {data, len};
    return read_trace(P, name, o, buffer_bytes, &b, out, info, err);
}

/* "X.12.et" -> 12 (and the prefix's length); -1 when path is not one. */
static long rank_suffix(const char *path, size_t *prefix_len)
{
    size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 3, ".et"))
        return -1;
    size_t e = n - 3, b = e;
    while (b > 0 && path[b - 1] >= '0' && path[b - 1] <= '9')
        b--;
    if (b == e || e - b > 9 || b < 2 || path[b - 1] != '.' || (path[b] == '0' && e - b > 1))
        return -1;
    *prefix_len = b - 1;
    return strtol(path + b, NULL, 10);
}

/* The rank files, read one at a time into one buffer (the largest file's
 * size). */
typedef struct rankfiles {
    const char *prefix;
    uint8_t *buf;
    size_t cap;
} rankfiles_t;

static int file_bytes(void *ctx, int rank, const uint8_t **data, size_t *len, cs_error_t *err)
{
    rankfiles_t *rf = ctx;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s.%d.et", rf->prefix, rank);
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        int e = errno;
        if (f)
            fclose(f);
        return cs_error_set(err, CS_ERR_IO, "%s: cannot read the rank file: %s", path,
                            f ? "not a regular file" : strerror(e));
    }
    *len = (size_t)st.st_size;
    if (*len > rf->cap) {
        free(rf->buf);
        rf->buf = cs_malloc(*len);
        rf->cap = *len;
    }
    if (*len && fread(rf->buf, 1, *len, f) != *len) {
        fclose(f);
        return cs_error_set(err, CS_ERR_IO, "%s: read error", path);
    }
    fclose(f);
    *data = rf->buf;
    return CS_OK;
}

int cs_chakra_read(const char *path, const cs_chakra_opts_t *o, cs_program_t **out,
                   cs_chakra_info_t *info, cs_error_t *err)
{
    size_t plen;
    char prefix[PATH_MAX];
    *out = NULL;
    if (strlen(path) >= sizeof prefix - 16)
        return cs_error_set(err, CS_ERR_USAGE, "%s: path too long", path);
    if (rank_suffix(path, &plen) >= 0)
        snprintf(prefix, sizeof prefix, "%.*s", (int)plen, path);
    else
        snprintf(prefix, sizeof prefix, "%s", path);
    /* the directory and the file names' start */
    char dir[PATH_MAX];
    const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - prefix) + (slash == prefix) : 1,
             slash ? prefix : ".");
    DIR *d = opendir(dir);
    if (!d)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot list the directory '%s' for the rank "
                            "files %s.N.et: %s", path, dir, prefix, strerror(errno));
    long most = -1, count = 0;
    size_t blen = strlen(base);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t pl;
        long rk;
        if (strncmp(de->d_name, base, blen) || (rk = rank_suffix(de->d_name, &pl)) < 0 ||
            pl != blen)
            continue;
        count++;
        if (rk > most)
            most = rk;
    }
    closedir(d);
    if (most < 0)
        return cs_error_set(err, CS_ERR_IO, "%s.0.et: no such rank file; expected a Chakra "
                            "trace's files PREFIX.0.et .. PREFIX.(P-1).et", prefix);
    int rc, P = (int)(most + 1);
    if (most >= CS_CHAKRA_MAX_RANKS)
        return cs_error_set(err, CS_ERR_RANGE, "%s.%ld.et: rank %ld; at most %d ranks", prefix,
                            most, most, CS_CHAKRA_MAX_RANKS);
    if ((rc = check_ranks(o, prefix, P, err)))
        return rc;
    /* every file is there before any is read: a missing one is named first */
    for (int rk = 0; rk < P && !rc; rk++) {
        char file[PATH_MAX + 32];
        struct stat st;
        snprintf(file, sizeof file, "%s.%d.et", prefix, rk);
        if (stat(file, &st) && errno == ENOENT)
            rc = cs_error_set(err, CS_ERR_IO, "%s: missing rank file; the trace has %s.%ld.et, "
                              "so expected one file per rank 0..%ld", file, prefix, most, most);
    }
    rankfiles_t rf = {prefix, NULL, 0};
    if (!rc)
        rc = read_trace(P, prefix, o, file_bytes, &rf, out, info, err);
    free(rf.buf);
    return rc;
}

int cs_chakra_sniff(const char *path, int *is_chakra, cs_error_t *err)
{
    size_t plen;
    struct stat st;
    (void)err;
    *is_chakra = 0;
    if (rank_suffix(path, &plen) >= 0) {
        *is_chakra = 1;
        return CS_OK;
    }
    if (stat(path, &st)) {
        char file[PATH_MAX + 32];
        snprintf(file, sizeof file, "%s.0.et", path);
        *is_chakra = !stat(file, &st);
        return CS_OK;
    }
    /* a file of another name: a length prefix, then GlobalMetadata's field
     * 1 (version, a string: tag byte 0x0a) */
    FILE *f = fopen(path, "rb");
    uint8_t b[16];
    size_t n = f ? fread(b, 1, sizeof b, f) : 0;
    if (f)
        fclose(f);
    size_t off = 0;
    uint64_t mlen;
    int bad;
    if (n >= 3 && read_varint32(b, n, &off, &mlen, &bad) && off < n && b[off] == 0x0a &&
        mlen > 0 && (int64_t)mlen <= (int64_t)st.st_size - (int64_t)off)
        *is_chakra = 1;
    return CS_OK;
}

#endif
