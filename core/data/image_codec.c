/* JPEG (libjpeg-turbo) and PNG (libpng) decode/encode, EXIF orientation;
 * sniffing, and dispatch to the other formats' decoders (image_formats.h). */
#include "data/image.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#if __has_include(<jconfig.h>) /* libjpeg62-turbo-dev's: LIBJPEG_TURBO_VERSION, for yolo checks */
#include <jconfig.h>
#endif

#include "data/fsutil.h"
#include "data/image_formats.h"

static uint32_t read_u16(const uint8_t *p, bool le) { return le ? p[0] | p[1] << 8 : p[0] << 8 | p[1]; }
static uint32_t read_u32(const uint8_t *p, bool le) {
    return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
              : (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The orientation tag (0x0112) of IFD0 in an "Exif\0\0" APP1 payload. */
static int exif_orientation_from_app1(const uint8_t *p, size_t len) {
    if (len < 14 || memcmp(p, "Exif\0\0", 6) != 0)
        return 1;
    const uint8_t *tiff = p + 6;
    size_t tlen = len - 6;
    bool le;
    if (tiff[0] == 'I' && tiff[1] == 'I')
        le = true;
    else if (tiff[0] == 'M' && tiff[1] == 'M')
        le = false;
    else
        return 1;
    uint32_t ifd = read_u32(tiff + 4, le);
    if ((size_t)ifd + 2 > tlen) /* in size_t: an offset near 2^32 must not wrap past the check */
        return 1;
    uint32_t count = read_u16(tiff + ifd, le);
    for (uint32_t i = 0; i < count; i++) {
        size_t e = ifd + 2 + 12 * (size_t)i;
        if (e + 12 > tlen)
            break;
        if (read_u16(tiff + e, le) == 0x0112) {
            uint32_t v = read_u16(tiff + e + 8, le); /* SHORT, left-justified in the value field */
            return v >= 1 && v <= 8 ? (int)v : 1;
        }
    }
    return 1;
}

/* Walks JPEG markers up to the first SOS looking for EXIF APP1. */
static int jpeg_orientation(const uint8_t *b, size_t len) {
    size_t i = 2;
    while (i + 4 <= len) {
        if (b[i] != 0xFF) {
            i++;
            continue;
        }
        uint8_t marker = b[i + 1];
        if (marker == 0xFF) {
            i++;
            continue;
        }
        if (marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) {
            i += 2;
            continue;
        }
        if (marker == 0xDA || marker == 0xD9)
            break;
        size_t seg = (size_t)b[i + 2] << 8 | b[i + 3];
        if (seg < 2 || i + 2 + seg > len)
            break;
        if (marker == 0xE1) {
            int o = exif_orientation_from_app1(b + i + 4, seg - 2);
            if (o != 1)
                return o;
        }
        i += 2 + seg;
    }
    return 1;
}

static bool jpeg_has_eoi(const uint8_t *b, size_t len) {
    /* Allow trailing padding after EOI, as cameras write. */
    size_t stop = len > 4096 ? len - 4096 : 2;
    for (size_t i = len; i >= stop + 2; i--)
        if (b[i - 2] == 0xFF && b[i - 1] == 0xD9)
            return true;
    return false;
}

static bool png_has_iend(const uint8_t *b, size_t len) {
    return len >= 12 && memcmp(b + len - 8, "IEND", 4) == 0;
}

static yolo_image_format sniff(const uint8_t *b, size_t len) {
    if (len >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF)
        return YOLO_IMAGE_JPEG;
    if (len >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0)
        return YOLO_IMAGE_PNG;
    if (len >= 2 && b[0] == 'B' && b[1] == 'M')
        return YOLO_IMAGE_BMP;
    if (len >= 4 && (memcmp(b, "II*\0", 4) == 0 || memcmp(b, "MM\0*", 4) == 0 || memcmp(b, "II+\0", 4) == 0 ||
                     memcmp(b, "MM\0+", 4) == 0)) /* classic or BigTIFF */
        return YOLO_IMAGE_TIFF;
    if (len >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0)
        return YOLO_IMAGE_WEBP;
    return YOLO_IMAGE_UNKNOWN;
}

void yolo_image_formats_describe(char *buf, size_t size) {
    char webp[32], tiff[32];
    yolo_webp_version(webp, sizeof webp);
    yolo_tiff_version(tiff, sizeof tiff);
#ifdef LIBJPEG_TURBO_VERSION
#define YOLO_STR2(x) #x
#define YOLO_STR(x) YOLO_STR2(x)
    const char *jpeg = YOLO_STR(LIBJPEG_TURBO_VERSION);
#else
    const char *jpeg = "?";
#endif
    snprintf(buf, size, "JPEG (libjpeg-turbo %s), PNG (libpng %s), BMP, WebP (libwebp %s), TIFF (libtiff %s)", jpeg,
             png_get_libpng_ver(NULL), webp, tiff);
}

yolo_status yolo_image_check_size(int64_t width, int64_t height, const char *name) {
    if (width <= 0 || height <= 0)
        return yolo_error(YOLO_ERR_FORMAT, "%s: image size %lldx%lld", name, (long long)width, (long long)height);
    if (width > YOLO_IMAGE_MAX_PIXELS / height)
        return yolo_error(YOLO_ERR_FORMAT, "%s: image of %lldx%lld pixels is larger than the %lld-pixel limit "
                          "(a decompression bomb, as Pillow calls it); not decoded", name, (long long)width,
                          (long long)height, YOLO_IMAGE_MAX_PIXELS);
    return YOLO_OK;
}

yolo_status yolo_image_probe(const uint8_t *bytes, size_t len, const char *name, yolo_image_info *info) {
    memset(info, 0, sizeof *info);
    info->orientation = 1;
    info->format = sniff(bytes, len);
    if (info->format == YOLO_IMAGE_UNKNOWN)
        return yolo_error(YOLO_ERR_FORMAT, "%s: not an image (%zu bytes, unknown signature)", name, len);
    if (info->format == YOLO_IMAGE_BMP)
        return yolo_bmp_probe(bytes, len, name, &info->width, &info->height);
    if (info->format == YOLO_IMAGE_WEBP)
        return yolo_webp_probe(bytes, len, name, &info->width, &info->height);
    if (info->format == YOLO_IMAGE_TIFF) {
        int w = 0, h = 0;
        yolo_status st = yolo_tiff_probe(bytes, len, name, &w, &h, &info->orientation);
        bool swap = info->orientation >= 5;
        info->width = swap ? h : w;
        info->height = swap ? w : h;
        return st;
    }
    if (info->format == YOLO_IMAGE_JPEG) {
        tjhandle tj = tjInitDecompress();
        if (!tj)
            return yolo_error(YOLO_ERR_NOMEM, "%s: cannot create a JPEG decoder", name);
        /* zeroed: for a tables-only datastream (no frame) libjpeg-turbo returns success and sets nothing */
        int w = 0, h = 0, sub = 0, cs = 0;
        int rc = tjDecompressHeader3(tj, bytes, (unsigned long)len, &w, &h, &sub, &cs);
        if (rc != 0) {
            yolo_status st = yolo_error(YOLO_ERR_FORMAT, "%s: corrupt JPEG header: %s", name, tjGetErrorStr2(tj));
            tjDestroy(tj);
            return st;
        }
        tjDestroy(tj);
        info->orientation = jpeg_orientation(bytes, len);
        info->truncated = !jpeg_has_eoi(bytes, len);
        if (yolo_image_check_size(w, h, name) != YOLO_OK)
            return YOLO_ERR_FORMAT;
        bool swap = info->orientation >= 5;
        info->width = swap ? h : w;
        info->height = swap ? w : h;
    } else {
        /* IHDR follows the signature: length(4) "IHDR" width(4) height(4). */
        if (len < 33 || memcmp(bytes + 12, "IHDR", 4) != 0)
            return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt PNG header", name);
        uint32_t w = read_u32(bytes + 16, false), h = read_u32(bytes + 20, false);
        info->truncated = !png_has_iend(bytes, len);
        if (yolo_image_check_size(w, h, name) != YOLO_OK)
            return YOLO_ERR_FORMAT;
        info->width = (int)w;
        info->height = (int)h;
    }
    return YOLO_OK;
}

yolo_status yolo_image_alloc(yolo_image *image, int width, int height) {
    image->width = width;
    image->height = height;
    image->data = malloc((size_t)width * (size_t)height * 3);
    if (!image->data)
        return yolo_error(YOLO_ERR_NOMEM, "image %dx%d", width, height);
    return YOLO_OK;
}

yolo_status yolo_image_orient(yolo_image *image, int o) {
    if (o <= 1 || o > 8)
        return YOLO_OK;
    int w = image->width, h = image->height;
    int ow = o >= 5 ? h : w, oh = o >= 5 ? w : h;
    yolo_image out;
    if (yolo_image_alloc(&out, ow, oh) != YOLO_OK)
        return YOLO_ERR_NOMEM;
    for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
            int sx, sy;
            switch (o) {
            case 2: sx = w - 1 - x; sy = y; break;
            case 3: sx = w - 1 - x; sy = h - 1 - y; break;
            case 4: sx = x; sy = h - 1 - y; break;
            case 5: sx = y; sy = x; break;
            case 6: sx = y; sy = h - 1 - x; break;
            case 7: sx = w - 1 - y; sy = h - 1 - x; break;
            default: sx = w - 1 - y; sy = x; break; /* 8 */
            }
            memcpy(out.data + ((size_t)y * ow + x) * 3, image->data + ((size_t)sy * w + sx) * 3, 3);
        }
    free(image->data);
    *image = out;
    return YOLO_OK;
}

static yolo_status decode_jpeg(const uint8_t *bytes, size_t len, const char *name, int min_long_side,
                               yolo_image *out, bool *repaired) {
    tjhandle tj = tjInitDecompress();
    if (!tj)
        return yolo_error(YOLO_ERR_NOMEM, "%s: cannot create a JPEG decoder", name);
    int w = 0, h = 0, sub = 0, cs = 0; /* as the probe's: a tables-only stream leaves them unset */
    yolo_status st = YOLO_OK;
    if (tjDecompressHeader3(tj, bytes, (unsigned long)len, &w, &h, &sub, &cs) != 0) {
        st = yolo_error(YOLO_ERR_FORMAT, "%s: corrupt JPEG: %s", name, tjGetErrorStr2(tj));
        goto done;
    }
    if ((st = yolo_image_check_size(w, h, name)) != YOLO_OK)
        goto done;
    /* DCT-domain downscaling: the smallest of 1/8..1 keeping the long side. */
    int sw = w, sh = h;
    if (min_long_side > 0) {
        int n;
        tjscalingfactor *f = tjGetScalingFactors(&n);
        int best_long = w > h ? w : h;
        for (int i = 0; f && i < n; i++) {
            if (f[i].num != 1 || f[i].denom > 8)
                continue;
            int tw = TJSCALED(w, f[i]), th = TJSCALED(h, f[i]);
            int lng = tw > th ? tw : th;
            if (lng >= min_long_side && lng < best_long) {
                best_long = lng;
                sw = tw;
                sh = th;
            }
        }
    }
    bool cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    int pf = cmyk ? TJPF_CMYK : TJPF_RGB, ps = cmyk ? 4 : 3;
    uint8_t *buf = malloc((size_t)sw * sh * ps);
    if (!buf) {
        st = yolo_error(YOLO_ERR_NOMEM, "%s: image %dx%d", name, sw, sh);
        goto done;
    }
    if (tjDecompress2(tj, bytes, (unsigned long)len, buf, sw, 0, sh, pf, TJFLAG_ACCURATEDCT) != 0) {
        if (tjGetErrorCode(tj) == TJERR_WARNING) {
            if (repaired)
                *repaired = true; /* e.g. premature end: the rest is grey, usable */
        } else {
            st = yolo_error(YOLO_ERR_FORMAT, "%s: corrupt JPEG: %s", name, tjGetErrorStr2(tj));
            free(buf);
            goto done;
        }
    }
    if (cmyk) {
        /* Adobe CMYK is stored inverted: R = C*K/255. */
        uint8_t *rgb = malloc((size_t)sw * sh * 3);
        if (!rgb) {
            free(buf);
            st = yolo_error(YOLO_ERR_NOMEM, "%s: image", name);
            goto done;
        }
        for (size_t i = 0; i < (size_t)sw * sh; i++)
            for (int c = 0; c < 3; c++)
                rgb[3 * i + c] = (uint8_t)((buf[4 * i + c] * buf[4 * i + 3] + 127) / 255);
        free(buf);
        buf = rgb;
    }
    out->width = sw;
    out->height = sh;
    out->data = buf;
    st = yolo_image_orient(out, jpeg_orientation(bytes, len));
done:
    tjDestroy(tj);
    return st;
}

static yolo_status decode_png(const uint8_t *bytes, size_t len, const char *name, yolo_image *out) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, bytes, len))
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt PNG: %s", name, img.message);
    if (yolo_image_check_size(img.width, img.height, name) != YOLO_OK) {
        png_image_free(&img);
        return YOLO_ERR_FORMAT;
    }
    bool alpha = (img.format & PNG_FORMAT_FLAG_ALPHA) != 0;
    img.format = alpha ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
    size_t ps = alpha ? 4 : 3;
    uint8_t *buf = malloc((size_t)img.width * img.height * ps);
    if (!buf) {
        png_image_free(&img);
        return yolo_error(YOLO_ERR_NOMEM, "%s: image %ux%u", name, img.width, img.height);
    }
    if (!png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        yolo_status st = yolo_error(YOLO_ERR_FORMAT, "%s: corrupt PNG: %s", name, img.message);
        free(buf);
        png_image_free(&img);
        return st;
    }
    if (alpha) /* drop alpha in place, as cv2.imread(IMREAD_COLOR) does */
        for (size_t i = 0; i < (size_t)img.width * img.height; i++)
            memmove(buf + 3 * i, buf + 4 * i, 3);
    out->width = (int)img.width;
    out->height = (int)img.height;
    out->data = buf;
    return YOLO_OK;
}

