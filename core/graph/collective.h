/* collective.h — a reduction over the ranks of a DDP run that a graph may
 * run between two ops: synchronised batch norm (sync_bn=True) sums its
 * per-rank statistics, and their gradients, over the ranks.
 *
 * Set on a training graph before its batch norms are built; training batch
 * norm then inserts SYNC_BN_STATS (ops.h) after BN_STATS. Backends that
 * replay recorded command buffers (Vulkan) cannot call out mid-graph and
 * report the op as having no kernel. */
#ifndef YOLO_GRAPH_COLLECTIVE_H
#define YOLO_GRAPH_COLLECTIVE_H

#include <stdint.h>

#include "yolo/graph.h"

typedef struct yolo_graph_collective {
    int world; /* ranks; every rank contributes the same number of values per channel */
    /* Sums data[n] over the ranks in place; `what` names the call in errors. */
    yolo_status (*allreduce_sum)(void *user, double *data, int64_t n, const char *what);
    void *user;
} yolo_graph_collective;

/* c (borrowed, may be NULL) must outlive the graph's runs. */
void yolo_graph_set_collective(yolo_graph *g, const yolo_graph_collective *c);
const yolo_graph_collective *yolo_graph_collective_of(const yolo_graph *g);

#endif
