/*
 * png_fast.c - the PNG encoder of png_fast.h, over libpng (its manual,
 * libpng-manual.txt: "Writing", png_set_filter and the zlib settings).
 * libpng reports errors by longjmp to the setjmp of the call that started
 * the write; everything a jump could leave behind is made before it.
 */
#include "io/png_fast.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if CS_HAVE_LIBPNG
#include <png.h>
#include <zlib.h>

typedef struct png_sink {
    void (*write)(void *ctx, const unsigned char *data, size_t n);
    void *ctx;
    char msg[160]; /* libpng's error message, kept for ours */
} png_sink_t;

static void png_fast_write(png_structp png, png_bytep data, size_t n)
{
    png_sink_t *s = png_get_io_ptr(png);
    s->write(s->ctx, data, n);
}

static void png_fast_flush(png_structp png)
{
    (void)png;
}

static void png_fast_error(png_structp png, png_const_charp msg)
{
    png_sink_t *s = png_get_error_ptr(png);
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    png_longjmp(png, 1);
}

static void png_fast_warning(png_structp png, png_const_charp msg)
{
    (void)png; /* libpng warns of nothing this writer does */
    (void)msg;
}

int cs_png_fast_available(void)
{
    return 1;
}

int cs_png_fast_encode(const unsigned char *pixels, int w, int h, int stride,
                       void (*write)(void *ctx, const unsigned char *data, size_t n), void *ctx,
                       cs_error_t *err)
{
    png_sink_t sink = {write, ctx, ""};
    /* made before setjmp: a jump leaves them as they were */
    unsigned char *row = malloc((size_t)w * 3 + 1);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_fast_error,
                                              png_fast_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!row || !png || !info) {
        png_destroy_write_struct(png ? &png : NULL, info ? &info : NULL);
        free(row);
        return cs_error_set(err, CS_ERR_NOMEM, "cannot start a PNG: out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        return cs_error_set(err, CS_ERR_IO, "cannot encode the PNG: libpng: %s", sink.msg);
    }
    png_set_write_fn(png, &sink, png_fast_write, png_fast_flush);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* Sub: a pixel minus its left neighbour, so a flat run of colour is a
     * run of zeros, which Z_RLE at level 1 takes at memory speed */
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    png_set_compression_level(png, 1);
    png_set_compression_strategy(png, Z_RLE);
    png_write_info(png, info);
    for (int y = 0; y < h; y++) {
        const uint32_t *src = (const uint32_t *)(const void *)(pixels + (size_t)y * stride);
        for (int x = 0; x < w; x++) {
            row[3 * x] = (unsigned char)(src[x] >> 16);
            row[3 * x + 1] = (unsigned char)(src[x] >> 8);
            row[3 * x + 2] = (unsigned char)src[x];
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    return CS_OK;
}

#else

int cs_png_fast_available(void)
{
    return 0;
}

int cs_png_fast_encode(const unsigned char *pixels, int w, int h, int stride,
                       void (*write)(void *ctx, const unsigned char *data, size_t n), void *ctx,
                       cs_error_t *err)
{
    (void)pixels, (void)w, (void)h, (void)stride, (void)write, (void)ctx;
    return cs_error_set(err, CS_ERR_USAGE, "this collsim was built without libpng "
                        "(libpng-dev): no fast PNG encoder");
}

#endif
