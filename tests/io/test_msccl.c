/*
 * test_msccl.c - MSCCL XML algorithms (src/io/msccl.c, io/algofile.h).
 *
 * Oracles: the suite's own allreduce/ring and the alpha-beta ring formula
 * 2(P-1)(alpha + beta n/P) for a ring written by hand in the format; the
 * --validate checker for hand-written algorithms on four machines; a file
 * wrong on purpose; each malformed case refused with its file:line (the
 * lines are those of the inline texts below, counted by hand).  The files
 * of tests/data/msccl/ were written by hand from the format, not by
 * collsim.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../coll/harness.h"
#include "algofile_check.h"
#include "api/request.h"
#include "io/algofile.h"
#include "io/msccl.h"

/* tests/data/msccl/NAME under the source root. */
static const char *data_path(const char *name)
{
    return algofile_data_path("msccl", name);
}

static cs_coll_algo_t *load(const char *path, cs_coll_kind_t kind)
{
    return algofile_load("msccl", path, kind);
}

/* Reads text as the file "mem.xml" from memory (as the service would). */
static int read_text(const char *text, cs_msccl_t **m, cs_error_t *err)
{
    cs_source_t src = {"mem.xml", text, strlen(text)};
    return cs_msccl_read(&src, m, err);
}

/* The text must be refused with an error at mem.xml:LINE holding `what`. */
static void refused(const char *text, int line, const char *what)
{
    cs_msccl_t *m = NULL;
    cs_error_t err = {0};
    char at[32];
    int rc = read_text(text, &m, &err);
    cr_assert_neq(rc, CS_OK, "accepted: %s", text);
    cr_assert_null(m);
    snprintf(at, sizeof at, "mem.xml:%d:", line);
    cr_expect(strncmp(err.msg, at, strlen(at)) == 0, "want %s, got: %s", at, err.msg);
    cr_expect(strstr(err.msg, what) != NULL, "want '%s' in: %s", what, err.msg);
}

/* ---- timing: the ring written in MSCCL is the suite's ring -------------- */

Test(msccl, ring_time_is_the_suite_ring)
{
    algofile_ring_is_suite_ring("msccl", data_path("ring_allreduce_4.xml"));
}

/* A size the 4 chunks do not divide: the last chunk ends in padding, and
 * validation still holds. */
Test(msccl, ring_odd_size_validates)
{
    cs_coll_algo_t *a = load(data_path("ring_allreduce_4.xml"), CS_COLL_ALLREDUCE);
    h_run_t r = h_run_algo("alphabeta:topo=ring,p=4", a, 4, 1001, 0, NULL, CS_NET_PACKET, 1,
                           NULL);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    h_done(&r);
    cs_algofile_free(a);
}

/* ---- validation on several machines ------------------------------------ */

static const char *const machines4[] = {
    "alphabeta:topo=ring,p=4", "loggp:p=4", "net:gen=fattree,k=4,n=2", "cerebras:rows=2,cols=2",
};

static void validates_everywhere(const char *file, cs_coll_kind_t kind, int P, int64_t bytes)
{
    algofile_validates_on("msccl", data_path(file), file, kind, P, bytes, machines4,
                          sizeof machines4 / sizeof *machines4);
}

Test(msccl, ring_validates_on_four_machines)
{
    validates_everywhere("ring_allreduce_4.xml", CS_COLL_ALLREDUCE, 4, 65536);
}

Test(msccl, allpairs_validates_on_four_machines)
{
    validates_everywhere("allpairs_allreduce_4.xml", CS_COLL_ALLREDUCE, 4, 65536);
}

Test(msccl, alltonext_validates_on_four_machines)
{
    validates_everywhere("alltonext_allgather_4.xml", CS_COLL_ALLGATHER, 4, 4096);
}

/* re: one exchange of the whole vector then a local reduction: alpha +
 * beta n on the alpha-beta machine, as allreduce/rdb for P = 2. */
