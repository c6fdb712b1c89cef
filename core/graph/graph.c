/* Graph storage, memory planning by liveness, and execution. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

#define PLAN_ALIGN 64

yolo_graph *yolo_graph_new(yolo_backend *backend) {
    if (!backend) {
        yolo_error(YOLO_ERR_ARG, "yolo_graph_new: no backend");
        return NULL;
    }
    yolo_graph *g = calloc(1, sizeof *g);
    if (!g) {
        yolo_error(YOLO_ERR_NOMEM, "yolo_graph_new: out of memory");
        return NULL;
    }
    g->backend = backend;
    return g;
}

void yolo_graph_free(yolo_graph *g) {
    if (!g) return;
    if (g->backend->ops->graph_release) g->backend->ops->graph_release(g->backend, g);
    for (int i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i]->node->src);
        free(g->nodes[i]);
    }
    free(g->nodes);
    for (int k = 0; k < g->n_arenas; k++) g->backend->ops->buffer_free(g->backend, g->arenas[k]);
    free(g->arenas);
    free(g);
}

yolo_status yolo_graph_status(const yolo_graph *g) { return g ? g->status : YOLO_ERR_ARG; }

const char *yolo_graph_error(const yolo_graph *g) { return g ? g->error : "no graph"; }

yolo_backend *yolo_graph_backend(const yolo_graph *g) { return g->backend; }

int yolo_graph_node_count(const yolo_graph *g) { return g->n_nodes; }

void yolo_graph_set_poison(yolo_graph *g, bool poison) { g->poison = poison; }

yolo_tensor *yolo_graph_fail(yolo_graph *g, yolo_status status, const char *fmt, ...) {
    char msg[sizeof g->error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (g && g->status == YOLO_OK) {
        g->status = status;
        snprintf(g->error, sizeof g->error, "%s", msg);
    }
    yolo_error(status, "%s", msg);
    return NULL;
}

bool yolo_graph_owns_or_persistent(const yolo_graph *g, const yolo_tensor *t) {
    if (t->kind == YOLO_TENSOR_PERSISTENT) return t->backend == g->backend;
    return t->graph == g;
}

static yolo_tensor *push_node(yolo_graph *g, yolo_tensor *t) {
    if (g->n_nodes == g->cap_nodes) {
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 256;
        yolo_tensor **nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) {
            free(t->node->src);
            free(t);
            return yolo_graph_fail(g, YOLO_ERR_NOMEM, "graph: out of memory at node %d", g->n_nodes);
        }
        g->nodes = nodes;
        g->cap_nodes = cap;
    }
    t->node->index = g->n_nodes;
    g->nodes[g->n_nodes++] = t;
    return t;
}

yolo_tensor *yolo_graph_node(yolo_graph *g, int op, yolo_dtype dtype, int ndim, const int64_t *shape, int n_src,
                             yolo_tensor *const *src) {
    if (g->planned)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "graph: cannot add op %s after planning", yolo_op_name(op));
    yolo_tensor *t = yolo_tensor_alloc_with_node();
    if (!t) return yolo_graph_fail(g, YOLO_ERR_NOMEM, "graph: out of memory");
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < YOLO_MAX_DIMS; i++) t->shape[i] = i < ndim ? shape[i] : 1;
    t->kind = YOLO_TENSOR_NODE;
    t->backend = g->backend;
    t->graph = g;
    t->node->op = op;
    t->node->last_use = -1;
    snprintf(t->name, sizeof t->name, "%s#%d", yolo_op_name(op), g->n_nodes);
    if (n_src > 0) {
        t->node->src = malloc((size_t)n_src * sizeof *t->node->src);
        if (!t->node->src) {
            free(t);
            return yolo_graph_fail(g, YOLO_ERR_NOMEM, "graph: out of memory");
        }
        memcpy(t->node->src, src, (size_t)n_src * sizeof *src);
        t->node->n_src = n_src;
    }
    return push_node(g, t);
}

yolo_tensor *yolo_graph_view(yolo_graph *g, yolo_tensor *of, size_t offset, int ndim, const int64_t *shape) {
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_VIEW, of->dtype, ndim, shape, 1, &of);
    if (!t) return NULL;
    t->node->view_of = of;
    t->node->view_offset = offset;
    return t;
}

yolo_tensor *yolo_graph_input(yolo_graph *g, const char *name, yolo_dtype dtype, int ndim, const int64_t *shape) {
    if (!g) return NULL;
    if (ndim < 1 || ndim > YOLO_MAX_DIMS || (int)dtype < 0 || dtype >= YOLO_DTYPE_COUNT)
        return yolo_graph_fail(g, YOLO_ERR_ARG, "input '%s': invalid ndim %d or dtype %d", name ? name : "", ndim,
                               (int)dtype);
    for (int i = 0; i < ndim; i++)
        if (shape[i] < 1)
            return yolo_graph_fail(g, YOLO_ERR_ARG, "input '%s': dimension %d is %lld", name ? name : "", i,
                                   (long long)shape[i]);
    yolo_tensor *t = yolo_graph_node(g, YOLO_OP_NONE, dtype, ndim, shape, 0, NULL);
    if (!t) return NULL;
    t->kind = YOLO_TENSOR_INPUT;
    snprintf(t->name, sizeof t->name, "%s", name ? name : "input");
    return t;
}

yolo_status yolo_graph_mark_output(yolo_graph *g, yolo_tensor *t) {
    if (!g || !t) return yolo_error(YOLO_ERR_ARG, "mark_output: NULL graph or tensor");
    if (t->graph != g) return yolo_error(YOLO_ERR_ARG, "mark_output: '%s' is not a node of this graph", t->name);
    if (g->planned) return yolo_error(YOLO_ERR_ARG, "mark_output: '%s' marked after planning", t->name);
    t->node->is_output = true;
    return YOLO_OK;
}

yolo_tensor *yolo_set_name(yolo_tensor *t, const char *fmt, ...) {
    if (!t) return NULL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);
    va_end(ap);
    return t;
}

/* ---- planning ---- */

