/*
 * chakra_write.h - a program written as a Chakra execution trace
 * (`collsim export --format chakra`, docs/chakra.md "Export"): one file per
 * rank, PREFIX.R.et, that ASTRA-sim's Chakra feeder runs, and that
 * collsim's Chakra reader (chakra.h) turns back into the same program.
 *
 * Each file is Chakra's length-delimited stream: a GlobalMetadata (version
 * CS_CHAKRA_WRITE_VERSION), then one Node per op of the rank, in op id
 * order.  A send is a COMM_SEND_NODE, a recv a COMM_RECV_NODE (comm_src,
 * comm_dst, comm_tag as int32_val, comm_size as int64_val, is_cpu_op
 * false: the types ASTRA-sim's strict v1 feeder reads; FeederV3 converts
 * any integer), a calc a COMP_NODE whose duration_micros is its time
 * rounded to the nearest microsecond.  Node ids are the program's op ids
 * (unique across the set, so unique per file), and every dependency is a
 * data_deps entry, in the order the program lists it.
 *
 * What Chakra cannot say exactly is kept in attributes named collsim_*
 * that ASTRA-sim ignores and collsim's reader applies (the CS_CHAKRA_ATTR_*
 * names below): the exact calc time and reduced bytes, the data
 * descriptor of a send/recv, the kind of a dependency that is not "after
 * completion" (after-start and streaming are written as data_deps, the
 * nearest ordering ASTRA-sim runs: it waits for the whole predecessor),
 * and, in the metadata, the number of ranks, the calc time unit and that
 * node ids are op ids.
 *
 * Refused (CS_ERR_RANGE "op N (rank R): ...", nothing written): a
 * multicast (Chakra has no node for one payload to several ranks; collsim
 * does not lower it here, because the lowered program would not read back
 * as the same one), a recv from any source or with any tag (Chakra names
 * one peer and one tag), a calc with a fixed time in machine ticks (a
 * program of time unit 0: microseconds need a clock), a tag or size out of
 * Chakra's fields.  A windowed or unfinalized program is CS_ERR_INTERNAL.
 *
 * Without protobuf-c (CS_HAVE_CHAKRA 0) every function refuses with
 * CS_ERR_USAGE saying so.
 */
#ifndef CS_IO_CHAKRA_WRITE_H
#define CS_IO_CHAKRA_WRITE_H

#include <stdio.h>

#include "core/error.h"
#include "core/program.h"

/* The GlobalMetadata version written: ASTRA-sim's feeders read no version,
 * and its examples and generators write this one (docs/chakra.md). */
#define CS_CHAKRA_WRITE_VERSION "0.0.4"

/* The collsim attributes (docs/chakra.md "Export" gives their types). */
#define CS_CHAKRA_ATTR_RANKS "collsim_ranks"         /* metadata: int64, P */
#define CS_CHAKRA_ATTR_TIME_UNIT "collsim_time_unit" /* metadata: double, s per calc tick */
#define CS_CHAKRA_ATTR_OP_IDS "collsim_op_ids"       /* metadata: bool, node id = op id */
#define CS_CHAKRA_ATTR_CALC_TICKS "collsim_calc_ticks" /* COMP_NODE: int64 */
#define CS_CHAKRA_ATTR_CALC_BYTES "collsim_calc_bytes" /* COMP_NODE: int64, if not 0 */
#define CS_CHAKRA_ATTR_DATA "collsim_data"           /* send/recv: int64 list off, len, mode */
#define CS_CHAKRA_ATTR_DEP_KINDS "collsim_dep_kinds" /* int64 list, one cs_dep_kind_t per
                                                        data_deps entry, when one is not
                                                        CS_DEP_AFTER */

/* A program with joins (core/program.h) is written, and checked, as the
 * program they stand for (cs_program_without_joins): node ids are then
 * that program's op ids.  cs_chakra_write_rank makes that copy at every
 * call; cs_chakra_write once. */

/* Checks that p can be written (the refusals above), without writing. */
int cs_chakra_write_check(const cs_program_t *p, cs_error_t *err);

/* Writes rank `rank` of p as one .et stream to f (for tests and tools
 * that hold the files themselves).  Does not check p first: call
 * cs_chakra_write_check.  CS_ERR_IO if f reports a write error. */
int cs_chakra_write_rank(const cs_program_t *p, int rank, FILE *f, cs_error_t *err);

/* Writes the whole set PREFIX.0.et .. PREFIX.(P-1).et.  The set is whole
 * or unchanged: every file is first written as "PREFIX.R.et.part" (whole,
 * core/outfile.h) and the parts are renamed only once all are written; on
 * a failure the parts are removed.  Files PREFIX.P.et, PREFIX.(P+1).et, ...
 * left by an earlier, larger export are removed, since a reader would take
 * them for ranks of this set.  Errors name the file. */
int cs_chakra_write(const cs_program_t *p, const char *prefix, cs_error_t *err);

#endif
