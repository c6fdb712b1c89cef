/* Forward results of the CPU backend's elementwise, shape, spatial and
 * linear-algebra ops (and the backward kernels of activations, slice,
 * upsample, maxpool and softmax) against naive reference loops in double,
 * through the graph API, over several shapes with odd sizes and
 * broadcasting. Backward-only ops, which have no public builder, are built
 * as raw nodes (graph_internal.h). Batch norm and the optimizer updates are
 * in test_ops_reference_train.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "op_reference.h"
#include "test_util.h"
#include "test_util_ops.h"

static yolo_backend *be;

#define NSHAPE(...) ((int64_t[]){__VA_ARGS__})

/* Flat index into `in` (same ndim as out, dims 1 or equal) for output element i. */
static int64_t bcast_index(int ndim, const int64_t *out, const int64_t *in, int64_t i) {
    int64_t idx = 0, stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t c = i % out[d];
        i /= out[d];
        if (in[d] != 1) idx += c * stride;
        stride *= in[d];
    }
    return idx;
}

/* A node built without a public builder (backward-only ops, FILL). */
static yolo_tensor *raw(ops_graph *o, int op, yolo_dtype dt, int ndim, const int64_t *shape, int n,
                        yolo_tensor **src) {
    return yolo_graph_node(o->g, op, dt, ndim, shape, n, src);
}

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

/* ---- elementwise ---- */

