/*
 * main.c - the `collsim` command: global options and subcommand dispatch.
 *
 * GNU style: `collsim [--help|--version] COMMAND [OPTIONS]`, and every
 * command answers `--help`.  Subcommands live in cmd_*.c; this file also
 * holds the small helpers they share (app.h: error reporting, getopt, request
 * fields as usage errors, output files and folders, the JSON file, text
 * width).
 * Only this folder exits the process.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app.h"
#include "core/suggest.h"
#include "core/units.h"
#include "io/result_json.h"

/* The hidden word with which `collsim complete` asks a command for its
 * options (cs_app_command_options): an option no one can type by mistake,
 * answered where the command's getopt fails on it, so that the options
 * table each command already has is the only list. */
#define APP_OPTIONS_QUERY "--@options"

typedef struct app_cmd {
    const char *name;
    const char *summary;
    int (*fn)(int argc, char **argv);
} app_cmd_t;

static const app_cmd_t app_cmds[] = {
    {"run", "run a program (a GOAL schedule) or a collective algorithm on a machine",
     cs_app_cmd_run},
    {"topo", "describe a machine's topology; write GraphML or DOT", cs_app_cmd_topo},
    {"list", "list what can be chosen (machines, algorithms)", cs_app_cmd_list},
    {"sweep", "time a collective's algorithms over a range of sizes (CSV, plot)",
     cs_app_cmd_sweep},
    {"bench-table", "a collective over sizes in nccl-tests' or OSU's table layout",
     cs_app_cmd_benchtable},
    {"compare", "run one algorithm on several machines side by side (table, chart)",
     cs_app_cmd_compare},
    {"replay", "replay a trace (GOAL, SimGrid TI, Chakra) on one machine or several",
     cs_app_cmd_replay},
    {"merge", "join the shard files of a sweep run with --shard I/N (docs/cluster.md)",
     cs_app_cmd_merge},
    {"export", "write an algorithm of the suite as GOAL, MSCCL XML or Chakra",
     cs_app_cmd_export},
    {"bench", "time the simulator on fixed workloads", cs_app_cmd_bench},
    {"serve", "serve the JSON API and the page over HTTP (docs/api.md)", cs_app_cmd_serve},
    /* hidden: what the shell completion scripts ask (cmd_complete.c) */
    {"complete", NULL, cs_app_cmd_complete},
};
#define APP_NCMDS ((int)(sizeof app_cmds / sizeof app_cmds[0]))

const char *cs_app_command_name(int i)
{
    /* the hidden ones come last: the visible ones end at the first */
    return i >= 0 && i < APP_NCMDS && app_cmds[i].summary ? app_cmds[i].name : NULL;
}

void cs_app_command_options(const char *cmd, const char *prefix)
{
    char query[256];
    snprintf(query, sizeof query, "%s=%s", APP_OPTIONS_QUERY, prefix);
    for (int i = 0; i < APP_NCMDS; i++)
        if (strcmp(cmd, app_cmds[i].name) == 0) {
            char *argv[] = {(char *)cmd, query, NULL};
            optind = 0;
            opterr = 0;
            app_cmds[i].fn(2, argv); /* exits in cs_app_getopt_error */
        }
}

int cs_app_report(const cs_error_t *err)
{
    fprintf(stderr, "collsim: %s\n", err->msg[0] ? err->msg : cs_status_name(err->code));
    return err->code;
}

void cs_app_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("collsim: ", stderr);
    if (cmd)
        fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'collsim %s --help'.\n", cmd);
    else
        fputs("\nTry 'collsim --help'.\n", stderr);
    exit(cs_status_exit_code(CS_ERR_USAGE));
}

