/* The CPU ISA level that runs and YOLO_CPU_ISA's cap (util/cpu_isa.h). */
#include "util/cpu_isa.h"

#include <cblas.h>
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *name;
    yolo_cpu_isa level;
} accepted[] = {
    {"default", YOLO_CPU_ISA_DEFAULT},
    {"avx2", YOLO_CPU_ISA_AVX2},
    {"avx512", YOLO_CPU_ISA_AVX512},
    {"avx512_bf16", YOLO_CPU_ISA_AVX512_BF16},
};

#if defined(__x86_64__)
/* What each level asks of the others: oneDNN's maximum ISA (as
 * ONEDNN_MAX_CPU_ISA spells it; SSE41 is its lowest JIT level), OpenBLAS's
 * core and PyTorch's ATen capability. */
static const struct {
    const char *onednn, *openblas, *aten;
    dnnl_cpu_isa_t dnnl;
} caps[] = {
    [YOLO_CPU_ISA_DEFAULT] = {"SSE41", "Prescott", "default", dnnl_cpu_isa_sse41},
    [YOLO_CPU_ISA_AVX2] = {"AVX2", "Haswell", "avx2", dnnl_cpu_isa_avx2},
    [YOLO_CPU_ISA_AVX512] = {"AVX512_CORE", "SkylakeX", "avx512", dnnl_cpu_isa_avx512_core},
    [YOLO_CPU_ISA_AVX512_BF16] = {"AVX512_CORE_BF16", "Cooperlake", "avx512", dnnl_cpu_isa_avx512_core_bf16},
};
#endif

yolo_cpu_isa yolo_cpu_isa_machine(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return YOLO_CPU_ISA_DEFAULT;
    if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")))
        return YOLO_CPU_ISA_AVX2;
    if (!__builtin_cpu_supports("avx512bf16")) return YOLO_CPU_ISA_AVX512;
    return YOLO_CPU_ISA_AVX512_BF16;
#else
    return YOLO_CPU_ISA_DEFAULT;
#endif
}

/* One of the accepted names to its level; false for anything else. */
static bool lookup(const char *value, yolo_cpu_isa *level) {
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++)
        if (value && strcmp(value, accepted[i].name) == 0) {
            *level = accepted[i].level;
            return true;
        }
    return false;
}

yolo_status yolo_cpu_isa_parse(const char *value, yolo_cpu_isa *level) {
    if (lookup(value, level)) return YOLO_OK;
    return yolo_error(YOLO_ERR_CONFIG, "%s=%s is not an ISA level: the accepted values are %s", YOLO_CPU_ISA_ENV,
                      value ? value : "(null)", YOLO_CPU_ISA_ACCEPTED);
}

yolo_status yolo_cpu_isa_cap(yolo_cpu_isa *cap, bool *set) {
    const char *v = getenv(YOLO_CPU_ISA_ENV);
    *set = v && *v;
    *cap = yolo_cpu_isa_machine();
    return *set ? yolo_cpu_isa_parse(v, cap) : YOLO_OK;
}

/* The machine's level, capped by YOLO_CPU_ISA; a bad value caps nothing
 * (and sets no error: yolo_cpu_isa_check reports it). */
static yolo_cpu_isa capped_level(void) {
    const yolo_cpu_isa machine = yolo_cpu_isa_machine();
    yolo_cpu_isa cap = machine;
    lookup(getenv(YOLO_CPU_ISA_ENV), &cap);
    return cap < machine ? cap : machine;
}

yolo_cpu_isa yolo_cpu_isa_level(void) {
    static _Atomic int level = -1; /* threads racing here store the same value */
    int l = atomic_load_explicit(&level, memory_order_relaxed);
    if (l < 0) {
        l = (int)capped_level();
        atomic_store_explicit(&level, l, memory_order_relaxed);
    }
    return (yolo_cpu_isa)l;
}

yolo_status yolo_cpu_isa_check(void) {
    yolo_cpu_isa cap;
    bool set;
    return yolo_cpu_isa_cap(&cap, &set);
}

const char *yolo_cpu_isa_name(yolo_cpu_isa level) {
#if defined(__x86_64__)
    for (size_t i = 0; i < sizeof accepted / sizeof *accepted; i++)
        if (accepted[i].level == level) return accepted[i].name;
    return "unknown";
#elif defined(__aarch64__) && defined(__ARM_NEON)
    (void)level;
    return "neon";
#elif defined(__aarch64__)
    (void)level;
    return "aarch64";
#else
    (void)level;
    return "default";
#endif
}

const char *yolo_cpu_isa_clone_name(yolo_cpu_isa level) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
    return level >= YOLO_CPU_ISA_AVX512 ? "avx512f" : level >= YOLO_CPU_ISA_AVX2 ? "avx2" : "default";
#else
    (void)level;
    return "portable";
#endif
}

/* oneDNN's names, as ONEDNN_VERBOSE prints them. Its enum's values are
 * x86's only on x86-64 (aarch64's SVE levels reuse them). */
static const char *dnnl_isa_name(dnnl_cpu_isa_t isa) {
#if defined(__x86_64__)
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_all: return "all";
    default: return "another ISA";
    }
#else
    return isa == dnnl_cpu_isa_all ? "all (this architecture's best)" : "this architecture's (not x86)";
#endif
}

const char *yolo_cpu_isa_onednn(void) { return dnnl_isa_name(dnnl_get_effective_cpu_isa()); }

