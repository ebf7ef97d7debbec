/*
 * lines.c - lines of a mapped file, a string or a stream (lines.h).
 *
 * Trace files reach 10^9 bytes; getline() copied each line out of stdio's
 * buffer after read() had copied it into that buffer, and that copying was
 * a good part of reading.  Here a regular file is mapped and each line is
 * found with memchr and handed out where it lies.  Mapped pages count in
 * the resident size once touched, so every RELEASE_STEP bytes the pages
 * before the current line are dropped (MADV_DONTNEED: the mapping is
 * private and never written, so they come back from the page cache if a
 * second pass reads them).  Streams that cannot be mapped fall back to
 * chunked fread into one buffer.  Lines are at most CS_LINES_MAX bytes
 * (issue 19, D3: `--program /dev/zero` grew one endless line until the
 * address space ran out); the search for a line's end stops there too, so a
 * mapped file without newlines costs no more than one line's scan.
 */
#include "core/lines.h"
#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* How far reading moves on before the pages behind it are released: large
 * enough that madvise is rare, small enough to keep the resident size low. */
#define RELEASE_STEP ((size_t)16 << 20)
/* The stream buffer's first size (grows only for longer lines). */
#define CHUNK ((size_t)1 << 20)

typedef enum { SRC_MAP, SRC_STRING, SRC_STREAM } src_kind_t;

struct cs_lines {
    src_kind_t kind;
    const char *text; /* SRC_MAP, SRC_STRING: the whole text */
    size_t size, pos;
    size_t released;  /* SRC_MAP: bytes before this were given back */
    /* SRC_STREAM */
    FILE *f;
    int own_f;
    long start;       /* ftell at open, -1 if the stream cannot tell */
    char *buf;
    size_t cap, end, scanned;
    int eof;
};

static cs_lines_t *lines_new(src_kind_t kind)
{
    cs_lines_t *l = cs_calloc(1, sizeof *l);
    l->kind = kind;
    return l;
}

cs_lines_t *cs_lines_open_string(const char *text, size_t n)
{
    cs_lines_t *l = lines_new(SRC_STRING);
    l->text = text;
    l->size = n;
    return l;
}

cs_lines_t *cs_lines_open_stream(FILE *f)
{
    cs_lines_t *l = lines_new(SRC_STREAM);
    l->f = f;
    l->start = ftell(f);
    return l;
}

int cs_lines_open_file(const char *path, cs_lines_t **out)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *out = NULL;
    if (fd < 0)
        return CS_ERR_IO;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size <= SIZE_MAX) {
        size_t n = (size_t)st.st_size;
        if (n == 0) {
            close(fd);
            *out = cs_lines_open_string("", 0);
            return CS_OK;
        }
        void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            close(fd);
            (void)madvise(m, n, MADV_SEQUENTIAL); /* a hint: failure changes nothing */
            *out = lines_new(SRC_MAP);
            (*out)->text = m;
            (*out)->size = n;
            return CS_OK;
        }
    }
    /* not mappable (a FIFO, a device, a directory): read it as a stream,
     * which reports what reading it gives */
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
        return CS_ERR_IO;
    }
    *out = cs_lines_open_stream(f);
    (*out)->own_f = 1;
    return CS_OK;
}

/* SRC_MAP / SRC_STRING: the line at pos, in place. */
static int next_in_place(cs_lines_t *l, cs_line_t *line)
{
    if (l->pos >= l->size)
        return 0;
    const char *s = l->text + l->pos;
    size_t left = l->size - l->pos;
    const char *nl = memchr(s, '\n', left < CS_LINES_MAX + 1 ? left : CS_LINES_MAX + 1);
    if (!nl && left > CS_LINES_MAX)
        return CS_LINES_TOO_LONG;
    if (l->kind == SRC_MAP && l->pos - l->released >= RELEASE_STEP) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE), upto = l->pos & ~(page - 1);
        if (upto > l->released) {
            (void)madvise((char *)l->text + l->released, upto - l->released, MADV_DONTNEED);
            l->released = upto;
        }
    }
    line->s = s;
    line->nl = nl != NULL;
    line->len = nl ? (size_t)(nl - s) : l->size - l->pos;
    l->pos += line->len + (nl != NULL);
    return 1;
}

