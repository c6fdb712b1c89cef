/* MuSGD (Ultralytics 8.4's optimizer=MuSGD, and auto's past 10000
 * iterations) against make_musgd_fixture.py's torch run of Ultralytics'
 * definitions: two steps of the optimizer (train/optimizer.c, its update
 * graph, on the CPU backend) over five parameters named as in a model (a
 * conv filter, a tall matrix, a class-branch filter of layer 23 at 3x lr, a
 * bias and a norm weight) equal torch's with the Newton-Schulz iteration in
 * float32 to 1e-6; torch's bfloat16 iteration (Ultralytics' own) differs
 * by its rounding, printed. The orthogonalization alone (train/muon.h)
 * equals zeropower_via_newtonschulz5 to 1e-5; the lr x3 names; the groups
 * and the state Ultralytics names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop_util.h"
#include "test_util.h"
#include "train/muon.h"
#include "train/optimizer.h"

#define N_PARAMS 5

static const struct {
    const char *name;
    int ndim;
    int64_t shape[4];
    yolo_param_role role;
} params[N_PARAMS] = {
    {"model.0.conv.weight", 4, {8, 4, 3, 3}, YOLO_PARAM_WEIGHT},
    {"model.5.linear.weight", 2, {12, 5}, YOLO_PARAM_WEIGHT},
    {"model.23.cv3.0.2.weight", 4, {6, 8, 1, 1}, YOLO_PARAM_WEIGHT},
    {"model.0.conv.bias", 1, {8}, YOLO_PARAM_BIAS},
    {"model.0.bn.weight", 1, {8}, YOLO_PARAM_NORM_WEIGHT},
};

static const char *src;

static int64_t numel_of(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    return n;
}

static float *fixture(const char *file, int64_t want) {
    char path[1200];
    snprintf(path, sizeof path, "%s/tests/fixtures/musgd.%s.npy", src, file);
    int ndim = 0;
    int64_t shape[8], count = 0;
    float *d = npy_read_f32(path, &ndim, shape, &count);
    CHECK_MSG(d && count == want, "%s: %lld values, expected %lld", path, (long long)count, (long long)want);
    return d && count == want ? d : (free(d), NULL);
}

static double max_abs_diff(const float *a, const float *b, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - (double)b[i]));
    return worst;
}

static void test_boosted_names(void) {
    CHECK(yolo_musgd_boosted("model.23.cv3.0.2.weight") && yolo_musgd_boosted("model.23.one2one_cv3.1.0.0.conv.weight"));
    CHECK(yolo_musgd_boosted("model.22.proto.semseg.0.conv.weight"));
    CHECK(!yolo_musgd_boosted("model.23.cv2.0.0.conv.weight") && !yolo_musgd_boosted("model.22.cv3.0.2.weight"));
}

/* yolo_muon_orthogonalize of gradient 1 of the matrices against torch's float32 iteration. */
static void test_orthogonalize(yolo_backend *be) {
    for (int i = 0; i < 3; i++) {
        const int64_t n = numel_of(params[i].ndim, params[i].shape);
        char file[32];
        snprintf(file, sizeof file, "g%d_1", i);
        float *g = fixture(file, n);
        snprintf(file, sizeof file, "ns_%d", i);
        float *ref = fixture(file, n);
        yolo_graph *gr = yolo_graph_new(be);
        yolo_tensor *x = yolo_graph_input(gr, "u", YOLO_F32, params[i].ndim, params[i].shape);
        yolo_tensor *o = yolo_muon_orthogonalize(gr, x);
        yolo_graph_plan_info info;
        float *got = malloc(sizeof(float) * (size_t)n);
        yolo_status st = o && g && ref && got ? yolo_graph_mark_output(gr, o) : YOLO_ERR_ARG;
        if (!st) st = yolo_graph_plan(gr, &info);
        if (!st) st = yolo_tensor_upload_f32(x, g, n);
        if (!st) st = yolo_graph_run(gr);
        if (!st) st = yolo_tensor_download_f32(o, got, n);
        CHECK_MSG(!st, "%s: %s", params[i].name, yolo_last_error());
        if (!st) {
            const double d = max_abs_diff(got, ref, n);
            printf("orthogonalize %-24s max |ours - torch float32| = %.3g\n", params[i].name, d);
            CHECK_MSG(d <= 1e-5, "%s: orthogonalized update differs by %.3g", params[i].name, d);
        }
        yolo_graph_free(gr);
        free(g), free(ref), free(got);
    }
}

