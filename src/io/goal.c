/*
 * goal.c - reading and writing GOAL schedules (see goal.h, docs/goal.md).
 *
 * GOAL is the text form of LogGOPSim/Schedgen schedules
 * (reference/trace-formats.md).  The reader is a hand-written line-at-a-time
 * recursive-descent parser over lines handed out in place (core/lines.h: a
 * mapped file, no copy or allocation per line): traces reach 10^7 ops, and
 * its only per-op state lives in the program it builds plus a label table
 * and a dependency list for the current rank block (labels are local to
 * their block, so both are cleared at its '}').  Schedgen's op and
 * dependency lines, nearly all of any big trace, go through fast paths
 * (fast_op, fast_dep), tried before anything else on a line inside a
 * block, that scan the line once and hand everything they are not sure of
 * to the general parser, so that accepted inputs, refused inputs and
 * messages are the general parser's.
 *
 * It is deliberately stricter than LogGOPSim, whose reader silently accepts
 * duplicate labels, misordered or missing rank blocks and some files that
 * then crash it: here every deviation from the grammar is an error at
 * NAME:LINE:COL naming what was found and what was expected.  Dependency
 * cycles are found per block at its '}' (rather than left to
 * cs_program_finalize) so that they too point at a line: the dependency
 * written last among those of the cycle.
 *
 * Op order.  Op ids are part of a program (ties at a port go in id order,
 * core/program.h), but GOAL holds ops rank by rank.  The writer therefore
 * adds `// collsim order:` lines (a comment to LogGOPSim) with the runs of
 * the program's id order: `RANK:COUNT`, the next COUNT ops of that rank's
 * block, or `FIRST-LAST:COUNT`, as many of every rank from FIRST to LAST in
 * turn (a step of a step-by-step algorithm).  The reader collects them,
 * checks them against the blocks at the end of the file and renumbers the
 * ops (cs_program_renumber), so a program written and read back has the
 * same ids, hence the same timing.
 */
#include "io/goal.h"
#include "core/sorted.h"
#include "core/lines.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ------------------------------------------------------------------------
 * Label table: open addressing over int32 values whose keys (labels) live
 * elsewhere and are fetched through a callback.  The reader keys on the
 * open block's op indices and fetches labels from its own arena of the
 * block's labels (reader_t.arena), which stays in the cache, rather than
 * from the program's label pool, a few gigabytes away on a big trace.
 * ------------------------------------------------------------------------ */

typedef const char *(*key_fn)(const void *ctx, int32_t val);

typedef struct slot {
    uint32_t hash;
    int32_t val; /* -1 = empty */
} slot_t;

typedef struct label_table {
    slot_t *slots;
    size_t cap; /* 0 or a power of two */
    size_t count;
    uint32_t *used; /* the slots in use, so that clearing costs O(count) */
    key_fn key;
    const void *ctx;
} label_table_t;

/* FNV-1a: labels are short, this is fast and spreads Schedgen's l1, l2, ... */
static uint32_t hash_label(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static int32_t lt_find(const label_table_t *t, const char *k, size_t n, uint32_t h)
{
    if (!t->cap)
        return -1;
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const slot_t *s = &t->slots[i];
        if (s->val < 0)
            return -1;
        if (s->hash == h) {
            /* compared inline: labels are a few bytes, and the library
             * call cost more than the comparison */
            const char *key = t->key(t->ctx, s->val);
            size_t j = 0;
            if (!key)
                continue;
            while (j < n && key[j] == k[j])
                j++;
            if (j == n && key[n] == '\0')
                return s->val;
        }
    }
}

static size_t lt_put(slot_t *slots, size_t cap, uint32_t h, int32_t val)
{
    size_t mask = cap - 1, i = h & mask;
    while (slots[i].val >= 0)
        i = (i + 1) & mask;
    slots[i].hash = h;
    slots[i].val = val;
    return i;
}

/* Inserts a key known to be absent; keeps the load factor at most 1/2. */
static void lt_insert(label_table_t *t, uint32_t h, int32_t val)
{
    if (2 * (t->count + 1) > t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 64;
        slot_t *ns = cs_malloc(ncap * sizeof *ns);
        memset(ns, 0xff, ncap * sizeof *ns); /* val = -1 everywhere */
        for (size_t k = 0; k < t->count; k++) {
            const slot_t *o = &t->slots[t->used[k]];
            t->used[k] = (uint32_t)lt_put(ns, ncap, o->hash, o->val);
        }
        free(t->slots);
        t->slots = ns;
        t->cap = ncap;
        t->used = cs_realloc(t->used, ncap / 2 * sizeof *t->used);
    }
    t->used[t->count++] = (uint32_t)lt_put(t->slots, t->cap, h, val);
}

/* Empties the table, touching only the slots in use (a rank block of
 * Schedgen's has a few dozen labels; wiping the whole table per block was
 * a visible cost at 10^6 blocks).  A table grown for one huge block is
 * dropped when the blocks after it are small, so that it does not stay
 * large for nothing. */
static void lt_clear(label_table_t *t)
{
    if (t->cap > 4096 && t->count < t->cap / 16) {
        free(t->slots);
        free(t->used);
        t->slots = NULL;
        t->used = NULL;
        t->cap = 0;
    } else {
        for (size_t k = 0; k < t->count; k++)
            t->slots[t->used[k]].val = -1;
    }
    t->count = 0;
}

static void lt_free(label_table_t *t)
{
    free(t->slots);
    free(t->used);
    t->slots = NULL;
    t->used = NULL;
    t->cap = t->count = 0;
}

/* Character classes, one table lookup instead of a chain of comparisons in
 * the loops every byte of a trace goes through (ASCII only, independent of
 * the locale; bytes >= 0x80 are in no class). */
enum { C_SPACE = 1, C_WORD = 2, C_DIGIT = 4, C_ALPHA = 8, C_LABEL = 16 };
static const unsigned char char_class[256] = {
     0,  0,  0,  0,  0,  0,  0,  0,  0,  1,  0,  0,  0,  1,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     1,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  2,  0,  2,  2,  0,
    22, 22, 22, 22, 22, 22, 22, 22, 22, 22,  0,  0,  0,  0,  0,  0,
     0, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26,
    26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26,  0,  0,  0,  0, 18,
     0, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26,
    26, 26, 26, 26, 26, 26, 26, 26, 26, 26, 26,  0,  0,  0,  0,  0,
};

/* LABEL := [a-zA-Z][a-zA-Z0-9_]* */
static int is_alpha(unsigned char c)
{
    return char_class[c] & C_ALPHA;
}
static int is_digit(unsigned char c)
{
    return char_class[c] & C_DIGIT;
}

