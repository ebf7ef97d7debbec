/*
 * test_nccl_ring.c - NCCL's protocols as a property of a message
 * (core/proto.h, the executor's wire bytes and latency) and NCCL's ring
 * family (src/coll/nccl_ring.c, docs/nccl.md "Protocols" and "Ring").
 *
 * Times are checked against closed forms written out here by hand, on
 * alphabeta:topo=ring with its defaults (alpha 1 us, beta 1 ns a byte,
 * tick 1 ps, reductions free): a message of w wire bytes under a protocol
 * of latency lat costs lat + alpha + beta w, and the schedules of
 * nccl_ring.c put one message after the other on each rank.  The sizes
 * are multiples of 120 and 16 so that LL128's lines and the last loop's
 * 16-byte chunks come out whole.
 */

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "coll/nccl.h"
#include "core/proto.h"
#include "harness.h"

#define PS_PER_US INT64_C(1000000)
#define RING4 "alphabeta:topo=ring,p=4"

static const char *const COLLS[] = {"allreduce", "allgather", "reduce-scatter", "broadcast",
                                    "reduce"};

/* ==== the protocols' arithmetic ============================================= */

Test(proto, wire_bytes_follow_the_line_formats)
{
    cr_expect_eq(cs_proto_wire(CS_PROTO_NONE, 1000), 1000);
    cr_expect_eq(cs_proto_wire(CS_PROTO_SIMPLE, 1000), 1000);
    cr_expect_eq(cs_proto_wire(CS_PROTO_LL, 1000), 2000);
    /* 120 data bytes a 128-byte line; a partial last line is sent whole */
    cr_expect_eq(cs_proto_wire(CS_PROTO_LL128, 7680), 8192);
    cr_expect_eq(cs_proto_wire(CS_PROTO_LL128, 7681), 8320);
    cr_expect_eq(cs_proto_wire(CS_PROTO_LL128, 1), 128);
}

/* The executor converts gates to wire bytes and progress back: exact at
 * both ends, monotonic, and never promising more data than the wire bytes
 * carry. */
Test(proto, gate_and_progress_conversions_are_monotonic_and_exact_at_the_ends)
{
    static const int64_t lens[] = {1, 119, 120, 121, 7680, 1000003};
    for (int p = CS_PROTO_SIMPLE; p < CS_PROTO_COUNT; p++)
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
            int64_t len = lens[i], wire = cs_proto_wire((cs_proto_t)p, len), prev = 0;
            cr_expect_eq(cs_proto_to_wire((cs_proto_t)p, len, len), wire);
            cr_expect_eq(cs_proto_to_wire((cs_proto_t)p, len, 0), 0);
            cr_expect_eq(cs_proto_to_data((cs_proto_t)p, len, wire), len);
            cr_expect_eq(cs_proto_to_data((cs_proto_t)p, len, 0), 0);
            for (int64_t w = 0; w <= wire; w += wire / 97 + 1) {
                int64_t d = cs_proto_to_data((cs_proto_t)p, len, w);
                cr_expect_geq(d, prev, "%s len %lld", cs_proto_name((cs_proto_t)p),
                              (long long)len);
                /* d data bytes need at least d * wire / len wire bytes */
                cr_expect_leq((__int128)d * wire, (__int128)w * len);
                prev = d;
            }
        }
}

Test(proto, latencies_are_nccl_2_30_7_nvlink_ring_hwlat)
{
    cr_expect_float_eq(cs_proto_lat_default(CS_PROTO_LL), 0.6e-6, 1e-12);
    cr_expect_float_eq(cs_proto_lat_default(CS_PROTO_LL128), 1.9e-6, 1e-12);
    cr_expect_float_eq(cs_proto_lat_default(CS_PROTO_SIMPLE), 3.4e-6, 1e-12);
    cr_expect_float_eq(cs_proto_lat_default(CS_PROTO_NONE), 0.0, 1e-12);
}

