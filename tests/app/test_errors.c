/*
 * test_errors.c - error messages as a contract (issue 19): every error path
 * of the command line that can be enumerated mechanically ends the way
 * docs/cli.md promises.
 *
 * The contract, checked by contract_check for every case:
 *   - the exit status is the documented one (docs/cli.md's table: 2 for
 *     usage, malformed input, unreadable files, values out of range; 3 for
 *     a deadlock), never >= 128 (a signal: abort, segfault);
 *   - standard error starts with "collsim: ";
 *   - the message names what was wrong: the spec key (`key 'clock'` or
 *     `clock=`), the option (`--bytes`), the offending value quoted, or the
 *     trace's FILE:LINE;
 *   - no prefix is repeated ("key 'x': key 'x'", "FILE: FILE:", "SPEC: spec
 *     \"SPEC\"");
 *   - the message is not cut: shorter than cs_error_t's buffer, and not
 *     ending in a dangling ": ".
 *
 * The cases come from tables, not one function each: every key of every
 * registered machine type (cs_machine_types) with a non-numeric, negative,
 * zero, huge value and an unknown key; every value-taking option of every
 * command with the value missing and malformed (a test checks that every
 * option `CMD --help` lists is in the table); every trace in
 * traces/malformed/.
 */
#include <criterion/criterion.h>

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "core/error.h"
#include "machines/machine.h"

TestSuite(errors, .init = cli_setup, .fini = cli_teardown, .timeout = 300);


/* ---- the contract -------------------------------------------------------- */

/* Whether segment [s, s+n) of the message appears again after `from`, as a
 * segment of its own ("X: ") or quoted ('X', "X"). */
static int seen_again(const char *from, const char *s, size_t n)
{
    char pat[3][CS_ERROR_MSG_MAX + 4];
    if (n + 3 > CS_ERROR_MSG_MAX)
        return 0;
    snprintf(pat[0], sizeof pat[0], "%.*s: ", (int)n, s);
    snprintf(pat[1], sizeof pat[1], "'%.*s'", (int)n, s);
    snprintf(pat[2], sizeof pat[2], "\"%.*s\"", (int)n, s);
    for (int i = 0; i < 3; i++)
        for (const char *p = strstr(from, pat[i]); p; p = strstr(p + 1, pat[i]))
            if (i > 0 || p == from || p[-1] == ' ')
                return 1;
    return 0;
}

/* NULL when o keeps the contract for `names` (any of the '|'-separated
 * alternatives must occur in the message; NULL: no check), else why not
 * (in a static buffer). */
static const char *contract_check(const cli_out_t *o, int want_status, const char *names)
{
    static char why[2 * CS_ERROR_MSG_MAX];
    const char *prefix = "collsim: ";
    if (o->status >= 128) {
        snprintf(why, sizeof why, "killed by signal %d", o->status - 128);
        return why;
    }
    if (o->status != want_status) {
        snprintf(why, sizeof why, "exit status %d, documented %d", o->status, want_status);
        return why;
    }
    if (strncmp(o->err, prefix, strlen(prefix)) != 0)
        return "standard error does not start with \"collsim: \"";
    const char *msg = o->err + strlen(prefix);
    size_t len = strcspn(msg, "\n");
    if (len == 0)
        return "empty message";
    if (len >= CS_ERROR_MSG_MAX - 1)
        return "message fills cs_error_t's buffer (cut)";
    if (len >= 2 && msg[len - 2] == ':' && msg[len - 1] == ' ')
        return "message ends in a dangling ': ' (cut)";
    char line[CS_ERROR_MSG_MAX];
    snprintf(line, sizeof line, "%.*s", (int)len, msg);
    /* every "X: " prefix: does X come again? */
    for (const char *seg = line, *colon; (colon = strstr(seg, ": ")) != NULL; seg = colon + 2) {
        size_t n = (size_t)(colon - seg);
        if (n >= 3 && seen_again(colon + 2, seg, n)) {
            snprintf(why, sizeof why, "prefix '%.*s' repeated", (int)n, seg);
            return why;
        }
    }
    if (names) {
        char alt[256];
        int found = 0;
        for (const char *a = names; *a && !found;) {
            size_t n = strcspn(a, "|");
            snprintf(alt, sizeof alt, "%.*s", (int)n, a);
            found = strstr(line, alt) != NULL;
            a += n + (a[n] == '|');
        }
        if (!found) {
            snprintf(why, sizeof why, "does not name %s", names);
            return why;
        }
    }
    return NULL;
}

/* Counts of a table walk: failures are listed together at the end, so that
 * one run shows every broken case, not the first. */
typedef struct tally {
    int cases, failed;
    char report[16384];
    size_t used;
} tally_t;

static void tally_add(tally_t *t, const char *label, const cli_out_t *o, const char *why)
{
    t->cases++;
    if (!why)
        return;
    const char *err = o->err;
    int n = (int)strcspn(err, "\n");
    t->failed++;
    if (t->used < sizeof t->report - 1)
        t->used += (size_t)snprintf(t->report + t->used, sizeof t->report - t->used,
                                    "  %s: %s\n    %.*s\n", label, why, n > 300 ? 300 : n, err);
}

static void tally_assert(const tally_t *t, int min_cases)
{
    cr_assert_geq(t->cases, min_cases, "only %d cases walked", t->cases);
    cr_assert_eq(t->failed, 0, "%d of %d cases break the error contract:\n%s", t->failed,
                 t->cases, t->report);
}

/* ---- machine specs: every key of every type ------------------------------ */

/* Specs to put a key into, beside each type's example: the first that
 * holds the key gets its value replaced, else the key is appended to the
 * type's example.  These are the configurations in which the key means
 * something (alphabeta's p on a ring, the net machine's generator keys). */
static const char *const extra_bases[] = {
    "alphabeta:topo=ring,p=8",
    "groq:racks=1",
    "net:gen=fattree,levels=2,down=4+4,up=1+2,par=1+1",
    "net:gen=twotier,nodes=4,gpus=8,nvbw=300GB/s,nvlat=0,radix=16",
    "net:gen=star,hosts=16,backbone=40GB/s,backlat=2us",
    "net:gen=torus,dims=4x4",
    "net:gen=dragonfly,a=4,p=2,h=2,g=3,arrangement=palmtree,gbw=50Gbps,glat=1us",
    "net:file=@SRC@/tests/data/net/two-leaves.edges,format=edgelist",
    NULL,
};

