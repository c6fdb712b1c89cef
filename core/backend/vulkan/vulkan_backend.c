/* The Vulkan backend: the yolo_backend_ops vtable, device setup and graph
 * runs. A graph run is recorded once into one command buffer and replayed
 * unchanged while the graph's nodes, their storage and their constants stay
 * the same (a signature over them is checked on every run); hyper-parameters
 * live in tensors, so replays follow the schedule. The host waits only
 * before it touches memory (uploads, downloads, frees) or resubmits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_ops.h"
#include "backend/vulkan/vk_transfer.h"

static const yolo_backend_ops vulkan_ops;

static yolo_vk_context *ctx_of(const yolo_backend *b) { return (yolo_vk_context *)b->impl; }

yolo_status yolo_vk_wait_pending(yolo_vk_context *ctx) {
    if (!ctx->pending_fence) return YOLO_OK;
    ctx->stats.graph_waits++;
    VkResult r = ctx->inst.fn.WaitForFences(ctx->dev.device, 1, &ctx->pending_fence, VK_TRUE, UINT64_MAX);
    ctx->pending_fence = VK_NULL_HANDLE;
    /* fences signal in submission order: every earlier run is done too */
    for (yolo_vk_recording *rec = ctx->recordings; rec; rec = rec->next) rec->in_flight = false;
    if (r != VK_SUCCESS)
        return yolo_error(YOLO_ERR_BACKEND, "%s: waiting for the device failed (%s)", ctx->label,
                          yolo_vk_result_name(r));
    return YOLO_OK;
}

yolo_status yolo_vk_wait_for_range(yolo_vk_context *ctx, VkBuffer b, VkDeviceSize lo, VkDeviceSize hi,
                                   bool host_writes) {
    if (!ctx->pending_fence) return YOLO_OK;
    const yolo_vk_fns *vk = &ctx->inst.fn;
    for (yolo_vk_recording *rec = ctx->recordings; rec; rec = rec->next) {
        if (!rec->in_flight) continue;
        if (vk->GetFenceStatus(ctx->dev.device, rec->fence) == VK_SUCCESS) { /* done: nothing to wait for */
            rec->in_flight = false;
            if (rec->fence == ctx->pending_fence) ctx->pending_fence = VK_NULL_HANDLE;
            continue;
        }
        if (yolo_vk_recording_uses(rec, b, lo, hi, !host_writes)) return yolo_vk_wait_pending(ctx);
    }
    return YOLO_OK;
}

/* ---- buffers and copies ---- */

