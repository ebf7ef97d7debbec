/*
 * rec.h - a point's record: the named fields one point of a sweep, a
 * comparison or a table of replays leaves for the process that writes the
 * outputs (par.h), in one byte form for the pipes of --jobs, the messages
 * of --mpi and the shard files of --shard (docs/cluster.md).
 *
 * The form is text, a field after another: "KEY LEN\n" then LEN bytes then
 * "\n", KEY of [a-z0-9_] (at most CS_REC_KEY_MAX characters).  Values are
 * bytes as given (a CSV row, a JSON fragment, another record), integers in
 * decimal, reals in C99 hexadecimal ("%a", so a real comes back to the
 * bit) or "nan".  Length-prefixed rather than escaped, so that any text
 * passes unchanged and a reader never scans a value for its end.  A key
 * may repeat (a shard's "arg" and "point" fields); lookups give the first.
 * A record holds its serialised bytes and nothing else: fields are found
 * by a scan, which is fine for the handful a point has.
 */
#ifndef CS_APP_REC_H
#define CS_APP_REC_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define CS_REC_KEY_MAX 32

typedef struct cs_rec cs_rec_t; /* opaque */

/* An empty record (never NULL: out of memory ends the process, as
 * cs_malloc). */
cs_rec_t *cs_rec_new(void);
/* Frees r; NULL is fine. */
void cs_rec_free(cs_rec_t *r);

/* Appends a field.  key must be of [a-z0-9_] (an invariant of the
 * callers, asserted). */
void cs_rec_put(cs_rec_t *r, const char *key, const char *val, size_t len);
void cs_rec_put_str(cs_rec_t *r, const char *key, const char *s); /* s NULL: "" */
void cs_rec_put_int(cs_rec_t *r, const char *key, int64_t v);
void cs_rec_put_real(cs_rec_t *r, const char *key, double v);

/* The first field named key: its bytes (not NUL-terminated inside a
 * record's buffer; *len their count), or NULL when there is none. */
const char *cs_rec_get(const cs_rec_t *r, const char *key, size_t *len);
/* The value as a NUL-terminated copy (the caller frees it), "" when absent. */
char *cs_rec_dup(const cs_rec_t *r, const char *key);
/* Copies the value into buf (len bytes, truncated, NUL-terminated). */
void cs_rec_copy(const cs_rec_t *r, const char *key, char *buf, size_t len);
/* The value as an integer or a real; dflt when absent or malformed. */
int64_t cs_rec_int(const cs_rec_t *r, const char *key, int64_t dflt);
double cs_rec_real(const cs_rec_t *r, const char *key, double dflt);

/* Walks the fields in order: *pos starts at 0; returns 1 with the field's
 * key (copied into key[CS_REC_KEY_MAX + 1]), value and length, 0 at the
 * end. */
int cs_rec_next(const cs_rec_t *r, size_t *pos, char *key, const char **val, size_t *len);

/* The serialised bytes (len: their count); valid until r changes. */
const char *cs_rec_bytes(const cs_rec_t *r, size_t *len);

/* Reads n bytes of the form above into *out (a new record the caller
 * frees).  CS_ERR_PARSE with the byte offset and what is wrong ("field 3
 * at byte 120: length 99999 runs past the end (40 bytes left)"); nothing
 * is allocated beyond a copy of the n bytes. */
int cs_rec_parse(const char *buf, size_t n, cs_rec_t **out, cs_error_t *err);

#endif
