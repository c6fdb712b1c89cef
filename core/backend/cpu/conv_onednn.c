/* Convolution on oneDNN 2.6 primitives (Debian's libdnnl, built with the
 * OpenMP runtime: DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP, linked to libgomp).
 *
 * Threads. libgomp's idle workers spin-wait (OMP_WAIT_POLICY unset, read
 * only when libgomp loads): on a busy machine (data loader threads, other
 * processes) every OpenMP region then costs milliseconds, and measured
 * conv calls ran 10-100x slower; after each call the spinning worker also
 * takes a core from our pool. So when the batch has at least ctx->threads
 * images, the batch is split over OUR pool: each thread runs a
 * single-threaded primitive (omp_set_num_threads(1) in that thread, so
 * oneDNN opens no OpenMP region) on its slice of images, and the weight
 * gradient sums the slices' partial gradients in slice order. Only smaller
 * batches (inference) use an OpenMP team of ctx->threads. Either way the
 * number of busy threads is ctx->threads, and the split is a pure function
 * of (N, threads): results are bit-identical run to run.
 *
 * Layouts. oneDNN's fast direct kernels want blocked layouts (nChw16c,
 * OIhw16i16o, ...), so primitives are made with format "any". Activations
 * that only convolutions, batch norm and layout-blind copies touch are
 * stored nChw16c (AVX-512) or nChw8c (AVX2) already (graph/blocked.c;
 * g->x_block, g->y_block) and
 * go in and out as they are; plain NCHW ones and the OIHW weights are
 * reordered through per-thread workspaces (a pointwise conv whose x and y
 * are both plain runs as a plain GEMM instead, see entry_build).
 * Under amp those reorders convert too (x, dy and weights into bf16); two
 * ways of making them cheaper were measured and dropped (YOLOv8n 320 b8,
 * AVX512-BF16): an AVX-512 register transpose into nChw16c bf16 ran 2x
 * oneDNN's jit:uni reorder in isolation but only 10% faster inside the
 * step (~0.7% of it), and storing batch norm's dx as bf16 (same bits) only
 * moved the rounding's cost from these reorders into BN_BWD.
 * Primitives, reorders and memory objects are built once per shape and kept
 * in a small hash cache: steady-state calls create nothing. The cache and
 * workspaces are process-wide, guarded by one lock. */
#include <dnnl.h>
#include <dnnl_debug.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/conv_common.h"
#include "backend/cpu/onednn_engine.h"
#include "graph/node.h"
#include "util/cpu_isa.h"

#if DNNL_CPU_RUNTIME != DNNL_RUNTIME_OMP && DNNL_CPU_RUNTIME != DNNL_RUNTIME_SEQ
#error "conv_onednn.c controls oneDNN's threads through OpenMP; this libdnnl uses another runtime"
#endif

#define CACHE_BUCKETS 256
#define CACHE_MAX_ENTRIES 1024 /* a model has ~100 conv shapes x 3 passes (x2 for uneven slices) */
#define MAX_SLOTS 256          /* threads that can run slices at once */

typedef struct conv_key {
    int32_t pass, slots, nthr, has_bias; /* nthr: OpenMP threads inside the primitive */
    int32_t bf16, x_bf16;                /* bf16: the conv reads bf16 copies of its inputs; x_bf16: x is stored bf16 */
    int32_t y_bf16;                      /* y (forward's output) is stored bf16 */
    int32_t x_block, y_block;            /* 0, or x (dx) / y (dy) is stored channel-blocked by this many */
    int64_t n, c, h, w, o, ho, wo, kh, kw, sh, sw, ph, pw, dh, dw, groups;
} conv_key;

/* The memory objects one thread binds to the primitive's arguments. */
typedef struct conv_slot {
    dnnl_memory_t user[3]; /* plain layout; handle set to the tensor each call */
    dnnl_memory_t prim[3]; /* what the conv reads/writes (== user when no reorder) */
    dnnl_memory_t bias, scratch;
    void *ws_base;         /* workspace address prim/scratch point at */
} conv_slot;

typedef struct conv_entry {
    conv_key key;
    uint64_t hash;
    struct conv_entry *next;
    dnnl_primitive_t conv;
    dnnl_primitive_t reorder[3]; /* a, b: user -> prim; out: prim -> user; NULL if same layout */
    int arg[3];                  /* DNNL_ARG_* of a, b, out in yolo_conv_pass order */
    size_t prim_offset[3], scratch_offset, ws_bytes;
    dnnl_memory_desc_t prim_md[3]; /* what the primitive reads/writes */
    conv_slot *slots;            /* key.slots of them */
    struct weight_part *wparts;  /* key.slots of them, or NULL: see plan_weight_parts */
} conv_entry;

/* The forward and backward-data passes convert the weights into the
 * primitive's layout (and to bf16 under amp). Every batch slice used to
 * convert all of them into its own workspace; with parts, the slices first
 * convert one part each (a range of blocks along the layout's outermost
 * dimension, a self-contained tensor in both layouts) into one shared copy,
 * then all read it. Same bytes, half the conversions' time on 2 threads. */
typedef struct weight_part {
    dnnl_primitive_t reorder;
    dnnl_memory_t from, to;
    size_t from_offset, to_offset; /* bytes into the plain weights and into the shared copy */
} weight_part;
static void *shared_w; /* the shared copy, under `lock` */
static size_t shared_w_cap;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dnnl_engine_t engine; /* onednn_engine.c's, fetched once */
static dnnl_stream_t streams[MAX_SLOTS];
static void *ws[MAX_SLOTS];
static size_t ws_cap[MAX_SLOTS];
static conv_entry *buckets[CACHE_BUCKETS];
static int n_entries;

