/* The segment heads (Ultralytics ultralytics/nn/modules/head.py Segment and
 * Segment26, block.py Proto and Proto26): Detect plus mask prototypes and
 * per-anchor mask coefficients. yaml args [nc, nm=32, npr=256]; npr is
 * scaled by the width rule (64 at scale n).
 *
 * Segment (YOLOv8, YOLO11): Proto(P3) = cv3(cv2(upsample(cv1(P3)))).
 * Segment26 (YOLO26-seg): Proto26 first fuses the levels, feat = P3 +
 * nearest-upsampled feat_refine[i](P_{4+i}) (1x1 Convs to P3's channels),
 * then Proto's layers on feat_fuse(feat) (a 3x3 Conv to npr); while
 * training it also gives semseg(feat), per-class logits at P3's resolution
 * for an auxiliary semantic loss. With the yaml's end2end (YOLO26) the head
 * has one-to-one copies of the box, class and coefficient branches
 * (one2one_cv2/cv3/cv4), on detached features while training.
 *
 * Outputs of its forward (nl feature levels, A anchors, b = 2 branches when
 * end2end, else 1):
 *   training: the level maps [N, 4*reg_max + nc, H_i, W_i] (b * nl: the
 *             one-to-many branch's, then the one-to-one's), the mask
 *             coefficients [N, nm, A] (b: same order), Segment26's semantic
 *             logits [N, nc, H_0, W_0], then the prototypes [N, nm, 2 H_0,
 *             2 W_0] (stride 4 at P3 input), always last.
 *   eval:     t[0] = [N, 4 + nc + nm, A] (decoded boxes, class
 *             probabilities, coefficients; the one-to-one branch's when the
 *             model runs end2end), then the training outputs without the
 *             semantic logits (Ultralytics' eval Proto26 returns the
 *             prototypes only). For inference only (f->inference), t[0] and
 *             the prototypes. */

#include <stdio.h>

#include <yolo/detection.h>

#include "segment_modules.h"

typedef struct segment_head {
    yolo_det_head det;
    bool end2end, proto26;
    yolo_det_one2one o2o;
    int nm, npr, c4;
    yolo_conv_block proto_cv1, proto_cv2, proto_cv3;
    yolo_conv_layer proto_upsample;
    /* Proto26 */
    yolo_conv_block refine[YOLO_DET_MAX_LEVELS], fuse, sem[2];
    yolo_conv_layer sem_pred;
    yolo_det_branch coef[YOLO_DET_MAX_LEVELS];     /* cv4: mask coefficients */
    yolo_det_branch coef_o2o[YOLO_DET_MAX_LEVELS]; /* one2one_cv4 */
} segment_head;

/* Proto26's own layers, in Ultralytics' order: after Proto's (its super
 * class), feat_refine, feat_fuse and semseg. */
static yolo_status proto26_init(yolo_module_ctx *ctx, segment_head *h, int nl, const int *ch) {
    yolo_status st = YOLO_OK;
    char name[48];
    for (int i = 1; i < nl && !st; i++) {
        snprintf(name, sizeof name, "proto.feat_refine.%d", i - 1);
        st = yolo_conv_block_init(ctx, &h->refine[i - 1], name, ch[i], ch[0], 1, 1, YOLO_AUTOPAD, 1, 1,
                                  YOLO_ACT_DEFAULT);
    }
    if (!st)
        st = yolo_conv_block_init(ctx, &h->fuse, "proto.feat_fuse", ch[0], h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                  YOLO_ACT_DEFAULT);
    if (!st)
        st = yolo_conv_block_init(ctx, &h->sem[0], "proto.semseg.0", ch[0], h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                  YOLO_ACT_DEFAULT);
    if (!st)
        st = yolo_conv_block_init(ctx, &h->sem[1], "proto.semseg.1", h->npr, h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                  YOLO_ACT_DEFAULT);
    if (!st)
        st = yolo_conv_layer_init(ctx, &h->sem_pred, "proto.semseg.2", h->npr, h->det.nc, 1, 1, 0, 1, true, true);
    return st;
}

