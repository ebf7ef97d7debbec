/*
 * ti.c - reading SimGrid time-independent traces into programs (ti.h,
 * docs/replay.md; the action set of SimGrid's smpi_replay.cpp).
 *
 * Lines come from core/lines.h (a mapped file read in place) and are copied
 * into one buffer to be split in place; the first pass over a combined
 * file, which needs only each line's rank, reads it in place and checks
 * the bytes of every line for both passes.  One pass over the text builds the
 * trace's own ops, rank by rank in trace
 * order, chained by dependencies (AFTER behind a blocking action,
 * AFTER_START behind an isend / irecv).  A collective call only leaves a
 * record and a placeholder op (`join`, a calc of the call's local work)
 * that the rank's next action follows.  At the end the reader pairs every
 * send with its recv (to report unmatched or oversized messages with both
 * lines), checks that the ranks' collective calls agree, and has
 * io/tracecoll.h build each call with the chosen algorithm and splice its
 * ops in: the call's first ops on a rank follow what preceded the call
 * there, and the rank's join follows its last ones.
 */
#include "io/ti.h"
#include "core/lines.h"
#include "io/tracecoll.h"

#include "core/checked.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#define TI_ANY_ARGS INT_MAX
#define NONE (-1)

/* ---- per rank state ------------------------------------------------------ */

typedef struct ti_req {   /* an outstanding isend / irecv */
    int32_t op;
    int32_t src, dst, tag;
} ti_req_t;

typedef struct ti_call {  /* a collective call of one rank */
    int64_t bytes;
    int32_t root;         /* -1: unrooted */
    int32_t line;
    int32_t pred;         /* the op the call's first ops follow, or NONE */
    int32_t join;         /* completes the call on this rank */
    uint8_t kind, pred_kind;
} ti_call_t;

typedef struct ti_rank {
    int32_t last;
    uint8_t last_kind;
    int64_t dtsize;       /* default datatype: byte, or double after `init 1` */
    int tested;           /* a `test` was seen: a wait may find nothing */
    ti_req_t *req;
    int32_t nreq, cap_req;
    int32_t *waited;      /* ops the next op must follow (completed by a wait) */
    int32_t nwaited, cap_waited;
    ti_call_t *calls;
    int32_t ncalls, cap_calls;
} ti_rank_t;

typedef struct ti_reader {
    const cs_ti_opts_t *o;
    cs_error_t *err;
    cs_program_t *p;
    int P;
    ti_rank_t *ranks;
    cs_ti_info_t info;
    /* the current file and line */
    const char *file;
    char **files;         /* index mode: one path per rank (owned) */
    int index_mode;
    int file_rank;        /* index mode: the rank whose file is read, else -1 */
    long line;
    char **tok; /* the current line's words (owned array) */
    int32_t ntok, cap_tok;
    char *text; /* the current line, NUL-terminated, split in place by tokenize */
    size_t cap_text;
    cs_lines_t *src;      /* the file being parsed (parse_lines) */
    /* The forms the current file's lines are written in (SimGrid's older
     * untagged form or the current one): the first line of each that tells
     * (0: none), for the lines that could be either.  Parsing notes the
     * lines it has read; the rest of the file is scanned only when a line
     * that could be either is met before both forms were seen (forms_known
     * 0 until then), so that a file without such a line costs nothing. */
    long old_line, cur_line;
    int forms_known;
    /* every line of the current file passed check_bytes already (the
     * second pass over a combined file) */
    int checked;
} ti_reader_t;

static const char *rank_file(const ti_reader_t *r, int rank)
{
    return r->index_mode ? r->files[rank] : r->file;
}

static int fail(ti_reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ti_reader_t *r, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX - 200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(r->err, CS_ERR_PARSE, "%s:%ld: %s", r->file, r->line, msg);
}

static void *grow(void *v, int32_t *cap, int32_t n, size_t size)
{
    if (n < *cap)
        return v;
    *cap = *cap ? 2 * *cap : 8;
    return cs_realloc(v, (size_t)*cap * size);
}

/* ---- lines and tokens ------------------------------------------------------ */

/* Text only: NUL and control bytes say the file is binary. */
static int check_bytes(ti_reader_t *r, const char *s, size_t n)
{
    if (!cs_lines_maybe_control(s, n))
        return CS_OK;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0)
            return fail(r, "found a NUL byte at column %zu; expected text (is this a binary "
                           "file?)", i + 1);
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
            return fail(r, "found the control byte 0x%02x at column %zu; expected text (is "
                           "this a binary file?)", c, i + 1);
    }
    return CS_OK;
}

/* The bytes that end a word: NUL, space, tab, '\n', '\r'. */
static int ends_word(char c)
{
    return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Splits the line in place into at most max_tok words (the rest of the
 * line is left as it is); 0 tokens for a blank or comment line. */
/* always inlined: it is the inner loop of both passes over a file */
static inline __attribute__((always_inline)) int tokenize(ti_reader_t *r, char *s,
                                                          int32_t max_tok)
{
    r->ntok = 0;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '#')
        return CS_OK;
    while (*s && *s != '\n' && *s != '\r' && r->ntok < max_tok) {
        if (r->ntok == r->cap_tok)
            r->tok = grow(r->tok, &r->cap_tok, r->ntok, sizeof *r->tok);
        r->tok[r->ntok++] = s;
        while (!ends_word(*s))
            s++;
        if (*s) {
            char c = *s;
            *s++ = '\0';
            if (c == '\n' || c == '\r')
                break;
        }
        while (*s == ' ' || *s == '\t')
            s++;
    }
    return CS_OK;
}

/* The next line of src, checked and split into r->tok (at most max_tok
 * words): *more = 1, or 0 at the end.  The line is copied into r->text (lines of a mapped file cannot
 * be written), which keeps the in-place tokenizer: one memcpy of a few
 * dozen bytes, no allocation once the buffer fits the longest line. */
static int next_line(ti_reader_t *r, cs_lines_t *src, int32_t max_tok, int *more)
{
    cs_line_t ln;
    int got = cs_lines_next(src, &ln);
    *more = got > 0;
    if (got < 0)
        return cs_lines_error(got, r->file, r->line, r->err);
    if (got == 0)
        return CS_OK;
    r->line++;
    if (ln.len + 2 > r->cap_text) {
        r->cap_text = ln.len + 256;
        free(r->text);
        r->text = cs_malloc(r->cap_text);
    }
    memcpy(r->text, ln.s, ln.len);
    r->text[ln.len] = ln.nl ? '\n' : '\0';
    r->text[ln.len + 1] = '\0';
    int rc = r->checked ? CS_OK : check_bytes(r, r->text, ln.len);
    return rc ? rc : tokenize(r, r->text, max_tok);
}

/* parse_u63 on the n bytes at t (the first pass reads lines in place). */
static int parse_u63_n(const char *t, size_t n, int64_t *v)
{
    int64_t x = 0;
    *v = 0;
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        int d = t[i] - '0';
        if (d < 0 || d > 9 || (i >= 18 && x > (INT64_MAX - d) / 10))
            return 0;
        x = x * 10 + d;
    }
    *v = x;
    return 1;
}

static int parse_u63(const char *t, int64_t *v)
{
    int64_t x = 0;
    *v = 0;
    if (!*t)
        return 0;
    for (const char *c = t; *c; c++) {
        if (*c < '0' || *c > '9')
            return 0;
        if (c - t >= 18 && x > (INT64_MAX - (*c - '0')) / 10) /* 18 digits always fit */
            return 0;
        x = x * 10 + (*c - '0');
    }
    *v = x;
    return 1;
}

