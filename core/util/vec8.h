/* 8-float vector math on GCC/Clang vector extensions, shared by the CPU
 * kernels (activations, bf16 storage) and the loss primitives (loss_math.c).
 *
 * Why 8 lanes: a vector type wider than the target's registers has no
 * machine mode there, so GCC keeps its values in memory and copies them
 * through general registers, and lowers its comparisons one lane at a
 * time. 16-float vectors did that in every AVX2 build (batch norm 3x, the
 * loss 2x slower than on AVX-512). 8 floats are one AVX2 register, half an
 * AVX-512 one (where the AVX-512 build runs 256-bit instructions: the same
 * speed on AMD's, which split 512-bit ones in two) and two SSE/NEON ones.
 *
 * libm's expf and log1pf do not vectorize, and these run over every
 * activation and every class logit. Callers write their loop as an
 * always-inline NAME_body and VECTOR_DISPATCH it: on x86-64 it is also built
 * for AVX-512F and AVX2, and NAME picks a build at run time from
 * yolo_cpu_isa_level() (util/cpu_isa.h: the machine's level, capped by
 * YOLO_CPU_ISA); all builds do the same IEEE operations (no FMA
 * contraction in ISO C mode), so results are identical on any CPU and
 * under any cap.
 *
 * Helpers are macros or take pointers: 32-byte vectors passed by value draw
 * ABI notes from GCC when AVX is not the baseline. */
#ifndef YOLO_UTIL_VEC8_H
#define YOLO_UTIL_VEC8_H

#include <stdint.h>
#include <string.h>

#include "util/cpu_isa.h"

/* The body of a dispatched function: always inlined into each build. */
#define VECTOR_BODY static inline __attribute__((always_inline))

/* VECTOR_DISPATCH(ret, name, (params), (args)), after
 *     VECTOR_BODY ret name##_body(params) {...}
 * defines name##_avx512 (target "avx512f"), name##_avx2 (target "avx2") and
 * name##_default, each the body, and `static ret name(params)` calling the
 * one for the level that runs (read once: a cached int). `args` names the
 * parameters in order. VECTOR_DISPATCH_AVX2 builds only the AVX2 and
 * default versions (8-float loops, which gain nothing from AVX-512).
 * The target strings are the ones target_clones used before, so each build
 * compiles to the same code. Elsewhere than GCC on x86-64 Linux, name is
 * the body. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define VECTOR_DISPATCH(ret, name, params, args)                                                  \
    __attribute__((target("avx512f"))) static ret name##_avx512 params { return name##_body args; } \
    __attribute__((target("avx2"))) static ret name##_avx2 params { return name##_body args; }      \
    static ret name##_default params { return name##_body args; }                                   \
    static ret name params {                                                                        \
        const int level_ = yolo_vector_level();                                                     \
        if (level_ >= YOLO_CPU_ISA_AVX512) {                                                        \
            YOLO_VECTOR_NOTE(YOLO_CPU_ISA_AVX512);                                                  \
            return name##_avx512 args;                                                              \
        }                                                                                           \
        if (level_ >= YOLO_CPU_ISA_AVX2) {                                                          \
            YOLO_VECTOR_NOTE(YOLO_CPU_ISA_AVX2);                                                    \
            return name##_avx2 args;                                                                \
        }                                                                                           \
        YOLO_VECTOR_NOTE(YOLO_CPU_ISA_DEFAULT);                                                     \
        return name##_default args;                                                                 \
    }
#define VECTOR_DISPATCH_AVX2(ret, name, params, args)                                             \
    __attribute__((target("avx2"))) static ret name##_avx2 params { return name##_body args; }      \
    static ret name##_default params { return name##_body args; }                                   \
    static ret name params {                                                                        \
        if (yolo_vector_level() >= YOLO_CPU_ISA_AVX2) {                                             \
            YOLO_VECTOR_NOTE(YOLO_CPU_ISA_AVX2);                                                    \
            return name##_avx2 args;                                                                \
        }                                                                                           \
        YOLO_VECTOR_NOTE(YOLO_CPU_ISA_DEFAULT);                                                     \
        return name##_default args;                                                                 \
    }
#else
#define VECTOR_DISPATCH(ret, name, params, args) \
    static ret name params { return name##_body args; }
#define VECTOR_DISPATCH_AVX2(ret, name, params, args) VECTOR_DISPATCH(ret, name, params, args)
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef uint16_t v8h __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));

#define V8(v) ((v8f){(v), (v), (v), (v), (v), (v), (v), (v)})
#define V8U(v) ((v8u){(v), (v), (v), (v), (v), (v), (v), (v)})
#define V8_SELECT(mask, a, b) ((v8f)(((mask) & (v8i)(a)) | (~(mask) & (v8i)(b))))

/* e^x within 1.5 ulp on [-87, 88] (Cephes expf): x = n*ln2 + r, e^r by a
 * degree-6 polynomial, 2^n through the exponent bits. Inputs are clamped
 * to that range, NaN stays NaN. */
