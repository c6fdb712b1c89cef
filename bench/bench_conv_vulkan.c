/* bench_conv_vulkan: conv2d forward and forward + backward (data and weight
 * gradients) on the Vulkan backend, over the convolution shapes of a
 * YOLOv8n (the table of bench_conv.c), beside the CPU backend on the same
 * graphs as the baseline. Prints GFLOP/s per shape and in total for the
 * device it ran on, and the Vulkan/CPU ratio.
 *
 *     bench_conv_vulkan [--device vulkan|vulkan:N] [--batch N] [--imgsz N]
 *                       [--threads N] [--min-time S] [--only SUBSTRING] [--no-cpu] [--amp]
 *
 * --amp runs both backends with amp=True (Vulkan: fp16 GEMM inputs, on
 * cooperative matrices with YOLO_VK_COOPMAT=on where the device has them;
 * CPU: bf16 where it has bf16 hardware); the precision lines say which.
 *
 * Each figure is the best of repeated runs of a recorded graph (replayed,
 * as in training); a run is timed to its completion (a 4-byte download
 * waits for it). Defaults are small (batch 1, imgsz 160) because lavapipe
 * runs at about 1 GFLOP/s; use --batch 8 --imgsz 320 on a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"

#include "yolov8n_convs.h"
#define N_LAYERS ((int)(sizeof model / sizeof model[0]))

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct conv_graphs {
    yolo_tensor *x, *w, *b, *dy_src;
    yolo_graph *fwd, *full;
    yolo_tensor *y_fwd, *dy;
} conv_graphs;

static yolo_tensor *random_tensor(yolo_backend *be, int ndim, const int64_t *shape, bool grad, uint64_t seed) {
    yolo_tensor *t = yolo_tensor_new(be, "t", YOLO_F32, ndim, shape, grad);
    if (!t) return NULL;
    const int64_t n = yolo_tensor_numel(t);
    float *v = malloc(sizeof(float) * (size_t)n);
    uint64_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (float)((s >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    yolo_tensor_upload_f32(t, v, n);
    free(v);
    return t;
}

/* A forward graph, and a forward + backward graph whose output gradient is an input. */
static int build(yolo_backend *be, const layer *L, int batch, int hw, conv_graphs *cg) {
    memset(cg, 0, sizeof *cg);
    int64_t xs[4] = {batch, L->c, hw, hw}, ws[4] = {L->o, L->c, L->k, L->k}, bs[1] = {L->o};
    cg->x = random_tensor(be, 4, xs, true, 1);
    cg->w = random_tensor(be, 4, ws, true, 2);
    cg->b = L->bias ? random_tensor(be, 1, bs, true, 3) : NULL;
    if (!cg->x || !cg->w || (L->bias && !cg->b)) return -1;
    const yolo_conv2d_params p = {.stride_h = L->s, .stride_w = L->s, .pad_h = L->k / 2, .pad_w = L->k / 2};
    cg->fwd = yolo_graph_new(be);
    cg->y_fwd = yolo_conv2d(cg->fwd, cg->x, cg->w, cg->b, &p);
    yolo_graph_mark_output(cg->fwd, cg->y_fwd);
    cg->full = yolo_graph_new(be);
    yolo_tensor *y = yolo_conv2d(cg->full, cg->x, cg->w, cg->b, &p);
    if (!cg->y_fwd || !y || yolo_graph_backward_from(cg->full, 1, &y, &cg->dy) != YOLO_OK) return -1;
    if (yolo_graph_plan(cg->fwd, NULL) != YOLO_OK || yolo_graph_plan(cg->full, NULL) != YOLO_OK) return -1;
    const int64_t n = yolo_tensor_numel(cg->dy);
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) v[i] = (float)((i * 7919) % 200) / 100.0f - 1.0f;
    yolo_tensor_upload_f32(cg->dy, v, n);
    free(v);
    return 0;
}

static void release(conv_graphs *cg) {
    yolo_graph_free(cg->fwd);
    yolo_graph_free(cg->full);
    yolo_tensor_free(cg->x);
    yolo_tensor_free(cg->w);
    yolo_tensor_free(cg->b);
}

/* Best seconds per run of g, each run waited for (a 4-byte read of `probe`). */
static double time_graph(yolo_backend *be, yolo_graph *g, const yolo_tensor *probe, double min_time) {
    float sink;
    if (yolo_graph_run(g) != YOLO_OK) return -1; /* records (Vulkan), warms caches */
    be->ops->download(be, probe->buffer, probe->offset, &sink, 4);
    double best = 1e30, start = now();
    for (int rep = 0; rep < 3 || now() - start < min_time; rep++) {
        double t0 = now();
        if (yolo_graph_run(g) != YOLO_OK) return -1;
        be->ops->download(be, probe->buffer, probe->offset, &sink, 4);
        double dt = now() - t0;
        if (dt < best) best = dt;
        if (rep > 1000) break;
    }
    return best;
}

typedef struct figures {
    double fwd, full; /* seconds */
} figures;