/* bf16: the backward-data pass converts dy to bf16 at the start of its
 * slot's workspace; the backward-weight pass of the same conv, which the
 * autograd places right after it, reads the same dy in the same layout and
 * takes that copy instead of converting again (same bits: the conversion
 * is a pure function of dy). What a slot's workspace holds is recorded
 * here; every other run of the slot forgets it, and so do the start and
 * end of every graph run (yolo_conv_onednn_in_graph; no copy is kept
 * outside one), so only the very next conv call of the same graph run can
 * use it, while dy (its input, live until then) is unchanged. */
typedef struct dy_carry {
    const void *dy;      /* the f32 dy the bf16 copy was made from; NULL: none */
    void *ws_base;       /* the workspace it lies at the start of */
    dnnl_memory_desc_t md; /* its layout and type */
} dy_carry;
static dy_carry carried[MAX_SLOTS];

/* YOLO_BF16_DY_CARRY=off (read once) converts dy in both passes, to measure
 * the saving and to check that results keep their bits. */
static bool dy_carry_on = true;
static pthread_once_t carry_once = PTHREAD_ONCE_INIT;
static void read_carry_env(void) {
    const char *v = getenv("YOLO_BF16_DY_CARRY");
    dy_carry_on = !(v && strcmp(v, "off") == 0);
}

static void set_threads(int threads) { yolo_onednn_set_threads(threads); }

/* bf16 pointwise convs on plain NCHW (oneDNN's bf16 gemm, the f32 -> bf16
 * conversion being a plain reorder) like the f32 ones: on bench_conv
 * --impl bf16 --kernel 1 (imgsz 320, batch 8, 2 threads) they ran 1.9x
 * faster than fp32, the blocked jit_1x1 bf16 kernel plus its reorders only
 * 1.08x. YOLO_BF16_POINTWISE=blocked (read once) picks blocked, to measure. */
static bool plain_pointwise_bf16 = true;
static pthread_once_t pointwise_once = PTHREAD_ONCE_INIT;
static void read_pointwise_env(void) {
    const char *v = getenv("YOLO_BF16_POINTWISE");
    plain_pointwise_bf16 = !(v && strcmp(v, "blocked") == 0);
}
static bool bf16_plain_pointwise(void) {
    pthread_once(&pointwise_once, read_pointwise_env);
    return plain_pointwise_bf16;
}

/* -1: the ISA's block; 0: plain storage; 8 or 16: that block. */
static int blocked_choice = -1;
static pthread_once_t blocked_once = PTHREAD_ONCE_INIT;
static void read_blocked_env(void) {
    const char *v = getenv("YOLO_BLOCKED_ACTIVATIONS");
    if (!v) return;
    if (strcmp(v, "off") == 0) blocked_choice = 0;
    else if (strcmp(v, "8") == 0) blocked_choice = 8;
    else if (strcmp(v, "16") == 0) blocked_choice = 16;
    else
        fprintf(stderr, "warning: YOLO_BLOCKED_ACTIVATIONS=%s is not off, 8 or 16: the ISA's block is used\n", v);
}

void yolo_conv_onednn_set_channel_block(int block) {
    pthread_once(&blocked_once, read_blocked_env);
    blocked_choice = block == 0 || block == 8 || block == 16 ? block : -1;
}

int yolo_conv_onednn_channel_block(void) {
    pthread_once(&blocked_once, read_blocked_env);
    if (blocked_choice >= 0) return blocked_choice;
#if !defined(__x86_64__)
    return 0; /* oneDNN's enum values mean other ISAs elsewhere; its aarch64 convolutions take plain NCHW */
#else
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_avx512_core:
    case dnnl_cpu_isa_avx512_core_vnni:
    case dnnl_cpu_isa_avx512_core_bf16:
    case dnnl_cpu_isa_avx512_core_amx: return 16;
    case dnnl_cpu_isa_avx2:
    case dnnl_cpu_isa_avx2_vnni: return 8;
    default: return 0;
    }
#endif
}

bool yolo_conv_onednn_bf16_available(char *why, size_t size) {
    /* What oneDNN dispatches to (it honours ONEDNN_MAX_CPU_ISA), not only
     * what cpuid says: bf16 is fast only where its bf16 kernels run. */
#if defined(__x86_64__)
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    bool ok = isa == dnnl_cpu_isa_avx512_core_bf16 || isa == dnnl_cpu_isa_avx512_core_amx;
#else
    bool ok = false; /* oneDNN's aarch64 convolutions are not this backend's default (conv_path.c) */
#endif
    if (why)
        snprintf(why, size, "oneDNN ISA %s", yolo_cpu_isa_onednn());
    return ok;
}

static int fail_msg(char *buf, size_t size, dnnl_status_t s, const char *what, const yolo_conv_geom *g) {
    return snprintf(buf, size,
                    "conv2d (oneDNN): %s failed (%s) for x[%lld,%lld,%lld,%lld] w[%lld,%lld,%lld,%lld] "
                    "stride %lldx%lld pad %lldx%lld dilation %lldx%lld groups %lld",
                    what, dnnl_status2str(s), (long long)g->n, (long long)g->c, (long long)g->h, (long long)g->w,
                    (long long)g->o, (long long)(g->c / g->groups), (long long)g->kh, (long long)g->kw,
                    (long long)g->sh, (long long)g->sw, (long long)g->ph, (long long)g->pw, (long long)g->dh,
                    (long long)g->dw, (long long)g->groups);
}

static yolo_status dnnl_fail(dnnl_status_t s, const char *what, const yolo_conv_geom *g) {
    char msg[512];
    fail_msg(msg, sizeof msg, s, what, g);
    return yolo_error(YOLO_ERR_BACKEND, "%s", msg);
}

#define DNNL_TRY(call, what)                                   \
    do {                                                       \
        dnnl_status_t s_ = (call);                             \
        if (s_ != dnnl_success) return dnnl_fail(s_, what, g); \
    } while (0)

static void free_weight_parts(conv_entry *e);

