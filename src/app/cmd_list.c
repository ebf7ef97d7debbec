/*
 * cmd_list.c - `collsim list WHAT`: what can be chosen by name.
 *
 * Each list reads its registry (cs_machine_types, cs_coll_algos), so the
 * output never drifts from what the spec parsers accept.  The algorithms
 * fit the width of the terminal (docs/cli.md, "collsim list"): a table
 * when there is room for it, else a block per algorithm; `--wide` gives
 * the table unwrapped, for scripts that cut columns
 * (tools/gen-algorithms-doc).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "app/app.h"
#include "coll/coll.h"
#include "core/suggest.h"
#include "machines/machine.h"

/* What the options of `list` ask for. */
typedef struct list_args {
    int width;            /* columns to fill; 0: no limit (--wide) */
    int has_coll;         /* --coll given */
    cs_coll_kind_t coll;  /* only this collective's algorithms */
} list_args_t;

typedef struct list_kind {
    const char *name;
    const char *summary;
    void (*print)(const list_args_t *a);
} list_kind_t;

/* The width of the output: $COLUMNS when it is a number (the shell's idea,
 * also what a user sets to ask for a width), else the terminal's on
 * standard output, else 80 (a pipe or a file: the width of a mail or a
 * review comment). */
static int list_width(void)
{
    const char *env = getenv("COLUMNS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (!*end && v >= 20 && v <= 10000)
            return (int)v;
    }
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    return 80;
}

static void list_machines(const list_args_t *a)
{
    (void)a;
    int n = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&n);
    for (int i = 0; i < n; i++) {
        const cs_machine_type_t *t = types[i];
        if (i > 0)
            putchar('\n');
        printf("%s\n", t->name);
        printf("  %s\n", t->summary ? t->summary : "");
        printf("  usage: %s\n", t->usage ? t->usage : t->name);
        printf("  keys:  ");
        if (!t->keys || !t->keys[0])
            printf("(none)");
        for (int k = 0; t->keys && t->keys[k]; k++)
            printf("%s%s", k ? ", " : "", t->keys[k]);
        putchar('\n');
        for (const cs_filekey_t *k = t->file_keys; k && k->key; k++)
            printf("%s%s (%s)%s", k == t->file_keys ? "  files: " : ", ", k->key,
                   k->mode == CS_FILEKEY_WRITE ? "written" : "read", k[1].key ? "" : "\n");
    }
}

static void list_cell(const char *s, int width)
{
    fputs(s, stdout);
    for (int i = cs_app_text_width(s); i < width; i++)
        putchar(' ');
}

/* Options texts can be long: the column wraps at spaces to this width. */
#define LIST_OPTIONS_WIDTH 40

/* Next line of at most `width` columns of s (wrapping at a space when it
 * can): copies it into line and returns where the rest starts. */
static const char *list_wrap(const char *s, int width, char *line, size_t len)
{
    const char *end = s, *cut = NULL;
    int w = 0;
    while (*end && w < width) {
        if (*end == ' ')
            cut = end;
        w += ((unsigned char)*end & 0xc0) != 0x80;
        end++;
        while (((unsigned char)*end & 0xc0) == 0x80) /* finish the code point */
            end++;
    }
    if (*end && *end != ' ' && cut)
        end = cut;
    snprintf(line, len, "%.*s", (int)(end - s), s);
    while (*end == ' ')
        end++;
    return end;
}

/* Prints text from column `indent` to column `width` (0: no limit), wrapped
 * at spaces, each further line indented; `first` columns are already used
 * on the current line (the text starts there when first <= indent). */
static void list_wrapped(const char *text, int first, int indent, int width)
{
    char line[1024];
    int room = width > 0 ? width - indent : (int)sizeof line / 4;
    if (room < 20)
        room = 20;
    for (int i = first; i < indent; i++)
        putchar(' ');
    if (!*text) {
        putchar('\n');
        return;
    }
    for (int n = 0; *text; n++) {
        text = list_wrap(text, room, line, sizeof line);
        if (n > 0)
            printf("%*s", indent, "");
        printf("%s\n", line);
    }
}

/* One line per algorithm, columns aligned: coll/name (* = the collective's
 * default, the first listed), options (wrapped), source, summary (wrapped
 * to the width); or, when the width leaves the summary less than
 * LIST_MIN_SUMMARY columns, a block per algorithm: name and summary, then
 * its options and source under the summary. */
