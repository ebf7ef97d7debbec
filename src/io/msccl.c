/*
 * msccl.c - MSCCL XML algorithms as algorithms of the collective suite
 * (msccl.h, docs/msccl.md).
 *
 * The format is the one the MSCCL executor reads (msccl repository,
 * src/misc/msccl/msccl_parser.cc and the kernels of
 * src/collectives/device/msccl_kernel_impl.h; the generator's side in
 * msccl-tools, msccl/language/ir.py):
 *
 *   <algo name coll ngpus nchunksperloop nchannels inplace proto ...>
 *     <gpu id i_chunks o_chunks s_chunks>
 *       <tb id send recv chan>
 *         <step s type srcbuf srcoff dstbuf dstoff cnt depid deps hasdep/>
 *
 * A thread block (tb) is a sequential stream of steps on its GPU; the tbs
 * of a GPU run concurrently.  A tb sends to its `send` peer and receives
 * from its `recv` peer; a step may also wait for step `deps` of tb `depid`
 * of the same GPU.  Buffers i, o, s are counted in chunks: the collective's
 * buffer divided by nchunksperloop; a step moves `cnt` chunks.  The step
 * types are the executor's: s (send src), r (recv into dst), rcs (recv into
 * dst, send it on), rrs (recv, reduce with src, send the sum on), rrc
 * (recv, reduce with src into dst), rrcs (rrc, then send the sum on), cpy
 * (local copy src -> dst), re (local reduction of src into dst) and nop
 * (dependencies only).
 *
 * How a step becomes ops, and what the program model cannot say exactly
 * (rrs leaves its sum in src; i and o are one buffer), is in docs/msccl.md.
 * The matching of a tb's messages: the k-th tb of GPU A that sends to B on
 * channel c is paired with the k-th tb of B that receives from A on c (in
 * tb id order), and the pair's messages are matched in step order; a
 * message's tag is the sending tb's id, so that two pairs between the same
 * GPUs never match each other's messages.
 */
#include "io/msccl.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlversion.h>

#include "core/checked.h"
#include "core/proto.h"
#include "io/algofile_internal.h"
#include "topo/xmlread.h"

/* Bounds that keep every count in an int32 and a file's program in memory
 * (each is far above what any synthesizer writes). */
#define MSCCL_MAX_GPUS 65536
#define MSCCL_MAX_CHUNKS (1 << 24)
#define MSCCL_MAX_STEPS (1 << 24)
/* Tags of local copies: above any tb id (tb ids are below MSCCL_MAX_STEPS). */
#define MSCCL_LOCAL_TAG (1 << 25)

/* ---- step types ------------------------------------------------------------ */

enum { F_SEND = 1, F_RECV = 2, F_SRC = 4, F_DST = 8, F_REDUCE = 16, F_LOCAL = 32 };

typedef enum {
    T_S, T_R, T_RE, T_RCS, T_RRS, T_RRC, T_RRCS, T_CPY, T_NOP, T_NTYPES
} step_type_t;

/* The executor's step types; F_SRC / F_DST: the buffers the step reads or
 * writes (and so whose bounds are checked). */
static const struct {
    const char *name;
    unsigned flags;
} step_types[T_NTYPES] = {
    [T_S] = {"s", F_SEND | F_SRC},
    [T_R] = {"r", F_RECV | F_DST},
    [T_RE] = {"re", F_SRC | F_DST | F_REDUCE | F_LOCAL},
    [T_RCS] = {"rcs", F_RECV | F_SEND | F_DST},
    [T_RRS] = {"rrs", F_RECV | F_SEND | F_SRC | F_REDUCE},
    [T_RRC] = {"rrc", F_RECV | F_SRC | F_DST | F_REDUCE},
    [T_RRCS] = {"rrcs", F_RECV | F_SEND | F_SRC | F_DST | F_REDUCE},
    [T_CPY] = {"cpy", F_SRC | F_DST | F_LOCAL},
    [T_NOP] = {"nop", 0},
};

enum { BUF_I = CS_ALGOFILE_BUF_I, BUF_O = CS_ALGOFILE_BUF_O, BUF_S = CS_ALGOFILE_BUF_S };
static const char *const buf_names[] = {"i", "o", "s"};

/* ---- the file, as read ------------------------------------------------------- */

typedef struct step { /* 44 bytes (static assertion below): no allocation of its own */
    int32_t srcoff, dstoff, cnt;
    int32_t dep;      /* index of the step it waits for, or -1 */
    int32_t match;    /* recv: index of the step whose send it receives; -1 */
    int32_t tb;       /* index of its tb */
    int32_t s;        /* its number in the tb */
    int32_t line;
    int32_t depid, deps; /* as written, for messages */
    uint8_t type, srcbuf, dstbuf, hasdep;
} step_t;
_Static_assert(sizeof(step_t) == 44, "step_t: the reader's memory a step (see reading)");

typedef struct tb {
    int32_t id, send, recv, chan;
    int32_t gpu, line;
    int32_t first, n;    /* its steps */
    int32_t to, from;    /* paired tbs: receiving its sends, sending its recvs; -1 */
} tb_t;

typedef struct gpu {
    int32_t chunks[3];   /* i_chunks, o_chunks, s_chunks */
    int32_t first, n;    /* its tbs, in id order */
    int32_t line;
} gpu_t;

struct cs_msccl {
    char *file, *name, *coll, *proto, *redop;
    cs_coll_kind_t kind;
    int32_t ngpus, nchunks, nchannels, inplace, line;
    gpu_t *gpus;
    tb_t *tbs;
    int32_t ntbs, cap_tbs;
    step_t *steps;
    int32_t nsteps, cap_steps;
    int32_t *order; /* the steps in an order in which each can run (emission) */
    char *ids;      /* the text of a "collsim order:" comment (msccl_write.c), or NULL */
    int32_t ids_line;
};

void cs_msccl_free(cs_msccl_t *m)
{
    if (!m)
        return;
    free(m->file);
    free(m->name);
    free(m->coll);
    free(m->proto);
    free(m->redop);
    free(m->gpus);
    free(m->tbs);
    free(m->steps);
    free(m->order);
    free(m->ids);
    free(m);
}

/* ---- reading: a libxml2 SAX parser ------------------------------------------- */

/* The file is read by a libxml2 SAX parser that asks the source for a few
 * KB at a time (feed_read) and builds the steps, tbs and gpus above as it
 * goes: no tree.  The tree of the 248 MB file of `collsim bench -w
 * msccl-ring-1k` (2,096,128 steps) took 5.1 GB and 6 s to build; the
 * arrays take 44 bytes a step (step_t).  A SAX callback runs while the
 * parser stands on the tag, so lines are exact at any size (a tree's stop
 * at 65535; netfile_gmlscan.c says why not xmlTextReader).
 *
 * libxml2's pull parser (xmlParseDocument), not its push parser
 * (xmlParseChunk): the two word some faults differently ("Start tag
 * expected, '<' not found" / "Document is empty") and only the pull parser
 * applies the depth limit of a tree; the pull parser's SAX says everything
 * exactly as the tree reader this replaces did.
 *
 * The refusals are those of a reader that walks a tree after the parse,
 * in the same order: malformed XML anywhere in the file first (libxml2's
 * first error), then the first entity reference, then the first fault of
 * the contents in document order.  So a fault of the contents is held
 * (sax_t.sem) while the parser reads on for the other two, and the
 * callbacks stop building (sax_t.sem_rc) but keep looking for entity
 * references.  Checked against that reader on 100,000 mutated files
 * (every message identical) when it was replaced. */

/* libxml2's xmlParserMaxDepth: its parser refuses an element with more
 * open around it ("Excessive depth in document"), so that the stack of
 * open elements below never holds more than MSCCL_MAX_DEPTH + 1. */
#define MSCCL_MAX_DEPTH 256
#define MSCCL_MAX_ATTRS 12 /* the most attribute names an element has (algo: 11) */

/* One element's attributes as libxml2 hands them over (5 pointers each:
 * local name, prefix, URI, value, end of value; the last ndef are the
 * DTD's defaults), indexed by the element's valid names. */