Test(msccl, exchange_with_local_reduce)
{
    const char *spec = "alphabeta:topo=ring,p=2,alpha=1us,beta=1ns";
    cs_coll_algo_t *a = load(data_path("exchange_allreduce_2.xml"), CS_COLL_ALLREDUCE);
    h_run_t r = h_run_algo(spec, a, 2, 65536, 0, NULL, CS_NET_PACKET, 1, NULL);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cr_expect_eq(r.finish, h_time(spec, "allreduce", "rdb", 2, 65536, 0, NULL, CS_NET_PACKET));
    h_done(&r);
    cs_algofile_free(a);
}

/* rrcs and rrc whose dst differs from src (a local copy first), scratch
 * buffers, cpy: a 2-GPU allreduce, GPU g owning chunk g. */
static const char *const copy_reduce_xml =
    "<algo name=\"cr\" coll=\"allreduce\" ngpus=\"2\" nchunksperloop=\"2\" nchannels=\"1\" "
    "proto=\"Simple\" inplace=\"1\">\n"
    "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"1\">\n"
    " <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
    "  <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\"/>\n"
    "  <step s=\"1\" type=\"rrcs\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" hasdep=\"1\"/>\n"
    "  <step s=\"2\" type=\"r\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\"/>\n"
    " </tb>\n"
    " <tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
    "  <step s=\"0\" type=\"cpy\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\" depid=\"0\" deps=\"1\"/>\n"
    " </tb>\n"
    "</gpu>\n"
    "<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"1\">\n"
    " <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"
    "  <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\"/>\n"
    "  <step s=\"1\" type=\"rrc\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"s\" dstoff=\"0\" cnt=\"1\" hasdep=\"1\"/>\n"
    "  <step s=\"2\" type=\"s\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\"/>\n"
    "  <step s=\"3\" type=\"r\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" cnt=\"1\"/>\n"
    " </tb>\n"
    " <tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
    "  <step s=\"0\" type=\"cpy\" srcbuf=\"s\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"1\" cnt=\"1\" depid=\"0\" deps=\"1\"/>\n"
    " </tb>\n"
    "</gpu>\n"
    "</algo>\n";

static h_run_t run_text(const char *text, const char *spec, cs_coll_kind_t kind, int P,
                        int64_t bytes)
{
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cs_source_t src = {"mem.xml", text, strlen(text)};
    int rc = cs_algofile_read("msccl", &src, kind, "msccl:mem.xml", &a, &err);
    cr_assert_eq(rc, CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo(spec, a, P, bytes, 0, NULL, CS_NET_PACKET, 1, NULL);
    cs_algofile_free(a); /* the program does not need the algorithm */
    return r;
}

Test(msccl, reduce_into_another_buffer)
{
    h_run_t r = run_text(copy_reduce_xml, "alphabeta:topo=ring,p=2", CS_COLL_ALLREDUCE, 2, 8192);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    h_done(&r);
}

/* Every step type of the executor appears in the files above. */
Test(msccl, every_step_type_is_exercised)
{
    static const char *const types[] = {"s", "r", "re", "rcs", "rrs", "rrc", "rrcs", "cpy", "nop"};
    static const char *const files[] = {"ring_allreduce_4.xml", "allpairs_allreduce_4.xml",
                                        "alltonext_allgather_4.xml", "exchange_allreduce_2.xml"};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        char want[32];
        int found;
        snprintf(want, sizeof want, "type=\"%s\"", types[t]);
        found = strstr(copy_reduce_xml, want) != NULL;
        for (size_t f = 0; f < sizeof files / sizeof *files && !found; f++) {
            FILE *fp = fopen(data_path(files[f]), "r");
            char buf[65536];
            size_t n;
            cr_assert_not_null(fp, "%s", files[f]);
            n = fread(buf, 1, sizeof buf - 1, fp);
            buf[n] = '\0';
            fclose(fp);
            found = strstr(buf, want) != NULL;
        }
        cr_expect(found, "no test file has a %s step", types[t]);
    }
}

/* ---- a wrong file fails --validate, naming the chunk --------------------- */

