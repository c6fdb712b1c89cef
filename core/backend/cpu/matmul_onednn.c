/* MATMUL under amp on a CPU with bf16 hardware: oneDNN's bf16 matmul on
 * bf16 copies of both operands, fp32 accumulation, f32 output (what
 * torch.autocast("cpu", bfloat16) does to matmul and nn.Linear; their
 * backward products are MATMULs too, so they run the same way).
 *
 * The copies are made dense in the product's own orientation (op(a) as
 * [m,k], op(b) as [k,n], rounded to nearest even as VCVTNEPS2BF16), so one
 * primitive shape serves every transpose. As for the convolutions
 * (conv_onednn.c), no OpenMP region is opened: the work is split over our
 * pool into slots, each running single-threaded primitives with its own
 * stream and scratchpad; a slot takes whole products when there are at
 * least as many as slots (attention's batched products), else blocks of
 * rows of each (a Linear layer). The split is a pure function of the shape
 * and the thread count, so results are bit-identical run to run.
 * Primitives and memory objects are built once per shape and kept. */
#include "backend/cpu/matmul_onednn.h"
#include "backend/cpu/onednn_engine.h"

#include <dnnl.h>
#include <dnnl_debug.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/bf16_row.h"

#define MAX_SLOTS 64
#define MAX_ENTRIES 256 /* shapes kept; more (multi_scale's sizes) clear the cache */

/* A dense bf16 [m,k] x [k,n] -> f32 [m,n] product and, per slot, its
 * memory objects: src, weights, dst and scratchpad (NULL when none). */
typedef struct mm_entry {
    int64_t m, n, k;
    int slots;
    dnnl_primitive_t prim;
    size_t scratch_bytes;
    dnnl_memory_t (*mem)[4];
    struct mm_entry *next;
} mm_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dnnl_engine_t engine; /* onednn_engine.c's, fetched once */
static dnnl_stream_t streams[MAX_SLOTS];
static void *scratch[MAX_SLOTS];
static size_t scratch_cap[MAX_SLOTS];
static uint16_t *copies[2]; /* the bf16 op(a) and op(b) of the running product */
static size_t copies_cap[2];
static mm_entry *entries;
static int n_entries;

static yolo_status mm_fail(dnnl_status_t s, const char *what, int64_t m, int64_t n, int64_t k) {
    return yolo_error(YOLO_ERR_BACKEND, "matmul (oneDNN bf16): %s failed (%s) for [%lld,%lld] x [%lld,%lld]", what,
                      dnnl_status2str(s), (long long)m, (long long)k, (long long)k, (long long)n);
}

#define MM_TRY(call, what)                                              \
    do {                                                                \
        dnnl_status_t s_ = (call);                                      \
        if (s_ != dnnl_success) return mm_fail(s_, what, m, n, k);      \
    } while (0)

static void entry_free(mm_entry *e) {
    for (int s = 0; e->mem && s < e->slots; s++)
        for (int i = 0; i < 4; i++)
            if (e->mem[s][i]) dnnl_memory_destroy(e->mem[s][i]);
    free(e->mem);
    if (e->prim) dnnl_primitive_destroy(e->prim);
    free(e);
}

static yolo_status entry_build(mm_entry *e) {
    const int64_t m = e->m, n = e->n, k = e->k;
    dnnl_memory_desc_t md[3], scratch_md;
    dnnl_dims_t sd = {m, k}, wd = {k, n}, dd = {m, n};
    MM_TRY(dnnl_memory_desc_init_by_tag(&md[0], 2, sd, dnnl_bf16, dnnl_ab), "memory desc");
    MM_TRY(dnnl_memory_desc_init_by_tag(&md[1], 2, wd, dnnl_bf16, dnnl_ab), "memory desc");
    MM_TRY(dnnl_memory_desc_init_by_tag(&md[2], 2, dd, dnnl_f32, dnnl_ab), "memory desc");
    dnnl_matmul_desc_t desc;
    MM_TRY(dnnl_matmul_desc_init(&desc, &md[0], &md[1], NULL, &md[2]), "descriptor");
    dnnl_primitive_attr_t attr;
    MM_TRY(dnnl_primitive_attr_create(&attr), "attr");
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user); /* slots run at once */
    dnnl_primitive_desc_t pd = NULL;
    yolo_onednn_set_threads(1); /* oneDNN sizes its work split when it builds */
    dnnl_status_t s = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) return mm_fail(s, "primitive descriptor", m, n, k);
    scratch_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    e->scratch_bytes = dnnl_memory_desc_get_size(&scratch_md);
    s = dnnl_primitive_create(&e->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) return mm_fail(s, "primitive creation", m, n, k);
    e->mem = calloc((size_t)e->slots, sizeof *e->mem);
    if (!e->mem) return yolo_error(YOLO_ERR_NOMEM, "matmul (oneDNN bf16): cannot allocate a cache entry");
    for (int slot = 0; slot < e->slots; slot++) {
        for (int i = 0; i < 3; i++)
            MM_TRY(dnnl_memory_create(&e->mem[slot][i], &md[i], engine, DNNL_MEMORY_NONE), "memory creation");
        if (e->scratch_bytes)
            MM_TRY(dnnl_memory_create(&e->mem[slot][3], &scratch_md, engine, DNNL_MEMORY_NONE), "memory creation");
    }
    return YOLO_OK;
}

