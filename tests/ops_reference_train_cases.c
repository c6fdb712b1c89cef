/* The CPU backend's batch-norm kernels (forward, running statistics, the
 * three backward pieces, their fused BN_BWD, and BN_SILU / BN_SILU_BWD), the in-place optimizer / EMA / accumulate / zero
 * updates against naive double-precision references, and run-to-run and
 * thread-count bit-identity of the reducing kernels. Through the graph API;
 * backward-only ops are built as raw nodes (graph_internal.h). */
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

static yolo_tensor *raw(ops_graph *o, int op, int ndim, const int64_t *shape, int n, yolo_tensor **src) {
    return yolo_graph_node(o->g, op, YOLO_F32, ndim, shape, n, src);
}

static yolo_tensor *persistent(const char *name, int ndim, const int64_t *shape, const float *data, bool grad) {
    yolo_tensor *t = yolo_tensor_new(be, name, YOLO_F32, ndim, shape, grad);
    if (t && data) yolo_tensor_upload_f32(t, data, yolo_tensor_numel(t));
    return t;
}

/* ---- batch norm ---- */

static void test_batch_norm_kernels(void) {
    static const struct { int nd; int64_t s[4]; float offset; } cases[] = {
        {4, {2, 3, 5, 7}, 0}, {2, {6, 4}, 0}, {4, {3, 5, 1, 1}, 0}, {4, {2, 3, 5, 7}, 100}, {4, {4, 16, 33, 35}, 1},
        /* planes longer than the kernels' pieces (2048) with a ragged last block */
        {4, {2, 3, 61, 67}, 0}, {4, {3, 2, 80, 80}, 20},
    };
    const float eps = 1e-3f, momentum = 0.1f;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int nd = cases[c].nd;
        const int64_t *s = cases[c].s, C = s[1], n = ops_numel(nd, s), S = n / (s[0] * C), M = s[0] * S;
        const int64_t cs[1] = {C}, c2[2] = {2, C};
        float *x = ops_random(n, 101 + c, -2, 2), *dy = ops_random(n, 102 + c, -1, 1);
        for (int64_t i = 0; i < n; i++) x[i] += cases[c].offset + 0.1f * (float)((i / S) % C);
        float *mean = ops_random(C, 103, -0.5f, 0.5f), *var = ops_random(C, 104, 0.2f, 2), *gamma = ops_random(C, 105, 0.5f, 1.5f);
        float *beta = ops_random(C, 106, -1, 1), *rm = ops_random(C, 107, -1, 1), *rv = ops_random(C, 108, 0.5f, 1.5f);
        float *stats = ops_random(2 * C, 109, 0.1f, 1), *dstats = ops_random(2 * C, 110, -1, 1);
        yolo_tensor *trm = persistent("running_mean", 1, cs, rm, false), *trv = persistent("running_var", 1, cs, rv, false);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *tx = ops_input(&o, "x", nd, s, x), *tdy = ops_input(&o, "dy", nd, s, dy);
        yolo_tensor *tm = ops_input(&o, "mean", 1, cs, mean), *tv = ops_input(&o, "var", 1, cs, var);
        yolo_tensor *tg = ops_input(&o, "gamma", 1, cs, gamma), *tb = ops_input(&o, "beta", 1, cs, beta);
        yolo_tensor *tst = ops_input(&o, "stats", 2, c2, stats), *tds = ops_input(&o, "dstats", 2, c2, dstats);
        yolo_tensor *outs[8];
        outs[0] = raw(&o, YOLO_OP_BN_STATS, 2, c2, 3, (yolo_tensor *[]){tx, trm, trv});
        outs[1] = raw(&o, YOLO_OP_BN_APPLY, nd, s, 5, (yolo_tensor *[]){tx, tm, tv, tg, tb});
        outs[2] = raw(&o, YOLO_OP_BN_APPLY_BWD_PARAMS, 2, (int64_t[]){4, C}, 5, (yolo_tensor *[]){tx, tm, tv, tg, tdy});
        outs[3] = raw(&o, YOLO_OP_BN_APPLY_BWD_DATA, nd, s, 3, (yolo_tensor *[]){tv, tg, tdy});
        outs[4] = raw(&o, YOLO_OP_BN_STATS_BWD, nd, s, 3, (yolo_tensor *[]){tx, tst, tds});
        outs[5] = raw(&o, YOLO_OP_BN_BWD, 1, (int64_t[]){n + 4 * C}, 4, (yolo_tensor *[]){tx, tst, tg, tdy});
        if (outs[5]) outs[5]->node->fparams[0] = eps;
        outs[6] = raw(&o, YOLO_OP_BN_SILU, nd, s, 5, (yolo_tensor *[]){tx, tm, tv, tg, tb});
        outs[7] = raw(&o, YOLO_OP_BN_SILU_BWD, nd, s, 6, (yolo_tensor *[]){tx, tm, tv, tg, tb, tdy});
        for (int k = 6; k < 8; k++)
            if (outs[k]) outs[k]->node->fparams[0] = eps;
        if (outs[0]) {
            outs[0]->node->iparams[0] = 1;
            outs[0]->node->fparams[0] = momentum;
        }
        for (int k = 1; k < 4; k++)
            if (outs[k]) outs[k]->node->fparams[0] = eps;
        if (ops_run(&o, 8, outs) == YOLO_OK) {
            double *ref = malloc((size_t)(n > 4 * C ? n : 4 * C) * sizeof *ref);
            double *bm = calloc((size_t)C, sizeof *bm), *bv = calloc((size_t)C, sizeof *bv);
            for (int64_t i = 0; i < n; i++) bm[(i / S) % C] += x[i];
            for (int64_t k = 0; k < C; k++) bm[k] /= (double)M;
            for (int64_t i = 0; i < n; i++) bv[(i / S) % C] += (x[i] - bm[(i / S) % C]) * (x[i] - bm[(i / S) % C]);
            for (int64_t k = 0; k < C; k++) {
                bv[k] /= (double)M;
                ref[k] = bm[k];
                ref[C + k] = bv[k];
            }
            char sh[48], what[128];
            ops_shape_str(sh, sizeof sh, nd, s);
            snprintf(what, sizeof what, "bn_stats %s offset %g", sh, (double)cases[c].offset);
            float *got = ops_download(outs[0]);
            ops_expect_close(what, got, ref, 2 * C, 1e-5, 1e-5);
            free(got);
            /* running statistics, unbiased variance */
            for (int64_t k = 0; k < C; k++) {
                ref[k] = (1 - momentum) * rm[k] + momentum * bm[k];
                ref[C + k] = (1 - momentum) * rv[k] + momentum * bv[k] * M / (M - 1);
            }
            float *grm = ops_download(trm), *grv = ops_download(trv);
            snprintf(what, sizeof what, "bn_stats running_mean %s", sh);
            ops_expect_close(what, grm, ref, C, 1e-5, 1e-5);
            snprintf(what, sizeof what, "bn_stats running_var %s", sh);
            ops_expect_close(what, grv, ref + C, C, 1e-5, 1e-5);
            free(grm);
            free(grv);
            /* apply */
            for (int64_t i = 0; i < n; i++) {
                int64_t k = (i / S) % C;
                ref[i] = gamma[k] * (x[i] - mean[k]) / sqrt(var[k] + (double)eps) + beta[k];
            }
            snprintf(what, sizeof what, "bn_apply %s", sh);
            got = ops_download(outs[1]);
            ops_expect_close(what, got, ref, n, 1e-5, 1e-5);
            free(got);
            /* apply backward: parameters */
            memset(ref, 0, (size_t)(4 * C) * sizeof *ref);
            for (int64_t i = 0; i < n; i++) {
                int64_t k = (i / S) % C;
                double r = 1 / sqrt(var[k] + (double)eps);
                ref[k] += dy[i] * (x[i] - mean[k]) * r;
                ref[C + k] += dy[i];
                ref[2 * C + k] += -dy[i] * gamma[k] * r;
                ref[3 * C + k] += -0.5 * dy[i] * gamma[k] * (x[i] - mean[k]) * r * r * r;
            }
            snprintf(what, sizeof what, "bn_apply_bwd_params %s", sh);
            got = ops_download(outs[2]);
            ops_expect_close(what, got, ref, 4 * C, 1e-4, 1e-4);
            free(got);
            for (int64_t i = 0; i < n; i++) {
                int64_t k = (i / S) % C;
                ref[i] = dy[i] * gamma[k] / sqrt(var[k] + (double)eps);
            }
            snprintf(what, sizeof what, "bn_apply_bwd_data %s", sh);
            got = ops_download(outs[3]);
            ops_expect_close(what, got, ref, n, 1e-5, 1e-5);
            free(got);
            for (int64_t i = 0; i < n; i++) {
                int64_t k = (i / S) % C;
                ref[i] = dstats[k] / M + dstats[C + k] * 2 * (x[i] - stats[k]) / M;
            }
            snprintf(what, sizeof what, "bn_stats_bwd %s", sh);
            got = ops_download(outs[4]);
            ops_expect_close(what, got, ref, n, 1e-6, 1e-4);
            free(got);
            /* fused: the parameter rows (mean, var from stats), then dx = apply_bwd_data + stats_bwd with them */
            {
                double *rows = calloc((size_t)(4 * C), sizeof *rows);
                for (int64_t i = 0; i < n; i++) {
                    int64_t k = (i / S) % C;
                    double r = 1 / sqrt(stats[C + k] + (double)eps);
                    rows[k] += dy[i] * (x[i] - stats[k]) * r;
                    rows[C + k] += dy[i];
                    rows[2 * C + k] += -dy[i] * gamma[k] * r;
                    rows[3 * C + k] += -0.5 * dy[i] * gamma[k] * (x[i] - stats[k]) * r * r * r;
                }
                for (int64_t i = 0; i < n; i++) {
                    int64_t k = (i / S) % C;
                    ref[i] = dy[i] * gamma[k] / sqrt(stats[C + k] + (double)eps) + rows[2 * C + k] / M +
                             rows[3 * C + k] * 2 * (x[i] - stats[k]) / M;
                }
                got = ops_download(outs[5]);
                snprintf(what, sizeof what, "bn_bwd dx %s", sh);
                ops_expect_close(what, got, ref, n, 1e-5, 1e-4);
                snprintf(what, sizeof what, "bn_bwd rows %s", sh);
                ops_expect_close(what, got + n, rows, 4 * C, 1e-4, 1e-4);
                free(got);
                free(rows);
            }
            /* batch norm + SiLU, forward and backward */
            for (int pass = 0; pass < 2; pass++) {
                for (int64_t i = 0; i < n; i++) {
                    int64_t k = (i / S) % C;
                    double z = gamma[k] * (x[i] - mean[k]) / sqrt(var[k] + (double)eps) + beta[k];
                    double sg = 1 / (1 + exp(-z));
                    ref[i] = pass == 0 ? z * sg : dy[i] * sg * (1 + z * (1 - sg));
                }
                snprintf(what, sizeof what, "%s %s", pass == 0 ? "bn_silu" : "bn_silu_bwd", sh);
                got = ops_download(outs[6 + pass]);
                ops_expect_close(what, got, ref, n, 1e-5, 1e-5);
                free(got);
            }
            free(ref);
            free(bm);
            free(bv);
        } else {
            test_failures++;
        }
        ops_end(&o);
        yolo_tensor_free(trm);
        yolo_tensor_free(trv);
        float *all[] = {x, dy, mean, var, gamma, beta, rm, rv, stats, dstats};
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) free(all[k]);
    }
}

