/* Reading an Ultralytics .pt: the zip, the pickle, the model object
 * (pt_import.h). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interop/pt_internal.h"
#include "data/fsutil.h"
#include "yolo/tensor.h"

#define MAX_MODULE_DEPTH 32
/* A checkpoint's data.pkl is 40-180 KB (tests/fixtures, Ultralytics' n
 * models); 32 MiB is far past any model's and bounds the pickle reader. */
#define PICKLE_MAX ((size_t)32 << 20)
#define PICKLE_MAX_TEXT "32 MiB"
/* The byte budget of a .pt, checked on the zip's directory before any
 * storage is inflated: its members may declare at most INFLATE_RATIO times
 * the file's size plus INFLATE_SLACK uncompressed. torch.save stores its
 * members (ratio 1) and float weights deflate to 80-90% at best, while a
 * deflated run of zeros inflates a thousandfold. Then only the storages
 * the model's tensors read are inflated, each to the bytes its pickle
 * declares and no further, whatever the directory said. */
#define INFLATE_RATIO 4
#define INFLATE_SLACK ((uint64_t)16 << 20)
/* The f32 elements a storage's tensors may hold together: VIEW_REUSE
 * times its own. A PyTorch state dict lists a tied weight under each
 * module that holds it (twice), never more; with the budget above, memory
 * stays proportional to the file's size however the tensors share
 * storages. */
#define VIEW_REUSE 2

typedef struct zip_entry { /* a member as the zip's central directory lists it */
    char *name;
    int64_t size;          /* its declared uncompressed size, -1 if none */
} zip_entry;

typedef struct pt_ref {   /* a view by its storage's key, for sorting */
    const char *key;
    int view;
} pt_ref;

typedef struct pt_storage { /* a zip member the model's tensors read */
    const char *key;
    size_t bytes;           /* numel * element size, as the pickle declares it */
    int first, end;         /* its views: order[first, end) */
    bool read;
} pt_storage;

typedef struct pt_reader {
    const char *what;
    size_t file_size;
    zip_entry *entries;
    size_t n_entries;
    const char *pkl_name;    /* <top>/data.pkl (an entry's name: entries move as they grow) */
    uint8_t *pkl_data;
    size_t pkl_size;
    char top[256];  /* "<top>/" of <top>/data.pkl */
    yolo_pt_model *pt;
    size_t cap_tensors;
    const yolo_pk_value **views; /* the tensors' views (_rebuild_tensor_v2), alive with the pickle */
    pt_ref *order;           /* views sorted by storage key */
    pt_storage *storages;    /* sorted by key */
    size_t n_storages;
    size_t visits, max_visits; /* state-dict entries walked; capped by the pickle's values */
    bool header_only; /* the pickle alone: tensors get names and shapes, no data */
} pt_reader;

bool yolo_pt_is_path(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return (n > 3 && !strcmp(path + n - 3, ".pt")) || (n > 4 && !strcmp(path + n - 4, ".pth"));
}

const char *yolo_pt_missing_hint(const char *path, int errno_value) {
    if (errno_value != ENOENT || !yolo_pt_is_path(path) || strchr(path, '/')) return "";
    return " (Ultralytics downloads its released weights by name; this build reads local files only: download the "
           ".pt and give its path, or train from the model's yaml)";
}

/* ---- the zip ---- */

static const char *archive_message(struct archive *a, const char *otherwise) {
    return archive_error_string(a) ? archive_error_string(a) : otherwise;
}

/* Reads the current member into *out: `want` bytes expected (its size as
 * declared), `max` + 1 at most, whatever it declares (*n > max: longer). */
static yolo_status read_member(pt_reader *rd, struct archive *a, const char *name, size_t want, size_t max,
                               uint8_t **out, size_t *n) {
    size_t cap = (want < max ? want : max) + 1;
    uint8_t *buf = malloc(cap);
    *n = 0;
    for (;;) {
        if (!buf) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory reading %s", rd->what, name);
        if (*n == cap) {
            if (cap == max + 1) break;
            size_t bigger = cap > max / 2 ? max + 1 : cap * 2;
            uint8_t *grown = realloc(buf, bigger);
            if (!grown) free(buf);
            buf = grown;
            cap = bigger;
            continue;
        }
        la_ssize_t r = archive_read_data(a, buf + *n, cap - *n);
        if (r < 0) {
            free(buf);
            return yolo_error(YOLO_ERR_FORMAT, "%s: member %s cannot be read: %s", rd->what, name,
                              archive_message(a, "damaged"));
        }
        if (r == 0) break;
        *n += (size_t)r;
    }
    *out = buf;
    return YOLO_OK;
}

