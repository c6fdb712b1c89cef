/* The process's one oneDNN CPU engine and the OpenMP thread count oneDNN
 * runs with, shared by the convolutions (conv_onednn.c) and the bf16
 * matmuls (matmul_onednn.c). */
#ifndef YOLO_CPU_ONEDNN_ENGINE_H
#define YOLO_CPU_ONEDNN_ENGINE_H

#include <dnnl.h>

#include "yolo/error.h"

/* The engine, created on first use and kept for the process (primitives
 * and memory objects of either cache may outlive the other's release). */
yolo_status yolo_onednn_engine(dnnl_engine_t *out);

/* omp_set_num_threads for the calling thread: oneDNN sizes a primitive's
 * work split when it is built and opens no OpenMP region at 1. */
void yolo_onednn_set_threads(int threads);

#endif
