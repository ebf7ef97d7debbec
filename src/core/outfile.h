/*
 * outfile.h - every output file of collsim is whole or absent (issue 19).
 *
 * A regular file (or a name that does not exist yet) is written to
 * "DIR/.NAME.tmp.PID" next to the target and renamed over it on commit, so
 * a reader never sees half a file and a failed or interrupted run leaves the
 * old file (or nothing).  A target that exists and is not a regular file
 * (/dev/stdout, /dev/full, a FIFO, a terminal) is written directly: there is
 * no rename for those, but every write is still checked.  A folder of
 * figures (--frames, --heatmaps) is a temporary folder renamed at the end.
 *
 * Lives in core so that every writer can reach it (the Groq schedule dump in
 * machines, figures and traces in io, CSV and JSON in app).  Errors name the
 * path (and `what`, the option or key that chose it, when given).
 */
#ifndef CS_OUTFILE_H
#define CS_OUTFILE_H

#include <stdio.h>

#include "core/error.h"

typedef struct cs_outfile cs_outfile_t; /* opaque */

/* Opens `path` for writing as above; `what` ("--csv", "key 'dump'", or
 * NULL) prefixes error messages.  *out is NULL on error (CS_ERR_IO). */
int cs_outfile_open(const char *what, const char *path, cs_outfile_t **out, cs_error_t *err);
/* The stream to write to; writers may use stdio freely: the stream's error
 * flag is sticky and cs_outfile_check / _commit look at it. */
FILE *cs_outfile_stream(cs_outfile_t *o);
/* Flushes and reports a write that failed so far (CS_ERR_IO naming the
 * path and the system's reason): for writers that stream rows. */
int cs_outfile_check(cs_outfile_t *o, cs_error_t *err);
/* Flushes, closes and renames the temporary over the target; frees o.  On
 * any failure the temporary is removed, CS_ERR_IO.  o NULL: CS_OK. */
int cs_outfile_commit(cs_outfile_t *o, cs_error_t *err);
/* Closes and removes the temporary (a direct target is closed only);
 * frees o.  NULL is fine. */
void cs_outfile_abort(cs_outfile_t *o);
/* Writes len bytes of data to path in one go (open, write, commit). */
int cs_outfile_save(const char *what, const char *path, const void *data, size_t len,
                    cs_error_t *err);

/* Whether path could be written, without creating anything: it exists and
 * is writable, or its folder is.  CS_ERR_IO naming `what` and the path. */
int cs_outfile_check_writable(const char *what, const char *path, cs_error_t *err);

/* A folder written whole: made as "PARENT/.NAME.tmp.PID", its files written
 * into cs_outdir_path() (plain files: the folder itself is the unit), then
 * renamed to the target on commit.  When the target already exists as a
 * folder, commit moves the new files into it one by one (each rename is
 * whole) and removes the temporary folder. */
typedef struct cs_outdir cs_outdir_t; /* opaque */
int cs_outdir_open(const char *what, const char *path, cs_outdir_t **out, cs_error_t *err);
const char *cs_outdir_path(const cs_outdir_t *d);
int cs_outdir_commit(cs_outdir_t *d, cs_error_t *err);
/* Removes the temporary folder and everything in it; frees d; NULL fine. */
void cs_outdir_abort(cs_outdir_t *d);

#endif
