/* The graph engine's record of a tensor (yolo_tensor.node): what the op
 * builders, the planner, autograd and the backends' kernels read. Plugins
 * see the public fields of yolo_tensor only; this struct is not in the SDK,
 * so it changes without touching the plugin ABI. Every tensor has one:
 * persistent tensors' is empty (op NONE, index -1). */
#ifndef YOLO_GRAPH_NODE_H
#define YOLO_GRAPH_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "yolo/tensor.h"

struct yolo_node {
    int op;                      /* yolo_op (graph/ops.h) */
    int n_src;
    yolo_tensor **src;           /* the op's inputs */
    int32_t iparams[12];         /* the op's constants (graph/ops.h) */
    float fparams[4];
    yolo_tensor *view_of;        /* shares storage with this tensor (reshape, row view, in-place update) */
    size_t view_offset;
    int index;                   /* position in the graph's node order; -1 for persistent tensors */
    int last_use;                /* planner: last node index that reads this tensor */
    bool is_output;              /* kept alive and readable after the run */
    uint8_t block;               /* 0: plain; else stored channel-blocked, [N][C/block][H][W][block]: oneDNN's
                                  * nChw16c (AVX-512) or nChw8c (AVX2), graph/blocked.c */
    yolo_tensor *node_grad;      /* autograd: gradient of this node within its graph */
};

/* A zeroed tensor with its node, in one allocation that free(tensor)
 * releases; NULL when out of memory. */
static inline yolo_tensor *yolo_tensor_alloc_with_node(void) {
    struct tensor_with_node {
        yolo_tensor tensor; /* first: the block's address is the tensor's */
        struct yolo_node node;
    } *block = calloc(1, sizeof *block);
    if (!block) return NULL;
    block->tensor.node = &block->node;
    return &block->tensor;
}

#endif
