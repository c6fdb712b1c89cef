/* Command recording with hazard tracking (see vk_recorder.h).
 *
 * Barriers follow ggml's scheme: the byte ranges read and written since the
 * last barrier are kept; a dispatch that writes a range overlapping any of
 * them, or reads one overlapping a write, gets one global compute->compute
 * memory barrier first. Independent dispatches (branches of a network) run
 * without barriers between them. */
#include "backend/vulkan/vk_recorder.h"

#include <stdlib.h>
#include <string.h>

#define SETS_PER_POOL 256

static yolo_status vk_fail(yolo_vk_recorder *r, VkResult res, const char *what) {
    return yolo_error(YOLO_ERR_BACKEND, "%s: %s failed (%s)%s%s", r->ctx->label, what, yolo_vk_result_name(res),
                      r->op_name ? " recording " : "", r->op_name ? r->op_name : "");
}

static void global_barrier(yolo_vk_context *ctx, VkCommandBuffer cb, VkPipelineStageFlags src_stage,
                           VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = src_access,
                          .dstAccessMask = dst_access};
    ctx->inst.fn.CmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

static bool push_span(yolo_vk_span **list, int *n, int *cap, yolo_vk_span s) {
    if (*n == *cap) {
        int c = *cap ? *cap * 2 : 32;
        yolo_vk_span *l = realloc(*list, (size_t)c * sizeof *l);
        if (!l) return false;
        *list = l;
        *cap = c;
    }
    (*list)[(*n)++] = s;
    return true;
}

