/* Rows of floats rounded to bf16 (bf16_row.h).
 *
 * The portable path is v16_to_bf16, ~15 vector operations per 16 floats
 * (GCC narrows 32-bit lanes to 16 through two halves). A CPU with
 * AVX512-BF16, the CPUs where amp stores bf16 at all, does it in one
 * VCVTNEPS2BF16, which rounds by the same rule: the test compares the two
 * on every float. Picked once, at the first call. */
#include "util/bf16_row.h"

#include "util/vec16.h"

VECTOR_CLONES static void round_row_portable(const float *src, uint16_t *dst, int64_t n) {
    v16f v;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        memcpy(&v, src + i, sizeof v);
        v16_to_bf16(&v, dst + i);
    }
    if (i < n) { /* the tail, zero-padded */
        uint16_t h[16];
        v = V16(0.0f);
        memcpy(&v, src + i, (size_t)(n - i) * sizeof(float));
        v16_to_bf16(&v, h);
        memcpy(dst + i, h, (size_t)(n - i) * sizeof *h);
    }
}

void yolo_bf16_round_row_portable(const float *src, uint16_t *dst, int64_t n) { round_row_portable(src, dst, n); }

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>
#include <stdatomic.h>

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

bool yolo_bf16_round_row_hardware(void) {
    static atomic_int have = -1; /* threads that race here all store the same answer */
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl");
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h;
}

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
