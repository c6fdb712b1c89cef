/* Recording and replay: a graph is recorded into one command buffer on its
 * first run and every later run resubmits it (no new command buffer, the
 * counter says so) with new input data and still gives the CPU backend's
 * results; graphs that alternate keep one recording each; a graph run in
 * pieces (the planner's poisoning debug mode) records what it runs; freeing
 * a graph releases its recording; a host transfer waits for a run in
 * flight only when the run uses its bytes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "vulkan_test_common.h"

typedef struct model {
    yolo_tensor *w, *b;
    yolo_graph *g;
    yolo_tensor *x, *y;
} model;

static void build(model *m, yolo_backend *be, int variant) {
    int64_t ws[4] = {6, 3, 3, 3}, bs[1] = {6}, xs[4] = {2, 3, 10, 9};
    m->w = test_tensor_random(be, "w", 4, ws, 7, -0.5f, 0.5f, 0);
    m->b = test_tensor_random(be, "b", 1, bs, 8, -0.5f, 0.5f, 0);
    m->g = yolo_graph_new(be);
    m->x = yolo_graph_input(m->g, "x", YOLO_F32, 4, xs);
    yolo_tensor *h = yolo_conv2d(m->g, m->x, m->w, m->b, &(yolo_conv2d_params){.pad_h = 1, .pad_w = 1});
    h = variant ? yolo_sigmoid(m->g, h) : yolo_silu(m->g, h);
    h = yolo_maxpool2d(m->g, h, 3, 2, 1);
    yolo_tensor *parts[2];
    yolo_chunk(m->g, h, 2, 1, parts);
    m->y = yolo_add(m->g, yolo_mul(m->g, parts[0], parts[1]), parts[1]);
    yolo_graph_mark_output(m->g, m->y);
    CHECK(yolo_graph_plan(m->g, NULL) == YOLO_OK);
}

static void free_model(model *m) {
    yolo_graph_free(m->g);
    yolo_tensor_free(m->w);
    yolo_tensor_free(m->b);
}

/* Runs m with input seed and returns the output (malloc'ed). */
static float *run(model *m, uint64_t seed) {
    const int64_t n = yolo_tensor_numel(m->x), ny = yolo_tensor_numel(m->y);
    float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)ny);
    test_fill_uniform(x, n, seed, -2.0f, 2.0f);
    CHECK(yolo_tensor_upload_f32(m->x, x, n) == YOLO_OK);
    CHECK_MSG(yolo_graph_run(m->g) == YOLO_OK, "run: %s", yolo_last_error());
    CHECK(yolo_tensor_download_f32(m->y, y, ny) == YOLO_OK);
    free(x);
    return y;
}

static void same(const float *a, const float *b, int64_t n, const char *what) {
    int64_t at;
    const double worst = vk_test_worst(a, b, n, 1e-5, 1e-5, &at);
    CHECK_MSG(worst <= 1.0, "%s: element %lld vulkan %g cpu %g", what, (long long)at, a[at], b[at]);
}

static yolo_vulkan_stats stats(yolo_backend *vk) {
    yolo_vulkan_stats s;
    CHECK(yolo_vulkan_get_stats(vk, &s) == YOLO_OK);
    return s;
}

