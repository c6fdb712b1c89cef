#include "graph/ops.h"

static const char *const op_names[] = {
#define YOLO_OP_NAME(name, diff) #name,
    YOLO_OP_LIST(YOLO_OP_NAME)
#undef YOLO_OP_NAME
};

static const bool op_differentiable[] = {
#define YOLO_OP_DIFF(name, diff) diff,
    YOLO_OP_LIST(YOLO_OP_DIFF)
#undef YOLO_OP_DIFF
};

const char *yolo_op_name(int op) {
    if (op < 0 || op >= YOLO_OP_COUNT) return "invalid";
    return op_names[op];
}

bool yolo_op_differentiable(int op) {
    if (op < 0 || op >= YOLO_OP_COUNT) return false;
    return op_differentiable[op];
}
