/*
 * algofile.c - the table of algorithm file formats (algofile.h).  Each
 * format is a reader in a file of its own (msccl.c: MSCCL XML; mscclpp.c:
 * MSCCL++ JSON plans, built only with jansson: CS_HAVE_JANSSON); this file
 * only wraps what a reader made as a cs_coll_algo_t of the suite.
 */
#include "io/algofile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/msccl.h"
#if CS_HAVE_JANSSON
#include "io/mscclpp.h"
#endif

/* One format: read a file into the format's object, check its collective,
 * describe it, emit it into a builder, free it. */
typedef struct algofile_format {
    const char *prefix;
    int (*read)(const cs_source_t *src, void **out, cs_error_t *err);
    int (*check_kind)(const void *data, cs_coll_kind_t kind, cs_error_t *err);
    void (*describe)(const void *data, char *buf, size_t len);
    int (*emit)(const void *data, cs_coll_builder_t *b, cs_error_t *err);
    void (*free)(void *data);
    /* names the format's units in a validation message (may be NULL) */
    void (*explain)(const void *data, const cs_coll_args_t *a, char *msg, size_t len);
    /* the options its algorithms take (--opt), as the suite's say them */
    const char *options;
    const char *const *keys;
} algofile_format_t;

/* ---- MSCCL XML -------------------------------------------------------------- */

static int msccl_read(const cs_source_t *src, void **out, cs_error_t *err)
{
    cs_msccl_t *m;
    int rc = cs_msccl_read(src, &m, err);
    *out = m;
    return rc;
}
static int msccl_check_kind(const void *d, cs_coll_kind_t k, cs_error_t *err)
{
    return cs_msccl_check_kind(d, k, err);
}
static void msccl_describe(const void *d, char *buf, size_t len)
{
    cs_msccl_info_t i;
    cs_msccl_info(d, &i);
    snprintf(buf, len, "MSCCL XML algorithm \"%s\": %d GPUs, %d chunks per loop, %d channels, "
             "%d thread blocks, %lld steps, proto %s (not modelled)", i.name, i.ngpus, i.nchunks,
             i.nchannels, i.nthreadblocks, (long long)i.nsteps, i.proto);
}
static int msccl_emit(const void *d, cs_coll_builder_t *b, cs_error_t *err)
{
    return cs_msccl_emit(d, b, err);
}
static void msccl_free(void *d) { cs_msccl_free(d); }
static void msccl_explain(const void *d, const cs_coll_args_t *a, char *msg, size_t len)
{
    cs_msccl_explain(d, a, msg, len);
}

/* ---- MSCCL++ JSON plans -------------------------------------------------------- */

#if CS_HAVE_JANSSON
static int mscclpp_read(const cs_source_t *src, void **out, cs_error_t *err)
{
    cs_mscclpp_t *m;
    int rc = cs_mscclpp_read(src, &m, err);
    *out = m;
    return rc;
}
static int mscclpp_check_kind(const void *d, cs_coll_kind_t k, cs_error_t *err)
{
    return cs_mscclpp_check_kind(d, k, err);
}
static void mscclpp_describe(const void *d, char *buf, size_t len)
{
    cs_mscclpp_info_t i;
    cs_mscclpp_info(d, &i);
    snprintf(buf, len, "MSCCL++ execution plan \"%s\": %d GPUs, %d chunks, %d thread blocks, "
             "%lld ops, protocol %s (not modelled)", i.name, i.ngpus, i.nchunks,
             i.nthreadblocks, (long long)i.nops, i.protocol);
}
static int mscclpp_emit(const void *d, cs_coll_builder_t *b, cs_error_t *err)
{
    return cs_mscclpp_emit(d, b, err);
}
static void mscclpp_free(void *d) { cs_mscclpp_free(d); }
#else
/* The prefix is known without jansson too, so that the message says why. */
static int mscclpp_read(const cs_source_t *src, void **out, cs_error_t *err)
{
    *out = NULL;
    return cs_error_set(err, CS_ERR_USAGE, "%s: collsim was built without jansson: mscclpp: "
                        "plans cannot be read", src->name);
}
static int mscclpp_check_kind(const void *d, cs_coll_kind_t k, cs_error_t *err)
{
    (void)d, (void)k, (void)err;
    return CS_OK;
}
static void mscclpp_describe(const void *d, char *buf, size_t len)
{
    (void)d;
    snprintf(buf, len, "MSCCL++ execution plan");
}
static int mscclpp_emit(const void *d, cs_coll_builder_t *b, cs_error_t *err)
{
    (void)d, (void)b;
    return cs_error_set(err, CS_ERR_USAGE, "collsim was built without jansson: mscclpp: "
                        "plans cannot be read");
}
static void mscclpp_free(void *d) { (void)d; }
#endif