yolo_status yolo_image_decode(const uint8_t *bytes, size_t len, const char *name, int min_long_side,
                              yolo_image *out, bool *repaired) {
    memset(out, 0, sizeof *out);
    if (repaired)
        *repaired = false;
    yolo_image_info info; /* the header first: its size is checked before a decoder allocates anything */
    yolo_status st = yolo_image_probe(bytes, len, name, &info);
    if (st != YOLO_OK)
        return st;
    switch (info.format) {
    case YOLO_IMAGE_JPEG: return decode_jpeg(bytes, len, name, min_long_side, out, repaired);
    case YOLO_IMAGE_PNG: return decode_png(bytes, len, name, out);
    case YOLO_IMAGE_BMP: return yolo_bmp_decode(bytes, len, name, out);
    case YOLO_IMAGE_WEBP: return yolo_webp_decode(bytes, len, name, out);
    case YOLO_IMAGE_TIFF:
        if ((st = yolo_tiff_decode(bytes, len, name, out)) != YOLO_OK)
            return st;
        if ((st = yolo_image_orient(out, info.orientation)) != YOLO_OK)
            yolo_image_free(out);
        return st;
    default: return yolo_error(YOLO_ERR_FORMAT, "%s: not an image (%zu bytes, unknown signature)", name, len);
    }
}