Test(msccl, wrong_file_fails_validation_naming_the_chunk)
{
    cs_request_t req;
    cs_request_run_t run;
    cs_exec_opts_t opts;
    cs_error_t err = {0};
    char algo[4200];
    int rc;
    snprintf(algo, sizeof algo, "msccl:%s", data_path("ring_allreduce_4_wrong.xml"));
    cs_request_init(&req);
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_set(&req, "machine", "alphabeta:topo=ring,p=4", &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "coll", "allreduce", &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "algo", algo, &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "bytes", "1MiB", &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "validate", "1", &err), CS_OK);
    rc = cs_request_prepare(&req, &run, &err);
    cr_assert_eq(rc, CS_OK, "%s", err.msg);
    rc = cs_request_build(&req, &run, &err);
    cr_assert_eq(rc, CS_OK, "%s", err.msg);
    cs_request_exec_opts(&req, &run, &opts);
    rc = cs_request_run(&run, &opts, &err);
    cr_expect_eq(rc, CS_ERR_VALIDATE, "%s", err.msg);
    /* GPU 2 wrote chunk 3's sum over its chunk 0 */
    cr_expect(strstr(err.msg, "rank 2 bytes [0, 262144) (chunk 0 of 4)") != NULL, "%s", err.msg);
    cs_request_run_destroy(&run);

    /* the right file passes the same path */
    snprintf(algo, sizeof algo, "msccl:%s", data_path("ring_allreduce_4.xml"));
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_prepare(&req, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_build(&req, &run, &err), CS_OK, "%s", err.msg);
    cs_request_exec_opts(&req, &run, &opts);
    cr_expect_eq(cs_request_run(&run, &opts, &err), CS_OK, "%s", err.msg);
    cr_expect(run.validated);
    cr_expect(strstr(run.coll.algo->name, "msccl:") == run.coll.algo->name);
    cs_request_run_destroy(&run);
}

/* --order FILE is the rank map: the file's 4 GPUs on nodes 6, 0, 3, 5 of
 * an 8-node torus validate and land where the order puts them; without it
 * the 8-node machine is refused, naming --order. */
