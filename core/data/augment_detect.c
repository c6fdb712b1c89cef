/* Detection-family augmentation: mosaic, copy-paste, random perspective,
 * mixup, CutMix, HSV, flips; letterbox for validation (see augment.h). Order
 * and formulas as Ultralytics' v8_transforms (ultralytics/data/augment.py):
 * Mosaic, CopyPaste (flip mode), RandomPerspective, CopyPaste (mixup
 * mode), MixUp, CutMix, Albumentations (off), RandomHSV, RandomFlip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/image.h"
#include "data/instance_ops.h"
#include "data/rng.h"

void yolo_augment_defaults(yolo_augment_params *p) {
    memset(p, 0, sizeof *p);
    p->imgsz = 640;
    p->hsv_h = 0.015f, p->hsv_s = 0.7f, p->hsv_v = 0.4f;
    p->translate = 0.1f, p->scale = 0.5f;
    p->fliplr = 0.5f;
    p->bgr = 0.0f;
    p->mosaic = 1.0f;
    p->copy_paste_mode = YOLO_COPY_PASTE_FLIP;
    p->close_mosaic = 10;
    p->auto_augment = YOLO_AUTO_AUGMENT_RANDAUGMENT;
    p->erasing = 0.4f;
    p->crop_fraction = 1.0f;
    p->mosaic_window = 32;
    p->poly_resample = 1000;
}

void yolo_augment_hsv(const yolo_augment_params *p, yolo_rng *rng, yolo_image *img, float gain[3]) {
    gain[0] = (float)yolo_rng_range(rng, -1, 1) * p->hsv_h;
    gain[1] = (float)yolo_rng_range(rng, -1, 1) * p->hsv_s;
    gain[2] = (float)yolo_rng_range(rng, -1, 1) * p->hsv_v;
    if (p->hsv_h != 0 || p->hsv_s != 0 || p->hsv_v != 0)
        yolo_image_hsv(img, gain);
}

/* A partner from the epoch order within +-window positions (never itself
 * when there is anyone else). */
static int64_t draw_partner(yolo_rng *rng, const yolo_aug_source *src, int64_t index, int window) {
    if (src->n <= 1 || !src->order)
        return index;
    int64_t w = window > 0 ? window : 1;
    if (2 * w >= src->n)
        w = (src->n - 1) / 2 > 0 ? (src->n - 1) / 2 : 1;
    int64_t o = (int64_t)yolo_rng_below(rng, (uint64_t)(2 * w));
    o = o < w ? o - w : o - w + 1; /* [-w, -1] u [1, w] */
    int64_t pos = src->position ? src->position[index] : 0;
    int64_t q = ((pos + o) % src->n + src->n) % src->n;
    return src->order[q];
}

/* Copies a tile's labels into pixel xyxy form for an image of w x h. */
static yolo_status tile_instances(const yolo_augment_params *p, const yolo_aug_tile *t, yolo_instances *out) {
    yolo_instances_clear(out);
    yolo_status st = yolo_instances_append(out, t->labels);
    if (st == YOLO_OK && p->poly_resample > 0)
        st = yolo_ins_resample_polygons(out, p->poly_resample);
    if (st == YOLO_OK)
        yolo_ins_to_pixels(out, (float)t->image->width, (float)t->image->height);
    return st;
}

/* LetterBox(new_shape=(th, tw), scaleup=False): fit an image (a tile
 * resized to long side imgsz, of a file orig_w x orig_h) into tw x th,
 * centred, padded with 114; ins (pixel xyxy) moves with it. */
