/* dlopen of the Vulkan loader, instance creation with optional validation. */
#include "backend/vulkan/vk_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static void *loader_lib;
static char load_error[512];
static PFN_vkGetInstanceProcAddr get_instance_proc;
static PFN_vkCreateInstance create_instance;
static PFN_vkEnumerateInstanceExtensionProperties enum_instance_extensions;
static PFN_vkEnumerateInstanceLayerProperties enum_instance_layers;
static PFN_vkEnumerateInstanceVersion enum_instance_version; /* NULL on a 1.0 loader */
static atomic_uint_fast64_t validation_messages;

static void load_library(void) {
    /* The library stays open for the life of the process: drivers register
     * atexit handlers and thread-local state that dlclose would pull away. */
    loader_lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader_lib) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error,
                 "the Vulkan loader libvulkan.so.1 could not be opened (%s); install the Debian package libvulkan1 "
                 "and a driver (mesa-vulkan-drivers provides the lavapipe CPU device)",
                 why ? why : "not found");
        return;
    }
    get_instance_proc = (PFN_vkGetInstanceProcAddr)dlsym(loader_lib, "vkGetInstanceProcAddr");
    if (!get_instance_proc) {
        snprintf(load_error, sizeof load_error, "libvulkan.so.1 has no vkGetInstanceProcAddr");
        return;
    }
    create_instance = (PFN_vkCreateInstance)get_instance_proc(NULL, "vkCreateInstance");
    enum_instance_extensions =
        (PFN_vkEnumerateInstanceExtensionProperties)get_instance_proc(NULL, "vkEnumerateInstanceExtensionProperties");
    enum_instance_layers =
        (PFN_vkEnumerateInstanceLayerProperties)get_instance_proc(NULL, "vkEnumerateInstanceLayerProperties");
    enum_instance_version = (PFN_vkEnumerateInstanceVersion)get_instance_proc(NULL, "vkEnumerateInstanceVersion");
    if (!create_instance || !enum_instance_extensions || !enum_instance_layers) {
        snprintf(load_error, sizeof load_error, "libvulkan.so.1 lacks the global Vulkan entry points");
        get_instance_proc = NULL;
    }
}

yolo_status yolo_vk_load(void) {
    pthread_once(&load_once, load_library);
    if (!get_instance_proc) return yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: %s", load_error);
    return YOLO_OK;
}