/* The tensor that owns the storage t lives in (following views). */
static yolo_tensor *storage_root(yolo_tensor *t) {
    while (t->node->view_of) t = t->node->view_of;
    return t;
}

typedef struct free_block {
    size_t offset, size;
} free_block;

typedef struct allocator {
    free_block *blocks; /* sorted by offset, coalesced */
    int n, cap;
    size_t top;         /* arena high-water mark */
} allocator;

static bool allocator_insert(allocator *a, size_t offset, size_t size) {
    int i = 0;
    while (i < a->n && a->blocks[i].offset < offset) i++;
    /* coalesce with neighbours */
    bool merged_prev = i > 0 && a->blocks[i - 1].offset + a->blocks[i - 1].size == offset;
    bool merged_next = i < a->n && offset + size == a->blocks[i].offset;
    if (merged_prev && merged_next) {
        a->blocks[i - 1].size += size + a->blocks[i].size;
        memmove(&a->blocks[i], &a->blocks[i + 1], (size_t)(a->n - i - 1) * sizeof *a->blocks);
        a->n--;
        return true;
    }
    if (merged_prev) {
        a->blocks[i - 1].size += size;
        return true;
    }
    if (merged_next) {
        a->blocks[i].offset = offset;
        a->blocks[i].size += size;
        return true;
    }
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 64;
        free_block *b = realloc(a->blocks, (size_t)cap * sizeof *b);
        if (!b) return false;
        a->blocks = b;
        a->cap = cap;
    }
    memmove(&a->blocks[i + 1], &a->blocks[i], (size_t)(a->n - i) * sizeof *a->blocks);
    a->blocks[i] = (free_block){offset, size};
    a->n++;
    return true;
}

/* The first offset >= o where `size` bytes do not straddle a multiple of
 * `limit` (a buffer boundary; 0: one buffer, no boundary). */
static size_t place(size_t o, size_t size, size_t limit) {
    if (!limit) return o;
    const size_t boundary = (o / limit + 1) * limit;
    return o + size <= boundary ? o : boundary;
}

static void allocator_remove(allocator *a, int i) {
    memmove(&a->blocks[i], &a->blocks[i + 1], (size_t)(a->n - i - 1) * sizeof *a->blocks);
    a->n--;
}

/* Best fit among free blocks, else grows the arena (extending a free block
 * at the top). Space skipped to keep a tensor inside one buffer stays free.
 * False when out of memory. */