/* A count of elements (or bytes): a non-negative whole number.  SimGrid
 * reads counts as decimals (smpi_replay.cpp's parse_integer: strtod, then
 * trunc), and its own example traces write them so (`send 1 0 1e6`), so a
 * decimal or exponent form of a whole number is taken too; a fraction is
 * refused rather than cut as SimGrid does (no tracer writes one: it would
 * be a corrupt trace).  Whole numbers up to 2^53, where a double is still
 * exact. */
static int get_count(ti_reader_t *r, const char *what, const char *t, int64_t *v)
{
    if (parse_u63(t, v))
        return CS_OK;
    if (t[0] == '-')
        return fail(r, "%s '%s' is negative; expected a count >= 0", what, t);
    char *end;
    errno = 0;
    double x = strtod(t, &end);
    /* plain decimal notation only: no hexadecimal, inf or nan */
    if (end != t && !*end && errno != ERANGE && isfinite(x) && x >= 0 &&
        isdigit((unsigned char)t[0]) && !t[strspn(t, "0123456789.eE+-")]) {
        if (x != floor(x))
            return fail(r, "%s '%s' is not a whole number; expected a count of elements", what,
                        t);
        if (x > 9007199254740992.0)
            return fail(r, "%s '%s' is too large; expected at most 2^53 written as a decimal",
                        what, t);
        *v = (int64_t)x;
        return CS_OK;
    }
    return fail(r, "%s '%s' is not a count; expected a non-negative integer", what, t);
}

static int get_rank(ti_reader_t *r, const char *what, const char *t, int32_t *v)
{
    int64_t x;
    if (!parse_u63(t, &x))
        return fail(r, "%s '%s' is not a rank; expected an integer in 0..%d", what, t,
                    r->P - 1);
    if (x >= r->P)
        return fail(r, "%s %s is out of range; expected a rank in 0..%d (the trace has %d "
                       "ranks)", what, t, r->P - 1, r->P);
    *v = (int32_t)x;
    return CS_OK;
}

static int get_tag(ti_reader_t *r, const char *t, int32_t *v)
{
    int64_t x;
    if (!parse_u63(t, &x))
        return fail(r, "tag '%s' is not a tag; expected an integer in 0..%d", t, CS_TI_MAX_TAG);
    if (x > CS_TI_MAX_TAG)
        return fail(r, "tag %s is too large; expected at most %d (larger tags are reserved for "
                       "collectives)", t, CS_TI_MAX_TAG);
    *v = (int32_t)x;
    return CS_OK;
}

/* flops or seconds: a finite non-negative decimal number. */
static int get_real(ti_reader_t *r, const char *what, const char *t, double *v)
{
    char *end;
    int64_t n;
    /* Whole numbers below 2^53 are what strtod would give, exactly, and
     * are most of what traces hold; strtod takes the rest. */
    if (parse_u63(t, &n) && n < (INT64_C(1) << 53)) {
        *v = (double)n;
        return CS_OK;
    }
    errno = 0;
    double x = strtod(t, &end);
    if (end == t || *end || errno == ERANGE || !isfinite(x))
        return fail(r, "%s '%s' is not a number; expected a non-negative decimal", what, t);
    if (x < 0)
        return fail(r, "%s '%s' is negative; expected a number >= 0", what, t);
    *v = x;
    return CS_OK;
}

/* SimGrid's datatype ids: 0 double, 1 int, 2 char, 3 short, 4 long, 5 float,
 * 6 byte, 7 long long. */
static int get_dt(ti_reader_t *r, const char *t, int64_t *size)
{
    static const int64_t sizes[] = {8, 4, 1, 2, 8, 4, 1, 8};
    int64_t x;
    if (!parse_u63(t, &x) || x > 7)
        return fail(r, "datatype '%s' is not one of 0 (double), 1 (int), 2 (char), 3 (short), "
                       "4 (long), 5 (float), 6 (byte), 7 (long long)", t);
    *size = sizes[x];
    return CS_OK;
}

static int to_bytes(ti_reader_t *r, int64_t count, int64_t dt, int64_t *bytes)
{
    if (count > INT64_MAX / 8 / dt)
        return fail(r, "count %lld of %lld-byte elements is too large", (long long)count,
                    (long long)dt);
    *bytes = count * dt;
    return CS_OK;
}

/* ---- building ops ---------------------------------------------------------- */

static void push_waited(ti_rank_t *k, int32_t op)
{
    k->waited = grow(k->waited, &k->cap_waited, k->nwaited, sizeof *k->waited);
    k->waited[k->nwaited++] = op;
}

/* A new op of `rank` in trace order: it follows the previous action and
 * what was waited for since.  blocking: the next action follows its end. */
static int emit(ti_reader_t *r, int rank, int32_t op, int blocking)
{
    ti_rank_t *k = &r->ranks[rank];
    if (op < 0) {
        cs_error_t e;
        cs_program_finalize(r->p, &e); /* reports the builder's recorded error */
        return fail(r, "%s", e.msg);
    }
    cs_program_set_origin(r->p, op, (int)(r->line > INT_MAX ? INT_MAX : r->line), NULL);
    if (k->last >= 0)
        cs_program_dep(r->p, op, k->last, (cs_dep_kind_t)k->last_kind);
    for (int32_t i = 0; i < k->nwaited; i++)
        cs_program_dep(r->p, op, k->waited[i], CS_DEP_AFTER);
    k->nwaited = 0;
    k->last = op;
    k->last_kind = blocking ? CS_DEP_AFTER : CS_DEP_AFTER_START;
    return CS_OK;
}

/* A compute's duration in ns, refused beyond the clock's maximum
 * (core/checked.h) rather than silently cut to a smaller time. */
static int compute_ns(ti_reader_t *r, const char *what, const char *text, double ns, int64_t *out)
{
    *out = cs_tick_from_double(ns);
    if (*out == CS_TICK_OVER)
        return fail(r, "%s '%s' lasts %.4g ns, beyond the maximum of %lld ns (2^62, the "
                    "clock's maximum; docs/limits.md)", what, text, ns, (long long)CS_TICK_LIMIT);
    return CS_OK;
}

/* ---- actions --------------------------------------------------------------- */

typedef struct ti_action {
    const char *name;
    int min, max; /* arguments after the action name */
    const char *usage;
    int (*fn)(ti_reader_t *r, int rank, char **arg, int nargs, int which);
    int which;
} ti_action_t;

static int act_init(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    (void)arg;
    (void)which;
    r->ranks[rank].dtsize = n > 0 ? 8 : 1; /* `init 1`: MPE traces count doubles */
    return CS_OK;
}

static int act_nothing(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    (void)r, (void)rank, (void)arg, (void)n, (void)which;
    return CS_OK;
}

static int act_compute(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    double x = 0;
    int rc;
    (void)n;
    if ((rc = get_real(r, which ? "duration" : "flops", arg[0], &x)))
        return rc;
    int64_t ns;
    if ((rc = compute_ns(r, which ? "duration" : "flops", arg[0],
                         which ? x * 1e9 : x / r->o->flops_per_second * 1e9, &ns)))
        return rc;
    return emit(r, rank, cs_program_calc(r->p, rank, ns, 0), 1);
}

enum { P2P_SEND, P2P_ISEND, P2P_RECV, P2P_IRECV };

/* ---- the two forms of point-to-point lines ----------------------------------
 *
 * SimGrid's replay read `send DST COUNT [dt]` (and isend, recv, irecv) with
 * tag 0 for every message, and a bare `wait` / `test` on the rank's most
 * recent request, up to release 3.19 (smpi_replay.cpp before commit
 * b55fc9b8 of March 2018 added the tag, and 90c0a75f of June 2018 the
 * wait's `SRC DST TAG`).  A line tells its form by its arity - two
 * arguments or none are the older form, four or three (a wait) the current
 * one - except `send A B C`: the older form with a datatype or the current
 * one without.  Such a line is read the way its values allow (C beyond a
 * datatype id 0..7 is a count, B that is no tag is a count), and when both
 * readings fit, in the form of the file's other lines (the current one in a
 * file with none). */
