/*
 * cmd_list.c - `collsim list WHAT`: what can be chosen by name.
 *
 * Each list reads its registry (cs_machine_types, later the algorithm
 * suite), so the output never drifts from what the spec parsers accept.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
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
    }
}

static const list_kind_t list_kinds[] = {
    {"machines", "machine types, their spec keys and usage", list_machines},
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
        printf("  %-10s %s\n", list_kinds[i].name, list_kinds[i].summary);
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
        default: cs_app_getopt_error("list", c, argv);
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
