/* segment_task.c — the segment task's hooks (yolo/task.h), Ultralytics'
 * v8SegmentationLoss, SegmentationValidator and SegmentationPredictor.
 *
 * Head outputs (segment_head.c; nl levels, A anchors, nm prototypes):
 *   training  maps[0..nl-1] [B, 64 + nc, H_l, W_l], coefficients [B, nm, A],
 *             prototypes [B, nm, H/4, W/4]
 *   eval      [B, 4 + nc + nm, A] (boxes, scores, coefficients), then the
 *             training outputs (so val losses read them from index 1).
 *
 *   loss     detect's box/cls/dfl terms through yolo_det_criterion; the mask
 *            term per positive anchor: BCE of its coefficients . prototypes
 *            against its assigned instance's mask, cropped to the instance's
 *            box, mean over the mask, / normalized box area; summed over
 *            positives, / their number, times the `box` gain. loss = B *
 *            (box + seg + cls + dfl); gradients into the maps, the
 *            coefficients and the prototypes. Masks are the polygons
 *            rasterized at imgsz / mask_ratio (overlap_mask: one index mask
 *            per image, larger instances under smaller ones).
 *   metrics  box P/R/mAP as detect (original image space) and mask P/R/mAP
 *            from mask IoU at the prototype resolution of the batch image;
 *            fitness = box fitness + mask fitness.
 *   predict  masks upsampled to the batch image, the outline of each mask's
 *            largest component in the original image: YOLO-seg txt rows
 *            (cls x1 y1 ... normalized, [conf] with save_conf) and JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/config.h>
#include <yolo/detection.h>
#include <yolo/error.h>
#include <yolo/task.h>

#include "segment_mask.h"
#include "segment_task.h"

/* ------------------------------------------------------------------ */
/* Shared pieces                                                        */

static yolo_status mask_settings(const yolo_config *cfg, bool *overlap, int *ratio) {
    *overlap = true, *ratio = 4;
    if (cfg && yolo_config_find_key(cfg, "overlap_mask") && !yolo_config_is_null(cfg, "overlap_mask")) {
        yolo_status st = yolo_config_get_bool(cfg, "overlap_mask", overlap);
        if (st) return st;
    }
    if (cfg && yolo_config_find_key(cfg, "mask_ratio") && !yolo_config_is_null(cfg, "mask_ratio")) {
        int64_t r;
        yolo_status st = yolo_config_get_int(cfg, "mask_ratio", &r);
        if (st) return st;
        if (r < 1 || r > 64)
            return yolo_error(YOLO_ERR_CONFIG, "segment: mask_ratio=%lld, expected 1..64", (long long)r);
        *ratio = (int)r;
    }
    return YOLO_OK;
}

/* Grows a buffer of the segment task (yolo_det_grow, errors naming segment). */
static yolo_status grow(void **buf, size_t *cap, size_t need, size_t elem) {
    return yolo_det_grow("segment", buf, cap, need, elem);
}

/* The target masks of one batch image at the prototype size mw x mh:
 * instances k0..k1-1 rasterized at (W / ratio, H / ratio), resized when
 * that differs. overlap: one index mask; else one 0/1 mask per instance. */
typedef struct mask_targets {
    bool overlap;
    int ratio;
    int32_t *masks, *raster;
    uint8_t *scratch;
    size_t masks_cap, raster_cap, scratch_cap;
    const int32_t *raw; /* the last image's rasterization itself, (W / ratio) x (H / ratio) */
} mask_targets;

static void targets_free(mask_targets *t) { free(t->masks), free(t->raster), free(t->scratch); }

static yolo_status targets_image(mask_targets *t, const yolo_batch *batch, int k0, int k1, int mw, int mh) {
    int rw = batch->width / t->ratio, rh = batch->height / t->ratio;
    if (rw < 1) rw = 1;
    if (rh < 1) rh = 1;
    int n = k1 - k0, planes = t->overlap ? 1 : n;
    size_t hw = (size_t)mw * mh, rhw = (size_t)rw * rh;
    bool resize = rw != mw || rh != mh;
    yolo_status st = grow((void **)&t->masks, &t->masks_cap, (size_t)(planes > 0 ? planes : 1) * hw, sizeof(int32_t));
    if (!st) st = grow((void **)&t->scratch, &t->scratch_cap, (size_t)(n + 1) * rhw, 1);
    if (!st && resize)
        st = grow((void **)&t->raster, &t->raster_cap, (size_t)(planes > 0 ? planes : 1) * rhw, sizeof(int32_t));
    if (st) return st;
    int32_t *dst = resize ? t->raster : t->masks;
    t->raw = dst;
    st = seg_rasterize(&batch->instances, k0, k1, rw, rh, t->overlap, dst, t->scratch);
    if (st || !resize) return st;
    for (int p = 0; p < planes; p++) seg_resize_nearest(t->raster + p * rhw, rw, rh, t->masks + p * hw, mw, mh);
    return YOLO_OK;
}

