/* criterion.c — the detection loss of a head's level maps (yolo/detection.h,
 * yolo_det_criterion): the host-side glue between a task's loss_compute
 * hook and v8DetectionLoss.
 *
 * The training-layout maps [B, 4*reg_max + nc, H_l, W_l] are gathered into
 * [B, C, A], the batch's instances become xyxy pixels of the batch image,
 * the assigner and the loss run on the host and the gradient is scattered
 * back to the per-level layout. The assignment stays readable until the
 * next call, for the per-anchor terms of tasks that extend detection.
 *
 * An end2end model (YOLO26) gives 2 nl maps: the one-to-many branch's, then
 * the one-to-one branch's. Ultralytics 8.4's E2ELoss: each branch its own
 * v8DetectionLoss (topk 10; topk 7 then topk2 1), both with STAL; the loss
 * is o2m * L_o2m + (1 - o2m) * L_o2o with o2m = 0.8 at the first epoch
 * falling linearly to 0.1 at the last ("ProgLoss"), and the logged items
 * are the one-to-one branch's. */
#include <stdlib.h>
#include <string.h>

#include "loss_internal.h"
#include "yolo/detection.h"

/* One branch's scratch: its gathered maps, gradient and assignment. */
typedef struct criterion_branch {
    float *head, *grad;
    size_t head_cap, grad_cap;
    int32_t *gt_index;
    float *score;
    size_t asg_cap;
} criterion_branch;

struct yolo_det_criterion {
    yolo_det_loss_params p;
    yolo_task_context ranks; /* the context p.ranks points to (DDP normaliser) */
    float *class_weights;    /* cls_pw's [nc] (yolo_task_context.class_weights), or NULL */
    int n_model_strides;
    int model_strides[YOLO_DET_MAX_LEVELS];
    bool end2end;            /* the model's one-to-one branch follows the one-to-many maps */
    int64_t epochs;          /* for the end2end weights */
    /* anchors of the last input size */
    int nl, h[YOLO_DET_MAX_LEVELS], w[YOLO_DET_MAX_LEVELS];
    float stride[YOLO_DET_MAX_LEVELS];
    int n_anchors;
    float *anchor_xy, *anchor_stride;
    /* scratch */
    criterion_branch branch[2]; /* one-to-many, one-to-one */
    int branches;                   /* of the last compute (yolo_det_criterion_branch_of) */
    yolo_det_loss_value branch_value[2];
    double branch_weight[2];
    float *gt_boxes;
    int32_t *gt_cls;
    size_t gt_cap;
};

static yolo_status cfg_gain(const yolo_config *cfg, const char *key, float *gain) {
    if (!cfg || !yolo_config_find_key(cfg, key) || yolo_config_is_null(cfg, key)) return YOLO_OK;
    double v;
    yolo_status st = yolo_config_get_float(cfg, key, &v);
    if (!st) *gain = (float)v;
    return st;
}

