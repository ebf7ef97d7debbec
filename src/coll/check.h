/*
 * check.h - --validate: tracks which ranks' contributions every part of
 * every rank's buffer holds while a collective runs, and checks the final
 * placement against the collective's definition (docs/validate.md).
 *
 * Use: build the program (cs_coll_build), cs_coll_check_new, pass
 * cs_coll_check_observer in cs_exec_opts.observer, cs_exec_run, then
 * cs_coll_check_verify.  A windowed run: cs_coll_generate,
 * cs_coll_check_new_gen, cs_exec_run_gen, cs_coll_check_verify.  Only ops
 * with data descriptors are tracked (every op emitted through the coll.h
 * builder has one).
 *
 * Guarantees: a dropped or duplicated contribution is always reported
 * (exact counts); misplaced data in copy collectives always (distinct
 * keys); a wrong contribution with the right count in a reduction always
 * when it is one substitution, else with probability 1 - 2^-64.
 */
#ifndef CS_COLL_CHECK_H
#define CS_COLL_CHECK_H

#include "coll/coll.h"
#include "engine/exec.h"

typedef struct cs_coll_check cs_coll_check_t; /* opaque */

/* Prepares the initial buffers of `a`'s collective for program p (finalized,
 * a->P ranks); `seed` picks the random keys (the verdict does not depend on
 * it).  Borrows p until cs_coll_check_free.  Errors: CS_ERR_NOMEM when the
 * state would exceed 2 GiB (P x pieces x 12 bytes) or a barrier has more
 * than 32768 ranks; CS_ERR_INTERNAL when p is not finalized or its ranks
 * differ from a->P.  On error *out is NULL. */
int cs_coll_check_new(const cs_coll_args_t *a, const cs_program_t *p, uint64_t seed,
                      cs_coll_check_t **out, cs_error_t *err);
/* The same for a windowed run (issue 34): `gen` comes from cs_coll_generate
 * of `algo` with `a` (a->no_data 0, so that its program keeps data
 * descriptors) and has not been advanced yet.  A first pass runs the
 * algorithm without running its program (cs_coll_scan: a window at a time,
 * given back as it goes) and reads every data descriptor, so the pieces,
 * the keys and every verdict and message are those of cs_coll_check_new
 * on the whole program; then the checker follows the run as the window
 * takes its ops in, its per-op records given back with the window's.
 * Memory: the state above plus a window's records, never the program.
 * Costs a second build of the program (CPU only).  Errors: the builder's
 * (as cs_coll_build's), those of cs_coll_check_new, CS_ERR_INTERNAL on a
 * generator that does not fit.  Borrows gen's program until
 * cs_coll_check_free.  An op that streams from more than one op (none of
 * the suite's does) fails the verdict with a message that says so. */
int cs_coll_check_new_gen(const cs_coll_algo_t *algo, const cs_coll_args_t *a, cs_progen_t *gen,
                          uint64_t seed, cs_coll_check_t **out, cs_error_t *err);
/* Frees everything, including snapshots of messages never received.
 * Accepts NULL. */
void cs_coll_check_free(cs_coll_check_t *c);
/* The observer to pass in cs_exec_opts (owned by c). */
const cs_exec_observer_t *cs_coll_check_observer(cs_coll_check_t *c);
/* After the run: CS_OK or CS_ERR_VALIDATE naming a rank, a byte range and
 * what is wrong (missing contribution, duplicate, wrong place, a barrier
 * left early, a send and recv whose ranges differ in length), followed by
 * how many other byte ranges are wrong. */
int cs_coll_check_verify(cs_coll_check_t *c, cs_error_t *err);
/* cs_coll_check_verify that also counts what is wrong, for the #wrong
 * column of nccl-tests' tables: *wrong gets the bytes, summed over ranks,
 * that do not hold what the collective's definition says (a barrier: the
 * ranks that leave too early); 0 when the run is right, -1 when the
 * program itself is malformed (a send and recv whose ranges differ: the
 * error says so, and no count is meaningful). */
int cs_coll_check_verify_count(cs_coll_check_t *c, int64_t *wrong, cs_error_t *err);

#endif