/* A reader of the zip's central directory (*out NULL on failure). */
static yolo_status open_zip(pt_reader *rd, const void *data, size_t size, struct archive **out) {
    *out = NULL;
    struct archive *a = archive_read_new();
    if (!a) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    archive_read_support_format_zip_seekable(a);
    if (archive_read_open_memory(a, data, size) != ARCHIVE_OK) {
        yolo_status st = yolo_error(YOLO_ERR_FORMAT, "%s is truncated or damaged: its zip directory cannot be read (%s)",
                                    rd->what, archive_message(a, "?"));
        archive_read_free(a);
        return st;
    }
    *out = a;
    return YOLO_OK;
}

/* The next regular member's header; *name NULL at the end. */
static yolo_status next_member(pt_reader *rd, struct archive *a, size_t index, struct archive_entry **e,
                               const char **name) {
    for (;;) {
        int r = archive_read_next_header(a, e);
        *name = NULL;
        if (r == ARCHIVE_EOF) return YOLO_OK;
        if (r != ARCHIVE_OK || !(*name = archive_entry_pathname(*e)))
            return yolo_error(YOLO_ERR_FORMAT, "%s is damaged: zip entry %zu: %s", rd->what, index,
                              archive_message(a, "no name"));
        if (archive_entry_filetype(*e) == AE_IFREG) return YOLO_OK;
    }
}

/* The first pass: every member's name and declared size from the central
 * directory (nothing inflated), and data.pkl read (PICKLE_MAX at most). */
static yolo_status list_zip(pt_reader *rd, const void *data, size_t size) {
    const uint8_t *b = data;
    if (size < 4 || b[0] != 'P' || b[1] != 'K')
        return yolo_error(YOLO_ERR_FORMAT, "%s is not a PyTorch checkpoint (not a zip archive; the legacy "
                          "non-zip torch.save format is not read)", rd->what);
    struct archive *a = NULL;
    yolo_status st = open_zip(rd, data, size, &a);
    size_t cap = 0;
    while (!st) {
        struct archive_entry *e;
        const char *name;
        if ((st = next_member(rd, a, rd->n_entries, &e, &name)) || !name) break;
        if (rd->n_entries == cap) {
            cap = cap ? cap * 2 : 64;
            zip_entry *grown = realloc(rd->entries, cap * sizeof *grown);
            if (!grown) {
                st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
                break;
            }
            rd->entries = grown;
        }
        zip_entry *m = &rd->entries[rd->n_entries];
        m->size = archive_entry_size_is_set(e) ? archive_entry_size(e) : -1;
        if (!(m->name = strdup(name))) {
            st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
            break;
        }
        rd->n_entries++;
        const char *slash = strchr(name, '/');
        if (!slash || strcmp(slash, "/data.pkl") || (size_t)(slash - name) + 2 > sizeof rd->top) continue;
        if (rd->pkl_name) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s holds two pickles (%s and %s)", rd->what, rd->pkl_name, name);
            break;
        }
        rd->pkl_name = m->name;
        snprintf(rd->top, sizeof rd->top, "%.*s/", (int)(slash - name), name);
        /* refused by its declared size unread, else by what it inflates to */
        bool large = m->size > (int64_t)PICKLE_MAX;
        if (!large && (st = read_member(rd, a, name, m->size >= 0 ? (size_t)m->size : 1 << 20, PICKLE_MAX,
                                        &rd->pkl_data, &rd->pkl_size)))
            break;
        if (large || rd->pkl_size > PICKLE_MAX)
            st = yolo_error(YOLO_ERR_FORMAT, "%s: %s is larger than " PICKLE_MAX_TEXT " (a checkpoint's pickle is a "
                            "few hundred KB)", rd->what, name);
    }
    if (a) archive_read_free(a);
    return st;
}

/* ---- tensors ---- */

