/*
 * chakra_write.c - a program written as per-rank Chakra execution traces
 * (chakra_write.h, docs/chakra.md "Export").
 *
 * The wire format is MLCommons Chakra's (schema/protobuf/et_def.proto,
 * messages in chakra_et.proto): each message prefixed with its length as a
 * varint32, as ASTRA-sim's ProtobufUtils::readMessage reads it.  Attribute
 * types follow what ASTRA-sim's feeders read: the v1 feeder
 * (chakra src/feeder/et_feeder_node.cpp) reads comm_src / comm_dst /
 * comm_tag with int32_val(), comm_size with int64_val(), is_cpu_op with
 * bool_val(); FeederV3 (used by astra-sim/workload/Workload.cc) converts
 * any integer type, so those types suit both.
 *
 * Semantics ASTRA-sim gives the nodes (astra-sim/workload/Workload.cc,
 * HardwareResource.cc): a node starts once all its data_deps and
 * ctrl_deps have finished; a COMP_NODE lasts duration_micros (1 ns when 0);
 * a rank has one send and one computation in flight at a time (as
 * collsim's one-send rule), recvs are not limited.
 */
#include "io/chakra_write.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/outfile.h"

#if CS_HAVE_CHAKRA

#include "chakra_et.pb-c.h"

/* A recv's or send's tag goes into int32_val, a size into int64_val. */

/* "op N (rank R): " prefix of a refusal. */
static int refuse(cs_error_t *err, const cs_program_t *p, int32_t id, const char *why)
{
    char what[96];
    cs_program_describe(p, id, what, sizeof what);
    return cs_error_set(err, CS_ERR_RANGE, "op %" PRId32 " (rank %" PRId32 ", %s): %s", id,
                        cs_program_op(p, id)->rank, what, why);
}

/* The calc time in microseconds, rounded to the nearest (half up); -1 if
 * it cannot be expressed (machine ticks, or beyond 2^63). */
static int64_t calc_micros(int64_t ticks, double unit)
{
    if (ticks == 0)
        return 0;
    if (unit <= 0)
        return -1;
    if (unit == 1e-9) /* GOAL and TI: nanoseconds, exactly */
        return ticks / 1000 + (ticks % 1000 >= 500);
    double x = floor((double)ticks * (unit / 1e-6) + 0.5);
    if (!(x >= 0 && x < 9.2e18))
        return -1;
    return (int64_t)x;
}

static int check_program(const cs_program_t *p, cs_error_t *err)
{
    if (!cs_program_is_finalized(p) || cs_program_is_windowed(p))
        return cs_error_set(err, CS_ERR_INTERNAL,
                            "the Chakra writer needs a whole, finalized program");
    double unit = cs_program_time_unit(p);
    int32_t n = cs_program_nops(p);
    for (int32_t id = 0; id < n; id++) {
        const cs_op_t *op = cs_program_op(p, id);
        switch ((cs_op_kind_t)op->kind) {
        case CS_OP_MCAST:
            return refuse(err, p, id,
                          "a multicast: Chakra has no node for one payload to several ranks "
                          "(export a unicast algorithm, or lower it in the algorithm)");
        case CS_OP_RECV:
            if (op->peer == CS_ANY || op->tag == CS_ANY)
                return refuse(err, p, id,
                              "a recv from any source or with any tag: Chakra's "
                              "COMM_RECV_NODE names one comm_src and one comm_tag");
            /* fall through */
        case CS_OP_SEND:
            if (op->tag < 0)
                return refuse(err, p, id, "a negative tag: Chakra's comm_tag is unsigned");
            break;
        case CS_OP_CALC:
            if (op->ticks < 0 || calc_micros(op->ticks, unit) < 0)
                return refuse(err, p, id,
                              unit <= 0 ? "a calc with a fixed time in machine ticks: Chakra "
                                          "durations are microseconds, which need a clock "
                                          "(a program read from GOAL or TI has one)"
                                        : "a calc time beyond Chakra's duration_micros");
            break;
        }
    }
    return CS_OK;
}

/* ---- one rank's stream --------------------------------------------------------- */

