/* 16-float vector math on GCC/Clang vector extensions, shared by the CPU
 * kernels (activations, bf16 storage) and the loss primitives (loss_math.c).
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
#ifndef YOLO_UTIL_VEC16_H
#define YOLO_UTIL_VEC16_H

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

typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v16u __attribute__((vector_size(64)));
typedef uint16_t v16h __attribute__((vector_size(32)));
typedef float v8f __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));

typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));

#define V16(v) ((v16f){(v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v)})
#define V16_SELECT(mask, a, b) ((v16f)(((mask) & (v16i)(a)) | (~(mask) & (v16i)(b))))

/* The lane mask of `a OP b` (all ones where true) for two 16-lane vectors
 * of type T (v16f, or v16u for unsigned integers), as a v16i. Compared as
 * two 8-lane halves of type H (v8f, v8u): where the target has no 512-bit
 * vectors (the AVX2 build) GCC lowers a 16-lane comparison one lane at a
 * time, with a scalar compare and a conditional move each (3x slower
 * batch norm and loss on AVX2), while an 8-lane one is one instruction.
 * Exact either way: the same bits on every build. */
#define V16_MASK_OF(T, H, HI, a, op, b)                                  \
    __extension__({                                                      \
        const T a_ = (a), b_ = (b);                                      \
        H al_, ah_, bl_, bh_;                                            \
        memcpy(&al_, &a_, sizeof al_);                                   \
        memcpy(&ah_, (const char *)&a_ + sizeof al_, sizeof ah_);        \
        memcpy(&bl_, &b_, sizeof bl_);                                   \
        memcpy(&bh_, (const char *)&b_ + sizeof bl_, sizeof bh_);        \
        const HI lo_ = (HI)(al_ op bl_), hi_ = (HI)(ah_ op bh_);         \
        v16i m_;                                                         \
        memcpy(&m_, &lo_, sizeof lo_);                                   \
        memcpy((char *)&m_ + sizeof lo_, &hi_, sizeof hi_);              \
        m_;                                                              \
    })
#define V16_MASK(a, op, b) V16_MASK_OF(v16f, v8f, v8i, a, op, b)
#define V16U_MASK(a, op, b) V16_MASK_OF(v16u, v8u, v8i, a, op, b)

/* e^x within 1.5 ulp on [-87, 88] (Cephes expf): x = n*ln2 + r, e^r by a
 * degree-6 polynomial, 2^n through the exponent bits. Inputs are clamped
 * to that range, NaN stays NaN. */
