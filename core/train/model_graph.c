/* Forward/backward graphs of a model for one batch shape (model_graph.h). */
#include "train/model_graph.h"

#include "backend/backend.h"
#include "graph/collective.h"

#include <stdlib.h>
#include <string.h>

static yolo_status alloc_host(yolo_host_tensor *h, const yolo_tensor *t) {
    h->ndim = t->ndim;
    memcpy(h->shape, t->shape, sizeof h->shape);
    h->data = calloc((size_t)yolo_tensor_numel(t), sizeof(float));
    return h->data ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "model graph: out of host memory for '%s'", t->name);
}

/* collective: set on a training graph under sync_bn (graph/collective.h);
 * inference: an eval graph whose caller reads no loss outputs. */
static yolo_status build_graph(yolo_model *model, int batch, int height, int width, bool training, bool inference,
                               const yolo_graph_collective *collective, yolo_model_graph **out) {
    *out = NULL;
    yolo_model_graph *mg = calloc(1, sizeof *mg);
    if (!mg) return yolo_error(YOLO_ERR_NOMEM, "model graph: out of memory");
    mg->batch = batch;
    mg->height = height;
    mg->width = width;
    mg->training = training;
    mg->graph = yolo_graph_new(yolo_model_backend(model));
    yolo_status st = mg->graph ? YOLO_OK : YOLO_ERR_NOMEM;
    if (training) yolo_graph_set_collective(mg->graph, collective);
    if (!st) {
        int64_t shape[4] = {batch, yolo_model_in_channels(model), height, width};
        mg->images = yolo_graph_input(mg->graph, "images", YOLO_U8, 4, shape);
        yolo_tensor *x = yolo_cast(mg->graph, mg->images, YOLO_F32, 1.0f / 255.0f);
        st = yolo_graph_status(mg->graph);
        if (!st)
            st = inference && !training ? yolo_model_forward_inference(model, mg->graph, x, &mg->out)
                                        : yolo_model_forward(model, mg->graph, x, training, &mg->out);
    }
    for (int i = 0; !st && i < mg->out.n; i++) {
        st = yolo_graph_mark_output(mg->graph, mg->out.t[i]);
        if (!st) st = alloc_host(&mg->host_out[i], mg->out.t[i]);
        if (!st && training) st = alloc_host(&mg->host_grad[i], mg->out.t[i]);
    }
    if (!st && training) st = yolo_graph_backward_from(mg->graph, mg->out.n, mg->out.t, mg->grad_in);
    yolo_graph_plan_info info = {0};
    if (!st) st = yolo_graph_plan(mg->graph, &info);
    if (st) {
        yolo_model_graph_free(mg);
        return yolo_error_context(st, "building the %s graph for batch %dx3x%dx%d", training ? "training" : "eval",
                                  batch, height, width);
    }
    mg->peak_bytes = info.peak_bytes;
    *out = mg;
    return YOLO_OK;
}

yolo_status yolo_model_graph_build(yolo_model *model, int batch, int height, int width, bool training,
                                   yolo_model_graph **out) {
    return build_graph(model, batch, height, width, training, false, NULL, out);
}

void yolo_model_graph_free(yolo_model_graph *mg) {
    if (!mg) return;
    yolo_graph_free(mg->graph);
    for (int i = 0; i < YOLO_MODULE_MAX_OUTPUTS; i++) {
        free(mg->host_out[i].data);
        free(mg->host_grad[i].data);
    }
    free(mg);
}

yolo_status yolo_model_graph_forward(yolo_model_graph *mg, const yolo_batch *batch) {
    if (batch->n != mg->batch || batch->height != mg->height || batch->width != mg->width)
        return yolo_error(YOLO_ERR_SHAPE, "model graph for %dx%dx%d given a batch of %dx%dx%d", mg->batch, mg->height,
                          mg->width, batch->n, batch->height, batch->width);
    yolo_status st = yolo_tensor_upload(mg->images, batch->images, yolo_tensor_bytes(mg->images));
    if (!st) st = mg->training ? yolo_graph_run_forward(mg->graph) : yolo_graph_run(mg->graph);
    float *host[YOLO_MODULE_MAX_OUTPUTS];
    for (int i = 0; i < mg->out.n; i++) host[i] = mg->host_out[i].data;
    return st ? st : yolo_tensors_download_f32(mg->out.n, mg->out.t, host);
}

yolo_status yolo_model_graph_backward(yolo_model_graph *mg) {
    const float *host[YOLO_MODULE_MAX_OUTPUTS];
    for (int i = 0; i < mg->out.n; i++) host[i] = mg->host_grad[i].data;
    yolo_status st = yolo_tensors_upload_f32(mg->out.n, mg->grad_in, host);
    return st ? st : yolo_graph_run_backward(mg->graph);
}

static void cache_evict_last(yolo_graph_cache *c) {
    yolo_model_graph *mg = c->entries[--c->n];
    c->bytes -= mg->peak_bytes;
    yolo_model_graph_free(mg);
}

yolo_status yolo_graph_cache_get(yolo_graph_cache *c, const yolo_batch *batch, yolo_model_graph **out) {
    for (int i = 0; i < c->n; i++) {
        yolo_model_graph *mg = c->entries[i];
        if (mg->batch == batch->n && mg->height == batch->height && mg->width == batch->width) {
            memmove(c->entries + 1, c->entries, (size_t)i * sizeof *c->entries); /* to the front */
            c->entries[0] = mg;
            *out = mg;
            return YOLO_OK;
        }
    }
    if (c->n == YOLO_GRAPH_CACHE) cache_evict_last(c);
    yolo_status st =
        build_graph(c->model, batch->n, batch->height, batch->width, c->training, c->inference, c->collective, out);
    if (st) return st;
    c->builds++;
    memmove(c->entries + 1, c->entries, (size_t)c->n * sizeof *c->entries);
    c->entries[0] = *out;
    c->n++;
    c->bytes += (*out)->peak_bytes;
    for (;;) { /* the arenas bound, against the largest kept */
        size_t largest = 0;
        for (int i = 0; i < c->n; i++)
            if (c->entries[i]->peak_bytes > largest) largest = c->entries[i]->peak_bytes;
        if (c->n <= 1 || c->bytes <= (size_t)YOLO_GRAPH_CACHE_ARENAS * largest) break;
        cache_evict_last(c);
    }
    if (c->bytes > c->peak_kept) c->peak_kept = c->bytes;
    return YOLO_OK;
}

void yolo_graph_cache_clear(yolo_graph_cache *c) {
    for (int i = 0; i < c->n; i++) yolo_model_graph_free(c->entries[i]);
    c->n = 0;
    c->bytes = 0;
}
