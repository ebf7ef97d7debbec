/*
 * benchtable.h - the runs behind `collsim bench-table` (io/benchtable.h
 * prints them): one prepared collective run at each size exactly as
 * `collsim run --coll C --algo A --bytes N [--iterations ...] [--validate]`
 * runs it, except
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

/* One row at `bytes`: with base->loop a benchmark loop (api/loop.h) made
 * through the request path on machine m (base's machine field is ignored),
 * its times in *pt; without, one call of prepared collective c
 * (cs_sweep_prepare), each rank's finish in *pt.  With `validate` the data
 * is checked on one call, wrong bytes counted in pt->wrong_bytes (0: right;
 * -1 without validate), as nccl-tests checks its data on a call of its own
 * after the timed loop; a loop's run then adds that call.  Runs use base's
 * mode, and the work limit unless base->force; cancel may be NULL.  *engine
 * (may be NULL) gets the name of the engine that ran (a static string).
 * Errors: the build's, the loop's (--iterations ... naming its option) and
 * the run's (a deadlock is an error, not a row), and a malformed program
 * found by the checker. */
int cs_benchtable_point_run(const cs_request_t *base, cs_machine_t *m, cs_request_coll_t *c,
                            int64_t bytes, int validate, const volatile sig_atomic_t *cancel,
                            cs_benchtable_point_t *pt, const char **engine, cs_error_t *err);

#endif
