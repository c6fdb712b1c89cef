/* pose.c — a third-party `pose` task plugin, built against the installed
 * SDK only (yolo/...): the Pose head module and the embedded
 * yolov8-pose.yaml (this file), the keypoint loss (pose_loss.c) and the
 * hooks — loss, metrics, predict — (pose_task.c). See README.md.
 *
 * The Pose head (Ultralytics ultralytics/nn/modules/head.py Pose):
 * Detect (yolo_det_head) plus a keypoint branch per level,
 *     cv4[i] = Conv(ch[i], c4, 3) -> Conv(c4, c4, 3) -> Conv2d(c4, nk, 1),
 * c4 = max(ch[0] / 4, nk), nk = kpt_shape[0] * kpt_shape[1].
 * yaml args [nc, [K, D]] (kpt_shape written as a list: see README.md).
 *
 * Outputs of its forward (nl levels, A anchors):
 *   training: t[0..nl-1] the Detect maps [N, 4*16 + nc, H_i, W_i],
 *             t[nl] = raw keypoints [N, nk, A];
 *   eval:     t[0] = [N, 4 + nc + nk, A]: decoded boxes (xywh pixels),
 *             class probabilities, and keypoints decoded as Ultralytics'
 *             kpts_decode: x = (raw * 2 + cell_x) * stride (cell_x the
 *             integer cell column, i.e. anchor - 0.5), y likewise, and
 *             visibility sigmoid(raw) when D = 3;
 *             then t[1..nl] the maps and t[nl+1] the raw keypoints. */
#include <stdbool.h>
#include <stdio.h>

#include <yolo/detection.h>
#include <yolo/error.h>
#include <yolo/graph.h>
#include <yolo/model.h>
#include <yolo/plugin.h>
#include <yolo/tensor.h>

#include "pose_model_yamls.h" /* generated from the yamls in models/ (CMakeLists.txt) */
#include "pose_task.h"

#define POSE_VERSION "0.1.0"

typedef struct pose_head {
    yolo_det_head det;
    int kpt_count, kpt_dims, nk, c4;
    yolo_det_branch kpt[YOLO_DET_MAX_LEVELS]; /* cv4: raw keypoints */
} pose_head;

/* kpt_shape: argument 1, a list [K, D] with D 2 or 3 (default [17, 3]). */
static yolo_status read_kpt_shape(yolo_module_ctx *ctx, int *count, int *dims) {
    const yolo_arg *a = yolo_module_arg(ctx, 1);
    *count = 17, *dims = 3;
    if (!a || a->kind == YOLO_ARG_NULL) return YOLO_OK;
    if (a->kind != YOLO_ARG_LIST || a->n_items != 2 || a->items[0].kind != YOLO_ARG_INT ||
        a->items[1].kind != YOLO_ARG_INT)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG,
                                 "kpt_shape must be written as a list [count, dims] (got '%s'); the model builder "
                                 "does not resolve yaml keys by name in args",
                                 a->s ? a->s : "a list");
    *count = (int)a->items[0].i, *dims = (int)a->items[1].i;
    if (*count < 1 || *count > 1024 || (*dims != 2 && *dims != 3))
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "kpt_shape [%d, %d]: count 1..1024, dims 2 or 3", *count,
                                 *dims);
    return YOLO_OK;
}

static yolo_status pose_build(yolo_module_ctx *ctx) {
    int nl, ch[YOLO_DET_MAX_LEVELS], kc, kd;
    int64_t nc;
    int model_nc = yolo_module_nc(ctx);
    yolo_status st;
    if ((st = yolo_det_read_channels(ctx, &nl, ch)) ||
        (st = yolo_module_arg_int(ctx, 0, model_nc > 0 ? model_nc : 1, &nc)) || (st = read_kpt_shape(ctx, &kc, &kd)))
        return st;
    pose_head *h = yolo_module_state_alloc(ctx, sizeof *h);
    if (!h) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    h->kpt_count = kc, h->kpt_dims = kd, h->nk = kc * kd;
    h->c4 = ch[0] / 4 > h->nk ? ch[0] / 4 : h->nk;
    if ((st = yolo_det_head_init(ctx, &h->det, (int)nc, nl, ch))) return st;
    if ((st = yolo_det_branches_init(ctx, h->kpt, "cv4", nl, ch, h->c4, h->nk))) return st;
    char chs[96];
    yolo_det_channels_text(nl, ch, chs, sizeof chs);
    yolo_module_set_args_text(ctx, "[%d, [%d, %d], [%s]]", h->det.nc, kc, kd, chs);
    return YOLO_OK;
}

static yolo_status pose_finalize(yolo_module_ctx *ctx, void *state) {
    return yolo_det_head_finalize(ctx, &((pose_head *)state)->det);
}