/* A growing byte buffer for one packed message. */
typedef struct wbuf {
    uint8_t *b;
    size_t cap;
} wbuf_t;

static uint8_t *wbuf_room(wbuf_t *w, size_t n)
{
    if (n > w->cap) {
        w->cap = n > 2 * w->cap ? n : 2 * w->cap;
        w->b = cs_realloc(w->b, w->cap);
    }
    return w->b;
}

/* Writes msg with its varint32 length prefix. */
static void put_msg(FILE *f, wbuf_t *w, const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t pre[5];
    int k = 0;
    CS_ASSERT(n <= UINT32_MAX);
    for (uint32_t v = (uint32_t)n; ; v >>= 7) {
        pre[k++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80)
            break;
    }
    fwrite(pre, 1, (size_t)k, f);
    protobuf_c_message_pack(msg, wbuf_room(w, n));
    fwrite(w->b, 1, n, f);
}

static void attr_i64(ChakraProtoMsg__AttributeProto *a, const char *name, int64_t v)
{
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a->int64_val = v;
}

static void attr_i32(ChakraProtoMsg__AttributeProto *a, const char *name, int32_t v)
{
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL;
    a->int32_val = v;
}

static void attr_bool(ChakraProtoMsg__AttributeProto *a, const char *name, int v)
{
    chakra_proto_msg__attribute_proto__init(a);
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    a->bool_val = v != 0;
}

static void attr_list(ChakraProtoMsg__AttributeProto *a, ChakraProtoMsg__Int64List *l,
                      const char *name, int64_t *v, size_t n)
{
    chakra_proto_msg__attribute_proto__init(a);
    chakra_proto_msg__int64_list__init(l);
    l->values = v;
    l->n_values = n;
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_LIST;
    a->int64_list = l;
}

static void write_metadata(const cs_program_t *p, FILE *f, wbuf_t *w)
{
    ChakraProtoMsg__GlobalMetadata md;
    ChakraProtoMsg__AttributeProto a[3], *ap[3] = {&a[0], &a[1], &a[2]};
    chakra_proto_msg__global_metadata__init(&md);
    md.version = (char *)CS_CHAKRA_WRITE_VERSION;
    attr_i64(&a[0], CS_CHAKRA_ATTR_RANKS, cs_program_nranks(p));
    chakra_proto_msg__attribute_proto__init(&a[1]);
    a[1].name = (char *)CS_CHAKRA_ATTR_TIME_UNIT;
    a[1].value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
    a[1].double_val = cs_program_time_unit(p);
    attr_bool(&a[2], CS_CHAKRA_ATTR_OP_IDS, 1);
    md.attr = ap;
    md.n_attr = 3;
    put_msg(f, w, &md.base);
}

/* The node of op `id`; deps and kinds are scratch of the op's dep count. */
static void write_node(const cs_program_t *p, int32_t id, double unit, FILE *f, wbuf_t *w,
                       uint64_t *deps, int64_t *kinds)
{
    const cs_op_t *op = cs_program_op(p, id);
    ChakraProtoMsg__Node node;
    ChakraProtoMsg__AttributeProto a[8], *ap[8];
    ChakraProtoMsg__Int64List dl, kl;
    int64_t data[3];
    size_t na = 0;
    int npred, special = 0;
    const cs_dep_t *pred = cs_program_preds(p, id, &npred);
    const char *label = cs_program_label(p, id);

    chakra_proto_msg__node__init(&node);
    node.id = (uint64_t)id;
    if (label)
        node.name = (char *)label;
    for (int i = 0; i < npred; i++) {
        deps[i] = (uint64_t)cs_dep_op(pred[i]);
        kinds[i] = cs_dep_kind(pred[i]);
        special |= kinds[i] != CS_DEP_AFTER;
    }
    node.data_deps = deps;
    node.n_data_deps = (size_t)npred;
    attr_bool(&a[na++], "is_cpu_op", 0);
    if (op->kind == CS_OP_CALC) {
        node.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
        node.duration_micros = (uint64_t)calc_micros(op->ticks, unit);
        attr_i64(&a[na++], CS_CHAKRA_ATTR_CALC_TICKS, op->ticks);
        if (op->bytes)
            attr_i64(&a[na++], CS_CHAKRA_ATTR_CALC_BYTES, op->bytes);
    } else {
        int send = op->kind == CS_OP_SEND;
        node.type = send ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE
                         : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
        attr_i32(&a[na++], "comm_src", send ? op->rank : op->peer);
        attr_i32(&a[na++], "comm_dst", send ? op->peer : op->rank);
        attr_i64(&a[na++], "comm_size", op->bytes);
        attr_i32(&a[na++], "comm_tag", op->tag);
        const cs_data_t *d = cs_program_data(p, id);
        if (d) {
            data[0] = d->off;
            data[1] = d->len;
            data[2] = (int64_t)d->mode;
            attr_list(&a[na], &dl, CS_CHAKRA_ATTR_DATA, data, 3);
            na++;
        }
    }
    if (special) {
        attr_list(&a[na], &kl, CS_CHAKRA_ATTR_DEP_KINDS, kinds, (size_t)npred);
        na++;
    }
    for (size_t i = 0; i < na; i++)
        ap[i] = &a[i];
    node.attr = ap;
    node.n_attr = na;
    put_msg(f, w, &node.base);
}