/* Keys whose value is free text (an output file name): any value may be
 * right, so only "no crash, and if refused then by the contract" holds. */
static const char *const free_text_keys[] = {"dump", NULL};

static int in_list(const char *const *list, const char *s)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

/* Whether spec `base` (of machine `type`) has key `key`: the position of
 * its value and its length. */
static int spec_find(const char *base, const char *key, size_t *at, size_t *len)
{
    const char *p = strchr(base, ':');
    size_t klen = strlen(key);
    while (p) {
        p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            *at = (size_t)(p + klen + 1 - base);
            *len = strcspn(p + klen + 1, ",");
            return 1;
        }
        p = strchr(p, ',');
    }
    return 0;
}

/* The spec with key=value: in the first base of the type that holds the
 * key, or appended to the type's example. */
static void spec_with(const cs_machine_type_t *t, const char *key, const char *value, char *out,
                      size_t cap)
{
    const char *src = getenv("COLLSIM_SOURCE_ROOT");
    size_t tl = strlen(t->name);
    char base[1024];
    for (int i = 0; extra_bases[i]; i++) {
        if (strncmp(extra_bases[i], t->name, tl) != 0 || extra_bases[i][tl] != ':')
            continue;
        const char *at = strstr(extra_bases[i], "@SRC@");
        if (at)
            snprintf(base, sizeof base, "%.*s%s%s", (int)(at - extra_bases[i]), extra_bases[i],
                     src ? src : ".", at + 5);
        else
            snprintf(base, sizeof base, "%s", extra_bases[i]);
        size_t pos, len;
        if (spec_find(base, key, &pos, &len)) {
            snprintf(out, cap, "%.*s%s%s", (int)pos, base, value, base + pos + len);
            return;
        }
    }
    size_t pos, len;
    if (spec_find(t->example, key, &pos, &len))
        snprintf(out, cap, "%.*s%s%s", (int)pos, t->example, value, t->example + pos + len);
    else
        snprintf(out, cap, "%s,%s=%s", t->example, key, value);
}

/* The values tried for every key: which must be refused. */
static const struct {
    const char *value;
    int must_fail; /* 0: may be a valid setting (zero, huge) */
    int huge;
} bad_values[] = {
    {"abc", 1, 0},
    {"-3", 1, 0},
    {"0", 0, 0},
    {"1e30", 0, 1},
    {"99999999999999999999", 0, 1},
    {"", 1, 0},
};

/* Known, fixed by the owner of D10 (issue 19: checked arithmetic at the
 * edges; remove after the merge): huge time and rate values overflow
 * int64 arithmetic in some machines' create (UBSan: groq.c's alignment
 * ticks with clock=1e30).  The messages are right in a plain build, where
 * they are checked; under the sanitizers, which stop the whole test at the
 * first overflow, the huge values are left out until D10 lands. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define SKIP_HUGE 1
#else
#define SKIP_HUGE 0
#endif

/* The machine made from `spec` in this process, reported as the command
 * line reports it (src/app: "collsim: MESSAGE", exit cs_status_exit_code):
 * some 600 specs in milliseconds instead of 600 processes.
 * cli_matches_in_process checks that the command line says the same. */
static cli_out_t spec_in_process(const char *spec)
{
    /* in the test's directory, as the command line runs: a spec may name
     * files (groq's dump= writes one) */
    char cwd[PATH_MAX];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(cli_tmpdir), 0);
    cs_error_t err = {0};
    cs_machine_t *m = NULL;
    int rc = cs_machine_new(spec, &m, &err);
    cs_machine_free(m);
    cr_assert_eq(chdir(cwd), 0);
    cli_out_t o = {.status = rc ? cs_status_exit_code(rc) : 0};
    size_t cap = strlen(err.msg) + 16;
    o.err = malloc(cap);
    o.out = calloc(1, 1);
    cr_assert(o.err && o.out);
    snprintf(o.err, cap, rc ? "collsim: %s\n" : "", err.msg);
    return o;
}

Test(errors, every_key_of_every_machine)
{
    int ntypes = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&ntypes);
    cr_assert_gt(ntypes, 0);
    tally_t *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    for (int i = 0; i < ntypes; i++) {
        for (int k = 0; types[i]->keys[k]; k++) {
            const char *key = types[i]->keys[k];
            for (size_t v = 0; v < sizeof bad_values / sizeof bad_values[0]; v++) {
                if (SKIP_HUGE && bad_values[v].huge)
                    continue;
                char spec[2048], label[2200], names[256];
                spec_with(types[i], key, bad_values[v].value, spec, sizeof spec);
                snprintf(label, sizeof label, "%s key %s=%s (%s)", types[i]->name, key,
                         bad_values[v].value, spec);
                cli_out_t o = spec_in_process(spec);
                const char *why = NULL;
                if (o.status == 0) {
                    if (bad_values[v].must_fail && !in_list(free_text_keys, key))
                        why = "accepted (exit 0)";
                } else {
                    /* the key, or the value quoted or as a file name */
                    const char *val = bad_values[v].value;
                    if (*val)
                        snprintf(names, sizeof names, "'%s'|%s=|\"%s\"|'%s'|%s: ", key, key,
                                 val, val, val);
                    else
                        snprintf(names, sizeof names, "'%s'|%s=", key, key);
                    why = contract_check(&o, 2, names);
                }
                tally_add(t, label, &o, why);
                cli_out_free(&o);
            }
        }
        /* an unknown key: refused, named, with the valid keys listed */
        char spec[1024], label[1100];
        snprintf(spec, sizeof spec, "%s,bogus_key=1", types[i]->example);
        snprintf(label, sizeof label, "%s unknown key (%s)", types[i]->name, spec);
        cli_out_t o = spec_in_process(spec);
        const char *why = contract_check(&o, 2, "'bogus_key'");
        if (!why && !strstr(o.err, types[i]->keys[0]))
            why = "does not list the valid keys";
        tally_add(t, label, &o, why);
        cli_out_free(&o);
    }
    /* an unknown type, and a spec without a type */
    const char *const specs[] = {"nosuchmachine:p=4", "", ":p=4", "loggp:p", "loggp:p=4,,",
                                 "loggp:p=4,p=8", NULL};
    for (int i = 0; specs[i]; i++) {
        char label[128];
        snprintf(label, sizeof label, "spec '%s'", specs[i]);
        cli_out_t o = spec_in_process(specs[i]);
        tally_add(t, label, &o, contract_check(&o, 2, NULL));
        cli_out_free(&o);
    }
    tally_assert(t, 100);
    free(t);
}

