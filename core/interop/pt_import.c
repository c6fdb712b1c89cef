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
#define PICKLE_MAX ((size_t)256 << 20)

typedef struct zip_member {
    char *name;
    uint8_t *data;
    size_t size;
} zip_member;

typedef struct pt_reader {
    const char *what;
    zip_member *members;
    size_t n_members;
    char top[256];  /* "<top>/" of <top>/data.pkl */
    yolo_pt_model *pt;
    size_t cap_tensors;
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

static yolo_status read_entry(struct archive *a, const char *what, const char *name, uint8_t **out, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory reading %s", what, name);
        if (n == cap) {
            uint8_t *bigger = cap > PICKLE_MAX * 4 ? NULL : realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                return yolo_error(YOLO_ERR_FORMAT, "%s: member %s is too large", what, name);
            }
            buf = bigger;
            cap *= 2;
        }
        la_ssize_t r = archive_read_data(a, buf + n, cap - n);
        if (r < 0) {
            free(buf);
            return yolo_error(YOLO_ERR_FORMAT, "%s: member %s cannot be read: %s", what, name,
                              archive_error_string(a) ? archive_error_string(a) : "damaged");
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    *out = buf;
    *len = n;
    return YOLO_OK;
}

static yolo_status read_zip(pt_reader *rd, const void *data, size_t size) {
    const uint8_t *b = data;
    if (size < 4 || b[0] != 'P' || b[1] != 'K')
        return yolo_error(YOLO_ERR_FORMAT, "%s is not a PyTorch checkpoint (not a zip archive; the legacy "
                          "non-zip torch.save format is not read)", rd->what);
    struct archive *a = archive_read_new();
    if (!a) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    archive_read_support_format_zip_seekable(a);
    yolo_status st = YOLO_OK;
    if (archive_read_open_memory(a, data, size) != ARCHIVE_OK)
        st = yolo_error(YOLO_ERR_FORMAT, "%s is truncated or damaged: its zip directory cannot be read (%s)", rd->what,
                        archive_error_string(a) ? archive_error_string(a) : "?");
    size_t cap = 0;
    while (!st) {
        struct archive_entry *e;
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        const char *name = r == ARCHIVE_OK ? archive_entry_pathname(e) : NULL;
        if (!name) {
            st = yolo_error(YOLO_ERR_FORMAT, "%s is damaged: zip entry %zu: %s", rd->what, rd->n_members,
                            archive_error_string(a) ? archive_error_string(a) : "no name");
            break;
        }
        if (archive_entry_filetype(e) != AE_IFREG) continue;
        const char *slash = strrchr(name, '/');
        if (rd->header_only && !(slash && !strcmp(slash, "/data.pkl"))) continue; /* the storages are not read */
        if (rd->n_members == cap) {
            cap = cap ? cap * 2 : 64;
            zip_member *m = realloc(rd->members, cap * sizeof *m);
            if (!m) {
                st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
                break;
            }
            rd->members = m;
        }
        zip_member *m = &rd->members[rd->n_members];
        memset(m, 0, sizeof *m);
        if (!(m->name = strdup(name))) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
        else rd->n_members++;
        if (!st) st = read_entry(a, rd->what, name, &m->data, &m->size);
    }
    archive_read_free(a);
    return st;
}

static const zip_member *find_member(const pt_reader *rd, const char *name) {
    for (size_t i = 0; i < rd->n_members; i++)
        if (!strcmp(rd->members[i].name, name)) return &rd->members[i];
    return NULL;
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

static yolo_status add_tensor(pt_reader *rd, const char *name, const yolo_pk_value *t) {
    yolo_pt_model *pt = rd->pt;
    const yolo_pk_value *s = t->storage;
    char member[600];
    snprintf(member, sizeof member, "%sdata/%s", rd->top, s->s);
    const zip_member *m = rd->header_only ? NULL : find_member(rd, member);
    size_t es = yolo_pk_dtype_size(s->dtype);
    if (!m && !rd->header_only)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor %s: storage %s is missing from the zip", rd->what, name, member);
    if (m && (uint64_t)s->numel > m->size / es)
        return yolo_error(YOLO_ERR_FORMAT, "%s: tensor %s: storage %s holds %zu bytes, %lld %s elements expected",
                          rd->what, name, member, m->size, (long long)s->numel, yolo_pk_dtype_name(s->dtype));
    if (pt->n_tensors == (int)rd->cap_tensors) {
        size_t cap = rd->cap_tensors ? rd->cap_tensors * 2 : 256;
        yolo_pt_tensor *v = realloc(pt->tensors, cap * sizeof *v);
        if (!v) return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
        pt->tensors = v;
        rd->cap_tensors = cap;
    }
    yolo_pt_tensor *out = &pt->tensors[pt->n_tensors];
    memset(out, 0, sizeof *out);
    out->ndim = t->ndim;
    out->numel = 1;
    for (int d = 0; d < t->ndim; d++) out->shape[d] = t->shape[d], out->numel *= t->shape[d];
    out->name = strdup(name);
    out->data = m ? malloc(sizeof(float) * (size_t)(out->numel ? out->numel : 1)) : NULL;
    if (!out->name || (m && !out->data)) {
        free(out->name);
        free(out->data);
        return yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", rd->what);
    }
    pt->n_tensors++;
    if (!m) return YOLO_OK; /* header only */
    /* gather the strided view (rebuild_tensor checked it stays inside the storage) */
    int64_t idx[YOLO_PK_MAX_DIMS] = {0};
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t off = t->offset;
        for (int d = 0; d < t->ndim; d++) off += idx[d] * t->stride[d];
        out->data[i] = element_f32(m->data + (size_t)off * es, s->dtype);
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) break;
            idx[d] = 0;
        }
    }
    return YOLO_OK;
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

static yolo_status parse(pt_reader *rd, const void *data, size_t size) {
    yolo_status st = read_zip(rd, data, size);
    if (st) return st;
    const zip_member *pkl = NULL;
    for (size_t i = 0; i < rd->n_members; i++) {
        const char *name = rd->members[i].name, *slash = strchr(name, '/');
        if (!slash || strcmp(slash, "/data.pkl") || (size_t)(slash - name) + 2 > sizeof rd->top) continue;
        if (pkl) return yolo_error(YOLO_ERR_FORMAT, "%s holds two pickles (%s and %s)", rd->what, pkl->name, name);
        pkl = &rd->members[i];
        snprintf(rd->top, sizeof rd->top, "%.*s/", (int)(slash - name), name);
    }
    if (!pkl) return yolo_error(YOLO_ERR_FORMAT, "%s is a zip but not a PyTorch checkpoint (no <name>/data.pkl)", rd->what);
    if (pkl->size > PICKLE_MAX) return yolo_error(YOLO_ERR_FORMAT, "%s: data.pkl is %zu bytes", rd->what, pkl->size);
    char what[1200];
    snprintf(what, sizeof what, "%s (%s)", rd->what, pkl->name);
    yolo_pickle *p = NULL;
    st = yolo_pickle_parse(pkl->data, pkl->size, what, &p);
    if (!st) st = read_model(rd, yolo_pickle_root(p));
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
    pt_reader rd = {.what = name, .pt = pt, .header_only = header_only};
    yolo_status st = parse(&rd, data ? data : "", data ? size : 0);
    for (size_t i = 0; i < rd.n_members; i++) {
        free(rd.members[i].name);
        free(rd.members[i].data);
    }
    free(rd.members);
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