void cs_app_option(const char *cmd, cs_request_t *r, int c, char **argv,
                   const struct option *longopts)
{
    static const struct {
        int c;
        const char *key;
    } fields[] = {
        {'m', "machine"}, {'p', "program"}, {'M', "mode"}, {'q', "queue"},
        {CS_APP_OPT_COLL, "coll"}, {CS_APP_OPT_ALGO, "algo"}, {CS_APP_OPT_BYTES, "bytes"},
        {CS_APP_OPT_ROOT, "root"}, {CS_APP_OPT_RANKS, "ranks"}, {CS_APP_OPT_ORDER, "order"},
        {CS_APP_OPT_OPT, "opt"}, {CS_APP_OPT_VALIDATE, "validate"},
        {CS_APP_OPT_WINDOWED, "windowed"}, {CS_APP_OPT_FORCE, "force"},
        {CS_APP_OPT_ITERATIONS, "iterations"}, {CS_APP_OPT_WARMUP, "warmup"},
        {CS_APP_OPT_BETWEEN, "between"}, {CS_APP_OPT_LOOP, "loop"},
    };
    cs_error_t err;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].c == c) {
            if (cs_request_set(r, fields[i].key, optarg, &err) != CS_OK)
                cs_app_usage_error(cmd, "%s", err.msg);
            return;
        }
    cs_app_getopt_error(cmd, c, argv, longopts);
}

void cs_app_no_operands(const char *cmd, int argc, char **argv)
{
    if (optind < argc)
        cs_app_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
}

void cs_app_add_opt(const char *cmd, cs_request_t *r, const char *kv)
{
    cs_error_t err;
    if (cs_request_add_opt(r, kv, &err) != CS_OK)
        cs_app_usage_error(cmd, "%s", err.msg);
}

/* Prints the long options of longopts that start with prefix, one
 * "--name" a line, and exits. */
static void app_print_options(const struct option *longopts, const char *prefix)
{
    char name[128];
    for (const struct option *o = longopts; o && o->name; o++) {
        snprintf(name, sizeof name, "--%s", o->name);
        if (strncmp(name, prefix, strlen(prefix)) == 0)
            printf("%s\n", name);
    }
    exit(0);
}

void cs_app_getopt_error(const char *cmd, int c, char **argv, const struct option *longopts)
{
    /* With opterr = 0 and a leading ':' getopt_long reports through its
     * return value; optind has moved past the offending word, so
     * argv[optind - 1] is what the user typed (also for long options). */
    if (optind < 1)
        cs_app_usage_error(cmd, "invalid option");
    const char *word = argv[optind - 1];
    if (strncmp(word, APP_OPTIONS_QUERY "=", strlen(APP_OPTIONS_QUERY) + 1) == 0)
        app_print_options(longopts, word + strlen(APP_OPTIONS_QUERY) + 1);
    if (c == ':')
        cs_app_usage_error(cmd, "option '%s' requires an argument", word);
    if (optopt && strncmp(word, "--", 2) != 0)
        cs_app_usage_error(cmd, "invalid option '-%c'", optopt);
    if (strncmp(word, "--", 2) == 0 && longopts) {
        /* the name without its dashes and any "=VALUE" */
        char name[CS_SUGGEST_MAX_LEN + 1], list[256] = "";
        snprintf(name, sizeof name, "%.*s", (int)strcspn(word + 2, "="), word + 2);
        size_t len = strlen(name);
        int matches = 0;
        cs_suggest_t s;
        cs_suggest_init(&s, name);
        for (const struct option *o = longopts; o->name; o++) {
            cs_suggest_add(&s, o->name);
            /* a prefix of several options: getopt_long's ambiguity */
            if (len && strncmp(o->name, name, len) == 0) {
                matches++;
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s--%s",
                         matches > 1 ? ", " : "", o->name);
            }
        }
        if (matches > 1)
            cs_app_usage_error(cmd, "ambiguous option '%s': %s", word, list);
        if (cs_suggest_best(&s))
            cs_app_usage_error(cmd, "unrecognized option '%s' (did you mean '--%s'?)", word,
                               cs_suggest_best(&s));
    }
    cs_app_usage_error(cmd, "unrecognized option '%s'", word);
}

