/*
 * collsim.h - the public C interface of libcollsim (issue 20): open a
 * machine from a spec, describe a request (a collective of the suite, a
 * GOAL program or a trace to replay), run it in packet or fluid mode, read
 * the result (finish time, per-rank times, validation, per-channel
 * records) and write it as JSON, a heatmap or a timeline; list the machine
 * types and the algorithms.  docs/api-c.md is the guide; this header is the
 * whole interface.
 *
 * It is the same request path as the `collsim` command line (src/api): a
 * request's keys are the command line's options, its errors the command
 * line's messages, its JSON the bytes `collsim run --json` writes.
 *
 * Rules that hold for every function:
 *   - Handles are opaque.  A function that can fail returns a status
 *     (COLLSIM_OK = 0, else one of collsim_status) and, when `err` is not
 *     NULL, fills it with the status and a message; nothing is printed and
 *     nothing exits.
 *   - No state is shared between handles: simulations in different threads,
 *     each with its own handles, are independent and give the same results
 *     as one after the other.  One handle must not be used by two threads at
 *     once.  (igraph, which builds some topologies and layouts, is not
 *     thread-safe in Debian's build: the library serialises its calls.)
 *   - Out of memory: a failed allocation inside a simulation cannot be
 *     unwound and ends the process (abort), as in GLib; sizes a user chooses
 *     (ranks, machine size, work) are checked before they are allocated and
 *     come back as errors.
 *   - Times are in ticks of the machine's clock (cycles on the machines of
 *     the papers, ns or ps on the network models) and in seconds.
 *
 * Versioning: the soname changes when this interface breaks; functions are
 * only ever added within one major version.
 */
#ifndef COLLSIM_H
#define COLLSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define COLLSIM_VERSION_MAJOR 0
#define COLLSIM_VERSION_MINOR 1
#define COLLSIM_VERSION_PATCH 0

/* "0.1.0": the library's version (which may be newer than the header's). */
const char *collsim_version(void);
/* MAJOR * 10000 + MINOR * 100 + PATCH of the library. */
int collsim_version_number(void);

/* ---- errors ---------------------------------------------------------------- */

/* The statuses (the same numbers as the library's own cs_status_t; the
 * command line maps them to its exit statuses, docs/cli.md). */
typedef enum collsim_status {
    COLLSIM_OK = 0,
    COLLSIM_ERR_USAGE = 1,     /* a bad key, value or spec */
    COLLSIM_ERR_PARSE = 2,     /* malformed input, with file:line */
    COLLSIM_ERR_IO = 3,        /* a file could not be opened, read or written */
    COLLSIM_ERR_NOMEM = 4,     /* a size beyond a documented limit (docs/limits.md) */
    COLLSIM_ERR_RANGE = 5,     /* a value outside what the model accepts */
    COLLSIM_ERR_DEADLOCK = 6,  /* the program can never finish */
    COLLSIM_ERR_RUNTIME = 7,   /* the model found an illegal situation while running */
    COLLSIM_ERR_VALIDATE = 8,  /* not returned by collsim_run: see collsim_result_validated */
    COLLSIM_ERR_INTERNAL = 9,  /* a bug in collsim: please report it */
    COLLSIM_ERR_CANCELLED = 10,/* stopped through collsim_request_set_cancel's flag */
    COLLSIM_ERR_OOM = 11       /* out of memory where it can be reported */
} collsim_status;

#define COLLSIM_MESSAGE_MAX 1024

/* A caller-owned error: code (a collsim_status) and a message without a
 * trailing newline, the text the command line prints after "collsim: ". */
typedef struct collsim_error {
    int code;
    char message[COLLSIM_MESSAGE_MAX];
} collsim_error;

/* "ok", "usage", "deadlock", ...: a short name for a status. */
const char *collsim_status_name(int code);

/* Frees what the library returned as a malloc'ed buffer (collsim_*_json,
 * collsim_list_*, collsim_parse_sizes). */
void collsim_free(void *p);

/* Releases the process-wide caches of the libraries collsim draws figures
 * with (fontconfig's, filled when a heatmap has text), so that a leak
 * checker finds none at exit.  Optional: call it last, when no other
 * thread uses collsim (the caches are shared; a later figure refills
 * them). */
void collsim_cleanup(void);

/* ---- machines ---------------------------------------------------------------- */

typedef struct collsim_machine collsim_machine;

/* Opens "type[:key=value,...]" (`collsim list machines`).  Errors name the
 * spec key. */
int collsim_machine_open(const char *spec, collsim_machine **out, collsim_error *err);
void collsim_machine_close(collsim_machine *m); /* accepts NULL */

/* The normalised spec (every key with its value), the type's name, the
 * nodes and directed channels, and the length of one tick in seconds. */
