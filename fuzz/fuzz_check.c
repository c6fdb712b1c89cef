/* Shared invariants of the fuzz targets (fuzz_check.h). */
#include "fuzz_check.h"

#include <math.h>

void fuzz_check_instances(const yolo_instances *ins, int nc) {
    FUZZ_INVARIANT(ins->n >= 0 && ins->n <= ins->cap);
    for (int k = 0; k < ins->n; k++) {
        FUZZ_INVARIANT(ins->cls[k] >= 0 && ins->cls[k] < nc);
        for (int j = 0; j < 4; j++) FUZZ_INVARIANT(isfinite(ins->boxes[4 * k + j]));
        FUZZ_INVARIANT(ins->boxes[4 * k + 2] >= 0 && ins->boxes[4 * k + 3] >= 0);
    }
    if (ins->poly_start) {
        FUZZ_INVARIANT(ins->poly_start[0] == 0);
        for (int k = 0; k < ins->n; k++) FUZZ_INVARIANT(ins->poly_start[k + 1] >= ins->poly_start[k]);
        for (int i = 0; i < 2 * ins->poly_start[ins->n]; i++) FUZZ_INVARIANT(isfinite(ins->poly_xy[i]));
    }
    for (int i = 0; i < ins->n * ins->kpt_count * ins->kpt_dims; i++) FUZZ_INVARIANT(isfinite(ins->kpts[i]));
}