/* Writes the ops of `rank` listed in ids[0..n). */
static int write_ops(const cs_program_t *p, const int32_t *ids, int32_t n, FILE *f,
                     cs_error_t *err)
{
    wbuf_t w = {NULL, 0};
    uint64_t *deps = NULL;
    int64_t *kinds = NULL;
    int cap = 0;
    double unit = cs_program_time_unit(p);
    write_metadata(p, f, &w);
    for (int32_t i = 0; i < n && !ferror(f); i++) {
        int npred;
        cs_program_preds(p, ids[i], &npred);
        if (npred > cap) {
            cap = npred > 2 * cap ? npred : 2 * cap;
            deps = cs_realloc(deps, (size_t)cap * sizeof *deps);
            kinds = cs_realloc(kinds, (size_t)cap * sizeof *kinds);
        }
        write_node(p, ids[i], unit, f, &w, deps, kinds);
    }
    free(w.b);
    free(deps);
    free(kinds);
    if (ferror(f))
        return cs_error_set(err, CS_ERR_IO, "write error: %s", strerror(errno ? errno : EIO));
    return CS_OK;
}

static int write_rank(const cs_program_t *p, int rank, FILE *f, cs_error_t *err)
{
    int32_t n = cs_program_nops(p), k = 0;
    int32_t *ids;
    if (rank < 0 || rank >= cs_program_nranks(p))
        return cs_error_set(err, CS_ERR_RANGE, "rank %d: the program has ranks 0..%d", rank,
                            cs_program_nranks(p) - 1);
    ids = cs_malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    for (int32_t id = 0; id < n; id++)
        if (cs_program_op(p, id)->rank == rank)
            ids[k++] = id;
    int rc = write_ops(p, ids, k, f, err);
    free(ids);
    return rc;
}

/* ---- the whole set ------------------------------------------------------------- */

/* "PREFIX.R.et" plus a suffix ("" or ".part"). */
static char *rank_path(const char *prefix, int rank, int part)
{
    size_t n = strlen(prefix) + 32;
    char *s = cs_malloc(n);
    snprintf(s, n, "%s.%d.et%s", prefix, rank, part ? ".part" : "");
    return s;
}

/* Removes the parts of ranks 0..n-1. */
static void remove_parts(const char *prefix, int n)
{
    for (int r = 0; r < n; r++) {
        char *part = rank_path(prefix, r, 1);
        unlink(part);
        free(part);
    }
}