static yolo_status letterbox_image(const yolo_image *image, int orig_w, int orig_h, int tw, int th, yolo_image *out,
                                   yolo_instances *ins, yolo_image_meta *meta) {
    int w = image->width, h = image->height;
    const yolo_image *src = image;
    yolo_image resized = {0};
    double r = fmin(fmin((double)tw / w, (double)th / h), 1.0);
    int nw = (int)lround(w * r), nh = (int)lround(h * r);
    nw = nw < 1 ? 1 : nw > tw ? tw : nw;
    nh = nh < 1 ? 1 : nh > th ? th : nh;
    if (nw != w || nh != h) {
        yolo_status st = yolo_image_resize(image, nw, nh, false, &resized);
        if (st != YOLO_OK)
            return st;
        src = &resized;
    }
    double dw = (tw - nw) / 2.0, dh = (th - nh) / 2.0;
    int left = (int)lround(dw - 0.1), top = (int)lround(dh - 0.1);
    yolo_status st = yolo_image_alloc(out, tw, th);
    if (st == YOLO_OK) {
        yolo_image_fill(out, YOLO_PAD_VALUE);
        yolo_image_blit(src, 0, 0, out, left, top, nw, nh);
        yolo_ins_affine_axis(ins, (float)nw / w, (float)nh / h, (float)left, (float)top);
        meta->orig_width = orig_w;
        meta->orig_height = orig_h;
        meta->ratio_x = (float)nw / orig_w;
        meta->ratio_y = (float)nh / orig_h;
        meta->pad_x = (float)left;
        meta->pad_y = (float)top;
    }
    yolo_image_free(&resized);
    return st;
}

static yolo_status letterbox(const yolo_augment_params *p, const yolo_aug_tile *t, int tw, int th, yolo_image *out,
                             yolo_instances *ins, yolo_image_meta *meta) {
    yolo_status st = tile_instances(p, t, ins);
    return st == YOLO_OK ? letterbox_image(t->image, t->orig_width, t->orig_height, tw, th, out, ins, meta) : st;
}

/* Without mosaic, Ultralytics' flip-mode CopyPaste sees the loaded image
 * before RandomPerspective letterboxes it: paste on a copy of the tile. */
static yolo_status letterbox_copy_paste(const yolo_augment_params *p, const yolo_aug_tile *t, yolo_image *out,
                                        yolo_instances *ins, yolo_image_meta *meta, int32_t *pasted) {
    yolo_image copy = {0};
    yolo_status st = yolo_image_alloc(&copy, t->image->width, t->image->height);
    if (st == YOLO_OK) {
        memcpy(copy.data, t->image->data, (size_t)copy.width * copy.height * 3);
        st = tile_instances(p, t, ins);
    }
    int n = 0;
    if (st == YOLO_OK)
        st = yolo_copy_paste(p->copy_paste, &copy, ins, NULL, NULL, &n);
    *pasted = n;
    if (st == YOLO_OK)
        st = letterbox_image(&copy, t->orig_width, t->orig_height, p->imgsz, p->imgsz, out, ins, meta);
    yolo_image_free(&copy);
    return st;
}

/* Mosaic of the sample and 3 partners on a 2s x 2s canvas. */
static yolo_status mosaic4(const yolo_augment_params *p, yolo_rng *rng, int64_t index, const yolo_aug_source *src,
                           yolo_image *canvas, yolo_instances *ins, yolo_aug_record *rec) {
    int s = p->imgsz;
    int64_t ids[4] = {index, 0, 0, 0};
    for (int k = 1; k < 4; k++)
        rec->mosaic_partners[k - 1] = ids[k] = draw_partner(rng, src, index, p->mosaic_window);
    int yc = (int)yolo_rng_range(rng, s / 2.0, 1.5 * s); /* int(random.uniform(-border, 2s + border)) */
    int xc = (int)yolo_rng_range(rng, s / 2.0, 1.5 * s);
    rec->mosaic = 1;
    rec->mosaic_center[0] = (float)xc;
    rec->mosaic_center[1] = (float)yc;
    yolo_status st = yolo_image_alloc(canvas, 2 * s, 2 * s);
    if (st != YOLO_OK)
        return st;
    yolo_image_fill(canvas, YOLO_PAD_VALUE);
    yolo_instances_clear(ins);
    yolo_instances part;
    yolo_instances_init(&part, ins->kpt_count, ins->kpt_dims);
    for (int k = 0; k < 4 && st == YOLO_OK; k++) {
        yolo_aug_tile t;
        st = src->acquire(src->ctx, ids[k], &t);
        if (st != YOLO_OK)
            break;
        int w = t.image->width, h = t.image->height;
        int x1a, y1a, x2a, y2a, x1b, y1b, x2b, y2b;
        switch (k) {
        case 0: /* top left */
            x1a = xc - w > 0 ? xc - w : 0, y1a = yc - h > 0 ? yc - h : 0, x2a = xc, y2a = yc;
            x1b = w - (x2a - x1a), y1b = h - (y2a - y1a), x2b = w, y2b = h;
            break;
        case 1: /* top right */
            x1a = xc, y1a = yc - h > 0 ? yc - h : 0, x2a = xc + w < 2 * s ? xc + w : 2 * s, y2a = yc;
            x1b = 0, y1b = h - (y2a - y1a), x2b = w < x2a - x1a ? w : x2a - x1a, y2b = h;
            break;
        case 2: /* bottom left */
            x1a = xc - w > 0 ? xc - w : 0, y1a = yc, x2a = xc, y2a = yc + h < 2 * s ? yc + h : 2 * s;
            x1b = w - (x2a - x1a), y1b = 0, x2b = w, y2b = y2a - y1a < h ? y2a - y1a : h;
            break;
        default: /* bottom right */
            x1a = xc, y1a = yc, x2a = xc + w < 2 * s ? xc + w : 2 * s, y2a = yc + h < 2 * s ? yc + h : 2 * s;
            x1b = 0, y1b = 0, x2b = w < x2a - x1a ? w : x2a - x1a, y2b = y2a - y1a < h ? y2a - y1a : h;
            break;
        }
        yolo_image_blit(t.image, x1b, y1b, canvas, x1a, y1a, x2b - x1b, y2b - y1b);
        st = tile_instances(p, &t, &part);
        if (st == YOLO_OK) {
            yolo_ins_affine_axis(&part, 1, 1, (float)(x1a - x1b), (float)(y1a - y1b));
            st = yolo_instances_append(ins, &part);
        }
        src->release(src->ctx, ids[k]);
    }
    yolo_instances_free(&part);
    if (st != YOLO_OK) {
        yolo_image_free(canvas);
        return st;
    }
    yolo_ins_clip(ins, 2.0f * s, 2.0f * s);
    yolo_ins_remove_empty(ins);
    return YOLO_OK;
}