static inline __attribute__((always_inline)) void v8_exp(const v8f *in, v8f *out) {
    v8f x = V8_SELECT((v8i)(*in < V8(-87.0f)), V8(-87.0f), *in);
    x = V8_SELECT((v8i)(x > V8(88.0f)), V8(88.0f), x);
    const v8f magic = V8(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    const v8f t = x * V8(1.44269504088896341f) + magic;
    const v8f n = t - magic;
    const v8i ni = (v8i)t - 0x4b400000;
    const v8f r = (x - n * V8(0.693359375f)) - n * V8(-2.12194440e-4f);
    v8f p = V8(1.9875691500e-4f);
    p = p * r + V8(1.3981999507e-3f);
    p = p * r + V8(8.3334519073e-3f);
    p = p * r + V8(4.1665795894e-2f);
    p = p * r + V8(1.6666665459e-1f);
    p = p * r + V8(5.0000001201e-1f);
    p = p * r * r + r + V8(1.0f);
    *out = p * (v8f)((v8u)(ni + 127) << 23); /* unsigned: NaN lanes must not overflow a signed shift */
}

/* log(1 + e) for e in [0, 1], within 2 ulp (Cephes logf's polynomial). The
 * reduced argument is e itself below sqrt(2) - 1, so tiny e keep their
 * precision (log(1.0f + e) would round them away), and (1 + e) / 2 - 1
 * (exact) above it. */
static inline __attribute__((always_inline)) void v8_log1p_unit(const v8f *e, v8f *out) {
    const v8i big = (v8i)(*e > V8(0.41421356f));
    const v8f x = V8_SELECT(big, (V8(1.0f) + *e) * V8(0.5f) - V8(1.0f), *e);
    const v8f k = V8_SELECT(big, V8(1.0f), V8(0.0f));
    const v8f z = x * x;
    v8f p = V8(7.0376836292e-2f);
    p = p * x + V8(-1.1514610310e-1f);
    p = p * x + V8(1.1676998740e-1f);
    p = p * x + V8(-1.2420140846e-1f);
    p = p * x + V8(1.4249322787e-1f);
    p = p * x + V8(-1.6668057665e-1f);
    p = p * x + V8(2.0000714765e-1f);
    p = p * x + V8(-2.4999993993e-1f);
    p = p * x + V8(3.3333331174e-1f);
    v8f y = x * z * p + k * V8(-2.12194440e-4f) - V8(0.5f) * z;
    *out = (x + y) + k * V8(0.693359375f);
}

static inline __attribute__((always_inline)) void v8_sigmoid(const v8f *x, v8f *out) {
    const v8f neg = -*x;
    v8f e;
    v8_exp(&neg, &e);
    *out = V8(1.0f) / (V8(1.0f) + e);
}

/* SiLU and its backward; dy is unused by the forward (the kernels' map
 * signature). */
static inline __attribute__((always_inline)) void v8_silu(const v8f *x, const v8f *dy, v8f *o) {
    (void)dy;
    v8f s;
    v8_sigmoid(x, &s);
    *o = *x * s;
}
static inline __attribute__((always_inline)) void v8_silu_bwd(const v8f *x, const v8f *dy, v8f *o) {
    v8f s;
    v8_sigmoid(x, &s);
    *o = *dy * s * (V8(1.0f) + *x * (V8(1.0f) - s));
}

/* 8 floats to bf16 as the CPU's VCVTNEPS2BF16 (and so oneDNN's reorders)
 * does it: round to nearest even, NaN to a quiet NaN, denormals to a signed
 * zero. yolo_f32_to_bf16 is the scalar twin. */
static inline __attribute__((always_inline)) void v8_to_bf16(const v8f *x, uint16_t *out) {
    const v8u u = (v8u)*x;
    const v8u mag = u & 0x7fffffffu;
    v8u r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const v8u nan = (v8u)(mag > V8U(0x7f800000u)), denormal = (v8u)((u & 0x7f800000u) == V8U(0));
    r = (nan & ((u >> 16) | 0x40u)) | (~nan & r);
    r = (denormal & ((u >> 16) & 0x8000u)) | (~denormal & r);
    const v8h h = __builtin_convertvector(r, v8h);
    memcpy(out, &h, sizeof h);
}

/* 8 bf16 widened to floats (exact). */
static inline __attribute__((always_inline)) void v8_from_bf16(const uint16_t *p, v8f *out) {
    v8h h;
    memcpy(&h, p, sizeof h);
    *out = (v8f)(__builtin_convertvector(h, v8u) << 16);
}

/* Adds the 8 lanes of v, widened to double, to acc (two 4-lane halves). */
static inline __attribute__((always_inline)) void v8_add_to_v4d(const v8f *v, v4d *acc_lo, v4d *acc_hi) {
    typedef float v4f __attribute__((vector_size(16)));
    v4f lo, hi;
    memcpy(&lo, v, sizeof lo);
    memcpy(&hi, (const float *)v + 4, sizeof hi);
    *acc_lo += __builtin_convertvector(lo, v4d);
    *acc_hi += __builtin_convertvector(hi, v4d);
}

#endif