static float element_f32(const uint8_t *p, yolo_pk_dtype dtype) {
    uint64_t u64;
    uint32_t u32;
    uint16_t u16;
    float f;
    double d;
    switch (dtype) {
    case YOLO_PK_F32: memcpy(&f, p, 4); return f;
    case YOLO_PK_F16: memcpy(&u16, p, 2); return yolo_f16_to_f32(u16);
    case YOLO_PK_BF16: memcpy(&u16, p, 2); u32 = (uint32_t)u16 << 16; memcpy(&f, &u32, 4); return f;
    case YOLO_PK_F64: memcpy(&d, p, 8); return (float)d;
    case YOLO_PK_I64: memcpy(&u64, p, 8); return (float)(int64_t)u64;
    case YOLO_PK_I32: memcpy(&u32, p, 4); return (float)(int32_t)u32;
    }
    return 0;
}

/* A state-dict tensor: its name and shape now, its data once the budget
 * is known (read_storages). The pickle bounded the view (pickle.c's
 * rebuild_tensor): inside its storage, never more elements than it. */
static yolo_status add_tensor(pt_reader *rd, const char *name, const yolo_pk_value *t) {
    yolo_pt_model *pt = rd->pt;
    if (pt->n_tensors == (int)rd->cap_tensors) {
        size_t cap = rd->cap_tensors ? rd->cap_tensors * 2 : 256;
        yolo_pt_tensor *v = realloc(pt->tensors, cap * sizeof *v);
        const yolo_pk_value **views = v ? realloc(rd->views, cap * sizeof *views) : NULL;
        if (v) pt->tensors = v;
        if (!views) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
        rd->views = views;
        rd->cap_tensors = cap;
    }
    yolo_pt_tensor *out = &pt->tensors[pt->n_tensors];
    memset(out, 0, sizeof *out);
    out->ndim = t->ndim;
    out->numel = 1;
    for (int d = 0; d < t->ndim; d++) out->shape[d] = t->shape[d], out->numel *= t->shape[d];
    if (!(out->name = strdup(name))) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    rd->views[pt->n_tensors] = t;
    pt->n_tensors++;
    return YOLO_OK;
}

static const yolo_pk_value *storage_of(const pt_reader *rd, int k) { return rd->views[rd->order[k].view]->storage; }

static int by_key(const void *a, const void *b) { return strcmp(((const pt_ref *)a)->key, ((const pt_ref *)b)->key); }
static int storage_by_key(const void *key, const void *s) { return strcmp(key, ((const pt_storage *)s)->key); }

/* The storages the tensors read, one per key, and the element rule: the
 * views of a storage together hold at most VIEW_REUSE times its elements.
 * Before any tensor's data is allocated. */
static yolo_status group_storages(pt_reader *rd) {
    int n = rd->pt->n_tensors;
    rd->order = malloc(sizeof *rd->order * (size_t)(n ? n : 1));
    rd->storages = malloc(sizeof *rd->storages * (size_t)(n ? n : 1));
    if (!rd->order || !rd->storages) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    for (int i = 0; i < n; i++) rd->order[i] = (pt_ref){rd->views[i]->storage->s, i};
    qsort(rd->order, (size_t)n, sizeof *rd->order, by_key);
    int64_t held = 0; /* by the views of the current storage */
    for (int i = 0; i < n; i++) {
        const yolo_pk_value *s = storage_of(rd, i), *first = NULL;
        pt_storage *last = rd->n_storages ? &rd->storages[rd->n_storages - 1] : NULL;
        if (!last || strcmp(last->key, s->s)) {
            last = &rd->storages[rd->n_storages++];
            *last = (pt_storage){.key = s->s, .bytes = (size_t)s->numel * yolo_pk_dtype_size(s->dtype), .first = i};
            held = 0;
        } else if (first = storage_of(rd, last->first), s->numel != first->numel || s->dtype != first->dtype) {
            /* torch.save declares a storage the same way wherever it is shared */
            return yolo_error(YOLO_ERR_FORMAT, "%s: storage %s is declared twice differently (%lld %s elements, "
                              "then %lld %s)", rd->what, s->s, (long long)first->numel,
                              yolo_pk_dtype_name(first->dtype), (long long)s->numel, yolo_pk_dtype_name(s->dtype));
        }
        last->end = i + 1;
        held += rd->pt->tensors[rd->order[i].view].numel; /* each <= its storage's 2^40 (pickle.c): no overflow */
        if (held > VIEW_REUSE * s->numel)
            return yolo_error(YOLO_ERR_FORMAT, "%s: its tensors hold %lld elements of storage %s by %s, more than %d "
                              "times its %lld (views that repeat a storage's elements are not read)", rd->what,
                              (long long)held, s->s, rd->pt->tensors[rd->order[i].view].name, VIEW_REUSE,
                              (long long)s->numel);
    }
    return YOLO_OK;
}

