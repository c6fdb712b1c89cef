/* bench_predict_image: the C side of bench/python_predict.py — N in-memory
 * BGR images of W x H through yolo_predict_image (the public host API),
 * timed after one warm-up image.
 *
 *   bench_predict_image MODEL [N=100] [W=640] [H=480] [key=value ...]
 *
 * Image i's pixel (x, y, c) is (x*7 + y*13 + c*29 + i*31) & 255, as the
 * Python side makes them. Prints "c: N images WxH: T ms/image, B boxes". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "yolo/yolo.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [N=100] [W=640] [H=480] [key=value ...]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 100, w = argc > 3 ? atoi(argv[3]) : 640, h = argc > 4 ? atoi(argv[4]) : 480;
    if (n < 1 || w < 1 || h < 1 || w > 8192 || h > 8192) {
        fprintf(stderr, "bad N, W or H\n");
        return 2;
    }
    const char **keys = calloc((size_t)argc, sizeof *keys);
    int nk = 0;
    for (int i = 5; i < argc; i++) keys[nk++] = argv[i];
    yolo_predictor *p = NULL;
    if (!keys || yolo_predictor_open(argv[1], NULL, keys, &p) != YOLO_OK) {
        fprintf(stderr, "open %s: %s\n", argv[1], yolo_last_error());
        return 1;
    }
    size_t stride = (size_t)w * 3, size = stride * (size_t)h;
    uint8_t *all = malloc(size * (size_t)n);
    if (!all) return 1;
    for (int i = 0; i < n; i++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int c = 0; c < 3; c++)
                    all[(size_t)i * size + (size_t)y * stride + (size_t)x * 3 + c] = (uint8_t)((x * 7 + y * 13 + c * 29 + i * 31) & 255);
    yolo_result *warm = NULL; /* one image first, untimed */
    if (yolo_predict_image(p, all, w, h, stride, YOLO_PIXELS_BGR, &warm) != YOLO_OK) {
        fprintf(stderr, "predict: %s\n", yolo_last_error());
        return 1;
    }
    yolo_result_free(warm);
    long boxes = 0;
    double t = now_ms();
    for (int i = 0; i < n; i++) {
        yolo_result *r = NULL;
        if (yolo_predict_image(p, all + (size_t)i * size, w, h, stride, YOLO_PIXELS_BGR, &r) != YOLO_OK) {
            fprintf(stderr, "predict: %s\n", yolo_last_error());
            return 1;
        }
        boxes += yolo_result_num_boxes(r);
        yolo_result_free(r);
    }
    double ms = (now_ms() - t) / n;
    printf("c: %d images %dx%d: %.2f ms/image, %ld boxes\n", n, w, h, ms, boxes);
    free(all), free(keys);
    yolo_predictor_close(p);
    return 0;
}