yolo_status yolo_image_load_file(const char *path, yolo_image *out) {
    uint8_t *bytes;
    size_t len;
    yolo_status st = yolo_read_file(path, &bytes, &len);
    if (st != YOLO_OK)
        return st;
    st = yolo_image_decode(bytes, len, path, 0, out, NULL);
    free(bytes);
    return st;
}

static yolo_status encode_jpeg(const uint8_t *pixels, int w, int h, int channels, int quality, uint8_t **out,
                               size_t *len) {
    if (channels != 1 && channels != 3)
        return yolo_error(YOLO_ERR_ARG, "JPEG encode: %d channels (1 or 3)", channels);
    tjhandle tj = tjInitCompress();
    if (!tj)
        return yolo_error(YOLO_ERR_NOMEM, "cannot create a JPEG encoder");
    unsigned char *buf = NULL;
    unsigned long size = 0;
    int rc = tjCompress2(tj, pixels, w, 0, h, channels == 1 ? TJPF_GRAY : TJPF_RGB, &buf, &size,
                         channels == 1 ? TJSAMP_GRAY : TJSAMP_420, quality, TJFLAG_ACCURATEDCT);
    yolo_status st = YOLO_OK;
    if (rc != 0) {
        st = yolo_error(YOLO_ERR_FORMAT, "JPEG encode %dx%d: %s", w, h, tjGetErrorStr2(tj));
    } else {
        *out = malloc(size);
        if (!*out)
            st = yolo_error(YOLO_ERR_NOMEM, "JPEG buffer");
        else
            memcpy(*out, buf, size);
        *len = size;
    }
    tjFree(buf);
    tjDestroy(tj);
    return st;
}