static void cpu_model(char *buf, size_t size) {
    snprintf(buf, size, "%s", "unknown model");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (colon && strncmp(line, "model name", 10) == 0) {
            colon++;
            while (*colon == ' ' || *colon == '\t') colon++;
            snprintf(buf, size, "%.*s", (int)strcspn(colon, "\n"), colon);
            break;
        }
    }
    fclose(f);
}

void yolo_cpu_isa_describe(char *buf, size_t size) {
    char model[256], cap_note[160] = "";
    cpu_model(model, sizeof model);
    const yolo_cpu_isa machine = yolo_cpu_isa_machine(), level = yolo_cpu_isa_level();
    yolo_cpu_isa cap;
    bool set;
    const char *v = getenv(YOLO_CPU_ISA_ENV);
    if (yolo_cpu_isa_cap(&cap, &set) != YOLO_OK)
        snprintf(cap_note, sizeof cap_note, " (%s=%s is not a level, ignored: %s)", YOLO_CPU_ISA_ENV, v,
                 YOLO_CPU_ISA_ACCEPTED);
    else if (set && cap < machine)
        snprintf(cap_note, sizeof cap_note, " (capped by %s=%s; machine %s)", YOLO_CPU_ISA_ENV, v,
                 yolo_cpu_isa_name(machine));
    else if (set && cap > machine)
        snprintf(cap_note, sizeof cap_note, " (%s=%s is above this machine's %s: runs the machine's)",
                 YOLO_CPU_ISA_ENV, v, yolo_cpu_isa_name(machine));
    else if (set)
        snprintf(cap_note, sizeof cap_note, " (%s=%s, the machine's)", YOLO_CPU_ISA_ENV, v);
    const char *blas = openblas_get_corename();
    snprintf(buf, size, "CPU: %s ISA %s%s; oneDNN %s; OpenBLAS %s; our kernels %s", model, yolo_cpu_isa_name(level),
             cap_note, yolo_cpu_isa_onednn(), blas ? blas : "?", yolo_cpu_isa_clone_name(level));
}

/* oneDNN's maximum ISA, before anything can use it: under a cap below the
 * machine's, unless ONEDNN_MAX_CPU_ISA says otherwise (it wins, as
 * oneDNN reads it when this has not set one). A bad YOLO_CPU_ISA caps
 * nothing; yolo_cpu_isa_check reports it. */
__attribute__((constructor)) static void apply_onednn_cap(void) {
#if defined(__x86_64__)
    const char *user = getenv("ONEDNN_MAX_CPU_ISA");
    if (user && *user) return;
    const yolo_cpu_isa level = yolo_cpu_isa_level();
    if (level < yolo_cpu_isa_machine()) dnnl_set_max_cpu_isa(caps[level].dnnl);
#endif
}

static bool set_if_absent(const char *name, const char *value) {
    const char *v = getenv(name);
    if (v && *v) return false;
    setenv(name, value, 1);
    return true;
}

yolo_status yolo_cpu_isa_setup_process(char **argv, const char *const *env_defaults, bool fix_unknown_blas) {
    yolo_cpu_isa cap;
    bool set;
    yolo_status st = yolo_cpu_isa_cap(&cap, &set);
    if (st != YOLO_OK) return st;
    bool reexec = false;
#if defined(__x86_64__)
    const yolo_cpu_isa machine = yolo_cpu_isa_machine();
    if (set && cap < machine) {
        set_if_absent("ONEDNN_MAX_CPU_ISA", caps[cap].onednn);
        set_if_absent("ATEN_CPU_CAPABILITY", caps[cap].aten);
        reexec |= set_if_absent("OPENBLAS_CORETYPE", caps[cap].openblas);
    } else if (fix_unknown_blas && !getenv("OPENBLAS_CORETYPE") && strcmp(openblas_get_corename(), "Prescott") == 0 &&
               machine >= YOLO_CPU_ISA_AVX2) {
        /* OpenBLAS 0.3.21 falls back to SSE3 Prescott kernels on CPUs newer
         * than it knows, 4-6x below what the CPU runs */
        reexec |= set_if_absent("OPENBLAS_CORETYPE", machine >= YOLO_CPU_ISA_AVX512 ? "SkylakeX" : "Haswell");
    }
#else
    (void)fix_unknown_blas;
#endif
    for (const char *const *e = env_defaults; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
        reexec |= set_if_absent(name, eq + 1);
    }
    if (reexec && argv) execv("/proc/self/exe", argv); /* on failure, go on with what we have */
    return YOLO_OK;
}

/* ---- the vector clones' dispatch ---- */
_Atomic int yolo_vector_level_cached = -1;

int yolo_vector_level_init(void) {
    const int l = (int)yolo_cpu_isa_level();
    atomic_store_explicit(&yolo_vector_level_cached, l, memory_order_relaxed);
    return l;
}

#ifdef YOLO_TEST_HOOKS
_Atomic int yolo_vector_isa_ran = 0;

void yolo_vector_isa_force(int level) {
    atomic_store_explicit(&yolo_vector_level_cached, level < 0 ? (int)yolo_cpu_isa_level() : level,
                          memory_order_relaxed);
}

int yolo_vector_isa_selected(void) { return atomic_load_explicit(&yolo_vector_isa_ran, memory_order_relaxed); }

void yolo_vector_isa_reset_selected(void) { atomic_store_explicit(&yolo_vector_isa_ran, 0, memory_order_relaxed); }
#endif
