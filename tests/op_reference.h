/* The reference checks of the ops: each case computes some ops on the CPU
 * backend and compares them with naive loops in double (CHECK counts the
 * failures). The cases are registered in suites, which the ctest programs
 * test_ops_reference, test_ops_reference_train and test_conv_reference run
 * and test_ops_coverage enumerates: an op of graph/ops.h that no registered
 * case checks fails the coverage test. */
#ifndef YOLO_TEST_OP_REFERENCE_H
#define YOLO_TEST_OP_REFERENCE_H

#include "yolo/tensor.h"

#define OP_REFERENCE_MAX_OPS 12

typedef struct op_reference_case {
    const char *name;
    void (*run)(void);
    int ops[OP_REFERENCE_MAX_OPS]; /* the ops it checks; the list ends at the first YOLO_OP_NONE */
} op_reference_case;

typedef struct op_reference_suite {
    const char *name; /* the ctest program that runs it */
    const op_reference_case *cases;
    int n_cases;
    yolo_backend **backend; /* where the runner puts the CPU backend the cases use; NULL: they open their own */
} op_reference_suite;

extern const op_reference_suite op_reference_elementwise; /* ops_reference_cases.c */
extern const op_reference_suite op_reference_train;       /* ops_reference_train_cases.c */
extern const op_reference_suite op_reference_conv;        /* conv_reference_cases.c */

/* Runs every case of the suite on a CPU backend; the exit code for main. */
int op_reference_main(const op_reference_suite *suite);

#endif
