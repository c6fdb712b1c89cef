/* count.c — a minimal third-party task plugin: object counting.
 *
 * The task "count" learns how many objects an image holds, as one number
 * regressed from the whole image. It trains on any detection dataset (it
 * reads only the number of boxes per image), e.g. the built-in `shapes`:
 *
 *     yolo count train data=shapes epochs=3 imgsz=64
 *
 * Everything a task supplies is here, in one file:
 *   - a head module "Count" (yaml name), used by the embedded model yaml;
 *   - the embedded model yaml "yolov8-count.yaml" (scales n..x);
 *   - hooks (yolo/task.h): data needs (boxes, the core's label parser),
 *     the loss (squared error, with its gradient), validation metrics
 *     (mean absolute error, exact-count accuracy; pack/merge for DDP),
 *     and predict (the count as text and JSON);
 *   - the task table and the exported entry point (yolo/plugin.h).
 *
 * It includes only the installed SDK headers (yolo/...). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yolo/data.h>
#include <yolo/error.h>
#include <yolo/graph.h>
#include <yolo/model.h>
#include <yolo/plugin.h>
#include <yolo/task.h>

#define COUNT_VERSION "0.1.0"
#define COUNT_HIDDEN 64 /* channels of the head's 1x1 conv (scaled by width) */

/* ------------------------------------------------------------------ */
/* The head module: Conv 1x1 -> global average pool -> Linear(hidden, 1).
 * yaml args: [hidden=64]. Output t[0] = [N, 1], the predicted count, in
 * training and in eval alike. */

typedef struct count_head {
    int c1, hidden;
    yolo_conv_block conv; /* must live in the module state (fusing keeps a pointer) */
    yolo_linear_layer linear;
} count_head;

static yolo_status count_build(yolo_module_ctx *ctx) {
    int c1 = 0;
    for (int i = 0; i < yolo_module_n_inputs(ctx); i++) c1 += yolo_module_in_channels(ctx, i);
    int64_t hidden;
    yolo_status st = yolo_module_arg_int(ctx, 0, COUNT_HIDDEN, &hidden);
    if (st) return st;
    if (hidden < 1 || hidden > 65536)
        return yolo_module_error(ctx, YOLO_ERR_CONFIG, "hidden channels %lld out of range", (long long)hidden);
    count_head *h = yolo_module_state_alloc(ctx, sizeof *h);
    if (!h) return yolo_module_error(ctx, YOLO_ERR_NOMEM, "out of memory");
    h->c1 = c1;
    h->hidden = yolo_module_scale_width(ctx, (int)hidden);
    if ((st = yolo_conv_block_init(ctx, &h->conv, "conv", c1, h->hidden, 1, 1, YOLO_AUTOPAD, 1, 1, YOLO_ACT_DEFAULT)) ||
        (st = yolo_linear_layer_init(ctx, &h->linear, "linear", h->hidden, 1)))
        return st;
    yolo_module_add_leaves(ctx, 1); /* the pooling */
    yolo_module_set_args_text(ctx, "[%d, %d]", c1, h->hidden);
    yolo_module_set_out_channels(ctx, 1);
    return YOLO_OK;
}

static yolo_status count_forward(const yolo_forward_ctx *f, void *state, int n_in, yolo_tensor *const *in,
                                 yolo_module_outputs *out) {
    count_head *h = state;
    yolo_graph *g = f->graph;
    yolo_tensor *x = n_in == 1 ? in[0] : yolo_concat(g, n_in, in, 1);
    x = yolo_global_avgpool(g, yolo_conv_block_forward(f, &h->conv, x)); /* [N, hidden, 1, 1] */
    if (x) {
        int64_t flat[2] = {x->shape[0], h->hidden};
        x = yolo_linear_layer_forward(f, &h->linear, yolo_reshape(g, x, 2, flat)); /* [N, 1] */
    }
    out->n = 1;
    out->t[0] = x;
    return x ? YOLO_OK : (yolo_graph_status(g) ? yolo_graph_status(g) : YOLO_ERR_SHAPE);
}

static const yolo_module_type count_module = {
    .name = "Count",
    .summary = "object-count head: Conv 1x1, global average pool, Linear to one number",
    .build = count_build,
    .forward = count_forward,
    .finalize = NULL, /* nothing depends on the strides */
    .destroy = NULL,  /* everything was made with yolo_module_* helpers */
    .flags = 0,
};
static const yolo_module_type *const count_modules[] = {&count_module};

/* ------------------------------------------------------------------ */
/* The embedded model yaml: a small YOLOv8-style backbone and the head. */

