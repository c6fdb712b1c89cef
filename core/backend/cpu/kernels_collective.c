/* CPU kernels of the ops that reduce over the ranks mid-graph (ops.h:
 * SYNC_BN_STATS, SYNC_BN_STATS_BWD), through the graph's collective. */
#include <stdlib.h>

#include "backend/cpu/cpu_backend.h"
#include "graph/collective.h"
#include "graph/ops.h"

static yolo_status no_collective(const yolo_tensor *out) {
    return yolo_error(YOLO_ERR_ARG, "%s: the graph has no collective (sync batch norm outside a DDP run)",
                      yolo_op_name(out->node->op));
}

/* local (mean_r, var_r) -> (mean, var) over the ranks; running stats updated. */
static yolo_status sync_bn_stats_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    (void)ctx;
    const yolo_graph_collective *col = yolo_graph_collective_of(out->graph);
    if (!col) return no_collective(out);
    const float *local = yolo_cpu_f32(out->node->src[0]);
    const int64_t C = out->shape[1];
    const int W = col->world;
    double *sums = malloc(sizeof(double) * 3 * (size_t)C);
    if (!sums) return yolo_error(YOLO_ERR_NOMEM, "SYNC_BN_STATS: out of memory");
    for (int64_t c = 0; c < C; c++) { /* equal counts per rank: plain averages combine */
        sums[c] = local[c];
        sums[C + c] = local[C + c];
        sums[2 * C + c] = (double)local[c] * local[c];
    }
    yolo_status st = col->allreduce_sum(col->user, sums, 3 * C, "allreduce(sync_bn statistics)");
    float *g = yolo_cpu_f32(out);
    for (int64_t c = 0; c < C && !st; c++) {
        /* within-rank variance plus the spread of the rank means (no cancellation of the large E[x^2]) */
        const double mean = sums[c] / W, var = sums[C + c] / W + (sums[2 * C + c] / W - mean * mean);
        g[c] = (float)mean;
        g[C + c] = (float)(var > 0 ? var : 0);
    }
    if (!st && out->node->iparams[1]) {
        float *rm = yolo_cpu_f32(out->node->src[1]), *rv = yolo_cpu_f32(out->node->src[2]);
        const double m = out->node->fparams[0], count = (double)out->node->iparams[0] * W;
        const double unbias = count > 1 ? count / (count - 1) : 1.0;
        for (int64_t c = 0; c < C; c++) {
            rm[c] = (float)((1 - m) * rm[c] + m * g[c]);
            rv[c] = (float)((1 - m) * rv[c] + m * g[C + c] * unbias);
        }
    }
    free(sums);
    return st;
}

/* dglobal summed over the ranks -> this rank's (dmean_r, dvar_r). */
static yolo_status sync_bn_stats_bwd_kernel(yolo_cpu_context *ctx, yolo_tensor *out) {
    (void)ctx;
    const yolo_graph_collective *col = yolo_graph_collective_of(out->graph);
    if (!col) return no_collective(out);
    const float *local = yolo_cpu_f32(out->node->src[0]), *global = yolo_cpu_f32(out->node->src[1]);
    const float *dglobal = yolo_cpu_f32(out->node->src[2]);
    const int64_t C = out->shape[1];
    const int W = col->world;
    double *G = malloc(sizeof(double) * 2 * (size_t)C);
    if (!G) return yolo_error(YOLO_ERR_NOMEM, "SYNC_BN_STATS_BWD: out of memory");
    for (int64_t i = 0; i < 2 * C; i++) G[i] = dglobal[i];
    yolo_status st = col->allreduce_sum(col->user, G, 2 * C, "allreduce(sync_bn gradients)");
    float *d = yolo_cpu_f32(out);
    for (int64_t c = 0; c < C && !st; c++) {
        d[c] = (float)((G[c] + 2.0 * G[C + c] * ((double)local[c] - global[c])) / W);
        d[C + c] = (float)(G[C + c] / W);
    }
    free(G);
    return st;
}

yolo_cpu_kernel yolo_cpu_collective_kernel(int op) {
    switch (op) {
    case YOLO_OP_SYNC_BN_STATS: return sync_bn_stats_kernel;
    case YOLO_OP_SYNC_BN_STATS_BWD: return sync_bn_stats_bwd_kernel;
    default: return NULL;
    }
}