typedef struct elem {
    const char *name; /* local name */
    int line;
    const xmlChar *v[MSCCL_MAX_ATTRS], *end[MSCCL_MAX_ATTRS]; /* NULL: absent */
    uint8_t dflt[MSCCL_MAX_ATTRS]; /* a DTD default: its text as the DTD gives it */
} elem_t;

/* The step attributes, named by index (step_attrs below). */
enum { SA_S, SA_TYPE, SA_SRCBUF, SA_SRCOFF, SA_DSTBUF, SA_DSTOFF, SA_CNT, SA_DEPID, SA_DEPS,
       SA_HASDEP };
enum { TA_ID, TA_SEND, TA_RECV, TA_CHAN };
enum { GA_ID, GA_I, GA_O, GA_S };
enum { AA_NAME, AA_COLL, AA_NGPUS, AA_NCHUNKS, AA_NCHANNELS, AA_INPLACE, AA_OUTOFPLACE, AA_PROTO,
       AA_REDOP, AA_MINBYTES, AA_MAXBYTES };

static const char *const step_attrs[] = {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff",
                                         "cnt", "depid", "deps", "hasdep", NULL};
static const char *const tb_attrs[] = {"id", "send", "recv", "chan", NULL};
static const char *const gpu_attrs[] = {"id", "i_chunks", "o_chunks", "s_chunks", NULL};
static const char *const algo_attrs[] = {"name", "coll", "ngpus", "nchunksperloop", "nchannels",
                                         "inplace", "outofplace", "proto", "redop", "minBytes",
                                         "maxBytes", NULL};

typedef struct sax {
    cs_msccl_t *m;
    xmlParserCtxtPtr ctx;
    int depth;             /* of the element being read (the root: 1) */
    struct {
        const xmlChar *name; /* libxml2's dictionary keeps it for the parse */
        int32_t line;
    } open[MSCCL_MAX_DEPTH + 1]; /* the open elements, open[depth - 1] innermost */
    int sem_rc;            /* the first fault of the contents (then no more building) */
    cs_error_t sem;
    int ent_set;           /* the first entity reference */
    cs_error_t ent;
    cs_netfile_xml_first_t xml; /* libxml2's first error */
    int32_t gpu;           /* the <gpu> being read */
    tb_t tb;               /* the <tb> being read */
    step_t step;           /* the <step> being read: checked at its start, kept at its end */
    int step_rc;           /* a fault of its attributes, refused at its end (after its children) */
    cs_error_t step_err;
    const xmlChar *names[4][MSCCL_MAX_ATTRS]; /* *_attrs in the parser's dictionary */
} sax_t;

static int sax_line(const sax_t *s)
{
    int line = xmlSAX2GetLineNumber(s->ctx);
    return line > 0 ? line : 1;
}