yolo_status yolo_det_criterion_create(const yolo_task_context *ctx, yolo_det_criterion **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_det_criterion_create: NULL output");
    *out = NULL;
    yolo_det_criterion *c = calloc(1, sizeof *c);
    if (!c) return yolo_error(YOLO_ERR_NOMEM, "detection loss: out of memory");
    c->p = yolo_det_loss_default_params(ctx && ctx->nc > 0 ? ctx->nc : 1);
    if (ctx) { /* its rank_mean, under DDP, makes the normaliser global; a copy, ctx may be a temporary */
        c->ranks = *ctx;
        c->p.ranks = &c->ranks;
    }
    const yolo_config *cfg = ctx ? ctx->cfg : NULL;
    yolo_status st = cfg_gain(cfg, "box", &c->p.box_gain);
    if (!st) st = cfg_gain(cfg, "cls", &c->p.cls_gain);
    if (!st) st = cfg_gain(cfg, "dfl", &c->p.dfl_gain);
    if (st) {
        free(c);
        return yolo_error_context(st, "detection loss");
    }
    if (ctx && ctx->class_weights) { /* a copy: the context's may not outlive the criterion */
        c->class_weights = malloc((size_t)c->p.nc * sizeof *c->class_weights);
        if (!c->class_weights) {
            const int nc = c->p.nc;
            free(c);
            return yolo_error(YOLO_ERR_NOMEM, "detection loss: out of memory for %d class weights", nc);
        }
        memcpy(c->class_weights, ctx->class_weights, (size_t)c->p.nc * sizeof *c->class_weights);
    }
    if (ctx && ctx->model) {
        int n = yolo_model_strides(ctx->model, c->model_strides, YOLO_DET_MAX_LEVELS);
        c->n_model_strides = n > YOLO_DET_MAX_LEVELS ? 0 : n;
        c->p.reg_max = yolo_model_reg_max(ctx->model);
        c->end2end = yolo_model_has_end2end_head(ctx->model);
    }
    c->epochs = 100;
    if (cfg && yolo_config_find_key(cfg, "epochs") && !yolo_config_is_null(cfg, "epochs") &&
        yolo_config_get_int(cfg, "epochs", &c->epochs)) {
        yolo_det_criterion_free(c);
        return yolo_error_context(YOLO_ERR_CONFIG, "detection loss");
    }
    *out = c;
    return YOLO_OK;
}

void yolo_det_criterion_free(yolo_det_criterion *c) {
    if (!c) return;
    free(c->anchor_xy), free(c->anchor_stride), free(c->gt_boxes), free(c->gt_cls), free(c->class_weights);
    for (int b = 0; b < 2; b++) {
        criterion_branch *r = &c->branch[b];
        free(r->head), free(r->grad), free(r->gt_index), free(r->score);
    }
    free(c);
}

yolo_det_loss_params *yolo_det_criterion_params(yolo_det_criterion *c) { return c ? &c->p : NULL; }

/* Anchors for this input size (kept while the size stays the same). The
 * strides are the model's; without a model, the batch image's height over
 * each map's. */
static yolo_status criterion_anchors(yolo_det_criterion *c, const yolo_batch *batch, int nl, const int *h,
                                     const int *w) {
    float stride[YOLO_DET_MAX_LEVELS];
    for (int l = 0; l < nl; l++)
        stride[l] = c->n_model_strides == nl ? (float)c->model_strides[l] : (float)batch->height / (float)h[l];
    bool same = c->anchor_xy && c->nl == nl;
    for (int l = 0; same && l < nl; l++) same = c->h[l] == h[l] && c->w[l] == w[l] && c->stride[l] == stride[l];
    if (same) return YOLO_OK;
    int64_t A = 0;
    for (int l = 0; l < nl; l++) A += (int64_t)h[l] * w[l];
    if (A > INT32_MAX / 64) return yolo_error(YOLO_ERR_SHAPE, "detection loss: %lld anchors is too many", (long long)A);
    float *xy = malloc((size_t)A * 2 * sizeof(float)), *st = malloc((size_t)A * sizeof(float));
    if (!xy || !st) {
        free(xy), free(st);
        return yolo_error(YOLO_ERR_NOMEM, "detection loss: out of memory for %lld anchors", (long long)A);
    }
    yolo_status rc = yolo_det_make_anchors(nl, h, w, stride, 0.5f, xy, st);
    if (rc) {
        free(xy), free(st);
        return rc;
    }
    free(c->anchor_xy), free(c->anchor_stride);
    c->anchor_xy = xy, c->anchor_stride = st;
    c->nl = nl, c->n_anchors = (int)A;
    for (int l = 0; l < nl; l++) c->h[l] = h[l], c->w[l] = w[l], c->stride[l] = stride[l];
    return YOLO_OK;
}

static yolo_status grow(void **buf, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap && *buf) return YOLO_OK;
    void *a = realloc(*buf, (need ? need : 1) * elem);
    if (!a) return yolo_error(YOLO_ERR_NOMEM, "detection loss: out of memory for %zu values", need);
    *buf = a;
    *cap = need;
    return YOLO_OK;
}

