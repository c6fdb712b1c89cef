/* Helpers of the interop tests: the reference folder and .npy files. */
#ifndef YOLO_TESTS_INTEROP_UTIL_H
#define YOLO_TESTS_INTEROP_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yolo/graph.h"
#include "yolo/model.h"

/* $YOLO_INTEROP_DIR (tests/interop.cmake: ../shared/interop), or NULL
 * when it has no README.md. */
static inline const char *interop_dir(void) {
    const char *d = getenv("YOLO_INTEROP_DIR");
    if (!d || !*d) return NULL;
    char probe[1024];
    snprintf(probe, sizeof probe, "%s/README.md", d);
    FILE *f = fopen(probe, "rb");
    if (!f) return NULL;
    fclose(f);
    return d;
}

/* A little-endian float32 C-order .npy; *ndim and shape[] filled. */
static inline float *npy_read_f32(const char *path, int *ndim, int64_t shape[8], int64_t *count) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char head[10];
    float *data = NULL;
    if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) || head[6] != 1) goto done;
    size_t hl = (size_t)head[8] | (size_t)head[9] << 8;
    char *h = calloc(1, hl + 1);
    if (!h || fread(h, 1, hl, f) != hl || !strstr(h, "'<f4'") || !strstr(h, "'fortran_order': False")) {
        free(h);
        goto done;
    }
    const char *p = strstr(h, "'shape': (");
    *ndim = 0;
    *count = 1;
    for (p = p ? p + 10 : NULL; p && *p && *p != ')' && *ndim < 8;) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p) break;
        shape[(*ndim)++] = v;
        *count *= v;
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    free(h);
    data = malloc(sizeof(float) * (size_t)*count);
    if (data && fread(data, sizeof(float), (size_t)*count, f) != (size_t)*count) {
        free(data);
        data = NULL;
    }
done:
    fclose(f);
    return data;
}

/* max |a - b| / max |b| (the relative measure). */
static inline double interop_rel_diff(const float *a, const float *b, int64_t n) {
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = a[i] - b[i];
        if (d < 0) d = -d;
        if (d > diff || d != d) diff = d != d ? 1e30 : d;
        double s = b[i] < 0 ? -b[i] : b[i];
        if (s > scale) scale = s;
    }
    return scale > 0 ? diff / scale : diff;
}

/* End2end rows [x1 y1 x2 y2 score class, extras...] (n of them, width
 * values each, best first) against a reference's: row i matches reference
 * row i, or a neighbour within 3 of the same score (torch.topk and ONNX
 * TopK leave the order of equal scores open), when the class is the same
 * and boxes / side, score and the extras (a segment head's coefficients)
 * agree to tol. Returns the rows that match none; *worst the largest
 * difference of the matched ones. */
static inline int interop_match_rows(const float *got, const float *ref, int n, int width, float side, double tol,
                                     double *worst) {
    int unmatched = 0;
    for (int i = 0; i < n; i++) {
        const float *g = got + (size_t)width * i;
        double best = INFINITY;
        for (int j = i > 3 ? i - 3 : 0; j < n && j <= i + 3; j++) {
            const float *r = ref + (size_t)width * j;
            if (g[5] != r[5] || fabs(g[4] - r[4]) > tol) continue;
            double e = fabs(g[4] - r[4]);
            for (int c = 0; c < 4; c++) e = fmax(e, fabs(g[c] - r[c]) / side);
            for (int c = 6; c < width; c++) e = fmax(e, fabs(g[c] - r[c]));
            best = fmin(best, e);
        }
        if (best <= tol) *worst = fmax(*worst, best);
        else unmatched++;
    }
    return unmatched;
}

/* Eval forward (inference: yolo_model_forward_inference) of `m` on input
 * [n,c,h,w]; output k downloaded (malloc'd); *n_out: the outputs there were. */
static inline float *interop_forward_mode(yolo_model *m, const float *input, const int64_t in_shape[4], int k,
                                          bool inference, int64_t *count, int64_t out_shape[4], int *n_out) {
    yolo_graph *g = yolo_graph_new(yolo_model_backend(m));
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, in_shape);
    yolo_model_outputs out;
    yolo_graph_plan_info info;
    float *data = NULL;
    yolo_status st = inference ? yolo_model_forward_inference(m, g, x, &out) : yolo_model_forward(m, g, x, false, &out);
    if (n_out) *n_out = st ? 0 : out.n;
    if (!st && k < out.n && !yolo_graph_mark_output(g, out.t[k]) &&
        !yolo_graph_plan(g, &info) &&
        !yolo_tensor_upload_f32(x, input, in_shape[0] * in_shape[1] * in_shape[2] * in_shape[3]) &&
        !yolo_graph_run(g)) {
        *count = yolo_tensor_numel(out.t[k]);
        for (int i = 0; i < 4; i++) out_shape[i] = i < out.t[k]->ndim ? out.t[k]->shape[i] : 1;
        data = malloc(sizeof(float) * (size_t)*count);
        if (data && yolo_tensor_download_f32(out.t[k], data, *count)) {
            free(data);
            data = NULL;
        }
    }
    yolo_graph_free(g);
    return data;
}

/* The eval forward's output k (yolo_model_forward). */
static inline float *interop_forward(yolo_model *m, const float *input, const int64_t in_shape[4], int k,
                                     int64_t *count, int64_t out_shape[4]) {
    return interop_forward_mode(m, input, in_shape, k, false, count, out_shape, NULL);
}

#endif
