/* The Detect module type (yaml args [nc]): the YOLOv8 detection head, built
 * from the core's Detect building blocks (yolo/detection.h, yolo_det_head).
 *
 * Outputs of its forward:
 *   training: t[0..nl-1] = per level cat(box, cls) maps [N, 4*16 + nc, H_i, W_i]
 *   eval:     t[0] = [N, 4 + nc, A] decoded boxes (xywh in pixels) and class
 *             probabilities over the A anchors of all levels; t[1..nl] the
 *             raw maps as in training. */
#include <yolo/detection.h>

#include "detect_modules.h"

static yolo_status detect_build(yolo_module_ctx *ctx) {
    int nl, ch[YOLO_DET_MAX_LEVELS];
    int64_t nc;
    yolo_status st;
    int model_nc = yolo_module_nc(ctx);
    if ((st = yolo_det_read_channels(ctx, &nl, ch)) ||
        (st = yolo_module_arg_int(ctx, 0, model_nc > 0 ? model_nc : 80, &nc)))
        return st;
    yolo_det_head *h = yolo_module_state_alloc(ctx, sizeof(*h));
    if (!h) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    if ((st = yolo_det_head_init(ctx, h, (int)nc, nl, ch))) return st;
    char chs[96];
    yolo_det_channels_text(nl, ch, chs, sizeof chs);
    yolo_module_set_args_text(ctx, "[%d, [%s]]", h->nc, chs);
    return YOLO_OK;
}

static yolo_status detect_finalize(yolo_module_ctx *ctx, void *state) { return yolo_det_head_finalize(ctx, state); }

static yolo_status detect_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                  yolo_module_outputs *out) {
    yolo_det_head *h = state;
    yolo_tensor *raw[YOLO_DET_MAX_LEVELS];
    yolo_status st = yolo_det_head_raw(f, h, n_in, in, raw);
    if (st) return st;
    int k = 0;
    if (!f->training) {
        out->t[k++] = yolo_det_head_decode(f, h, raw);
        if (!out->t[0]) return yolo_graph_status(f->graph) ? yolo_graph_status(f->graph) : YOLO_ERR_NOMEM;
    }
    for (int i = 0; i < h->nl; i++) out->t[k++] = raw[i];
    out->n = k;
    return YOLO_OK;
}

static void detect_destroy(void *state) { yolo_det_head_release(state); }

static const yolo_module_type detect_module_type = {
    .name = "Detect",
    .summary = "YOLOv8 detection head: per level box (DFL, reg_max 16) and class branches",
    .build = detect_build,
    .forward = detect_forward,
    .finalize = detect_finalize,
    .destroy = detect_destroy,
};

const yolo_module_type *const detect_modules[DETECT_N_MODULES] = {&detect_module_type};
