/*
 * test_edges.c - issue 19's edges of the number range, end to end
 * (docs/limits.md): every machine x its modes x the suite's collectives at
 * the largest accepted size (runs; the finish is at least the time the
 * bytes need on the fastest link) and one past it (refused with exit 2 and
 * the limit named); GOAL and TI programs whose compute times reach the
 * clock's maximum (a clean error naming the op) or stay just below it (the
 * exact finish), on every machine and mode (D9); the work estimate of
 * packet mode and --force; CNS-1 and the Cell one unit past their limit
 * with --force, and the Cell engine's cost linear in the bytes (D10);
 * --mode fluid on a machine without it (D8).
 *
 * The largest accepted size per machine comes from the documented rules,
 * by hand, not from the code under test: 2^48 bytes per op for the channel
 * engine in fluid mode; for a machine's own engine, fewer than 2^31 - 1
 * units of its unit (Cerebras 4096 B, Groq 320 B, LogGP S = 65535 B).  For
 * scatter and gather the root's largest op carries P/2 blocks (binomial).
 */
#include <math.h>
#include <stdint.h>
#include <sys/resource.h>

#include "cli_util.h"

TestSuite(edges, .init = cli_setup, .fini = cli_teardown, .timeout = 120);

#define TICK_LIMIT (INT64_C(1) << 62)
#define BYTES_MAX (INT64_C(1) << 48)

static double json_num(const char *json, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(json, pat);
    cr_assert_not_null(p, "no %s in:\n%.400s", key, json);
    return strtod(p + strlen(pat), NULL);
}

typedef struct edge_machine {
    const char *spec;
    const char *mode;
    int P;            /* ranks (every node) */
    int64_t largest;  /* the largest accepted --bytes of one op */
    double bw;        /* bytes per second of the fastest way out of a node */
} edge_machine_t;

/* bandwidths from the machines' documented defaults: alpha-beta beta = 1 ns
 * per byte; net 100 Gb/s links; Cerebras one 4-byte wavelet per 1.1 GHz
 * cycle; a Groq TSP's 11 links of 12.5 GB/s; LogGP G = 6 ns per byte */
static const edge_machine_t machines[] = {
    {"alphabeta:topo=ring,p=8", "fluid", 8, BYTES_MAX, 1e9},
    {"net:gen=torus,dims=4", "fluid", 4, BYTES_MAX, 12.5e9},
    {"cerebras:rows=4,cols=4", "packet", 16, INT64_C(2147483647) * 4096 - 1, 4.4e9},
    {"groq:nodes=1", "packet", 8, INT64_C(2147483647) * 320 - 1, 11 * 12.5e9},
    {"loggp:p=8", "packet", 8, INT64_C(2147483647) * 65535 - 1, 1e9 / 6},
};

static const char *colls[] = {"broadcast", "reduce", "allreduce", "allgather", "reduce-scatter",
                              "alltoall", "scatter", "gather"};

/* the --bytes whose largest op is `op` bytes */
static int64_t coll_bytes(const char *coll, int P, int64_t op)
{
    if (!strcmp(coll, "scatter") || !strcmp(coll, "gather"))
        return op / (P / 2);
    return op;
}

Test(edges, every_machine_and_collective_at_the_largest_size_and_one_past)
{
    for (size_t m = 0; m < sizeof machines / sizeof machines[0]; m++) {
        const edge_machine_t *mc = &machines[m];
        for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
            int64_t b = coll_bytes(colls[c], mc->P, mc->largest);
            char text[32], past[32];
            snprintf(text, sizeof text, "%lld", (long long)b);
            /* an all-reduce's ops carry shares of --bytes: past its
             * largest op, --bytes itself is the limit */
            snprintf(past, sizeof past, "%lld",
                     (long long)(!strcmp(colls[c], "allreduce") ? BYTES_MAX + 1 : b + 1));
            cli_out_t o = RUN("run", "--machine", mc->spec, "--mode", mc->mode, "--coll",
                              colls[c], "--bytes", text, "--json", "-", "--no-timing");
            cr_assert_eq(o.status, 0, "%s %s %s: %s", mc->spec, colls[c], text, o.err);
            double t = json_num(o.out, "finish_seconds");
            /* the root's bytes (or a rank's share) must cross a link */
            int spread = !strcmp(colls[c], "allreduce") || !strcmp(colls[c], "allgather") ||
                         !strcmp(colls[c], "reduce-scatter") || !strcmp(colls[c], "alltoall");
            double lower = (double)b / (spread ? mc->P : 1) / mc->bw;
            cr_expect_geq(t, lower * 0.999, "%s %s %s: finish %g s below the bound %g s",
                          mc->spec, colls[c], text, t, lower);
            cr_expect_leq(json_num(o.out, "finish_ticks"), (double)TICK_LIMIT);
            cli_out_free(&o);
            o = RUN("run", "--machine", mc->spec, "--mode", mc->mode, "--coll", colls[c],
                    "--bytes", past);
            cr_expect_eq(o.status, 2, "%s %s %s: status %d", mc->spec, colls[c], past, o.status);
            cr_expect(strstr(o.err, "2^48") || strstr(o.err, "2^31"),
                      "%s %s %s: the message names no limit: %s", mc->spec, colls[c], past, o.err);
            cli_out_free(&o);
        }
        cli_out_t o = RUN("run", "--machine", mc->spec, "--mode", mc->mode, "--coll", "barrier");
        cr_expect_eq(o.status, 0, "%s barrier: %s", mc->spec, o.err);
        cli_out_free(&o);
    }
}

