/* Physical-device capabilities, device selection and the logical device. */
#ifndef YOLO_VK_DEVICE_H
#define YOLO_VK_DEVICE_H

#include <stddef.h>

#include "backend/vulkan/vk_loader.h"

/* What one physical device offers, probed once. */
typedef struct yolo_vk_caps {
    VkPhysicalDevice phys;
    int index; /* position in vkEnumeratePhysicalDevices */
    char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    char driver[VK_MAX_DRIVER_NAME_SIZE + VK_MAX_DRIVER_INFO_SIZE + 4];
    uint32_t vendor_id, api_version, driver_version;
    VkDriverId driver_id; /* 0 when the driver does not say */
    VkPhysicalDeviceType type;
    VkPhysicalDeviceLimits limits;
    VkPhysicalDeviceMemoryProperties memory;
    uint64_t device_local_bytes;
    uint64_t max_allocation_bytes; /* maxMemoryAllocationSize (YOLO_VK_MAX_ALLOCATION_BYTES lowers it) */
    uint64_t max_buffer_bytes;     /* maxBufferSize (Vulkan 1.3), 0 when the device does not say */
    uint32_t subgroup_size;
    bool subgroup_arithmetic; /* in compute shaders */
    bool storage16;           /* storageBuffer16BitAccess */
    bool float16;             /* shaderFloat16 */
    bool float16_core;        /* shaderFloat16 can be enabled without an extension (Vulkan 1.2) */
    bool coop_matrix;         /* what the *_coop GEMM kernels need (VK_NV_cooperative_matrix, below) */
    char coop_missing[96];    /* what it lacks, when !coop_matrix */
    bool portability_subset;
    int queue_family;         /* a compute family, -1 when none */
    bool usable;
    char unusable[160];       /* why not, when !usable */
} yolo_vk_caps;

/* The largest buffer the device can back: maxMemoryAllocationSize, or
 * maxBufferSize where smaller; 0 when it says neither. */
uint64_t yolo_vk_largest_buffer(const yolo_vk_caps *c);

/* Probes every physical device of `inst` (*out: malloc'ed array, n entries). */
yolo_status yolo_vk_enumerate(const yolo_vk_instance *inst, yolo_vk_caps **out, int *n);

/* The default choice: the first usable discrete GPU, else integrated, else
 * virtual, else any usable device; -1 when none is usable. */
int yolo_vk_pick_default(const yolo_vk_caps *caps, int n);

/* Human-readable vendor name ("NVIDIA", "Mesa", ...). */
const char *yolo_vk_vendor_name(uint32_t vendor_id);
const char *yolo_vk_type_name(VkPhysicalDeviceType type);

/* A logical device with one compute queue. */
typedef struct yolo_vk_device {
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    bool f16_storage; /* 16-bit storage enabled (and not switched off) */
    bool float16;     /* shaderFloat16 enabled: fp16 arithmetic and fp16 shared memory */
    bool coop_matrix; /* VK_NV_cooperative_matrix and the Vulkan memory model enabled */
} yolo_vk_device;

/* Creates the device; 16-bit storage and fp16 arithmetic are enabled when
 * offered and YOLO_VK_DISABLE_F16 is unset (or 0), cooperative matrices
 * (caps->coop_matrix) when YOLO_VK_DISABLE_COOPMAT is unset too. */
yolo_status yolo_vk_device_open(const yolo_vk_instance *inst, const yolo_vk_caps *caps, yolo_vk_device *out);
void yolo_vk_device_close(const yolo_vk_instance *inst, yolo_vk_device *dev);

/* True when the environment variable is set to something other than "0". */
bool yolo_vk_env_flag(const char *name);

#endif
