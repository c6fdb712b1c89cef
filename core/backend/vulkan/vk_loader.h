/* The Vulkan loader, opened at run time (dlopen "libvulkan.so.1") so that
 * libyolo runs on machines without Vulkan, and the function table every
 * other file of the backend calls through. */
#ifndef YOLO_VK_LOADER_H
#define YOLO_VK_LOADER_H

#define VK_NO_PROTOTYPES
#include <stdbool.h>
#include <stdint.h>
#include <vulkan/vulkan.h>

#include "yolo/error.h"

/* Functions resolved through vkGetInstanceProcAddr once an instance exists. */
#define YOLO_VK_INSTANCE_FNS(X)                                                                                  \
    X(DestroyInstance)                                                                                         \
    X(EnumeratePhysicalDevices)                                                                                \
    X(GetPhysicalDeviceProperties)                                                                             \
    X(GetPhysicalDeviceProperties2)                                                                            \
    X(GetPhysicalDeviceFeatures2)                                                                              \
    X(GetPhysicalDeviceMemoryProperties)                                                                       \
    X(GetPhysicalDeviceQueueFamilyProperties)                                                                  \
    X(EnumerateDeviceExtensionProperties)                                                                      \
    X(CreateDevice)                                                                                            \
    X(DestroyDevice)                                                                                           \
    X(GetDeviceQueue)                                                                                          \
    X(CreateBuffer)                                                                                            \
    X(DestroyBuffer)                                                                                           \
    X(GetBufferMemoryRequirements)                                                                             \
    X(AllocateMemory)                                                                                          \
    X(FreeMemory)                                                                                              \
    X(BindBufferMemory)                                                                                        \
    X(MapMemory)                                                                                               \
    X(UnmapMemory)                                                                                             \
    X(CreateShaderModule)                                                                                      \
    X(DestroyShaderModule)                                                                                     \
    X(CreateDescriptorSetLayout)                                                                               \
    X(DestroyDescriptorSetLayout)                                                                              \
    X(CreatePipelineLayout)                                                                                    \
    X(DestroyPipelineLayout)                                                                                   \
    X(CreatePipelineCache)                                                                                     \
    X(DestroyPipelineCache)                                                                                    \
    X(CreateComputePipelines)                                                                                  \
    X(DestroyPipeline)                                                                                         \
    X(CreateDescriptorPool)                                                                                    \
    X(DestroyDescriptorPool)                                                                                   \
    X(AllocateDescriptorSets)                                                                                  \
    X(UpdateDescriptorSets)                                                                                    \
    X(CreateCommandPool)                                                                                       \
    X(DestroyCommandPool)                                                                                      \
    X(AllocateCommandBuffers)                                                                                  \
    X(FreeCommandBuffers)                                                                                      \
    X(BeginCommandBuffer)                                                                                      \
    X(EndCommandBuffer)                                                                                        \
    X(CmdBindPipeline)                                                                                         \
    X(CmdBindDescriptorSets)                                                                                   \
    X(CmdPushConstants)                                                                                        \
    X(CmdDispatch)                                                                                             \
    X(CmdPipelineBarrier)                                                                                      \
    X(CmdCopyBuffer)                                                                                           \
    X(CmdFillBuffer)                                                                                           \
    X(QueueSubmit)                                                                                             \
    X(DeviceWaitIdle)                                                                                          \
    X(CreateFence)                                                                                             \
    X(DestroyFence)                                                                                            \
    X(WaitForFences)                                                                                           \
    X(ResetFences)                                                                                             \
    X(GetFenceStatus)

/* Optional (NULL without their extension): debug utils; the cooperative
 * matrix shapes a device offers (VK_NV_cooperative_matrix). */
#define YOLO_VK_OPTIONAL_FNS(X)                                                                                  \
    X(CreateDebugUtilsMessengerEXT) X(DestroyDebugUtilsMessengerEXT) X(GetPhysicalDeviceCooperativeMatrixPropertiesNV)

typedef struct yolo_vk_fns {
#define YOLO_VK_FN_FIELD(name) PFN_vk##name name;
    YOLO_VK_INSTANCE_FNS(YOLO_VK_FN_FIELD)
    YOLO_VK_OPTIONAL_FNS(YOLO_VK_FN_FIELD)
#undef YOLO_VK_FN_FIELD
} yolo_vk_fns;

/* An instance with its function table and optional validation messenger. */
typedef struct yolo_vk_instance {
    VkInstance instance;
    uint32_t api_version; /* the instance's (<= loader's) */
    bool validation;      /* the Khronos validation layer is active */
    VkDebugUtilsMessengerEXT messenger;
    yolo_vk_fns fn;
} yolo_vk_instance;

/* Opens libvulkan.so.1 once per process. On failure returns
 * YOLO_ERR_BACKEND with a message saying why (and what to install). */
yolo_status yolo_vk_load(void);

/* Creates an instance. With `allow_validation`, the Khronos validation
 * layer (and its synchronization validation) is enabled when YOLO_VK_VALIDATE=1
 * or VK_INSTANCE_LAYERS names it; every message it emits is printed and
 * counted (yolo_vk_validation_messages). */
yolo_status yolo_vk_instance_create(bool allow_validation, yolo_vk_instance *out);
void yolo_vk_instance_destroy(yolo_vk_instance *inst);

/* Messages the validation layer emitted in this process (warnings and errors). */
uint64_t yolo_vk_validation_messages(void);

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc. */
const char *yolo_vk_result_name(VkResult r);

#endif