/* kpts_decode on the graph: kpt [N, nk, A] -> [N, nk, A] in pixels; e holds
 * the cells (Ultralytics' anchors - 0.5) and strides. */
static yolo_tensor *pose_decode(yolo_graph *g, pose_head *h, const yolo_det_anchor_cache *e, yolo_tensor *kpt) {
    int64_t n = kpt->shape[0], a = kpt->shape[2];
    int64_t split[4] = {n, h->kpt_count, h->kpt_dims, a}, flat[3] = {n, h->nk, a};
    yolo_tensor *k = yolo_reshape(g, kpt, 4, split);
    yolo_tensor *parts[3];
    for (int d = 0; d < 2; d++) {
        yolo_tensor *v = yolo_slice(g, k, 2, d, 1);               /* [N, K, 1, A] */
        yolo_tensor *cell = yolo_slice(g, e->anchors, 0, d, 1);   /* [1, A] */
        parts[d] = yolo_mul(g, yolo_add(g, yolo_scale(g, v, 2.0f), cell), e->strides);
    }
    if (h->kpt_dims == 3) parts[2] = yolo_sigmoid(g, yolo_slice(g, k, 2, 2, 1));
    yolo_tensor *y = yolo_concat(g, h->kpt_dims, parts, 2);
    return y ? yolo_reshape(g, y, 3, flat) : NULL;
}

static yolo_status pose_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                yolo_module_outputs *out) {
    pose_head *h = state;
    yolo_graph *g = f->graph;
    int nl = h->det.nl;
    if (n_in != nl) return yolo_error(YOLO_ERR_ARG, "Pose: %d inputs, built for %d", n_in, nl);
    if (nl + 2 > YOLO_MODULE_MAX_OUTPUTS) return yolo_error(YOLO_ERR_ARG, "Pose: %d levels is too many", nl);
    yolo_tensor *ks[YOLO_DET_MAX_LEVELS];
    for (int i = 0; i < nl; i++) ks[i] = yolo_det_branch_forward(f, &h->kpt[i], in[i]);
    yolo_tensor *kpt = yolo_det_flatten_levels(g, nl, ks);
    yolo_tensor *raw[YOLO_DET_MAX_LEVELS];
    yolo_status st = yolo_det_head_raw(f, &h->det, n_in, in, raw);
    if (st) return st;
    if (!kpt) return yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_SHAPE;
    int k = 0;
    if (!f->training) {
        const yolo_det_anchor_cache *e = yolo_det_head_anchors(&h->det, g, raw, 0.0f);
        if (!e) return yolo_error_context(YOLO_ERR_NOMEM, "Pose");
        yolo_tensor *parts[2] = {yolo_det_head_decode(f, &h->det, raw), pose_decode(g, h, e, kpt)};
        out->t[k++] = parts[0] && parts[1] ? yolo_concat(g, 2, parts, 1) : NULL;
        if (!out->t[0]) return yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_NOMEM;
    }
    for (int i = 0; i < nl; i++) out->t[k++] = raw[i];
    out->t[k++] = kpt;
    out->n = k;
    return YOLO_OK;
}

static void pose_destroy(void *state) { yolo_det_head_release(&((pose_head *)state)->det); }

static const yolo_module_type pose_module = {
    .name = "Pose",
    .summary = "YOLOv8 pose head: Detect + per-level keypoint branch (cv4)",
    .build = pose_build,
    .forward = pose_forward,
    .finalize = pose_finalize,
    .destroy = pose_destroy,
};
static const yolo_module_type *const pose_modules[] = {&pose_module};

/* the core keys for some tasks only that pose reads: the detection toolkit's */
static const char *const pose_keys_read[] = {YOLO_DETECTION_KEYS_READ};

static const yolo_task pose_task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR},
    .name = "pose",
    .version = POSE_VERSION,
    .description = "SDK example: YOLOv8 pose (Detect + keypoints, OKS loss and keypoint mAP)",
    .default_model = "yolov8n-pose.yaml",
    .default_data = NULL, /* the shapes-with-keypoints variant is not built yet */
    .modules = pose_modules,
    .n_modules = 1,
    .model_yaml_names = pose_model_yaml_names, /* the yamls in models/, embedded by CMakeLists.txt */
    .model_yaml_texts = pose_model_yaml_texts,
    .n_model_yamls = POSE_N_MODEL_YAMLS,
    .config_keys = pose_config_keys, /* pose, kobj: the keypoint loss gains */
    .n_config_keys = 2,
    .hooks = &pose_task_hooks, /* pose_task.c */
    .task_keys_read = pose_keys_read,
    .n_task_keys_read = (int)(sizeof pose_keys_read / sizeof pose_keys_read[0]),
};

__attribute__((visibility("default"))) const yolo_task *yolo_task_register(void) { return &pose_task; }