/* The cached product [m,k] x [k,n] for `slots` slots. */
static yolo_status entry_locked(int64_t m, int64_t n, int64_t k, int slots, mm_entry **out) {
    for (mm_entry *e = entries; e; e = e->next)
        if (e->m == m && e->n == n && e->k == k && e->slots == slots) return *out = e, YOLO_OK;
    mm_entry *e = calloc(1, sizeof *e);
    if (!e) return yolo_error(YOLO_ERR_NOMEM, "matmul (oneDNN bf16): cannot allocate a cache entry");
    *e = (mm_entry){.m = m, .n = n, .k = k, .slots = slots};
    yolo_status st = entry_build(e);
    if (st != YOLO_OK) {
        entry_free(e);
        return st;
    }
    e->next = entries;
    entries = e;
    n_entries++;
    *out = e;
    return YOLO_OK;
}

static void cache_clear_locked(void) {
    while (entries) {
        mm_entry *next = entries->next;
        entry_free(entries);
        entries = next;
    }
    n_entries = 0;
}

/* The engine, and room for the bf16 copies of mm's operands. */
static yolo_status prepare_locked(const yolo_cpu_matmul *mm) {
    const int64_t m = mm->m, n = mm->n, k = mm->k;
    if (!engine) {
        yolo_status st = yolo_onednn_engine(&engine);
        if (st != YOLO_OK) return st;
    }
    const size_t want[2] = {(size_t)(mm->batches * m * k), (size_t)(mm->batches * k * n)};
    for (int i = 0; i < 2; i++) {
        if (want[i] <= copies_cap[i]) continue;
        uint16_t *p = realloc(copies[i], want[i] * sizeof *p);
        if (!p) return yolo_error(YOLO_ERR_NOMEM, "matmul (oneDNN bf16): cannot allocate %zu bf16 values", want[i]);
        copies[i] = p;
        copies_cap[i] = want[i];
    }
    return YOLO_OK;
}

/* A stream and `bytes` of scratchpad for each of `slots` slots. */
static yolo_status slots_locked(int slots, size_t bytes) {
    for (int s = 0; s < slots; s++) {
        dnnl_status_t st = streams[s] ? dnnl_success : dnnl_stream_create(&streams[s], engine, dnnl_stream_default_flags);
        if (st != dnnl_success)
            return yolo_error(YOLO_ERR_BACKEND, "matmul (oneDNN bf16): stream creation failed (%s)",
                              dnnl_status2str(st));
        if (bytes <= scratch_cap[s]) continue;
        free(scratch[s]);
        scratch_cap[s] = 0;
        if (posix_memalign(&scratch[s], 64, bytes) != 0) {
            scratch[s] = NULL;
            return yolo_error(YOLO_ERR_NOMEM, "matmul (oneDNN bf16): cannot allocate %zu bytes of scratchpad", bytes);
        }
        scratch_cap[s] = bytes;
    }
    return YOLO_OK;
}

/* ---- the bf16 copies: row r of op(x) over all batches, dense ---- */

typedef struct narrow_job {
    const float *src;
    uint16_t *dst;
    bool transposed;             /* x is stored [cols, rows] */
    int64_t rows, cols, size;    /* op(x) is [rows, cols] per batch; size: elements between batches */
} narrow_job;

enum { NARROW_PIECE = 256 };

static void narrow_range(void *arg, int64_t begin, int64_t end) {
    const narrow_job *j = arg;
    float buf[NARROW_PIECE];
    for (int64_t r = begin; r < end; r++) {
        const int64_t b = r / j->rows, i = r % j->rows;
        const float *x = j->src + b * j->size;
        uint16_t *out = j->dst + r * j->cols;
        if (!j->transposed) {
            yolo_bf16_round_row(x + i * j->cols, out, j->cols);
            continue;
        }
        for (int64_t c0 = 0; c0 < j->cols; c0 += NARROW_PIECE) {
            const int64_t len = j->cols - c0 < NARROW_PIECE ? j->cols - c0 : NARROW_PIECE;
            for (int64_t c = 0; c < len; c++) buf[c] = x[(c0 + c) * j->rows + i];
            yolo_bf16_round_row(buf, out + c0, len);
        }
    }
}