static void mat3_mul(const double a[9], const double b[9], double out[9]) {
    double r[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    memcpy(out, r, sizeof r);
}

yolo_status yolo_augment_perspective(const yolo_augment_params *p, yolo_rng *rng, yolo_image *image,
                                     yolo_instances *ins, int out_w, int out_h, yolo_aug_record *rec) {
    /* M = T S R P C, the draws in that order: P, R (angle, scale), S, T */
    double C[9] = {1, 0, -image->width / 2.0, 0, 1, -image->height / 2.0, 0, 0, 1};
    double P[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    P[6] = yolo_rng_range(rng, -p->perspective, p->perspective);
    P[7] = yolo_rng_range(rng, -p->perspective, p->perspective);
    double a = yolo_rng_range(rng, -p->degrees, p->degrees);
    double sc = yolo_rng_range(rng, 1 - p->scale, 1 + p->scale);
    double alpha = sc * cos(a * M_PI / 180), beta = sc * sin(a * M_PI / 180);
    double R[9] = {alpha, beta, 0, -beta, alpha, 0, 0, 0, 1}; /* cv2.getRotationMatrix2D(center 0, a, sc) */
    double S[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double shx = yolo_rng_range(rng, -p->shear, p->shear), shy = yolo_rng_range(rng, -p->shear, p->shear);
    S[1] = tan(shx * M_PI / 180);
    S[3] = tan(shy * M_PI / 180);
    double T[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    T[2] = yolo_rng_range(rng, 0.5 - p->translate, 0.5 + p->translate) * out_w;
    T[5] = yolo_rng_range(rng, 0.5 - p->translate, 0.5 + p->translate) * out_h;
    double M[9];
    mat3_mul(P, C, M);
    mat3_mul(R, M, M);
    mat3_mul(S, M, M);
    mat3_mul(T, M, M);
    if (rec) {
        rec->perspective_x = (float)P[6], rec->perspective_y = (float)P[7];
        rec->degrees = (float)a, rec->scale = (float)sc;
        rec->shear_x = (float)shx, rec->shear_y = (float)shy;
        rec->translate_x = (float)T[2], rec->translate_y = (float)T[5];
    }
    yolo_image out;
    yolo_status st = yolo_image_alloc(&out, out_w, out_h);
    if (st != YOLO_OK)
        return st;
    if (p->perspective == 0) /* affine: keep the last row exact */
        M[6] = M[7] = 0, M[8] = 1;
    st = yolo_image_warp(image, M, &out);
    if (st != YOLO_OK) {
        yolo_image_free(&out);
        return st;
    }
    yolo_image_free(image);
    *image = out;
    if (ins->n == 0)
        return YOLO_OK;
    /* filter against the original boxes scaled by sc, as Ultralytics does */
    float *old = malloc(sizeof(float) * 4 * (size_t)ins->n);
    bool *keep = malloc((size_t)ins->n);
    if (!old || !keep) {
        free(old), free(keep);
        return yolo_error(YOLO_ERR_NOMEM, "perspective");
    }
    for (int k = 0; k < 4 * ins->n; k++)
        old[k] = ins->boxes[k] * (float)sc;
    bool has_poly = yolo_instances_poly_points(ins) > 0;
    yolo_ins_transform(ins, M, (float)out_w, (float)out_h);
    yolo_ins_box_candidates(old, ins, has_poly ? 0.01f : 0.10f, keep);
    yolo_ins_filter(ins, keep);
    free(old), free(keep);
    return YOLO_OK;
}

/* The stream a copy_paste partner (mixup mode) draws its own augmentation
 * from: (seed, purpose, epoch, key_index), key_index the sample being
 * built. A pre_transform given none does no copy_paste (a copy_paste
 * partner's own, or after close_mosaic). */
typedef struct copy_paste_stream {
    uint64_t seed;
    int epoch;
    uint32_t purpose;
    int64_t key_index;
} copy_paste_stream;

static yolo_status pre_transform(const yolo_augment_params *p, bool mosaic_on, yolo_rng *rng, int64_t index,
                                 const yolo_aug_source *src, int ow, int oh, yolo_image *img, yolo_instances *ins,
                                 yolo_aug_record *rec, yolo_image_meta *meta, const copy_paste_stream *cp);

/* Mixup-mode copy_paste, after the perspective: instances of another
 * sample, itself mosaicked and warped (without copy_paste of its own). */
static yolo_status copy_paste_from_partner(const yolo_augment_params *p, bool mosaic_on, yolo_rng *rng,
                                           int64_t index, const yolo_aug_source *src, yolo_image *img,
                                           yolo_instances *ins, yolo_aug_record *rec, const copy_paste_stream *cp) {
    if (ins->n == 0 || yolo_instances_poly_points(ins) == 0)
        return YOLO_OK; /* Ultralytics returns before drawing a partner */
    int64_t partner = draw_partner(rng, src, index, p->mosaic_window);
    yolo_rng prng;
    yolo_rng_init(&prng, cp->seed, cp->purpose, (uint32_t)cp->epoch, (uint32_t)cp->key_index);
    yolo_image img2 = {0};
    yolo_instances ins2;
    yolo_instances_init(&ins2, ins->kpt_count, ins->kpt_dims);
    yolo_aug_record rec2 = {0};
    yolo_image_meta meta2 = {0};
    int n = 0;
    yolo_status st =
        pre_transform(p, mosaic_on, &prng, partner, src, img->width, img->height, &img2, &ins2, &rec2, &meta2, NULL);
    if (st == YOLO_OK)
        st = yolo_copy_paste(p->copy_paste, img, ins, &img2, &ins2, &n);
    rec->copy_pasted += n;
    yolo_image_free(&img2);
    yolo_instances_free(&ins2);
    return st;
}

/* Mosaic (p) or letterbox, then the random perspective: one ow x oh image
 * (imgsz square; a rect training batch's shape, where mosaic and
 * copy_paste are off); copy_paste on the mosaic canvas (flip mode) or
 * after the perspective (mixup mode), where Ultralytics' v8_transforms
 * inserts it. */
static yolo_status pre_transform(const yolo_augment_params *p, bool mosaic_on, yolo_rng *rng, int64_t index,
                                 const yolo_aug_source *src, int ow, int oh, yolo_image *img, yolo_instances *ins,
                                 yolo_aug_record *rec, yolo_image_meta *meta, const copy_paste_stream *cp) {
    bool flip_paste = cp && p->copy_paste_mode == YOLO_COPY_PASTE_FLIP;
    yolo_status st;
    bool use_mosaic = yolo_rng_bernoulli(rng, mosaic_on ? p->mosaic : 0);
    if (use_mosaic) {
        st = mosaic4(p, rng, index, src, img, ins, rec);
        int n = 0;
        if (st == YOLO_OK && flip_paste)
            st = yolo_copy_paste(p->copy_paste, img, ins, NULL, NULL, &n);
        rec->copy_pasted = n;
    } else {
        yolo_aug_tile t;
        st = src->acquire(src->ctx, index, &t);
        if (st != YOLO_OK)
            return st;
        st = flip_paste ? letterbox_copy_paste(p, &t, img, ins, meta, &rec->copy_pasted)
                        : letterbox(p, &t, ow, oh, img, ins, meta);
        src->release(src->ctx, index);
    }
    if (st == YOLO_OK)
        st = yolo_augment_perspective(p, rng, img, ins, ow, oh, rec);
    if (st == YOLO_OK && cp && p->copy_paste_mode == YOLO_COPY_PASTE_MIXUP)
        st = copy_paste_from_partner(p, mosaic_on, rng, index, src, img, ins, rec, cp);
    if (st != YOLO_OK)
        yolo_image_free(img);
    return st;
}

static void start_record(yolo_aug_output *out, int epoch, int64_t index) {
    yolo_aug_record *rec = &out->record;
    memset(rec, 0, sizeof *rec);
    rec->sample = index;
    rec->epoch = epoch;
    rec->mixup_partner = -1;
    for (int k = 0; k < 3; k++)
        rec->mosaic_partners[k] = -1;
    memset(&out->meta, 0, sizeof out->meta);
    out->image_class = -1;
    yolo_instances_clear(&out->instances);
}

yolo_status yolo_augment_letterbox(const yolo_augment_params *p, int epoch, int64_t index, const yolo_aug_source *src,
                                   int out_w, int out_h, yolo_aug_output *out) {
    start_record(out, epoch, index);
    yolo_aug_tile t;
    yolo_status st = src->acquire(src->ctx, index, &t);
    if (st != YOLO_OK)
        return st;
    st = letterbox(p, &t, out_w, out_h, &out->image, &out->instances, &out->meta);
    src->release(src->ctx, index);
    if (st == YOLO_OK)
        yolo_ins_to_normalized(&out->instances, (float)out_w, (float)out_h);
    return st;
}

/* A mix partner (mixup, CutMix) of sample `index`: sample `partner` through
 * the same pre_transform, copy_paste included (Ultralytics' MixUp and
 * CutMix reuse it), on its own stream (seed, purpose, epoch, index), into
 * img2 and ins2 (pixel xyxy, ins2 initialised like `like`). Both mixes run
 * only while mosaic is on (close_mosaic turns them off with it). */
static yolo_status augment_partner(const yolo_augment_params *p, uint64_t seed, int epoch, int64_t index,
                                   uint32_t purpose, int64_t partner, const yolo_aug_source *src, int ow, int oh,
                                   const copy_paste_stream *cp, const yolo_instances *like, yolo_image *img2,
                                   yolo_instances *ins2) {
    yolo_rng prng;
    yolo_rng_init(&prng, seed, purpose, (uint32_t)epoch, (uint32_t)index);
    yolo_instances_init(ins2, like->kpt_count, like->kpt_dims);
    yolo_aug_record rec2 = {0};
    yolo_image_meta meta2 = {0};
    return pre_transform(p, true, &prng, partner, src, ow, oh, img2, ins2, &rec2, &meta2, cp);
}

/* The training augmentation into ow x oh (see yolo_augment_detect). */
static yolo_status augment_train(const yolo_augment_params *p, bool mosaic_on, uint64_t seed, int epoch, int64_t index,
                                 const int *flip_idx, const yolo_aug_source *src, int ow, int oh,
                                 yolo_aug_output *out) {
    start_record(out, epoch, index);
    yolo_aug_record *rec = &out->record;
    yolo_status st;
    yolo_rng rng;
    yolo_rng_init(&rng, seed, YOLO_RNG_AUGMENT, (uint32_t)epoch, (uint32_t)index);
    /* close_mosaic turns copy_paste off with mosaic and mixup */
    bool paste = mosaic_on && p->copy_paste > 0;
    copy_paste_stream cp = {seed, epoch, YOLO_RNG_COPY_PASTE_PARTNER, index};
    copy_paste_stream cp_of_partner = {seed, epoch, YOLO_RNG_COPY_PASTE_MIXUP_PARTNER, index};
    copy_paste_stream cp_of_cutmix = {seed, epoch, YOLO_RNG_COPY_PASTE_CUTMIX_PARTNER, index};
    st = pre_transform(p, mosaic_on, &rng, index, src, ow, oh, &out->image, &out->instances, rec, &out->meta,
                       paste ? &cp : NULL);
    if (st != YOLO_OK)
        return st;
    /* a warped training image has no mapping back: it is its own original */
    out->meta = (yolo_image_meta){ow, oh, 1.0f, 1.0f, 0.0f, 0.0f};
    /* mixup: blend with an independently augmented partner */
    bool mix = yolo_rng_bernoulli(&rng, mosaic_on ? p->mixup : 0);
    if (mix) {
        int64_t partner = draw_partner(&rng, src, index, p->mosaic_window);
        double lambda = yolo_rng_beta(&rng, 32.0, 32.0);
        yolo_image img2 = {0};
        yolo_instances ins2;
        st = augment_partner(p, seed, epoch, index, YOLO_RNG_MIXUP_PARTNER, partner, src, ow, oh,
                             paste ? &cp_of_partner : NULL, &out->instances, &img2, &ins2);
        if (st == YOLO_OK) {
            yolo_image_blend(&out->image, &img2, (float)lambda);
            st = yolo_instances_append(&out->instances, &ins2);
        }
        yolo_image_free(&img2);
        yolo_instances_free(&ins2);
        rec->mixup = 1;
        rec->mixup_partner = partner;
        rec->mixup_lambda = (float)lambda;
        if (st != YOLO_OK)
            return st;
    }
    /* CutMix: a region of another independently augmented partner. Drawn
     * only when on, so cutmix=0 keeps the other draws as they were. */
    if (mosaic_on && p->cutmix > 0 && yolo_rng_bernoulli(&rng, p->cutmix)) {
        int64_t partner = draw_partner(&rng, src, index, p->mosaic_window);
        yolo_image img2 = {0};
        yolo_instances ins2;
        bool applied = false;
        st = augment_partner(p, seed, epoch, index, YOLO_RNG_CUTMIX_PARTNER, partner, src, ow, oh,
                             paste ? &cp_of_cutmix : NULL, &out->instances, &img2, &ins2);
        if (st == YOLO_OK)
            st = yolo_cutmix(&rng, &out->image, &out->instances, &img2, &ins2, &applied);
        yolo_image_free(&img2);
        yolo_instances_free(&ins2);
        rec->cutmix = applied;
        if (st != YOLO_OK)
            return st;
    }
    yolo_augment_hsv(p, &rng, &out->image, rec->hsv_gain);
    /* flips */
    if (yolo_rng_bernoulli(&rng, p->flipud)) {
        rec->flip_ud = 1;
        yolo_image_flip_ud(&out->image);
        yolo_ins_flip_ud(&out->instances, (float)oh);
    }
    if (yolo_rng_bernoulli(&rng, p->fliplr)) {
        rec->flip_lr = 1;
        yolo_image_flip_lr(&out->image);
        yolo_ins_flip_lr(&out->instances, (float)ow, flip_idx);
    }
    /* Ultralytics' Format(bgr=): with probability bgr the channels stay
     * swapped. Drawn only when on, so bgr=0 keeps the other draws as they were. */
    if (p->bgr > 0 && yolo_rng_bernoulli(&rng, p->bgr)) {
        uint8_t *px = out->image.data;
        for (int64_t i = 0; i < (int64_t)out->image.width * out->image.height; i++, px += 3) {
            uint8_t r = px[0];
            px[0] = px[2];
            px[2] = r;
        }
    }
    yolo_ins_to_normalized(&out->instances, (float)ow, (float)oh);
    return YOLO_OK;
}

yolo_status yolo_augment_detect(const yolo_augment_params *p, bool augment, bool mosaic_on, uint64_t seed, int epoch,
                                int64_t index, const int *flip_idx, const yolo_aug_source *src, yolo_aug_output *out) {
    if (!augment)
        return yolo_augment_letterbox(p, epoch, index, src, p->imgsz, p->imgsz, out);
    return augment_train(p, mosaic_on, seed, epoch, index, flip_idx, src, p->imgsz, p->imgsz, out);
}

yolo_status yolo_augment_detect_rect(const yolo_augment_params *p, uint64_t seed, int epoch, int64_t index,
                                     const int *flip_idx, const yolo_aug_source *src, int out_w, int out_h,
                                     yolo_aug_output *out) {
    return augment_train(p, false, seed, epoch, index, flip_idx, src, out_w, out_h, out);
}