enum { FORM_NONE, FORM_OLD, FORM_CUR, FORM_EITHER };

/* 1: send, isend, recv or irecv; 2: wait or test; 0: another action.  The
 * first letter picks the one or two names to compare (every line of a
 * combined file's first pass comes here). */
static int name_is(const char *w, const char *name) /* name: lower-case letters */
{
    int i = 0;
    for (; name[i]; i++)
        if ((w[i] | 0x20) != name[i]) /* | 0x20 lower-cases a letter, keeps no other one */
            return 0;
    return w[i] == '\0';
}

static int p2p_or_wait(const char *w)
{
    switch (w[0] | 0x20) {
    case 's': return name_is(w, "send");
    case 'r': return name_is(w, "recv");
    case 'i': return name_is(w, "isend") || name_is(w, "irecv");
    case 'w': return name_is(w, "wait") ? 2 : 0;
    case 't': return name_is(w, "test") ? 2 : 0;
    default: return 0;
    }
}

/* The form of `send a0 a1 a2`: whether a2 can be a datatype id and a1 a
 * tag. */
static int p2p3_form(const char *a1, const char *a2)
{
    int64_t x;
    if (!parse_u63(a2, &x) || x > 7)
        return FORM_CUR;
    if (!parse_u63(a1, &x) || x > CS_TI_MAX_TAG)
        return FORM_OLD;
    return FORM_EITHER;
}

/* Records the current line as the file's first of form f (FORM_OLD or
 * FORM_CUR) unless one was seen. */
static inline void saw_form(ti_reader_t *r, int f)
{
    long *first = f == FORM_OLD ? &r->old_line : &r->cur_line;
    if (!*first)
        *first = r->line;
}

/* The form a line tells, read in place (s[0 .. n), split into words as
 * tokenize splits it, without copying it): FORM_NONE for another action or
 * an arity of neither form, which parsing reports.  Only the first six
 * words are looked at (enough for the arities that tell a form), and the
 * rest of the line only when the second word has the length and the first
 * letter of send, recv, isend, irecv, wait or test; the two values of
 * `send A B C` are copied into buf (n + 2 bytes) to be parsed. */
static int line_form(const char *s, size_t n, char *buf)
{
    const char *e = s + n, *w[6];
    size_t len[6];
    int k = 0;
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    if (s < e && *s == '#')
        return FORM_NONE;
    while (k < 6 && s < e && *s != '\r') {
        w[k] = s;
        /* the bytes up to ' ' that end a word (ends_word) are the only ones
         * a checked line holds (check_bytes) */
        while (s < e && (unsigned char)*s > ' ')
            s++;
        len[k] = (size_t)(s - w[k]);
        if (++k == 2) {
            if (len[1] != 4 && len[1] != 5)
                return FORM_NONE;
            switch (*w[1] | 0x20) {
            case 's': case 'r': case 'i': case 'w': case 't': break;
            default: return FORM_NONE;
            }
        }
        if (s < e && *s++ == '\r')
            break;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
    }
    if (k < 2)
        return FORM_NONE;
    char name[6];
    for (size_t i = 0; i < len[1]; i++)
        name[i] = w[1][i];
    name[len[1]] = '\0';
    int nargs = k - 2, kind = p2p_or_wait(name);
    if (kind == 2)
        return nargs == 0 ? FORM_OLD : nargs == 3 ? FORM_CUR : FORM_NONE;
    if (kind != 1 || nargs < 2)
        return FORM_NONE;
    if (nargs != 3)
        return nargs == 2 ? FORM_OLD : FORM_CUR;
    memcpy(buf, w[3], len[3]);
    buf[len[3]] = '\0';
    memcpy(buf + len[3] + 1, w[4], len[4]);
    buf[len[3] + 1 + len[4]] = '\0';
    return p2p3_form(buf, buf + len[3] + 1);
}

/* The forms of the rest of the file, for a line that could be either met
 * before the file's lines had shown both: the lines after the current one
 * are read from r->src in place (the current line's words stay in r) until
 * both forms are found or the file ends, each checked for bytes as parsing
 * checks it; then r->src is rewound and the lines up to the current one
 * are skipped unread, so that parsing goes on where it was.  At most once
 * per file (forms_known); a file without such a line is never read
 * again. */
static int scan_forms(ti_reader_t *r)
{
    ti_reader_t s;
    cs_line_t ln;
    int rc = CS_OK, got;
    memset(&s, 0, sizeof s);
    s.err = r->err;
    s.file = r->file;
    s.line = r->line;
    s.old_line = r->old_line;
    s.cur_line = r->cur_line;
    while ((got = cs_lines_next(r->src, &ln)) > 0) {
        s.line++;
        /* a combined file's lines were all checked by its first pass */
        if ((r->index_mode && (rc = check_bytes(&s, ln.s, ln.len))) ||
            (s.old_line && s.cur_line))
            break;
        if (ln.len + 2 > s.cap_text) {
            s.cap_text = ln.len + 256;
            free(s.text);
            s.text = cs_malloc(s.cap_text);
        }
        int f = line_form(ln.s, ln.len, s.text);
        if (f == FORM_OLD || f == FORM_CUR)
            saw_form(&s, f);
    }
    if (got < 0)
        rc = cs_lines_error(got, s.file, s.line, s.err);
    free(s.text);
    if (rc)
        return rc;
    r->old_line = s.old_line;
    r->cur_line = s.cur_line;
    r->forms_known = 1;
    if (cs_lines_rewind(r->src) != CS_OK)
        return cs_error_set(r->err, CS_ERR_IO, "%s: cannot rewind: %s", r->file, strerror(errno));
    for (long i = 0; i < r->line; i++) {
        got = cs_lines_next(r->src, &ln);
        if (got < 0)
            return cs_lines_error(got, r->file, i, r->err);
        if (got == 0)
            return cs_error_set(r->err, CS_ERR_IO, "%s: ended after line %ld when read again, "
                                "before line %ld (did it change while it was read?)", r->file,
                                i, r->line);
    }
    return CS_OK;
}

/* The form of a p2p line that could be either (its file's, from the lines
 * seen or else scanned for), or the error when the file has both. */
static int either_form(ti_reader_t *r, char **arg, int *f)
{
    int rc;
    if (!r->forms_known && !(r->old_line && r->cur_line) && (rc = scan_forms(r)))
        return rc;
    if (r->old_line && r->cur_line)
        return fail(r, "`%s %s %s %s` reads as SimGrid's older form (`%s <peer> <count> "
                       "<datatype>`) or as the current one (`%s <peer> <tag> <count>`), and "
                       "this file has lines of both (older at line %ld, current at line %ld); "
                       "expected the current form `%s <peer> <tag> <count> <datatype>`",
                    r->tok[1], arg[0], arg[1], arg[2], r->tok[1], r->tok[1], r->old_line,
                    r->cur_line, r->tok[1]);
    *f = r->old_line ? FORM_OLD : FORM_CUR;
    return CS_OK;
}

static void push_req(ti_rank_t *k, int32_t op, int src, int dst, int tag)
{
    k->req = grow(k->req, &k->cap_req, k->nreq, sizeof *k->req);
    k->req[k->nreq++] = (ti_req_t){op, src, dst, tag};
}