Test(proto, the_op_stays_24_bytes_and_keeps_its_payload)
{
    cs_program_t *p = cs_program_new(2);
    cr_assert_eq(sizeof(cs_op_t), 24);
    int32_t s = cs_program_send(p, 0, 1, 1000, 0);
    int32_t r = cs_program_recv(p, 1, 0, 1000, 0);
    int32_t c = cs_program_calc(p, 1, 0, 10);
    cs_program_set_proto(p, s, CS_PROTO_LL);
    cs_program_set_proto(p, r, CS_PROTO_LL); /* a recv takes the sender's: ignored */
    cs_program_set_proto(p, c, CS_PROTO_LL);
    cr_expect_eq(cs_program_op(p, s)->proto, CS_PROTO_LL);
    cr_expect_eq(cs_program_op(p, s)->bytes, 1000);
    cr_expect_eq(cs_program_op(p, r)->proto, CS_PROTO_NONE);
    cr_expect_eq(cs_program_op(p, c)->proto, CS_PROTO_NONE);
    cr_expect_float_eq(cs_program_proto_lat(p, CS_PROTO_LL), 0.6e-6, 1e-12);
    cs_program_set_proto_lat(p, CS_PROTO_LL, 2e-6);
    cr_expect_float_eq(cs_program_proto_lat(p, CS_PROTO_LL), 2e-6, 1e-12);
    cs_program_free(p);
}

/* ==== times against closed forms ============================================= */

/* The time in both network modes, which must agree on an alpha-beta ring
 * (DESIGN.md, "The network engine"). */
static cs_tick_t t_of(const char *coll, int P, int64_t bytes, int root, const char *opts)
{
    const char *spec = P == 4   ? RING4
                       : P == 6 ? "alphabeta:topo=ring,p=6"
                                : "alphabeta:topo=ring,p=8";
    cs_tick_t t = h_time(spec, coll, "nccl-ring", P, bytes, root, opts, CS_NET_PACKET);
    cr_expect_eq(h_time(spec, coll, "nccl-ring", P, bytes, root, opts, CS_NET_FLUID), t,
                 "%s %s: fluid and packet differ", coll, opts);
    return t;
}

/* Allgather, one channel, m = 7680 bytes a rank (one chunk under every
 * protocol), P = 4: each rank sends P - 1 messages one after the other.
 *   LL     3 (0.6 + 1 + 2 x 7.68) us            = 50.88 us
 *   LL128  3 (1.9 + 1 + 7680 / 120 x 0.128) us  = 33.276 us
 *   Simple 3 (3.4 + 1 + 7.68) us = 36.24 us (one slice: NCCL's Simple cuts a
 *          primitive into two slices only beyond 32 KiB) */
Test(times, allgather_per_protocol_matches_the_hand_closed_form)
{
    cr_expect_eq(t_of("allgather", 4, 7680, 0, "proto=ll,nchannels=1"), 50880000);
    cr_expect_eq(t_of("allgather", 4, 7680, 0, "proto=ll128,nchannels=1"), 33276000);
    cr_expect_eq(t_of("allgather", 4, 7680, 0, "proto=simple,nchannels=1"), 36240000);
    /* 40000 bytes a rank: slices of max(ceil(40000 / 32) x 16, 32 KiB) =
     * 32768 bytes, so 32768 + 7232, each paying the latency and alpha */
    cr_expect_eq(t_of("allgather", 4, 40000, 0, "proto=simple,nchannels=1"),
                 3 * (2 * INT64_C(4400000) + (32768 + 7232) * INT64_C(1000)));
}

/* Without the latency (proto_lat=0) only the bandwidth term differs from
 * the lecture's ring allgather, 3 (alpha + beta m) = 26.04 us: LL doubles
 * beta m (the flags take half the wire), LL128 scales it by 128/120.
 * Written as the bandwidth terms themselves: T - 3 alpha. */
Test(times, ll_halves_the_bandwidth_and_ll128_scales_it_by_120_over_128)
{
    int64_t alpha3 = 3 * PS_PER_US;
    int64_t plain = h_time(RING4, "allgather", "ring", 4, 7680, 0, NULL, CS_NET_PACKET);
    int64_t ll = t_of("allgather", 4, 7680, 0, "proto=ll,nchannels=1,proto_lat=0");
    int64_t ll128 = t_of("allgather", 4, 7680, 0, "proto=ll128,nchannels=1,proto_lat=0");
    cr_assert_eq(plain, 26040000, "the lecture's ring: 3 (1 + 7.68) us");
    cr_expect_eq(ll - alpha3, 2 * (plain - alpha3), "LL: %lld", (long long)ll);
    cr_expect_eq((ll128 - alpha3) * 120, (plain - alpha3) * 128, "LL128: %lld", (long long)ll128);
    /* in bytes a second: LL moves the data at half the link's rate */
    cr_expect_eq(ll, 3 * (PS_PER_US + 2 * 7680 * 1000));
}