static int span_order(const void *a, const void *b) {
    const yolo_vk_span *x = a, *y = b;
    const uintptr_t bx = (uintptr_t)x->buffer, by = (uintptr_t)y->buffer;
    if (bx != by) return bx < by ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts spans by buffer and start and merges the ones that overlap or touch. */
static int merge_spans(yolo_vk_span *list, int n) {
    if (n == 0) return 0;
    qsort(list, (size_t)n, sizeof *list, span_order);
    int m = 0;
    for (int i = 1; i < n; i++) {
        if (list[i].buffer == list[m].buffer && list[i].lo <= list[m].hi) {
            if (list[i].hi > list[m].hi) list[m].hi = list[i].hi;
        } else {
            list[++m] = list[i];
        }
    }
    return m + 1;
}

bool yolo_vk_recording_uses(const yolo_vk_recording *rec, VkBuffer b, VkDeviceSize lo, VkDeviceSize hi,
                            bool writes_only) {
    const yolo_vk_span *list = writes_only ? rec->written : rec->used;
    const int n = writes_only ? rec->n_written : rec->n_used;
    /* the last span that starts before hi: the only one that can reach past lo (they are disjoint) */
    int a = 0, z = n;
    const yolo_vk_span key = {b, hi, hi};
    while (a < z) {
        const int mid = a + (z - a) / 2;
        if (span_order(&list[mid], &key) < 0) a = mid + 1;
        else z = mid;
    }
    return a > 0 && list[a - 1].buffer == b && list[a - 1].hi > lo && lo < hi;
}

yolo_status yolo_vk_recording_begin(yolo_vk_context *ctx, yolo_vk_recording *rec, yolo_vk_recorder *r) {
    const yolo_vk_fns *vk = &ctx->inst.fn;
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->rec = rec;
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = ctx->cmd_pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    VkResult res = vk->AllocateCommandBuffers(ctx->dev.device, &alloc, &rec->cb);
    if (res != VK_SUCCESS) return vk_fail(r, res, "vkAllocateCommandBuffers");
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    res = vk->CreateFence(ctx->dev.device, &fence, NULL, &rec->fence);
    if (res != VK_SUCCESS) return vk_fail(r, res, "vkCreateFence");
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    res = vk->BeginCommandBuffer(rec->cb, &begin);
    if (res != VK_SUCCESS) return vk_fail(r, res, "vkBeginCommandBuffer");
    /* Uploads (transfers or host writes) and earlier runs precede this one. */
    global_barrier(ctx, rec->cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    return YOLO_OK;
}

yolo_status yolo_vk_recording_end(yolo_vk_recorder *r) {
    yolo_vk_context *ctx = r->ctx;
    global_barrier(ctx, r->rec->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                   VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT);
    free(r->reads);
    free(r->writes);
    r->reads = r->writes = NULL;
    yolo_vk_recording *rec = r->rec;
    rec->n_used = merge_spans(rec->used, rec->n_used);
    rec->n_written = merge_spans(rec->written, rec->n_written);
    VkResult res = ctx->inst.fn.EndCommandBuffer(r->rec->cb);
    if (res != VK_SUCCESS) return vk_fail(r, res, "vkEndCommandBuffer");
    return YOLO_OK;
}

void yolo_vk_recording_release(yolo_vk_context *ctx, yolo_vk_recording *rec) {
    const yolo_vk_fns *vk = &ctx->inst.fn;
    if (rec->cb) vk->FreeCommandBuffers(ctx->dev.device, ctx->cmd_pool, 1, &rec->cb);
    if (rec->fence) {
        if (ctx->pending_fence == rec->fence) ctx->pending_fence = VK_NULL_HANDLE;
        vk->DestroyFence(ctx->dev.device, rec->fence, NULL);
    }
    for (int i = 0; i < rec->n_pools; i++) vk->DestroyDescriptorPool(ctx->dev.device, rec->pools[i], NULL);
    free(rec->pools);
    for (int i = 0; i < rec->n_scratch; i++) yolo_vk_memory_free(&ctx->mem, rec->scratch[i]);
    free(rec->scratch);
    free(rec->used);
    free(rec->written);
    rec->used = rec->written = NULL;
    rec->n_used = rec->cap_used = rec->n_written = rec->cap_written = 0;
    rec->cb = VK_NULL_HANDLE;
    rec->fence = VK_NULL_HANDLE;
    rec->pools = NULL;
    rec->scratch = NULL;
    rec->n_pools = rec->cap_pools = rec->n_scratch = rec->cap_scratch = 0;
    memset(rec->reused, 0, sizeof rec->reused);
}

void yolo_vk_dispatch_init(yolo_vk_dispatch *d, const char *shader) {
    memset(d, 0, sizeof *d);
    d->shader = shader;
    d->groups[0] = d->groups[1] = d->groups[2] = 1;
}

yolo_status yolo_vk_bind(yolo_vk_recorder *r, yolo_vk_dispatch *d, int slot, const yolo_buffer *buf,
                         VkDeviceSize byte_offset, VkDeviceSize bytes, bool write, uint32_t unit) {
    yolo_vk_context *ctx = r->ctx;
    const VkDeviceSize align = ctx->caps.limits.minStorageBufferOffsetAlignment
                                   ? ctx->caps.limits.minStorageBufferOffsetAlignment
                                   : 4;
    const VkDeviceSize abs = buf->offset + byte_offset;
    const VkDeviceSize base = abs / align * align;
    const VkDeviceSize skew = abs - base;
    VkDeviceSize range = (skew + (bytes ? bytes : 1) + 3) & ~(VkDeviceSize)3;
    if (base + range > buf->block->size) range = buf->block->size - base;
    if (range > ctx->max_binding)
        return yolo_error(YOLO_ERR_UNSUPPORTED,
                          "%s: %s needs a %.1f MiB buffer binding, over this device's limit of %.1f MiB "
                          "(maxStorageBufferRange)",
                          ctx->label, r->op_name ? r->op_name : d->shader, (double)range / 1048576.0,
                          (double)ctx->max_binding / 1048576.0);
    if (skew % unit)
        return yolo_error(YOLO_ERR_BACKEND, "%s: %s: byte offset %llu is not a multiple of the %u-byte element",
                          ctx->label, r->op_name ? r->op_name : d->shader, (unsigned long long)abs, unit);
    d->bind[slot] = (yolo_vk_binding){buf->block->buffer, base, range, write};
    d->push[slot] = (uint32_t)(skew / unit);
    d->used |= 1u << slot;
    return YOLO_OK;
}

yolo_status yolo_vk_bind_tensor(yolo_vk_recorder *r, yolo_vk_dispatch *d, int slot, const yolo_tensor *t,
                                int64_t first, int64_t count, bool write, uint32_t unit) {
    const size_t es = yolo_dtype_size(t->dtype);
    if (!t->buffer)
        return yolo_error(YOLO_ERR_BACKEND, "%s: tensor '%s' has no storage", r->ctx->label, t->name);
    return yolo_vk_bind(r, d, slot, t->buffer, t->offset + (size_t)first * es, (VkDeviceSize)count * es, write, unit);
}

void yolo_vk_grid_1d(yolo_vk_dispatch *d, uint64_t n_groups) {
    if (n_groups == 0) n_groups = 1;
    uint64_t x = n_groups < 65535 ? n_groups : 65535;
    d->groups[0] = (uint32_t)x;
    d->groups[1] = (uint32_t)((n_groups + x - 1) / x);
    d->groups[2] = 1;
}

static bool overlaps(const yolo_vk_span *list, int n, const yolo_vk_span *s) {
    for (int i = 0; i < n; i++)
        if (list[i].buffer == s->buffer && list[i].lo < s->hi && s->lo < list[i].hi) return true;
    return false;
}

static yolo_status new_pool(yolo_vk_recorder *r) {
    yolo_vk_context *ctx = r->ctx;
    yolo_vk_recording *rec = r->rec;
    if (rec->n_pools == rec->cap_pools) {
        int c = rec->cap_pools ? rec->cap_pools * 2 : 4;
        VkDescriptorPool *p = realloc(rec->pools, (size_t)c * sizeof *p);
        if (!p) return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", ctx->label);
        rec->pools = p;
        rec->cap_pools = c;
    }
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 .descriptorCount = SETS_PER_POOL * YOLO_VK_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = SETS_PER_POOL,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &size};
    VkResult res = ctx->inst.fn.CreateDescriptorPool(ctx->dev.device, &info, NULL, &rec->pools[rec->n_pools]);
    if (res != VK_SUCCESS) return vk_fail(r, res, "vkCreateDescriptorPool");
    rec->n_pools++;
    r->sets_left = SETS_PER_POOL;
    return YOLO_OK;
}

yolo_status yolo_vk_record(yolo_vk_recorder *r, const yolo_vk_dispatch *d) {
    yolo_vk_context *ctx = r->ctx;
    const yolo_vk_fns *vk = &ctx->inst.fn;
    VkPipeline pipeline;
    yolo_status st = yolo_vk_pipeline_get(&ctx->pipes, d->shader, d->spec, d->n_spec, &pipeline);
    if (st != YOLO_OK) return st;
    for (int i = 0; i < 3; i++)
        if (d->groups[i] == 0 || d->groups[i] > ctx->caps.limits.maxComputeWorkGroupCount[i])
            return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: %s: %u workgroups along %c (device limit %u)", ctx->label,
                              r->op_name ? r->op_name : d->shader, d->groups[i], "xyz"[i],
                              ctx->caps.limits.maxComputeWorkGroupCount[i]);

    if (r->sets_left == 0 && (st = new_pool(r)) != YOLO_OK) return st;
    VkDescriptorSetAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                         .descriptorPool = r->rec->pools[r->rec->n_pools - 1],
                                         .descriptorSetCount = 1,
                                         .pSetLayouts = &ctx->pipes.set_layout};
    VkDescriptorSet set;
    VkResult res = vk->AllocateDescriptorSets(ctx->dev.device, &alloc, &set);
    if (res != VK_SUCCESS) return vk_fail(r, res, "vkAllocateDescriptorSets");
    r->sets_left--;

    VkDescriptorBufferInfo infos[YOLO_VK_MAX_BINDINGS];
    VkWriteDescriptorSet writes[YOLO_VK_MAX_BINDINGS];
    uint32_t n_writes = 0;
    bool hazard = false;
    for (int i = 0; i < YOLO_VK_MAX_BINDINGS; i++) {
        if (!(d->used & (1u << i))) continue;
        const yolo_vk_binding *b = &d->bind[i];
        infos[n_writes] = (VkDescriptorBufferInfo){b->buffer, b->offset, b->range};
        writes[n_writes] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                                  .dstSet = set,
                                                  .dstBinding = (uint32_t)i,
                                                  .descriptorCount = 1,
                                                  .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                  .pBufferInfo = &infos[n_writes]};
        n_writes++;
        yolo_vk_span s = {b->buffer, b->offset, b->offset + b->range};
        if (overlaps(r->writes, r->n_writes, &s) || (b->write && overlaps(r->reads, r->n_reads, &s))) hazard = true;
    }
    vk->UpdateDescriptorSets(ctx->dev.device, n_writes, writes, 0, NULL);
    if (hazard && !ctx->skip_barriers) {
        global_barrier(ctx, r->rec->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                       VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        r->n_reads = r->n_writes = 0;
        ctx->stats.barriers++;
    }
    for (int i = 0; i < YOLO_VK_MAX_BINDINGS; i++) {
        if (!(d->used & (1u << i))) continue;
        const yolo_vk_binding *b = &d->bind[i];
        yolo_vk_span s = {b->buffer, b->offset, b->offset + b->range};
        yolo_vk_recording *rec = r->rec;
        bool ok = b->write ? push_span(&r->writes, &r->n_writes, &r->cap_writes, s)
                           : push_span(&r->reads, &r->n_reads, &r->cap_reads, s);
        ok = ok && push_span(&rec->used, &rec->n_used, &rec->cap_used, s);
        if (b->write) ok = ok && push_span(&rec->written, &rec->n_written, &rec->cap_written, s);
        if (!ok) return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", ctx->label);
    }
    if (pipeline != r->bound) {
        vk->CmdBindPipeline(r->rec->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        r->bound = pipeline;
    }
    vk->CmdBindDescriptorSets(r->rec->cb, VK_PIPELINE_BIND_POINT_COMPUTE, ctx->pipes.layout, 0, 1, &set, 0, NULL);
    vk->CmdPushConstants(r->rec->cb, ctx->pipes.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, YOLO_VK_PUSH_WORDS * 4,
                         d->push);
    vk->CmdDispatch(r->rec->cb, d->groups[0], d->groups[1], d->groups[2]);
    ctx->stats.dispatches++;
    return YOLO_OK;
}

yolo_status yolo_vk_scratch(yolo_vk_recorder *r, size_t bytes, yolo_buffer **out) {
    yolo_vk_recording *rec = r->rec;
    if (rec->n_scratch == rec->cap_scratch) {
        int c = rec->cap_scratch ? rec->cap_scratch * 2 : 8;
        yolo_buffer **s = realloc(rec->scratch, (size_t)c * sizeof *s);
        if (!s) return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", r->ctx->label);
        rec->scratch = s;
        rec->cap_scratch = c;
    }
    yolo_status st = yolo_vk_memory_alloc(&r->ctx->mem, bytes, out);
    if (st != YOLO_OK) return yolo_error_context(st, "scratch memory of %s", r->op_name ? r->op_name : "a kernel");
    rec->scratch[rec->n_scratch++] = *out;
    return YOLO_OK;
}

yolo_status yolo_vk_scratch_reused(yolo_vk_recorder *r, int slot, size_t bytes, yolo_buffer **out) {
    yolo_buffer **kept = &r->rec->reused[slot];
    if (*kept && (*kept)->size >= bytes) {
        *out = *kept;
        return YOLO_OK;
    }
    yolo_status st = yolo_vk_scratch(r, bytes, out);
    if (st == YOLO_OK) *kept = *out;
    return st;
}