/* Resets getopt's global state before a subcommand parses its own options
 * (glibc: optind = 0 reinitialises fully). */
static void app_getopt_reset(void)
{
    optind = 0;
    opterr = 0;
}

int cs_app_check_writable(const char *opt, const char *path, cs_error_t *err)
{
    return cs_outfile_check_writable(opt, path, err);
}

int cs_app_out_open(const char *opt, const char *path, cs_app_out_t *out, cs_error_t *err)
{
    out->o = NULL;
    out->f = stdout;
    if (strcmp(path, "-") == 0)
        return CS_OK;
    int rc = cs_outfile_open(opt, path, &out->o, err);
    out->f = rc ? NULL : cs_outfile_stream(out->o);
    return rc;
}

int cs_app_out_close(cs_app_out_t *out, int rc, cs_error_t *err)
{
    if (rc == CS_OK)
        rc = cs_app_check_interrupt(err);
    if (!out->o) {
        /* standard output: main checks the final flush; a failed write so
         * far is reported here */
        if (out->f && rc == CS_OK && (fflush(out->f) != 0 || ferror(out->f)))
            rc = cs_error_set(err, CS_ERR_IO, "error writing to standard output");
    } else if (rc == CS_OK) {
        rc = cs_outfile_commit(out->o, err);
    } else {
        cs_outfile_abort(out->o);
    }
    out->o = NULL;
    out->f = NULL;
    return rc;
}

/* The only mutable process-wide state of collsim: a signal handler can
 * reach nothing else (C11 7.14.1.1: a handler may only write a volatile
 * sig_atomic_t). */
static volatile sig_atomic_t app_signal;

static void app_on_signal(int sig)
{
    if (app_signal == sig) {
        /* the second Ctrl-C: the user insists, end now */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    app_signal = sig;
}

static void app_install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = app_on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* cs_malloc failed: the documented message and status 71, never an abort
 * (no core file).  _exit: stdio's exit handlers might allocate. */
static void app_out_of_memory(size_t bytes, const char *where)
{
    if (strncmp(where, "../", 3) == 0) /* __FILE__ as meson passes it */
        where += 3;
    fprintf(stderr, "collsim: out of memory (%zu bytes for %s)\n", bytes, where);
    _exit(cs_status_exit_code(CS_ERR_OOM));
}

const volatile sig_atomic_t *cs_app_cancel_flag(void) { return &app_signal; }
int cs_app_interrupted(void) { return app_signal; }

int cs_app_check_interrupt(cs_error_t *err)
{
    if (!app_signal)
        return CS_OK;
    return cs_error_set(err, CS_ERR_CANCELLED, "interrupted by %s",
                        app_signal == SIGINT ? "SIGINT" : "SIGTERM");
}

int cs_app_make_folder(const char *opt, const char *path, cs_error_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && mkdir(path, 0777) != 0)
        return cs_error_set(err, CS_ERR_IO, "%s %s: cannot create the folder: %s", opt, path,
                            strerror(errno));
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return cs_error_set(err, CS_ERR_IO, "%s %s: not a folder", opt, path);
    return CS_OK;
}

int cs_app_check_folder(const char *opt, const char *path, cs_error_t *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
        return cs_error_set(err, CS_ERR_IO, "%s %s: not a folder", opt, path);
    return cs_outfile_check_writable(opt, path, err);
}