Test(msccl, order_file_is_the_rank_map)
{
    cs_request_t req;
    cs_request_run_t run;
    cs_exec_opts_t opts;
    cs_error_t err = {0};
    char algo[4200], order[4200];
    const char *tmp = getenv("TMPDIR");
    snprintf(order, sizeof order, "%s/msccl-order-%d.txt", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    FILE *f = fopen(order, "w");
    cr_assert_not_null(f);
    fputs("6\n0\n3\n5\n", f);
    fclose(f);
    snprintf(algo, sizeof algo, "msccl:%s", data_path("ring_allreduce_4.xml"));
    cs_request_init(&req);
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_set(&req, "machine", "alphabeta:topo=torus,rows=2,cols=4", &err),
                 CS_OK);
    cr_assert_eq(cs_request_set(&req, "coll", "allreduce", &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "algo", algo, &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "bytes", "64KiB", &err), CS_OK);
    cr_assert_eq(cs_request_set(&req, "validate", "1", &err), CS_OK);
    cr_assert_eq(cs_request_prepare(&req, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_build(&req, &run, &err), CS_ERR_RANGE);
    cr_expect(strstr(err.msg, "--order FILE") != NULL, "%s", err.msg);
    cs_request_run_destroy(&run);
    cr_assert_eq(cs_request_set(&req, "order", order, &err), CS_OK);
    cs_request_run_init(&run);
    cr_assert_eq(cs_request_prepare(&req, &run, &err), CS_OK, "%s", err.msg);
    cr_assert_eq(cs_request_build(&req, &run, &err), CS_OK, "%s", err.msg);
    cr_expect_eq(run.coll.args.P, 4);
    cr_expect_eq(run.coll.rank_to_node[0], 6);
    cr_expect_eq(run.coll.rank_to_node[3], 5);
    cs_request_exec_opts(&req, &run, &opts);
    cr_expect_eq(cs_request_run(&run, &opts, &err), CS_OK, "%s", err.msg);
    cr_expect(run.validated);
    cs_request_run_destroy(&run);
    unlink(order);
}

/* A request with files (the service) reads msccl:NAME among them, never a
 * path. */
Test(msccl, request_files_never_a_path)
{
    cs_files_t *fs = cs_files_new();
    cs_machine_env_t env = {fs, 0};
    const cs_coll_algo_t *a;
    cs_coll_algo_t *own = NULL;
    cs_error_t err = {0};
    cr_assert_eq(cs_files_add(fs, "cr.xml", copy_reduce_xml, strlen(copy_reduce_xml), &err),
                 CS_OK);
    cr_expect_eq(cs_request_find_algo(CS_COLL_ALLREDUCE, "msccl:cr.xml", &env, &a, &own, &err),
                 CS_OK, "%s", err.msg);
    cs_algofile_free(own);
    own = NULL;
    cr_expect_neq(cs_request_find_algo(CS_COLL_ALLREDUCE,
                                       "msccl:" "/etc/passwd", &env, &a, &own, &err), CS_OK);
    cr_expect(strstr(err.msg, "no file") != NULL, "%s", err.msg);
    cr_expect_null(own);
    cs_files_free(fs);
}

/* ---- the file of msccl-tools ------------------------------------------------ */

Test(msccl, msccl_tools_ring_validates)
{
    char path[4096];
    const char *root = getenv("COLLSIM_SOURCE_ROOT");
    FILE *f;
    snprintf(path, sizeof path, "%s/../shared/external/msccl/allreduce_ring_2_4.xml",
             root ? root : ".");
    if (!(f = fopen(path, "r")))
        cr_skip_test("%s: absent (shared/ is not beside the source tree)", path);
    fclose(f);
    cs_coll_algo_t *a = load(path, CS_COLL_ALLREDUCE);
    cr_expect(strstr(a->summary, "8 GPUs") && strstr(a->summary, "LL128"), "%s", a->summary);
    const char *specs[] = {"alphabeta:topo=ring,p=8", "net:gen=fattree,k=4,n=2"};
    for (int i = 0; i < 2; i++) {
        h_run_t r = h_run_algo(specs[i], a, 8, 1 << 20, 0, NULL, CS_NET_PACKET, 1, NULL);
        cr_expect_eq(r.rc, CS_OK, "%s: %s", specs[i], r.err.msg);
        h_done(&r);
    }
    cs_algofile_free(a);
}

/* ---- refusals, each with file:line ------------------------------------------- */

#define HEAD2 "<algo name=\"t\" coll=\"allreduce\" ngpus=\"2\" nchunksperloop=\"2\" nchannels=\"1\">\n"
#define GPU(i) "<gpu id=\"" #i "\" i_chunks=\"2\" o_chunks=\"0\" s_chunks=\"0\">\n"
#define STEP(s, t, off, extra)                                                                     \
    "<step s=\"" #s "\" type=\"" t "\" srcbuf=\"i\" srcoff=\"" #off "\" dstbuf=\"i\" dstoff=\"" #off \
    "\" cnt=\"1\" " extra "/>\n"

Test(msccl, refuses_missing_step)
{
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
            STEP(0, "s", 0, "depid=\"0\" deps=\"7\"") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            "</tb></gpu></algo>\n",
            4, "waits for tb 0 step 7, which does not exist");
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
            STEP(0, "s", 0, "depid=\"3\" deps=\"0\"") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            "</tb></gpu></algo>\n",
            4, "gpu 0 has no tb 3");
}

Test(msccl, refuses_dependency_cycle)
{
    /* tb 0 step 0 waits for tb 1 step 0, which waits for tb 0 step 0 */
    refused(HEAD2 GPU(0)
            "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "s", 0, "depid=\"1\" deps=\"0\"") "</tb>\n"
            "<tb id=\"1\" send=\"-1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "nop", 0, "depid=\"0\" deps=\"0\"") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            "</tb></gpu></algo>\n",
            4, "can never run");
    /* a step waiting for a later step of its own tb */
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "s", 0, "depid=\"0\" deps=\"1\"") STEP(1, "s", 1, "") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            STEP(1, "r", 1, "") "</tb></gpu></algo>\n",
            4, "cycle");
}

