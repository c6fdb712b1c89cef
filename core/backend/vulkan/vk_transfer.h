/* Host <-> device copies: a memcpy where tensor memory is mapped (unified
 * memory), otherwise through a staging buffer and a one-shot command buffer. */
#ifndef YOLO_VK_TRANSFER_H
#define YOLO_VK_TRANSFER_H

#include "backend/vulkan/vk_context.h"

yolo_status yolo_vk_transfer_init(yolo_vk_context *ctx);
void yolo_vk_transfer_destroy(yolo_vk_context *ctx);

/* All wait for pending graph work first and are complete on return. */
yolo_status yolo_vk_upload(yolo_vk_context *ctx, yolo_buffer *buf, size_t offset, const void *data, size_t bytes);
yolo_status yolo_vk_download(yolo_vk_context *ctx, yolo_buffer *buf, size_t offset, void *data, size_t bytes);
/* Several uploads or downloads with one wait and at most one submission. */
yolo_status yolo_vk_copy_many(yolo_vk_context *ctx, bool upload, const yolo_backend_copy *copies, int n);
yolo_status yolo_vk_zero(yolo_vk_context *ctx, yolo_buffer *buf, size_t offset, size_t bytes);

#endif
