/* bench_conv: conv2d forward + backward-data + backward-weight throughput on
 * every convolution shape of a YOLOv8n (default imgsz 320, batch 8), for
 * both CPU implementations (oneDNN, im2col + OpenBLAS sgemm), beside OpenBLAS
 * sgemm on the matching GEMM (M = out channels, N = batch*Ho*Wo,
 * K = C/groups*kh*kw), the CPU's practical limit. Prints GFLOP/s and the
 * ratio conv/sgemm per shape. Each figure is the best of several rounds
 * (each round times every engine in turn on each shape), which filters out
 * most interference on a shared machine; the load average is printed
 * before and after so a reader knows how busy it was. On a busy machine,
 * `nice -n -15 bench_conv` (as root) gives figures close to quiet ones.
 *
 *     bench_conv [--threads N] [--impl onednn|im2col|both] [--batch N]
 *                [--imgsz N] [--rounds N] [--min-time S] [--only LAYER-SUBSTRING] [--kernel K]
 *
 * The target: 3x3 convolutions with >= 64 channels reach at least 0.6 of
 * sgemm's FLOP rate on 2 threads. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/cpu/conv_common.h"
#include "util/cpu_isa.h"

#include "yolov8n_convs.h"
#define N_LAYERS ((int)(sizeof model / sizeof model[0]))

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_load(const char *when) {
    char buf[128] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(buf, sizeof buf, f)) snprintf(buf, sizeof buf, "?\n");
        fclose(f);
    }
    printf("# load average %s: %s", when, buf);
}

static float *random_buffer(int64_t n, uint64_t seed) {
    float *p = malloc((size_t)n * sizeof(float));
    if (!p) return NULL;
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (float)((seed >> 40) * (1.0 / 16777216.0) - 0.5);
    }
    return p;
}

typedef struct buffers {
    float *x, *w, *b, *y, *dy, *dx, *dw, *ga, *gb, *gc;
} buffers;

/* Best time of `fn` repeated until min_time has passed (at least twice). */
typedef yolo_status (*impl_fn)(yolo_cpu_context *, yolo_conv_pass, const yolo_conv_geom *, const void *,
                               const float *, const float *, void *);

static double time_pass(impl_fn fn, yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g,
                        buffers *B, const layer *L, double min_time, int *error) {
    const float *a = pass == YOLO_CONV_BWD_DATA ? B->dy : B->x;
    const float *b = pass == YOLO_CONV_BWD_WEIGHT ? B->dy : B->w;
    const float *bias = pass == YOLO_CONV_FWD && L->bias ? B->b : NULL;
    float *out = pass == YOLO_CONV_FWD ? B->y : pass == YOLO_CONV_BWD_DATA ? B->dx : B->dw;
    int64_t count = pass == YOLO_CONV_FWD ? g->n * g->o * g->ho * g->wo
                    : pass == YOLO_CONV_BWD_DATA ? g->n * g->c * g->h * g->w
                                                 : g->o * (g->c / g->groups) * g->kh * g->kw;
    float *first = malloc((size_t)count * sizeof(float));
    double best = 1e30, start = now();
    for (int rep = 0; rep < 2 || now() - start < min_time; rep++) {
        double t0 = now();
        if (fn(ctx, pass, g, a, b, bias, out) != YOLO_OK) {
            fprintf(stderr, "bench_conv: %s\n", yolo_last_error());
            *error = 1;
            break;
        }
        double t = now() - t0;
        if (t < best) best = t;
        /* Run to run bit-identity, checked on the real sizes too. */
        if (rep == 0 && first) memcpy(first, out, (size_t)count * sizeof(float));
        else if (first && memcmp(first, out, (size_t)count * sizeof(float)) != 0) {
            fprintf(stderr, "bench_conv: pass %d of %s: results differ run to run\n", (int)pass, L->where);
            *error = 1;
            break;
        }
    }
    free(first);
    return best;
}