/* t must have ndim dims equal to want[] (-1: any positive size). */
static yolo_status check_tensor(const char *who, const char *what, const yolo_host_tensor *t, int ndim,
                                const int64_t *want) {
    bool ok = t->data && t->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = want[i] < 0 ? t->shape[i] > 0 && t->shape[i] <= INT32_MAX : t->shape[i] == want[i];
    if (ok) return YOLO_OK;
    char got[96] = "", exp[96] = "";
    size_t a = 0, b = 0;
    for (int i = 0; i < t->ndim && i < YOLO_MAX_DIMS && a < sizeof got; i++)
        a += (size_t)snprintf(got + a, sizeof got - a, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    for (int i = 0; i < ndim && b < sizeof exp; i++) {
        if (want[i] < 0) b += (size_t)snprintf(exp + b, sizeof exp - b, "%s_", i ? ", " : "");
        else b += (size_t)snprintf(exp + b, sizeof exp - b, "%s%lld", i ? ", " : "", (long long)want[i]);
    }
    return yolo_error(YOLO_ERR_SHAPE, "%s: the %s output is [%s], expected [%s]", who, what, got, exp);
}

/* ------------------------------------------------------------------ */
/* Loss                                                                 */

typedef struct loss_state {
    yolo_det_criterion *crit;
    bool overlap;
    int ratio;
    int32_t *image_first; /* first instance of each image [B + 1] */
    double *parts;        /* per image: both branches' mask sums, the semantic BCE and Dice sums */
    size_t first_cap, parts_cap;
} loss_state;

/* Ultralytics 8.4's five for every segment model (sem_loss 0 without
 * Segment26's semantic branch, as in its results.csv) */
static const char *const segment_loss_names[5] = {"box_loss", "seg_loss", "cls_loss", "dfl_loss", "sem_loss"};

static void segment_loss_destroy(void *state) {
    loss_state *s = state;
    if (!s) return;
    yolo_det_criterion_free(s->crit);
    free(s->image_first), free(s->parts);
    free(s);
}

static yolo_status segment_loss_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "segment loss_create: NULL state");
    *state = NULL;
    loss_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "segment loss_create: out of memory");
    yolo_status st = yolo_det_criterion_create(ctx, &s->crit);
    if (!st) st = mask_settings(ctx ? ctx->cfg : NULL, &s->overlap, &s->ratio);
    if (st) {
        segment_loss_destroy(s);
        return yolo_error_context(st, "segment loss");
    }
    *state = s;
    return YOLO_OK;
}

/* The training outputs (segment_head.c): the level maps (4-D), one
 * coefficient tensor per branch (3-D: the one-to-many, then an end2end
 * model's one-to-one), Segment26's semantic logits, then the prototypes. */
typedef struct train_view {
    int n_maps, branches;
    const yolo_host_tensor *mc[2], *sem, *proto;
    float *gmc[2], *gsem, *gproto; /* their gradients (NULL: none wanted) */
} train_view;

static yolo_status train_outputs(const char *who, const yolo_batch *batch, int n, const yolo_host_tensor *o,
                                 yolo_host_tensor *grads, train_view *v) {
    int i = 0;
    while (i < n && o[i].ndim == 4) i++;
    const int first_mc = i;
    while (i < n && o[i].ndim == 3) i++;
    const int rest = n - i;
    *v = (train_view){.n_maps = first_mc, .branches = i - first_mc};
    if (v->n_maps < 1 || v->branches < 1 || v->branches > 2 || rest < 1 || rest > 2 || o[i].ndim != 4 ||
        o[n - 1].ndim != 4)
        return yolo_error(YOLO_ERR_ARG, "%s: %d outputs, expected the level maps, the mask coefficients (one per "
                          "branch), Segment26's semantic logits and the prototypes", who, n);
    for (int b = 0; b < v->branches; b++) v->mc[b] = &o[first_mc + b];
    v->sem = rest == 2 ? &o[i] : NULL;
    v->proto = &o[n - 1];
    int64_t want_proto[4] = {batch->n, v->mc[0]->shape[1], -1, -1};
    yolo_status st = check_tensor(who, "prototype", v->proto, 4, want_proto);
    int64_t want_sem[4] = {batch->n, -1, -1, -1};
    if (!st && v->sem) st = check_tensor(who, "semantic", v->sem, 4, want_sem);
    for (int k = first_mc; grads && k < n && !st; k++)
        if (grads[k].ndim != o[k].ndim || memcmp(grads[k].shape, o[k].shape, sizeof grads[k].shape) || !grads[k].data)
            st = yolo_error(YOLO_ERR_SHAPE, "%s: gradient %d differs in shape from its output", who, k);
    if (st || !grads) return st;
    for (int b = 0; b < v->branches; b++) v->gmc[b] = grads[first_mc + b].data;
    v->gsem = v->sem ? grads[i].data : NULL;
    v->gproto = grads[n - 1].data;
    return YOLO_OK;
}