/* The command line reports a bad spec exactly as spec_in_process does,
 * through `collsim topo`: the first two keys of every type (the command
 * line only adds "collsim: "; which key is wrong is the machine's code,
 * walked in process above). */
Test(errors, cli_matches_in_process)
{
    int ntypes = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&ntypes);
    for (int i = 0; i < ntypes; i++) {
        for (int k = 0; k < 2 && types[i]->keys[k]; k++) {
            char spec[2048];
            spec_with(types[i], types[i]->keys[k], k % 2 ? "-3" : "abc", spec, sizeof spec);
            cli_out_t a = spec_in_process(spec), b = RUN("topo", "--machine", spec);
            cr_expect_eq(b.status, a.status, "%s: exit %d, in process %d", spec, b.status,
                         a.status);
            if (a.status)
                cr_expect_eq(strncmp(b.err, a.err, strlen(a.err)), 0,
                             "%s:\n  collsim:    %s  in process: %s", spec, b.err, a.err);
            cli_out_free(&a);
            cli_out_free(&b);
        }
    }
}

/* ---- command options ----------------------------------------------------- */

#define RUNC "run", "--machine", "loggp:p=4", "--coll", "allreduce", "--bytes", "64"
#define SWEEP "sweep", "--machine", "loggp:p=4", "--coll", "allreduce", "--algos", "ring", \
              "--bytes", "8,16"
#define CMP "compare", "--coll", "allreduce", "--bytes", "64", "--machines", "loggp:p=4"
#define REPLAY "replay", "@SRC@/traces/ring4.goal", "--machine", "loggp:p=4"
#define BT "bench-table", "--machine", "loggp:p=4", "--coll", "allreduce", "--bytes", "64"
#define EXPORT "export", "--coll", "allreduce", "--ranks", "4", "--bytes", "64"

/* One case: the arguments (NULL-terminated; "@SRC@" at the start of one
 * is the source root), the exit status and what the message must name. */
typedef struct opt_case {
    const char *argv[24];
    int status;
    const char *names;
} opt_case_t;

/* Every value-taking option of every command, with its value missing (the
 * option last) and malformed; every flag that excludes another; a few
 * values out of range.  `CMD --help` options must all appear here
 * (every_option_is_in_the_table). */
