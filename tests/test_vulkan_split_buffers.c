/* Activation memory over several device buffers: yolo_graph_plan under a
 * backend's largest buffer (Vulkan: maxMemoryAllocationSize, 2 GiB on some
 * drivers and 4 GiB on others, or maxBufferSize), lowered here with
 * YOLO_VK_MAX_ALLOCATION_BYTES:
 *   - a conv / batch norm / SiLU / concat net, forward and backward, at
 *     1 MiB a buffer: several buffers, no tensor past the end of its
 *     buffer, no two live tensors sharing bytes, and the loss, outputs and
 *     gradients bit-identical to the same graph in one buffer (both runs
 *     poisoned: each freed tensor is overwritten with NaN);
 *   - a tensor larger than the largest buffer: the plan is refused, naming
 *     the tensor and both sizes;
 *   - YOLOv8n, 3 amp training steps at 64 px, batch 2, at 3 MiB a buffer
 *     (its largest weight is 2.3 MiB): losses, weights and EMA
 *     bit-identical to the run in one buffer. */
#include <stdlib.h>
#include <string.h>

#include "backend/vulkan/vk_memory.h"
#include "graph_test_util.h"
#include "plugin/plugin_loader.h"
#include "train/amp_step.h"
#include "train_test_util.h"
#include "vulkan_test_common.h"
#include "yolo/config.h"

#define C 16
#define H 32
#define W 32

typedef struct net {
    yolo_graph *g;
    yolo_tensor *x, *loss, *out;
} net;

typedef struct params {
    yolo_tensor *w1, *w2, *gamma, *beta, *rm, *rv;
} params;

static params params_new(yolo_backend *be) {
    int64_t ws[4] = {C, C, 3, 3}, cs[1] = {C};
    params p = {test_tensor_random(be, "w1", 4, ws, 1, -0.2f, 0.2f, 1),
                test_tensor_random(be, "w2", 4, ws, 2, -0.2f, 0.2f, 1),
                test_tensor_random(be, "gamma", 1, cs, 3, 0.5f, 1.5f, 1),
                test_tensor_random(be, "beta", 1, cs, 4, -0.5f, 0.5f, 1),
                yolo_tensor_new(be, "rm", YOLO_F32, 1, cs, false),
                yolo_tensor_new(be, "rv", YOLO_F32, 1, cs, false)};
    float ones[C];
    for (int i = 0; i < C; i++) ones[i] = 1.0f;
    CHECK(p.rv && yolo_tensor_upload_f32(p.rv, ones, C) == YOLO_OK);
    return p;
}

static void params_free(params *p) {
    yolo_tensor *t[6] = {p->w1, p->w2, p->gamma, p->beta, p->rm, p->rv};
    for (int i = 0; i < 6; i++) yolo_tensor_free(t[i]);
}

/* Each activation is 256 KiB (4 x 16 x 32 x 32 floats); the backward keeps
 * several alive at once. */
static net build_net(yolo_backend *be, const params *p) {
    net n = {yolo_graph_new(be), NULL, NULL, NULL};
    int64_t xs[4] = {4, C, H, W};
    n.x = yolo_graph_input(n.g, "x", YOLO_F32, 4, xs);
    const yolo_conv2d_params same = {.pad_h = 1, .pad_w = 1};
    yolo_tensor *a = yolo_conv2d(n.g, n.x, p->w1, NULL, &same);
    a = yolo_silu(n.g, yolo_batch_norm(n.g, a, p->gamma, p->beta, p->rm, p->rv, true, 0.03f, 1e-3f));
    yolo_tensor *b = yolo_silu(n.g, yolo_conv2d(n.g, a, p->w2, NULL, &same));
    yolo_tensor *cat_in[3] = {a, b, yolo_add(n.g, a, b)};
    n.out = yolo_concat(n.g, 3, cat_in, 1);
    n.loss = yolo_mean(n.g, yolo_mul(n.g, n.out, n.out));
    yolo_graph_mark_output(n.g, n.loss);
    yolo_graph_mark_output(n.g, n.out);
    CHECK(yolo_graph_backward(n.g, n.loss) == YOLO_OK);
    yolo_graph_set_poison(n.g, true);
    return n;
}

