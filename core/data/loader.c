/* The multi-threaded batch loader (see loader.h). */
#include "data/loader.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "data/image_cache.h"
#include "data/rng.h"
#include "data/sampler.h"

typedef struct slot {
    yolo_batch *batch;
    yolo_status status;
    char *error;     /* the worker's message, re-raised on the consumer's thread */
    bool ready;
} slot;

struct yolo_loader {
    const yolo_dataset *ds;
    yolo_loader_options opt;
    yolo_sampler sampler;
    yolo_image_cache *cache;
    bool classify;
    bool rect;
    int side;                 /* output image side (imgsz) */
    int side_alloc;           /* the largest side a batch image may have (rect) */
    int64_t *rect_order;      /* rect: samples by aspect ratio, else NULL */
    /* the current epoch (changed only while no worker is busy) */
    int epoch;
    bool mosaic_on;
    int64_t n_batches;
    int deal_world;
    int64_t *order, *position;
    /* the ring */
    pthread_mutex_t lock;
    pthread_cond_t work, ready;
    slot *slots;
    int prefetch;
    int64_t next_claim, next_consume, end;
    unsigned generation;
    int busy;
    bool stop;
    pthread_t *threads;
    int n_threads;
    yolo_batch **pool;
    int n_pool, cap_pool;
};

/* ---- batches -------------------------------------------------------------- */

static void batch_free(yolo_batch *b) {
    if (!b)
        return;
    free(b->images);
    free(b->sample_index);
    free(b->image_class);
    free(b->meta);
    free(b->aug);
    free(b->batch_idx);
    yolo_instances_free(&b->instances);
    free(b);
}

static yolo_batch *batch_new(const yolo_loader *l) {
    yolo_batch *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    int n = l->opt.batch;
    size_t img = (size_t)n * 3 * (size_t)l->side_alloc * (size_t)l->side_alloc;
    b->images = malloc(img);
    b->sample_index = calloc((size_t)n, sizeof *b->sample_index);
    b->image_class = calloc((size_t)n, sizeof *b->image_class);
    b->meta = calloc((size_t)n, sizeof *b->meta);
    b->aug = calloc((size_t)n, sizeof *b->aug);
    yolo_instances_init(&b->instances, l->ds->kpt_count, l->ds->kpt_dims);
    if (!b->images || !b->sample_index || !b->image_class || !b->meta || !b->aug) {
        batch_free(b);
        return NULL;
    }
    return b;
}

/* Lock held. */
static yolo_batch *pool_take(yolo_loader *l) { return l->n_pool ? l->pool[--l->n_pool] : NULL; }

static void pool_put(yolo_loader *l, yolo_batch *b) {
    if (!b)
        return;
    if (l->n_pool == l->cap_pool) {
        int cap = l->cap_pool ? l->cap_pool * 2 : 8;
        yolo_batch **v = realloc(l->pool, sizeof *v * (size_t)cap);
        if (!v) {
            batch_free(b);
            return;
        }
        l->pool = v;
        l->cap_pool = cap;
    }
    l->pool[l->n_pool++] = b;
}

static yolo_status source_acquire(void *ctx, int64_t index, yolo_aug_tile *tile) {
    yolo_loader *l = ctx;
    static const yolo_instances empty = {0};
    bool failed;
    const yolo_image *img;
    yolo_status st = yolo_image_cache_acquire(l->cache, index, &img, &failed);
    if (st != YOLO_OK)
        return st;
    const yolo_sample *s = &l->ds->samples[index];
    tile->image = img;
    tile->labels = failed ? &empty : &s->labels;
    tile->orig_width = s->width;
    tile->orig_height = s->height;
    tile->image_class = s->image_class;
    return YOLO_OK;
}

static void source_release(void *ctx, int64_t index) {
    yolo_loader *l = ctx;
    yolo_image_cache_release(l->cache, index);
}