static const opt_case_t opt_cases[] = {
    /* collsim itself */
    {{NULL}, 2, "command"},
    {{"nosuchcommand", NULL}, 2, "'nosuchcommand'"},
    {{"rnu", NULL}, 2, "did you mean 'run'"},
    {{"run", "--mahcine", "x", NULL}, 2, "did you mean '--machine'"},
    {{"run", "--m", "x", NULL}, 2, "ambiguous option '--m': --machine, --metric, --mode"},
    {{"--nosuchoption", NULL}, 2, "--nosuchoption"},
    /* run */
    {{"run", NULL}, 2, "--machine"},
    {{"run", "--machine", NULL}, 2, "'--machine'"},
    {{"run", "--machine", "loggp:p=4", NULL}, 2, "--coll|--program"},
    {{"run", "--machine", "loggp:p=4", "--program", NULL}, 2, "'--program'"},
    {{"run", "--machine", "loggp:p=4", "--program", "nofile.goal", NULL}, 2, "nofile.goal"},
    {{"run", "--machine", "loggp:p=4", "--coll", NULL}, 2, "'--coll'"},
    {{"run", "--machine", "loggp:p=4", "--coll", "nocoll", "--bytes", "8", NULL}, 2, "nocoll"},
    {{RUNC, "--algo", NULL}, 2, "'--algo'"},
    {{RUNC, "--algo", "noalgo", NULL}, 2, "noalgo"},
    {{RUNC, "--algo", "rign", NULL}, 2, "did you mean \"ring\""},
    {{RUNC, "--algo", "cns-ring", NULL}, 2, "is an algorithm of allgather"},
    {{"run", "--machine", "alphabta:p=4", "--coll", "allreduce", "--bytes", "8", NULL}, 2,
     "did you mean \"alphabeta\""},
    {{"run", "--machine", "loggp:tcik=1", "--coll", "allreduce", "--bytes", "8", NULL}, 2,
     "did you mean 'tick'"},
    {{"run", "--machine", "alphabeta:topo=trous,p=4", "--coll", "allreduce", "--bytes", "8",
      NULL}, 2, "did you mean \"torus\""},
    {{"run", "--machine", "loggp:p=4", "--coll", "allreduse", "--bytes", "8", NULL}, 2,
     "did you mean \"allreduce\""},
    {{RUNC, "--quiet", "extra", NULL}, 2, "'extra'"},
    {{RUNC, "--bytes", NULL}, 2, "'--bytes'"},
    {{RUNC, "--bytes", "abc", NULL}, 2, "--bytes"},
    {{RUNC, "--bytes", "-5", NULL}, 2, "--bytes"},
    {{RUNC, "--bytes", "1e400", NULL}, 2, "--bytes"},
    {{RUNC, "--root", NULL}, 2, "'--root'"},
    {{RUNC, "--root", "abc", NULL}, 2, "--root"},
    {{RUNC, "--root", "1", NULL}, 2, "--root"},
    {{"run", "--machine", "loggp:p=4", "--coll", "bcast", "--bytes", "8", "--root", "9", NULL},
     2, "--root"},
    {{RUNC, "--ranks", NULL}, 2, "'--ranks'"},
    {{RUNC, "--ranks", "0", NULL}, 2, "--ranks"},
    {{RUNC, "--ranks", "abc", NULL}, 2, "--ranks"},
    {{RUNC, "--ranks", "5", NULL}, 2, "5"},
    {{RUNC, "--order", NULL}, 2, "'--order'"},
    {{RUNC, "--order", "nofile", NULL}, 2, "--order"},
    {{RUNC, "--order", "snake", NULL}, 2, "snake"},
    {{RUNC, "--opt", NULL}, 2, "'--opt'"},
    {{RUNC, "--opt", "bad", NULL}, 2, "--opt"},
    {{RUNC, "--opt", "nokey=1", NULL}, 2, "nokey"},
    {{RUNC, "--mode", NULL}, 2, "'--mode'"},
    {{RUNC, "--mode", "warp", NULL}, 2, "--mode"},
    {{RUNC, "--queue", NULL}, 2, "'--queue'"},
    {{RUNC, "--queue", "nope", NULL}, 2, "--queue"},
    {{RUNC, "--json", NULL}, 2, "'--json'"},
    {{RUNC, "--json", "/nonexistent/x.json", NULL}, 2, "/nonexistent/x.json"},
    {{RUNC, "--heatmap", NULL}, 2, "'--heatmap'"},
    {{RUNC, "--heatmap", "x.bmp", NULL}, 2, "--heatmap"},
    {{RUNC, "--metric", NULL}, 2, "'--metric'"},
    {{RUNC, "--metric", "nope", "--heatmap", "h.svg", NULL}, 2, "--metric"},
    {{RUNC, "--window", NULL}, 2, "'--window'"},
    {{RUNC, "--window", "abc", "--heatmap", "h.svg", NULL}, 2, "--window"},
    {{RUNC, "--scale", "50:10", "--heatmap", "h.svg", NULL}, 2, "--scale '50:10'"},
    {{RUNC, "--scale", "0:50", NULL}, 2, "--scale needs --heatmap"},
    {{RUNC, "--size", "huge", "--heatmap", "h.svg", NULL}, 2, "--size 'huge'"},
    {{RUNC, "--size", "3x", NULL}, 2, "--size needs --heatmap"},
    {{RUNC, "--frames", NULL}, 2, "'--frames'"},
    {{RUNC, "--frame-step", NULL}, 2, "'--frame-step'"},
    {{RUNC, "--frame-step", "abc", "--frames", "fr", NULL}, 2, "--frame-step"},
    {{RUNC, "--timeline", NULL}, 2, "'--timeline'"},
    {{RUNC, "--timeline-limit", NULL}, 2, "'--timeline-limit'"},
    {{RUNC, "--timeline-limit", "abc", "--timeline", "t.json", NULL}, 2, "--timeline-limit"},
    {{"run", "--machine", "loggp:p=4", "--program", "x.goal", "--validate", NULL}, 2,
     "--validate"},
    {{RUNC, "--windowed", "--whole", NULL}, 2, "--whole"},
    {{"run", "--machine", "loggp:p=4", "--program", "x.goal", "--whole", NULL}, 2, "--whole"},
    /* benchmark loops (docs/loops.md) */
    {{RUNC, "--iterations", NULL}, 2, "'--iterations'"},
    {{RUNC, "--iterations", "0", NULL}, 2, "--iterations"},
    {{RUNC, "--iterations", "-5", NULL}, 2, "--iterations"},
    {{RUNC, "--iterations", "99999999999999999999", NULL}, 2, "--iterations"},
    {{RUNC, "--iterations", "1000000", "--warmup", "1000000", NULL}, 2, "--iterations"},
    {{RUNC, "--warmup", NULL}, 2, "'--warmup'"},
    {{RUNC, "--warmup", "-1", NULL}, 2, "--warmup"},
    {{RUNC, "--between", NULL}, 2, "'--between'"},
    {{RUNC, "--between", "fence", NULL}, 2, "--between"},
    {{RUNC, "--between", "barrier:nosuch", NULL}, 2, "nosuch"},
    {{RUNC, "--loop", NULL}, 2, "'--loop'"},
    {{RUNC, "--loop", "mpi", NULL}, 2, "--loop"},
    {{RUNC, "--iterations", "3", "--windowed", NULL}, 2, "--windowed"},
    {{RUNC, "--program", "x.goal", NULL}, 2, "--program"},
    {{RUNC, "--predict", "--nosuch", NULL}, 2, "--nosuch"},
    {{RUNC, "--no-timing", "--force", "extra", NULL}, 2, "'extra'"},
    /* run's benchmark loop (branch loops) */
    {{RUNC, "--iterations", "0", NULL}, 2, "--iterations"},
    {{RUNC, "--warmup", "-1", NULL}, 2, "--warmup"},
    {{RUNC, "--between", "nope", NULL}, 2, "--between"},
    {{RUNC, "--loop", "nope", NULL}, 2, "--loop"},
    {{RUNC, "--loop", "nccl-test", NULL}, 2, "did you mean 'nccl-tests'"},
    /* bench-table */
    {{"bench-table", NULL}, 2, "--machine"},
    {{BT, "--machine", NULL}, 2, "'--machine'"},
    {{BT, "--coll", "nope", NULL}, 2, "--coll"},
    {{BT, "--algo", "nope", NULL}, 2, "--algo"},
    {{BT, "--bytes", "8..x", NULL}, 2, "--bytes"},
    {{BT, "--bytes", "6", NULL}, 2, "--bytes 6"},
    {{BT, "--format", "nope", NULL}, 2, "--format"},
    {{BT, "--format", "ncc", NULL}, 2, "did you mean 'nccl'"},
    {{BT, "--full", NULL}, 2, "--full"},
    {{BT, "--validate", "extra", NULL}, 2, "'extra'"},
    {{"bench-table", "--machine", "loggp:p=4", "--coll", "broadcast", "--bytes", "64",
      "--root", "9", NULL}, 2, "--root"},
    {{BT, "--ranks", "0", NULL}, 2, "--ranks"},
    {{BT, "--order", "nope", NULL}, 2, "--order"},
    {{BT, "--opt", "k=2", NULL}, 2, "--opt"},
    {{BT, "--mode", "nope", NULL}, 2, "--mode"},
    {{BT, "--force", "extra", NULL}, 2, "'extra'"},
    {{BT, "--iterations", "0", NULL}, 2, "--iterations"},
    {{BT, "--warmup", "-1", NULL}, 2, "--warmup"},
    {{BT, "--between", "nope", NULL}, 2, "--between"},
    {{BT, "--loop", "nope", NULL}, 2, "--loop"},
    {{BT, "--single", "--loop", "osu", NULL}, 2, "--single"},
    /* sweep */
    {{"sweep", NULL}, 2, "--machine"},
    {{SWEEP, "--jobs", NULL}, 2, "'--jobs'"},
    {{SWEEP, "--jobs", "many", NULL}, 2, "--jobs 'many'"},
    {{SWEEP, "--shard", "2", NULL}, 2, "--shard '2'"},
    {{SWEEP, "--shard", "5/4", NULL}, 2, "--shard I '5'"},
    {{SWEEP, "--shard-file", "x.shard", NULL}, 2, "--shard-file"},
    {{SWEEP, "--mpi", "--jobs", "2", NULL}, 2, "--mpi"},
    {{CMP, "--jobs", "-2", NULL}, 2, "--jobs '-2'"},
    {{CMP, "--shard", "0/2", NULL}, 2, "--shard I '0'"},
    {{CMP, "--shard-file", "x.shard", NULL}, 2, "--shard-file"},
    {{CMP, "--mpi", "--shard", "1/2", NULL}, 2, "--mpi"},
    {{CMP, "--heatmaps", "h", "--jobs", "2", NULL}, 2, "--heatmaps"},
    {{REPLAY, "--jobs", "x", NULL}, 2, "--jobs 'x'"},
    {{REPLAY, "--shard", "1/2", NULL}, 2, "--shard"},
    {{REPLAY, "--shard-file", "x.shard", NULL}, 2, "--shard-file"},
    {{REPLAY, "--mpi", "--jobs", "3", NULL}, 2, "--mpi"},
    {{SWEEP, "--machine", NULL}, 2, "'--machine'"},
    {{SWEEP, "--coll", NULL}, 2, "'--coll'"},
    {{SWEEP, "--algos", NULL}, 2, "'--algos'"},
    {{SWEEP, "--algos", "nope", NULL}, 2, "--algos"},
    {{SWEEP, "--bytes", NULL}, 2, "'--bytes'"},
    {{SWEEP, "--bytes", "8..x", NULL}, 2, "--bytes"},
    {{SWEEP, "--bytes", "1..1TiB:+1", NULL}, 2, "--bytes"},
    {{SWEEP, "--root", NULL}, 2, "'--root'"},
    {{SWEEP, "--root", "abc", NULL}, 2, "--root"},
    {{SWEEP, "--ranks", NULL}, 2, "'--ranks'"},
    {{SWEEP, "--ranks", "0", NULL}, 2, "--ranks"},
    {{SWEEP, "--ranks", "a..b", NULL}, 2, "--ranks"},
    {{SWEEP, "--order", NULL}, 2, "'--order'"},
    {{SWEEP, "--order", "nofile", NULL}, 2, "--order"},
    {{SWEEP, "--opt", NULL}, 2, "'--opt'"},
    {{SWEEP, "--opt", "nope:seg=1", NULL}, 2, "--opt"},
    {{SWEEP, "--mode", NULL}, 2, "'--mode'"},
    {{SWEEP, "--mode", "warp", NULL}, 2, "--mode"},
    {{SWEEP, "--csv", NULL}, 2, "'--csv'"},
    {{SWEEP, "--csv", "/nonexistent/a.csv", NULL}, 2, "/nonexistent/a.csv"},
    {{SWEEP, "--json", NULL}, 2, "'--json'"},
    {{SWEEP, "--json", "/nonexistent/a.json", NULL}, 2, "/nonexistent/a.json"},
    {{SWEEP, "--json", "-", "--csv", "-", NULL}, 2, "--json"},
    {{SWEEP, "--plot", NULL}, 2, "'--plot'"},
    {{SWEEP, "--plot", "x.bmp", NULL}, 2, "--plot"},
    {{SWEEP, "--title", NULL}, 2, "'--title'"},
    {{SWEEP, "--xlabel", NULL}, 2, "'--xlabel'"},
    {{SWEEP, "--ylabel", NULL}, 2, "'--ylabel'"},
    {{SWEEP, "--unit", NULL}, 2, "'--unit'"},
    {{SWEEP, "--unit", "nope", NULL}, 2, "--unit"},
    {{SWEEP, "--keep-going", "--predict", "--force", "extra", NULL}, 2, "'extra'"},
    {{SWEEP, "--machines", NULL}, 2, "'--machines'"},
    {{SWEEP, "--machines", ";", NULL}, 2, "--machines"},
    {{SWEEP, "--machines", "loggp:p=4;loggp:p=8", NULL}, 2, "--machines"},
    {{SWEEP, "--unit", "furlongs", NULL}, 2, "seconds, ticks"},
    {{SWEEP, "--y", NULL}, 2, "'--y'"},
    {{SWEEP, "--y", "bsbw", "--plot", "p.svg", NULL}, 2, "did you mean 'busbw'"},
    {{SWEEP, "--y", "busbw", NULL}, 2, "add --plot FILE"},
    {{SWEEP, "--y", "algbw", "--plot", "p.svg", "--unit", "ticks", NULL}, 2, "--unit ticks"},
    {{"sweep", "--machine", "loggp:p=4", "--coll", "barrier", "--algos", "all", "--bytes", "1",
      "--y", "busbw", "--plot", "p.svg", NULL}, 2, "a barrier moves no data"},
    {{SWEEP, "--quiet", "extra", NULL}, 2, "'extra'"},
    /* compare */
    {{"compare", NULL}, 2, "--coll"},
    {{CMP, "--coll", NULL}, 2, "'--coll'"},
    {{CMP, "--algo", NULL}, 2, "'--algo'"},
    {{CMP, "--algo", "zz", NULL}, 2, "zz"},
    {{CMP, "--bytes", NULL}, 2, "'--bytes'"},
    {{CMP, "--bytes", "zz", NULL}, 2, "--bytes"},
    {{CMP, "--machines", NULL}, 2, "'--machines'"},
    {{CMP, "--machines", "", NULL}, 2, "--machines"},
    {{CMP, "--machines", "nope:x", NULL}, 2, "nope:x"},
    {{CMP, "--ranks", NULL}, 2, "'--ranks'"},
    {{CMP, "--ranks", "zz", NULL}, 2, "--ranks"},
    {{CMP, "--ranks", "all", "--ranks", "4", NULL}, 2, "--ranks all"},
    {{CMP, "--unit", NULL}, 2, "'--unit'"},
    {{CMP, "--unit", "hours", NULL}, 2, "--unit"},
    {{CMP, "--y", NULL}, 2, "'--y'"},
    {{CMP, "--y", "algbv", "--plot", "p.svg", NULL}, 2, "did you mean 'algbw'"},
    {{CMP, "--y", "busbw", NULL}, 2, "add --plot FILE"},
    {{CMP, "--y", "busbw", "--plot", "p.svg", "--unit", "ticks", NULL}, 2, "--unit ticks"},
    {{"compare", "--coll", "barrier", "--machines", "loggp:p=4", "--y", "algbw", "--plot",
      "p.svg", NULL}, 2, "a barrier moves no data"},
    {{CMP, "--bytes", "64..8", NULL}, 2, "--bytes"},
    {{CMP, "--root", NULL}, 2, "'--root'"},
    {{CMP, "--root", "zz", NULL}, 2, "--root"},
    {{CMP, "--order", NULL}, 2, "'--order'"},
    {{CMP, "--opt", NULL}, 2, "'--opt'"},
    {{CMP, "--opt", "zz", NULL}, 2, "--opt"},
    {{CMP, "--mode", NULL}, 2, "'--mode'"},
    {{CMP, "--mode", "zz", NULL}, 2, "--mode"},
    {{CMP, "--csv", NULL}, 2, "'--csv'"},
    {{CMP, "--csv", "/nonexistent/a.csv", NULL}, 2, "/nonexistent/a.csv"},
    {{CMP, "--markdown", NULL}, 2, "'--markdown'"},
    {{CMP, "--markdown", "/nonexistent/a.md", NULL}, 2, "/nonexistent/a.md"},
    {{CMP, "--json", NULL}, 2, "'--json'"},
    {{CMP, "--json", "/nonexistent/a.json", NULL}, 2, "/nonexistent/a.json"},
    {{CMP, "--json", "-", "--markdown", "-", NULL}, 2, "--json"},
    {{CMP, "--plot", NULL}, 2, "'--plot'"},
    {{CMP, "--plot", "a.bmp", NULL}, 2, "--plot"},
    {{CMP, "--title", NULL}, 2, "'--title'"},
    {{CMP, "--heatmaps", NULL}, 2, "'--heatmaps'"},
    {{CMP, "--scale", "0:50", NULL}, 2, "--scale needs --heatmaps"},
    {{CMP, "--scale", "x", "--heatmaps", "d", NULL}, 2, "--scale 'x'"},
    {{CMP, "--size", "page", NULL}, 2, "--size needs --heatmaps"},
    {{CMP, "--size", "0x0", "--heatmaps", "d", NULL}, 2, "--size '0x0'"},
    {{CMP, "--metric", NULL}, 2, "'--metric'"},
    {{CMP, "--metric", "zz", NULL}, 2, "--metric"},
    {{CMP, "--log", "--linear", "--validate", "--no-timing", "--force", "extra", NULL}, 2, "'extra'"},
    {{CMP, "--quiet", "extra", NULL}, 2, "'extra'"},
    /* replay */
    {{"replay", NULL}, 2, "TRACE"},
    {{"replay", "nofile", "--machine", "loggp:p=4", NULL}, 2, "nofile"},
    {{REPLAY, "--machine", NULL}, 2, "'--machine'"},
    {{REPLAY, "--machines", NULL}, 2, "'--machines'"},
    {{REPLAY, "--machines", "loggp:p=4", NULL}, 2, "--machines"},
    {{REPLAY, "--format", NULL}, 2, "'--format'"},
    {{REPLAY, "--format", "zz", NULL}, 2, "--format"},
    {{REPLAY, "--map", NULL}, 2, "'--map'"},
    {{REPLAY, "--map", "zz", NULL}, 2, "--map"},
    {{REPLAY, "--map", "random:x", NULL}, 2, "--map"},
    {{REPLAY, "--algo-for", NULL}, 2, "'--algo-for'"},
    {{REPLAY, "--algo-for", "zz", NULL}, 2, "--algo-for"},
    {{REPLAY, "--flops", NULL}, 2, "'--flops'"},
    {{REPLAY, "--skip-unknown", NULL}, 2, "Chakra"},
    {{REPLAY, "--comm-group", NULL}, 2, "'--comm-group'"},
    {{REPLAY, "--comm-group", "groups.json", NULL}, 2, "Chakra"},
    {{REPLAY, "--flops", "zz", NULL}, 2, "--flops"},
    {{REPLAY, "--mode", NULL}, 2, "'--mode'"},
    {{REPLAY, "--mode", "zz", NULL}, 2, "--mode"},
    {{REPLAY, "--queue", NULL}, 2, "'--queue'"},
    {{REPLAY, "--queue", "zz", NULL}, 2, "--queue"},
    {{REPLAY, "--json", NULL}, 2, "'--json'"},
    {{REPLAY, "--json", "/nonexistent/j", NULL}, 2, "/nonexistent/j"},
    {{REPLAY, "--no-timing", "--force", "extra", NULL}, 2, "'extra'"},
    {{REPLAY, "--quiet", "extra", NULL}, 2, "'extra'"},
    /* export */
    {{"export", NULL}, 2, "--coll"},
    {{EXPORT, "--coll", NULL}, 2, "'--coll'"},
    {{EXPORT, "--format", NULL}, 2, "'--format'"},
    {{EXPORT, "--format", "zz", NULL}, 2, "--format"},
    {{EXPORT, "--ranks", NULL}, 2, "'--ranks'"},
    {{EXPORT, "--ranks", "zz", NULL}, 2, "--ranks"},
    {{EXPORT, "--bytes", NULL}, 2, "'--bytes'"},
    {{EXPORT, "--bytes", "zz", NULL}, 2, "--bytes"},
    {{EXPORT, "--machine", NULL}, 2, "'--machine'"},
    {{EXPORT, "--machine", "zz", NULL}, 2, "zz"},
    {{EXPORT, "--output", NULL}, 2, "'--output'"},
    {{EXPORT, "--output", "/nonexistent/x", NULL}, 2, "/nonexistent/x"},
    {{EXPORT, "--algo", NULL}, 2, "'--algo'"},
    {{EXPORT, "--algo", "zz", NULL}, 2, "zz"},
    {{EXPORT, "--root", NULL}, 2, "'--root'"},
    {{EXPORT, "--root", "zz", NULL}, 2, "--root"},
    {{EXPORT, "--opt", NULL}, 2, "'--opt'"},
    {{EXPORT, "--opt", "zz", NULL}, 2, "--opt"},
    {{EXPORT, "--chunks", NULL}, 2, "'--chunks'"},
    {{EXPORT, "--chunks", "zz", NULL}, 2, "--chunks"},
    {{EXPORT, "--trace", NULL}, 2, "'--trace'"},
    {{"export", "--format", "chakra", "--trace", "/nonexistent/t", "--ranks", "4", "-o",
      "/nonexistent/x", NULL}, 2, "/nonexistent/t"},
    {{EXPORT, "--trace-format", NULL}, 2, "'--trace-format'"},
    {{EXPORT, "--trace-format", "zz", NULL}, 2, "--trace-format"},
    {{EXPORT, "--algo-for", NULL}, 2, "'--algo-for'"},
    {{EXPORT, "--algo-for", "zz", NULL}, 2, "--algo-for"},
    {{EXPORT, "--flops", NULL}, 2, "'--flops'"},
    {{EXPORT, "--flops", "zz", NULL}, 2, "--flops"},
    /* topo */
    {{"topo", NULL}, 2, "--machine"},
    {{"topo", "--machine", NULL}, 2, "'--machine'"},
    {{"topo", "--machine", "loggp:p=4", "--graphml", NULL}, 2, "'--graphml'"},
    {{"topo", "--machine", "loggp:p=4", "--graphml", "/nonexistent/x", NULL}, 2,
     "/nonexistent/x"},
    {{"topo", "--machine", "loggp:p=4", "--dot", NULL}, 2, "'--dot'"},
    {{"topo", "--machine", "loggp:p=4", "--dot", "/nonexistent/x", NULL}, 2, "/nonexistent/x"},
    {{"topo", "--machine", "loggp:p=4", "--quiet", "extra", NULL}, 2, "'extra'"},
    {{"topo", "--machine", "loggp:p=4", "--dto", "x", NULL}, 2, "did you mean '--dot'"},
    /* list */
    {{"list", NULL}, 2, "machines"},
    {{"list", "zz", NULL}, 2, "'zz'"},
    {{"list", "algoritms", NULL}, 2, "did you mean 'algorithms'"},
    {{"list", "--coll", NULL}, 2, "'--coll'"},
    {{"list", "--coll", "zz", "algorithms", NULL}, 2, "--coll"},
    {{"list", "--coll", "allreduce", "machines", NULL}, 2, "--coll"},
    {{"list", "--wide", "algorithms", "extra", NULL}, 2, "'extra'"},
    /* bench: only the refusals, never a workload (they run for seconds) */
    {{"bench", "--workload", NULL}, 2, "'--workload'"},
    {{"bench", "--workload", "zz", NULL}, 2, "'zz'"},
    {{"bench", "--mode", NULL}, 2, "'--mode'"},
    {{"bench", "--mode", "zz", NULL}, 2, "--mode"},
    {{"bench", "--queue", NULL}, 2, "'--queue'"},
    {{"bench", "--queue", "zz", NULL}, 2, "--queue"},
    {{"bench", "--data", NULL}, 2, "'--data'"},
    {{"bench", "--no-fork", "--no-header", "extra", NULL}, 2, "extra"},
    {{"bench", "--windowed", NULL}, 2, "--windowed"}, /* named in --help, run's option */
};

