/*
 * request.h - the one path of a request: what to run on which machine,
 * parsed and checked once, prepared, built and run (issue 16).
 *
 * A request is a machine spec plus either a program (a GOAL schedule) or a
 * collective of the suite (collective, algorithm, bytes, root, ranks, order,
 * algorithm options, validation), with the engine's mode and event queue.
 * Every front end (the `collsim` subcommands today, a library and a service
 * later) fills one with cs_request_set, field by field from text, and then
 * goes prepare -> build -> run.  Nothing here prints, exits or keeps state
 * between calls: errors come back as a cs_status_t with a message in a
 * cs_error_t that names the option ("--bytes: ...", "--root 8 is outside
 * ranks 0..7").  The steps are split so that a front end can act between
 * them (name the machine in a table, add figure buckets to the run's
 * options, draw its own progress bar through opts->poll).
 */
#ifndef CS_REQUEST_H
#define CS_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "api/loop.h"
#include "api/ncclpick.h"
#include "coll/check.h"
#include "coll/coll.h"
#include "core/error.h"
#include "core/program.h"
#include "core/queue.h"
#include "engine/exec.h"
#include "machines/machine.h"

#define CS_REQUEST_MAX_OPTS 64

/* The fields of a request, as parsed.  Strings are borrowed (the request
 * never copies or frees them: they must outlive it); set them through
 * cs_request_set so that each value is checked once. */
typedef struct cs_request {
    const char *machine;          /* spec string */
    const cs_machine_env_t *env;  /* where the machine is built (files, a
                                     node limit: machine.h); NULL: the CLI's */
    const char *program;          /* GOAL file ("-": standard input); NULL: a collective */
    const char *coll, *algo;      /* algo NULL: the collective's default */
    const char *order;            /* NULL: natural */
    const char *bytes_text;       /* bytes as typed; NULL: not given */
    int64_t bytes;
    int64_t root, ranks;          /* ranks 0: every node (or the order file's) */
    int has_root;
    const char *opts[CS_REQUEST_MAX_OPTS]; /* "key=value" (--opt) */
    int nopts;
    int validate;
    /* Build the collective while it runs (core/progen.h)?  0, the
     * default: whenever the run allows it (cs_request_windowed); 1: asked
     * for (--windowed: an error where the run needs the whole program);
     * -1: never (--whole). */
    int windowed;
    /* The caller reads the whole program without running it (export) or
     * decides on its size before the run (the service's figures): the
     * default is then the whole program.  (A timeline needs no whole
     * program: a windowed run with per-op times keeps its ops.) */
    int keep_program;
    int force;                    /* no work limit (cs_exec_opts_t.max_work = 0) */
    cs_net_mode_t mode;
    cs_queue_kind_t queue;
    cs_loop_spec_t loop;          /* a benchmark loop (api/loop.h); style NONE: one call */
} cs_request_t;

/* An empty request: no machine, no program or collective, packet mode, the
 * default queue.  Nothing to destroy (the strings are borrowed). */
void cs_request_init(cs_request_t *r);

/* Sets one field from its text.  Keys, with the option the errors name:
 *   machine, program, coll, algo, order   (stored as they are)
 *   bytes  (a size, cs_units_parse_bytes)   root (an integer)
 *   ranks  (an integer >= 1)                opt  (KEY=VALUE, no comma)
 *   validate (value ignored)                mode (packet, fluid)
 *   windowed (value ignored)           force (value ignored: no work limit)
 *   whole  (value ignored: never windowed)
 *   queue  (an event queue kind)
 *   iterations (N or "default"), warmup (W), between (none, barrier,
 *   barrier:ALGO), loop (nccl-tests, osu): a benchmark loop (api/loop.h)
 * CS_ERR_USAGE with a message naming the option for a value that is none,
 * or for an unknown key; r is unchanged then. */
int cs_request_set(cs_request_t *r, const char *key, const char *value, cs_error_t *err);

/* Adds an algorithm option as it is (the part of `opt` after its KEY=VALUE
 * check): CS_ERR_USAGE for a comma in it or one option too many. */
int cs_request_add_opt(cs_request_t *r, const char *kv, cs_error_t *err);

/* Event queue kinds: how many there are (kinds are 0..n-1), their names
 * joined by `sep` into buf, and parsing a name ("binary", "quad", ...). */
int cs_request_queue_kinds(void);
void cs_request_queue_names(char *buf, size_t len, const char *sep);
int cs_request_parse_queue(const char *text, cs_queue_kind_t *out, cs_error_t *err);

