/* Shared layouts and the pipeline cache (see vk_pipeline.h). */
#include "backend/vulkan/vk_pipeline.h"

#include <stdlib.h>
#include <string.h>

yolo_status yolo_vk_pipelines_init(yolo_vk_pipelines *p, const yolo_vk_fns *fn, VkDevice device) {
    memset(p, 0, sizeof *p);
    p->fn = fn;
    p->device = device;
    VkDescriptorSetLayoutBinding bindings[YOLO_VK_MAX_BINDINGS];
    for (uint32_t i = 0; i < YOLO_VK_MAX_BINDINGS; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                                     .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                     .descriptorCount = 1,
                                                     .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo set_info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                                .bindingCount = YOLO_VK_MAX_BINDINGS,
                                                .pBindings = bindings};
    VkResult r = fn->CreateDescriptorSetLayout(device, &set_info, NULL, &p->set_layout);
    VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
                                .offset = 0,
                                .size = YOLO_VK_PUSH_WORDS * 4};
    VkPipelineLayoutCreateInfo layout_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                              .setLayoutCount = 1,
                                              .pSetLayouts = &p->set_layout,
                                              .pushConstantRangeCount = 1,
                                              .pPushConstantRanges = &push};
    if (r == VK_SUCCESS) r = fn->CreatePipelineLayout(device, &layout_info, NULL, &p->layout);
    VkPipelineCacheCreateInfo cache_info = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    if (r == VK_SUCCESS) r = fn->CreatePipelineCache(device, &cache_info, NULL, &p->cache);
    p->modules = calloc((size_t)(yolo_vk_shader_blob_count > 0 ? yolo_vk_shader_blob_count : 1), sizeof *p->modules);
    if (r != VK_SUCCESS || !p->modules) {
        yolo_vk_pipelines_destroy(p);
        return yolo_error(YOLO_ERR_BACKEND, "vulkan: creating the pipeline layout failed (%s)",
                          r != VK_SUCCESS ? yolo_vk_result_name(r) : "out of host memory");
    }
    return YOLO_OK;
}

void yolo_vk_pipelines_destroy(yolo_vk_pipelines *p) {
    if (!p->fn) return;
    for (int i = 0; i < p->n; i++) p->fn->DestroyPipeline(p->device, p->items[i].pipeline, NULL);
    free(p->items);
    if (p->modules)
        for (int i = 0; i < yolo_vk_shader_blob_count; i++)
            if (p->modules[i]) p->fn->DestroyShaderModule(p->device, p->modules[i], NULL);
    free(p->modules);
    if (p->cache) p->fn->DestroyPipelineCache(p->device, p->cache, NULL);
    if (p->layout) p->fn->DestroyPipelineLayout(p->device, p->layout, NULL);
    if (p->set_layout) p->fn->DestroyDescriptorSetLayout(p->device, p->set_layout, NULL);
    memset(p, 0, sizeof *p);
}

static int find_blob(const char *name) {
    for (int i = 0; i < yolo_vk_shader_blob_count; i++)
        if (strcmp(yolo_vk_shader_blobs[i].name, name) == 0) return i;
    return -1;
}

yolo_status yolo_vk_pipeline_get(yolo_vk_pipelines *p, const char *shader, const uint32_t *spec, int n_spec,
                                 VkPipeline *out) {
    if (n_spec > YOLO_VK_MAX_SPEC)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan: shader %s given %d specialization constants (max %d)", shader,
                          n_spec, YOLO_VK_MAX_SPEC);
    int blob = find_blob(shader);
    if (blob < 0) return yolo_error(YOLO_ERR_BACKEND, "vulkan: shader %s is not embedded in this build", shader);
    for (int i = 0; i < p->n; i++) {
        const yolo_vk_pipeline *it = &p->items[i];
        if (it->shader == blob && it->n_spec == n_spec && memcmp(it->spec, spec, (size_t)n_spec * 4) == 0) {
            *out = it->pipeline;
            return YOLO_OK;
        }
    }
    VkResult r = VK_SUCCESS;
    if (!p->modules[blob]) {
        VkShaderModuleCreateInfo mod = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                        .codeSize = yolo_vk_shader_blobs[blob].size,
                                        .pCode = yolo_vk_shader_blobs[blob].code};
        r = p->fn->CreateShaderModule(p->device, &mod, NULL, &p->modules[blob]);
        if (r != VK_SUCCESS)
            return yolo_error(YOLO_ERR_BACKEND, "vulkan: shader module %s: %s", shader, yolo_vk_result_name(r));
    }
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 32;
        yolo_vk_pipeline *items = realloc(p->items, (size_t)cap * sizeof *items);
        if (!items) return yolo_error(YOLO_ERR_NOMEM, "vulkan: out of host memory for pipelines");
        p->items = items;
        p->cap = cap;
    }
    VkSpecializationMapEntry entries[YOLO_VK_MAX_SPEC];
    for (int i = 0; i < n_spec; i++)
        entries[i] = (VkSpecializationMapEntry){.constantID = (uint32_t)i, .offset = (uint32_t)i * 4, .size = 4};
    VkSpecializationInfo spec_info = {.mapEntryCount = (uint32_t)n_spec,
                                      .pMapEntries = entries,
                                      .dataSize = (size_t)n_spec * 4,
                                      .pData = spec};
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = p->modules[blob],
                  .pName = "main",
                  .pSpecializationInfo = n_spec ? &spec_info : NULL},
        .layout = p->layout};
    VkPipeline pipeline;
    r = p->fn->CreateComputePipelines(p->device, p->cache, 1, &info, NULL, &pipeline);
    if (r != VK_SUCCESS)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan: creating the pipeline of shader %s failed (%s)", shader,
                          yolo_vk_result_name(r));
    yolo_vk_pipeline *it = &p->items[p->n++];
    it->shader = blob;
    it->n_spec = n_spec;
    memcpy(it->spec, spec, (size_t)n_spec * 4);
    it->pipeline = pipeline;
    *out = pipeline;
    return YOLO_OK;
}