static int act_p2p(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    int send = which == P2P_SEND || which == P2P_ISEND;
    int block = which == P2P_SEND || which == P2P_RECV;
    int32_t peer = 0, tag = 0;
    int64_t count = 0, dt = r->ranks[rank].dtsize, bytes = 0;
    int rc, f = n == 2 ? FORM_OLD : FORM_CUR, counted = 0;
    /* Three arguments: the last one is parsed once, as the count it is in
     * the current form; only a datatype id (0..7) there needs a closer
     * look.  Every line that tells its form is noted, so that a line that
     * could be either rarely has to scan the rest of the file. */
    if (n == 3 && (counted = parse_u63(arg[2], &count)) && count <= 7)
        f = p2p3_form(arg[1], arg[2]);
    if (f == FORM_EITHER) {
        if ((rc = either_form(r, arg, &f)))
            return rc;
    } else
        saw_form(r, f);
    /* the older form: no tag (SimGrid sent and received every message
     * with tag 0, so they match in order per source and destination) */
    int old = f == FORM_OLD, c = old ? 1 : 2;
    if ((rc = get_rank(r, send ? "destination rank" : "source rank", arg[0], &peer)) ||
        (!old && (rc = get_tag(r, arg[1], &tag))) ||
        (!(counted && !old) && (rc = get_count(r, "count", arg[c], &count))) ||
        (n > c + 1 && (rc = get_dt(r, arg[c + 1], &dt))) || (rc = to_bytes(r, count, dt, &bytes)))
        return rc;
    int32_t op = send ? cs_program_send(r->p, rank, peer, bytes, tag)
                      : cs_program_recv(r->p, rank, peer, bytes, tag);
    if ((rc = emit(r, rank, op, block)))
        return rc;
    if (!block)
        push_req(&r->ranks[rank], op, send ? rank : peer, send ? peer : rank, tag);
    return CS_OK;
}

static int act_wait(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    ti_rank_t *k = &r->ranks[rank];
    int32_t src = 0, dst = 0, tag = 0;
    int rc;
    if (n != 0 && n != 3)
        return fail(r, "%s takes 3 arguments (`%s <src> <dst> <tag>`) or none (SimGrid's older "
                       "`%s`), got %d", which ? "test" : "wait", which ? "test" : "wait",
                    which ? "test" : "wait", n);
    saw_form(r, n == 0 ? FORM_OLD : FORM_CUR);
    if (n == 0 && which) /* the older test: as the current one, a later wait decides */
        return k->tested = 1, CS_OK;
    if (n == 0) {
        /* The older bare wait completes the rank's MOST RECENT outstanding
         * request: SimGrid popped the back of the rank's request list
         * (smpi_replay.c of 3.10, xbt_dynar_pop_as; smpi_replay.cpp of
         * 3.17, get_reqq_self()->back()), and its own example agrees
         * (actions1.txt's `Isend`, `Irecv`, `wait` became `wait 0 1 2`,
         * the irecv, when tags came). */
        if (!k->nreq)
            return fail(r, "wait on rank %d without an outstanding isend or irecv; SimGrid's "
                           "older bare `wait` completes the rank's most recent one", rank);
        push_waited(k, k->req[--k->nreq].op);
        return CS_OK;
    }
    if ((rc = get_rank(r, "source rank", arg[0], &src)) ||
        (rc = get_rank(r, "destination rank", arg[1], &dst)) || (rc = get_tag(r, arg[2], &tag)))
        return rc;
    if (which) /* test: whether it succeeded is not in the trace; a later wait decides */
        return k->tested = 1, CS_OK;
    for (int32_t i = 0; i < k->nreq; i++) {
        if (k->req[i].src != src || k->req[i].dst != dst || k->req[i].tag != tag)
            continue;
        push_waited(k, k->req[i].op);
        memmove(k->req + i, k->req + i + 1, (size_t)(k->nreq - i - 1) * sizeof *k->req);
        k->nreq--;
        return CS_OK;
    }
    if (k->tested) /* as SimGrid: a test may have completed it */
        return CS_OK;
    if (src != rank && dst != rank)
        return fail(r, "wait %d %d %d on rank %d names neither it as source nor as "
                       "destination; expected `wait <src> <dst> <tag>` of one of its own "
                       "isend / irecv", src, dst, tag, rank);
    return fail(r, "wait %d %d %d: rank %d has no outstanding %s with %s %d and tag %d",
                src, dst, tag, rank, src == rank ? "isend" : "irecv",
                src == rank ? "destination" : "source", src == rank ? dst : src, tag);
}

static int act_waitall(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    ti_rank_t *k = &r->ranks[rank];
    (void)arg, (void)n, (void)which;
    for (int32_t i = 0; i < k->nreq; i++)
        push_waited(k, k->req[i].op);
    k->nreq = 0;
    return CS_OK;
}

/* sendRecv <sendcount> <dst> <recvcount> <src> [dt1 dt2]: both at once,
 * tag 0, then wait for both. */
static int act_sendrecv(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    ti_rank_t *k = &r->ranks[rank];
    int32_t dst = 0, src = 0;
    int64_t sc = 0, rcnt = 0, dt1 = k->dtsize, dt2 = k->dtsize, sb = 0, rb = 0;
    int rc;
    (void)which;
    if ((rc = get_count(r, "send count", arg[0], &sc)) ||
        (rc = get_rank(r, "destination rank", arg[1], &dst)) ||
        (rc = get_count(r, "receive count", arg[2], &rcnt)) ||
        (rc = get_rank(r, "source rank", arg[3], &src)) ||
        (n > 4 && (rc = get_dt(r, arg[4], &dt1))) || (n > 5 && (rc = get_dt(r, arg[5], &dt2))) ||
        (rc = to_bytes(r, sc, dt1, &sb)) || (rc = to_bytes(r, rcnt, dt2, &rb)))
        return rc;
    int32_t s = cs_program_send(r->p, rank, dst, sb, 0);
    if ((rc = emit(r, rank, s, 0)))
        return rc;
    int32_t v = cs_program_recv(r->p, rank, src, rb, 0);
    if ((rc = emit(r, rank, v, 0)))
        return rc;
    push_waited(k, s);
    push_waited(k, v);
    return CS_OK;
}

/* A collective call: a record, and the join op the rank's next action
 * follows (a calc of the call's flops, if any). */
static int add_call(ti_reader_t *r, int rank, cs_coll_kind_t kind, int64_t bytes, int32_t root,
                    double flops)
{
    ti_rank_t *k = &r->ranks[rank];
    int32_t pred = k->last;
    uint8_t pred_kind = k->last_kind;
    int64_t ns;
    char text[32];
    snprintf(text, sizeof text, "%.17g", flops);
    int rc = compute_ns(r, "flops", text, flops / r->o->flops_per_second * 1e9, &ns);
    if (rc)
        return rc;
    if (k->nwaited) {
        /* several predecessors: one zero-time op gathers them */
        int32_t j = cs_program_calc(r->p, rank, 0, 0);
        rc = emit(r, rank, j, 1);
        if (rc)
            return rc;
        pred = j;
        pred_kind = CS_DEP_AFTER;
    }
    int32_t join = cs_program_calc(r->p, rank, ns, 0);
    if (join < 0)
        return emit(r, rank, join, 1);
    cs_program_set_origin(r->p, join, (int)(r->line > INT_MAX ? INT_MAX : r->line), NULL);
    k->last = join;
    k->last_kind = CS_DEP_AFTER;
    k->calls = grow(k->calls, &k->cap_calls, k->ncalls, sizeof *k->calls);
    k->calls[k->ncalls++] = (ti_call_t){bytes, root, (int32_t)(r->line > INT_MAX ? INT_MAX : r->line),
                                        pred, join, (uint8_t)kind, pred_kind};
    if (rank == 0)
        r->info.calls[kind]++;
    return CS_OK;
}

static int get_root(ti_reader_t *r, char **arg, int n, int at, int32_t *root)
{
    *root = 0;
    return n > at ? get_rank(r, "root", arg[at], root) : CS_OK;
}

/* bcast <count> [root dt] */
static int act_bcast(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    int64_t count = 0, dt = r->ranks[rank].dtsize, bytes = 0;
    int32_t root = 0;
    int rc;
    (void)which;
    if ((rc = get_count(r, "count", arg[0], &count)) || (rc = get_root(r, arg, n, 1, &root)) ||
        (n > 2 && (rc = get_dt(r, arg[2], &dt))) || (rc = to_bytes(r, count, dt, &bytes)))
        return rc;
    return add_call(r, rank, CS_COLL_BROADCAST, bytes, root, 0);
}