/* yolo_batch_norm end to end: training uses batch statistics, eval the running ones. */
static void test_batch_norm_builder(void) {
    const int64_t s[4] = {3, 4, 5, 6}, cs[1] = {4}, n = 360, C = 4, S = 30;
    float *x = ops_random(n, 121, -3, 3), g[4] = {1, 0.5f, 2, -1}, b[4] = {0, 1, -1, 0.25f};
    float rm[4] = {0.1f, -0.2f, 0.3f, 0}, rv[4] = {1, 2, 0.5f, 1.5f};
    for (int training = 0; training <= 1; training++) {
        yolo_tensor *tg = persistent("gamma", 1, cs, g, false), *tb = persistent("beta", 1, cs, b, false);
        yolo_tensor *trm = persistent("rm", 1, cs, rm, false), *trv = persistent("rv", 1, cs, rv, false);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *y = yolo_batch_norm(o.g, ops_input(&o, "x", 4, s, x), tg, tb, trm, trv, training, 0.03f, 1e-5f);
        if (ops_run(&o, 1, &y) == YOLO_OK) {
            double m[4] = {0}, v[4] = {0}, *ref = malloc((size_t)n * sizeof *ref);
            for (int64_t i = 0; i < n; i++) m[(i / S) % C] += x[i] / 90.0;
            for (int64_t i = 0; i < n; i++) v[(i / S) % C] += (x[i] - m[(i / S) % C]) * (x[i] - m[(i / S) % C]) / 90.0;
            for (int64_t i = 0; i < n; i++) {
                int64_t k = (i / S) % C;
                double mk = training ? m[k] : rm[k], vk = training ? v[k] : rv[k];
                ref[i] = g[k] * (x[i] - mk) / sqrt(vk + 1e-5) + b[k];
            }
            float *got = ops_download(y);
            ops_expect_close(training ? "batch_norm training" : "batch_norm eval", got, ref, n, 1e-5, 1e-5);
            free(got);
            float grm[4], grv[4];
            yolo_tensor_download_f32(trm, grm, 4);
            yolo_tensor_download_f32(trv, grv, 4);
            for (int k = 0; k < 4; k++) {
                double wm = training ? 0.97 * rm[k] + 0.03 * m[k] : rm[k];
                double wv = training ? 0.97 * rv[k] + 0.03 * v[k] * 90 / 89 : rv[k];
                CHECK_MSG(fabs(grm[k] - wm) < 1e-5 && fabs(grv[k] - wv) < 1e-5,
                          "batch_norm training=%d running stats of channel %d: %g %g, expected %g %g", training, k,
                          (double)grm[k], (double)grv[k], wm, wv);
            }
            free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        yolo_tensor_free(tg);
        yolo_tensor_free(tb);
        yolo_tensor_free(trm);
        yolo_tensor_free(trv);
    }
    free(x);
}

/* ---- optimizer updates ---- */

static void test_sgd(void) {
    static const struct { float momentum, wd, nesterov, scale; } cases[] = {
        {0.9f, 5e-4f, 1, 0}, {0.9f, 5e-4f, 0, 0.5f}, {0, 0.01f, 0, 0}, {0.937f, 0, 1, 2}, {0.9f, 5e-4f, 1, 0.25f},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t n = c == 4 ? 100003 : 37; /* the last case is large enough to use the thread pool */
        float *p = ops_random(n, 131 + c, -1, 1), *gr = ops_random(n, 132 + c, -1, 1);
        float hyper[4] = {0.01f, cases[c].momentum, cases[c].wd, cases[c].nesterov}, scale = cases[c].scale;
        yolo_tensor *tp = persistent("p", 1, &n, p, false), *tg = persistent("g", 1, &n, gr, false);
        yolo_tensor *tbuf = persistent("buf", 1, &n, NULL, false), *th = persistent("hyper", 1, (int64_t[]){4}, hyper, false);
        yolo_tensor *ts = scale ? persistent("scale", 1, (int64_t[]){1}, &scale, false) : NULL;
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *u = yolo_sgd_update(o.g, tp, tg, tbuf, th, ts);
        double *rp = malloc((size_t)n * sizeof *rp), *rb = calloc((size_t)n, sizeof *rb);
        for (int64_t i = 0; i < n; i++) rp[i] = p[i];
        yolo_status st = ops_run(&o, 1, &u);
        for (int step = 0; st == YOLO_OK && step < 3; step++) {
            if (step) st = yolo_graph_run(o.g);
            double sc = scale ? scale : 1, mo = cases[c].momentum, lr = hyper[0];
            for (int64_t i = 0; i < n; i++) {
                double g = gr[i] * sc + cases[c].wd * rp[i];
                rb[i] = mo * rb[i] + g;
                rp[i] -= lr * (cases[c].nesterov ? g + mo * rb[i] : rb[i]);
            }
            char what[96];
            snprintf(what, sizeof what, "sgd case %zu step %d param", c, step + 1);
            float *got = ops_download(tp);
            ops_expect_close(what, got, rp, n, 1e-6, 1e-5);
            free(got);
            snprintf(what, sizeof what, "sgd case %zu step %d momentum", c, step + 1);
            got = ops_download(tbuf);
            ops_expect_close(what, got, rb, n, 1e-6, 1e-5);
            free(got);
        }
        if (st != YOLO_OK) test_failures++;
        ops_end(&o);
        yolo_tensor *all[] = {tp, tg, tbuf, th, ts};
        for (int k = 0; k < 5; k++) yolo_tensor_free(all[k]);
        free(p);
        free(gr);
        free(rp);
        free(rb);
    }
}

/* MuSGD's steps (yolo/graph.h) chained as the optimizer chains them, with
 * the normalized update standing in for the orthogonalized one: u =
 * MUON_MOMENTUM, x = MUON_NORMALIZE(u, sum of squares), MUSGD_UPDATE with x;
 * three steps against double loops; a grad_scale of 0 leaves every buffer
 * and the parameter as they were and gives u = 0. */
static void test_musgd(void) {
    static const struct { float nesterov, scale; } cases[] = {{1, 0}, {0, 0.5f}, {1, 2}, {1, -1 /* 0: skipped */}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int64_t n = c == 2 ? 100003 : 45;
        float *p = ops_random(n, 151 + c, -1, 1), *gr = ops_random(n, 152 + c, -1, 1);
        const float lr = 0.01f, mo = 0.9f, wd = 5e-4f, muon = 0.2f, sgd = 1.0f;
        float hyper[6] = {lr, mo, wd, cases[c].nesterov, muon, sgd};
        float scale = cases[c].scale < 0 ? 0.0f : cases[c].scale;
        const bool has_scale = cases[c].scale != 0;
        yolo_tensor *tp = persistent("p", 1, &n, p, false), *tg = persistent("g", 1, &n, gr, false);
        yolo_tensor *tm = persistent("m", 1, &n, NULL, false), *tb = persistent("b", 1, &n, NULL, false);
        yolo_tensor *th = persistent("hyper", 1, (int64_t[]){6}, hyper, false);
        yolo_tensor *ts = has_scale ? persistent("scale", 1, (int64_t[]){1}, &scale, false) : NULL;
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *u = yolo_muon_momentum(o.g, tg, tm, th, ts);
        yolo_tensor *x = yolo_muon_normalize(o.g, u, yolo_sum_squares(o.g, u));
        yolo_tensor *outs[3] = {u, x, yolo_musgd_update(o.g, tp, tg, x, tb, th, ts)};
        double *rp = malloc((size_t)n * sizeof *rp), *rm = calloc((size_t)n, sizeof *rm), *rb = calloc((size_t)n, sizeof *rb);
        double *ru = malloc((size_t)n * sizeof *ru), *rx = malloc((size_t)n * sizeof *rx);
        for (int64_t i = 0; i < n; i++) rp[i] = p[i];
        yolo_status st = ops_run(&o, 3, outs);
        for (int step = 0; st == YOLO_OK && step < 3; step++) {
            if (step) st = yolo_graph_run(o.g);
            const double sc = has_scale ? scale : 1;
            double sq = 0;
            for (int64_t i = 0; i < n; i++) {
                const double g = gr[i] * sc;
                if (sc != 0) rm[i] += (1 - mo) * (g - rm[i]);
                ru[i] = sc == 0 ? 0 : cases[c].nesterov ? g + mo * (rm[i] - g) : rm[i];
                sq += ru[i] * ru[i];
            }
            for (int64_t i = 0; i < n; i++) {
                rx[i] = ru[i] / (sqrt(sq) + 1e-7);
                if (sc == 0) continue;
                rp[i] -= lr * muon * rx[i];
                const double g = gr[i] * sc + wd * rp[i];
                rb[i] = mo * rb[i] + g;
                rp[i] -= lr * sgd * (cases[c].nesterov ? g + mo * rb[i] : rb[i]);
            }
            const struct { const char *name; const yolo_tensor *t; const double *ref; } checks[] = {
                {"update", u, ru}, {"normalized", x, rx}, {"momentum", tm, rm}, {"sgd buffer", tb, rb}, {"param", tp, rp}};
            for (size_t k = 0; k < sizeof checks / sizeof *checks; k++) {
                char what[96];
                snprintf(what, sizeof what, "musgd case %zu step %d %s", c, step + 1, checks[k].name);
                float *got = ops_download(checks[k].t);
                ops_expect_close(what, got, checks[k].ref, n, 1e-6, 1e-5);
                free(got);
            }
        }
        if (st != YOLO_OK) test_failures++;
        ops_end(&o);
        yolo_tensor *all[] = {tp, tg, tm, tb, th, ts};
        for (int k = 0; k < 6; k++) yolo_tensor_free(all[k]);
        free(p), free(gr), free(rp), free(rm), free(rb), free(ru), free(rx);
    }
}

static void test_adamw_ema(void) {
    for (int c = 0; c < 2; c++) {
        const int64_t n = c ? 100003 : 41;
        float *p = ops_random(n, 141 + c, -1, 1), *gr = ops_random(n, 142 + c, -1, 1), scale = 0.5f;
        float hyper[6] = {0.002f, 0.9f, 0.999f, 1e-8f, 0.01f, 1};
        yolo_tensor *tp = persistent("p", 1, &n, p, false), *tg = persistent("g", 1, &n, gr, false);
        yolo_tensor *tm = persistent("m", 1, &n, NULL, false), *tv = persistent("v", 1, &n, NULL, false);
        yolo_tensor *th = persistent("hyper", 1, (int64_t[]){6}, hyper, false);
        yolo_tensor *ts = c ? persistent("scale", 1, (int64_t[]){1}, &scale, false) : NULL;
        yolo_tensor *te = persistent("ema", 1, &n, gr, false);
        float decay = 0.9f;
        yolo_tensor *td = persistent("decay", 1, (int64_t[]){1}, &decay, false);
        ops_graph o;
        ops_begin(&o, be);
        yolo_tensor *outs[2] = {yolo_adamw_update(o.g, tp, tg, tm, tv, th, ts), NULL};
        outs[1] = yolo_ema_update(o.g, te, tp, td); /* after the step: EMA of the updated weights */
        double *rp = malloc((size_t)n * sizeof *rp), *rm = calloc((size_t)n, sizeof *rm);
        double *rv = calloc((size_t)n, sizeof *rv), *re = malloc((size_t)n * sizeof *re);
        for (int64_t i = 0; i < n; i++) {
            rp[i] = p[i];
            re[i] = gr[i];
        }
        yolo_status st = ops_run(&o, 2, outs);
        for (int step = 1; st == YOLO_OK && step <= 3; step++) {
            if (step > 1) {
                hyper[YOLO_ADAMW_STEP] = (float)step;
                yolo_tensor_upload_f32(th, hyper, 6);
                st = yolo_graph_run(o.g);
            }
            /* the hyper-parameters as the kernel sees them: f32 values */
            const double lr = hyper[0], b1 = hyper[1], b2 = hyper[2], eps = hyper[3], wd = hyper[4], d = decay;
            double sc = c ? scale : 1, bc1 = 1 - pow(b1, step), bc2 = 1 - pow(b2, step);
            for (int64_t i = 0; i < n; i++) {
                double g = gr[i] * sc;
                rp[i] *= 1 - lr * wd;
                rm[i] = b1 * rm[i] + (1 - b1) * g;
                rv[i] = b2 * rv[i] + (1 - b2) * g * g;
                rp[i] -= lr * (rm[i] / bc1) / (sqrt(rv[i] / bc2) + eps);
                re[i] = d * re[i] + (1 - d) * rp[i];
            }
            char what[96];
            snprintf(what, sizeof what, "adamw n=%lld step %d param", (long long)n, step);
            float *got = ops_download(tp);
            ops_expect_close(what, got, rp, n, 1e-6, 1e-5);
            free(got);
            snprintf(what, sizeof what, "adamw n=%lld step %d exp_avg_sq", (long long)n, step);
            got = ops_download(tv);
            ops_expect_close(what, got, rv, n, 1e-9, 1e-5);
            free(got);
            snprintf(what, sizeof what, "ema n=%lld step %d", (long long)n, step);
            got = ops_download(te);
            ops_expect_close(what, got, re, n, 1e-6, 1e-5);
            free(got);
        }
        if (st != YOLO_OK) test_failures++;
        /* a step counter of 0 is an error naming the op, not NaN weights */
        hyper[YOLO_ADAMW_STEP] = 0;
        yolo_tensor_upload_f32(th, hyper, 6);
        CHECK_MSG(yolo_graph_run(o.g) != YOLO_OK && test_error_mentions("ADAMW"), "adamw step 0: %s", yolo_last_error());
        ops_end(&o);
        yolo_tensor *all[] = {tp, tg, tm, tv, th, ts, te, td};
        for (int k = 0; k < 8; k++) yolo_tensor_free(all[k]);
        free(p);
        free(gr);
        free(rp);
        free(rm);
        free(rv);
        free(re);
    }
}

/* EMA_UPDATE gated on its optimizer step's grad_scale: 0 (a skipped step)
 * leaves the EMA bit-identical; any other value updates it exactly as the
 * ungated op does (the value itself is not a factor). Both sizes: the
 * single-range and the threaded paths. */
static void test_ema_gated(void) {
    for (int c = 0; c < 2; c++) {
        const int64_t n = c ? 50021 : 37;
        float *e = ops_random(n, 161 + c, -1, 1), *p = ops_random(n, 163 + c, -1, 1);
        float decay = 0.93f, skip = 0.0f, take = 0.25f;
        yolo_tensor *tg = persistent("gated", 1, &n, e, false), *tu = persistent("ungated", 1, &n, e, false);
        yolo_tensor *tp = persistent("p", 1, &n, p, false), *td = persistent("decay", 1, (int64_t[]){1}, &decay, false);
        yolo_tensor *ts = persistent("step_scale", 1, (int64_t[]){1}, &skip, false);
        ops_graph o, u;
        ops_begin(&o, be);
        ops_begin(&u, be);
        yolo_tensor *gated = yolo_ema_update_gated(o.g, tg, tp, td, ts), *ungated = yolo_ema_update(u.g, tu, tp, td);
        if (ops_run(&o, 1, &gated) == YOLO_OK) {
            float *got = ops_download(tg);
            CHECK_MSG(!memcmp(got, e, (size_t)n * 4), "n=%lld: step_scale 0 changed the EMA", (long long)n);
            free(got);
        } else {
            test_failures++;
        }
        yolo_tensor_upload_f32(ts, &take, 1);
        if (yolo_graph_run(o.g) == YOLO_OK && ops_run(&u, 1, &ungated) == YOLO_OK) {
            double *ref = malloc((size_t)n * sizeof *ref);
            for (int64_t i = 0; i < n; i++) ref[i] = (double)decay * e[i] + (1.0 - decay) * p[i];
            float *got = ops_download(tg), *plain = ops_download(tu);
            ops_expect_close("gated ema, step_scale 0.25", got, ref, n, 1e-6, 1e-6);
            CHECK_MSG(!memcmp(got, plain, (size_t)n * 4), "n=%lld: the gated update differs from the ungated",
                      (long long)n);
            free(got), free(plain), free(ref);
        } else {
            test_failures++;
        }
        ops_end(&o);
        ops_end(&u);
        yolo_tensor *all[] = {tg, tu, tp, td, ts};
        for (size_t k = 0; k < sizeof all / sizeof *all; k++) yolo_tensor_free(all[k]);
        free(e), free(p);
    }
    /* a step_scale of more than one value is refused, naming it */
    const int64_t n = 4, two = 2;
    yolo_tensor *te = persistent("ema", 1, &n, NULL, false), *tp = persistent("p", 1, &n, NULL, false);
    yolo_tensor *td = persistent("decay", 1, (int64_t[]){1}, NULL, false), *ts = persistent("wide", 1, &two, NULL, false);
    yolo_graph *g = yolo_graph_new(be);
    CHECK_MSG(!yolo_ema_update_gated(g, te, tp, td, ts) && strstr(yolo_graph_error(g), "step_scale 'wide'"),
              "a [2] step_scale: %s", yolo_graph_error(g));
    yolo_graph_free(g);
    yolo_tensor *all[] = {te, tp, td, ts};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) yolo_tensor_free(all[k]);
}