static bool allocator_take(allocator *a, size_t size, size_t limit, size_t *out) {
    int best = -1;
    for (int i = 0; i < a->n; i++) {
        const free_block b = a->blocks[i];
        if (b.size >= size && place(b.offset, size, limit) + size <= b.offset + b.size &&
            (best < 0 || b.size < a->blocks[best].size))
            best = i;
    }
    if (best >= 0) {
        const free_block b = a->blocks[best];
        const size_t offset = place(b.offset, size, limit), end = offset + size;
        allocator_remove(a, best);
        *out = offset;
        return (offset == b.offset || allocator_insert(a, b.offset, offset - b.offset)) &&
               (end == b.offset + b.size || allocator_insert(a, end, b.offset + b.size - end));
    }
    size_t start = a->top;
    if (a->n > 0 && a->blocks[a->n - 1].offset + a->blocks[a->n - 1].size == a->top) {
        start = a->blocks[a->n - 1].offset;
        allocator_remove(a, a->n - 1);
    }
    *out = place(start, size, limit);
    a->top = *out + size;
    return *out == start || allocator_insert(a, start, *out - start);
}

/* The buffers of a plan `peak` bytes long: one, or with a limit one per
 * `limit` bytes (the last one shorter). */
static yolo_status alloc_arenas(yolo_graph *g, size_t peak, size_t limit) {
    if (peak == 0) return YOLO_OK;
    const int n = limit ? (int)((peak + limit - 1) / limit) : 1;
    g->arenas = calloc((size_t)n, sizeof *g->arenas);
    if (!g->arenas) return yolo_error(YOLO_ERR_NOMEM, "graph plan: out of memory");
    for (int k = 0; k < n; k++) {
        const size_t bytes = limit && peak - (size_t)k * limit > limit ? limit : peak - (size_t)k * limit;
        yolo_status st = g->backend->ops->buffer_alloc(g->backend, bytes, &g->arenas[k]);
        if (st != YOLO_OK) {
            for (int j = 0; j < k; j++) g->backend->ops->buffer_free(g->backend, g->arenas[j]);
            free(g->arenas);
            g->arenas = NULL;
            return yolo_error_context(st, "graph plan: activation memory of %zu bytes (buffer %d of %d)", peak, k + 1,
                                      n);
        }
    }
    g->n_arenas = n;
    g->arena_bytes = peak;
    return YOLO_OK;
}

static size_t planned_bytes(const yolo_tensor *t) {
    return (yolo_tensor_bytes(t) + PLAN_ALIGN - 1) & ~(size_t)(PLAN_ALIGN - 1);
}

static bool needs_storage(const yolo_tensor *t) {
    return t->kind != YOLO_TENSOR_PERSISTENT && !t->node->view_of;
}

/* ---- fusion before planning ----
 * z = BN_APPLY(x, mean, var, gamma, beta) read only by y = SILU(z) and by
 * SILU_BWD(z, dy) nodes, z not an output: z becomes BN_SILU (computing y's
 * value), y a view of it, and each SILU_BWD a BN_SILU_BWD that recomputes z
 * from x. Every output and gradient keeps its bits (the fused kernels do
 * the same float operations); z's values are no longer stored, so forward
 * saves a pass over memory and the activation arena shrinks. Runs once,
 * when no node can be added any more. YOLO_GRAPH_NO_FUSION=1 turns it off
 * (for A/B measurements), with the fold below. */

static bool reads(const yolo_tensor *t, const yolo_tensor *x) {
    for (int k = 0; k < t->node->n_src; k++)
        if (t->node->src[k] == x) return true;
    return false;
}

