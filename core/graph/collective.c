/* The graph's cross-rank reduction (collective.h). */
#include "graph/collective.h"

#include "graph/graph_internal.h"

void yolo_graph_set_collective(yolo_graph *g, const yolo_graph_collective *c) {
    if (g) g->collective = c;
}

const yolo_graph_collective *yolo_graph_collective_of(const yolo_graph *g) { return g ? g->collective : NULL; }