static int loader_stride(const yolo_loader *l) { return l->opt.stride > 0 ? l->opt.stride : 32; }

/* Ultralytics' rect batch shape from the batch's aspect ratios (h / w):
 * ceil(shape * imgsz / stride + pad) * stride, pad 0.0 for a training
 * dataset and 0.5 for validation (build_yolo_dataset). */
static void rect_shape(const yolo_loader *l, const int64_t *idx, int n, int *w, int *h) {
    double lo = 1e9, hi = 0;
    for (int k = 0; k < n; k++) {
        const yolo_sample *s = &l->ds->samples[idx[k]];
        double ar = (double)s->height / s->width;
        lo = ar < lo ? ar : lo;
        hi = ar > hi ? ar : hi;
    }
    double sh = 1, sw = 1;
    if (hi < 1)
        sh = hi;
    else if (lo > 1)
        sw = 1 / lo;
    int stride = loader_stride(l);
    double pad = l->opt.augment ? 0.0 : 0.5;
    *h = (int)ceil(sh * l->side / stride + pad) * stride;
    *w = (int)ceil(sw * l->side / stride + pad) * stride;
}

/* multi_scale = f: Ultralytics' DetectionTrainer.preprocess_batch (8.4;
 * 8.3's true is f = 0.5, and 8.3 lacks the max). A size per batch
 *   sz = randrange(max(stride, int((1 - f) imgsz)), int((1 + f) imgsz + stride)) // stride * stride
 * and the batch's h x w scaled by sz / max(h, w), each side rounded up to
 * a stride multiple. Drawn from (seed, YOLO_RNG_MULTISCALE, epoch, batch), so every
 * rank and a resumed run draw the same size. */
static void multi_scale_shape(const yolo_loader *l, int64_t number, int *w, int *h) {
    int stride = loader_stride(l);
    yolo_rng rng;
    yolo_rng_init(&rng, l->opt.seed, YOLO_RNG_MULTISCALE, (uint32_t)l->epoch, (uint32_t)number);
    const double f = l->opt.multi_scale;
    int64_t lo = (int64_t)(l->side * (1 - f)), hi = (int64_t)(l->side * (1 + f) + stride);
    if (lo < stride)
        lo = stride;
    int64_t sz = (lo + (int64_t)yolo_rng_below(&rng, (uint64_t)(hi - lo))) / stride * stride;
    int longest = *w > *h ? *w : *h;
    if (sz == longest)
        return;
    double sf = (double)sz / longest;
    *w = (int)ceil(*w * sf / stride) * stride;
    *h = (int)ceil(*h * sf / stride) * stride;
}

/* The largest side multi_scale_shape can give. */
static int multi_scale_max_side(int side, int stride, double f) {
    int64_t hi = (int64_t)(side * (1 + f) + stride);
    int64_t sz = (hi - 1) / stride * stride;
    return (int)(sz > stride ? sz : stride);
}

static int cmp_aspect_ctx_less(const yolo_dataset *ds, int64_t a, int64_t b) {
    double x = (double)ds->samples[a].height / ds->samples[a].width;
    double y = (double)ds->samples[b].height / ds->samples[b].width;
    return x < y ? -1 : x > y ? 1 : (a > b) - (a < b);
}

/* Samples sorted by aspect ratio (insertion into a merge sort: stable, no qsort context). */
static void sort_by_aspect(const yolo_dataset *ds, int64_t *v, int64_t *tmp, int64_t n) {
    if (n < 2)
        return;
    int64_t m = n / 2;
    sort_by_aspect(ds, v, tmp, m);
    sort_by_aspect(ds, v + m, tmp, n - m);
    int64_t i = 0, j = m, k = 0;
    while (i < m && j < n)
        tmp[k++] = cmp_aspect_ctx_less(ds, v[j], v[i]) < 0 ? v[j++] : v[i++];
    while (i < m)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, sizeof(int64_t) * (size_t)n);
}

