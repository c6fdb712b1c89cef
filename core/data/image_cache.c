/* The loader's shared image cache (see image_cache.h). */
#include "data/image_cache.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "data/image.h"
#include "data/warn.h"

enum { ENTRY_EMPTY = 0, ENTRY_LOADING, ENTRY_READY };

typedef struct entry {
    int64_t index;
    yolo_image image;
    int refs;
    int state;
    bool failed;
    struct entry *prev, *next; /* LRU list of unpinned ready entries */
} entry;

struct yolo_image_cache {
    const yolo_dataset *ds;
    int imgsz;
    bool exact;
    entry **entries;     /* individually allocated: pointers handed out stay valid */
    int64_t n_entries, cap_entries, limit;
    entry **slot_of;     /* per sample */
    entry *lru_head, *lru_tail; /* head: most recent */
    int64_t decodes;
    pthread_mutex_t lock;
    pthread_cond_t loaded;
};

void yolo_load_size(int w0, int h0, int imgsz, int *w, int *h) {
    double r = (double)imgsz / (w0 > h0 ? w0 : h0);
    if (imgsz <= 0 || r == 1.0) {
        *w = w0, *h = h0;
        return;
    }
    int tw = (int)ceil(w0 * r), th = (int)ceil(h0 * r);
    *w = tw < imgsz ? tw : imgsz;
    *h = th < imgsz ? th : imgsz;
    *w = *w > 0 ? *w : 1;
    *h = *h > 0 ? *h : 1;
}

yolo_status yolo_image_cache_create(const yolo_dataset *ds, int imgsz, bool exact, int64_t capacity,
                                    yolo_image_cache **out) {
    yolo_image_cache *c = calloc(1, sizeof *c);
    if (!c)
        return yolo_error(YOLO_ERR_NOMEM, "image cache");
    c->ds = ds;
    c->imgsz = imgsz;
    c->exact = exact;
    c->limit = capacity < 0 || capacity > ds->n ? ds->n : capacity;
    if (c->limit < 1)
        c->limit = 1;
    c->slot_of = calloc((size_t)ds->n, sizeof *c->slot_of);
    if (!c->slot_of) {
        free(c);
        return yolo_error(YOLO_ERR_NOMEM, "image cache for %lld images", (long long)ds->n);
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->loaded, NULL);
    *out = c;
    return YOLO_OK;
}

void yolo_image_cache_free(yolo_image_cache *c) {
    if (!c)
        return;
    for (int64_t i = 0; i < c->n_entries; i++) {
        yolo_image_free(&c->entries[i]->image);
        free(c->entries[i]);
    }
    free(c->entries);
    free(c->slot_of);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->loaded);
    free(c);
}

static void lru_unlink(yolo_image_cache *c, entry *e) {
    if (e->prev)
        e->prev->next = e->next;
    else if (c->lru_head == e)
        c->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else if (c->lru_tail == e)
        c->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push_front(yolo_image_cache *c, entry *e) {
    e->prev = NULL;
    e->next = c->lru_head;
    if (c->lru_head)
        c->lru_head->prev = e;
    c->lru_head = e;
    if (!c->lru_tail)
        c->lru_tail = e;
}

/* A slot to load into: a fresh one under the limit, else the LRU victim,
 * else (everything pinned) a fresh one over the limit. Lock held. */
static entry *take_slot(yolo_image_cache *c) {
    if (c->n_entries >= c->limit && c->lru_tail) {
        entry *e = c->lru_tail;
        lru_unlink(c, e);
        if (c->slot_of[e->index] == e)
            c->slot_of[e->index] = NULL;
        yolo_image_free(&e->image);
        e->state = ENTRY_EMPTY;
        return e;
    }
    if (c->n_entries == c->cap_entries) {
        int64_t cap = c->cap_entries ? c->cap_entries * 2 : 64;
        entry **v = realloc(c->entries, sizeof *v * (size_t)cap);
        if (!v)
            return NULL;
        c->entries = v;
        c->cap_entries = cap;
    }
    entry *e = calloc(1, sizeof *e);
    if (e)
        c->entries[c->n_entries++] = e;
    return e;
}

static yolo_status load(yolo_image_cache *c, int64_t i, yolo_image *out, bool *failed) {
    const yolo_sample *s = &c->ds->samples[i];
    int w, h;
    yolo_load_size(s->width, s->height, c->imgsz, &w, &h);
    yolo_image img;
    yolo_status st = yolo_dataset_read_image(c->ds, i, c->exact ? 0 : c->imgsz, &img);
    *failed = false;
    if (st != YOLO_OK) {
        yolo_data_warn("%s: cannot decode any more (%s); using a grey image without labels", s->path, yolo_last_error());
        *failed = true;
        st = yolo_image_alloc(out, w, h);
        if (st == YOLO_OK)
            yolo_image_fill(out, YOLO_PAD_VALUE);
        return st;
    }
    if (img.width == w && img.height == h) {
        *out = img;
        return YOLO_OK;
    }
    st = yolo_image_resize(&img, w, h, false, out); /* cv2.INTER_LINEAR, as load_image */
    yolo_image_free(&img);
    return st;
}

yolo_status yolo_image_cache_acquire(yolo_image_cache *c, int64_t i, const yolo_image **image, bool *failed) {
    pthread_mutex_lock(&c->lock);
    for (;;) {
        entry *e = c->slot_of[i];
        if (e && e->state == ENTRY_READY) {
            if (e->refs++ == 0)
                lru_unlink(c, e);
            *image = &e->image;
            *failed = e->failed;
            pthread_mutex_unlock(&c->lock);
            return YOLO_OK;
        }
        if (e) { /* another worker is decoding it */
            pthread_cond_wait(&c->loaded, &c->lock);
            continue;
        }
        e = take_slot(c);
        if (!e) {
            pthread_mutex_unlock(&c->lock);
            return yolo_error(YOLO_ERR_NOMEM, "image cache entry");
        }
        e->index = i;
        e->state = ENTRY_LOADING;
        e->refs = 1;
        c->slot_of[i] = e;
        c->decodes++;
        pthread_mutex_unlock(&c->lock);
        yolo_image img = {0};
        bool bad = false;
        yolo_status st = load(c, i, &img, &bad);
        pthread_mutex_lock(&c->lock);
        if (st != YOLO_OK) {
            c->slot_of[i] = NULL;
            e->state = ENTRY_EMPTY;
            e->refs = 0;
            lru_push_front(c, e); /* an empty entry is the cheapest victim; image is empty */
            pthread_cond_broadcast(&c->loaded);
            pthread_mutex_unlock(&c->lock);
            return st;
        }
        e->image = img;
        e->failed = bad;
        e->state = ENTRY_READY;
        *image = &e->image;
        *failed = bad;
        pthread_cond_broadcast(&c->loaded);
        pthread_mutex_unlock(&c->lock);
        return YOLO_OK;
    }
}

void yolo_image_cache_release(yolo_image_cache *c, int64_t i) {
    pthread_mutex_lock(&c->lock);
    entry *e = c->slot_of[i];
    if (e && --e->refs == 0)
        lru_push_front(c, e);
    pthread_mutex_unlock(&c->lock);
}

int64_t yolo_image_cache_decodes(const yolo_image_cache *c) { return c->decodes; }
