/* Backend selection by device string and allocation bookkeeping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

/* The Vulkan device index of "N" or "vulkan:N" (Ultralytics' GPU index
 * device=0 is Vulkan device 0 here, as device=0,1 names ranks' devices);
 * -1 when the text is neither. */
static long vulkan_index(const char *device) {
    const char *digits = strncmp(device, "vulkan:", 7) == 0 ? device + 7 : device;
    size_t n = strspn(digits, "0123456789");
    if (n == 0 || n > 4 || digits[n] != '\0') return -1;
    long index = strtol(digits, NULL, 10);
    return index <= 1024 ? index : -1;
}

yolo_status yolo_backend_check_device(const char *device) {
    if (!device || !*device || strcmp(device, "cpu") == 0 || strcmp(device, "vulkan") == 0) return YOLO_OK;
    if (vulkan_index(device) >= 0) return YOLO_OK;
    if (strncmp(device, "cuda", 4) == 0 || strcmp(device, "mps") == 0)
        return yolo_error(YOLO_ERR_ARG,
                          "device=%s: CUDA and MPS are not built; GPUs run through Vulkan: device=0 (vulkan:0), "
                          "device=0,1 for DDP, or device=vulkan for the first GPU ('yolo checks' lists them)",
                          device);
    if (strncmp(device, "vulkan:", 7) == 0)
        return yolo_error(YOLO_ERR_ARG, "device=%s: expected vulkan:N with N a device index (0 to 1024)", device);
    return yolo_error(YOLO_ERR_ARG, "device=%s: unknown device (use cpu, vulkan, vulkan:N or N)", device);
}

yolo_status yolo_backend_create(const char *device, int threads, yolo_backend **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_backend_create: out is NULL");
    *out = NULL;
    yolo_status st = yolo_backend_check_device(device);
    if (st) return st;
    if (!device || !*device || strcmp(device, "cpu") == 0) return yolo_cpu_backend_create(threads, out);
    return yolo_vulkan_backend_create((int)vulkan_index(device), out); /* "vulkan": -1, the first GPU */
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
