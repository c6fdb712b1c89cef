/* .pt checkpoints as models and as read-only checkpoints (pt_model.h). */
#include "interop/pt_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/ckpt_tensors.h"
#include "ckpt/safetensors.h"
#include "data/fsutil.h"
#include "nn/model_internal.h"
#include "plugin/plugin_loader.h"

/* Every Conv of m runs the activation the file's module holds: the yaml
 * alone leaves it open (the SPPF rows of 2026, a hand-edited module), and
 * weights loaded into another activation load without a word but compute
 * something else. Every use of a .pt builds through here: a checkpoint
 * made from one names the .pt as its model (ckpt_file.c). */
static yolo_status check_activations(const yolo_pt_model *pt, const yolo_model *m) {
    for (int i = 0; i < m->n_convs; i++) {
        const yolo_conv_block *b = m->convs[i].block;
        char module[YOLO_NAME_MAX];
        snprintf(module, sizeof module, "%s", b->weight->name);
        char *tail = strstr(module, ".conv.weight");
        if (!tail) continue;
        *tail = '\0';
        const char *file = yolo_pt_act_of(pt, module);
        const char *ours = yolo_act_name(b->act); /* torch.nn's class names */
        if (file && strcmp(file, ours))
            return yolo_error(YOLO_ERR_UNSUPPORTED, "%s: %s.act is %s in the file, but its yaml builds %s there (the "
                              "module was changed after the yaml, which cannot say so): not loaded, as its outputs "
                              "would differ from the file's", pt->path, module, file, ours);
    }
    return YOLO_OK;
}