/* HWC -> CHW into the batch. */
static void put_image(yolo_batch *b, int k, const yolo_image *img) {
    size_t plane = (size_t)b->height * b->width;
    uint8_t *dst = b->images + (size_t)k * 3 * plane;
    const uint8_t *src = img->data;
    for (size_t p = 0; p < plane; p++) {
        dst[p] = src[3 * p];
        dst[plane + p] = src[3 * p + 1];
        dst[2 * plane + p] = src[3 * p + 2];
    }
}

static yolo_status append_instances(yolo_batch *b, int k, const yolo_instances *ins) {
    int before = b->instances.n;
    yolo_status st = yolo_instances_append(&b->instances, ins);
    if (st != YOLO_OK)
        return st;
    int32_t *idx = realloc(b->batch_idx, sizeof(int32_t) * ((size_t)b->instances.cap + 1));
    if (!idx)
        return yolo_error(YOLO_ERR_NOMEM, "batch instances");
    b->batch_idx = idx;
    for (int j = before; j < b->instances.n; j++)
        idx[j] = k;
    return YOLO_OK;
}

static yolo_status build_batch(yolo_loader *l, int64_t number, yolo_batch *b) {
    int64_t idx[4096];
    int64_t *indices = l->opt.batch <= 4096 ? idx : malloc(sizeof(int64_t) * (size_t)l->opt.batch);
    if (!indices)
        return yolo_error(YOLO_ERR_NOMEM, "batch indices");
    int64_t dealt = number * l->deal_world + l->opt.deal_rank; /* the 1-rank loader's batch */
    b->n = yolo_sampler_batch(&l->sampler, l->order, dealt, indices);
    int aug_w = l->side, aug_h = l->side; /* what the augmentation outputs */
    if (l->rect)
        rect_shape(l, indices, b->n, &aug_w, &aug_h);
    b->width = aug_w, b->height = aug_h;
    if (l->opt.multi_scale > 0)
        multi_scale_shape(l, number, &b->width, &b->height);
    b->epoch = l->epoch;
    b->batch_number = number;
    yolo_instances_clear(&b->instances);
    yolo_aug_source src = {l, source_acquire, source_release, l->order, l->position, l->ds->n};
    yolo_aug_output out;
    memset(&out, 0, sizeof out);
    yolo_instances_init(&out.instances, l->ds->kpt_count, l->ds->kpt_dims);
    yolo_status st = YOLO_OK;
    yolo_image scaled = {0};
    for (int k = 0; k < b->n && st == YOLO_OK; k++) {
        if (l->rect && l->opt.augment)
            st = yolo_augment_detect_rect(&l->opt.aug, l->opt.seed, l->epoch, indices[k], l->ds->cfg->flip_idx, &src,
                                          aug_w, aug_h, &out);
        else if (l->rect)
            st = yolo_augment_letterbox(&l->opt.aug, l->epoch, indices[k], &src, aug_w, aug_h, &out);
        else if (l->classify)
            st = yolo_augment_classify(&l->opt.aug, l->opt.augment, l->opt.seed, l->epoch, indices[k], &src, &out);
        else
            st = yolo_augment_detect(&l->opt.aug, l->opt.augment, l->mosaic_on, l->opt.seed, l->epoch, indices[k],
                                     l->ds->cfg->flip_idx, &src, &out);
        if (st == YOLO_OK && (b->width != aug_w || b->height != aug_h)) { /* multi_scale: bilinear, labels normalized */
            st = yolo_image_resize(&out.image, b->width, b->height, false, &scaled);
            if (st == YOLO_OK) {
                yolo_image_free(&out.image);
                out.image = scaled;
                scaled = (yolo_image){0};
            }
        }
        if (st != YOLO_OK)
            break;
        put_image(b, k, &out.image);
        yolo_image_free(&out.image);
        b->sample_index[k] = indices[k];
        b->image_class[k] = out.image_class;
        b->meta[k] = out.meta;
        b->aug[k] = out.record;
        st = append_instances(b, k, &out.instances);
    }
    yolo_image_free(&out.image);
    yolo_instances_free(&out.instances);
    if (indices != idx)
        free(indices);
    return st;
}

