/* Uploads, downloads and zeroing of device buffers (vk_transfer.h). */
#include "backend/vulkan/vk_transfer.h"

#include <string.h>

#define STAGING_BYTES ((VkDeviceSize)8 << 20)

yolo_status yolo_vk_transfer_init(yolo_vk_context *ctx) {
    const yolo_vk_fns *vk = &ctx->inst.fn;
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = ctx->cmd_pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    VkResult r = vk->AllocateCommandBuffers(ctx->dev.device, &alloc, &ctx->xfer_cb);
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (r == VK_SUCCESS) r = vk->CreateFence(ctx->dev.device, &fence, NULL, &ctx->xfer_fence);
    if (r != VK_SUCCESS)
        return yolo_error(YOLO_ERR_BACKEND, "%s: creating the transfer command buffer failed (%s)", ctx->label,
                          yolo_vk_result_name(r));
    return YOLO_OK;
}

void yolo_vk_transfer_destroy(yolo_vk_context *ctx) {
    const yolo_vk_fns *vk = &ctx->inst.fn;
    if (ctx->xfer_fence) vk->DestroyFence(ctx->dev.device, ctx->xfer_fence, NULL);
    if (ctx->xfer_cb) vk->FreeCommandBuffers(ctx->dev.device, ctx->cmd_pool, 1, &ctx->xfer_cb);
    yolo_vk_host_buffer_destroy(&ctx->mem, &ctx->staging);
    ctx->xfer_fence = VK_NULL_HANDLE;
    ctx->xfer_cb = VK_NULL_HANDLE;
}

static yolo_status check_range(yolo_vk_context *ctx, const yolo_buffer *buf, size_t offset, size_t bytes,
                               const char *what) {
    if (offset > buf->size || bytes > buf->size - offset)
        return yolo_error(YOLO_ERR_ARG, "%s %s: range [%zu, %zu) outside a buffer of %zu bytes", ctx->label, what,
                          offset, offset + bytes, buf->size);
    return YOLO_OK;
}

typedef enum { XFER_UPLOAD, XFER_DOWNLOAD, XFER_FILL } xfer_kind;

/* Records and runs n staged copies (or fills) in one submission: region i
 * moves bytes[i] between device offset dev_off[i] of dev[i] and staging
 * offset stage_off[i]. */
static yolo_status run_many(yolo_vk_context *ctx, xfer_kind kind, int n, const VkBuffer *dev,
                            const VkDeviceSize *dev_off, const VkDeviceSize *stage_off, const VkDeviceSize *bytes) {
    const yolo_vk_fns *vk = &ctx->inst.fn;
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vk->BeginCommandBuffer(ctx->xfer_cb, &begin);
    if (r != VK_SUCCESS) goto fail;
    ctx->stats.transfer_recordings++;
    /* earlier compute work on the same memory comes first */
    VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    vk->CmdPipelineBarrier(ctx->xfer_cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
                           &before, 0, NULL, 0, NULL);
    for (int i = 0; i < n; i++) {
        if (kind == XFER_FILL) {
            vk->CmdFillBuffer(ctx->xfer_cb, dev[i], dev_off[i], bytes[i], 0);
        } else if (kind == XFER_UPLOAD) {
            VkBufferCopy copy = {.srcOffset = stage_off[i], .dstOffset = dev_off[i], .size = bytes[i]};
            vk->CmdCopyBuffer(ctx->xfer_cb, ctx->staging.buffer, dev[i], 1, &copy);
        } else {
            VkBufferCopy copy = {.srcOffset = dev_off[i], .dstOffset = stage_off[i], .size = bytes[i]};
            vk->CmdCopyBuffer(ctx->xfer_cb, dev[i], ctx->staging.buffer, 1, &copy);
        }
    }
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                              VK_ACCESS_HOST_READ_BIT};
    vk->CmdPipelineBarrier(ctx->xfer_cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                           VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, NULL,
                           0, NULL);
    if ((r = vk->EndCommandBuffer(ctx->xfer_cb)) != VK_SUCCESS) goto fail;
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &ctx->xfer_cb};
    if ((r = vk->ResetFences(ctx->dev.device, 1, &ctx->xfer_fence)) != VK_SUCCESS) goto fail;
    if ((r = vk->QueueSubmit(ctx->dev.queue, 1, &submit, ctx->xfer_fence)) != VK_SUCCESS) goto fail;
    if ((r = vk->WaitForFences(ctx->dev.device, 1, &ctx->xfer_fence, VK_TRUE, UINT64_MAX)) != VK_SUCCESS) goto fail;
    return YOLO_OK;
