/*
 * benchtable.h - the runs behind `collsim bench-table` (io/benchtable.h
 * prints them): one prepared collective run at each size exactly as
 * `collsim run --coll C --algo A --bytes N [--validate]` runs it, except
 * that a wrong result is a row (its wrong bytes counted, nccl-tests'
 * #wrong, OSU's Fail) rather than an error.  Nothing here prints.
 */
#ifndef CS_API_BENCHTABLE_H
#define CS_API_BENCHTABLE_H

#include <signal.h>
#include <stdint.h>

#include "api/request.h"
#include "core/error.h"
#include "io/benchtable.h"
#include "machines/machine.h"

/* Runs prepared collective c (cs_sweep_prepare) at `bytes` on m with
 * base's mode and (unless base->force) the work limit, validating when
 * `validate`; cancel may be NULL.  Fills *pt: the ranks' finish times (max,
 * min, mean, in seconds; every rank starts at 0), wrong_bytes (0 when the
 * result is right, -1 without validate) and iterations (1: one call).
 * *engine (may be NULL) gets the name of the engine that ran, a static
 * string.  Errors: the build's and the run's (a deadlock is an error, not
 * a row), and a malformed program found by the checker. */
int cs_benchtable_point_run(const cs_request_t *base, const cs_machine_t *m,
                            cs_request_coll_t *c, int64_t bytes, int validate,
                            const volatile sig_atomic_t *cancel, cs_benchtable_point_t *pt,
                            const char **engine, cs_error_t *err);

#endif
