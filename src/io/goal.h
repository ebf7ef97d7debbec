/*
 * goal.h - GOAL, collsim's native program format, read and written.
 *
 * GOAL is the text schedule language of LogGOPSim and Schedgen: per-rank
 * blocks of send / recv / calc ops with `requires` / `irequires`
 * dependencies.  collsim reads it more strictly than LogGOPSim and adds three
 * extensions (mcast, reduce, streams); docs/goal.md is the full grammar.
 *
 * Errors: every malformed input gives CS_ERR_PARSE with a message
 * "NAME:LINE:COL: ..." (1-based line, 1-based byte column of the offending
 * token) that says what was found and what was expected.  I/O failures give
 * CS_ERR_IO.  On any error *out is set to NULL and nothing is leaked.
 *
 * A file is memory-mapped and read in place (core/lines.h), streams in
 * chunks; beyond that the reader keeps per-rank-block label tables, so
 * traces of 10^7 ops cost only the program they build.
 * The program returned is finalized, carries the source name, one origin
 * (line, label) per op and a time unit of 1e-9 s (calc is in nanoseconds).
 *
 * Op ids: in file order (rank 0's ops first, then rank 1's, ...), unless the
 * file has `// collsim order:` lines (comments to LogGOPSim) outside the
 * rank blocks, after `num_ranks`.  Their words give the ids in runs:
 * `R:C` is the next C ops of the block of rank R, `A-B:C` the next C ops of
 * every rank from A to B (up or down) in turn.  They must cover every op of
 * every block exactly once, checked at the end of the file (errors at the
 * run, or the first order line, that does not fit).  Ids matter: ties at a
 * port are broken by them (core/program.h, "Op order").
 */
#ifndef CS_GOAL_H
#define CS_GOAL_H

#include <stdio.h>
#include "core/error.h"
#include "core/program.h"

/* Reads the GOAL file at `path` (used as the name in messages).
 * CS_ERR_IO if it cannot be opened or read. */
int cs_goal_read_file(const char *path, cs_program_t **out, cs_error_t *err);

/* Reads GOAL text from an open stream until EOF; `name` (NULL: "<stream>")
 * prefixes messages and becomes the program's source.  Does not close f. */
int cs_goal_read_stream(FILE *f, const char *name, cs_program_t **out, cs_error_t *err);

/* Reads GOAL text from a NUL-terminated string (NULL name: "<string>"). */
int cs_goal_read_string(const char *text, const char *name, cs_program_t **out, cs_error_t *err);

/* Writes a finalized program as GOAL text that cs_goal_read_* turns back
 * into the same program: the same ops (kind, size, peers, tag, calc time)
 * under the same ids, with the same dependencies.  Blocks hold each rank's
 * ops in id order (which keeps MPI matching order); when the ids do not go
 * rank by rank, `// collsim order:` lines after `num_ranks` (at most 100
 * characters each) give them back.  Ops keep their own label when it is a
 * valid GOAL label unique in its rank; other ops that take part in a
 * dependency get a generated label `o<id>`.
 * calc times are written in nanoseconds: a program whose time unit is 0
 * (machine ticks) can be written only if no calc has a fixed time, and a
 * time unit that does not convert ticks to whole nanoseconds is refused
 * (CS_ERR_RANGE).  Data descriptors (cs_op_t.data) are not written.
 * A program with joins is written as the program they stand for
 * (cs_program_without_joins: GOAL has no join, and a `calc 0` in its
 * place would run through the CPU).  CS_ERR_IO if the stream reports a
 * write error. */
int cs_goal_write(const cs_program_t *p, FILE *f, cs_error_t *err);

#endif
