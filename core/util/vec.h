/* Vector math on GCC/Clang vector extensions, shared by the CPU kernels
 * (activations, bf16 storage) and the loss primitives (loss_math.c).
 *
 * libm's expf and log1pf do not vectorize, and these run over every
 * activation and every class logit. The helpers exist for 8 and 16 floats
 * (util/vec_math.h, included once per width: v8_exp, v16_exp, ...).
 *
 * Why the width follows the ISA: a vector type wider than the target's
 * registers has no machine mode there, so GCC keeps its values in memory,
 * copies them through general registers and lowers its comparisons one
 * lane at a time. 16-float vectors did that in every AVX2 build (batch norm
 * 3x, the loss 2x slower than on AVX-512). So kernels work on 8 floats, one
 * AVX2 register (two SSE or NEON ones), and the hottest also have a 16-float
 * body for the AVX-512 build, where one instruction then does twice the
 * work (VECTOR_DISPATCH_WIDE).
 *
 * Callers write their loop as an always-inline NAME_body and
 * VECTOR_DISPATCH it: on x86-64 it is also built for AVX-512F and AVX2, and
 * NAME picks a build at run time from yolo_cpu_isa_level() (util/cpu_isa.h:
 * the machine's level, capped by YOLO_CPU_ISA); all builds do the same IEEE
 * operations (no FMA contraction in ISO C mode), so results are identical
 * on any CPU and under any cap.
 *
 * Helpers are macros or take pointers: 32-byte vectors passed by value draw
 * ABI notes from GCC when AVX is not the baseline. */
#ifndef YOLO_UTIL_VEC_H
#define YOLO_UTIL_VEC_H

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
 * parameters in order. VECTOR_DISPATCH_WIDE is the same but for the
 * AVX-512 build, which runs name##_wide (a body on 16-float vectors).
 * VECTOR_DISPATCH_AVX2 builds only the AVX2 and default versions.
 * The target strings are the ones target_clones used before, so each build
 * compiles to the same code. Elsewhere than GCC on x86-64 Linux, name is
 * the body. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define VECTOR_DISPATCH_BUILDS_(ret, name, avx512_body, params, args)                              \
    __attribute__((target("avx512f"))) static ret name##_avx512 params { return avx512_body args; } \
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
#define VECTOR_DISPATCH(ret, name, params, args) VECTOR_DISPATCH_BUILDS_(ret, name, name##_body, params, args)
#define VECTOR_DISPATCH_WIDE(ret, name, params, args) VECTOR_DISPATCH_BUILDS_(ret, name, name##_wide, params, args)
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
#else /* one portable build, noted as the default level's (test_cpu_isa) */
#define VECTOR_DISPATCH(ret, name, params, args) \
    static ret name params {                     \
        YOLO_VECTOR_NOTE(YOLO_CPU_ISA_DEFAULT);  \
        return name##_body args;                 \
    }
#define VECTOR_DISPATCH_WIDE(ret, name, params, args) VECTOR_DISPATCH(ret, name, params, args)
#define VECTOR_DISPATCH_AVX2(ret, name, params, args) VECTOR_DISPATCH(ret, name, params, args)
#endif

typedef float v4f __attribute__((vector_size(16)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef int32_t v16i __attribute__((vector_size(64)));
typedef uint32_t v8u __attribute__((vector_size(32)));
typedef uint32_t v16u __attribute__((vector_size(64)));
typedef uint16_t v8h __attribute__((vector_size(16)));
typedef uint16_t v16h __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
typedef double v8d __attribute__((vector_size(64)));

#define V8(v) ((v8f){(v), (v), (v), (v), (v), (v), (v), (v)})
#define V16(v) ((v16f){(v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v), (v)})
#define V8_SELECT(mask, a, b) ((v8f)(((mask) & (v8i)(a)) | (~(mask) & (v8i)(b))))

#define VEC_W 8
#include "util/vec_math.h"
#undef VEC_W
#define VEC_W 16
#include "util/vec_math.h"
#undef VEC_W

#endif