/* ---- the gradient-clipping factor on the device, and the skipped step ---- */

static float clip_scale_of(float norm_sq, float max_norm, float unscale) {
    float hyper[2] = {max_norm, unscale}, out = -1;
    yolo_tensor *th = persistent("clip", 1, (int64_t[]){2}, hyper, false);
    ops_graph o;
    ops_begin(&o, be);
    yolo_tensor *tsq = ops_input(&o, "norm_sq", 1, (int64_t[]){1}, &norm_sq);
    yolo_tensor *s = yolo_grad_clip_scale(o.g, tsq, th);
    if (ops_run(&o, 1, &s) == YOLO_OK) {
        float *got = ops_download(s);
        out = got[0];
        free(got);
    } else {
        test_failures++;
    }
    ops_end(&o);
    yolo_tensor_free(th);
    return out;
}

static void test_grad_clip_scale(void) {
    /* torch.nn.utils.clip_grad_norm_: max_norm / (norm + 1e-6) when that is < 1 */
    CHECK_MSG(clip_scale_of(400.0f, 10.0f, 1.0f) == (float)(10.0 / (20.0 + 1e-6)), "clip of norm 20 to 10: %g",
              (double)clip_scale_of(400.0f, 10.0f, 1.0f));
    CHECK_MSG(clip_scale_of(4.0f, 10.0f, 1.0f) == 1.0f, "norm 2 below 10: factor %g", (double)clip_scale_of(4, 10, 1));
    CHECK_MSG(clip_scale_of(400.0f, 0.0f, 1.0f) == 1.0f, "max_norm 0 (no clipping): %g", (double)clip_scale_of(400, 0, 1));
    /* loss scaled by 1024: the norm is measured unscaled, the factor includes 1/1024 */
    float scaled = clip_scale_of(400.0f * 1024 * 1024, 10.0f, 1.0f / 1024);
    CHECK_MSG(fabs(scaled - 10.0 / 20.0 / 1024) < 1e-9, "unscaled clip: %g", (double)scaled);
    CHECK_MSG(clip_scale_of(INFINITY, 10.0f, 1.0f) == 0.0f && clip_scale_of(NAN, 10.0f, 1.0f) == 0.0f,
              "a non-finite norm gives factor 0");

    /* The update graph of the optimizer: an inf gradient skips SGD and AdamW. */
    const int64_t n = 29;
    float *p = ops_random(n, 151, -1, 1), *gr = ops_random(n, 152, -1, 1), *st = ops_random(n, 153, 0, 1);
    gr[7] = INFINITY;
    float sgd_h[4] = {0.01f, 0.9f, 5e-4f, 1}, adam_h[6] = {0.002f, 0.9f, 0.999f, 1e-8f, 0.01f, 1}, clip_h[2] = {10, 1};
    yolo_tensor *tp = persistent("p", 1, &n, p, false), *tq = persistent("q", 1, &n, p, false);
    yolo_tensor *tg = persistent("g", 1, &n, gr, false), *tb = persistent("buf", 1, &n, st, false);
    yolo_tensor *tm = persistent("m", 1, &n, st, false), *tv = persistent("v", 1, &n, st, false);
    yolo_tensor *ts = persistent("sgd", 1, (int64_t[]){4}, sgd_h, false);
    yolo_tensor *ta = persistent("adam", 1, (int64_t[]){6}, adam_h, false);
    yolo_tensor *tc = persistent("clip", 1, (int64_t[]){2}, clip_h, false);
    ops_graph o;
    ops_begin(&o, be);
    yolo_tensor *scale = yolo_grad_clip_scale(o.g, yolo_sum_squares(o.g, tg), tc);
    yolo_tensor *outs[3] = {scale, yolo_sgd_update(o.g, tp, tg, tb, ts, scale),
                            yolo_adamw_update(o.g, tq, tg, tm, tv, ta, scale)};
    if (ops_run(&o, 3, outs) == YOLO_OK) {
        float *gs = ops_download(scale), *gp = ops_download(tp), *gq = ops_download(tq);
        float *gb = ops_download(tb), *gm = ops_download(tm), *gv = ops_download(tv);
        CHECK_MSG(gs[0] == 0.0f, "inf gradient: factor %g, expected 0", (double)gs[0]);
        CHECK_MSG(!memcmp(gp, p, (size_t)n * 4) && !memcmp(gq, p, (size_t)n * 4), "skipped step changed a parameter");
        CHECK_MSG(!memcmp(gb, st, (size_t)n * 4) && !memcmp(gm, st, (size_t)n * 4) && !memcmp(gv, st, (size_t)n * 4),
                  "skipped step changed optimizer state");
        free(gs), free(gp), free(gq), free(gb), free(gm), free(gv);
    } else {
        test_failures++;
    }
    ops_end(&o);
    yolo_tensor *all[] = {tp, tq, tg, tb, tm, tv, ts, ta, tc};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) yolo_tensor_free(all[k]);
    free(p), free(gr), free(st);
}

