/* The validation pass (validate.h). */
#include "train/validate.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/loader.h"
#include "train/run_plots.h"
#include "train/session.h"
#include "train/train_log.h"
#include "train/prediction_txt.h"
#include "train/val_json.h"

void yolo_validator_init(yolo_validator *v, const yolo_task_hooks *hooks, const yolo_task_context *tctx,
                         const yolo_dataset *dataset, yolo_model *model, int batch, int workers, int imgsz,
                         uint64_t seed) {
    memset(v, 0, sizeof *v);
    v->hooks = hooks;
    v->tctx = *tctx;
    v->tctx.model = model;
    v->tctx.rank_mean = NULL; /* shards differ in length: no collectives inside the loss */
    v->dataset = dataset;
    v->graphs.model = model;
    v->graphs.training = false;
    v->batch = batch;
    v->workers = workers;
    v->imgsz = imgsz;
    v->seed = seed;
    v->rect = true;
    v->losses = true;
}

void yolo_validator_release(yolo_validator *v) { yolo_graph_cache_clear(&v->graphs); }

/* DDP: the other ranks' metrics states into rank 0's (the task's pack/merge). */
static yolo_status merge_ranks(yolo_validator *v, void *metrics) {
    if (yolo_dist_world(v->dist) == 1) return YOLO_OK;
    const yolo_task_hooks *h = v->hooks;
    if (!h->metrics_pack || !h->metrics_merge)
        return yolo_error(YOLO_ERR_UNSUPPORTED, "validation under DDP: the task's plugin has no metrics_pack/merge hooks");
    void *bytes = NULL, **blobs = NULL;
    size_t size = 0, *sizes = NULL;
    yolo_status st = h->metrics_pack(metrics, &bytes, &size);
    st = yolo_dist_agree(v->dist, st, "metrics_pack");
    if (!st) st = yolo_dist_gather_blobs(v->dist, bytes, size, &blobs, &sizes, "gather(validation metrics)");
    for (int r = 1; !st && blobs && r < yolo_dist_world(v->dist); r++) st = h->metrics_merge(metrics, blobs[r], sizes[r]);
    free(bytes);
    yolo_dist_free_blobs(v->dist, blobs, sizes);
    return st;
}

