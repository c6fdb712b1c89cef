/* Muon's orthogonalization and MuSGD's boosted parameters (muon.h).
 *
 * Ultralytics runs the iteration in bf16 (X = G.bfloat16(), every product
 * and sum rounded to bf16); it runs here in f32 on the backend's matmul:
 * the result is the same iteration without bf16's rounding (about 2^-8 of
 * each value per operation), so MuSGD's steps match Ultralytics' to that
 * rounding, not bit for bit. */
#include "train/muon.h"

#include <math.h>
#include <string.h>

static const float NS_A = 3.4445f, NS_B = -4.7750f, NS_C = 2.0315f;

yolo_tensor *yolo_muon_orthogonalize(yolo_graph *g, yolo_tensor *u) {
    if (!u || u->ndim < 2) return NULL;
    const int64_t rows = u->shape[0], cols = yolo_tensor_numel(u) / (rows ? rows : 1);
    const int64_t mat[3] = {1, rows, cols};
    yolo_tensor *x = yolo_reshape(g, u, 3, mat);
    x = yolo_muon_normalize(g, x, yolo_sum_squares(g, x));
    /* rows > cols: the iteration on X^T, written without transposing:
     * A = X^T X and X = a X + X B (B is symmetric) */
    const bool wide = rows <= cols;
    for (int it = 0; it < 5 && x; it++) {
        yolo_tensor *a = wide ? yolo_matmul(g, x, x, false, true) : yolo_matmul(g, x, x, true, false);
        yolo_tensor *b = yolo_add(g, yolo_scale(g, a, NS_B), yolo_scale(g, yolo_matmul(g, a, a, false, false), NS_C));
        yolo_tensor *bx = wide ? yolo_matmul(g, b, x, false, false) : yolo_matmul(g, x, b, false, false);
        x = yolo_add(g, yolo_scale(g, x, NS_A), bx);
    }
    const double ratio = (double)u->shape[u->ndim - 2] / (double)u->shape[u->ndim - 1];
    if (x && ratio > 1) x = yolo_scale(g, x, (float)sqrt(ratio));
    return x ? yolo_reshape(g, x, u->ndim, u->shape) : NULL;
}

bool yolo_musgd_boosted(const char *name) {
    return (strstr(name, "23") && strstr(name, "cv3")) || strstr(name, "proto.semseg");
}
