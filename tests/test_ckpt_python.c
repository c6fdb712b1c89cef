/* The checkpoint as Python sees it. With `--write CKPT MANIFEST` this
 * writes a last.ckpt-like file from real tensors (model f32, ema fp16,
 * AdamW moments, odd dtypes, a unicode name) and a JSON manifest of every
 * blob's tensors (dtype, shape, first value) and meta.yaml's counters;
 * tests/ckpt.cmake runs /usr/bin/python3 on both (zipfile + json, or the
 * safetensors package when importable). Without arguments it writes the
 * same file and checks it in C. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_ckpt_util.h"
#include "test_util.h"

static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') fprintf(f, "\\%c", *c);
        else if (*c < 0x20) fprintf(f, "\\u%04x", *c);
        else fputc(*c, f);
    }
    fputc('"', f);
}

static void first_value(FILE *f, const yolo_st_tensor *t) {
    if (t->nbytes == 0) { fputs("null", f); return; }
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case YOLO_ST_F32: { float v; memcpy(&v, p, 4); fprintf(f, "%.9g", (double)v); break; }
    case YOLO_ST_F16: { uint16_t h; memcpy(&h, p, 2); fprintf(f, "%.9g", (double)yolo_f16_to_f32(h)); break; }
    case YOLO_ST_F64: { double v; memcpy(&v, p, 8); fprintf(f, "%.17g", v); break; }
    case YOLO_ST_I32: { int32_t v; memcpy(&v, p, 4); fprintf(f, "%" PRId32, v); break; }
    case YOLO_ST_I64: { int64_t v; memcpy(&v, p, 8); fprintf(f, "%" PRId64, v); break; }
    case YOLO_ST_U8: fprintf(f, "%u", p[0]); break;
    default: fputs("null", f);
    }
}

static int write_manifest(const char *path, const yolo_ckpt_contents *c, const yolo_ckpt_info *info) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("{\"blobs\": {", f);
    int first_blob = 1;
    for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++) {
        const yolo_ckpt_blob *b = c->blobs[id];
        if (!b) continue;
        fprintf(f, "%s\n  \"%s\": {", first_blob ? "" : ",", yolo_ckpt_member_name((yolo_ckpt_blob_id)id));
        first_blob = 0;
        for (size_t i = 0; i < b->count; i++) {
            const yolo_st_tensor *t = &b->tensors[i];
            fputs(i ? ",\n    " : "\n    ", f);
            json_str(f, t->name);
            fprintf(f, ": [\"%s\", [", yolo_st_dtype_name(t->dtype));
            for (int d = 0; d < t->ndim; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", t->shape[d]);
            fputs("], ", f);
            first_value(f, t);
            fputs("]", f);
        }
        fputs("}", f);
    }
    fprintf(f, "},\n \"meta\": {\"format_version\": %d, \"task\": ", YOLO_CKPT_FORMAT_VERSION);
    json_str(f, info->task);
    fprintf(f, ", \"epoch\": %" PRId64 ", \"optimizer_steps\": %" PRId64 ", \"ema_updates\": %" PRId64
               ", \"best_fitness\": %.17g, \"seed\": %" PRId64 "}}\n",
            info->epoch, info->optimizer_steps, info->ema_updates, info->best_fitness, info->seed);
    return fclose(f) == 0 ? 0 : -1;
}

typedef struct pyckpt {
    yolo_backend *be;
    yolo_tensor *t[4];
    yolo_ckpt_tensors model, ema, optim;
    yolo_meta *meta;
    yolo_ckpt_info info;
    yolo_ckpt_contents c;
} pyckpt;

static int build(pyckpt *p) {
    memset(p, 0, sizeof *p);
    if (yolo_backend_create("cpu", 1, &p->be) != YOLO_OK) return -1;
    const char *names[4] = {"model.0.conv.weight", "model.0.bn.weight", "model.22.cv3.2.2.bias", "model.22.dfl.conv.weight"};
    int64_t shapes[4][4] = {{16, 3, 3, 3}, {16}, {80}, {1, 16, 1, 1}};
    int ndims[4] = {4, 1, 1, 4};
    for (int i = 0; i < 4; i++) {
        p->t[i] = yolo_tensor_new(p->be, names[i], YOLO_F32, ndims[i], shapes[i], false);
        int64_t n = yolo_tensor_numel(p->t[i]);
        float *v = malloc((size_t)n * sizeof *v);
        for (int64_t k = 0; k < n; k++) v[k] = 0.37f * (float)(i + 1) - 0.011f * (float)k;
        yolo_tensor_upload_f32(p->t[i], v, n);
        free(v);
        char nm[128];
        if (yolo_ckpt_tensors_add(&p->model, NULL, p->t[i], YOLO_F32) || yolo_ckpt_tensors_add(&p->ema, NULL, p->t[i], YOLO_F16))
            return -1;
        snprintf(nm, sizeof nm, "%s.exp_avg", names[i]);
        if (yolo_ckpt_tensors_add(&p->optim, nm, p->t[i], YOLO_F32)) return -1;
        snprintf(nm, sizeof nm, "%s.exp_avg_sq", names[i]);
        if (yolo_ckpt_tensors_add(&p->optim, nm, p->t[i], YOLO_F32)) return -1;
    }
    int32_t i32[3] = {8, 16, 32};
    uint8_t u8[4] = {0, 1, 254, 255};
    int64_t i64 = -1234567890123;
    double f64[2] = {0.1, -2.5};
    int64_t s3[1] = {3}, s4[1] = {4}, s2[1] = {2};
    if (yolo_ckpt_tensors_add_host(&p->model, "model.22.stride", YOLO_ST_I32, 1, s3, i32) ||
        yolo_ckpt_tensors_add_host(&p->model, "model.22.mask", YOLO_ST_U8, 1, s4, u8) ||
        yolo_ckpt_tensors_add_host(&p->model, "scalar.count", YOLO_ST_I64, 0, NULL, &i64) ||
        yolo_ckpt_tensors_add_host(&p->model, "model.ünï \"q\"", YOLO_ST_F64, 1, s2, f64))
        return -1;
    p->info = (yolo_ckpt_info){.task = "detect", .plugin_version = "0.1.0", .epoch = 2, .optimizer_steps = 4503599627370497,
                               .ema_updates = 123457, .best_fitness = 0.6180339887498949, .seed = 42, .sampler_epoch = 3};
    if (yolo_ckpt_meta_new(&p->info, &p->meta)) return -1;
    yolo_meta_set_float(yolo_meta_get_mut(p->meta, "train_args"), "lr0", 0.01);
    yolo_meta *row = yolo_meta_append_map(yolo_meta_get_mut(p->meta, "results"));
    yolo_meta_set_float(row, "metrics/mAP50(B)", 0.25);
    p->c.meta = p->meta;
    p->c.blobs[YOLO_CKPT_MODEL] = yolo_ckpt_tensors_blob(&p->model);
    p->c.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&p->ema);
    p->c.blobs[YOLO_CKPT_OPTIMIZER] = yolo_ckpt_tensors_blob(&p->optim);
    return 0;
}

static void release(pyckpt *p) {
    for (int i = 0; i < 4; i++) yolo_tensor_free(p->t[i]);
    yolo_ckpt_tensors_free(&p->model);
    yolo_ckpt_tensors_free(&p->ema);
    yolo_ckpt_tensors_free(&p->optim);
    yolo_meta_free(p->meta);
    yolo_backend_free(p->be);
}

int main(int argc, char **argv) {
    pyckpt p;
    if (build(&p) != 0) {
        fprintf(stderr, "building the checkpoint: %s\n", yolo_last_error());
        return 1;
    }
    if (argc == 4 && strcmp(argv[1], "--write") == 0) {
        int rc = 0;
        if (yolo_ckpt_write(argv[2], &p.c) != YOLO_OK || write_manifest(argv[3], &p.c, &p.info) != 0) {
            fprintf(stderr, "writing %s / %s: %s\n", argv[2], argv[3], yolo_last_error());
            rc = 1;
        }
        release(&p);
        return rc;
    }
    char dir[512], path[600];
    if (ckpt_tmpdir(dir, sizeof dir) != 0) return test_skip("cannot create a temporary folder");
    snprintf(path, sizeof path, "%s/py.ckpt", dir);
    CHECK(yolo_ckpt_write(path, &p.c) == YOLO_OK);
    yolo_ckpt *ck = NULL;
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (ck) {
        for (int id = 0; id < YOLO_CKPT_BLOB_COUNT; id++) CHECK(ckpt_blob_equal(ck, (yolo_ckpt_blob_id)id, p.c.blobs[id]));
        CHECK(yolo_ckpt_get_info(ck)->optimizer_steps == 4503599627370497); /* > 2^52: exact as an integer */
        CHECK(yolo_ckpt_get_tensor(ck, YOLO_CKPT_MODEL, "model.ünï \"q\"") != NULL);
        yolo_ckpt_free(ck);
    }
    ckpt_rmdir(dir);
    release(&p);
    return test_result("test_ckpt_python");
}