static double time_sgemm(int threads, int64_t M, int64_t N, int64_t K, buffers *B, double min_time) {
    openblas_set_num_threads(threads);
    double best = 1e30, start = now();
    for (int rep = 0; rep < 2 || now() - start < min_time; rep++) {
        double t0 = now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, B->ga, (int)K, B->gb,
                    (int)N, 0.0f, B->gc, (int)N);
        double t = now() - t0;
        if (t < best) best = t;
    }
    return best;
}

/* oneDNN with bf16 inputs (amp on the CPU backend): f32 tensors in and out. */
static yolo_status onednn_bf16(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g, const void *a,
                               const float *b, const float *bias, void *out) {
    yolo_cpu_context c = *ctx;
    c.bf16 = true;
    return yolo_conv_onednn(&c, pass, g, a, b, bias, out);
}

static void usage(void) {
    fprintf(stderr, "usage: bench_conv [--threads N] [--impl onednn|im2col|both|bf16] [--batch N] [--imgsz N] "
                    "[--rounds N] [--min-time S] [--only LAYER-SUBSTRING] [--kernel K]\n");
}

/* OpenBLAS settings it reads only when it loads, so the bench sets them and
 * re-executes itself (yolo_cpu_isa_setup_process; an explicit setting in
 * the environment wins):
 * - YOLO_CPU_ISA's cap (util/cpu_isa.h): OPENBLAS_CORETYPE for that level.
 * - Without a cap: OpenBLAS 0.3.21 picks its kernels from the CPU model
 *   number and falls back to SSE3 "Prescott" kernels on CPUs newer than it
 *   knows (this machine's Xeon, model 207), 4-6x below its AVX-512 SkylakeX
 *   kernels: sgemm must be the practical limit.
 * - Its idle workers spin ~0.1 s after each call, which would slow the
 *   next engine's threads many-fold; OPENBLAS_THREAD_TIMEOUT=4 lets them
 *   sleep at once, so the engines can alternate shape by shape. */
static const char *const openblas_env[] = {"OPENBLAS_THREAD_TIMEOUT=4", NULL};