/* The state dict as safetensors entries (f32, borrowing names and data). */
static yolo_st_tensor *st_entries(const yolo_pt_model *pt) {
    yolo_st_tensor *ts = calloc((size_t)pt->n_tensors + 1, sizeof *ts);
    for (int i = 0; ts && i < pt->n_tensors; i++) {
        const yolo_pt_tensor *t = &pt->tensors[i];
        ts[i] = (yolo_st_tensor){.name = t->name, .dtype = YOLO_ST_F32, .ndim = t->ndim, .data = t->data,
                                 .nbytes = sizeof(float) * (size_t)t->numel};
        memcpy(ts[i].shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    }
    return ts;
}

/* The .pt's architecture (its pickled yaml; opt->nc overrides the class
 * count), its activations checked against the file's and its batch-norm
 * constants; the weights at their initialisation. */
static yolo_status build_architecture(const yolo_pt_model *pt, yolo_backend *backend, const yolo_model_options *opt,
                                      yolo_model **out) {
    *out = NULL;
    yolo_model_options o = opt ? *opt : (yolo_model_options){0};
    if (!o.scale && pt->scale[0]) o.scale = pt->scale;
    /* the name its summary and scale letter come from: the yaml it was made from */
    const char *name = pt->yaml_file[0] ? pt->yaml_file : pt->path;
    yolo_model *m = NULL;
    yolo_status st = yolo_model_load_text(name, pt->yaml_text, pt->yaml_len, backend, &o, &m);
    if (st) return yolo_error_context(st, "%s: building the model from its pickled yaml (%s)", pt->path, name);
    if ((st = check_activations(pt, m))) {
        yolo_model_free(m);
        return st;
    }
    if (pt->bn_eps > 0) { /* the batch norm constants it was trained with */
        m->bn_eps = (float)pt->bn_eps;
        m->bn_momentum = (float)pt->bn_momentum;
    }
    *out = m;
    return YOLO_OK;
}

yolo_status yolo_pt_build_model(const yolo_pt_model *pt, yolo_backend *backend, const yolo_model_options *opt,
                                yolo_model **out, size_t *loaded) {
    *out = NULL;
    if (loaded) *loaded = 0;
    yolo_model *m = NULL;
    yolo_status st = build_architecture(pt, backend, opt, &m);
    if (st) return st;
    size_t n = (size_t)yolo_model_tensor_count(m), copied = 0;
    yolo_tensor **tensors = malloc(sizeof *tensors * (n ? n : 1));
    yolo_st_tensor *entries = st_entries(pt);
    yolo_st_file *view = NULL;
    if (!tensors || !entries) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", pt->path);
    if (!st) st = yolo_st_file_view(entries, (size_t)pt->n_tensors, pt->path, &view);
    for (size_t i = 0; !st && i < n; i++) tensors[i] = yolo_model_tensor_at(m, (int)i)->tensor;
    const int nc = opt ? opt->nc : 0;
    if (!st && nc > 0 && nc != pt->nc) {
        /* another class count was asked for: the head cannot load, so what fits transfers (a fine-tune's start) */
        yolo_ckpt_report report;
        st = yolo_ckpt_load_matching_report(view, tensors, n, pt->path, &copied, &report);
        char heading[1200];
        snprintf(heading, sizeof heading, "not transferred from %s (nc=%d, the file's %d)", pt->path, nc, pt->nc);
        if (!st && opt->log) yolo_ckpt_report_print(&report, heading, opt->log);
    } else if (!st) {
        st = yolo_ckpt_load_weights(view, tensors, n, pt->path);
        copied = n;
    }
    yolo_st_file_free(view);
    free(entries);
    free(tensors);
    if (st) {
        yolo_model_free(m);
        return st;
    }
    if (loaded) *loaded = copied;
    *out = m;
    return YOLO_OK;
}

yolo_status yolo_pt_model_load(const char *path, yolo_backend *backend, const yolo_model_options *opt,
                               yolo_model **out) {
    *out = NULL;
    yolo_pt_model *pt = NULL;
    yolo_status st = yolo_pt_read(path, &pt);
    if (!st) st = yolo_pt_build_model(pt, backend, opt, out, NULL);
    yolo_pt_free(pt);
    return st;
}

yolo_status yolo_pt_model_load_architecture(const char *path, yolo_backend *backend, const yolo_model_options *opt,
                                            yolo_model **out) {
    *out = NULL;
    uint8_t *data = NULL;
    size_t size = 0;
    yolo_pt_model *pt = NULL;
    yolo_status st = yolo_read_file(path, &data, &size);
    if (!st) st = yolo_pt_read_header_memory(data, size, path, &pt);
    free(data);
    if (!st) st = build_architecture(pt, backend, opt, out);
    yolo_pt_free(pt);
    return st;
}

/* The task whose plugin registers the head module, loading the plugins
 * found when no loaded one has it. */
static const yolo_task *owner_of(const char *head) {
    const yolo_task *owner = NULL;
    if (yolo_plugin_find_module(head, &owner)) return owner;
    yolo_plugin_found *found = NULL;
    int n = 0;
    if (yolo_plugin_scan(&found, &n) == YOLO_OK) free(found);
    return yolo_plugin_find_module(head, &owner) ? owner : NULL;
}

static yolo_status fill_meta(const yolo_pt_model *pt, const char *name, yolo_meta **out) {
    const yolo_task *owner = owner_of(pt->head);
    if (!owner)
        return yolo_error(YOLO_ERR_UNSUPPORTED,
                          "%s: its head module %s is not provided by any task plugin found (unknown module)", name,
                          pt->head);
    yolo_ckpt_info info = {.task = owner->name, .plugin_version = owner->version ? owner->version : "",
                           .epoch = pt->epoch, .best_fitness = NAN};
    yolo_meta *meta = NULL;
    yolo_status st = yolo_ckpt_meta_new(&info, &meta);
    if (!st) st = yolo_meta_set_str(meta, "model_name", name);
    if (!st) st = yolo_meta_set_int(meta, "nc", pt->nc);
    if (!st) st = yolo_meta_set_str(meta, "source_format", "ultralytics-pt");
    if (!st) st = yolo_meta_set_str(meta, "ultralytics_version", pt->version);
    if (!st) st = yolo_meta_set_int(meta, "batches_tracked", pt->n_batches_tracked);
    /* the train args val/predict/export default to, as a .ckpt's (args.yaml texts) */
    const char *const args[][2] = {{"imgsz", pt->train_imgsz}, {"data", pt->train_data},
                                   {"single_cls", pt->train_single_cls}};
    yolo_meta *train_args = st ? NULL : yolo_meta_set_map(meta, "train_args");
    if (!st && !train_args) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", name);
    for (size_t i = 0; !st && i < sizeof args / sizeof *args; i++)
        if (args[i][1][0]) st = yolo_meta_set_str(train_args, args[i][0], args[i][1]);
    if (!st && pt->names) {
        yolo_meta *list = yolo_meta_set_list(meta, "names");
        if (!list) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", name);
        for (int i = 0; !st && i < pt->n_names; i++) st = yolo_meta_append_str(list, pt->names[i]);
    }
    if (st) {
        yolo_meta_free(meta);
        return st;
    }
    *out = meta;
    return YOLO_OK;
}

yolo_status yolo_pt_ckpt_parts(const void *data, size_t size, const char *name, yolo_meta **meta, uint8_t **blob,
                               size_t *blob_size) {
    *meta = NULL;
    *blob = NULL;
    *blob_size = 0;
    yolo_pt_model *pt = NULL;
    yolo_status st = yolo_pt_read_memory(data, size, name, &pt);
    if (st) return st;
    yolo_st_tensor *ts = st_entries(pt);
    if (!ts) st = yolo_error(YOLO_ERR_NOMEM, "%s: out of memory", name);
    char what[1100];
    snprintf(what, sizeof what, "the weights of %s", name);
    if (!st) st = yolo_st_encode(ts, (size_t)pt->n_tensors, NULL, 0, what, blob, blob_size);
    if (!st) st = fill_meta(pt, name, meta);
    free(ts);
    yolo_pt_free(pt);
    if (st) {
        free(*blob);
        *blob = NULL;
    }
    return st;
}

yolo_status yolo_pt_ckpt_meta(const void *data, size_t size, const char *name, yolo_meta **meta) {
    *meta = NULL;
    yolo_pt_model *pt = NULL;
    yolo_status st = yolo_pt_read_header_memory(data, size, name, &pt);
    if (!st) st = fill_meta(pt, name, meta);
    yolo_pt_free(pt);
    return st;
}

void yolo_pt_count_as_ultralytics(const yolo_ckpt *ck, const yolo_model *model, size_t *transferred, size_t *total) {
    const yolo_meta *fmt = yolo_meta_get(yolo_ckpt_meta(ck), "source_format");
    if (!fmt || !yolo_meta_str(fmt) || strcmp(yolo_meta_str(fmt), "ultralytics-pt")) return;
    const yolo_st_file *blob = yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA);
    static const char suffix[] = ".running_var";
    for (int i = 0; i < yolo_model_tensor_count(model); i++) {
        const yolo_tensor *t = yolo_model_tensor_at(model, i)->tensor;
        const char *name = t->name;
        size_t n = strlen(name);
        if (n < sizeof suffix || strcmp(name + n - (sizeof suffix - 1), suffix)) continue;
        (*total)++;
        /* a scalar, so it transfers whenever the .pt has that batch norm, whatever its width */
        if (blob && yolo_st_find(blob, name)) (*transferred)++;
    }
}