static void entry_free(conv_entry *e) {
    if (!e) return;
    for (int k = 0; e->slots && k < e->key.slots; k++) {
        conv_slot *sl = &e->slots[k];
        for (int i = 0; i < 3; i++) {
            if (sl->prim[i] && sl->prim[i] != sl->user[i]) dnnl_memory_destroy(sl->prim[i]);
            if (sl->user[i]) dnnl_memory_destroy(sl->user[i]);
        }
        if (sl->bias) dnnl_memory_destroy(sl->bias);
        if (sl->scratch) dnnl_memory_destroy(sl->scratch);
    }
    free(e->slots);
    free_weight_parts(e);
    for (int i = 0; i < 3; i++)
        if (e->reorder[i]) dnnl_primitive_destroy(e->reorder[i]);
    if (e->conv) dnnl_primitive_destroy(e->conv);
    free(e);
}

static void cache_clear_locked(void) {
    for (int b = 0; b < CACHE_BUCKETS; b++) {
        conv_entry *e = buckets[b];
        while (e) {
            conv_entry *next = e->next;
            entry_free(e);
            e = next;
        }
        buckets[b] = NULL;
    }
    n_entries = 0;
}

void yolo_conv_onednn_release(void) {
    pthread_mutex_lock(&lock);
    cache_clear_locked();
    free(shared_w);
    shared_w = NULL;
    shared_w_cap = 0;
    for (int k = 0; k < MAX_SLOTS; k++) {
        free(ws[k]);
        ws[k] = NULL;
        ws_cap[k] = 0;
        carried[k].dy = NULL;
        if (streams[k]) dnnl_stream_destroy(streams[k]);
        streams[k] = NULL;
    }
    pthread_mutex_unlock(&lock);
}

static bool in_graph; /* under `lock` */

void yolo_conv_onednn_in_graph(bool inside) {
    pthread_mutex_lock(&lock);
    in_graph = inside;
    for (int k = 0; k < MAX_SLOTS; k++) carried[k].dy = NULL;
    pthread_mutex_unlock(&lock);
}

