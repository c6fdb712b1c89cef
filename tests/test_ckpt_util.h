/* Shared by the checkpoint tests and the fuzz driver: a small sample
 * checkpoint (host tensors of every stored dtype, a full meta.yaml) and
 * temporary folders. Header-only (__attribute__((unused)) static functions). */
#ifndef YOLO_TEST_CKPT_UTIL_H
#define YOLO_TEST_CKPT_UTIL_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt/ckpt_file.h"
#include "ckpt/ckpt_tensors.h"

typedef struct ckpt_sample {
    yolo_meta *meta;
    yolo_ckpt_tensors model, ema, optim;
    yolo_ckpt_contents contents;
} ckpt_sample;

__attribute__((unused)) static uint64_t ckpt_sample_rng(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

__attribute__((unused)) static void ckpt_sample_free(ckpt_sample *s) {
    yolo_meta_free(s->meta);
    yolo_ckpt_tensors_free(&s->model);
    yolo_ckpt_tensors_free(&s->ema);
    yolo_ckpt_tensors_free(&s->optim);
    memset(s, 0, sizeof *s);
}

/* `version` changes every value (epoch = version, data seeded by it);
 * `scale` multiplies the first tensor's channel count (bigger files). */
__attribute__((unused)) static int ckpt_sample_build(ckpt_sample *s, int version, int scale) {
    memset(s, 0, sizeof *s);
    uint64_t rng = 1000u + (uint64_t)version;
    struct {
        const char *name;
        yolo_st_dtype dtype;
        int ndim;
        int64_t shape[4];
    } spec[] = {
        {"model.0.conv.weight", YOLO_ST_F32, 4, {16 * scale, 3, 3, 3}},
        {"model.0.bn.weight", YOLO_ST_F32, 1, {16}},
        {"model.0.bn.bias", YOLO_ST_F32, 1, {16}},
        {"model.0.bn.running_mean", YOLO_ST_F32, 1, {16}},
        {"model.0.bn.running_var", YOLO_ST_F32, 1, {16}},
        {"model.22.dfl.conv.weight", YOLO_ST_F32, 4, {1, 16, 1, 1}},
        {"model.22.stride", YOLO_ST_I32, 1, {3}},
        {"model.22.flags", YOLO_ST_U8, 2, {2, 5}},
        {"model.22.count", YOLO_ST_I64, 0, {0}},
        {"model.22.scale", YOLO_ST_F64, 1, {2}},
    };
    int n = (int)(sizeof spec / sizeof spec[0]);
    for (int i = 0; i < n; i++) {
        int64_t numel = 1;
        for (int d = 0; d < spec[i].ndim; d++) numel *= spec[i].shape[d];
        size_t es = yolo_st_dtype_size(spec[i].dtype);
        uint8_t *buf = malloc((size_t)numel * es + 1);
        if (!buf) return -1;
        for (int64_t k = 0; k < numel; k++) {
            uint64_t r = ckpt_sample_rng(&rng);
            float f = (float)((double)(r >> 40) / (double)(1ull << 24) - 0.5);
            if (spec[i].dtype == YOLO_ST_F32) memcpy(buf + 4 * k, &f, 4);
            else if (spec[i].dtype == YOLO_ST_I32) { int32_t v = (int32_t)(r & 0xFFFF); memcpy(buf + 4 * k, &v, 4); }
            else if (spec[i].dtype == YOLO_ST_U8) buf[k] = (uint8_t)r;
            else if (spec[i].dtype == YOLO_ST_I64) { int64_t v = (int64_t)r; memcpy(buf + 8 * k, &v, 8); }
            else { double v = (double)f * 3.0; memcpy(buf + 8 * k, &v, 8); }
        }
        int bad = yolo_ckpt_tensors_add_host(&s->model, spec[i].name, spec[i].dtype, spec[i].ndim, spec[i].shape, buf) != YOLO_OK;
        if (!bad && spec[i].dtype == YOLO_ST_F32) {
            /* ema: the same tensor in fp16; optimizer: a momentum buffer */
            uint16_t *h = malloc((size_t)numel * 2 + 2);
            for (int64_t k = 0; k < numel; k++) {
                float f;
                memcpy(&f, buf + 4 * k, 4);
                h[k] = yolo_f32_to_f16(f * 0.5f);
            }
            bad = yolo_ckpt_tensors_add_host(&s->ema, spec[i].name, YOLO_ST_F16, spec[i].ndim, spec[i].shape, h) != YOLO_OK;
            free(h);
            char mom[128];
            snprintf(mom, sizeof mom, "%s.momentum_buffer", spec[i].name);
            if (!bad) bad = yolo_ckpt_tensors_add_host(&s->optim, mom, YOLO_ST_F32, spec[i].ndim, spec[i].shape, buf) != YOLO_OK;
        }
        free(buf);
        if (bad) return -1;
    }
    yolo_ckpt_info info = {.task = "detect", .plugin_version = "1.2.3", .epoch = version, .optimizer_steps = 1000003 + version,
                           .ema_updates = 999999 + version, .best_fitness = 0.125 * version, .seed = 7,
                           .sampler_epoch = version + 1, .sampler_batch = 5};
    if (yolo_ckpt_meta_new(&info, &s->meta)) return -1;
    yolo_meta_set_str(s->meta, "date", "2024-01-02T03:04:05Z"); /* fixed, so that rebuilt samples compare equal */
    yolo_meta *args = yolo_meta_get_mut(s->meta, "train_args");
    yolo_meta_set_str(args, "model", "yolov8n.yaml");
    yolo_meta_set_str(args, "data", "coco8.yaml");
    yolo_meta_set_int(args, "epochs", 100);
    yolo_meta_set_float(args, "lr0", 0.01);
    yolo_meta_set_float(args, "weight_decay", 5e-4);
    yolo_meta_set_bool(args, "amp", true);
    yolo_meta_set_null(args, "resume");
    yolo_meta_set_str(args, "name", "odd: \"name\" # with\ttabs\nand lines, üñï");
    yolo_meta *results = yolo_meta_get_mut(s->meta, "results");
    for (int e = 0; e <= version && e < 5; e++) {
        yolo_meta *row = yolo_meta_append_map(results);
        yolo_meta_set_int(row, "epoch", e);
        yolo_meta_set_float(row, "train/box_loss", 1.5 / (e + 1));
        yolo_meta_set_float(row, "metrics/mAP50(B)", 0.1 * e);
        yolo_meta_set_float(row, "lr/pg0", 0.00333);
    }
    s->contents.meta = s->meta;
    s->contents.blobs[YOLO_CKPT_MODEL] = yolo_ckpt_tensors_blob(&s->model);
    s->contents.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&s->ema);
    s->contents.blobs[YOLO_CKPT_OPTIMIZER] = yolo_ckpt_tensors_blob(&s->optim);
    return 0;
}

