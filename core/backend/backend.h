/* The backend interface: what a compute device implements.
 *
 * A backend allocates buffers, copies between host and buffers, and runs a
 * planned graph's nodes in order. Op semantics are in graph/ops.h. */
#ifndef YOLO_BACKEND_H
#define YOLO_BACKEND_H

#include <stdint.h>
#include <time.h>

#include "backend/amp_format.h"
#include "yolo/graph.h"

/* What a backend can do beyond running graphs, asked by the core instead
 * of testing a backend's name (ggml's supports_op / capabilities). */
typedef enum yolo_backend_capability {
    /* A graph may hold collective nodes (e.g. synchronised batch norm's
     * all-reduce) that call back into the host mid-graph; a backend that
     * records whole command buffers cannot. */
    YOLO_BACKEND_CAP_COLLECTIVE_IN_GRAPH,
    /* The device is emulated on the CPU (Mesa lavapipe): slower than the
     * CPU backend, so never chosen when no device is asked for. */
    YOLO_BACKEND_CAP_EMULATED_ON_CPU,
    /* Per-op timing (profile=True): the CPU backend's yolo_cpu_profile_*
     * (backend/cpu/cpu_backend.h). */
    YOLO_BACKEND_CAP_OP_PROFILE,
    /* amp runs fp16 kernels (narrow exponent range): training scales the
     * loss dynamically (train/grad_scaler.h), as PyTorch's GradScaler. */
    YOLO_BACKEND_CAP_LOSS_SCALING,
    /* amp stores activations that only convolutions and copies read as
     * bf16 (yolo_graph_narrow_activations): the backend's kernels of those
     * ops take bf16, and its convolutions run bf16. */
    YOLO_BACKEND_CAP_BF16_ACTIVATIONS,
    /* The same with IEEE f16 (Vulkan: amp's GEMM kernels read fp16; the
     * fused BN+SiLU, the copies and the residual add write f16). */
    YOLO_BACKEND_CAP_F16_ACTIVATIONS,
    /* BN_BWD takes a fifth src (beta) and computes the BN_SILU_BWD before
     * it itself (graph/ops.h), so the planner folds one into the other. */
    YOLO_BACKEND_CAP_FOLD_SILU_BWD,
} yolo_backend_capability;

/* One region of a batched copy: `bytes` between the host at `host` and
 * `buffer` at `offset` (yolo_backend_ops.copy_many). */
typedef struct yolo_backend_copy {
    yolo_buffer *buffer;
    size_t offset;
    void *host;
    size_t bytes;
} yolo_backend_copy;

typedef struct yolo_backend_ops {
    void (*destroy)(yolo_backend *backend);
    yolo_status (*buffer_alloc)(yolo_backend *backend, size_t bytes, yolo_buffer **out);
    void (*buffer_free)(yolo_backend *backend, yolo_buffer *buffer);
    yolo_status (*upload)(yolo_backend *backend, yolo_buffer *buffer, size_t offset, const void *data, size_t bytes);
    yolo_status (*download)(yolo_backend *backend, yolo_buffer *buffer, size_t offset, void *data, size_t bytes);
    yolo_status (*zero)(yolo_backend *backend, yolo_buffer *buffer, size_t offset, size_t bytes);
    /* Runs nodes[0..n) in order (every node's storage is assigned). A backend
     * may cache per-graph state (recorded command buffers) keyed by `graph`,
     * released by graph_release when the graph is freed. */
    yolo_status (*graph_run)(yolo_backend *backend, yolo_graph *graph, yolo_tensor *const *nodes, int n);
    void (*graph_release)(yolo_backend *backend, yolo_graph *graph);
    /* Whether the backend has `cap` (NULL: none). */
    bool (*supports)(const yolo_backend *backend, yolo_backend_capability cap);
    /* Mixed precision (amp=True, fp16, bf16): turns the backend's
     * reduced-precision kernels of format `want` on where the hardware has
     * them (NULL: the backend has none). Writes what runs and why into
     * `line`; returns whether amp is on. */
    bool (*set_amp)(yolo_backend *backend, yolo_amp_format want, char *line, size_t size);
    /* Several uploads (upload true) or downloads as one transfer: one wait
     * for pending work and, where memory is staged, one submission (NULL:
     * the copies run one by one through upload / download). */
    yolo_status (*copy_many)(yolo_backend *backend, bool upload, const yolo_backend_copy *copies, int n);
    /* The largest buffer buffer_alloc can make, a multiple of 256 (NULL or
     * 0: no limit). A graph whose activations need more gets several
     * buffers, no tensor straddling two (yolo_graph_plan). */
    size_t (*max_buffer_bytes)(const yolo_backend *backend);
    /* The size of the memory the backend's tensors live in, when that is a
     * device's own (a GPU's device-local heap; NULL or 0: host memory, as
     * the CPU backend's). AutoBatch sizes batches to a fraction of it. */
    size_t (*device_memory_bytes)(const yolo_backend *backend);
    /* Channels per block when convolutions, batch norm's fused ops and the
     * layout-blind copies take channel-blocked values (node->block,
     * graph/blocked.c), so the planner stores the activations between them
     * that way: the block of the convolution kernels that run (16 on
     * AVX-512, 8 on AVX2). NULL or 0: plain storage only. */
    int (*channel_block)(const yolo_backend *backend);
} yolo_backend_ops;