int cs_app_text_width(const char *s)
{
    int w = 0;
    for (; s && *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

int cs_app_split_list(char *buf, const char *blanks, const char **items, int max)
{
    int n = 0;
    for (char *s = buf, *next; s; s = next) {
        next = strchr(s, ';');
        if (next)
            *next++ = '\0';
        s += strspn(s, blanks);
        size_t len = strlen(s);
        while (len > 0 && strchr(blanks, s[len - 1]))
            s[--len] = '\0';
        if (!*s)
            continue;
        if (n == max)
            return -1;
        items[n++] = s;
    }
    return n;
}

int cs_app_write_json(const char *path, int with_timing, const cs_machine_t *m,
                      const cs_program_t *p, const cs_exec_result_t *r, int validated,
                      int predict, const cs_request_coll_t *c, cs_error_t *err)
{
    cs_app_out_t out;
    int rc = cs_app_out_open("--json", path, &out, err);
    if (rc == CS_OK)
        rc = cs_report_json(out.f, with_timing, m, p, r, validated, predict, c, err);
    return cs_app_out_close(&out, rc, err);
}

static void app_help(void)
{
    printf("Usage: collsim [--help] [--version] COMMAND [OPTIONS]\n"
           "\n"
           "Discrete-event simulator of interconnection networks: runs one collective\n"
           "or trace on very different machines and shows where it is fast or slow.\n"
           "\n"
           "Commands:\n");
    int width = 0; /* the longest command's name: the summaries in one column */
    for (int i = 0; i < APP_NCMDS; i++)
        if (app_cmds[i].summary && (int)strlen(app_cmds[i].name) > width)
            width = (int)strlen(app_cmds[i].name);
    for (int i = 0; i < APP_NCMDS; i++)
        if (app_cmds[i].summary)
            printf("  %-*s %s\n", width, app_cmds[i].name, app_cmds[i].summary);
    printf("\n"
           "Options:\n"
           "  -h, --help     show this help and exit\n"
           "  -V, --version  show the version and exit\n"
           "\n"
           "Run 'collsim COMMAND --help' for the options of a command.\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 4 validation failed,\n"
           "5 model error, 70 internal error, 71 out of memory, 130/143 interrupted\n"
           "by SIGINT/SIGTERM.\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;

    /* '+' stops at the first non-option: everything after the command
     * belongs to the command. */
    cs_set_oom_handler(app_out_of_memory);
    cs_topo_igraph_errors_as_codes();
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': app_help(); return 0;
        case 'V':
            printf("collsim %s (JSON result schema %d)\n", COLLSIM_VERSION,
                   CS_RESULT_SCHEMA_VERSION);
            return 0;
        default: cs_app_getopt_error(NULL, c, argv, longopts);
        }
    }
    if (optind >= argc)
        cs_app_usage_error(NULL, "missing command");

    const char *name = argv[optind];
    for (int i = 0; i < APP_NCMDS; i++) {
        if (strcmp(name, app_cmds[i].name) == 0) {
            int sub_argc = argc - optind;
            char **sub_argv = argv + optind;
            app_getopt_reset();
            app_install_signals();
            int status = app_cmds[i].fn(sub_argc, sub_argv);
            /* Output already buffered must not be lost silently (a full
             * disk behind `collsim run > file`). */
            if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "collsim: error writing to standard output\n");
                if (status == CS_OK)
                    status = CS_ERR_IO;
            }
            /* 128 + the signal, the shell's convention, whatever the
             * command made of it (it may have finished its last run) */
            if (app_signal)
                return 128 + app_signal;
            return cs_status_exit_code(status);
        }
    }

    char valid[256] = "";
    /* the visible commands only: the hidden ones are the shell's, not a user's */
    for (int i = 0; cs_app_command_name(i); i++) {
        strncat(valid, i ? ", " : "", sizeof valid - strlen(valid) - 1);
        strncat(valid, app_cmds[i].name, sizeof valid - strlen(valid) - 1);
    }
    cs_suggest_t s;
    char hint[96];
    cs_suggest_init(&s, name);
    for (int i = 0; cs_app_command_name(i); i++)
        cs_suggest_add(&s, app_cmds[i].name);
    cs_app_usage_error(NULL, "unknown command '%s'%s; valid commands: %s", name,
                       cs_suggest_hint(&s, "'", hint, sizeof hint), valid);
}