static int valid_label(const char *s, size_t n)
{
    if (n == 0 || !is_alpha((unsigned char)s[0]))
        return 0;
    for (size_t i = 1; i < n; i++)
        if (!(char_class[(unsigned char)s[i]] & C_LABEL))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------
 * Reader
 * ------------------------------------------------------------------------ */

/* One dependency of the current block, kept for the cycle check. */
typedef struct block_dep {
    int32_t op, pred; /* program op ids */
    int32_t lop, lpred; /* their indices in the block (the cycle check's nodes) */
    int32_t line, col;
    uint8_t kind;
} block_dep_t;

/* A block with ops, for the check of the op order at the end. */
typedef struct block_count {
    int32_t rank, count;
} block_count_t;

/* A run of the `// collsim order:` lines: the next `count` ops of the block
 * of each rank from `first` to `last` in turn (ascending or descending),
 * and where it was written (for messages). */
typedef struct order_run {
    int32_t first, last, count;
    long line;
    size_t col;
} order_run_t;

#define ORDER_PREFIX "// collsim order:"

typedef struct reader {
    const char *name;
    cs_error_t *err;
    cs_program_t *p;
    int nranks; /* -1 until `num_ranks` has been read */

    /* the current line, without its '\n' */
    const char *s;
    size_t len, pos;
    long line;

    /* a block comment that has not been closed yet */
    int in_comment;
    long comment_line;
    size_t comment_pos;

    /* rank blocks */
    int in_block;
    int rank;            /* the open block's rank, else the next expected one */
    long block_line;     /* line of the open block's `rank N {` */
    label_table_t labels;
    block_dep_t *deps;
    size_t ndeps, cap_deps;
    int deps_forward; /* some dependency points at a later op: a cycle is possible */
    int32_t *ids;     /* the open block's ops: index in the block -> op id (the label
                         table holds indices, since placed ids are not contiguous) */
    size_t nids, cap_ids;
    block_count_t *blocks; /* the blocks with ops, in order */
    size_t nblocks, cap_blocks;

    /* the op order, if the file gives one */
    int has_order;
    long order_line; /* its first line and column */
    size_t order_col;
    order_run_t *runs;
    size_t nruns, cap_runs;

    /* Placement (issue 34): when the order lines all come before the first
     * block, every op's id is known when it is read, and it is placed there
     * (cs_program_place) instead of renumbered at the end.  Only for a text
     * of known size whose order claims at most the ops it can hold. */
    int64_t size;       /* bytes of the text, -1 unknown (a stream) */
    int no_place;       /* read again without placement */
    int place;          /* placing */
    int64_t *run_base;  /* the first id of each run */
    int32_t *by_lo;     /* runs by lowest rank, then by index */
    size_t next_lo;     /* by_lo[next_lo..] start at a rank not reached yet */
    int32_t *active;    /* runs that cover the open block's rank, by index */
    int32_t *merge;     /* scratch for the active list */
    size_t nactive, cur; /* the open block's ops come from active[cur] on */
    int32_t cur_used;   /* ops taken from active[cur] */
    int64_t beyond;     /* the next id for an op the order does not give
                           (such a file fails at the end) */

    /* the open block's labels, each NUL-terminated, and where each op's
     * label starts (by index in the block): the label table's keys, read
     * without going through the program's label pool */
    char *arena;
    size_t arena_len, cap_arena;
    size_t *label_at; /* cap_ids long */

    /* scratch */
    int32_t *dsts; /* mcast destinations and their columns */
    int32_t *dst_pos;
    size_t cap_dsts;
} reader_t;

/* The label of the open block's op `local` (the label table's key). */
static const char *program_key(const void *ctx, int32_t local)
{
    const struct reader *r = ctx;
    return r->arena + r->label_at[local];
}

/* An order line after placement began: the reading starts again without
 * placement (a code no error uses). */
#define GOAL_READ_AGAIN (-100)

static int fail_at(reader_t *r, long line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(reader_t *r, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets a parse error at a 1-based line and column. */
static int fail_at(reader_t *r, long line, size_t col, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(r->err, CS_ERR_PARSE, "%s:%ld:%zu: %s", r->name, line, col, msg);
}

/* Sets a parse error at 0-based byte `pos` of the current line. */
static int fail(reader_t *r, size_t pos, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return fail_at(r, r->line, pos + 1, "%s", msg);
}

static int is_space(unsigned char c)
{
    return char_class[c] & C_SPACE;
}

/* Characters of a word: labels, keywords, numbers.  '-', '.' and '+' are
 * included so that `-3b` or `8.5b` reach the number checks whole and are
 * reported as one token. */
static int is_word_char(unsigned char c)
{
    return char_class[c] & C_WORD;
}

/* Quotes what is at `pos` for the "got ..." part of a message: the text up
 * to the next space (at most 32 bytes), with unprintable bytes escaped. */
static const char *found(const reader_t *r, size_t pos, char *buf, size_t n)
{
    size_t k = 0;
    if (pos >= r->len)
        return "end of line";
    if (is_space((unsigned char)r->s[pos]))
        return "a space";
    buf[k++] = '\'';
    for (size_t i = pos; i < r->len && i < pos + 32 && !is_space((unsigned char)r->s[i]); i++) {
        unsigned char c = (unsigned char)r->s[i];
        if (k + 6 >= n)
            break;
        if (c < 0x20 || c >= 0x7f)
            k += (size_t)snprintf(buf + k, n - k, "\\x%02x", c);
        else
            buf[k++] = (char)c;
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

#define FOUND(r, pos) found((r), (pos), (char[200]){0}, 200)

/* The first "*" "/" in s[0..n), or NULL (memmem is a GNU extension). */
static const char *find_close(const char *s, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == '*' && s[i + 1] == '/')
            return s + i;
    return NULL;
}

/* Skips spaces and comments.  A block comment left open at the end of the
 * line makes the rest of the line (and the lines up to its end) blank. */
static void skip_space(reader_t *r)
{
    for (;;) {
        /* locals: stores through the char pointer could alias r->pos, which
         * would keep the compiler from holding it in a register */
        const char *s = r->s;
        size_t p = r->pos, n = r->len;
        while (p < n && is_space((unsigned char)s[p]))
            p++;
        r->pos = p;
        if (r->pos + 1 >= r->len || r->s[r->pos] != '/')
            return;
        if (r->s[r->pos + 1] == '/') {
            r->pos = r->len;
            return;
        }
        if (r->s[r->pos + 1] == '*') {
            const char *end = find_close(r->s + r->pos + 2, r->len - r->pos - 2);
            if (!end) {
                r->in_comment = 1;
                r->comment_line = r->line;
                r->comment_pos = r->pos;
                r->pos = r->len;
                return;
            }
            r->pos = (size_t)(end - r->s) + 2;
            continue;
        }
        return;
    }
}

/* Skips space, then returns the length of the word at r->pos (0 if the
 * next character is not a word character), its start in *start.  Does not
 * consume it. */
static size_t peek_word(reader_t *r, size_t *start)
{
    size_t i, n;
    const char *s;
    skip_space(r);
    *start = r->pos;
    for (i = r->pos, n = r->len, s = r->s; i < n && is_word_char((unsigned char)s[i]); i++)
        ;
    return i - *start;
}

static inline int word_is(const reader_t *r, size_t start, size_t n, const char *kw)
{
    return strlen(kw) == n && memcmp(r->s + start, kw, n) == 0;
}

static int expect_eol(reader_t *r, const char *after)
{
    skip_space(r);
    if (r->pos < r->len)
        return fail(r, r->pos, "expected end of line after %s, got %s", after, FOUND(r, r->pos));
    return CS_OK;
}

/* Expects the keyword `kw`; `ctx` says what it follows, for the message. */
static int expect_kw(reader_t *r, const char *kw, const char *ctx)
{
    size_t start, n = peek_word(r, &start);
    if (!word_is(r, start, n, kw))
        return fail(r, start, "expected '%s' after %s, got %s", kw, ctx, FOUND(r, start));
    r->pos += n;
    return CS_OK;
}

/* Parses a non-negative decimal integer (at most INT64_MAX) described as
 * `what`; with allow_any, "-1" gives -1.  *at receives its position. */
static int parse_int(reader_t *r, const char *what, int allow_any, int64_t *v, size_t *at)
{
    size_t start, n = peek_word(r, &start);
    int64_t x = 0;
    *at = start;
    if (n == 0)
        return fail(r, start, "expected %s, got %s", what, FOUND(r, start));
    if (allow_any && n == 2 && memcmp(r->s + start, "-1", 2) == 0) {
        r->pos += n;
        *v = -1;
        return CS_OK;
    }
    if (r->s[start] == '-')
        return fail(r, start, "expected %s, got the negative number %s", what, FOUND(r, start));
    for (size_t i = start; i < start + n; i++) {
        int d = r->s[i] - '0';
        if (!is_digit((unsigned char)r->s[i]))
            return fail(r, start, "expected %s (a non-negative integer), got %s", what,
                        FOUND(r, start));
        /* 18 digits cannot overflow: the division is for longer numbers */
        if (i - start >= 18 && x > (INT64_MAX - d) / 10)
            return fail(r, start, "%s %.*s does not fit in 64 bits; expected at most %lld", what,
                        (int)n, r->s + start, (long long)INT64_MAX);
        x = 10 * x + d;
    }
    r->pos += n;
    *v = x;
    return CS_OK;
}

/* A byte count: digits immediately followed by 'b' ("8b"). */
static int parse_size(reader_t *r, int64_t *v)
{
    size_t start, n = peek_word(r, &start), i;
    int64_t x = 0;
    if (n == 0)
        return fail(r, start, "expected a size in bytes such as 8b, got %s", FOUND(r, start));
    if (r->s[start] == '-')
        return fail(r, start, "expected a non-negative size in bytes such as 8b, got %s",
                    FOUND(r, start));
    if (!is_digit((unsigned char)r->s[start]))
        return fail(r, start, "expected a size in bytes such as 8b, got %s", FOUND(r, start));
    for (i = start; i < start + n && is_digit((unsigned char)r->s[i]); i++) {
        int d = r->s[i] - '0';
        if (i - start >= 18 && x > (INT64_MAX - d) / 10) {
            size_t e = i;
            while (e < start + n && is_digit((unsigned char)r->s[e]))
                e++;
            return fail(r, start, "size %.*s does not fit in 64 bits; expected at most %lld",
                        (int)(e - start), r->s + start, (long long)INT64_MAX);
        }
        x = 10 * x + d;
    }
    if (i >= r->len || r->s[i] != 'b')
        return fail(r, i, "expected 'b' after the size %lld, got %s", (long long)x, FOUND(r, i));
    if (i + 1 < start + n)
        return fail(r, i + 1, "expected a space after the size %lldb, got %s", (long long)x,
                    FOUND(r, i + 1));
    r->pos = start + n;
    *v = x;
    return CS_OK;
}

/* A rank number < num_ranks (or -1 = any, when allowed). */
static int parse_rank(reader_t *r, const char *what, int allow_any, int32_t *v, size_t *at)
{
    int64_t x = 0;
    int rc = parse_int(r, what, allow_any, &x, at);
    if (rc)
        return rc;
    if (x >= r->nranks)
        return fail(r, *at, "%s %lld is out of range; expected a rank in 0..%d (num_ranks is %d)",
                    what, (long long)x, r->nranks - 1, r->nranks);
    *v = (int32_t)x;
    return CS_OK;
}

/* Appends printf text to buf (of size n) as far as it fits. */
static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...)
{
    size_t k = strlen(buf);
    va_list ap;
    if (k + 1 >= n)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + k, n - k, fmt, ap);
    va_end(ap);
}

/* The optional fields, in GOAL's order: tag, cpu, nic.  collsim models one
 * CPU and one NIC per rank, so cpu and nic are accepted only as 0: silently
 * ignoring `cpu 1` would simulate a different schedule than the file says. */
enum { OPT_TAG = 1, OPT_TAG_ANY = 2, OPT_CPU = 4, OPT_NIC = 8 };

static int parse_options(reader_t *r, int allowed, int32_t *tag)
{
    static const char *const names[] = {"tag", "cpu", "nic"}; /* all of length 3 */
    static const int bits[] = {OPT_TAG, OPT_CPU, OPT_NIC};
    int next = 0; /* index of the first field still allowed */
    *tag = 0;
    for (;;) {
        size_t start, n = peek_word(r, &start), at = 0;
        int64_t v = 0;
        int which = -1, rc;
        if (r->pos >= r->len)
            return CS_OK;
        for (int k = next; k < 3; k++)
            if ((allowed & bits[k]) && n == 3 && memcmp(r->s + start, names[k], 3) == 0)
                which = k;
        if (which < 0) {
            char list[64] = "";
            for (int k = next; k < 3; k++) {
                int more = 0;
                for (int j = k + 1; j < 3; j++)
                    more |= allowed & bits[j];
                if (allowed & bits[k])
                    append(list, sizeof list, "'%s'%s", names[k], more ? ", " : " or ");
            }
            return fail(r, start, "expected %send of line, got %s", list, FOUND(r, start));
        }
        r->pos += n;
        next = which + 1;
        if (which == 0) {
            rc = parse_int(r, "a tag", (allowed & OPT_TAG_ANY) != 0, &v, &at);
            if (rc)
                return rc;
            if (v > INT32_MAX)
                return fail(r, at, "tag %lld is out of range; expected 0..%d", (long long)v,
                            INT32_MAX);
            *tag = (int32_t)v;
        } else {
            const char *what = which == 1 ? "cpu" : "nic";
            rc = parse_int(r, which == 1 ? "a cpu number" : "a nic number", 0, &v, &at);
            if (rc)
                return rc;
            if (v != 0)
                return fail(r, at,
                            "%s %lld is not supported: collsim models one %s per rank; "
                            "expected %s 0",
                            what, (long long)v, which == 1 ? "CPU" : "NIC", what);
        }
    }
}

/* Called when a builder refused an op although the reader checked it: the
 * program recorded why, and finalize is the way to read that message. */
static int builder_failed(reader_t *r, size_t pos)
{
    cs_error_t e = {0, ""};
    if (cs_program_finalize(r->p, &e) == CS_OK)
        return fail(r, pos, "internal error: the program builder refused this statement");
    return fail(r, pos, "%s", e.msg);
}

/* Placement: the next op of the open block takes the id the order gives
 * it (the next of the run active[cur] for this rank), or one beyond the
 * order's ids when the order gives the rank no more (the file then fails
 * the order's check at the end). */
static void place_next(reader_t *r)
{
    int64_t id;
    if (!r->place)
        return;
    while (r->cur < r->nactive && r->cur_used == r->runs[r->active[r->cur]].count) {
        r->cur++;
        r->cur_used = 0;
    }
    if (r->cur < r->nactive) {
        const order_run_t *run = &r->runs[r->active[r->cur]];
        int64_t at = run->last >= run->first ? r->rank - run->first : run->first - r->rank;
        id = r->run_base[r->active[r->cur]] + at * run->count + r->cur_used++;
    } else {
        id = r->beyond++;
    }
    cs_program_place(r->p, (int32_t)id); /* below 2^31: see start_placing */
}

/* Notes op `id`, just added, as the open block's next op. */
static void block_op(reader_t *r, int32_t id)
{
    if (r->nids == r->cap_ids) {
        r->cap_ids = r->cap_ids ? 2 * r->cap_ids : 64;
        r->ids = cs_realloc(r->ids, r->cap_ids * sizeof *r->ids);
        r->label_at = cs_realloc(r->label_at, r->cap_ids * sizeof *r->label_at);
    }
    r->ids[r->nids++] = id;
}

static int cmp_pair(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* `to R1,R2,...` of an mcast, into r->dsts; duplicates are errors because a
 * rank cannot receive one payload twice. */
static int parse_rank_list(reader_t *r, int *count)
{
    int n = 0, rc;
    for (;;) {
        size_t at = 0;
        int32_t v = 0;
        rc = parse_rank(r, "a destination rank", 0, &v, &at);
        if (rc)
            return rc;
        if ((size_t)n == r->cap_dsts) {
            r->cap_dsts = r->cap_dsts ? 2 * r->cap_dsts : 16;
            r->dsts = cs_realloc(r->dsts, r->cap_dsts * sizeof *r->dsts);
            r->dst_pos = cs_realloc(r->dst_pos, r->cap_dsts * sizeof *r->dst_pos);
        }
        r->dsts[n] = v;
        r->dst_pos[n] = (int32_t)at;
        n++;
        skip_space(r);
        if (r->pos < r->len && r->s[r->pos] == ',') {
            r->pos++;
            continue;
        }
        break;
    }
    if (n > 1) {
        int32_t *pairs = cs_malloc((size_t)n * 2 * sizeof *pairs);
        for (int i = 0; i < n; i++) {
            pairs[2 * i] = r->dsts[i];
            pairs[2 * i + 1] = r->dst_pos[i];
        }
        qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_pair);
        for (int i = 1; i < n; i++)
            if (pairs[2 * i] == pairs[2 * i - 2]) {
                int32_t rank = pairs[2 * i], pos = pairs[2 * i + 1];
                free(pairs);
                return fail(r, (size_t)pos,
                            "destination %d appears twice in the mcast; expected distinct ranks",
                            rank);
            }
        free(pairs);
    }
    *count = n;
    return CS_OK;
}

/* An op: the keyword is the word at `kw` (length kn).  *id gets the op. */
static int parse_op(reader_t *r, size_t kw, size_t kn, int32_t *id)
{
    int64_t bytes = 0, ticks = 0;
    int32_t peer = 0, tag = 0;
    size_t at = 0;
    int rc, rank = r->rank;

    r->pos = kw + kn;
    if (word_is(r, kw, kn, "send")) {
        if ((rc = parse_size(r, &bytes)) || (rc = expect_kw(r, "to", "the size")) ||
            (rc = parse_rank(r, "destination rank", 0, &peer, &at)) ||
            (rc = parse_options(r, OPT_TAG | OPT_CPU | OPT_NIC, &tag)))
            return rc;
        place_next(r);
        *id = cs_program_send(r->p, rank, peer, bytes, tag);
    } else if (word_is(r, kw, kn, "recv")) {
        if ((rc = parse_size(r, &bytes)) || (rc = expect_kw(r, "from", "the size")) ||
            (rc = parse_rank(r, "source rank", 1, &peer, &at)) ||
            (rc = parse_options(r, OPT_TAG | OPT_TAG_ANY | OPT_CPU | OPT_NIC, &tag)))
            return rc;
        place_next(r);
        *id = cs_program_recv(r->p, rank, peer == -1 ? CS_ANY : peer, bytes,
                              tag == -1 ? CS_ANY : tag);
    } else if (word_is(r, kw, kn, "mcast")) {
        int n = 0;
        if ((rc = parse_size(r, &bytes)) || (rc = expect_kw(r, "to", "the size")) ||
            (rc = parse_rank_list(r, &n)) ||
            (rc = parse_options(r, OPT_TAG | OPT_CPU | OPT_NIC, &tag)))
            return rc;
        place_next(r);
        *id = cs_program_mcast(r->p, rank, r->dsts, n, bytes, tag);
    } else if (word_is(r, kw, kn, "calc")) {
        if ((rc = parse_int(r, "a calc time in nanoseconds", 0, &ticks, &at)) ||
            (rc = parse_options(r, OPT_CPU, &tag)))
            return rc;
        place_next(r);
        *id = cs_program_calc(r->p, rank, ticks, 0);
    } else if (word_is(r, kw, kn, "reduce")) {
        size_t s2, n2;
        if ((rc = parse_size(r, &bytes)))
            return rc;
        n2 = peek_word(r, &s2);
        if (word_is(r, s2, n2, "calc")) {
            r->pos += n2;
            if ((rc = parse_int(r, "a calc time in nanoseconds", 0, &ticks, &at)))
                return rc;
        }
        if ((rc = parse_options(r, OPT_CPU, &tag)))
            return rc;
        place_next(r);
        *id = cs_program_calc(r->p, rank, ticks, bytes);
    } else {
        char what[200];
        if (!valid_label(r->s + kw, kn))
            return fail(r, kw,
                        "expected an operation (send, recv, calc, mcast, reduce), "
                        "a label or '}', got %s",
                        FOUND(r, kw));
        snprintf(what, sizeof what, "%.*s", kn > 40 ? 40 : (int)kn, r->s + kw);
        return fail(r, kw,
                    "unknown operation '%s'; expected send, recv, calc, mcast, "
                    "reduce, '%s: OP' or '%s requires LABEL'",
                    what, what, what);
    }
    if (*id < 0)
        return builder_failed(r, kw);
    block_op(r, *id);
    return CS_OK;
}

static const char *dep_word(int kind)
{
    return kind == CS_DEP_AFTER ? "requires" : kind == CS_DEP_AFTER_START ? "irequires" : "streams";
}

/* Looks up the label at (start, n) in the open block; it stands `side`
 * ("before" or "after") the dependency keyword `kw`. */
static int lookup_label(reader_t *r, size_t start, size_t n, const char *side, const char *kw,
                        int32_t *op)
{
    if (n == 0)
        return fail(r, start, "expected a label %s '%s', got %s", side, kw, FOUND(r, start));
    if (!valid_label(r->s + start, n))
        return fail(r, start,
                    "expected a label %s '%s' (a letter, then letters, digits or "
                    "'_'), got %s",
                    side, kw, FOUND(r, start));
    *op = lt_find(&r->labels, r->s + start, n, hash_label(r->s + start, n));
    if (*op < 0) /* an index in the block: see reader_t.ids */
        return fail(r, start,
                    "label '%.*s' is not defined in the block of rank %d; expected "
                    "a label defined on an earlier line of the block",
                    n > 60 ? 60 : (int)n, r->s + start, r->rank);
    return CS_OK;
}

static int add_dep(reader_t *r, int32_t la, int32_t lb, int kind, size_t w1, size_t w3);

/* `a requires b` and friends; the left label is at (w1, n1), the keyword at
 * (w2, n2). */
static int parse_dep(reader_t *r, size_t w1, size_t n1, size_t w2, size_t n2)
{
    int kind = word_is(r, w2, n2, "requires")    ? CS_DEP_AFTER
               : word_is(r, w2, n2, "irequires") ? CS_DEP_AFTER_START
                                                 : CS_DEP_STREAM;
    int32_t la, lb;
    size_t w3, n3;
    int rc;

    if ((rc = lookup_label(r, w1, n1, "before", dep_word(kind), &la)))
        return rc;
    r->pos = w2 + n2;
    n3 = peek_word(r, &w3);
    if ((rc = lookup_label(r, w3, n3, "after", dep_word(kind), &lb)))
        return rc;
    r->pos = w3 + n3;
    if ((rc = expect_eol(r, "the dependency")))
        return rc;
    return add_dep(r, la, lb, kind, w1, w3);
}

/* The dependency of the open block's op `la` on its op `lb` (indices in
 * the block), of `kind`; the labels stand at w1 and w3 of the line. */
static int add_dep(reader_t *r, int32_t la, int32_t lb, int kind, size_t w1, size_t w3)
{
    int32_t a = r->ids[la], b = r->ids[lb];
    if (a == b)
        return fail(r, w1,
                    "'%s %s %s' makes an op wait for itself; expected two different "
                    "labels",
                    cs_program_label(r->p, a), dep_word(kind), cs_program_label(r->p, b));
    if (kind == CS_DEP_STREAM) {
        const cs_op_t *pb = cs_program_op(r->p, b);
        if (pb->kind == CS_OP_CALC && pb->bytes == 0)
            return fail(r, w3,
                        "'%s' is a calc without bytes, which has no progress to stream "
                        "from; expected a send, recv, mcast or reduce",
                        cs_program_label(r->p, b));
    }
    if (cs_program_dep(r->p, a, b, (cs_dep_kind_t)kind) != CS_OK)
        return builder_failed(r, w1);
    if (r->ndeps == r->cap_deps) {
        r->cap_deps = r->cap_deps ? 2 * r->cap_deps : 64;
        r->deps = cs_realloc(r->deps, r->cap_deps * sizeof *r->deps);
    }
    r->deps[r->ndeps++] = (block_dep_t){a, b, la, lb,
                                        r->line > INT32_MAX ? INT32_MAX : (int32_t)r->line,
                                        (int32_t)(w1 + 1), (uint8_t)kind};
    if (lb > la)
        r->deps_forward = 1;
    return CS_OK;
}

/* Kahn's algorithm over the block's ops.  Skipped when every dependency
 * points at an earlier op, which is how Schedgen writes them and cannot
 * form a cycle.  On a cycle, reports the dependency of the cycle written
 * last, which is the one that closed it. */
static int check_block_cycles(reader_t *r)
{
    int32_t n = (int32_t)r->nids, done = 0, top = 0;
    size_t m = r->ndeps;
    int rc = CS_OK;
    if (!r->deps_forward || n == 0)
        return CS_OK;

    int32_t *indeg = cs_calloc((size_t)n, sizeof *indeg);
    size_t *sstart = cs_calloc((size_t)n + 1, sizeof *sstart);
    size_t *pstart = cs_calloc((size_t)n + 1, sizeof *pstart);
    size_t *sfill = cs_malloc(((size_t)n + 1) * sizeof *sfill);
    size_t *pfill = cs_malloc(((size_t)n + 1) * sizeof *pfill);
    size_t *succ = cs_malloc((m ? m : 1) * sizeof *succ); /* dep indices */
    size_t *pred = cs_malloc((m ? m : 1) * sizeof *pred);
    int32_t *stack = cs_malloc((size_t)n * sizeof *stack);

    for (size_t k = 0; k < m; k++) {
        sstart[r->deps[k].lpred + 1]++;
        pstart[r->deps[k].lop + 1]++;
        indeg[r->deps[k].lop]++;
    }
    for (int32_t i = 0; i < n; i++) {
        sstart[i + 1] += sstart[i];
        pstart[i + 1] += pstart[i];
    }
    memcpy(sfill, sstart, ((size_t)n + 1) * sizeof *sfill);
    memcpy(pfill, pstart, ((size_t)n + 1) * sizeof *pfill);
    for (size_t k = 0; k < m; k++) {
        succ[sfill[r->deps[k].lpred]++] = k;
        pred[pfill[r->deps[k].lop]++] = k;
    }
    for (int32_t i = 0; i < n; i++)
        if (!indeg[i])
            stack[top++] = i;
    while (top) {
        int32_t u = stack[--top];
        done++;
        for (size_t k = sstart[u]; k < sstart[u + 1]; k++) {
            int32_t v = r->deps[succ[k]].lop;
            if (--indeg[v] == 0)
                stack[top++] = v;
        }
    }
    if (done < n) {
        /* Every op left has an unresolved predecessor: walking those from
         * any of them must revisit an op, and the walk from there is a cycle. */
        int32_t *seen = cs_calloc((size_t)n, sizeof *seen); /* 1 + index in the walk */
        size_t *via = cs_malloc((size_t)n * sizeof *via);   /* dep taken at each step */
        int32_t u = 0, steps = 0, loop;
        size_t last;
        char list[600] = "";
        while (indeg[u] == 0)
            u++;
        while (!seen[u]) {
            seen[u] = ++steps;
            for (size_t k = pstart[u]; k < pstart[u + 1]; k++) {
                int32_t v = r->deps[pred[k]].lpred;
                if (indeg[v] > 0) {
                    via[steps - 1] = pred[k];
                    u = v;
                    break;
                }
            }
        }
        loop = seen[u] - 1; /* the cycle is via[loop .. steps-1] */
        last = via[loop];
        for (int32_t i = loop; i < steps; i++) {
            const block_dep_t *d = &r->deps[via[i]];
            if (d->line > r->deps[last].line ||
                (d->line == r->deps[last].line && d->col > r->deps[last].col))
                last = via[i];
            append(list, sizeof list, "%s'%s %s %s'", i > loop ? ", " : "",
                   cs_program_label(r->p, d->op), dep_word(d->kind),
                   cs_program_label(r->p, d->pred));
        }
        rc = fail_at(r, r->deps[last].line, (size_t)r->deps[last].col,
                     "dependency cycle in the block of rank %d: %s; expected dependencies "
                     "without cycles (none of these ops could ever start)",
                     r->rank, list);
        free(seen);
        free(via);
    }
    free(indeg);
    free(sstart);
    free(pstart);
    free(sfill);
    free(pfill);
    free(succ);
    free(pred);
    free(stack);
    return rc;
}

static int parse_header(reader_t *r)
{
    size_t start, n = peek_word(r, &start), at = 0;
    int64_t v = 0;
    int rc;
    if (!word_is(r, start, n, "num_ranks"))
        return fail(r, start, "expected 'num_ranks N' at the start of the file, got %s",
                    FOUND(r, start));
    r->pos += n;
    if ((rc = parse_int(r, "the number of ranks", 0, &v, &at)))
        return rc;
    if (v < 1 || v > INT32_MAX)
        return fail(r, at, "num_ranks %lld is out of range; expected 1..%d", (long long)v,
                    INT32_MAX);
    if ((rc = expect_eol(r, "'num_ranks N'")))
        return rc;
    r->nranks = (int)v;
    r->p = cs_program_new(r->nranks);
    r->labels.key = program_key;
    r->labels.ctx = r;
    return CS_OK;
}

/* At the first block, with the order lines read: places the ops if the
 * order's ids can hold no surprise.  Its ops must fit in the text (an op
 * takes a line of at least 7 bytes, `calc 0` and its '\n'), so that the
 * ids it gives never ask for memory the file does not justify, and twice
 * that must stay below the program's limit, so that an op beyond the
 * order (r->beyond) gets an id too.  Otherwise the ops are read in file
 * order and renumbered at the end, as a stream's are. */
static void start_placing(reader_t *r)
{
    int64_t total = 0, most = r->size / 7;
    if (r->size < 0 || 2 * most > CS_PROGRAM_MAX_OPS)
        return;
    r->run_base = cs_malloc((r->nruns + 1) * sizeof *r->run_base);
    for (size_t k = 0; k < r->nruns && total <= most; k++) {
        const order_run_t *run = &r->runs[k];
        int64_t width = run->last >= run->first ? run->last - run->first + 1
                                                : run->first - run->last + 1;
        r->run_base[k] = total;
        total += width * run->count;
    }
    if (total > most) {
        free(r->run_base);
        r->run_base = NULL;
        return;
    }
    r->by_lo = cs_malloc((r->nruns + 1) * sizeof *r->by_lo);
    r->active = cs_malloc((r->nruns + 1) * sizeof *r->active);
    r->merge = cs_malloc((r->nruns + 1) * sizeof *r->merge);
    /* (lowest rank, index) pairs sorted, then the indices */
    int32_t *pairs = cs_malloc((r->nruns + 1) * 2 * sizeof *pairs);
    for (size_t k = 0; k < r->nruns; k++) {
        const order_run_t *run = &r->runs[k];
        pairs[2 * k] = run->first < run->last ? run->first : run->last;
        pairs[2 * k + 1] = (int32_t)k;
    }
    qsort(pairs, r->nruns, 2 * sizeof *pairs, cmp_pair);
    for (size_t k = 0; k < r->nruns; k++)
        r->by_lo[k] = pairs[2 * k + 1];
    free(pairs);
    r->beyond = total;
    r->place = 1;
}

/* The runs that cover the open block's rank, in order: those of the
 * previous rank that still do, and those that start here.  Blocks come in
 * rank order, so this is a sweep over the ranks: each run enters and
 * leaves the list once, and a block's cost is the runs that give it ops. */
static void sweep_runs(reader_t *r)
{
    size_t n = 0, i = 0, start = r->next_lo;
    while (r->next_lo < r->nruns) {
        const order_run_t *run = &r->runs[r->by_lo[r->next_lo]];
        if ((run->first < run->last ? run->first : run->last) > r->rank)
            break;
        r->next_lo++;
    }
    /* merge the runs still active with the new ones (both by index) */
    for (size_t k = 0; k < r->nactive || start + i < r->next_lo;) {
        int32_t a = k < r->nactive ? r->active[k] : INT32_MAX;
        int32_t b = start + i < r->next_lo ? r->by_lo[start + i] : INT32_MAX;
        int32_t x = a < b ? a : b;
        const order_run_t *run = &r->runs[x];
        if (a < b)
            k++;
        else
            i++;
        if ((run->first > run->last ? run->first : run->last) >= r->rank)
            r->merge[n++] = x;
    }
    memcpy(r->active, r->merge, n * sizeof *r->active);
    r->nactive = n;
    r->cur = 0;
    r->cur_used = 0;
}

static int parse_block_open(reader_t *r)
{
    size_t start, n = peek_word(r, &start), at = 0;
    int64_t v = 0;
    int rc;
    if (!word_is(r, start, n, "rank")) {
        if (r->rank == r->nranks)
            return fail(r, start, "expected end of file after the last rank block (%d), got %s",
                        r->nranks - 1, FOUND(r, start));
        return fail(r, start, "expected 'rank %d {', got %s", r->rank, FOUND(r, start));
    }
    r->pos += n;
    if ((rc = parse_int(r, "a rank number", 0, &v, &at)))
        return rc;
    if (v >= r->nranks)
        return fail(r, at,
                    "rank %lld is out of range; expected a rank block 0..%d "
                    "(num_ranks is %d)",
                    (long long)v, r->nranks - 1, r->nranks);
    if (v < r->rank) {
        if (r->rank == r->nranks)
            return fail(r, at, "rank %lld was already given; expected end of file", (long long)v);
        return fail(r, at, "rank %lld was already given; expected 'rank %d {'", (long long)v,
                    r->rank);
    }
    if (v > r->rank)
        return fail(r, at,
                    "rank block %lld is out of order; expected 'rank %d {' (blocks come "
                    "once each, in order 0..%d)",
                    (long long)v, r->rank, r->nranks - 1);
    skip_space(r);
    if (r->pos >= r->len || r->s[r->pos] != '{')
        return fail(r, r->pos, "expected '{' after 'rank %d', got %s", r->rank, FOUND(r, r->pos));
    r->pos++;
    if ((rc = expect_eol(r, "'{'")))
        return rc;
    r->in_block = 1;
    r->block_line = r->line;
    r->nids = 0;
    r->arena_len = 0;
    if (r->rank == 0 && r->has_order && !r->no_place)
        start_placing(r);
    if (r->place)
        sweep_runs(r);
    return CS_OK;
}

static int parse_block_close(reader_t *r)
{
    int rc;
    r->pos++;
    if ((rc = expect_eol(r, "'}'")) || (rc = check_block_cycles(r)))
        return rc;
    lt_clear(&r->labels);
    if (r->nids && r->place) { /* placed ops are not rank by rank: see apply_order */
        if (r->nblocks == r->cap_blocks) {
            r->cap_blocks = r->cap_blocks ? 2 * r->cap_blocks : 64;
            r->blocks = cs_realloc(r->blocks, r->cap_blocks * sizeof *r->blocks);
        }
        r->blocks[r->nblocks++] = (block_count_t){r->rank, (int32_t)r->nids};
    }
    r->ndeps = 0;
    r->deps_forward = 0;
    r->in_block = 0;
    r->rank++;
    return CS_OK;
}

/* Gives op `id` the label at (w, n) of the line, whose hash is h. */
static void define_label(reader_t *r, int32_t id, size_t w, size_t n, uint32_t h)
{
    char *at;
    if (r->arena_len + n + 1 > r->cap_arena) {
        r->cap_arena = 2 * (r->arena_len + n + 1) + 256;
        r->arena = cs_realloc(r->arena, r->cap_arena);
    }
    at = r->arena + r->arena_len;
    memcpy(at, r->s + w, n);
    at[n] = '\0';
    r->label_at[r->nids - 1] = r->arena_len;
    r->arena_len += n + 1;
    cs_program_set_origin(r->p, id, r->line > INT_MAX ? INT_MAX : (int)r->line, at);
    lt_insert(&r->labels, h, (int32_t)r->nids - 1); /* id is the block's last op */
}

/* Fast path: 1 to 18 digits at p, followed by a space, 'b' or the end;
 * NULL otherwise. */
static const char *fast_number(const char *p, const char *e, int64_t *v)
{
    const char *b = p;
    int64_t x = 0;
    while (p < e && is_digit((unsigned char)*p)) {
        if (p - b == 18)
            return NULL; /* a 19th digit could overflow: the general parser */
        x = 10 * x + (*p++ - '0');
    }
    if (p == b)
        return NULL;
    *v = x;
    return p;
}

/* Fast path: one or more spaces at p (NULL if none). */
static const char *fast_space(const char *p, const char *e)
{
    const char *b = p;
    while (p < e && is_space((unsigned char)*p))
        p++;
    return p > b ? p : NULL;
}

/* The fast path for Schedgen's dependency lines, `LABEL requires LABEL`
 * with both labels defined and different, nothing else on the line; the
 * first label at (w1, n1).  As fast_op: anything else is left to the
 * general path (returns 0). */
static int fast_dep(reader_t *r, size_t w1, size_t n1, int *rc)
{
    const char *s = r->s, *e = s + r->len, *p = s + w1 + n1, *w3;
    int32_t la, lb;

    if (!(p = fast_space(p, e)) || e - p < 8 || memcmp(p, "requires", 8) != 0 ||
        !(p = fast_space(p + 8, e)))
        return 0;
    for (w3 = p; p < e && is_word_char((unsigned char)*p); p++)
        ;
    if (p == w3)
        return 0;
    size_t n3 = (size_t)(p - w3);
    while (p < e && is_space((unsigned char)*p))
        p++;
    if (p < e || !valid_label(s + w1, n1) || !valid_label(w3, n3))
        return 0;
    la = lt_find(&r->labels, s + w1, n1, hash_label(s + w1, n1));
    lb = lt_find(&r->labels, w3, n3, hash_label(w3, n3));
    if (la < 0 || lb < 0 || la == lb)
        return 0;
    *rc = add_dep(r, la, lb, CS_DEP_AFTER, w1, (size_t)(w3 - s));
    return 1;
}

/* The fast path for what Schedgen writes for nearly every op:
 * `LABEL: send Nb to R [tag T]` and `LABEL: recv Nb from R [tag T]`, the
 * label at (w1, n1).  One scan over the line without the general parser's
 * token-by-token calls.  It takes the line only when it is certain to be
 * correct (a new label, peer and tag in range, nothing else on the line,
 * no comment) and then does exactly what the general path does; anything
 * else, valid or not, it leaves untouched (returns 0) for the general
 * path, which also words every error.  Returns 1 with *rc set when it took
 * the line. */
static int fast_op(reader_t *r, size_t w1, size_t n1, int *rc)
{
    const char *s = r->s, *e = s + r->len, *p = s + w1 + n1, *kw, *q;
    int64_t bytes = 0, peer = 0, tag = 0;
    int send;
    uint32_t h;
    int32_t id;

    if (p < e && *p != ':')
        return fast_dep(r, w1, n1, rc);
    if (p >= e || !valid_label(s + w1, n1))
        return 0;
    for (p++; p < e && is_space((unsigned char)*p); p++)
        ;
    kw = p;
    if (e - p < 4)
        return 0;
    if (memcmp(p, "send", 4) == 0)
        send = 1;
    else if (memcmp(p, "recv", 4) == 0)
        send = 0;
    else
        return 0;
    if (!(p = fast_space(p + 4, e)) || !(p = fast_number(p, e, &bytes)) || p >= e || *p != 'b' ||
        !(p = fast_space(p + 1, e)))
        return 0;
    if (send ? (e - p < 2 || memcmp(p, "to", 2) != 0) : (e - p < 4 || memcmp(p, "from", 4) != 0))
        return 0;
    if (!(p = fast_space(p + (send ? 2 : 4), e)) || !(p = fast_number(p, e, &peer)) ||
        peer >= r->nranks)
        return 0;
    for (q = p; q < e && is_space((unsigned char)*q); q++)
        ;
    if (q < e) { /* `tag T`, after at least one space */
        if (q == p || e - q < 3 || memcmp(q, "tag", 3) != 0 || !(q = fast_space(q + 3, e)) ||
            !(q = fast_number(q, e, &tag)) || tag > INT32_MAX)
            return 0;
        while (q < e && is_space((unsigned char)*q))
            q++;
        if (q < e)
            return 0;
    }
    h = hash_label(s + w1, n1);
    if (lt_find(&r->labels, s + w1, n1, h) >= 0)
        return 0; /* a second definition: the general path says so */
    place_next(r);
    id = send ? cs_program_send(r->p, r->rank, (int32_t)peer, bytes, (int32_t)tag)
              : cs_program_recv(r->p, r->rank, (int32_t)peer, bytes, (int32_t)tag);
    if (id < 0) {
        *rc = builder_failed(r, (size_t)(kw - s));
        return 1;
    }
    block_op(r, id);
    define_label(r, id, w1, n1, h);
    *rc = CS_OK;
    return 1;
}

/* One statement inside a rank block: `[L:] op`, `L requires L`, ... */
static int parse_statement(reader_t *r)
{
    size_t w1, n1 = peek_word(r, &w1), w2, n2;
    int32_t id;
    int rc;

    if (n1 && fast_op(r, w1, n1, &rc))
        return rc;
    if (n1 == 0)
        return fail(r, w1, "expected an operation, a label or '}', got %s", FOUND(r, w1));
    r->pos = w1 + n1;
    skip_space(r);
    if (r->pos < r->len && r->s[r->pos] == ':') {
        size_t ow, on;
        uint32_t h = hash_label(r->s + w1, n1);
        int32_t prev;
        if (!valid_label(r->s + w1, n1))
            return fail(r, w1,
                        "expected a label (a letter, then letters, digits or '_') "
                        "before ':', got %s",
                        FOUND(r, w1));
        prev = lt_find(&r->labels, r->s + w1, n1, h);
        if (prev >= 0)
            return fail(r, w1,
                        "label '%.*s' is already defined in the block of rank %d "
                        "(line %d); expected a new label",
                        n1 > 60 ? 60 : (int)n1, r->s + w1, r->rank,
                        cs_program_line(r->p, r->ids[prev]));
        r->pos++;
        on = peek_word(r, &ow);
        if (on == 0)
            return fail(r, ow, "expected an operation after '%.*s:', got %s",
                        n1 > 60 ? 60 : (int)n1, r->s + w1, FOUND(r, ow));
        if ((rc = parse_op(r, ow, on, &id)) || (rc = expect_eol(r, "the operation")))
            return rc;
        define_label(r, id, w1, n1, h);
        return CS_OK;
    }
    n2 = peek_word(r, &w2);
    if (word_is(r, w2, n2, "requires") || word_is(r, w2, n2, "irequires") ||
        word_is(r, w2, n2, "streams"))
        return parse_dep(r, w1, n1, w2, n2);
    if (word_is(r, w1, n1, "rank"))
        return fail(r, w1,
                    "found 'rank' inside the block of rank %d opened at line %ld; "
                    "expected '}' to close that block first",
                    r->rank, r->block_line);
    if ((rc = parse_op(r, w1, n1, &id)) || (rc = expect_eol(r, "the operation")))
        return rc;
    cs_program_set_origin(r->p, id, r->line > INT_MAX ? INT_MAX : (int)r->line, NULL);
    return CS_OK;
}

/* Bytes that no text file holds are rejected wherever they are, comments
 * included, so that binary files fail on their first line. */
static int check_bytes(reader_t *r)
{
    if (!cs_lines_maybe_control(r->s, r->len))
        return CS_OK;
    for (size_t i = 0; i < r->len; i++) {
        unsigned char c = (unsigned char)r->s[i];
        if (c == 0)
            return fail(r, i,
                        "found a NUL byte; expected text (is this a binary file? "
                        "collsim reads GOAL's text form, not txt2bin output)");
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
            return fail(r, i,
                        "found the control byte 0x%02x; expected text (is this a "
                        "binary file?)",
                        c);
    }
    return CS_OK;
}

/* Parses a decimal number of at most 10 digits in s[a, b) into *v;
 * 0 if it is not one. */
static int order_number(const char *s, size_t a, size_t b, int64_t *v)
{
    int64_t x = 0;
    if (a >= b || b - a > 10)
        return 0;
    for (size_t i = a; i < b; i++) {
        if (!is_digit((unsigned char)s[i]))
            return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 1;
}

/* A `// collsim order: RANK:COUNT ...` line starting at `at`. */
static int parse_order(reader_t *r, size_t at)
{
    if (r->nranks < 0)
        return fail(r, at,
                    "found an op order line before 'num_ranks N'; expected 'num_ranks N' "
                    "first");
    if (r->in_block)
        return fail(r, at,
                    "found an op order line inside the block of rank %d opened at line %ld; "
                    "expected it outside rank blocks",
                    r->rank, r->block_line);
    if (r->place)
        return GOAL_READ_AGAIN; /* the ids given so far may change */
    if (!r->has_order) {
        r->has_order = 1;
        r->order_line = r->line;
        r->order_col = at + 1;
    }
    r->pos = at + strlen(ORDER_PREFIX);
    for (;;) {
        size_t start, colon = 0, dash = 0;
        int64_t first = 0, last = 0, count = 0;
        while (r->pos < r->len && is_space((unsigned char)r->s[r->pos]))
            r->pos++;
        if (r->pos >= r->len)
            return CS_OK;
        start = r->pos;
        while (r->pos < r->len && !is_space((unsigned char)r->s[r->pos])) {
            if (r->s[r->pos] == ':' && !colon)
                colon = r->pos;
            if (r->s[r->pos] == '-' && !dash && !colon)
                dash = r->pos;
            r->pos++;
        }
        if (!colon || !order_number(r->s, start, dash ? dash : colon, &first) ||
            (dash && !order_number(r->s, dash + 1, colon, &last)) ||
            !order_number(r->s, colon + 1, r->pos, &count))
            return fail(r, start,
                        "expected RANK:COUNT or FIRST-LAST:COUNT in the op order (such as "
                        "3:12, the next 12 ops of the block of rank 3, or 0-7:2, the next 2 "
                        "of every rank from 0 to 7 in turn), got %s",
                        FOUND(r, start));
        if (!dash)
            last = first;
        if (first >= r->nranks || last >= r->nranks)
            return fail(r, first >= r->nranks ? start : dash + 1,
                        "rank %lld in the op order is out of range; expected a rank in 0..%d "
                        "(num_ranks is %d)",
                        (long long)(first >= r->nranks ? first : last), r->nranks - 1,
                        r->nranks);
        if (count < 1 || count > INT32_MAX)
            return fail(r, colon + 1,
                        "count %lld in the op order is out of range; expected 1..%d",
                        (long long)count, INT32_MAX);
        if (r->nruns == r->cap_runs) {
            r->cap_runs = r->cap_runs ? r->cap_runs * 2 : 64;
            r->runs = cs_realloc(r->runs, r->cap_runs * sizeof *r->runs);
        }
        r->runs[r->nruns++] =
            (order_run_t){(int32_t)first, (int32_t)last, (int32_t)count, r->line, start + 1};
    }
}

/* After the last block: checks the op order against the blocks (every op
 * of every block exactly once) and gives the ops the ids it says. */
static int apply_order(reader_t *r)
{
    int32_t n = cs_program_nops(r->p), nr = (int32_t)r->nblocks, next = 0;
    int rc = CS_OK;
    /* the ranks that have ops, ascending (blocks come in rank order), with
     * their first op in file order and their count: noted at each block
     * when placing, else found in the ops, which are in file order (a
     * file without order lines does not pay 8 bytes per block) */
    for (int32_t i = 0; i < n && !r->place; i++) {
        if (i == 0 || cs_program_op(r->p, i)->rank != cs_program_op(r->p, i - 1)->rank) {
            if (r->nblocks == r->cap_blocks) {
                r->cap_blocks = r->cap_blocks ? 2 * r->cap_blocks : 64;
                r->blocks = cs_realloc(r->blocks, r->cap_blocks * sizeof *r->blocks);
            }
            r->blocks[r->nblocks++] = (block_count_t){cs_program_op(r->p, i)->rank, 0};
        }
        r->blocks[r->nblocks - 1].count++;
    }
    nr = (int32_t)r->nblocks;
    int64_t *rk = cs_malloc(((size_t)nr + 1) * sizeof *rk);
    int32_t *first = cs_malloc(((size_t)nr + 1) * sizeof *first);
    int32_t *cnt = cs_malloc(((size_t)nr + 1) * sizeof *cnt);
    int32_t *used = cs_calloc((size_t)nr + 1, sizeof *used);
    /* placed ops have their ids: the order is only checked */
    int32_t *new_id = r->place ? NULL : cs_malloc(((size_t)n + 1) * sizeof *new_id);
    for (int32_t k = 0, at = 0; k < nr; k++) {
        rk[k] = r->blocks[k].rank;
        cnt[k] = r->blocks[k].count;
        first[k] = at;
        at += cnt[k];
    }
    for (size_t k = 0; k < r->nruns && !rc; k++) {
        const order_run_t *run = &r->runs[k];
        int step = run->last >= run->first ? 1 : -1;
        for (int64_t rank = run->first;; rank += step) {
            int32_t lo = cs_sorted_find(rk, nr, rank);
            if (lo < 0) {
                rc = fail_at(r, run->line, run->col,
                             "the op order gives ops to rank %lld, whose block has none; "
                             "expected runs of the ops of the blocks",
                             (long long)rank);
                break;
            }
            if ((int64_t)used[lo] + run->count > cnt[lo]) {
                rc = fail_at(r, run->line, run->col,
                             "the op order gives rank %lld %lld ops up to here, but its block "
                             "has %d; expected every op of every block exactly once",
                             (long long)rank, (long long)used[lo] + run->count, cnt[lo]);
                break;
            }
            if (new_id)
                for (int32_t j = 0; j < run->count; j++)
                    new_id[first[lo] + used[lo] + j] = next++;
            used[lo] += run->count;
            if (rank == run->last)
                break;
        }
    }
    for (int32_t k = 0; k < nr && !rc; k++)
        if (used[k] < cnt[k])
            rc = fail_at(r, r->order_line, r->order_col,
                         "the op order gives rank %d %d of the %d ops of its block; expected "
                         "every op of every block exactly once (without '" ORDER_PREFIX
                         "' lines, ops are numbered in file order)",
                         (int)rk[k], used[k], cnt[k]);
    if (!rc && new_id)
        rc = cs_program_renumber(r->p, new_id, r->err);
    free(rk);
    free(first);
    free(cnt);
    free(used);
    free(new_id);
    return rc;
}

static int parse_line(reader_t *r)
{
    int rc;
    size_t at;
    /* Most lines of a big trace are ops and dependencies in a block: the
     * fast paths come first.  A line they take holds only labels,
     * keywords, digits and spaces, so check_bytes could not refuse it. */
    if (r->in_block && !r->in_comment) {
        for (at = 0; at < r->len && is_space((unsigned char)r->s[at]); at++)
            ;
        if (at < r->len && is_alpha((unsigned char)r->s[at])) {
            size_t w = at;
            while (at < r->len && is_word_char((unsigned char)r->s[at]))
                at++;
            if (fast_op(r, w, at - w, &rc))
                return rc;
        }
    }
    if ((rc = check_bytes(r)))
        return rc;
    r->pos = 0;
    if (r->in_comment) {
        const char *end = find_close(r->s, r->len);
        if (!end)
            return CS_OK;
        r->in_comment = 0;
        r->pos = (size_t)(end - r->s) + 2;
    }
    for (at = r->pos; at < r->len && is_space((unsigned char)r->s[at]); at++)
        ;
    if (r->len - at >= strlen(ORDER_PREFIX) && r->s[at] == '/' &&
        memcmp(r->s + at, ORDER_PREFIX, strlen(ORDER_PREFIX)) == 0)
        return parse_order(r, at);
    skip_space(r);
    if (r->pos >= r->len)
        return CS_OK;
    if (r->nranks < 0)
        return parse_header(r);
    if (!r->in_block)
        return parse_block_open(r);
    if (r->s[r->pos] == '}')
        return parse_block_close(r);
    return parse_statement(r);
}

/* Errors that only the end of the file reveals, at the position after the
 * last byte. */
static int check_eof(reader_t *r, int empty, long line, size_t col)
{
    if (r->in_comment)
        return fail_at(r, r->comment_line, r->comment_pos + 1,
                       "comment '/*' is never closed; expected '*/' before the end of the file");
    if (empty)
        return fail_at(r, 1, 1, "empty file; expected 'num_ranks N'");
    if (r->nranks < 0)
        return fail_at(r, line, col, "end of file; expected 'num_ranks N'");
    if (r->in_block)
        return fail_at(r, line, col,
                       "end of file inside the block of rank %d opened at line "
                       "%ld; expected '}'",
                       r->rank, r->block_line);
    if (r->rank < r->nranks)
        return fail_at(r, line, col,
                       "end of file after %d of %d rank blocks; expected "
                       "'rank %d {'",
                       r->rank, r->nranks, r->rank);
    return CS_OK;
}

/* Reads every line of `src` into a program (the three entry points differ
 * only in where the lines come from); `size` is the text's length in bytes
 * (-1: unknown), `no_place` turns placement off (reader_t.place). */
static int read_lines(cs_lines_t *src, const char *name, int64_t size, int no_place,
                      cs_program_t **out, cs_error_t *err)
{
    reader_t r;
    cs_line_t ln;
    int rc = CS_OK, got, empty = 1, ended_nl = 1;
    size_t last_len = 0;

    *out = NULL;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.err = err;
    r.nranks = -1;
    r.size = size;
    r.no_place = no_place;
    while ((got = cs_lines_next(src, &ln)) > 0) {
        empty = 0;
        r.line++;
        r.s = ln.s;
        r.len = ln.len;
        ended_nl = ln.nl;
        last_len = r.len;
        if ((rc = parse_line(&r)))
            break;
    }
    if (!rc && got < 0)
        rc = cs_lines_error(got, r.name, r.line, err);
    if (!rc)
        rc = check_eof(&r, empty, ended_nl ? r.line + 1 : r.line, ended_nl ? 1 : last_len + 1);
    if (!rc) {
        /* The source is set only now so that builder messages relayed by
         * builder_failed carry the reader's own NAME:LINE:COL prefix. */
        cs_program_set_source(r.p, r.name);
        cs_program_set_time_unit(r.p, 1e-9);
        if (r.has_order)
            rc = apply_order(&r);
        if (!rc)
            rc = cs_program_finalize(r.p, err);
    }
    lt_free(&r.labels);
    free(r.deps);
    free(r.arena);
    free(r.label_at);
    free(r.dsts);
    free(r.dst_pos);
    free(r.runs);
    free(r.ids);
    free(r.blocks);
    free(r.run_base);
    free(r.by_lo);
    free(r.active);
    free(r.merge);
    if (rc == GOAL_READ_AGAIN) {
        cs_program_free(r.p);
        if (cs_lines_rewind(src) != CS_OK) /* cannot happen: placing needs a size */
            return cs_error_set(err, CS_ERR_IO, "%s: cannot read again: %s", name,
                                strerror(errno));
        return read_lines(src, name, size, 1, out, err);
    }
    if (rc) {
        cs_program_free(r.p);
        return rc;
    }
    *out = r.p;
    return CS_OK;
}

int cs_goal_read_stream(FILE *f, const char *name, cs_program_t **out, cs_error_t *err)
{
    cs_lines_t *src = cs_lines_open_stream(f);
    int rc = read_lines(src, name ? name : "<stream>", -1, 0, out, err);
    cs_lines_free(src);
    return rc;
}

int cs_goal_read_file(const char *path, cs_program_t **out, cs_error_t *err)
{
    cs_lines_t *src;
    struct stat st;
    int rc;
    *out = NULL;
    if (cs_lines_open_file(path, &src))
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    /* the size bounds what placement may allocate; a file that is not a
     * regular one (a pipe) is read without */
    rc = read_lines(src, path,
                    stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1, 0,
                    out, err);
    cs_lines_free(src);
    return rc;
}

int cs_goal_read_string(const char *text, const char *name, cs_program_t **out, cs_error_t *err)
{
    size_t n = strlen(text);
    cs_lines_t *src = cs_lines_open_string(text, n);
    int rc = read_lines(src, name ? name : "<string>", (int64_t)n, 0, out, err);
    cs_lines_free(src);
    return rc;
}

/* ------------------------------------------------------------------------
 * Writer
 * ------------------------------------------------------------------------ */

static const char *name_key(const void *ctx, int32_t local)
{
    return ((const char *const *)ctx)[local];
}

/* calc time of an op in nanoseconds, or -1 if it cannot be written. */
static int64_t calc_ns(int64_t ticks, double unit)
{
    double x, rounded;
    if (ticks == 0)
        return 0;
    if (unit <= 0)
        return -1;
    if (unit == 1e-9)
        return ticks;
    x = (double)ticks * (unit / 1e-9);
    rounded = nearbyint(x);
    if (!(rounded >= 0 && rounded < 9.2e18) || fabs(x - rounded) > 1e-6 * fmax(1.0, x))
        return -1;
    return (int64_t)rounded;
}

/* The program's op order as `// collsim order:` lines, unless the ops are
 * already rank by rank (then file order is id order). */
static void write_order(const cs_program_t *p, FILE *f)
{
    int32_t n = cs_program_nops(p), i = 0;
    size_t width = 0;
    int sorted = 1;
    for (int32_t k = 1; k < n && sorted; k++)
        sorted = cs_program_op(p, k)->rank >= cs_program_op(p, k - 1)->rank;
    if (sorted)
        return;
    while (i < n) {
        /* a run of one rank, then as many runs of the same length as
         * follow on the next ranks up (or down) */
        int32_t first = cs_program_op(p, i)->rank, last = first, len = 0, j;
        int step = 0;
        char run[48];
        while (i + len < n && cs_program_op(p, i + len)->rank == first)
            len++;
        for (j = i + len; j + len <= n; j += len) {
            int32_t rk = cs_program_op(p, j)->rank, k = 1;
            int s = rk == last + 1 ? 1 : rk == last - 1 ? -1 : 0;
            if (!s || (step && s != step))
                break;
            while (k < len && cs_program_op(p, j + k)->rank == rk)
                k++;
            if (k < len || (j + len < n && cs_program_op(p, j + len)->rank == rk))
                break;
            step = s;
            last = rk;
        }
        if (last == first)
            snprintf(run, sizeof run, " %d:%d", first, len);
        else
            snprintf(run, sizeof run, " %d-%d:%d", first, last, len);
        if (width && width + strlen(run) > 100) {
            fputc('\n', f);
            width = 0;
        }
        if (!width)
            width = (size_t)fprintf(f, "%s", ORDER_PREFIX);
        width += (size_t)fprintf(f, "%s", run);
        i = j;
    }
    fputc('\n', f);
}

static int write_program(const cs_program_t *p, FILE *f, cs_error_t *err)
{
    int nr = cs_program_nranks(p);
    int32_t n = cs_program_nops(p);
    double unit = cs_program_time_unit(p);
    int32_t *start, *order, *local;
    const char **names;
    char *owned;
    label_table_t t = {0};

    /* Refuse before writing anything: calc times that GOAL cannot say. */
    for (int32_t i = 0; i < n; i++) {
        const cs_op_t *op = cs_program_op(p, i);
        if (op->kind == CS_OP_CALC && calc_ns(op->ticks, unit) < 0)
            return cs_error_set(err, CS_ERR_RANGE,
                                "op %d (rank %d): calc time %lld in units of %g s %s; GOAL "
                                "calc times are whole nanoseconds",
                                i, op->rank, (long long)op->ticks, unit,
                                unit <= 0 ? "(machine ticks) cannot be converted without a "
                                            "machine clock"
                                          : "is not a whole number of nanoseconds");
    }

    /* Ops by rank, in id order within a rank (a stable counting sort). */
    start = cs_calloc((size_t)nr + 1, sizeof *start);
    order = cs_malloc(((size_t)n + 1) * sizeof *order);
    local = cs_malloc(((size_t)n + 1) * sizeof *local);
    for (int32_t i = 0; i < n; i++)
        start[cs_program_op(p, i)->rank + 1]++;
    for (int k = 0; k < nr; k++)
        start[k + 1] += start[k];
    {
        int32_t *fill = cs_malloc(((size_t)nr + 1) * sizeof *fill);
        memcpy(fill, start, ((size_t)nr + 1) * sizeof *fill);
        for (int32_t i = 0; i < n; i++) {
            int rk = cs_program_op(p, i)->rank;
            local[i] = fill[rk] - start[rk];
            order[fill[rk]++] = i;
        }
        free(fill);
    }
    names = cs_calloc((size_t)n + 1, sizeof *names);
    owned = cs_calloc((size_t)n + 1, 1);
    t.key = name_key;

    fprintf(f, "num_ranks %d\n", nr);
    write_order(p, f);
    for (int rk = 0; rk < nr; rk++) {
        int32_t first = start[rk], cnt = start[rk + 1] - first;
        /* names[] is indexed by position in the rank: the key callback
         * sees this rank's slice. */
        const char **rn = names + first;
        t.ctx = rn;

        /* Own labels first, so generated ones can steer clear of them. */
        for (int32_t i = 0; i < cnt; i++) {
            const char *lab = cs_program_label(p, order[first + i]);
            size_t ln = lab ? strlen(lab) : 0;
            if (lab && valid_label(lab, ln) && lt_find(&t, lab, ln, hash_label(lab, ln)) < 0) {
                rn[i] = lab;
                lt_insert(&t, hash_label(lab, ln), i);
            }
        }
        for (int32_t i = 0; i < cnt; i++) {
            int32_t id = order[first + i];
            int np, ns;
            char gen[48];
            size_t gl;
            if (rn[i])
                continue;
            cs_program_preds(p, id, &np);
            cs_program_succs(p, id, &ns);
            if (!np && !ns)
                continue;
            gl = (size_t)snprintf(gen, sizeof gen, "o%d", id);
            for (int k = 2; lt_find(&t, gen, gl, hash_label(gen, gl)) >= 0; k++)
                gl = (size_t)snprintf(gen, sizeof gen, "o%d_%d", id, k);
            rn[i] = cs_strdup(gen);
            owned[first + i] = 1;
            lt_insert(&t, hash_label(gen, gl), i);
        }

        fprintf(f, "\nrank %d {\n", rk);
        for (int32_t i = 0; i < cnt; i++) {
            int32_t id = order[first + i];
            const cs_op_t *op = cs_program_op(p, id);
            if (rn[i])
                fprintf(f, "%s: ", rn[i]);
            switch (op->kind) {
            case CS_OP_SEND:
                fprintf(f, "send %lldb to %d tag %d\n", (long long)op->bytes, op->peer, op->tag);
                break;
            case CS_OP_RECV:
                fprintf(f, "recv %lldb from %d tag %d\n", (long long)op->bytes,
                        op->peer == CS_ANY ? -1 : op->peer, op->tag == CS_ANY ? -1 : op->tag);
                break;
            case CS_OP_MCAST: {
                const int32_t *d = cs_program_mcast_peers(p, op);
                fprintf(f, "mcast %lldb to ", (long long)op->bytes);
                for (int32_t k = 0; k < cs_program_npeers(p, op); k++)
                    fprintf(f, "%s%d", k ? "," : "", d[k]);
                fprintf(f, " tag %d\n", op->tag);
                break;
            }
            default:
                if (op->bytes == 0) {
                    fprintf(f, "calc %lld\n", (long long)calc_ns(op->ticks, unit));
                } else {
                    fprintf(f, "reduce %lldb", (long long)op->bytes);
                    if (op->ticks)
                        fprintf(f, " calc %lld", (long long)calc_ns(op->ticks, unit));
                    fputc('\n', f);
                }
                break;
            }
        }
        for (int32_t i = 0; i < cnt; i++) {
            int32_t id = order[first + i];
            int np;
            const cs_dep_t *d = cs_program_preds(p, id, &np);
            for (int k = 0; k < np; k++)
                fprintf(f, "%s %s %s\n", rn[i], dep_word(cs_dep_kind(d[k])),
                        names[first + local[cs_dep_op(d[k])]]);
        }
        fprintf(f, "}\n");
        lt_clear(&t);
    }

    for (int32_t i = 0; i < n; i++)
        if (owned[i])
            free((char *)names[i]);
    free(names);
    free(owned);
    free(start);
    free(order);
    free(local);
    lt_free(&t);
    if (fflush(f) != 0 || ferror(f))
        return cs_error_set(err, CS_ERR_IO, "cannot write the GOAL program: %s", strerror(errno));
    return CS_OK;
}

/* GOAL has no join: a join written as `calc 0` would run through the
 * rank's CPU when read back, at another time; the program it stands for
 * (its edges expanded, core/program.h) is what the file says. */
int cs_goal_write(const cs_program_t *p, FILE *f, cs_error_t *err)
{
    cs_program_t *direct;
    int rc = cs_program_without_joins(p, &direct, err);
    if (rc == CS_OK)
        rc = write_program(direct ? direct : p, f, err);
    cs_program_free(direct);
    return rc;
}
