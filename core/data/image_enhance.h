/* image_enhance.h — the image operations of torchvision's auto-augment
 * policies (RandAugment, AutoAugment, AugMix), in place on 8-bit RGB.
 *
 * Ultralytics hands torchvision a PIL image, so the arithmetic is PIL's:
 * ImageEnhance's blends truncate, the bilinear affine resampler samples
 * pixel centres and truncates, pixels mapped outside the source get the
 * fill 0. Geometry follows torchvision's F.affine / F.rotate for PIL
 * inputs. */
#ifndef YOLO_DATA_IMAGE_ENHANCE_H
#define YOLO_DATA_IMAGE_ENHANCE_H

#include "yolo/data.h"

/* PIL Image.transform(AFFINE, BILINEAR) with fill 0: output pixel (x, y)
 * samples the source at inv applied to (x + 0.5, y + 0.5); inv is the
 * 2x3 output->input matrix, row-major. */
yolo_status yolo_enhance_affine(yolo_image *img, const double inv[6]);

/* torchvision ShearX/ShearY: F.affine about the corner (0, 0) with shear
 * atan(m) degrees, i.e. x_in = x + mx y (ShearX) or y_in = y + my x
 * (ShearY); one of mx, my is 0. */
yolo_status yolo_enhance_shear(yolo_image *img, double mx, double my);
/* torchvision TranslateX/Y: F.affine by whole pixels (content moves by dx, dy). */
yolo_status yolo_enhance_translate(yolo_image *img, int dx, int dy);
/* torchvision Rotate: F.rotate, counter-clockwise degrees about the centre (w/2, h/2). */
yolo_status yolo_enhance_rotate(yolo_image *img, double degrees);

/* PIL ImageEnhance with factor f: blend(degenerate, img, f) where the
 * degenerate image is black (brightness), the image's grey (color), its
 * mean grey (contrast) or its 3x3 SMOOTH filtering (sharpness). */
void yolo_enhance_brightness(yolo_image *img, float f);
void yolo_enhance_color(yolo_image *img, float f);
void yolo_enhance_contrast(yolo_image *img, float f);
yolo_status yolo_enhance_sharpness(yolo_image *img, float f);

/* PIL ImageOps, per channel: keep the top `bits` bits; invert values >=
 * threshold; stretch each channel's [min, max] to [0, 255]; histogram
 * equalization; 255 - v. */
void yolo_enhance_posterize(yolo_image *img, int bits);
void yolo_enhance_solarize(yolo_image *img, double threshold);
void yolo_enhance_autocontrast(yolo_image *img);
void yolo_enhance_equalize(yolo_image *img);
void yolo_enhance_invert(yolo_image *img);

#endif