/* ---- workers -------------------------------------------------------------- */

static void *worker_main(void *arg) {
    yolo_loader *l = arg;
    pthread_mutex_lock(&l->lock);
    while (!l->stop) {
        if (l->next_claim < l->end && l->next_claim < l->next_consume + l->prefetch) {
            int64_t number = l->next_claim++;
            unsigned gen = l->generation;
            yolo_batch *b = pool_take(l);
            l->busy++;
            pthread_mutex_unlock(&l->lock);
            yolo_status st = YOLO_OK;
            if (!b)
                b = batch_new(l);
            if (!b)
                st = yolo_error(YOLO_ERR_NOMEM, "batch of %d images", l->opt.batch);
            else
                st = build_batch(l, number, b);
            char *err = st != YOLO_OK ? strdup(yolo_last_error()) : NULL;
            pthread_mutex_lock(&l->lock);
            l->busy--;
            if (gen == l->generation) {
                slot *s = &l->slots[number % l->prefetch];
                s->batch = b;
                s->status = st;
                s->error = err;
                s->ready = true;
                pthread_cond_broadcast(&l->ready);
            } else {
                pool_put(l, b);
                free(err);
            }
            pthread_cond_broadcast(&l->work);
        } else {
            pthread_cond_wait(&l->work, &l->lock);
        }
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

static void set_order(yolo_loader *l, int epoch);

yolo_status yolo_loader_create(const yolo_dataset *ds, const yolo_loader_options *opt, yolo_loader **out) {
    *out = NULL;
    if (opt->aug.imgsz <= 0 || opt->aug.imgsz > 8192)
        return yolo_error(YOLO_ERR_CONFIG, "imgsz=%d: must be in 1..8192", opt->aug.imgsz);
    if (opt->workers < 0 || opt->workers > 256)
        return yolo_error(YOLO_ERR_CONFIG, "workers=%d: must be in 0..256", opt->workers);
    yolo_loader *l = calloc(1, sizeof *l);
    if (!l)
        return yolo_error(YOLO_ERR_NOMEM, "loader");
    l->ds = ds;
    l->opt = *opt;
    if (l->opt.world <= 0)
        l->opt.world = 1;
    l->deal_world = opt->deal_world > 1 ? opt->deal_world : 1;
    if (opt->deal_rank < 0 || opt->deal_rank >= l->deal_world || (l->deal_world > 1 && l->opt.world > 1)) {
        free(l);
        return yolo_error(YOLO_ERR_ARG, "loader: deal_rank %d of deal_world %d (with world %d)", opt->deal_rank,
                          opt->deal_world, opt->world);
    }
    l->classify = ds->cfg->image_folder;
    l->side = l->side_alloc = opt->aug.imgsz;
    l->rect = opt->rect && !l->classify;
    if (opt->multi_scale > 0 && l->classify) { /* (rect is ignored there: validation asks every task for it) */
        free(l);
        return yolo_error(YOLO_ERR_CONFIG, "multi_scale=%g: not for classification datasets", opt->multi_scale);
    }
    if (l->rect && opt->shuffle) {
        free(l);
        return yolo_error(YOLO_ERR_CONFIG, "rect=True needs shuffle off (the batches are in aspect-ratio order)");
    }
    int stride = loader_stride(l);
    if (l->rect) /* the largest rect shape (validation's pad 0.5 included) */
        l->side_alloc = (int)ceil((double)l->side / stride + 0.5) * stride;
    if (opt->multi_scale > 0 && multi_scale_max_side(l->side, stride, opt->multi_scale) > l->side_alloc)
        l->side_alloc = multi_scale_max_side(l->side, stride, opt->multi_scale);
    l->sampler = (yolo_sampler){ds->n, opt->batch, opt->rank, l->opt.world, opt->shuffle, opt->drop_last, opt->seed};
    yolo_status st = yolo_sampler_check(&l->sampler);
    if (st != YOLO_OK) {
        free(l);
        return st;
    }
    l->n_threads = opt->workers;
    l->prefetch = opt->prefetch > 0 ? opt->prefetch : (2 * opt->workers > 2 ? 2 * opt->workers : 2);
    int64_t capacity = -1;
    if (!opt->cache_ram) {
        int window = opt->aug.mosaic_window > 0 ? opt->aug.mosaic_window : 1;
        capacity = opt->cache_images > 0 ? opt->cache_images
                                          : 4 * (int64_t)window + (int64_t)opt->batch * (l->prefetch + l->n_threads + 1) +
                                                8 * (int64_t)(l->n_threads + 1);
    }
    /* classification decodes at full size; detection caches load_image's resize (bit-exact for validation) */
    st = yolo_image_cache_create(ds, l->classify ? 0 : l->side, !opt->augment, capacity, &l->cache);
    l->order = malloc(sizeof(int64_t) * (size_t)ds->n);
    l->position = malloc(sizeof(int64_t) * (size_t)ds->n);
    l->slots = calloc((size_t)l->prefetch, sizeof *l->slots);
    l->threads = calloc((size_t)l->n_threads + 1, sizeof *l->threads);
    if (st == YOLO_OK && (!l->order || !l->position || !l->slots || !l->threads))
        st = yolo_error(YOLO_ERR_NOMEM, "loader for %lld images", (long long)ds->n);
    if (st != YOLO_OK) {
        yolo_image_cache_free(l->cache);
        free(l->order), free(l->position), free(l->slots), free(l->threads);
        free(l);
        return st;
    }
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->work, NULL);
    pthread_cond_init(&l->ready, NULL);
    l->n_batches = yolo_sampler_batches(&l->sampler);
    if (l->deal_world > 1) /* this rank's share of the dealt batches */
        l->n_batches = l->n_batches > opt->deal_rank ? (l->n_batches - opt->deal_rank + l->deal_world - 1) / l->deal_world : 0;
    if (l->rect) {
        l->rect_order = malloc(sizeof(int64_t) * (size_t)ds->n);
        int64_t *tmp = malloc(sizeof(int64_t) * (size_t)ds->n);
        if (!l->rect_order || !tmp) {
            free(tmp);
            l->n_threads = 0; /* none started yet */
            yolo_loader_free(l);
            return yolo_error(YOLO_ERR_NOMEM, "rect order");
        }
        for (int64_t i = 0; i < ds->n; i++)
            l->rect_order[i] = i;
        sort_by_aspect(ds, l->rect_order, tmp, ds->n);
        free(tmp);
    }
    set_order(l, 0);
    for (int t = 0; t < l->n_threads; t++)
        if (pthread_create(&l->threads[t], NULL, worker_main, l) != 0) {
            l->n_threads = t;
            yolo_loader_free(l);
            return yolo_error(YOLO_ERR_NOMEM, "cannot start loader worker %d", t);
        }
    *out = l;
    return YOLO_OK;
}

/* The epoch's order: the sampler's, or aspect-ratio order for rect. */
static void set_order(yolo_loader *l, int epoch) {
    yolo_sampler_order(&l->sampler, epoch, l->order, l->position);
    if (l->rect) {
        memcpy(l->order, l->rect_order, sizeof(int64_t) * (size_t)l->ds->n);
        for (int64_t i = 0; i < l->ds->n; i++)
            l->position[l->order[i]] = i;
    }
}

static void drop_ready(yolo_loader *l) {
    for (int i = 0; i < l->prefetch; i++) {
        if (l->slots[i].ready)
            pool_put(l, l->slots[i].batch);
        free(l->slots[i].error);
        memset(&l->slots[i], 0, sizeof l->slots[i]);
    }
}

void yolo_loader_free(yolo_loader *l) {
    if (!l)
        return;
    pthread_mutex_lock(&l->lock);
    l->stop = true;
    pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->lock);
    for (int t = 0; t < l->n_threads; t++)
        pthread_join(l->threads[t], NULL);
    drop_ready(l);
    for (int i = 0; i < l->n_pool; i++)
        batch_free(l->pool[i]);
    free(l->pool);
    yolo_image_cache_free(l->cache);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->work);
    pthread_cond_destroy(&l->ready);
    free(l->order), free(l->position), free(l->slots), free(l->threads), free(l->rect_order);
    free(l);
}

