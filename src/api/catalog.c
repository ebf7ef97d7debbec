/*
 * catalog.c - the machine types and the algorithms as JSON (catalog.h),
 * each straight from its registry (cs_machine_types, cs_coll_algos).
 */
#include <stdio.h>

#include "api/catalog.h"
#include "coll/coll.h"
#include "io/result_json.h"
#include "machines/machine.h"

/* A NULL-terminated list of strings (NULL: none) as a JSON array. */
static void catalog_strings_json(FILE *f, const char *const *list)
{
    fputs("[", f);
    for (int k = 0; list && list[k]; k++) {
        fputs(k ? ", " : "", f);
        cs_json_write_string(f, list[k]);
    }
    fputs("]", f);
}

void cs_catalog_machines_json(FILE *f)
{
    int count = 0;
    const cs_machine_type_t *const *types = cs_machine_types(&count);
    fputs("[", f);
    for (int i = 0; i < count; i++) {
        const cs_machine_type_t *t = types[i];
        fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
        cs_json_write_string(f, t->name);
        fputs(", \"summary\": ", f);
        cs_json_write_string(f, t->summary ? t->summary : "");
        fputs(", \"usage\": ", f);
        cs_json_write_string(f, t->usage ? t->usage : t->name);
        fputs(", \"example\": ", f);
        cs_json_write_string(f, t->example);
        fputs(", \"keys\": ", f);
        catalog_strings_json(f, t->keys);
        /* the keys that name files: what a request must send inline
         * ("read") or cannot ask for ("write"), docs/security.md */
        fputs(", \"files\": [", f);
        for (const cs_filekey_t *k = t->file_keys; k && k->key; k++) {
            fputs(k == t->file_keys ? "{\"key\": " : ", {\"key\": ", f);
            cs_json_write_string(f, k->key);
            fprintf(f, ", \"mode\": \"%s\"}", k->mode == CS_FILEKEY_WRITE ? "write" : "read");
        }
        fputs("], \"presets\": [", f);
        for (int k = 0; t->presets && t->presets[k]; k += 2) {
            fputs(k ? ", " : "", f);
            fputs("{\"name\": ", f);
            cs_json_write_string(f, t->presets[k]);
            fputs(", \"keys\": ", f);
            cs_json_write_string(f, t->presets[k + 1]);
            fputs("}", f);
        }
        fputs("]}", f);
    }
    fputs(count ? "\n]\n" : "]\n", f);
}

void cs_catalog_algorithms_json(FILE *f)
{
    int count = 0;
    const cs_coll_algo_t *const *all = cs_coll_algos(&count);
    fputs("[", f);
    for (int i = 0; i < count; i++) {
        const cs_coll_algo_t *a = all[i];
        int dflt = i == 0 || all[i - 1]->kind != a->kind;
        fprintf(f, "%s\n  {\"collective\": ", i ? "," : "");
        cs_json_write_string(f, cs_coll_name(a->kind));
        fputs(", \"name\": ", f);
        cs_json_write_string(f, a->name);
        fprintf(f, ", \"default\": %s, \"options\": ", dflt ? "true" : "false");
        cs_json_write_string(f, a->options ? a->options : "");
        fputs(", \"keys\": ", f);
        catalog_strings_json(f, a->keys);
        fputs(", \"source\": ", f);
        cs_json_write_string(f, a->source ? a->source : "");
        fputs(", \"summary\": ", f);
        cs_json_write_string(f, a->summary ? a->summary : "");
        fputs("}", f);
    }
    fputs(count ? "\n]\n" : "]\n", f);
}