static yolo_status segment_build(yolo_module_ctx *ctx, bool proto26) {
    int nl, ch[YOLO_DET_MAX_LEVELS];
    int64_t nc, nm, npr;
    int model_nc = yolo_module_nc(ctx);
    yolo_status st;
    if ((st = yolo_det_read_channels(ctx, &nl, ch)) ||
        (st = yolo_module_arg_int(ctx, 0, model_nc > 0 ? model_nc : 80, &nc)) ||
        (st = yolo_module_arg_int(ctx, 1, 32, &nm)) || (st = yolo_module_arg_int(ctx, 2, 256, &npr)))
        return st;
    if (nm < 1 || nm > 1024 || npr < 1 || npr > 4096)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "nm=%lld npr=%lld out of range", (long long)nm, (long long)npr);
    segment_head *h = yolo_module_state_alloc(ctx, sizeof(*h));
    if (!h) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    h->end2end = yolo_module_end2end(ctx);
    h->proto26 = proto26;
    h->nm = (int)nm;
    h->npr = yolo_module_scale_width(ctx, (int)npr);
    h->c4 = ch[0] / 4 > h->nm ? ch[0] / 4 : h->nm;
    if ((st = yolo_det_head_init(ctx, &h->det, (int)nc, nl, ch)) ||
        (h->end2end && (st = yolo_det_one2one_init(ctx, &h->det, &h->o2o))))
        return st;
    /* Proto(c1, npr, nm); Proto26 feeds it feat_fuse's npr channels */
    const int c1 = proto26 ? h->npr : ch[0];
    if ((st = yolo_conv_block_init(ctx, &h->proto_cv1, "proto.cv1", c1, h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_transpose_layer_init(ctx, &h->proto_upsample, "proto.upsample", h->npr, h->npr, 2, 2, 0,
                                             true)) ||
        (st = yolo_conv_block_init(ctx, &h->proto_cv2, "proto.cv2", h->npr, h->npr, 3, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)) ||
        (st = yolo_conv_block_init(ctx, &h->proto_cv3, "proto.cv3", h->npr, h->nm, 1, 1, YOLO_AUTOPAD, 1, 1,
                                   YOLO_ACT_DEFAULT)) ||
        (proto26 && (st = proto26_init(ctx, h, nl, ch))))
        return st;
    if ((st = yolo_det_branches_init(ctx, h->coef, "cv4", nl, ch, h->c4, h->nm))) return st;
    if (h->end2end) {
        yolo_module_add_leaves(ctx, 1); /* the deep-copied branch list's own SiLU (yolo_det_one2one_init) */
        if ((st = yolo_det_branches_init(ctx, h->coef_o2o, "one2one_cv4", nl, ch, h->c4, h->nm))) return st;
    }
    char chs[96];
    yolo_det_channels_text(nl, ch, chs, sizeof chs);
    if (h->end2end || h->det.reg_max != YOLO_DET_REG_MAX) /* 8.4's parse_model appends reg_max and end2end */
        yolo_module_set_args_text(ctx, "[%d, %d, %d, %d, %s, [%s]]", h->det.nc, h->nm, h->npr, h->det.reg_max,
                                  h->end2end ? "True" : "None", chs);
    else
        yolo_module_set_args_text(ctx, "[%d, %d, %d, [%s]]", h->det.nc, h->nm, h->npr, chs);
    return YOLO_OK;
}

static yolo_status segment_build_v8(yolo_module_ctx *ctx) {
    if (yolo_module_end2end(ctx)) /* Ultralytics' one-to-one Segment head is Segment26's, with Proto26 */
        return yolo_module_error(ctx, YOLO_ERR_UNSUPPORTED, "end2end True: Segment has no one-to-one branch here; "
                                 "YOLO26-seg's head is Segment26 (yolo26-seg.yaml)");
    return segment_build(ctx, false);
}

static yolo_status segment_build_26(yolo_module_ctx *ctx) { return segment_build(ctx, true); }

static yolo_status segment_finalize(yolo_module_ctx *ctx, void *state) {
    segment_head *h = state;
    yolo_status st = yolo_det_head_finalize(ctx, &h->det);
    return !st && h->end2end ? yolo_det_one2one_finalize(&h->det, &h->o2o) : st;
}

/* Proto26's fused feature: P3 + each coarser level refined to P3's
 * channels and upsampled (nearest) to P3's size. */
static yolo_tensor *fused_feature(const yolo_forward_ctx *f, const segment_head *h, yolo_tensor *const *in) {
    yolo_tensor *feat = in[0];
    for (int i = 1; i < h->det.nl && feat; i++) {
        yolo_tensor *r = yolo_conv_block_forward(f, &h->refine[i - 1], in[i]);
        if (!r) return NULL;
        int64_t factor = feat->shape[2] / r->shape[2];
        if (factor < 1 || r->shape[2] * factor != feat->shape[2] || r->shape[3] * factor != feat->shape[3]) {
            yolo_error(YOLO_ERR_SHAPE, "Segment26: level %d (%lldx%lld) is not a whole fraction of "
                            "P3 (%lldx%lld)", i, (long long)r->shape[2], (long long)r->shape[3],
                            (long long)feat->shape[2], (long long)feat->shape[3]);
            return NULL;
        }
        feat = yolo_add(f->graph, feat, factor > 1 ? yolo_upsample_nearest(f->graph, r, (int)factor) : r);
    }
    return feat;
}

