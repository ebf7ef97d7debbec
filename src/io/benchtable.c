/*
 * benchtable.c - the table of benchmark-table formats (benchtable.h): each
 * format lives in a file of its own (benchtable_nccl.c, benchtable_osu.c).
 */
#include <string.h>

#include "core/suggest.h"
#include "io/benchtable.h"

static const cs_benchtable_format_t *const formats[] = {&cs_benchtable_nccl,
                                                        &cs_benchtable_osu, NULL};

const cs_benchtable_format_t *const *cs_benchtable_formats(void)
{
    return formats;
}

int cs_benchtable_find(const char *name, const cs_benchtable_format_t **out, cs_error_t *err)
{
    char valid[128] = "", hint[96];
    cs_suggest_t sg;
    cs_suggest_init(&sg, name);
    for (int i = 0; formats[i]; i++) {
        if (!strcmp(formats[i]->name, name)) {
            *out = formats[i];
            return CS_OK;
        }
        cs_suggest_add(&sg, formats[i]->name);
        strncat(valid, i ? ", " : "", sizeof valid - strlen(valid) - 1);
        strncat(valid, formats[i]->name, sizeof valid - strlen(valid) - 1);
    }
    return cs_error_set(err, CS_ERR_USAGE, "unknown table format '%s'%s; valid: %s", name,
                        cs_suggest_hint(&sg, "'", hint, sizeof hint), valid);
}
