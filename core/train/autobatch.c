/* AutoBatch (batch=-1, 0 or a fraction in (0, 1)): the batch chosen for
 * the device's memory, as Ultralytics' autobatch() does it, but measured
 * from the planner instead of from trial steps: the training graph is
 * planned at batch 1 and 2 (what the backend allocates for each), the
 * growth per image extrapolated to `fraction` of the memory not yet in use.
 * The activations of a training graph grow exactly linearly with the
 * batch, so two plans tell what Ultralytics' five timed steps fit. */
#include <stdio.h>

#include "backend/backend.h"
#include "train/model_graph.h"
#include "train/trainer.h"

#define AUTOBATCH_DEFAULT 16 /* Ultralytics' fallback (DEFAULT_CFG.batch) */
#define AUTOBATCH_MAX 1024   /* Ultralytics' safe range is [1, 1024] */

/* What the backend holds with the training graph of batch `b` built (the graph freed after). */
static yolo_status bytes_with_graph(yolo_trainer *t, int b, size_t *bytes) {
    const yolo_run_settings *run = &t->s.set.run;
    yolo_model_graph *mg = NULL;
    yolo_status st = yolo_model_graph_build(t->s.model, b, run->imgsz, run->imgsz, true, &mg);
    if (!st) *bytes = yolo_backend_allocated_bytes(t->s.backend);
    yolo_model_graph_free(mg);
    return st;
}

static yolo_status set_batch(yolo_trainer *t, int batch) {
    char text[32];
    snprintf(text, sizeof text, "%d", batch);
    t->s.set.run.batch = batch;
    /* the chosen batch is the run's: args.yaml and the checkpoints carry it, so a resume keeps it */
    return yolo_config_set(t->s.cfg, YOLO_CONFIG_LAYER_CLI, "batch", text, "AutoBatch");
}

yolo_status yolo_trainer_autobatch(yolo_trainer *t) {
    const yolo_run_settings *run = &t->s.set.run;
    const char *device = yolo_backend_name(t->s.backend);
    if (t->world > 1) {
        char given[64] = "";
        yolo_config_format(t->s.cfg, "batch", given, sizeof given);
        return yolo_error(YOLO_ERR_CONFIG, "batch=%s (%s): AutoBatch is not supported for multi-rank training (as "
                          "in Ultralytics); give the global batch, e.g. batch=16", given,
                          yolo_config_source(t->s.cfg, "batch"));
    }
    printf("AutoBatch: Computing optimal batch size for imgsz=%d at %.1f%% device memory utilization.\n", run->imgsz,
           run->autobatch * 100);
    size_t total = yolo_backend_device_memory_bytes(t->s.backend);
    if (!total) {
        printf("AutoBatch: intended for GPUs; %s trains in host memory: using default batch-size %d\n", device,
               AUTOBATCH_DEFAULT);
        return set_batch(t, AUTOBATCH_DEFAULT);
    }
    size_t base = yolo_backend_allocated_bytes(t->s.backend), at1 = 0, at2 = 0;
    yolo_status st = bytes_with_graph(t, 1, &at1);
    if (!st) st = bytes_with_graph(t, 2, &at2);
    if (st) return yolo_error_context(st, "AutoBatch: planning the training graph at batch 1 and 2");
    double per_image = (double)at2 - (double)at1, fixed = (double)at1 - per_image; /* `base` included */
    double budget = (double)total * run->autobatch;
    int64_t b = per_image > 0 ? (int64_t)((budget - fixed) / per_image) : 0;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    if (b < 1 || b > AUTOBATCH_MAX) {
        printf("AutoBatch: WARNING batch=%lld outside safe range [1, %d] (%.2fG in use before training, %.3fG per "
               "image), using default batch-size %d\n", (long long)b, AUTOBATCH_MAX, (double)base / gib,
               per_image / gib, AUTOBATCH_DEFAULT);
        return set_batch(t, AUTOBATCH_DEFAULT);
    }
    printf("AutoBatch: Using batch-size %lld for %s %.2fG/%.2fG (%.0f%%) (%.3fG per image, %.2fG for the model, EMA "
           "and fixed buffers)\n", (long long)b, device, (fixed + (double)b * per_image) / gib, (double)total / gib,
           run->autobatch * 100, per_image / gib, fixed / gib);
    return set_batch(t, (int)b);
}
