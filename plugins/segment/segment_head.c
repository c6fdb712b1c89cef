/* The YOLOv8 Segment head (Ultralytics ultralytics/nn/modules/head.py
 * Segment and block.py Proto): Detect plus mask prototypes and per-anchor
 * mask coefficients. yaml args [nc, nm=32, npr=256]; npr is scaled by the
 * width rule (64 at scale n).
 *
 * Outputs of its forward (nl feature levels, A anchors):
 *   training: t[0..nl-1] the Detect maps [N, 4*16 + nc, H_i, W_i],
 *             t[nl] = mask coefficients [N, nm, A],
 *             t[nl+1] = prototypes [N, nm, H_0*2, W_0*2] (stride 4 at P3 input)
 *   eval:     t[0] = [N, 4 + nc + nm, A] (decoded boxes, class probabilities,
 *             coefficients), then t[1..nl] the maps, t[nl+1] the
 *             coefficients and t[nl+2] the prototypes. */

#include <yolo/detection.h>

#include "segment_modules.h"

typedef struct segment_head {
    yolo_det_head det;
    int nm, npr, c4;
    yolo_conv_block proto_cv1, proto_cv2, proto_cv3;
    yolo_conv_layer proto_upsample;
    yolo_det_branch coef[YOLO_DET_MAX_LEVELS]; /* cv4: mask coefficients */
} segment_head;

static yolo_status segment_build(yolo_module_ctx *ctx) {
    int nl, ch[YOLO_DET_MAX_LEVELS];
    int64_t nc, nm, npr;
    int model_nc = yolo_module_nc(ctx);
    yolo_status st;
    if ((st = yolo_det_read_channels(ctx, &nl, ch)) ||
        (st = yolo_module_arg_int(ctx, 0, model_nc > 0 ? model_nc : 80, &nc)) ||
        (st = yolo_module_arg_int(ctx, 1, 32, &nm)) || (st = yolo_module_arg_int(ctx, 2, 256, &npr)))
        return st;
    if (yolo_module_end2end(ctx)) /* its one-to-one branch would need its own mask coefficients (Segment26) */
        return yolo_module_error(ctx, YOLO_ERR_UNSUPPORTED, "end2end True: a one-to-one Segment head (YOLO26-seg's "
                                 "Segment26) is not built; Segment runs with end2end False");
    if (nm < 1 || nm > 1024 || npr < 1 || npr > 4096)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "nm=%lld npr=%lld out of range", (long long)nm, (long long)npr);
    segment_head *h = yolo_module_state_alloc(ctx, sizeof(*h));
    if (!h) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    h->nm = (int)nm;
    h->npr = yolo_module_scale_width(ctx, (int)npr);
    h->c4 = ch[0] / 4 > h->nm ? ch[0] / 4 : h->nm;
    if ((st = yolo_det_head_init(ctx, &h->det, (int)nc, nl, ch))) return st;
    /* Proto(ch[0], npr, nm) */
    if ((st = yolo_conv_block_init(ctx, &h->proto_cv1, "proto.cv1", ch[0], h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_transpose_layer_init(ctx, &h->proto_upsample, "proto.upsample", h->npr, h->npr, 2, 2, 0,
                                             true)) ||
        (st = yolo_conv_block_init(ctx, &h->proto_cv2, "proto.cv2", h->npr, h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &h->proto_cv3, "proto.cv3", h->npr, h->nm, 1, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)))
        return st;
    if ((st = yolo_det_branches_init(ctx, h->coef, "cv4", nl, ch, h->c4, h->nm))) return st;
    char chs[96];
    yolo_det_channels_text(nl, ch, chs, sizeof chs);
    yolo_module_set_args_text(ctx, "[%d, %d, %d, [%s]]", h->det.nc, h->nm, h->npr, chs);
    return YOLO_OK;
}

static yolo_status segment_finalize(yolo_module_ctx *ctx, void *state) {
    return yolo_det_head_finalize(ctx, &((segment_head *)state)->det);
}

static yolo_status segment_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                   yolo_module_outputs *out) {
    segment_head *h = state;
    yolo_graph *g = f->graph;
    int nl = h->det.nl;
    if (n_in != nl) return yolo_error(YOLO_ERR_ARG, "Segment: %d inputs, built for %d", n_in, nl);
    yolo_tensor *p = yolo_conv_block_forward(f, &h->proto_cv1, in[0]);
    p = yolo_conv_block_forward(f, &h->proto_cv2, yolo_conv_transpose_layer_forward(f, &h->proto_upsample, p));
    p = yolo_conv_block_forward(f, &h->proto_cv3, p);
    yolo_tensor *mcs[YOLO_DET_MAX_LEVELS];
    for (int i = 0; i < nl; i++) mcs[i] = yolo_det_branch_forward(f, &h->coef[i], in[i]);
    yolo_tensor *mc = yolo_det_flatten_levels(g, nl, mcs);
    yolo_tensor *raw[YOLO_DET_MAX_LEVELS];
    yolo_status st = yolo_det_head_raw(f, &h->det, n_in, in, raw);
    if (st) return st;
    if (!p || !mc) return yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_SHAPE;
    int k = 0;
    if (!f->training) {
        yolo_tensor *parts[2] = {yolo_det_head_decode(f, &h->det, raw), mc};
        out->t[k++] = parts[0] ? yolo_concat(g, 2, parts, 1) : NULL;
        if (!out->t[0]) return yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_NOMEM;
    }
    for (int i = 0; i < nl; i++) out->t[k++] = raw[i];
    out->t[k++] = mc;
    out->t[k++] = p;
    out->n = k;
    return YOLO_OK;
}

static void segment_destroy(void *state) { yolo_det_head_release(&((segment_head *)state)->det); }

static const yolo_module_type segment_module_type = {
    .name = "Segment",
    .summary = "YOLOv8 segmentation head: Detect + mask prototypes (Proto) and coefficients",
    .build = segment_build,
    .forward = segment_forward,
    .finalize = segment_finalize,
    .destroy = segment_destroy,
};

const yolo_module_type *const segment_modules[SEGMENT_N_MODULES] = {&segment_module_type};
