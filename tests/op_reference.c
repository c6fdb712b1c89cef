/* Runs a suite of op reference cases (op_reference.h). */
#include "op_reference.h"

#include <stdio.h>

#include "test_util.h"

int op_reference_main(const op_reference_suite *suite) {
    yolo_backend *cpu = NULL;
    if (yolo_backend_create("cpu", 2, &cpu) != YOLO_OK) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    if (suite->backend) *suite->backend = cpu;
    for (int i = 0; i < suite->n_cases; i++) {
        int before = test_failures;
        suite->cases[i].run();
        printf("%s: %s\n", suite->cases[i].name, test_failures == before ? "ok" : "FAILED");
    }
    yolo_backend_free(cpu);
    return test_result(suite->name);
}
