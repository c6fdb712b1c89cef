/* TIFF decoding through libtiff's RGBA interface, which reads every
 * photometric interpretation, bit depth and compression libtiff knows
 * (16-bit samples are reduced to 8). The first page of a multi-page file
 * is read, as OpenCV's imread does. The Orientation tag is applied by the
 * caller, like a JPEG's EXIF orientation (TIFF defined both). libtiff's
 * warnings are silenced; its errors are caught and reported with the file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "data/image_formats.h"

/* A read-only file in memory for TIFFClientOpen. */
typedef struct mem_file {
    const uint8_t *bytes;
    size_t len, pos;
} mem_file;

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t n) {
    mem_file *m = h;
    size_t left = m->pos < m->len ? m->len - m->pos : 0;
    size_t k = (size_t)n < left ? (size_t)n : left;
    memcpy(buf, m->bytes + m->pos, k);
    m->pos += k;
    return (tmsize_t)k;
}
static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t n) {
    (void)h, (void)buf, (void)n;
    return -1;
}
static toff_t mem_seek(thandle_t h, toff_t off, int whence) {
    mem_file *m = h;
    uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : 0;
    m->pos = (size_t)(base + off);
    return (toff_t)m->pos;
}
static int mem_close(thandle_t h) {
    (void)h;
    return 0;
}
static toff_t mem_size(thandle_t h) { return ((mem_file *)h)->len; }
static int mem_map(thandle_t h, void **base, toff_t *size) {
    mem_file *m = h;
    *base = (void *)m->bytes;
    *size = m->len;
    return 1;
}
static void mem_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

/* libtiff reports through handlers; the per-open ones (TIFFOpenOptions) keep
 * the message with this decode, so threads decoding at once do not mix. */
typedef struct tiff_errors { char message[256]; } tiff_errors;
static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif, (void)module;
    tiff_errors *e = user;
    if (!e->message[0])
        vsnprintf(e->message, sizeof e->message, fmt, ap);
    return 1;
}
static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap) {
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1; /* unknown tags and the like: the pixels are still read */
}

static TIFF *open_mem(mem_file *m, tiff_errors *e) {
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts)
        return NULL;
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, e);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, e);
    TIFF *tif = TIFFClientOpenExt("image", "r", (thandle_t)m, mem_read, mem_write, mem_seek, mem_close, mem_size,
                                  mem_map, mem_unmap, opts);
    TIFFOpenOptionsFree(opts);
    return tif;
}

static yolo_status open_checked(const uint8_t *bytes, size_t len, const char *name, mem_file *m, tiff_errors *e,
                                TIFF **tif, int *width, int *height, int *orientation) {
    *m = (mem_file){bytes, len, 0};
    memset(e, 0, sizeof *e);
    *tif = open_mem(m, e);
    if (!*tif)
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt TIFF: %s", name, e->message[0] ? e->message : "cannot open");
    uint32_t w = 0, h = 0;
    uint16_t o = ORIENTATION_TOPLEFT;
    TIFFGetField(*tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(*tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetFieldDefaulted(*tif, TIFFTAG_ORIENTATION, &o);
    yolo_status st = yolo_image_check_size(w, h, name);
    if (st != YOLO_OK) {
        TIFFClose(*tif);
        return st;
    }
    *width = (int)w;
    *height = (int)h;
    *orientation = o >= 1 && o <= 8 ? o : 1;
    return YOLO_OK;
}

void yolo_tiff_version(char *buf, size_t size) {
    const char *v = TIFFGetVersion(); /* "LIBTIFF, Version 4.5.0\nCopyright ..." */
    const char *at = v ? strstr(v, "Version ") : NULL;
    at = at ? at + 8 : v ? v : "?";
    size_t n = strcspn(at, "\n");
    snprintf(buf, size, "%.*s", (int)n, at);
}

yolo_status yolo_tiff_probe(const uint8_t *bytes, size_t len, const char *name, int *width, int *height,
                            int *orientation) {
    mem_file m;
    tiff_errors e;
    TIFF *tif;
    yolo_status st = open_checked(bytes, len, name, &m, &e, &tif, width, height, orientation);
    if (st == YOLO_OK)
        TIFFClose(tif);
    return st;
}

yolo_status yolo_tiff_decode(const uint8_t *bytes, size_t len, const char *name, yolo_image *out) {
    mem_file m;
    tiff_errors e;
    TIFF *tif;
    int w, h, o;
    yolo_status st = open_checked(bytes, len, name, &m, &e, &tif, &w, &h, &o);
    if (st != YOLO_OK)
        return st;
    char why[1024] = "";
    TIFFRGBAImage img;
    if (!TIFFRGBAImageOK(tif, why) || !TIFFRGBAImageBegin(&img, tif, 1, why)) {
        TIFFClose(tif);
        return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: TIFF not readable: %s", name, why[0] ? why : e.message);
    }
    /* libtiff flips rows/columns to the requested orientation but never
     * transposes (5..8 behave as 1..4); asking for the file's own corner
     * gives the pixels as stored, and the caller applies all eight. */
    static const uint16_t stored_order[8] = {ORIENTATION_TOPLEFT, ORIENTATION_TOPRIGHT, ORIENTATION_BOTRIGHT,
                                             ORIENTATION_BOTLEFT, ORIENTATION_TOPLEFT, ORIENTATION_TOPRIGHT,
                                             ORIENTATION_BOTRIGHT, ORIENTATION_BOTLEFT};
    img.req_orientation = stored_order[o - 1];
    uint32_t *raster = malloc((size_t)w * h * sizeof *raster);
    if (!raster) {
        TIFFRGBAImageEnd(&img);
        TIFFClose(tif);
        return yolo_error(YOLO_ERR_NOMEM, "%s: image %dx%d", name, w, h);
    }
    int ok = TIFFRGBAImageGet(&img, raster, (uint32_t)w, (uint32_t)h);
    TIFFRGBAImageEnd(&img);
    TIFFClose(tif);
    if (!ok) {
        free(raster);
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt TIFF data: %s", name, e.message[0] ? e.message : "read failed");
    }
    if ((st = yolo_image_alloc(out, w, h)) != YOLO_OK) {
        free(raster);
        return st;
    }
    for (size_t i = 0; i < (size_t)w * h; i++) {
        out->data[3 * i] = (uint8_t)TIFFGetR(raster[i]);
        out->data[3 * i + 1] = (uint8_t)TIFFGetG(raster[i]);
        out->data[3 * i + 2] = (uint8_t)TIFFGetB(raster[i]);
    }
    free(raster);
    return YOLO_OK;
}
