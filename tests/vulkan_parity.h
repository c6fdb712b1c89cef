/* A harness that builds the same graph on the CPU backend (the reference)
 * and on the Vulkan backend from the same random inputs, runs both, and
 * compares the output, the gradients of every input (backward of
 * loss = sum(y * r), r random) and any state tensors (running statistics,
 * optimizer state). Header-only, shared by the Vulkan parity tests.
 *
 * Tolerance: |vk - cpu| <= tol * (max|cpu| + |cpu|) element by element, a
 * relative bound that does not blow up where values cross zero. */
#ifndef YOLO_VULKAN_PARITY_H
#define YOLO_VULKAN_PARITY_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "vulkan_test_common.h"

#define PARITY_MAX 16

typedef struct parity_case {
    yolo_backend *be;
    yolo_graph *g;
    uint64_t seed;
    yolo_tensor *inputs[PARITY_MAX]; /* persistent, possibly requires_grad */
    int n_inputs;
    yolo_tensor *states[PARITY_MAX]; /* compared after the runs */
    int n_states;
    yolo_tensor *graph_inputs[PARITY_MAX];
    float *graph_data[PARITY_MAX];
    int n_graph_inputs;
    void (*between_runs)(struct parity_case *c, int run); /* e.g. a new learning rate */
    yolo_tensor *hyper;
} parity_case;

static inline void parity_fill(float *data, int64_t n, uint64_t seed, float lo, float hi) {
    test_fill_uniform(data, n, seed, lo, hi);
}

/* A persistent random input; with grad its gradient is compared. */
static inline yolo_tensor *parity_input(parity_case *c, int ndim, const int64_t *shape, float lo, float hi,
                                        bool grad) {
    yolo_tensor *t = test_tensor_random(c->be, "in", ndim, shape, c->seed + 1000u * (uint64_t)c->n_inputs, lo, hi,
                                        grad);
    c->inputs[c->n_inputs++] = t;
    return t;
}

/* A parity input, rounded to fp16 inside the graph (cast to f16 and back,
 * on both backends) when `exact`: fp16 GEMM inputs then lose nothing. */
static inline yolo_tensor *parity_input_f16(parity_case *c, int ndim, const int64_t *shape, float lo, float hi,
                                            bool exact) {
    yolo_tensor *x = parity_input(c, ndim, shape, lo, hi, true);
    return exact ? yolo_cast(c->g, yolo_cast(c->g, x, YOLO_F16, 1.0f), YOLO_F32, 1.0f) : x;
}

/* A persistent tensor whose value after the runs is compared. */
static inline yolo_tensor *parity_state(parity_case *c, int ndim, const int64_t *shape, float lo, float hi) {
    yolo_tensor *t = test_tensor_random(c->be, "state", ndim, shape, c->seed + 77u + 1000u * (uint64_t)c->n_states,
                                        lo, hi, 0);
    c->states[c->n_states++] = t;
    return t;
}

/* A graph input filled with random values (rounded for integer dtypes) before each run. */
static inline yolo_tensor *parity_graph_input(parity_case *c, yolo_dtype dtype, int ndim, const int64_t *shape,
                                              float lo, float hi) {
    yolo_tensor *t = yolo_graph_input(c->g, "gin", dtype, ndim, shape);
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    float *data = malloc((size_t)n * sizeof *data);
    parity_fill(data, n, c->seed + 555u * (uint64_t)(c->n_graph_inputs + 1), lo, hi);
    if (dtype == YOLO_U8 || dtype == YOLO_I32)
        for (int64_t i = 0; i < n; i++) data[i] = roundf(data[i]);
    c->graph_inputs[c->n_graph_inputs] = t;
    c->graph_data[c->n_graph_inputs++] = data;
    return t;
}

typedef yolo_tensor *(*parity_build)(parity_case *c);

/* Ops that some compared graph contained (forward, backward or update). */
static bool parity_covered[YOLO_OP_COUNT];

typedef struct parity_result {
    float *values[2 + 2 * PARITY_MAX];
    int64_t counts[2 + 2 * PARITY_MAX];
    const char *what[2 + 2 * PARITY_MAX];
    int n;
    bool ok;
} parity_result;

static inline void parity_keep(parity_result *res, const yolo_tensor *t, const char *what) {
    const int64_t n = yolo_tensor_numel(t);
    float *v = malloc((size_t)n * sizeof *v);
    if (yolo_tensor_download_f32(t, v, n) != YOLO_OK) {
        fprintf(stderr, "download of %s failed: %s\n", what, yolo_last_error());
        res->ok = false;
    }
    res->values[res->n] = v;
    res->counts[res->n] = n;
    res->what[res->n++] = what;
}