static uint64_t key_hash(const conv_key *k) {
    const unsigned char *p = (const unsigned char *)k;
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < sizeof *k; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Engine, and a stream and a workspace of `bytes` for each of `slots`. */
static yolo_status prepare_locked(const yolo_conv_geom *g, int slots, size_t bytes) {
    if (!engine) {
        yolo_status st = yolo_onednn_engine(&engine);
        if (st != YOLO_OK) return st;
    }
    for (int k = 0; k < slots; k++) {
        if (!streams[k]) DNNL_TRY(dnnl_stream_create(&streams[k], engine, dnnl_stream_default_flags), "stream");
        if (bytes > ws_cap[k]) {
            free(ws[k]);
            ws[k] = NULL;
            ws_cap[k] = 0;
            carried[k].dy = NULL;
            if (posix_memalign(&ws[k], 64, bytes) != 0) {
                ws[k] = NULL;
                return yolo_error(YOLO_ERR_NOMEM, "conv2d (oneDNN): cannot allocate %zu bytes of workspace", bytes);
            }
            ws_cap[k] = bytes;
        }
    }
    return YOLO_OK;
}

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static void dims4(dnnl_dims_t d, int64_t a, int64_t b, int64_t c, int64_t e) {
    d[0] = a, d[1] = b, d[2] = c, d[3] = e;
}

/* One argument: its reorder when the primitive chose another layout, and
 * its place in the workspace. */
static yolo_status plan_arg(conv_entry *e, int i, int arg, bool output, const dnnl_memory_desc_t *user_md,
                            const dnnl_memory_desc_t *prim_md, const_dnnl_primitive_attr_t attr,
                            const yolo_conv_geom *g) {
    e->arg[i] = arg;
    if (dnnl_memory_desc_equal(user_md, prim_md)) return YOLO_OK;
    dnnl_primitive_desc_t rpd;
    if (output)
        DNNL_TRY(dnnl_reorder_primitive_desc_create(&rpd, prim_md, engine, user_md, engine, attr), "reorder");
    else
        DNNL_TRY(dnnl_reorder_primitive_desc_create(&rpd, user_md, engine, prim_md, engine, attr), "reorder");
    /* The reorders run with a user scratchpad of none: they must not need one. */
    const dnnl_memory_desc_t *rs = dnnl_primitive_desc_query_md(rpd, dnnl_query_scratchpad_md, 0);
    dnnl_status_t s = rs && dnnl_memory_desc_get_size(rs) > 0 ? dnnl_unimplemented
                                                               : dnnl_primitive_create(&e->reorder[i], rpd);
    dnnl_primitive_desc_destroy(rpd);
    if (s != dnnl_success) return dnnl_fail(s, "reorder creation", g);
    e->prim_offset[i] = e->ws_bytes;
    e->ws_bytes += align64(dnnl_memory_desc_get_size(prim_md));
    return YOLO_OK;
}

/* Memory objects of every slot (handles are set at run time). */
static yolo_status make_slots(conv_entry *e, const dnnl_memory_desc_t *user_md, const dnnl_memory_desc_t *prim_md,
                              const dnnl_memory_desc_t *bias_md, const dnnl_memory_desc_t *scratch_md,
                              const yolo_conv_geom *g) {
    e->slots = calloc((size_t)e->key.slots, sizeof *e->slots);
    if (!e->slots) return yolo_error(YOLO_ERR_NOMEM, "conv2d (oneDNN): cannot allocate a cache entry");
    for (int k = 0; k < e->key.slots; k++) {
        conv_slot *sl = &e->slots[k];
        for (int i = 0; i < 3; i++) {
            DNNL_TRY(dnnl_memory_create(&sl->user[i], &user_md[i], engine, DNNL_MEMORY_NONE), "memory creation");
            if (e->reorder[i])
                DNNL_TRY(dnnl_memory_create(&sl->prim[i], &prim_md[i], engine, DNNL_MEMORY_NONE), "memory creation");
            else
                sl->prim[i] = sl->user[i];
        }
        if (bias_md) DNNL_TRY(dnnl_memory_create(&sl->bias, bias_md, engine, DNNL_MEMORY_NONE), "memory creation");
        if (scratch_md)
            DNNL_TRY(dnnl_memory_create(&sl->scratch, scratch_md, engine, DNNL_MEMORY_NONE), "memory creation");
    }
    return YOLO_OK;
}

/* YOLO_WEIGHT_PARTS=off (read once) lets every slice convert all the
 * weights again, to measure the saving and check that results keep their bits. */
static bool weight_parts_on = true;
static pthread_once_t weight_parts_once = PTHREAD_ONCE_INIT;
static void read_weight_parts_env(void) {
    const char *v = getenv("YOLO_WEIGHT_PARTS");
    weight_parts_on = !(v && strcmp(v, "off") == 0);
}

static uint64_t shared_conversions; /* under `lock` */

void yolo_conv_onednn_allow_weight_parts(bool allow) {
    pthread_once(&weight_parts_once, read_weight_parts_env);
    pthread_mutex_lock(&lock);
    weight_parts_on = allow;
    cache_clear_locked(); /* entries planned the other way */
    pthread_mutex_unlock(&lock);
}

uint64_t yolo_conv_onednn_shared_weight_conversions(void) {
    pthread_mutex_lock(&lock);
    uint64_t n = shared_conversions;
    pthread_mutex_unlock(&lock);
    return n;
}

static void free_weight_parts(conv_entry *e) {
    for (int k = 0; e->wparts && k < e->key.slots; k++) {
        if (e->wparts[k].reorder) dnnl_primitive_destroy(e->wparts[k].reorder);
        if (e->wparts[k].from) dnnl_memory_destroy(e->wparts[k].from);
        if (e->wparts[k].to) dnnl_memory_destroy(e->wparts[k].to);
    }
    free(e->wparts);
    e->wparts = NULL;
}

/* One reorder per slice from the plain weights `user` (dense OIHW) into a
 * part of the primitive's layout e->prim_md[1]: the blocks [b0, b1) of its
 * outermost dimension d, which must be unpadded and hold at least one
 * block per slice. Leaves e->wparts NULL (each slice converts it all) where
 * the layout does not split that way or oneDNN declines a part. */
static void plan_weight_parts(conv_entry *e, const dnnl_memory_desc_t *user) {
    pthread_once(&weight_parts_once, read_weight_parts_env);
    const dnnl_memory_desc_t *pm = &e->prim_md[1];
    const int parts = e->key.slots;
    if (!weight_parts_on || parts < 2 || pm->ndims != 4 || user->ndims != 4 || pm->format_kind != dnnl_blocked ||
        pm->offset0 != 0 || user->format_kind != dnnl_blocked)
        return;
    const dnnl_blocking_desc_t *bd = &pm->format_desc.blocking;
    int d = 0;
    for (int i = 1; i < 4; i++)
        if (bd->strides[i] > bd->strides[d]) d = i;
    dnnl_dim_t block = 1;
    for (int i = 0; i < bd->inner_nblks; i++)
        if (bd->inner_idxs[i] == d) block *= bd->inner_blks[i];
    const size_t elem = pm->data_type == dnnl_bf16 ? 2 : 4;
    const dnnl_dim_t blocks = pm->dims[d] / block;
    if (pm->dims[d] != pm->padded_dims[d] || pm->dims[d] % block || blocks < parts ||
        (size_t)(bd->strides[d] * blocks) * elem != dnnl_memory_desc_get_size(pm))
        return; /* d is not the outermost, dense dimension */
    e->wparts = calloc((size_t)parts, sizeof *e->wparts);
    if (!e->wparts) return;
    for (int k = 0; k < parts; k++) {
        weight_part *w = &e->wparts[k];
        const dnnl_dim_t first = blocks * k / parts * block, len = (blocks * (k + 1) / parts) * block - first;
        dnnl_memory_desc_t from, to = *pm;
        dnnl_dims_t dims;
        memcpy(dims, user->dims, sizeof dims);
        dims[d] = len;
        to.dims[d] = to.padded_dims[d] = len;
        w->from_offset = (size_t)(first * user->format_desc.blocking.strides[d]) * sizeof(float);
        w->to_offset = (size_t)(first / block * bd->strides[d]) * elem;
        dnnl_primitive_desc_t rpd = NULL;
        bool ok = dnnl_memory_desc_init_by_strides(&from, 4, dims, dnnl_f32, user->format_desc.blocking.strides) ==
                      dnnl_success &&
                  dnnl_reorder_primitive_desc_create(&rpd, &from, engine, &to, engine, NULL) == dnnl_success;
        if (ok) { /* the parts run with no scratchpad, as the slices' reorders */
            const dnnl_memory_desc_t *rs = dnnl_primitive_desc_query_md(rpd, dnnl_query_scratchpad_md, 0);
            ok = !(rs && dnnl_memory_desc_get_size(rs) > 0) && dnnl_primitive_create(&w->reorder, rpd) == dnnl_success;
        }
        if (rpd) dnnl_primitive_desc_destroy(rpd);
        ok = ok && dnnl_memory_create(&w->from, &from, engine, DNNL_MEMORY_NONE) == dnnl_success &&
             dnnl_memory_create(&w->to, &to, engine, DNNL_MEMORY_NONE) == dnnl_success;
        if (!ok) {
            free_weight_parts(e);
            return;
        }
    }
}

/* An activation's layout: plain NCHW or channel-blocked (graph/blocked.c). */
static dnnl_format_tag_t layout_tag(int block) {
    return block == 16 ? dnnl_nChw16c : block == 8 ? dnnl_nChw8c : dnnl_nchw;
}

/* Creates the primitive of `pass` for geometry g (g->n = the slice's
 * images), the forward one being the hint of the backward ones. */
static yolo_status entry_build(conv_entry *e, yolo_conv_pass pass, const yolo_conv_geom *g, bool has_bias, bool bf16) {
    dnnl_memory_desc_t src_any, wei_any, dst_any, user[3], bias_md;
    dnnl_memory_desc_t src_md, wei_md, dst_md;
    dnnl_dims_t sd, dd, wd, bd = {g->o};
    dims4(sd, g->n, g->c, g->h, g->w);
    dims4(dd, g->n, g->o, g->ho, g->wo);
    int wnd = g->groups > 1 ? 5 : 4;
    if (g->groups > 1) {
        wd[0] = g->groups, wd[1] = g->o / g->groups, wd[2] = g->c / g->groups, wd[3] = g->kh, wd[4] = g->kw;
    } else {
        dims4(wd, g->o, g->c, g->kh, g->kw);
    }
    /* A pointwise conv on plain NCHW is one GEMM per image (oneDNN's
     * gemm:jit) with no reorder of the activations; on bench_conv it ran
     * 1.2-2x faster than the blocked jit_1x1 kernel plus its reorders,
     * except on small planes with few channels (10x10, 64 channels), where
     * the per-image GEMM is too small. Every other conv is faster blocked.
     * Without the reorders (x or y blocked) the jit_1x1 kernel wins: in a
     * YOLOv8n 320 b8 step its 46 calls took 49 thread-ms in fp32 and 30 in
     * bf16, where the plain GEMMs took 63 and 36. */
    bool pointwise = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 &&
                     g->groups == 1 && (g->ho * g->wo >= 256 || g->c >= 192) && (!bf16 || bf16_plain_pointwise()) &&
                     !g->x_block && !g->y_block;
    dnnl_format_tag_t act_tag = pointwise ? dnnl_nchw : dnnl_format_tag_any;
    /* bf16: the pass's two inputs are read as bf16 (the reorders into the
     * primitive's layout convert them) and its output is written f32, so
     * sums stay f32 and the tensors around the conv do not change. */
    dnnl_data_type_t in_dt = bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_data_type_t src_dt = pass == YOLO_CONV_BWD_DATA ? dnnl_f32 : in_dt;
    dnnl_data_type_t wei_dt = pass == YOLO_CONV_BWD_WEIGHT ? dnnl_f32 : in_dt;
    dnnl_data_type_t dst_dt = pass == YOLO_CONV_FWD ? (g->y_bf16 ? dnnl_bf16 : dnnl_f32) : in_dt;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, src_dt, act_tag), "memory desc");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dst_dt, act_tag), "memory desc");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_any, wnd, wd, wei_dt, dnnl_format_tag_any), "memory desc");
    /* The backward passes' hint: a forward conv on the same types. */
    dnnl_memory_desc_t src_hint, dst_hint, wei_hint;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_hint, 4, sd, in_dt, act_tag), "memory desc");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_hint, 4, dd, in_dt, act_tag), "memory desc");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_hint, wnd, wd, in_dt, dnnl_format_tag_any), "memory desc");
    /* x stored as bf16 (amp's activations): the plain tensor is bf16, so the
     * pointwise GEMM reads it as it is and the blocked convs' reorder only
     * changes the layout. x is the src of the forward and backward-weight
     * passes; backward data's "src" is dx, always f32. */
    const bool x_bf16 = g->x_bf16 && pass != YOLO_CONV_BWD_DATA;
    /* x's and y's own layouts: plain, or channel-blocked (graph/blocked.c),
     * which the primitive's own choice of nChw16c then needs no reorder for. */
    const dnnl_format_tag_t x_tag = layout_tag(g->x_block), y_tag = layout_tag(g->y_block);
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_md, 4, sd, x_bf16 ? dnnl_bf16 : dnnl_f32, x_tag), "memory desc");
    /* y stored as bf16 (amp's conv outputs, read by batch norm): the conv
     * writes bf16 itself; the backward passes' dy stays f32. */
    const bool y_bf16 = g->y_bf16 && pass == YOLO_CONV_FWD;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, y_bf16 ? dnnl_bf16 : dnnl_f32, y_tag), "memory desc");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, wnd, wd, dnnl_f32, g->groups > 1 ? dnnl_goihw : dnnl_oihw),
             "memory desc");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_f32, dnnl_x), "memory desc");

    /* oneDNN counts dilation from 0 and wants the right padding that makes
     * the output size exact (negative when stride drops trailing pixels). */
    dnnl_dims_t strides = {g->sh, g->sw}, dil = {g->dh - 1, g->dw - 1}, pl = {g->ph, g->pw};
    dnnl_dims_t pr = {(g->ho - 1) * g->sh + (g->kh - 1) * g->dh + 1 - g->h - g->ph,
                      (g->wo - 1) * g->sw + (g->kw - 1) * g->dw + 1 - g->w - g->pw};

    dnnl_convolution_desc_t fwd_d, bwd_d;
    bool fwd = pass == YOLO_CONV_FWD;
    DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&fwd_d, dnnl_forward_training, dnnl_convolution_direct,
                                                        fwd ? &src_any : &src_hint, fwd ? &wei_any : &wei_hint,
                                                        has_bias ? &bias_md : NULL, fwd ? &dst_any : &dst_hint,
                                                        strides, dil, pl, pr),
             "forward descriptor");
    dnnl_primitive_attr_t attr;
    DNNL_TRY(dnnl_primitive_attr_create(&attr), "attr");
    /* Our scratchpads: concurrent slices must not share oneDNN's. */
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_primitive_desc_t fwd_pd = NULL, pd = NULL;
    dnnl_status_t s = dnnl_primitive_desc_create(&fwd_pd, &fwd_d, pass == YOLO_CONV_FWD ? attr : NULL, engine, NULL);
    if (s == dnnl_success && pass != YOLO_CONV_FWD) {
        if (pass == YOLO_CONV_BWD_DATA)
            s = dnnl_dilated_convolution_backward_data_desc_init(&bwd_d, dnnl_convolution_direct, &src_any, &wei_any,
                                                                 &dst_any, strides, dil, pl, pr);
        else
            s = dnnl_dilated_convolution_backward_weights_desc_init(&bwd_d, dnnl_convolution_direct, &src_any,
                                                                    &wei_any, NULL, &dst_any, strides, dil, pl, pr);
        if (s == dnnl_success) s = dnnl_primitive_desc_create(&pd, &bwd_d, attr, engine, fwd_pd);
        dnnl_primitive_desc_destroy(fwd_pd);
    } else {
        pd = fwd_pd;
    }
    if (s != dnnl_success) {
        dnnl_primitive_attr_destroy(attr);
        return dnnl_fail(s, "primitive descriptor", g);
    }

    /* a, b, out of each pass, in yolo_conv_pass order. */
    static const int args[3][3] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                                   {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                                   {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}};
    static const dnnl_query_t queries[3][3] = {
        {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md},
        {dnnl_query_diff_dst_md, dnnl_query_weights_md, dnnl_query_diff_src_md},
        {dnnl_query_src_md, dnnl_query_diff_dst_md, dnnl_query_diff_weights_md}};
    const dnnl_memory_desc_t *plain[3][3] = {
        {&src_md, &wei_md, &dst_md}, {&dst_md, &wei_md, &src_md}, {&src_md, &dst_md, &wei_md}};
    dnnl_memory_desc_t prim[3];
    yolo_status st = YOLO_OK;
    /* dy first, at workspace offset 0 (backward weight: where the carried copy lies) */
    static const int order[3][3] = {{0, 1, 2}, {0, 1, 2}, {1, 0, 2}};
    for (int o = 0; o < 3 && st == YOLO_OK; o++) {
        int i = order[pass][o];
        user[i] = *plain[pass][i];
        prim[i] = *dnnl_primitive_desc_query_md(pd, queries[pass][i], 0);
        st = plan_arg(e, i, args[pass][i], i == 2, &user[i], &prim[i], attr, g);
    }
    memcpy(e->prim_md, prim, sizeof prim);
    dnnl_primitive_attr_destroy(attr);
    dnnl_memory_desc_t scratch;
    bool has_scratch = false;
    if (st == YOLO_OK) {
        scratch = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        size_t bytes = dnnl_memory_desc_get_size(&scratch);
        has_scratch = bytes > 0;
        e->scratch_offset = e->ws_bytes;
        e->ws_bytes += align64(bytes);
        s = dnnl_primitive_create(&e->conv, pd);
        if (s != dnnl_success) st = dnnl_fail(s, "primitive creation", g);
    }
    dnnl_primitive_desc_destroy(pd);
    if (st == YOLO_OK)
        st = make_slots(e, user, prim, pass == YOLO_CONV_FWD && has_bias ? &bias_md : NULL,
                        has_scratch ? &scratch : NULL, g);
    if (st == YOLO_OK && pass != YOLO_CONV_BWD_WEIGHT && e->reorder[1]) plan_weight_parts(e, &user[1]);
    return st;
}