/* reduce <count> <flops> [root dt]; allreduce <count> <flops> [dt] */
static int act_reduce(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    int64_t count = 0, dt = r->ranks[rank].dtsize, bytes = 0;
    int32_t root = -1;
    double flops = 0;
    int rc, at = which == CS_COLL_REDUCE ? 3 : 2;
    if ((rc = get_count(r, "count", arg[0], &count)) || (rc = get_real(r, "flops", arg[1], &flops)) ||
        (which == CS_COLL_REDUCE && (rc = get_root(r, arg, n, 2, &root))) ||
        (n > at && (rc = get_dt(r, arg[at], &dt))) || (rc = to_bytes(r, count, dt, &bytes)))
        return rc;
    return add_call(r, rank, (cs_coll_kind_t)which, bytes, root, flops);
}

/* alltoall, allgather: <sendcount> <recvcount> [dt1 dt2];
 * gather, scatter: <sendcount> <recvcount> [root dt1 dt2].  The block is
 * what every rank sends (gather, allgather, alltoall) or receives
 * (scatter): the counts that are significant on every rank. */
static int act_blocks(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    int64_t sc = 0, rcnt = 0, dt1 = r->ranks[rank].dtsize, dt2 = dt1, bytes = 0;
    int32_t root = -1;
    int rc, rooted = which == CS_COLL_GATHER || which == CS_COLL_SCATTER, at = rooted ? 3 : 2;
    if ((rc = get_count(r, "send count", arg[0], &sc)) ||
        (rc = get_count(r, "receive count", arg[1], &rcnt)) ||
        (rooted && (rc = get_root(r, arg, n, 2, &root))) ||
        (n > at && (rc = get_dt(r, arg[at], &dt1))) ||
        (n > at + 1 && (rc = get_dt(r, arg[at + 1], &dt2))))
        return rc;
    if (which == CS_COLL_SCATTER)
        rc = to_bytes(r, rcnt, dt2, &bytes);
    else
        rc = to_bytes(r, sc, dt1, &bytes);
    if (rc)
        return rc;
    return add_call(r, rank, (cs_coll_kind_t)which, bytes, root, 0);
}

static int act_barrier(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    (void)arg, (void)n, (void)which;
    return add_call(r, rank, CS_COLL_BARRIER, 0, -1, 0);
}

/* reducescatter <recvcount x P> <flops> [dt]: equal blocks only */
static int act_reducescatter(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    int64_t count = 0, c = 0, dt = r->ranks[rank].dtsize, bytes = 0;
    double flops = 0;
    int rc;
    (void)which;
    if (n != r->P + 1 && n != r->P + 2)
        return fail(r, "reducescatter needs %d receive counts (one per rank), the flops and an "
                       "optional datatype; got %d arguments", r->P, n);
    for (int i = 0; i < r->P; i++) {
        if ((rc = get_count(r, "receive count", arg[i], &c)))
            return rc;
        if (i && c != count)
            return fail(r, "reducescatter with unequal receive counts (%lld for rank 0, %lld for "
                           "rank %d): the suite's reduce-scatter algorithms take equal blocks",
                        (long long)count, (long long)c, i);
        count = c;
    }
    if ((rc = get_real(r, "flops", arg[r->P], &flops)) ||
        (n > r->P + 1 && (rc = get_dt(r, arg[r->P + 1], &dt))) ||
        (rc = to_bytes(r, count, dt, &bytes)))
        return rc;
    return add_call(r, rank, CS_COLL_REDUCE_SCATTER, bytes, -1, flops);
}

static int act_unsupported(ti_reader_t *r, int rank, char **arg, int n, int which)
{
    (void)rank, (void)arg, (void)n, (void)which;
    return fail(r, "action '%s' is not supported: the collective suite has no algorithm for "
                   "it (vector and prefix collectives); see docs/replay.md", r->tok[1]);
}

static const ti_action_t actions[] = {
    {"init", 0, 1, "init [1]", act_init, 0},
    {"finalize", 0, 0, "finalize", act_nothing, 0},
    {"comm_size", 0, 1, "comm_size <n>", act_nothing, 0},
    {"comm_split", 0, 2, "comm_split", act_nothing, 0},
    {"comm_dup", 0, 0, "comm_dup", act_nothing, 0},
    {"location", 2, 2, "location <file> <line>", act_nothing, 0},
    {"compute", 1, 1, "compute <flops>", act_compute, 0},
    {"sleep", 1, 1, "sleep <seconds>", act_compute, 1},
    {"send", 2, 4, "send <dst> <tag> <count> [datatype]` or SimGrid's older `send <dst> <count> [datatype]", act_p2p, P2P_SEND},
    {"isend", 2, 4, "isend <dst> <tag> <count> [datatype]` or SimGrid's older `isend <dst> <count> [datatype]", act_p2p, P2P_ISEND},
    {"recv", 2, 4, "recv <src> <tag> <count> [datatype]` or SimGrid's older `recv <src> <count> [datatype]", act_p2p, P2P_RECV},
    {"irecv", 2, 4, "irecv <src> <tag> <count> [datatype]` or SimGrid's older `irecv <src> <count> [datatype]", act_p2p, P2P_IRECV},
    {"wait", 0, 3, "wait <src> <dst> <tag>", act_wait, 0},
    {"test", 0, 3, "test <src> <dst> <tag>", act_wait, 1},
    {"waitall", 0, 0, "waitall", act_waitall, 0},
    {"sendrecv", 4, 6, "sendRecv <sendcount> <dst> <recvcount> <src> [dt1 dt2]", act_sendrecv, 0},
    {"barrier", 0, 0, "barrier", act_barrier, 0},
    {"bcast", 1, 3, "bcast <count> [root datatype]", act_bcast, 0},
    {"reduce", 2, 4, "reduce <count> <flops> [root datatype]", act_reduce, CS_COLL_REDUCE},
    {"allreduce", 2, 3, "allreduce <count> <flops> [datatype]", act_reduce, CS_COLL_ALLREDUCE},
    {"alltoall", 2, 4, "alltoall <sendcount> <recvcount> [dt1 dt2]", act_blocks, CS_COLL_ALLTOALL},
    {"allgather", 2, 4, "allgather <sendcount> <recvcount> [dt1 dt2]", act_blocks,
     CS_COLL_ALLGATHER},
    {"gather", 2, 5, "gather <sendcount> <recvcount> [root dt1 dt2]", act_blocks, CS_COLL_GATHER},
    {"scatter", 2, 5, "scatter <sendcount> <recvcount> [root dt1 dt2]", act_blocks,
     CS_COLL_SCATTER},
    {"reducescatter", 2, TI_ANY_ARGS, "reducescatter <recvcount x P> <flops> [datatype]",
     act_reducescatter, 0},
    {"gatherv", 0, TI_ANY_ARGS, "", act_unsupported, 0},
    {"scatterv", 0, TI_ANY_ARGS, "", act_unsupported, 0},
    {"allgatherv", 0, TI_ANY_ARGS, "", act_unsupported, 0},
    {"alltoallv", 0, TI_ANY_ARGS, "", act_unsupported, 0},
    {"scan", 0, TI_ANY_ARGS, "", act_unsupported, 0},
    {"exscan", 0, TI_ANY_ARGS, "", act_unsupported, 0},
};
#define TI_NACTIONS ((int)(sizeof actions / sizeof actions[0]))

/* strcmp(a, b) == 0 for the few bytes of an action's name, inline: the
 * library call was a fifteenth of reading a trace. */
