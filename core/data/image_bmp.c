/* BMP decoding (no library needed): the variants OpenCV's imread reads —
 * OS/2 and Windows headers (12 to 124 bytes), 1/4/8-bit palettes, 16-bit
 * 5-5-5 or bit fields, 24-bit, 32-bit (alpha dropped), RLE8 and RLE4,
 * bottom-up or top-down rows. Channels narrower than 8 bits are shifted up
 * without replicating their high bits, as OpenCV does (5-bit 31 -> 248). */
#include <stdlib.h>
#include <string.h>

#include "data/image_formats.h"

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_ALPHABITFIELDS = 6 };

typedef struct bmp_header {
    int width, height; /* height > 0 */
    bool top_down;
    int bpp, compression;
    uint32_t data_offset;
    uint32_t masks[3]; /* r, g, b (16 and 32 bits per pixel) */
    const uint8_t *palette; /* n_colors entries of palette_stride bytes, B G R order */
    int n_colors, palette_stride;
} bmp_header;

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }

static yolo_status parse_header(const uint8_t *b, size_t len, const char *name, bmp_header *h) {
    memset(h, 0, sizeof *h);
    if (len < 26 || b[0] != 'B' || b[1] != 'M')
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt BMP header", name);
    h->data_offset = le32(b + 10);
    uint32_t dib = le32(b + 14);
    if (dib != 12 && (dib < 40 || dib > 124) )
        return yolo_error(YOLO_ERR_FORMAT, "%s: BMP header of %u bytes is not one of the known sizes", name, dib);
    if (len < 14 + (size_t)dib)
        return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP header", name);
    int64_t w, hh;
    if (dib == 12) { /* OS/2 BITMAPCOREHEADER: 16-bit sizes, 3-byte palette entries */
        w = le16(b + 18);
        hh = le16(b + 20);
        h->bpp = (int)le16(b + 24);
        h->palette_stride = 3;
    } else {
        w = (int32_t)le32(b + 18);
        hh = (int32_t)le32(b + 22);
        h->bpp = (int)le16(b + 28);
        h->compression = (int)le32(b + 30);
        h->n_colors = (int)le32(b + 46);
        h->palette_stride = 4;
    }
    h->top_down = hh < 0;
    hh = hh < 0 ? -hh : hh;
    yolo_status st = yolo_image_check_size(w, hh, name);
    if (st != YOLO_OK)
        return st;
    h->width = (int)w;
    h->height = (int)hh;
    size_t palette_at = 14 + dib;
    switch (h->compression) {
    case BI_RGB:
        if (h->bpp != 1 && h->bpp != 4 && h->bpp != 8 && h->bpp != 16 && h->bpp != 24 && h->bpp != 32)
            return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: BMP of %d bits per pixel not supported", name, h->bpp);
        break;
    case BI_RLE8:
    case BI_RLE4:
        if (h->bpp != (h->compression == BI_RLE8 ? 8 : 4) || h->top_down)
            return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt BMP: RLE%d with %d bits per pixel%s", name,
                              h->compression == BI_RLE8 ? 8 : 4, h->bpp, h->top_down ? ", top-down" : "");
        break;
    case BI_BITFIELDS:
    case BI_ALPHABITFIELDS:
        if (h->bpp != 16 && h->bpp != 32)
            return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt BMP: bit fields with %d bits per pixel", name, h->bpp);
        if (dib == 40) /* the masks follow a BITMAPINFOHEADER; later headers hold them */
            palette_at += h->compression == BI_BITFIELDS ? 12 : 16;
        if (len < 14 + 40 + 12)
            return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP header", name);
        for (int c = 0; c < 3; c++)
            h->masks[c] = le32(b + 54 + 4 * c);
        break;
    default:
        return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: BMP compression %d (embedded JPEG/PNG or other) not supported",
                          name, h->compression);
    }
    if (h->compression == BI_RGB && h->bpp == 16) {
        h->masks[0] = 0x7C00; /* 5-5-5 */
        h->masks[1] = 0x03E0;
        h->masks[2] = 0x001F;
    } else if (h->compression == BI_RGB && h->bpp == 32) {
        h->masks[0] = 0xFF0000;
        h->masks[1] = 0xFF00;
        h->masks[2] = 0xFF;
    }
    if (h->bpp <= 8) {
        int max = 1 << h->bpp;
        if (h->n_colors <= 0 || h->n_colors > max)
            h->n_colors = max;
        if (palette_at + (size_t)h->n_colors * h->palette_stride > len)
            return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP palette", name);
        h->palette = b + palette_at;
    }
    if (h->data_offset >= len)
        return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP: pixel data at byte %u of %zu", name, h->data_offset,
                          len);
    return YOLO_OK;
}

