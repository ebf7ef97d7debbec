/*
 * anim_gif.c - animated GIF (GIF89a) for anim.h, written with giflib
 * (giflib.sourceforge.net; Debian libgif-dev), compiled with
 * CS_HAVE_GIF=1 when the build found it.  Without it the format is in the
 * table with a `missing` message and its functions are never called.
 *
 * Each frame gets its own 256-colour palette from giflib's median-cut
 * quantizer (GifQuantizeBuffer: a heatmap holds the viridis scale, greys
 * and white, which one palette of 256 cannot hold for all frames at once
 * without banding), a graphics control block with the delay, and the
 * NETSCAPE2.0 extension makes the series loop.  No timestamps: the same
 * frames give the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "io/anim_internal.h"

#if CS_HAVE_GIF
#include <gif_lib.h>

typedef struct gif_ctx {
    GifFileType *gif;
    int w, h, delay;
    unsigned char *data; /* the file so far */
    size_t len, cap;
    unsigned char *planes, *index; /* r, g, b planes; the quantized frame */
} gif_ctx_t;

static int gif_out(GifFileType *g, const GifByteType *buf, int n)
{
    gif_ctx_t *c = g->UserData;
    if (c->len + (size_t)n > c->cap) {
        while (c->len + (size_t)n > c->cap)
            c->cap = c->cap ? 2 * c->cap : 65536;
        c->data = cs_realloc(c->data, c->cap);
    }
    memcpy(c->data + c->len, buf, (size_t)n);
    c->len += (size_t)n;
    return n;
}

static int gif_fail(cs_error_t *err, const char *what, int code)
{
    return cs_error_set(err, CS_ERR_IO, "GIF: %s: %s", what, GifErrorString(code));
}

static void gif_discard(void *ctx)
{
    gif_ctx_t *c = ctx;
    int e;
    if (c->gif)
        EGifCloseFile(c->gif, &e);
    free(c->data);
    free(c->planes);
    free(c->index);
    free(c);
}

static int gif_open(int w, int h, int delay_cs, void **out, cs_error_t *err)
{
    int e = 0;
    gif_ctx_t *c = cs_calloc(1, sizeof *c);
    c->w = w;
    c->h = h;
    c->delay = delay_cs;
    c->gif = EGifOpen(c, gif_out, &e);
    if (!c->gif) {
        free(c);
        return gif_fail(err, "cannot start the encoder", e);
    }
    EGifSetGifVersion(c->gif, true);
    static unsigned char loop[3] = {1, 0, 0}; /* sub-block 1: loop count 0, for ever */
    if (EGifPutScreenDesc(c->gif, w, h, 8, 0, NULL) == GIF_ERROR ||
        EGifPutExtensionLeader(c->gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
        EGifPutExtensionBlock(c->gif, 11, "NETSCAPE2.0") == GIF_ERROR ||
        EGifPutExtensionBlock(c->gif, 3, loop) == GIF_ERROR ||
        EGifPutExtensionTrailer(c->gif) == GIF_ERROR) {
        int code = c->gif->Error;
        gif_discard(c);
        return gif_fail(err, "cannot write the header", code);
    }
    c->planes = cs_malloc(3 * (size_t)w * h);
    c->index = cs_malloc((size_t)w * h);
    *out = c;
    return CS_OK;
}

static int gif_add(void *ctx, const unsigned char *rgb, cs_error_t *err)
{
    gif_ctx_t *c = ctx;
    size_t n = (size_t)c->w * c->h;
    GifColorType colours[256];
    int ncolours = 256;
    unsigned char *r = c->planes, *g = r + n, *b = g + n;
    for (size_t i = 0; i < n; i++) {
        r[i] = rgb[3 * i];
        g[i] = rgb[3 * i + 1];
        b[i] = rgb[3 * i + 2];
    }
    memset(colours, 0, sizeof colours);
    if (GifQuantizeBuffer((unsigned)c->w, (unsigned)c->h, &ncolours, r, g, b, c->index,
                          colours) == GIF_ERROR)
        return cs_error_set(err, CS_ERR_IO, "GIF: cannot reduce a frame to 256 colours");
    ColorMapObject *map = GifMakeMapObject(256, colours);
    if (!map)
        return cs_error_set(err, CS_ERR_NOMEM, "GIF: out of memory for a palette");
    GraphicsControlBlock gcb = {DISPOSAL_UNSPECIFIED, false, c->delay, NO_TRANSPARENT_COLOR};
    GifByteType ext[4];
    size_t elen = EGifGCBToExtension(&gcb, ext);
    int ok = EGifPutExtension(c->gif, GRAPHICS_EXT_FUNC_CODE, (int)elen, ext) != GIF_ERROR &&
             EGifPutImageDesc(c->gif, 0, 0, c->w, c->h, false, map) != GIF_ERROR;
    for (int y = 0; ok && y < c->h; y++)
        ok = EGifPutLine(c->gif, c->index + (size_t)y * c->w, c->w) != GIF_ERROR;
    GifFreeMapObject(map);
    return ok ? CS_OK : gif_fail(err, "cannot write a frame", c->gif->Error);
}

static int gif_close(void *ctx, unsigned char **data, size_t *len, cs_error_t *err)
{
    gif_ctx_t *c = ctx;
    int e = 0, rc = EGifCloseFile(c->gif, &e);
    c->gif = NULL;
    if (rc == GIF_ERROR) {
        gif_discard(c);
        return gif_fail(err, "cannot finish the file", e);
    }
    *data = c->data;
    *len = c->len;
    c->data = NULL;
    gif_discard(c);
    return CS_OK;
}

static int gif_probe(const char *path, int *frames, int *w, int *h, cs_error_t *err)
{
    int e = 0;
    GifFileType *g = DGifOpenFileName(path, &e);
    if (!g)
        return cs_error_set(err, CS_ERR_IO, "%s: %s", path, GifErrorString(e));
    if (DGifSlurp(g) == GIF_ERROR) {
        int code = g->Error;
        DGifCloseFile(g, &e);
        return cs_error_set(err, CS_ERR_IO, "%s: %s", path, GifErrorString(code));
    }
    *frames = g->ImageCount;
    *w = g->SWidth;
    *h = g->SHeight;
    DGifCloseFile(g, &e);
    return CS_OK;
}

const cs_anim_format_t cs_anim_gif = {".gif", NULL, gif_open, gif_add, gif_close, gif_discard,
                                      gif_probe};
#else
const cs_anim_format_t cs_anim_gif = {
    ".gif",
    "it was built without giflib (install Debian's libgif-dev and reconfigure: "
    "meson setup --reconfigure -Dgif=enabled)",
    NULL, NULL, NULL, NULL, NULL};
#endif