static const algofile_format_t formats[] = {
    {"msccl", msccl_read, msccl_check_kind, msccl_describe, msccl_emit, msccl_free,
     msccl_explain, CS_MSCCL_OPTIONS, cs_msccl_keys},
    {"mscclpp", mscclpp_read, mscclpp_check_kind, mscclpp_describe, mscclpp_emit, mscclpp_free,
     NULL, "", NULL},
};
#define NFORMATS ((int)(sizeof formats / sizeof *formats))

/* ---- the algorithm ------------------------------------------------------------- */

/* What the suite sees: the cs_coll_algo_t first, so that the build
 * function finds the rest from cs_coll_builder_algo. */
typedef struct algofile {
    cs_coll_algo_t algo;
    const algofile_format_t *format;
    void *data;
    char *name, *summary, *source;
} algofile_t;

static int algofile_build(cs_coll_builder_t *b, cs_error_t *err)
{
    const algofile_t *f = (const algofile_t *)cs_coll_builder_algo(b);
    return f->format->emit(f->data, b, err);
}

const char *cs_algofile_format(const char *name, const char **file)
{
    const char *colon = name ? strchr(name, ':') : NULL;
    if (!colon)
        return NULL;
    for (int i = 0; i < NFORMATS; i++)
        if (strlen(formats[i].prefix) == (size_t)(colon - name) &&
            !strncmp(name, formats[i].prefix, (size_t)(colon - name))) {
            *file = colon + 1;
            return formats[i].prefix;
        }
    return NULL;
}

const char *cs_algofile_formats(void) { return "msccl, mscclpp"; }

int cs_algofile_read(const char *format, const cs_source_t *src, cs_coll_kind_t kind,
                     const char *name, cs_coll_algo_t **out, cs_error_t *err)
{
    const algofile_format_t *fmt = NULL;
    void *data = NULL;
    char summary[512];
    int rc;
    *out = NULL;
    for (int i = 0; i < NFORMATS; i++)
        if (!strcmp(formats[i].prefix, format))
            fmt = &formats[i];
    if (!fmt)
        return cs_error_set(err, CS_ERR_USAGE, "unknown algorithm file format '%s'; valid: %s",
                            format, cs_algofile_formats());
    if (!src->name || (!src->data && !src->name[0]))
        return cs_error_set(err, CS_ERR_USAGE, "--algo %s: names no file (%s:FILE)", name,
                            format);
    if ((rc = fmt->read(src, &data, err)))
        return rc;
    if ((rc = fmt->check_kind(data, kind, err))) {
        fmt->free(data);
        return rc;
    }
    algofile_t *f = cs_calloc(1, sizeof *f);
    f->format = fmt;
    f->data = data;
    f->name = cs_strdup(name);
    fmt->describe(data, summary, sizeof summary);
    f->summary = cs_strdup(summary);
    f->source = cs_strdup(src->name);
    f->algo = (cs_coll_algo_t){kind,         f->name,   f->summary,    f->source,
                               fmt->options, fmt->keys, algofile_build, NULL};
    *out = &f->algo;
    return CS_OK;
}

void cs_algofile_explain(const cs_coll_algo_t *algo, const cs_coll_args_t *args,
                         cs_error_t *err)
{
    const algofile_t *f = (const algofile_t *)algo;
    if (f && err && f->format->explain)
        f->format->explain(f->data, args, err->msg, sizeof err->msg);
}

void cs_algofile_free(cs_coll_algo_t *algo)
{
    algofile_t *f = (algofile_t *)algo;
    if (!f)
        return;
    f->format->free(f->data);
    free(f->name);
    free(f->summary);
    free(f->source);
    free(f);
}
