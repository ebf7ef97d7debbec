/*
 * machine.c - the registry of machine types and the spec-string front door
 * (see machine.h).  Adding a machine means adding its type to `types`.
 */
#include "machines/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const cs_machine_type_t cs_machine_alphabeta;
extern const cs_machine_type_t cs_machine_cerebras;
extern const cs_machine_type_t cs_machine_cns1;
extern const cs_machine_type_t cs_machine_cell;
extern const cs_machine_type_t cs_machine_groq;
extern const cs_machine_type_t cs_machine_loggp;

static const cs_machine_type_t *const types[] = {
    &cs_machine_alphabeta,
    &cs_machine_cerebras,
    &cs_machine_cns1,
    &cs_machine_cell,
    &cs_machine_groq,
    &cs_machine_loggp,
};

/* "type:preset[,rest]" -> "type:preset's keys[,rest]", or NULL if the spec
 * names no preset. */
static char *expand_preset(const char *text)
{
    const char *colon = strchr(text, ':');
    int n = (int)(sizeof types / sizeof types[0]);
    if (!colon)
        return NULL;
    for (int i = 0; i < n; i++) {
        const char *const *p = types[i]->presets;
        if (!p || strlen(types[i]->name) != (size_t)(colon - text) ||
            strncmp(text, types[i]->name, (size_t)(colon - text)))
            continue;
        for (; p[0]; p += 2) {
            size_t k = strlen(p[0]);
            if (!strncmp(colon + 1, p[0], k) && (colon[1 + k] == 0 || colon[1 + k] == ',')) {
                size_t len = strlen(text) + strlen(p[1]) + 2;
                char *out = cs_malloc(len);
                snprintf(out, len, "%.*s%s%s", (int)(colon - text + 1), text, p[1], colon + 1 + k);
                return out;
            }
        }
    }
    return NULL;
}

const cs_machine_type_t *const *cs_machine_types(int *count)
{
    *count = (int)(sizeof types / sizeof types[0]);
    return types;
}

int cs_machine_new(const char *spec_text, cs_machine_t **out, cs_error_t *err)
{
    cs_spec_t spec;
    const cs_machine_type_t *type = NULL;
    cs_machine_t *m;
    int rc, n = (int)(sizeof types / sizeof types[0]);

    *out = NULL;
    char *expanded = expand_preset(spec_text);
    rc = cs_spec_parse(expanded ? expanded : spec_text, &spec, err);
    free(expanded);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        if (!strcmp(types[i]->name, spec.name))
            type = types[i];
    if (!type) {
        char names[256] = "";
        for (int i = 0; i < n; i++) {
            if (i)
                strcat(names, ", ");
            strncat(names, types[i]->name, sizeof names - strlen(names) - 3);
        }
        cs_error_set(err, CS_ERR_USAGE, "unknown machine \"%s\" in spec \"%s\"; valid machines: %s",
                     spec.name, spec_text, names);
        cs_spec_destroy(&spec);
        return CS_ERR_USAGE;
    }
    m = cs_calloc(1, sizeof *m);
    m->type = type->name;
    m->reduce_den = 1;
    cs_net_params_default(&m->net);
    rc = type->create(&spec, m, err);
    if (!rc)
        rc = cs_spec_check_unused(&spec, type->keys, err);
    cs_spec_destroy(&spec);
    if (rc) {
        cs_machine_free(m);
        return rc;
    }
    if (!m->spec)
        m->spec = cs_strdup(spec_text);
    *out = m;
    return CS_OK;
}

void cs_machine_free(cs_machine_t *m)
{
    if (!m)
        return;
    if (m->destroy_impl)
        m->destroy_impl(m->impl);
    cs_topo_free(m->topo);
    free(m->ring_order);
    free(m->node_group);
    free(m->spec);
    free(m);
}

int cs_machine_nodes(const cs_machine_t *m)
{
    return m->rank_nodes > 0 ? m->rank_nodes : cs_topo_nodes(m->topo);
}

void cs_machine_exec_env(const cs_machine_t *m, cs_exec_env_t *env)
{
    env->topo = m->topo;
    env->net = &m->net;
    env->reduce_num = m->reduce_num;
    env->reduce_den = m->reduce_den;
    env->tick_seconds = m->tick_seconds;
    env->net_new = m->net_new;
    env->net_ctx = m->impl;
}