/* argv of a case with "@SRC@" expanded (the strings are kept in bufs). */
static void case_argv(const opt_case_t *c, const char **argv, char bufs[][PATH_MAX])
{
    const char *src = getenv("COLLSIM_SOURCE_ROOT");
    int n = 0;
    for (; c->argv[n]; n++) {
        if (strncmp(c->argv[n], "@SRC@", 5) == 0) {
            snprintf(bufs[n], PATH_MAX, "%s%s", src ? src : ".", c->argv[n] + 5);
            argv[n] = bufs[n];
        } else {
            argv[n] = c->argv[n];
        }
    }
    argv[n] = NULL;
}

static void case_label(const char *const *argv, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "collsim");
    for (int i = 0; argv[i] && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, " %s", argv[i]);
}

Test(errors, every_option_of_every_command)
{
    tally_t *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    static char bufs[24][PATH_MAX];
    for (size_t i = 0; i < sizeof opt_cases / sizeof opt_cases[0]; i++) {
        const char *argv[25];
        char label[1024];
        case_argv(&opt_cases[i], argv, bufs);
        case_label(argv, label, sizeof label);
        cli_out_t o = run_cli(argv);
        tally_add(t, label, &o, contract_check(&o, opt_cases[i].status, opt_cases[i].names));
        cli_out_free(&o);
    }
    tally_assert(t, 150);
    free(t);
}