yolo_status yolo_validator_run(yolo_validator *v, FILE *table, yolo_val_result *out) {
    memset(out, 0, sizeof *out);
    double t0 = yolo_seconds_now();
    const yolo_task_hooks *h = v->hooks;
    yolo_loader_options lo = {.batch = v->batch, .workers = v->workers, .world = 1, .seed = v->seed, .augment = false,
                              .rect = v->rect, /* Ultralytics validates in rect batches (padded +0.5 stride) */
                              .stride = yolo_model_grid_stride(v->tctx.model), /* rect shapes: a P6 model's 64 */
                              .deal_rank = yolo_dist_rank(v->dist), .deal_world = yolo_dist_world(v->dist)};
    yolo_augment_defaults(&lo.aug);
    lo.aug.imgsz = v->imgsz;
    yolo_loader *loader = NULL;
    void *metrics = NULL, *loss_state = NULL;
    yolo_status st = yolo_loader_create(v->dataset, &lo, &loader);
    if (!st) st = h->metrics_create(&v->tctx, &metrics);
    bool val_loss = v->losses && h->val_loss_outputs >= 0 && h->loss_create;
    if (v->graphs.inference != !v->losses) { /* graphs built for the other use */
        yolo_graph_cache_clear(&v->graphs);
        v->graphs.inference = !v->losses;
    }
    if (!st && val_loss) st = h->loss_create(&v->tctx, &loss_state);
    if (!st) st = yolo_loader_start_epoch(loader, 0, 0);
    yolo_val_json json = {0};
    if (!st && v->json_dir && yolo_dist_rank(v->dist) == 0) st = yolo_val_json_open(&json, v->task, v->json_dir);
    double loss_sum[YOLO_TASK_MAX_ITEMS] = {0};
    int64_t n_batches = 0;
    while (!st) {
        yolo_batch *batch = NULL;
        st = yolo_loader_next(loader, &batch);
        if (st || !batch) break;
        yolo_model_graph *mg = NULL;
        st = yolo_graph_cache_get(&v->graphs, batch, &mg);
        if (!st) st = yolo_model_graph_forward(mg, batch);
        if (!st) st = h->metrics_update(metrics, batch, mg->out.n, mg->host_out);
        double p0 = yolo_seconds_now(), c0 = yolo_thread_cpu_seconds();
        if (!st && v->plot_dir && yolo_dist_rank(v->dist) == 0 &&
            yolo_val_plot_batch(v->plot_dir, v->task, metrics, &v->tctx, v->dataset, batch, mg->out.n, mg->host_out,
                                n_batches) != YOLO_OK)
            fprintf(stderr, "WARNING: val_batch%lld plots: %s\n", (long long)n_batches, yolo_last_error());
        v->plot_seconds += yolo_seconds_now() - p0;
        v->plot_cpu_seconds += yolo_thread_cpu_seconds() - c0;
        if (!st && v->txt_dir)
            st = yolo_prediction_txt_batch(v->txt_dir, h, metrics, v->dataset, batch, mg->out.n, mg->host_out);
        if (!st && json.f) st = yolo_val_json_add(&json, metrics, v->dataset, batch, mg->out.n, mg->host_out);
        if (!st && val_loss && mg->out.n > h->val_loss_outputs) {
            double loss = 0;
            float items[YOLO_TASK_MAX_ITEMS] = {0};
            int from = h->val_loss_outputs;
            st = h->loss_compute(loss_state, batch, mg->out.n - from, mg->host_out + from, NULL, &loss, items);
            for (int i = 0; i < h->n_loss_items && i < YOLO_TASK_MAX_ITEMS; i++) loss_sum[i] += items[i];
        }
        out->images += batch->n;
        n_batches++;
        yolo_loader_release(loader, batch);
    }
    yolo_status json_st = yolo_val_json_close(&json);
    if (!st) st = json_st;
    if (!st && json.written) printf("Saving %s...\n", json.path);
    if (yolo_dist_world(v->dist) > 1) st = yolo_dist_agree(v->dist, st, "validation");
    if (!st) st = merge_ranks(v, metrics);
    bool here = yolo_dist_rank(v->dist) == 0;
    if (!st && here) st = h->metrics_summarize(metrics, out->metrics, &out->fitness, table);
    const yolo_task_hooks *pictures = yolo_picture_hooks(v->task);
    double p0 = yolo_seconds_now(), c0 = yolo_thread_cpu_seconds();
    if (!st && here && pictures && pictures->metrics_plot && (v->plot_dir || (v->print_confusion && table)) &&
        pictures->metrics_plot(metrics, v->plot_dir, v->print_confusion ? table : NULL) != YOLO_OK)
        fprintf(stderr, "WARNING: validation plots: %s\n", yolo_last_error());
    v->plot_seconds += yolo_seconds_now() - p0;
    v->plot_cpu_seconds += yolo_thread_cpu_seconds() - c0;
    /* rank 0's metrics to all; the loss sums and counts over all */
    double shared[32 + 1 + 2 + YOLO_TASK_MAX_ITEMS] = {0};
    double *sums = shared + 33, *counts = shared + 33 + YOLO_TASK_MAX_ITEMS;
    for (int i = 0; i < YOLO_TASK_MAX_ITEMS; i++) sums[i] = loss_sum[i];
    counts[0] = (double)n_batches, counts[1] = (double)out->images;
    if (yolo_dist_world(v->dist) > 1) {
        if (!here) memset(shared, 0, sizeof(double) * 33); /* the sum over ranks then is rank 0's */
        else memcpy(shared, out->metrics, sizeof(double) * 32), shared[32] = out->fitness;
        st = yolo_dist_agree(v->dist, st, "validation metrics");
        if (!st) st = yolo_dist_allreduce_f64(v->dist, shared, (int64_t)(sizeof shared / sizeof *shared), YOLO_DIST_SUM,
                                             "allreduce(validation results)");
        memcpy(out->metrics, shared, sizeof(double) * 32);
        out->fitness = shared[32];
        n_batches = (int64_t)counts[0], out->images = (int64_t)counts[1];
    }
    for (int i = 0; i < h->n_loss_items && i < YOLO_TASK_MAX_ITEMS && n_batches; i++)
        out->losses[i] = (float)(sums[i] / (double)n_batches);
    if (metrics) h->metrics_destroy(metrics);
    if (loss_state) h->loss_destroy(loss_state);
    yolo_loader_free(loader);
    out->seconds = yolo_seconds_now() - t0;
    return st ? yolo_error_context(st, "validation") : YOLO_OK;
}