/* What every image's part of the loss reads (yolo_det_for_each_image). */
typedef struct image_job {
    const char *who;
    const loss_state *s;
    const yolo_batch *batch;
    const yolo_det_criterion_result *r;
    const yolo_det_criterion_branch *branch; /* [v->branches] */
    const train_view *v;
    double g_scale[2];          /* each branch's mask gradient factor */
    bool masks;                 /* a branch has positives: the mask terms run */
    bool semantic;              /* Segment26's semantic term runs */
    double sem_g_bce, sem_g_dice; /* its gradient factors (0: the first branch has none) */
} image_job;

enum { PART_SEG0, PART_SEG1, PART_BCE, PART_DICE, PARTS };

/* The mask terms of image b's positive anchors in every branch, each
 * branch's sum into part[branch]; gradients g_scale[branch] times theirs,
 * into the coefficients and (the first branch only: the one-to-one's
 * prototypes are detached) the prototypes. *rasterized: whether t holds
 * the image's targets. */
static yolo_status image_masks(const image_job *j, mask_targets *t, int b, double *part, bool *rasterized) {
    const train_view *v = j->v;
    const yolo_det_criterion_result *r = j->r;
    const int64_t A = r->n_anchors;
    const int k0 = j->s->image_first[b], k1 = j->s->image_first[b + 1];
    const int nm = (int)v->mc[0]->shape[1], mh = (int)v->proto->shape[2], mw = (int)v->proto->shape[3];
    const size_t hw = (size_t)mw * mh;
    const float W = (float)j->batch->width, H = (float)j->batch->height;
    float *z = NULL;
    yolo_status st = YOLO_OK;
    for (int br = 0; br < v->branches && !st; br++) {
        const int32_t *gi = j->branch[br].asg.gt_index + (size_t)b * A;
        bool any = false;
        for (int64_t a = 0; a < A && !any; a++) any = gi[a] >= 0;
        if (!any) continue;
        if (!*rasterized) {
            if (!(z = malloc(hw * sizeof *z)))
                return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for a %dx%d mask", j->who, mw, mh);
            if ((st = targets_image(t, j->batch, k0, k1, mw, mh))) break;
            *rasterized = true;
        }
        const float *coef = v->mc[br]->data + (size_t)b * nm * A, *pr = v->proto->data + (size_t)b * nm * hw;
        float *gcoef = v->gmc[br] ? v->gmc[br] + (size_t)b * nm * A : NULL;
        float *gproto = br == 0 && v->gproto ? v->gproto + (size_t)b * nm * hw : NULL;
        for (int64_t a = 0; a < A; a++) {
            int g = gi[a];
            if (g < 0) continue;
            if (g < k0 || g >= k1) {
                st = yolo_error(YOLO_ERR_ARG, "%s: an anchor of image %d assigned to instance %d", j->who, b, g);
                break;
            }
            const float *box = r->gt.boxes + 4 * (size_t)g;
            seg_mask_target mt = {
                .mask = t->overlap ? t->masks : t->masks + (size_t)(g - k0) * hw,
                .value = t->overlap ? g - k0 + 1 : 1,
                .box = {box[0] * mw / W, box[1] * mh / H, box[2] * mw / W, box[3] * mh / H},
                .area = (box[2] - box[0]) / W * ((box[3] - box[1]) / H),
            };
            part[PART_SEG0 + br] += seg_mask_term(nm, coef + a, (size_t)A, pr, mh, mw, &mt, j->g_scale[br],
                                                  gcoef ? gcoef + a : NULL, gproto, z);
        }
    }
    free(z);
    return st;
}

