/* The CPU ISA level that runs, and YOLO_CPU_ISA, the one switch that caps
 * it below the machine's for oneDNN, OpenBLAS and our own vector clones
 * (util/vec.h's VECTOR_DISPATCH) together: a developer on an AVX-512
 * machine measures and tests the AVX2 path.
 *
 *   YOLO_CPU_ISA=avx2|avx512|avx512_bf16|default
 *
 * default is the x86-64 baseline (our kernels' portable clone, oneDNN's
 * SSE4.1 JIT, OpenBLAS's Prescott kernels). A cap at or above the
 * machine's level runs the machine's, and the description says so.
 *
 * What reads what, and when:
 * - our clones: yolo_cpu_isa_level(), read once (a cached int);
 * - oneDNN: its maximum ISA, set at load time (a constructor here calls
 *   dnnl_set_max_cpu_isa before anything can use oneDNN) unless
 *   ONEDNN_MAX_CPU_ISA is set, which wins;
 * - OpenBLAS: OPENBLAS_CORETYPE, read only when it loads, so only an
 *   executable that calls yolo_cpu_isa_setup_process (the `yolo` CLI, the
 *   benches) caps it, by re-executing itself once with it set;
 * - PyTorch (bench_train's baseline, a child process): ONEDNN_MAX_CPU_ISA,
 *   ATEN_CPU_CAPABILITY and OPENBLAS_CORETYPE, which
 *   yolo_cpu_isa_setup_process puts in the environment.
 *
 * On aarch64 (and anything but x86-64) there is one level, named "neon"
 * (or "aarch64"); YOLO_CPU_ISA parses the same but caps nothing. */
#ifndef YOLO_UTIL_CPU_ISA_H
#define YOLO_UTIL_CPU_ISA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "yolo/error.h"

typedef enum yolo_cpu_isa {
    YOLO_CPU_ISA_DEFAULT = 0, /* x86-64 baseline (SSE2); any ISA elsewhere */
    YOLO_CPU_ISA_AVX2,        /* AVX2 + FMA */
    YOLO_CPU_ISA_AVX512,      /* AVX-512 F, BW, VL, DQ */
    YOLO_CPU_ISA_AVX512_BF16, /* AVX-512 and its BF16 conversions and dot products */
} yolo_cpu_isa;

#define YOLO_CPU_ISA_ENV "YOLO_CPU_ISA"
#define YOLO_CPU_ISA_ACCEPTED "avx2, avx512, avx512_bf16, default"

/* The machine's own level (cpuid), whatever the cap. */
yolo_cpu_isa yolo_cpu_isa_machine(void);

/* One of the accepted names to its level; YOLO_ERR_CONFIG naming the
 * variable, the value and the accepted ones otherwise. */
yolo_status yolo_cpu_isa_parse(const char *value, yolo_cpu_isa *level);

/* The cap YOLO_CPU_ISA asks for: *set false (and *cap the machine's) when it
 * is unset or empty; a bad value is YOLO_ERR_CONFIG (yolo_cpu_isa_parse). */
yolo_status yolo_cpu_isa_cap(yolo_cpu_isa *cap, bool *set);

/* The level that runs: the machine's, capped by YOLO_CPU_ISA (a bad value
 * caps nothing here; yolo_cpu_isa_check reports it). Read once. */
yolo_cpu_isa yolo_cpu_isa_level(void);

/* YOLO_OK, or YOLO_CPU_ISA's error (yolo_cpu_isa_parse) for the caller to
 * print and exit on: library code does not exit. */
yolo_status yolo_cpu_isa_check(void);

/* "default", "avx2", "avx512", "avx512_bf16"; "neon" or "aarch64" for
 * YOLO_CPU_ISA_DEFAULT on aarch64. */
const char *yolo_cpu_isa_name(yolo_cpu_isa level);

/* The clone our VECTOR_DISPATCH functions run at `level`: "avx512f",
 * "avx2" or "default" (the one build elsewhere: "portable"). */
const char *yolo_cpu_isa_clone_name(yolo_cpu_isa level);

/* oneDNN's effective ISA (dnnl_get_effective_cpu_isa), e.g. "avx2",
 * "avx512_core_bf16". Calling it fixes oneDNN's maximum. */
const char *yolo_cpu_isa_onednn(void);

/* One line, no newline: "CPU: <model> ISA avx2 (capped by
 * YOLO_CPU_ISA=avx2; machine avx512_bf16); oneDNN avx2; OpenBLAS Haswell;
 * our kernels avx2". */
void yolo_cpu_isa_describe(char *buf, size_t size);

/* For an executable's main, first thing: checks YOLO_CPU_ISA (an error is
 * returned, to print and exit on) and, under a cap below the machine's,
 * puts ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY and OPENBLAS_CORETYPE in the
 * environment where the user has not set them (so child processes are
 * capped alike). `env_defaults` (NULL-terminated "NAME=VALUE", may be NULL)
 * are set where absent too. `fix_unknown_blas`: without a cap, a CPU
 * OpenBLAS does not know (it fell back to Prescott) gets SkylakeX (AVX-512)
 * or Haswell (AVX2) kernels. When an OpenBLAS variable changed, re-executes
 * /proc/self/exe once with argv (it does not return then; if exec fails it
 * goes on as is). */
yolo_status yolo_cpu_isa_setup_process(char **argv, const char *const *env_defaults, bool fix_unknown_blas);

/* ---- the vector clones' dispatch (util/vec.h) ---- */
extern _Atomic int yolo_vector_level_cached; /* -1 until read */
int yolo_vector_level_init(void);
static inline int yolo_vector_level(void) {
    const int l = atomic_load_explicit(&yolo_vector_level_cached, memory_order_relaxed);
    return l >= 0 ? l : yolo_vector_level_init();
}

#ifdef YOLO_TEST_HOOKS
/* Test hooks: the level the dispatch (and bf16_row's hardware check) uses
 * from now on; -1 goes back to yolo_cpu_isa_level(). */
void yolo_vector_isa_force(int level);
/* The clones dispatched calls ran since the last reset, a bit (1 << level)
 * each: YOLO_CPU_ISA_AVX512 for the avx512f clones, YOLO_CPU_ISA_AVX2 for
 * the avx2 ones (also VECTOR_DISPATCH_AVX2's at a higher level),
 * YOLO_CPU_ISA_DEFAULT for the portable ones; 0 when none ran. */
extern _Atomic int yolo_vector_isa_ran;
int yolo_vector_isa_selected(void);
void yolo_vector_isa_reset_selected(void);
#define YOLO_VECTOR_NOTE(level) atomic_fetch_or_explicit(&yolo_vector_isa_ran, 1 << (level), memory_order_relaxed)
#else
#define YOLO_VECTOR_NOTE(level) ((void)0)
#endif

#endif