/* The storages a zip entry holds (NULL: none the tensors read). */
static pt_storage *storage_member(const pt_reader *rd, const char *name) {
    size_t top = strlen(rd->top);
    if (strncmp(name, rd->top, top) || strncmp(name + top, "data/", 5)) return NULL;
    return bsearch(name + top + 5, rd->storages, rd->n_storages, sizeof *rd->storages, storage_by_key);
}

/* The byte budget, from the zip's directory before anything but the
 * pickle is inflated: what the members declare (and a read storage whose
 * member declares nothing) within INFLATE_RATIO times the file's size plus
 * INFLATE_SLACK, and every storage present with the bytes its pickle
 * declares. Unreferenced members count: torch.save writes none, and a zip
 * that declares gigabytes in a few MB is not a checkpoint. */
static yolo_status check_budget(pt_reader *rd) {
    uint64_t budget = (uint64_t)rd->file_size * INFLATE_RATIO + INFLATE_SLACK, total = rd->pkl_size;
    for (size_t i = 0; i < rd->n_entries; i++) {
        const zip_entry *m = &rd->entries[i];
        pt_storage *s = storage_member(rd, m->name);
        if (s && m->size >= 0 && (uint64_t)m->size < s->bytes)
            return yolo_error(YOLO_ERR_FORMAT, "%s: storage %s holds %lld bytes, %zu expected (%s)", rd->what,
                              m->name, (long long)m->size, s->bytes, rd->pt->tensors[rd->order[s->first].view].name);
        if (s) s->read = true; /* found; read_storages reads it */
        /* sizes are < 2^63 and the entries few: the sum stops at the budget long before it could wrap */
        total += m->size >= 0 ? (uint64_t)m->size : s ? s->bytes : 0;
        if (total > budget)
            return yolo_error(YOLO_ERR_FORMAT, "%s: its zip members declare more than %llu bytes by %s, %d times its "
                              "%zu bytes plus %llu MiB (the most a checkpoint's weights inflate to): refused before "
                              "inflating", rd->what, (unsigned long long)budget, m->name, INFLATE_RATIO,
                              rd->file_size, (unsigned long long)(INFLATE_SLACK >> 20));
    }
    for (size_t i = 0; i < rd->n_storages; i++) {
        if (!rd->storages[i].read)
            return yolo_error(YOLO_ERR_FORMAT, "%s: tensor %s: storage %sdata/%s is missing from the zip", rd->what,
                              rd->pt->tensors[rd->order[rd->storages[i].first].view].name, rd->top,
                              rd->storages[i].key);
        rd->storages[i].read = false;
    }
    return YOLO_OK;
}

/* Every tensor of storage s gathered (its strided view) into f32. */
static yolo_status gather(pt_reader *rd, const pt_storage *s, const uint8_t *data) {
    for (int k = s->first; k < s->end; k++) {
        const yolo_pk_value *t = rd->views[rd->order[k].view];
        yolo_pt_tensor *out = &rd->pt->tensors[rd->order[k].view];
        size_t es = yolo_pk_dtype_size(t->storage->dtype);
        if (!(out->data = malloc(sizeof(float) * (size_t)(out->numel ? out->numel : 1))))
            return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory for tensor %s (%lld elements)", rd->what, out->name,
                              (long long)out->numel);
        int64_t idx[YOLO_PK_MAX_DIMS] = {0};
        for (int64_t i = 0; i < out->numel; i++) {
            int64_t off = t->offset;
            for (int d = 0; d < t->ndim; d++) off += idx[d] * t->stride[d];
            out->data[i] = element_f32(data + (size_t)off * es, t->storage->dtype);
            for (int d = t->ndim - 1; d >= 0; d--) {
                if (++idx[d] < t->shape[d]) break;
                idx[d] = 0;
            }
        }
    }
    return YOLO_OK;
}