Test(msccl, refuses_message_deadlock)
{
    /* both GPUs receive before they send: no step can ever run */
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
            STEP(0, "r", 0, "") STEP(1, "s", 1, "") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"
            STEP(0, "r", 1, "") STEP(1, "s", 0, "") "</tb></gpu></algo>\n",
            4, "receives from gpu 1 tb 0 step 1");
}

Test(msccl, refuses_peer_outside_ngpus)
{
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"2\" recv=\"1\" chan=\"0\">\n</tb></gpu>\n"
            GPU(1) "</gpu></algo>\n",
            3, "send=\"2\" is not an integer in -1..1");
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"0\" recv=\"1\" chan=\"0\">\n</tb></gpu>\n"
            GPU(1) "</gpu></algo>\n",
            3, "cannot send to itself");
}

Test(msccl, refuses_past_the_buffer)
{
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            "<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"1\" dstbuf=\"i\" dstoff=\"1\" "
            "cnt=\"2\"/>\n</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            "</tb></gpu></algo>\n",
            4, "src chunks [1, 3) of buffer i are past its 2 chunks");
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "s", 0, "") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n"
            "<step s=\"0\" type=\"r\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"s\" dstoff=\"0\" "
            "cnt=\"1\"/>\n</tb></gpu></algo>\n",
            8, "dst chunks [0, 1) of buffer s are past its 0 chunks");
}

Test(msccl, refuses_mismatched_pairs)
{
    /* two sends from GPU 0, one recv on GPU 1 */
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "s", 0, "") STEP(1, "s", 1, "") "</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            "</tb></gpu></algo>\n",
            3, "sends 2 messages to gpu 1 on channel 0, but the tb receiving them there (tb 0, "
            "line 8) receives 1");
    /* a sender with no receiving tb on that channel */
    refused("<algo coll=\"allreduce\" ngpus=\"2\" nchunksperloop=\"2\" nchannels=\"2\">\n"
            GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"1\">\n" STEP(0, "s", 0, "")
            "</tb></gpu>\n" GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n"
            STEP(0, "r", 0, "") "</tb></gpu></algo>\n",
            3, "no matching tb receiving from gpu 0 on channel 1");
    /* chunk counts that differ */
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            "<step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"i\" dstoff=\"0\" "
            "cnt=\"2\"/>\n</tb></gpu>\n"
            GPU(1) "<tb id=\"0\" send=\"-1\" recv=\"0\" chan=\"0\">\n" STEP(0, "r", 0, "")
            "</tb></gpu></algo>\n",
            8, "receives 1 chunks, but the message it matches");
    /* a receiving step in a tb without a recv peer */
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "rcs", 0, "") "</tb></gpu>\n"
            GPU(1) "</gpu></algo>\n",
            4, "has no recv peer");
}

Test(msccl, refuses_unknown_names)
{
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "rrx", 0, "") "</tb></gpu>\n" GPU(1) "</gpu></algo>\n",
            4, "unknown step type 'rrx'; valid: s, r, re, rcs, rrs, rrc, rrcs, cpy, nop");
    refused(HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n"
            STEP(0, "s", 0, "color=\"red\"") "</tb></gpu>\n" GPU(1) "</gpu></algo>\n",
            4, "<step>: unknown attribute 'color'; valid: s, type, srcbuf");
    refused(HEAD2 GPU(0) "<thread id=\"0\"/>\n</gpu>\n" GPU(1) "</gpu></algo>\n",
            3, "unknown element <thread> in <gpu> (valid: <tb>)");
    refused("<algorithm/>\n", 1, "the root element is <algorithm>");
    refused(HEAD2 GPU(0) "</gpu></algo>\n", 1, "no <gpu id=\"1\">");
    refused("<algo coll=\"allreduce\" ngpus=\"2\">\n</algo>\n", 1, "missing attribute nchunksperloop");
    refused("<algo coll=\"alltoallv\" ngpus=\"2\" nchunksperloop=\"2\">\n</algo>\n", 1,
            "coll=\"alltoallv\" is not a collective collsim runs");
    refused("<!DOCTYPE algo [<!ENTITY e \"2\">]>\n<algo coll=\"allreduce\" ngpus=\"&e;\" "
            "nchunksperloop=\"2\">\n</algo>\n", 2, "entity reference");
    refused("<algo coll=\"allreduce\"\n", 2, "");
}