static int bench_layer(yolo_backend *be, const layer *L, int batch, int hw, double min_time, figures *f) {
    conv_graphs cg;
    int rc = build(be, L, batch, hw, &cg);
    if (rc == 0) {
        f->fwd = time_graph(be, cg.fwd, cg.y_fwd, min_time);
        f->full = time_graph(be, cg.full, cg.w->grad, min_time);
        if (f->fwd < 0 || f->full < 0) rc = -1;
    }
    if (rc) fprintf(stderr, "%s on %s: %s\n", L->where, yolo_backend_name(be), yolo_last_error());
    release(&cg);
    return rc;
}

int main(int argc, char **argv) {
    const char *device = "vulkan", *only = NULL;
    int batch = 1, imgsz = 160, threads = 2, with_cpu = 1, amp = 0;
    double min_time = 0.2;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--device") == 0 && v) device = v, i++;
        else if (strcmp(argv[i], "--batch") == 0 && v) batch = atoi(v), i++;
        else if (strcmp(argv[i], "--imgsz") == 0 && v) imgsz = atoi(v), i++;
        else if (strcmp(argv[i], "--threads") == 0 && v) threads = atoi(v), i++;
        else if (strcmp(argv[i], "--min-time") == 0 && v) min_time = atof(v), i++;
        else if (strcmp(argv[i], "--only") == 0 && v) only = v, i++;
        else if (strcmp(argv[i], "--no-cpu") == 0) with_cpu = 0;
        else if (strcmp(argv[i], "--amp") == 0) amp = 1;
        else {
            fprintf(stderr, "usage: %s [--device vulkan|vulkan:N] [--batch N] [--imgsz N] [--threads N] "
                            "[--min-time S] [--only SUBSTRING] [--no-cpu] [--amp]\n", argv[0]);
            return 2;
        }
    }
    yolo_backend *vk = NULL, *cpu = NULL;
    if (yolo_backend_create(device, 0, &vk) != YOLO_OK) {
        fprintf(stderr, "%s\n", yolo_last_error());
        return 1;
    }
    if (with_cpu && yolo_backend_create("cpu", threads, &cpu) != YOLO_OK) {
        fprintf(stderr, "%s\n", yolo_last_error());
        return 1;
    }
    if (amp) {
        yolo_backend_set_amp(vk, true);
        printf("amp on %s: %s\n", yolo_backend_name(vk), yolo_backend_precision(vk));
        if (cpu) {
            yolo_backend_set_amp(cpu, true);
            printf("amp on %s: %s\n", yolo_backend_name(cpu), yolo_backend_precision(cpu));
        }
    }
    printf("conv2d on %s vs cpu (%d threads), batch %d, imgsz %d; GFLOP/s (forward | forward+backward)\n",
           yolo_backend_name(vk), threads, batch, imgsz);
    printf("%-36s %14s %8s %8s %8s %8s %6s\n", "layer", "C->O kxk/s HW", "vk fwd", "vk f+b", "cpu fwd", "cpu f+b",
           "ratio");
    double flops_fwd = 0, t_vk_fwd = 0, t_vk_full = 0, t_cpu_fwd = 0, t_cpu_full = 0;
    for (int i = 0; i < N_LAYERS; i++) {
        const layer *L = &model[i];
        if (only && !strstr(L->where, only)) continue;
        const int hw = L->hw * imgsz / 320 > 0 ? L->hw * imgsz / 320 : 1;
        const int ho = (hw + 2 * (L->k / 2) - L->k) / L->s + 1;
        const double flop = 2.0 * batch * L->o * (double)ho * ho * L->c * L->k * L->k; /* one pass */
        figures v = {0}, c = {0};
        if (bench_layer(vk, L, batch, hw, min_time, &v)) return 1;
        if (cpu && bench_layer(cpu, L, batch, hw, min_time, &c)) return 1;
        char shape[32];
        snprintf(shape, sizeof shape, "%d->%d %dx%d/%d %d", L->c, L->o, L->k, L->k, L->s, hw);
        printf("%-36s %14s %8.2f %8.2f %8.2f %8.2f %6.3f\n", L->where, shape, flop / v.fwd * 1e-9,
               3 * flop / v.full * 1e-9, cpu ? flop / c.fwd * 1e-9 : 0.0, cpu ? 3 * flop / c.full * 1e-9 : 0.0,
               cpu ? c.full / v.full : 0.0);
        flops_fwd += flop * L->count;
        t_vk_fwd += v.fwd * L->count;
        t_vk_full += v.full * L->count;
        t_cpu_fwd += c.fwd * L->count;
        t_cpu_full += c.full * L->count;
    }
    printf("%-36s %14s %8.2f %8.2f %8.2f %8.2f %6.3f\n", "model total (layer counts)", "", flops_fwd / t_vk_fwd * 1e-9,
           3 * flops_fwd / t_vk_full * 1e-9, cpu ? flops_fwd / t_cpu_fwd * 1e-9 : 0.0,
           cpu ? 3 * flops_fwd / t_cpu_full * 1e-9 : 0.0, cpu ? t_cpu_full / t_vk_full : 0.0);
    printf("ratio = cpu time / vulkan time for forward+backward (> 1: Vulkan is faster)\n");
    yolo_backend_free(cpu);
    yolo_backend_free(vk);
    return 0;
}
