/*
 * catalog.h - what can be chosen by name, as JSON: the machine types (name,
 * summary, usage, example spec, keys, presets) and the collective
 * algorithms (collective, name, default, options, keys, source, summary),
 * read from their registries so that the lists never drift from what the
 * parsers accept.  The documents of collsim_list_machines and
 * collsim_list_algorithms (docs/api-c.md) and of `collsim serve`'s
 * GET /api/machines and /api/algorithms (docs/api.md).
 */
#ifndef CS_CATALOG_H
#define CS_CATALOG_H

#include <stdio.h>

/* Each writes one JSON array (ending in a newline) to f. */
void cs_catalog_machines_json(FILE *f);
void cs_catalog_algorithms_json(FILE *f);

#endif
