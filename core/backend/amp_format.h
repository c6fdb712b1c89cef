/* What amp= asks of a backend (Ultralytics 8.4's amp takes True, False,
 * fp16, bf16 or fp32): the backend's own 16-bit kernels (True: bf16 on a
 * CPU, fp16 on Vulkan), a named format, or none. A backend without the
 * kernels asked for runs fp32 and says why (yolo_backend_precision), as
 * amp=True does on hardware without 16-bit arithmetic. */
#ifndef YOLO_BACKEND_AMP_FORMAT_H
#define YOLO_BACKEND_AMP_FORMAT_H

typedef enum yolo_amp_format {
    YOLO_AMP_OFF,  /* amp=False or fp32 */
    YOLO_AMP_AUTO, /* amp=True */
    YOLO_AMP_FP16, /* amp=fp16 */
    YOLO_AMP_BF16, /* amp=bf16 */
} yolo_amp_format;

/* amp's value as the user wrote it: "True", "fp16", "bf16" or "False". */
static inline const char *yolo_amp_format_word(yolo_amp_format f) {
    return f == YOLO_AMP_AUTO ? "True" : f == YOLO_AMP_FP16 ? "fp16" : f == YOLO_AMP_BF16 ? "bf16" : "False";
}

#endif