/* The buffers the graph's own storage (not views, not persistent tensors) lies in. */
static int distinct_buffers(const yolo_graph *g) {
    int count = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const yolo_tensor *t = g->nodes[i];
        if (t->kind == YOLO_TENSOR_PERSISTENT || t->node->view_of) continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) {
            const yolo_tensor *u = g->nodes[j];
            seen = u->kind != YOLO_TENSOR_PERSISTENT && !u->node->view_of && u->buffer == t->buffer;
        }
        count += !seen;
    }
    CHECK_MSG(count == g->n_arenas, "tensors in %d buffers, %d planned", count, g->n_arenas);
    return count;
}

/* Every tensor inside its buffer; two storage roots alive together never share bytes. */
static void check_layout(const yolo_graph *g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const yolo_tensor *a = g->nodes[i];
        if (a->kind == YOLO_TENSOR_PERSISTENT) continue;
        CHECK_MSG(a->buffer && a->offset + yolo_tensor_bytes(a) <= a->buffer->size,
                  "%s: bytes %zu..%zu of a %zu-byte buffer", a->name, a->offset, a->offset + yolo_tensor_bytes(a),
                  a->buffer ? a->buffer->size : 0);
    }
    test_check_no_live_overlap(g);
}

typedef struct net_result {
    float loss;
    float *out, *grad;
    int buffers;
} net_result;

static net_result run_net(const char *max_alloc) {
    net_result r = {0};
    if (max_alloc) setenv("YOLO_VK_MAX_ALLOCATION_BYTES", max_alloc, 1);
    else unsetenv("YOLO_VK_MAX_ALLOCATION_BYTES");
    yolo_backend *be = NULL;
    CHECK_MSG(yolo_backend_create("vulkan", 0, &be) == YOLO_OK, "%s", yolo_last_error());
    if (!be) return r;
    params p = params_new(be);
    net n = build_net(be, &p);
    CHECK_MSG(yolo_graph_plan(n.g, NULL) == YOLO_OK, "%s", yolo_last_error());
    r.buffers = distinct_buffers(n.g);
    check_layout(n.g);
    const int64_t nx = 4 * C * H * W, nout = yolo_tensor_numel(n.out), nw = C * C * 9;
    float *x = malloc((size_t)nx * sizeof *x);
    r.out = malloc((size_t)nout * sizeof *r.out);
    r.grad = malloc((size_t)nw * sizeof *r.grad);
    if (x && r.out && r.grad) {
        test_fill_uniform(x, nx, 5, -1.0f, 1.0f);
        CHECK(yolo_tensor_upload_f32(n.x, x, nx) == YOLO_OK);
        CHECK_MSG(yolo_graph_run(n.g) == YOLO_OK, "%s", yolo_last_error());
        CHECK(yolo_tensor_download_f32(n.loss, &r.loss, 1) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(n.out, r.out, nout) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(p.w1->grad, r.grad, nw) == YOLO_OK);
    }
    free(x);
    yolo_graph_free(n.g);
    params_free(&p);
    yolo_backend_free(be);
    return r;
}

static void test_net(void) {
    net_result one = run_net(NULL), split = run_net("1048576");
    const int64_t nout = 4 * 3 * C * H * W, nw = C * C * 9;
    printf("net: %d activation buffer(s) unlimited, %d at 1 MiB each; loss %.7g and %.7g\n", one.buffers,
           split.buffers, (double)one.loss, (double)split.loss);
    CHECK(one.buffers == 1 && split.buffers >= 3);
    CHECK_MSG(memcmp(&one.loss, &split.loss, sizeof one.loss) == 0, "the loss changed with split buffers");
    CHECK_MSG(one.out && split.out && memcmp(one.out, split.out, (size_t)nout * sizeof(float)) == 0,
              "the output changed with split buffers");
    CHECK_MSG(one.grad && split.grad && memcmp(one.grad, split.grad, (size_t)nw * sizeof(float)) == 0,
              "the weight gradient changed with split buffers");
    free(one.out), free(one.grad), free(split.out), free(split.grad);
}