/* What crossed between host and backend, and the host's time in the calls
 * (an upload or download returns when the data is there: on a GPU the host
 * waits that long). graph_runs: graph submissions. */
typedef struct yolo_backend_traffic {
    uint64_t uploads, downloads, graph_runs;
    uint64_t bytes_up, bytes_down;
    double seconds_up, seconds_down, seconds_graph;
} yolo_backend_traffic;

static inline double yolo_backend_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct yolo_backend {
    const yolo_backend_ops *ops;
    char name[160];
    int threads;
    size_t allocated_bytes;
    size_t peak_bytes;
    yolo_backend_traffic traffic;
    bool amp;            /* reduced-precision kernels on (yolo_backend_set_amp) */
    char precision[512]; /* what runs and why, for `yolo checks` and the training header */
    void *impl;          /* backend-specific state */
};

/* How much amp stores as bf16 where a backend has
 * YOLO_BACKEND_CAP_BF16_ACTIVATIONS (graph/narrow.c), from
 * YOLO_BF16_ACTIVATIONS: off, silu (BN+SiLU outputs and the copies between
 * convolutions; the default) or all (also the convolutions' outputs that
 * batch norm reads). On bench_train (YOLOv8n, 320, batch 8, AVX512-BF16)
 * silu cut activation memory 281 -> 215 MiB and ran 1.2% faster than off;
 * all cuts it to 165 MiB, runs 2% slower than silu and ended the main job lower, so
 * it is opt-in (graph/narrow.c). */
typedef enum yolo_bf16_activations {
    YOLO_BF16_ACTIVATIONS_OFF,
    YOLO_BF16_ACTIVATIONS_SILU,
    YOLO_BF16_ACTIVATIONS_ALL,
} yolo_bf16_activations;
yolo_bf16_activations yolo_bf16_activations_policy(void);

/* Whether `backend` has `cap` (false for NULL). */
bool yolo_backend_supports(const yolo_backend *backend, yolo_backend_capability cap);
/* yolo_backend_ops.channel_block: 0 when the backend has no blocked storage. */
int yolo_backend_channel_block(const yolo_backend *backend);
/* ops->max_buffer_bytes, 0 when the backend has no limit. */
size_t yolo_backend_max_buffer_bytes(const yolo_backend *backend);
/* ops->device_memory_bytes, 0 when the tensors live in host memory. */
size_t yolo_backend_device_memory_bytes(const yolo_backend *backend);
/* Asks for mixed precision (amp=True) or fp32; returns whether reduced
 * precision runs. yolo_backend_precision says which and why. */
bool yolo_backend_set_amp(yolo_backend *backend, bool want);
/* The same for a format amp= names (fp16, bf16; True is YOLO_AMP_AUTO). */
bool yolo_backend_set_amp_format(yolo_backend *backend, yolo_amp_format want);
const char *yolo_backend_precision(const yolo_backend *backend);

/* The f32 tensors t[0..n) of one backend copied to or from host[i]
 * (numel floats each) in one transfer: the step's head outputs and their
 * gradients. Counted as one upload or download in the traffic. */
yolo_status yolo_tensors_download_f32(int n, yolo_tensor *const *t, float *const *host);
yolo_status yolo_tensors_upload_f32(int n, yolo_tensor *const *t, const float *const *host);

/* Whether yolo_backend_create takes `device` (cpu, vulkan, vulkan:N, N,
 * NULL or ""), without opening it; the error says what is wrong. */
yolo_status yolo_backend_check_device(const char *device);

/* Constructors of the built-in backends (core/backend/<kind>/). */
yolo_status yolo_cpu_backend_create(int threads, yolo_backend **out);
yolo_status yolo_vulkan_backend_create(int device_index, yolo_backend **out); /* -1: first GPU, else any */

/* Writes into buf one line per Vulkan device (index, name, vendor, driver,
 * memory, fp16, subgroup) or one line saying why Vulkan is unavailable. */
void yolo_vulkan_report(char *buf, size_t size);

/* Bookkeeping shared by backends' allocators. */
void yolo_backend_count_alloc(yolo_backend *backend, size_t bytes);
void yolo_backend_count_free(yolo_backend *backend, size_t bytes);

#endif
