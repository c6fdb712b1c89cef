/* Training throughput: images/s of forward + task loss + backward +
 * optimizer step (+ EMA) for a model at a given size, ours in fp32 and with
 * amp, printed beside the PyTorch baseline (../shared/bench/torch_yolo_baseline.py)
 * in fp32 and under torch.autocast("cpu", bfloat16) (through
 * bench/torch_autocast_baseline.py), all run in the same process tree, one
 * after the other in each round, so that all see the same machine load.
 *
 *   bench_train [--task detect] [--model yolov8n.yaml] [--imgsz 320] [--batch 8]
 *               [--threads 2] [--iters 10] [--warmup 2] [--rounds 2] [--device cpu|vulkan]
 *               [--modes fp32,amp] [--no-baseline] [--baseline PATH]   (--help: usage)
 *
 * Per step it also reports the host time the device waits for (output
 * download, loss, gradient upload), the bytes moved, the transfers, the
 * graph runs (on Vulkan each is a queue submission; how many of them
 * recorded their command buffer anew instead of replaying it) and, on
 * Vulkan, the graph waits: how often the host blocked until submitted runs
 * finished.
 * The RESULT line gives the best round of each mode and, with both modes,
 * amp over fp32 round by round and its median: the pair within a round
 * shares the machine's phase, the best rounds of the two modes may not.
 *
 * --model yolo11n.yaml, yolo12n.yaml or yolov9t.yaml runs the baseline
 * through bench/torch_yolo11_baseline.py (--baseline11), which adds YOLO11's,
 * YOLO12's and YOLOv9's modules to the shared script and builds the same
 * architecture (2,624,080, 2,602,288 and 2,128,720 parameters at nc 80),
 * with the same autocast wrapper as the YOLOv8 script. Run from
 * the repository root, e.g.
 *   build/bin/bench_train --model yolo11n.yaml --imgsz 320 --batch 8
 *
 * YOLO_PROFILE=1 adds a per-op time table (CPU).
 *
 * YOLO_CPU_ISA=avx2 (util/cpu_isa.h) caps ours and the baseline alike: the
 * bench puts ONEDNN_MAX_CPU_ISA, ATEN_CPU_CAPABILITY and OPENBLAS_CORETYPE
 * in its environment (re-executing itself for OpenBLAS) before the PyTorch
 * child starts, and its first line is the ISA that runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "backend/cpu/cpu_backend.h"
#include "backend/vulkan/vulkan_stats.h"
#include "plugin/plugin_loader.h"
#include "train/amp_step.h"
#include "train/ema.h"
#include "train/model_graph.h"
#include "train/optimizer.h"
#include "train/train_log.h"
#include "util/cpu_isa.h"
#include "yolo/config.h"
#include "yolo/task.h"
#include "test_util.h"

typedef struct options {
    const char *task, *model, *baseline, *baseline11, *device, *modes;
    int imgsz, batch, threads, iters, warmup, rounds, nc;
    bool no_baseline;
} options;

static const char usage[] =
    "usage: bench_train [--task detect|segment|classify] [--model YAML] [--imgsz N] [--batch N] [--threads N]\n"
    "                   [--iters N] [--warmup N] [--rounds N] [--nc N] [--device cpu|vulkan[:K]]\n"
    "                   [--modes fp32,amp] [--baseline SCRIPT] [--baseline11 SCRIPT] [--no-baseline]\n"
    "Times training steps of ours (each mode) and of the PyTorch baseline, round by round, in one run.\n";

/* An integer option's value (at least min), or -1 (with a message) if it is not one. */
static int integer(const char *name, const char *v, int min) {
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < min || n > 1 << 20) {
        fprintf(stderr, "bench_train: %s wants an integer of at least %d, got '%s'\n", name, min, v);
        return -1;
    }
    return (int)n;
}

