/* Probing physical devices, choosing one, creating the logical device, and
 * the one-line-per-device report of `yolo checks`. */
#include "backend/vulkan/vk_device.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

bool yolo_vk_env_flag(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

const char *yolo_vk_vendor_name(uint32_t vendor_id) {
    switch (vendor_id) {
    case 0x10DE: return "NVIDIA";
    case 0x1002: return "AMD";
    case 0x1022: return "AMD";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x106B: return "Apple";
    case 0x10005: return "Mesa";
    case 0x1AE0: return "Google";
    case 0x14E4: return "Broadcom";
    default: return "unknown vendor";
    }
}

const char *yolo_vk_type_name(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static bool has_device_extension(const VkExtensionProperties *ext, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(ext[i].extensionName, name) == 0) return true;
    return false;
}

/* Whether the *_coop GEMM kernels (shaders/gemm_coop.glsl) can run: a
 * subgroup-scope 16x16x16 fp16 x fp16 + fp32 cooperative matrix, subgroups
 * of 32 (4 per 128-invocation workgroup), fp16 arithmetic and storage, the
 * Vulkan memory model the extension's GLSL needs, and 24 KiB of shared
 * memory. c->coop_missing says what is lacking. */
static void probe_coop_matrix(const yolo_vk_instance *inst, yolo_vk_caps *c, bool ext, bool feature,
                              bool memory_model, bool subgroup_basic) {
    const char *missing = NULL;
    const PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV shapes =
        inst->fn.GetPhysicalDeviceCooperativeMatrixPropertiesNV;
    if (!ext || !shapes)
        missing = "no VK_NV_cooperative_matrix";
    else if (!feature)
        missing = "cooperativeMatrix feature off";
    else if (!memory_model)
        missing = "no vulkanMemoryModel";
    else if (!c->float16 || !c->storage16)
        missing = "no fp16 arithmetic and storage";
    else if (c->subgroup_size != 32 || !subgroup_basic)
        missing = "subgroups are not 32 wide";
    else if (c->limits.maxComputeSharedMemorySize < 24576 || c->limits.maxComputeWorkGroupInvocations < 128)
        missing = "less than 24 KiB of shared memory";
    if (!missing) {
        uint32_t n = 0;
        VkCooperativeMatrixPropertiesNV *p = NULL;
        if (shapes(c->phys, &n, NULL) == VK_SUCCESS && n && (p = calloc(n, sizeof *p))) {
            for (uint32_t i = 0; i < n; i++) p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
            if (shapes(c->phys, &n, p) != VK_SUCCESS) n = 0;
        }
        bool found = false;
        for (uint32_t i = 0; p && i < n && !found; i++)
            found = p[i].MSize == 16 && p[i].NSize == 16 && p[i].KSize == 16 &&
                    p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV && p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                    p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV && p[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                    p[i].scope == VK_SCOPE_SUBGROUP_NV;
        free(p);
        if (!found) missing = "no 16x16x16 fp16 x fp16 + fp32 subgroup shape";
    }
    c->coop_matrix = missing == NULL;
    snprintf(c->coop_missing, sizeof c->coop_missing, "%s", missing ? missing : "");
}

static void probe(const yolo_vk_instance *inst, VkPhysicalDevice phys, int index, yolo_vk_caps *c) {
    const yolo_vk_fns *vk = &inst->fn;
    memset(c, 0, sizeof *c);
    c->phys = phys;
    c->index = index;
    c->queue_family = -1;
    VkPhysicalDeviceProperties props;
    vk->GetPhysicalDeviceProperties(phys, &props);
    snprintf(c->name, sizeof c->name, "%s", props.deviceName);
    c->vendor_id = props.vendorID;
    c->api_version = props.apiVersion;
    c->driver_version = props.driverVersion;
    c->type = props.deviceType;
    c->limits = props.limits;
    if (props.apiVersion < VK_API_VERSION_1_1) {
        snprintf(c->unusable, sizeof c->unusable, "supports Vulkan %u.%u only, 1.1 is required",
                 VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion));
        return;
    }
    /* Structures of Vulkan 1.2 (or their extensions) are chained only where the
     * device has them, so that validation stays quiet on 1.1 devices. */
    uint32_t n_ext = 0;
    VkExtensionProperties *ext = NULL;
    if (vk->EnumerateDeviceExtensionProperties(phys, NULL, &n_ext, NULL) == VK_SUCCESS && n_ext) {
        ext = calloc(n_ext, sizeof *ext);
        if (!ext || vk->EnumerateDeviceExtensionProperties(phys, NULL, &n_ext, ext) != VK_SUCCESS) n_ext = 0;
    }
    const bool v12 = props.apiVersion >= VK_API_VERSION_1_2 && inst->api_version >= VK_API_VERSION_1_2;
    const bool driver_props = v12 || has_device_extension(ext, n_ext, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
    const bool float16_ext = v12 || has_device_extension(ext, n_ext, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    c->portability_subset = has_device_extension(ext, n_ext, "VK_KHR_portability_subset");
    const bool coop_ext = v12 && has_device_extension(ext, n_ext, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    free(ext);

    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                              .pNext = driver_props ? &drv : NULL};
    VkPhysicalDeviceMaintenance3Properties m3 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES,
                                                 .pNext = &sub};
    const bool v13 = props.apiVersion >= VK_API_VERSION_1_3 && inst->api_version >= VK_API_VERSION_1_3;
    VkPhysicalDeviceMaintenance4Properties m4 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES,
                                                 .pNext = &m3};
    VkPhysicalDeviceProperties2 props2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                          .pNext = v13 ? (void *)&m4 : (void *)&m3};
    vk->GetPhysicalDeviceProperties2(phys, &props2);
    c->max_allocation_bytes = m3.maxMemoryAllocationSize;
    c->max_buffer_bytes = v13 ? m4.maxBufferSize : 0;
    c->subgroup_size = sub.subgroupSize;
    c->subgroup_arithmetic = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                             (sub.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
    if (driver_props) {
        c->driver_id = drv.driverID;
        snprintf(c->driver, sizeof c->driver, "%s %s", drv.driverName, drv.driverInfo);
    } else {
        snprintf(c->driver, sizeof c->driver, "version 0x%x", props.driverVersion);
    }

    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceVulkanMemoryModelFeatures memory_model = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, .pNext = &coop};
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
        .pNext = coop_ext ? &memory_model : NULL};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .pNext = float16_ext ? &f16 : NULL};
    VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
    vk->GetPhysicalDeviceFeatures2(phys, &feats);
    c->storage16 = s16.storageBuffer16BitAccess;
    c->float16 = f16.shaderFloat16;
    c->float16_core = v12;
    probe_coop_matrix(inst, c, coop_ext, coop.cooperativeMatrix, memory_model.vulkanMemoryModel,
                      (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                          (sub.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT));

    vk->GetPhysicalDeviceMemoryProperties(phys, &c->memory);
    for (uint32_t h = 0; h < c->memory.memoryHeapCount; h++)
        if (c->memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
            c->device_local_bytes += c->memory.memoryHeaps[h].size;

    uint32_t n_fam = 0;
    vk->GetPhysicalDeviceQueueFamilyProperties(phys, &n_fam, NULL);
    VkQueueFamilyProperties *fam = n_fam ? calloc(n_fam, sizeof *fam) : NULL;
    if (fam) {
        vk->GetPhysicalDeviceQueueFamilyProperties(phys, &n_fam, fam);
        /* A compute family without graphics runs beside the display's work. */
        for (uint32_t i = 0; i < n_fam && c->queue_family < 0; i++)
            if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(fam[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
                fam[i].queueCount > 0)
                c->queue_family = (int)i;
        for (uint32_t i = 0; i < n_fam && c->queue_family < 0; i++)
            if ((fam[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && fam[i].queueCount > 0) c->queue_family = (int)i;
        free(fam);
    }
    if (c->queue_family < 0) {
        snprintf(c->unusable, sizeof c->unusable, "has no compute queue");
        return;
    }
    if (c->limits.maxPushConstantsSize < 128 || c->limits.maxPerStageDescriptorStorageBuffers < 8) {
        snprintf(c->unusable, sizeof c->unusable, "offers %u bytes of push constants and %u storage buffers per "
                 "stage (128 and 8 needed)", c->limits.maxPushConstantsSize,
                 c->limits.maxPerStageDescriptorStorageBuffers);
        return;
    }
    c->usable = true;
}

yolo_status yolo_vk_enumerate(const yolo_vk_instance *inst, yolo_vk_caps **out, int *n) {
    *out = NULL;
    *n = 0;
    uint32_t count = 0;
    VkResult r = inst->fn.EnumeratePhysicalDevices(inst->instance, &count, NULL);
    if (r != VK_SUCCESS)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan: vkEnumeratePhysicalDevices failed (%s)", yolo_vk_result_name(r));
    if (count == 0) return YOLO_OK;
    VkPhysicalDevice *phys = calloc(count, sizeof *phys);
    yolo_vk_caps *caps = calloc(count, sizeof *caps);
    if (!phys || !caps) {
        free(phys);
        free(caps);
        return yolo_error(YOLO_ERR_NOMEM, "vulkan: out of host memory listing devices");
    }
    r = inst->fn.EnumeratePhysicalDevices(inst->instance, &count, phys);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        free(phys);
        free(caps);
        return yolo_error(YOLO_ERR_BACKEND, "vulkan: vkEnumeratePhysicalDevices failed (%s)", yolo_vk_result_name(r));
    }
    for (uint32_t i = 0; i < count; i++) probe(inst, phys[i], (int)i, &caps[i]);
    free(phys);
    *out = caps;
    *n = (int)count;
    return YOLO_OK;
}

int yolo_vk_pick_default(const yolo_vk_caps *caps, int n) {
    static const VkPhysicalDeviceType order[] = {VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU,
                                                 VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU,
                                                 VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        for (int i = 0; i < n; i++)
            if (caps[i].usable && caps[i].type == order[k]) return i;
    for (int i = 0; i < n; i++)
        if (caps[i].usable) return i;
    return -1;
}

yolo_status yolo_vk_device_open(const yolo_vk_instance *inst, const yolo_vk_caps *caps, yolo_vk_device *out) {
    memset(out, 0, sizeof *out);
    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                     .queueFamilyIndex = (uint32_t)caps->queue_family,
                                     .queueCount = 1,
                                     .pQueuePriorities = &priority};
    const bool f16 = !yolo_vk_env_flag("YOLO_VK_DISABLE_F16");
    out->f16_storage = caps->storage16 && f16;
    out->float16 = caps->float16 && caps->float16_core && f16;
    out->coop_matrix = caps->coop_matrix && out->f16_storage && out->float16 &&
                       !yolo_vk_env_flag("YOLO_VK_DISABLE_COOPMAT");
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV, .cooperativeMatrix = VK_TRUE};
    VkPhysicalDeviceVulkanMemoryModelFeatures memory_model = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES, .pNext = &coop,
        .vulkanMemoryModel = VK_TRUE};
    VkPhysicalDeviceShaderFloat16Int8Features f16_arith = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
        .pNext = out->coop_matrix ? &memory_model : NULL, .shaderFloat16 = VK_TRUE};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .pNext = out->float16 ? &f16_arith : NULL,
                                                .storageBuffer16BitAccess = out->f16_storage};
    VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &s16};
    const char *exts[2];
    uint32_t n_exts = 0;
    if (caps->portability_subset) exts[n_exts++] = "VK_KHR_portability_subset";
    if (out->coop_matrix) exts[n_exts++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                               .pNext = &feats,
                               .queueCreateInfoCount = 1,
                               .pQueueCreateInfos = &queue,
                               .enabledExtensionCount = n_exts,
                               .ppEnabledExtensionNames = exts};
    VkResult r = inst->fn.CreateDevice(caps->phys, &info, NULL, &out->device);
    if (r != VK_SUCCESS)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan:%d (%s): vkCreateDevice failed (%s)", caps->index, caps->name,
                          yolo_vk_result_name(r));
    out->queue_family = (uint32_t)caps->queue_family;
    inst->fn.GetDeviceQueue(out->device, out->queue_family, 0, &out->queue);
    return YOLO_OK;
}

