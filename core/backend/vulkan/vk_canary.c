/* A test hook: runs shaders/loop_canary.comp once and reports how many loop
 * iterations the invocation completed, so a test notices when lavapipe's
 * loop limiter (the reason for ctx->loop_budget) changes. */
#include <stdlib.h>

#include "backend/vulkan/vk_recorder.h"

yolo_status yolo_vulkan_loop_canary(yolo_backend *backend, uint32_t iterations, uint32_t inner, uint32_t *ran) {
    yolo_vulkan_stats probe;
    if (!ran || inner == 0 || yolo_vulkan_get_stats(backend, &probe) != YOLO_OK)
        return yolo_error(YOLO_ERR_ARG, "loop canary: needs a Vulkan backend and inner > 0");
    yolo_vk_context *ctx = backend->impl;
    yolo_buffer *buf = NULL;
    yolo_status st = backend->ops->buffer_alloc(backend, 4, &buf);
    if (st != YOLO_OK) return st;
    pthread_mutex_lock(&ctx->lock);
    yolo_vk_recording rec = {0};
    yolo_vk_recorder r;
    st = yolo_vk_recording_begin(ctx, &rec, &r);
    if (st == YOLO_OK) {
        yolo_vk_dispatch d;
        yolo_vk_dispatch_init(&d, "loop_canary");
        st = yolo_vk_bind(&r, &d, 0, buf, 0, 4, true, 4);
        d.push[8] = iterations;
        d.push[9] = inner;
        if (st == YOLO_OK) st = yolo_vk_record(&r, &d);
        if (st == YOLO_OK) st = yolo_vk_recording_end(&r);
    }
    if (st == YOLO_OK) st = yolo_vk_wait_pending(ctx);
    if (st == YOLO_OK) {
        VkSubmitInfo submit = {
            .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &rec.cb};
        VkResult res = ctx->inst.fn.QueueSubmit(ctx->dev.queue, 1, &submit, rec.fence);
        if (res == VK_SUCCESS) res = ctx->inst.fn.WaitForFences(ctx->dev.device, 1, &rec.fence, VK_TRUE, UINT64_MAX);
        if (res != VK_SUCCESS) st = yolo_error(YOLO_ERR_BACKEND, "loop canary: %s", yolo_vk_result_name(res));
    }
    free(r.reads);
    free(r.writes);
    yolo_vk_recording_release(ctx, &rec);
    pthread_mutex_unlock(&ctx->lock);
    if (st == YOLO_OK) st = backend->ops->download(backend, buf, 0, ran, 4);
    backend->ops->buffer_free(backend, buf);
    return st;
}
