/* Checkpoint size and save/load time for yolov8n (3.16 M parameters):
 * last.ckpt (model + EMA + SGD momentum, f32) and best.ckpt (fp16 EMA),
 * beside the raw bytes of the tensors.
 *
 *   bench_ckpt [folder]      (default: $TMPDIR or /tmp; BENCH_KEEP=1 keeps the files)
 *
 * The real model comes from yolo_model_load("yolov8n.yaml") with the detect
 * plugin (YOLO_PLUGIN_PATH=<build>/lib/yolo/plugins, else the plugins next
 * to the executable); without it, synthetic tensors of the same sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/ckpt_tensors.h"
#include "ckpt/crc32.h"
#include "plugin/plugin_loader.h"
#include "yolo/model.h"

#define REPEATS 7

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}
static double lowest(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[0];
}

static size_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

static void fail(const char *what) {
    fprintf(stderr, "bench_ckpt: %s: %s\n", what, yolo_last_error());
    exit(1);
}

/* Synthetic stand-in: yolov8n's parameter count in 355 tensors. */
static int synthetic(yolo_backend *be, yolo_tensor ***out, bool **grad) {
    int n = 355;
    yolo_tensor **t = calloc((size_t)n, sizeof *t);
    *grad = calloc((size_t)n, sizeof **grad);
    int64_t left = 3157200;
    for (int i = 0; i < n; i++) {
        char name[64];
        int64_t shape[4] = {1, 1, 1, 1};
        int kind = i % 5; /* conv weight, bn weight, bn bias, running mean, running var */
        if (kind == 0) {
            int64_t c = i == n - 5 ? left : left / ((n - i) / 5 + 1);
            shape[0] = c;
            left -= c;
        } else {
            shape[0] = 32;
        }
        snprintf(name, sizeof name, "model.%d.%s", i / 5,
                 kind == 0 ? "conv.weight" : kind == 1 ? "bn.weight" : kind == 2 ? "bn.bias" : kind == 3 ? "bn.running_mean" : "bn.running_var");
        t[i] = yolo_tensor_new(be, name, YOLO_F32, 1, shape, false);
        (*grad)[i] = kind < 3;
        if (!t[i]) return -1;
    }
    *out = t;
    return n;
}