static void test_too_large(void) {
    setenv("YOLO_VK_MAX_ALLOCATION_BYTES", "1048576", 1);
    yolo_backend *be = NULL;
    CHECK_MSG(yolo_backend_create("vulkan", 0, &be) == YOLO_OK, "%s", yolo_last_error());
    unsetenv("YOLO_VK_MAX_ALLOCATION_BYTES");
    if (!be) return;
    yolo_graph *g = yolo_graph_new(be);
    int64_t s[2] = {512, 1024}; /* 2 MiB */
    yolo_tensor *x = yolo_graph_input(g, "x", YOLO_F32, 2, s);
    yolo_tensor *y = yolo_set_name(yolo_scale(g, x, 2.0f), "doubled");
    yolo_graph_mark_output(g, y);
    CHECK(yolo_graph_plan(g, NULL) == YOLO_ERR_NOMEM);
    const char *msg = yolo_last_error();
    printf("a 2 MiB tensor at 1 MiB a buffer: %s\n", msg);
    CHECK_MSG(strstr(msg, "'x'") && strstr(msg, "2.0 MiB") && strstr(msg, "(1.0 MiB)"), "message: %s", msg);
    yolo_graph_free(g);
    yolo_backend_free(be);
}

#define STEPS 3

typedef struct train_result {
    double losses[STEPS];
    uint64_t weights, ema; /* hashes after the last step */
    int buffers;
    size_t peak;
} train_result;

static yolo_status train(const char *max_alloc, const yolo_task *task, yolo_config *cfg, train_result *out) {
    memset(out, 0, sizeof *out);
    if (max_alloc) setenv("YOLO_VK_MAX_ALLOCATION_BYTES", max_alloc, 1);
    else unsetenv("YOLO_VK_MAX_ALLOCATION_BYTES");
    train_rig r;
    bool ema_pending = false;
    yolo_status st = train_rig_open(&r, "vulkan", true, "yolov8n.yaml", task, cfg);
    unsetenv("YOLO_VK_MAX_ALLOCATION_BYTES");
    for (int step = 0; step < STEPS && !st; step++) {
        st = train_rig_loss(&r, &out->losses[step]);
        if (!st) yolo_amp_scale_loss_grads(r.opt, r.mg, step);
        if (!st) st = yolo_amp_prepare(r.opt, r.ema, 10.0f, &ema_pending);
        if (!st) st = yolo_model_graph_backward(r.mg);
        if (!st) st = yolo_amp_step(r.opt, r.ema, 10.0f, &ema_pending);
        if (!st) st = yolo_amp_settle(r.opt, r.ema, &ema_pending);
    }
    if (!st) {
        out->buffers = distinct_buffers(r.mg->graph);
        out->peak = r.mg->peak_bytes;
        out->weights = test_hash_model(r.model, false);
        out->ema = test_hash_model(r.ema->ema, false);
    }
    train_rig_close(&r);
    return st;
}

static void test_training(void) {
    if (getenv("YOLO_SANITIZED")) {
        printf("YOLOv8n steps skipped under sanitizers (minutes on lavapipe); the Release run covers them\n");
        return;
    }
    const yolo_task *task = NULL;
    yolo_config *cfg = NULL;
    if (yolo_plugin_load_task("detect", &task) || yolo_config_new(&cfg)) {
        CHECK_MSG(false, "setup: %s", yolo_last_error());
        return;
    }
    static train_result one, split;
    CHECK_MSG(train(NULL, task, cfg, &one) == YOLO_OK, "one buffer: %s", yolo_last_error());
    CHECK_MSG(train("3145728", task, cfg, &split) == YOLO_OK, "3 MiB buffers: %s", yolo_last_error());
    printf("YOLOv8n amp, 64 px, batch 2, %.1f MiB of activations: %d buffer(s) unlimited, %d at 3 MiB each\n",
           (double)one.peak / 1048576.0, one.buffers, split.buffers);
    CHECK(one.buffers == 1 && split.buffers >= 2);
    for (int i = 0; i < STEPS; i++) {
        printf("step %d: loss %.9g (one buffer), %.9g (split)\n", i + 1, one.losses[i], split.losses[i]);
        CHECK_MSG(memcmp(&one.losses[i], &split.losses[i], sizeof(double)) == 0, "step %d: the loss changed", i + 1);
    }
    CHECK_MSG(one.weights == split.weights && one.ema == split.ema, "weights or EMA changed with split buffers");
    yolo_config_free(cfg);
}

int main(void) {
    yolo_backend *vk = NULL;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    yolo_backend_free(vk);
    test_net();
    test_too_large();
    test_training();
    return vk_test_finish("test_vulkan_split_buffers");
}
