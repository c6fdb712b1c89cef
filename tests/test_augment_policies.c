/* auto_augment (torchvision's policies, augment_policies.h):
 *   - the ops against values worked out by hand with PIL's arithmetic
 *     (invert, posterize, solarize, autocontrast, equalize, the truncating
 *     brightness blend, whole-pixel translation with fill 0, rotation by
 *     0 and 180 degrees, the corner-anchored shear);
 *   - each policy keeps the image's size, changes pixels for a fixed seed,
 *     and repeats bit for bit from the same stream;
 *   - AugMix's output is the truncated convex mix of the original and its
 *     three chains, with non-negative weights summing to 1 (within 1 of
 *     the float mix, and between its parts);
 *   - the classify pipeline applies the policy instead of the HSV jitter;
 *   - a name other than randaugment/autoaugment/augmix is an error naming
 *     it and the valid ones; null is no policy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/augment_policies.h"
#include "data/image.h"
#include "data/image_enhance.h"
#include "data/rng.h"
#include "test_util.h"

#define IW 48
#define IH 40

static void pattern(yolo_image *img, int w, int h) {
    yolo_image_alloc(img, w, h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = img->data + 3 * ((size_t)y * w + x);
            p[0] = (uint8_t)(50 + 2 * x), p[1] = (uint8_t)(60 + 3 * y), p[2] = (uint8_t)(((x / 8 + y / 8) % 2) ? 200 : 30);
        }
}

static yolo_image clone(const yolo_image *img) {
    yolo_image c;
    yolo_image_alloc(&c, img->width, img->height);
    memcpy(c.data, img->data, (size_t)img->width * img->height * 3);
    return c;
}

static const uint8_t *px(const yolo_image *img, int x, int y) { return img->data + 3 * ((size_t)y * img->width + x); }

static void test_ops(void) {
    yolo_image a, b;
    pattern(&a, IW, IH);
    b = clone(&a);
    yolo_enhance_invert(&b);
    CHECK(px(&b, 3, 5)[0] == 255 - px(&a, 3, 5)[0] && px(&b, 3, 5)[2] == 255 - px(&a, 3, 5)[2]);
    yolo_image_free(&b);
    b = clone(&a);
    yolo_enhance_posterize(&b, 4);
    CHECK(px(&b, 7, 9)[1] == (px(&a, 7, 9)[1] & 0xF0));
    yolo_image_free(&b);
    b = clone(&a);
    yolo_enhance_solarize(&b, 128.5); /* i < 128.5 kept, 255 - i above */
    CHECK(px(&b, 10, 0)[0] == 70 && px(&b, 40, 0)[0] == 255 - 130 && px(&b, 0, 0)[2] == 30 && px(&b, 8, 0)[2] == 55);
    yolo_image_free(&b);
    /* autocontrast: red runs 50..144 -> 0..255 */
    b = clone(&a);
    yolo_enhance_autocontrast(&b);
    CHECK(px(&b, 0, 0)[0] == 0 && px(&b, IW - 1, 0)[0] >= 254 && px(&b, 10, 0)[0] == (uint8_t)(int)(20 * 255.0 / 94));
    yolo_image_free(&b);
    /* brightness 0.5 truncates: 145 -> 72 */
    b = clone(&a);
    yolo_enhance_brightness(&b, 0.5f);
    CHECK(px(&b, 0, 0)[2] == 15 && px(&b, 8, 0)[2] == 100 && px(&b, 0, 0)[0] == 25);
    yolo_image_free(&b);
    /* translate by (3, -2): content moves right 3, up 2; the uncovered border is 0 */
    b = clone(&a);
    CHECK(yolo_enhance_translate(&b, 3, -2) == YOLO_OK);
    CHECK(memcmp(px(&b, 10, 10), px(&a, 7, 12), 3) == 0 && px(&b, 1, 10)[0] == 0 && px(&b, 10, IH - 1)[1] == 0);
    yolo_image_free(&b);
    /* rotation by 0 is a copy, by 180 the point reflection */
    b = clone(&a);
    CHECK(yolo_enhance_rotate(&b, 0) == YOLO_OK && memcmp(a.data, b.data, (size_t)IW * IH * 3) == 0);
    CHECK(yolo_enhance_rotate(&b, 180) == YOLO_OK);
    CHECK(memcmp(px(&b, 5, 7), px(&a, IW - 1 - 5, IH - 1 - 7), 3) == 0);
    yolo_image_free(&b);
    /* ShearX 0.5 about the corner: row y samples x + 0.5 (y + 0.5) - 0.5, row 0 blends two pixels */
    b = clone(&a);
    CHECK(yolo_enhance_shear(&b, 0.5, 0) == YOLO_OK);
    CHECK(px(&b, 4, 0)[0] == (uint8_t)(px(&a, 4, 0)[0] + 0.25 * 2) && px(&b, 4, 1)[0] == (uint8_t)(px(&a, 4, 1)[0] + 0.75 * 2));
    CHECK(px(&b, IW - 1, 20)[0] == 0); /* sheared in from outside: fill */
    yolo_image_free(&b);
    /* equalize: half 10, half 200 -> 0 and 255 (PIL's step = 512 // 255 = 2) */
    yolo_image c;
    yolo_image_alloc(&c, 32, 32);
    for (int i = 0; i < 32 * 32 * 3; i++)
        c.data[i] = i < 32 * 16 * 3 ? 10 : 200;
    yolo_enhance_equalize(&c);
    CHECK(c.data[0] == 0 && c.data[32 * 32 * 3 - 1] == 255);
    yolo_image_free(&c);
    yolo_image_free(&a);
}

