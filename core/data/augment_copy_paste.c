/* Copy-paste of instance segments (see augment.h), as Ultralytics 8.3's
 * CopyPaste._transform: the candidates are the source's instances whose
 * box overlaps every box of the image by an intersection-over-(the image
 * box's)-area below 0.30; they are ordered by their largest such overlap
 * (a stable sort) and the first round(p * candidates) are pasted: their
 * class, box and polygon appended, and the source's pixels inside their
 * polygons copied over the image. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/augment.h"
#include "data/image.h"
#include "data/instance_ops.h"

#define COPY_PASTE_MAX_IOA 0.30f

typedef struct candidate {
    int index;
    float max_ioa;
} candidate;

static int by_overlap(const void *x, const void *y) {
    const candidate *a = x, *b = y;
    if (a->max_ioa != b->max_ioa)
        return a->max_ioa < b->max_ioa ? -1 : 1;
    return a->index - b->index; /* stable */
}

static yolo_status paste(float p, yolo_image *img, yolo_instances *ins, const yolo_image *from,
                         const yolo_instances *from_ins, int *pasted) {
    int own = ins->n, n = from_ins->n, chosen = 0;
    candidate *cand = malloc(sizeof(candidate) * (size_t)(n > 0 ? n : 1));
    uint8_t *mask = calloc((size_t)img->width * img->height, 1);
    yolo_status st = cand && mask ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "copy_paste: %d instances", n);
    for (int i = 0; st == YOLO_OK && i < n; i++) {
        float worst = 0;
        for (int j = 0; j < own; j++)
            worst = fmaxf(worst, yolo_box_ioa(from_ins->boxes + 4 * i, ins->boxes + 4 * j));
        if (worst < COPY_PASTE_MAX_IOA)
            cand[chosen++] = (candidate){i, worst};
    }
    if (st == YOLO_OK)
        qsort(cand, (size_t)chosen, sizeof *cand, by_overlap);
    int take = (int)nearbyint((double)p * chosen); /* Python's round: half to even */
    size_t kn = (size_t)from_ins->kpt_count * (size_t)from_ins->kpt_dims;
    for (int k = 0; st == YOLO_OK && k < take; k++) {
        int j = cand[k].index;
        int p0 = from_ins->poly_start ? from_ins->poly_start[j] : 0;
        int np = from_ins->poly_start ? from_ins->poly_start[j + 1] - p0 : 0;
        const float *xy = np ? from_ins->poly_xy + 2 * (size_t)p0 : NULL;
        st = yolo_instances_add(ins, from_ins->cls[j], from_ins->boxes + 4 * j, xy, np,
                                kn ? from_ins->kpts + (size_t)j * kn : NULL);
        if (st == YOLO_OK && np >= 3) /* the same rasterizer as the segment masks, so pixels and mask agree */
            yolo_polygon_fill(xy, np, mask, img->width, img->height, 1);
    }
    for (size_t i = 0; st == YOLO_OK && i < (size_t)img->width * img->height; i++)
        if (mask[i])
            memcpy(img->data + 3 * i, from->data + 3 * i, 3);
    if (pasted)
        *pasted = st == YOLO_OK ? take : 0;
    free(cand);
    free(mask);
    return st;
}

yolo_status yolo_copy_paste(float p, yolo_image *img, yolo_instances *ins, const yolo_image *src_img,
                            const yolo_instances *src_ins, int *pasted) {
    if (pasted)
        *pasted = 0;
    /* Ultralytics skips an image without segments (detect labels, or no instances) */
    if (p <= 0 || ins->n == 0 || yolo_instances_poly_points(ins) == 0)
        return YOLO_OK;
    if (src_img)
        return src_img->width == img->width && src_img->height == img->height
                   ? paste(p, img, ins, src_img, src_ins, pasted)
                   : yolo_error(YOLO_ERR_ARG, "copy_paste: source %dx%d, image %dx%d", src_img->width,
                                src_img->height, img->width, img->height);
    /* flip mode: the image's own mirror, instances and pixels */
    yolo_image mirror = {0};
    yolo_instances flipped;
    yolo_instances_init(&flipped, ins->kpt_count, ins->kpt_dims);
    yolo_status st = yolo_image_alloc(&mirror, img->width, img->height);
    if (st == YOLO_OK) {
        memcpy(mirror.data, img->data, (size_t)img->width * img->height * 3);
        yolo_image_flip_lr(&mirror);
        st = yolo_instances_append(&flipped, ins);
    }
    if (st == YOLO_OK) {
        yolo_ins_flip_lr(&flipped, (float)img->width, NULL);
        st = paste(p, img, ins, &mirror, &flipped, pasted);
    }
    yolo_image_free(&mirror);
    yolo_instances_free(&flipped);
    return st;
}