static void test_activations(void) {
    static const struct { int nd; int64_t s[4]; } shapes[] = {{1, {7}}, {4, {2, 3, 5, 7}}, {4, {2, 16, 40, 41}}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int nd = shapes[c].nd;
        const int64_t *s = shapes[c].s, n = ops_numel(nd, s);
        char sh[64];
        ops_shape_str(sh, sizeof sh, nd, s);
        float *x = ops_random(n, 11 + c, -6, 6), *dy = ops_random(n, 12 + c, -2, 2), *yv = ops_random(n, 13, 0, 1);
        if (c == 0) { /* saturation, exp's clamping range and NaN */
            const float special[7] = {100.0f, -100.0f, 88.5f, -88.5f, 0.0f, NAN, -0.0f};
            memcpy(x, special, sizeof special);
        } else if (c == 1) { /* hardswish's kinks, on them and a step either side */
            const float kinks[6] = {-3.0f, 3.0f, nextafterf(-3.0f, -4.0f), nextafterf(-3.0f, 0.0f),
                                    nextafterf(3.0f, 0.0f), nextafterf(3.0f, 4.0f)};
            memcpy(x, kinks, sizeof kinks);
        }
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", nd, s, x), *tdy = ops_input(&o, "dy", nd, s, dy);
        yolo_tensor *ty = ops_input(&o, "y", nd, s, yv);
        yolo_tensor *outs[10] = {yolo_silu(o.g, tx), yolo_relu(o.g, tx), yolo_sigmoid(o.g, tx),
                                 yolo_scale(o.g, tx, -1.7f), NULL, NULL, NULL, yolo_hardswish(o.g, tx), NULL,
                                 yolo_detach(o.g, tx)};
        outs[4] = raw(&o, YOLO_OP_SILU_BWD, YOLO_F32, nd, s, 2, (yolo_tensor *[]){tx, tdy});
        outs[5] = raw(&o, YOLO_OP_RELU_BWD, YOLO_F32, nd, s, 2, (yolo_tensor *[]){tx, tdy});
        outs[6] = raw(&o, YOLO_OP_SIGMOID_BWD, YOLO_F32, nd, s, 2, (yolo_tensor *[]){ty, tdy});
        outs[8] = raw(&o, YOLO_OP_HARDSWISH_BWD, YOLO_F32, nd, s, 2, (yolo_tensor *[]){tx, tdy});
        if (ops_run(&o, 10, outs) == YOLO_OK) {
            double *ref = malloc((size_t)n * sizeof *ref);
            static const char *names[10] = {"silu",     "relu",        "sigmoid",   "scale",         "silu_bwd",
                                            "relu_bwd", "sigmoid_bwd", "hardswish", "hardswish_bwd", "detach"};
            for (int k = 0; k < 10; k++) {
                for (int64_t i = 0; i < n; i++) {
                    double v = x[i], g = dy[i], sg = sigm(v);
                    switch (k) {
                    case 0: ref[i] = v * sg; break;
                    case 1: ref[i] = v > 0 ? v : 0; break;
                    case 2: ref[i] = sg; break;
                    case 3: ref[i] = v * -1.7f; break;
                    case 4: ref[i] = g * sg * (1 + v * (1 - sg)); break;
                    case 5: ref[i] = v > 0 ? g : 0; break;
                    case 6: ref[i] = g * yv[i] * (1.0 - yv[i]); break;
                    case 7: ref[i] = v * fmin(fmax(v + 3, 0), 6) / 6; break;
                    case 9: ref[i] = v; break;
                    default: ref[i] = v < -3 ? 0 : v <= 3 ? g * (v / 3 + 0.5) : g; break; /* PyTorch's pieces */
                    }
                }
                char what[128];
                snprintf(what, sizeof what, "%s %s", names[k], sh);
                float *got = ops_download(outs[k]);
                ops_expect_close(what, got, ref, n, 1e-6, 1e-5);
                free(got);
            }
            free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(x);
        free(dy);
        free(yv);
    }
}

static void test_binary(void) {
    static const struct { int na; int64_t a[4]; int nb; int64_t b[4]; } cases[] = {
        {3, {3, 5, 7}, 3, {3, 5, 7}},             /* equal shapes */
        {4, {2, 3, 4, 5}, 4, {1, 3, 1, 1}},       /* per channel */
        {4, {2, 3, 4, 5}, 3, {3, 1, 1}},          /* per channel, fewer dims */
        {3, {3, 1, 1}, 4, {2, 3, 4, 5}},          /* per channel on the left */
        {4, {2, 3, 4, 5}, 1, {5}},                /* last dim */
        {3, {4, 1, 5}, 3, {1, 3, 1}},             /* both sides broadcast */
        {1, {1}, 2, {2, 3}},                      /* scalar */
        {4, {2, 1, 4, 1}, 4, {1, 3, 1, 5}},       /* alternating */
        {2, {9, 1}, 2, {9, 13}},                  /* column */
        {4, {2, 16, 40, 41}, 4, {1, 16, 1, 1}},   /* large, threaded */
        {4, {2, 16, 40, 41}, 4, {2, 16, 40, 41}}, /* large, equal */
        {4, {2, 1, 40, 41}, 4, {2, 16, 40, 41}},  /* large, broadcast in the middle */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int na = cases[c].na, nb = cases[c].nb, nd = na > nb ? na : nb;
        int64_t pa[4], pb[4], so[4];
        for (int i = 0; i < nd; i++) {
            pa[i] = i < nd - na ? 1 : cases[c].a[i - (nd - na)];
            pb[i] = i < nd - nb ? 1 : cases[c].b[i - (nd - nb)];
            so[i] = pa[i] > pb[i] ? pa[i] : pb[i];
        }
        const int64_t n = ops_numel(nd, so), nA = ops_numel(na, cases[c].a), nB = ops_numel(nb, cases[c].b);
        float *a = ops_random(nA, 21 + c, -3, 3), *b = ops_random(nB, 22 + c, -3, 3);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *ta = ops_input(&o, "a", na, cases[c].a, a), *tb = ops_input(&o, "b", nb, cases[c].b, b);
        yolo_tensor *outs[3] = {yolo_add(o.g, ta, tb), yolo_sub(o.g, ta, tb), yolo_mul(o.g, ta, tb)};
        if (ops_run(&o, 3, outs) == YOLO_OK) {
            double *ref = malloc((size_t)n * sizeof *ref);
            for (int k = 0; k < 3; k++) {
                for (int64_t i = 0; i < n; i++) {
                    double va = a[bcast_index(nd, so, pa, i)], vb = b[bcast_index(nd, so, pb, i)];
                    ref[i] = k == 0 ? va + vb : k == 1 ? va - vb : va * vb;
                }
                char what[160], s1[48], s2[48];
                snprintf(what, sizeof what, "%s %s %s", k == 0 ? "add" : k == 1 ? "sub" : "mul",
                         ops_shape_str(s1, sizeof s1, na, cases[c].a), ops_shape_str(s2, sizeof s2, nb, cases[c].b));
                float *got = ops_download(outs[k]);
                CHECK_MSG(outs[k]->ndim == nd && ops_numel(outs[k]->ndim, outs[k]->shape) == n, "%s: output shape", what);
                ops_expect_close(what, got, ref, n, 1e-6, 1e-6);
                free(got);
            }
            free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(a);
        free(b);
    }
}

static void test_cast_fill(void) {
    enum { NU8 = 256, NI = 9, NF = 24, NH = 65536 };
    uint8_t u8[NU8];
    for (int i = 0; i < NU8; i++) u8[i] = (uint8_t)i;
    int32_t i32[NI] = {0, 1, -1, 7, -123456, 16777217, INT32_MAX, INT32_MIN, 42};
    float f32[NF] = {0.0f, -0.0f, 1.0f, -2.5f, 1e-8f, 6e-5f, 3e-7f, 65504.0f, 65519.0f, 65520.0f, 1e6f,
                     INFINITY, -INFINITY, NAN, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 0.1f, -1234.567f,
                     5.96e-8f, 2.98e-8f, 2.99e-8f, 1e-3f, 3.14159f, -65536.0f};
    uint16_t *f16 = malloc(NH * sizeof *f16);
    for (int i = 0; i < NH; i++) f16[i] = (uint16_t)i;
    ops_graph o;
    ops_begin(&o, be);
    yolo_tensor *tu = ops_input_raw(&o, "u8", YOLO_U8, 1, NSHAPE(NU8), u8);
    yolo_tensor *ti = ops_input_raw(&o, "i32", YOLO_I32, 1, NSHAPE(NI), i32);
    yolo_tensor *tf = ops_input_raw(&o, "f32", YOLO_F32, 1, NSHAPE(NF), f32);
    yolo_tensor *th = ops_input_raw(&o, "f16", YOLO_F16, 1, NSHAPE(NH), f16);
    yolo_tensor *outs[] = {
        yolo_cast(o.g, tu, YOLO_F32, 1.0f / 255), yolo_cast(o.g, ti, YOLO_F32, 0.5f),
        yolo_cast(o.g, tf, YOLO_F16, 1.0f),       yolo_cast(o.g, tf, YOLO_F16, 3.0f),
        yolo_cast(o.g, th, YOLO_F32, 1.0f),       yolo_cast(o.g, th, YOLO_F32, 2.0f),
        yolo_cast(o.g, tf, YOLO_F32, -2.0f),
        raw(&o, YOLO_OP_FILL, YOLO_F32, 2, NSHAPE(3, 5), 0, NULL), raw(&o, YOLO_OP_FILL, YOLO_F16, 1, NSHAPE(7), 0, NULL),
        raw(&o, YOLO_OP_FILL, YOLO_I32, 1, NSHAPE(5), 0, NULL),    raw(&o, YOLO_OP_FILL, YOLO_U8, 1, NSHAPE(9), 0, NULL),
    };
    const int nout = (int)(sizeof outs / sizeof outs[0]);
    for (int k = 7; k < nout; k++)
        if (outs[k]) outs[k]->node->fparams[0] = k == 7 ? 2.5f : k == 8 ? 1.5f : k == 9 ? -3.0f : 7.0f;
    if (ops_run(&o, nout, outs) == YOLO_OK) {
        float *got = ops_download(outs[0]);
        for (int i = 0; got && i < NU8; i++)
            CHECK_MSG(got[i] == (float)i * (1.0f / 255), "cast u8->f32: %d gives %g", i, (double)got[i]);
        free(got);
        got = ops_download(outs[1]);
        for (int i = 0; got && i < NI; i++)
            CHECK_MSG(got[i] == (float)((double)i32[i] * 0.5), "cast i32->f32: %d gives %g", i32[i], (double)got[i]);
        free(got);
        for (int k = 2; k <= 3; k++) { /* f32 -> f16: bitwise against the host's round-to-nearest-even */
            uint16_t h[NF];
            float f = k == 2 ? 1.0f : 3.0f;
            if (yolo_tensor_download(outs[k], h, sizeof h) != YOLO_OK) test_failures++;
            for (int i = 0; i < NF; i++) {
                uint16_t want = yolo_f32_to_f16(f32[i] * f);
                int both_nan = isnan(f32[i]) && (h[i] & 0x7c00) == 0x7c00 && (h[i] & 0x3ff);
                CHECK_MSG(h[i] == want || both_nan, "cast f32->f16 x%g: %.9g gives 0x%04x, expected 0x%04x", (double)f,
                          (double)f32[i], h[i], want);
            }
        }
        for (int k = 4; k <= 5; k++) { /* every f16 bit pattern */
            float f = k == 4 ? 1.0f : 2.0f;
            got = ops_download(outs[k]);
            for (int i = 0; got && i < NH; i++) {
                float want = yolo_f16_to_f32((uint16_t)i) * f;
                CHECK_MSG(got[i] == want || (isnan(got[i]) && isnan(want)), "cast f16->f32 x%g: 0x%04x gives %g not %g",
                          (double)f, i, (double)got[i], (double)want);
            }
            free(got);
        }
        got = ops_download(outs[6]);
        for (int i = 0; got && i < NF; i++) {
            float want = f32[i] * -2.0f;
            CHECK_MSG(got[i] == want || (isnan(got[i]) && isnan(want)), "cast f32->f32 x-2: %g gives %g",
                      (double)f32[i], (double)got[i]);
        }
        free(got);
        /* fill, every dtype */
        float ff[15];
        uint16_t fh[7];
        int32_t fi[5];
        uint8_t fu[9];
        yolo_tensor_download(outs[7], ff, sizeof ff);
        yolo_tensor_download(outs[8], fh, sizeof fh);
        yolo_tensor_download(outs[9], fi, sizeof fi);
        yolo_tensor_download(outs[10], fu, sizeof fu);
        for (int i = 0; i < 15; i++) CHECK_MSG(ff[i] == 2.5f, "fill f32[%d] = %g", i, (double)ff[i]);
        for (int i = 0; i < 7; i++) CHECK_MSG(fh[i] == yolo_f32_to_f16(1.5f), "fill f16[%d] = 0x%04x", i, fh[i]);
        for (int i = 0; i < 5; i++) CHECK_MSG(fi[i] == -3, "fill i32[%d] = %d", i, fi[i]);
        for (int i = 0; i < 9; i++) CHECK_MSG(fu[i] == 7, "fill u8[%d] = %d", i, fu[i]);
    } else {
        test_failures++;
    }
    ops_end(&o);
    free(f16);
}

/* ---- shape ---- */

static void test_concat_slice(void) {
    /* concat of three inputs along each axis of a 4-D shape, and a 2-D one */
    static const int64_t base[4] = {2, 3, 5, 7};
    for (int axis = 0; axis < 4; axis++) {
        int64_t shapes[3][4];
        float *data[3];
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *in[3];
        for (int k = 0; k < 3; k++) {
            memcpy(shapes[k], base, sizeof base);
            shapes[k][axis] = k + 1;
            data[k] = ops_random(ops_numel(4, shapes[k]), 31 + k, -1, 1);
            in[k] = ops_input(&o, "x", 4, shapes[k], data[k]);
        }
        yolo_tensor *cat = yolo_concat(o.g, 3, in, axis);
        yolo_tensor *chunks[2], *sl = yolo_slice(o.g, in[2], axis, 1, 2);
        yolo_chunk(o.g, in[1], 2, axis, chunks);
        int64_t big[4];
        memcpy(big, shapes[2], sizeof big);
        big[axis] = 7;
        yolo_tensor *bwd = raw(&o, YOLO_OP_SLICE_BWD, YOLO_F32, 4, big, 1, &in[2]);
        if (bwd) {
            bwd->node->iparams[0] = axis;
            bwd->node->iparams[1] = 4;
        }
        yolo_tensor *outs[5] = {cat, sl, chunks[0], chunks[1], bwd};
        if (ops_run(&o, 5, outs) == YOLO_OK) {
            /* reference through multi-indices */
            int64_t so[4];
            memcpy(so, base, sizeof so);
            so[axis] = 6;
            int64_t n = ops_numel(4, so);
            double *ref = malloc((size_t)ops_numel(4, big) * sizeof *ref); /* the largest result */
            for (int64_t i = 0; i < n; i++) {
                int64_t idx[4], r = i;
                for (int d = 3; d >= 0; d--) {
                    idx[d] = r % so[d];
                    r /= so[d];
                }
                int k = idx[axis] < 1 ? 0 : idx[axis] < 3 ? 1 : 2;
                idx[axis] -= k == 0 ? 0 : k == 1 ? 1 : 3;
                int64_t f = 0;
                for (int d = 0; d < 4; d++) f = f * shapes[k][d] + idx[d];
                ref[i] = data[k][f];
            }
            char what[64];
            snprintf(what, sizeof what, "concat axis %d", axis);
            float *got = ops_download(cat);
            ops_expect_close(what, got, ref, n, 1e-30, 0);
            free(got);
            /* slices: element (idx with idx[axis] = j) of a slice from `start` */
            const struct { yolo_tensor *t; int src; int64_t start; } sls[3] = {{sl, 2, 1}, {chunks[0], 1, 0}, {chunks[1], 1, 1}};
            for (int q = 0; q < 3; q++) {
                const yolo_tensor *t = sls[q].t;
                int64_t m = yolo_tensor_numel(t);
                for (int64_t i = 0; i < m; i++) {
                    int64_t idx[4], r = i;
                    for (int d = 3; d >= 0; d--) {
                        idx[d] = r % t->shape[d];
                        r /= t->shape[d];
                    }
                    idx[axis] += sls[q].start;
                    int64_t f = 0;
                    for (int d = 0; d < 4; d++) f = f * shapes[sls[q].src][d] + idx[d];
                    ref[i] = data[sls[q].src][f];
                }
                snprintf(what, sizeof what, "%s axis %d #%d", q ? "chunk" : "slice", axis, q);
                got = ops_download(t);
                ops_expect_close(what, got, ref, m, 1e-30, 0);
                free(got);
            }
            /* slice_bwd: in[2] placed at 4..7 of a length-7 axis, zeros elsewhere */
            int64_t m = ops_numel(4, big);
            for (int64_t i = 0; i < m; i++) {
                int64_t idx[4], r = i;
                for (int d = 3; d >= 0; d--) {
                    idx[d] = r % big[d];
                    r /= big[d];
                }
                if (idx[axis] < 4) {
                    ref[i] = 0;
                    continue;
                }
                idx[axis] -= 4;
                int64_t f = 0;
                for (int d = 0; d < 4; d++) f = f * shapes[2][d] + idx[d];
                ref[i] = data[2][f];
            }
            snprintf(what, sizeof what, "slice_bwd axis %d", axis);
            got = ops_download(bwd);
            ops_expect_close(what, got, ref, m, 1e-30, 0);
            free(got);
            free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        for (int k = 0; k < 3; k++) free(data[k]);
    }
    /* concat of u8 along the last axis of 2-D inputs (any dtype moves as bytes) */
    uint8_t a[6] = {1, 2, 3, 4, 5, 6}, b[4] = {7, 8, 9, 10};
    ops_graph o;
    ops_begin(&o, be);
    yolo_tensor *in[2] = {ops_input_raw(&o, "a", YOLO_U8, 2, NSHAPE(2, 3), a),
                          ops_input_raw(&o, "b", YOLO_U8, 2, NSHAPE(2, 2), b)};
    yolo_tensor *cat = yolo_concat(o.g, 2, in, 1);
    if (ops_run(&o, 1, &cat) == YOLO_OK) {
        uint8_t got[10], want[10] = {1, 2, 3, 7, 8, 4, 5, 6, 9, 10};
        yolo_tensor_download(cat, got, sizeof got);
        CHECK_MSG(memcmp(got, want, sizeof got) == 0, "concat u8 along axis 1");
    } else {
        test_failures++;
    }
    ops_end(&o);
}

static void test_broadcast_sum_to(void) {
    static const struct { int nb; int64_t big[4]; int ns; int64_t small[4]; } cases[] = {
        {4, {2, 3, 4, 5}, 4, {1, 3, 1, 1}}, {4, {2, 3, 4, 5}, 1, {5}},      {4, {2, 3, 4, 5}, 4, {2, 1, 4, 1}},
        {4, {2, 3, 4, 5}, 1, {1}},          {2, {6, 7}, 1, {7}},            {2, {6, 7}, 2, {6, 1}},
        {3, {3, 1, 5}, 3, {3, 1, 1}},       {4, {4, 32, 20, 21}, 4, {1, 32, 1, 1}},
        {4, {4, 32, 20, 21}, 4, {4, 32, 20, 21}}, {3, {5, 6, 7}, 3, {1, 6, 7}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int nb = cases[c].nb, ns = cases[c].ns;
        int64_t ps[4];
        for (int i = 0; i < nb; i++) ps[i] = i < nb - ns ? 1 : cases[c].small[i - (nb - ns)];
        const int64_t n = ops_numel(nb, cases[c].big), m = ops_numel(ns, cases[c].small);
        float *x = ops_random(n, 41 + c, -2, 2), *s = ops_random(m, 42 + c, -2, 2);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", nb, cases[c].big, x), *ts = ops_input(&o, "s", ns, cases[c].small, s);
        yolo_tensor *outs[2] = {yolo_sum_to(o.g, tx, ns, cases[c].small), yolo_broadcast_to(o.g, ts, nb, cases[c].big)};
        char s1[48], s2[48], what[128];
        ops_shape_str(s1, sizeof s1, nb, cases[c].big);
        ops_shape_str(s2, sizeof s2, ns, cases[c].small);
        if (ops_run(&o, 2, outs) == YOLO_OK) {
            double *ref = calloc((size_t)n, sizeof *ref);
            for (int64_t i = 0; i < n; i++) ref[bcast_index(nb, cases[c].big, ps, i)] += x[i];
            snprintf(what, sizeof what, "sum_to %s -> %s", s1, s2);
            float *got = ops_download(outs[0]);
            ops_expect_close(what, got, ref, m, 1e-5, 1e-5);
            free(got);
            for (int64_t i = 0; i < n; i++) ref[i] = s[bcast_index(nb, cases[c].big, ps, i)];
            snprintf(what, sizeof what, "broadcast_to %s -> %s", s2, s1);
            got = ops_download(outs[1]);
            ops_expect_close(what, got, ref, n, 1e-30, 0);
            free(got);
            free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(x);
        free(s);
    }
}

/* ---- spatial ---- */

static void test_upsample(void) {
    static const struct { int64_t s[4]; int f; } cases[] = {{{2, 3, 5, 7}, 2}, {{1, 2, 3, 4}, 3}, {{2, 32, 20, 21}, 2}, {{1, 1, 1, 1}, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t *s = cases[c].s, f = cases[c].f;
        const int64_t big[4] = {s[0], s[1], s[2] * f, s[3] * f};
        const int64_t n = ops_numel(4, s), m = ops_numel(4, big);
        float *x = ops_random(n, 51 + c, -1, 1), *dy = ops_random(m, 52 + c, -1, 1);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", 4, s, x), *tdy = ops_input(&o, "dy", 4, big, dy);
        yolo_tensor *outs[2] = {yolo_upsample_nearest(o.g, tx, (int)f),
                                raw(&o, YOLO_OP_UPSAMPLE_NEAREST_BWD, YOLO_F32, 4, s, 1, &tdy)};
        if (outs[1]) outs[1]->node->iparams[0] = (int)f;
        if (ops_run(&o, 2, outs) == YOLO_OK) {
            double *ref = calloc((size_t)m, sizeof *ref);
            for (int64_t i = 0; i < m; i++) {
                int64_t w = i % big[3], h = (i / big[3]) % big[2], p = i / (big[2] * big[3]);
                ref[i] = x[(p * s[2] + h / f) * s[3] + w / f];
            }
            float *got = ops_download(outs[0]);
            ops_expect_close("upsample_nearest", got, ref, m, 1e-30, 0);
            free(got);
            memset(ref, 0, (size_t)n * sizeof *ref);
            for (int64_t i = 0; i < m; i++) {
                int64_t w = i % big[3], h = (i / big[3]) % big[2], p = i / (big[2] * big[3]);
                ref[(p * s[2] + h / f) * s[3] + w / f] += dy[i];
            }
            got = ops_download(outs[1]);
            ops_expect_close("upsample_nearest_bwd", got, ref, n, 1e-6, 1e-5);
            free(got);
            free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(x);
        free(dy);
    }
}

static void test_maxpool(void) {
    static const struct { int64_t s[4]; int k, st, p, ties; } cases[] = {
        {{2, 3, 9, 11}, 5, 1, 2, 0}, {{1, 4, 10, 9}, 3, 2, 1, 0}, {{2, 2, 7, 8}, 2, 2, 0, 0},
        {{1, 2, 9, 9}, 3, 3, 0, 0},  {{1, 3, 5, 6}, 1, 1, 0, 0},  {{1, 1, 3, 4100}, 3, 1, 1, 0},
        {{2, 3, 9, 11}, 5, 1, 2, 1}, {{1, 4, 10, 9}, 3, 2, 1, 1}, {{4, 16, 20, 20}, 5, 1, 2, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t *s = cases[c].s;
        const int k = cases[c].k, st = cases[c].st, p = cases[c].p;
        const int64_t ho = (s[2] + 2 * p - k) / st + 1, wo = (s[3] + 2 * p - k) / st + 1;
        const int64_t so[4] = {s[0], s[1], ho, wo};
        const int64_t n = ops_numel(4, s), m = ops_numel(4, so);
        float *x = ops_random(n, 61 + c, -1, 1), *dy = ops_random(m, 62 + c, -1, 1);
        if (cases[c].ties) /* few distinct values: many ties, first maximum must win */
            for (int64_t i = 0; i < n; i++) x[i] = floorf(x[i] * 1.5f);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", 4, s, x), *tdy = ops_input(&o, "dy", 4, so, dy);
        yolo_tensor *outs[2] = {yolo_maxpool2d(o.g, tx, k, st, p),
                                raw(&o, YOLO_OP_MAXPOOL2D_BWD, YOLO_F32, 4, s, 2, (yolo_tensor *[]){tx, tdy})};
        if (outs[1]) {
            outs[1]->node->iparams[0] = k;
            outs[1]->node->iparams[1] = st;
            outs[1]->node->iparams[2] = p;
        }
        char what[128], sh[48];
        ops_shape_str(sh, sizeof sh, 4, s);
        if (ops_run(&o, 2, outs) == YOLO_OK) {
            double *ref = malloc((size_t)m * sizeof *ref), *dref = calloc((size_t)n, sizeof *dref);
            for (int64_t i = 0; i < m; i++) {
                int64_t ow = i % wo, oh = (i / wo) % ho, pl = i / (ho * wo);
                double best = -INFINITY;
                int64_t arg = -1;
                for (int a = 0; a < k; a++)
                    for (int b = 0; b < k; b++) {
                        int64_t h = oh * st - p + a, w = ow * st - p + b;
                        if (h < 0 || h >= s[2] || w < 0 || w >= s[3]) continue;
                        int64_t f = (pl * s[2] + h) * s[3] + w;
                        if (arg < 0 || x[f] > best || (x[f] == best && f < arg)) {
                            best = x[f];
                            arg = f;
                        }
                    }
                ref[i] = best;
                if (arg >= 0) dref[arg] += dy[i];
            }
            snprintf(what, sizeof what, "maxpool2d k%d s%d p%d %s%s", k, st, p, sh, cases[c].ties ? " ties" : "");
            float *got = ops_download(outs[0]);
            ops_expect_close(what, got, ref, m, 1e-30, 0);
            free(got);
            snprintf(what, sizeof what, "maxpool2d_bwd k%d s%d p%d %s%s", k, st, p, sh, cases[c].ties ? " ties" : "");
            got = ops_download(outs[1]);
            ops_expect_close(what, got, dref, n, 1e-6, 1e-5);
            free(got);
            free(ref);
            free(dref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(x);
        free(dy);
    }
}

/* ---- linear algebra, softmax, reductions ---- */

static void test_matmul(void) {
    /* {batches (0: 2-D), M, K, N} */
    static const int64_t dims[][4] = {{0, 7, 5, 3}, {0, 1, 9, 4}, {0, 33, 17, 29}, {0, 64, 128, 96},
                                      {0, 5, 1, 6}, {3, 7, 5, 3}, {4, 25, 16, 25}, {2, 16, 25, 9}};
    for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++)
        for (int t = 0; t < 4; t++) {
            const int64_t B = dims[c][0] ? dims[c][0] : 1, M = dims[c][1], K = dims[c][2], N = dims[c][3];
            const int nd = dims[c][0] ? 3 : 2;
            const bool ta = t & 1, tb = t & 2;
            const int64_t sa[3] = {B, ta ? K : M, ta ? M : K}, sb[3] = {B, tb ? N : K, tb ? K : N};
            float *a = ops_random(B * M * K, 71 + c, -1, 1), *b = ops_random(B * K * N, 72 + c, -1, 1);
            ops_graph o;
            ops_begin(&o, be);
            yolo_tensor *y = yolo_matmul(o.g, ops_input(&o, "a", nd, sa + 3 - nd, a),
                                         ops_input(&o, "b", nd, sb + 3 - nd, b), ta, tb);
            if (ops_run(&o, 1, &y) == YOLO_OK) {
                double *ref = calloc((size_t)(B * M * N), sizeof *ref);
                for (int64_t z = 0; z < B; z++) {
                    const float *az = a + z * M * K, *bz = b + z * K * N;
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = 0; j < N; j++)
                            for (int64_t q = 0; q < K; q++)
                                ref[(z * M + i) * N + j] += (double)(ta ? az[q * M + i] : az[i * K + q]) *
                                                            (tb ? bz[j * K + q] : bz[q * N + j]);
                }
                char what[96];
                snprintf(what, sizeof what, "matmul B%lld M%lld K%lld N%lld ta%d tb%d", (long long)B, (long long)M,
                         (long long)K, (long long)N, ta, tb);
                float *got = ops_download(y);
                ops_expect_close(what, got, ref, B * M * N, 1e-5, 1e-4);
                free(got);
                free(ref);
            } else {
                test_failures++;
            }
            ops_end(&o);
            free(a);
            free(b);
        }
}

static void test_softmax(void) {
    static const struct { int nd; int64_t s[4]; int axis; } cases[] = {
        {4, {2, 3, 4, 5}, 0}, {4, {2, 3, 4, 5}, 1}, {4, {2, 3, 4, 5}, 2}, {4, {2, 3, 4, 5}, 3},
        {2, {5, 7}, 1},       {2, {5, 7}, 0},       {3, {2, 5, 130}, 1},  {3, {2, 130, 3}, 2},
        {2, {64, 80}, -1},    {1, {1}, 0},          {3, {16, 64, 100}, 1},
        {3, {4, 6, 37}, 2}, /* the last axis in 16-wide chunks and a tail (the CPU's row path) */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int nd = cases[c].nd, axis = cases[c].axis < 0 ? cases[c].axis + nd : cases[c].axis;
        const int64_t *s = cases[c].s, n = ops_numel(nd, s);
        float *x = ops_random(n, 81 + c, -8, 8), *dy = ops_random(n, 82 + c, -1, 1);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", nd, s, x), *tdy = ops_input(&o, "dy", nd, s, dy);
        yolo_tensor *y = yolo_softmax(o.g, tx, cases[c].axis), *ly = yolo_log_softmax(o.g, tx, cases[c].axis);
        yolo_tensor *dsm = raw(&o, YOLO_OP_SOFTMAX_BWD, YOLO_F32, nd, s, 2, (yolo_tensor *[]){y, tdy});
        yolo_tensor *dls = raw(&o, YOLO_OP_LOG_SOFTMAX_BWD, YOLO_F32, nd, s, 2, (yolo_tensor *[]){ly, tdy});
        if (dsm) dsm->node->iparams[0] = axis;
        if (dls) dls->node->iparams[0] = axis;
        yolo_tensor *outs[4] = {y, ly, dsm, dls};
        if (ops_run(&o, 4, outs) == YOLO_OK) {
            int64_t inner = 1, len = s[axis];
            for (int d = axis + 1; d < nd; d++) inner *= s[d];
            double *ref[4];
            for (int k = 0; k < 4; k++) ref[k] = malloc((size_t)n * sizeof(double));
            for (int64_t i = 0; i < n; i++) { /* each i with index 0 on the axis starts a group */
                if ((i / inner) % len) continue;
                double mx = -INFINITY, sum = 0, dot = 0, sdy = 0;
                for (int64_t l = 0; l < len; l++) mx = fmax(mx, x[i + l * inner]);
                for (int64_t l = 0; l < len; l++) sum += exp(x[i + l * inner] - mx);
                for (int64_t l = 0; l < len; l++) {
                    int64_t e = i + l * inner;
                    ref[0][e] = exp(x[e] - mx) / sum;
                    ref[1][e] = x[e] - mx - log(sum);
                    dot += dy[e] * ref[0][e];
                    sdy += dy[e];
                }
                for (int64_t l = 0; l < len; l++) {
                    int64_t e = i + l * inner;
                    ref[2][e] = ref[0][e] * (dy[e] - dot);
                    ref[3][e] = dy[e] - ref[0][e] * sdy;
                }
            }
            static const char *names[4] = {"softmax", "log_softmax", "softmax_bwd", "log_softmax_bwd"};
            for (int k = 0; k < 4; k++) {
                char what[96], sh[48];
                snprintf(what, sizeof what, "%s %s axis %d", names[k], ops_shape_str(sh, sizeof sh, nd, s), axis);
                float *got = ops_download(outs[k]);
                ops_expect_close(what, got, ref[k], n, 1e-6, 1e-5);
                free(got);
                free(ref[k]);
            }
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(x);
        free(dy);
    }
}

static void test_reductions(void) {
    static const int64_t sizes[] = {1, 7, 8192, 8193, 100003, 2100001};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        const int64_t n = sizes[c];
        float *x = ops_random(n, 91 + c, -1, 1.5f);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", 1, &n, x);
        yolo_tensor *outs[3] = {yolo_sum(o.g, tx), yolo_sum_squares(o.g, tx), yolo_mean(o.g, tx)};
        if (ops_run(&o, 3, outs) == YOLO_OK) {
            double ref[3] = {0, 0, 0};
            for (int64_t i = 0; i < n; i++) {
                ref[0] += x[i];
                ref[1] += (double)x[i] * x[i];
            }
            ref[2] = (double)(float)ref[0] * (1.0f / (float)n);
            static const char *names[3] = {"sum", "sum_squares", "mean"};
            for (int k = 0; k < 3; k++) {
                char what[64];
                snprintf(what, sizeof what, "%s of %lld", names[k], (long long)n);
                float *got = ops_download(outs[k]);
                ops_expect_close(what, got, &ref[k], 1, 1e-6, 1e-6);
                free(got);
            }
        } else {
            test_failures++;
        }
        ops_end(&o);
        free(x);
    }
}

static const op_reference_case cases[] = {
    {"activations", test_activations, {YOLO_OP_SILU, YOLO_OP_SILU_BWD, YOLO_OP_RELU, YOLO_OP_RELU_BWD,
     YOLO_OP_SIGMOID, YOLO_OP_SIGMOID_BWD, YOLO_OP_SCALE, YOLO_OP_HARDSWISH, YOLO_OP_HARDSWISH_BWD,
     YOLO_OP_DETACH}},
    {"binary", test_binary, {YOLO_OP_ADD, YOLO_OP_SUB, YOLO_OP_MUL}},
    {"cast_fill", test_cast_fill, {YOLO_OP_CAST, YOLO_OP_FILL}},
    {"concat_slice", test_concat_slice, {YOLO_OP_CONCAT, YOLO_OP_SLICE, YOLO_OP_SLICE_BWD}},
    {"broadcast_sum_to", test_broadcast_sum_to, {YOLO_OP_BROADCAST_TO, YOLO_OP_SUM_TO}},
    {"upsample", test_upsample, {YOLO_OP_UPSAMPLE_NEAREST, YOLO_OP_UPSAMPLE_NEAREST_BWD}},
    {"maxpool", test_maxpool, {YOLO_OP_MAXPOOL2D, YOLO_OP_MAXPOOL2D_BWD}},
    {"matmul", test_matmul, {YOLO_OP_MATMUL}},
    {"softmax", test_softmax, {YOLO_OP_SOFTMAX, YOLO_OP_SOFTMAX_BWD, YOLO_OP_LOG_SOFTMAX, YOLO_OP_LOG_SOFTMAX_BWD}},
    {"reductions", test_reductions, {YOLO_OP_SUM, YOLO_OP_SUM_SQUARES}},
};

const op_reference_suite op_reference_elementwise = {"test_ops_reference", cases,
                                                     (int)(sizeof cases / sizeof cases[0]), &be};
