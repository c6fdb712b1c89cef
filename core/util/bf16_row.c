/* Rows of floats rounded to bf16 (bf16_row.h).
 *
 * The portable path is v8_to_bf16, ~15 vector operations per 8 floats. A CPU with
 * AVX512-BF16, the CPUs where amp stores bf16 at all, does it in one
 * VCVTNEPS2BF16, which rounds by the same rule: the test compares the two
 * on every float. Picked at each call from the cached ISA level, which
 * YOLO_CPU_ISA caps. */
#include "util/bf16_row.h"

#include "util/vec.h"

VECTOR_BODY void round_row_portable_body(const float *src, uint16_t *dst, int64_t n) {
    v8f v;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&v, src + i, sizeof v);
        v8_to_bf16(&v, dst + i);
    }
    if (i < n) { /* the tail, zero-padded */
        uint16_t h[8];
        v = V8(0.0f);
        memcpy(&v, src + i, (size_t)(n - i) * sizeof(float));
        v8_to_bf16(&v, h);
        memcpy(dst + i, h, (size_t)(n - i) * sizeof *h);
    }
}
VECTOR_DISPATCH(void, round_row_portable, (const float *src, uint16_t *dst, int64_t n), (src, dst, n))

void yolo_bf16_round_row_portable(const float *src, uint16_t *dst, int64_t n) { round_row_portable(src, dst, n); }

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>

__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) static void round_row_hardware(const float *src,
                                                                                             uint16_t *dst, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(src + i)));
    if (i < n) { /* the tail, masked */
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m256i h = (__m256i)_mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(m, src + i));
        _mm256_mask_storeu_epi16(dst + i, m, h);
    }
}

/* The level that runs (util/cpu_isa.h: AVX512-BF16 implies BW and VL),
 * so YOLO_CPU_ISA below avx512_bf16 takes the portable path. */
bool yolo_bf16_round_row_hardware(void) { return yolo_vector_level() >= YOLO_CPU_ISA_AVX512_BF16; }

void yolo_bf16_round_row(const float *src, uint16_t *dst, int64_t n) {
    if (yolo_bf16_round_row_hardware())
        round_row_hardware(src, dst, n);
    else
        round_row_portable(src, dst, n);
}
#else
bool yolo_bf16_round_row_hardware(void) { return false; }
void yolo_bf16_round_row(const float *src, uint16_t *dst, int64_t n) { round_row_portable(src, dst, n); }
#endif
