/* Polygon scan conversion (even-odd, pixel centres), for masks and tests. */
#include "yolo/data.h"

#include <math.h>
#include <stdlib.h>

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void yolo_polygon_fill(const float *xy, int n, uint8_t *mask, int width, int height, uint8_t value) {
    if (n < 3 || width <= 0 || height <= 0)
        return;
    float ymin = xy[1], ymax = xy[1];
    for (int i = 1; i < n; i++) {
        ymin = fminf(ymin, xy[2 * i + 1]);
        ymax = fmaxf(ymax, xy[2 * i + 1]);
    }
    int r0 = (int)floorf(ymin - 0.5f), r1 = (int)ceilf(ymax - 0.5f);
    r0 = r0 < 0 ? 0 : r0;
    r1 = r1 > height - 1 ? height - 1 : r1;
    float small[64];
    float *xs = n <= 64 ? small : malloc((size_t)n * sizeof(float));
    if (!xs)
        return;
    for (int row = r0; row <= r1; row++) {
        float yc = row + 0.5f;
        int cnt = 0;
        for (int i = 0; i < n; i++) {
            int j = (i + 1) % n;
            float ya = xy[2 * i + 1], yb = xy[2 * j + 1];
            /* half-open rule: an edge counts for yc in [min, max) */
            if ((ya <= yc && yb > yc) || (yb <= yc && ya > yc)) {
                float t = (yc - ya) / (yb - ya);
                xs[cnt++] = xy[2 * i] + t * (xy[2 * j] - xy[2 * i]);
            }
        }
        qsort(xs, (size_t)cnt, sizeof(float), cmp_float);
        for (int p = 0; p + 1 < cnt; p += 2) {
            int c0 = (int)ceilf(xs[p] - 0.5f), c1 = (int)ceilf(xs[p + 1] - 0.5f) - 1;
            c0 = c0 < 0 ? 0 : c0;
            c1 = c1 > width - 1 ? width - 1 : c1;
            for (int c = c0; c <= c1; c++)
                mask[(size_t)row * width + c] = value;
        }
    }
    if (xs != small)
        free(xs);
}