void yolo_loader_set_epochs(yolo_loader *l, int epochs) { l->opt.epochs = epochs; }

bool yolo_loader_mosaic_on(const yolo_loader *l, int epoch) {
    int close = l->opt.aug.close_mosaic;
    return !(l->opt.epochs > 0 && close > 0 && epoch >= l->opt.epochs - close);
}

yolo_status yolo_loader_start_epoch(yolo_loader *l, int epoch, int64_t first_batch) {
    if (epoch < 0)
        return yolo_error(YOLO_ERR_ARG, "epoch %d", epoch);
    pthread_mutex_lock(&l->lock);
    l->generation++;
    l->end = 0; /* no new claims while we wait */
    while (l->busy > 0)
        pthread_cond_wait(&l->work, &l->lock);
    drop_ready(l);
    l->epoch = epoch;
    l->mosaic_on = yolo_loader_mosaic_on(l, epoch);
    set_order(l, epoch);
    int64_t first = first_batch < 0 ? 0 : first_batch > l->n_batches ? l->n_batches : first_batch;
    l->next_claim = l->next_consume = first;
    l->end = l->n_batches;
    pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->lock);
    return YOLO_OK;
}

int64_t yolo_loader_num_batches(const yolo_loader *l) { return l->n_batches; }
int64_t yolo_loader_decodes(const yolo_loader *l) { return yolo_image_cache_decodes(l->cache); }

