/* MATMUL in bf16 through oneDNN (amp on a CPU with bf16 hardware). */
#ifndef YOLO_CPU_MATMUL_ONEDNN_H
#define YOLO_CPU_MATMUL_ONEDNN_H

#include "backend/cpu/cpu_backend.h"

/* c[b] = op(a[b]) x op(b[b]) for b < batches: op(a) [m,k], op(b) [k,n],
 * op = transpose when ta / tb; a[b] is stored [m,k] (ta: [k,m]) at
 * a + b * a_size, likewise b[b]; c is dense [batches, m, n]. */
typedef struct yolo_cpu_matmul {
    const float *a, *b;
    float *c;
    bool ta, tb;
    int64_t batches, m, n, k, a_size, b_size;
} yolo_cpu_matmul;

/* The product on bf16 copies of a and b with fp32 accumulation and an f32
 * c, as PyTorch's CPU autocast runs matmul and nn.Linear. The work is split
 * over ctx's pool (batches, or row blocks of one product) as a pure
 * function of the shape and the thread count: results are bit-identical
 * run to run. */
yolo_status yolo_matmul_onednn_bf16(yolo_cpu_context *ctx, const yolo_cpu_matmul *mm);

#endif
