/* Fuzzing the YOLO txt label parser (yolo_label_parse_yolo).
 * The first byte picks the context: bits 0-1 the task's needs (boxes,
 * polygons, keypoints 17x3, keypoints 4x2), bits 2-4 nc (1..80 or huge),
 * bit 5 a tolerance; the rest is the label text. What parses must satisfy
 * fuzz_check_instances. Driver: fuzz_driver.c; corpus fuzz/corpus/labels. */
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    static const int ncs[8] = {1, 2, 3, 80, 1000, 65535, 1 << 30, 7};
    static const int kpts[4][2] = {{0, 0}, {0, 0}, {17, 3}, {4, 2}};
    int mode = data[0] & 3;
    yolo_label_context ctx = {
        .path = "fuzz.txt",
        .nc = ncs[(data[0] >> 2) & 7],
        .needs = mode == 1 ? YOLO_NEED_POLYGONS : mode >= 2 ? YOLO_NEED_KEYPOINTS : YOLO_NEED_BOXES,
        .kpt_count = kpts[mode][0],
        .kpt_dims = kpts[mode][1],
        .tolerance = (data[0] & 32) ? 0.01f : 0,
    };
    yolo_instances ins;
    yolo_instances_init(&ins, ctx.kpt_count, ctx.kpt_dims);
    yolo_label_repairs repairs = {0};
    /* a private copy without a terminator: the parser must honour len */
    char *text = malloc(size - 1 ? size - 1 : 1);
    memcpy(text, data + 1, size - 1);
    if (yolo_label_parse_yolo(&ctx, text, size - 1, &ins, &repairs) == YOLO_OK) {
        fuzz_check_instances(&ins, ctx.nc);
        FUZZ_INVARIANT(repairs.count >= 0 && memchr(repairs.message, 0, sizeof repairs.message));
    } else {
        FUZZ_INVARIANT(strstr(yolo_last_error(), "fuzz.txt"));
    }
    free(text);
    yolo_instances_free(&ins);
    return 0;
}