/* The mask coefficients [N, nm, A] of one branch (detached inputs: one-to-one while training). */
static yolo_tensor *coefficients(const yolo_forward_ctx *f, const segment_head *h, const yolo_det_branch *b,
                                 yolo_tensor *const *in, bool detach) {
    yolo_tensor *mcs[YOLO_DET_MAX_LEVELS];
    for (int i = 0; i < h->det.nl; i++) {
        yolo_tensor *x = detach ? yolo_detach(f->graph, in[i]) : in[i];
        mcs[i] = x ? yolo_det_branch_forward(f, &b[i], x) : NULL;
    }
    return yolo_det_flatten_levels(f->graph, h->det.nl, mcs);
}

static yolo_status segment_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                   yolo_module_outputs *out) {
    segment_head *h = state;
    yolo_graph *g = f->graph;
    const int nl = h->det.nl;
    if (n_in != nl) return yolo_error(YOLO_ERR_ARG, "Segment: %d inputs, built for %d", n_in, nl);
    const bool one2one = !f->training && h->end2end && yolo_model_end2end(f->model); /* eval decodes o2o */
    const bool inference = f->inference, many = !(inference && one2one), o2o = h->end2end && (!inference || one2one);
    yolo_tensor *feat = h->proto26 ? fused_feature(f, h, in) : in[0];
    yolo_tensor *p = feat && h->proto26 ? yolo_conv_block_forward(f, &h->fuse, feat) : feat;
    p = yolo_conv_block_forward(f, &h->proto_cv1, p);
    p = yolo_conv_block_forward(f, &h->proto_cv2, yolo_conv_transpose_layer_forward(f, &h->proto_upsample, p));
    p = yolo_conv_block_forward(f, &h->proto_cv3, p);
    yolo_tensor *sem = NULL;
    if (h->proto26 && f->training) {
        sem = yolo_conv_block_forward(f, &h->sem[1], yolo_conv_block_forward(f, &h->sem[0], feat));
        sem = yolo_conv_layer_forward(f, &h->sem_pred, sem);
    }
    yolo_tensor *raw[2 * YOLO_DET_MAX_LEVELS], *mc[2] = {NULL, NULL};
    yolo_status st = many ? yolo_det_head_raw(f, &h->det, n_in, in, raw) : YOLO_OK;
    if (!st && o2o) st = yolo_det_one2one_raw(f, &h->det, &h->o2o, n_in, in, raw + nl);
    if (st) return st;
    if (many) mc[0] = coefficients(f, h, h->coef, in, false);
    if (o2o) mc[1] = coefficients(f, h, h->coef_o2o, in, f->training);
    if (!p || (many && !mc[0]) || (o2o && !mc[1]) || (h->proto26 && f->training && !sem))
        return yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_SHAPE;
    int k = 0;
    if (!f->training) {
        yolo_tensor *parts[2] = {yolo_det_head_decode(f, &h->det, one2one ? raw + nl : raw), one2one ? mc[1] : mc[0]};
        out->t[k++] = parts[0] ? yolo_concat(g, 2, parts, 1) : NULL;
        if (!out->t[0]) return yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_NOMEM;
    }
    if (!inference) {
        const int branches = h->end2end ? 2 : 1;
        for (int i = 0; i < branches * nl; i++) out->t[k++] = raw[i];
        for (int b = 0; b < branches; b++) out->t[k++] = mc[b];
        if (sem) out->t[k++] = sem;
    }
    out->t[k++] = p;
    out->n = k;
    return YOLO_OK;
}

static void segment_destroy(void *state) { yolo_det_head_release(&((segment_head *)state)->det); }

static const yolo_module_type segment_module_type = {
    .name = "Segment",
    .summary = "YOLOv8 segmentation head: Detect + mask prototypes (Proto) and coefficients",
    .build = segment_build_v8,
    .forward = segment_forward,
    .finalize = segment_finalize,
    .destroy = segment_destroy,
};

static const yolo_module_type segment26_module_type = {
    .name = "Segment26",
    .summary = "YOLO26 segmentation head: Segment with multi-level prototypes (Proto26), an auxiliary semantic "
               "branch while training, and YOLO26's one-to-one copies",
    .build = segment_build_26,
    .forward = segment_forward,
    .finalize = segment_finalize,
    .destroy = segment_destroy,
};

const yolo_module_type *const segment_modules[SEGMENT_N_MODULES] = {&segment_module_type, &segment26_module_type};