#define LIST_MIN_SUMMARY 36
static void list_algorithms(const list_args_t *a)
{
    int n = 0, wn = (int)strlen("ALGORITHM"), wo = (int)strlen("OPTIONS"),
        ws = (int)strlen("SOURCE");
    const cs_coll_algo_t *const *all = cs_coll_algos(&n);
    char name[160], line[4 * LIST_OPTIONS_WIDTH + 8];
    if (n == 0) {
        printf("(no algorithms registered)\n");
        return;
    }
    for (int i = 0; i < n; i++) {
        int w;
        const char *o = all[i]->options && all[i]->options[0] ? all[i]->options : "-";
        if (a->has_coll && all[i]->kind != a->coll)
            continue;
        snprintf(name, sizeof name, "%s/%s *", cs_coll_name(all[i]->kind), all[i]->name);
        if ((w = cs_app_text_width(name)) > wn)
            wn = w;
        while (*o) {
            o = list_wrap(o, LIST_OPTIONS_WIDTH, line, sizeof line);
            if ((w = cs_app_text_width(line)) > wo)
                wo = w;
        }
        if ((w = cs_app_text_width(all[i]->source)) > ws)
            ws = w;
    }
    int table = !a->width || a->width - (wn + wo + ws + 6) >= LIST_MIN_SUMMARY;
    if (table) {
        list_cell("ALGORITHM", wn + 2);
        list_cell("OPTIONS", wo + 2);
        list_cell("SOURCE", ws + 2);
        printf("SUMMARY\n");
    }
    for (int i = 0; i < n; i++) {
        int dflt = i == 0 || all[i - 1]->kind != all[i]->kind;
        const char *o = all[i]->options && all[i]->options[0] ? all[i]->options : "-";
        const char *summary = all[i]->summary ? all[i]->summary : "";
        if (a->has_coll && all[i]->kind != a->coll)
            continue;
        snprintf(name, sizeof name, "%s/%s%s", cs_coll_name(all[i]->kind), all[i]->name,
                 dflt ? " *" : "");
        if (!table) {
            char text[1024];
            fputs(name, stdout);
            list_wrapped(summary, cs_app_text_width(name), wn + 2, a->width);
            if (strcmp(o, "-") != 0) {
                snprintf(text, sizeof text, "options: %s", o);
                list_wrapped(text, 0, wn + 2, a->width);
            }
            snprintf(text, sizeof text, "source: %s", all[i]->source ? all[i]->source : "");
            list_wrapped(text, 0, wn + 2, a->width);
            continue;
        }
        o = list_wrap(o, LIST_OPTIONS_WIDTH, line, sizeof line);
        list_cell(name, wn + 2);
        list_cell(line, wo + 2);
        list_cell(all[i]->source ? all[i]->source : "", ws + 2);
        if (a->width) /* the summary wrapped under its column */
            list_wrapped(summary, wn + wo + ws + 6, wn + wo + ws + 6, a->width);
        else
            printf("%s\n", summary);
        while (*o) { /* the rest of the options, under their column */
            o = list_wrap(o, LIST_OPTIONS_WIDTH, line, sizeof line);
            list_cell("", wn + 2);
            printf("%s\n", line);
        }
    }
    printf("\n* the collective's default (used when --algo is not given)\n");
}

static const list_kind_t list_kinds[] = {
    {"machines", "machine types, their spec keys and usage", list_machines},
    {"algorithms", "collective algorithms: name, options, source, summary", list_algorithms},
};
#define LIST_NKINDS ((int)(sizeof list_kinds / sizeof list_kinds[0]))

static void list_valid(char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < LIST_NKINDS; i++) {
        strncat(buf, i ? ", " : "", len - strlen(buf) - 1);
        strncat(buf, list_kinds[i].name, len - strlen(buf) - 1);
    }
}

static void list_help(void)
{
    printf("Usage: collsim list [--coll NAME] [--wide] WHAT\n"
           "\n"
           "Lists what can be chosen by name.  WHAT is one of:\n");
    for (int i = 0; i < LIST_NKINDS; i++)
        printf("  %-11s %s\n", list_kinds[i].name, list_kinds[i].summary);
    printf("\n"
           "  -c, --coll NAME   algorithms: only those of collective NAME (allreduce, ...)\n"
           "  -w, --wide        algorithms: one table, nothing wrapped (the output is\n"
           "                    otherwise fitted to $COLUMNS, the terminal, or 80 columns)\n"
           "  -h, --help        show this help and exit\n");
}

int cs_app_cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"coll", required_argument, NULL, 'c'},
        {"wide", no_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char valid[256];
    list_args_t a = {list_width(), 0, CS_COLL_BROADCAST};
    cs_error_t err = {0};
    int c;

    while ((c = getopt_long(argc, argv, ":c:wh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (cs_coll_parse(optarg, &a.coll, &err) != CS_OK)
                cs_app_usage_error("list", "--coll: %s", err.msg);
            a.has_coll = 1;
            break;
        case 'w': a.width = 0; break;
        case 'h': list_help(); exit(0);
        default: cs_app_getopt_error("list", c, argv, longopts);
        }
    }
    list_valid(valid, sizeof valid);
    if (optind >= argc)
        cs_app_usage_error("list", "missing what to list; valid lists: %s", valid);
    if (optind + 1 < argc)
        cs_app_usage_error("list", "unexpected argument '%s'", argv[optind + 1]);
    for (int i = 0; i < LIST_NKINDS; i++) {
        if (strcmp(argv[optind], list_kinds[i].name) == 0) {
            if (a.has_coll && list_kinds[i].print != list_algorithms)
                cs_app_usage_error("list", "--coll applies to 'list algorithms' only");
            list_kinds[i].print(&a);
            return CS_OK;
        }
    }
    cs_suggest_t s;
    char hint[96];
    cs_suggest_init(&s, argv[optind]);
    for (int i = 0; i < LIST_NKINDS; i++)
        cs_suggest_add(&s, list_kinds[i].name);
    cs_app_usage_error("list", "unknown list '%s'%s; valid lists: %s", argv[optind],
                       cs_suggest_hint(&s, "'", hint, sizeof hint), valid);
}
