/*
 * anim_internal.h - the table behind anim.h: one entry per animated
 * format, each format's encoder in a file of its own (anim_gif.c).
 */
#ifndef CS_ANIM_INTERNAL_H
#define CS_ANIM_INTERNAL_H

#include "io/anim.h"

typedef struct cs_anim_format {
    const char *ext;        /* ".gif" */
    const char *missing;    /* NULL when this build writes it, else what it lacks */
    /* starts an encoder (ctx), adds a frame, ends it into *data (malloc'd) */
    int (*open)(int w, int h, int delay_cs, void **ctx, cs_error_t *err);
    int (*add)(void *ctx, const unsigned char *rgb, cs_error_t *err);
    int (*close)(void *ctx, unsigned char **data, size_t *len, cs_error_t *err);
    void (*discard)(void *ctx);
    int (*probe)(const char *path, int *frames, int *w, int *h, cs_error_t *err);
} cs_anim_format_t;

extern const cs_anim_format_t cs_anim_gif;

#endif