static yolo_status check_map(const char *who, const yolo_host_tensor *t, int i, int64_t batch, int64_t channels) {
    if (!t->data || t->ndim != 4 || t->shape[0] != batch || t->shape[1] != channels || t->shape[2] <= 0 ||
        t->shape[3] <= 0 || t->shape[2] > INT32_MAX || t->shape[3] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE,
                          "%s: output %d must be a map [%lld, %lld, H, W], got ndim %d [%lld, %lld, %lld, %lld]",
                          who, i, (long long)batch, (long long)channels, t->ndim, (long long)t->shape[0],
                          (long long)(t->ndim > 1 ? t->shape[1] : 0), (long long)(t->ndim > 2 ? t->shape[2] : 0),
                          (long long)(t->ndim > 3 ? t->shape[3] : 0));
    return YOLO_OK;
}

yolo_status yolo_det_gt_from_batch(const yolo_batch *batch, float *boxes, int32_t *cls) {
    const yolo_instances *ins = &batch->instances;
    int n = ins->n;
    if (n < 0 || (n > 0 && (!ins->cls || !ins->boxes || !batch->batch_idx || !boxes || !cls)))
        return yolo_error(YOLO_ERR_ARG, "the batch's %d instances lack their arrays", n);
    float W = (float)batch->width, H = (float)batch->height;
    for (int k = 0; k < n; k++) {
        const float *b = ins->boxes + 4 * (size_t)k;
        float xywh[4] = {b[0] * W, b[1] * H, b[2] * W, b[3] * H};
        yolo_box_xywh_to_xyxy(xywh, boxes + 4 * (size_t)k, 1);
        cls[k] = ins->cls[k];
    }
    return YOLO_OK;
}

/* Checks the nl maps (and gradients) of one branch, all [B, C, H_l, W_l]. */
static yolo_status check_maps(const char *who, int B, int64_t C, int first, int nl, const yolo_host_tensor *maps,
                              const yolo_host_tensor *grads, const yolo_host_tensor *like) {
    for (int l = 0; l < nl; l++) {
        const yolo_host_tensor *m = &maps[l];
        yolo_status st = check_map(who, m, first + l, B, C);
        if (!st && (m->shape[2] != like[l].shape[2] || m->shape[3] != like[l].shape[3]))
            st = yolo_error(YOLO_ERR_SHAPE, "%s: output %d is %lldx%lld, output %d %lldx%lld", who, first + l,
                            (long long)m->shape[2], (long long)m->shape[3], l, (long long)like[l].shape[2],
                            (long long)like[l].shape[3]);
        if (!st && grads) {
            st = check_map(who, &grads[l], first + l, B, C);
            if (!st && (grads[l].shape[2] != m->shape[2] || grads[l].shape[3] != m->shape[3]))
                st = yolo_error(YOLO_ERR_SHAPE, "%s: gradient %d is %lldx%lld, its output %lldx%lld", who, first + l,
                                (long long)grads[l].shape[2], (long long)grads[l].shape[3], (long long)m->shape[2],
                                (long long)m->shape[3]);
        }
        if (st) return st;
    }
    return YOLO_OK;
}

