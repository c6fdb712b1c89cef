/* The Vulkan backend's state, shared by its files (backend.impl). */
#ifndef YOLO_VK_CONTEXT_H
#define YOLO_VK_CONTEXT_H

#include <pthread.h>

#include "backend/backend.h"
#include "backend/vulkan/vk_memory.h"
#include "backend/vulkan/vk_pipeline.h"
#include "backend/vulkan/vulkan_stats.h"

/* Tile shape of the shared-memory GEMM (shaders/gemm_core.glsl), all
 * specialization constants: a WGX x WGY workgroup computes (WGY*TM) x (WGX*TN)
 * outputs, stepping BK along K. */
typedef struct yolo_vk_gemm_tiles {
    uint32_t wgx, wgy, tm, tn, bk;
} yolo_vk_gemm_tiles;

/* The GEMM kernels amp runs (YOLO_VK_COOPMAT, read at creation): the
 * shared-memory tiles of gemm_core.glsl, or the cooperative-matrix core of
 * gemm_coop.glsl on the device's matrix units (VK_NV_cooperative_matrix),
 * or that core with its matrix operations emulated (any device with fp16
 * arithmetic: tests its tiling where no device has the extension). */
typedef enum yolo_vk_coop {
    YOLO_VK_COOP_OFF,
    YOLO_VK_COOP_NV,
    YOLO_VK_COOP_EMULATED,
} yolo_vk_coop;

struct yolo_vk_recording; /* vk_recorder.h */

typedef struct yolo_vk_context {
    yolo_vk_instance inst;
    yolo_vk_caps caps;
    yolo_vk_device dev;
    yolo_vk_memory mem;
    yolo_vk_pipelines pipes;
    VkCommandPool cmd_pool;
    char label[160];

    /* transfers (staging path) */
    yolo_vk_host_buffer staging;
    VkCommandBuffer xfer_cb;
    VkFence xfer_fence;

    /* The last graph submission the host has not yet waited for. Fences
     * signal in submission order, so waiting for it waits for all. */
    VkFence pending_fence;

    struct yolo_vk_recording *recordings; /* one per graph (see vulkan_backend.c) */

    /* tunables, fixed at creation */
    VkDeviceSize max_binding;   /* bytes one descriptor may cover (maxStorageBufferRange or less) */
    uint32_t loop_budget;       /* loop iterations one invocation may run (lavapipe stops at 65,535) */
    VkDeviceSize scratch_cap;   /* bytes of split-K partial sums one op may use */
    yolo_vk_gemm_tiles gemm_large, gemm_small, gemm_thin; /* 64x64, 32x32, 8x64 outputs per workgroup */
    yolo_vk_gemm_tiles gemm_coop; /* gemm_coop.glsl's fixed 64x64 block (for the grid and the loop budget) */
    yolo_vk_coop coop;            /* amp's GEMMs on cooperative matrices */
    yolo_vk_coop coop_wanted;     /* what YOLO_VK_COOPMAT asked for */
    uint32_t wg;                /* workgroup size of 1-D kernels */
    bool f16_storage;
    bool amp16;                 /* amp=True: GEMM inputs as fp16 copies (the *_f16 kernels) */
    bool subgroup;              /* subgroup arithmetic in compute, not switched off */
    bool skip_barriers;         /* YOLO_VK_TEST_SKIP_BARRIERS (test hooks): validation must see hazards */

    yolo_vulkan_stats stats;
    pthread_mutex_t lock;
} yolo_vk_context;

/* Waits for the pending graph submission, if any. */
yolo_status yolo_vk_wait_pending(yolo_vk_context *ctx);
/* Before the host writes (host_writes) or reads bytes [lo, hi) of buffer
 * b: waits for the pending submission only if a graph run still in flight
 * uses that range (writes it, for a read). A batch's upload thus does not
 * wait for the previous step's backward, update and EMA. */
yolo_status yolo_vk_wait_for_range(yolo_vk_context *ctx, VkBuffer b, VkDeviceSize lo, VkDeviceSize hi,
                                   bool host_writes);

#endif
