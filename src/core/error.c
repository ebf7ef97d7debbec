/* error.c - messages, status names and the allocation policy (see error.h). */
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cs_error_vset(cs_error_t *err, int code, const char *fmt, va_list ap)
{
    if (err) {
        /* Format into a temporary first: callers may pass err->msg (or a
         * pointer into it) as an argument, and vsnprintf with overlapping
         * source and destination is undefined behaviour (issue 19, D1). */
        char tmp[CS_ERROR_MSG_MAX];
        vsnprintf(tmp, sizeof tmp, fmt, ap);
        err->code = code;
        memcpy(err->msg, tmp, sizeof err->msg);
    }
    return code;
}

int cs_error_set(cs_error_t *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void cs_error_prefix(cs_error_t *err, const char *fmt, ...)
{
    char head[CS_ERROR_MSG_MAX], old[CS_ERROR_MSG_MAX];
    va_list ap;
    if (!err)
        return;
    /* both parts are copied out before err->msg is written: the prefix's
     * arguments may point into err->msg */
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    /* truncation of an over-long message is acceptable: keep the head */
    size_t h = strlen(head);
    if (h > sizeof err->msg - 3)
        h = sizeof err->msg - 3;
    memcpy(err->msg, head, h);
    memcpy(err->msg + h, ": ", 2);
    size_t rest = sizeof err->msg - h - 3, o = strlen(old);
    if (o > rest)
        o = rest;
    memcpy(err->msg + h + 2, old, o);
    err->msg[h + 2 + o] = '\0';
}

const char *cs_status_key(int code)
{
    static const char *const names[] = {"ok", "usage", "parse", "io", "limit", "range",
                                        "deadlock", "runtime", "validate", "internal",
                                        "cancelled", "oom"};
    if (code < 0 || code >= (int)(sizeof names / sizeof names[0]))
        return "unknown";
    return names[code];
}

const char *cs_status_name(int code)
{
    switch (code) {
    case CS_OK: return "ok";
    case CS_ERR_USAGE: return "usage error";
    case CS_ERR_PARSE: return "parse error";
    case CS_ERR_IO: return "i/o error";
    case CS_ERR_NOMEM: return "out of memory";
    case CS_ERR_RANGE: return "value out of range";
    case CS_ERR_DEADLOCK: return "deadlock";
    case CS_ERR_RUNTIME: return "model error";
    case CS_ERR_VALIDATE: return "validation failed";
    case CS_ERR_CANCELLED: return "interrupted";
    case CS_ERR_OOM: return "out of memory";
    default: return "internal error";
    }
}

int cs_status_exit_code(int code)
{
    switch (code) {
    case CS_OK: return 0;
    case CS_ERR_USAGE: case CS_ERR_PARSE: case CS_ERR_IO: case CS_ERR_RANGE:
    case CS_ERR_NOMEM: return 2;
    case CS_ERR_DEADLOCK: return 3;
    case CS_ERR_VALIDATE: return 4;
    case CS_ERR_RUNTIME: return 5;
    case CS_ERR_CANCELLED: return 130;
    case CS_ERR_OOM: return 71; /* sysexits.h EX_OSERR */
    default: return 70;
    }
}

void cs_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "collsim: internal invariant broken: %s (%s:%d)\n", expr, file, line);
    abort();
}

static void oom_default(size_t bytes, const char *where)
{
    fprintf(stderr, "collsim: out of memory (%zu bytes for %s)\n", bytes, where);
    abort();
}

/* Set once at start-up by the front end (error.h), read only afterwards. */
static cs_oom_handler_t oom_handler = oom_default;

void cs_set_oom_handler(cs_oom_handler_t h) { oom_handler = h ? h : oom_default; }

/* The place as the message shows it: "exec.c:1200", the file without its
 * directories.  __FILE__ is the path meson gave the compiler, relative to
 * the build folder ("../src/engine/exec.c"): it depends on where collsim
 * was built, tells a user nothing and, in a message the service returns,
 * would show the server's build layout.  A bug report needs the file and
 * line only (file names repeat once, engine/ and machines/ net.c, which
 * the line and the command tell apart). */
static const char *short_where(const char *where)
{
    const char *slash = strrchr(where, '/');
    return slash ? slash + 1 : where;
}

static void *check(void *p, size_t n, const char *where)
{
    if (!p && n) {
        oom_handler(n, short_where(where));
        abort(); /* a handler that returned */
    }
    return p;
}

void *cs_malloc_at(size_t n, const char *where) { return check(malloc(n ? n : 1), n, where); }
void *cs_calloc_at(size_t n, size_t size, const char *where)
{
    /* n * size may wrap: report the true request, saturated */
    size_t bytes = size && n > SIZE_MAX / size ? SIZE_MAX : n * size;
    return check(calloc(n ? n : 1, size ? size : 1), bytes, where);
}
void *cs_realloc_at(void *p, size_t n, const char *where)
{
    return check(realloc(p, n ? n : 1), n, where);
}
char *cs_strdup_at(const char *s, const char *where)
{
    return check(strdup(s), strlen(s) + 1, where);
}

#undef cs_malloc
#undef cs_calloc
#undef cs_realloc
#undef cs_strdup
void *cs_malloc(size_t n) { return cs_malloc_at(n, "?"); }
void *cs_calloc(size_t n, size_t size) { return cs_calloc_at(n, size, "?"); }
void *cs_realloc(void *p, size_t n) { return cs_realloc_at(p, n, "?"); }
char *cs_strdup(const char *s) { return cs_strdup_at(s, "?"); }