/* The cached entry for `pass` on geometry g, built with nthr OpenMP threads. */
static yolo_status lookup_locked(yolo_conv_pass pass, const yolo_conv_geom *g, int slots, int nthr, bool has_bias,
                                 bool bf16, conv_entry **out) {
    conv_key key;
    memset(&key, 0, sizeof key); /* the hash reads the padding too */
    key.pass = pass, key.slots = slots, key.nthr = nthr, key.has_bias = has_bias, key.bf16 = bf16;
    key.x_bf16 = g->x_bf16, key.y_bf16 = g->y_bf16, key.x_block = g->x_block, key.y_block = g->y_block;
    key.n = g->n, key.c = g->c, key.h = g->h, key.w = g->w, key.o = g->o, key.ho = g->ho, key.wo = g->wo;
    key.kh = g->kh, key.kw = g->kw, key.sh = g->sh, key.sw = g->sw, key.ph = g->ph, key.pw = g->pw;
    key.dh = g->dh, key.dw = g->dw, key.groups = g->groups;
    uint64_t h = key_hash(&key);
    for (conv_entry *e = buckets[h % CACHE_BUCKETS]; e; e = e->next)
        if (e->hash == h && memcmp(&e->key, &key, sizeof key) == 0) return *out = e, YOLO_OK;
    if (n_entries >= CACHE_MAX_ENTRIES) cache_clear_locked(); /* shapes changed wholesale */
    conv_entry *e = calloc(1, sizeof *e);
    if (!e) return yolo_error(YOLO_ERR_NOMEM, "conv2d (oneDNN): cannot allocate a cache entry");
    e->key = key;
    e->hash = h;
    /* oneDNN sizes a primitive's work split when it builds it. */
    set_threads(nthr);
    yolo_status st = entry_build(e, pass, g, has_bias, bf16);
    if (st != YOLO_OK) {
        entry_free(e);
        return st;
    }
    e->next = buckets[h % CACHE_BUCKETS];
    buckets[h % CACHE_BUCKETS] = e;
    n_entries++;
    *out = e;
    return YOLO_OK;
}