static int changed(const yolo_image *a, const yolo_image *b) {
    return memcmp(a->data, b->data, (size_t)a->width * a->height * 3) != 0;
}

static void test_policies(void) {
    yolo_image orig;
    pattern(&orig, IW, IH);
    for (int policy = YOLO_AUTO_AUGMENT_RANDAUGMENT; policy <= YOLO_AUTO_AUGMENT_AUGMIX; policy++) {
        int differ = 0;
        for (uint32_t i = 0; i < 16; i++) {
            yolo_image x = clone(&orig), y = clone(&orig);
            yolo_rng r1, r2;
            yolo_rng_init(&r1, 3, YOLO_RNG_AUGMENT, 0, i);
            yolo_rng_init(&r2, 3, YOLO_RNG_AUGMENT, 0, i);
            CHECK(yolo_auto_augment_apply((yolo_auto_augment)policy, &r1, &x) == YOLO_OK);
            CHECK(yolo_auto_augment_apply((yolo_auto_augment)policy, &r2, &y) == YOLO_OK);
            CHECK_MSG(x.width == IW && x.height == IH && !changed(&x, &y), "%s: sample %u not repeatable",
                      yolo_auto_augment_name((yolo_auto_augment)policy), i);
            differ += changed(&x, &orig);
            yolo_image_free(&x), yolo_image_free(&y);
        }
        /* RandAugment keeps the image only with two Identity draws (1/196),
         * AutoAugment when both ops fail their probability (or are no-ops) */
        CHECK_MSG(differ >= 8, "%s changed %d of 16 samples", yolo_auto_augment_name((yolo_auto_augment)policy),
                  differ);
    }
    yolo_image_free(&orig);
}

