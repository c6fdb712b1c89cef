/* Counters of the Vulkan backend that tests and benches read (internal:
 * include "backend/vulkan/vulkan_stats.h" from core-aware code only). */
#ifndef YOLO_VULKAN_STATS_H
#define YOLO_VULKAN_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "yolo/tensor.h"

typedef struct yolo_vulkan_stats {
    uint64_t graph_recordings;    /* command buffers recorded for graph runs */
    uint64_t graph_replays;       /* graph runs that resubmitted a recorded command buffer */
    uint64_t transfer_recordings; /* one-shot command buffers of staged uploads/downloads/zeroing */
    uint64_t dispatches;          /* compute dispatches recorded */
    uint64_t barriers;            /* compute-to-compute barriers recorded */
    uint64_t pipelines;           /* pipelines created (cache misses) */
    uint64_t graph_waits;         /* times the host blocked until submitted graph runs finished (their fence) */
    uint64_t coop_dispatches;     /* of those dispatches, GEMMs on the cooperative-matrix kernels (YOLO_VK_COOPMAT) */
} yolo_vulkan_stats;

/* Copies the counters of a Vulkan backend; YOLO_ERR_ARG for another kind. */
yolo_status yolo_vulkan_get_stats(const yolo_backend *backend, yolo_vulkan_stats *out);

/* Messages the Khronos validation layer has emitted in this process. */
uint64_t yolo_vulkan_validation_messages(void);

/* Whether the backend validates (the layer is active). */
bool yolo_vulkan_validating(const yolo_backend *backend);

/* Runs a shader that loops `iterations` times (in an outer loop of
 * iterations/inner steps around an inner loop of `inner`) in one invocation
 * and stores in *ran how many iterations completed: lavapipe stops at
 * 65,535 (its loop limiter), real drivers run them all. */
yolo_status yolo_vulkan_loop_canary(yolo_backend *backend, uint32_t iterations, uint32_t inner, uint32_t *ran);

/* Knobs for tests, read when a backend is created:
 *   YOLO_VK_MAX_BINDING_BYTES  caps one descriptor's range below the device's
 *                              maxStorageBufferRange, so small tensors take the
 *                              split-binding paths that huge ones need;
 *   YOLO_VK_LOOP_BUDGET        loop iterations an invocation may run;
 *   YOLO_VK_DISABLE_F16        no 16-bit storage paths;
 *   YOLO_VK_COOPMAT            amp's GEMMs on cooperative matrices: on (the
 *                              device's VK_NV_cooperative_matrix, when it has
 *                              it), emulate (gemm_coop.glsl's tiling with plain
 *                              arithmetic, on any device with fp16 arithmetic),
 *                              off (unset: the default until verified on a GPU);
 *   YOLO_VK_DISABLE_COOPMAT    never enable the extension on the device;
 *   YOLO_VK_DISABLE_SUBGROUP   no subgroup operations (the reductions' trees
 *                              stay in shared memory);
 *   YOLO_VK_FORCE_STAGING      uploads/downloads through staging buffers even on
 *                              unified memory;
 *   YOLO_VK_VALIDATE           enable the Khronos validation layer;
 *   YOLO_VK_TEST_SKIP_BARRIERS records no compute-to-compute barriers (wrong on
 *                              purpose: shows that synchronization validation
 *                              catches the hazards the barriers prevent); read
 *                              only in builds with -DYOLO_TEST_HOOKS=ON. */

#endif