Test(msccl, refuses_other_collective_and_ranks)
{
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    char want[4200];
    cs_source_t src = {data_path("ring_allreduce_4.xml"), NULL, 0};
    cr_expect_neq(cs_algofile_read("msccl", &src, CS_COLL_ALLGATHER, "x", &a, &err), CS_OK);
    cr_expect_null(a);
    snprintf(want, sizeof want, "%s:5: the algorithm is an allreduce", src.name);
    cr_expect(strstr(err.msg, want) != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "--coll asks for allgather") != NULL, "%s", err.msg);

    a = load(src.name, CS_COLL_ALLREDUCE);
    h_run_t r = h_run_algo("alphabeta:topo=ring,p=8", a, 8, 4096, 0, NULL, CS_NET_PACKET, 0,
                           NULL);
    cr_expect_neq(r.rc, CS_OK);
    snprintf(want, sizeof want, "%s:5: <algo ngpus=\"4\"> is an algorithm for 4 ranks, the run "
             "has 8", src.name);
    cr_expect(strstr(r.err.msg, want) != NULL, "%s", r.err.msg);
    h_done(&r);
    cs_algofile_free(a);
}

/* An allgather with two chunks per rank's block: a block of an odd number
 * of bytes cannot be cut in two equal chunks (refused, naming the size),
 * an even one validates. */
static const char *const halves_xml =
    "<algo coll=\"allgather\" ngpus=\"2\" nchunksperloop=\"4\">\n"
    "<gpu id=\"0\" i_chunks=\"2\" o_chunks=\"4\" s_chunks=\"0\">\n"
    " <tb id=\"0\" send=\"1\" recv=\"1\" chan=\"0\">\n"
    "  <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"2\"/>\n"
    "  <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"2\" dstbuf=\"o\" dstoff=\"2\" cnt=\"2\"/>\n"
    " </tb>\n"
    "</gpu>\n"
    "<gpu id=\"1\" i_chunks=\"2\" o_chunks=\"4\" s_chunks=\"0\">\n"
    " <tb id=\"0\" send=\"0\" recv=\"0\" chan=\"0\">\n"
    "  <step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"2\" cnt=\"2\"/>\n"
    "  <step s=\"1\" type=\"r\" srcbuf=\"o\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"2\"/>\n"
    " </tb>\n"
    "</gpu>\n"
    "</algo>\n";

Test(msccl, refuses_blocks_that_chunks_cannot_cut)
{
    h_run_t r = run_text(halves_xml, "alphabeta:topo=ring,p=2", CS_COLL_ALLGATHER, 2, 1001);
    cr_expect_neq(r.rc, CS_OK);
    cr_expect(strstr(r.err.msg, "mem.xml:1: allgather: each rank's block of 1001 bytes does not "
                     "divide into nchunksperloop/ngpus = 4/2 equal chunks") != NULL, "%s",
              r.err.msg);
    h_done(&r);
    r = run_text(halves_xml, "alphabeta:topo=ring,p=2", CS_COLL_ALLGATHER, 2, 1000);
    cr_expect_eq(r.rc, CS_OK, "%s", r.err.msg);
    h_done(&r);
}

/* ---- the streaming reader (a SAX parser, no tree) ---------------------------- */

/* Lines are counted by the parser as it reads: exact past 65535, where a
 * libxml2 tree's lines stop (the reader before this one said 65535). */
Test(msccl, lines_past_65535_are_exact)
{
    const int blank = 70000;
    const char *head = HEAD2 GPU(0) "<tb id=\"0\" send=\"1\" recv=\"-1\" chan=\"0\">\n";
    const char *bad = STEP(0, "rrx", 0, "") "</tb></gpu>\n" GPU(1) "</gpu></algo>\n";
    size_t n = strlen(head) + (size_t)blank + strlen(bad) + 1;
    char *text = malloc(n);
    cr_assert_not_null(text);
    strcpy(text, head);
    memset(text + strlen(head), '\n', (size_t)blank);
    strcpy(text + strlen(head) + blank, bad);
    /* HEAD2, GPU(0) and the tb take lines 1-3; the step follows the blank lines */
    refused(text, 3 + blank + 1, "unknown step type 'rrx'");
    free(text);
}

