/*
 * test_mscclpp.c - MSCCL++ JSON execution plans (src/io/mscclpp.c,
 * io/algofile.h).
 *
 * Oracles: the suite's allreduce/ring and the alpha-beta ring formula
 * 2(P-1)(alpha + beta n/P) for a ring plan written by hand in MSCCL++'s
 * schema (puts with signal into the next GPU's scratch, waits, local
 * reductions); the --validate checker for hand-written plans and a copy of
 * a plan of microsoft/mscclpp's tests on three machines; a plan wrong on
 * purpose; each malformed plan refused with its JSON path (or line:column
 * for syntax).  The files of tests/data/mscclpp/ are described in its
 * README.md.  Without jansson the format must be refused saying so.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/harness.h"
#include "algofile_check.h"
#include "io/algofile.h"

#if CS_HAVE_JANSSON
#include "io/mscclpp.h"

/* tests/data/mscclpp/NAME under the source root. */
static const char *data_path(const char *name)
{
    return algofile_data_path("mscclpp", name);
}

static cs_coll_algo_t *load(const char *path, cs_coll_kind_t kind)
{
    return algofile_load("mscclpp", path, kind);
}

/* ---- the ring is the suite's ring --------------------------------------- */

Test(mscclpp, ring_time_is_the_suite_ring)
{
    algofile_ring_is_suite_ring("mscclpp", data_path("ring_allreduce_4.json"));
}

/* ---- validation on several machines ------------------------------------ */

static const char *const machines4[] = {
    "alphabeta:topo=ring,p=4", "loggp:p=4", "net:gen=fattree,k=4,n=2",
};

static void validates_everywhere(const char *file, cs_coll_kind_t kind, int P, int64_t bytes)
{
    algofile_validates_on("mscclpp", data_path(file), file, kind, P, bytes, machines4,
                          sizeof machines4 / sizeof *machines4);
}

Test(mscclpp, ring_allreduce_validates)
{
    validates_everywhere("ring_allreduce_4.json", CS_COLL_ALLREDUCE, 4, 1 << 20);
}
Test(mscclpp, ring_allreduce_odd_size_validates)
{
    validates_everywhere("ring_allreduce_4.json", CS_COLL_ALLREDUCE, 4, 1001);
}
Test(mscclpp, allpairs_allreduce_reads_validate)
{
    validates_everywhere("allpairs_allreduce_4.json", CS_COLL_ALLREDUCE, 4, 1 << 20);
}
Test(mscclpp, allpairs_allgather_validates)
{
    validates_everywhere("allpairs_allgather_4.json", CS_COLL_ALLGATHER, 4, 1 << 16);
}
/* the plan of microsoft/mscclpp's tests (2 GPUs, 8 thread blocks, rres) */
Test(mscclpp, upstream_allreduce_plan_validates)
{
    validates_everywhere("mscclpp_allreduce_2.json", CS_COLL_ALLREDUCE, 2, 1 << 20);
}

/* A read costs a round trip: the all-pairs allreduce reads 3 peers at once
 * (a request, then the response of n/4 bytes), writes the sum back, and
 * signals around it; on a complete alpha-beta graph it takes at least the
 * response and the write-back (alpha + beta n/4 each) plus the request's
 * and the first signal's alpha. */
Test(mscclpp, allpairs_read_costs_a_round_trip)
{
    const char *spec = "alphabeta:topo=complete,p=4,alpha=1us,beta=1ns";
    int64_t n = 1 << 20;
    cs_coll_algo_t *a = load(data_path("allpairs_allreduce_4.json"), CS_COLL_ALLREDUCE);
    h_run_t r = h_run_algo(spec, a, 4, n, 0, NULL, CS_NET_PACKET, 1, NULL);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cs_tick_t alpha = 1000000, step = alpha + (n / 4) * 1000;
    cr_expect_geq(r.finish, 2 * step + 2 * alpha, "%lld", (long long)r.finish);
    h_done(&r);
    cs_algofile_free(a);
}

/* ---- the checker can fail ---------------------------------------------- */