static void test_accumulate_zero(void) {
    const int64_t n = 50001;
    float *a = ops_random(n, 151, -1, 1), *x = ops_random(n, 152, -1, 1);
    yolo_tensor *ta = persistent("acc", 1, &n, a, false), *tz = persistent("z", 1, &n, x, false);
    ops_graph o;
    ops_begin(&o, be);
    yolo_tensor *tx = ops_input(&o, "x", 1, &n, x);
    yolo_tensor *acc = raw(&o, YOLO_OP_ACCUMULATE, 1, &n, 2, (yolo_tensor *[]){ta, tx});
    if (acc) acc->node->view_of = ta;
    yolo_tensor *outs[2] = {acc, yolo_zero(o.g, tz)};
    yolo_status st = ops_run(&o, 2, outs);
    if (st == YOLO_OK) st = yolo_graph_run(o.g); /* twice: a += 2x */
    if (st == YOLO_OK) {
        double *ref = malloc((size_t)n * sizeof *ref);
        for (int64_t i = 0; i < n; i++) ref[i] = (double)(a[i] + x[i]) + x[i];
        float *got = ops_download(ta);
        ops_expect_close("accumulate twice", got, ref, n, 1e-6, 1e-6);
        free(got);
        memset(ref, 0, (size_t)n * sizeof *ref);
        got = ops_download(tz);
        ops_expect_close("zero", got, ref, n, 1e-30, 0);
        free(got);
        free(ref);
    } else {
        test_failures++;
    }
    ops_end(&o);
    yolo_tensor_free(ta);
    yolo_tensor_free(tz);
    free(a);
    free(x);
}