/* Runs entry e on slot k: reorders in, conv, reorder out. Safe to call from
 * several threads at once on different slots. Returns 0 or writes msg. */
static dnnl_status_t run_slot(conv_entry *e, int k, const void *a, const float *b, const float *bias, void *out,
                              const void *wshared, const char **what) {
    conv_slot *sl = &e->slots[k];
    dnnl_stream_t stream = streams[k];
    dnnl_status_t s = dnnl_success;
    *what = "memory handle";
    if (sl->ws_base != ws[k]) {
        for (int i = 0; i < 3 && s == dnnl_success; i++)
            if (e->reorder[i]) s = dnnl_memory_set_data_handle(sl->prim[i], (char *)ws[k] + e->prim_offset[i]);
        if (s == dnnl_success && sl->scratch)
            s = dnnl_memory_set_data_handle(sl->scratch, (char *)ws[k] + e->scratch_offset);
        if (s != dnnl_success) return s;
        sl->ws_base = ws[k];
    }
    void *ptrs[3] = {(void *)(uintptr_t)a, (void *)(uintptr_t)b, out};
    for (int i = 0; i < 3 && s == dnnl_success; i++) s = dnnl_memory_set_data_handle(sl->user[i], ptrs[i]);
    /* the converted weights: the slices' shared copy, or this slot's own */
    if (s == dnnl_success && e->reorder[1] && e->key.pass != YOLO_CONV_BWD_WEIGHT)
        s = dnnl_memory_set_data_handle(sl->prim[1], wshared ? (void *)(uintptr_t)wshared
                                                             : (char *)ws[k] + e->prim_offset[1]);
    if (s == dnnl_success && sl->bias) s = dnnl_memory_set_data_handle(sl->bias, (void *)bias);
    if (s != dnnl_success) return s;

    *what = "input reorder";
    /* dy: argument 0 of backward data, 1 of backward weight */
    const int dy_arg = e->key.pass == YOLO_CONV_BWD_DATA ? 0 : e->key.pass == YOLO_CONV_BWD_WEIGHT ? 1 : -1;
    dy_carry *c = &carried[k];
    pthread_once(&carry_once, read_carry_env);
    const bool reuse = dy_carry_on && in_graph && e->key.bf16 && dy_arg == 1 && e->reorder[1] && c->dy == b &&
                       c->ws_base == ws[k] && e->prim_offset[1] == 0 && dnnl_memory_desc_equal(&c->md, &e->prim_md[1]);
    c->dy = NULL;
    for (int i = 0; i < 2; i++) {
        if (!e->reorder[i] || (i == 1 && (reuse || wshared))) continue;
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, sl->user[i]}, {DNNL_ARG_TO, sl->prim[i]}};
        if ((s = dnnl_primitive_execute(e->reorder[i], stream, 2, ra)) != dnnl_success) return s;
    }
    *what = "convolution";
    dnnl_exec_arg_t ca[5];
    int n = 0;
    for (int i = 0; i < 3; i++) ca[n++] = (dnnl_exec_arg_t){e->arg[i], sl->prim[i]};
    if (sl->bias) ca[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, sl->bias};
    if (sl->scratch) ca[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, sl->scratch};
    if ((s = dnnl_primitive_execute(e->conv, stream, n, ca)) != dnnl_success) return s;
    *what = "output reorder";
    if (e->reorder[2]) {
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, sl->prim[2]}, {DNNL_ARG_TO, sl->user[2]}};
        if ((s = dnnl_primitive_execute(e->reorder[2], stream, 2, ra)) != dnnl_success) return s;
    }
    *what = "stream wait";
    if ((s = dnnl_stream_wait(stream)) != dnnl_success) return s;
    if (in_graph && e->key.bf16 && dy_arg == 0 && e->reorder[0] && e->prim_offset[0] == 0)
        *c = (dy_carry){.dy = a, .ws_base = ws[k], .md = e->prim_md[0]};
    return dnnl_success;
}