/* The ring with GPU 2's last reduce-scatter put sent from the wrong chunk. */
Test(mscclpp, wrong_plan_fails_validation)
{
    FILE *f = fopen(data_path("ring_allreduce_4.json"), "rb");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    /* the file's first "index": 0 is GPU 0's first put's src: make it
     * chunk 2, so that GPU 1 reduces GPU 0's chunk 2 into its chunk 0 */
    char *p = strstr(text, "\"index\": 0");
    cr_assert_not_null(p);
    p[9] = '2';
    cs_source_t src = {"wrong.json", text, n};
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_algofile_read("mscclpp", &src, CS_COLL_ALLREDUCE, "mscclpp:wrong.json", &a,
                                  &err), CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo("alphabeta:topo=ring,p=4", a, 4, 4096, 0, NULL, CS_NET_PACKET, 1, NULL);
    cr_expect_eq(r.rc, CS_ERR_VALIDATE, "rc %d: %s", r.rc, r.err.msg);
    h_done(&r);
    cs_algofile_free(a);
}

/* ---- refusals ---------------------------------------------------------- */

/* A 2-GPU plan with the given ops on each GPU's one thread block; each GPU
 * has one memory channel to the other and two remote buffers (its peer's
 * s, its peer's i). */
static char *plan2(const char *ops0, const char *ops1, const char *extra0)
{
    static char buf[8192];
    const char *gpu = "{\"id\": %d, \"input_chunks\": 2, \"output_chunks\": 2, "
                      "\"scratch_chunks\": 2, %s"
                      "\"channels\": [{\"channel_type\": \"memory\", \"connected_to\": [%d]}], "
                      "\"remote_buffers\": [{\"rank\": %d, \"type\": \"s\", "
                      "\"access_channel_types\": [\"memory\"]}, {\"rank\": %d, \"type\": \"i\", "
                      "\"access_channel_types\": [\"memory\"]}], "
                      "\"threadblocks\": [{\"id\": 0, \"ops\": [%s], "
                      "\"channels\": [{\"channel_type\": \"memory\", \"channel_ids\": [0]}], "
                      "\"remote_buffer_refs\": [{\"access_channel_type\": \"memory\", "
                      "\"remote_buffer_ids\": [0, 1]}]}]}";
    char g0[3000], g1[3000];
    snprintf(g0, sizeof g0, gpu, 0, extra0 ? extra0 : "", 1, 1, 1, ops0);
    snprintf(g1, sizeof g1, gpu, 1, "", 0, 0, 0, ops1);
    snprintf(buf, sizeof buf, "{\"name\": \"t\", \"collective\": \"allreduce\", \"protocol\": "
             "\"Simple\", \"inplace\": true,\n\"gpus\": [%s,\n%s]}", g0, g1);
    return buf;
}

/* An exchange that is a correct 2-GPU allreduce: put the peer's chunk to
 * its scratch with a signal, wait, reduce it into one's own chunk, put the
 * sum into the peer's input with a signal, wait. */
#define XCHG(me, other)                                                                            \
    "{\"name\": \"pws\", \"src_buff\": [{\"type\": \"i\", \"index\": " other ", \"size\": 1}], "    \
    "\"dst_buff\": [{\"buffer_id\": 0, \"index\": " other ", \"size\": 1}], \"channel_type\": "     \
    "\"memory\", \"channel_ids\": [0]}, {\"name\": \"wait\", \"channel_type\": \"memory\", "       \
    "\"channel_ids\": [0]}, {\"name\": \"re\", \"src_buff\": [{\"type\": \"i\", \"index\": " me    \
    ", \"size\": 1}, {\"type\": \"s\", \"index\": " me ", \"size\": 1}], \"dst_buff\": "            \
    "[{\"type\": \"i\", \"index\": " me ", \"size\": 1}]}, {\"name\": \"pws\", \"src_buff\": "      \
    "[{\"type\": \"i\", \"index\": " me ", \"size\": 1}], \"dst_buff\": [{\"buffer_id\": 1, "       \
    "\"index\": " me ", \"size\": 1}], \"channel_type\": \"memory\", \"channel_ids\": [0]}, "       \
    "{\"name\": \"wait\", \"channel_type\": \"memory\", \"channel_ids\": [0]}"

static int read_text(const char *text, cs_mscclpp_t **m, cs_error_t *err)
{
    cs_source_t src = {"mem.json", text, strlen(text)};
    return cs_mscclpp_read(&src, m, err);
}