uint64_t yolo_vk_validation_messages(void) { return (uint64_t)atomic_load(&validation_messages); }

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                           VkDebugUtilsMessageTypeFlagsEXT type,
                                                           const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                           void *user) {
    (void)user;
    (void)type;
    atomic_fetch_add(&validation_messages, 1);
    fprintf(stderr, "vulkan validation %s: %s\n",
            (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? "error" : "warning",
            data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
}

/* The shared objects mapped at one moment, by name. */
typedef struct {
    char **names;
    size_t n, cap;
} object_list;

static int list_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    object_list *list = data;
    if (!info->dlpi_name || !*info->dlpi_name) return 0;
    if (list->n == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 64;
        char **grown = realloc(list->names, cap * sizeof *grown);
        if (!grown) return 1;
        list->names = grown;
        list->cap = cap;
    }
    char *copy = strdup(info->dlpi_name);
    if (!copy) return 1;
    list->names[list->n++] = copy;
    return 0;
}

static void object_list_free(object_list *list) {
    for (size_t i = 0; i < list->n; i++) free(list->names[i]);
    free(list->names);
    memset(list, 0, sizeof *list);
}

/* Keeps every library that instance creation loaded (drivers, layers and what
 * they link) for the life of the process. The loader unloads them with the
 * instance; their process-lifetime caches then point nowhere (leak checkers
 * report them as leaks of an unknown module: lavapipe's of Mesa 22.3.6 does)
 * and the next instance would load and initialise the whole driver again. */
static void pin_loaded_since(const object_list *before) {
    object_list now = {0};
    dl_iterate_phdr(list_object, &now);
    for (size_t i = 0; i < now.n; i++) {
        bool known = false;
        for (size_t j = 0; j < before->n && !known; j++) known = strcmp(now.names[i], before->names[j]) == 0;
        if (!known) dlopen(now.names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    }
    object_list_free(&now);
}

static bool has_extension(const VkExtensionProperties *ext, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(ext[i].extensionName, name) == 0) return true;
    return false;
}

static bool validation_wanted(void) {
    const char *v = getenv("YOLO_VK_VALIDATE");
    if (v && *v && strcmp(v, "0") != 0) return true;
    const char *layers = getenv("VK_INSTANCE_LAYERS");
    return layers && strstr(layers, VALIDATION_LAYER);
}

static bool layer_present(const char *name) {
    uint32_t n = 0;
    if (enum_instance_layers(&n, NULL) != VK_SUCCESS || n == 0) return false;
    VkLayerProperties *props = calloc(n, sizeof *props);
    if (!props) return false;
    bool found = false;
    if (enum_instance_layers(&n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(props[i].layerName, name) == 0) found = true;
    free(props);
    return found;
}

/* Extensions offered by the loader (layer NULL) or by one layer. */
static VkExtensionProperties *list_extensions(const char *layer, uint32_t *n) {
    *n = 0;
    if (enum_instance_extensions(layer, n, NULL) != VK_SUCCESS || *n == 0) return NULL;
    VkExtensionProperties *ext = calloc(*n, sizeof *ext);
    if (ext && enum_instance_extensions(layer, n, ext) != VK_SUCCESS) {
        free(ext);
        ext = NULL;
        *n = 0;
    }
    return ext;
}

static yolo_status create_instance_from(bool allow_validation, const object_list *before, yolo_vk_instance *out);

yolo_status yolo_vk_instance_create(bool allow_validation, yolo_vk_instance *out) {
    /* The loader opens drivers already when it is asked for its extensions */
    object_list before = {0};
    dl_iterate_phdr(list_object, &before);
    yolo_status st = create_instance_from(allow_validation, &before, out);
    object_list_free(&before);
    return st;
}

static yolo_status create_instance_from(bool allow_validation, const object_list *before, yolo_vk_instance *out) {
    memset(out, 0, sizeof *out);
    yolo_status st = yolo_vk_load();
    if (st != YOLO_OK) return st;

    uint32_t loader_version = VK_API_VERSION_1_0;
    if (enum_instance_version) enum_instance_version(&loader_version);
    if (loader_version < VK_API_VERSION_1_1)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: the loader supports Vulkan %u.%u, 1.1 is required",
                          VK_API_VERSION_MAJOR(loader_version), VK_API_VERSION_MINOR(loader_version));
    uint32_t api = loader_version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;

    const char *exts[4];
    uint32_t n_exts = 0;
    const char *layers[1];
    uint32_t n_layers = 0;
    uint32_t n_loader_ext = 0;
    VkExtensionProperties *loader_ext = list_extensions(NULL, &n_loader_ext);
    VkInstanceCreateFlags flags = 0;
    /* MoltenVK and other portability drivers are only listed on request. */
    if (has_extension(loader_ext, n_loader_ext, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
        exts[n_exts++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
        flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
    }
    bool sync_validation = false, debug_utils = false;
    if (allow_validation && validation_wanted()) {
        if (layer_present(VALIDATION_LAYER)) {
            layers[n_layers++] = VALIDATION_LAYER;
            uint32_t n_layer_ext = 0;
            VkExtensionProperties *layer_ext = list_extensions(VALIDATION_LAYER, &n_layer_ext);
            if (has_extension(layer_ext, n_layer_ext, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
                exts[n_exts++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
                sync_validation = true;
            }
            if (has_extension(layer_ext, n_layer_ext, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
                has_extension(loader_ext, n_loader_ext, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
                exts[n_exts++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
                debug_utils = true;
            }
            free(layer_ext);
        } else {
            fprintf(stderr, "vulkan: validation requested but %s is not installed (Debian package "
                            "vulkan-validationlayers); running without it\n", VALIDATION_LAYER);
        }
    }
    free(loader_ext);

    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "yolo",
                             .pEngineName = "yolo",
                             .apiVersion = api};
    VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                        .enabledValidationFeatureCount = 1,
                                        .pEnabledValidationFeatures = enables};
    /* Chained into the create info, the messenger also covers instance creation itself. */
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .pNext = sync_validation ? &features : NULL,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        /* not GENERAL: the loader reports there that VK_INSTANCE_LAYERS added a layer */
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation_message};
    VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                 .pNext = debug_utils ? (const void *)&messenger_info
                                                      : sync_validation ? (const void *)&features : NULL,
                                 .flags = flags,
                                 .pApplicationInfo = &app,
                                 .enabledLayerCount = n_layers,
                                 .ppEnabledLayerNames = layers,
                                 .enabledExtensionCount = n_exts,
                                 .ppEnabledExtensionNames = exts};
    VkResult r = create_instance(&info, NULL, &out->instance);
    pin_loaded_since(before); /* a failed creation may have opened drivers too */
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: no Vulkan driver found (vkCreateInstance: %s); install "
                          "a GPU driver, or the Debian package mesa-vulkan-drivers for the lavapipe CPU device",
                          yolo_vk_result_name(r));
    if (r != VK_SUCCESS)
        return yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: vkCreateInstance failed (%s)", yolo_vk_result_name(r));
    out->api_version = api;
    out->validation = n_layers > 0;

#define YOLO_VK_LOAD_FN(name) out->fn.name = (PFN_vk##name)get_instance_proc(out->instance, "vk" #name);
    YOLO_VK_INSTANCE_FNS(YOLO_VK_LOAD_FN)
    YOLO_VK_OPTIONAL_FNS(YOLO_VK_LOAD_FN)
#undef YOLO_VK_LOAD_FN
#define YOLO_VK_CHECK_FN(name)                                                                                    \
    if (!out->fn.name) missing = "vk" #name;
    const char *missing = NULL;
    YOLO_VK_INSTANCE_FNS(YOLO_VK_CHECK_FN)
#undef YOLO_VK_CHECK_FN
    if (missing) {
        PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance)get_instance_proc(out->instance, "vkDestroyInstance");
        if (destroy) destroy(out->instance, NULL);
        out->instance = VK_NULL_HANDLE;
        return yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: the loader does not provide %s", missing);
    }
    if (debug_utils && out->fn.CreateDebugUtilsMessengerEXT) {
        messenger_info.pNext = NULL;
        r = out->fn.CreateDebugUtilsMessengerEXT(out->instance, &messenger_info, NULL, &out->messenger);
        if (r != VK_SUCCESS) out->messenger = VK_NULL_HANDLE;
    }
    return YOLO_OK;
}

void yolo_vk_instance_destroy(yolo_vk_instance *inst) {
    if (!inst || !inst->instance) return;
    if (inst->messenger && inst->fn.DestroyDebugUtilsMessengerEXT)
        inst->fn.DestroyDebugUtilsMessengerEXT(inst->instance, inst->messenger, NULL);
    inst->fn.DestroyInstance(inst->instance, NULL);
    memset(inst, 0, sizeof *inst);
}

const char *yolo_vk_result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VK_ERROR_UNKNOWN";
    }
}