void yolo_vk_device_close(const yolo_vk_instance *inst, yolo_vk_device *dev) {
    if (!dev->device) return;
    inst->fn.DestroyDevice(dev->device, NULL);
    memset(dev, 0, sizeof *dev);
}

/* ---- yolo checks ---- */

static size_t append(char *buf, size_t size, size_t used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static size_t append(char *buf, size_t size, size_t used, const char *fmt, ...) {
    if (used >= size) return used;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
    return k < 0 ? used : used + (size_t)k;
}

/* The reason in an error message, without its "vulkan unavailable: " prefix. */
static const char *reason(void) {
    const char *msg = yolo_last_error();
    const char *prefix = "vulkan unavailable: ";
    return strncmp(msg, prefix, strlen(prefix)) == 0 ? msg + strlen(prefix) : msg;
}

uint64_t yolo_vk_largest_buffer(const yolo_vk_caps *c) {
    uint64_t m = c->max_allocation_bytes;
    if (c->max_buffer_bytes && (!m || c->max_buffer_bytes < m)) m = c->max_buffer_bytes;
    return m;
}

void yolo_vulkan_report(char *buf, size_t size) {
    if (!buf || size == 0) return;
    buf[0] = '\0';
    yolo_vk_instance inst;
    if (yolo_vk_instance_create(false, &inst) != YOLO_OK) {
        snprintf(buf, size, "vulkan: unavailable (%s)\n", reason());
        return;
    }
    yolo_vk_caps *caps = NULL;
    int n = 0;
    if (yolo_vk_enumerate(&inst, &caps, &n) != YOLO_OK) {
        snprintf(buf, size, "vulkan: unavailable (%s)\n", reason());
        yolo_vk_instance_destroy(&inst);
        return;
    }
    if (n == 0)
        snprintf(buf, size, "vulkan: unavailable (no Vulkan device found: install a GPU driver, or the Debian "
                             "package mesa-vulkan-drivers for the lavapipe CPU device)\n");
    int pick = yolo_vk_pick_default(caps, n);
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        const yolo_vk_caps *c = &caps[i];
        used = append(buf, size, used, "vulkan:%d%s %s (%s, %s), Vulkan %u.%u, driver %s", i,
                      i == pick ? "*" : "", c->name, yolo_vk_vendor_name(c->vendor_id), yolo_vk_type_name(c->type),
                      VK_API_VERSION_MAJOR(c->api_version), VK_API_VERSION_MINOR(c->api_version), c->driver);
        if (!c->usable) {
            used = append(buf, size, used, ": unusable (%s)\n", c->unusable);
            continue;
        }
        const uint64_t largest = yolo_vk_largest_buffer(c);
        used = append(buf, size, used, ", memory %llu MiB", (unsigned long long)(c->device_local_bytes >> 20));
        if (largest) used = append(buf, size, used, " (buffers up to %llu MiB)", (unsigned long long)(largest >> 20));
        used = append(buf, size, used, ", fp16 %s, subgroup %u%s, cooperative matrix ",
                      c->storage16 ? (c->float16 ? "storage+arithmetic" : "storage") : (c->float16 ? "arithmetic" : "no"),
                      c->subgroup_size, c->subgroup_arithmetic ? " (arithmetic)" : "");
        used = c->coop_matrix ? append(buf, size, used, "NV 16x16x16 fp16\n")
                              : append(buf, size, used, "no (%s)\n", c->coop_missing);
    }
    free(caps);
    yolo_vk_instance_destroy(&inst);
}