static const char count_yaml[] =
    "# YOLOv8-count: a YOLOv8-cls-like backbone and the Count head\n"
    "nc: 1 # unused by the head (it always predicts one number)\n"
    "scales: # [depth, width, max_channels]; model=yolov8n-count.yaml uses scale n\n"
    "  n: [0.33, 0.25, 1024]\n"
    "  s: [0.33, 0.50, 1024]\n"
    "  m: [0.67, 0.75, 1024]\n"
    "  l: [1.00, 1.00, 1024]\n"
    "  x: [1.00, 1.25, 1024]\n"
    "backbone:\n"
    "  - [-1, 1, Conv, [64, 3, 2]] # 0-P1/2\n"
    "  - [-1, 1, Conv, [128, 3, 2]] # 1-P2/4\n"
    "  - [-1, 1, C2f, [128, True]]\n"
    "  - [-1, 1, Conv, [256, 3, 2]] # 3-P3/8\n"
    "  - [-1, 2, C2f, [256, True]]\n"
    "  - [-1, 1, Conv, [512, 3, 2]] # 5-P4/16\n"
    "  - [-1, 1, C2f, [512, True]]\n"
    "head:\n"
    "  - [-1, 1, Count, [256]]\n";
static const char *const count_yaml_names[] = {"yolov8-count.yaml"};
static const char *const count_yaml_texts[] = {count_yaml};

/* ------------------------------------------------------------------ */
/* Shared checks */

/* outputs[0] must be [batch->n, 1]. */
static yolo_status check_outputs(const char *hook, const yolo_batch *batch, int n_outputs,
                                 const yolo_host_tensor *outputs) {
    if (!batch || !outputs || n_outputs < 1 || batch->n < 1)
        return yolo_error(YOLO_ERR_ARG, "count %s: no batch or no outputs", hook);
    const yolo_host_tensor *t = &outputs[0];
    if (!t->data || t->ndim != 2 || t->shape[0] != batch->n || t->shape[1] != 1)
        return yolo_error(YOLO_ERR_SHAPE, "count %s: output 0 must be [%d, 1], got ndim %d", hook, batch->n, t->ndim);
    return YOLO_OK;
}