/* Which fields go together, with the messages of `collsim run`:
 * cs_request_check_kind wants a machine (unless need_machine is 0: a front
 * end that has one open) and exactly one of program and collective;
 * cs_request_check_keys refuses the collective's fields without a
 * collective and an explicit windowed with a loop (a timeline and
 * --validate run windowed: `timeline` is kept for the callers).
 * CS_ERR_USAGE. */
int cs_request_check_kind(const cs_request_t *r, int need_machine, cs_error_t *err);
int cs_request_check_keys(const cs_request_t *r, int timeline, cs_error_t *err);

/* ---- a collective resolved against a machine ---------------------------- */

/* A collective ready for cs_coll_build(c->algo, &c->args, ...): the
 * algorithm, its arguments with the machine's hints in rank space, and the
 * placement for cs_exec_opts_t.rank_to_node.  args points into the struct
 * itself, so it must not be copied or moved once prepared. */
typedef struct cs_request_coll {
    const cs_coll_algo_t *algo;
    cs_coll_algo_t *algo_file; /* owned: algo when read from a file (FORMAT:FILE) */
    cs_coll_args_t args;
    cs_coll_hints_t hints;
    cs_spec_t opts;
    int has_opts;
    int32_t *rank_to_node; /* P entries, owned */
    cs_machine_hints_t place; /* owns the arrays `hints` points to */
    char order_name[64];   /* for the summary */
    /* a benchmark loop's times once it ran (owned by the run's loop), for
     * the reports; NULL: one call */
    const cs_result_loop_t *loop;
    /* `--algo nccl` (api/ncclpick.h): what NCCL's model chose; algo is the
     * suite's algorithm it runs and opts carry its proto and nchannels */
    cs_ncclpick_t nccl;
    int has_nccl;
    char nccl_pass[160]; /* ",key=value..." of the user's for the chosen algorithm */
} cs_request_coll_t;

/* The algorithm `name` of collective kind (NULL: the default): FORMAT:FILE
 * (io/algofile.h: "msccl:ring.xml") is read from the file, which env's
 * files hold when env has files (the service: then never a path, and a
 * name none of them has is CS_ERR_USAGE), else from the path; any other
 * name is looked up in the suite's registry (cs_coll_find); "nccl" is
 * NCCL's choice (cs_ncclpick_algo), resolved by cs_request_coll_prepare.  *owned gets
 * what the caller frees with cs_algofile_free (NULL for the registry's). */
int cs_request_find_algo(cs_coll_kind_t kind, const char *name, const cs_machine_env_t *env,
                         const cs_coll_algo_t **out, cs_coll_algo_t **owned, cs_error_t *err);

/* Resolves the collective and algorithm, the ranks, root, placement, hints
 * and options of r against machine m.  Errors (unknown name, root or ranks
 * out of range, unreadable order file, malformed --opt) name the option.
 * Pass c to cs_request_coll_destroy afterwards whatever the result. */
int cs_request_coll_prepare(const cs_request_t *r, const cs_machine_t *m, cs_request_coll_t *c,
                            cs_error_t *err);
/* The program of a prepared collective at c->args.bytes (cs_coll_build;
 * errors as the algorithm gives them). */
int cs_request_coll_build(const cs_request_coll_t *c, cs_program_t **out, cs_error_t *err);
/* `--algo nccl`: NCCL's choice for c->args.bytes (after a sweep changed
 * them): the model evaluated again on c->nccl.in, c->algo set to the
 * suite's algorithm that runs it and c->opts to its proto and nchannels.
 * CS_ERR_USAGE when the suite has no algorithm for the model's choice
 * (NVLSTree), naming it. */
int cs_request_nccl_choose(cs_request_coll_t *c, cs_error_t *err);
/* NCCL's model of prepared collective c on m: the choice of `--algo
 * nccl` (c->has_nccl), or for an nccl-* algorithm NCCL's estimate of that
 * algorithm with c's proto and nchannels (the hardware it needs assumed:
 * NVLS for nccl-nvls, CollNet for nccl-collnet-*).  CS_ERR_USAGE with the
 * reason for any other algorithm, or when the model does not consider the
 * algorithm for this collective and machine (PAT with several ranks a
 * node). */
int cs_request_nccl_estimate(const cs_machine_t *m, const cs_request_coll_t *c,
                             cs_ncclpick_t *out, cs_error_t *err);
/* Releases what c owns and zeroes it; accepts a zeroed struct. */
void cs_request_coll_destroy(cs_request_coll_t *c);

/* Node orders by name: "natural" (ids), "ring" (the machine's ring order)
 * and "snake" (boustrophedon over the machine's grid).  Fills v[0..n) (n at
 * most the machine's nodes) with the first n nodes of the order; returns 0,
 * or -1 for "snake" on a machine without a grid (the caller says which
 * option asked for it). */