const char *collsim_machine_spec(const collsim_machine *m);
const char *collsim_machine_type(const collsim_machine *m);
int collsim_machine_nodes(const collsim_machine *m);
int collsim_machine_channels(const collsim_machine *m);
double collsim_machine_tick_seconds(const collsim_machine *m);

/* The short description `collsim compare` and the figure titles use
 * ("alphabeta torus 8×8", "cell eib of 24 nodes"; UTF-8), and a node's
 * label as the heatmaps and compare's busiest link write it ("BIF.0",
 * "17").  Both copy the text to buf as snprintf does (cut to len - 1 bytes,
 * NUL-terminated; buf may be NULL when len is 0) and return its whole
 * length; collsim_machine_node_name returns -1 (buf "") for a node outside
 * 0..nodes-1. */
int collsim_machine_name(const collsim_machine *m, char *buf, size_t len);
int collsim_machine_node_name(const collsim_machine *m, int node, char *buf, size_t len);

/* ---- requests ---------------------------------------------------------------- */

typedef struct collsim_request collsim_request;

/* An empty request (packet mode, the default queue); NULL only when out of
 * memory. */
collsim_request *collsim_request_new(void);
void collsim_request_free(collsim_request *r); /* accepts NULL */

/* Sets one key from its text; values are copied.  The keys are the options
 * of `collsim run` and `collsim replay`, with the same syntax and messages:
 *
 *   machine    a spec (ignored by collsim_run_on, which is given a machine)
 *   coll algo bytes root ranks order opt validate windowed whole
 *              a collective of the suite (opt is repeatable: KEY=VALUE);
 *              it runs windowed wherever the run allows it, `whole` builds
 *              the whole program first (`run --whole`), `windowed` makes a
 *              window required
 *   program    a GOAL file to run instead of a collective
 *   trace      a trace to replay instead (GOAL or SimGrid TI; `collsim replay`)
 *   format map algo-for flops skip-unknown comm-group
 *              how the trace is read and placed (algo-for is repeatable;
 *              format goal, ti, chakra or auto; skip-unknown 1/0 and
 *              comm-group FILE for Chakra traces, docs/chakra.md)
 *   mode       packet or fluid          queue   an event queue kind
 *   force      no work limit (docs/limits.md); value ignored
 *   record     "timeline": keep every message for collsim_result_timeline;
 *              "window:T0:T1": channel records of that window for heatmaps
 *              (ticks or times with a unit; either may be left out);
 *              "none" clears both
 *   scale      collsim_result_heatmap's colour range LO:HI in the metric's
 *              units (util, stall: %; bytes: a size; k: messages), as --scale
 *   size       its size: column, page or WxH (3.5x3in, 1600x1200), as --size
 *   iterations warmup between loop
 *              a benchmark loop (docs/loops.md): iterations N or "default"
 *              (nccl-tests' 5 + 20), warmup W, between none | barrier |
 *              barrier:ALGO, loop nccl-tests | osu
 *
 * A flag (validate, windowed, whole, force) is set by any value but "0";
 * "0" clears it (windowed and whole: back to the default).
 * COLLSIM_ERR_USAGE names the key for an unknown key or a bad value; the
 * request is then unchanged.  Which keys go together is checked
 * by collsim_run, with the command line's messages. */
int collsim_request_set(collsim_request *r, const char *key, const char *value,
                        collsim_error *err);

/* A flag the run polls every 65,536 events: when another thread (or a
 * signal handler) sets *flag to non-zero, the run stops with
 * COLLSIM_ERR_CANCELLED.  NULL: none. */
void collsim_request_set_cancel(collsim_request *r, volatile int *flag);

/* ---- running ---------------------------------------------------------------- */

typedef struct collsim_result collsim_result;

/* Opens the request's machine, builds the program and runs it.  On success
 * *out is a result to free with collsim_result_free.  A deadlock or another
 * error of the run itself returns its status and still sets *out when what
 * happened until then can be read (finish time, per-rank times, channels);
 * otherwise *out is NULL.  A run whose validation fails is a success with
 * collsim_result_validated -1. */
int collsim_run(const collsim_request *r, collsim_result **out, collsim_error *err);
/* The same on a machine already open (the request's `machine` is ignored):
 * many runs on one machine pay for building it once.  The machine must
 * outlive the result and serve one run at a time. */
int collsim_run_on(collsim_machine *m, const collsim_request *r, collsim_result **out,
                   collsim_error *err);
void collsim_result_free(collsim_result *res); /* accepts NULL */

/* ---- results ---------------------------------------------------------------- */

/* The finish time (the last op's completion) in ticks and in seconds. */
int64_t collsim_result_ticks(const collsim_result *res);
double collsim_result_seconds(const collsim_result *res);
/* 1 checked and right, 0 not checked (no validate), -1 checked and wrong. */
int collsim_result_validated(const collsim_result *res);
/* Events the simulation processed and network messages it moved. */
uint64_t collsim_result_events(const collsim_result *res);
int64_t collsim_result_messages(const collsim_result *res);
/* The machine the result ran on (owned by the result or by the caller of
 * collsim_run_on). */