/* ---- determinism: same bits run to run and for 1, 2 and 3 threads ---- */

static float *reducing_graph(yolo_backend *b, int64_t *count) {
    const int64_t s[4] = {4, 8, 37, 41}, cs[1] = {8};
    const int64_t n = ops_numel(4, s);
    float *x = ops_random(n, 161, -2, 3), ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, zeros[8] = {0};
    yolo_tensor *tg = yolo_tensor_new(b, "g", YOLO_F32, 1, cs, false), *tb = yolo_tensor_new(b, "b", YOLO_F32, 1, cs, false);
    yolo_tensor *trm = yolo_tensor_new(b, "rm", YOLO_F32, 1, cs, false), *trv = yolo_tensor_new(b, "rv", YOLO_F32, 1, cs, false);
    yolo_tensor_upload_f32(tg, ones, 8);
    yolo_tensor_upload_f32(tb, zeros, 8);
    yolo_tensor_upload_f32(trv, ones, 8);
    ops_graph o;
    ops_begin(&o, b);
    yolo_tensor *tx = ops_input(&o, "x", 4, s, x);
    yolo_tensor *y = yolo_batch_norm(o.g, tx, tg, tb, trm, trv, true, 0.1f, 1e-5f);
    yolo_tensor *outs[5] = {y, yolo_sum(o.g, tx), yolo_sum_squares(o.g, y),
                            yolo_sum_to(o.g, tx, 4, (int64_t[]){1, 8, 1, 1}), yolo_softmax(o.g, tx, 1)};
    float *result = NULL;
    *count = 0;
    if (ops_run(&o, 5, outs) == YOLO_OK && yolo_graph_run(o.g) == YOLO_OK) {
        int64_t total = 0;
        for (int k = 0; k < 5; k++) total += yolo_tensor_numel(outs[k]);
        result = malloc((size_t)total * sizeof *result);
        for (int k = 0, at = 0; k < 5; k++) {
            yolo_tensor_download_f32(outs[k], result + at, yolo_tensor_numel(outs[k]));
            at += (int)yolo_tensor_numel(outs[k]);
        }
        *count = total;
    }
    ops_end(&o);
    yolo_tensor_free(tg);
    yolo_tensor_free(tb);
    yolo_tensor_free(trm);
    yolo_tensor_free(trv);
    free(x);
    return result;
}

