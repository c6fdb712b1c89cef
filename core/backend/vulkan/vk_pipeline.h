/* Compute pipelines: the embedded SPIR-V table, the one descriptor-set
 * layout and pipeline layout every kernel shares, and a cache of pipelines
 * keyed by (shader, specialization constants). */
#ifndef YOLO_VK_PIPELINE_H
#define YOLO_VK_PIPELINE_H

#include <stddef.h>

#include "backend/vulkan/vk_loader.h"

/* Every kernel sees 8 storage buffers (binding 0..7) and 128 bytes of push
 * constants (32 words: the first 8 are per-binding element offsets, see
 * shaders/common.glsl). 8 buffers and 128 bytes are what every device offers. */
#define YOLO_VK_MAX_BINDINGS 8
#define YOLO_VK_PUSH_WORDS 32
#define YOLO_VK_MAX_SPEC 12

/* Generated at build time by cmake/shaders.cmake from the shaders/ sources. */
typedef struct yolo_vk_shader_blob {
    const char *name; /* file name without .comp */
    const uint32_t *code;
    size_t size; /* bytes */
} yolo_vk_shader_blob;
extern const yolo_vk_shader_blob yolo_vk_shader_blobs[];
extern const int yolo_vk_shader_blob_count;

typedef struct yolo_vk_pipeline {
    int shader; /* index into yolo_vk_shader_blobs */
    int n_spec;
    uint32_t spec[YOLO_VK_MAX_SPEC];
    VkPipeline pipeline;
} yolo_vk_pipeline;

typedef struct yolo_vk_pipelines {
    const yolo_vk_fns *fn;
    VkDevice device;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipelineCache cache;
    VkShaderModule *modules; /* per blob, created on first use */
    yolo_vk_pipeline *items;
    int n, cap;
} yolo_vk_pipelines;

yolo_status yolo_vk_pipelines_init(yolo_vk_pipelines *p, const yolo_vk_fns *fn, VkDevice device);
void yolo_vk_pipelines_destroy(yolo_vk_pipelines *p);

/* The pipeline of `shader` specialized with spec[0..n_spec) as constant_id
 * 0..n_spec-1 (all 32-bit), created on first request. */
yolo_status yolo_vk_pipeline_get(yolo_vk_pipelines *p, const char *shader, const uint32_t *spec, int n_spec,
                                 VkPipeline *out);

#endif