/* Simple = the plain message plus the protocol's latency: a broadcast to
 * one other rank of a single chunk is lat + alpha + beta n. */
Test(times, simple_is_the_plain_message_plus_its_latency)
{
    cs_tick_t t = h_time("alphabeta:topo=ring,p=2", "broadcast", "nccl-ring", 2, 100000, 0,
                         "proto=simple,nchannels=1", CS_NET_PACKET);
    cr_expect_eq(t, (int64_t)3400000 + 1000000 + 100000 * 1000);
    t = h_time("alphabeta:topo=ring,p=2", "broadcast", "nccl-ring", 2, 100000, 0,
               "proto=simple,nchannels=1,proto_lat=250ns", CS_NET_PACKET);
    cr_expect_eq(t, (int64_t)250000 + 1000000 + 100000 * 1000);
}

/* Allreduce, one channel, P = 4, n = 30720 bytes (one loop; the last
 * loop's chunk is ceil(n / P) rounded up to 16 bytes: 7680), LL: 2(P-1) = 6
 * messages a rank back to back, 6 (0.6 + 1 + 15.36) us = 101.76 us.
 * A second loop (n = 4 x 32768 + 30720, LL's chunk 32 KiB) adds 6 messages
 * of 32 KiB first: 6 (1.6 + 65.536) us more. */
Test(times, allreduce_loops_and_last_chunk_match_the_hand_closed_form)
{
    cr_expect_eq(t_of("allreduce", 4, 30720, 0, "proto=ll,nchannels=1"), 101760000);
    cr_expect_eq(t_of("allreduce", 4, 4 * 32768 + 30720, 0, "proto=ll,nchannels=1"),
                 101760000 + 6 * (1600000 + 65536000));
}

/* The pipeline of the ring broadcast, chunk=4KiB, S = 3 chunks, P = 6
 * (not a power of two), Simple: the last rank has chunk S-1 after P - 2 + S
 * message times, 7 (3.4 + 1 + 4.096) us = 59.472 us, whatever the root.
 * Reduce runs the same pipeline to the root (reductions are free here). */
Test(times, broadcast_and_reduce_pipelines_are_P_plus_S_minus_2_messages)
{
    for (int root = 0; root < 6; root += 5) {
        cr_expect_eq(t_of("broadcast", 6, 3 * 4096, root, "nchannels=1,chunk=4KiB"), 59472000);
        cr_expect_eq(t_of("reduce", 6, 3 * 4096, root, "nchannels=1,chunk=4KiB"), 59472000);
    }
}

/* NCCL's chunk sizes (enqueue.cc, calcCollChunking): one channel of a
 * 2 MiB Simple allreduce at P = 2 is one loop (P x 2 MiB per loop) whose
 * chunk shrinks to 1 MiB, sent as two slices of 512 KiB; a broadcast cuts
 * 2 MiB into 4 chunks of 512 KiB (chunkSteps 1); LL's chunk is 32 KiB. */
