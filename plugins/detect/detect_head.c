/* The Detect module type (yaml args [nc]): the YOLOv8 detection head, built
 * from the core's Detect building blocks (yolo/detection.h, yolo_det_head);
 * with the yaml's end2end and reg_max 1, YOLO26's. v10Detect (YOLOv10) is
 * the same head, always end2end and with the current (depthwise) class
 * branch: its type's flags say both.
 *
 * Outputs of its forward:
 *   training: t[0..nl-1] = per level cat(box, cls) maps [N, 4*reg_max + nc, H_i, W_i];
 *             end2end: t[nl..2nl-1] the one-to-one branch's
 *   eval:     t[0] = [N, 4 + nc, A] decoded boxes (xywh in pixels) and class
 *             probabilities over the A anchors of all levels, from the
 *             one-to-one branch when the model runs end2end; then the raw
 *             maps as in training, unless the forward is for inference
 *             only (f->inference): t[0] alone, and only the branch it
 *             decodes is computed. */
#include <yolo/detection.h>

#include "detect_modules.h"

typedef struct detect_state {
    yolo_det_head det;
    bool end2end;          /* the yaml's end2end: o2o built */
    yolo_det_one2one o2o;  /* YOLO26's one-to-one branch */
} detect_state;

static yolo_status detect_build(yolo_module_ctx *ctx) {
    int nl, ch[YOLO_DET_MAX_LEVELS];
    int64_t nc;
    yolo_status st;
    int model_nc = yolo_module_nc(ctx);
    if ((st = yolo_det_read_channels(ctx, &nl, ch)) ||
        (st = yolo_module_arg_int(ctx, 0, model_nc > 0 ? model_nc : 80, &nc)))
        return st;
    detect_state *s = yolo_module_state_alloc(ctx, sizeof(*s));
    if (!s) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    s->end2end = yolo_module_end2end(ctx);
    if ((st = yolo_det_head_init(ctx, &s->det, (int)nc, nl, ch)) ||
        (s->end2end && (st = yolo_det_one2one_init(ctx, &s->det, &s->o2o))))
        return st;
    char chs[96];
    yolo_det_channels_text(nl, ch, chs, sizeof chs);
    if (s->end2end || s->det.reg_max != YOLO_DET_REG_MAX) /* 8.4's parse_model appends reg_max and end2end */
        yolo_module_set_args_text(ctx, "[%d, %d, %s, [%s]]", s->det.nc, s->det.reg_max,
                                  s->end2end ? "True" : "None", chs);
    else
        yolo_module_set_args_text(ctx, "[%d, [%s]]", s->det.nc, chs);
    return YOLO_OK;
}

static yolo_status detect_finalize(yolo_module_ctx *ctx, void *state) {
    detect_state *s = state;
    yolo_status st = yolo_det_head_finalize(ctx, &s->det);
    return !st && s->end2end ? yolo_det_one2one_finalize(&s->det, &s->o2o) : st;
}

static yolo_status detect_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                  yolo_module_outputs *out) {
    detect_state *s = state;
    yolo_det_head *h = &s->det;
    yolo_tensor *raw[2 * YOLO_DET_MAX_LEVELS];
    const bool one2one = !f->training && s->end2end && yolo_model_end2end(f->model); /* eval decodes o2o */
    const bool inference = f->inference; /* eval only (the core's guarantee): only the decoded branch is read */
    yolo_status st = inference && one2one ? YOLO_OK : yolo_det_head_raw(f, h, n_in, in, raw);
    if (!st && s->end2end && (!inference || one2one)) st = yolo_det_one2one_raw(f, h, &s->o2o, n_in, in, raw + h->nl);
    if (st) return st;
    int k = 0;
    if (!f->training) {
        out->t[k++] = yolo_det_head_decode(f, h, one2one ? raw + h->nl : raw);
        if (!out->t[0]) return yolo_graph_status(f->graph) ? yolo_graph_status(f->graph) : YOLO_ERR_NOMEM;
    }
    for (int i = 0; !inference && i < (s->end2end ? 2 : 1) * h->nl; i++) out->t[k++] = raw[i];
    out->n = k;
    return YOLO_OK;
}

static void detect_destroy(void *state) { yolo_det_head_release(&((detect_state *)state)->det); }

static const yolo_module_type detect_module_type = {
    .name = "Detect",
    .summary = "YOLOv8 detection head: per level box (DFL, reg_max 16) and class branches; YOLO26's one-to-one copies",
    .build = detect_build,
    .forward = detect_forward,
    .finalize = detect_finalize,
    .destroy = detect_destroy,
};

static const yolo_module_type v10detect_module_type = {
    .name = "v10Detect",
    .summary = "YOLOv10 detection head: Detect with its one-to-one copies always, depthwise class branches",
    .build = detect_build,
    .forward = detect_forward,
    .finalize = detect_finalize,
    .destroy = detect_destroy,
    .flags = YOLO_MODULE_END2END | YOLO_MODULE_CURRENT_HEADS,
};

const yolo_module_type *const detect_modules[DETECT_N_MODULES] = {&detect_module_type, &v10detect_module_type};