static inline __attribute__((always_inline)) void v16_exp(const v16f *in, v16f *out) {
    v16f x = V16_SELECT(V16_MASK(*in, <, V16(-87.0f)), V16(-87.0f), *in);
    x = V16_SELECT(V16_MASK(x, >, V16(88.0f)), V16(88.0f), x);
    const v16f magic = V16(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    const v16f t = x * V16(1.44269504088896341f) + magic;
    const v16f n = t - magic;
    const v16i ni = (v16i)t - 0x4b400000;
    const v16f r = (x - n * V16(0.693359375f)) - n * V16(-2.12194440e-4f);
    v16f p = V16(1.9875691500e-4f);
    p = p * r + V16(1.3981999507e-3f);
    p = p * r + V16(8.3334519073e-3f);
    p = p * r + V16(4.1665795894e-2f);
    p = p * r + V16(1.6666665459e-1f);
    p = p * r + V16(5.0000001201e-1f);
    p = p * r * r + r + V16(1.0f);
    *out = p * (v16f)((v16u)(ni + 127) << 23); /* unsigned: NaN lanes must not overflow a signed shift */
}

/* log(1 + e) for e in [0, 1], within 2 ulp (Cephes logf's polynomial). The
 * reduced argument is e itself below sqrt(2) - 1, so tiny e keep their
 * precision (log(1.0f + e) would round them away), and (1 + e) / 2 - 1
 * (exact) above it. */
static inline __attribute__((always_inline)) void v16_log1p_unit(const v16f *e, v16f *out) {
    const v16i big = V16_MASK(*e, >, V16(0.41421356f));
    const v16f x = V16_SELECT(big, (V16(1.0f) + *e) * V16(0.5f) - V16(1.0f), *e);
    const v16f k = V16_SELECT(big, V16(1.0f), V16(0.0f));
    const v16f z = x * x;
    v16f p = V16(7.0376836292e-2f);
    p = p * x + V16(-1.1514610310e-1f);
    p = p * x + V16(1.1676998740e-1f);
    p = p * x + V16(-1.2420140846e-1f);
    p = p * x + V16(1.4249322787e-1f);
    p = p * x + V16(-1.6668057665e-1f);
    p = p * x + V16(2.0000714765e-1f);
    p = p * x + V16(-2.4999993993e-1f);
    p = p * x + V16(3.3333331174e-1f);
    v16f y = x * z * p + k * V16(-2.12194440e-4f) - V16(0.5f) * z;
    *out = (x + y) + k * V16(0.693359375f);
}

static inline __attribute__((always_inline)) void v16_sigmoid(const v16f *x, v16f *out) {
    const v16f neg = -*x;
    v16f e;
    v16_exp(&neg, &e);
    *out = V16(1.0f) / (V16(1.0f) + e);
}

/* SiLU and its backward; dy is unused by the forward (the kernels' map
 * signature). */
static inline __attribute__((always_inline)) void v16_silu(const v16f *x, const v16f *dy, v16f *o) {
    (void)dy;
    v16f s;
    v16_sigmoid(x, &s);
    *o = *x * s;
}
static inline __attribute__((always_inline)) void v16_silu_bwd(const v16f *x, const v16f *dy, v16f *o) {
    v16f s;
    v16_sigmoid(x, &s);
    *o = *dy * s * (V16(1.0f) + *x * (V16(1.0f) - s));
}

/* 16 floats to bf16 as the CPU's VCVTNEPS2BF16 (and so oneDNN's reorders)
 * does it: round to nearest even, NaN to a quiet NaN, denormals to a signed
 * zero. yolo_f32_to_bf16 is the scalar twin. */
static inline __attribute__((always_inline)) void v16_to_bf16(const v16f *x, uint16_t *out) {
    const v16u u = (v16u)*x;
    const v16u mag = u & 0x7fffffffu;
    v16u r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const v16u inf = {0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u,
                      0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u,
                      0x7f800000u, 0x7f800000u, 0x7f800000u, 0x7f800000u};
    const v16u nan = (v16u)V16U_MASK(mag, >, inf), denormal = (v16u)V16U_MASK(u & inf, ==, (v16u){0});
    r = (nan & ((u >> 16) | 0x40u)) | (~nan & r);
    r = (denormal & ((u >> 16) & 0x8000u)) | (~denormal & r);
    const v16h h = __builtin_convertvector(r, v16h);
    memcpy(out, &h, sizeof h);
}

/* 16 bf16 widened to floats (exact). */
static inline __attribute__((always_inline)) void v16_from_bf16(const uint16_t *p, v16f *out) {
    v16h h;
    memcpy(&h, p, sizeof h);
    *out = (v16f)(__builtin_convertvector(h, v16u) << 16);
}

/* Adds the 16 lanes of v, widened to double, to acc (two 8-lane halves). */
static inline __attribute__((always_inline)) void v16_add_to_v8d(const v16f *v, v8d *acc_lo, v8d *acc_hi) {
    v8f lo, hi;
    memcpy(&lo, v, sizeof lo);
    memcpy(&hi, (const float *)v + 8, sizeof hi);
    *acc_lo += __builtin_convertvector(lo, v8d);
    *acc_hi += __builtin_convertvector(hi, v8d);
}

#endif
