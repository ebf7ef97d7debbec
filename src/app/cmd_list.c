/*
 * cmd_list.c - `collsim list WHAT`: what can be chosen by name.
 *
 * Each list reads its registry (cs_machine_types, cs_coll_algos), so the
 * output never drifts from what the spec parsers accept.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "coll/coll.h"
#include "machines/machine.h"

typedef struct list_kind {
    const char *name;
    const char *summary;
    void (*print)(void);
} list_kind_t;

static void list_machines(void)
{
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

/* One line per algorithm, columns aligned: coll/name (* = the collective's
 * default, the first listed), options (wrapped), source, summary. */
static void list_algorithms(void)
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
    list_cell("ALGORITHM", wn + 2);
    list_cell("OPTIONS", wo + 2);
    list_cell("SOURCE", ws + 2);
    printf("SUMMARY\n");
    for (int i = 0; i < n; i++) {
        int dflt = i == 0 || all[i - 1]->kind != all[i]->kind;
        const char *o = all[i]->options && all[i]->options[0] ? all[i]->options : "-";
        snprintf(name, sizeof name, "%s/%s%s", cs_coll_name(all[i]->kind), all[i]->name,
                 dflt ? " *" : "");
        o = list_wrap(o, LIST_OPTIONS_WIDTH, line, sizeof line);
        list_cell(name, wn + 2);
        list_cell(line, wo + 2);
        list_cell(all[i]->source ? all[i]->source : "", ws + 2);
        printf("%s\n", all[i]->summary ? all[i]->summary : "");
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
    printf("Usage: collsim list WHAT\n"
           "\n"
           "Lists what can be chosen by name.  WHAT is one of:\n");
    for (int i = 0; i < LIST_NKINDS; i++)
        printf("  %-11s %s\n", list_kinds[i].name, list_kinds[i].summary);
    printf("\n"
           "  -h, --help   show this help and exit\n");
}

int cs_app_cmd_list(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char valid[256];
    int c;

    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
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
            list_kinds[i].print();
            return CS_OK;
        }
    }
    cs_app_usage_error("list", "unknown list '%s'; valid lists: %s", argv[optind], valid);
}
