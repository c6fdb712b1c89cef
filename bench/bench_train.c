/* Training throughput: images/s of forward + task loss + backward +
 * optimizer step (+ EMA) for a model at a given size, printed beside the
 * PyTorch baseline (../shared/bench/torch_yolo_baseline.py) run in the same
 * process tree, alternating, so that both see the same machine load.
 *
 *   bench_train [--task detect] [--model yolov8n.yaml] [--imgsz 320] [--batch 8]
 *               [--threads 2] [--iters 10] [--rounds 2] [--no-baseline]
 *
 * --model yolo11n.yaml runs the baseline through bench/torch_yolo11_baseline.py
 * (--baseline11), which adds YOLO11's modules to the shared script and builds
 * the same architecture (2,624,080 parameters at nc 80). Run from the
 * repository root, e.g.
 *   build/bin/bench_train --model yolo11n.yaml --imgsz 320 --batch 8
 *
 * YOLO_PROFILE=1 adds a per-op time table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend/cpu/cpu_backend.h"
#include "plugin/plugin_loader.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "train/train_log.h"
#include "yolo/config.h"
#include "yolo/task.h"
#include "test_util.h"

typedef struct options {
    const char *task, *model, *baseline, *baseline11;
    int imgsz, batch, threads, iters, rounds, nc;
    bool no_baseline;
} options;

static void parse(int argc, char **argv, options *o) {
    *o = (options){.task = "detect", .model = NULL, .imgsz = 320, .batch = 8, .threads = 2, .iters = 10,
                   .rounds = 2, .nc = 80, .baseline = "../shared/bench/torch_yolo_baseline.py",
                   .baseline11 = "bench/torch_yolo11_baseline.py"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--task")) o->task = v, i++;
        else if (!strcmp(a, "--model")) o->model = v, i++;
        else if (!strcmp(a, "--imgsz")) o->imgsz = atoi(v), i++;
        else if (!strcmp(a, "--batch")) o->batch = atoi(v), i++;
        else if (!strcmp(a, "--threads")) o->threads = atoi(v), i++;
        else if (!strcmp(a, "--iters")) o->iters = atoi(v), i++;
        else if (!strcmp(a, "--rounds")) o->rounds = atoi(v), i++;
        else if (!strcmp(a, "--nc")) o->nc = atoi(v), i++;
        else if (!strcmp(a, "--baseline")) o->baseline = v, i++;
        else if (!strcmp(a, "--baseline11")) o->baseline11 = v, i++;
        else if (!strcmp(a, "--no-baseline")) o->no_baseline = true;
    }
    if (!o->model) o->model = !strcmp(o->task, "segment") ? "yolov8n-seg.yaml"
                              : !strcmp(o->task, "classify") ? "yolov8n-cls.yaml" : "yolov8n.yaml";
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

static int run_baseline(const options *o, double *img_s) {
    char cmd[2048], script[1024];
    const char *task = o->task;
    /* YOLO11: the bench-local extension, given the shared script to extend */
    if (!strncmp(o->model, "yolo11", 6))
        snprintf(script, sizeof script, "%s --base %s", o->baseline11, o->baseline);
    else
        snprintf(script, sizeof script, "%s", o->baseline);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s --threads %d --worker '{\"task\":\"%s\",\"mode\":\"train\",\"imgsz\":%d,"
             "\"batch\":%d,\"threads\":%d,\"warmup\":2,\"min_iters\":%d,\"max_iters\":%d,\"budget_s\":120}' 2>/dev/null",
             script, o->threads, task, o->imgsz, o->batch, o->threads, o->iters, o->iters);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[4096];
    int found = -1;
    while (fgets(line, sizeof line, p)) {
        char *r = strstr(line, "\"img_per_s\":");
        if (strncmp(line, "RESULT", 6) == 0 && r) {
            *img_s = atof(r + 12);
            found = 0;
        }
    }
    pclose(p);
    return found;
}

