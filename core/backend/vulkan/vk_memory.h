/* Device memory: a few large VkDeviceMemory blocks, each bound to one
 * VkBuffer, sub-allocated for tensors (first fit, coalescing free list).
 * Tensors are (block, offset) pairs; every binding names its own byte
 * range, never VK_WHOLE_SIZE. */
#ifndef YOLO_VK_MEMORY_H
#define YOLO_VK_MEMORY_H

#include <stddef.h>

#include "backend/vulkan/vk_device.h"
#include "yolo/tensor.h"

typedef struct yolo_vk_range {
    VkDeviceSize offset, size;
} yolo_vk_range;

typedef struct yolo_vk_block {
    VkDeviceMemory memory;
    VkBuffer buffer;
    VkDeviceSize size;
    void *mapped; /* host pointer when the memory is host-visible and coherent */
    yolo_vk_range *free_list; /* sorted by offset, coalesced */
    int n_free, cap_free;
    VkDeviceSize used;
    bool dedicated; /* holds one large allocation */
    uint32_t id;
    struct yolo_vk_block *next;
} yolo_vk_block;

/* The backend's buffer: a range of a block. `serial` is unique per
 * allocation, so recorded command buffers can tell a reused address apart. */
struct yolo_buffer {
    yolo_vk_block *block;
    VkDeviceSize offset;
    size_t size;              /* as requested */
    VkDeviceSize alloc_size;  /* rounded */
    uint64_t serial;
};

typedef struct yolo_vk_memory {
    const yolo_vk_fns *fn;
    VkDevice device;
    const yolo_vk_caps *caps;
    uint32_t type_index;      /* memory type of tensor blocks */
    uint32_t heap_index;
    bool host_mapped;         /* tensor blocks are mapped: copies are memcpy */
    uint32_t staging_type;    /* host-visible, coherent */
    VkDeviceSize block_size;
    VkDeviceSize align;
    yolo_vk_block *blocks;
    uint32_t next_block_id;
    uint64_t next_serial;
    VkDeviceSize device_bytes; /* in all blocks */
    char label[96];           /* "vulkan:0 (llvmpipe ...)" for messages */
} yolo_vk_memory;

/* Chooses memory types. Tensors live in device-local memory; on unified-memory
 * devices (integrated GPUs, lavapipe) that memory is also mapped, unless
 * YOLO_VK_FORCE_STAGING is set (to test the staging path). */
yolo_status yolo_vk_memory_init(yolo_vk_memory *m, const yolo_vk_fns *fn, VkDevice device, const yolo_vk_caps *caps,
                                const char *label);
void yolo_vk_memory_destroy(yolo_vk_memory *m);

/* A zero-initialization is not implied. Errors: YOLO_ERR_NOMEM naming the
 * size, the heap and what is in use. */
yolo_status yolo_vk_memory_alloc(yolo_vk_memory *m, size_t bytes, yolo_buffer **out);
void yolo_vk_memory_free(yolo_vk_memory *m, yolo_buffer *b);

/* A standalone host-visible buffer for staging (transfer src/dst). */
typedef struct yolo_vk_host_buffer {
    VkDeviceMemory memory;
    VkBuffer buffer;
    VkDeviceSize size;
    void *mapped;
} yolo_vk_host_buffer;
yolo_status yolo_vk_host_buffer_create(yolo_vk_memory *m, VkDeviceSize size, yolo_vk_host_buffer *out);
void yolo_vk_host_buffer_destroy(yolo_vk_memory *m, yolo_vk_host_buffer *hb);

#endif