Test(times, nccl_chunk_defaults)
{
    const cs_coll_kind_t K[] = {CS_COLL_ALLREDUCE, CS_COLL_BROADCAST};
    cr_expect_eq(cs_nccl_chunk_default(K[0], CS_PROTO_SIMPLE), 2 << 20);
    cr_expect_eq(cs_nccl_chunk_default(K[1], CS_PROTO_SIMPLE), 512 << 10);
    cr_expect_eq(cs_nccl_chunk_default(K[0], CS_PROTO_LL), 32 << 10);
    cr_expect_eq(cs_nccl_chunk_default(K[0], CS_PROTO_LL128), 576000);
    cr_expect_eq(cs_nccl_step_bytes(CS_PROTO_LL128), 576000);
    h_run_t r = h_run("alphabeta:topo=ring,p=2", "allreduce", "nccl-ring", 2, 2 << 20, 0,
                      "nchannels=1", CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    /* 2 steps (send, recvReduceCopySend) of 2 slices each from both ranks */
    cr_expect_eq(r.res.messages, 8);
    /* 4 slice messages back to back on each rank: 4 (3.4 + 1 + 524.288) us */
    cr_expect_eq(r.finish, 4 * (INT64_C(4400000) + 524288000));
    h_done(&r);
    r = h_run("alphabeta:topo=ring,p=2", "broadcast", "nccl-ring", 2, 2 << 20, 0, "nchannels=1",
              CS_NET_PACKET, 0);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_eq(r.res.messages, 4);
    h_done(&r);
}

/* Channels split the data: with two channels on a ring each rank sends
 * twice as many messages of half the size (the ports serialise them). */
Test(times, channels_split_the_data)
{
    h_run_t r1 = h_run(RING4, "allgather", "nccl-ring", 4, 7680, 0, "proto=ll,nchannels=1",
                       CS_NET_PACKET, 1);
    h_run_t r3 = h_run(RING4, "allgather", "nccl-ring", 4, 7680, 0, "proto=ll,nchannels=3",
                       CS_NET_PACKET, 1);
    cr_assert_eq(r1.rc, CS_OK, "%s", r1.err.msg);
    cr_assert_eq(r3.rc, CS_OK, "%s", r3.err.msg);
    cr_expect_eq(r1.res.messages, 4 * 3);
    cr_expect_eq(r3.res.messages, 3 * 4 * 3);
    cr_expect_eq(r3.res.proto_messages[CS_PROTO_LL], 3 * 4 * 3);
    h_done(&r1);
    h_done(&r3);
}

/* ==== validation on several machines ======================================== */

typedef struct vm {
    const char *spec;
    int P;
} vm_t;

Test(validate, every_ring_algorithm_on_three_machines_at_P_8_and_6)
{
    static const vm_t M[] = {
        {"alphabeta:topo=ring,p=8", 8},          {"alphabeta:topo=ring,p=6", 6},
        {"net:gen=fattree,k=4,n=2,bw=1GB/s,alpha=1us", 8},
        {"net:gen=fattree,k=4,n=2,bw=1GB/s,alpha=1us", 6},
        {"cerebras:rows=2,cols=4", 8},           {"cerebras:rows=2,cols=3", 6},
        {"groq:nodes=1", 8},                     {"groq:nodes=1", 6},
    };
    static const char *const opts[] = {"proto=simple", "proto=ll,nchannels=3",
                                       "proto=ll128,nchannels=1,chunk=1000"};
    static const int64_t sizes[] = {1, 999, 70001};
    int runs = 0;
    for (size_t mi = 0; mi < sizeof M / sizeof *M; mi++)
        for (size_t ci = 0; ci < sizeof COLLS / sizeof *COLLS; ci++)
            for (size_t oi = 0; oi < sizeof opts / sizeof *opts; oi++)
                for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
                    int root = (int)(si % 2) * (M[mi].P - 1);
                    h_run_t r = h_run(M[mi].spec, COLLS[ci], "nccl-ring", M[mi].P, sizes[si],
                                      root, opts[oi], CS_NET_PACKET, 1);
                    cr_expect_eq(r.rc, CS_OK, "%s/nccl-ring on %s P=%d n=%lld %s: %s",
                                 COLLS[ci], M[mi].spec, M[mi].P, (long long)sizes[si], opts[oi],
                                 r.err.msg);
                    runs++;
                    h_done(&r);
                }
    cr_expect_eq(runs, 8 * 5 * 3 * 3);
}

/* A wrong schedule must fail the check: an allgather that skips its last
 * step leaves a block missing.  (The checker is the one every test here
 * relies on.) */
static int broken_allgather(cs_coll_builder_t *b, cs_error_t *err)
{
    const cs_coll_args_t *a = cs_coll_args(b);
    (void)err;
    cs_coll_send(b, 0, 1, 0, a->bytes, 0);
    cs_coll_recv(b, 1, 0, 0, a->bytes, 0);
    return CS_OK;
}

Test(validate, the_checker_catches_a_missing_block)
{
    static const cs_coll_algo_t bad = {CS_COLL_ALLGATHER, "broken", "", "", "", NULL,
                                       broken_allgather, NULL};
    h_run_t r = h_run_algo(RING4, &bad, 4, 16, 0, NULL, CS_NET_PACKET, 1, NULL);
    cr_expect_neq(r.rc, CS_OK);
    h_done(&r);
}