static int write_set(const cs_program_t *p, const char *prefix, cs_error_t *err)
{
    int rc, P = cs_program_nranks(p);
    int32_t n = cs_program_nops(p);
    if ((rc = check_program(p, err)))
        return rc;
    /* each rank's ops in id order: a counting sort by rank, O(ops + P) */
    int32_t *start = cs_calloc((size_t)P + 1, sizeof *start);
    int32_t *ids = cs_malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
    for (int32_t id = 0; id < n; id++)
        start[cs_program_op(p, id)->rank + 1]++;
    for (int r = 0; r < P; r++)
        start[r + 1] += start[r];
    int32_t *fill = cs_malloc(((size_t)P + 1) * sizeof *fill);
    memcpy(fill, start, ((size_t)P + 1) * sizeof *fill);
    for (int32_t id = 0; id < n; id++)
        ids[fill[cs_program_op(p, id)->rank]++] = id;
    free(fill);

    int done = 0;
    for (; done < P && rc == CS_OK; done++) {
        char *part = rank_path(prefix, done, 1);
        cs_outfile_t *o = NULL;
        if ((rc = cs_outfile_open(NULL, part, &o, err)) == CS_OK) {
            rc = write_ops(p, ids + start[done], start[done + 1] - start[done],
                           cs_outfile_stream(o), err);
            if (rc == CS_OK)
                rc = cs_outfile_commit(o, err);
            else {
                cs_outfile_abort(o);
                cs_error_prefix(err, "%s", part);
            }
        }
        free(part);
    }
    free(start);
    free(ids);
    if (rc != CS_OK) {
        remove_parts(prefix, done);
        return rc;
    }
    for (int r = 0; r < P; r++) {
        char *part = rank_path(prefix, r, 1), *path = rank_path(prefix, r, 0);
        if (rename(part, path) != 0 && rc == CS_OK)
            rc = cs_error_set(err, CS_ERR_IO, "%s: cannot rename %s over it: %s", path, part,
                              strerror(errno));
        free(part);
        free(path);
        if (rc != CS_OK) {
            remove_parts(prefix, P);
            return rc;
        }
    }
    /* an earlier, larger set's higher ranks would be read as ours */
    for (int r = P; ; r++) {
        char *path = rank_path(prefix, r, 0);
        int gone = unlink(path) == 0;
        free(path);
        if (!gone)
            break;
    }
    return CS_OK;
}

/* ---- joins ----------------------------------------------------------------------- */

/* Chakra has no join: a COMP_NODE in its place would take a rank's
 * computation slot (and 1 ns) in ASTRA-sim, and read back, collsim's CPU.
 * The program the joins stand for (cs_program_without_joins) is written
 * instead. */

int cs_chakra_write_check(const cs_program_t *p, cs_error_t *err)
{
    cs_program_t *direct;
    int rc = cs_program_without_joins(p, &direct, err);
    if (rc == CS_OK)
        rc = check_program(direct ? direct : p, err);
    cs_program_free(direct);
    return rc;
}

int cs_chakra_write_rank(const cs_program_t *p, int rank, FILE *f, cs_error_t *err)
{
    cs_program_t *direct;
    int rc = cs_program_without_joins(p, &direct, err);
    if (rc == CS_OK)
        rc = write_rank(direct ? direct : p, rank, f, err);
    cs_program_free(direct);
    return rc;
}

int cs_chakra_write(const cs_program_t *p, const char *prefix, cs_error_t *err)
{
    cs_program_t *direct;
    int rc;
    if (!prefix || !*prefix)
        return cs_error_set(err, CS_ERR_USAGE, "Chakra export: no file prefix (-o PREFIX)");
    if ((rc = cs_program_without_joins(p, &direct, err)) == CS_OK)
        rc = write_set(direct ? direct : p, prefix, err);
    cs_program_free(direct);
    return rc;
}

#else /* !CS_HAVE_CHAKRA */

static int no_chakra(cs_error_t *err)
{
    return cs_error_set(err, CS_ERR_USAGE,
                        "Chakra traces need protobuf-c: this collsim was built without it "
                        "(install libprotobuf-c-dev and protobuf-c-compiler, meson option "
                        "chakra)");
}

int cs_chakra_write_check(const cs_program_t *p, cs_error_t *err)
{
    (void)p;
    return no_chakra(err);
}

int cs_chakra_write_rank(const cs_program_t *p, int rank, FILE *f, cs_error_t *err)
{
    (void)p, (void)rank, (void)f;
    return no_chakra(err);
}

int cs_chakra_write(const cs_program_t *p, const char *prefix, cs_error_t *err)
{
    (void)p, (void)prefix;
    return no_chakra(err);
}

#endif