int main(int argc, char **argv) {
    const char *base = argc > 1 ? argv[1] : getenv("TMPDIR");
    char dir[512], last[600], best[600];
    snprintf(dir, sizeof dir, "%s/yolo-bench-ckpt-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    snprintf(last, sizeof last, "%s/last.ckpt", dir);
    snprintf(best, sizeof best, "%s/best.ckpt", dir);

    yolo_backend *be;
    if (yolo_backend_create("cpu", 0, &be)) fail("cpu backend");
    yolo_model *model = NULL;
    const yolo_task *task = NULL;
    yolo_tensor **tensors = NULL;
    bool *grad = NULL;
    int n = 0;
    const char *source = "yolov8n.yaml (real model)";
    yolo_model_options opt = {.seed = 0};
    if (yolo_plugin_load_task("detect", &task) == YOLO_OK && yolo_model_load("yolov8n.yaml", be, &opt, &model) == YOLO_OK) {
        n = yolo_model_tensor_count(model);
        tensors = calloc((size_t)n, sizeof *tensors);
        grad = calloc((size_t)n, sizeof *grad);
        for (int i = 0; i < n; i++) {
            tensors[i] = yolo_model_tensor_at(model, i)->tensor;
            grad[i] = tensors[i]->requires_grad;
        }
    } else {
        fprintf(stderr, "bench_ckpt: model builder unavailable (%s); using synthetic tensors\n", yolo_last_error());
        source = "synthetic (yolov8n sizes)";
        n = synthetic(be, &tensors, &grad);
        if (n < 0) fail("synthetic tensors");
    }
    int64_t params = 0, elems = 0;
    int n_grad = 0;
    for (int i = 0; i < n; i++) {
        int64_t k = yolo_tensor_numel(tensors[i]);
        elems += k;
        if (grad[i]) params += k, n_grad++;
    }
    /* Momentum buffers: host data, one per trainable tensor. */
    float **mom = calloc((size_t)n, sizeof *mom);
    for (int i = 0; i < n; i++) {
        if (!grad[i]) continue;
        int64_t k = yolo_tensor_numel(tensors[i]);
        mom[i] = malloc((size_t)k * sizeof(float));
        for (int64_t j = 0; j < k; j++) mom[i][j] = (float)sin((double)(j + i));
    }

    yolo_ckpt_info info = {.task = "detect", .plugin_version = "bench", .epoch = 41, .optimizer_steps = 123456,
                           .ema_updates = 123456, .best_fitness = 0.5, .seed = 0, .sampler_epoch = 42};
    yolo_meta *meta;
    if (yolo_ckpt_meta_new(&info, &meta)) fail("meta");

    double t_collect[REPEATS], t_write[REPEATS], t_read[REPEATS], t_load[REPEATS];
    double t_bcollect[REPEATS], t_bwrite[REPEATS], t_bread[REPEATS], t_bload[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        /* last.ckpt */
        double t0 = now();
        yolo_ckpt_tensors m = {0}, e = {0}, o = {0};
        for (int i = 0; i < n; i++) {
            if (yolo_ckpt_tensors_add(&m, NULL, tensors[i], YOLO_F32) || yolo_ckpt_tensors_add(&e, NULL, tensors[i], YOLO_F32))
                fail("collect");
            if (grad[i]) {
                char name[160];
                snprintf(name, sizeof name, "%s.momentum_buffer", tensors[i]->name);
                if (yolo_ckpt_tensors_add_host(&o, name, YOLO_ST_F32, tensors[i]->ndim, tensors[i]->shape, mom[i])) fail("collect");
            }
        }
        double t1 = now();
        yolo_ckpt_contents c = {.meta = meta};
        c.blobs[YOLO_CKPT_MODEL] = yolo_ckpt_tensors_blob(&m);
        c.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&e);
        c.blobs[YOLO_CKPT_OPTIMIZER] = yolo_ckpt_tensors_blob(&o);
        if (yolo_ckpt_write(last, &c)) fail("write last.ckpt");
        double t2 = now();
        yolo_ckpt_tensors_free(&m);
        yolo_ckpt_tensors_free(&e);
        yolo_ckpt_tensors_free(&o);
        yolo_ckpt *ck;
        double t3 = now();
        if (yolo_ckpt_read(last, &ck)) fail("read last.ckpt");
        double t4 = now();
        if (yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL), tensors, NULL, (size_t)n, "model")) fail("load model");
        double t5 = now();
        yolo_ckpt_free(ck);
        t_collect[r] = t1 - t0;
        t_write[r] = t2 - t1;
        t_read[r] = t4 - t3;
        t_load[r] = t5 - t4;

        /* best.ckpt: fp16 EMA only */
        t0 = now();
        yolo_ckpt_tensors h = {0};
        for (int i = 0; i < n; i++)
            if (yolo_ckpt_tensors_add(&h, NULL, tensors[i], YOLO_F16)) fail("collect fp16");
        t1 = now();
        yolo_ckpt_contents cb = {.meta = meta};
        cb.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&h);
        if (yolo_ckpt_write(best, &cb)) fail("write best.ckpt");
        t2 = now();
        yolo_ckpt_tensors_free(&h);
        t3 = now();
        if (yolo_ckpt_read(best, &ck)) fail("read best.ckpt");
        t4 = now();
        size_t transferred;
        if (yolo_ckpt_load_matching(yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA), tensors, (size_t)n, "ema", &transferred))
            fail("load ema");
        t5 = now();
        yolo_ckpt_free(ck);
        if (r == 0) printf("fine-tune from best.ckpt: Transferred %zu/%d items\n", transferred, n);
        t_bcollect[r] = t1 - t0;
        t_bwrite[r] = t2 - t1;
        t_bread[r] = t4 - t3;
        t_bload[r] = t5 - t4;
    }

    size_t raw_model = (size_t)elems * 4, raw_opt = (size_t)params * 4;
    size_t raw_last = 2 * raw_model + raw_opt, raw_best = (size_t)elems * 2;
    size_t size_last = file_size(last), size_best = file_size(best);
    float *probe = malloc(raw_model);
    double c0 = now();
    uint32_t crc = yolo_crc32_update(0, probe, raw_model);
    double c1 = now();
    free(probe);

    printf("\ncheckpoint bench: %s, %d tensors (%d trainable), %lld trainable values + %lld others (BN statistics, frozen DFL)\n",
           source, n, n_grad,
           (long long)params, (long long)(elems - params));
    printf("folder %s, %d runs, CPU backend\n\n", dir, REPEATS);
    double (*stat[2])(double *, int) = {median, lowest};
    const char *stat_name[2] = {"median", "fastest"};
    printf("%-10s %-24s %-8s %11s %11s %7s %9s %9s %9s %9s\n", "file", "contents", "of runs", "raw bytes", "file bytes",
           "ratio", "collect", "write", "read", "load");
    for (int k = 0; k < 2; k++)
        printf("%-10s %-24s %-8s %11zu %11zu %7.4f %7.1fms %7.1fms %7.1fms %7.1fms\n", "last.ckpt",
               "model+ema+momentum f32", stat_name[k], raw_last, size_last, (double)size_last / (double)raw_last,
               1e3 * stat[k](t_collect, REPEATS), 1e3 * stat[k](t_write, REPEATS), 1e3 * stat[k](t_read, REPEATS),
               1e3 * stat[k](t_load, REPEATS));
    for (int k = 0; k < 2; k++)
        printf("%-10s %-24s %-8s %11zu %11zu %7.4f %7.1fms %7.1fms %7.1fms %7.1fms\n", "best.ckpt", "ema fp16",
               stat_name[k], raw_best, size_best, (double)size_best / (double)raw_best, 1e3 * stat[k](t_bcollect, REPEATS),
               1e3 * stat[k](t_bwrite, REPEATS), 1e3 * stat[k](t_bread, REPEATS), 1e3 * stat[k](t_bload, REPEATS));
    printf("\n(collect: download + copy/convert to host blobs; write: zip + CRC-32 + fsync + rename + folder fsync;\n"
           " read: file -> validated blobs incl. CRC checks; load: blob -> model tensors. CRC-32 alone: %.0f MB/s [%08x])\n",
           (double)raw_model / (c1 - c0) / 1e6, crc);

    if (getenv("BENCH_KEEP")) printf("kept %s\n", last); else unlink(last);
    unlink(best);
    if (!getenv("BENCH_KEEP")) rmdir(dir);
    for (int i = 0; i < n; i++) free(mom[i]);
    free(mom);
    yolo_meta_free(meta);
    if (model) yolo_model_free(model);
    else
        for (int i = 0; i < n; i++) yolo_tensor_free(tensors[i]);
    free(tensors);
    free(grad);
    yolo_backend_free(be);
    return 0;
}