/* The reproductions: a size far above every limit is refused on
 * every machine (it was a wrong time or a false deadlock with exit 0). */
Test(edges, int64_max_bytes_refused_everywhere)
{
    const char *specs[] = {"cns1:rings=1", "cell:chips=1", "cerebras:rows=2,cols=2",
                           "groq:nodes=1", "loggp:p=4", "alphabeta:topo=ring,p=4",
                           "net:gen=torus,dims=4"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        cli_out_t o = RUN("run", "--machine", specs[i], "--coll", "broadcast", "--bytes",
                          "9223372036854775807");
        cr_expect_eq(o.status, 2, "%s: status %d: %s", specs[i], o.status, o.err);
        ASSERT_HAS(o.err, "the maximum of 281474976710656 bytes (2^48");
        cli_out_free(&o);
    }
}

/* Packet mode: the work estimate refuses a run of more than 2^26 packets
 * (a binomial broadcast on 8 ranks sends 7 messages of ceil(B / unit)
 * packets), names the limit and the ways out; --force lifts it. */
Test(edges, work_estimate_refuses_above_the_limit)
{
    /* alpha-beta 4 KiB packets: 7 * 9586981 packets > 2^26 = 67108864 */
    cli_out_t o = RUN("run", "--machine", "alphabeta:topo=ring,p=8", "--coll", "broadcast",
                      "--bytes", "39268274176");
    cr_expect_eq(o.status, 2, "%s", o.err);
    ASSERT_HAS(o.err, "work limit");
    ASSERT_HAS(o.err, "--mode fluid");
    ASSERT_HAS(o.err, "--force");
    cli_out_free(&o);
    /* the 1 TiB all-reduce on a 4-rank ring: refused at once in
     * packet mode, answered in fluid mode */
    o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--coll", "allreduce", "--bytes",
            "1TiB");
    cr_expect_eq(o.status, 2, "%s", o.err);
    cli_out_free(&o);
    o = RUN("run", "--machine", "alphabeta:topo=ring,p=4", "--coll", "allreduce", "--bytes",
            "1TiB", "--mode", "fluid");
    cr_expect_eq(o.status, 0, "%s", o.err);
    cli_out_free(&o);
    /* CNS-1 (128-byte NI messages) and Cell (128-byte EIB packets) */
    const char *own[] = {"cns1:rings=1", "cell:chips=1"};
    for (int i = 0; i < 2; i++) {
        o = RUN("run", "--machine", own[i], "--coll", "broadcast", "--bytes", "4GiB");
        cr_expect_eq(o.status, 2, "%s: %s", own[i], o.err);
        ASSERT_HAS(o.err, "packets of 128 bytes");
        cli_out_free(&o);
    }
    /* below the limit nothing changes; --force is accepted by every runner */
    o = RUN("run", "--machine", "alphabeta:topo=ring,p=8", "--coll", "broadcast", "--bytes",
            "1MiB", "--force");
    cr_expect_eq(o.status, 0, "%s", o.err);
    cli_out_free(&o);
    o = RUN("sweep", "--machine", "alphabeta:topo=ring,p=8", "--coll", "broadcast", "--algos",
            "binomial", "--bytes", "1KiB,1TiB");
    cr_expect_eq(o.status, 2, "%s", o.err);
    ASSERT_HAS(o.err, "work limit");
    cli_out_free(&o);
}

/* D10 near the unit limits of the two own engines with per-packet events
 * (CNS-1 counts 128-byte NI messages, 4 vlr; the Cell 16 KiB DMA
 * commands): --force lifts the work limit, never these.  One unit past,
 * (2^31 - 1) * unit bytes, is refused naming 2^31 with --force as without,
 * and fluid mode is refused.  The largest accepted sizes, one byte less,
 * are run in test_outputs.c: they take hours (CNS-1) or more memory than a
 * test may take (the Cell), so there they are stopped by a signal or a
 * memory limit. */
