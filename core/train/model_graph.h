/* A model's forward (and, for training, backward) graph for one batch shape,
 * with host copies of its outputs: the bridge between a batch of uint8
 * images and a task's hooks. Built once per (batch size, image size) and
 * replayed for every batch of that shape. */
#ifndef YOLO_TRAIN_MODEL_GRAPH_H
#define YOLO_TRAIN_MODEL_GRAPH_H

#include "yolo/data.h"
#include "yolo/model.h"
#include "yolo/task.h"

typedef struct yolo_model_graph {
    int batch, height, width;
    bool training;
    yolo_graph *graph;
    yolo_tensor *images;          /* u8 [N,3,H,W] input */
    yolo_model_outputs out;
    yolo_tensor *grad_in[YOLO_MODULE_MAX_OUTPUTS];
    yolo_host_tensor host_out[YOLO_MODULE_MAX_OUTPUTS];
    yolo_host_tensor host_grad[YOLO_MODULE_MAX_OUTPUTS];
    size_t peak_bytes;
} yolo_model_graph;

/* training: BN in batch mode and a backward pass seeded by host gradients. */
yolo_status yolo_model_graph_build(yolo_model *model, int batch, int height, int width, bool training,
                                   yolo_model_graph **out);
void yolo_model_graph_free(yolo_model_graph *mg);

/* Uploads the batch's images, runs the forward pass, downloads the outputs. */
yolo_status yolo_model_graph_forward(yolo_model_graph *mg, const yolo_batch *batch);
/* Uploads host_grad and runs the backward pass (gradients accumulate into
 * the model's parameters). */
yolo_status yolo_model_graph_backward(yolo_model_graph *mg);

/* A small cache of graphs keyed by batch shape (n, h, w): the last batch
 * of an epoch is usually smaller, rect batches and multi_scale sizes give
 * a shape each. Each graph owns its planned activation arena, so the cache
 * is bounded twice, least recently used evicted first: at most
 * YOLO_GRAPH_CACHE graphs, and their arenas together at most
 * YOLO_GRAPH_CACHE_ARENAS times the largest one kept (the graph just built
 * is never evicted). A shape evicted and met again is planned again
 * (counted in `builds`). */
#define YOLO_GRAPH_CACHE 8
#define YOLO_GRAPH_CACHE_ARENAS 3
typedef struct yolo_graph_collective yolo_graph_collective;
typedef struct yolo_graph_cache {
    yolo_model *model;
    bool training;
    bool inference; /* eval graphs for callers that read no loss outputs (yolo_model_forward_inference) */
    const yolo_graph_collective *collective; /* sync_bn under DDP (graph/collective.h), or NULL */
    yolo_model_graph *entries[YOLO_GRAPH_CACHE]; /* most recently used first */
    int n;
    int64_t builds;     /* graphs planned so far */
    size_t bytes;       /* the kept graphs' planned arenas */
    size_t peak_kept;   /* the most `bytes` has been */
} yolo_graph_cache;

yolo_status yolo_graph_cache_get(yolo_graph_cache *c, const yolo_batch *batch, yolo_model_graph **out);
void yolo_graph_cache_clear(yolo_graph_cache *c);

#endif
