/*
 * source.h - what a reader of a user's file reads: a file named by a path,
 * or bytes held in memory under a name (issue 29: a file that a request to
 * `collsim serve` carries inline), and the set of such named files.
 *
 * Why: a machine's spec keys may name files (net:file=..., groq:schedule=...).
 * At the command line they are paths; from the service they must never be
 * (docs/security.md): there the spec's file keys name entries of the
 * request's "files", and the readers read those bytes where they lie.  A
 * reader that takes a cs_source_t serves both without knowing which, and
 * its messages name the source as the user wrote it (the path, or the
 * request's name), never a path of the server's.
 *
 * Which keys name files is said by each machine type's table
 * (machines/machine.h, cs_machine_type_t.file_keys); a spec reaches its
 * files through cs_source_from_spec below.
 */
#ifndef CS_SOURCE_H
#define CS_SOURCE_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"
#include "core/lines.h"
#include "core/units.h"

/* One input: data NULL means the file at path `name`; otherwise len bytes
 * at data (borrowed), shown as `name` in messages. */
typedef struct cs_source {
    const char *name;
    const char *data;
    size_t len;
} cs_source_t;

/* Opens src as lines (core/lines.h).  A path that is a directory, or that
 * cannot be opened, is CS_ERR_IO "NAME: cannot open: reason" (a directory
 * says so, instead of what reading it would give). */
int cs_source_lines(const cs_source_t *src, cs_lines_t **out, cs_error_t *err);

/* Opens src as a stdio stream to read (fmemopen for bytes in memory), with
 * the same errors as cs_source_lines. */
int cs_source_fopen(const cs_source_t *src, FILE **out, cs_error_t *err);

/* ---- named files (a request's "files") ----------------------------------- */

#define CS_FILES_MAX 16          /* files of one set */
#define CS_FILES_NAME_MAX 128    /* bytes of a name */

typedef struct cs_files cs_files_t;

cs_files_t *cs_files_new(void);
void cs_files_free(cs_files_t *fs); /* accepts NULL */

/* Whether name is a plain file name: 1 to CS_FILES_NAME_MAX bytes of
 * letters, digits, '.', '-', '_', not starting with '.' (so no '/', no
 * "..", nothing hidden).  CS_ERR_USAGE saying which rule it breaks. */
int cs_files_check_name(const char *name, cs_error_t *err);

/* Adds a copy of data[0..len) under name (checked as above): CS_ERR_USAGE
 * for a name given twice or one file more than CS_FILES_MAX. */
int cs_files_add(cs_files_t *fs, const char *name, const char *data, size_t len,
                 cs_error_t *err);

int cs_files_count(const cs_files_t *fs);
/* The i-th file (0 <= i < count), in the order added. */
const cs_source_t *cs_files_at(const cs_files_t *fs, int i);
/* The file called name, or NULL. */
const cs_source_t *cs_files_find(const cs_files_t *fs, const char *name);

/* ---- a spec's file keys --------------------------------------------------- */

/* The source the spec key `key` names, marking the key used: out->name NULL
 * when the key is absent.  A spec with files (cs_spec_t.files, set by whoever
 * must not open paths: the service) resolves the value among them only, and
 * a value that names none of them is CS_ERR_USAGE naming the key; without,
 * the value is a path. */
int cs_source_from_spec(cs_spec_t *spec, const char *key, cs_source_t *out, cs_error_t *err);

/* The path the spec key `key` asks a file to be written to (NULL when
 * absent), marking the key used.  A spec with files is refused
 * (CS_ERR_USAGE naming the key): whoever gives files writes none. */
int cs_source_output_from_spec(cs_spec_t *spec, const char *key, const char **path,
                               cs_error_t *err);

#endif