yolo_status yolo_bmp_probe(const uint8_t *bytes, size_t len, const char *name, int *width, int *height) {
    bmp_header h;
    yolo_status st = parse_header(bytes, len, name, &h);
    if (st != YOLO_OK)
        return st;
    *width = h.width;
    *height = h.height;
    return YOLO_OK;
}

/* Where a channel's mask sits and how to bring it to 8 bits. */
typedef struct channel { int shift, bits; } channel;
static channel channel_of(uint32_t mask) {
    channel c = {0, 0};
    if (!mask)
        return c;
    while (!(mask >> c.shift & 1))
        c.shift++;
    while (c.shift + c.bits < 32 && (mask >> (c.shift + c.bits) & 1))
        c.bits++;
    return c;
}
static uint8_t channel_value(uint32_t pixel, channel c) {
    if (!c.bits)
        return 0;
    uint32_t v = (pixel >> c.shift) & (uint32_t)((1ull << c.bits) - 1);
    return (uint8_t)(c.bits >= 8 ? v >> (c.bits - 8) : v << (8 - c.bits));
}

static yolo_status put_index(const bmp_header *h, const char *name, int index, uint8_t *rgb) {
    if (index >= h->n_colors)
        return yolo_error(YOLO_ERR_FORMAT, "%s: corrupt BMP: colour index %d past its %d-colour palette", name, index,
                          h->n_colors);
    const uint8_t *e = h->palette + (size_t)index * h->palette_stride;
    rgb[0] = e[2];
    rgb[1] = e[1];
    rgb[2] = e[0];
    return YOLO_OK;
}

static yolo_status decode_rows(const bmp_header *h, const uint8_t *b, size_t len, const char *name, yolo_image *out) {
    size_t stride = ((size_t)h->width * h->bpp + 31) / 32 * 4;
    if ((len - h->data_offset) / stride < (size_t)h->height)
        return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP: %zu bytes of pixels for %d rows of %zu", name,
                          len - h->data_offset, h->height, stride);
    channel ch[3];
    for (int c = 0; c < 3; c++)
        ch[c] = channel_of(h->masks[c]);
    for (int y = 0; y < h->height; y++) {
        const uint8_t *row = b + h->data_offset + (size_t)(h->top_down ? y : h->height - 1 - y) * stride;
        uint8_t *o = out->data + (size_t)y * h->width * 3;
        for (int x = 0; x < h->width; x++, o += 3) {
            if (h->bpp <= 8) {
                int per_byte = 8 / h->bpp, bit = (per_byte - 1 - x % per_byte) * h->bpp;
                int index = row[x / per_byte] >> bit & ((1 << h->bpp) - 1);
                yolo_status st = put_index(h, name, index, o);
                if (st != YOLO_OK)
                    return st;
            } else if (h->bpp == 24) {
                o[0] = row[3 * x + 2];
                o[1] = row[3 * x + 1];
                o[2] = row[3 * x];
            } else {
                uint32_t p = h->bpp == 16 ? le16(row + 2 * x) : le32(row + 4 * x);
                for (int c = 0; c < 3; c++)
                    o[c] = channel_value(p, ch[c]);
            }
        }
    }
    return YOLO_OK;
}

/* RLE8 / RLE4: pixels the stream skips (deltas, early end of line or
 * bitmap) keep palette entry 0. */
