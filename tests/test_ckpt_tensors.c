/* Tensors <-> checkpoint blobs on the CPU backend: f32 and fp16 storage,
 * strict loading for resume, name+shape matching for fine-tune. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_ckpt_util.h"
#include "test_util.h"

static yolo_tensor *make(yolo_backend *be, const char *name, yolo_dtype dt, int ndim, const int64_t *shape, float base) {
    yolo_tensor *t = yolo_tensor_new(be, name, dt, ndim, shape, false);
    if (!t) return NULL;
    int64_t n = yolo_tensor_numel(t);
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = base + 0.1234567f * (float)i - (dt == YOLO_I32 ? 0 : 0.5f);
    if (dt == YOLO_I32) {
        int32_t *iv = malloc((size_t)n * sizeof *iv);
        for (int64_t i = 0; i < n; i++) iv[i] = (int32_t)(base * 100) + (int32_t)i;
        yolo_tensor_upload(t, iv, (size_t)n * sizeof *iv);
        free(iv);
    } else {
        yolo_tensor_upload_f32(t, v, n);
    }
    free(v);
    return t;
}

static int same_values(const yolo_tensor *a, const yolo_tensor *b, bool via_f16) {
    int64_t n = yolo_tensor_numel(a);
    if (n != yolo_tensor_numel(b)) return 0;
    if (a->dtype == YOLO_I32) {
        int32_t *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
        yolo_tensor_download(a, x, (size_t)n * 4);
        yolo_tensor_download(b, y, (size_t)n * 4);
        int ok = memcmp(x, y, (size_t)n * 4) == 0;
        free(x);
        free(y);
        return ok;
    }
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
    yolo_tensor_download_f32(a, x, n);
    yolo_tensor_download_f32(b, y, n);
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        float want = via_f16 ? yolo_f16_to_f32(yolo_f32_to_f16(x[i])) : x[i];
        if (memcmp(&want, &y[i], 4) != 0) ok = 0;
    }
    free(x);
    free(y);
    return ok;
}

int main(void) {
    char dir[512], path[600];
    if (ckpt_tmpdir(dir, sizeof dir) != 0) return test_skip("cannot create a temporary folder");
    snprintf(path, sizeof path, "%s/t.ckpt", dir);
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 1, &be) != YOLO_OK) return test_skip("no CPU backend");

    int64_t sa[2] = {4, 3}, sb[1] = {5}, sc[2] = {2, 2}, sd[1] = {3};
    yolo_tensor *src[4] = {make(be, "m.a", YOLO_F32, 2, sa, 1), make(be, "m.b", YOLO_F32, 1, sb, 2),
                           make(be, "m.c", YOLO_F16, 2, sc, 3), make(be, "m.d", YOLO_I32, 1, sd, 4)};
    yolo_ckpt_tensors f32 = {0}, f16 = {0}, opt = {0};
    for (int i = 0; i < 4; i++) {
        CHECK(yolo_ckpt_tensors_add(&f32, NULL, src[i], YOLO_F32) == YOLO_OK);
        CHECK(yolo_ckpt_tensors_add(&f16, NULL, src[i], YOLO_F16) == YOLO_OK);
        char name[128];
        snprintf(name, sizeof name, "%s.exp_avg", src[i]->name);
        CHECK(yolo_ckpt_tensors_add(&opt, name, src[i], YOLO_F32) == YOLO_OK);
    }
    CHECK(f16.items[0].dtype == YOLO_ST_F16 && f16.items[3].dtype == YOLO_ST_I32 && f32.items[2].dtype == YOLO_ST_F32);
    yolo_ckpt_info info = {.task = "detect", .plugin_version = "1", .best_fitness = 0};
    yolo_meta *meta = NULL;
    CHECK(yolo_ckpt_meta_new(&info, &meta) == YOLO_OK);
    yolo_ckpt_contents c = {.meta = meta};
    c.blobs[YOLO_CKPT_MODEL] = yolo_ckpt_tensors_blob(&f32);
    c.blobs[YOLO_CKPT_EMA] = yolo_ckpt_tensors_blob(&f16);
    c.blobs[YOLO_CKPT_OPTIMIZER] = yolo_ckpt_tensors_blob(&opt);
    CHECK(yolo_ckpt_write(path, &c) == YOLO_OK);
    yolo_ckpt *ck = NULL;
    CHECK(yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (!ck) return test_result("test_ckpt_tensors");

    /* Resume: exact f32 copies; fp16 ema rounds as yolo_f32_to_f16 does. */
    yolo_tensor *dst[4];
    for (int i = 0; i < 4; i++) dst[i] = yolo_tensor_new(be, src[i]->name, src[i]->dtype, src[i]->ndim, src[i]->shape, false);
    CHECK(yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL), dst, NULL, 4, "model") == YOLO_OK);
    for (int i = 0; i < 4; i++) CHECK_MSG(same_values(src[i], dst[i], false), "model %s", src[i]->name);
    CHECK(yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA), dst, NULL, 4, "ema") == YOLO_OK);
    for (int i = 0; i < 4; i++) CHECK_MSG(same_values(src[i], dst[i], src[i]->dtype == YOLO_F32), "ema %s", src[i]->name);
    const char *opt_names[4] = {"m.a.exp_avg", "m.b.exp_avg", "m.c.exp_avg", "m.d.exp_avg"};
    for (int i = 0; i < 4; i++) yolo_tensor_zero(dst[i]);
    CHECK(yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_OPTIMIZER), dst, opt_names, 4, "opt") == YOLO_OK);
    for (int i = 0; i < 4; i++) CHECK(same_values(src[i], dst[i], false));

    /* Strict refusals load nothing and name the tensor. */
    for (int i = 0; i < 4; i++) yolo_tensor_zero(dst[i]);
    CHECK(yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL), dst, NULL, 3, "model.safetensors of t.ckpt") ==
              YOLO_ERR_FORMAT && test_error_mentions("'m.d'") && test_error_mentions("t.ckpt"));
    yolo_tensor *wrong = yolo_tensor_new(be, "m.b", YOLO_F32, 1, (int64_t[]){6}, false);
    yolo_tensor *mixed[4] = {dst[0], wrong, dst[2], dst[3]};
    CHECK(yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL), mixed, NULL, 4, "model") == YOLO_ERR_SHAPE &&
          test_error_mentions("F32[5]") && test_error_mentions("f32[6]"));
    float probe[12];
    yolo_tensor_download_f32(dst[0], probe, 12);
    CHECK(probe[0] == 0.0f && probe[11] == 0.0f);
    yolo_tensor *renamed = yolo_tensor_new(be, "m.zz", YOLO_F32, 1, sb, false);
    yolo_tensor *miss[4] = {dst[0], renamed, dst[2], dst[3]};
    CHECK(yolo_ckpt_load_all(yolo_ckpt_get_blob(ck, YOLO_CKPT_MODEL), miss, NULL, 4, "model") == YOLO_ERR_FORMAT &&
          test_error_mentions("'m.zz' is missing"));
    yolo_tensor *as_int = yolo_tensor_new(be, "m.a", YOLO_I32, 2, sa, false);
    CHECK(!yolo_ckpt_tensor_matches(yolo_ckpt_get_tensor(ck, YOLO_CKPT_MODEL, "m.a"), as_int));

    /* Fine-tune: 3 of 5 transfer (m.b has another shape, m.e is new). */
    yolo_tensor *fresh_b = yolo_tensor_new(be, "m.b", YOLO_F32, 1, (int64_t[]){6}, false);
    yolo_tensor *fresh_e = yolo_tensor_new(be, "m.e", YOLO_F32, 1, (int64_t[]){2}, false);
    yolo_tensor *model[5] = {dst[0], fresh_b, dst[2], dst[3], fresh_e};
    size_t transferred = 99;
    CHECK(yolo_ckpt_load_matching(yolo_ckpt_get_blob(ck, YOLO_CKPT_EMA), model, 5, "ema", &transferred) == YOLO_OK);
    CHECK_MSG(transferred == 3, "Transferred %zu/5 items", transferred);
    CHECK(same_values(src[0], dst[0], true) && same_values(src[2], dst[2], false) && same_values(src[3], dst[3], false));
    float fb[6];
    yolo_tensor_download_f32(fresh_b, fb, 6);
    CHECK(fb[0] == 0.0f && fb[5] == 0.0f);

    /* The wrappers on a read checkpoint name the member and the file. */
    CHECK(yolo_ckpt_weights_member(ck) == YOLO_CKPT_EMA);
    CHECK(yolo_ckpt_transfer(ck, YOLO_CKPT_MODEL, model, 5, &transferred) == YOLO_OK && transferred == 3);
    CHECK(same_values(src[0], dst[0], false));
    CHECK(yolo_ckpt_restore(ck, YOLO_CKPT_MODEL, miss, NULL, 4) == YOLO_ERR_FORMAT &&
          test_error_mentions("model.safetensors of ") && test_error_mentions(path));
    CHECK(yolo_ckpt_restore(ck, YOLO_CKPT_OPTIMIZER, dst, opt_names, 4) == YOLO_OK);
    yolo_ckpt_free(ck);
    c.blobs[YOLO_CKPT_MODEL] = NULL;
    c.blobs[YOLO_CKPT_OPTIMIZER] = NULL;
    CHECK(yolo_ckpt_write(path, &c) == YOLO_OK && yolo_ckpt_read(path, &ck) == YOLO_OK);
    if (ck) {
        CHECK(yolo_ckpt_restore(ck, YOLO_CKPT_OPTIMIZER, dst, opt_names, 4) == YOLO_ERR_FORMAT &&
              test_error_mentions("has no member optimizer.safetensors"));
        CHECK(yolo_ckpt_transfer(ck, yolo_ckpt_weights_member(ck), model, 5, &transferred) == YOLO_OK && transferred == 3);
    }
    yolo_ckpt_free(ck);
    yolo_ckpt_tensors_free(&f32);
    yolo_ckpt_tensors_free(&f16);
    yolo_ckpt_tensors_free(&opt);
    yolo_meta_free(meta);
    for (int i = 0; i < 4; i++) {
        yolo_tensor_free(src[i]);
        yolo_tensor_free(dst[i]);
    }
    yolo_tensor_free(wrong);
    yolo_tensor_free(renamed);
    yolo_tensor_free(as_int);
    yolo_tensor_free(fresh_b);
    yolo_tensor_free(fresh_e);
    yolo_backend_free(be);
    ckpt_rmdir(dir);
    return test_result("test_ckpt_tensors");
}