/* Every option a command's --help lists is in opt_cases, so that a new
 * option cannot join without its error cases. */
Test(errors, every_option_is_in_the_table)
{
    const char *const cmds[] = {"run", "sweep", "compare", "replay", "export", "topo", "bench",
                                "bench-table", "list", NULL};
    char missing[4096] = "";
    size_t used = 0;
    for (int c = 0; cmds[c]; c++) {
        cli_out_t o = RUN(cmds[c], "--help");
        cr_assert_eq(o.status, 0, "%s --help: exit %d", cmds[c], o.status);
        for (const char *p = strstr(o.out, "--"); p; p = strstr(p + 2, "--")) {
            if (p > o.out && (isalnum((unsigned char)p[-1]) || p[-1] == '-'))
                continue;
            char opt[64];
            size_t n = 2;
            while (n < sizeof opt - 1 && (isalnum((unsigned char)p[n]) || p[n] == '-'))
                n++;
            if (n == 2 || n == sizeof opt - 1)
                continue;
            snprintf(opt, sizeof opt, "%.*s", (int)n, p);
            if (strcmp(opt, "--help") == 0)
                continue;
            int found = 0;
            for (size_t i = 0; i < sizeof opt_cases / sizeof opt_cases[0] && !found; i++) {
                if (!opt_cases[i].argv[0] || strcmp(opt_cases[i].argv[0], cmds[c]) != 0)
                    continue;
                for (int a = 1; opt_cases[i].argv[a] && !found; a++)
                    found = strcmp(opt_cases[i].argv[a], opt) == 0;
            }
            if (!found && !strstr(missing, opt) && used < sizeof missing - 80)
                used += (size_t)snprintf(missing + used, sizeof missing - used, " %s %s;",
                                         cmds[c], opt);
        }
        cli_out_free(&o);
    }
    cr_assert_str_eq(missing, "", "options without error cases:%s", missing);
}