/* 0: run; 1: --help printed; 2: bad arguments (message printed). */
static int parse(int argc, char **argv, options *o) {
    *o = (options){.task = "detect", .model = NULL, .imgsz = 320, .batch = 8, .threads = 2, .iters = 10, .warmup = 2,
                   .rounds = 2, .nc = 80, .baseline = "../shared/bench/torch_yolo_baseline.py",
                   .baseline11 = "bench/torch_yolo11_baseline.py", .device = "cpu", .modes = "fp32,amp"};
    struct { const char *name; int *value; } ints[] = {{"--imgsz", &o->imgsz},   {"--batch", &o->batch},
                                                       {"--threads", &o->threads}, {"--iters", &o->iters},
                                                       {"--rounds", &o->rounds}, {"--warmup", &o->warmup},
                                                       {"--nc", &o->nc}};
    struct { const char *name; const char **value; } strs[] = {
        {"--task", &o->task},         {"--model", &o->model},   {"--baseline", &o->baseline},
        {"--baseline11", &o->baseline11}, {"--device", &o->device}, {"--modes", &o->modes}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            return 1;
        }
        if (!strcmp(a, "--no-baseline")) {
            o->no_baseline = true;
            continue;
        }
        int int_k = -1, str_k = -1;
        for (int k = 0; k < (int)(sizeof ints / sizeof *ints); k++)
            if (!strcmp(a, ints[k].name)) int_k = k;
        for (int k = 0; k < (int)(sizeof strs / sizeof *strs); k++)
            if (!strcmp(a, strs[k].name)) str_k = k;
        const bool known = int_k >= 0 || str_k >= 0;
        if (known && i + 1 >= argc) {
            fprintf(stderr, "bench_train: %s wants a value\n", a);
            return 2;
        }
        if (int_k >= 0 && (*ints[int_k].value = integer(a, argv[++i], ints[int_k].value == &o->warmup ? 0 : 1)) < 0)
            return 2;
        if (str_k >= 0) *strs[str_k].value = argv[++i];
        if (!known) {
            fprintf(stderr, "bench_train: unknown option '%s'\n%s", a, usage);
            return 2;
        }
    }
    for (const char *m = o->modes; *m;) { /* a comma-separated list of fp32 and amp */
        size_t len = strcspn(m, ",");
        if (!((len == 4 && !strncmp(m, "fp32", 4)) || (len == 3 && !strncmp(m, "amp", 3)))) {
            fprintf(stderr, "bench_train: --modes '%s': '%.*s' is neither fp32 nor amp\n", o->modes, (int)len, m);
            return 2;
        }
        m += len + (m[len] == ',');
    }
    if (!*o->modes) {
        fprintf(stderr, "bench_train: --modes is empty (fp32, amp or fp32,amp)\n");
        return 2;
    }
    if (!o->model) o->model = !strcmp(o->task, "segment") ? "yolov8n-seg.yaml"
                              : !strcmp(o->task, "classify") ? "yolov8n-cls.yaml" : "yolov8n.yaml";
    return 0;
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

static int run_baseline(const options *o, bool autocast, double *img_s) {
    char cmd[2048];
    if (!strncmp(o->model, "yolo11n", 7) || !strncmp(o->model, "yolo12n", 7) || !strncmp(o->model, "yolov9t", 7)) {
        /* the bench-local YOLO11n / YOLO12n / YOLOv9t extension of the shared script */
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 %s --base %s --model %.7s --threads %d --worker '{\"task\":\"%s\",\"mode\":\"train\","
                 "\"imgsz\":%d,\"batch\":%d,\"threads\":%d,\"warmup\":2,\"min_iters\":%d,\"max_iters\":%d,"
                 "\"budget_s\":120,\"autocast\":%s}' 2>/dev/null",
                 o->baseline11, o->baseline, o->model, o->threads, o->task, o->imgsz, o->batch, o->threads, o->iters, o->iters,
                 autocast ? "true" : "false");
    } else {
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 %s/torch_autocast_baseline.py %s --worker '{\"task\":\"%s\",\"mode\":\"train\","
                 "\"imgsz\":%d,\"batch\":%d,\"threads\":%d,\"warmup\":2,\"min_iters\":%d,\"max_iters\":%d,"
                 "\"budget_s\":120,\"autocast\":%s}' 2>/dev/null",
                 YOLO_BENCH_DIR, o->baseline, o->task, o->imgsz, o->batch, o->threads, o->iters, o->iters,
                 autocast ? "true" : "false");
    }
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