static yolo_status vk_buffer_alloc(yolo_backend *backend, size_t bytes, yolo_buffer **out) {
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    yolo_status st = yolo_vk_memory_alloc(&ctx->mem, bytes, out);
    if (st == YOLO_OK) yolo_backend_count_alloc(backend, bytes);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static void vk_buffer_free(yolo_backend *backend, yolo_buffer *buf) {
    if (!buf) return;
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    yolo_vk_wait_pending(ctx); /* the device may still be using it */
    yolo_backend_count_free(backend, buf->size);
    yolo_vk_memory_free(&ctx->mem, buf);
    pthread_mutex_unlock(&ctx->lock);
}

static yolo_status vk_upload(yolo_backend *backend, yolo_buffer *buf, size_t offset, const void *data, size_t bytes) {
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    yolo_status st = yolo_vk_upload(ctx, buf, offset, data, bytes);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static yolo_status vk_download(yolo_backend *backend, yolo_buffer *buf, size_t offset, void *data, size_t bytes) {
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    yolo_status st = yolo_vk_download(ctx, buf, offset, data, bytes);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static yolo_status vk_copy_many(yolo_backend *backend, bool upload, const yolo_backend_copy *copies, int n) {
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    yolo_status st = yolo_vk_copy_many(ctx, upload, copies, n);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static yolo_status vk_zero(yolo_backend *backend, yolo_buffer *buf, size_t offset, size_t bytes) {
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    yolo_status st = yolo_vk_zero(ctx, buf, offset, bytes);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* ---- graph runs ---- */

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0x100000001b3ull;
}

static uint64_t tensor_sig(uint64_t h, const yolo_tensor *t) {
    h = mix(h, (uint64_t)(uintptr_t)t);
    h = mix(h, t->buffer ? t->buffer->serial : 0);
    h = mix(h, t->offset);
    h = mix(h, (uint64_t)t->dtype);
    for (int d = 0; d < YOLO_MAX_DIMS; d++) h = mix(h, (uint64_t)t->shape[d]);
    return h;
}

/* Everything a recording bakes in: ops, storage (allocation serials, so a
 * freed and reallocated buffer differs), shapes and constants. */
static uint64_t signature(yolo_tensor *const *nodes, int n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++) {
        const yolo_tensor *t = nodes[i];
        h = mix(tensor_sig(h, t), (uint64_t)t->node->op);
        for (int s = 0; s < t->node->n_src; s++) h = t->node->src[s] ? tensor_sig(h, t->node->src[s]) : mix(h, 0);
        for (int k = 0; k < 12; k++) h = mix(h, (uint32_t)t->node->iparams[k]);
        for (int k = 0; k < 4; k++) {
            uint32_t f;
            memcpy(&f, &t->node->fparams[k], 4);
            h = mix(h, f);
        }
    }
    return h;
}

static yolo_status record_graph(yolo_vk_context *ctx, yolo_vk_recording *rec, yolo_tensor *const *nodes, int n) {
    yolo_vk_recorder r;
    yolo_status st = yolo_vk_recording_begin(ctx, rec, &r);
    if (st == YOLO_OK) ctx->stats.graph_recordings++;
    char what[YOLO_NAME_MAX + 64];
    for (int i = 0; i < n && st == YOLO_OK; i++) {
        const yolo_tensor *t = nodes[i];
        if (t->node->op == YOLO_OP_NONE || t->node->op == YOLO_OP_VIEW) continue;
        yolo_vk_op_fn fn = yolo_vk_op_for(t->node->op);
        snprintf(what, sizeof what, "op %s (t '%s')", yolo_op_name(t->node->op), t->name);
        if (!fn) {
            st = yolo_error(YOLO_ERR_UNSUPPORTED, "%s: %s has no Vulkan kernel", ctx->label, what);
            break;
        }
        r.op_name = what;
        st = yolo_vk_check_dtypes(ctx, t);
        if (st == YOLO_OK) st = fn(&r, t);
        if (st != YOLO_OK) yolo_error_context(st, "%s", what);
    }
    if (st == YOLO_OK) st = yolo_vk_recording_end(&r);
    free(r.reads);
    free(r.writes);
    return st;
}

static yolo_status vk_graph_run(yolo_backend *backend, yolo_graph *graph, yolo_tensor *const *nodes, int n) {
    yolo_vk_context *ctx = ctx_of(backend);
    const yolo_vk_fns *vk = &ctx->inst.fn;
    pthread_mutex_lock(&ctx->lock);
    yolo_status st = YOLO_OK;
    const uint64_t sig = mix(signature(nodes, n), ctx->amp16); /* amp picks other kernels */
    /* one recording per part of the graph that runs: the forward and the
     * backward of a training step are replayed, not recorded anew each run */
    yolo_vk_recording *rec = ctx->recordings;
    while (rec && (rec->graph != graph || rec->first != nodes)) rec = rec->next;
    if (!rec) {
        rec = calloc(1, sizeof *rec);
        if (!rec) {
            pthread_mutex_unlock(&ctx->lock);
            return yolo_error(YOLO_ERR_NOMEM, "%s: out of host memory", ctx->label);
        }
        rec->graph = graph;
        rec->first = nodes;
        rec->next = ctx->recordings;
        ctx->recordings = rec;
    }
    if (rec->cb && (rec->signature != sig || rec->n_nodes != n)) {
        /* the graph changed (or another subset of it runs): record anew */
        if (rec->in_flight) st = yolo_vk_wait_pending(ctx);
        yolo_vk_recording_release(ctx, rec);
    }
    if (st == YOLO_OK && !rec->cb) {
        st = record_graph(ctx, rec, nodes, n);
        if (st != YOLO_OK) {
            yolo_vk_recording_release(ctx, rec);
        } else {
            rec->signature = sig;
            rec->n_nodes = n;
        }
    } else if (st == YOLO_OK) {
        ctx->stats.graph_replays++;
        /* a command buffer is resubmitted only once its last run is done */
        if (rec->in_flight) st = yolo_vk_wait_pending(ctx);
    }
    if (st == YOLO_OK) {
        VkResult r = vk->ResetFences(ctx->dev.device, 1, &rec->fence);
        VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .commandBufferCount = 1,
                               .pCommandBuffers = &rec->cb};
        if (r == VK_SUCCESS) r = vk->QueueSubmit(ctx->dev.queue, 1, &submit, rec->fence);
        if (r != VK_SUCCESS) {
            st = yolo_error(r == VK_ERROR_OUT_OF_DEVICE_MEMORY ? YOLO_ERR_NOMEM : YOLO_ERR_BACKEND,
                            "%s: submitting the graph failed (%s)", ctx->label, yolo_vk_result_name(r));
        } else {
            rec->in_flight = true;
            ctx->pending_fence = rec->fence;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static void vk_graph_release(yolo_backend *backend, yolo_graph *graph) {
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    for (yolo_vk_recording **p = &ctx->recordings; *p;) {
        yolo_vk_recording *rec = *p;
        if (rec->graph != graph) {
            p = &rec->next;
            continue;
        }
        if (rec->in_flight) yolo_vk_wait_pending(ctx);
        *p = rec->next;
        yolo_vk_recording_release(ctx, rec);
        free(rec);
    }
    pthread_mutex_unlock(&ctx->lock);
}

/* ---- creation and teardown ---- */

static void context_destroy(yolo_vk_context *ctx) {
    const yolo_vk_fns *vk = &ctx->inst.fn;
    if (ctx->dev.device) vk->DeviceWaitIdle(ctx->dev.device);
    while (ctx->recordings) {
        yolo_vk_recording *rec = ctx->recordings;
        ctx->recordings = rec->next;
        yolo_vk_recording_release(ctx, rec);
        free(rec);
    }
    if (ctx->dev.device) {
        yolo_vk_transfer_destroy(ctx);
        yolo_vk_pipelines_destroy(&ctx->pipes);
        yolo_vk_memory_destroy(&ctx->mem);
        if (ctx->cmd_pool) vk->DestroyCommandPool(ctx->dev.device, ctx->cmd_pool, NULL);
        yolo_vk_device_close(&ctx->inst, &ctx->dev);
    }
    yolo_vk_instance_destroy(&ctx->inst);
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

static void vk_destroy(yolo_backend *backend) {
    if (backend->impl) context_destroy(ctx_of(backend));
    free(backend);
}

static uint64_t env_u64(const char *name, uint64_t fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end = NULL;
    unsigned long long x = strtoull(v, &end, 10);
    return end && *end == '\0' && x > 0 ? (uint64_t)x : fallback;
}

/* llvmpipe (lavapipe) or another CPU device. */
static bool emulated_on_cpu(const yolo_vk_caps *c) {
    return c->driver_id == VK_DRIVER_ID_MESA_LLVMPIPE || c->type == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

/* Workgroup and tile sizes for this device, and the limits kernels obey. */
static void choose_tunables(yolo_vk_context *ctx) {
    const yolo_vk_caps *c = &ctx->caps;
    ctx->max_binding = c->limits.maxStorageBufferRange;
    ctx->max_binding = env_u64("YOLO_VK_MAX_BINDING_BYTES", ctx->max_binding);
    if (ctx->max_binding > c->limits.maxStorageBufferRange) ctx->max_binding = c->limits.maxStorageBufferRange;
    if (ctx->max_binding < 4096) ctx->max_binding = 4096;
    /* llvmpipe (lavapipe) ends any shader invocation after 65,535 loop
     * iterations in total, silently; keep every kernel well below. */
    ctx->loop_budget = (uint32_t)env_u64("YOLO_VK_LOOP_BUDGET", emulated_on_cpu(c) ? 32768 : 1u << 30);
    ctx->scratch_cap = (VkDeviceSize)64 << 20;
    const uint32_t inv = c->limits.maxComputeWorkGroupInvocations;
    ctx->wg = inv >= 256 ? 256 : 128; /* 128 is the Vulkan minimum */
    const uint32_t shared = c->limits.maxComputeSharedMemorySize;
    ctx->gemm_small = (yolo_vk_gemm_tiles){8, 8, 4, 4, 16};
    ctx->gemm_large = (yolo_vk_gemm_tiles){16, 16, 4, 4, 16};
    ctx->gemm_thin = (yolo_vk_gemm_tiles){32, 8, 1, 2, 16}; /* few rows (an image's 3 channels) */
    if (inv < 256 || shared < 16u * (64 + 64) * 4) ctx->gemm_large = ctx->gemm_thin = ctx->gemm_small;
    /* 128 invocations, 64 x 64 outputs, BK 32; the loop count per BK step
     * covers the emulated matrix operations (8 x 16 per fragment, 4 fragments, 2 per step) */
    ctx->gemm_coop = (yolo_vk_gemm_tiles){16, 8, 8, 4, 32};
    ctx->f16_storage = ctx->dev.f16_storage;
    ctx->subgroup = c->subgroup_arithmetic && !yolo_vk_env_flag("YOLO_VK_DISABLE_SUBGROUP");
#ifdef YOLO_TEST_HOOKS
    ctx->skip_barriers = yolo_vk_env_flag("YOLO_VK_TEST_SKIP_BARRIERS");
#endif
}

/* YOLO_VK_COOPMAT: off (unset), on, or emulate. The cooperative-matrix
 * kernels are opt-in until they have run on a device with the extension
 * (none has been available to this project's tests so far; the emulated
 * mode tests everything but the three matrix operations, on any device). */
static yolo_status coop_request(yolo_vk_coop *want) {
    const char *v = getenv("YOLO_VK_COOPMAT");
    *want = YOLO_VK_COOP_OFF;
    if (!v || !*v || strcmp(v, "off") == 0 || strcmp(v, "0") == 0) return YOLO_OK;
    if (strcmp(v, "on") == 0 || strcmp(v, "1") == 0) return *want = YOLO_VK_COOP_NV, YOLO_OK;
    if (strcmp(v, "emulate") == 0) return *want = YOLO_VK_COOP_EMULATED, YOLO_OK;
    return yolo_error(YOLO_ERR_ARG, "YOLO_VK_COOPMAT=%.40s: expected on, off or emulate", v);
}

yolo_status yolo_vulkan_backend_create(int device_index, yolo_backend **out) {
    if (!out) return yolo_error(YOLO_ERR_ARG, "yolo_vulkan_backend_create: out is NULL");
    *out = NULL;
    yolo_vk_coop want_coop;
    if (coop_request(&want_coop) != YOLO_OK) return YOLO_ERR_ARG;
    yolo_vk_context *ctx = calloc(1, sizeof *ctx);
    yolo_backend *backend = calloc(1, sizeof *backend);
    if (!ctx || !backend) {
        free(ctx);
        free(backend);
        return yolo_error(YOLO_ERR_NOMEM, "vulkan: out of host memory");
    }
    pthread_mutex_init(&ctx->lock, NULL);
    backend->impl = ctx;
    backend->ops = &vulkan_ops;
    yolo_status st = yolo_vk_instance_create(true, &ctx->inst);
    yolo_vk_caps *caps = NULL;
    int n = 0;
    if (st == YOLO_OK) st = yolo_vk_enumerate(&ctx->inst, &caps, &n);
    if (st == YOLO_OK && n == 0)
        st = yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: no Vulkan device found (install a GPU driver, or the "
                                          "Debian package mesa-vulkan-drivers for the lavapipe CPU device)");
    int pick = -1;
    if (st == YOLO_OK) {
        pick = device_index < 0 ? yolo_vk_pick_default(caps, n) : device_index;
        if (device_index >= n) {
            char list[512];
            size_t used = 0;
            for (int i = 0; i < n && used < sizeof list; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%d %s", i ? ", " : "", i, caps[i].name);
            st = yolo_error(YOLO_ERR_ARG, "device=vulkan:%d: no such Vulkan device (%d found: %s)", device_index, n,
                            list);
        } else if (pick < 0) {
            st = yolo_error(YOLO_ERR_BACKEND, "vulkan unavailable: no usable device (vulkan:0 %s %s)", caps[0].name,
                            caps[0].unusable);
        } else if (!caps[pick].usable) {
            st = yolo_error(YOLO_ERR_BACKEND, "device=vulkan:%d (%s) is unusable: %s", pick, caps[pick].name,
                            caps[pick].unusable);
        }
    }
    if (st == YOLO_OK) {
        ctx->caps = caps[pick];
        /* a smaller largest allocation, to exercise split activation buffers on any device */
        const uint64_t max_alloc = env_u64("YOLO_VK_MAX_ALLOCATION_BYTES", ctx->caps.max_allocation_bytes);
        if (max_alloc < ctx->caps.max_allocation_bytes || !ctx->caps.max_allocation_bytes)
            ctx->caps.max_allocation_bytes = max_alloc < (1 << 20) ? (1 << 20) : max_alloc;
        snprintf(ctx->label, sizeof ctx->label, "vulkan:%d (%.120s)", pick, ctx->caps.name);
        snprintf(backend->name, sizeof backend->name, "%.140s", ctx->label);
        st = yolo_vk_device_open(&ctx->inst, &ctx->caps, &ctx->dev);
    }
    free(caps);
    if (st == YOLO_OK) st = yolo_vk_memory_init(&ctx->mem, &ctx->inst.fn, ctx->dev.device, &ctx->caps, ctx->label);
    if (st == YOLO_OK) st = yolo_vk_pipelines_init(&ctx->pipes, &ctx->inst.fn, ctx->dev.device);
    if (st == YOLO_OK) {
        VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                        .queueFamilyIndex = ctx->dev.queue_family};
        VkResult r = ctx->inst.fn.CreateCommandPool(ctx->dev.device, &pool, NULL, &ctx->cmd_pool);
        if (r != VK_SUCCESS)
            st = yolo_error(YOLO_ERR_BACKEND, "%s: vkCreateCommandPool failed (%s)", ctx->label,
                            yolo_vk_result_name(r));
    }
    if (st == YOLO_OK) st = yolo_vk_transfer_init(ctx);
    if (st != YOLO_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", yolo_last_error());
        context_destroy(ctx);
        free(backend);
        return yolo_error(st, "%s", msg);
    }
    choose_tunables(ctx);
    ctx->coop_wanted = want_coop;
    /* what the device enabled decides (the precision line says why not) */
    if ((want_coop == YOLO_VK_COOP_NV && ctx->dev.coop_matrix) ||
        (want_coop == YOLO_VK_COOP_EMULATED && ctx->dev.float16 && ctx->dev.f16_storage))
        ctx->coop = want_coop;
    *out = backend;
    return YOLO_OK;
}

/* YOLO_F16_ACTIVATIONS=off keeps amp's activations f32 (the Vulkan twin of
 * the CPU's YOLO_BF16_ACTIVATIONS=off), to measure what f16 storage saves;
 * read when a graph is planned. */
static bool f16_activations(const yolo_vk_context *ctx) {
    const char *v = getenv("YOLO_F16_ACTIVATIONS");
    return ctx->amp16 && !(v && strcmp(v, "off") == 0);
}

/* A graph is one recorded command buffer: nothing can call out to the host mid-graph. */
static bool vk_supports(const yolo_backend *backend, yolo_backend_capability cap) {
    const yolo_vk_context *ctx = ctx_of(backend);
    if (cap == YOLO_BACKEND_CAP_LOSS_SCALING) return ctx->amp16;
    if (cap == YOLO_BACKEND_CAP_F16_ACTIVATIONS) return f16_activations(ctx);
    return cap == YOLO_BACKEND_CAP_EMULATED_ON_CPU && emulated_on_cpu(&ctx->caps);
}

/* How amp's GEMMs run, for the precision line. */
static void coop_words(const yolo_vk_context *ctx, char *out, size_t size) {
    const yolo_vk_caps *c = &ctx->caps;
    if (ctx->coop == YOLO_VK_COOP_NV)
        snprintf(out, size, "on cooperative matrices (VK_NV_cooperative_matrix; YOLO_VK_COOPMAT=on)");
    else if (ctx->coop == YOLO_VK_COOP_EMULATED)
        snprintf(out, size, "in the cooperative-matrix tiling, emulated (YOLO_VK_COOPMAT=emulate, a test mode)");
    else if (ctx->coop_wanted == YOLO_VK_COOP_NV)
        snprintf(out, size, "in shared-memory tiles (YOLO_VK_COOPMAT=on, but cooperative matrices: %s)",
                 c->coop_matrix ? "YOLO_VK_DISABLE_COOPMAT or YOLO_VK_DISABLE_F16 is set" : c->coop_missing);
    else if (ctx->coop_wanted == YOLO_VK_COOP_EMULATED)
        snprintf(out, size, "in shared-memory tiles (YOLO_VK_COOPMAT=emulate, but fp16 arithmetic is off)");
    else if (ctx->dev.coop_matrix)
        snprintf(out, size, "in shared-memory tiles (cooperative matrices available but not yet verified on this "
                            "project's hardware: YOLO_VK_COOPMAT=on uses them)");
    else
        snprintf(out, size, "in shared-memory tiles");
}

/* amp on Vulkan: the GEMM kernels (convolutions, matmul) read fp16 copies
 * of their inputs and accumulate in fp32 where the device has 16-bit
 * storage and fp16 arithmetic, and graphs planned under amp store the
 * activations between convolutions as f16 (core/graph/narrow.c); everything
 * else stays fp32. Recordings notice the change through their signature. */
static bool vk_set_amp(yolo_backend *backend, yolo_amp_format want, char *line, size_t size) {
    yolo_vk_context *ctx = ctx_of(backend);
    const yolo_vk_caps *c = &ctx->caps;
    char how[256];
    coop_words(ctx, how, sizeof how);
    const char *asked = yolo_amp_format_word(want);
    pthread_mutex_lock(&ctx->lock);
    ctx->amp16 = (want == YOLO_AMP_AUTO || want == YOLO_AMP_FP16) && ctx->f16_storage && c->float16;
    pthread_mutex_unlock(&ctx->lock);
    if (want == YOLO_AMP_OFF)
        snprintf(line, size, "fp32 (amp=False)");
    else if (want == YOLO_AMP_BF16)
        snprintf(line, size, "fp32 (amp=bf16, but Vulkan's 16-bit kernels here are fp16: amp=True or amp=fp16 runs "
                             "them)");
    else if (ctx->amp16)
        snprintf(line, size, "fp16 convolution and matmul inputs%s, fp32 accumulation %s; fp32 weights,%s batch norm, "
                             "reductions and loss; dynamic loss scaling (device: 16-bit storage, shaderFloat16%s)",
                 f16_activations(ctx) ? " and activations between convolutions" : "", how,
                 f16_activations(ctx) ? "" : " activations,", f16_activations(ctx) ? "" : "; YOLO_F16_ACTIVATIONS=off");
    else if (c->storage16 && c->float16)
        snprintf(line, size, "fp32 (amp=%s, but YOLO_VK_DISABLE_F16 turns fp16 storage off)", asked);
    else
        snprintf(line, size, "fp32 (amp=%s, but %.100s lacks %s%s%s)", asked, c->name,
                 c->storage16 ? "" : "storageBuffer16BitAccess", !c->storage16 && !c->float16 ? " and " : "",
                 c->float16 ? "" : "shaderFloat16");
    return ctx->amp16;
}

/* The largest buffer vk_buffer_alloc makes (yolo_vk_largest_buffer, in
 * 256-byte multiples; 0: the device says nothing). */
static size_t vk_max_buffer_bytes(const yolo_backend *backend) {
    uint64_t m = yolo_vk_largest_buffer(&ctx_of(backend)->caps);
    if (m > SIZE_MAX) m = SIZE_MAX;
    return (size_t)(m & ~(uint64_t)255);
}

/* The heap of the memory type tensors are allocated from (device-local). */
static size_t vk_device_memory_bytes(const yolo_backend *backend) {
    const yolo_vk_context *ctx = ctx_of(backend);
    uint64_t heap = ctx->caps.memory.memoryHeaps[ctx->mem.heap_index].size;
    return heap > SIZE_MAX ? SIZE_MAX : (size_t)heap;
}

static const yolo_backend_ops vulkan_ops = {
    .destroy = vk_destroy,
    .buffer_alloc = vk_buffer_alloc,
    .buffer_free = vk_buffer_free,
    .upload = vk_upload,
    .download = vk_download,
    .zero = vk_zero,
    .graph_run = vk_graph_run,
    .graph_release = vk_graph_release,
    .supports = vk_supports,
    .copy_many = vk_copy_many,
    .set_amp = vk_set_amp,
    .max_buffer_bytes = vk_max_buffer_bytes,
    .device_memory_bytes = vk_device_memory_bytes,
};

/* ---- counters for tests (vulkan_stats.h) ---- */

yolo_status yolo_vulkan_get_stats(const yolo_backend *backend, yolo_vulkan_stats *out) {
    if (!backend || backend->ops != &vulkan_ops || !out)
        return yolo_error(YOLO_ERR_ARG, "yolo_vulkan_get_stats: not a Vulkan backend");
    yolo_vk_context *ctx = ctx_of(backend);
    pthread_mutex_lock(&ctx->lock);
    *out = ctx->stats;
    out->pipelines = (uint64_t)ctx->pipes.n;
    pthread_mutex_unlock(&ctx->lock);
    return YOLO_OK;
}

uint64_t yolo_vulkan_validation_messages(void) { return yolo_vk_validation_messages(); }

bool yolo_vulkan_validating(const yolo_backend *backend) {
    return backend && backend->ops == &vulkan_ops && ctx_of(backend)->inst.validation;
}
