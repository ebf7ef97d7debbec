/*
 * window.c - a collective's program built while it runs (issues 17, 34):
 * the suite's algorithms, unchanged, as program generators
 * (core/progen.h).
 *
 * An algorithm is imperative code that emits a whole program (coll.h); to
 * build it a window at a time without rewriting 62 algorithms as
 * resumable state machines, the algorithm runs as a coroutine: on a stack
 * of its own (mmap'd, 8 MiB like a thread's, touched only as deep as the
 * algorithm goes), entered and left with glibc's makecontext/getcontext/setcontext
 * on the executor's thread.  The executor resumes it when it must start an op
 * that is not closed yet; the builder yields at the first wait after which
 * that op is closed and a batch of ops is built.  One thread, one side at
 * a time: the run is as deterministic as a materialised one, and a
 * hand-over is two register swaps (and a signal-mask call), where issue
 * 17's builder thread took a mutex, a condition variable and two thread
 * wake-ups, and ran on another core's cache.
 *
 * The builder closes ops rank by rank (coll.c, cs_coll_builder_watch):
 * algorithms that emit step by step over all ranks (rings, recursive
 * doubling, pipelines) run in a window of a few steps; one that emits rank
 * after rank is built almost whole before its first op starts, because the
 * executor needs every op that is ready at time 0 (the last rank's first
 * ops) before it begins.  Either way the times are those of the whole
 * program.
 *
 * cs_coll_scan runs an algorithm once more without running its program
 * (--validate's first pass on a windowed run): straight through on the
 * caller's stack, a batch shown to the caller and given back at a time.
 *
 * ASan follows a stack switch only when told (its fake stacks and
 * use-after-return checks): the switches are announced to it in builds
 * with the address sanitizer.
 */
#include "coll/coll.h"
#include "coll/coll_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/progen.h"

#if defined(__SANITIZE_ADDRESS__)
#define WINDOW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WINDOW_ASAN 1
#endif
#endif
#ifdef WINDOW_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

/* Ops built beyond what the executor asked for, so that hand-overs stay
 * rare: at 2^16, a P = 4,096 ring allreduce of 8.4 * 10^7 ops hands over
 * about 1,300 times. */
#define WINDOW_BATCH_DEFAULT (1 << 16)
/* The builder's stack: a thread's default.  The algorithms recurse at
 * most over a tree's depth; the pages are touched only as deep as they go. */
#define WINDOW_STACK_BYTES ((size_t)8 << 20)

typedef struct window {
    cs_progen_t g;               /* first: the executor's view */
    const cs_coll_algo_t *algo;
    cs_coll_args_t args;
    cs_coll_builder_t *b;
    int32_t *closed_below;
    ucontext_t run_ctx, gen_ctx; /* the executor's side, the builder's */
    char *stack;                 /* mapping: a guard page, then the stack */
    size_t stack_len, page;
    int started;
    int32_t want;                /* advance's request */
    int32_t resumed_at;          /* ops when the builder got the turn */
    int32_t batch;               /* ops to build beyond the request */
    int stopping;                /* destroy: build on without pausing */
    int rc;
    cs_error_t err;
#ifdef WINDOW_ASAN
    void *fake_stack;            /* the side that switched away keeps its own */
    const void *run_bottom;      /* the executor's stack, learnt at the first switch */
    size_t run_size;
#endif
} window_t;

/* Saves the running side in `from` and resumes `to`; returns when `from`
 * is resumed.  getcontext + setcontext rather than swapcontext, which is
 * the same thing in one call but which ASan intercepts with a warning on
 * standard error (every error message of a sanitized build would change);
 * the switches are announced to ASan below instead. */
static void swap_to(ucontext_t *from, ucontext_t *to)
{
    volatile int resumed = 0;
    getcontext(from);
    if (!resumed) {
        resumed = 1;
        setcontext(to);
    }
}

/* Switches from the executor to the builder (to_gen) or back, telling
 * ASan which stack runs next. */
static void switch_to(window_t *w, int to_gen)
{
#ifdef WINDOW_ASAN
    void *fake = NULL;
    if (to_gen)
        __sanitizer_start_switch_fiber(&fake, w->stack + w->page, w->stack_len - w->page);
    else
        __sanitizer_start_switch_fiber(&fake, w->run_bottom, w->run_size);
    swap_to(to_gen ? &w->run_ctx : &w->gen_ctx, to_gen ? &w->gen_ctx : &w->run_ctx);
    /* back on the side that switched away */
    if (to_gen)
        __sanitizer_finish_switch_fiber(fake, NULL, NULL);
    else
        __sanitizer_finish_switch_fiber(fake, &w->run_bottom, &w->run_size);
#else
    swap_to(to_gen ? &w->run_ctx : &w->gen_ctx, to_gen ? &w->gen_ctx : &w->run_ctx);
#endif
}