/* Two optimizer steps against the fixture's parameters after them. */
static void test_steps(yolo_backend *be) {
    yolo_model_tensor tensors[N_PARAMS];
    float *grads[2][N_PARAMS] = {{0}};
    bool ok = true;
    for (int i = 0; i < N_PARAMS; i++) {
        const int64_t n = numel_of(params[i].ndim, params[i].shape);
        yolo_tensor *t = yolo_tensor_new(be, params[i].name, YOLO_F32, params[i].ndim, params[i].shape, true);
        char file[32];
        snprintf(file, sizeof file, "p%d", i);
        float *p = fixture(file, n);
        ok = ok && t && p && !yolo_tensor_upload_f32(t, p, n);
        free(p);
        for (int s = 0; s < 2; s++) {
            snprintf(file, sizeof file, "g%d_%d", i, s + 1);
            ok = ok && (grads[s][i] = fixture(file, n));
        }
        tensors[i] = (yolo_model_tensor){t, params[i].role, 0};
    }
    yolo_optimizer *opt = NULL;
    if (ok && yolo_optimizer_create_for(be, N_PARAMS, tensors, YOLO_OPTIMIZER_MUSGD, 0.01f, 0.9f, 5e-4f, &opt)) {
        CHECK_MSG(0, "optimizer: %s", yolo_last_error());
        ok = false;
    }
    if (opt) {
        char line[256];
        yolo_optimizer_describe(opt, line, sizeof line);
        CHECK_MSG(!strcmp(line, "MuSGD(lr=0.01, momentum=0.9) with parameter groups 1 weight(decay=0.0), 3 "
                                "weight(decay=0.0005), 1 bias(decay=0.0)"),
                  "%s", line);
        /* Ultralytics' state: momentum_buffer, and momentum_buffer_SGD for the Muon parameters */
        for (int i = 0; i < N_PARAMS; i++)
            CHECK_MSG(strstr(opt->state_a[i]->name, ".momentum_buffer") &&
                          (i < 3 ? opt->state_b[i] && strstr(opt->state_b[i]->name, ".momentum_buffer_SGD")
                                 : !opt->state_b[i]),
                      "%s: state %s, %s", params[i].name, opt->state_a[i]->name,
                      opt->state_b[i] ? opt->state_b[i]->name : "none");
        for (int i = 0; i < N_PARAMS; i++) CHECK(opt->boosted[i] == (i == 2));
    }
    for (int s = 0; ok && s < 2; s++) {
        for (int i = 0; ok && i < N_PARAMS; i++)
            ok = !yolo_tensor_upload_f32(tensors[i].tensor->grad, grads[s][i], yolo_tensor_numel(tensors[i].tensor));
        ok = ok && !yolo_optimizer_step(opt, 0.0f, NULL); /* no clipping: the fixture's gradients as they are */
        CHECK_MSG(ok, "step %d: %s", s + 1, yolo_last_error());
    }
    for (int i = 0; ok && i < N_PARAMS; i++) {
        const int64_t n = yolo_tensor_numel(tensors[i].tensor);
        char file[32];
        snprintf(file, sizeof file, "f32_%d", i);
        float *ref = fixture(file, n), *got = malloc(sizeof(float) * (size_t)n);
        snprintf(file, sizeof file, "bf16_%d", i);
        float *ref16 = fixture(file, n);
        if (ref && ref16 && got && !yolo_tensor_download_f32(tensors[i].tensor, got, n)) {
            const double d = max_abs_diff(got, ref, n), d16 = max_abs_diff(got, ref16, n);
            printf("MuSGD two steps %-24s max |ours - torch| %.3g (float32 Newton-Schulz), %.3g (Ultralytics' "
                   "bfloat16)\n", params[i].name, d, d16);
            CHECK_MSG(d <= 1e-6, "%s after two steps: %.3g from torch", params[i].name, d);
        } else {
            CHECK_MSG(0, "%s: %s", params[i].name, yolo_last_error());
        }
        free(ref), free(ref16), free(got);
    }
    yolo_optimizer_free(opt);
    for (int i = 0; i < N_PARAMS; i++) {
        yolo_tensor_free(tensors[i].tensor);
        free(grads[0][i]), free(grads[1][i]);
    }
}

int main(void) {
    src = getenv("YOLO_SOURCE_DIR");
    if (!src) {
        printf("skipped: YOLO_SOURCE_DIR is not set (run through ctest)\n");
        return 77;
    }
    yolo_backend *be = NULL;
    if (yolo_backend_create("cpu", 2, &be)) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    test_boosted_names();
    test_orthogonalize(be);
    test_steps(be);
    yolo_backend_free(be);
    return test_result("test_musgd");
}