/* ==== op counts ================================================================ */

Test(opcount, bounds_hold_and_are_exact_when_no_piece_is_empty)
{
    static const char *const opts[] = {NULL, "proto=ll", "proto=ll128,nchannels=3",
                                       "chunk=1000,nchannels=1"};
    static const int Ps[] = {2, 3, 6, 8};
    for (size_t ci = 0; ci < sizeof COLLS / sizeof *COLLS; ci++)
        for (size_t oi = 0; oi < sizeof opts / sizeof *opts; oi++)
            for (size_t pi = 0; pi < sizeof Ps / sizeof *Ps; pi++)
                for (int exact = 0; exact < 2; exact++) {
                    int P = Ps[pi];
                    cs_coll_kind_t k;
                    const cs_coll_algo_t *a;
                    cs_error_t err;
                    cs_spec_t spec;
                    char text[128];
                    cr_assert_eq(cs_coll_parse(COLLS[ci], &k, &err), CS_OK);
                    cr_assert_eq(cs_coll_find(k, "nccl-ring", &a, &err), CS_OK);
                    snprintf(text, sizeof text, "opts:%s", opts[oi] ? opts[oi] : "");
                    cr_assert_eq(cs_spec_parse(text, &spec, &err), CS_OK, "%s", err.msg);
                    /* exact: one loop of full chunks on every channel (its
                     * chunk x nchannels, x P for allreduce's loop, two
                     * chunks for the pipelines); else a size that leaves
                     * pieces empty */
                    cs_coll_args_t args = {k, P, 5, P - 1, 4096, NULL, &spec, 1};
                    cs_nccl_opts_t no;
                    cr_assert_eq(cs_nccl_opts_read(&args, &no, &err), CS_OK, "%s", err.msg);
                    if (exact)
                        args.bytes = no.chunk * no.nchannels *
                                     (k == CS_COLL_ALLREDUCE ? P
                                      : k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE ? 2 : 1);
                    int64_t n = args.bytes, bound = cs_coll_max_ops(a, &args);
                    cs_program_t *p;
                    cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s", err.msg);
                    cr_expect_geq(bound, cs_program_nops(p), "%s P=%d %s n=%lld", COLLS[ci], P,
                                  opts[oi] ? opts[oi] : "", (long long)n);
                    if (exact)
                        cr_expect_eq(bound, cs_program_nops(p), "%s P=%d %s n=%lld", COLLS[ci],
                                     P, opts[oi] ? opts[oi] : "", (long long)n);
                    cs_program_free(p);
                    cs_spec_destroy(&spec);
                }
}

/* ==== options ================================================================ */

static void expect_option_error(const char *opts, const char *key)
{
    h_run_t r = h_run(RING4, "allreduce", "nccl-ring", 4, 1024, 0, opts, CS_NET_PACKET, 0);
    cr_expect_neq(r.rc, CS_OK, "%s accepted", opts);
    cr_expect(strstr(r.err.msg, key) != NULL, "%s: the error \"%s\" does not name %s", opts,
              r.err.msg, key);
    h_done(&r);
}

Test(options, errors_name_the_key)
{
    expect_option_error("proto=ll64", "proto");
    expect_option_error("nchannels=0", "nchannels");
    expect_option_error("nchannels=65", "nchannels");
    expect_option_error("chunk=0", "chunk");
    expect_option_error("chunk=lots", "chunk");
    expect_option_error("proto_lat=-1us", "proto_lat");
    expect_option_error("proto_lat=soon", "proto_lat");
    expect_option_error("slices=2", "slices"); /* not a key of the algorithm */
}

/* ==== the summary and the JSON ================================================= */

/* Runs the collsim command (COLLSIM, set by meson) and returns its output. */
static char *run_cli(const char *args)
{
    const char *bin = getenv("COLLSIM");
    char cmd[1024];
    static char out[1 << 16];
    size_t n;
    cr_assert(bin, "COLLSIM is not set");
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    cr_expect_eq(pclose(f), 0, "%s: %s", cmd, out);
    return out;
}