fail:
    return yolo_error(YOLO_ERR_BACKEND, "%s: a host<->device transfer failed (%s)", ctx->label,
                      yolo_vk_result_name(r));
}

static yolo_status run_one(yolo_vk_context *ctx, xfer_kind kind, VkBuffer dev, VkDeviceSize dev_off,
                           VkDeviceSize bytes) {
    const VkDeviceSize stage_off = 0;
    return run_many(ctx, kind, 1, &dev, &dev_off, &stage_off, &bytes);
}

static yolo_status ensure_staging(yolo_vk_context *ctx) {
    if (ctx->staging.buffer) return YOLO_OK;
    return yolo_vk_host_buffer_create(&ctx->mem, STAGING_BYTES, &ctx->staging);
}

static yolo_status wait_for(yolo_vk_context *ctx, const yolo_buffer *buf, size_t offset, size_t bytes,
                            bool host_writes) {
    const VkDeviceSize lo = buf->offset + offset;
    return yolo_vk_wait_for_range(ctx, buf->block->buffer, lo, lo + bytes, host_writes);
}

static yolo_status prepare(yolo_vk_context *ctx, const yolo_buffer *buf, size_t offset, size_t bytes,
                           const char *what, bool host_writes) {
    yolo_status st = check_range(ctx, buf, offset, bytes, what);
    if (st == YOLO_OK) st = wait_for(ctx, buf, offset, bytes, host_writes);
    if (st == YOLO_OK && !buf->block->mapped) st = ensure_staging(ctx);
    return st;
}

yolo_status yolo_vk_upload(yolo_vk_context *ctx, yolo_buffer *buf, size_t offset, const void *data, size_t bytes) {
    yolo_status st = prepare(ctx, buf, offset, bytes, "upload", true);
    if (st != YOLO_OK || bytes == 0) return st;
    if (buf->block->mapped) {
        memcpy((char *)buf->block->mapped + buf->offset + offset, data, bytes);
        return YOLO_OK;
    }
    for (size_t done = 0; done < bytes && st == YOLO_OK; done += (size_t)ctx->staging.size) {
        const size_t n = bytes - done < ctx->staging.size ? bytes - done : (size_t)ctx->staging.size;
        memcpy(ctx->staging.mapped, (const char *)data + done, n);
        st = run_one(ctx, XFER_UPLOAD, buf->block->buffer, buf->offset + offset + done, n);
    }
    return st;
}

yolo_status yolo_vk_download(yolo_vk_context *ctx, yolo_buffer *buf, size_t offset, void *data, size_t bytes) {
    yolo_status st = prepare(ctx, buf, offset, bytes, "download", false);
    if (st != YOLO_OK || bytes == 0) return st;
    if (buf->block->mapped) {
        memcpy(data, (const char *)buf->block->mapped + buf->offset + offset, bytes);
        return YOLO_OK;
    }
    for (size_t done = 0; done < bytes && st == YOLO_OK; done += (size_t)ctx->staging.size) {
        const size_t n = bytes - done < ctx->staging.size ? bytes - done : (size_t)ctx->staging.size;
        st = run_one(ctx, XFER_DOWNLOAD, buf->block->buffer, buf->offset + offset + done, n);
        if (st == YOLO_OK) memcpy((char *)data + done, ctx->staging.mapped, n);
    }
    return st;
}

