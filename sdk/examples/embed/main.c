/* embed MODEL IMAGE.ppm [key=value ...]: the host API (yolo/yolo.h) in a
 * program. The image is read into memory by a tiny binary PPM (P6) reader,
 * as a camera service would have its frame, and predicted on; the boxes
 * are printed one a line: class name, confidence, x1 y1 x2 y2 in pixels.
 * (For files of any format, yolo_predict_source takes the path.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/yolo.h>

/* A P6 image with maxval 255: width, height and RGB rows; NULL if it is none. */
static unsigned char *read_ppm(const char *path, int *w, int *h) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    int maxval = 0;
    unsigned char *px = NULL;
    if (fscanf(f, "P6 %d %d %d", w, h, &maxval) == 3 && maxval == 255 && *w > 0 && *h > 0 && *w <= 16384 &&
        *h <= 16384 && fgetc(f) != EOF) {
        size_t size = (size_t)*w * (size_t)*h * 3;
        px = malloc(size);
        if (px && fread(px, 1, size, f) != size) {
            free(px);
            px = NULL;
        }
    }
    fclose(f);
    return px;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL IMAGE.ppm [key=value ...]\n", argv[0]);
        return 2;
    }
    int w, h;
    unsigned char *pixels = read_ppm(argv[2], &w, &h);
    if (!pixels) {
        fprintf(stderr, "%s: not a binary PPM (P6, maxval 255)\n", argv[2]);
        return 1;
    }
    /* argv[3..] are the keys; argv[argc] is NULL, as the key list must end */
    yolo_predictor *p = NULL;
    yolo_result *r = NULL;
    yolo_status st = yolo_predictor_open(argv[1], NULL, (const char *const *)argv + 3, &p);
    if (!st) st = yolo_predict_image(p, pixels, w, h, (size_t)w * 3, YOLO_PIXELS_RGB, &r);
    if (st) {
        fprintf(stderr, "embed: %s: %s\n", yolo_status_name(st), yolo_last_error());
        free(pixels);
        yolo_predictor_close(p);
        return 1;
    }
    printf("%s model, %dx%d image: %d boxes\n", yolo_predictor_task(p), w, h, yolo_result_num_boxes(r));
    for (int i = 0; i < yolo_result_num_boxes(r); i++) {
        float b[4], conf;
        yolo_result_box(r, i, b, &conf, NULL);
        printf("%s %.4g %.1f %.1f %.1f %.1f\n", yolo_result_box_name(r, i), (double)conf, (double)b[0], (double)b[1],
               (double)b[2], (double)b[3]);
    }
    yolo_result_free(r);
    yolo_predictor_close(p);
    free(pixels);
    return 0;
}
