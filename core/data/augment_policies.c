/* torchvision's RandAugment, AutoAugment (ImageNet) and AugMix (see
 * augment_policies.h). Draws map one to one onto torchvision's: each
 * torch.randint(n) is yolo_rng_below(n), each torch.rand a uniform, each
 * Dirichlet a set of Gamma(alpha) draws normalized. */
#include "data/augment_policies.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "data/image_enhance.h"
#include "data/rng.h"

typedef enum op_kind {
    OP_IDENTITY,
    OP_SHEAR_X,
    OP_SHEAR_Y,
    OP_TRANSLATE_X,
    OP_TRANSLATE_Y,
    OP_ROTATE,
    OP_BRIGHTNESS,
    OP_COLOR,
    OP_CONTRAST,
    OP_SHARPNESS,
    OP_POSTERIZE,
    OP_SOLARIZE,
    OP_AUTOCONTRAST,
    OP_EQUALIZE,
    OP_INVERT,
} op_kind;

/* One policy's magnitude space: translate_extent is the fraction of the
 * side a full translation moves (150/331, AugMix 1/3); posterize_top the
 * bits at bin 0 (8, AugMix 4). */
typedef struct op_space {
    int bins;
    double translate_extent;
    int posterize_top;
} op_space;

static bool op_ranged(op_kind op) {
    return op != OP_IDENTITY && op != OP_AUTOCONTRAST && op != OP_EQUALIZE && op != OP_INVERT;
}

static bool op_signed(op_kind op) { return op_ranged(op) && op != OP_POSTERIZE && op != OP_SOLARIZE; }

/* torch.linspace(start, end, steps)[i] in float32, as ATen computes it. */
static float linspace_at(float start, float end, int steps, int i) {
    float step = (end - start) / (float)(steps - 1);
    return i < steps / 2 ? start + step * (float)i : end - step * (float)(steps - i - 1);
}

static double op_magnitude(op_kind op, const op_space *sp, int bin, int width, int height) {
    switch (op) {
    case OP_SHEAR_X:
    case OP_SHEAR_Y: return linspace_at(0.0f, 0.3f, sp->bins, bin);
    case OP_TRANSLATE_X: return linspace_at(0.0f, (float)(sp->translate_extent * width), sp->bins, bin);
    case OP_TRANSLATE_Y: return linspace_at(0.0f, (float)(sp->translate_extent * height), sp->bins, bin);
    case OP_ROTATE: return linspace_at(0.0f, 30.0f, sp->bins, bin);
    case OP_BRIGHTNESS:
    case OP_COLOR:
    case OP_CONTRAST:
    case OP_SHARPNESS: return linspace_at(0.0f, 0.9f, sp->bins, bin);
    case OP_POSTERIZE: /* top - round(arange(bins) / ((bins - 1) / 4)), half to even */
        return sp->posterize_top - (int)nearbyintf((float)bin / (float)((sp->bins - 1) / 4.0));
    case OP_SOLARIZE: return linspace_at(255.0f, 0.0f, sp->bins, bin);
    default: return 0.0;
    }
}

/* torchvision's _apply_op. */
static yolo_status apply_op(yolo_image *img, op_kind op, double m) {
    switch (op) {
    case OP_SHEAR_X: return yolo_enhance_shear(img, m, 0);
    case OP_SHEAR_Y: return yolo_enhance_shear(img, 0, m);
    case OP_TRANSLATE_X: return yolo_enhance_translate(img, (int)m, 0);
    case OP_TRANSLATE_Y: return yolo_enhance_translate(img, 0, (int)m);
    case OP_ROTATE: return yolo_enhance_rotate(img, m);
    case OP_BRIGHTNESS: yolo_enhance_brightness(img, (float)(1.0 + m)); break;
    case OP_COLOR: yolo_enhance_color(img, (float)(1.0 + m)); break;
    case OP_CONTRAST: yolo_enhance_contrast(img, (float)(1.0 + m)); break;
    case OP_SHARPNESS: return yolo_enhance_sharpness(img, (float)(1.0 + m));
    case OP_POSTERIZE: yolo_enhance_posterize(img, (int)m); break;
    case OP_SOLARIZE: yolo_enhance_solarize(img, m); break;
    case OP_AUTOCONTRAST: yolo_enhance_autocontrast(img); break;
    case OP_EQUALIZE: yolo_enhance_equalize(img); break;
    case OP_INVERT: yolo_enhance_invert(img); break;
    case OP_IDENTITY: break;
    }
    return YOLO_OK;
}

/* ---- RandAugment ---------------------------------------------------------- */

static const op_kind randaugment_ops[] = {OP_IDENTITY,   OP_SHEAR_X,   OP_SHEAR_Y,      OP_TRANSLATE_X, OP_TRANSLATE_Y,
                                          OP_ROTATE,     OP_BRIGHTNESS, OP_COLOR,       OP_CONTRAST,    OP_SHARPNESS,
                                          OP_POSTERIZE,  OP_SOLARIZE,   OP_AUTOCONTRAST, OP_EQUALIZE};