/* The CPU's bf16 feature flags as /proc/cpuinfo lists them. */
static void cpu_flags(char *out, size_t size) {
    snprintf(out, size, "none of avx512_bf16, amx_bf16, amx_tile");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0) continue;
        const char *want[] = {"avx512_bf16", "amx_bf16", "amx_tile", "avx512f"};
        size_t used = 0;
        out[0] = '\0';
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            char pat[32];
            snprintf(pat, sizeof pat, " %s", want[i]);
            const char *at = strstr(line, pat);
            char end = at ? at[strlen(pat)] : 0;
            if (at && (end == ' ' || end == '\n' || end == '\0') && used < size)
                used += (size_t)snprintf(out + used, size - used, "%s%s", used ? " " : "", want[i]);
        }
        if (!used) snprintf(out, size, "none of avx512_bf16, amx_bf16, amx_tile");
        break;
    }
    fclose(f);
}

/* One step's host-side figures (medians over the iterations). */
typedef struct step_figures {
    double seconds, cpu_seconds, wait_download, wait_loss, wait_upload;
    double bytes_moved, transfers, graph_runs;
    double graph_waits; /* Vulkan: the host blocked on a graph run's fence */
    double graph_recordings; /* Vulkan: graph runs recorded anew (a replay records nothing) */
    double loss_sum; /* over every step, warmup included: equal bits run to run */
} step_figures;

typedef struct bench {
    const options *o;
    const yolo_task *task;
    yolo_backend *be;
    yolo_model_graph *mg;       /* the mode being timed: one of graphs[] */
    yolo_model_graph *graphs[2]; /* fp32, amp: each planned under its own precision (amp may store bf16) */
    yolo_optimizer *opt;
    yolo_ema *ema;
    bool ema_pending; /* loss scaling: as the trainer's (train/amp_step.h) */
    void *loss_state;
    yolo_batch batch;
} bench;

/* CPU time of the whole process (all threads): on a machine shared with
 * other work it moves far less than wall time, so ratios of it are the
 * load-robust figure (it also counts idle spinning, which wall time hides). */
static double process_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return v[n / 2];
}

/* The host's blocking waits on the device so far (Vulkan; 0 elsewhere). */
static uint64_t graph_waits(const yolo_backend *be) {
    yolo_vulkan_stats vs;
    return yolo_vulkan_get_stats(be, &vs) == YOLO_OK ? vs.graph_waits : 0;
}

/* Command buffers recorded for graph runs so far (Vulkan; 0 elsewhere). */
static uint64_t graph_recordings(const yolo_backend *be) {
    yolo_vulkan_stats vs;
    return yolo_vulkan_get_stats(be, &vs) == YOLO_OK ? vs.graph_recordings : 0;
}

/* iters timed steps after `warmup` untimed ones, each as the trainer's
 * (train_loop.c): with loss scaling (amp with fp16 kernels) the last step's
 * inf check after the forward and scaled loss gradients; the optimizer
 * step and the EMA update queued together (train/amp_step.h); the median
 * of each figure. */
