/*
 * api_overhead.c - the calling overhead of libcollsim (issue 20): N tiny
 * runs (allreduce of 64 B on alphabeta:topo=ring,p=4, a few dozen events
 * each) through collsim_run_on on one open machine, so that the time is the
 * library's per-call work (request, build, run, result) rather than the
 * simulation's.  Prints runs, wall seconds, runs per second and
 * microseconds per run; `tools/bench api` runs it beside the Python
 * module's same loop.
 *
 *   api_overhead [N]   (default 10000)
 */
#include <collsim/collsim.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_SPEC "alphabeta:topo=ring,p=4"

static double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    collsim_machine *m = NULL;
    collsim_request *r = collsim_request_new();
    collsim_error err;
    int64_t check = -1;
    if (n < 1 || !r) {
        fprintf(stderr, "usage: api_overhead [N >= 1]\n");
        return 2;
    }
    if (collsim_machine_open(BENCH_SPEC, &m, &err) != COLLSIM_OK ||
        collsim_request_set(r, "coll", "allreduce", &err) != COLLSIM_OK ||
        collsim_request_set(r, "bytes", "64", &err) != COLLSIM_OK) {
        fprintf(stderr, "api_overhead: %s\n", err.message);
        return 1;
    }
    double t0 = bench_now();
    for (long i = 0; i < n; i++) {
        collsim_result *res;
        if (collsim_run_on(m, r, &res, &err) != COLLSIM_OK) {
            fprintf(stderr, "api_overhead: run %ld: %s\n", i, err.message);
            return 1;
        }
        /* read the result, as a caller would */
        int64_t t = collsim_result_ticks(res);
        if (check >= 0 && t != check) {
            fprintf(stderr, "api_overhead: run %ld took %lld ticks, not %lld\n", i,
                    (long long)t, (long long)check);
            return 1;
        }
        check = t;
        collsim_result_free(res);
    }
    double wall = bench_now() - t0;
    printf("c: %ld runs of allreduce 64 B on %s in %.3f s: %.0f runs/s, %.1f us per run\n", n,
           BENCH_SPEC, wall, (double)n / wall, 1e6 * wall / (double)n);
    collsim_request_free(r);
    collsim_machine_close(m);
    return 0;
}
