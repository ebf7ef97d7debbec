/*
 * anim.h - animated figures: a series of equal-sized RGB frames (the
 * heatmaps of `collsim run --frames`) written as one file, for talks.
 *
 * One format today, chosen by the file's extension from a table
 * (anim.c): GIF, written with giflib (Debian libgif-dev) when the build
 * found it (meson option `gif`).  Without it every call refuses with a
 * message saying what is missing.  The file is written whole or not at all
 * (core/outfile.h); the same frames give the same bytes.
 *
 *     cs_anim_t *a;
 *     cs_anim_new("run.gif", w, h, 20, &a, &err);       // 0.2 s a frame
 *     for (...) cs_anim_add(a, rgb, &err);               // w * h * 3 bytes
 *     cs_anim_finish(a, &err);                           // writes, frees
 */
#ifndef CS_ANIM_H
#define CS_ANIM_H

#include "core/error.h"

typedef struct cs_anim cs_anim_t; /* opaque */

/* CS_OK when path names an animated format this build writes (".gif");
 * else CS_ERR_USAGE naming the path and either the valid extensions or
 * what the build lacks. */
int cs_anim_check_path(const char *path, cs_error_t *err);
/* 1 when path's extension is an animated format's (whether or not this
 * build can write it): tells a file of frames from a folder of them. */
int cs_anim_is_anim_path(const char *path);

/* Starts an animation of w x h frames shown delay_cs hundredths of a
 * second each, looping.  Errors: as cs_anim_check_path; sizes out of
 * 1..65535 (CS_ERR_RANGE). */
int cs_anim_new(const char *path, int w, int h, int delay_cs, cs_anim_t **out,
                cs_error_t *err);
/* Adds a frame: w * h pixels of 3 bytes (R, G, B), row by row.  Errors:
 * the encoder's (CS_ERR_IO). */
int cs_anim_add(cs_anim_t *a, const unsigned char *rgb, cs_error_t *err);
/* Writes the file and frees a (also on failure).  Errors: no frame
 * (CS_ERR_USAGE), the encoder's or the file's (CS_ERR_IO). */
int cs_anim_finish(cs_anim_t *a, cs_error_t *err);
/* Frees a without writing anything.  NULL is fine. */
void cs_anim_free(cs_anim_t *a);

/* Reads an animation back: its frame count and size (tests, tools).
 * Errors: unreadable or not the format (CS_ERR_IO). */
int cs_anim_probe(const char *path, int *frames, int *w, int *h, cs_error_t *err);

#endif
