/* Rounding a row of floats to bf16 (round to nearest even, as
 * VCVTNEPS2BF16 and oneDNN's reorders do it; v16_to_bf16's rule). */
#ifndef YOLO_UTIL_BF16_ROW_H
#define YOLO_UTIL_BF16_ROW_H

#include <stdbool.h>
#include <stdint.h>

/* dst[i] = bf16(src[i]) for i < n. Uses the CPU's VCVTNEPS2BF16 where it
 * has AVX512-BF16 (the same bits, ~15 vector operations fewer per 16). */
void yolo_bf16_round_row(const float *src, uint16_t *dst, int64_t n);

/* The portable path alone, and whether the hardware one is in use (tests). */
void yolo_bf16_round_row_portable(const float *src, uint16_t *dst, int64_t n);
bool yolo_bf16_round_row_hardware(void);

#endif