static void fuse_bn_silu_at(yolo_graph *g, yolo_tensor *z) {
    enum { MAX_BWD = 8 };
    yolo_tensor *silu = NULL, *bwd[MAX_BWD];
    yolo_tensor **new_src[MAX_BWD];
    int n_bwd = 0;
    for (int i = z->node->index + 1; i < g->n_nodes; i++) {
        yolo_tensor *t = g->nodes[i];
        if (!reads(t, z)) continue;
        if (t->node->op == YOLO_OP_SILU && t->node->n_src == 1 && !silu && !t->node->view_of) {
            silu = t;
        } else if (t->node->op == YOLO_OP_SILU_BWD && t->node->n_src == 2 && t->node->src[0] == z && t->node->src[1] != z && n_bwd < MAX_BWD) {
            bwd[n_bwd++] = t;
        } else {
            return; /* another reader sees z itself */
        }
    }
    if (!silu || silu->node->index < z->node->index) return;
    for (int k = 0; k < n_bwd; k++) {
        new_src[k] = malloc(6 * sizeof *new_src[k]);
        if (!new_src[k]) {
            while (k-- > 0) free(new_src[k]);
            return; /* out of memory: stay unfused */
        }
    }
    for (int k = 0; k < n_bwd; k++) {
        memcpy(new_src[k], z->node->src, 5 * sizeof *z->node->src);
        new_src[k][5] = bwd[k]->node->src[1];
        free(bwd[k]->node->src);
        bwd[k]->node->src = new_src[k];
        bwd[k]->node->n_src = 6;
        bwd[k]->node->op = YOLO_OP_BN_SILU_BWD;
        bwd[k]->node->fparams[0] = z->node->fparams[0];
    }
    z->node->op = YOLO_OP_BN_SILU;
    silu->node->op = YOLO_OP_VIEW;
    silu->node->view_of = z;
    silu->node->view_offset = 0;
}

/* dz = BN_SILU_BWD(x, mean, var, gamma, beta, dy) read only by
 * f = BN_BWD(x, stats, gamma, dz) of the same x and gamma, dz not an output:
 * f takes (x, stats, gamma, dy, beta) and computes dz itself, in dx's slot,
 * and dz's node goes. Same bits (the same float ops); backward saves a
 * write and a read of dz. Node index i is dz's. */
static void fold_silu_bwd_at(yolo_graph *g, int i) {
    yolo_tensor *dz = g->nodes[i], *f = NULL;
    for (int k = i + 1; k < g->n_nodes; k++) {
        yolo_tensor *t = g->nodes[k];
        if (!reads(t, dz)) continue;
        if (f || t->node->op != YOLO_OP_BN_BWD || t->node->n_src != 4 || t->node->src[3] != dz) return;
        f = t;
    }
    if (!f || f->node->src[0] != dz->node->src[0] || f->node->src[2] != dz->node->src[3] ||
        f->node->fparams[0] != dz->node->fparams[0])
        return;
    yolo_tensor **src = realloc(f->node->src, 5 * sizeof *src);
    if (!src) return; /* out of memory: stay unfolded */
    f->node->src = src;
    src[3] = dz->node->src[5]; /* SiLU's output gradient */
    src[4] = dz->node->src[4]; /* beta */
    f->node->n_src = 5;
    for (int k = 0; k < g->n_nodes; k++) /* autograd's record of z's gradient, done with */
        if (g->nodes[k]->node->node_grad == dz) g->nodes[k]->node->node_grad = NULL;
    free(dz->node->src);
    free(dz);
    memmove(&g->nodes[i], &g->nodes[i + 1], (size_t)(g->n_nodes - i - 1) * sizeof *g->nodes);
    g->n_nodes--;
    for (int k = i; k < g->n_nodes; k++) g->nodes[k]->node->index = k;
    if (g->backward_start > i) g->backward_start--;
}

static void fuse_before_planning(yolo_graph *g) {
    const char *off = getenv("YOLO_GRAPH_NO_FUSION");
    if (off && *off && strcmp(off, "0") != 0) return;
    for (int i = 0; i < g->n_nodes; i++) {
        yolo_tensor *z = g->nodes[i];
        if (z->node->op == YOLO_OP_BN_APPLY && z->dtype == YOLO_F32 && !z->node->is_output && z->node->n_src == 5)
            fuse_bn_silu_at(g, z);
    }
    const char *no_fold = getenv("YOLO_GRAPH_NO_FOLD"); /* the fold alone off, for A/B measurements */
    if ((no_fold && *no_fold && strcmp(no_fold, "0") != 0) ||
        !yolo_backend_supports(g->backend, YOLO_BACKEND_CAP_FOLD_SILU_BWD))
        return;
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        yolo_tensor *dz = g->nodes[i];
        if (dz->node->op == YOLO_OP_BN_SILU_BWD && !dz->node->is_output && dz->node->n_src == 6)
            fold_silu_bwd_at(g, i);
    }
}