static yolo_status decode_rle(const bmp_header *h, const uint8_t *b, size_t len, const char *name, yolo_image *out) {
    for (int y = 0; y < h->height; y++)
        for (int x = 0; x < h->width; x++) {
            yolo_status st = put_index(h, name, 0, out->data + ((size_t)y * h->width + x) * 3);
            if (st != YOLO_OK)
                return st;
        }
    bool rle4 = h->compression == BI_RLE4;
    size_t i = h->data_offset;
    int x = 0, y = 0; /* y counts up from the bottom row */
#define PUT(index)                                                                                                   \
    do {                                                                                                             \
        if (x < h->width && y < h->height) {                                                                         \
            yolo_status st_ = put_index(h, name, (index),                                                            \
                                        out->data + ((size_t)(h->height - 1 - y) * h->width + x) * 3);               \
            if (st_ != YOLO_OK)                                                                                      \
                return st_;                                                                                          \
        }                                                                                                            \
        x++;                                                                                                         \
    } while (0)
    while (y < h->height) {
        if (i + 2 > len)
            return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP: the RLE data ends before its end marker", name);
        int count = b[i], value = b[i + 1];
        i += 2;
        if (count > 0) { /* a run */
            for (int k = 0; k < count; k++)
                PUT(rle4 ? (k & 1 ? value & 15 : value >> 4) : value);
        } else if (value == 0) { /* end of line */
            x = 0;
            y++;
        } else if (value == 1) { /* end of bitmap */
            break;
        } else if (value == 2) { /* delta */
            if (i + 2 > len)
                return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP: the RLE data ends in a delta", name);
            x += b[i];
            y += b[i + 1];
            i += 2;
        } else { /* `value` literal pixels, padded to 16 bits */
            size_t bytes = rle4 ? ((size_t)value + 1) / 2 : (size_t)value;
            if (i + bytes > len)
                return yolo_error(YOLO_ERR_FORMAT, "%s: truncated BMP: the RLE data ends in a literal run", name);
            for (int k = 0; k < value; k++)
                PUT(rle4 ? (k & 1 ? b[i + k / 2] & 15 : b[i + k / 2] >> 4) : b[i + k]);
            i += (bytes + 1) & ~(size_t)1;
        }
    }
#undef PUT
    return YOLO_OK;
}

yolo_status yolo_bmp_decode(const uint8_t *bytes, size_t len, const char *name, yolo_image *out) {
    bmp_header h;
    yolo_status st = parse_header(bytes, len, name, &h);
    if (st != YOLO_OK)
        return st;
    if ((st = yolo_image_alloc(out, h.width, h.height)) != YOLO_OK)
        return st;
    st = h.compression == BI_RLE8 || h.compression == BI_RLE4 ? decode_rle(&h, bytes, len, name, out)
                                                              : decode_rows(&h, bytes, len, name, out);
    if (st != YOLO_OK)
        yolo_image_free(out);
    return st;
}

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v); put16(p + 2, v >> 16); }

yolo_status yolo_bmp_encode(const yolo_image *image, uint8_t **out, size_t *len) {
    size_t stride = ((size_t)image->width * 3 + 3) & ~(size_t)3;
    size_t n = 54 + stride * image->height;
    uint8_t *b = calloc(1, n);
    if (!b)
        return yolo_error(YOLO_ERR_NOMEM, "BMP of %dx%d", image->width, image->height);
    b[0] = 'B';
    b[1] = 'M';
    put32(b + 2, (uint32_t)n);
    put32(b + 10, 54);
    put32(b + 14, 40);
    put32(b + 18, (uint32_t)image->width);
    put32(b + 22, (uint32_t)image->height);
    put16(b + 26, 1);
    put16(b + 28, 24);
    for (int y = 0; y < image->height; y++) {
        const uint8_t *s = image->data + (size_t)(image->height - 1 - y) * image->width * 3;
        uint8_t *d = b + 54 + (size_t)y * stride;
        for (int x = 0; x < image->width; x++) {
            d[3 * x] = s[3 * x + 2];
            d[3 * x + 1] = s[3 * x + 1];
            d[3 * x + 2] = s[3 * x];
        }
    }
    *out = b;
    *len = n;
    return YOLO_OK;
}