static void test_determinism(void) {
    int64_t n0 = 0, n = 0;
    float *first = reducing_graph(be, &n0);
    CHECK_MSG(first != NULL, "determinism graph failed");
    for (int threads = 1; first && threads <= 3; threads++) {
        yolo_backend *b = NULL;
        if (yolo_backend_create("cpu", threads, &b) != YOLO_OK) {
            test_failures++;
            continue;
        }
        float *again = reducing_graph(b, &n);
        CHECK_MSG(again && n == n0 && memcmp(first, again, (size_t)n * sizeof *first) == 0,
                  "results with %d thread(s) differ bitwise from the first run", threads);
        free(again);
        yolo_backend_free(b);
    }
    free(first);
}

static const op_reference_case cases[] = {
    {"batch_norm_kernels", test_batch_norm_kernels, {YOLO_OP_BN_STATS, YOLO_OP_BN_APPLY,
     YOLO_OP_BN_APPLY_BWD_PARAMS, YOLO_OP_BN_APPLY_BWD_DATA, YOLO_OP_BN_STATS_BWD, YOLO_OP_BN_BWD, YOLO_OP_BN_SILU,
     YOLO_OP_BN_SILU_BWD}},
    {"batch_norm_builder", test_batch_norm_builder, {YOLO_OP_NONE}},
    {"sgd", test_sgd, {YOLO_OP_SGD_UPDATE}},
    {"adamw_ema", test_adamw_ema, {YOLO_OP_ADAMW_UPDATE, YOLO_OP_EMA_UPDATE}},
    {"musgd", test_musgd, {YOLO_OP_MUON_MOMENTUM, YOLO_OP_MUON_NORMALIZE, YOLO_OP_MUSGD_UPDATE}},
    {"ema_gated", test_ema_gated, {YOLO_OP_EMA_UPDATE}},
    {"accumulate_zero", test_accumulate_zero, {YOLO_OP_ACCUMULATE, YOLO_OP_ZERO}},
    {"grad_clip_scale", test_grad_clip_scale, {YOLO_OP_GRAD_CLIP_SCALE, YOLO_OP_SGD_UPDATE, YOLO_OP_ADAMW_UPDATE}},
    {"determinism", test_determinism, {YOLO_OP_NONE}},
};

const op_reference_suite op_reference_train = {"test_ops_reference_train", cases,
                                               (int)(sizeof cases / sizeof cases[0]), &be};