/* The batch split over our pool: slice k holds images [n0[k], n0[k]+nk). */
typedef struct split_job {
    yolo_conv_pass pass;
    const yolo_conv_geom *g;
    int slices;
    conv_entry *entry[MAX_SLOTS];
    int64_t n0[MAX_SLOTS];
    const void *a; /* f32, or bf16 for x stored as bf16 (g->x_bf16) */
    const float *b, *bias;
    void *out;     /* f32, or bf16 for y stored as bf16 (g->y_bf16) */
    float *partial[MAX_SLOTS]; /* bwd weight: slice k > 0 sums into its own buffer */
    void *wshared;             /* the weights converted once for all slices (plan_weight_parts), or NULL */
    int64_t dw_count;
    dnnl_status_t status[MAX_SLOTS];
    const char *what[MAX_SLOTS];
} split_job;

static void split_range(void *arg, int64_t begin, int64_t end) {
    split_job *j = arg;
    const yolo_conv_geom *g = j->g;
    set_threads(1); /* this thread runs its slice alone: no OpenMP region */
    for (int64_t k = begin; k < end; k++) {
        int64_t x_off = j->n0[k] * g->c * g->h * g->w, y_off = j->n0[k] * g->o * g->ho * g->wo;
        /* bytes of an element of x and of y (the forward's output) */
        const size_t x_size = g->x_bf16 ? 2 : sizeof(float), y_size = g->y_bf16 ? 2 : sizeof(float);
        const char *a = j->a;
        const float *b = j->b;
        char *out = j->out;
        if (j->pass == YOLO_CONV_FWD) {
            a += (size_t)x_off * x_size, out += (size_t)y_off * y_size;
        } else if (j->pass == YOLO_CONV_BWD_DATA) {
            a += (size_t)y_off * sizeof(float), out += (size_t)x_off * sizeof(float);
        } else {
            a += (size_t)x_off * x_size, b += y_off;
            if (k > 0) out = (char *)j->partial[k];
        }
        j->status[k] = run_slot(j->entry[k], (int)k, a, b, j->bias, out, j->wshared, &j->what[k]);
    }
}

/* Slice k converts its part of the weights into the shared copy. */
static void weight_part_range(void *arg, int64_t begin, int64_t end) {
    split_job *j = arg;
    set_threads(1);
    for (int64_t k = begin; k < end; k++) {
        const weight_part *w = &j->entry[0]->wparts[k];
        dnnl_status_t s = dnnl_memory_set_data_handle(w->from, (char *)(uintptr_t)j->b + w->from_offset);
        if (s == dnnl_success) s = dnnl_memory_set_data_handle(w->to, (char *)j->wshared + w->to_offset);
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, w->from}, {DNNL_ARG_TO, w->to}};
        if (s == dnnl_success) s = dnnl_primitive_execute(w->reorder, streams[k], 2, ra);
        if (s == dnnl_success) s = dnnl_stream_wait(streams[k]);
        j->status[k] = s;
        j->what[k] = "weight conversion";
    }
}

