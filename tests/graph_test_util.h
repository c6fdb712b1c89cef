/* Checks on a planned graph's storage, shared by the planner tests. */
#ifndef YOLO_GRAPH_TEST_UTIL_H
#define YOLO_GRAPH_TEST_UTIL_H

#include "graph/graph_internal.h"
#include "test_util.h"

/* Two storage roots whose lifetimes overlap must not share bytes of one
 * buffer (a plan may span several: yolo_graph_plan under a backend's
 * largest buffer). */
static inline void test_check_no_live_overlap(const yolo_graph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const yolo_tensor *a = g->nodes[i];
        if (a->kind == YOLO_TENSOR_PERSISTENT || a->node->view_of) continue;
        for (int j = i + 1; j < g->n_nodes; j++) {
            const yolo_tensor *b = g->nodes[j];
            if (b->kind == YOLO_TENSOR_PERSISTENT || b->node->view_of || b->buffer != a->buffer) continue;
            /* b is created while a is still read, or b is an input: uploaded
             * before the run, it is live from the start wherever it sits */
            bool live_together = j <= a->node->last_use || b->kind == YOLO_TENSOR_INPUT;
            if (!live_together) continue;
            size_t a0 = a->offset, a1 = a->offset + yolo_tensor_bytes(a);
            size_t b0 = b->offset, b1 = b->offset + yolo_tensor_bytes(b);
            CHECK_MSG(a1 <= b0 || b1 <= a0, "nodes %s [%d..%d] and %s [%d..%d] overlap in memory", a->name, i,
                      a->node->last_use, b->name, j, b->node->last_use);
        }
    }
}

#endif