static yolo_status encode_png(const uint8_t *pixels, int w, int h, int channels, uint8_t **out, size_t *len) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w;
    img.height = (png_uint_32)h;
    switch (channels) {
    case 1: img.format = PNG_FORMAT_GRAY; break;
    case 3: img.format = PNG_FORMAT_RGB; break;
    case 4: img.format = PNG_FORMAT_RGBA; break;
    default: return yolo_error(YOLO_ERR_ARG, "PNG encode: %d channels (1, 3 or 4)", channels);
    }
    /* one pass into a buffer of the largest possible size (asking libpng for
     * the exact size first would compress the image twice) */
    png_alloc_size_t size = PNG_IMAGE_PNG_SIZE_MAX(img);
    *out = malloc(size);
    if (!*out)
        return yolo_error(YOLO_ERR_NOMEM, "PNG buffer");
    if (!png_image_write_to_memory(&img, *out, &size, 0, pixels, 0, NULL)) {
        free(*out);
        return yolo_error(YOLO_ERR_FORMAT, "PNG encode: %s", img.message);
    }
    uint8_t *fit = realloc(*out, size ? size : 1);
    if (fit) *out = fit;
    *len = size;
    return YOLO_OK;
}

yolo_status yolo_image_encode_pixels(const uint8_t *pixels, int width, int height, int channels,
                                     yolo_image_format format, int quality, uint8_t **out, size_t *len) {
    *out = NULL;
    *len = 0;
    if (format == YOLO_IMAGE_JPEG)
        return encode_jpeg(pixels, width, height, channels, quality, out, len);
    if (format == YOLO_IMAGE_PNG)
        return encode_png(pixels, width, height, channels, out, len);
    return yolo_error(YOLO_ERR_ARG, "encode: only JPEG and PNG");
}

yolo_status yolo_image_encode_jpeg(const yolo_image *image, int quality, uint8_t **out, size_t *len) {
    return encode_jpeg(image->data, image->width, image->height, 3, quality, out, len);
}

yolo_status yolo_image_encode_png(const yolo_image *image, uint8_t **out, size_t *len) {
    return encode_png(image->data, image->width, image->height, 3, out, len);
}

yolo_status yolo_image_save(const yolo_image *image, const char *path) {
    const char *dot = strrchr(path, '.');
    uint8_t *bytes = NULL;
    size_t len = 0;
    yolo_status st;
    if (dot && strcasecmp(dot, ".png") == 0)
        st = yolo_image_encode_png(image, &bytes, &len);
    else if (dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0))
        st = yolo_image_encode_jpeg(image, 95, &bytes, &len);
    else
        return yolo_error(YOLO_ERR_ARG, "%s: cannot tell the image format from the extension", path);
    if (st == YOLO_OK)
        st = yolo_write_file(path, bytes, len);
    free(bytes);
    return st;
}