/* ---- malformed traces ----------------------------------------------------- */

/* Every file of traces/malformed/, replayed (auto format) and, for GOAL
 * files, run as a program: exit 2, the message names the file with a line
 * number ("FILE:LINE"), except an empty file, which has no line. */
Test(errors, every_malformed_trace)
{
    const char *src = getenv("COLLSIM_SOURCE_ROOT");
    cr_assert_not_null(src, "COLLSIM_SOURCE_ROOT is not set");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/traces/malformed", src);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s: %s", dir, strerror(errno));
    tally_t *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    int goal = 0, ti = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX + 256], names[PATH_MAX + 300], label[PATH_MAX + 300];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int is_goal = strstr(e->d_name, ".goal") != NULL;
        goal += is_goal;
        ti += strstr(e->d_name, ".ti") != NULL;
        struct stat st;
        cr_assert_eq(stat(path, &st), 0);
        if (st.st_size == 0)
            snprintf(names, sizeof names, "%s: ", path);
        else
            snprintf(names, sizeof names, "%s:", path);
        for (int how = 0; how < 1 + is_goal; how++) {
            cli_out_t o = how == 0 ? RUN("replay", path, "--machine", "loggp:p=16")
                                   : RUN("run", "--machine", "loggp:p=16", "--program", path);
            snprintf(label, sizeof label, "%s %s", how == 0 ? "replay" : "run --program",
                     e->d_name);
            const char *why = contract_check(&o, 2, names);
            /* FILE:LINE: a digit right after "FILE:" */
            if (!why && st.st_size > 0) {
                const char *at = strstr(o.err, names);
                if (!isdigit((unsigned char)at[strlen(names)]))
                    why = "names the file without a line number";
            }
            tally_add(t, label, &o, why);
            cli_out_free(&o);
        }
    }
    closedir(d);
    cr_assert_geq(goal, 7, "traces/malformed has %d GOAL files", goal);
    cr_assert_geq(ti, 7, "traces/malformed has %d TI files", ti);
    tally_assert(t, 20);
    free(t);
}