static inline void parity_run_one(yolo_backend *be, parity_build build, uint64_t seed, bool backward, int runs,
                                  parity_result *res) {
    memset(res, 0, sizeof *res);
    res->ok = true;
    parity_case c = {.be = be, .seed = seed};
    c.g = yolo_graph_new(be);
    yolo_tensor *y = build(&c);
    yolo_tensor *r = NULL;
    if (!y) {
        fprintf(stderr, "building the graph failed: %s\n", yolo_graph_error(c.g));
        res->ok = false;
        goto done;
    }
    yolo_graph_mark_output(c.g, y);
    if (backward) {
        r = test_tensor_random(be, "r", y->ndim, y->shape, seed + 99, -1.0f, 1.0f, 0);
        yolo_tensor *loss = yolo_sum(c.g, yolo_mul(c.g, y, r));
        if (yolo_graph_backward(c.g, loss) != YOLO_OK) {
            fprintf(stderr, "backward failed: %s\n", yolo_last_error());
            res->ok = false;
            goto done;
        }
    }
    if (yolo_graph_plan(c.g, NULL) != YOLO_OK) {
        fprintf(stderr, "plan failed: %s\n", yolo_last_error());
        res->ok = false;
        goto done;
    }
    /* after planning: the ops that run, fused ones (BN_SILU, ...) included */
    for (int i = 0; i < c.g->n_nodes; i++) parity_covered[c.g->nodes[i]->node->op] = true;
    for (int run = 0; run < runs; run++) {
        if (c.between_runs) c.between_runs(&c, run);
        for (int i = 0; i < c.n_graph_inputs; i++)
            yolo_tensor_upload_f32(c.graph_inputs[i], c.graph_data[i], yolo_tensor_numel(c.graph_inputs[i]));
        if (yolo_graph_run(c.g) != YOLO_OK) {
            fprintf(stderr, "run on %s failed: %s\n", yolo_backend_name(be), yolo_last_error());
            res->ok = false;
            goto done;
        }
    }
    parity_keep(res, y, "output");
    for (int i = 0; i < c.n_inputs; i++)
        if (c.inputs[i]->requires_grad) parity_keep(res, c.inputs[i]->grad, "input gradient");
    for (int i = 0; i < c.n_states; i++) parity_keep(res, c.states[i], "state");
done:
    yolo_graph_free(c.g);
    for (int i = 0; i < c.n_inputs; i++) yolo_tensor_free(c.inputs[i]);
    for (int i = 0; i < c.n_states; i++) yolo_tensor_free(c.states[i]);
    for (int i = 0; i < c.n_graph_inputs; i++) free(c.graph_data[i]);
    yolo_tensor_free(r);
    yolo_tensor_free(c.hyper);
}

/* Fails for every op with a kernel that no compared graph contained. */
static inline void parity_check_coverage(void) {
    for (int op = 0; op < YOLO_OP_COUNT; op++) {
        if (op == YOLO_OP_NONE || op == YOLO_OP_VIEW) continue;
        /* all-reduce mid-graph: no Vulkan kernel by design (graph/collective.h); the trainer refuses sync_bn there */
        if (op == YOLO_OP_SYNC_BN_STATS || op == YOLO_OP_SYNC_BN_STATS_BWD) continue;
        CHECK_MSG(parity_covered[op], "op %s was not compared with the CPU backend", yolo_op_name(op));
    }
}

static inline void parity_free(parity_result *res) {
    for (int i = 0; i < res->n; i++) free(res->values[i]);
}

/* Runs `build` on both backends and compares; prints the worst error. */
static inline void parity_check(yolo_backend *cpu, yolo_backend *vk, const char *name, parity_build build,
                                bool backward, double tol_fwd, double tol_grad, int runs) {
    static uint64_t case_seed = 1;
    const uint64_t seed = 0x5eed0000u + 7919u * case_seed++;
    const int failures_before = test_failures;
    parity_result a, b;
    parity_run_one(cpu, build, seed, backward, runs, &a);
    parity_run_one(vk, build, seed, backward, runs, &b);
    CHECK_MSG(a.ok && b.ok && a.n == b.n, "%s: runs failed or differ in what they produce", name);
    double worst_all = 0.0;
    for (int k = 0; a.ok && b.ok && k < a.n && k < b.n; k++) {
        double maxabs = 0.0;
        for (int64_t i = 0; i < a.counts[k]; i++) maxabs = fmax(maxabs, fabs(a.values[k][i]));
        const double tol = k == 0 || !backward ? tol_fwd : tol_grad;
        int64_t at;
        const double worst = vk_test_worst(b.values[k], a.values[k], a.counts[k], tol * (maxabs + 1e-30), tol, &at);
        const double rel = worst * tol;
        if (rel > worst_all) worst_all = rel;
        CHECK_MSG(worst <= 1.0, "%s: %s differs: element %lld vulkan %.9g cpu %.9g (error %.3g x tolerance %.1g)",
                  name, a.what[k], (long long)at, b.values[k][at], a.values[k][at], worst, tol);
    }
    printf("  %-36s %s worst relative error %.2e\n", name, test_failures == failures_before ? "ok    " : "FAILED",
           worst_all);
    parity_free(&a);
    parity_free(&b);
}

#endif
