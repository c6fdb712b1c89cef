/* augment_policies.h — torchvision's auto-augment policies for the
 * classify training (Ultralytics' auto_augment key), drawing from the
 * sample's seeded stream (data/rng.h) so a run stays bit-reproducible.
 *
 *   randaugment  RandAugment(num_ops=2, magnitude=9, num_magnitude_bins=31):
 *                2 of 14 ops (Identity, ShearX/Y, TranslateX/Y, Rotate,
 *                Brightness, Color, Contrast, Sharpness, Posterize,
 *                Solarize, AutoContrast, Equalize) at bin 9 of 31, signed
 *                ops negated with probability 1/2;
 *   autoaugment  AutoAugment(IMAGENET): one of the 25 sub-policies, each op
 *                applied with its probability at its bin of 10;
 *   augmix       AugMix(severity=3, mixture_width=3, chain_depth=-1,
 *                alpha=1.0, all_ops=True): 3 chains of 1-3 ops (13 ops,
 *                bins 0-2 of 10) mixed with Dirichlet weights, then mixed
 *                with the original by a Beta(1, 1) weight.
 * All with bilinear interpolation and fill 0, as Ultralytics builds them.
 * The pixel arithmetic is PIL's (data/image_enhance.h); AugMix runs
 * torchvision's tensor ops, which differ from PIL's by rounding (a warp
 * rounds where PIL truncates), so AugMix pixels may differ by 1. */
#ifndef YOLO_DATA_AUGMENT_POLICIES_H
#define YOLO_DATA_AUGMENT_POLICIES_H

#include "data/augment.h"

struct yolo_rng;

/* "randaugment", "autoaugment", "augmix"; NULL (null in the yaml) is
 * NONE. Anything else: YOLO_ERR_CONFIG naming the value and the valid ones. */
yolo_status yolo_auto_augment_parse(const char *name, yolo_auto_augment *out);
const char *yolo_auto_augment_name(yolo_auto_augment policy);

/* Applies `policy` to img in place (same size), drawing from rng. */
yolo_status yolo_auto_augment_apply(yolo_auto_augment policy, struct yolo_rng *rng, yolo_image *img);

/* AugMix with its parts exposed for tests: chains (3 images, may be NULL)
 * receives the augmented chains, weights[0] the original's weight and
 * weights[1..3] the chains' (non-negative, summing to 1); img becomes
 * trunc(weights[0] img + sum weights[k] chain[k]). */
yolo_status yolo_augmix(struct yolo_rng *rng, yolo_image *img, yolo_image chains[3], float weights[4]);

#endif