yolo_status yolo_graph_plan(yolo_graph *g, yolo_graph_plan_info *info) {
    if (!g) return yolo_error(YOLO_ERR_ARG, "yolo_graph_plan: NULL graph");
    if (g->status != YOLO_OK) return yolo_error(g->status, "graph cannot be planned: %s", g->error);
    if (g->planned) {
        if (info) *info = g->plan;
        return YOLO_OK;
    }
    fuse_before_planning(g);
    if (yolo_backend_supports(g->backend, YOLO_BACKEND_CAP_BF16_ACTIVATIONS))
        g->narrowed = yolo_graph_narrow_activations(g, YOLO_BF16,
                                                    yolo_bf16_activations_policy() == YOLO_BF16_ACTIVATIONS_ALL);
    else if (yolo_backend_supports(g->backend, YOLO_BACKEND_CAP_F16_ACTIVATIONS))
        g->narrowed = yolo_graph_narrow_activations(g, YOLO_F16, false); /* Vulkan: no f16 conv outputs yet */
    const int block = yolo_backend_channel_block(g->backend);
    if (block > 0) g->blocked = yolo_graph_block_activations(g, block);
    int n = g->n_nodes;
    /* Liveness: the last node reading each storage root. Inputs live from the
     * start (uploaded before the run); outputs to the end. */
    for (int i = 0; i < n; i++) g->nodes[i]->node->last_use = i;
    for (int i = 0; i < n; i++) {
        yolo_tensor *t = g->nodes[i];
        for (int s = 0; s < t->node->n_src; s++) {
            yolo_tensor *root = storage_root(t->node->src[s]);
            if (root->graph == g && root->node->last_use < i) root->node->last_use = i;
        }
        if (t->node->is_output) storage_root(t)->node->last_use = n;
    }
    for (int i = 0; i < n; i++) {
        yolo_tensor *t = g->nodes[i];
        if (t->kind == YOLO_TENSOR_INPUT) t->node->last_use = n; /* an input may be re-uploaded between runs */
    }
    /* frees[i]: storage roots whose last use is node i */
    int *free_head = malloc((size_t)(n + 1) * sizeof *free_head);
    int *free_next = malloc((size_t)(n + 1) * sizeof *free_next);
    size_t *offsets = calloc((size_t)(n + 1), sizeof *offsets);
    allocator a = {0};
    if (!free_head || !free_next || !offsets) {
        free(free_head);
        free(free_next);
        free(offsets);
        return yolo_error(YOLO_ERR_NOMEM, "graph plan: out of memory");
    }
    for (int i = 0; i <= n; i++) free_head[i] = -1;
    size_t naive = 0;
    /* A backend with a largest buffer (a Vulkan device's
     * maxMemoryAllocationSize: 2 GiB on some drivers, 4 GiB on others) gets
     * the activations in buffers of at most that size, planned as one
     * address space in which no tensor straddles a multiple of it. */
    const size_t limit = yolo_backend_max_buffer_bytes(g->backend) / PLAN_ALIGN * PLAN_ALIGN;
    yolo_status st = YOLO_OK;
    bool oom = false;
    for (int i = 0; i < n && !st; i++) {
        const yolo_tensor *t = g->nodes[i];
        char shape[128];
        if (needs_storage(t) && limit && planned_bytes(t) > limit)
            st = yolo_error(YOLO_ERR_NOMEM,
                            "graph plan: tensor '%s' %s needs %.1f MiB, more than the largest buffer %s can make "
                            "(%.1f MiB)",
                            t->name, yolo_tensor_shape_str(t, shape, sizeof shape),
                            (double)planned_bytes(t) / 1048576.0, yolo_backend_name(g->backend),
                            (double)limit / 1048576.0);
    }
    /* Inputs first, wherever they sit in the node order: one added after
     * some nodes (a loss weight, an output's gradient, a learning rate) is
     * still uploaded before the run, so it must not share memory with any
     * node's buffer. Inputs live to the end, so they are never released. */
    for (int i = 0; i < n && !st; i++) {
        yolo_tensor *t = g->nodes[i];
        if (!needs_storage(t) || t->kind != YOLO_TENSOR_INPUT) continue;
        size_t size = planned_bytes(t);
        naive += size;
        if (!oom && !allocator_take(&a, size, limit, &offsets[i])) oom = true;
    }
    for (int i = 0; i < n && !st && !oom; i++) {
        yolo_tensor *t = g->nodes[i];
        if (needs_storage(t) && t->kind != YOLO_TENSOR_INPUT) {
            size_t size = planned_bytes(t);
            naive += size;
            if (!allocator_take(&a, size, limit, &offsets[i])) oom = true;
            int end = t->node->last_use;
            free_next[i] = free_head[end];
            free_head[end] = i;
        }
        /* release every root whose last reader was this node (it has computed) */
        for (int j = free_head[i]; j >= 0 && !oom; j = free_next[j])
            if (!allocator_insert(&a, offsets[j], planned_bytes(g->nodes[j]))) oom = true;
    }
    size_t peak = a.top;
    free(a.blocks);
    if (oom) st = yolo_error(YOLO_ERR_NOMEM, "graph plan: out of memory");
    if (st == YOLO_OK) st = alloc_arenas(g, peak, limit);
    if (st != YOLO_OK) {
        free(free_head);
        free(free_next);
        free(offsets);
        return st;
    }
    for (int i = 0; i < n; i++) {
        yolo_tensor *t = g->nodes[i];
        if (needs_storage(t)) {
            const size_t k = limit ? offsets[i] / limit : 0;
            t->buffer = g->arenas[k];
            t->offset = offsets[i] - k * limit;
        } else if (t->node->view_of) {
            t->buffer = t->node->view_of->buffer; /* view_of precedes t, so it is resolved */
            t->offset = t->node->view_of->offset + t->node->view_offset;
        }
    }
    free(free_head);
    free(free_next);
    free(offsets);
    g->planned = true;
    g->plan.peak_bytes = peak;
    g->plan.naive_bytes = naive;
    g->plan.n_nodes = n;
    if (info) *info = g->plan;
    return YOLO_OK;
}

