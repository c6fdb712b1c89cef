/* Placeholder until the Vulkan backend lands (issue 3): reports itself as
 * not built, so device=vulkan is a clear error. */
#include <stdio.h>

#include "backend/backend.h"

yolo_status yolo_vulkan_backend_create(int device_index, yolo_backend **out) {
    (void)device_index;
    *out = NULL;
    return yolo_error(YOLO_ERR_UNSUPPORTED, "device=vulkan: the Vulkan backend is not built yet");
}