const collsim_machine *collsim_result_machine(const collsim_result *res);

/* Ranks, and each rank's finish time in ticks (its last op; 0 for a rank
 * without ops).  collsim_result_rank_ticks copies min(n, ranks) values to
 * out and returns how many it copied. */
int collsim_result_ranks(const collsim_result *res);
int collsim_result_rank_ticks(const collsim_result *res, int64_t *out, int n);

/* One directed channel's totals over the run (docs/json.md "channels"). */
typedef struct collsim_channel {
    int src, dst;          /* node ids */
    int64_t bytes;         /* payload bytes that crossed it */
    int64_t units;         /* packets (packet mode) or flows (fluid mode) */
    int64_t busy_ticks;    /* ticks spent transmitting */
    int64_t stall_ticks;   /* ticks with data waiting but no buffer downstream */
    int32_t peak_k;        /* the most messages wanting it at one time */
    double utilisation;    /* busy_ticks / finish ticks (0 for an empty run) */
} collsim_channel;

/* Channels of the machine (collsim_machine_channels); copies the records of
 * channels 0..min(n, channels)-1 to out and returns how many it copied. */
int collsim_result_channels(const collsim_result *res);
int collsim_result_channel_records(const collsim_result *res, collsim_channel *out, int n);

/* A benchmark loop's times in ticks (docs/loops.md, the JSON "loop"
 * object): nccl-tests' average (the timed loop / iterations), the timed
 * loop, the timed iterations' own mean, minimum and maximum, and the first
 * (cold) iteration. */
typedef struct collsim_loop {
    int64_t iterations, warmup;
    double avg_ticks;
    int64_t timed_ticks;
    double iteration_avg_ticks;
    int64_t iteration_min_ticks, iteration_max_ticks;
    int64_t first_ticks;
} collsim_loop;

/* 1 with *out filled when the run was a loop, else 0 (*out zeroed). */
int collsim_result_loop(const collsim_result *res, collsim_loop *out);
/* Each iteration's start and end ticks (warm-up first): copies
 * min(n, warmup + iterations) of them and returns how many (0: no loop). */
int collsim_result_loop_times(const collsim_result *res, int64_t *start, int64_t *end, int n);

/* ---- outputs ---------------------------------------------------------------- */

#define COLLSIM_NO_TIMING 1 /* wall-clock fields written as 0 (`--no-timing`) */

/* The JSON `collsim run --json` writes for the same request (docs/json.md),
 * NUL-terminated in a buffer to release with collsim_free; *len (when not
 * NULL) is its length without the NUL. */
int collsim_result_json(const collsim_result *res, int flags, char **out, size_t *len,
                        collsim_error *err);
/* The same JSON to a file, written whole or not at all. */
int collsim_result_write_json(const collsim_result *res, int flags, const char *path,
                              collsim_error *err);
/* The heatmap of `collsim run --heatmap PATH --metric METRIC` (.png, .svg,
 * .pdf; metric util, bytes, stall or k; NULL: util), of the whole run or of
 * the request's record window. */
int collsim_result_heatmap(const collsim_result *res, const char *path, const char *metric,
                           collsim_error *err);
/* The same with this figure's colour range and size, in the syntax and
 * with the messages of `--scale LO:HI` (the metric's units: util and stall
 * in %, bytes a size, k messages) and `--size` (column, page, WxH); NULL
 * takes the request's `scale` / `size` key (none: the defaults).  Errors
 * name --scale or --size; nothing is written then. */
int collsim_result_heatmap_style(const collsim_result *res, const char *path, const char *metric,
                                 const char *scale, const char *size, collsim_error *err);
/* The Chrome trace of `--timeline PATH`; needs record=timeline. */
int collsim_result_timeline(const collsim_result *res, const char *path, collsim_error *err);

/* ---- what there is ------------------------------------------------------------- */

/* The machine types and the algorithms, as JSON (an array of objects: for
 * machines name, summary, usage (the spec form with the keys' defaults),
 * example (a full spec), keys (their names) and presets ({name, keys});
 * for algorithms collective, name, default (the collective's default
 * algorithm), options (their text), keys (their names), source, summary),
 * in a buffer to release with collsim_free. */
int collsim_list_machines(char **out, collsim_error *err);
int collsim_list_algorithms(char **out, collsim_error *err);

/* Sizes in the syntax of `collsim sweep --bytes` ("4,64,1KiB",
 * "8..1MiB:x2", "1KiB..8KiB:+1KiB"): *out (release with collsim_free)
 * holds *n sizes in bytes. */
int collsim_parse_sizes(const char *text, int64_t **out, int *n, collsim_error *err);

#ifdef __cplusplus
}
#endif

#endif