yolo_status yolo_loader_next(yolo_loader *l, yolo_batch **out) {
    *out = NULL;
    if (l->n_threads == 0) {
        if (l->next_consume >= l->end)
            return YOLO_OK;
        yolo_batch *b = pool_take(l);
        if (!b && !(b = batch_new(l)))
            return yolo_error(YOLO_ERR_NOMEM, "batch of %d images", l->opt.batch);
        yolo_status st = build_batch(l, l->next_consume++, b);
        if (st != YOLO_OK) {
            pool_put(l, b);
            return st;
        }
        *out = b;
        return YOLO_OK;
    }
    pthread_mutex_lock(&l->lock);
    if (l->next_consume >= l->end) {
        pthread_mutex_unlock(&l->lock);
        return YOLO_OK;
    }
    slot *s = &l->slots[l->next_consume % l->prefetch];
    while (!s->ready)
        pthread_cond_wait(&l->ready, &l->lock);
    yolo_batch *b = s->batch;
    yolo_status st = s->status;
    char *err = s->error;
    memset(s, 0, sizeof *s);
    l->next_consume++;
    pthread_cond_broadcast(&l->work);
    if (st != YOLO_OK)
        pool_put(l, b);
    pthread_mutex_unlock(&l->lock);
    if (st != YOLO_OK) {
        yolo_error(st, "%s", err ? err : "loader worker failed");
        free(err);
        return st;
    }
    *out = b;
    return YOLO_OK;
}

void yolo_loader_release(yolo_loader *l, yolo_batch *b) {
    if (!b)
        return;
    pthread_mutex_lock(&l->lock);
    pool_put(l, b);
    pthread_mutex_unlock(&l->lock);
}
