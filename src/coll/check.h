/*
 * check.h - --validate: tracks which ranks' contributions every part of
 * every rank's buffer holds while a collective runs, and checks the final
 * placement against the collective's definition.
 */
#ifndef CS_COLL_CHECK_H
#define CS_COLL_CHECK_H

#include "coll/coll.h"
#include "core/exec.h"

typedef struct cs_coll_check cs_coll_check_t; /* opaque */

/* Prepares the initial buffers of `a`'s collective for program p (finalized).
 * Errors: limits (CS_ERR_NOMEM) when the state would not fit. */
int cs_coll_check_new(const cs_coll_args_t *a, const cs_program_t *p, uint64_t seed,
                      cs_coll_check_t **out, cs_error_t *err);
void cs_coll_check_free(cs_coll_check_t *c);
/* The observer to pass in cs_exec_opts. */
const cs_exec_observer_t *cs_coll_check_observer(cs_coll_check_t *c);
/* After the run: CS_OK or CS_ERR_VALIDATE naming a rank, a byte range and
 * what is wrong (missing contribution, duplicate, wrong place). */
int cs_coll_check_verify(cs_coll_check_t *c, cs_error_t *err);

#endif