/* A program that can never finish: exit 3, the waiting ranks named. */
Test(errors, deadlock_exit_status)
{
    char *path = cli_write("dead.goal", "num_ranks 2\n\nrank 0 {\nrecv 8b from 1\n}\n\n"
                                        "rank 1 {\nrecv 8b from 0\n}\n");
    const char *const machines[] = {"loggp:p=2", "alphabeta:topo=ring,p=2", NULL};
    for (int i = 0; machines[i]; i++) {
        cli_out_t o = RUN("run", "--machine", machines[i], "--program", path);
        const char *why = contract_check(&o, 3, "rank 0|rank 1");
        cr_expect_null(why, "%s: %s:\n%s", machines[i], why ? why : "", o.err);
        cli_out_free(&o);
    }
    free(path);
}

/* The checker itself: a repeated prefix and a cut message are caught
 * (messages written here by hand, not by collsim). */
Test(errors, the_checker_catches_what_it_should)
{
    cli_out_t o = {.status = 2};
    char big[CS_ERROR_MSG_MAX + 32];
    const struct {
        const char *err;
        int bad;
    } cases[] = {
        {"collsim: key 'clock': key 'clock': ust be positive\n", 1},
        {"collsim: f.goal:3: f.goal:3: expected x\n", 1},
        {"collsim: nope:x: spec \"nope:x\": missing '='\n", 1},
        {"collsim: key 'clock': must be positive, got \"0\"\n", 0},
        {"collsim: run: --bytes: expected a byte count\nTry 'collsim run --help'.\n", 0},
        {"collsim: f.goal:3: label 'l9' is not defined: \n", 1},
        {"key 'clock': must be positive\n", 1},
        {"collsim: \n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        o.err = (char *)cases[i].err;
        const char *why = contract_check(&o, 2, NULL);
        cr_expect_eq(why != NULL, cases[i].bad, "%s -> %s", cases[i].err, why ? why : "ok");
    }
    memset(big, 'x', sizeof big - 1);
    memcpy(big, "collsim: ", 9);
    big[sizeof big - 1] = '\0';
    o.err = big;
    cr_expect_not_null(contract_check(&o, 2, NULL));
    o.err = "collsim: x\n";
    o.status = 134;
    cr_expect_not_null(contract_check(&o, 2, NULL));
    o.status = 0;
    cr_expect_not_null(contract_check(&o, 2, NULL));
}