static yolo_status run_ours(bench *b, step_figures *fig) {
    const options *o = b->o;
    yolo_model_graph *mg = b->mg;
    yolo_optimizer *opt = b->opt;
    enum { FIGURES = 10 };
    double *v[FIGURES];
    for (int k = 0; k < FIGURES; k++) v[k] = calloc((size_t)o->iters + 1, sizeof(double));
    yolo_status st = YOLO_OK;
    for (int it = -o->warmup; it < o->iters && !st; it++) {
        yolo_backend_traffic c0 = b->be->traffic;
        uint64_t w0 = graph_waits(b->be), r0 = graph_recordings(b->be);
        double t0 = yolo_seconds_now(), cpu0 = process_cpu_seconds();
        double loss = 0;
        float items[YOLO_TASK_MAX_ITEMS];
        st = yolo_model_graph_forward(mg, &b->batch);
        yolo_backend_traffic c1 = b->be->traffic;
        if (!st && opt->scaler.enabled) st = yolo_amp_settle(opt, b->ema, &b->ema_pending);
        double t1 = yolo_seconds_now();
        for (int k = 0; !st && k < mg->out.n; k++)
            memset(mg->host_grad[k].data, 0, (size_t)yolo_tensor_numel(mg->out.t[k]) * sizeof(float));
        if (!st) st = b->task->hooks->loss_compute(b->loss_state, &b->batch, mg->out.n, mg->host_out, mg->host_grad,
                                                   &loss, items);
        if (!st) yolo_amp_scale_loss_grads(opt, mg, it);
        double t2 = yolo_seconds_now();
        yolo_backend_traffic c2 = b->be->traffic;
        if (!st) st = yolo_amp_prepare(opt, b->ema, 10.0f, &b->ema_pending); /* uploads while the device idles */
        if (!st) st = yolo_model_graph_backward(mg);
        yolo_backend_traffic c3 = b->be->traffic;
        if (!st) st = yolo_amp_step(opt, b->ema, 10.0f, &b->ema_pending);
        yolo_backend_traffic c4 = b->be->traffic;
        fig->loss_sum += loss;
        if (it < 0) continue;
        v[0][it] = yolo_seconds_now() - t0;
        v[1][it] = c1.seconds_down - c0.seconds_down; /* the head outputs */
        v[2][it] = t2 - t1;
        v[3][it] = c3.seconds_up - c2.seconds_up; /* their gradients */
        v[4][it] = (double)(c4.bytes_up + c4.bytes_down - c0.bytes_up - c0.bytes_down);
        v[5][it] = (double)(c4.uploads + c4.downloads - c0.uploads - c0.downloads);
        v[6][it] = (double)(c4.graph_runs - c0.graph_runs);
        v[7][it] = process_cpu_seconds() - cpu0;
        v[8][it] = (double)(graph_waits(b->be) - w0);
        v[9][it] = (double)(graph_recordings(b->be) - r0);
    }
    if (!st) st = yolo_amp_settle(opt, b->ema, &b->ema_pending); /* the last step's EMA, before the next mode */
    if (!st) {
        *fig = (step_figures){median(v[0], o->iters), median(v[7], o->iters), median(v[1], o->iters),
                              median(v[2], o->iters), median(v[3], o->iters), median(v[4], o->iters),
                              median(v[5], o->iters), median(v[6], o->iters), median(v[8], o->iters), median(v[9], o->iters),
                              fig->loss_sum};
    }
    for (int k = 0; k < FIGURES; k++) free(v[k]);
    return st;
}

static void print_ours(const options *o, int round, const char *mode, const step_figures *f) {
    double wait = f->wait_download + f->wait_loss + f->wait_upload;
    printf("round %d: yolo %-4s %7.2f img/s (median step %.1f ms, %.1f ms CPU; host wait %.1f ms = download %.2f + loss %.1f + "
           "upload %.2f; %.2f MB moved in %.0f transfers, %.0f graph runs (%.0f recorded), %.0f graph waits; loss sum %.9g)\n",
           round + 1, mode, o->batch / f->seconds, f->seconds * 1e3, f->cpu_seconds * 1e3, wait * 1e3, f->wait_download * 1e3,
           f->wait_loss * 1e3, f->wait_upload * 1e3, f->bytes_moved / 1e6, f->transfers, f->graph_runs,
           f->graph_recordings, f->graph_waits, f->loss_sum);
}