/* The second pass: only the members the tensors read are inflated, each
 * to the bytes its storage declares, then gathered and freed. */
static yolo_status read_storages(pt_reader *rd, const void *data, size_t size) {
    struct archive *a = NULL;
    yolo_status st = open_zip(rd, data, size, &a);
    size_t found = 0;
    for (size_t index = 0; !st && found < rd->n_storages; index++) {
        struct archive_entry *e;
        const char *name;
        if ((st = next_member(rd, a, index, &e, &name)) || !name) break;
        pt_storage *s = storage_member(rd, name);
        if (!s || s->read) continue; /* unreferenced (or a second copy): skipped, never inflated */
        uint8_t *bytes = NULL;
        size_t n = 0;
        if (!(st = read_member(rd, a, name, s->bytes, s->bytes, &bytes, &n)) && n < s->bytes)
            st = yolo_error(YOLO_ERR_FORMAT, "%s: storage %s holds %zu bytes, %zu expected (%s)", rd->what, name, n,
                            s->bytes, rd->pt->tensors[rd->order[s->first].view].name);
        if (!st) st = gather(rd, s, bytes);
        free(bytes);
        s->read = true;
        found++;
    }
    if (a) archive_read_free(a);
    return st;
}

/* Batch norm constants: one eps and momentum for the whole model. */
static yolo_status read_batch_norm(pt_reader *rd, const yolo_pk_value *mod, const char *prefix) {
    const yolo_pk_value *eps = yolo_pk_attr(mod, "eps"), *mom = yolo_pk_attr(mod, "momentum");
    if (!eps || eps->kind != YOLO_PK_FLOAT || !(eps->f > 0) || !mom || mom->kind != YOLO_PK_FLOAT || !(mom->f >= 0))
        return yolo_error(YOLO_ERR_FORMAT, "%s: batch norm '%s' has no float eps and momentum", rd->what, prefix);
    yolo_pt_model *pt = rd->pt;
    if (pt->bn_eps == 0) {
        pt->bn_eps = eps->f;
        pt->bn_momentum = mom->f;
    } else if (pt->bn_eps != eps->f || pt->bn_momentum != mom->f) {
        return yolo_error(YOLO_ERR_UNSUPPORTED,
                          "%s: batch norm '%s' has eps %g, momentum %g where the others have %g, %g (one value per "
                          "model is built)", rd->what, prefix, eps->f, mom->f, pt->bn_eps, pt->bn_momentum);
    }
    return YOLO_OK;
}

/* `module`'s act child (an object of class `cls`) noted. */
static yolo_status add_act(pt_reader *rd, const char *module, const char *cls) {
    yolo_pt_model *pt = rd->pt;
    if (pt->n_acts == pt->cap_acts) {
        int cap = pt->cap_acts ? 2 * pt->cap_acts : 64;
        yolo_pt_act *bigger = realloc(pt->acts, sizeof *bigger * (size_t)cap);
        if (!bigger) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
        pt->acts = bigger;
        pt->cap_acts = cap;
    }
    yolo_pt_act *a = &pt->acts[pt->n_acts];
    const char *dot = strrchr(cls, '.');
    snprintf(a->cls, sizeof a->cls, "%s", dot ? dot + 1 : cls);
    size_t len = strlen(module);
    if (len && module[len - 1] == '.') len--; /* the walk's prefix ends in a dot */
    if (!(a->module = strndup(module, len))) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    pt->n_acts++;
    return YOLO_OK;
}

