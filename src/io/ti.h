/*
 * ti.h - SimGrid's time-independent (TI) traces, read into programs.
 *
 * A TI trace lists MPI actions, one per line: `<rank> <action> <args...>`
 * (reference/trace-formats.md; docs/replay.md has the full grammar and the
 * meaning collsim gives every action), in SimGrid's current form or its
 * older one (untagged `send <dst> <count>`, a bare `wait` on the rank's
 * most recent request), told apart line by line.  It is either one file holding every
 * rank's lines, interleaved in any order, or an index file listing one
 * trace file per rank (rank i's is the i-th path, relative to the index's
 * directory).
 *
 * Point-to-point actions become program ops in each rank's trace order:
 * blocking ones (send, recv, compute, sleep, wait, waitall, collectives)
 * complete before the next action starts; isend / irecv only start before
 * it, and the wait (or waitall) that names them makes the next action
 * follow their completion.  compute and sleep are calc ops (flops at
 * `flops_per_second`).  Collective actions are checked across ranks (the
 * k-th collective call of every rank must be the same collective with the
 * same size and root) and expanded with an algorithm of the suite (opts.algo,
 * default the collective's default), in a tag space of their own so that
 * they never match the trace's point-to-point messages (MPI's communicator
 * context).  After reading, every send is paired with its recv per (source,
 * destination, tag) in order, so that a recv without a send, a send
 * without a recv, or a message larger than its recv is an error naming
 * both lines before anything runs.
 *
 * Errors: CS_ERR_PARSE with "FILE:LINE: message" saying what was found and
 * what was expected; CS_ERR_IO when a file cannot be read; errors of an
 * algorithm (a size or rank count it cannot do) are prefixed with the line
 * of the collective call.  On any error *out is NULL and nothing leaks.
 *
 * A file is memory-mapped and read in place (core/lines.h), a stream in
 * chunks.  A combined file is read twice (a first pass finds the number of
 * ranks), so it must be seekable (a regular file, not a pipe).  Beyond the program built, the
 * reader keeps per rank its outstanding requests and its collective calls
 * (about 40 bytes per call) until the end.
 */
#ifndef CS_TI_H
#define CS_TI_H

#include <stdint.h>
#include <stdio.h>

#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"

/* Application tags are 0 .. CS_TI_MAX_TAG; collectives use tags from
 * CS_TI_COLL_TAG_BASE up. */
#define CS_TI_COLL_TAG_BASE (1 << 30)
#define CS_TI_MAX_TAG (CS_TI_COLL_TAG_BASE - 1)

typedef struct cs_ti_opts {
    /* compute: flops per second (default 1e9: one flop per nanosecond) */
    double flops_per_second;
    /* the algorithm of each collective (NULL: the suite's default) and its
     * options (NULL: none) */
    const cs_coll_algo_t *algo[CS_COLL_NKINDS];
    cs_spec_t *algo_opts[CS_COLL_NKINDS];
    /* the machine's packet size, for algorithms' default segments (>= 1) */
    int64_t unit;
    /* Called once the number of ranks P is known, before any collective
     * is expanded: sets *hints to the machine's hints in rank space (or
     * NULL).  The hints must stay valid until the reader returns.  NULL: no
     * hints.  An error stops the reading and is returned. */
    int (*prepare)(void *ctx, int P, const cs_coll_hints_t **hints, cs_error_t *err);
    void *prepare_ctx;
    /* > 0: the machine's node count.  A trace with more ranks is refused
     * as soon as they are counted, before anything proportional to the
     * rank count is allocated (issue 19, D2); 0: only the reader's own
     * ceiling of 2^26 ranks. */
    int max_ranks;
} cs_ti_opts_t;

/* What a trace held, for reports. */
typedef struct cs_ti_info {
    int files;                      /* 1 for a combined file, else the rank files */
    int64_t actions;                /* action lines */
    int64_t calls[CS_COLL_NKINDS];  /* collective calls (counted once, not per rank) */
    int64_t coll_ops;               /* ops the collectives expanded into */
} cs_ti_info_t;

void cs_ti_opts_default(cs_ti_opts_t *o);

/* Reads the trace at `path`: a combined file or an index file (told apart
 * by their first action line).  The program is finalized, has time unit
 * 1e-9 s (calc in nanoseconds) and carries `path` as its source and each
 * op's line.  info may be NULL. */
int cs_ti_read_file(const char *path, const cs_ti_opts_t *o, cs_program_t **out,
                    cs_ti_info_t *info, cs_error_t *err);

/* Reads a combined trace from a seekable stream (name: for messages; NULL
 * "<stream>").  Does not close f. */
int cs_ti_read_stream(FILE *f, const char *name, const cs_ti_opts_t *o, cs_program_t **out,
                      cs_ti_info_t *info, cs_error_t *err);

/* Reads a combined trace from a string (name NULL: "<string>"). */
int cs_ti_read_string(const char *text, const char *name, const cs_ti_opts_t *o,
                      cs_program_t **out, cs_ti_info_t *info, cs_error_t *err);

/* Tells a TI trace from other text by its first meaningful line (blank
 * lines and '#' comments skipped): *is_ti = 1 if it reads `<rank> <word>`
 * (a combined trace) or names an existing file (an index), 0 otherwise.
 * Errors: the file cannot be read (CS_ERR_IO), is empty or holds only
 * comments, or holds NUL or control bytes (CS_ERR_PARSE, "FILE:LINE: ..."). */
int cs_ti_sniff(const char *path, int *is_ti, cs_error_t *err);

#endif