int cs_request_node_order(const cs_machine_t *m, const char *name, int n, int32_t *v);

/* Fills c->hints (and c->place, which owns its arrays) with the machine's
 * hints in rank space for the placement c->rank_to_node of P ranks
 * (cs_machine_hints_init: ring, groups, grid, gateways).
 * cs_request_coll_prepare calls it; a trace replay places its own ranks. */
void cs_request_placement_hints(const cs_machine_t *m, int P, cs_request_coll_t *c);

/* ---- a whole run ---------------------------------------------------------- */

/* What one request made: the machine, the program, the collective (when it
 * is one), the checker of --validate and the result.  Zero it (or
 * cs_request_run_init) before cs_request_prepare; cs_request_run_destroy
 * whatever happened. */
typedef struct cs_request_run {
    cs_machine_t *machine;    /* owned */
    cs_program_t *program;    /* owned, unless gen's */
    cs_progen_t *gen;         /* owned: a windowed collective (program is its) */
    cs_request_coll_t coll;   /* zeroed for a program */
    int is_coll;
    cs_coll_check_t *check;   /* owned; NULL without validate */
    cs_exec_result_t result;
    int validated;            /* the run was checked and passed */
    int machine_borrowed;     /* machine is the caller's (cs_request_prepare_on) */
    cs_loop_t *loop;          /* owned: a benchmark loop (program is its) */
} cs_request_run_t;

void cs_request_run_init(cs_request_run_t *run);
void cs_request_run_destroy(cs_request_run_t *run);

/* Makes the machine (run->machine stays set when a later step fails) and,
 * for a collective, resolves it (cs_request_coll_prepare). */
int cs_request_prepare(const cs_request_t *r, cs_request_run_t *run, cs_error_t *err);
/* The same on machine m, already open (r->machine is ignored): run borrows
 * it, so m must outlive run.  Runs on one machine one after the other are
 * independent (a machine keeps no state of a run). */
int cs_request_prepare_on(const cs_request_t *r, cs_machine_t *m, cs_request_run_t *run,
                          cs_error_t *err);
/* Does the request run its collective windowed?  Yes unless it asks for
 * the whole program (--whole) or needs it: a benchmark loop (it repeats
 * the whole program), a caller that reads the program after the run
 * (keep_program: export, the service), an algorithm read from a file or
 * marked `whole` (their dependencies may point forward), a GOAL program
 * (read whole). */
int cs_request_windowed(const cs_request_t *r, const cs_request_coll_t *c);

/* Builds the collective's program (errors prefixed "COLL/ALGO: ") and the
 * validation checker, or reads the GOAL program and checks that it fits the
 * machine.  With a loop (r->loop), the program is the loop's: the
 * collective repeated, with the barrier between iterations when asked
 * (api/loop.h; errors name --iterations or --between). */
int cs_request_build(const cs_request_t *r, cs_request_run_t *run, cs_error_t *err);
/* The executor's options of the request: its mode and queue, the
 * placement, the validation observer.  A front end may then add figure
 * buckets and a poll callback before cs_request_run. */
void cs_request_exec_opts(const cs_request_t *r, const cs_request_run_t *run,
                          cs_exec_opts_t *opts);
/* Runs the built program on the machine with opts, then checks the data
 * placement when validating ("validation failed: ...", naming the
 * iteration of a loop); a loop's times are then in run->coll.loop. */
int cs_request_run(cs_request_run_t *run, const cs_exec_opts_t *opts, cs_error_t *err);

/* The machine's closed-form model of prepared collective c
 * (cs_machine_predict with c's kind, algorithm, ranks, bytes, root, grid
 * hint and options): CS_OK with out filled, or an error whose message says
 * why there is none ("cell has no closed-form model"). */
int cs_request_model(const cs_machine_t *m, const cs_request_coll_t *c, cs_model_t *out,
                     cs_error_t *err);

/* Runs p on machine m (cs_exec_run in the machine's environment): the one
 * call that executes a program, for the front ends that make programs of
 * their own (a trace replay, a sweep's sizes, the benchmark's workloads). */
/* The same for a generator's program built while it runs (cs_exec_run_gen). */
int cs_request_exec_gen(const cs_machine_t *m, cs_progen_t *g, const cs_exec_opts_t *opts,
                        cs_exec_result_t *res, cs_error_t *err);
int cs_request_exec(const cs_machine_t *m, const cs_program_t *p, const cs_exec_opts_t *opts,
                    cs_exec_result_t *res, cs_error_t *err);

#endif
