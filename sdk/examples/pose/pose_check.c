/* pose_check — runs the Pose model (yolov8n-pose.yaml from pose.c's task
 * table) once in eval mode on a deterministic image, with the installed
 * libyolo only, and checks the head's outputs:
 *   - the layout: t[0] [1, 4 + nc + nk, A], t[1..nl] maps, t[nl+1] raw keypoints;
 *   - the keypoint decode of t[0] against the host formula of Ultralytics'
 *     kpts_decode applied to the raw keypoints t[nl+1]:
 *       x = (raw_x * 2 + cell_x) * stride, y likewise, v = sigmoid(raw_v).
 *   - the keypoint loss (pose_loss.c) against central finite differences,
 *     and its value at a perfect prediction (0 for the OKS term).
 * usage: pose_check [imgsz=64]; exit 0 when every check holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <yolo/detection.h>
#include <yolo/graph.h>
#include <yolo/model.h>
#include <yolo/plugin.h>

#include "pose_loss.h"

const yolo_task *yolo_task_register(void); /* pose.c */

static int fail(const char *what);

/* Deterministic values in [lo, hi). */
static float uniform(unsigned *state, float lo, float hi) {
    *state = *state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

/* The keypoint loss: gradient against central differences on a small
 * synthetic batch (2 images, 2 levels of 2x2 cells, 3 keypoints x 3 dims,
 * one invisible keypoint), and 0 OKS loss at the exact keypoints. */
static int check_loss(void) {
    enum { B = 2, K = 3, D = 3, NK = K * D, N = 3 };
    int hh[2] = {2, 2}, ww[2] = {2, 2};
    float fs[2] = {8, 16}, xy[2 * 8], st[8], sig[K];
    int A = yolo_det_anchor_count(2, hh, ww);
    if (A != 8 || yolo_det_make_anchors(2, hh, ww, fs, 0.5f, xy, st)) return fail("loss anchors");
    pose_kpt_sigmas(K, sig);
    float boxes[N * 4] = {2, 3, 20, 25, 10, 8, 30, 30, 1, 1, 12, 9}; /* xyxy pixels of a 32 x 32 image */
    float kpts[N * NK];
    unsigned rs = 7;
    for (int i = 0; i < N * NK; i++) kpts[i] = i % 3 == 2 ? 2.0f : uniform(&rs, 0.1f, 0.9f);
    kpts[1 * NK + 2 * D + 2] = 0; /* instance 1, keypoint 2 invisible */
    int32_t gidx[B * 8];
    for (int i = 0; i < B * 8; i++) gidx[i] = i % 3 == 1 ? -1 : (i < 8 ? i % 2 : 2 - (i % 2));
    float raw[B * NK * 8], grad[B * NK * 8];
    for (int i = 0; i < B * NK * 8; i++) raw[i] = uniform(&rs, -1.0f, 1.0f);
    pose_kpt_loss_value v;
    if (pose_kpt_loss(B, A, K, D, raw, gidx, boxes, kpts, 32, 32, xy, st, sig, 12.0, 1.0, &v, grad))
        return fail("pose_kpt_loss");
    int bad = 0;
    double worst = 0;
    for (int i = 0; i < B * NK * 8; i++) {
        float keep = raw[i];
        double h = 1e-2, f[2];
        for (int j = 0; j < 2; j++) {
            raw[i] = (float)(keep + (j ? -h : h));
            pose_kpt_loss_value w;
            pose_kpt_loss(B, A, K, D, raw, gidx, boxes, kpts, 32, 32, xy, st, sig, 12.0, 1.0, &w, NULL);
            f[j] = B * (w.kpt + w.kobj);
        }
        raw[i] = keep;
        double num = (f[0] - f[1]) / (2 * h), err = fabs(num - grad[i]) / (1e-3 + fabs(num));
        if (err > worst) worst = err;
        if (err > 2e-2 && bad++ < 5) fprintf(stderr, "pose_check: loss grad %d: %g, numeric %g\n", i, grad[i], num);
    }
    /* the exact keypoints: raw = (gt / stride - cell) / 2 */
    for (int b = 0; b < B; b++)
        for (int a = 0; a < A; a++) {
            int g = gidx[b * A + a];
            for (int k = 0; g >= 0 && k < K; k++)
                for (int d = 0; d < 2; d++)
                    raw[(b * NK + k * D + d) * A + a] = (kpts[g * NK + k * D + d] * 32 / st[a] - (xy[2 * a + d] - 0.5f)) / 2;
        }
    pose_kpt_loss_value z;
    pose_kpt_loss(B, A, K, D, raw, gidx, boxes, kpts, 32, 32, xy, st, sig, 12.0, 1.0, &z, NULL);
    printf("pose_check: keypoint loss kpt %.4f kobj %.4f over %d fg anchors, gradient max relative error %.2g; "
           "at the exact keypoints kpt %.2g\n", v.kpt, v.kobj, v.n_fg, worst, z.kpt);
    if (!(z.kpt < 1e-6) || !(v.kpt > 0) || v.n_fg != 11) bad++;
    return bad ? 1 : 0;
}

static int fail(const char *what) {
    fprintf(stderr, "pose_check: %s: %s\n", what, yolo_last_error());
    return 1;
}

int main(int argc, char **argv) {
    int imgsz = argc > 1 ? atoi(argv[1]) : 64;
    const yolo_task *task = yolo_task_register();
    yolo_backend *be;
    if (yolo_backend_create("cpu", 1, &be)) return fail("backend");
    yolo_model_options opt = {.tasks = &task, .n_tasks = 1, .seed = 0};
    yolo_model *m;
    if (yolo_model_load("yolov8n-pose.yaml", be, &opt, &m)) return fail("model");
    yolo_graph *g = yolo_graph_new(be);
    int64_t shape[4] = {1, 3, imgsz, imgsz};
    yolo_tensor *img = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    if (yolo_model_forward(m, g, img, false, &out)) return fail("forward");
    for (int i = 0; i < out.n; i++) yolo_graph_mark_output(g, out.t[i]);
    if (yolo_graph_plan(g, NULL)) return fail("plan");
    int64_t n_px = 3 * (int64_t)imgsz * imgsz;
    float *px = malloc(sizeof(float) * (size_t)n_px);
    for (int64_t i = 0; i < n_px; i++) px[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    if (yolo_tensor_upload_f32(img, px, n_px) || yolo_graph_run(g)) return fail("run");

    int strides[8], nl = yolo_model_strides(m, strides, 8), bad = 0;
    int nk = 17 * 3, nc = yolo_model_nc(m);
    if (out.n != nl + 2) {
        fprintf(stderr, "pose_check: %d outputs, expected %d\n", out.n, nl + 2);
        return 1;
    }
    const yolo_tensor *t0 = out.t[0], *kr = out.t[nl + 1];
    int64_t A = kr->shape[2];
    if (t0->ndim != 3 || t0->shape[1] != 4 + nc + nk || t0->shape[2] != A || kr->shape[1] != nk) {
        fprintf(stderr, "pose_check: t[0] [%lld, %lld, %lld], raw keypoints [%lld, %lld, %lld]\n",
                (long long)t0->shape[0], (long long)t0->shape[1], (long long)t0->shape[2], (long long)kr->shape[0],
                (long long)kr->shape[1], (long long)kr->shape[2]);
        return 1;
    }
    float *dec = malloc(sizeof(float) * (size_t)yolo_tensor_numel(t0));
    float *raw = malloc(sizeof(float) * (size_t)yolo_tensor_numel(kr));
    if (yolo_tensor_download_f32(t0, dec, yolo_tensor_numel(t0)) || yolo_tensor_download_f32(kr, raw, yolo_tensor_numel(kr)))
        return fail("download");
    /* cells and strides on the host */
    int hh[8], ww[8];
    float fs[8];
    for (int i = 0; i < nl; i++) hh[i] = ww[i] = imgsz / strides[i], fs[i] = (float)strides[i];
    float *xy = malloc(sizeof(float) * 2 * (size_t)A), *st = malloc(sizeof(float) * (size_t)A);
    if (yolo_det_anchor_count(nl, hh, ww) != A || yolo_det_make_anchors(nl, hh, ww, fs, 0.0f, xy, st))
        return fail("anchors");
    double max_err = 0;
    for (int c = 0; c < nk; c++)
        for (int64_t a = 0; a < A; a++) {
            double r = raw[c * A + a], want;
            if (c % 3 == 2) want = 1.0 / (1.0 + exp(-r));
            else want = (r * 2.0 + xy[2 * a + c % 3]) * st[a];
            double got = dec[(4 + nc + c) * A + a], err = fabs(got - want) / (1.0 + fabs(want));
            if (err > max_err) max_err = err;
            if (!(err < 1e-4) && bad++ < 5)
                fprintf(stderr, "pose_check: channel %d anchor %lld: %g, expected %g\n", c, (long long)a, got, want);
        }
    printf("pose_check: %d levels, %lld anchors, %d keypoint channels; decode max relative error %.2g\n", nl,
           (long long)A, nk, max_err);
    free(dec), free(raw), free(xy), free(st), free(px);
    yolo_graph_free(g);
    yolo_model_free(m);
    yolo_backend_free(be);
    return bad || check_loss() ? 1 : 0;
}
