/* The pictures of a run (run_plots.h). A plot that fails is a warning:
 * pictures never stop a training run. */
#include "train/run_plots.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void yolo_run_plots_open(yolo_run_plots *p, bool on, const char *run_dir, const yolo_task_context *tctx) {
    memset(p, 0, sizeof *p);
    p->on = on && run_dir;
    p->run_dir = run_dir;
    p->tctx = tctx;
    if (p->on && yolo_plot_worker_start(&p->worker) != YOLO_OK) /* then the jobs run inline */
        fprintf(stderr, "WARNING: %s; plots are drawn on the training thread\n", yolo_last_error());
}

typedef struct labels_job {
    const yolo_dataset *ds;
    const char *const *names;
    int nc;
    char path[1100];
} labels_job;

static yolo_status run_labels(void *arg) {
    labels_job *j = arg;
    return yolo_plot_labels(j->ds, j->names, j->nc, j->path);
}

void yolo_run_plots_labels(yolo_run_plots *p, const yolo_dataset *train) {
    if (!p->on || !train || (train->spec.needs & YOLO_NEED_IMAGE_CLASS)) return; /* classify has no instances to plot */
    labels_job *j = malloc(sizeof *j);
    if (!j) return;
    *j = (labels_job){train, p->tctx->names, p->tctx->nc, ""};
    snprintf(j->path, sizeof j->path, "%s/labels.jpg", p->run_dir);
    yolo_plot_worker_submit(p->worker, run_labels, j, free);
}

typedef struct batch_job {
    yolo_batch_snapshot *snap;
    const char *const *names;
    int nc;
    char path[1100];
} batch_job;

static yolo_status run_batch(void *arg) {
    batch_job *j = arg;
    return yolo_plot_batch(&j->snap->batch, j->names, j->nc, (const char *const *)j->snap->paths, NULL, NULL, j->path);
}

static void free_batch_job(void *arg) {
    batch_job *j = arg;
    yolo_batch_snapshot_free(j->snap);
    free(j);
}

void yolo_run_plots_train_batch(yolo_run_plots *p, const yolo_batch *batch, const yolo_dataset *ds, int64_t k) {
    if (!p->on || k < 0 || k >= YOLO_PLOTTED_BATCHES) return;
    double t0 = seconds_now();
    batch_job *j = calloc(1, sizeof *j);
    if (j && yolo_batch_snapshot_take(batch, ds, 16, &j->snap) == YOLO_OK) {
        j->names = p->tctx->names, j->nc = p->tctx->nc;
        snprintf(j->path, sizeof j->path, "%s/train_batch%lld.jpg", p->run_dir, (long long)k);
        yolo_plot_worker_submit(p->worker, run_batch, j, free_batch_job);
    } else {
        fprintf(stderr, "WARNING: train_batch%lld.jpg skipped: %s\n", (long long)k, yolo_last_error());
        free(j);
    }
    p->seconds += seconds_now() - t0;
}

static yolo_status run_results(void *arg) { return yolo_plot_results(arg); }

void yolo_run_plots_results(yolo_run_plots *p) {
    if (p->on) yolo_plot_worker_submit(p->worker, run_results, (void *)p->run_dir, NULL);
}

void yolo_run_plots_close(yolo_run_plots *p, FILE *log, double val_seconds, double val_cpu) {
    if (!p->on) return;
    double worker_seconds = 0, worker_cpu = 0, t0 = seconds_now();
    yolo_plot_worker_finish(p->worker, log == NULL, &worker_seconds, &worker_cpu);
    p->worker = NULL;
    p->seconds += seconds_now() - t0;
    if (log)
        fprintf(log,
                "Plots: %.2f s on the plot thread (%.2f s CPU), %.2f s on the training thread (batch snapshots, "
                "waiting for results.png), %.2f s drawing the validation's pictures (%.2f s CPU)\n",
                worker_seconds, worker_cpu, p->seconds, val_seconds, val_cpu);
    p->on = false;
}

/* val_batch*_pred.jpg: the task draws each tile's predictions. */
typedef struct pred_ctx {
    const yolo_task_hooks *hooks;
    void *metrics;
    int n_outputs;
    const yolo_host_tensor *outputs;
} pred_ctx;

static yolo_status draw_tile(void *arg, const yolo_batch *batch, int image, yolo_canvas *canvas, double lw) {
    pred_ctx *c = arg;
    /* Ultralytics' plot_images shows predictions above conf 0.25 */
    yolo_draw_options opt = {.conf = 0.25f, .labels = true, .show_conf = true, .boxes = true, .line_width = lw,
                             .compact = true};
    yolo_drawn_result drawn;
    return c->hooks->draw_predictions(c->metrics, batch, image, c->n_outputs, c->outputs, &opt, canvas, &drawn);
}

yolo_status yolo_val_plot_batch(const char *dir, const yolo_task *task, void *metrics, const yolo_task_context *tctx,
                                const yolo_dataset *ds, const yolo_batch *batch, int n_outputs,
                                const yolo_host_tensor *outputs, int64_t k) {
    if (!dir || k < 0 || k >= YOLO_PLOTTED_BATCHES) return YOLO_OK;
    yolo_batch_snapshot *snap = NULL;
    yolo_status st = yolo_batch_snapshot_take(batch, ds, 16, &snap); /* for the file names */
    if (st) return st;
    char path[1200];
    snprintf(path, sizeof path, "%s/val_batch%lld_labels.jpg", dir, (long long)k);
    st = yolo_plot_batch(batch, tctx->names, tctx->nc, (const char *const *)snap->paths, NULL, NULL, path);
    const yolo_task_hooks *h = yolo_picture_hooks(task);
    if (!st && h && h->draw_predictions) {
        pred_ctx c = {h, metrics, n_outputs, outputs};
        snprintf(path, sizeof path, "%s/val_batch%lld_pred.jpg", dir, (long long)k);
        st = yolo_plot_batch(batch, tctx->names, tctx->nc, (const char *const *)snap->paths, draw_tile, &c, path);
    }
    yolo_batch_snapshot_free(snap);
    return st;
}