/* One module's parameters, buffers, then its children, as state_dict(). */
static yolo_status walk_module(pt_reader *rd, const yolo_pk_value *mod, const char *prefix, int depth) {
    char buf[160];
    if (depth > MAX_MODULE_DEPTH)
        return yolo_error(YOLO_ERR_FORMAT, "%s: modules nest deeper than %d at %s", rd->what, MAX_MODULE_DEPTH, prefix);
    if (!mod || mod->kind != YOLO_PK_OBJECT || !mod->state || mod->state->kind != YOLO_PK_DICT)
        return yolo_error(YOLO_ERR_FORMAT, "%s: module '%s' is %s, not a torch module with a state", rd->what, prefix,
                          yolo_pk_describe(mod, buf, sizeof buf));
    if (strstr(mod->s, "BatchNorm")) {
        yolo_status st = read_batch_norm(rd, mod, prefix);
        if (st) return st;
    }
    static const char *const groups[] = {"_parameters", "_buffers", "_modules"};
    for (int g = 0; g < 3; g++) {
        const yolo_pk_value *d = yolo_pk_attr(mod, groups[g]);
        if (!d) continue;
        if (d->kind != YOLO_PK_DICT)
            return yolo_error(YOLO_ERR_FORMAT, "%s: %s%s of module '%s' (%s) is not a dict", rd->what, prefix,
                              groups[g], prefix, mod->s);
        for (size_t i = 0; i + 1 < d->n; i += 2) {
            const yolo_pk_value *k = d->items[i], *v = d->items[i + 1];
            if (k->kind != YOLO_PK_STR || k->len > 100)
                return yolo_error(YOLO_ERR_FORMAT, "%s: module '%s' (%s) has a %s entry named by %s", rd->what, prefix,
                                  mod->s, groups[g], yolo_pk_describe(k, buf, sizeof buf));
            char name[1024];
            if (strlen(prefix) + k->len + 2 > sizeof name)
                return yolo_error(YOLO_ERR_FORMAT, "%s: module names nest too long at %s", rd->what, prefix);
            snprintf(name, sizeof name, "%s%s", prefix, k->s);
            yolo_status st = YOLO_OK;
            if (v->kind == YOLO_PK_NONE) continue; /* an absent bias, an optional buffer */
            /* a tree lists each entry once; memo GETs can share a module under
             * many parents, and levels of such sharing multiply the walk */
            if (++rd->visits > rd->max_visits)
                return yolo_error(YOLO_ERR_FORMAT, "%s: its modules list more entries than its pickle has values (%zu) "
                                  "by %s: modules shared over and over", rd->what, rd->max_visits, name);
            if (g == 2) {
                if (!strcmp(k->s, "act") && v->kind == YOLO_PK_OBJECT) st = add_act(rd, prefix, v->s);
                strcat(name, ".");
                if (!st) st = walk_module(rd, v, name, depth + 1);
            } else if (v->kind != YOLO_PK_TENSOR) {
                st = yolo_error(YOLO_ERR_FORMAT, "%s: %s is %s, not a tensor", rd->what, name,
                                yolo_pk_describe(v, buf, sizeof buf));
            } else if (g == 1 && !strcmp(k->s, "num_batches_tracked")) {
                rd->pt->n_batches_tracked++; /* counted as Ultralytics counts state-dict items, not kept */
            } else {
                st = add_tensor(rd, name, v);
            }
            if (st) return st;
        }
    }
    return YOLO_OK;
}

/* ---- the checkpoint dict ---- */

static yolo_status read_names(pt_reader *rd, const yolo_pk_value *names) {
    yolo_pt_model *pt = rd->pt;
    if (!names || names->kind != YOLO_PK_DICT || names->n == 0) return YOLO_OK;
    int n = (int)(names->n / 2);
    if (n > 100000) return yolo_error(YOLO_ERR_FORMAT, "%s: %d class names", rd->what, n);
    pt->names = calloc((size_t)n + 1, sizeof *pt->names);
    if (!pt->names) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    pt->n_names = n;
    for (size_t i = 0; i + 1 < names->n; i += 2) {
        const yolo_pk_value *k = names->items[i], *v = names->items[i + 1];
        if (k->kind != YOLO_PK_INT || k->i < 0 || k->i >= n || v->kind != YOLO_PK_STR || pt->names[k->i])
            return yolo_error(YOLO_ERR_FORMAT, "%s: `names` must map 0..%d to class names", rd->what, n - 1);
        if (!(pt->names[k->i] = strdup(v->s))) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    }
    return YOLO_OK;
}

static void copy_str(char *dst, size_t size, const yolo_pk_value *v) {
    if (v && v->kind == YOLO_PK_STR) snprintf(dst, size, "%s", v->s);
}