/* The refusals come in a tree reader's order, whatever their place in the
 * file: malformed XML first, then an entity reference, then the contents.
 * Each file below has a fault of its contents (an unknown attribute of
 * the <tb>) before the other fault. */
Test(msccl, malformed_xml_and_entities_come_first)
{
    refused(HEAD2 GPU(0) "<tb id=\"0\" color=\"red\">\n</tb></gpu>\n" GPU(1) "</gpu>\n<x></algo>\n",
            7, "Opening and ending tag mismatch");
    refused("<!DOCTYPE algo [<!ENTITY e \"1\">]>\n" HEAD2 GPU(0)
            "<tb id=\"0\" color=\"red\">\n</tb></gpu>\n" GPU(1) "</gpu>\n<!-- -->\n"
            "<gpu id=\"&e;\"/></algo>\n",
            9, "<gpu>: an entity reference &e;");
    /* without either, the contents' fault */
    refused(HEAD2 GPU(0) "<tb id=\"0\" color=\"red\">\n</tb></gpu>\n" GPU(1) "</gpu></algo>\n",
            3, "<tb>: unknown attribute 'color'");
}

/* --opt proto=on prices the file's protocol on the wire (msccl.h): the
 * 4-GPU ring written as LL moves every message twice its data, so its time
 * is the Simple ring's on twice the bytes; as LL128, whole 128-byte lines
 * of 120 data bytes, so 1 MiB (chunks of 262,144 bytes: 2,185 lines, 279,680
 * bytes) is the Simple ring's on chunks of 279,680 bytes.  Off (the
 * default) and Simple change nothing; both validate. */
static char *with_proto(const char *proto)
{
    FILE *f = fopen(data_path("ring_allreduce_4.xml"), "rb");
    cr_assert_not_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, "proto=\"Simple\"");
    cr_assert_not_null(at);
    size_t out = (size_t)(at - text);
    char *s = malloc(n + 32);
    memcpy(s, text, out);
    out += (size_t)sprintf(s + out, "proto=\"%s\"", proto);
    strcpy(s + out, at + strlen("proto=\"Simple\""));
    return s;
}

static cs_tick_t ring_time(const char *text, int64_t bytes, const char *opts)
{
    cs_coll_algo_t *a = NULL;
    cs_error_t err = {0};
    cs_source_t src = {"mem.xml", text, strlen(text)};
    cr_assert_eq(cs_algofile_read("msccl", &src, CS_COLL_ALLREDUCE, "msccl:mem.xml", &a, &err),
                 CS_OK, "%s", err.msg);
    h_run_t r = h_run_algo("alphabeta:topo=ring,p=4", a, 4, bytes, 0, opts, CS_NET_PACKET, 1,
                           NULL);
    cr_assert_eq(r.rc, CS_OK, "%s", r.err.msg);
    cs_tick_t t = r.finish;
    h_done(&r);
    cs_algofile_free(a);
    return t;
}

Test(msccl, proto_priced_on_the_wire)
{
    char *ll = with_proto("LL"), *ll128 = with_proto("LL128"), *simple = with_proto("Simple");
    const int64_t MiB = 1 << 20;
    cs_tick_t base = ring_time(simple, MiB, NULL);
    cr_expect_eq(ring_time(ll, MiB, NULL), base);            /* off: the data */
    cr_expect_eq(ring_time(ll, MiB, "proto=off"), base);
    cr_expect_eq(ring_time(simple, MiB, "proto=on"), base);  /* Simple: the data */
    cr_expect_eq(ring_time(ll, MiB, "proto=on"), ring_time(simple, 2 * MiB, NULL));
    cr_expect_eq(ring_time(ll128, MiB, "proto=on"), ring_time(simple, 4 * 279680, NULL));
    cr_expect_gt(ring_time(ll128, MiB, "proto=on"), base);
    free(ll);
    free(ll128);
    free(simple);
}
