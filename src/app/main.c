/*
 * main.c - the `collsim` command: global options and subcommand dispatch.
 *
 * GNU style: `collsim [--help|--version] COMMAND [OPTIONS]`, and every
 * command answers `--help`.  Subcommands live in cmd_*.c; this file also
 * holds the small helpers they share (app.h: error reporting, getopt, option
 * values, output files and folders, CSV fields, text width, the shuffle).
 * Only this folder exits the process.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app.h"
#include "core/units.h"
#include "io/result_json.h"

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
    {"compare", "run one algorithm on several machines side by side (table, chart)",
     cs_app_cmd_compare},
    {"replay", "replay a trace (GOAL, SimGrid TI) on one machine or several",
     cs_app_cmd_replay},
    {"export", "write an algorithm of the suite as a GOAL schedule", cs_app_cmd_export},
    {"bench", "time the simulator on fixed workloads", cs_app_cmd_bench},
};
#define APP_NCMDS ((int)(sizeof app_cmds / sizeof app_cmds[0]))

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

void cs_app_push_opt(const char *cmd, const char *value, const char **opts, int *n, int max)
{
    if (strchr(value, ','))
        cs_app_usage_error(cmd, "--opt '%s': one KEY=VALUE per --opt (no commas)", value);
    if (*n == max)
        cs_app_usage_error(cmd, "at most %d --opt options", max);
    opts[(*n)++] = value;
}

void cs_app_push_kv_opt(const char *cmd, const char *value, const char **opts, int *n, int max)
{
    if (!strchr(value, '=') || value[0] == '=')
        cs_app_usage_error(cmd, "--opt '%s': expected KEY=VALUE", value);
    cs_app_push_opt(cmd, value, opts, n, max);
}

int64_t cs_app_bytes_arg(const char *cmd, const char *text)
{
    int64_t v;
    cs_error_t err;
    if (cs_units_parse_bytes(text, &v, &err) != CS_OK)
        cs_app_usage_error(cmd, "--bytes: %s", err.msg);
    return v;
}

int64_t cs_app_root_arg(const char *cmd, const char *text)
{
    int64_t v;
    cs_error_t err;
    if (cs_units_parse_int(text, &v, &err) != CS_OK)
        cs_app_usage_error(cmd, "--root: %s", err.msg);
    return v;
}

int64_t cs_app_ranks_arg(const char *cmd, const char *text)
{
    int64_t v;
    cs_error_t err;
    if (cs_units_parse_int(text, &v, &err) != CS_OK)
        cs_app_usage_error(cmd, "--ranks: %s", err.msg);
    if (v < 1)
        cs_app_usage_error(cmd, "--ranks: need at least 1 rank, got %s", text);
    return v;
}

void cs_app_getopt_error(const char *cmd, int c, char **argv)
{
    /* With opterr = 0 and a leading ':' getopt_long reports through its
     * return value; optind has moved past the offending word, so
     * argv[optind - 1] is what the user typed (also for long options). */
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    if (c == ':')
        cs_app_usage_error(cmd, "option '%s' requires an argument", word);
    if (optopt && strncmp(word, "--", 2) != 0)
        cs_app_usage_error(cmd, "invalid option '-%c'", optopt);
    cs_app_usage_error(cmd, "unrecognized option '%s'", word);
}

void cs_app_getopt_reset(void)
{
    optind = 0;
    opterr = 0;
}

int cs_app_check_writable(const char *opt, const char *path, cs_error_t *err)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (access(path, F_OK) == 0) {
        if (access(path, W_OK) != 0)
            return cs_error_set(err, CS_ERR_IO, "%s %s: cannot write: %s", opt, path,
                                strerror(errno));
        return CS_OK;
    }
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK) != 0)
        return cs_error_set(err, CS_ERR_IO, "%s %s: cannot create it in %s: %s", opt, path, dir,
                            strerror(errno));
    return CS_OK;
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

