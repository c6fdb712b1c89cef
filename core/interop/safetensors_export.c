/* `format=safetensors`: the model's state dict (PyTorch's names, f32 or
 * f16 with half) as <stem>.safetensors and its architecture as <stem>.yaml
 * (the model yaml with the scale that was built, nc and names), so
 * PyTorch users rebuild the model from the yaml and load the weights with
 * safetensors.torch.load_file + load_state_dict (num_batches_tracked is not
 * stored: load with strict=False, as Ultralytics' own transfer does). */
#include "interop/safetensors_export.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt/safetensors.h"
#include "interop/export_meta.h"
#include "nn/model_internal.h"

/* A yaml scalar as written in the model yaml (flow context: quoted when it
 * holds a flow indicator). */
static void put_scalar(FILE *f, const char *s) {
    if (s && *s && !strpbrk(s, ",[]{}:#'\"")) fputs(s, f);
    else fprintf(f, "'%s'", s ? s : "");
}

static void put_arg(FILE *f, const yolo_arg *a) {
    if (a->kind != YOLO_ARG_LIST) {
        put_scalar(f, a->s);
        return;
    }
    fputc('[', f);
    for (int i = 0; i < a->n_items; i++) {
        if (i) fputs(", ", f);
        put_arg(f, &a->items[i]);
    }
    fputc(']', f);
}

static void put_rows(FILE *f, const model_spec *spec, bool head) {
    fprintf(f, "%s:\n", head ? "head" : "backbone");
    for (int r = 0; r < spec->n_rows; r++) {
        const model_row *row = &spec->rows[r];
        if (row->in_head != head) continue;
        fputs("  - [", f);
        if (row->from_list) fputc('[', f);
        for (int i = 0; i < row->n_from; i++) fprintf(f, "%s%d", i ? ", " : "", row->from[i]);
        if (row->from_list) fputc(']', f);
        fprintf(f, ", %d, ", row->repeats);
        put_scalar(f, row->module);
        fputs(", [", f);
        for (int i = 0; i < row->n_args; i++) {
            if (i) fputs(", ", f);
            put_arg(f, &row->args[i]);
        }
        fputs("]]\n", f);
    }
}

static yolo_status write_yaml(const yolo_model *m, const char *path, const char *task, const char *names_repr,
                              const char *const *names) {
    FILE *f = fopen(path, "w");
    if (!f) return yolo_error(YOLO_ERR_IO, "safetensors export: cannot create %s: %s", path, strerror(errno));
    fprintf(f, "# %s exported by yolo: the architecture of the weights in the .safetensors beside it\n", m->name);
    fprintf(f, "# task: %s; class names as Ultralytics' metadata writes them: %s\n", task, names_repr);
    fprintf(f, "nc: %d\n", m->nc);
    if (m->spec.ch != 3) fprintf(f, "ch: %d\n", m->spec.ch);
    if (m->spec.has_activation) fprintf(f, "activation: %s\n", m->spec.activation_text);
    if (m->scale[0]) {
        fprintf(f, "scale: %s\nscales:\n  %s: [%.17g, %.17g, %.17g]\n", m->scale, m->scale, m->depth, m->width,
                m->max_channels);
    } else if (m->spec.has_multiples) {
        fprintf(f, "depth_multiple: %.17g\nwidth_multiple: %.17g\n", m->spec.depth_multiple, m->spec.width_multiple);
    }
    put_rows(f, &m->spec, false);
    bool has_head = false;
    for (int r = 0; r < m->spec.n_rows; r++) has_head |= m->spec.rows[r].in_head;
    if (has_head) put_rows(f, &m->spec, true);
    fputs("names:\n", f);
    for (int i = 0; i < m->nc; i++) {
        fprintf(f, "  %d: ", i);
        char fallback[32];
        snprintf(fallback, sizeof fallback, "class%d", i);
        const char *n = names && names[i] ? names[i] : fallback;
        fputc('"', f);
        for (const char *p = n; *p; p++) {
            if (*p == '"' || *p == '\\') fputc('\\', f);
            fputc(*p, f);
        }
        fputs("\"\n", f);
    }
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    return ok ? YOLO_OK : yolo_error(YOLO_ERR_IO, "safetensors export: writing %s failed", path);
}

yolo_status yolo_safetensors_export(const yolo_model *m, const yolo_safetensors_export_options *opt,
                                    const char *weights_path, const char *yaml_path) {
    int n = yolo_model_tensor_count(m);
    yolo_st_tensor *ts = calloc((size_t)n + 1, sizeof *ts);
    void **data = calloc((size_t)n + 1, sizeof *data);
    yolo_status st = ts && data ? YOLO_OK : yolo_error(YOLO_ERR_NOMEM, "safetensors export: out of memory");
    for (int i = 0; !st && i < n; i++) {
        const yolo_tensor *t = yolo_model_tensor_at(m, i)->tensor;
        int64_t count = yolo_tensor_numel(t);
        float *f = malloc(sizeof(float) * (size_t)(count ? count : 1));
        if (!f) {
            st = yolo_error(YOLO_ERR_NOMEM, "safetensors export: out of memory");
            break;
        }
        data[i] = f;
        if ((st = yolo_tensor_download_f32(t, f, count))) break;
        ts[i] = (yolo_st_tensor){.name = t->name, .dtype = opt->half ? YOLO_ST_F16 : YOLO_ST_F32, .ndim = t->ndim,
                                 .data = f, .nbytes = (opt->half ? 2 : 4) * (size_t)count};
        memcpy(ts[i].shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
        if (opt->half) { /* in place: the halves fit in the floats' storage */
            uint16_t *h = (uint16_t *)f;
            for (int64_t k = 0; k < count; k++) h[k] = yolo_f32_to_f16(f[k]);
        }
    }
    char *names_repr = st ? NULL : yolo_export_names_repr(opt->names, m->nc);
    if (!st && !names_repr) st = yolo_error(YOLO_ERR_NOMEM, "safetensors export: out of memory");
    uint8_t *blob = NULL;
    size_t size = 0;
    if (!st) {
        char nc[16];
        snprintf(nc, sizeof nc, "%d", m->nc);
        const yolo_st_kv meta[] = {{"format", "pt"}, {"model", m->name}, {"names", names_repr}, {"nc", nc},
                                   {"task", opt->task}};
        st = yolo_st_encode(ts, (size_t)n, meta, sizeof meta / sizeof meta[0], weights_path, &blob, &size);
    }
    if (!st) {
        FILE *f = fopen(weights_path, "wb");
        bool ok = f && fwrite(blob, 1, size, f) == size;
        ok = f && fclose(f) == 0 && ok;
        if (!ok) st = yolo_error(YOLO_ERR_IO, "safetensors export: cannot write %s", weights_path);
    }
    if (!st) st = write_yaml(m, yaml_path, opt->task, names_repr, opt->names);
    free(blob);
    free(names_repr);
    for (int i = 0; data && i < n; i++) free(data[i]);
    free(data);
    free(ts);
    return st;
}
