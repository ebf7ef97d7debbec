/*
 * algofile.h - algorithms read from files: the table of algorithm formats
 * (DESIGN.md, "Formats from other tools").  An algorithm is named on the
 * command line as FORMAT:FILE (`--algo msccl:ring.xml`); the format's
 * reader turns the file into a cs_coll_algo_t that the suite runs like its
 * own: it emits a program for the run's ranks and size, runs on every
 * machine, and --validate checks it.
 *
 * The table lives here, in io, because a reader is a file format (io's
 * room) and the algorithm it makes is the suite's (coll, below io): api
 * resolves names through cs_algofile_find before the suite's registry.  A
 * new format (MSCCL++ JSON plans, `mscclpp:`) is one more reader file and
 * one more row of the table.
 */
#ifndef CS_IO_ALGOFILE_H
#define CS_IO_ALGOFILE_H

#include "coll/coll.h"
#include "core/error.h"
#include "core/source.h"

/* The format `name` names ("msccl:ring.xml" -> "msccl"), with *file the
 * part after the colon; NULL when name has no known FORMAT: prefix (then
 * it is a name of the suite's registry). */
const char *cs_algofile_format(const char *name, const char **file);

/* Reads the algorithm file src in `format` (one cs_algofile_format
 * returned) as an algorithm of collective `kind`, called `name` (what the
 * user wrote: it is the algorithm's name in results, and naming it again
 * finds the same file).  Errors: the reader's ("FILE:LINE: ..."), and a
 * file of another collective.  On success the caller owns *out and frees
 * it with cs_algofile_free; on error *out is NULL. */
int cs_algofile_read(const char *format, const cs_source_t *src, cs_coll_kind_t kind,
                     const char *name, cs_coll_algo_t **out, cs_error_t *err);
/* After a failed --validate of a run of algo (cs_algofile_read's) with
 * args: lets the format name its own units in err's message (MSCCL: the
 * chunks of the byte ranges).  Nothing for an algorithm of the registry. */
void cs_algofile_explain(const cs_coll_algo_t *algo, const cs_coll_args_t *args,
                         cs_error_t *err);
/* Frees an algorithm cs_algofile_read made (accepts NULL).  Programs it
 * built stay valid. */
void cs_algofile_free(cs_coll_algo_t *algo);

/* The formats, joined by ", " ("msccl"), for messages and help texts. */
const char *cs_algofile_formats(void);

#endif