/* SRC_STREAM: the line at pos, refilling the buffer until it is whole. */
static int next_in_stream(cs_lines_t *l, cs_line_t *line)
{
    for (;;) {
        size_t from = l->scanned > l->pos ? l->scanned : l->pos;
        const char *nl = from < l->end ? memchr(l->buf + from, '\n', l->end - from) : NULL;
        if ((nl ? (size_t)(nl - (l->buf + l->pos)) : l->end - l->pos) > CS_LINES_MAX)
            return CS_LINES_TOO_LONG;
        if (nl || (l->eof && l->pos < l->end)) {
            line->s = l->buf + l->pos;
            line->nl = nl != NULL;
            line->len = nl ? (size_t)(nl - line->s) : l->end - l->pos;
            l->pos += line->len + (nl != NULL);
            return 1;
        }
        if (l->eof)
            return 0;
        l->scanned = l->end;
        if (l->pos > 0) { /* keep the partial line, drop what was handed out */
            memmove(l->buf, l->buf + l->pos, l->end - l->pos);
            l->end -= l->pos;
            l->scanned -= l->pos;
            l->pos = 0;
        }
        if (l->end == l->cap) {
            l->cap = l->cap ? 2 * l->cap : CHUNK;
            l->buf = cs_realloc(l->buf, l->cap);
        }
        size_t got = fread(l->buf + l->end, 1, l->cap - l->end, l->f);
        l->end += got;
        if (got == 0) {
            if (ferror(l->f))
                return -1;
            l->eof = 1;
        }
    }
}

int cs_lines_next(cs_lines_t *l, cs_line_t *line)
{
    return l->kind == SRC_STREAM ? next_in_stream(l, line) : next_in_place(l, line);
}

int cs_lines_next_copy(cs_lines_t *l, char **buf, size_t *cap)
{
    cs_line_t line;
    int got = cs_lines_next(l, &line);
    if (got <= 0)
        return got;
    if (memchr(line.s, '\0', line.len))
        return CS_LINES_NUL;
    if (!*buf || line.len >= *cap) {
        *cap = line.len + 256;
        free(*buf);
        *buf = cs_malloc(*cap);
    }
    memcpy(*buf, line.s, line.len);
    (*buf)[line.len] = '\0';
    return 1;
}

int cs_lines_error(int got, const char *name, long line, cs_error_t *err)
{
    if (got == CS_LINES_TOO_LONG)
        return cs_error_set(err, CS_ERR_PARSE, "%s:%ld: line longer than %zu bytes", name,
                            line + 1, CS_LINES_MAX);
    if (got == CS_LINES_NUL)
        return cs_error_set(err, CS_ERR_PARSE, "%s:%ld: a NUL byte in the line (a text file "
                            "has none: is it a binary file?)", name, line + 1);
    return cs_error_set(err, CS_ERR_IO, "%s: read error after line %ld: %s", name, line,
                        strerror(errno));
}

int cs_lines_rewind(cs_lines_t *l)
{
    if (l->kind != SRC_STREAM) {
        l->pos = l->released = 0;
        return CS_OK;
    }
    if (l->start < 0 || fseek(l->f, l->start, SEEK_SET) != 0) {
        if (l->start < 0)
            errno = ESPIPE;
        return CS_ERR_IO;
    }
    clearerr(l->f);
    l->pos = l->end = l->scanned = 0;
    l->eof = 0;
    return CS_OK;
}

/* The "has a byte less than n" and "has a zero byte" tricks (exact for the
 * question "any?"), on 64-bit words. */
int cs_lines_maybe_control(const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t acc = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, s + i, 8);
        y = x ^ (0x7f * ones);
        acc |= ((x - 0x20 * ones) & ~x & highs) | ((y - ones) & ~y & highs);
    }
    for (; i < n; i++)
        acc |= (unsigned char)s[i] < 0x20 || s[i] == 0x7f;
    return acc != 0;
}

void cs_lines_free(cs_lines_t *l)
{
    if (!l)
        return;
    if (l->kind == SRC_MAP)
        munmap((void *)l->text, l->size);
    if (l->own_f)
        fclose(l->f);
    free(l->buf);
    free(l);
}