static void narrow(yolo_cpu_context *ctx, const narrow_job *j, int64_t batches) {
    yolo_cpu_run_ranges(ctx, batches * j->rows, batches * j->rows * j->cols, narrow_range, (void *)j);
}

/* ---- the products ---- */

typedef struct run_job {
    const yolo_cpu_matmul *mm;
    int slots;
    int64_t tasks, chunks, q, r; /* tasks = batches * chunks; chunk c has q + (c < r) rows */
    mm_entry *wide, *narrow;     /* the entries of q + 1 and of q rows */
    dnnl_status_t status[MAX_SLOTS];
} run_job;

static dnnl_status_t run_task(const run_job *j, int slot, int64_t t) {
    const yolo_cpu_matmul *mm = j->mm;
    const int64_t b = t / j->chunks, c = t % j->chunks;
    const int64_t rows = j->q + (c < j->r), m0 = c * j->q + (c < j->r ? c : j->r);
    mm_entry *e = rows == j->q ? j->narrow : j->wide;
    dnnl_memory_t *mem = e->mem[slot];
    void *ptr[4] = {copies[0] + (b * mm->m + m0) * mm->k, copies[1] + b * mm->k * mm->n,
                    mm->c + (b * mm->m + m0) * mm->n, scratch[slot]};
    static const int args[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_SCRATCHPAD};
    dnnl_exec_arg_t ea[4];
    int n = 0;
    for (int i = 0; i < 4; i++) {
        if (!mem[i]) continue;
        dnnl_status_t s = dnnl_memory_set_data_handle(mem[i], ptr[i]);
        if (s != dnnl_success) return s;
        ea[n++] = (dnnl_exec_arg_t){args[i], mem[i]};
    }
    dnnl_status_t s = dnnl_primitive_execute(e->prim, streams[slot], n, ea);
    return s == dnnl_success ? dnnl_stream_wait(streams[slot]) : s;
}

static void run_slots(void *arg, int64_t begin, int64_t end) {
    run_job *j = arg;
    yolo_onednn_set_threads(1); /* this thread runs its tasks alone: no OpenMP region */
    for (int64_t s = begin; s < end; s++) {
        j->status[s] = dnnl_success;
        for (int64_t t = s * j->tasks / j->slots; t < (s + 1) * j->tasks / j->slots && j->status[s] == dnnl_success;
             t++)
            j->status[s] = run_task(j, (int)s, t);
    }
}

yolo_status yolo_matmul_onednn_bf16(yolo_cpu_context *ctx, const yolo_cpu_matmul *mm) {
    const int64_t m = mm->m, n = mm->n, k = mm->k;
    int slots = ctx && ctx->threads > 0 ? ctx->threads : 1;
    if (slots > MAX_SLOTS) slots = MAX_SLOTS;
    run_job j = {.mm = mm};
    j.chunks = mm->batches >= slots ? 1 : (m < slots ? m : slots);
    j.tasks = mm->batches * j.chunks;
    j.slots = j.tasks < slots ? (int)j.tasks : slots;
    j.q = m / j.chunks;
    j.r = m % j.chunks;
    pthread_mutex_lock(&lock);
    if (n_entries + 2 > MAX_ENTRIES) cache_clear_locked(); /* before both lookups: neither is freed after */
    yolo_status st = prepare_locked(mm);
    if (st == YOLO_OK && j.r) st = entry_locked(j.q + 1, n, k, j.slots, &j.wide);
    if (st == YOLO_OK && j.q) st = entry_locked(j.q, n, k, j.slots, &j.narrow);
    if (st == YOLO_OK) {
        const size_t wide = j.wide ? j.wide->scratch_bytes : 0, narrow_ = j.narrow ? j.narrow->scratch_bytes : 0;
        st = slots_locked(j.slots, wide > narrow_ ? wide : narrow_);
    }
    if (st == YOLO_OK) {
        const narrow_job na = {mm->a, copies[0], mm->ta, m, k, mm->a_size};
        const narrow_job nb = {mm->b, copies[1], mm->tb, k, n, mm->b_size};
        narrow(ctx, &na, mm->batches);
        narrow(ctx, &nb, mm->batches);
        yolo_cpu_run_split(ctx, j.slots, run_slots, &j);
        for (int s = 0; s < j.slots && st == YOLO_OK; s++)
            if (j.status[s] != dnnl_success) st = mm_fail(j.status[s], "execution", m, n, k);
    }
    pthread_mutex_unlock(&lock);
    return st;
}