static void refused(const char *text, const char *at, const char *what)
{
    cs_mscclpp_t *m = NULL;
    cs_error_t err = {0};
    int rc = read_text(text, &m, &err);
    cr_assert_neq(rc, CS_OK, "accepted: %s", text);
    cr_assert_null(m);
    cr_expect(strncmp(err.msg, at, strlen(at)) == 0, "want %s, got: %s", at, err.msg);
    cr_expect(strstr(err.msg, what) != NULL, "want '%s' in: %s", what, err.msg);
}

Test(mscclpp, exchange_is_a_2gpu_allreduce)
{
    const char *text = plan2(XCHG("0", "1"), XCHG("1", "0"), NULL);
    cs_source_t src = {"mem.json", text, strlen(text)};
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_algofile_read("mscclpp", &src, CS_COLL_ALLREDUCE, "mscclpp:mem.json", &a,
                                  &err), CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo("alphabeta:topo=complete,p=2,alpha=1us,beta=1ns", a, 2, 2000, 0, NULL,
                           CS_NET_PACKET, 1, NULL);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    /* two puts of n/2 bytes in sequence: 2 (alpha + beta n/2) */
    cr_expect_eq(r.finish, 2 * ((cs_tick_t)1000000 + 1000 * 1000), "%lld", (long long)r.finish);
    h_done(&r);
    cs_algofile_free(a);
}

Test(mscclpp, syntax_error_names_line_and_column)
{
    refused("{\"name\": \"t\",\n \"gpus\": [,]}", "mem.json:2:", "unexpected");
}

Test(mscclpp, duplicate_key_refused)
{
    refused("{\"name\": \"t\", \"name\": \"u\"}", "mem.json:1:", "duplicate");
}

Test(mscclpp, unknown_op_names_path_and_valid_ones)
{
    refused(plan2("{\"name\": \"frob\"}", XCHG("1", "0"), NULL),
            "mem.json: gpus[0].threadblocks[0].ops[0]: ", "unknown op \"frob\"; valid: nop");
}

Test(mscclpp, nvls_op_refused_as_not_modelled)
{
    refused(plan2(XCHG("0", "1"), "{\"name\": \"nop\"}, {\"name\": \"glres\"}", NULL),
            "mem.json: gpus[1].threadblocks[0].ops[1]: ", "NVLS switch op");
}

Test(mscclpp, packet_op_refused_as_not_modelled)
{
    refused(plan2("{\"name\": \"ppkt\"}", XCHG("1", "0"), NULL),
            "mem.json: gpus[0].threadblocks[0].ops[0]: ", "LL packet op");
}

Test(mscclpp, missing_field_named)
{
    refused(plan2("{\"name\": \"copy\", \"src_buff\": [{\"type\": \"i\", \"size\": 1}], "
                  "\"dst_buff\": [{\"type\": \"s\", \"index\": 0, \"size\": 1}]}",
                  XCHG("1", "0"), NULL),
            "mem.json: gpus[0].threadblocks[0].ops[0].src_buff[0]: ", "missing field \"index\"");
}

Test(mscclpp, peer_out_of_range)
{
    refused("{\"collective\": \"allreduce\", \"gpus\": [{\"id\": 0, \"input_chunks\": 1, "
            "\"output_chunks\": 1, \"channels\": [{\"channel_type\": \"memory\", "
            "\"connected_to\": [3]}], \"threadblocks\": []}]}",
            "mem.json: gpus[0].channels[0]: ", "connected_to[0]: a peer must be a GPU 0..0");
}

Test(mscclpp, remote_buffer_rank_out_of_range)
{
    refused("{\"collective\": \"allreduce\", \"gpus\": [{\"id\": 0, \"input_chunks\": 1, "
            "\"output_chunks\": 1, \"remote_buffers\": [{\"rank\": 7, \"type\": \"s\"}], "
            "\"threadblocks\": []}]}",
            "mem.json: gpus[0].remote_buffers[0]: ", "\"rank\": 7 is outside [0, 0]");
}

