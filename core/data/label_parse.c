/* The core's YOLO txt label parser (yolo_label_parse_yolo in yolo/data.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/data.h"

#define MAX_ROW_VALUES 65536

static void note_repair(yolo_label_repairs *r, int line, const char *what) {
    if (r->count++ == 0)
        snprintf(r->message, sizeof r->message, "line %d: %s", line, what);
}

/* Clamps into [0,1] what lies within tolerance; false if beyond. */
static bool check_coord(float *v, float tol) {
    if (!(*v >= -tol && *v <= 1 + tol)) /* also rejects NaN */
        return false;
    *v = *v < 0 ? 0 : *v > 1 ? 1 : *v;
    return true;
}

typedef struct row {
    float *values;
    int n;
} row;

static bool same_row(const row *a, const row *b) {
    return a->n == b->n && memcmp(a->values, b->values, sizeof(float) * (size_t)a->n) == 0;
}

yolo_status yolo_label_parse_yolo(const yolo_label_context *ctx, const char *text, size_t len,
                                  yolo_instances *out, yolo_label_repairs *repairs) {
    const char *file = ctx->path ? ctx->path : "labels";
    float tol = ctx->tolerance > 0 ? ctx->tolerance : 0;
    bool want_poly = (ctx->needs & YOLO_NEED_POLYGONS) != 0;
    int kc = ctx->kpt_count > 0 ? ctx->kpt_count : 0, kd = kc ? ctx->kpt_dims : 0;
    float *vals = malloc(sizeof(float) * 64);
    int cap = 64;
    row *rows = NULL;
    int n_rows = 0, rows_cap = 0;
    yolo_status st = YOLO_OK;
    int line = 0;
    size_t pos = 0;
    while (st == YOLO_OK && pos < len && vals) {
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        line++;
        /* tokenize [pos, end) */
        int n = 0;
        size_t i = pos;
        while (i < end) {
            while (i < end && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == ','))
                i++;
            if (i >= end)
                break;
            size_t j = i;
            while (j < end && !(text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == ','))
                j++;
            char tok[64];
            size_t tl = j - i < sizeof tok - 1 ? j - i : sizeof tok - 1;
            memcpy(tok, text + i, tl);
            tok[tl] = 0;
            char *stop;
            float v = strtof(tok, &stop);
            if (i == 0 && j - i >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
                /* Ultralytics rejects it too (float('\ufeff0') fails); the mark is invisible, so name it */
                st = yolo_error(YOLO_ERR_FORMAT, "%s:1: the file starts with a UTF-8 byte-order mark (a Windows "
                                "editor's); save it without one", file);
                break;
            }
            if (stop == tok || *stop || j - i >= sizeof tok || !isfinite(v)) {
                st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: malformed value '%.*s'", file, line, (int)(j - i > 40 ? 40 : j - i),
                                text + i);
                break;
            }
            if (n == cap) {
                if (cap >= MAX_ROW_VALUES) {
                    st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: more than %d values in a row", file, line, MAX_ROW_VALUES);
                    break;
                }
                float *g = realloc(vals, sizeof(float) * (size_t)cap * 2);
                if (!g) {
                    st = yolo_error(YOLO_ERR_NOMEM, "%s: parsing", file);
                    break;
                }
                vals = g;
                cap *= 2;
            }
            vals[n++] = v;
            i = j;
        }
        pos = end + 1;
        if (st != YOLO_OK || n == 0)
            continue;
        /* the class id */
        float c = vals[0];
        if (c != floorf(c) || c < 0) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: class id %g is not a non-negative integer", file, line, c);
            break;
        }
        if (c >= ctx->nc) {
            /* %g, not (int)c: a huge float id does not fit an int */
            st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: class id %g >= nc %d", file, line, c, ctx->nc);
            break;
        }
        int want = kc ? 5 + kc * kd : 0;
        bool is_box = kc ? n == want : n == 5;
        bool is_poly = !kc && n >= 7 && (n - 1) % 2 == 0;
        if (!is_box && !is_poly) {
            if (kc)
                st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: %d values, expected %d (cls cx cy w h + %dx%d keypoints)", file,
                                line, n, want, kc, kd);
            else
                st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: %d values, expected 5 (cls cx cy w h) or an odd count >= 7 "
                                "(cls x1 y1 x2 y2 x3 y3 ...)", file, line, n);
            break;
        }
        /* coordinates: boxes and polygons all; keypoints x, y only */
        int ncoord = is_box ? 5 : n;
        for (int k = 1; k < ncoord; k++)
            if (!check_coord(&vals[k], tol)) {
                st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: coordinate %g outside [0,1] (value %d)", file, line, vals[k], k);
                break;
            }
        for (int k = 0; st == YOLO_OK && kc && k < kc; k++) {
            float *kp = vals + 5 + k * kd;
            if (!check_coord(&kp[0], tol) || !check_coord(&kp[1], tol))
                st = yolo_error(YOLO_ERR_FORMAT, "%s:%d: keypoint %d (%g, %g) outside [0,1]", file, line, k, kp[0], kp[1]);
        }
        if (st != YOLO_OK)
            break;
        /* duplicates (exact, after clamping) are dropped */
        row r = {vals, n};
        bool dup = false;
        for (int k = 0; k < n_rows && !dup; k++)
            dup = same_row(&rows[k], &r);
        if (dup) {
            note_repair(repairs, line, "duplicate row removed");
            continue;
        }
        float box[4];
        float corners[8];
        const float *poly = NULL;
        int np = 0;
        if (is_box) {
            /* clip the box edges to the image, keep it if anything is left */
            float x0 = fmaxf(vals[1] - vals[3] / 2, 0), x1 = fminf(vals[1] + vals[3] / 2, 1);
            float y0 = fmaxf(vals[2] - vals[4] / 2, 0), y1 = fminf(vals[2] + vals[4] / 2, 1);
            if (!(x1 > x0 && y1 > y0)) {
                note_repair(repairs, line, "zero-size box removed");
                continue;
            }
            box[0] = (x0 + x1) / 2, box[1] = (y0 + y1) / 2, box[2] = x1 - x0, box[3] = y1 - y0;
            if (want_poly) {
                float c8[8] = {x0, y0, x1, y0, x1, y1, x0, y1};
                memcpy(corners, c8, sizeof c8);
                poly = corners;
                np = 4;
            }
        } else {
            float x0 = 1, y0 = 1, x1 = 0, y1 = 0;
            for (int k = 1; k + 1 < n; k += 2) {
                x0 = fminf(x0, vals[k]), x1 = fmaxf(x1, vals[k]);
                y0 = fminf(y0, vals[k + 1]), y1 = fmaxf(y1, vals[k + 1]);
            }
            if (!(x1 > x0 && y1 > y0)) {
                note_repair(repairs, line, "zero-area polygon removed");
                continue;
            }
            box[0] = (x0 + x1) / 2, box[1] = (y0 + y1) / 2, box[2] = x1 - x0, box[3] = y1 - y0;
            if (want_poly) {
                poly = vals + 1;
                np = (n - 1) / 2;
            }
        }
        st = yolo_instances_add(out, (int32_t)c, box, poly, np, out->kpt_count ? vals + 5 : NULL);
        if (st != YOLO_OK)
            break;
        /* remember the row for the duplicate check */
        if (n_rows == rows_cap) {
            rows_cap = rows_cap ? rows_cap * 2 : 16;
            row *g = realloc(rows, sizeof(row) * (size_t)rows_cap);
            if (!g) {
                st = yolo_error(YOLO_ERR_NOMEM, "%s: parsing", file);
                break;
            }
            rows = g;
        }
        rows[n_rows].values = malloc(sizeof(float) * (size_t)n);
        if (!rows[n_rows].values) {
            st = yolo_error(YOLO_ERR_NOMEM, "%s: parsing", file);
            break;
        }
        memcpy(rows[n_rows].values, vals, sizeof(float) * (size_t)n);
        rows[n_rows++].n = n;
    }
    if (!vals && st == YOLO_OK)
        st = yolo_error(YOLO_ERR_NOMEM, "%s: parsing", file);
    for (int k = 0; k < n_rows; k++)
        free(rows[k].values);
    free(rows);
    free(vals);
    return st;
}