static inline int same_word(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* One action line (tokens already split). */
static int parse_action(ti_reader_t *r)
{
    int64_t rank;
    int rc;
    if (!parse_u63(r->tok[0], &rank))
        return fail(r, "'%s' is not a rank; expected `<rank> <action> <args...>`", r->tok[0]);
    if (r->file_rank >= 0 && rank != r->file_rank)
        return fail(r, "rank %s in the trace file of rank %d; expected every line to start "
                       "with %d", r->tok[0], r->file_rank, r->file_rank);
    if (rank >= r->P)
        return fail(r, "rank %s is out of range; expected a rank in 0..%d (the trace has %d "
                       "ranks)", r->tok[0], r->P - 1, r->P);
    if (r->ntok < 2)
        return fail(r, "rank %s without an action; expected `<rank> <action> <args...>`",
                    r->tok[0]);
    const ti_action_t *a = NULL;
    /* Names are matched without regard to case; every name is lower case,
     * and so is nearly every trace: an exact match is tried first, its
     * first byte ruling out most names. */
    const char *w = r->tok[1];
    for (int i = 0; i < TI_NACTIONS && !a; i++)
        if (actions[i].name[0] == w[0] && same_word(actions[i].name, w))
            a = &actions[i];
    for (int i = 0; i < TI_NACTIONS && !a; i++)
        if (strcasecmp(actions[i].name, w) == 0)
            a = &actions[i];
    if (!a) {
        char valid[600] = "";
        for (int i = 0; i < TI_NACTIONS; i++)
            if (actions[i].fn != act_unsupported)
                snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "",
                         actions[i].name);
        return fail(r, "unknown action '%s'; valid actions: %s", r->tok[1], valid);
    }
    int nargs = r->ntok - 2;
    if (nargs < a->min || nargs > a->max) {
        if (a->min == a->max)
            return fail(r, "%s takes %d argument%s (`%s`), got %d", a->name, a->min,
                        a->min == 1 ? "" : "s", a->usage, nargs);
        return fail(r, "%s takes %d to %d arguments (`%s`), got %d", a->name, a->min, a->max,
                    a->usage, nargs);
    }
    if ((rc = a->fn(r, (int)rank, r->tok + 2, nargs, a->which)))
        return rc;
    r->info.actions++;
    return CS_OK;
}

/* ---- the end: pairing, collectives ----------------------------------------- */

typedef struct pkey {
    int32_t src, dst, tag;
    int32_t head, tail;   /* unpaired ops of one side, linked through next[] */
    uint8_t side;         /* 1: sends wait, 2: recvs wait */
    uint8_t used;
} pkey_t;

static uint64_t pkey_hash(int32_t s, int32_t d, int32_t t)
{
    uint64_t h = (uint64_t)(uint32_t)s * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)(uint32_t)d * 0xc2b2ae3d27d4eb4fULL;
    h ^= (uint64_t)(uint32_t)t * 0x165667b19e3779f9ULL;
    return h ^ (h >> 29);
}