Test(mscclpp, buffer_id_past_the_refs)
{
    refused(plan2("{\"name\": \"put\", \"src_buff\": [{\"type\": \"i\", \"index\": 0, "
                  "\"size\": 1}], \"dst_buff\": [{\"buffer_id\": 5, \"index\": 0, \"size\": 1}], "
                  "\"channel_type\": \"memory\"}", XCHG("1", "0"), NULL),
            "mem.json: gpus[0].threadblocks[0].ops[0].dst_buff[0]: ", "buffer_id 5");
}

Test(mscclpp, chunk_past_the_buffer)
{
    refused(plan2("{\"name\": \"copy\", \"src_buff\": [{\"type\": \"i\", \"index\": 1, "
                  "\"size\": 2}], \"dst_buff\": [{\"type\": \"s\", \"index\": 0, \"size\": 2}]}",
                  XCHG("1", "0"), NULL),
            "mem.json: gpus[0].threadblocks[0].ops[0]: ", "chunks [1, 3) of gpu 0's buffer i");
}

Test(mscclpp, waits_without_signals_are_a_cycle)
{
    const char *w = "{\"name\": \"wait\", \"channel_type\": \"memory\", \"channel_ids\": [0]}, "
                    "{\"name\": \"signal\", \"channel_type\": \"memory\", \"channel_ids\": [0]}";
    refused(plan2(w, w, NULL), "mem.json: gpus[0].threadblocks[0].ops[0]: ",
            "can never run (a cycle of signals and waits): gpus[0].threadblocks[0].ops[0] (wait) "
            "waits for a signal from gpu 1");
}

Test(mscclpp, mismatched_signal_and_wait_counts)
{
    refused(plan2(XCHG("0", "1") ", {\"name\": \"signal\", \"channel_type\": \"memory\", "
                  "\"channel_ids\": [0]}", XCHG("1", "0"), NULL),
            "mem.json: gpus[0].channels: ", "signals its memory channel 0 (to gpu 1) 3 times, "
            "gpu 1 waits on the other end (its channel 0) 2 times");
}

Test(mscclpp, channel_id_past_the_tb)
{
    refused(plan2("{\"name\": \"signal\", \"channel_type\": \"memory\", \"channel_ids\": [4]}",
                  XCHG("1", "0"), NULL),
            "mem.json: gpus[0].threadblocks[0].ops[0]: ", "channel_ids[0]: the thread block has 1");
}

Test(mscclpp, wrong_collective_and_ranks)
{
    const char *text = plan2(XCHG("0", "1"), XCHG("1", "0"), NULL);
    cs_source_t src = {"mem.json", text, strlen(text)};
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cr_expect_neq(cs_algofile_read("mscclpp", &src, CS_COLL_ALLGATHER, "mscclpp:mem.json", &a,
                                   &err), CS_OK);
    cr_expect(strstr(err.msg, "the plan is an allreduce") != NULL, "%s", err.msg);
    cr_assert_eq(cs_algofile_read("mscclpp", &src, CS_COLL_ALLREDUCE, "mscclpp:mem.json", &a,
                                  &err), CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo("alphabeta:topo=complete,p=4", a, 4, 4096, 0, NULL, CS_NET_PACKET, 1,
                           NULL);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "the plan has 2 GPUs, the run 4 ranks") != NULL, "%s", r.err.msg);
    h_done(&r);
    cs_algofile_free(a);
}

/* The names a user types: mscclpp:FILE through the request path. */
Test(mscclpp, command_line_runs_and_validates)
{
    char cmd[8192];
    const char *bin = getenv("COLLSIM");
    cr_assert_not_null(bin);
    snprintf(cmd, sizeof cmd, "%s run --machine alphabeta:topo=ring,p=4 --coll allreduce --algo "
             "mscclpp:%s --bytes 1MiB --validate >/dev/null 2>&1", bin,
             data_path("ring_allreduce_4.json"));
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

#else

/* Without jansson the prefix is known and refused saying why. */
Test(mscclpp, refused_without_jansson)
{
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cs_source_t src = {"plan.json", "{}", 2};
    cr_expect_neq(cs_algofile_read("mscclpp", &src, CS_COLL_ALLREDUCE, "mscclpp:plan.json", &a,
                                   &err), CS_OK);
    cr_expect_null(a);
    cr_expect(strstr(err.msg, "collsim was built without jansson: mscclpp: plans cannot be "
                     "read") != NULL, "%s", err.msg);
}

#endif
