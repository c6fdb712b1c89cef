/* Recording a graph run into one command buffer: descriptor sets, push
 * constants, dispatches, and the barriers that hazards between them need.
 * The recording (command buffer, descriptor pools, scratch memory) is kept
 * and resubmitted unchanged on later runs of the same graph. */
#ifndef YOLO_VK_RECORDER_H
#define YOLO_VK_RECORDER_H

#include "backend/vulkan/vk_context.h"

#define YOLO_VK_REUSED_SCRATCH 2

typedef struct yolo_vk_recording {
    const yolo_graph *graph;
    yolo_tensor *const *first; /* the run's first node: a training graph's forward and backward are two runs */
    uint64_t signature; /* of the nodes, their storage and constants */
    int n_nodes;
    VkCommandBuffer cb;
    VkFence fence;
    bool in_flight; /* submitted, not yet waited for */
    VkDescriptorPool *pools;
    int n_pools, cap_pools;
    yolo_buffer **scratch;
    int n_scratch, cap_scratch;
    yolo_buffer *reused[YOLO_VK_REUSED_SCRATCH]; /* yolo_vk_scratch_reused, owned through scratch[] */
    /* The byte ranges its dispatches use and those they write, sorted and
     * merged when the recording ends: a host transfer waits for the run
     * only if it touches them (yolo_vk_wait_for_range). */
    struct yolo_vk_span *used, *written;
    int n_used, cap_used, n_written, cap_written;
    struct yolo_vk_recording *next;
} yolo_vk_recording;

/* One buffer range a dispatch reads or writes. */
typedef struct yolo_vk_binding {
    VkBuffer buffer;
    VkDeviceSize offset, range;
    bool write;
} yolo_vk_binding;

/* A byte range of a buffer (accessed since the last barrier, or by a recording). */
typedef struct yolo_vk_span {
    VkBuffer buffer;
    VkDeviceSize lo, hi;
} yolo_vk_span;

typedef struct yolo_vk_recorder {
    yolo_vk_context *ctx;
    yolo_vk_recording *rec;
    uint32_t sets_left; /* in the newest pool */
    yolo_vk_span *reads, *writes;
    int n_reads, n_writes, cap_reads, cap_writes;
    VkPipeline bound;
    const char *op_name; /* node being recorded, for messages */
} yolo_vk_recorder;

typedef struct yolo_vk_dispatch {
    const char *shader;
    uint32_t spec[YOLO_VK_MAX_SPEC];
    int n_spec;
    uint32_t used; /* bit i: binding i is set */
    yolo_vk_binding bind[YOLO_VK_MAX_BINDINGS];
    uint32_t push[YOLO_VK_PUSH_WORDS]; /* words 0..7: element offset of each binding */
    uint32_t groups[3];
} yolo_vk_dispatch;

/* Allocates the command buffer and fence of a new recording and begins it. */
yolo_status yolo_vk_recording_begin(yolo_vk_context *ctx, yolo_vk_recording *rec, yolo_vk_recorder *r);
/* Ends it (with the barrier that makes results visible to the host and to transfers). */
yolo_status yolo_vk_recording_end(yolo_vk_recorder *r);
/* Frees everything a recording owns (the caller has waited for it). */
void yolo_vk_recording_release(yolo_vk_context *ctx, yolo_vk_recording *rec);
/* Whether a dispatch of the ended recording rec uses (writes_only: writes)
 * a byte of [lo, hi) of buffer b. */
bool yolo_vk_recording_uses(const yolo_vk_recording *rec, VkBuffer b, VkDeviceSize lo, VkDeviceSize hi,
                            bool writes_only);

void yolo_vk_dispatch_init(yolo_vk_dispatch *d, const char *shader);
/* Binds bytes [byte_offset, byte_offset+bytes) of buf at `slot`. The
 * descriptor starts at the offset rounded down to the device's alignment;
 * push word `slot` gets the difference in units of `unit` bytes (the
 * shader's element size). The range must fit ctx->max_binding. */
yolo_status yolo_vk_bind(yolo_vk_recorder *r, yolo_vk_dispatch *d, int slot, const yolo_buffer *buf,
                         VkDeviceSize byte_offset, VkDeviceSize bytes, bool write, uint32_t unit);
/* Binds elements [first, first+count) of tensor t (its dtype's size per element). */
yolo_status yolo_vk_bind_tensor(yolo_vk_recorder *r, yolo_vk_dispatch *d, int slot, const yolo_tensor *t,
                                int64_t first, int64_t count, bool write, uint32_t unit);
/* groups[] covering n_groups workgroups in x (and y beyond 65,535). */
void yolo_vk_grid_1d(yolo_vk_dispatch *d, uint64_t n_groups);
/* Records the dispatch, preceded by a barrier when it touches a range that
 * an earlier, unsynchronized dispatch wrote (or writes one it read). */
yolo_status yolo_vk_record(yolo_vk_recorder *r, const yolo_vk_dispatch *d);
/* Device memory owned by the recording (split-K partials, reduction temporaries). */
yolo_status yolo_vk_scratch(yolo_vk_recorder *r, size_t bytes, yolo_buffer **out);
/* Scratch that every op of the recording shares through `slot` (0 or 1):
 * the buffer of the slot when it is large enough, else a larger one. Reuse
 * is safe: the hazard tracking puts a barrier before a write to a range an
 * earlier dispatch read. amp's fp16 copies of GEMM inputs live here. */
yolo_status yolo_vk_scratch_reused(yolo_vk_recorder *r, int slot, size_t bytes, yolo_buffer **out);

#endif