/* counts[i] = number of instances of image i of the batch. */
static yolo_status batch_counts(const char *hook, const yolo_batch *batch, int *counts) {
    memset(counts, 0, (size_t)batch->n * sizeof *counts);
    for (int k = 0; k < batch->instances.n; k++) {
        int i = batch->batch_idx[k];
        if (i < 0 || i >= batch->n)
            return yolo_error(YOLO_ERR_ARG, "count %s: instance %d belongs to image %d of %d", hook, k, i, batch->n);
        counts[i]++;
    }
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Loss: mean over the batch of (prediction - count)^2. */

static const char *const count_loss_names[] = {"count_loss"};

static yolo_status count_loss_create(const yolo_task_context *ctx, void **state) {
    (void)ctx;
    *state = NULL; /* stateless */
    return YOLO_OK;
}

static void count_loss_destroy(void *state) { (void)state; }

static yolo_status count_loss_compute(void *state, const yolo_batch *batch, int n_outputs,
                                      const yolo_host_tensor *outputs, yolo_host_tensor *grads, double *loss,
                                      float *items) {
    (void)state;
    yolo_status st = check_outputs("loss_compute", batch, n_outputs, outputs);
    if (st) return st;
    int *counts = malloc((size_t)batch->n * sizeof *counts);
    if (!counts) return yolo_error(YOLO_ERR_NOMEM, "count loss_compute: out of memory");
    st = batch_counts("loss_compute", batch, counts);
    double total = 0;
    for (int i = 0; !st && i < batch->n; i++) {
        double d = (double)outputs[0].data[i] - counts[i];
        total += d * d;
        if (grads) grads[0].data[i] = (float)(2.0 * d / batch->n); /* d/dy of the batch mean */
    }
    free(counts);
    if (st) return st;
    *loss = total / batch->n;
    if (items) items[0] = (float)*loss;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Metrics: mean absolute error and the fraction of images whose rounded
 * prediction is the exact count (the fitness). */

typedef struct count_metrics {
    int64_t images, exact;
    double abs_err;
    char txt[64], json[64]; /* predict's texts */
} count_metrics;

static const char *const count_metric_names[] = {"metrics/count_mae", "metrics/count_accuracy"};

static yolo_status count_metrics_create(const yolo_task_context *ctx, void **state) {
    (void)ctx;
    *state = calloc(1, sizeof(count_metrics));
    return *state ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "count metrics_create: out of memory");
}

static void count_metrics_destroy(void *state) { free(state); }

static yolo_status count_metrics_update(void *state, const yolo_batch *batch, int n_outputs,
                                        const yolo_host_tensor *outputs) {
    count_metrics *m = state;
    yolo_status st = check_outputs("metrics_update", batch, n_outputs, outputs);
    if (st) return st;
    int *counts = malloc((size_t)batch->n * sizeof *counts);
    if (!counts) return yolo_error(YOLO_ERR_NOMEM, "count metrics_update: out of memory");
    st = batch_counts("metrics_update", batch, counts);
    for (int i = 0; !st && i < batch->n; i++) {
        double y = outputs[0].data[i];
        m->images++;
        m->abs_err += fabs(y - counts[i]);
        m->exact += lround(y) == counts[i];
    }
    free(counts);
    return st;
}

/* DDP: each rank's three counters travel as bytes and add up. */
typedef struct count_packed {
    int64_t images, exact;
    double abs_err;
} count_packed;

static yolo_status count_metrics_pack(void *state, void **bytes, size_t *size) {
    count_metrics *m = state;
    count_packed *p = malloc(sizeof *p);
    if (!p) return yolo_error(YOLO_ERR_NOMEM, "count metrics_pack: out of memory");
    *p = (count_packed){m->images, m->exact, m->abs_err};
    *bytes = p;
    *size = sizeof *p;
    return YOLO_OK;
}

static yolo_status count_metrics_merge(void *state, const void *bytes, size_t size) {
    count_metrics *m = state;
    count_packed p;
    if (size != sizeof p) return yolo_error(YOLO_ERR_FORMAT, "count metrics_merge: %zu bytes, expected %zu", size, sizeof p);
    memcpy(&p, bytes, sizeof p);
    m->images += p.images, m->exact += p.exact, m->abs_err += p.abs_err;
    return YOLO_OK;
}

static yolo_status count_metrics_summarize(void *state, double *values, double *fitness, FILE *table) {
    count_metrics *m = state;
    double mae = m->images ? m->abs_err / (double)m->images : 0.0;
    double acc = m->images ? (double)m->exact / (double)m->images : 0.0;
    if (values) values[0] = mae, values[1] = acc;
    if (fitness) *fitness = acc;
    if (table) {
        fprintf(table, "%22s%11s%11s%11s\n", "images", "", "MAE", "accuracy");
        fprintf(table, "%22lld%11s%11.3g%11.3g\n", (long long)m->images, "", mae, acc);
    }
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* Predict: "count 2.93" and {"count": 2.93, "rounded": 3}. */

static yolo_status count_predict(void *state, const yolo_batch *batch, int image, int n_outputs,
                                 const yolo_host_tensor *outputs, yolo_prediction_text *out) {
    count_metrics *m = state;
    yolo_status st = check_outputs("predict", batch, n_outputs, outputs);
    if (st) return st;
    if (image < 0 || image >= batch->n)
        return yolo_error(YOLO_ERR_ARG, "count predict: image %d of a batch of %d", image, batch->n);
    double y = outputs[0].data[image];
    snprintf(m->txt, sizeof m->txt, "count %.2f\n", y);
    snprintf(m->json, sizeof m->json, "{\"count\": %.5g, \"rounded\": %ld}", y, lround(y));
    out->txt = m->txt;
    out->json = m->json;
    return YOLO_OK;
}

/* ------------------------------------------------------------------ */
/* The hooks and the task table. */

static const yolo_task_hooks count_hooks = {
    .data = {.needs = YOLO_NEED_BOXES, .parse_labels = NULL /* the core's YOLO txt parser */, .label_format = NULL},
    .n_loss_items = 1,
    .loss_names = count_loss_names,
    .loss_create = count_loss_create,
    .loss_destroy = count_loss_destroy,
    .loss_compute = count_loss_compute,
    .val_loss_outputs = 0, /* the eval output has the training layout */
    .n_metrics = 2,
    .metric_names = count_metric_names,
    .metrics_create = count_metrics_create,
    .metrics_destroy = count_metrics_destroy,
    .metrics_update = count_metrics_update,
    .metrics_pack = count_metrics_pack,
    .metrics_merge = count_metrics_merge,
    .metrics_summarize = count_metrics_summarize,
    .predict = count_predict,
};

static const yolo_task count_task = {
    .abi = {YOLO_PLUGIN_ABI_MAJOR, YOLO_PLUGIN_ABI_MINOR},
    .name = "count",
    .version = COUNT_VERSION,
    .description = "SDK template: count the objects of an image (whole-image regression)",
    .default_model = "yolov8n-count.yaml",
    .default_data = "shapes",
    .modules = count_modules,
    .n_modules = 1,
    .model_yaml_names = count_yaml_names,
    .model_yaml_texts = count_yaml_texts,
    .n_model_yamls = 1,
    .config_keys = NULL, /* no keys of its own */
    .n_config_keys = 0,
    .hooks = &count_hooks,
};

/* The one exported symbol (YOLO_PLUGIN_ENTRY). */
__attribute__((visibility("default"))) const yolo_task *yolo_task_register(void) { return &count_task; }
