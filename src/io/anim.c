/*
 * anim.c - animated figures (anim.h): the format table, chosen by the
 * file's extension, and the file written whole at the end.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/outfile.h"
#include "io/anim_internal.h"

static const cs_anim_format_t *const formats[] = {&cs_anim_gif};
#define NFORMATS (sizeof formats / sizeof formats[0])

struct cs_anim {
    const cs_anim_format_t *f;
    void *ctx;
    char *path;
    int frames;
};

static const cs_anim_format_t *format_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash))
        return NULL;
    for (size_t i = 0; i < NFORMATS; i++)
        if (!strcasecmp(dot, formats[i]->ext))
            return formats[i];
    return NULL;
}

int cs_anim_is_anim_path(const char *path) { return format_of(path) != NULL; }

int cs_anim_check_path(const char *path, cs_error_t *err)
{
    const cs_anim_format_t *f = format_of(path);
    if (!f)
        return cs_error_set(err, CS_ERR_USAGE, "%s: not an animated format; use .gif", path);
    if (f->missing)
        return cs_error_set(err, CS_ERR_USAGE, "%s: this build cannot write %s animations: %s",
                            path, f->ext + 1, f->missing);
    return CS_OK;
}

int cs_anim_new(const char *path, int w, int h, int delay_cs, cs_anim_t **out, cs_error_t *err)
{
    int rc;
    *out = NULL;
    if ((rc = cs_anim_check_path(path, err)))
        return rc;
    if (w < 1 || h < 1 || w > 65535 || h > 65535)
        return cs_error_set(err, CS_ERR_RANGE, "%s: frames of %d x %d pixels (1..65535 each)",
                            path, w, h);
    cs_anim_t *a = cs_calloc(1, sizeof *a);
    a->f = format_of(path);
    if ((rc = a->f->open(w, h, delay_cs, &a->ctx, err))) {
        free(a);
        return rc;
    }
    a->path = cs_strdup(path);
    *out = a;
    return CS_OK;
}

int cs_anim_add(cs_anim_t *a, const unsigned char *rgb, cs_error_t *err)
{
    int rc = a->f->add(a->ctx, rgb, err);
    if (rc == CS_OK)
        a->frames++;
    return rc;
}

int cs_anim_finish(cs_anim_t *a, cs_error_t *err)
{
    unsigned char *data = NULL;
    size_t len = 0;
    int rc;
    if (!a->frames) {
        rc = cs_error_set(err, CS_ERR_USAGE, "%s: an animation of no frames", a->path);
        cs_anim_free(a);
        return rc;
    }
    rc = a->f->close(a->ctx, &data, &len, err);
    a->ctx = NULL;
    if (rc == CS_OK)
        rc = cs_outfile_save(NULL, a->path, data, len, err);
    free(data);
    cs_anim_free(a);
    return rc;
}

void cs_anim_free(cs_anim_t *a)
{
    if (!a)
        return;
    if (a->ctx)
        a->f->discard(a->ctx);
    free(a->path);
    free(a);
}

int cs_anim_probe(const char *path, int *frames, int *w, int *h, cs_error_t *err)
{
    const cs_anim_format_t *f = format_of(path);
    int rc = cs_anim_check_path(path, err);
    if (rc)
        return rc;
    return f->probe(path, frames, w, h, err);
}