/* Is the executor's request met?  (See cs_progen_ops_t.advance.) */
static int satisfied(const window_t *w)
{
    if (w->want == CS_PROGEN_ALL)
        return 0;
    if (w->want < 0)
        return cs_coll_builder_unchained(w->b) == 0;
    /* an op not built yet is not closed (and has no rank to look up) */
    return w->want < cs_program_nops(w->g.prog) &&
           w->want < w->closed_below[cs_program_op(w->g.prog, w->want)->rank];
}

/* The builder's pause point, after every wait. */
static void at_wait(void *ctx)
{
    window_t *w = ctx;
    if (w->stopping || !satisfied(w) ||
        cs_program_nops(w->g.prog) - w->resumed_at < w->batch)
        return;
    switch_to(w, 0);
    w->resumed_at = cs_program_nops(w->g.prog);
}

/* The builder's entry: makecontext passes ints, so the window's address
 * comes in two halves.  Returning resumes run_ctx (uc_link). */
static void builder_main(unsigned int hi, unsigned int lo)
{
    window_t *w = (window_t *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
#ifdef WINDOW_ASAN
    __sanitizer_finish_switch_fiber(NULL, &w->run_bottom, &w->run_size);
#endif
    w->rc = cs_coll_build_run(w->algo, w->b, &w->err);
    if (w->rc) { /* named once, as the request names a whole build's errors */
        char name[128];
        size_t n = (size_t)snprintf(name, sizeof name, "%s/%s: ", cs_coll_name(w->algo->kind),
                                    w->algo->name);
        if (strncmp(w->err.msg, name, n) != 0) /* the program's own errors name it */
            cs_error_prefix(&w->err, "%.*s", (int)(n - 2), name);
    }
    w->g.complete = 1;
#ifdef WINDOW_ASAN
    __sanitizer_start_switch_fiber(NULL, w->run_bottom, w->run_size);
#endif
}

/* Maps the builder's stack (a guard page below it) and prepares its
 * context; nothing runs yet. */
static int start(window_t *w, cs_error_t *err)
{
    uintptr_t addr = (uintptr_t)w;
    long page = sysconf(_SC_PAGESIZE);
    w->page = page > 0 ? (size_t)page : 4096;
    w->stack_len = WINDOW_STACK_BYTES + w->page;
    w->stack = mmap(NULL, w->stack_len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (w->stack == MAP_FAILED) {
        w->stack = NULL;
        return cs_error_set(err, CS_ERR_NOMEM, "cannot map the builder's stack of %zu bytes",
                            w->stack_len);
    }
    mprotect(w->stack, w->page, PROT_NONE); /* an overflow faults, never corrupts */
    if (getcontext(&w->gen_ctx))
        return cs_error_set(err, CS_ERR_INTERNAL, "getcontext failed for the builder");
    w->gen_ctx.uc_stack.ss_sp = w->stack + w->page;
    w->gen_ctx.uc_stack.ss_size = w->stack_len - w->page;
    w->gen_ctx.uc_link = &w->run_ctx;
    makecontext(&w->gen_ctx, (void (*)(void))builder_main, 2, (unsigned int)(addr >> 16 >> 16),
                (unsigned int)(addr & 0xffffffffu));
    w->started = 1;
    return CS_OK;
}

static int window_advance(cs_progen_t *g, int32_t op, cs_error_t *err)
{
    window_t *w = (window_t *)g;
    int rc;
    if (!g->complete) {
        w->want = op;
        w->resumed_at = cs_program_nops(g->prog);
        if (!w->started && (rc = start(w, err)))
            return rc;
        switch_to(w, 1);
    }
    if (g->complete && w->rc) {
        *err = w->err;
        return w->rc;
    }
    return CS_OK;
}

static void window_destroy(cs_progen_t *g)
{
    window_t *w = (window_t *)g;
    if (w->started && !g->complete) {
        /* let the algorithm run out: every op it still adds fails at once,
         * so nothing more is built, and its own memory is freed */
        w->stopping = 1;
        cs_program_set_limits(g->prog, cs_program_nops(g->prog), -1);
        switch_to(w, 1);
    }
    if (w->stack)
        munmap(w->stack, w->stack_len);
    cs_coll_builder_free(w->b);
    cs_program_free(g->prog);
    free(w->closed_below);
    free(w);
}

static const cs_progen_ops_t window_ops = {window_advance, window_destroy};

int cs_coll_generate(const cs_coll_algo_t *algo, const cs_coll_args_t *a, int32_t batch,
                     cs_progen_t **out, cs_error_t *err)
{
    window_t *w;
    int rc;
    *out = NULL;
    if ((rc = cs_coll_build_check(a, err)) ||
        (rc = cs_coll_check_count(algo, a, CS_PROGRAM_MAX_WINDOW_OPS, 1, err)))
        return rc;
    if (cs_coll_extra_ranks(algo, a))
        return cs_error_set(err, CS_ERR_USAGE, "%s/%s runs on the network's switches as well "
                            "as its ranks: it has no windowed build (run it whole, "
                            "--whole)", cs_coll_name(algo->kind), algo->name);
    w = cs_calloc(1, sizeof *w);
    w->algo = algo;
    w->args = *a;
    w->batch = batch > 0 ? batch : WINDOW_BATCH_DEFAULT;
    w->g.ops = &window_ops;
    w->g.prog = cs_program_new(a->P);
    cs_program_set_windowed(w->g.prog);
    if (!a->no_data) /* --validate reads them as the run goes */
        cs_program_keep_data(w->g.prog);
    w->closed_below = cs_calloc((size_t)a->P, sizeof *w->closed_below);
    w->g.closed_below = w->closed_below;
    w->b = cs_coll_builder_new(w->g.prog, &w->args);
    cs_coll_builder_watch(w->b, w->closed_below, at_wait, w);
    *out = &w->g;
    return CS_OK;
}

void cs_coll_generate_on_stream(cs_progen_t *g, void (*fn)(void *ctx, int32_t op, int32_t pred),
                                void *ctx)
{
    cs_coll_builder_on_stream(((window_t *)g)->b, fn, ctx);
}

/* ---- a pass over the whole program, a window at a time ------------------ */

/* cs_coll_scan's state: the builder runs straight through on the caller's
 * stack (nothing runs the ops), and every batch of ops is shown to the
 * caller and then given back. */
typedef struct scan {
    cs_program_t *p;
    int32_t *closed_below;
    int P;
    int32_t shown;      /* ops below were shown */
    int32_t release_at; /* the closed frontier at the previous batch */
    int32_t batch;
    int stop;           /* visit's code: the algorithm runs out */
    cs_coll_scan_fn visit;
    void *ctx;
} scan_t;

static void scan_batch(scan_t *s)
{
    const cs_wdep_t *d;
    int64_t n = cs_program_take_deps(s->p, &d);
    int32_t end = cs_program_nops(s->p), lo = end;
    if ((s->stop = s->visit(s->ctx, s->p, s->shown, end, d, n))) {
        /* every op the algorithm still adds fails at once */
        cs_program_set_limits(s->p, end, -1);
        return;
    }
    s->shown = end;
    /* give back what was closed a batch ago: a dependency on a closed op
     * breaks the window's contract, which the run reports, but one batch
     * of slack keeps such an algorithm from reading released ops here */
    cs_program_release(s->p, s->release_at);
    for (int r = 0; r < s->P; r++)
        lo = s->closed_below[r] < lo ? s->closed_below[r] : lo;
    s->release_at = lo;
}

static void scan_at_wait(void *ctx)
{
    scan_t *s = ctx;
    if (!s->stop && cs_program_nops(s->p) - s->shown >= s->batch)
        scan_batch(s);
}

int cs_coll_scan(const cs_coll_algo_t *algo, const cs_coll_args_t *a, cs_coll_scan_fn visit,
                 void *ctx, cs_error_t *err)
{
    scan_t s;
    cs_coll_builder_t *b;
    int rc;
    if ((rc = cs_coll_build_check(a, err)))
        return rc;
    if (cs_coll_extra_ranks(algo, a))
        return cs_error_set(err, CS_ERR_USAGE, "%s/%s runs on the network's switches as well "
                            "as its ranks: it has no windowed build", cs_coll_name(algo->kind),
                            algo->name);
    memset(&s, 0, sizeof s);
    s.p = cs_program_new(a->P);
    cs_program_set_windowed(s.p);
    if (!a->no_data)
        cs_program_keep_data(s.p);
    s.P = a->P;
    s.batch = WINDOW_BATCH_DEFAULT;
    s.visit = visit;
    s.ctx = ctx;
    s.closed_below = cs_calloc((size_t)a->P, sizeof *s.closed_below);
    b = cs_coll_builder_new(s.p, a);
    cs_coll_builder_watch(b, s.closed_below, scan_at_wait, &s);
    rc = cs_coll_build_run(algo, b, err);
    if (rc == CS_OK && !s.stop)
        scan_batch(&s);
    cs_coll_builder_free(b);
    cs_program_free(s.p);
    free(s.closed_below);
    return s.stop ? s.stop : rc;
}