int main(int argc, char **argv) {
    if (yolo_cpu_isa_setup_process(argv, NULL, false) != YOLO_OK) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        return 2;
    }
    options o;
    int parsed = parse(argc, argv, &o);
    if (parsed) return parsed == 1 ? 0 : 2;
    bench b = {.o = &o};
    char isa[512];
    yolo_cpu_isa_describe(isa, sizeof isa); /* the baseline child inherits the cap's environment */
    printf("%s\n", isa);
    yolo_model *model = NULL, *ema_model = NULL;
    if (yolo_plugin_load_task(o.task, &b.task) || yolo_backend_create(o.device, o.threads, &b.be)) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        return 1;
    }
    const yolo_task *tasks[1] = {b.task};
    yolo_model_options mo = {.tasks = tasks, .n_tasks = 1, .nc = !strcmp(o.task, "classify") ? 10 : o.nc};
    yolo_config *cfg = NULL;
    yolo_status st = yolo_model_load(o.model, b.be, &mo, &model);
    if (!st) st = yolo_model_load(o.model, b.be, &mo, &ema_model);
    if (!st) st = yolo_ema_create(model, ema_model, &b.ema);
    if (!st) st = yolo_config_new(&cfg);
    if (!st && b.task->n_config_keys)
        st = yolo_config_add_keys(cfg, b.task->config_keys, b.task->n_config_keys, b.task->name);
    if (!st) st = yolo_optimizer_create(model, YOLO_OPTIMIZER_SGD, 0.01f, 0.937f, 5e-4f, &b.opt);
    /* A graph's activation dtypes are fixed when it is planned, so each mode
     * gets its own, built with that mode's precision set. */
    for (int m = 0; m < 2 && !st; m++) {
        yolo_backend_set_amp(b.be, m == 1);
        st = yolo_model_graph_build(model, o.batch, o.imgsz, o.imgsz, true, &b.graphs[m]);
    }
    const char *names[80];
    for (int i = 0; i < 80; i++) names[i] = "class";
    yolo_task_context tctx = {.cfg = cfg, .model = model, .nc = mo.nc, .names = names, .imgsz = o.imgsz, .world = 1};
    if (!st) st = b.task->hooks->loss_create(&tctx, &b.loss_state);
    if (st) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        return 1;
    }
    test_synthetic_batch(&b.batch, o.batch, o.imgsz, mo.nc);
    char flags[128];
    cpu_flags(flags, sizeof flags);
    printf("bench_train: %s %s imgsz %d batch %d threads %d on %s, activation memory fp32 %.1f MiB, amp %.1f MiB\n",
           o.task, o.model, o.imgsz, o.batch, o.threads, yolo_backend_name(b.be), b.graphs[0]->peak_bytes / 1048576.0,
           b.graphs[1]->peak_bytes / 1048576.0);
    const bool amp_runs = yolo_backend_set_amp(b.be, true);
    printf("host CPU flags: %s; amp on %s runs %s\n", flags, yolo_backend_name(b.be), yolo_backend_precision(b.be));
    bool want[2] = {strstr(o.modes, "fp32") != NULL, strstr(o.modes, "amp") != NULL};
    if (want[1] && !amp_runs) { /* amp would time fp32 twice, and PyTorch's bf16 autocast crawls without bf16 hardware */
        printf("amp falls back to fp32 here: the amp mode and the autocast-bf16 baseline are skipped\n");
        want[1] = false;
    }
    const char *mode_names[2] = {"fp32", "amp"};
    double ours_best[2] = {0, 0}, torch_best[2] = {0, 0}, ours_cpu[2] = {0, 0}; /* least CPU s per step */
    /* amp over fp32 within each round: the best rounds of the two modes may
     * come from different phases of a shared machine, the round's pair not */
    double *round_ratio = calloc((size_t)o.rounds + 1, sizeof *round_ratio), round_rate[2];
    int ratios = 0;
    double *fp32_ratio = calloc((size_t)o.rounds + 1, sizeof *fp32_ratio); /* ours / PyTorch's, fp32, per round */
    int torch_rounds = 0;
    for (int round = 0; round < o.rounds && !st; round++) {
        round_rate[0] = round_rate[1] = 0;
        for (int m = 0; m < 2 && !st; m++) {
            if (!want[m]) continue;
            yolo_backend_set_amp(b.be, m == 1);
            /* loss scaling as the trainer turns it on: amp with fp16 kernels */
            yolo_grad_scaler_init(&b.opt->scaler, yolo_backend_supports(b.be, YOLO_BACKEND_CAP_LOSS_SCALING));
            b.mg = b.graphs[m];
            step_figures f = {0};
            st = run_ours(&b, &f);
            if (st) break;
            round_rate[m] = o.batch / f.seconds;
            if (round_rate[m] > ours_best[m]) ours_best[m] = round_rate[m];
            if (ours_cpu[m] == 0 || f.cpu_seconds < ours_cpu[m]) ours_cpu[m] = f.cpu_seconds;
            print_ours(&o, round, mode_names[m], &f);
        }
        if (round_rate[0] > 0 && round_rate[1] > 0 && round_ratio) round_ratio[ratios++] = round_rate[1] / round_rate[0];
        for (int m = 0; m < 2 && !st && !o.no_baseline; m++) {
            double t = 0;
            if (!want[m]) continue;
            if (run_baseline(&o, m == 1, &t) == 0) {
                if (t > torch_best[m]) torch_best[m] = t;
                if (m == 0 && fp32_ratio && round_rate[0] > 0) fp32_ratio[torch_rounds++] = round_rate[0] / t;
                printf("round %d: pytorch %s %.2f img/s\n", round + 1, m ? "autocast-bf16" : "fp32", t);
            } else {
                printf("pytorch baseline skipped: /usr/bin/python3 with torch (python3-torch) or %s not available\n",
                       o.baseline);
                o.no_baseline = true;
            }
        }
    }
    if (st) {
        fprintf(stderr, "bench_train: %s\n", yolo_last_error());
        free(round_ratio);
        free(fp32_ratio);
        return 1;
    }
    printf("RESULT (best round of each)");
    if (want[0]) printf(" yolo fp32 %.2f img/s%s", ours_best[0], want[1] ? "," : "");
    if (want[1]) printf(" yolo amp %.2f img/s", ours_best[1]);
    if (want[0] && want[1]) printf(" (%.2fx fp32)", ours_best[1] / ours_best[0]);
    if (ours_cpu[0] > 0 && ours_cpu[1] > 0)
        printf(", CPU time per step fp32 %.0f ms, amp %.0f ms (%.2fx)", ours_cpu[0] * 1e3, ours_cpu[1] * 1e3,
               ours_cpu[0] / ours_cpu[1]);
    if (ratios > 0) {
        printf(", amp / fp32 round by round");
        for (int i = 0; i < ratios; i++) printf(" %.2f", round_ratio[i]);
        qsort(round_ratio, (size_t)ratios, sizeof *round_ratio, compare_double);
        double mid = ratios % 2 ? round_ratio[ratios / 2] : (round_ratio[ratios / 2 - 1] + round_ratio[ratios / 2]) / 2;
        printf(" (median %.2fx)", mid);
    }
    free(round_ratio);
    if (torch_best[0] > 0) printf(", pytorch fp32 %.2f img/s", torch_best[0]);
    if (torch_best[0] > 0 && want[1]) printf(", pytorch autocast-bf16 %.2f img/s", torch_best[1]);
    if (torch_best[0] > 0 && want[1] && torch_best[1] > 0)
        printf("; yolo amp / pytorch autocast %.2fx", ours_best[1] / torch_best[1]);
    if (torch_best[0] > 0 && want[0]) {
        printf("%s yolo fp32 / pytorch fp32 %.2fx (round by round", want[1] ? "," : ";", ours_best[0] / torch_best[0]);
        for (int i = 0; i < torch_rounds; i++) printf(" %.2f", fp32_ratio[i]);
        printf(")");
    }
    free(fp32_ratio);
    printf("; peak RSS %.0f MiB\n", peak_rss_mib());
    if (getenv("YOLO_PROFILE")) yolo_cpu_profile_report(stdout);
    b.task->hooks->loss_destroy(b.loss_state);
    test_synthetic_batch_free(&b.batch);
    yolo_model_graph_free(b.graphs[0]);
    yolo_model_graph_free(b.graphs[1]);
    yolo_optimizer_free(b.opt);
    yolo_ema_free(b.ema);
    yolo_model_free(model);
    yolo_config_free(cfg);
    yolo_backend_free(b.be);
    return 0;
}
