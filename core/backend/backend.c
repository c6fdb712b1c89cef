/* Backend selection by device string and allocation bookkeeping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

yolo_status yolo_backend_create(const char *device, int threads, yolo_backend **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_backend_create: out is NULL");
    *out = NULL;
    if (!device || !*device || strcmp(device, "cpu") == 0) return yolo_cpu_backend_create(threads, out);
    if (strcmp(device, "vulkan") == 0) return yolo_vulkan_backend_create(-1, out);
    /* Ultralytics' GPU index (device=0): here Vulkan device N, as device=0,1 already names ranks' devices */
    if (strspn(device, "0123456789") == strlen(device)) {
        char vk[64];
        snprintf(vk, sizeof vk, "vulkan:%.40s", device);
        return yolo_backend_create(vk, threads, out);
    }
    if (strncmp(device, "cuda", 4) == 0 || strcmp(device, "mps") == 0)
        return yolo_error(YOLO_ERR_ARG,
                          "device=%s: CUDA and MPS are not built; GPUs run through Vulkan: device=0 (vulkan:0), "
                          "device=0,1 for DDP, or device=vulkan for the first GPU ('yolo checks' lists them)",
                          device);
    if (strncmp(device, "vulkan:", 7) == 0) {
        char *end = NULL;
        long index = strtol(device + 7, &end, 10);
        if (end == device + 7 || *end != '\0' || index < 0 || index > 1024)
            return yolo_error(YOLO_ERR_ARG, "device=%s: expected vulkan:N with N a device index", device);
        return yolo_vulkan_backend_create((int)index, out);
    }
    return yolo_error(YOLO_ERR_ARG, "device=%s: unknown device (use cpu, vulkan, vulkan:N or N)", device);
}

void yolo_backend_free(yolo_backend *backend) {
    if (backend) backend->ops->destroy(backend);
}

const char *yolo_backend_name(const yolo_backend *backend) { return backend ? backend->name : "(none)"; }

bool yolo_backend_supports(const yolo_backend *backend, yolo_backend_capability cap) {
    return backend && backend->ops->supports && backend->ops->supports(backend, cap);
}

int yolo_backend_channel_block(const yolo_backend *backend) {
    return backend && backend->ops->channel_block ? backend->ops->channel_block(backend) : 0;
}

size_t yolo_backend_max_buffer_bytes(const yolo_backend *backend) {
    return backend->ops->max_buffer_bytes ? backend->ops->max_buffer_bytes(backend) : 0;
}

size_t yolo_backend_device_memory_bytes(const yolo_backend *backend) {
    return backend->ops->device_memory_bytes ? backend->ops->device_memory_bytes(backend) : 0;
}

size_t yolo_backend_allocated_bytes(const yolo_backend *backend) { return backend->allocated_bytes; }

size_t yolo_backend_peak_bytes(const yolo_backend *backend) { return backend->peak_bytes; }

void yolo_backend_count_alloc(yolo_backend *backend, size_t bytes) {
    backend->allocated_bytes += bytes;
    if (backend->allocated_bytes > backend->peak_bytes) backend->peak_bytes = backend->allocated_bytes;
}

void yolo_backend_count_free(yolo_backend *backend, size_t bytes) {
    backend->allocated_bytes -= bytes < backend->allocated_bytes ? bytes : backend->allocated_bytes;
}

bool yolo_backend_set_amp_format(yolo_backend *backend, yolo_amp_format want) {
    if (!backend) return false;
    backend->amp = false;
    if (backend->ops->set_amp)
        backend->amp = backend->ops->set_amp(backend, want, backend->precision, sizeof backend->precision);
    else if (want != YOLO_AMP_OFF)
        snprintf(backend->precision, sizeof backend->precision,
                 "fp32 (amp=%s, but %s has no mixed-precision kernels yet)", yolo_amp_format_word(want), backend->name);
    else
        snprintf(backend->precision, sizeof backend->precision, "fp32 (amp=False)");
    return backend->amp;
}

bool yolo_backend_set_amp(yolo_backend *backend, bool want) {
    return yolo_backend_set_amp_format(backend, want ? YOLO_AMP_AUTO : YOLO_AMP_OFF);
}

const char *yolo_backend_precision(const yolo_backend *backend) {
    if (!backend) return "(no backend)";
    return backend->precision[0] ? backend->precision : "fp32 (amp not set)";
}

yolo_bf16_activations yolo_bf16_activations_policy(void) {
    const char *v = getenv("YOLO_BF16_ACTIVATIONS");
    if (v && strcmp(v, "off") == 0) return YOLO_BF16_ACTIVATIONS_OFF;
    if (v && strcmp(v, "all") == 0) return YOLO_BF16_ACTIVATIONS_ALL;
    return YOLO_BF16_ACTIVATIONS_SILU;
}
