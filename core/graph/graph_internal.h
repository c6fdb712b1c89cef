/* Graph internals shared by graph.c (storage, planning, running),
 * builders.c (op constructors with shape checks) and autograd.c. */
#ifndef YOLO_GRAPH_INTERNAL_H
#define YOLO_GRAPH_INTERNAL_H

#include "backend/backend.h"
#include "graph/ops.h"

struct yolo_graph {
    yolo_backend *backend;
    yolo_tensor **nodes; /* inputs and op nodes in creation (= execution) order */
    int n_nodes, cap_nodes;
    yolo_status status;  /* first builder error */
    char error[1024];
    bool planned;
    int backward_start;  /* first node of the backward pass, 0 if none */
    bool poison;         /* debug: overwrite each buffer with NaN after its last use */
    yolo_buffer **arenas; /* the planned storage: one buffer, or several under the backend's largest buffer */
    int n_arenas;
    size_t arena_bytes;
    yolo_graph_plan_info plan;
    int narrowed;        /* values stored as bf16 or f16 (yolo_graph_narrow_activations) */
    int blocked;         /* values stored channel-blocked (yolo_graph_block_activations) */
    const struct yolo_graph_collective *collective; /* sync batch norm across ranks (collective.h), or NULL */
};

/* Records a builder error (first one wins) and returns NULL. */
yolo_tensor *yolo_graph_fail(yolo_graph *g, yolo_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new node of op `op` with the given shape and srcs (copied). NULL on error. */
yolo_tensor *yolo_graph_node(yolo_graph *g, int op, yolo_dtype dtype, int ndim, const int64_t *shape, int n_src,
                             yolo_tensor *const *src);

/* A view node sharing `of`'s storage at byte offset `offset` (no kernel). */
yolo_tensor *yolo_graph_view(yolo_graph *g, yolo_tensor *of, size_t offset, int ndim, const int64_t *shape);

/* True when t may be used in g (a node of g or a persistent tensor on g's backend). */
bool yolo_graph_owns_or_persistent(const yolo_graph *g, const yolo_tensor *t);

/* amp: stores the activations that only convolutions and copies read as
 * `dtype` (YOLO_BF16 on a CPU with bf16 hardware, YOLO_F16 on a Vulkan
 * device with fp16 GEMM inputs), and with conv_outputs the convolutions'
 * outputs that only batch norm reads (rule and numerics in narrow.c). Runs
 * in yolo_graph_plan after the BN+SiLU fusion; returns how many values it
 * narrowed. */
int yolo_graph_narrow_activations(yolo_graph *g, yolo_dtype dtype, bool conv_outputs);

/* Stores the activations that only convolutions, batch norm and
 * layout-blind copies touch channel-blocked, [N][C/block][H][W][block]
 * (rule in blocked.c), setting their node->block. Runs in yolo_graph_plan
 * after narrowing, with the backend's yolo_backend_channel_block (8 or 16);
 * returns how many values it blocked. */
int yolo_graph_block_activations(yolo_graph *g, int block);

/* Debug switch for the planner test: poison freed buffers with NaN. */
void yolo_graph_set_poison(yolo_graph *g, bool poison);

#endif
