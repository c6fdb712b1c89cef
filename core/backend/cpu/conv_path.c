/* yolo_cpu_conv_path_description (conv_path.h). */
#include "backend/cpu/conv_path.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/conv_common.h"

const char *yolo_cpu_conv_path_description(void) {
    static _Thread_local char line[320];
    const bool forced = yolo_conv_impl_from_env();
    const yolo_conv_impl impl = yolo_conv_current_impl();
#if defined(__aarch64__)
    const char *why_default = "aarch64 default: Debian's oneDNN 2.6 has aarch64 JIT convolutions only for SVE "
                              "and runs reference loops on NEON-only CPUs";
#else
    const char *why_default = "default: measured fastest on x86-64 (bench_conv)";
#endif
    if (impl == YOLO_CONV_IMPL_IM2COL) {
        snprintf(line, sizeof line, "conv: im2col + OpenBLAS sgemm (%s; YOLO_CONV_IMPL=onednn to override)",
                 forced ? "YOLO_CONV_IMPL=im2col" : why_default);
    } else {
        char isa[96] = "", layout[64] = "activations between convolutions plain NCHW";
        yolo_conv_onednn_bf16_available(isa, sizeof isa);
        const int block = yolo_conv_onednn_channel_block();
        if (block) snprintf(layout, sizeof layout, "activations between convolutions nChw%dc", block);
        snprintf(line, sizeof line, "conv: oneDNN primitives (%s, %s; %s; YOLO_CONV_IMPL=im2col to override)", isa,
                 layout, forced ? "YOLO_CONV_IMPL=onednn" : why_default);
    }
    return line;
}