/* Debug aid for the planner test: after node i, every root whose last use is
 * i is overwritten with NaN, so a planner that let two live buffers overlap
 * corrupts a later result. */
static yolo_status run_poisoned(yolo_graph *g, int begin, int end) {
    for (int i = begin; i < end; i++) {
        yolo_status st = g->backend->ops->graph_run(g->backend, g, &g->nodes[i], 1);
        if (st != YOLO_OK) return st;
        for (int j = 0; j <= i; j++) {
            yolo_tensor *t = g->nodes[j];
            if (!needs_storage(t) || t->node->last_use != i || t->node->is_output) continue;
            size_t bytes = yolo_tensor_bytes(t);
            unsigned char *nan_bytes = malloc(bytes ? bytes : 1);
            if (!nan_bytes) return yolo_error(YOLO_ERR_NOMEM, "graph poison: out of memory");
            memset(nan_bytes, 0xff, bytes);
            st = g->backend->ops->upload(g->backend, t->buffer, t->offset, nan_bytes, bytes);
            free(nan_bytes);
            if (st != YOLO_OK) return st;
        }
    }
    return YOLO_OK;
}

static yolo_status run_range(yolo_graph *g, int begin, int end) {
    if (!g) return yolo_error(YOLO_ERR_ARG, "yolo_graph_run: NULL graph");
    if (!g->planned) {
        yolo_status st = yolo_graph_plan(g, NULL);
        if (st != YOLO_OK) return st;
    }
    if (g->poison) return run_poisoned(g, begin, end);
    if (end <= begin) return YOLO_OK;
    yolo_backend_traffic *c = &g->backend->traffic;
    double t0 = yolo_backend_seconds();
    yolo_status st = g->backend->ops->graph_run(g->backend, g, g->nodes + begin, end - begin);
    c->seconds_graph += yolo_backend_seconds() - t0;
    c->graph_runs++;
    return st;
}

yolo_status yolo_graph_run(yolo_graph *g) { return run_range(g, 0, g ? g->n_nodes : 0); }

yolo_status yolo_graph_run_forward(yolo_graph *g) {
    if (!g) return yolo_error(YOLO_ERR_ARG, "yolo_graph_run_forward: NULL graph");
    return run_range(g, 0, g->backward_start ? g->backward_start : g->n_nodes);
}

yolo_status yolo_graph_run_backward(yolo_graph *g) {
    if (!g) return yolo_error(YOLO_ERR_ARG, "yolo_graph_run_backward: NULL graph");
    if (!g->backward_start) return yolo_error(YOLO_ERR_ARG, "yolo_graph_run_backward: the graph has no backward pass");
    return run_range(g, g->backward_start, g->n_nodes);
}
