/* Classification augmentation (see augment.h): torchvision-style
 * RandomResizedCrop, flips, the auto_augment policy or (without one) HSV
 * jitter, and RandomErasing for training; short-side resize + centre crop
 * for validation. As Ultralytics' classify_augmentations, a policy
 * replaces the colour jitter (it is not applied on top). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/augment_policies.h"
#include "data/image.h"
#include "data/rng.h"

static yolo_status crop_resize(const yolo_image *src, int x, int y, int w, int h, int out_w, int out_h, yolo_image *out) {
    yolo_image crop;
    yolo_status st = yolo_image_alloc(&crop, w, h);
    if (st != YOLO_OK)
        return st;
    yolo_image_blit(src, x, y, &crop, 0, 0, w, h);
    st = yolo_image_resize(&crop, out_w, out_h, false, out);
    yolo_image_free(&crop);
    return st;
}

static void random_resized_crop(yolo_rng *rng, int W, int H, double scale_lo, int box[4]) {
    double area = (double)W * H, lr0 = log(3.0 / 4.0), lr1 = log(4.0 / 3.0);
    for (int attempt = 0; attempt < 10; attempt++) {
        double target = area * yolo_rng_range(rng, scale_lo, 1.0);
        double aspect = exp(yolo_rng_range(rng, lr0, lr1));
        int w = (int)lround(sqrt(target * aspect)), h = (int)lround(sqrt(target / aspect));
        if (w > 0 && w <= W && h > 0 && h <= H) {
            box[1] = (int)yolo_rng_below(rng, (uint64_t)(H - h + 1));
            box[0] = (int)yolo_rng_below(rng, (uint64_t)(W - w + 1));
            box[2] = w, box[3] = h;
            return;
        }
    }
    /* fallback: the centre crop within the ratio range */
    double in_ratio = (double)W / H;
    int w = W, h = H;
    if (in_ratio < 3.0 / 4.0)
        h = (int)lround(w / (3.0 / 4.0));
    else if (in_ratio > 4.0 / 3.0)
        w = (int)lround(h * (4.0 / 3.0));
    w = w > W ? W : w, h = h > H ? H : h;
    box[0] = (W - w) / 2, box[1] = (H - h) / 2, box[2] = w, box[3] = h;
}

static void random_erasing(yolo_rng *rng, yolo_image *img) {
    int W = img->width, H = img->height;
    double area = (double)W * H, lr0 = log(0.3), lr1 = log(3.3);
    for (int attempt = 0; attempt < 10; attempt++) {
        double target = area * yolo_rng_range(rng, 0.02, 0.33);
        double aspect = exp(yolo_rng_range(rng, lr0, lr1));
        int h = (int)lround(sqrt(target * aspect)), w = (int)lround(sqrt(target / aspect));
        if (h < H && w < W) {
            int y = (int)yolo_rng_below(rng, (uint64_t)(H - h + 1)), x = (int)yolo_rng_below(rng, (uint64_t)(W - w + 1));
            for (int r = y; r < y + h; r++)
                memset(img->data + ((size_t)r * W + x) * 3, 0, (size_t)w * 3);
            return;
        }
    }
}

yolo_status yolo_augment_classify(const yolo_augment_params *p, bool augment, uint64_t seed, int epoch, int64_t index,
                                  const yolo_aug_source *src, yolo_aug_output *out) {
    yolo_aug_record *rec = &out->record;
    memset(rec, 0, sizeof *rec);
    rec->sample = index;
    rec->epoch = epoch;
    rec->mixup_partner = -1;
    for (int k = 0; k < 3; k++)
        rec->mosaic_partners[k] = -1;
    yolo_instances_clear(&out->instances);
    yolo_aug_tile t;
    yolo_status st = src->acquire(src->ctx, index, &t);
    if (st != YOLO_OK)
        return st;
    const yolo_image *img = t.image;
    int W = img->width, H = img->height, s = p->imgsz;
    out->image_class = t.image_class;
    out->meta.orig_width = t.orig_width;
    out->meta.orig_height = t.orig_height;
    if (!augment) {
        double frac = p->crop_fraction > 0 ? p->crop_fraction : 1.0;
        int scale_size = (int)floor(s / frac);
        int rw, rh; /* short side -> scale_size, long side truncated as torchvision */
        if (W <= H)
            rw = scale_size, rh = (int)((double)scale_size * H / W);
        else
            rh = scale_size, rw = (int)((double)scale_size * W / H);
        yolo_image resized;
        st = yolo_image_resize(img, rw, rh, false, &resized);
        if (st == YOLO_OK) {
            int top = (int)lround((rh - s) / 2.0), left = (int)lround((rw - s) / 2.0);
            st = yolo_image_alloc(&out->image, s, s);
            if (st == YOLO_OK) {
                yolo_image_fill(&out->image, 0);
                int x0 = left > 0 ? left : 0, y0 = top > 0 ? top : 0;
                int w = rw - x0 < s ? rw - x0 : s, h = rh - y0 < s ? rh - y0 : s;
                yolo_image_blit(&resized, x0, y0, &out->image, x0 - left, y0 - top, w, h);
            }
            out->meta.ratio_x = (float)rw / W, out->meta.ratio_y = (float)rh / H;
            out->meta.pad_x = (float)-left, out->meta.pad_y = (float)-top;
            yolo_image_free(&resized);
        }
        src->release(src->ctx, index);
        return st;
    }
    yolo_rng rng;
    yolo_rng_init(&rng, seed, YOLO_RNG_AUGMENT, (uint32_t)epoch, (uint32_t)index);
    double scale_lo = 1.0 - p->scale;
    scale_lo = scale_lo < 0.01 ? 0.01 : scale_lo > 1 ? 1 : scale_lo;
    int box[4];
    random_resized_crop(&rng, W, H, scale_lo, box);
    for (int k = 0; k < 4; k++)
        rec->crop[k] = (float)box[k];
    st = crop_resize(img, box[0], box[1], box[2], box[3], s, s, &out->image);
    src->release(src->ctx, index);
    if (st != YOLO_OK)
        return st;
    out->meta.ratio_x = (float)s / box[2], out->meta.ratio_y = (float)s / box[3];
    out->meta.pad_x = -box[0] * out->meta.ratio_x, out->meta.pad_y = -box[1] * out->meta.ratio_y;
    if (yolo_rng_bernoulli(&rng, p->fliplr)) {
        rec->flip_lr = 1;
        yolo_image_flip_lr(&out->image);
    }
    if (yolo_rng_bernoulli(&rng, p->flipud)) {
        rec->flip_ud = 1;
        yolo_image_flip_ud(&out->image);
    }
    if (p->auto_augment != YOLO_AUTO_AUGMENT_NONE) {
        st = yolo_auto_augment_apply(p->auto_augment, &rng, &out->image);
        if (st != YOLO_OK)
            return st;
    } else {
        yolo_augment_hsv(p, &rng, &out->image, rec->hsv_gain);
    }
    if (yolo_rng_bernoulli(&rng, p->erasing))
        random_erasing(&rng, &out->image);
    return YOLO_OK;
}
