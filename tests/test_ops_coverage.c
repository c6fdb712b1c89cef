/* Every op of core/graph/ops.h has a forward/backward reference check
 * (results against naive loops) somewhere in the suite; this test fails
 * when an op is added to YOLO_OP_LIST without one. Each entry names the
 * test file holding the check and a token that file must contain (the
 * op's builder or its YOLO_OP_ name), which the test verifies by reading
 * the source. Gradient checks are enforced by test_ops_gradcheck, Vulkan
 * parity by test_vulkan_ops. */
#include <stdlib.h>
#include <string.h>

#include "graph/ops.h"
#include "test_util.h"

typedef struct coverage {
    int op;
    const char *file;
    const char *token;
} coverage;

#define R "tests/test_ops_reference.c"
#define T "tests/test_ops_reference_train.c"
#define C "tests/test_conv_reference.c"

static const coverage table[] = {
    {YOLO_OP_CONV2D, C, "YOLO_OP_CONV2D"},
    {YOLO_OP_CONV2D_BWD_DATA, C, "YOLO_OP_CONV2D_BWD_DATA"},
    {YOLO_OP_CONV2D_BWD_WEIGHT, C, "YOLO_OP_CONV2D_BWD_WEIGHT"},
    {YOLO_OP_CONV_TRANSPOSE2D, C, "YOLO_OP_CONV_TRANSPOSE2D"},
    {YOLO_OP_BN_STATS, T, "YOLO_OP_BN_STATS"},
    {YOLO_OP_BN_APPLY, T, "YOLO_OP_BN_APPLY"},
    {YOLO_OP_BN_APPLY_BWD_PARAMS, T, "YOLO_OP_BN_APPLY_BWD_PARAMS"},
    {YOLO_OP_BN_APPLY_BWD_DATA, T, "YOLO_OP_BN_APPLY_BWD_DATA"},
    {YOLO_OP_BN_STATS_BWD, T, "YOLO_OP_BN_STATS_BWD"},
    /* sync_bn on two ranks against batch norm of the whole batch (ctest runs it under mpirun) */
    {YOLO_OP_SYNC_BN_STATS, "tests/mpi_dist.c", "yolo_graph_set_collective"},
    {YOLO_OP_SYNC_BN_STATS_BWD, "tests/mpi_dist.c", "tx->grad"},
    {YOLO_OP_BN_BWD, T, "YOLO_OP_BN_BWD"},
    {YOLO_OP_BN_SILU, T, "YOLO_OP_BN_SILU"},
    {YOLO_OP_BN_SILU_BWD, T, "YOLO_OP_BN_SILU_BWD"},
    {YOLO_OP_SILU, R, "yolo_silu"},
    {YOLO_OP_SILU_BWD, R, "YOLO_OP_SILU_BWD"},
    {YOLO_OP_RELU, R, "yolo_relu"},
    {YOLO_OP_RELU_BWD, R, "YOLO_OP_RELU_BWD"},
    {YOLO_OP_SIGMOID, R, "yolo_sigmoid"},
    {YOLO_OP_SIGMOID_BWD, R, "YOLO_OP_SIGMOID_BWD"},
    {YOLO_OP_ADD, R, "yolo_add"},
    {YOLO_OP_SUB, R, "yolo_sub"},
    {YOLO_OP_MUL, R, "yolo_mul"},
    {YOLO_OP_SCALE, R, "yolo_scale"},
    {YOLO_OP_CAST, R, "yolo_cast"},
    {YOLO_OP_FILL, R, "YOLO_OP_FILL"},
    {YOLO_OP_CONCAT, R, "yolo_concat"},
    {YOLO_OP_SLICE, R, "yolo_slice"},
    {YOLO_OP_SLICE_BWD, R, "YOLO_OP_SLICE_BWD"},
    {YOLO_OP_BROADCAST_TO, R, "yolo_broadcast_to"},
    {YOLO_OP_SUM_TO, R, "yolo_sum_to"},
    {YOLO_OP_UPSAMPLE_NEAREST, R, "yolo_upsample_nearest"},
    {YOLO_OP_UPSAMPLE_NEAREST_BWD, R, "YOLO_OP_UPSAMPLE_NEAREST_BWD"},
    {YOLO_OP_MAXPOOL2D, R, "yolo_maxpool2d"},
    {YOLO_OP_MAXPOOL2D_BWD, R, "YOLO_OP_MAXPOOL2D_BWD"},
    {YOLO_OP_MATMUL, R, "yolo_matmul"},
    {YOLO_OP_SOFTMAX, R, "yolo_softmax"},
    {YOLO_OP_SOFTMAX_BWD, R, "YOLO_OP_SOFTMAX_BWD"},
    {YOLO_OP_LOG_SOFTMAX, R, "yolo_log_softmax"},
    {YOLO_OP_LOG_SOFTMAX_BWD, R, "YOLO_OP_LOG_SOFTMAX_BWD"},
    {YOLO_OP_SUM, R, "yolo_sum("},
    {YOLO_OP_SUM_SQUARES, R, "yolo_sum_squares"},
    {YOLO_OP_SGD_UPDATE, T, "yolo_sgd_update"},
    {YOLO_OP_ADAMW_UPDATE, T, "yolo_adamw_update"},
    {YOLO_OP_EMA_UPDATE, T, "yolo_ema_update"},
    {YOLO_OP_ACCUMULATE, T, "YOLO_OP_ACCUMULATE"},
    {YOLO_OP_ZERO, T, "yolo_zero"},
    {YOLO_OP_GRAD_CLIP_SCALE, T, "yolo_grad_clip_scale"},
};

static char *read_source(const char *root, const char *file) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", root, file);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    if (text && fread(text, 1, (size_t)n, f) == (size_t)n) text[n] = '\0';
    else {
        free(text);
        text = NULL;
    }
    fclose(f);
    return text;
}

int main(void) {
    const char *root = getenv("YOLO_SOURCE_DIR");
    if (!root) return test_skip("YOLO_SOURCE_DIR is not set (run through ctest)");
    for (int op = 0; op < YOLO_OP_COUNT; op++) {
        if (op == YOLO_OP_NONE || op == YOLO_OP_VIEW) continue; /* no kernel */
        const coverage *c = NULL;
        for (size_t i = 0; i < sizeof table / sizeof *table; i++)
            if (table[i].op == op) c = &table[i];
        CHECK_MSG(c != NULL, "op %s has no reference check listed here", yolo_op_name(op));
        if (!c) continue;
        char *text = read_source(root, c->file);
        CHECK_MSG(text && strstr(text, c->token), "%s does not mention %s (op %s)", c->file, c->token,
                  yolo_op_name(op));
        free(text);
    }
    return test_result("test_ops_coverage");
}