/* imgsz (an int, or [h, w]), data and single_cls of the checkpoint's train_args, as args.yaml would write them. */
static void read_train_args(yolo_pt_model *pt, const yolo_pk_value *args) {
    if (!args || args->kind != YOLO_PK_DICT) return;
    const yolo_pk_value *imgsz = yolo_pk_dict_get(args, "imgsz"), *data = yolo_pk_dict_get(args, "data"),
                        *single = yolo_pk_dict_get(args, "single_cls");
    if (imgsz && imgsz->kind == YOLO_PK_INT) {
        snprintf(pt->train_imgsz, sizeof pt->train_imgsz, "%lld", (long long)imgsz->i);
    } else if (imgsz && (imgsz->kind == YOLO_PK_LIST || imgsz->kind == YOLO_PK_TUPLE) && imgsz->n == 2 &&
               imgsz->items[0]->kind == YOLO_PK_INT && imgsz->items[1]->kind == YOLO_PK_INT) {
        snprintf(pt->train_imgsz, sizeof pt->train_imgsz, "[%lld, %lld]", (long long)imgsz->items[0]->i,
                 (long long)imgsz->items[1]->i);
    }
    if (data && data->kind == YOLO_PK_STR) copy_str(pt->train_data, sizeof pt->train_data, data);
    if (single && single->kind == YOLO_PK_BOOL)
        snprintf(pt->train_single_cls, sizeof pt->train_single_cls, "%s", single->b ? "true" : "false");
}

static yolo_status read_model(pt_reader *rd, const yolo_pk_value *root) {
    yolo_pt_model *pt = rd->pt;
    char buf[160];
    if (!root || root->kind != YOLO_PK_DICT)
        return yolo_error(YOLO_ERR_FORMAT, "%s: the pickle holds %s, not an Ultralytics checkpoint dict", rd->what,
                          yolo_pk_describe(root, buf, sizeof buf));
    const yolo_pk_value *model = yolo_pk_dict_get(root, "model");
    if (!model || model->kind == YOLO_PK_NONE) {
        model = yolo_pk_dict_get(root, "ema");
        pt->from_ema = true;
    }
    if (!model || model->kind != YOLO_PK_OBJECT)
        return yolo_error(YOLO_ERR_FORMAT, "%s: neither `model` nor `ema` holds a model object (found %s)", rd->what,
                          yolo_pk_describe(model, buf, sizeof buf));
    const yolo_pk_value *epoch = yolo_pk_dict_get(root, "epoch");
    pt->epoch = epoch && epoch->kind == YOLO_PK_INT ? epoch->i : -1;
    copy_str(pt->version, sizeof pt->version, yolo_pk_dict_get(root, "version"));
    read_train_args(pt, yolo_pk_dict_get(root, "train_args"));
    const yolo_pk_value *yaml = yolo_pk_attr(model, "yaml");
    if (!yaml || yaml->kind != YOLO_PK_DICT)
        return yolo_error(YOLO_ERR_FORMAT, "%s: the model's `yaml` is %s, not the model yaml dict", rd->what,
                          yolo_pk_describe(yaml, buf, sizeof buf));
    copy_str(pt->yaml_file, sizeof pt->yaml_file, yolo_pk_dict_get(yaml, "yaml_file"));
    copy_str(pt->scale, sizeof pt->scale, yolo_pk_dict_get(yaml, "scale"));
    const yolo_pk_value *nc = yolo_pk_dict_get(yaml, "nc");
    pt->nc = nc && nc->kind == YOLO_PK_INT && nc->i > 0 && nc->i < 1000000 ? (int)nc->i : 0;
    /* the head: the last row of `head` (else of `backbone`, as classify yamls have it) */
    const yolo_pk_value *rows = yolo_pk_dict_get(yaml, "head");
    if (!rows || rows->kind != YOLO_PK_LIST || !rows->n) rows = yolo_pk_dict_get(yaml, "backbone");
    const yolo_pk_value *last = rows && rows->kind == YOLO_PK_LIST && rows->n ? rows->items[rows->n - 1] : NULL;
    if (!last || last->kind != YOLO_PK_LIST || last->n != 4 || last->items[2]->kind != YOLO_PK_STR)
        return yolo_error(YOLO_ERR_FORMAT, "%s: the model yaml has no [from, n, module, args] rows", rd->what);
    copy_str(pt->head, sizeof pt->head, last->items[2]);
    yolo_status st = read_names(rd, yolo_pk_attr(model, "names"));
    if (!st) st = walk_module(rd, model, "", 0);
    /* the yaml last: its SPPF rows follow the acts the walk found */
    if (!st) st = yolo_pt_yaml_text(yaml, pt, rd->what, &pt->yaml_text, &pt->yaml_len);
    return st;
}

