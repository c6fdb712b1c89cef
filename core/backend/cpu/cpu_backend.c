/* The CPU backend: host-memory buffers and in-order execution of a graph's
 * nodes through the kernel table (kernels_*.c). The reference backend: every
 * other backend is tested against it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/cpu/conv_common.h"
#include "backend/cpu/conv_path.h"
#include "backend/cpu/cpu_backend.h"
#include "util/cpu_isa.h"

static void cpu_destroy(yolo_backend *backend) {
    yolo_cpu_context *ctx = backend->impl;
    if (ctx) yolo_thread_pool_free(ctx->pool);
    free(ctx);
    free(backend);
}

static yolo_status cpu_buffer_alloc(yolo_backend *backend, size_t bytes, yolo_buffer **out) {
    yolo_buffer *buf = calloc(1, sizeof *buf);
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (buf) buf->data = aligned_alloc(64, rounded ? rounded : 64);
    if (!buf || !buf->data) {
        free(buf);
        return yolo_error(YOLO_ERR_NOMEM, "cpu: cannot allocate %zu bytes", bytes);
    }
    buf->size = bytes;
    yolo_backend_count_alloc(backend, bytes);
    *out = buf;
    return YOLO_OK;
}

static void cpu_buffer_free(yolo_backend *backend, yolo_buffer *buf) {
    if (!buf) return;
    yolo_backend_count_free(backend, buf->size);
    free(buf->data);
    free(buf);
}

static yolo_status check_range(const yolo_buffer *buf, size_t offset, size_t bytes, const char *what) {
    if (offset > buf->size || bytes > buf->size - offset)
        return yolo_error(YOLO_ERR_ARG, "cpu %s: range [%zu, %zu) outside a buffer of %zu bytes", what, offset,
                          offset + bytes, buf->size);
    return YOLO_OK;
}

static yolo_status cpu_upload(yolo_backend *backend, yolo_buffer *buf, size_t offset, const void *data,
                              size_t bytes) {
    (void)backend;
    yolo_status st = check_range(buf, offset, bytes, "upload");
    if (st == YOLO_OK && bytes) memcpy((char *)buf->data + offset, data, bytes);
    return st;
}

static yolo_status cpu_download(yolo_backend *backend, yolo_buffer *buf, size_t offset, void *data,
                                size_t bytes) {
    (void)backend;
    yolo_status st = check_range(buf, offset, bytes, "download");
    if (st == YOLO_OK && bytes) memcpy(data, (char *)buf->data + offset, bytes);
    return st;
}

static yolo_status cpu_zero(yolo_backend *backend, yolo_buffer *buf, size_t offset, size_t bytes) {
    (void)backend;
    yolo_status st = check_range(buf, offset, bytes, "zero");
    if (st == YOLO_OK && bytes) memset((char *)buf->data + offset, 0, bytes);
    return st;
}

/* Per-op time and call counts, on when YOLO_PROFILE is set (profile=True). */
static double profile_seconds[YOLO_OP_COUNT];
static int64_t profile_calls[YOLO_OP_COUNT];
static double profile_bytes[YOLO_OP_COUNT]; /* sources + output: a floor on memory traffic */
static int profiling = -1; /* -1: not decided yet (YOLO_PROFILE read at the first graph run) */

void yolo_cpu_profile_enable(void) { profiling = 1; }

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void yolo_cpu_profile_report(FILE *out) {
    double total = 0;
    for (int op = 0; op < YOLO_OP_COUNT; op++) total += profile_seconds[op];
    if (total <= 0) return;
    fprintf(out, "%-24s %10s %10s %7s %9s\n", "op", "calls", "seconds", "share", "GB/s");
    for (int op = 0; op < YOLO_OP_COUNT; op++)
        if (profile_calls[op])
            fprintf(out, "%-24s %10lld %10.3f %6.1f%% %9.1f\n", yolo_op_name(op), (long long)profile_calls[op],
                    profile_seconds[op], 100.0 * profile_seconds[op] / total,
                    profile_seconds[op] > 0 ? profile_bytes[op] / profile_seconds[op] * 1e-9 : 0.0);
}

static yolo_status run_nodes(yolo_cpu_context *ctx, yolo_tensor *const *nodes, int n) {
    for (int i = 0; i < n; i++) {
        yolo_tensor *t = nodes[i];
        if (t->node->op == YOLO_OP_NONE || t->node->op == YOLO_OP_VIEW) continue;
        yolo_cpu_kernel kernel = yolo_cpu_kernel_for(t->node->op);
        if (!kernel)
            return yolo_error(YOLO_ERR_UNSUPPORTED, "cpu: op %s (t '%s') has no kernel", yolo_op_name(t->node->op),
                              t->name);
        double t0 = profiling ? now_seconds() : 0.0;
        yolo_status st = kernel(ctx, t);
        if (profiling) {
            profile_seconds[t->node->op] += now_seconds() - t0;
            profile_calls[t->node->op]++;
            double bytes = (double)yolo_tensor_bytes(t);
            for (int s = 0; s < t->node->n_src; s++)
                if (t->node->src[s]) bytes += (double)yolo_tensor_bytes(t->node->src[s]);
            profile_bytes[t->node->op] += bytes;
        }
        if (st != YOLO_OK) return yolo_error_context(st, "cpu: op %s (t '%s')", yolo_op_name(t->node->op), t->name);
    }
    return YOLO_OK;
}