/* Image b's part of Segment26's auxiliary semantic loss
 * (v8SegmentationLoss's semseg term): BCEDiceLoss of the logits against
 * the one-hot of each pixel's class at the mask raster (imgsz / mask_ratio;
 * none where no instance is), downsampled (nearest) to the logits' size;
 * its BCE and Dice sums into part, its gradient (the first branch's,
 * weighted) into the logits' gradient. */
static yolo_status image_semantic(const image_job *j, mask_targets *t, int b, bool rasterized, double *part) {
    const train_view *v = j->v;
    const yolo_batch *batch = j->batch;
    const int nc = (int)v->sem->shape[1], sh = (int)v->sem->shape[2], sw = (int)v->sem->shape[3];
    const int k0 = j->s->image_first[b], k1 = j->s->image_first[b + 1], n = k1 - k0;
    int rw = batch->width / t->ratio, rh = batch->height / t->ratio;
    rw = rw < 1 ? 1 : rw, rh = rh < 1 ? 1 : rh;
    const size_t hw = (size_t)sw * sh, rhw = (size_t)rw * rh;
    int32_t *classes = malloc(rhw * sizeof *classes), *sem_classes = malloc(hw * sizeof *sem_classes);
    int64_t *area = malloc((size_t)(n > 0 ? n : 1) * sizeof *area);
    float *scratch = malloc(2 * hw * sizeof *scratch);
    yolo_status st = classes && sem_classes && area && scratch
                         ? YOLO_OK
                         : yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for the semantic targets", j->who);
    for (int k = k0; k < k1 && !st; k++)
        if (batch->instances.cls[k] < 0 || batch->instances.cls[k] >= nc)
            st = yolo_error(YOLO_ERR_ARG, "%s: instance %d has class %d, the semantic logits %d", j->who, k,
                            (int)batch->instances.cls[k], nc);
    if (!st && n > 0 && !rasterized) st = targets_image(t, batch, k0, k1, rw, rh);
    if (!st) {
        if (n > 0) {
            seg_semantic_classes(t->raw, t->overlap, n, batch->instances.cls + k0, rhw, classes, area);
            seg_resize_nearest(classes, rw, rh, sem_classes, sw, sh);
        } else {
            for (size_t p = 0; p < hw; p++) sem_classes[p] = -1;
        }
        const size_t at = (size_t)b * nc * hw;
        seg_semantic_image(nc, hw, v->sem->data + at, sem_classes, j->sem_g_bce, j->sem_g_dice, &part[PART_BCE],
                           &part[PART_DICE], v->gsem && (j->sem_g_bce || j->sem_g_dice) ? v->gsem + at : NULL,
                           scratch);
    }
    free(classes), free(sem_classes), free(area), free(scratch);
    return st;
}

/* Image b's part of the loss (yolo_det_for_each_image): its own targets,
 * sums and gradient rows. */
static yolo_status image_loss(void *arg, int b) {
    const image_job *j = arg;
    double *part = j->s->parts + (size_t)b * PARTS;
    for (int k = 0; k < PARTS; k++) part[k] = 0;
    mask_targets t = {.overlap = j->s->overlap, .ratio = j->s->ratio};
    bool rasterized = false;
    yolo_status st = j->masks ? image_masks(j, &t, b, part, &rasterized) : YOLO_OK;
    /* the masks' rasterization (t.raw, before any resize) is the semantic term's too */
    if (!st && j->semantic) st = image_semantic(j, &t, b, rasterized, part);
    targets_free(&t);
    return st;
}

