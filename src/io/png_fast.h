/*
 * png_fast.h - a PNG encoder for speed rather than size (issue 32: a
 * service's figure of a small run in well under 100 ms): cairo's own writer
 * (cairo_surface_write_to_png_stream) lets libpng try every row filter and
 * compresses at zlib's default level 6, which took 85 % of the server's
 * time for a 1000 x 800 heatmap (perf, docs/api.md).  This one writes the
 * same pixels with libpng directly, every row with the Sub filter (flat
 * areas become runs of zeros) and zlib level 1 with its run-length
 * strategy.  The image is the same; the bytes, not.
 *
 * Built with libpng (Debian libpng-dev, which cairo's development package
 * brings); without it cs_png_fast_available is 0 and the caller uses
 * cairo's writer.
 */
#ifndef CS_PNG_FAST_H
#define CS_PNG_FAST_H

#include <stddef.h>

#include "core/error.h"

/* 1 when this build has the encoder. */
int cs_png_fast_available(void);

/* Encodes w x h pixels of cairo's RGB24 layout (one native uint32 per
 * pixel, 0x00RRGGBB; `stride` bytes a row) as an 8-bit RGB PNG, each
 * chunk of output passed to write(ctx, bytes, n).  Errors: CS_ERR_IO with
 * libpng's message, CS_ERR_USAGE when the build has no encoder. */
int cs_png_fast_encode(const unsigned char *pixels, int w, int h, int stride,
                       void (*write)(void *ctx, const unsigned char *data, size_t n), void *ctx,
                       cs_error_t *err);

#endif