int main(int argc, char **argv) {
    options o;
    parse(argc, argv, &o);
    const yolo_task *task = NULL;
    yolo_backend *be = NULL;
    yolo_model *model = NULL, *ema_model = NULL;
    if (yolo_plugin_load_task(o.task, &task) || yolo_backend_create("cpu", o.threads, &be)) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        return 1;
    }
    const yolo_task *tasks[1] = {task};
    yolo_model_options mo = {.tasks = tasks, .n_tasks = 1, .nc = !strcmp(o.task, "classify") ? 10 : o.nc};
    yolo_config *cfg = NULL;
    yolo_optimizer *opt = NULL;
    yolo_ema *ema = NULL;
    yolo_model_graph *mg = NULL;
    void *loss_state = NULL;
    yolo_status st = yolo_model_load(o.model, be, &mo, &model);
    if (!st) st = yolo_model_load(o.model, be, &mo, &ema_model);
    if (!st) st = yolo_ema_create(model, ema_model, &ema);
    if (!st) st = yolo_config_new(&cfg);
    if (!st && task->n_config_keys) st = yolo_config_add_keys(cfg, task->config_keys, task->n_config_keys, task->name);
    if (!st) st = yolo_optimizer_create(model, YOLO_OPTIMIZER_SGD, 0.01f, 0.937f, 5e-4f, &opt);
    if (!st) st = yolo_model_graph_build(model, o.batch, o.imgsz, o.imgsz, true, &mg);
    const char *names[80];
    for (int i = 0; i < 80; i++) names[i] = "class";
    yolo_task_context tctx = {.cfg = cfg, .model = model, .nc = mo.nc, .names = names, .imgsz = o.imgsz, .world = 1};
    if (!st) st = task->hooks->loss_create(&tctx, &loss_state);
    if (st) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        return 1;
    }
    yolo_batch batch;
    test_synthetic_batch(&batch, o.batch, o.imgsz, mo.nc);
    printf("bench_train: %s %s imgsz %d batch %d threads %d, activation memory %.1f MiB\n", o.task, o.model, o.imgsz,
           o.batch, o.threads, mg->peak_bytes / 1048576.0);
    double ours_best = 0, torch_best = 0;
    double *times = calloc((size_t)o.iters + 1, sizeof *times);
    for (int round = 0; round < o.rounds && !st; round++) {
        for (int it = -2; it < o.iters && !st; it++) { /* 2 warmup iterations */
            double t0 = yolo_seconds_now();
            double loss;
            float items[YOLO_TASK_MAX_ITEMS];
            st = yolo_model_graph_forward(mg, &batch);
            for (int k = 0; !st && k < mg->out.n; k++)
                memset(mg->host_grad[k].data, 0, (size_t)yolo_tensor_numel(mg->out.t[k]) * sizeof(float));
            if (!st) st = task->hooks->loss_compute(loss_state, &batch, mg->out.n, mg->host_out, mg->host_grad, &loss, items);
            if (!st) st = yolo_model_graph_backward(mg);
            if (!st) st = yolo_optimizer_step(opt, 10.0f, NULL);
            if (!st) st = yolo_ema_step(ema);
            if (it >= 0) times[it] = yolo_seconds_now() - t0;
        }
        /* the median step, as the baseline measures */
        qsort(times, (size_t)o.iters, sizeof *times, compare_double);
        double rate = o.batch / times[o.iters / 2];
        if (rate > ours_best) ours_best = rate;
        printf("round %d: yolo %.2f img/s (median step)\n", round + 1, rate);
        if (!o.no_baseline) {
            double t = 0;
            if (run_baseline(&o, &t) == 0) {
                if (t > torch_best) torch_best = t;
                printf("round %d: pytorch %.2f img/s\n", round + 1, t);
            } else {
                printf("pytorch baseline skipped: /usr/bin/python3 with torch (python3-torch) or %s not available\n",
                       o.baseline);
                o.no_baseline = true;
            }
        }
    }
    if (st) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        return 1;
    }
    printf("RESULT (best round of each) yolo %.2f img/s, peak RSS %.0f MiB", ours_best, peak_rss_mib());
    if (torch_best > 0) printf(", pytorch %.2f img/s, ratio %.2fx", torch_best, ours_best / torch_best);
    printf("\n");
    if (getenv("YOLO_PROFILE")) yolo_cpu_profile_report(stdout);
    free(times);
    task->hooks->loss_destroy(loss_state);
    yolo_model_graph_free(mg);
    yolo_optimizer_free(opt);
    yolo_ema_free(ema);
    yolo_model_free(model);
    yolo_config_free(cfg);
    yolo_backend_free(be);
    return 0;
}