/* One branch's loss: gather, assign, loss, gradient scattered (times `weight`). */
static yolo_status branch_compute(yolo_det_criterion *c, criterion_branch *r, const yolo_batch *batch, int nl,
                                  const yolo_host_tensor *maps, yolo_host_tensor *grads, const yolo_det_loss_params *p,
                                  const det_assign_options *ao, double weight, yolo_det_loss_value *value) {
    const int64_t B = batch->n, C = maps[0].shape[1];
    const int A = c->n_anchors;
    size_t need = (size_t)B * (size_t)C * (size_t)A;
    yolo_status st = grow((void **)&r->head, &r->head_cap, need, sizeof(float));
    if (!st && grads) st = grow((void **)&r->grad, &r->grad_cap, need, sizeof(float));
    if (!st && (size_t)B * A > r->asg_cap) {
        size_t cap = r->asg_cap;
        st = grow((void **)&r->gt_index, &cap, (size_t)B * A, sizeof(int32_t));
        cap = r->asg_cap;
        if (!st) st = grow((void **)&r->score, &cap, (size_t)B * A, sizeof(float));
        if (!st) r->asg_cap = (size_t)B * A;
    }
    if (st) return st;
    const float *levels[YOLO_DET_MAX_LEVELS];
    for (int l = 0; l < nl; l++) levels[l] = maps[l].data;
    yolo_det_levels_gather(levels, nl, c->h, c->w, (int)B, (int)C, r->head);
    yolo_det_gt_batch gt = {batch->instances.n, batch->batch_idx, c->gt_cls, c->gt_boxes};
    yolo_det_assignment asg = {r->gt_index, r->score};
    det_loss_options lo = {c->class_weights, (float)batch->width, (float)batch->height};
    st = det_assign(p, ao, (int)B, A, r->head, c->anchor_xy, c->anchor_stride, &gt, &asg);
    if (!st)
        st = det_loss_assigned(p, &lo, (int)B, A, r->head, c->anchor_xy, c->anchor_stride, &gt, &asg, value,
                               grads ? r->grad : NULL);
    if (st || !grads) return st;
    if (weight != 1.0)
        for (size_t i = 0; i < need; i++) r->grad[i] = (float)(r->grad[i] * weight);
    float *glevels[YOLO_DET_MAX_LEVELS];
    for (int l = 0; l < nl; l++) glevels[l] = grads[l].data;
    yolo_det_levels_scatter(r->grad, nl, c->h, c->w, (int)B, (int)C, glevels);
    return YOLO_OK;
}