yolo_status yolo_vk_zero(yolo_vk_context *ctx, yolo_buffer *buf, size_t offset, size_t bytes) {
    yolo_status st = prepare(ctx, buf, offset, bytes, "zero", true);
    if (st != YOLO_OK || bytes == 0) return st;
    if (buf->block->mapped) {
        memset((char *)buf->block->mapped + buf->offset + offset, 0, bytes);
        return YOLO_OK;
    }
    /* vkCmdFillBuffer wants 4-byte aligned ranges: the ragged ends are uploaded */
    const VkDeviceSize abs = buf->offset + offset;
    const VkDeviceSize lo = (abs + 3) & ~(VkDeviceSize)3, hi = (abs + bytes) & ~(VkDeviceSize)3;
    static const unsigned char zeros[8] = {0};
    if (hi <= lo) return yolo_vk_upload(ctx, buf, offset, zeros, bytes); /* at most 6 bytes */
    if (lo > abs) st = yolo_vk_upload(ctx, buf, offset, zeros, (size_t)(lo - abs));
    if (st == YOLO_OK) st = run_one(ctx, XFER_FILL, buf->block->buffer, lo, hi - lo);
    if (st == YOLO_OK && abs + bytes > hi) st = yolo_vk_upload(ctx, buf, (size_t)(hi - buf->offset), zeros,
                                                                (size_t)(abs + bytes - hi));
    return st;
}

/* The staged regions of a batched copy go through the staging buffer
 * together, packed at 256-byte offsets; mapped ones are memcpys. */
#define MAX_BATCH 16

yolo_status yolo_vk_copy_many(yolo_vk_context *ctx, bool upload, const yolo_backend_copy *copies, int n) {
    yolo_status st = YOLO_OK;
    const char *what = upload ? "upload" : "download";
    if (n > MAX_BATCH)
        return yolo_error(YOLO_ERR_ARG, "%s: a batched %s of %d regions (at most %d)", ctx->label, what, n,
                          MAX_BATCH);
    for (int i = 0; i < n && st == YOLO_OK; i++)
        st = check_range(ctx, copies[i].buffer, copies[i].offset, copies[i].bytes, what);
    for (int i = 0; i < n && st == YOLO_OK; i++)
        st = wait_for(ctx, copies[i].buffer, copies[i].offset, copies[i].bytes, upload);
    VkBuffer dev[MAX_BATCH];
    VkDeviceSize dev_off[MAX_BATCH], stage_off[MAX_BATCH], bytes[MAX_BATCH], packed = 0;
    int staged[MAX_BATCH], m = 0;
    for (int i = 0; i < n && st == YOLO_OK; i++) {
        const yolo_backend_copy *c = &copies[i];
        char *block = c->buffer->block->mapped;
        char *mapped = block ? block + c->buffer->offset + c->offset : NULL;
        if (mapped) {
            if (upload) memcpy(mapped, c->host, c->bytes);
            else memcpy(c->host, mapped, c->bytes);
        } else if (c->bytes > 0) {
            staged[m++] = i;
        }
    }
    for (int k = 0; k < m; k++) packed = ((packed + 255) & ~(VkDeviceSize)255) + copies[staged[k]].bytes;
    if (st != YOLO_OK || m == 0) return st;
    if (packed > STAGING_BYTES) { /* too much for one staging pass: one copy at a time */
        for (int k = 0; k < m && st == YOLO_OK; k++) {
            const yolo_backend_copy *c = &copies[staged[k]];
            st = upload ? yolo_vk_upload(ctx, c->buffer, c->offset, c->host, c->bytes)
                        : yolo_vk_download(ctx, c->buffer, c->offset, c->host, c->bytes);
        }
        return st;
    }
    st = ensure_staging(ctx);
    packed = 0;
    for (int k = 0; k < m && st == YOLO_OK; k++) {
        const yolo_backend_copy *c = &copies[staged[k]];
        stage_off[k] = (packed + 255) & ~(VkDeviceSize)255;
        packed = stage_off[k] + c->bytes;
        dev[k] = c->buffer->block->buffer;
        dev_off[k] = c->buffer->offset + c->offset;
        bytes[k] = c->bytes;
        if (upload) memcpy((char *)ctx->staging.mapped + stage_off[k], c->host, c->bytes);
    }
    if (st == YOLO_OK) st = run_many(ctx, upload ? XFER_UPLOAD : XFER_DOWNLOAD, m, dev, dev_off, stage_off, bytes);
    for (int k = 0; k < m && st == YOLO_OK && !upload; k++)
        memcpy(copies[staged[k]].host, (const char *)ctx->staging.mapped + stage_off[k], copies[staged[k]].bytes);
    return st;
}
