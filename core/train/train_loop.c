/* The training loop (trainer.h): epochs of batches, each forward, the
 * task's loss, backward and (every `accumulate` batches) the optimizer and
 * EMA steps under Ultralytics' warmup and schedule; after each epoch
 * validation, results, checkpoints, patience and the stop request. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/callbacks.h"
#include "train/amp_step.h"
#include "train/schedule.h"
#include "train/stop.h"
#include "train/trainer.h"

static double memory_gb(const yolo_trainer *t) { return (double)yolo_backend_peak_bytes(t->s.backend) / 1e9; }

yolo_status yolo_trainer_settle_step(yolo_trainer *t) { return yolo_amp_settle(t->opt, t->ema, &t->ema_pending); }

/* Counts a batch's shape for the summary. */
static void count_shape(yolo_trainer *t, const yolo_batch *b) {
    for (int i = 0; i < t->n_shapes; i++)
        if (t->shapes[i].n == b->n && t->shapes[i].h == b->height && t->shapes[i].w == b->width) {
            t->shapes[i].batches++;
            return;
        }
    if (t->n_shapes == (int)(sizeof t->shapes / sizeof *t->shapes)) {
        t->shapes_more = true;
        return;
    }
    t->shapes[t->n_shapes++] = (yolo_shape_count){b->n, b->height, b->width, 1};
}

/* The batch shapes met and the graphs planned for them (rect, multi_scale). */
static void print_shapes(const yolo_trainer *t) {
    if (t->n_shapes <= 2 && !t->s.set.loader.rect && !(t->s.set.loader.multi_scale > 0)) return;
    printf("Batch shapes (images x 3 x height x width: batches):");
    for (int i = 0; i < t->n_shapes; i++)
        printf("%s %dx3x%dx%d: %lld", i ? "," : "", t->shapes[i].n, t->shapes[i].h, t->shapes[i].w,
               (long long)t->shapes[i].batches);
    printf("%s\nTraining graphs planned: %lld for %d shapes (at most %d kept, least recently used evicted; their "
           "activation arenas %.1f MB at most)\n",
           t->shapes_more ? ", ..." : "", (long long)t->graphs.builds, t->n_shapes, YOLO_GRAPH_CACHE,
           (double)t->graphs.peak_kept / 1e6);
}