int main(void) {
    yolo_backend *vk = NULL, *cpu = NULL;
    int rc = vk_test_open("vulkan", &vk);
    if (rc) return rc;
    CHECK(yolo_backend_create("cpu", 1, &cpu) == YOLO_OK);
    model a, b, ca, cb;
    build(&a, vk, 0);
    build(&b, vk, 1);
    build(&ca, cpu, 0);
    build(&cb, cpu, 1);
    const int64_t ny = yolo_tensor_numel(a.y);

    /* one recording per graph, then replays with new inputs */
    yolo_vulkan_stats s0 = stats(vk);
    for (int step = 0; step < 4; step++) {
        float *va = run(&a, 100 + (uint64_t)step), *vb = run(&b, 200 + (uint64_t)step);
        float *ra = run(&ca, 100 + (uint64_t)step), *rb = run(&cb, 200 + (uint64_t)step);
        same(va, ra, ny, "graph a");
        same(vb, rb, ny, "graph b");
        free(va);
        free(vb);
        free(ra);
        free(rb);
    }
    yolo_vulkan_stats s1 = stats(vk);
    printf("alternating graphs: %llu recordings, %llu replays\n",
           (unsigned long long)(s1.graph_recordings - s0.graph_recordings),
           (unsigned long long)(s1.graph_replays - s0.graph_replays));
    CHECK(s1.graph_recordings - s0.graph_recordings == 2);
    CHECK(s1.graph_replays - s0.graph_replays == 6);
    const uint64_t pipelines = s1.pipelines;

    /* a replay creates no pipelines, records no command buffer */
    float *v = run(&a, 999);
    free(v);
    yolo_vulkan_stats s2 = stats(vk);
    CHECK(s2.graph_recordings == s1.graph_recordings);
    CHECK(s2.pipelines == pipelines);
    CHECK(s2.dispatches == s1.dispatches);

    /* run node by node (poison mode): each piece is recorded, results hold */
    yolo_graph_set_poison(a.g, true);
    yolo_graph_set_poison(ca.g, true);
    float *pa = run(&a, 300), *pr = run(&ca, 300);
    same(pa, pr, ny, "graph a, run node by node");
    free(pa);
    free(pr);
    CHECK(stats(vk).graph_recordings > s2.graph_recordings);
    yolo_graph_set_poison(a.g, false);
    yolo_graph_set_poison(ca.g, false);
    pa = run(&a, 301);
    pr = run(&ca, 301);
    same(pa, pr, ny, "graph a, whole again");
    free(pa);
    free(pr);

    /* with a run in flight, uploading into a tensor it does not use and
     * downloading one it only reads wait for nothing; uploading into its
     * output waits for it (the output then holds the upload, not the run's) */
    {
        const int64_t nx = yolo_tensor_numel(a.x), nw = yolo_tensor_numel(a.w);
        int64_t us[1] = {64};
        yolo_tensor *unused = yolo_tensor_new(vk, "unused", YOLO_F32, 1, us, false);
        float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw),
              *mine = malloc(sizeof(float) * (size_t)ny), *got = malloc(sizeof(float) * (size_t)ny);
        float u[64];
        test_fill_uniform(x, nx, 500, -2.0f, 2.0f);
        test_fill_uniform(u, 64, 501, -1.0f, 1.0f);
        test_fill_uniform(mine, ny, 502, 5.0f, 6.0f);
        CHECK(yolo_tensor_upload_f32(a.x, x, nx) == YOLO_OK);
        yolo_vulkan_stats w0 = stats(vk);
        CHECK(yolo_graph_run(a.g) == YOLO_OK);
        CHECK(yolo_tensor_upload_f32(unused, u, 64) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(a.w, w, nw) == YOLO_OK);
        yolo_vulkan_stats w1 = stats(vk);
        CHECK_MSG(w1.graph_waits == w0.graph_waits, "%llu waits for ranges the run does not write",
                  (unsigned long long)(w1.graph_waits - w0.graph_waits));
        CHECK(yolo_tensor_upload_f32(a.y, mine, ny) == YOLO_OK);
        CHECK(yolo_tensor_download_f32(a.y, got, ny) == YOLO_OK);
        CHECK_MSG(memcmp(mine, got, sizeof(float) * (size_t)ny) == 0, "the run overwrote an upload made after it");
        free(x);
        free(w);
        free(mine);
        free(got);
        yolo_tensor_free(unused);
    }

    /* freeing a graph releases its recording; a new graph records anew */
    free_model(&b);
    build(&b, vk, 1);
    yolo_vulkan_stats s3 = stats(vk);
    float *vb = run(&b, 400), *rb = run(&cb, 400);
    same(vb, rb, ny, "graph b rebuilt");
    free(vb);
    free(rb);
    CHECK(stats(vk).graph_recordings == s3.graph_recordings + 1);

    free_model(&a);
    free_model(&b);
    free_model(&ca);
    free_model(&cb);
    CHECK(yolo_backend_allocated_bytes(vk) == 0);
    yolo_backend_free(cpu);
    yolo_backend_free(vk);
    return vk_test_finish("test_vulkan_replay");
}