static yolo_status cpu_graph_run(yolo_backend *backend, yolo_graph *graph, yolo_tensor *const *nodes, int n) {
    (void)graph;
    yolo_cpu_context *ctx = backend->impl;
    if (profiling < 0) profiling = getenv("YOLO_PROFILE") != NULL;
    yolo_conv_onednn_in_graph(true);
    yolo_thread_pool_set_warm(ctx->pool, true);
    yolo_status st = run_nodes(ctx, nodes, n);
    yolo_thread_pool_set_warm(ctx->pool, false);
    yolo_conv_onednn_in_graph(false);
    return st;
}

static void cpu_graph_release(yolo_backend *backend, yolo_graph *graph) {
    (void)backend;
    (void)graph;
}

static bool bf16_activations(const yolo_cpu_context *ctx) {
    return ctx->bf16 && yolo_bf16_activations_policy() != YOLO_BF16_ACTIVATIONS_OFF;
}

/* Nodes run one by one on the host: a collective node may call out mid-graph. */
static bool cpu_supports(const yolo_backend *backend, yolo_backend_capability cap) {
    if (cap == YOLO_BACKEND_CAP_BF16_ACTIVATIONS) return bf16_activations(backend->impl);
    if (cap == YOLO_BACKEND_CAP_FOLD_SILU_BWD) return true;
    return cap == YOLO_BACKEND_CAP_COLLECTIVE_IN_GRAPH || cap == YOLO_BACKEND_CAP_OP_PROFILE;
}

/* Blocked storage follows oneDNN's convolutions, so only where they run. */
static int cpu_channel_block(const yolo_backend *backend) {
    (void)backend;
    return yolo_conv_current_impl() == YOLO_CONV_IMPL_ONEDNN ? yolo_conv_onednn_channel_block() : 0;
}

/* amp on the CPU: bf16 oneDNN convolutions where the CPU has bf16
 * instructions, but for the image's (conv_onednn.c), and matmuls
 * (matmul_onednn.c); batch norm, the reductions, the optimizer and the
 * loss stay fp32, and the activations that only convolutions and copies
 * read are stored bf16 (graph/narrow.c). */
static bool cpu_set_amp(yolo_backend *backend, yolo_amp_format want, char *line, size_t size) {
    yolo_cpu_context *ctx = backend->impl;
    char isa[128];
    bool hw = yolo_conv_onednn_bf16_available(isa, sizeof isa);
    bool onednn = yolo_conv_current_impl() == YOLO_CONV_IMPL_ONEDNN;
    const char *asked = yolo_amp_format_word(want);
    ctx->bf16 = (want == YOLO_AMP_AUTO || want == YOLO_AMP_BF16) && hw && onednn;
    if (want == YOLO_AMP_OFF)
        snprintf(line, size, "fp32 (amp=False)");
    else if (want == YOLO_AMP_FP16)
        snprintf(line, size, "fp32 (amp=fp16, but the CPU's 16-bit kernels are bf16: amp=True or amp=bf16 runs them)");
    else if (!onednn)
        snprintf(line, size, "fp32 (amp=%s, but bf16 needs the oneDNN convolutions, and these are %s: %s)", asked,
                 yolo_conv_impl_name(yolo_conv_current_impl()), yolo_cpu_conv_path_description());
    else if (!hw && yolo_cpu_isa_machine() >= YOLO_CPU_ISA_AVX512_BF16)
        snprintf(line, size, "fp32 (amp=%s, but %s: capped below this CPU's AVX512-BF16 by YOLO_CPU_ISA or "
                             "ONEDNN_MAX_CPU_ISA)", asked, isa);
    else if (!hw)
        snprintf(line, size, "fp32 (amp=%s, but %s: this CPU has neither AVX512-BF16 nor AMX)", asked, isa);
    else
        snprintf(line, size,
                 "bf16 convolutions (the image's in fp32), matmuls%s; fp32 weights, batch norm, reductions and loss "
                 "(%s)",
                 bf16_activations(ctx) ? " and activations between convolutions" : "", isa);
    return ctx->bf16;
}

static const yolo_backend_ops cpu_ops = {
    .destroy = cpu_destroy,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = cpu_buffer_free,
    .upload = cpu_upload,
    .download = cpu_download,
    .zero = cpu_zero,
    .graph_run = cpu_graph_run,
    .graph_release = cpu_graph_release,
    .supports = cpu_supports,
    .channel_block = cpu_channel_block,
    .set_amp = cpu_set_amp,
};

yolo_status yolo_cpu_backend_create(int threads, yolo_backend **out) {
    *out = NULL;
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    yolo_backend *backend = calloc(1, sizeof *backend);
    yolo_cpu_context *ctx = calloc(1, sizeof *ctx);
    if (!backend || !ctx) {
        free(backend);
        free(ctx);
        return yolo_error(YOLO_ERR_NOMEM, "cpu backend: out of memory");
    }
    yolo_status st = yolo_thread_pool_create(threads, &ctx->pool);
    if (st != YOLO_OK) {
        free(backend);
        free(ctx);
        return st;
    }
    ctx->threads = threads;
    backend->ops = &cpu_ops;
    backend->impl = ctx;
    backend->threads = threads;
    snprintf(backend->name, sizeof backend->name, "cpu (%d thread%s)", threads, threads == 1 ? "" : "s");
    *out = backend;
    return YOLO_OK;
}

yolo_cpu_kernel yolo_cpu_kernel_for(int op) {
    static yolo_cpu_kernel (*const lookups[])(int) = {
        yolo_cpu_conv_kernel,  yolo_cpu_elementwise_kernel, yolo_cpu_norm_kernel, yolo_cpu_shape_kernel,
        yolo_cpu_spatial_kernel, yolo_cpu_linalg_kernel,    yolo_cpu_optim_kernel, yolo_cpu_collective_kernel,
    };
    for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; i++) {
        yolo_cpu_kernel k = lookups[i](op);
        if (k) return k;
    }
    return NULL;
}