/* One epoch from batch `first`; mean loss items into items. */
static yolo_status train_epoch(yolo_trainer *t, int epoch, int64_t first, float *items) {
    const yolo_task_hooks *h = t->s.hooks;
    const yolo_optim_settings *o = &t->optim;
    int close_mosaic = t->s.set.loader.augment.close_mosaic;
    int64_t nb = yolo_loader_num_batches(t->loader);
    int64_t nw = o->warmup_epochs > 0 ? (int64_t)fmax(round(o->warmup_epochs * nb), 100.0) : -1;
    double lf = yolo_lr_factor(epoch, o->epochs, o->lrf, o->cos_lr);
    double nbs_over_batch = (double)o->nbs / t->s.set.run.batch;
    int accumulate = (int)fmax(round(nbs_over_batch), 1.0);
    for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++) t->opt->lr[gi] = (float)(t->opt->initial_lr * lf);
    yolo_status st = yolo_loader_start_epoch(t->loader, epoch, first);
    if (st) return st;
    if (first == 0) memset(t->loss_sums, 0, sizeof t->loss_sums);
    if (epoch == o->epochs - close_mosaic && close_mosaic > 0) printf("Closing dataloader mosaic\n");
    yolo_progress_header(stdout, h->n_loss_items, h->loss_names);
    yolo_progress bar;
    yolo_progress_begin(&bar, stdout, epoch, o->epochs, nb, h->n_loss_items, h->loss_names);
    double *sums = t->loss_sums;
    for (int64_t k = 0; k < h->n_loss_items; k++) items[k] = first > 0 ? (float)(sums[k] / (double)first) : 0.0f;
    for (int64_t i = first;; i++) {
        if (i < nb && i > first && t->stop_agreed) {
            yolo_progress_end(&bar);
            return yolo_trainer_stop_mid_epoch(t, epoch, i);
        }
        yolo_batch *batch = NULL;
        st = yolo_loader_next(t->loader, &batch);
        if (st || !batch) break;
        int64_t ni = i + nb * epoch;
        if (ni <= nw) { /* warmup: lr, momentum and accumulation ramp up */
            accumulate = (int)fmax(round(yolo_interp((double)ni, 0, (double)nw, 1.0, nbs_over_batch)), 1.0);
            for (int gi = 0; gi < YOLO_PARAM_GROUPS; gi++)
                t->opt->lr[gi] = (float)yolo_interp((double)ni, 0, (double)nw, gi == 0 ? o->warmup_bias_lr : 0.0,
                                                    t->opt->initial_lr * lf);
            if (t->opt->kind == YOLO_OPTIMIZER_SGD)
                t->opt->momentum = (float)yolo_interp((double)ni, 0, (double)nw, o->warmup_momentum, o->momentum);
        }
        yolo_model_graph *mg = NULL;
        st = yolo_graph_cache_get(&t->graphs, batch, &mg);
        if (!st) st = yolo_model_graph_forward(mg, batch);
        /* loss scaling: the last step's inf check sets the scale of this
         * step's loss gradients; read after the forward's download, when the
         * device is done with that step (its EMA update is queued already) */
        if (!st && t->opt->scaler.enabled) st = yolo_trainer_settle_step(t);
        double loss = 0;
        float step_items[YOLO_TASK_MAX_ITEMS] = {0};
        if (!st) {
            for (int k = 0; k < mg->out.n; k++)
                memset(mg->host_grad[k].data, 0, (size_t)yolo_tensor_numel(mg->out.t[k]) * sizeof(float));
            st = h->loss_compute(t->loss_state, batch, mg->out.n, mg->host_out, mg->host_grad, &loss, step_items);
        }
        if (!st) yolo_amp_scale_loss_grads(t->opt, mg, ni);
        const bool optimizer_step = ni - t->last_opt_step >= accumulate;
        if (!st && optimizer_step) st = yolo_amp_prepare(t->opt, t->ema, 10.0f, &t->ema_pending);
        if (!st) st = yolo_model_graph_backward(mg);
        if (!st) st = yolo_trainer_reduce_step(t, &loss, step_items);
        if (!st && !isfinite(loss))
            st = yolo_error(YOLO_ERR_NUMERIC, "the loss is %g at epoch %d, batch %lld (step %lld): training stopped",
                            loss, epoch + 1, (long long)i + 1, (long long)ni);
        if (!st && optimizer_step) {
            st = yolo_ddp_allreduce_grads(t->dist, t->opt, &t->buckets);
            t->allreduce_seconds += t->buckets.seconds;
            t->allreduce_copy_seconds += t->buckets.copy_seconds;
            t->allreduce_steps++;
            if (!st) st = yolo_amp_step(t->opt, t->ema, 10.0f, &t->ema_pending);
            t->last_opt_step = ni;
        }
        count_shape(t, batch);
        int instances = batch->instances.n > 0 ? batch->instances.n : batch->n;
        int size = batch->width;
        yolo_run_plots_train_batch(&t->plots, batch, t->train_set, ni);
        yolo_loader_release(t->loader, batch);
        if (st) break;
        if (t->step_log) {
            fprintf(t->step_log, "%d %lld", epoch + 1, (long long)i + 1);
            for (int k = 0; k < h->n_loss_items; k++) fprintf(t->step_log, " %.9g", step_items[k]);
            fputc('\n', t->step_log);
        }
        float means[YOLO_TASK_MAX_ITEMS];
        for (int k = 0; k < h->n_loss_items; k++) {
            sums[k] += step_items[k];
            means[k] = (float)(sums[k] / (double)(i + 1));
        }
        memcpy(items, means, sizeof(float) * (size_t)h->n_loss_items);
        yolo_progress_update(&bar, i + 1, means, instances, size, memory_gb(t));
    }
    yolo_progress_end(&bar);
    if (!st) st = yolo_trainer_settle_step(t); /* the epoch's last step, before a checkpoint counts it */
    return st;
}

/* The seconds spent training since this process started (t0); with the
 * test hooks, YOLO_TEST_EPOCH_SECONDS=S makes it S per epoch trained, a
 * clock a test can rely on. */