static int op_fail(ti_reader_t *r, int32_t op, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int op_fail(ti_reader_t *r, int32_t op, const char *fmt, ...)
{
    char msg[CS_ERROR_MSG_MAX - 200];
    const cs_op_t *o = cs_program_op(r->p, op);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_error_set(r->err, CS_ERR_PARSE, "%s:%d: %s", rank_file(r, o->rank),
                        cs_program_line(r->p, op), msg);
}

/* Every send of the trace meets its recv per (src, dst, tag), in order (no
 * wildcards in TI), and fits it. */
static int pair_messages(ti_reader_t *r, int32_t nops)
{
    /* open addressing, grown to keep the load at most 1/2 */
    size_t cap = 1024, nkeys = 0;
    pkey_t *keys = cs_calloc(cap, sizeof *keys);
    int32_t *next = cs_malloc(((size_t)nops + 1) * sizeof *next);
    int rc = CS_OK;
    for (int32_t i = 0; i < nops && !rc; i++) {
        const cs_op_t *o = cs_program_op(r->p, i);
        if (o->kind != CS_OP_SEND && o->kind != CS_OP_RECV)
            continue;
        int32_t s = o->kind == CS_OP_SEND ? o->rank : o->peer;
        int32_t d = o->kind == CS_OP_SEND ? o->peer : o->rank;
        uint8_t side = o->kind == CS_OP_SEND ? 1 : 2;
        if (2 * (nkeys + 1) > cap) {
            size_t ncap = 2 * cap;
            pkey_t *nk = cs_calloc(ncap, sizeof *nk);
            for (size_t j = 0; j < cap; j++) {
                if (!keys[j].used)
                    continue;
                size_t h = pkey_hash(keys[j].src, keys[j].dst, keys[j].tag) & (ncap - 1);
                while (nk[h].used)
                    h = (h + 1) & (ncap - 1);
                nk[h] = keys[j];
            }
            free(keys);
            keys = nk;
            cap = ncap;
        }
        size_t h = pkey_hash(s, d, o->tag) & (cap - 1);
        while (keys[h].used && !(keys[h].src == s && keys[h].dst == d && keys[h].tag == o->tag))
            h = (h + 1) & (cap - 1);
        pkey_t *k = &keys[h];
        if (!k->used) {
            *k = (pkey_t){s, d, o->tag, NONE, NONE, 0, 1};
            nkeys++;
        }
        next[i] = NONE;
        if (k->head != NONE && k->side != side) {
            int32_t other = k->head;
            k->head = next[other];
            if (k->head == NONE)
                k->tail = NONE;
            int32_t snd = side == 1 ? i : other, rcv = side == 1 ? other : i;
            const cs_op_t *so = cs_program_op(r->p, snd), *ro = cs_program_op(r->p, rcv);
            if (so->bytes > ro->bytes)
                rc = op_fail(r, rcv, "rank %d: recv of %lld bytes from rank %d (tag %d) is "
                                     "smaller than the %lld-byte message it takes (%s:%d)",
                             ro->rank, (long long)ro->bytes, so->rank, so->tag,
                             (long long)so->bytes, rank_file(r, so->rank),
                             cs_program_line(r->p, snd));
            continue;
        }
        k->side = side;
        if (k->tail == NONE)
            k->head = i;
        else
            next[k->tail] = i;
        k->tail = i;
    }
    /* the first op (in op order) left without a partner */
    int32_t first = NONE;
    for (size_t j = 0; j < cap && !rc; j++)
        if (keys[j].used && keys[j].head != NONE && (first == NONE || keys[j].head < first))
            first = keys[j].head;
    if (!rc && first != NONE) {
        const cs_op_t *o = cs_program_op(r->p, first);
        if (o->kind == CS_OP_RECV)
            rc = op_fail(r, first, "rank %d: recv from rank %d (tag %d, %lld bytes) has no "
                                   "matching send; expected a send from rank %d to rank %d with "
                                   "tag %d",
                         o->rank, o->peer, o->tag, (long long)o->bytes, o->peer, o->rank,
                         o->tag);
        else
            rc = op_fail(r, first, "rank %d: send to rank %d (tag %d, %lld bytes) is never "
                                   "received; expected a recv from rank %d on rank %d with tag "
                                   "%d",
                         o->rank, o->peer, o->tag, (long long)o->bytes, o->rank, o->peer,
                         o->tag);
    }
    free(keys);
    free(next);
    return rc;
}

static const char *ti_call_name(char *buf, size_t n, const ti_call_t *c)
{
    return cs_tracecoll_name(buf, n, (cs_coll_kind_t)c->kind, c->bytes, c->root);
}

static int expand_collectives(ti_reader_t *r)
{
    int P = r->P, rc = CS_OK;
    const cs_coll_hints_t *hints = NULL;
    int32_t most = 0, who = 0;
    for (int rk = 0; rk < P; rk++)
        if (r->ranks[rk].ncalls > most) {
            most = r->ranks[rk].ncalls;
            who = rk;
        }
    /* every rank makes the same calls in the same order */
    for (int32_t k = 0; k < most; k++) {
        const ti_call_t *ref = &r->ranks[who].calls[k];
        for (int rk = 0; rk < P; rk++) {
            char a[128], b[128];
            if (k >= r->ranks[rk].ncalls) {
                r->line = ref->line;
                return cs_error_set(r->err, CS_ERR_PARSE,
                                    "%s:%d: rank %d's collective call #%d (%s) is never matched "
                                    "on rank %d, which makes only %d collective call%s; expected "
                                    "every rank to make the same collective calls in the same "
                                    "order", rank_file(r, who), ref->line, who, k + 1,
                                    ti_call_name(a, sizeof a, ref), rk, r->ranks[rk].ncalls,
                                    r->ranks[rk].ncalls == 1 ? "" : "s");
            }
            const ti_call_t *c = &r->ranks[rk].calls[k];
            if (c->kind != ref->kind || c->bytes != ref->bytes || c->root != ref->root)
                return cs_error_set(r->err, CS_ERR_PARSE,
                                    "%s:%d: rank %d's collective call #%d is %s but rank %d's "
                                    "(%s:%d) is %s; expected every rank to make the same "
                                    "collective calls in the same order",
                                    rank_file(r, rk), c->line, rk, k + 1,
                                    ti_call_name(a, sizeof a, c), who, rank_file(r, who), ref->line,
                                    ti_call_name(b, sizeof b, ref));
        }
    }
    if (!most)
        return CS_OK;
    if (r->o->prepare && (rc = r->o->prepare(r->o->prepare_ctx, P, &hints, r->err)))
        return rc;
    cs_tracecoll_opts_t to = {r->o->algo, r->o->algo_opts, r->o->unit, CS_TI_COLL_TAG_BASE,
                              CS_TI_MAX_TAG};
    cs_tracecoll_t *tc = cs_tracecoll_new(&to);
    int32_t *pred = cs_malloc((size_t)P * sizeof *pred), *join = cs_malloc((size_t)P * sizeof *join);
    int32_t *line = cs_malloc((size_t)P * sizeof *line);
    uint8_t *pred_kind = cs_malloc((size_t)P);
    for (int32_t k = 0; k < most && !rc; k++) {
        const ti_call_t *c0 = &r->ranks[0].calls[k];
        char where[CS_ERROR_MSG_MAX / 2];
        snprintf(where, sizeof where, "%s:%d", rank_file(r, 0), c0->line);
        for (int rk = 0; rk < P; rk++) {
            const ti_call_t *c = &r->ranks[rk].calls[k];
            pred[rk] = c->pred;
            pred_kind[rk] = c->pred_kind;
            join[rk] = c->join;
            line[rk] = c->line;
        }
        cs_tracecoll_call_t call = {(cs_coll_kind_t)c0->kind, c0->bytes, c0->root, P, NULL,
                                    pred, pred_kind, join, line, where};
        int64_t n = 0;
        rc = cs_tracecoll_splice(tc, r->p, &call, hints, &n, r->err);
        r->info.coll_ops += n;
    }
    cs_tracecoll_free(tc);
    free(pred);
    free(join);
    free(line);
    free(pred_kind);
    return rc;
}

/* ---- driver ---------------------------------------------------------------- */

static void reader_free(ti_reader_t *r)
{
    free(r->tok);
    r->tok = NULL;
    free(r->text);
    r->text = NULL;
    if (r->ranks)
        for (int i = 0; i < r->P; i++) {
            free(r->ranks[i].req);
            free(r->ranks[i].waited);
            free(r->ranks[i].calls);
        }
    free(r->ranks);
    if (r->files)
        for (int i = 0; i < r->P; i++)
            free(r->files[i]);
    free(r->files);
}

/* The rank count against the machine (opts.max_ranks), before setup_ranks
 * allocates per rank. */
static int check_ranks(const ti_reader_t *r, int P)
{
    if (r->o->max_ranks > 0 && P > r->o->max_ranks)
        return cs_error_set(r->err, CS_ERR_RANGE, "%s: the trace has %d ranks but the machine "
                            "has only %d nodes; choose a machine with at least %d nodes",
                            r->file, P, r->o->max_ranks, P);
    return CS_OK;
}

static int setup_ranks(ti_reader_t *r, int P)
{
    r->P = P;
    r->p = cs_program_new(P);
    r->ranks = cs_calloc((size_t)P, sizeof *r->ranks);
    for (int i = 0; i < P; i++) {
        r->ranks[i].last = NONE;
        r->ranks[i].dtsize = 1;
    }
    return CS_OK;
}

/* Parses every line of src (a combined file or one rank's file). */
static int parse_lines(ti_reader_t *r, cs_lines_t *src)
{
    int rc, more;
    r->line = 0;
    r->src = src;
    while (!(rc = next_line(r, src, INT32_MAX, &more)) && more)
        if (r->ntok && (rc = parse_action(r)))
            break;
    return rc;
}

/* First pass over a combined file: the largest rank (the trace has ranks
 * 0..max).  Also finds binary files and lines without a rank. */
static int count_ranks(ti_reader_t *r, cs_lines_t *src, int *P)
{
    int64_t most = -1;
    int rc = CS_OK, got;
    cs_line_t ln;
    r->line = 0;
    /* Only the first word of each line is needed: it is found in place
     * (the words tokenize would split, without its copy), after the same
     * byte check as next_line's; the second pass then skips that check. */
    while ((got = cs_lines_next(src, &ln)) > 0) {
        const char *s = ln.s, *e = ln.s + ln.len, *t;
        r->line++;
        if ((rc = check_bytes(r, s, ln.len)))
            break;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        if (s == e || *s == '#' || *s == '\r')
            continue;
        for (t = s; s < e && *s != ' ' && *s != '\t' && *s != '\r'; s++)
            ;
        int64_t rank;
        int n = (int)(s - t); /* a line is at most CS_LINES_MAX bytes */
        if (!parse_u63_n(t, (size_t)n, &rank)) {
            rc = fail(r, "'%.*s' is not a rank; expected `<rank> <action> <args...>`", n, t);
            break;
        }
        if (rank >= (1 << 26)) {
            rc = fail(r, "rank %.*s is too large; at most %d ranks", n, t, 1 << 26);
            break;
        }
        if (rank > most)
            most = rank;
    }
    if (!rc && got < 0)
        rc = cs_lines_error(got, r->file, r->line, r->err);
    if (!rc && most < 0)
        rc = cs_error_set(r->err, CS_ERR_PARSE,
                          "%s: %s; expected lines `<rank> <action> <args...>`", r->file,
                          r->line ? "no action in the file (only blank lines and comments)"
                                  : "empty file");
    *P = (int)(most + 1);
    return rc;
}

static int finish(ti_reader_t *r, cs_program_t **out, cs_ti_info_t *info, const char *source)
{
    int rc;
    int32_t nops = cs_program_nops(r->p);
    if ((rc = pair_messages(r, nops)) || (rc = expand_collectives(r)))
        return rc;
    cs_program_set_source(r->p, source);
    cs_program_set_time_unit(r->p, 1e-9);
    if ((rc = cs_program_finalize(r->p, r->err)))
        return rc;
    *out = r->p;
    r->p = NULL;
    if (info)
        *info = r->info;
    return CS_OK;
}

void cs_ti_opts_default(cs_ti_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->flops_per_second = 1e9;
    o->unit = 4096;
}

/* A combined trace from src, which must be able to rewind (a first pass
 * counts the ranks). */
static int read_combined(cs_lines_t *src, const char *name, const cs_ti_opts_t *o,
                         cs_program_t **out, cs_ti_info_t *info, cs_error_t *err)
{
    ti_reader_t r;
    int P = 0, rc;
    *out = NULL;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.err = err;
    r.file = name ? name : "<stream>";
    r.file_rank = -1;
    r.info.files = 1;
    if (!(o->flops_per_second > 0))
        return cs_error_set(err, CS_ERR_RANGE, "flops per second must be > 0, got %g",
                            o->flops_per_second);
    rc = count_ranks(&r, src, &P);
    if (!rc)
        rc = check_ranks(&r, P);
    if (!rc && cs_lines_rewind(src) != CS_OK)
        rc = cs_error_set(err, CS_ERR_IO, "%s: cannot rewind: %s", r.file, strerror(errno));
    if (!rc) {
        setup_ranks(&r, P);
        r.checked = 1;
        rc = parse_lines(&r, src);
    }
    if (!rc)
        rc = finish(&r, out, info, r.file);
    cs_program_free(r.p);
    reader_free(&r);
    return rc;
}

int cs_ti_read_stream(FILE *f, const char *name, const cs_ti_opts_t *o, cs_program_t **out,
                      cs_ti_info_t *info, cs_error_t *err)
{
    *out = NULL;
    long start = ftell(f);
    if (start < 0 || fseek(f, start, SEEK_SET) != 0)
        return cs_error_set(err, CS_ERR_IO,
                            "%s: a combined TI trace is read twice, so it must be a regular "
                            "file (not a pipe)", name ? name : "<stream>");
    cs_lines_t *src = cs_lines_open_stream(f);
    int rc = read_combined(src, name, o, out, info, err);
    cs_lines_free(src);
    return rc;
}

int cs_ti_read_string(const char *text, const char *name, const cs_ti_opts_t *o,
                      cs_program_t **out, cs_ti_info_t *info, cs_error_t *err)
{
    cs_lines_t *src = cs_lines_open_string(text, strlen(text));
    int rc = read_combined(src, name ? name : "<string>", o, out, info, err);
    cs_lines_free(src);
    return rc;
}

/* The first meaningful line of src: *line 0 if none, else its number;
 * tokens in r. */
static int first_line(ti_reader_t *r, cs_lines_t *src, long *line)
{
    int rc, more;
    r->line = 0;
    *line = 0;
    while (!(rc = next_line(r, src, INT32_MAX, &more)) && more)
        if (r->ntok) {
            *line = r->line;
            break;
        }
    return rc;
}

static int is_action_line(ti_reader_t *r)
{
    int64_t v;
    return r->ntok >= 2 && parse_u63(r->tok[0], &v) && isalpha((unsigned char)r->tok[1][0]);
}

/* Opens path into *src with r zeroed and its first meaningful line read
 * (tokens in r): the start both cs_ti_read_file and cs_ti_sniff share.  A
 * file with no such line is a parse error saying `blank` (lines but no
 * meaningful one) or "empty file", then what was `expected`.  Returns
 * CS_ERR_IO with *src NULL when the file cannot be opened; otherwise *src
 * is open whatever the result (the caller frees it). */
static int open_first(ti_reader_t *r, const char *path, const char *blank, const char *expected,
                      cs_lines_t **src, cs_error_t *err)
{
    long line;
    int rc;
    memset(r, 0, sizeof *r);
    r->err = err;
    r->file = path;
    r->file_rank = -1;
    if (cs_lines_open_file(path, src) != CS_OK)
        return cs_error_set(err, CS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    rc = first_line(r, *src, &line);
    if (!rc && !line)
        rc = cs_error_set(err, CS_ERR_PARSE, "%s: %s; expected %s", path,
                          r->line ? blank : "empty file", expected);
    return rc;
}

/* An index entry relative to the index file's directory. */
static char *join_path(const char *index, const char *entry)
{
    const char *slash = strrchr(index, '/');
    if (entry[0] == '/' || !slash)
        return cs_strdup(entry);
    size_t d = (size_t)(slash - index) + 1, n = d + strlen(entry) + 1;
    char *p = cs_malloc(n);
    memcpy(p, index, d);
    strcpy(p + d, entry);
    return p;
}

static int read_index(ti_reader_t *r, cs_lines_t *idx, cs_program_t **out, cs_ti_info_t *info)
{
    int rc, more, n = 0, capf = 0;
    const char *index = r->file;
    if (cs_lines_rewind(idx) != CS_OK)
        return cs_error_set(r->err, CS_ERR_IO, "%s: cannot rewind: %s", index, strerror(errno));
    r->line = 0;
    while (!(rc = next_line(r, idx, INT32_MAX, &more)) && more) {
        if (!r->ntok)
            continue;
        if (r->ntok > 1) {
            rc = fail(r, "'%s %s': expected one trace file path per line in an index", r->tok[0],
                      r->tok[1]);
            break;
        }
        if (n == capf) {
            capf = capf ? 2 * capf : 16;
            r->files = cs_realloc(r->files, (size_t)capf * sizeof *r->files);
        }
        r->files[n++] = join_path(index, r->tok[0]);
        r->P = n; /* for reader_free */
    }
    if (!rc)
        rc = check_ranks(r, n);
    if (rc)
        return rc;
    r->P = 0;
    setup_ranks(r, n);
    r->index_mode = 1;
    r->info.files = n;
    for (int i = 0; i < n && !rc; i++) {
        cs_lines_t *g;
        if (cs_lines_open_file(r->files[i], &g) != CS_OK)
            return cs_error_set(r->err, CS_ERR_IO, "%s: cannot open the trace of rank %d "
                                                   "(listed in %s): %s",
                                r->files[i], i, index, strerror(errno));
        r->file = r->files[i];
        r->file_rank = i;
        r->old_line = r->cur_line = 0;
        r->forms_known = 0;
        rc = parse_lines(r, g);
        cs_lines_free(g);
    }
    r->file = index;
    r->file_rank = -1;
    if (!rc)
        rc = finish(r, out, info, index);
    return rc;
}

int cs_ti_read_file(const char *path, const cs_ti_opts_t *o, cs_program_t **out,
                    cs_ti_info_t *info, cs_error_t *err)
{
    ti_reader_t r;
    cs_lines_t *src = NULL;
    *out = NULL;
    int rc = open_first(&r, path, "no action in the file (only blank lines and comments)",
                        "lines `<rank> <action> <args...>` or an index of trace files", &src,
                        err);
    if (!src)
        return rc;
    r.o = o;
    if (!rc && is_action_line(&r)) {
        reader_free(&r);
        if (cs_lines_rewind(src) != CS_OK)
            rc = cs_error_set(err, CS_ERR_IO, "%s: cannot rewind: %s", path, strerror(errno));
        else
            rc = read_combined(src, path, o, out, info, err);
        cs_lines_free(src);
        return rc;
    }
    if (!rc) {
        if (!(o->flops_per_second > 0))
            rc = cs_error_set(err, CS_ERR_RANGE, "flops per second must be > 0, got %g",
                              o->flops_per_second);
        else
            rc = read_index(&r, src, out, info);
    }
    cs_lines_free(src);
    cs_program_free(r.p);
    reader_free(&r);
    return rc;
}

int cs_ti_sniff(const char *path, int *is_ti, cs_error_t *err)
{
    ti_reader_t r;
    cs_lines_t *src = NULL;
    *is_ti = 0;
    int rc = open_first(&r, path, "only blank lines and comments",
                        "a GOAL schedule (`num_ranks N`) or a TI trace (`<rank> <action> ...`)",
                        &src, err);
    if (!src)
        return rc;
    if (!rc) {
        struct stat st;
        if (is_action_line(&r))
            *is_ti = 1;
        else if (r.ntok == 1 && strcmp(r.tok[0], "num_ranks") != 0) {
            char *p = join_path(path, r.tok[0]);
            *is_ti = stat(p, &st) == 0 && S_ISREG(st.st_mode);
            free(p);
        }
    }
    reader_free(&r);
    cs_lines_free(src);
    return rc;
}