static yolo_status randaugment(yolo_rng *rng, yolo_image *img) {
    const op_space sp = {31, 150.0 / 331.0, 8};
    const int num_ops = 2, magnitude = 9, n = (int)(sizeof randaugment_ops / sizeof *randaugment_ops);
    yolo_status st = YOLO_OK;
    for (int k = 0; k < num_ops && st == YOLO_OK; k++) {
        op_kind op = randaugment_ops[yolo_rng_below(rng, (uint64_t)n)];
        double m = op_ranged(op) ? op_magnitude(op, &sp, magnitude, img->width, img->height) : 0.0;
        if (op_signed(op) && yolo_rng_below(rng, 2))
            m = -m;
        st = apply_op(img, op, m);
    }
    return st;
}

/* ---- AutoAugment (ImageNet policy) ------------------------------------------ */

typedef struct sub_op {
    op_kind op;
    float p;
    int bin; /* -1: no magnitude */
} sub_op;

#define E OP_EQUALIZE
static const sub_op imagenet_policy[25][2] = {
    {{OP_POSTERIZE, 0.4f, 8}, {OP_ROTATE, 0.6f, 9}},       {{OP_SOLARIZE, 0.6f, 5}, {OP_AUTOCONTRAST, 0.6f, -1}},
    {{E, 0.8f, -1}, {E, 0.6f, -1}},                        {{OP_POSTERIZE, 0.6f, 7}, {OP_POSTERIZE, 0.6f, 6}},
    {{E, 0.4f, -1}, {OP_SOLARIZE, 0.2f, 4}},               {{E, 0.4f, -1}, {OP_ROTATE, 0.8f, 8}},
    {{OP_SOLARIZE, 0.6f, 3}, {E, 0.6f, -1}},               {{OP_POSTERIZE, 0.8f, 5}, {E, 1.0f, -1}},
    {{OP_ROTATE, 0.2f, 3}, {OP_SOLARIZE, 0.6f, 8}},        {{E, 0.6f, -1}, {OP_POSTERIZE, 0.4f, 6}},
    {{OP_ROTATE, 0.8f, 8}, {OP_COLOR, 0.4f, 0}},           {{OP_ROTATE, 0.4f, 9}, {E, 0.6f, -1}},
    {{E, 0.0f, -1}, {E, 0.8f, -1}},                        {{OP_INVERT, 0.6f, -1}, {E, 1.0f, -1}},
    {{OP_COLOR, 0.6f, 4}, {OP_CONTRAST, 1.0f, 8}},         {{OP_ROTATE, 0.8f, 8}, {OP_COLOR, 1.0f, 2}},
    {{OP_COLOR, 0.8f, 8}, {OP_SOLARIZE, 0.8f, 7}},         {{OP_SHARPNESS, 0.4f, 7}, {OP_INVERT, 0.6f, -1}},
    {{OP_SHEAR_X, 0.6f, 5}, {E, 1.0f, -1}},                {{OP_COLOR, 0.4f, 0}, {E, 0.6f, -1}},
    {{E, 0.4f, -1}, {OP_SOLARIZE, 0.2f, 4}},               {{OP_SOLARIZE, 0.6f, 5}, {OP_AUTOCONTRAST, 0.6f, -1}},
    {{OP_INVERT, 0.6f, -1}, {E, 1.0f, -1}},                {{OP_COLOR, 0.6f, 4}, {OP_CONTRAST, 1.0f, 8}},
    {{E, 0.8f, -1}, {E, 0.6f, -1}},
};
#undef E

static yolo_status autoaugment(yolo_rng *rng, yolo_image *img) {
    const op_space sp = {10, 150.0 / 331.0, 8};
    /* get_params: the sub-policy, two probabilities and two signs, drawn up front */
    int id = (int)yolo_rng_below(rng, 25);
    float probs[2];
    int signs[2];
    for (int k = 0; k < 2; k++)
        probs[k] = (float)yolo_rng_uniform(rng);
    for (int k = 0; k < 2; k++)
        signs[k] = (int)yolo_rng_below(rng, 2);
    yolo_status st = YOLO_OK;
    for (int k = 0; k < 2 && st == YOLO_OK; k++) {
        const sub_op *s = &imagenet_policy[id][k];
        if (probs[k] > s->p)
            continue;
        double m = s->bin >= 0 ? op_magnitude(s->op, &sp, s->bin, img->width, img->height) : 0.0;
        if (op_signed(s->op) && signs[k] == 0)
            m = -m;
        st = apply_op(img, s->op, m);
    }
    return st;
}

/* ---- AugMix ------------------------------------------------------------------ */

static const op_kind augmix_ops[] = {OP_SHEAR_X,  OP_SHEAR_Y,      OP_TRANSLATE_X, OP_TRANSLATE_Y, OP_ROTATE,
                                     OP_POSTERIZE, OP_SOLARIZE,    OP_AUTOCONTRAST, OP_EQUALIZE,   OP_BRIGHTNESS,
                                     OP_COLOR,    OP_CONTRAST,     OP_SHARPNESS};