static double training_seconds(double t0, double epochs_trained) {
#ifdef YOLO_TEST_HOOKS
    const char *fake = getenv("YOLO_TEST_EPOCH_SECONDS");
    if (fake && *fake) return atof(fake) * epochs_trained;
#else
    (void)epochs_trained;
#endif
    return yolo_seconds_now() - t0;
}

/* time= (hours) overrides epochs, as Ultralytics' trainer: after each epoch
 * epochs = ceil(time * 3600 / mean epoch time), which rescales the LR
 * schedule too (yolo_lr_factor reads the new count) and close_mosaic; once
 * the time is spent this epoch is the last (Ultralytics may begin one more
 * and break it at its first optimizer step). Rank 0's clock decides.
 * The count is written back to the config's epochs, so last.ckpt carries
 * it and a resumed run continues the schedule it was on (Ultralytics
 * overwrites args.epochs the same way). As in Ultralytics the clock
 * restarts on resume: the mean is taken over the epochs trained since,
 * a resumed partial epoch counted as its fraction. */
static yolo_status fit_epochs_to_time(yolo_trainer *t, int epoch, double t0) {
    int64_t nb = yolo_loader_num_batches(t->loader);
    double trained = (double)(epoch - t->start_epoch + 1) - (nb > 0 ? (double)t->first_batch / (double)nb : 0.0);
    double elapsed = training_seconds(t0, trained);
    yolo_status st = yolo_dist_broadcast(t->dist, &elapsed, sizeof elapsed, "the elapsed training time");
    if (st) return st;
    double budget = t->optim.time * 3600.0, mean = trained > 0 ? elapsed / trained : elapsed;
    double want = mean > 0 ? ceil(budget / mean) : (double)INT_MAX;
    int epochs = elapsed >= budget ? epoch + 1 : (want >= (double)INT_MAX ? INT_MAX : (int)want);
    if (epochs < epoch + 1) epochs = epoch + 1;
    if (epochs != t->optim.epochs) {
        printf("time=%g hours: %.2f s per epoch, %.0f s spent: training for %d epochs\n", t->optim.time, mean, elapsed,
               epochs);
        char text[32];
        snprintf(text, sizeof text, "%d", epochs);
        st = yolo_config_set(t->s.cfg, YOLO_CONFIG_LAYER_CLI, "epochs", text, "time= (epochs recomputed)");
    }
    t->optim.epochs = epochs;
    yolo_loader_set_epochs(t->loader, epochs);
    return st;
}

static void print_metrics_line(const yolo_task_hooks *h, const yolo_val_result *r) {
    printf("val: %lld images in %.1fs:", (long long)r->images, r->seconds);
    for (int i = 0; i < h->n_metrics; i++) printf(" %s=%.4f", h->metric_names[i], r->metrics[i]);
    printf(" fitness=%.4f\n", r->fitness);
}