Test(edges, own_engines_one_unit_past_the_limit_with_force)
{
    const struct {
        const char *spec, *past, *unit;
    } own[] = {{"cns1:rings=1", "274877906816", "of 128 bytes"},
               {"cell:chips=1", "35184372072448", "of 16384 bytes"}};
    for (int i = 0; i < 2; i++) {
        cli_out_t o = RUN("run", "--machine", own[i].spec, "--coll", "broadcast", "--bytes",
                          own[i].past, "--force");
        cr_expect_eq(o.status, 2, "%s: status %d: %s", own[i].spec, o.status, o.err);
        ASSERT_HAS(o.err, "has 2^31 or more units");
        ASSERT_HAS(o.err, own[i].unit);
        cli_out_free(&o);
        o = RUN("run", "--machine", own[i].spec, "--coll", "broadcast", "--bytes", "1MiB",
                "--force", "--mode", "fluid");
        cr_expect_eq(o.status, 2, "%s: status %d: %s", own[i].spec, o.status, o.err);
        ASSERT_HAS(o.err, "has no fluid mode");
        cli_out_free(&o);
    }
}

/* The Cell's arbiter tried every waiting leg on each pass, and a message
 * has a leg per 16 KiB command: runs were quadratic in the message size
 * (a 16 MiB broadcast 75 s, 1 GiB, below the work limit, days).  A linear
 * engine spends about 16 times the CPU on 16 times the bytes; the old one
 * spent over 100 times. */
