/* Which convolution path the CPU backend runs, in words, for `yolo checks`
 * and logs: the chosen implementation (kernels_conv.c's selection: the
 * platform default or YOLO_CONV_IMPL), and why. */
#ifndef YOLO_CPU_CONV_PATH_H
#define YOLO_CPU_CONV_PATH_H

/* One line without a newline, e.g.
 *   "conv: im2col + OpenBLAS sgemm (aarch64 default: oneDNN 2.6 has no NEON
 *    convolution kernels; YOLO_CONV_IMPL=onednn to override)"
 *   "conv: oneDNN primitives (oneDNN ISA avx512_core_bf16; x86-64 default)"
 * Valid until the next call from the same thread. */
const char *yolo_cpu_conv_path_description(void);

#endif
