/* The convolutions of a YOLOv8n, shared by bench_conv (CPU) and
 * bench_conv_vulkan so both time the same shapes. */
#ifndef YOLO_BENCH_YOLOV8N_CONVS_H
#define YOLO_BENCH_YOLOV8N_CONVS_H

typedef struct layer {
    int c, hw, o, k, s, bias; /* input channels, input size at imgsz 320, outputs, kernel, stride */
    int count;                /* occurrences in the model */
    const char *where;
} layer;

/* YOLOv8n (parity-facts.md section 2; widths 16/32/64/128/256, C2f repeats
 * 1,2,2,1 and 1 in the head, Detect c2 = 64, c3 = 80), deduplicated.
 * Sizes are for imgsz 320 and scale with --imgsz. */
static const layer model[] = {
    {3, 320, 16, 3, 2, 0, 1, "0 Conv stem"},
    {16, 160, 32, 3, 2, 0, 1, "1 Conv"},
    {32, 80, 32, 1, 1, 0, 1, "2 C2f cv1"},
    {16, 80, 16, 3, 1, 0, 2, "2 C2f bottleneck"},
    {48, 80, 32, 1, 1, 0, 1, "2 C2f cv2"},
    {32, 80, 64, 3, 2, 0, 1, "3 Conv"},
    {64, 40, 64, 1, 1, 0, 1, "4 C2f cv1"},
    {32, 40, 32, 3, 1, 0, 6, "4,15 C2f bottleneck"},
    {128, 40, 64, 1, 1, 0, 1, "4 C2f cv2"},
    {64, 40, 128, 3, 2, 0, 1, "5 Conv"},
    {128, 20, 128, 1, 1, 0, 1, "6 C2f cv1"},
    {64, 20, 64, 3, 1, 0, 9, "6,12,18 C2f bottleneck; Detect @20"},
    {256, 20, 128, 1, 1, 0, 1, "6 C2f cv2"},
    {128, 20, 256, 3, 2, 0, 1, "7 Conv"},
    {256, 10, 256, 1, 1, 0, 1, "8 C2f cv1"},
    {128, 10, 128, 3, 1, 0, 4, "8,21 C2f bottleneck"},
    {384, 10, 256, 1, 1, 0, 3, "8 C2f cv2, 21 cv1/cv2"},
    {256, 10, 128, 1, 1, 0, 1, "9 SPPF cv1"},
    {512, 10, 256, 1, 1, 0, 1, "9 SPPF cv2"},
    {384, 20, 128, 1, 1, 0, 1, "12 C2f cv1"},
    {192, 20, 128, 1, 1, 0, 3, "12 cv2, 18 cv1/cv2"},
    {192, 40, 64, 1, 1, 0, 1, "15 C2f cv1"},
    {96, 40, 64, 1, 1, 0, 1, "15 C2f cv2"},
    {64, 40, 64, 3, 2, 0, 1, "16 Conv"},
    {128, 20, 128, 3, 2, 0, 1, "19 Conv"},
    {64, 40, 64, 3, 1, 0, 2, "Detect box @40"},
    {64, 40, 80, 3, 1, 0, 1, "Detect cls1 @40"},
    {80, 40, 80, 3, 1, 0, 1, "Detect cls2 @40"},
    {64, 40, 64, 1, 1, 1, 1, "Detect box out @40"},
    {80, 40, 80, 1, 1, 1, 1, "Detect cls out @40"},
    {128, 20, 64, 3, 1, 0, 1, "Detect box1 @20"},
    {128, 20, 80, 3, 1, 0, 1, "Detect cls1 @20"},
    {80, 20, 80, 3, 1, 0, 1, "Detect cls2 @20"},
    {64, 20, 64, 1, 1, 1, 1, "Detect box out @20"},
    {80, 20, 80, 1, 1, 1, 1, "Detect cls out @20"},
    {256, 10, 64, 3, 1, 0, 1, "Detect box1 @10"},
    {64, 10, 64, 3, 1, 0, 1, "Detect box2 @10"},
    {256, 10, 80, 3, 1, 0, 1, "Detect cls1 @10"},
    {80, 10, 80, 3, 1, 0, 1, "Detect cls2 @10"},
    {64, 10, 64, 1, 1, 1, 1, "Detect box out @10"},
    {80, 10, 80, 1, 1, 1, 1, "Detect cls out @10"},
};

#endif