static double child_cpu_of(const char *bytes)
{
    struct rusage before, after;
    getrusage(RUSAGE_CHILDREN, &before);
    cli_out_t o = RUN("run", "--machine", "cell:chips=1", "--coll", "broadcast", "--bytes", bytes,
                      "--no-timing");
    getrusage(RUSAGE_CHILDREN, &after);
    cr_assert_eq(o.status, 0, "%s", o.err);
    cli_out_free(&o);
    return (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
           1e-6 * (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec);
}

Test(edges, cell_engine_linear_in_the_message_size)
{
    double small = child_cpu_of("256KiB"), large = child_cpu_of("4MiB");
    /* the process's start-up is in both: it only lowers the ratio */
    cr_expect_lt(large, 48 * (small > 0.01 ? small : 0.01),
                 "256 KiB: %.3f s, 4 MiB: %.3f s of CPU", small, large);
}

/* D8: fluid mode on a machine with its own engine is an error, never a
 * packet run reported as fluid. */
Test(edges, fluid_mode_on_an_own_engine_is_an_error)
{
    const char *specs[] = {"cns1:rings=1", "cell:chips=1", "cerebras:rows=2,cols=2",
                           "groq:nodes=1", "loggp:p=4"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        cli_out_t o = RUN("run", "--machine", specs[i], "--coll", "broadcast", "--bytes", "1KiB",
                          "--mode", "fluid");
        cr_expect_eq(o.status, 2, "%s: %s", specs[i], o.err);
        ASSERT_HAS(o.err, "has no fluid mode");
        cli_out_free(&o);
    }
    /* compare's --mode is documented as the channel engines' (its table
     * names no mode): the other rows run their own engine */
    cli_out_t o = RUN("compare", "--coll", "broadcast", "--bytes", "1KiB", "--mode", "fluid",
                      "--machines", "alphabeta:topo=ring,p=4;loggp:p=4");
    cr_expect_eq(o.status, 0, "%s", o.err);
    cr_expect_null(strstr(o.out, "failed"), "%s", o.out);
    cli_out_free(&o);
}

/* D9: compute times at the clock's maximum, on every machine in each of its
 * modes.  A GOAL calc is in ns and a machine counts ticks: ticks per ns is
 * num/den, by hand from the machine's documented tick (1 ns; Groq's 1 ps:
 * 1000; the Cell's 3.2 GHz core cycle: 16/5; Cerebras at its default
 * 1.1 GHz: 11/10), and the JSON must report that tick.  Two dependent calcs
 * whose ns are multiples of den convert exactly: the largest such total,
 * floor(2^62 / num) * den ns, ends at floor(2^62 / num) * num ticks (2^62
 * when num divides it); den ns more is num ticks past 2^62, a clean error
 * naming the rank and the op. */
typedef struct tick_machine {
    const char *spec, *mode;
    int64_t num, den; /* ticks per ns */
} tick_machine_t;

static const tick_machine_t tick_machines[] = {
    {"loggp:p=2", "packet", 1, 1},
    {"alphabeta:topo=ring,p=2,tick=1ns", "packet", 1, 1},
    {"alphabeta:topo=ring,p=2,tick=1ns", "fluid", 1, 1},
    {"net:gen=torus,dims=4,tick=1ns", "packet", 1, 1},
    {"net:gen=torus,dims=4,tick=1ns", "fluid", 1, 1},
    {"cns1:rings=1,cycle=1ns", "packet", 1, 1},
    {"cerebras:rows=1,cols=2,clock=1GHz", "packet", 1, 1},
    {"cerebras:rows=1,cols=2", "packet", 11, 10},
    {"groq:nodes=1", "packet", 1000, 1},
    {"cell:chips=1", "packet", 16, 5},
};
#define NTICK_MACHINES (sizeof tick_machines / sizeof tick_machines[0])

static const char *goal_two_calcs(int64_t a, int64_t b)
{
    static char text[256];
    snprintf(text, sizeof text,
             "num_ranks 1\nrank 0 {\nl1: calc %lld\nl2: calc %lld\nl2 requires l1\n}\n",
             (long long)a, (long long)b);
    return text;
}

static cli_out_t run_program(const tick_machine_t *m, const char *file, int json)
{
    if (json)
        return RUN("run", "--machine", m->spec, "--mode", m->mode, "--program", file, "--json",
                   "-", "--no-timing");
    return RUN("run", "--machine", m->spec, "--mode", m->mode, "--program", file);
}

Test(edges, goal_calcs_at_the_clock_maximum)
{
    for (size_t i = 0; i < NTICK_MACHINES; i++) {
        const tick_machine_t *m = &tick_machines[i];
        int64_t steps = TICK_LIMIT / m->num; /* whole den-ns steps that fit */
        int64_t a = steps / 2 * m->den, b = (steps - steps / 2) * m->den;
        char *ok = cli_write("ok.goal", goal_two_calcs(a, b));
        cli_out_t o = run_program(m, ok, 1);
        cr_assert_eq(o.status, 0, "%s %s: %s", m->spec, m->mode, o.err);
        double tick = 1e-9 * (double)m->den / (double)m->num;
        cr_expect(fabs(json_num(o.out, "tick_seconds") / tick - 1) < 1e-6,
                  "%s: the table's ticks per ns are not the machine's tick", m->spec);
        char want[64];
        snprintf(want, sizeof want, "\"finish_ticks\": %lld,", (long long)(steps * m->num));
        cr_expect(strstr(o.out, want) != NULL, "%s %s: no %s in\n%.600s", m->spec, m->mode, want,
                  o.out);
        cli_out_free(&o);
        free(ok);
        char *over = cli_write("over.goal", goal_two_calcs(a, b + m->den));
        o = run_program(m, over, 0);
        cr_expect_eq(o.status, 2, "%s %s: status %d: %s", m->spec, m->mode, o.status, o.err);
        ASSERT_HAS(o.err, "clock's maximum of 4611686018427387904 ticks");
        ASSERT_HAS(o.err, "rank 0: l2 (line 4)");
        cli_out_free(&o);
        free(over);
        /* the reproduction: two calcs of INT64_MAX (segfault, abort) */
        char *huge = cli_write("huge.goal", goal_two_calcs(INT64_MAX, INT64_MAX));
        o = run_program(m, huge, 0);
        cr_expect_eq(o.status, 2, "%s %s: status %d: %s", m->spec, m->mode, o.status, o.err);
        ASSERT_HAS(o.err, "rank 0: l1 (line 3)");
        cli_out_free(&o);
        free(huge);
    }
}

/* A reduce that streams from a recv and adds a fixed calc of INT64_MAX ns:
 * its fixed part starts once the last byte is reduced, and was added to
 * the clock unchecked (abort, exit 134, on every machine but CNS-1). */
Test(edges, streamed_reduce_with_a_calc_past_the_clock_maximum)
{
    char *f = cli_write("sr.goal", "num_ranks 2\nrank 0 {\ns: send 1b to 1 tag 0\n}\n"
                                   "rank 1 {\nr: recv 1b from 0 tag 0\n"
                                   "a: reduce 1b calc 9223372036854775807\na streams r\n}\n");
    for (size_t i = 0; i < NTICK_MACHINES; i++) {
        const tick_machine_t *m = &tick_machines[i];
        cli_out_t o = run_program(m, f, 0);
        cr_expect_eq(o.status, 2, "%s %s: status %d: %s", m->spec, m->mode, o.status, o.err);
        ASSERT_HAS(o.err, "clock's maximum of 4611686018427387904 ticks");
        /* the op that passed it, not the recv it streams from */
        ASSERT_HAS(o.err, "rank 1: a (line 7): reduce 1b never completed");
        cli_out_free(&o);
    }
    free(f);
}

/* TI durations are in seconds (ns in the program): 2^61 ns twice on a 1 ns
 * LogGP tick ends at 2^62; a second sleep 512 ns longer (the double's step
 * there) passes it; 1e308 and 1e300 are refused at their line.  On every
 * machine and mode, the same two sleeps of the GOAL test's sizes ending 1
 * ms short of the limit run, 1 ms past it end in the error at line 3. */
static char *ti_two_sleeps(const char *name, int64_t a_ns, int64_t b_ns)
{
    char text[256];
    snprintf(text, sizeof text, "0 init\n0 sleep %lld.%09lld\n0 sleep %lld.%09lld\n0 finalize\n",
             (long long)(a_ns / 1000000000), (long long)(a_ns % 1000000000),
             (long long)(b_ns / 1000000000), (long long)(b_ns % 1000000000));
    return cli_write(name, text);
}

Test(edges, ti_computes_at_the_clock_maximum)
{
    char *ok = cli_write("ok.ti", "0 init\n0 sleep 2305843009.213693952\n"
                                  "0 sleep 2305843009.213693952\n0 finalize\n");
    cli_out_t o = RUN("replay", "--machine", "loggp:p=1", ok, "--json", "-", "--no-timing");
    cr_assert_eq(o.status, 0, "%s", o.err);
    ASSERT_HAS(o.out, "\"finish_ticks\": 4611686018427387904,");
    cli_out_free(&o);
    char *over = cli_write("over.ti", "0 init\n0 sleep 2305843009.213693952\n"
                                      "0 sleep 2305843009.2136945\n0 finalize\n");
    o = RUN("replay", "--machine", "loggp:p=1", over);
    cr_expect_eq(o.status, 2, "%s", o.err);
    ASSERT_HAS(o.err, "clock's maximum");
    ASSERT_HAS(o.err, "rank 0: line 3");
    cli_out_free(&o);
    char *c = cli_write("c.ti", "0 init\n0 compute 1e308\n0 compute 1e308\n0 finalize\n");
    o = RUN("replay", "--machine", "loggp:p=1", c);
    cr_expect_eq(o.status, 2, "%s", o.err);
    ASSERT_HAS(o.err, "c.ti:2: flops '1e308'");
    cli_out_free(&o);
    char *s = cli_write("s.ti", "0 init\n0 sleep 1e300\n0 sleep 1e300\n0 finalize\n");
    o = RUN("replay", "--machine", "alphabeta:topo=ring,p=2", s);
    cr_expect_eq(o.status, 2, "%s", o.err);
    ASSERT_HAS(o.err, "s.ti:2: duration '1e300'");
    cli_out_free(&o);
    free(ok);
    free(over);
    free(c);
    free(s);
    for (size_t i = 0; i < NTICK_MACHINES; i++) {
        const tick_machine_t *m = &tick_machines[i];
        int64_t total = TICK_LIMIT / m->num * m->den; /* ns, as in the GOAL test */
        int64_t a = total / 2, ms = 1000000;
        char *near = ti_two_sleeps("near.ti", a, total - a - ms);
        o = RUN("replay", "--machine", m->spec, "--mode", m->mode, near, "--json", "-",
                "--no-timing");
        cr_expect_eq(o.status, 0, "%s %s: %s", m->spec, m->mode, o.err);
        if (o.status == 0) {
            /* 1 ms short, give or take the seconds' double step (512 ns) */
            double t = json_num(o.out, "finish_ticks"), lim = (double)TICK_LIMIT;
            double short_ = (double)(ms + 1024) * (double)m->num / (double)m->den;
            cr_expect(t <= lim && t >= lim - short_ - 2048, "%s %s: finish %.17g", m->spec,
                      m->mode, t);
        }
        cli_out_free(&o);
        free(near);
        char *past = ti_two_sleeps("past.ti", a, total - a + ms);
        o = RUN("replay", "--machine", m->spec, "--mode", m->mode, past);
        cr_expect_eq(o.status, 2, "%s %s: status %d: %s", m->spec, m->mode, o.status, o.err);
        ASSERT_HAS(o.err, "clock's maximum of 4611686018427387904 ticks");
        ASSERT_HAS(o.err, "rank 0: line 3");
        cli_out_free(&o);
        free(past);
    }
}