int main(int argc, char **argv) {
    if (yolo_cpu_isa_setup_process(argv, openblas_env, true) != YOLO_OK) {
        fprintf(stderr, "bench_conv: %s\n", yolo_last_error());
        return 2;
    }
    char isa[512];
    yolo_cpu_isa_describe(isa, sizeof isa);
    printf("%s\n", isa);
    int threads = 2, batch = 8, imgsz = 320, rounds = 3;
    double min_time = 0.05;
    const char *only = NULL; /* substring of the layer names to run */
    int only_k = 0;          /* kernel size to run, 0: all */
    bool use[4] = {false, true, true, false}; /* indexed by yolo_conv_impl; 3: oneDNN bf16 */
#define ENGINES 4 /* 1 onednn, 2 im2col, 3 onednn-bf16, ENGINES: sgemm */
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--threads") == 0 && v) threads = atoi(v), i++;
        else if (strcmp(argv[i], "--batch") == 0 && v) batch = atoi(v), i++;
        else if (strcmp(argv[i], "--imgsz") == 0 && v) imgsz = atoi(v), i++;
        else if (strcmp(argv[i], "--rounds") == 0 && v) rounds = atoi(v), i++;
        else if (strcmp(argv[i], "--min-time") == 0 && v) min_time = atof(v), i++;
        else if (strcmp(argv[i], "--only") == 0 && v) only = v, i++;
        else if (strcmp(argv[i], "--kernel") == 0 && v) only_k = atoi(v), i++;
        else if (strcmp(argv[i], "--impl") == 0 && v) {
            use[YOLO_CONV_IMPL_ONEDNN] = strcmp(v, "onednn") == 0 || strcmp(v, "both") == 0;
            use[YOLO_CONV_IMPL_IM2COL] = strcmp(v, "im2col") == 0 || strcmp(v, "both") == 0;
            if (strcmp(v, "bf16") == 0) use[1] = use[3] = true; /* fp32 and bf16 oneDNN, alternating */
            if (!use[1] && !use[2]) return usage(), 2;
            i++;
        } else {
            return usage(), 2;
        }
    }
    if (threads < 1 || batch < 1 || imgsz < 32 || imgsz % 32 || rounds < 1) return usage(), 2;

    yolo_cpu_context ctx = {NULL, threads, false};
    if (yolo_thread_pool_create(threads, &ctx.pool) != YOLO_OK) {
        fprintf(stderr, "bench_conv: %s\n", yolo_last_error());
        return 1;
    }
    impl_fn fns[ENGINES] = {NULL, yolo_conv_onednn, yolo_conv_im2col, onednn_bf16};
    const char *engine_names[ENGINES] = {"", "onednn", "im2col", "bf16"};

    /* Every shape's tensors, made once and shared by all engines. */
    static yolo_conv_geom geo[N_LAYERS];
    static buffers buf[N_LAYERS];
    static double best[N_LAYERS][ENGINES + 1][3]; /* [layer][engine][pass] */
    for (int li = 0; li < N_LAYERS; li++) {
        const layer *L = &model[li];
        yolo_conv_geom *g = &geo[li];
        *g = (yolo_conv_geom){.n = batch, .c = L->c, .h = (int64_t)L->hw * imgsz / 320, .o = L->o, .kh = L->k,
                              .kw = L->k, .sh = L->s, .sw = L->s, .ph = L->k / 2, .pw = L->k / 2, .dh = 1, .dw = 1,
                              .groups = 1};
        g->w = g->h;
        g->ho = (g->h + 2 * g->ph - (g->kh - 1) - 1) / g->sh + 1;
        g->wo = g->ho;
        int64_t M = g->o, N = g->n * g->ho * g->wo, K = g->c / g->groups * g->kh * g->kw;
        int64_t xs = g->n * g->c * g->h * g->w, ys = g->n * g->o * g->ho * g->wo;
        buf[li] = (buffers){random_buffer(xs, 1), random_buffer(g->o * K, 2), random_buffer(g->o, 3),
                            random_buffer(ys, 4),  random_buffer(ys, 5),      random_buffer(xs, 6),
                            random_buffer(g->o * K, 7), random_buffer(M * K, 8), random_buffer(K * N, 9),
                            random_buffer(M * N, 10)};
        for (int e = 0; e <= ENGINES; e++)
            for (int p = 0; p < 3; p++) best[li][e][p] = 1e30;
    }

    printf("# bench_conv: YOLOv8n conv shapes, imgsz %d, batch %d, %d threads, best of %d rounds\n", imgsz, batch,
           threads, rounds);
    print_load("before");
    printf("# OpenBLAS kernels: %s (OPENBLAS_CORETYPE=%s, OPENBLAS_THREAD_TIMEOUT=%s)\n", openblas_get_corename(),
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "unset",
           getenv("OPENBLAS_THREAD_TIMEOUT") ? getenv("OPENBLAS_THREAD_TIMEOUT") : "unset");
    /* Round after round over all shapes, the engines one after the other on
     * each shape, so that a conv and its sgemm are timed close together;
     * each figure is the best over the rounds. */
    int error = 0;
    for (int r = 0; r < rounds && !error; r++) {
        for (int li = 0; li < N_LAYERS && !error; li++) {
            if ((only && !strstr(model[li].where, only)) || (only_k && model[li].k != only_k)) continue;
            const yolo_conv_geom *g = &geo[li];
            for (int e = 1; e <= ENGINES && !error; e++) {
                if (e < ENGINES && !use[e]) continue;
                for (int p = 0; p < 3; p++) {
                    double t;
                    if (e == ENGINES) {
                        if (p > 0) break;
                        t = time_sgemm(threads, g->o, g->n * g->ho * g->wo, g->c / g->groups * g->kh * g->kw, &buf[li],
                                       min_time);
                    } else {
                        t = time_pass(fns[e], &ctx, (yolo_conv_pass)p, g, &buf[li], &model[li], min_time, &error);
                    }
                    if (t < best[li][e][p]) best[li][e][p] = t;
                }
            }
        }
    }

    printf("# GFLOP/s per pass (fwd / bwd_data / bwd_weight) and all three together; r.X = all / sgemm\n");
    printf("%-34s %4s %4s %4s %5s %3s |", "layer", "C", "HW", "O", "k/s", "n");
    for (int i = 1; i < ENGINES; i++)
        if (use[i]) printf(" %-6s fwd/bd/bw (all)     ", engine_names[i]);
    printf("| %7s |", "sgemm");
    for (int i = 1; i < ENGINES; i++)
        if (use[i]) printf(" r.%-6s", engine_names[i]);
    printf("\n");
    double total[ENGINES] = {0}, total_gemm = 0, total_flop = 0;
    double worst_ratio[ENGINES]; /* over 3x3 convs with >= 64 channels */
    for (int i = 0; i < ENGINES; i++) worst_ratio[i] = 1e30;
    for (int li = 0; li < N_LAYERS && !error; li++) {
        if ((only && !strstr(model[li].where, only)) || (only_k && model[li].k != only_k)) continue;
        const layer *L = &model[li];
        const yolo_conv_geom *g = &geo[li];
        double flop = 2.0 * g->o * (g->n * g->ho * g->wo) * (g->c / g->groups * g->kh * g->kw); /* per pass */
        double gemm_gf = flop / best[li][ENGINES][0] * 1e-9;
        char ks[8];
        snprintf(ks, sizeof ks, "%d/%d", L->k, L->s);
        printf("%-34s %4d %4lld %4d %5s %3d |", L->where, L->c, (long long)g->h, L->o, ks, L->count);
        double ratio[ENGINES] = {0};
        for (int i = 1; i < ENGINES; i++) {
            if (!use[i]) continue;
            const double *b = best[li][i];
            double all = b[0] + b[1] + b[2];
            ratio[i] = 3 * flop / all * 1e-9 / gemm_gf;
            printf(" %5.0f/%4.0f/%4.0f (%5.1f)     ", flop / b[0] * 1e-9, flop / b[1] * 1e-9, flop / b[2] * 1e-9,
                   3 * flop / all * 1e-9);
            total[i] += L->count * all;
            if (L->k == 3 && L->c >= 64 && L->o >= 64 && ratio[i] < worst_ratio[i]) worst_ratio[i] = ratio[i];
        }
        printf("| %7.1f |", gemm_gf);
        for (int i = 1; i < ENGINES; i++)
            if (use[i]) printf(" %8.2f", ratio[i]);
        printf("\n");
        total_gemm += L->count * 3 * best[li][ENGINES][0];
        total_flop += L->count * 3 * flop;
    }
    for (int li = 0; li < N_LAYERS; li++) {
        buffers *B = &buf[li];
        free(B->x), free(B->w), free(B->b), free(B->y), free(B->dy), free(B->dx), free(B->dw);
        free(B->ga), free(B->gb), free(B->gc);
    }
    if (!error) {
        printf("# whole model, every conv x its count, fwd+bwd_data+bwd_weight: %.2f GFLOP per step\n",
               total_flop * 1e-9);
        printf("#   sgemm on the same GEMMs: %.1f ms (%.1f GFLOP/s)\n", total_gemm * 1e3,
               total_flop / total_gemm * 1e-9);
        for (int i = 1; i < ENGINES; i++) {
            if (!use[i]) continue;
            printf("#   %-6s %.1f ms (%.1f GFLOP/s, %.2f of sgemm)", engine_names[i],
                   total[i] * 1e3, total_flop / total[i] * 1e-9, total_gemm / total[i]);
            if (worst_ratio[i] < 1e30)
                printf("; 3x3 with >= 64 channels: worst ratio %.2f %s", worst_ratio[i],
                       worst_ratio[i] >= 0.6 ? "(>= 0.6: pass)" : "(< 0.6: FAIL)");
            printf("\n");
        }
        printf("#   default implementation: %s\n", yolo_conv_impl_name(yolo_conv_current_impl()));
        if (use[3]) {
            char why[128];
            bool hw = yolo_conv_onednn_bf16_available(why, sizeof why);
            printf("#   bf16 / fp32 (oneDNN): %.2fx faster; %s%s\n", total[1] / total[3], why,
                   hw ? "" : " (bf16 emulated or refused: not a target)");
        }
    }
    print_load("after");
    yolo_thread_pool_free(ctx.pool);
    yolo_conv_release_caches();
    return error;
}