void cs_app_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int cs_app_text_width(const char *s)
{
    int w = 0;
    for (; s && *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

/* splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and the same sequence
 * on every platform. */
static uint64_t app_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void cs_app_shuffle(int n, uint64_t seed, int32_t *perm)
{
    uint64_t state = seed;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(app_splitmix64(&state) % (uint64_t)(i + 1));
        int32_t tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
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

/* The queue kinds are enumerated through cs_queue_kind_name (which names an
 * unknown kind "unknown"), so that a new implementation in core/queue shows
 * up in --queue, in help texts and in `collsim bench` without edits here. */
int cs_app_queue_kinds(void)
{
    int n = 0;
    while (n < CS_APP_MAX_QUEUE_KINDS) {
        const char *name = cs_queue_kind_name((cs_queue_kind_t)n);
        if (!name || strcmp(name, "unknown") == 0)
            break;
        n++;
    }
    return n;
}

void cs_app_queue_names(char *buf, size_t len, const char *sep)
{
    buf[0] = '\0';
    for (int k = 0; k < cs_app_queue_kinds(); k++) {
        strncat(buf, k ? sep : "", len - strlen(buf) - 1);
        strncat(buf, cs_queue_kind_name((cs_queue_kind_t)k), len - strlen(buf) - 1);
    }
}

int cs_app_parse_queue(const char *text, cs_queue_kind_t *out, cs_error_t *err)
{
    char valid[256];
    for (int k = 0; k < cs_app_queue_kinds(); k++) {
        if (strcmp(text, cs_queue_kind_name((cs_queue_kind_t)k)) == 0) {
            *out = (cs_queue_kind_t)k;
            return CS_OK;
        }
    }
    cs_app_queue_names(valid, sizeof valid, ", ");
    return cs_error_set(err, CS_ERR_USAGE, "unknown event queue '%s'; valid: %s", text, valid);
}

cs_net_mode_t cs_app_mode_arg(const char *cmd, const char *text)
{
    cs_net_mode_t mode;
    cs_error_t err;
    if (cs_net_parse_mode(text, &mode, &err) != CS_OK)
        cs_app_usage_error(cmd, "--mode: %s", err.msg);
    return mode;
}

cs_queue_kind_t cs_app_queue_arg(const char *cmd, const char *text)
{
    cs_queue_kind_t q;
    cs_error_t err;
    if (cs_app_parse_queue(text, &q, &err) != CS_OK)
        cs_app_usage_error(cmd, "--queue: %s", err.msg);
    return q;
}

static void app_help(void)
{
    printf("Usage: collsim [--help] [--version] COMMAND [OPTIONS]\n"
           "\n"
           "Discrete-event simulator of interconnection networks: runs one collective\n"
           "or trace on very different machines and shows where it is fast or slow.\n"
           "\n"
           "Commands:\n");
    for (int i = 0; i < APP_NCMDS; i++)
        printf("  %-8s %s\n", app_cmds[i].name, app_cmds[i].summary);
    printf("\n"
           "Options:\n"
           "  -h, --help     show this help and exit\n"
           "  -V, --version  show the version and exit\n"
           "\n"
           "Run 'collsim COMMAND --help' for the options of a command.\n"
           "Exit status: 0 ok, 2 usage or input error, 3 deadlock, 4 validation failed,\n"
           "5 model error, 70 internal error.\n");
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
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': app_help(); return 0;
        case 'V':
            printf("collsim %s (JSON result schema %d)\n", COLLSIM_VERSION,
                   CS_RESULT_SCHEMA_VERSION);
            return 0;
        default: cs_app_getopt_error(NULL, c, argv);
        }
    }
    if (optind >= argc)
        cs_app_usage_error(NULL, "missing command");

    const char *name = argv[optind];
    for (int i = 0; i < APP_NCMDS; i++) {
        if (strcmp(name, app_cmds[i].name) == 0) {
            int sub_argc = argc - optind;
            char **sub_argv = argv + optind;
            cs_app_getopt_reset();
            int status = app_cmds[i].fn(sub_argc, sub_argv);
            /* Output already buffered must not be lost silently (a full
             * disk behind `collsim run > file`). */
            if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "collsim: error writing to standard output\n");
                if (status == CS_OK)
                    status = CS_ERR_IO;
            }
            return cs_status_exit_code(status);
        }
    }

    char valid[256] = "";
    for (int i = 0; i < APP_NCMDS; i++) {
        strncat(valid, i ? ", " : "", sizeof valid - strlen(valid) - 1);
        strncat(valid, app_cmds[i].name, sizeof valid - strlen(valid) - 1);
    }
    cs_app_usage_error(NULL, "unknown command '%s'; valid commands: %s", name, valid);
}
