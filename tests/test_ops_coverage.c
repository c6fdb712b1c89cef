/* Every op of core/graph/ops.h has a reference check (results against
 * naive loops): the coverage test links the registered suites of
 * op_reference.h (the cases test_ops_reference, test_ops_reference_train
 * and test_conv_reference run) and fails when an op with a kernel is
 * checked by no case, or a case has no function. Sync batch norm needs
 * several ranks: test_dist (tests/mpi_dist.c, run under mpirun) checks it
 * against batch norm of the whole batch, so its program must be built.
 * Gradient checks are enforced by test_ops_gradcheck, Vulkan parity by
 * test_vulkan_ops. */
#include <stdlib.h>
#include <unistd.h>

#include "graph/ops.h"
#include "op_reference.h"
#include "test_util.h"

static const op_reference_suite *const suites[] = {&op_reference_elementwise, &op_reference_train, &op_reference_conv};
static const int multi_rank_ops[] = {YOLO_OP_SYNC_BN_STATS, YOLO_OP_SYNC_BN_STATS_BWD};

/* The case that checks op, or NULL. */
static const op_reference_case *case_checking(int op, const op_reference_suite **suite) {
    for (size_t s = 0; s < sizeof suites / sizeof *suites; s++)
        for (int c = 0; c < suites[s]->n_cases; c++)
            for (int k = 0; k < OP_REFERENCE_MAX_OPS && suites[s]->cases[c].ops[k] != YOLO_OP_NONE; k++)
                if (suites[s]->cases[c].ops[k] == op) {
                    *suite = suites[s];
                    return &suites[s]->cases[c];
                }
    return NULL;
}

int main(void) {
    int cases = 0;
    for (size_t s = 0; s < sizeof suites / sizeof *suites; s++) {
        CHECK_MSG(suites[s]->n_cases > 0, "suite %s has no case", suites[s]->name);
        for (int c = 0; c < suites[s]->n_cases; c++, cases++)
            CHECK_MSG(suites[s]->cases[c].run != NULL, "%s: case %s has no function", suites[s]->name,
                      suites[s]->cases[c].name);
    }
    int checked = 0;
    for (int op = 0; op < YOLO_OP_COUNT; op++) {
        if (op == YOLO_OP_NONE || op == YOLO_OP_VIEW) continue; /* no kernel */
        int multi_rank = 0;
        for (size_t i = 0; i < sizeof multi_rank_ops / sizeof *multi_rank_ops; i++) multi_rank |= multi_rank_ops[i] == op;
        const op_reference_suite *suite = NULL;
        const op_reference_case *c = case_checking(op, &suite);
        if (multi_rank) {
            CHECK_MSG(c == NULL, "op %s is both a multi-rank op and in case %s", yolo_op_name(op), c ? c->name : "");
            continue;
        }
        CHECK_MSG(c != NULL, "op %s: no reference case checks it (tests/op_reference.h)", yolo_op_name(op));
        checked += c != NULL;
    }
    const char *bin = getenv("YOLO_BINARY_DIR");
    if (bin) {
        char path[4096];
        snprintf(path, sizeof path, "%s/bin/test_dist", bin);
        CHECK_MSG(access(path, X_OK) == 0, "%s (the multi-rank check of sync batch norm) is not built", path);
    }
    printf("%d ops checked by %d reference cases in %zu suites; %zu multi-rank ops by test_dist\n", checked, cases,
           sizeof suites / sizeof *suites, sizeof multi_rank_ops / sizeof *multi_rank_ops);
    return test_result("test_ops_coverage");
}
