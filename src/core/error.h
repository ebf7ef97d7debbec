/*
 * error.h - the one error type of collsim.
 *
 * Every fallible function returns an int status (CS_OK or one of the codes
 * below) and, when given a non-NULL cs_error_t, writes a message that names
 * the offending input (file:line:col, spec key, values) and what would be
 * valid.  Only src/app/ turns an error into an exit status.
 */
#ifndef CS_ERROR_H
#define CS_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cs_status {
    CS_OK = 0,
    CS_ERR_USAGE = 1,    /* bad command line or spec string */
    CS_ERR_PARSE = 2,    /* malformed input file */
    CS_ERR_IO = 3,       /* cannot open / read / write a file */
    CS_ERR_NOMEM = 4,    /* allocation failed or a limit would be exceeded */
    CS_ERR_RANGE = 5,    /* a value outside what the model accepts */
    CS_ERR_DEADLOCK = 6, /* the program can never finish */
    CS_ERR_RUNTIME = 7,  /* the model detected an illegal situation while running */
    CS_ERR_VALIDATE = 8, /* --validate found a wrong final data placement */
    CS_ERR_INTERNAL = 9, /* an invariant of collsim itself was broken */
    CS_ERR_CANCELLED = 10, /* stopped on request (SIGINT/SIGTERM at the command line) */
    CS_ERR_OOM = 11       /* an allocation failed (the system is out of memory) */
} cs_status_t;

#define CS_ERROR_MSG_MAX 1024

typedef struct cs_error {
    int code;                   /* a cs_status_t */
    char msg[CS_ERROR_MSG_MAX]; /* human readable, no trailing newline */
} cs_error_t;

/* Sets err (if non-NULL) and returns code, so callers can write
 * `return cs_error_set(err, CS_ERR_PARSE, "%s:%d: ...", ...);`. */
int cs_error_set(cs_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cs_error_vset(cs_error_t *err, int code, const char *fmt, va_list ap);

/* Prepends "prefix: " to an existing message (for adding context). */
void cs_error_prefix(cs_error_t *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Short name of a status code ("parse error", "deadlock", ...). */
const char *cs_status_name(int code);
/* The status as one short word: ok, usage, parse, io, limit, range, deadlock,
 * runtime, validate, internal, cancelled, oom (the public library's
 * collsim_status_name and the JSON errors of `collsim serve`). */
const char *cs_status_key(int code);

/* Process exit status for a code: 0 ok, 2 usage/parse/range/io/limit, 3
 * deadlock, 4 validation failure, 5 runtime model error, 70 internal, 71 out
 * of memory (an allocation failed), 130
 * cancelled (the command line uses 128 + the signal's number instead). */
int cs_status_exit_code(int code);

/* Invariant checks that stay on in release builds (a simulator that silently
 * continues after a broken invariant produces wrong science). */
#define CS_ASSERT(cond)                                                      \
    do {                                                                     \
        if (!(cond))                                                         \
            cs_assert_fail(#cond, __FILE__, __LINE__);                       \
    } while (0)
void cs_assert_fail(const char *expr, const char *file, int line)
    __attribute__((noreturn));

/* Allocation that never returns NULL: collsim's out-of-memory policy is to
 * stop with a message, because no model state can be trusted after a failed
 * allocation halfway through an event.  Limits that a user can exceed
 * (ranks, machine size) are checked up front and returned as CS_ERR_NOMEM. */
void *cs_malloc(size_t n);
void *cs_calloc(size_t n, size_t size);
void *cs_realloc(void *p, size_t n);
char *cs_strdup(const char *s);
/* The same, naming the allocation's place (__FILE__:__LINE__) for
 * the out-of-memory message, which shows "exec.c:1200" (the file without
 * its directories: error.c says why); the macros make every call do so. */
void *cs_malloc_at(size_t n, const char *where);
void *cs_calloc_at(size_t n, size_t size, const char *where);
void *cs_realloc_at(void *p, size_t n, const char *where);
char *cs_strdup_at(const char *s, const char *where);
#define CS_STR2(x) #x
#define CS_STR(x) CS_STR2(x)
#define CS_HERE __FILE__ ":" CS_STR(__LINE__)
#define cs_malloc(n) cs_malloc_at((n), CS_HERE)
#define cs_calloc(n, size) cs_calloc_at((n), (size), CS_HERE)
#define cs_realloc(p, n) cs_realloc_at((p), (n), CS_HERE)
#define cs_strdup(s) cs_strdup_at((s), CS_HERE)

/* What a failed allocation does.  The library's default prints
 * "collsim: out of memory (N bytes for WHERE)" on stderr and aborts (no
 * model state can be trusted after it); a front end installs its own,
 * which must not return (the command line prints the same message and
 * exits with status 71, cs_status_exit_code(CS_ERR_OOM)).  One setting for
 * the process, made once at start-up before any allocation. */
typedef void (*cs_oom_handler_t)(size_t bytes, const char *where);
void cs_set_oom_handler(cs_oom_handler_t h);
/* Room for element n of a growing array of `size`-byte elements that holds
 * *cap: when n == *cap the capacity doubles (starting at `first`) and the
 * array moves; returns the array.  The engines and the checker each grew
 * their pools with their own copy of these lines. */
static inline void *cs_grow(void *arr, int32_t n, int32_t *cap, int32_t first, size_t size)
{
    /* inline: the check is on the engines' posting path */
    if (n < *cap)
        return arr;
    *cap = *cap ? 2 * *cap : first;
    return cs_realloc(arr, (size_t)*cap * size);
}

#endif