static yolo_status segment_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                        const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                        float *items) {
    loss_state *s = state;
    const char *who = "segment loss_compute";
    if (!s || !batch || !outputs || !loss)
        return yolo_error(YOLO_ERR_ARG, "%s: NULL state, batch, outputs or loss", who);
    train_view v;
    yolo_status st = train_outputs(who, batch, n_outputs, outputs, grads, &v);
    yolo_det_criterion_result r;
    if (!st) st = yolo_det_criterion_compute(s->crit, who, batch, v.n_maps, outputs, grads, &r);
    if (st) return st;
    yolo_det_criterion_branch branch[2];
    if (yolo_det_criterion_branches(s->crit) != v.branches)
        return yolo_error(YOLO_ERR_ARG, "%s: %d mask coefficient outputs for a head of %d branches", who, v.branches,
                          yolo_det_criterion_branches(s->crit));
    for (int b = 0; b < v.branches && !st; b++) st = yolo_det_criterion_branch_of(s->crit, b, &branch[b]);
    const int64_t B = batch->n, A = r.n_anchors;
    for (int b = 0; b < v.branches && !st; b++) {
        int64_t want_mc[3] = {B, v.mc[0]->shape[1], A};
        st = check_tensor(who, "coefficient", v.mc[b], 3, want_mc);
    }
    if (!st) st = grow((void **)&s->image_first, &s->first_cap, (size_t)B + 1, sizeof(int32_t));
    if (!st) st = grow((void **)&s->parts, &s->parts_cap, (size_t)B * PARTS, sizeof(double));
    if (!st) st = yolo_det_image_ranges(who, batch, s->image_first);
    if (st) return st;

    const yolo_det_loss_params *p = yolo_det_criterion_params(s->crit);
    /* each branch's normaliser; under DDP the mean over ranks, as the box loss's (yolo/task.h) */
    double fg[2] = {branch[0].value.n_fg, v.branches > 1 ? branch[1].value.n_fg : 0};
    if (p->ranks && p->ranks->rank_mean && p->ranks->world > 1 && (st = p->ranks->rank_mean(p->ranks, fg, 2)))
        return st;
    image_job job = {.who = who, .s = s, .batch = batch, .r = &r, .branch = branch, .v = &v};
    for (int b = 0; b < v.branches; b++) {
        job.g_scale[b] = fg[b] > 0 ? (double)B * branch[b].weight * p->box_gain / fg[b] : 0;
        job.masks = job.masks || branch[b].value.n_fg > 0;
    }
    /* the semantic term counts in a branch that has positives (Ultralytics'
     * `if fg_mask.sum()`); only the first branch's is not detached. Its
     * value: gain * (0.5 * mean BCE + 0.5 * mean over images and classes of 1 - Dice) */
    const int nc = v.sem ? (int)v.sem->shape[1] : 0;
    const double n_bce = v.sem ? (double)B * nc * (double)(v.sem->shape[2] * v.sem->shape[3]) : 1,
                 n_dice = (double)B * nc;
    job.semantic = v.sem && job.masks;
    if (job.semantic && branch[0].value.n_fg > 0) {
        const double g = (double)B * branch[0].weight * p->box_gain * 0.5;
        job.sem_g_bce = g / n_bce, job.sem_g_dice = g / n_dice;
    }
    if (job.masks || job.semantic) st = yolo_det_for_each_image((int)B, image_loss, &job);
    if (st) return st;
    double seg_sum[2] = {0, 0}, bce = 0, dice = 0; /* in image order */
    for (int64_t b = 0; b < B && (job.masks || job.semantic); b++) {
        const double *part = s->parts + (size_t)b * PARTS;
        seg_sum[0] += part[PART_SEG0], seg_sum[1] += part[PART_SEG1], bce += part[PART_BCE], dice += part[PART_DICE];
    }
    const double sem_value = job.semantic ? p->box_gain * (0.5 * bce / n_bce + 0.5 * dice / n_dice) : 0;
    if (!isfinite(sem_value)) return yolo_error(YOLO_ERR_NUMERIC, "segment: the semantic loss is %g", sem_value);
    double total = r.value.total, seg[2] = {0, 0}, sem[2] = {0, 0};
    for (int b = 0; b < v.branches; b++) {
        seg[b] = fg[b] > 0 ? p->box_gain * seg_sum[b] / fg[b] : 0;
        sem[b] = branch[b].value.n_fg > 0 ? sem_value : 0;
        if (!isfinite(seg[b])) return yolo_error(YOLO_ERR_NUMERIC, "segment: the mask loss is %g", seg[b]);
        total += (double)B * branch[b].weight * (seg[b] + sem[b]);
    }
    *loss = total;
    if (items) { /* an end2end model logs its one-to-one branch, as Ultralytics' E2ELoss */
        const int last = v.branches - 1;
        items[0] = (float)r.value.box, items[1] = (float)seg[last], items[2] = (float)r.value.cls,
        items[3] = (float)r.value.dfl, items[4] = (float)sem[last];
    }
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Metrics (and predict)                                                */

typedef struct metrics_state {
    yolo_det_task_eval kit; /* first: Box and Mask statistics, NMS, the batch's gts (yolo/detection.h) */
    mask_targets targets;
    float *z, *contour;
    uint8_t *pred_masks, *gt_masks;
    size_t pm_cap, gm_cap, z_cap, contour_cap;
    uint8_t *draw_mask; /* one mask at the drawn resolution */
    size_t draw_mask_cap;
    uint8_t *out_masks; /* predict_masks' report */
    size_t out_masks_cap;
} metrics_state;

static const char *const segment_metric_names[8] = {
    "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)",
    "metrics/precision(M)", "metrics/recall(M)", "metrics/mAP50(M)", "metrics/mAP50-95(M)"};

static void segment_metrics_destroy(void *state) {
    metrics_state *s = state;
    if (!s) return;
    yolo_det_task_eval_free(&s->kit);
    targets_free(&s->targets);
    free(s->z), free(s->contour), free(s->pred_masks), free(s->gt_masks), free(s->draw_mask), free(s->out_masks);
    free(s);
}

static yolo_status segment_metrics_create(const yolo_task_context *ctx, void **state) {
    if (!state) return yolo_error(YOLO_ERR_ARG, "segment metrics_create: NULL state");
    *state = NULL;
    metrics_state *s = calloc(1, sizeof *s);
    if (!s) return yolo_error(YOLO_ERR_NOMEM, "segment metrics_create: out of memory");
    yolo_status st = yolo_det_task_eval_init(&s->kit, ctx, "segment", "Mask");
    if (!st) st = mask_settings(ctx ? ctx->cfg : NULL, &s->targets.overlap, &s->targets.ratio);
    if (st) {
        segment_metrics_destroy(s);
        return yolo_error_context(st, "segment metrics");
    }
    *state = s;
    return YOLO_OK;
}

/* The eval outputs: t[0] [B, 4 + nc + nm, A] and the prototypes (last;
 * for inference only, the only other output). */
typedef struct eval_view {
    yolo_det_eval_view det; /* first (the kit's IoU callback gets it): n_extra = nm mask coefficients */
    const float *proto;
    int nm, mh, mw;
} eval_view;

static yolo_status eval_outputs(const char *who, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, eval_view *v) {
    if (!batch || !outputs || n_outputs < 2)
        return yolo_error(YOLO_ERR_ARG, "%s: no batch or %d outputs (the eval outputs of a segment head are the "
                          "decoded rows, then the prototypes last)", who, n_outputs);
    const yolo_host_tensor *proto = &outputs[n_outputs - 1];
    int64_t want[4] = {batch->n, -1, -1, -1};
    yolo_status st = check_tensor(who, "prototype", proto, 4, want);
    if (st) return st;
    v->nm = (int)proto->shape[1], v->mh = (int)proto->shape[2], v->mw = (int)proto->shape[3];
    v->proto = proto->data;
    return yolo_det_eval_view_init(who, batch, &outputs[0], v->nm, &v->det);
}

static void box_to_mask(const yolo_batch *batch, const eval_view *v, const float *box, float *out) {
    float sx = (float)v->mw / (float)batch->width, sy = (float)v->mh / (float)batch->height;
    out[0] = box[0] * sx, out[1] = box[1] * sy, out[2] = box[2] * sx, out[3] = box[3] * sy;
}

/* Mask IoU of image img's detections against its instances at the
 * prototype resolution of the batch image, into s->kit.iou. */
static yolo_status image_mask_iou(void *state, const yolo_det_eval_view *view, const yolo_batch *batch,
                                  const yolo_det_task_image *img) {
    metrics_state *s = state;
    const eval_view *v = (const eval_view *)view;
    size_t hw = (size_t)v->mw * v->mh;
    const float *proto = v->proto + (size_t)img->image * v->nm * hw;
    const yolo_detection *dets = s->kit.dets;
    for (int d = 0; d < img->n_det; d++) {
        float mb[4];
        box_to_mask(batch, v, dets[d].box, mb);
        seg_predict_mask(v->nm, yolo_det_eval_view_extra(&v->det, img->image, &dets[d]), (size_t)v->det.n_anchors,
                         proto, v->mh, v->mw, mb, s->pred_masks + (size_t)d * hw);
    }
    int n_gt = img->n_gt;
    yolo_status st = targets_image(&s->targets, batch, img->first, img->first + n_gt, v->mw, v->mh);
    if (!st) st = grow((void **)&s->gt_masks, &s->gm_cap, (size_t)n_gt * hw, 1);
    if (st) return st;
    for (int j = 0; j < n_gt; j++)
        for (size_t p = 0; p < hw; p++)
            s->gt_masks[(size_t)j * hw + p] = s->targets.overlap ? s->targets.masks[p] == j + 1
                                                                  : s->targets.masks[(size_t)j * hw + p] != 0;
    seg_mask_iou(s->gt_masks, n_gt, s->pred_masks, img->n_det, hw, s->kit.iou);
    return YOLO_OK;
}

static yolo_status segment_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                          const yolo_host_tensor *outputs) {
    metrics_state *s = state;
    const char *who = "segment metrics_update";
    if (!s) return yolo_error(YOLO_ERR_ARG, "%s: NULL state", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (!st) st = grow((void **)&s->pred_masks, &s->pm_cap, (size_t)s->kit.eval.nms.max_det * v.mw * v.mh, 1);
    return st ? st : yolo_det_task_eval_update(s, batch, &v.det, image_mask_iou);
}

/* ------------------------------------------------------------------ */
/* Predict                                                              */

/* Detection det's mask over image `image` of the batch, ow x oh bytes (the
 * batch's size, or the original's scale for retina_masks); z: mask-size scratch. */
static void detection_mask(const yolo_batch *batch, const eval_view *v, int image, const yolo_detection *det, int ow,
                           int oh, float *z, uint8_t *out) {
    size_t hw = (size_t)v->mw * v->mh;
    float mb[4];
    box_to_mask(batch, v, det->box, mb);
    seg_predict_mask_upsampled(v->nm, yolo_det_eval_view_extra(&v->det, image, det), (size_t)v->det.n_anchors,
                               v->proto + (size_t)image * v->nm * hw, v->mh, v->mw, mb, ow, oh, z, out);
}

static yolo_status segment_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                   const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    metrics_state *s = state;
    const char *who = "segment predict";
    if (!s || !out) return yolo_error(YOLO_ERR_ARG, "%s: NULL state or output", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (st) return st;
    int n_det, W = batch->width, H = batch->height;
    size_t hw = (size_t)v.mw * v.mh, whole = (size_t)W * H;
    st = grow((void **)&s->z, &s->z_cap, hw, sizeof(float));
    if (!st) st = grow((void **)&s->pred_masks, &s->pm_cap, whole, 1);
    if (!st) st = grow((void **)&s->contour, &s->contour_cap, 2 * whole + 16, sizeof(float));
    FILE *txt, *json;
    if (!st) st = yolo_det_task_eval_predict_begin(&s->kit, who, batch, image, &v.det, &n_det, &txt, &json);
    if (st) return st;
    for (int d = 0; d < n_det && !st; d++) {
        yolo_detection det = s->kit.dets[d];
        detection_mask(batch, &v, image, &det, W, H, s->z, s->pred_masks);
        int np = seg_mask_contour(s->pred_masks, W, H, s->contour, (int)(s->contour_cap / 2));
        if (np < 0) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory tracing a mask", who);
        st = st ? st : yolo_box_to_original(batch, image, det.box, 1);
        if (st) break;
        float OW = 0, OH = 0;
        st = yolo_points_to_original(batch, image, s->contour, np > 0 ? (size_t)np : 0, &OW, &OH);
        if (st) break;
        if (np > 0) { /* a YOLO-seg label row: class, normalized polygon, [conf] */
            fprintf(txt, "%d", (int)det.cls);
            for (int k = 0; k < np; k++)
                fprintf(txt, " %g %g", (double)(s->contour[2 * k] / OW), (double)(s->contour[2 * k + 1] / OH));
            if (s->kit.eval.save_conf) fprintf(txt, " %g", (double)det.score);
            fprintf(txt, "\n");
        }
        fprintf(json, "%s{", d ? ", " : "");
        yolo_det_write_json(json, &s->kit.eval, &det);
        fprintf(json, ", \"segments\": {");
        yolo_write_json_numbers(json, "x", s->contour, np, 2);
        fprintf(json, ", ");
        yolo_write_json_numbers(json, "y", s->contour + 1, np, 2);
        fprintf(json, "}}");
    }
    return yolo_prediction_text_close(who, st, &s->kit.txt, &s->kit.json, txt, json, out);
}

/* The detections' masks at the batch resolution, as predict traces its polygons from them. */
static yolo_status segment_predict_masks(void *state, const yolo_batch *batch, int image, int n_outputs,
                                         const yolo_host_tensor *outputs, int *n, const uint8_t **masks) {
    metrics_state *s = state;
    const char *who = "segment predict_masks";
    if (!s || !n || !masks) return yolo_error(YOLO_ERR_ARG, "%s: NULL argument", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (!st && (image < 0 || image >= batch->n)) st = yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch of %d", who, image, batch->n);
    int n_det = 0, W = batch->width, H = batch->height;
    if (!st) st = yolo_det_task_eval_nms(&s->kit, &v.det, image, &n_det);
    size_t hw = (size_t)v.mw * v.mh, whole = (size_t)W * H;
    if (!st) st = grow((void **)&s->z, &s->z_cap, hw, sizeof(float));
    if (!st) st = grow((void **)&s->out_masks, &s->out_masks_cap, whole * (size_t)(n_det ? n_det : 1), 1);
    if (st) return st;
    for (int d = 0; d < n_det; d++)
        detection_mask(batch, &v, image, &s->kit.dets[d], W, H, s->z, s->out_masks + whole * (size_t)d);
    *n = n_det;
    *masks = s->out_masks;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Pictures                                                             */

/* Detection d's mask over the batch image: at the batch resolution, or at
 * the original image's scale (retina_masks), placed in original pixels. */
static yolo_status draw_mask(metrics_state *s, const yolo_batch *batch, const eval_view *v, int image,
                             const yolo_detection *d, const yolo_draw_options *opt, yolo_canvas *canvas) {
    const yolo_image_meta *m = batch->meta ? &batch->meta[image] : NULL;
    float rx = m ? m->ratio_x : 1, ry = m ? m->ratio_y : 1, px = m ? m->pad_x : 0, py = m ? m->pad_y : 0;
    int W = batch->width, H = batch->height, ow = W, oh = H;
    if (opt->retina_masks && rx > 0 && ry > 0) ow = (int)lroundf(W / rx), oh = (int)lroundf(H / ry);
    size_t hw = (size_t)v->mw * v->mh;
    yolo_status st = grow((void **)&s->draw_mask, &s->draw_mask_cap, (size_t)ow * oh, 1);
    if (!st) st = grow((void **)&s->z, &s->z_cap, hw, sizeof(float));
    if (st) return st;
    detection_mask(batch, v, image, d, ow, oh, s->z, s->draw_mask);
    float place[4] = {-px / rx, -py / ry, W / rx, H / ry};
    yolo_draw_mask(canvas, s->draw_mask, ow, oh, place, yolo_class_color(d->cls), 0.5);
    return YOLO_OK;
}

/* Masks first, then boxes and labels; the most confident drawn last, on top. */
static yolo_status segment_draw_predictions(void *state, const yolo_batch *batch, int image, int n_outputs,
                                            const yolo_host_tensor *outputs, const yolo_draw_options *opt,
                                            yolo_canvas *canvas, yolo_drawn_result *out) {
    metrics_state *s = state;
    const char *who = "segment draw_predictions";
    if (!s || !opt || !canvas || !out) return yolo_error(YOLO_ERR_ARG, "%s: NULL argument", who);
    eval_view v;
    yolo_status st = eval_outputs(who, batch, n_outputs, outputs, &v);
    if (!st && (image < 0 || image >= batch->n)) st = yolo_error(YOLO_ERR_ARG, "%s: image %d of a batch of %d", who, image, batch->n);
    int n_det = 0;
    if (!st) st = yolo_det_task_eval_nms(&s->kit, &v.det, image, &n_det);
    *out = (yolo_drawn_result){0};
    const yolo_detection *dets = s->kit.dets;
    for (int d = n_det - 1; d >= 0 && !st; d--)
        if (dets[d].score >= opt->conf && !opt->report_only) st = draw_mask(s, batch, &v, image, &dets[d], opt, canvas);
    for (int d = n_det - 1; d >= 0 && !st; d--) {
        if (dets[d].score < opt->conf) continue;
        yolo_detection det = dets[d];
        st = yolo_box_to_original(batch, image, det.box, 1);
        if (!st) yolo_det_draw_detection(canvas, &s->kit.eval, &det, opt, s->kit.drawn, &out->n);
    }
    out->objects = s->kit.drawn;
    return st;
}

/* ------------------------------------------------------------------ */

const yolo_task_hooks segment_task_hooks = {
    .data = {.needs = YOLO_NEED_BOXES | YOLO_NEED_POLYGONS, .parse_labels = NULL, .label_format = NULL},
    .n_loss_items = 5,
    .loss_names = segment_loss_names,
    .loss_create = segment_loss_create,
    .loss_destroy = segment_loss_destroy,
    .loss_compute = segment_loss_compute,
    .val_loss_outputs = 1,
    .n_metrics = 8,
    .metric_names = segment_metric_names,
    .metrics_create = segment_metrics_create,
    .metrics_destroy = segment_metrics_destroy,
    .metrics_update = segment_metrics_update,
    .metrics_pack = yolo_det_task_eval_pack, /* metrics_state starts with the kit */
    .metrics_merge = yolo_det_task_eval_merge,
    .metrics_summarize = yolo_det_task_eval_summarize,
    .predict = segment_predict,
    .draw_predictions = segment_draw_predictions,
    .metrics_plot = yolo_det_task_eval_plot,
    .predict_masks = segment_predict_masks,
};