static void test_augmix_convex(void) {
    yolo_image orig, img, chains[3];
    pattern(&orig, IW, IH);
    for (uint32_t i = 0; i < 8; i++) {
        img = clone(&orig);
        float w[4];
        yolo_rng rng;
        yolo_rng_init(&rng, 11, YOLO_RNG_AUGMENT, 1, i);
        CHECK(yolo_augmix(&rng, &img, chains, w) == YOLO_OK);
        CHECK_MSG(w[0] >= 0 && w[1] >= 0 && w[2] >= 0 && w[3] >= 0 && fabsf(w[0] + w[1] + w[2] + w[3] - 1) < 1e-5f,
                  "weights %g %g %g %g", w[0], w[1], w[2], w[3]);
        long bad = 0, outside = 0;
        for (size_t k = 0; k < (size_t)IW * IH * 3; k++) {
            float mix = w[0] * orig.data[k];
            uint8_t lo = orig.data[k], hi = orig.data[k];
            for (int c = 0; c < 3; c++) {
                mix += w[1 + c] * chains[c].data[k];
                lo = chains[c].data[k] < lo ? chains[c].data[k] : lo;
                hi = chains[c].data[k] > hi ? chains[c].data[k] : hi;
            }
            /* 1 of slack: the weights sum to 1 only up to float rounding (as torch's) */
            bad += abs(img.data[k] - (int)mix) > 1;
            outside += img.data[k] + 1 < lo || img.data[k] > hi;
        }
        CHECK_MSG(bad == 0 && outside == 0, "augmix sample %u: %ld pixels not the mix, %ld outside its parts", i, bad,
                  outside);
        for (int c = 0; c < 3; c++)
            yolo_image_free(&chains[c]);
        yolo_image_free(&img);
    }
    yolo_image_free(&orig);
}

static yolo_image g_tile;
static yolo_status acquire(void *ctx, int64_t i, yolo_aug_tile *t) {
    (void)ctx, (void)i;
    t->image = &g_tile, t->labels = NULL, t->orig_width = g_tile.width, t->orig_height = g_tile.height;
    t->image_class = 1;
    return YOLO_OK;
}
static void release(void *ctx, int64_t i) { (void)ctx, (void)i; }

static void test_classify_pipeline(void) {
    pattern(&g_tile, 64, 48);
    yolo_aug_source src = {NULL, acquire, release, NULL, NULL, 1};
    yolo_augment_params p;
    yolo_augment_defaults(&p);
    p.imgsz = 32, p.erasing = 0, p.fliplr = 0;
    CHECK(p.auto_augment == YOLO_AUTO_AUGMENT_RANDAUGMENT); /* Ultralytics' default */
    yolo_aug_output out[4];
    for (int policy = 0; policy < 4; policy++) {
        p.auto_augment = (yolo_auto_augment)policy;
        memset(&out[policy], 0, sizeof out[policy]);
        yolo_instances_init(&out[policy].instances, 0, 0);
        CHECK(yolo_augment_classify(&p, true, 5, 0, 2, &src, &out[policy]) == YOLO_OK);
        CHECK(out[policy].image.width == 32 && out[policy].image.height == 32 && out[policy].image_class == 1);
        /* the crop is drawn first, the same for every policy; the HSV jitter only without one */
        CHECK(memcmp(out[policy].record.crop, out[0].record.crop, sizeof out[0].record.crop) == 0);
        CHECK((out[policy].record.hsv_gain[2] != 0) == (policy == YOLO_AUTO_AUGMENT_NONE));
    }
    for (int policy = 1; policy < 4; policy++)
        CHECK_MSG(changed(&out[policy].image, &out[0].image), "policy %d gave the hsv-jittered image", policy);
    for (int policy = 0; policy < 4; policy++)
        yolo_image_free(&out[policy].image), yolo_instances_free(&out[policy].instances);
    yolo_image_free(&g_tile);
}

static void test_names(void) {
    yolo_auto_augment a = YOLO_AUTO_AUGMENT_AUGMIX;
    CHECK(yolo_auto_augment_parse(NULL, &a) == YOLO_OK && a == YOLO_AUTO_AUGMENT_NONE);
    CHECK(yolo_auto_augment_parse("autoaugment", &a) == YOLO_OK && a == YOLO_AUTO_AUGMENT_AUTOAUGMENT);
    CHECK(yolo_auto_augment_parse("trivialaugment", &a) == YOLO_ERR_CONFIG);
    CHECK_MSG(test_error_mentions("trivialaugment") && test_error_mentions("randaugment") &&
                  test_error_mentions("autoaugment") && test_error_mentions("augmix"),
              "%s", yolo_last_error());
    CHECK(strcmp(yolo_auto_augment_name(YOLO_AUTO_AUGMENT_AUGMIX), "augmix") == 0);
}

int main(void) {
    test_ops();
    test_policies();
    test_augmix_convex();
    test_classify_pipeline();
    test_names();
    return test_result("test_augment_policies");
}