static int fail(const cs_msccl_t *m, int line, cs_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(const cs_msccl_t *m, int line, cs_error_t *err, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(err, CS_ERR_PARSE, "%s:%d: %s", m->file, line, msg);
}

/* An attribute's value as a tree would give it (xmlGetProp), into buf (at
 * most len - 1 bytes, cut as the tree reader's buffers cut it).  Without
 * XML_PARSE_NOENT libxml2 hands a literal '&' over as "&#38;" (put back
 * here) and a reference as "&name;" (refused before any value counts). */
static void value_text(const elem_t *e, int k, char *buf, size_t len)
{
    const xmlChar *v = e->v[k], *end = e->end[k];
    size_t n = 0;
    while (v < end) {
        if (!e->dflt[k] && *v == '&' && end - v >= 5 && !memcmp(v, "&#38;", 5)) {
            v += 5;
            if (n + 1 < len)
                buf[n++] = '&';
            continue;
        }
        if (n + 1 < len)
            buf[n++] = (char)*v;
        v++;
    }
    buf[n] = '\0';
}

/* Indexes the attributes of an element by `valid` (NULL-terminated; the
 * first of a name counts, as for xmlGetProp) and refuses the first one
 * written that is none of them.  The DTD's defaults are looked up but
 * never refused: a tree holds them in its DTD, not among the element's
 * attributes. */
static int elem_open(const sax_t *s, elem_t *e, const xmlChar *name, int nb, int ndef,
                     const xmlChar **attrs, int level, cs_error_t *err)
{
    static const char *const *const valid_of[] = {algo_attrs, gpu_attrs, tb_attrs, step_attrs};
    const char *const *valid = valid_of[level];
    const xmlChar *const *interned = s->names[level];
    memset(e, 0, sizeof *e);
    e->name = (const char *)name;
    e->line = sax_line(s);
    for (int i = 0; i < nb; i++) {
        const char *an = (const char *)attrs[5 * i];
        int k = 0;
        /* the parser's names come from its dictionary: a pointer compared
         * is a name compared, and a miss is compared as text */
        while (valid[k] && interned[k] != attrs[5 * i])
            k++;
        if (!valid[k])
            for (k = 0; valid[k] && strcmp(valid[k], an);)
                k++;
        if (!valid[k]) {
            if (i >= nb - ndef)
                continue;
            char list[256] = "";
            for (int j = 0; valid[j]; j++) {
                strncat(list, j ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, valid[j], sizeof list - strlen(list) - 1);
            }
            return fail(s->m, e->line, err, "<%s>: unknown attribute '%.64s'; valid: %s",
                        e->name, an, list);
        }
        if (!e->v[k]) {
            e->v[k] = attrs[5 * i + 3];
            e->end[k] = attrs[5 * i + 4];
            e->dflt[k] = i >= nb - ndef;
        }
    }
    return CS_OK;
}

/* The text of attribute k (NULL when absent), copied into buf. */
static const char *attr_text(const elem_t *e, int k, char *buf, size_t len)
{
    if (!e->v[k])
        return NULL;
    value_text(e, k, buf, len);
    return buf;
}

/* Whether t is -?[0-9]{1,9}, then its value (what strtoll would read, a
 * tenth of the time: a step has up to seven of them). */
static int small_int(const char *t, long long *out)
{
    int neg = *t == '-', n = 0;
    long long v = 0;
    for (const char *p = t + neg; *p; p++, n++) {
        if (*p < '0' || *p > '9' || n == 9)
            return 0;
        v = 10 * v + (*p - '0');
    }
    if (!n)
        return 0;
    *out = neg ? -v : v;
    return 1;
}

/* An integer attribute in [lo, hi]; absent: dflt, or an error when
 * `required`. */
static int attr_int(const cs_msccl_t *m, const elem_t *e, int k, const char *name, int required,
                    int32_t dflt, int64_t lo, int64_t hi, int32_t *out, cs_error_t *err)
{
    char buf[64], *end;
    const char *t = attr_text(e, k, buf, sizeof buf);
    long long v;
    *out = dflt;
    if (!t) {
        if (required)
            return fail(m, e->line, err, "<%s>: missing attribute %s", e->name, name);
        return CS_OK;
    }
    if (!small_int(t, &v)) {
        errno = 0;
        v = strtoll(t, &end, 10);
        if (end == t || *end || errno)
            v = LLONG_MIN; /* refused below */
    }
    if (v < lo || v > hi)
        return fail(m, e->line, err, "<%s>: %s=\"%.32s\" is not an integer in %lld..%lld",
                    e->name, name, t, (long long)lo, (long long)hi);
    *out = (int32_t)v;
    return CS_OK;
}

/* A string attribute copied to the heap (dflt when absent). */
static char *attr_dup(const elem_t *e, int k, const char *dflt)
{
    if (!e->v[k])
        return cs_strdup(dflt);
    size_t len = (size_t)(e->end[k] - e->v[k]) + 1;
    char *t = cs_malloc(len);
    value_text(e, k, t, len);
    return t;
}

static int read_buf(const cs_msccl_t *m, const elem_t *e, int k, uint8_t *out, cs_error_t *err)
{
    char buf[16];
    const char *t = attr_text(e, k, buf, sizeof buf);
    *out = BUF_I;
    if (!t)
        return fail(m, e->line, err, "<step>: missing attribute %s", step_attrs[k]);
    for (int i = 0; i < 3; i++)
        if (!strcmp(t, buf_names[i])) {
            *out = (uint8_t)i;
            return CS_OK;
        }
    return fail(m, e->line, err, "<step>: %s=\"%.8s\" is no buffer; valid: i (input), "
                "o (output), s (scratch)", step_attrs[k], t);
}

/* A <step>'s attributes, read into s->step when the element starts; a
 * fault goes to s->step_err, refused when the element ends, after its
 * contents (which a tree reader looks at first). */
static int step_attrs_read(sax_t *s, const elem_t *e, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    const tb_t *t = &s->tb;
    step_t st;
    char buf[16];
    const char *type;
    int rc;
    int32_t hasdep;
    memset(&st, 0, sizeof st);
    st.line = e->line;
    st.dep = st.match = -1;
    s->step = st;
    if ((rc = attr_int(m, e, SA_S, "s", 1, 0, 0, INT32_MAX, &st.s, err)))
        return rc;
    if (st.s != t->n)
        return fail(m, st.line, err, "<step s=\"%d\">: gpu %d tb %d's steps are numbered 0, 1, "
                    "2, ... in order; step %d expected here", st.s, t->gpu, t->id, t->n);
    if (!(type = attr_text(e, SA_TYPE, buf, sizeof buf)))
        return fail(m, st.line, err, "<step>: missing attribute type");
    st.type = T_NTYPES;
    for (int i = 0; i < T_NTYPES; i++)
        if (!strcmp(type, step_types[i].name))
            st.type = (uint8_t)i;
    if (st.type == T_NTYPES)
        return fail(m, st.line, err, "<step>: unknown step type '%.8s'; valid: s, r, re, rcs, rrs, "
                    "rrc, rrcs, cpy, nop", type);
    unsigned f = step_types[st.type].flags;
    /* the buffers the type uses are required, the others read when given */
    if ((f & F_SRC) || e->v[SA_SRCBUF])
        if ((rc = read_buf(m, e, SA_SRCBUF, &st.srcbuf, err)))
            return rc;
    if ((f & F_DST) || e->v[SA_DSTBUF])
        if ((rc = read_buf(m, e, SA_DSTBUF, &st.dstbuf, err)))
            return rc;
    if ((rc = attr_int(m, e, SA_SRCOFF, "srcoff", (f & F_SRC) != 0, 0, -1, INT32_MAX, &st.srcoff,
                       err)) ||
        (rc = attr_int(m, e, SA_DSTOFF, "dstoff", (f & F_DST) != 0, 0, -1, INT32_MAX, &st.dstoff,
                       err)) ||
        (rc = attr_int(m, e, SA_CNT, "cnt", st.type != T_NOP, 1, 0, MSCCL_MAX_CHUNKS, &st.cnt,
                       err)) ||
        (rc = attr_int(m, e, SA_DEPID, "depid", 0, -1, -1, INT32_MAX, &st.depid, err)) ||
        (rc = attr_int(m, e, SA_DEPS, "deps", 0, -1, -1, INT32_MAX, &st.deps, err)) ||
        (rc = attr_int(m, e, SA_HASDEP, "hasdep", 0, 0, 0, 1, &hasdep, err)))
        return rc;
    st.hasdep = (uint8_t)hasdep;
    if (st.type != T_NOP && st.cnt < 1)
        return fail(m, st.line, err, "<step>: cnt=\"%d\": a %s step moves at least one chunk",
                    st.cnt, step_types[st.type].name);
    if ((st.depid < 0) != (st.deps < 0))
        return fail(m, st.line, err, "<step>: depid=\"%d\" deps=\"%d\": both name the step "
                    "waited for (tb and step), or both are -1", st.depid, st.deps);
    if ((f & F_SEND) && t->send < 0)
        return fail(m, st.line, err, "<step type=\"%s\">: sends, but gpu %d tb %d has no send "
                    "peer (send=\"-1\")", step_types[st.type].name, t->gpu, t->id);
    if ((f & F_RECV) && t->recv < 0)
        return fail(m, st.line, err, "<step type=\"%s\">: receives, but gpu %d tb %d has no recv "
                    "peer (recv=\"-1\")", step_types[st.type].name, t->gpu, t->id);
    s->step = st;
    return CS_OK;
}

static int step_end(sax_t *s, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    if (m->nsteps == MSCCL_MAX_STEPS)
        return fail(m, s->step.line, err, "more than %d steps", MSCCL_MAX_STEPS);
    if (s->step_rc) {
        *err = s->step_err;
        return s->step_rc;
    }
    if (m->nsteps == m->cap_steps) {
        m->cap_steps = m->cap_steps ? 2 * m->cap_steps : 64;
        m->steps = cs_realloc(m->steps, (size_t)m->cap_steps * sizeof *m->steps);
    }
    m->steps[m->nsteps++] = s->step;
    s->tb.n++;
    return CS_OK;
}

static int tb_start(sax_t *s, const elem_t *e, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    tb_t t;
    int rc;
    int32_t gpu = s->gpu;
    memset(&t, 0, sizeof t);
    t.gpu = gpu;
    t.line = e->line;
    t.to = t.from = -1;
    if ((rc = attr_int(m, e, TA_ID, "id", 1, 0, 0, MSCCL_MAX_STEPS - 1, &t.id, err)) ||
        (rc = attr_int(m, e, TA_SEND, "send", 1, -1, -1, m->ngpus - 1, &t.send, err)) ||
        (rc = attr_int(m, e, TA_RECV, "recv", 1, -1, -1, m->ngpus - 1, &t.recv, err)) ||
        (rc = attr_int(m, e, TA_CHAN, "chan", 1, 0, 0,
                       m->nchannels > 0 ? m->nchannels - 1 : INT32_MAX, &t.chan, err)))
        return rc;
    if (t.send == gpu || t.recv == gpu)
        return fail(m, t.line, err, "<tb id=\"%d\">: gpu %d cannot %s itself (a local copy is a "
                    "cpy step)", t.id, gpu, t.send == gpu ? "send to" : "receive from");
    t.first = m->nsteps;
    s->tb = t;
    return CS_OK;
}

static int tb_end(sax_t *s, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    if (m->ntbs == MSCCL_MAX_STEPS)
        return fail(m, s->tb.line, err, "more than %d thread blocks", MSCCL_MAX_STEPS);
    if (m->ntbs == m->cap_tbs) {
        m->cap_tbs = m->cap_tbs ? 2 * m->cap_tbs : 16;
        m->tbs = cs_realloc(m->tbs, (size_t)m->cap_tbs * sizeof *m->tbs);
    }
    m->tbs[m->ntbs++] = s->tb;
    return CS_OK;
}

static int tb_by_id(const void *a, const void *b)
{
    const tb_t *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int gpu_start(sax_t *s, const elem_t *e, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    int32_t id, ch[3];
    int rc, line = e->line;
    gpu_t *g;
    if ((rc = attr_int(m, e, GA_ID, "id", 1, 0, 0, m->ngpus - 1, &id, err)) ||
        (rc = attr_int(m, e, GA_I, "i_chunks", 1, 0, 0, MSCCL_MAX_CHUNKS, &ch[BUF_I], err)) ||
        (rc = attr_int(m, e, GA_O, "o_chunks", 1, 0, 0, MSCCL_MAX_CHUNKS, &ch[BUF_O], err)) ||
        (rc = attr_int(m, e, GA_S, "s_chunks", 1, 0, 0, MSCCL_MAX_CHUNKS, &ch[BUF_S], err)))
        return rc;
    g = &m->gpus[id];
    if (g->line)
        return fail(m, line, err, "<gpu id=\"%d\">: given twice (first at line %d)", id, g->line);
    /* the input and output buffers are placed on the collective's buffer:
     * whole (nchunksperloop chunks) or the GPU's own block of it
     * (nchunksperloop / ngpus, MSCCL's in-place convention) */
    for (int b = BUF_I; b <= BUF_O; b++)
        if (ch[b] && ch[b] != m->nchunks && (int64_t)ch[b] * m->ngpus != m->nchunks)
            return fail(m, line, err, "<gpu id=\"%d\">: %s_chunks=\"%d\" is neither "
                        "nchunksperloop (%d: the whole buffer) nor nchunksperloop/ngpus (the "
                        "GPU's own block); collsim places a buffer only so",
                        id, buf_names[b], ch[b], m->nchunks);
    memcpy(g->chunks, ch, sizeof ch);
    g->line = line;
    g->first = m->ntbs;
    s->gpu = id;
    return CS_OK;
}

static int gpu_end(sax_t *s, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    int32_t id = s->gpu;
    gpu_t *g = &m->gpus[id];
    g->n = m->ntbs - g->first;
    /* tbs in id order, ids 0..n-1 (the executor refuses a gap) */
    if (g->n > 1)
        qsort(m->tbs + g->first, (size_t)g->n, sizeof *m->tbs, tb_by_id);
    for (int32_t i = 0; i < g->n; i++) {
        const tb_t *t = &m->tbs[g->first + i];
        if (t->id != i)
            return fail(m, t->line, err, "<tb id=\"%d\">: gpu %d's thread blocks must be "
                        "numbered 0..%d without gaps or repeats (tb %d %s)", t->id, id, g->n - 1,
                        i, t->id < i ? "is given twice" : "is missing");
    }
    return CS_OK;
}

static int algo_start(sax_t *s, const elem_t *e, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    int rc;
    cs_error_t ce;
    m->line = e->line;
    if ((rc = attr_int(m, e, AA_NGPUS, "ngpus", 1, 0, 1, MSCCL_MAX_GPUS, &m->ngpus, err)) ||
        (rc = attr_int(m, e, AA_NCHUNKS, "nchunksperloop", 1, 0, 1, MSCCL_MAX_CHUNKS,
                       &m->nchunks, err)) ||
        (rc = attr_int(m, e, AA_NCHANNELS, "nchannels", 0, 0, 1, 1 << 16, &m->nchannels, err)) ||
        (rc = attr_int(m, e, AA_INPLACE, "inplace", 0, 1, 0, 1, &m->inplace, err)))
        return rc;
    m->name = attr_dup(e, AA_NAME, "");
    m->proto = attr_dup(e, AA_PROTO, "Simple");
    m->redop = attr_dup(e, AA_REDOP, "");
    if (!e->v[AA_COLL])
        return fail(m, m->line, err, "<algo>: missing attribute coll");
    m->coll = attr_dup(e, AA_COLL, "");
    if (strcmp(m->proto, "Simple") && strcmp(m->proto, "LL") && strcmp(m->proto, "LL128"))
        return fail(m, m->line, err, "<algo>: proto=\"%.32s\" is none of Simple, LL, LL128",
                    m->proto);
    if (cs_coll_parse(m->coll, &m->kind, &ce) != CS_OK || m->kind == CS_COLL_BARRIER)
        return fail(m, m->line, err, "<algo>: coll=\"%.32s\" is not a collective collsim runs "
                    "(valid: allreduce, allgather, reducescatter, broadcast, reduce, gather, "
                    "scatter, alltoall)", m->coll);
    m->gpus = cs_calloc((size_t)m->ngpus, sizeof *m->gpus);
    return CS_OK;
}

static int algo_end(sax_t *s, cs_error_t *err)
{
    cs_msccl_t *m = s->m;
    for (int32_t g = 0; g < m->ngpus; g++)
        if (!m->gpus[g].line)
            return fail(m, m->line, err, "<algo ngpus=\"%d\">: no <gpu id=\"%d\">", m->ngpus, g);
    return CS_OK;
}

/* The element each level holds: <algo> holds <gpu>s, which hold <tb>s,
 * which hold <step>s, which hold none. */
static const char *const child_of[] = {"algo", "gpu", "tb", "step", NULL};

/* An entity reference: a tree would hold it as a node, which a lookup of
 * the value would read as empty; refused naming its element (the first
 * one of the file wins, unless the XML itself is malformed). */
static void sax_entity(sax_t *s, const char *elem, int line, const char *name, size_t len)
{
    if (s->ent_set)
        return;
    s->ent_set = 1;
    cs_error_set(&s->ent, CS_ERR_PARSE, "%s:%d: <%s>: an entity reference &%.*s; (collsim "
                 "reads no entities but the five of XML: write the value itself)", s->m->file,
                 line, elem, (int)(len < 128 ? len : 128), name);
}

static void sax_start(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri,
                      int nb_ns, const xmlChar **ns, int nb, int ndef, const xmlChar **attrs)
{
    sax_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    const char *name = (const char *)local;
    int d = s->depth;
    (void)prefix;
    (void)uri;
    (void)nb_ns;
    (void)ns;
    if (s->xml.set)
        return;
    CS_ASSERT(d <= MSCCL_MAX_DEPTH); /* libxml2's limit: see MSCCL_MAX_DEPTH */
    s->open[d].name = local;
    s->open[d].line = sax_line(s);
    s->depth = d + 1;
    /* every value is looked at for references, read or not (not the DTD's
     * defaults: a tree keeps those in its DTD) */
    for (int i = 0; i < nb - ndef && !s->ent_set; i++) {
        const xmlChar *v = attrs[5 * i + 3], *end = attrs[5 * i + 4];
        while (v < end && (v = memchr(v, '&', (size_t)(end - v))) != NULL) {
            if (end - v >= 5 && !memcmp(v, "&#38;", 5)) {
                v += 5;
                continue;
            }
            {
                const xmlChar *semi = memchr(v, ';', (size_t)(end - v));
                sax_entity(s, name, s->open[d].line, (const char *)v + 1,
                           (size_t)((semi ? semi : end) - v - 1));
                break;
            }
        }
    }
    if (s->sem_rc)
        return;
    cs_msccl_t *m = s->m;
    const char *want = d < 5 ? child_of[d] : NULL;
    elem_t e;
    if (d == 0 && strcmp(name, "algo")) {
        s->sem_rc = fail(m, s->open[d].line, &s->sem, "the root element is <%.64s>; an MSCCL "
                         "algorithm is one <algo>", name);
        return;
    }
    if (d > 0 && (!want || strcmp(name, want))) {
        s->sem_rc = fail(m, s->open[d].line, &s->sem, "unknown element <%.64s> in <%s>%s%s%s",
                         name, (const char *)s->open[d - 1].name,
                         want ? " (valid: <" : " (it holds no elements)", want ? want : "",
                         want ? ">)" : "");
        return;
    }
    if ((s->sem_rc = elem_open(s, &e, local, nb, ndef, attrs, d, &s->sem)))
        return;
    switch (d) {
    case 0:
        s->sem_rc = algo_start(s, &e, &s->sem);
        break;
    case 1:
        s->sem_rc = gpu_start(s, &e, &s->sem);
        break;
    case 2:
        s->sem_rc = tb_start(s, &e, &s->sem);
        break;
    default:
        s->step_rc = step_attrs_read(s, &e, &s->step_err);
        break;
    }
}

static void sax_end(void *ctx, const xmlChar *local, const xmlChar *prefix, const xmlChar *uri)
{
    sax_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    (void)local;
    (void)prefix;
    (void)uri;
    if (s->xml.set || s->depth == 0)
        return;
    int d = --s->depth;
    if (s->sem_rc)
        return;
    switch (d) {
    case 0:
        s->sem_rc = algo_end(s, &s->sem);
        break;
    case 1:
        s->sem_rc = gpu_end(s, &s->sem);
        break;
    case 2:
        s->sem_rc = tb_end(s, &s->sem);
        break;
    case 3:
        s->sem_rc = step_end(s, &s->sem);
        break;
    default:
        break;
    }
}

/* Text (or CDATA) inside an element: only white space belongs. */
static void sax_text(void *ctx, const xmlChar *text, int len)
{
    sax_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    if (s->xml.set || s->sem_rc || s->depth == 0)
        return;
    for (int i = 0; i < len; i++)
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\n' && text[i] != '\r') {
            const char *want = s->depth < 4 ? child_of[s->depth] : NULL;
            s->sem_rc = fail(s->m, s->open[s->depth - 1].line, &s->sem, "<%s>: text where only "
                             "<%s> elements belong", (const char *)s->open[s->depth - 1].name,
                             want ? want : "no");
            return;
        }
}

/* An entity reference in content (the predefined five and character
 * references come as text). */
static void sax_reference(void *ctx, const xmlChar *name)
{
    sax_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    if (s->xml.set || s->depth == 0)
        return;
    sax_entity(s, (const char *)s->open[s->depth - 1].name, s->open[s->depth - 1].line,
               (const char *)name, strlen((const char *)name));
}

/* Comments are skipped; the handler is there because libxml2 keeps a
 * comment's text only for one, and quotes it when it refuses the comment
 * ("Double hyphen within comment: <!--..."), as in a tree's parse. */
/* collsim's own writer gives the ops' ids in a comment inside <algo>, as
 * GOAL's "// collsim order:" lines (the executor ignores comments): the
 * first one is kept, read once the steps are (renumber). */
static void sax_comment(void *ctx, const xmlChar *text)
{
    sax_t *s = ((xmlParserCtxtPtr)ctx)->_private;
    const char *ct = text ? (const char *)text : "";
    ct += strspn(ct, " \t\r\n");
    if (s->depth == 1 && !s->sem_rc && !s->ent_set && !strncmp(ct, "collsim order:", 14) &&
        !s->m->ids) {
        s->m->ids = cs_strdup(ct + 14);
        s->m->ids_line = sax_line(s);
    }
}

/* user NULL, or _private not set yet: an error while the parser is made
 * (its errNo says it, looked at then). */
static void sax_error(void *user, cs_netfile_xml_error_t *e)
{
    sax_t *s = user ? ((xmlParserCtxtPtr)user)->_private : NULL;
    cs_netfile_xml_first_keep(s ? &s->xml : NULL, e);
}

/* The source, handed to libxml2 as it asks for more: a file read with
 * stdio, or bytes in memory passed on where they lie. */
typedef struct feed {
    FILE *f;
    const char *data;
    size_t len, off;
    int failed; /* errno of a read error */
} feed_t;

static int feed_read(void *ctx, char *buf, int len)
{
    feed_t *fd = ctx;
    size_t n;
    if (len <= 0)
        return 0;
    if (fd->f) {
        n = fread(buf, 1, (size_t)len, fd->f);
        if (!n && ferror(fd->f)) {
            fd->failed = errno ? errno : EIO;
            return -1;
        }
        return (int)n;
    }
    n = fd->len - fd->off < (size_t)len ? fd->len - fd->off : (size_t)len;
    memcpy(buf, fd->data + fd->off, n);
    fd->off += n;
    return (int)n;
}

static int feed_close(void *ctx)
{
    (void)ctx;
    return 0;
}

/* Parses src into m: the refusal of a reader of the tree (see above), or
 * CS_OK with every element read. */
static int read_file(cs_msccl_t *m, const cs_source_t *src, cs_error_t *err)
{
    /* NONET: nothing fetched (no DTD either); no NOENT: references reach
     * sax_reference and stay "&name;" in values; no HUGE: libxml2's limits
     * hold; errors to sax_error only */
    const int opts = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                     XML_PARSE_NOBLANKS;
    xmlSAXHandler h;
    cs_netfile_xml_quiet_t quiet;
    feed_t feed = {NULL, src->data, src->len, 0, 0};
    int rc = CS_OK;
    /* a file opened before libxml2, which would print its own warning */
    if (!src->data && (rc = cs_source_fopen(src, &feed.f, err)))
        return rc;
    sax_t *s = cs_calloc(1, sizeof *s);
    s->m = m;
    /* libxml2's handlers of a tree's parse for all but the contents (the
     * DTD's declarations, kept in the parser's small document, so that a
     * declared entity is told from an undeclared one and a DTD's faults
     * are refused as before); the elements, text and references here */
    xmlSAXVersion(&h, 2);
    h.startElementNs = sax_start;
    h.endElementNs = sax_end;
    h.characters = sax_text;
    h.cdataBlock = sax_text;
    h.ignorableWhitespace = NULL;
    h.reference = sax_reference;
    h.comment = sax_comment;
    h.processingInstruction = NULL;
    h.serror = sax_error;
    cs_netfile_xml_quiet_begin(&quiet);
    /* user_data NULL: the callbacks get the parser (xmlSAX2's need it),
     * this reader through its _private; no file name (messages are made
     * here) */
    s->ctx = xmlCreateIOParserCtxt(&h, NULL, feed_read, feed_close, &feed,
                                   XML_CHAR_ENCODING_NONE);
    if (!s->ctx || s->ctx->errNo == XML_ERR_NO_MEMORY) {
        rc = cs_error_set(err, CS_ERR_OOM, "%s: out of memory (in libxml2)", src->name);
        if (s->ctx)
            xmlFreeParserCtxt(s->ctx);
        s->ctx = NULL;
    } else {
        static const char *const *const lists[] = {algo_attrs, gpu_attrs, tb_attrs, step_attrs};
        s->ctx->_private = s;
        xmlCtxtUseOptions(s->ctx, opts);
        for (int l = 0; l < 4; l++)
            for (int k = 0; lists[l][k]; k++) /* NULL (out of memory): compared as text */
                s->names[l][k] = xmlDictLookup(s->ctx->dict, (const xmlChar *)lists[l][k], -1);
        xmlParseDocument(s->ctx);
        /* out of memory first: what followed it (a value cut short, "not
         * well-formed") is its consequence */
        if (cs_netfile_xml_first_oom(&s->xml, s->ctx->errNo))
            rc = cs_error_set(err, CS_ERR_OOM, "%s:%d: out of memory (in libxml2)", src->name,
                              s->xml.set && s->xml.line > 0 ? s->xml.line : 1);
        else if (feed.failed)
            rc = cs_error_set(err, CS_ERR_IO, "%s: read error: %s", src->name,
                              strerror(feed.failed));
        else if (s->xml.set || !s->ctx->wellFormed)
            rc = cs_error_set(err, CS_ERR_PARSE, "%s:%d: %s", src->name, s->xml.line,
                              s->xml.set ? s->xml.msg : "not well-formed XML");
        else if (s->ent_set) {
            rc = CS_ERR_PARSE;
            if (err)
                *err = s->ent;
        } else if (s->sem_rc) {
            rc = s->sem_rc;
            if (err)
                *err = s->sem;
        }
        xmlFreeDoc(s->ctx->myDoc); /* the DTD's, from xmlSAX2StartDocument */
        s->ctx->myDoc = NULL;
        xmlFreeParserCtxt(s->ctx);
    }
    cs_netfile_xml_quiet_end(&quiet);
    free(s);
    if (feed.f)
        fclose(feed.f);
    return rc;
}

/* ---- checks across elements ---------------------------------------------------------- */

static const char *tname(const step_t *s) { return step_types[s->type].name; }

/* Buffers within their chunks, and dependencies that exist. */
static int check_steps(cs_msccl_t *m, cs_error_t *err)
{
    for (int32_t t = 0; t < m->ntbs; t++) {
        tb_t *tb = &m->tbs[t];
        const gpu_t *g = &m->gpus[tb->gpu];
        for (int32_t i = 0; i < tb->n; i++) {
            step_t *s = &m->steps[tb->first + i];
            unsigned f = step_types[s->type].flags;
            s->tb = t;
            for (int side = 0; side < 2; side++) {
                int use = side ? (f & F_DST) != 0 : (f & F_SRC) != 0;
                int buf = side ? s->dstbuf : s->srcbuf;
                int32_t off = side ? s->dstoff : s->srcoff;
                if (use && (off < 0 || (int64_t)off + s->cnt > g->chunks[buf]))
                    return fail(m, s->line, err, "<step s=\"%d\" type=\"%s\">: %s chunks "
                                "[%d, %lld) of buffer %s are past its %d chunks (gpu %d's "
                                "%s_chunks)", s->s, tname(s), side ? "dst" : "src", off,
                                (long long)off + s->cnt, buf_names[buf], g->chunks[buf],
                                tb->gpu, buf_names[buf]);
            }
            if (s->depid >= 0) {
                if (s->depid >= g->n)
                    return fail(m, s->line, err, "<step s=\"%d\">: waits for tb %d step %d, but "
                                "gpu %d has no tb %d (its tbs: 0..%d)", s->s, s->depid, s->deps,
                                tb->gpu, s->depid, g->n - 1);
                const tb_t *d = &m->tbs[g->first + s->depid];
                if (s->deps >= d->n)
                    return fail(m, s->line, err, "<step s=\"%d\">: waits for tb %d step %d, which "
                                "does not exist (gpu %d tb %d has steps 0..%d, line %d)", s->s,
                                s->depid, s->deps, tb->gpu, s->depid, d->n - 1, d->line);
                s->dep = d->first + s->deps;
            }
        }
    }
    return CS_OK;
}

/* The k-th tb of GPU A sending to B on channel c receives the pairing of
 * the k-th tb of B receiving from A on c; then their messages are matched
 * in step order, with equal counts and chunk counts. */
static int check_pairs(cs_msccl_t *m, cs_error_t *err)
{
    for (int32_t t = 0; t < m->ntbs; t++) {
        tb_t *x = &m->tbs[t];
        if (x->send < 0)
            continue;
        const gpu_t *ga = &m->gpus[x->gpu], *gb = &m->gpus[x->send];
        int k = 0, j = 0;
        for (int32_t u = ga->first; u < t; u++)
            k += m->tbs[u].send == x->send && m->tbs[u].chan == x->chan;
        for (int32_t u = gb->first; u < gb->first + gb->n; u++) {
            tb_t *y = &m->tbs[u];
            if (y->recv != x->gpu || y->chan != x->chan)
                continue;
            if (j++ == k) {
                x->to = u;
                y->from = t;
                break;
            }
        }
        if (x->to < 0)
            return fail(m, x->line, err, "<tb id=\"%d\">: gpu %d sends to gpu %d on channel %d, "
                        "but gpu %d has no matching tb receiving from gpu %d on channel %d (it "
                        "has %d such tbs; this is sender %d)", x->id, x->gpu, x->send, x->chan,
                        x->send, x->gpu, x->chan, j, k + 1);
    }
    for (int32_t t = 0; t < m->ntbs; t++) {
        const tb_t *y = &m->tbs[t];
        if (y->recv >= 0 && y->from < 0)
            return fail(m, y->line, err, "<tb id=\"%d\">: gpu %d receives from gpu %d on channel "
                        "%d, but no tb of gpu %d sends to gpu %d on channel %d for it", y->id,
                        y->gpu, y->recv, y->chan, y->recv, y->gpu, y->chan);
    }
    for (int32_t t = 0; t < m->ntbs; t++) {
        const tb_t *x = &m->tbs[t];
        if (x->to < 0)
            continue;
        const tb_t *y = &m->tbs[x->to];
        int32_t nsend = 0, nrecv = 0, i = 0, j = 0;
        for (int32_t a = 0; a < x->n; a++)
            nsend += (step_types[m->steps[x->first + a].type].flags & F_SEND) != 0;
        for (int32_t a = 0; a < y->n; a++)
            nrecv += (step_types[m->steps[y->first + a].type].flags & F_RECV) != 0;
        if (nsend != nrecv)
            return fail(m, x->line, err, "<tb id=\"%d\">: gpu %d tb %d sends %d messages to gpu "
                        "%d on channel %d, but the tb receiving them there (tb %d, line %d) "
                        "receives %d", x->id, x->gpu, x->id, nsend, y->gpu, x->chan, y->id,
                        y->line, nrecv);
        for (;;) {
            while (i < x->n && !(step_types[m->steps[x->first + i].type].flags & F_SEND))
                i++;
            while (j < y->n && !(step_types[m->steps[y->first + j].type].flags & F_RECV))
                j++;
            if (i == x->n || j == y->n)
                break;
            step_t *s = &m->steps[x->first + i], *r = &m->steps[y->first + j];
            if (s->cnt != r->cnt)
                return fail(m, r->line, err, "<step s=\"%d\" type=\"%s\">: receives %d chunks, "
                            "but the message it matches (gpu %d tb %d step %d, line %d) carries "
                            "%d", r->s, tname(r), r->cnt, x->gpu, x->id, s->s, s->line, s->cnt);
            r->match = x->first + i;
            i++, j++;
        }
    }
    return CS_OK;
}

/* What step `s` (the next of its tb) waits for: its dependency or the
 * step whose message it receives, while not done; -1 when it can run. */
static int32_t waits_for(const cs_msccl_t *m, const uint8_t *done, int32_t s)
{
    const step_t *st = &m->steps[s];
    if (st->dep >= 0 && !done[st->dep])
        return st->dep;
    if (st->match >= 0 && !done[st->match])
        return st->match;
    return -1;
}

/* Names a step for messages. */
static void step_name(const cs_msccl_t *m, int32_t s, char *buf, size_t len)
{
    const step_t *st = &m->steps[s];
    const tb_t *t = &m->tbs[st->tb];
    snprintf(buf, len, "gpu %d tb %d step %d (%s, line %d)", t->gpu, t->id, st->s, tname(st),
             st->line);
}

/* Runs the file in the abstract: a tb's steps in order, each once its
 * dependency has run and the message it receives was sent (sends are
 * eager, as the executor's).  The order found is the emission order; a
 * step that can never run is refused, with the cycle of waits it is in
 * (dependencies, messages, or both). */
static int check_runs(cs_msccl_t *m, cs_error_t *err)
{
    int32_t n = m->nsteps, norder = 0, qh = 0, qt = 0;
    uint8_t *done = cs_calloc((size_t)n + 1, 1);
    int32_t *next = cs_calloc((size_t)m->ntbs + 1, sizeof *next);
    int32_t *wait_head = cs_malloc(((size_t)n + 1) * sizeof *wait_head);
    int32_t *wait_next = cs_malloc(((size_t)m->ntbs + 1) * sizeof *wait_next);
    int32_t *queue = cs_malloc(((size_t)m->ntbs + 1) * sizeof *queue);
    uint8_t *queued = cs_calloc((size_t)m->ntbs + 1, 1);
    int rc = CS_OK;
    m->order = cs_malloc(((size_t)n + 1) * sizeof *m->order);
    for (int32_t i = 0; i < n; i++)
        wait_head[i] = -1;
    /* a circular queue of tbs: each pop runs one step, then the tb goes to
     * the back, so that the order interleaves the tbs round by round */
    for (int32_t t = 0; t < m->ntbs; t++)
        if (m->tbs[t].n) {
            queue[qt++] = t;
            queued[t] = 1;
        }
    int32_t cap = m->ntbs + 1, inq = qt;
    qt %= cap;
    while (inq > 0) {
        int32_t t = queue[qh];
        qh = (qh + 1) % cap;
        inq--;
        queued[t] = 0;
        const tb_t *tb = &m->tbs[t];
        int32_t s = tb->first + next[t], w = waits_for(m, done, s);
        if (w >= 0) { /* parked until w runs */
            wait_next[t] = wait_head[w];
            wait_head[w] = t;
            continue;
        }
        done[s] = 1;
        m->order[norder++] = s;
        next[t]++;
        for (int32_t u = wait_head[s]; u >= 0; u = wait_next[u])
            if (!queued[u]) {
                queue[qt] = u;
                qt = (qt + 1) % cap;
                inq++;
                queued[u] = 1;
            }
        wait_head[s] = -1;
        if (next[t] < tb->n && !queued[t]) {
            queue[qt] = t;
            qt = (qt + 1) % cap;
            inq++;
            queued[t] = 1;
        }
    }
    if (norder < n) {
        /* the first stuck tb; follow what each stuck step waits for (the
         * step, or the next step of its tb when it is further on) until a
         * step repeats: that is the cycle */
        int32_t t0 = 0, s, len = 0;
        while (next[t0] >= m->tbs[t0].n)
            t0++;
        int32_t *seen = cs_calloc((size_t)n, sizeof *seen); /* position in the walk + 1 */
        int32_t *walk = cs_malloc((size_t)n * sizeof *walk);
        s = m->tbs[t0].first + next[t0];
        while (!seen[s]) {
            seen[s] = ++len;
            walk[len - 1] = s;
            int32_t w = waits_for(m, done, s);
            CS_ASSERT(w >= 0);
            const tb_t *wt = &m->tbs[m->steps[w].tb];
            s = wt->first + next[m->steps[w].tb]; /* its tb's blocked step */
        }
        char text[CS_ERROR_MSG_MAX] = "", a[160];
        int32_t from = seen[s] - 1, k = 0;
        for (int32_t i = from; i < len; i++, k++) {
            int32_t x = walk[i], w = waits_for(m, done, x);
            const step_t *xs = &m->steps[x];
            if (k == 4 && len - i > 1) {
                snprintf(a, sizeof a, "... (%d more)", len - i);
                strncat(text, a, sizeof text - strlen(text) - 1);
                break;
            }
            step_name(m, x, a, sizeof a);
            strncat(text, a, sizeof text - strlen(text) - 1);
            strncat(text, w == xs->dep ? " waits for its dependency " : " receives from ",
                    sizeof text - strlen(text) - 1);
            step_name(m, w, a, sizeof a);
            strncat(text, a, sizeof text - strlen(text) - 1);
            strncat(text, "; ", sizeof text - strlen(text) - 1);
        }
        if (strlen(text) >= 2 && !strcmp(text + strlen(text) - 2, "; "))
            text[strlen(text) - 2] = '\0';
        const step_t *first = &m->steps[walk[from]];
        rc = fail(m, first->line, err, "a step that can never run (a cycle of dependencies and "
                  "messages): %s", text);
        free(seen);
        free(walk);
    }
    free(done);
    free(next);
    free(wait_head);
    free(wait_next);
    free(queue);
    free(queued);
    return rc;
}

int cs_msccl_read(const cs_source_t *src, cs_msccl_t **out, cs_error_t *err)
{
    cs_msccl_t *m;
    int rc;
    *out = NULL;
    m = cs_calloc(1, sizeof *m);
    m->file = cs_strdup(src->name);
    rc = read_file(m, src, err);
    if (!rc && m->nchannels == 0) /* not given: the channels the tbs use */
        for (int32_t t = 0; t < m->ntbs; t++)
            if (m->tbs[t].chan >= m->nchannels)
                m->nchannels = m->tbs[t].chan + 1;
    if (!rc && !(rc = check_steps(m, err)) && !(rc = check_pairs(m, err)))
        rc = check_runs(m, err);
    if (rc) {
        cs_msccl_free(m);
        return rc;
    }
    *out = m;
    return CS_OK;
}

void cs_msccl_info(const cs_msccl_t *m, cs_msccl_info_t *o)
{
    o->name = m->name;
    o->coll = m->coll;
    o->kind = m->kind;
    o->ngpus = m->ngpus;
    o->nchunks = m->nchunks;
    o->nchannels = m->nchannels;
    o->nthreadblocks = m->ntbs;
    o->nsteps = m->nsteps;
    o->inplace = m->inplace;
    o->proto = m->proto;
    o->redop = m->redop;
    o->line = m->line;
}

int cs_msccl_check_kind(const cs_msccl_t *m, cs_coll_kind_t kind, cs_error_t *err)
{
    if (kind != m->kind)
        return cs_error_set(err, CS_ERR_USAGE, "%s:%d: the algorithm is a%s %s (coll=\"%s\"); "
                            "--coll asks for %s", m->file, m->line, cs_algofile_article(m->kind),
                            cs_coll_name(m->kind), m->coll, cs_coll_name(kind));
    return CS_OK;
}

/* ---- emission -------------------------------------------------------------------- */

/* The bytes of a chunk for args a (algofile_internal.h). */
static int chunk_bytes(const cs_msccl_t *m, const cs_coll_args_t *a, int64_t *q, cs_error_t *err)
{
    return cs_algofile_chunk_bytes(a, m->nchunks, m->ngpus, m->file, m->line,
                                   "nchunksperloop/ngpus = ", q, err);
}

void cs_msccl_explain(const cs_msccl_t *m, const cs_coll_args_t *a, char *msg, size_t len)
{
    char out[CS_ERROR_MSG_MAX];
    const char *p = msg;
    size_t o = 0;
    int64_t q;
    if (a->P != m->ngpus || chunk_bytes(m, a, &q, NULL) || q <= 0)
        return;
    while (*p && o + 1 < sizeof out) {
        long long x, y;
        int used = 0;
        if (!strncmp(p, "bytes [", 7) && sscanf(p, "bytes [%lld, %lld)%n", &x, &y, &used) == 2 &&
            used > 0 && y > x && x >= 0) {
            int64_t C = m->nchunks, lo = x / q, hi = (y - 1) / q;
            char note[96];
            if (lo >= C && lo == hi)
                snprintf(note, sizeof note, " (scratch chunk %lld)", (long long)(lo - C));
            else if (lo >= C)
                snprintf(note, sizeof note, " (scratch chunks %lld..%lld)", (long long)(lo - C),
                         (long long)(hi - C));
            else if (lo == hi)
                snprintf(note, sizeof note, " (chunk %lld of %lld)", (long long)lo, (long long)C);
            else
                snprintf(note, sizeof note, " (chunks %lld..%lld of %lld)", (long long)lo,
                         (long long)(hi < C ? hi : C - 1), (long long)C);
            o += (size_t)snprintf(out + o, sizeof out - o, "%.*s%s", used, p, note);
            if (o >= sizeof out)
                o = sizeof out - 1;
            p += used;
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
    snprintf(msg, len, "%s", out);
}

typedef struct emit {
    const cs_msccl_t *m;
    cs_coll_builder_t *b;
    cs_program_t *p;
    int64_t q;       /* bytes of a chunk */
    int64_t scratch; /* where the scratch buffer starts */
    int lines;       /* set op origins (not in a windowed program) */
    int32_t *term_off, *term_n, *terms; /* per step: the ops whose completion ends it */
    int64_t nterms, cap_terms;
    int32_t *start;  /* what the step being emitted starts after */
    int32_t nstart, cap_start;
} emit_t;

/* The bytes of `cnt` chunks from chunk `off` of buffer `buf` of gpu g: i
 * and o on the collective's buffer (whole, or the GPU's block: see
 * read_gpu), scratch after it. */
static void range(const emit_t *e, int g, int buf, int32_t off, int32_t cnt, int64_t *boff,
                  int64_t *blen)
{
    const cs_msccl_t *m = e->m;
    *boff = cs_algofile_offset(e->q, e->scratch, m->nchunks, m->gpus[g].chunks[buf], buf, g, off);
    *blen = (int64_t)cnt * e->q;
}

static void push_term(emit_t *e, int32_t op)
{
    if (op < 0)
        return;
    if (e->nterms == e->cap_terms) {
        e->cap_terms = e->cap_terms ? 2 * e->cap_terms : 256;
        e->terms = cs_realloc(e->terms, (size_t)e->cap_terms * sizeof *e->terms);
    }
    e->terms[e->nterms++] = op;
}

static void push_start(emit_t *e, int32_t s)
{
    for (int32_t i = 0; i < e->term_n[s]; i++) {
        if (e->nstart == e->cap_start) {
            e->cap_start = e->cap_start ? 2 * e->cap_start : 16;
            e->start = cs_realloc(e->start, (size_t)e->cap_start * sizeof *e->start);
        }
        e->start[e->nstart++] = e->terms[e->term_off[s] + i];
    }
}

/* op follows everything the step starts after. */
static void after_start(emit_t *e, int32_t op)
{
    for (int32_t i = 0; i < e->nstart; i++)
        cs_coll_dep(e->b, op, e->start[i], CS_DEP_AFTER);
}

static void origin(emit_t *e, int32_t op, const step_t *s, const tb_t *t)
{
    char label[64];
    if (!e->lines || op < 0)
        return;
    snprintf(label, sizeof label, "gpu %d tb %d step %d %s", t->gpu, t->id, s->s, tname(s));
    cs_program_set_origin(e->p, op, s->line, label);
}

static void emit_step(emit_t *e, int32_t si)
{
    const cs_msccl_t *m = e->m;
    const step_t *s = &m->steps[si];
    const tb_t *t = &m->tbs[s->tb];
    int g = t->gpu, local_tag = MSCCL_LOCAL_TAG + t->id;
    int64_t soff = 0, slen = 0, doff = 0, dlen = 0;
    int32_t ops[8], nops = 0, first, last = -1;
    unsigned f = step_types[s->type].flags;

    e->nstart = 0;
    if (s->s > 0)
        push_start(e, si - 1);
    if (s->dep >= 0)
        push_start(e, s->dep);
    if (f & F_SRC)
        range(e, g, s->srcbuf, s->srcoff, s->cnt, &soff, &slen);
    if (f & F_DST)
        range(e, g, s->dstbuf, s->dstoff, s->cnt, &doff, &dlen);
    e->term_off[si] = (int32_t)e->nterms;
    switch ((step_type_t)s->type) {
    case T_NOP: /* ends when what it waits for has */
        for (int32_t i = 0; i < e->nstart; i++)
            push_term(e, e->start[i]);
        break;
    case T_S:
        ops[nops++] = last = cs_coll_send(e->b, g, t->send, soff, slen, t->id);
        after_start(e, last);
        push_term(e, last);
        break;
    case T_CPY:
    case T_RE: { /* a message to itself: the validator sees the data move */
        int32_t ls = cs_coll_send(e->b, g, g, soff, slen, local_tag);
        ops[nops++] = ls;
        after_start(e, ls);
        last = cs_algofile_recv_into(e->b, g, g, doff, dlen, local_tag, s->type == T_RE,
                                     &first);
        ops[nops++] = first;
        if (last != first)
            ops[nops++] = last;
        after_start(e, first);
        push_term(e, ls);
        push_term(e, last);
        break;
    }
    default: { /* the receiving types */
        const tb_t *from = &m->tbs[m->tbs[s->tb].from];
        int reduce = (f & F_REDUCE) != 0;
        /* where the message lands: rrs reduces into src in place (the sum
         * is sent on; docs/msccl.md says why), rrc and rrcs into dst after
         * a local copy of src there when they differ, r and rcs copy to dst */
        int64_t roff = s->type == T_RRS ? soff : doff, rlen = s->type == T_RRS ? slen : dlen;
        int32_t pre = -1;
        if ((s->type == T_RRC || s->type == T_RRCS) && soff != doff) {
            int32_t ls = cs_coll_send(e->b, g, g, soff, slen, local_tag);
            after_start(e, ls);
            pre = cs_coll_recv(e->b, g, g, doff, dlen, local_tag);
            after_start(e, pre);
            ops[nops++] = ls;
            ops[nops++] = pre;
            push_term(e, ls);
        }
        last = cs_algofile_recv_into(e->b, g, from->gpu, roff, rlen, from->id, reduce,
                                     &first);
        after_start(e, first);
        if (pre >= 0)
            cs_coll_dep(e->b, first, pre, CS_DEP_AFTER);
        ops[nops++] = first;
        if (last != first)
            ops[nops++] = last;
        if (f & F_SEND) {
            int32_t sd = cs_coll_send(e->b, g, t->send, roff, rlen, t->id);
            cs_coll_dep(e->b, sd, last, CS_DEP_AFTER);
            ops[nops++] = last = sd;
        }
        push_term(e, last);
        break;
    }
    }
    e->term_n[si] = (int32_t)(e->nterms - e->term_off[si]);
    for (int i = 0; i < nops; i++)
        origin(e, ops[i], s, t);
}

/* Gives the ops the ids of a "collsim order:" comment: for each op in id
 * order, the step it belongs to (steps numbered in document order from 0),
 * "S" for one op or "SxK" for K consecutive ones; a step's ops keep their
 * own order.  Op ids are a program's order (core/program.h), so this is
 * what makes a file collsim wrote run tick for tick as the program it was
 * written from (the reader's own order interleaves the tbs round by
 * round).  A comment that does not fit the steps is an error. */
static int renumber(const cs_msccl_t *m, cs_program_t *p, const int32_t *op_first,
                    const int32_t *op_n, cs_error_t *err)
{
    int32_t n = cs_program_nops(p), k = 0;
    int32_t *used = cs_calloc((size_t)m->nsteps + 1, sizeof *used);
    int32_t *new_id = cs_malloc(((size_t)n + 1) * sizeof *new_id);
    const char *t = m->ids;
    int rc = CS_OK;
    char *end;
    for (;;) {
        t += strspn(t, " \t\r\n");
        if (!*t)
            break;
        errno = 0;
        long long si = strtoll(t, &end, 10), cnt = 1;
        if (end == t || errno || si < 0 || si >= m->nsteps) {
            rc = fail(m, m->ids_line, err, "collsim order: '%.16s' is not a step (0..%d)", t,
                      m->nsteps - 1);
            break;
        }
        t = end;
        if (*t == 'x') {
            cnt = strtoll(++t, &end, 10);
            if (end == t || cnt < 1)
                cnt = -1;
            t = end;
        }
        if (cnt < 0 || used[si] + cnt > op_n[si] || k + cnt > n) {
            rc = fail(m, m->ids_line, err, "collsim order: step %lld has %d ops, more are given",
                      si, op_n[si]);
            break;
        }
        for (long long j = 0; j < cnt; j++)
            new_id[op_first[si] + used[si]++] = k++;
    }
    if (!rc && k != n)
        rc = fail(m, m->ids_line, err, "collsim order: %d ops given, the steps have %d", k, n);
    if (!rc)
        rc = cs_program_renumber(p, new_id, err);
    free(used);
    free(new_id);
    return rc;
}

const char *const cs_msccl_keys[] = {"proto", NULL};

/* Wire bytes of the protocols (msccl.h, proto=on): NCCL's line formats,
 * core/proto.h; ctx is the protocol. */
static int64_t wire(int64_t len, const void *ctx)
{
    return cs_proto_wire(*(const cs_proto_t *)ctx, len);
}

int cs_msccl_emit(const cs_msccl_t *m, cs_coll_builder_t *b, cs_error_t *err)
{
    static const char *const onoff[] = {"off", "on", NULL};
    const cs_coll_args_t *a = cs_coll_args(b);
    int rc, price;
    int64_t q, C = m->nchunks, smax = 0;
    emit_t e;
    if ((rc = cs_msccl_check_kind(m, a->kind, err)))
        return rc;
    if (a->P != m->ngpus)
        return cs_error_set(err, CS_ERR_RANGE, "%s:%d: <algo ngpus=\"%d\"> is an algorithm for "
                            "%d ranks, the run has %d (give --ranks %d, or --order FILE naming the "
                            "%d nodes GPU 0, 1, ... run on)", m->file, m->line, m->ngpus,
                            m->ngpus, a->P, m->ngpus, m->ngpus);
    if ((rc = chunk_bytes(m, a, &q, err)) ||
        (rc = cs_coll_opt_choice(a, "proto", onoff, 0, &price, err)))
        return rc;
    static const cs_proto_t ll = CS_PROTO_LL, ll128 = CS_PROTO_LL128;
    if (price && strcmp(m->proto, "Simple"))
        cs_coll_set_wire(b, wire, !strcmp(m->proto, "LL") ? &ll : &ll128);
    for (int32_t g = 0; g < m->ngpus; g++)
        smax = m->gpus[g].chunks[BUF_S] > smax ? m->gpus[g].chunks[BUF_S] : smax;
    if ((rc = cs_algofile_check_fits(m->file, C, smax, q, err)))
        return rc;
    memset(&e, 0, sizeof e);
    e.m = m;
    e.b = b;
    e.p = cs_coll_program(b);
    e.q = q;
    e.scratch = C * q;
    e.lines = !cs_program_is_windowed(e.p);
    e.term_off = cs_calloc((size_t)m->nsteps + 1, sizeof *e.term_off);
    e.term_n = cs_calloc((size_t)m->nsteps + 1, sizeof *e.term_n);
    int32_t *op_first = cs_malloc(((size_t)m->nsteps + 1) * sizeof *op_first);
    int32_t *op_n = cs_malloc(((size_t)m->nsteps + 1) * sizeof *op_n);
    for (int32_t i = 0; i < m->nsteps; i++) {
        int32_t si = m->order[i];
        op_first[si] = cs_program_nops(e.p);
        emit_step(&e, si);
        op_n[si] = cs_program_nops(e.p) - op_first[si];
    }
    if (m->ids && !cs_program_is_windowed(e.p))
        rc = renumber(m, e.p, op_first, op_n, err);
    free(op_first);
    free(op_n);
    free(e.term_off);
    free(e.term_n);
    free(e.terms);
    free(e.start);
    return rc;
}