/* Blob `id` of ck holds exactly the tensors of `b` (NULL: absent). */
__attribute__((unused)) static int ckpt_blob_equal(const yolo_ckpt *ck, yolo_ckpt_blob_id id, const yolo_ckpt_blob *b) {
    const yolo_st_file *f = yolo_ckpt_get_blob(ck, id);
    if (!b) return f == NULL;
    if (!f || yolo_st_count(f) != b->count) return 0;
    for (size_t i = 0; i < b->count; i++) {
        const yolo_st_tensor *want = &b->tensors[i], *got = yolo_st_find(f, want->name);
        if (!got || got->dtype != want->dtype || got->ndim != want->ndim || got->nbytes != want->nbytes) return 0;
        for (int d = 0; d < got->ndim; d++)
            if (got->shape[d] != want->shape[d]) return 0;
        if (got->nbytes && memcmp(got->data, want->data, got->nbytes) != 0) return 0;
    }
    return 1;
}

/* ck holds what s wrote: every blob, and meta.yaml plus the writer's members. */
__attribute__((unused)) static int ckpt_same_as_sample(const yolo_ckpt *ck, const ckpt_sample *s) {
    for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++)
        if (!ckpt_blob_equal(ck, (yolo_ckpt_blob_id)id, s->contents.blobs[id])) return 0;
    const yolo_meta *read = yolo_ckpt_meta(ck);
    if (yolo_meta_size(read) != yolo_meta_size(s->meta) + 1 || !yolo_meta_get(read, "members")) return 0;
    for (size_t i = 0; i < yolo_meta_size(s->meta); i++)
        if (!yolo_meta_equal(yolo_meta_at(s->meta, i), yolo_meta_get(read, yolo_meta_key_at(s->meta, i)))) return 0;
    return 1;
}

/* mkdtemp under $TMPDIR or /tmp; path into buf. */
__attribute__((unused)) static int ckpt_tmpdir(char *buf, size_t size) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, size, "%s/yolo-ckpt-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(buf) ? 0 : -1;
}

/* Removes the files in dir (one level) and dir. */
__attribute__((unused)) static void ckpt_rmdir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

__attribute__((unused)) static int ckpt_write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

__attribute__((unused)) static uint8_t *ckpt_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)sz + 1);
    if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return buf;
}

#endif