static yolo_status train(yolo_trainer *t) {
    const yolo_task_hooks *h = t->s.hooks;
    const yolo_optim_settings *o = &t->optim;
    const yolo_run_settings *run = &t->s.set.run;
    printf("Image sizes %d train, %d val\nUsing %d dataloader workers on %s\nLogging results to %s\n"
           "%s training for %d epochs...\n",
           run->imgsz, run->imgsz, run->workers, yolo_backend_name(t->s.backend), t->s.run_dir,
           t->resuming ? "Resuming" : "Starting", o->epochs);
    fflush(stdout);
    double t0 = yolo_seconds_now();
    yolo_status st = YOLO_OK;
    int epoch;
    for (epoch = t->start_epoch; epoch < o->epochs && !st; epoch++) {
        float items[YOLO_TASK_MAX_ITEMS] = {0};
        st = train_epoch(t, epoch, epoch == t->start_epoch ? t->first_batch : 0, items);
        if (!st && o->time > 0) st = fit_epochs_to_time(t, epoch, t0);
        if (st) break;
        bool final = epoch + 1 >= o->epochs;
        const yolo_task_hooks *hk = t->s.hooks;
        if (t->rank == 0) yolo_callbacks_fire(t->callbacks, "on_train_epoch_end", epoch, hk, items, NULL, NULL, 0);
        yolo_val_result r = {0};
        bool validated = t->s.set.val.val || final;
        if (validated) {
            st = yolo_validator_run(&t->validator, NULL, &r);
            if (st) break;
            print_metrics_line(h, &r);
        }
        if (t->rank == 0) st = yolo_results_csv_append(&t->csv, epoch, yolo_seconds_now() - t0, items, r.metrics, r.losses,
                                                        t->opt->lr);
        bool is_best = r.fitness >= t->best_fitness;
        if (is_best) {
            t->best_fitness = r.fitness;
            t->best_epoch = epoch;
        }
        bool stop_early = o->patience > 0 && epoch - t->best_epoch >= o->patience;
        if (!st) st = yolo_trainer_record_row(t, epoch, items, &r);
        if (!st) st = yolo_trainer_save_epoch(t, epoch, is_best, final || stop_early);
        if (!st && t->rank == 0) /* after last.ckpt: a cancel from the callback leaves this epoch saved */
            yolo_callbacks_fire(t->callbacks, "on_fit_epoch_end", epoch, hk, items, validated ? r.metrics : NULL,
                                validated ? r.losses : NULL, r.fitness);
        st = yolo_dist_agree(t->dist, st, "saving checkpoints");
        if (!st) st = yolo_trainer_agree_stop(t);
        if (st) break;
        if (t->stop_agreed) {
            bool save = t->s.set.checkpoint.save;
            return yolo_error(YOLO_ERR_INTERRUPTED, "training stopped by %s after epoch %d%s%s%s",
                              yolo_stop_reason(), epoch + 1,
                              save ? "; continue with 'yolo train resume model=" : " (save=false: no checkpoint)",
                              save ? t->s.run_dir : "", save ? "/weights/last.ckpt'" : "");
        }
        if (stop_early) {
            printf("Stopping training early as no improvement observed in last %d epochs. Best results observed at "
                   "epoch %d.\n",
                   o->patience, t->best_epoch + 1);
            epoch++;
            break;
        }
    }
    if (st) return st;
    double took = yolo_seconds_now() - t0;
    printf("\n%d epochs completed in %.3f hours.\n", epoch - t->start_epoch, took / 3600.0);
    const yolo_grad_scaler *scaler = &t->opt->scaler;
    if (scaler->enabled)
        printf("AMP: loss scale %g, %lld optimizer steps skipped for inf/NaN gradients\n", (double)scaler->scale,
               (long long)scaler->skipped);
    print_shapes(t);
    if (t->world > 1 && t->allreduce_steps > 0)
        printf("DDP: gradient all-reduce %.1f ms per optimizer step (%.1f ms of it copying to and from the device; "
               "the rest is the reduction and waiting for the slowest rank), %lld steps, %.1f%% of the training "
               "time\n",
               1e3 * t->allreduce_seconds / (double)t->allreduce_steps,
               1e3 * t->allreduce_copy_seconds / (double)t->allreduce_steps, (long long)t->allreduce_steps,
               100.0 * t->allreduce_seconds / took);
    /* The final table: the last EMA weights, validated once more with the per-class table. */
    yolo_val_result final = {0};
    printf("Validating (final EMA weights)...\n");
    if (t->plots.on) t->validator.plot_dir = t->s.run_dir;
    st = yolo_validator_run(&t->validator, stdout, &final);
    if (st) return st;
    if (t->rank == 0) yolo_callbacks_fire(t->callbacks, "on_train_end", epoch - 1, t->s.hooks, NULL, final.metrics, NULL,
                                          final.fitness);
    yolo_run_plots_results(&t->plots);
    yolo_run_plots_close(&t->plots, stdout, t->validator.plot_seconds, t->validator.plot_cpu_seconds);
    printf("Best fitness %.4f at epoch %d. Results saved to %s\n", t->best_fitness, t->best_epoch + 1, t->s.run_dir);
    return YOLO_OK;
}

yolo_status yolo_trainer_run(yolo_trainer *t) {
    yolo_stop_install();
    yolo_status st = train(t);
    yolo_stop_uninstall();
    return st;
}