/* The pickle first, then only the storages its model's tensors read. */
static yolo_status parse(pt_reader *rd, const void *data, size_t size) {
    yolo_status st = list_zip(rd, data, size);
    if (st) return st;
    if (!rd->pkl_name)
        return yolo_error(YOLO_ERR_FORMAT, "%s is a zip but not a PyTorch checkpoint (no <name>/data.pkl)", rd->what);
    char what[1200];
    snprintf(what, sizeof what, "%s (%s)", rd->what, rd->pkl_name);
    yolo_pickle *p = NULL;
    st = yolo_pickle_parse(rd->pkl_data, rd->pkl_size, what, &p);
    if (!st) rd->max_visits = yolo_pickle_value_count(p);
    if (!st) st = read_model(rd, yolo_pickle_root(p));
    if (!st) st = group_storages(rd);
    if (!st && !rd->header_only) st = check_budget(rd);
    if (!st && !rd->header_only) st = read_storages(rd, data, size);
    yolo_pickle_free(p);
    return st;
}

static yolo_status read_memory(const void *data, size_t size, const char *name, bool header_only,
                               yolo_pt_model **out) {
    *out = NULL;
    if (!name) name = "(memory)";
    yolo_pt_model *pt = calloc(1, sizeof *pt);
    if (!pt || !(pt->path = strdup(name))) {
        free(pt);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", name);
    }
    pt_reader rd = {.what = name, .file_size = size, .pt = pt, .header_only = header_only};
    yolo_status st = parse(&rd, data ? data : "", data ? size : 0);
    for (size_t i = 0; i < rd.n_entries; i++) free(rd.entries[i].name);
    free(rd.entries);
    free(rd.pkl_data);
    free(rd.views);
    free(rd.order);
    free(rd.storages);
    if (st) {
        yolo_pt_free(pt);
        return st;
    }
    *out = pt;
    return YOLO_OK;
}

yolo_status yolo_pt_read_memory(const void *data, size_t size, const char *name, yolo_pt_model **out) {
    return read_memory(data, size, name, false, out);
}

yolo_status yolo_pt_read_header_memory(const void *data, size_t size, const char *name, yolo_pt_model **out) {
    return read_memory(data, size, name, true, out);
}

yolo_status yolo_pt_read(const char *path, yolo_pt_model **out) {
    *out = NULL;
    uint8_t *data = NULL;
    size_t size = 0;
    struct stat sb;
    if (stat(path, &sb) != 0 && *yolo_pt_missing_hint(path, errno))
        return yolo_error(YOLO_ERR_IO, "%s: cannot open: %s%s", path, strerror(ENOENT), yolo_pt_missing_hint(path, ENOENT));
    yolo_status st = yolo_read_file(path, &data, &size);
    if (st) return st;
    st = yolo_pt_read_memory(data, size, path, out);
    free(data);
    return st;
}

void yolo_pt_free(yolo_pt_model *pt) {
    if (!pt) return;
    for (int i = 0; i < pt->n_tensors; i++) {
        free(pt->tensors[i].name);
        free(pt->tensors[i].data);
    }
    for (int i = 0; pt->names && i < pt->n_names; i++) free(pt->names[i]);
    free(pt->names);
    free(pt->tensors);
    for (int i = 0; i < pt->n_acts; i++) free(pt->acts[i].module);
    free(pt->acts);
    free(pt->yaml_text);
    free(pt->path);
    free(pt);
}

const char *yolo_pt_act_of(const yolo_pt_model *pt, const char *module) {
    for (int i = 0; i < pt->n_acts; i++)
        if (!strcmp(pt->acts[i].module, module)) return pt->acts[i].cls;
    return NULL;
}

const yolo_pt_tensor *yolo_pt_find(const yolo_pt_model *pt, const char *name) {
    for (int i = 0; i < pt->n_tensors; i++)
        if (!strcmp(pt->tensors[i].name, name)) return &pt->tensors[i];
    return NULL;
}