yolo_status yolo_det_criterion_compute(yolo_det_criterion *c, const char *who, const yolo_batch *batch,
                                       int n_levels, const yolo_host_tensor *maps, yolo_host_tensor *grads,
                                       yolo_det_criterion_result *out) {
    if (!who) who = "detection loss";
    if (!c || !batch || !maps || !out)
        return yolo_error(YOLO_ERR_ARG, "%s: NULL criterion, batch, outputs or result", who);
    const int R = c->p.reg_max, branches = c->end2end ? 2 : 1;
    if (n_levels < branches || n_levels % branches || n_levels / branches > YOLO_DET_MAX_LEVELS)
        return yolo_error(YOLO_ERR_ARG, "%s: %d level maps, expected %s1..%d", who, n_levels,
                          c->end2end ? "twice (one-to-many, then one-to-one) " : "", YOLO_DET_MAX_LEVELS);
    if (batch->n <= 0 || batch->width <= 0 || batch->height <= 0)
        return yolo_error(YOLO_ERR_ARG, "%s: batch of %d images %dx%d", who, batch->n, batch->width, batch->height);
    if (maps[0].ndim != 4 || maps[0].shape[1] < 4 * R + 1 || maps[0].shape[1] > INT32_MAX)
        return yolo_error(YOLO_ERR_SHAPE, "%s: output 0 must be a map [%d, %d + nc, H, W], got ndim %d", who, batch->n,
                          4 * R, maps[0].ndim);
    const int nl = n_levels / branches;
    const int64_t B = batch->n, C = maps[0].shape[1];
    for (int b = 0; b < branches; b++) {
        yolo_status st = check_maps(who, (int)B, C, b * nl, nl, maps + b * nl, grads ? grads + b * nl : NULL, maps);
        if (st) return st;
    }
    int h[YOLO_DET_MAX_LEVELS], w[YOLO_DET_MAX_LEVELS];
    for (int l = 0; l < nl; l++) h[l] = (int)maps[l].shape[2], w[l] = (int)maps[l].shape[3];
    yolo_status st = criterion_anchors(c, batch, nl, h, w);
    if (st) return st;
    size_t n_gt = (size_t)(batch->instances.n > 0 ? batch->instances.n : 0);
    if (n_gt > c->gt_cap) {
        size_t cap = c->gt_cap;
        st = grow((void **)&c->gt_boxes, &cap, n_gt * 4, sizeof(float));
        cap = c->gt_cap;
        if (!st) st = grow((void **)&c->gt_cls, &cap, n_gt, sizeof(int32_t));
        if (!st) c->gt_cap = n_gt;
        if (st) return st;
    }
    st = yolo_det_gt_from_batch(batch, c->gt_boxes, c->gt_cls);
    if (st) return yolo_error_context(st, "%s", who);

    yolo_det_loss_params p = c->p;
    p.nc = (int)C - 4 * R;
    if (c->class_weights && p.nc != c->p.nc)
        return yolo_error(YOLO_ERR_SHAPE, "%s: the head has %d classes, the class weights (cls_pw) %d", who, p.nc,
                          c->p.nc);
    memset(out, 0, sizeof *out);
    if (!c->end2end) {
        st = branch_compute(c, &c->branch[0], batch, nl, maps, grads, &p, NULL, 1.0, &out->value);
        c->branch_value[0] = out->value;
        c->branch_weight[0] = 1.0;
    } else {
        /* E2ELoss: o2m decays from 0.8 (epoch 0) to 0.1 (the last), o2o = 1 - o2m */
        const double span = c->epochs > 1 ? (double)(c->epochs - 1) : 1.0, k = batch->epoch > 0 ? batch->epoch : 0;
        const double left = 1.0 - k / span > 0 ? 1.0 - k / span : 0.0, o2m = left * (0.8 - 0.1) + 0.1;
        const float stal_min = c->stride[0], stal_size = c->stride[nl > 1 ? 1 : 0];
        const det_assign_options many = {0, stal_min, stal_size}, one = {1, stal_min, stal_size};
        yolo_det_loss_params p1 = p;
        p1.tal.topk = 7;
        yolo_det_loss_value v1;
        st = branch_compute(c, &c->branch[0], batch, nl, maps, grads, &p, &many, o2m, &out->value);
        if (!st)
            st = branch_compute(c, &c->branch[1], batch, nl, maps + nl, grads ? grads + nl : NULL, &p1, &one,
                                1.0 - o2m, &v1);
        if (!st) { /* the total of both; the logged items are the one-to-one branch's, as Ultralytics' */
            c->branch_value[0] = out->value, c->branch_value[1] = v1;
            c->branch_weight[0] = o2m, c->branch_weight[1] = 1.0 - o2m;
            const double total = o2m * out->value.total + (1.0 - o2m) * v1.total;
            out->value = v1;
            out->value.total = total;
        }
    }
    if (st) return st;
    out->batch = (int)B;
    out->nc = p.nc;
    out->reg_max = R;
    out->n_anchors = c->n_anchors;
    out->head = c->branch[0].head;
    out->anchor_xy = c->anchor_xy;
    out->anchor_stride = c->anchor_stride;
    out->gt = (yolo_det_gt_batch){batch->instances.n, batch->batch_idx, c->gt_cls, c->gt_boxes};
    out->asg = (yolo_det_assignment){c->branch[0].gt_index, c->branch[0].score};
    c->branches = branches;
    return YOLO_OK;
}

int yolo_det_criterion_branches(const yolo_det_criterion *c) { return c ? c->branches : 0; }

yolo_status yolo_det_criterion_branch_of(const yolo_det_criterion *c, int b, yolo_det_criterion_branch *out) {
    if (!c || !out || b < 0 || b >= c->branches)
        return yolo_error(YOLO_ERR_ARG, "yolo_det_criterion_branch_of: branch %d of %d", b, c ? c->branches : 0);
    *out = (yolo_det_criterion_branch){c->branch[b].head, {c->branch[b].gt_index, c->branch[b].score},
                                       c->branch_value[b], c->branch_weight[b]};
    return YOLO_OK;
}