/* Whether the slices can share one conversion of the weights: entry 0 has
 * parts and every slice's primitive reads the weights in its layout. */
static bool weights_shareable(const split_job *j) {
    if (!j->entry[0]->wparts) return false;
    for (int k = 1; k < j->slices; k++)
        if (!dnnl_memory_desc_equal(&j->entry[k]->prim_md[1], &j->entry[0]->prim_md[1])) return false;
    return true;
}

/* out += partial[1] + ... + partial[slices-1], in slice order. */
static void reduce_range(void *arg, int64_t begin, int64_t end) {
    const split_job *j = arg;
    float *out = j->out; /* the weight gradient: f32 */
    for (int k = 1; k < j->slices; k++) {
        const float *p = j->partial[k];
        for (int64_t i = begin; i < end; i++) out[i] += p[i];
    }
}

static yolo_status run_split_locked(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g, int slices,
                                    bool bf16, const void *a, const float *b, const float *bias, void *out) {
    static split_job job; /* under `lock` */
    split_job *j = &job;
    *j = (split_job){.pass = pass, .g = g, .slices = slices, .a = a, .b = b, .bias = bias, .out = out,
                     .dw_count = g->o * (g->c / g->groups) * g->kh * g->kw};
    yolo_status st = YOLO_OK;
    int64_t q = g->n / slices, r = g->n % slices, n0 = 0;
    size_t need = 0;
    for (int k = 0; k < slices && st == YOLO_OK; k++) {
        yolo_conv_geom sg = *g;
        sg.n = q + (k < r);
        j->n0[k] = n0;
        n0 += sg.n;
        st = lookup_locked(pass, &sg, slices, 1, pass == YOLO_CONV_FWD && bias, bf16, &j->entry[k]);
        if (st == YOLO_OK && j->entry[k]->ws_bytes > need) need = j->entry[k]->ws_bytes;
    }
    /* Partial weight gradients live after the largest slice's workspace. */
    size_t partial_bytes = pass == YOLO_CONV_BWD_WEIGHT ? align64((size_t)j->dw_count * sizeof(float)) : 0;
    if (st == YOLO_OK) st = prepare_locked(g, slices, need + partial_bytes);
    if (st == YOLO_OK) {
        for (int k = 1; k < slices && partial_bytes; k++) j->partial[k] = (float *)((char *)ws[k] + need);
        if (weights_shareable(j)) {
            const size_t bytes = dnnl_memory_desc_get_size(&j->entry[0]->prim_md[1]);
            if (bytes > shared_w_cap) {
                free(shared_w);
                shared_w_cap = 0;
                if (posix_memalign(&shared_w, 64, bytes) != 0) shared_w = NULL;
                else shared_w_cap = bytes;
            }
            if (shared_w) { /* else (no memory) each slice converts its own copy */
                j->wshared = shared_w;
                yolo_cpu_run_split(ctx, slices, weight_part_range, j);
                for (int k = 0; k < slices; k++)
                    if (j->status[k] != dnnl_success) j->wshared = NULL; /* a part failed: each slice converts its own */
                shared_conversions += j->wshared != NULL;
            }
        }
        yolo_cpu_run_split(ctx, slices, split_range, j);
        for (int k = 0; k < slices && st == YOLO_OK; k++) {
            if (j->status[k] != dnnl_success) {
                yolo_conv_geom sg = *g;
                sg.n = j->entry[k]->key.n;
                st = dnnl_fail(j->status[k], j->what[k], &sg);
            }
        }
    }
    if (st == YOLO_OK && pass == YOLO_CONV_BWD_WEIGHT && slices > 1)
        yolo_cpu_run_split(ctx, j->dw_count, reduce_range, j);
    return st;
}

yolo_status yolo_conv_onednn(yolo_cpu_context *ctx, yolo_conv_pass pass, const yolo_conv_geom *g,
                             const void *a, const float *b, const float *bias, void *out) {
    int threads = ctx && ctx->threads > 0 ? ctx->threads : 1;
    /* x stored as bf16 is read by bf16 convs whatever ctx asks (it was made
     * for them; a bf16 x cannot feed an f32 primitive without a copy). The
     * image's convolution stays fp32 under amp: with 3 input channels the
     * bf16 kernels gain nothing (YOLOv8n 320 b8: forward 1.78 ms bf16, 1.68
     * fp32; the step 1% faster without it), and the main job ended closer
     * to fp32 (seeds 0-20, amp - fp32: -0.011 mAP50 with it in bf16, -0.007
     * without, within noise of each other; README, "Mixed precision"). */
    const bool bf16 = (ctx && ctx->bf16 && !g->x_image) || g->x_bf16 || g->y_bf16;
    if (threads > MAX_SLOTS) threads = MAX_SLOTS;
    bool has_bias = pass == YOLO_CONV_FWD && bias != NULL;
    pthread_mutex_lock(&lock);
    yolo_status st = prepare_locked(g, 1, 0);
    if (st == YOLO_OK && threads > 1 && g->n >= threads && ctx->pool) {
        st = run_split_locked(ctx, pass, g, threads, bf16, a, b, has_bias ? bias : NULL, out);
    } else if (st == YOLO_OK) {
        /* Fewer images than threads: one primitive with an OpenMP team. */
        conv_entry *e = NULL;
        st = lookup_locked(pass, g, 1, threads, has_bias, bf16, &e);
        if (st == YOLO_OK) st = prepare_locked(g, 1, e->ws_bytes);
        if (st == YOLO_OK) {
            const char *what = "";
            set_threads(threads);
            dnnl_status_t s = run_slot(e, 0, a, b, has_bias ? bias : NULL, out, NULL, &what);
            if (s != dnnl_success) st = dnnl_fail(s, what, g);
        }
    }
    pthread_mutex_unlock(&lock);
    return st;
}