#define AUGMIX_WIDTH 3

/* torch._sample_dirichlet with all alphas = alpha: Gamma draws, normalized. */
static void dirichlet(yolo_rng *rng, double alpha, int n, float *out) {
    double g[AUGMIX_WIDTH], sum = 0;
    for (int k = 0; k < n; k++)
        sum += g[k] = yolo_rng_gamma(rng, alpha);
    for (int k = 0; k < n; k++)
        out[k] = (float)(g[k] / sum);
}

yolo_status yolo_augmix(yolo_rng *rng, yolo_image *img, yolo_image chains[3], float weights[4]) {
    const op_space sp = {10, 1.0 / 3.0, 4};
    const int severity = 3, n_ops = (int)(sizeof augmix_ops / sizeof *augmix_ops);
    const double alpha = 1.0;
    size_t n = (size_t)img->width * img->height * 3;
    float m[2], w[AUGMIX_WIDTH];
    dirichlet(rng, alpha, 2, m);
    dirichlet(rng, alpha, AUGMIX_WIDTH, w);
    float *mix = malloc(n * sizeof(float));
    yolo_image aug = {0};
    yolo_status st = mix ? yolo_image_alloc(&aug, img->width, img->height)
                         : yolo_error(YOLO_ERR_NOMEM, "augmix: %dx%d image", img->width, img->height);
    if (st == YOLO_OK && weights)
        weights[0] = m[0];
    for (size_t i = 0; st == YOLO_OK && i < n; i++)
        mix[i] = m[0] * (float)img->data[i];
    for (int c = 0; c < AUGMIX_WIDTH && st == YOLO_OK; c++) {
        float wc = w[c] * m[1];
        memcpy(aug.data, img->data, n);
        int depth = 1 + (int)yolo_rng_below(rng, 3); /* chain_depth -1: randint(1, 4) */
        for (int d = 0; d < depth && st == YOLO_OK; d++) {
            op_kind op = augmix_ops[yolo_rng_below(rng, (uint64_t)n_ops)];
            double mag = 0.0;
            if (op_ranged(op))
                mag = op_magnitude(op, &sp, (int)yolo_rng_below(rng, (uint64_t)severity), img->width, img->height);
            if (op_signed(op) && yolo_rng_below(rng, 2))
                mag = -mag;
            st = apply_op(&aug, op, mag);
        }
        for (size_t i = 0; st == YOLO_OK && i < n; i++)
            mix[i] += wc * (float)aug.data[i];
        if (st == YOLO_OK && chains) {
            st = yolo_image_alloc(&chains[c], img->width, img->height);
            if (st == YOLO_OK)
                memcpy(chains[c].data, aug.data, n);
        }
        if (weights)
            weights[1 + c] = wc;
    }
    for (size_t i = 0; st == YOLO_OK && i < n; i++) /* .to(uint8): truncation */
        img->data[i] = (uint8_t)(mix[i] <= 0 ? 0 : mix[i] >= 255 ? 255 : mix[i]);
    free(mix);
    yolo_image_free(&aug);
    return st;
}

/* ---- selection ------------------------------------------------------------- */

static const char *const policy_names[] = {NULL, "randaugment", "autoaugment", "augmix"};

yolo_status yolo_auto_augment_parse(const char *name, yolo_auto_augment *out) {
    *out = YOLO_AUTO_AUGMENT_NONE;
    if (!name)
        return YOLO_OK;
    for (int k = 1; k < (int)(sizeof policy_names / sizeof *policy_names); k++)
        if (strcmp(name, policy_names[k]) == 0) {
            *out = (yolo_auto_augment)k;
            return YOLO_OK;
        }
    return yolo_error(YOLO_ERR_CONFIG,
                      "auto_augment=%s: not a policy; use randaugment, autoaugment or augmix (or null: the hsv_* "
                      "colour jitter instead)",
                      name);
}

const char *yolo_auto_augment_name(yolo_auto_augment policy) {
    return policy > YOLO_AUTO_AUGMENT_NONE && policy <= YOLO_AUTO_AUGMENT_AUGMIX ? policy_names[policy] : "null";
}

yolo_status yolo_auto_augment_apply(yolo_auto_augment policy, yolo_rng *rng, yolo_image *img) {
    switch (policy) {
    case YOLO_AUTO_AUGMENT_RANDAUGMENT: return randaugment(rng, img);
    case YOLO_AUTO_AUGMENT_AUTOAUGMENT: return autoaugment(rng, img);
    case YOLO_AUTO_AUGMENT_AUGMIX: return yolo_augmix(rng, img, NULL, NULL);
    case YOLO_AUTO_AUGMENT_NONE: return YOLO_OK;
    }
    return yolo_error(YOLO_ERR_ARG, "auto_augment: policy %d out of range", (int)policy);
}