Test(report, summary_and_json_say_the_protocol)
{
    char *o = run_cli("run --machine alphabeta:topo=ring,p=4 --coll allreduce --algo nccl-ring "
                      "--bytes 30720 --opt proto=ll --opt nchannels=1 --validate");
    cr_expect(strstr(o, "protocol  LL, 24 messages (wire 2x data, +600 ns a message)"), "%s", o);
    o = run_cli("run --machine alphabeta:topo=ring,p=4 --coll allreduce --algo nccl-ring "
                "--bytes 30720 --opt proto=ll128 --opt proto_lat=1us --json - --no-timing");
    cr_expect(strstr(o, "\"protocol\": \"LL128\""), "%s", o);
    cr_expect(strstr(o, "\"LL128\": {\"messages\": 48, \"latency_seconds\": 1e-06}"), "%s", o);
    /* a run without a protocol says nothing of one */
    o = run_cli("run --machine alphabeta:topo=ring,p=4 --coll allreduce --algo ring "
                "--bytes 30720 --json - --no-timing");
    cr_expect(!strstr(o, "protocol"), "%s", o);
    o = run_cli("run --machine alphabeta:topo=ring,p=4 --coll allreduce --algo ring "
                "--bytes 30720");
    cr_expect(!strstr(o, "protocol"), "%s", o);
}

/* ==== windowed builds ========================================================== */

/* The rings order their ops with explicit dependencies and close each
 * rank's ops step by step (cs_coll_chained): a windowed run gives the
 * whole program's times and holds a few steps of ops, not the program. */
Test(window, windowed_runs_match_the_whole_program_and_hold_few_ops)
{
    cs_machine_t *m;
    cs_error_t err;
    cs_machine_hints_t mh;
    cs_spec_t spec;
    cr_assert_eq(cs_machine_new("alphabeta:topo=ring,p=64", &m, &err), CS_OK, "%s", err.msg);
    cs_machine_hints_init(&mh, m, 64, NULL);
    cr_assert_eq(cs_spec_parse("opts:proto=ll,nchannels=2", &spec, &err), CS_OK, "%s", err.msg);
    for (size_t ci = 0; ci < sizeof COLLS / sizeof *COLLS; ci++) {
        cs_coll_kind_t k;
        const cs_coll_algo_t *a;
        cs_exec_env_t env;
        cs_exec_opts_t o;
        cs_exec_result_t rw, rf;
        cs_program_t *p;
        cs_progen_t *g;
        cr_assert_eq(cs_coll_parse(COLLS[ci], &k, &err), CS_OK);
        cr_assert_eq(cs_coll_find(k, "nccl-ring", &a, &err), CS_OK);
        /* programs of a few 10^5 ops: well beyond the 2^16 ops the
         * window's frontier releases at a time */
        int64_t n = k == CS_COLL_ALLREDUCE                           ? 64 * 65536
                    : k == CS_COLL_BROADCAST || k == CS_COLL_REDUCE ? 2048 * 32768
                                                                     : 9 * 32768;
        cs_coll_args_t args = {k, 64, n, 5, m->net.unit_bytes, &mh.coll, &spec, 1};
        cs_machine_exec_env(m, &env);
        cs_exec_opts_default(&o);
        o.mode = CS_NET_FLUID;
        cr_assert_eq(cs_coll_build(a, &args, &p, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_exec_run(&env, p, &o, &rf, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_coll_generate(a, &args, 1024, &g, &err), CS_OK, "%s", err.msg);
        cr_assert_eq(cs_exec_run_gen(&env, g, &o, &rw, &err), CS_OK, "%s: %s", COLLS[ci],
                     err.msg);
        cr_expect_eq(rw.finish, rf.finish, "%s: windowed %lld, whole %lld", COLLS[ci],
                     (long long)rw.finish, (long long)rf.finish);
        cr_expect_eq(rw.events, rf.events, "%s", COLLS[ci]);
        cr_expect_eq(rw.messages, rf.messages, "%s", COLLS[ci]);
        cr_expect_eq(cs_program_nops(g->prog), cs_program_nops(p));
        cr_expect_lt(rw.ops_held_peak * 4, cs_program_nops(p), "%s: held %lld of %d ops",
                     COLLS[ci], (long long)rw.ops_held_peak, cs_program_nops(p));
        cs_exec_result_destroy(&rw);
        cs_exec_result_destroy(&rf);
        cs_progen_free(g);
        cs_program_free(p);
    }
    cs_spec_destroy(&spec);
    cs_machine_hints_destroy(&mh);
    cs_machine_free(m);
}
