/* Model yaml handling: scale selection, name resolution, depth/width rules,
 * parameter names, strides, head bias init, and errors that name the file
 * and line. Builds graphs but runs nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "yolo/model.h"

static yolo_backend *be;

static yolo_model *load_text(const char *name, const char *text, yolo_status *st) {
    yolo_model *m = NULL;
    yolo_model_options opt = {.log = NULL};
    FILE *devnull = fopen("/dev/null", "w");
    opt.log = devnull;
    *st = yolo_model_load_text(name, text, strlen(text), be, &opt, &m);
    fclose(devnull);
    return m;
}

static void expect_error(const char *name, const char *text, yolo_status want, const char *const *needles) {
    yolo_status st;
    yolo_model *m = load_text(name, text, &st);
    CHECK_MSG(st == want && !m, "%s: status %d (%s), expected %d", name, st, yolo_last_error(), want);
    for (int i = 0; needles[i]; i++)
        CHECK_MSG(test_error_mentions(needles[i]), "%s: message lacks '%s': %s", name, needles[i], yolo_last_error());
    yolo_model_free(m);
}

static const char tiny[] = "nc: 4\n"
                           "scales:\n"
                           "  n: [0.33, 0.25, 1024]\n"
                           "  s: [1.0, 0.5, 64]\n"
                           "backbone:\n"
                           "  - [-1, 1, Conv, [64, 3, 2]]\n"
                           "  - [-1, 6, C2f, [128, True]]\n"
                           "  - [-1, 2, Conv, [128, 1, 1]]\n"
                           "head:\n"
                           "  - [[-1, 0], 1, Concat, [1]]\n";

static void test_errors(void) {
    expect_error("bad.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3]\n  - [-1, 1, Conv, [16]]\n",
                 YOLO_ERR_FORMAT, (const char *[]){"bad.yaml:4:", "malformed yaml", NULL});
    expect_error("unknown.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n  - [-1, 1, Cnov, [16]]\n",
                 YOLO_ERR_CONFIG, (const char *[]){"unknown.yaml:4:", "unknown module 'Cnov'", "'Conv'", NULL});
    expect_error("from.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n  - [[-1, 5], 1, Concat, [1]]\n",
                 YOLO_ERR_FORMAT, (const char *[]){"from.yaml:4:", "'from' 5", NULL});
    expect_error("argtype.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, abc]]\n", YOLO_ERR_CONFIG,
                 (const char *[]){"argtype.yaml:3:", "Conv", "argument 1", "abc", NULL});
    expect_error("row.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv]\n", YOLO_ERR_FORMAT,
                 (const char *[]){"row.yaml:3:", "[from, repeats, module, args]", NULL});
    expect_error("act.yaml", "nc: 4\nactivation: nn.LeakyReLU(0.1)\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n",
                 YOLO_ERR_UNSUPPORTED, (const char *[]){"act.yaml:2:", "nn.LeakyReLU(0.1)", NULL});
    expect_error("nohead.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n  - [-1, 1, Detect, [nc]]\n",
                 YOLO_ERR_CONFIG, (const char *[]){"nohead.yaml:4:", "'Detect'", NULL});
    /* Ultralytics 8.4's model keys: reg_max 1..16, end2end a bool; bad values named with their line */
    expect_error("regmax.yaml", "nc: 4\nreg_max: 17\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n", YOLO_ERR_FORMAT,
                 (const char *[]){"regmax.yaml:2:", "reg_max 17", "1..16", NULL});
    expect_error("e2e.yaml", "nc: 4\nend2end: maybe\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n", YOLO_ERR_FORMAT,
                 (const char *[]){"e2e.yaml:2:", "end2end", "maybe", NULL});
    /* YOLO26's C3k2 attn units build: m.<i>.0 a Bottleneck, m.<i>.1 a PSABlock with max(c // 64, 1) heads */
    {
        yolo_status st;
        yolo_model *m = load_text("attn.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                                               "  - [-1, 1, C3k2, [16, True, 0.5, True]]\n", &st);
        CHECK_MSG(m && !st, "C3k2 attn: %s", yolo_last_error());
        CHECK_MSG(m && yolo_model_find_tensor(m, "model.1.m.0.0.cv1.conv.weight") &&
                      yolo_model_find_tensor(m, "model.1.m.0.1.attn.qkv.conv.weight") &&
                      yolo_model_find_tensor(m, "model.1.m.0.1.ffn.1.bn.weight") &&
                      !yolo_model_find_tensor(m, "model.1.m.0.cv1.conv.weight"),
                  "C3k2 attn: Ultralytics' parameter names");
        yolo_model_free(m);
    }
    expect_error("sppf.yaml", "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3]]\n  - [-1, 1, SPPF, [16, 5, 0]]\n",
                 YOLO_ERR_CONFIG, (const char *[]){"sppf.yaml:4:", "n=0", NULL});
    /* 8.4's C3k2 form with attn False (g and shortcut after it) builds; 8.3's g in its place too */
    for (int v = 0; v < 2; v++) {
        yolo_status st;
        yolo_model *m = load_text("c3k2.yaml", v ? "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, C3k2, [16, True, 0.5, False, 1, False]]\n"
                                                 : "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, C3k2, [16, True, 0.5, 1, False]]\n", &st);
        CHECK_MSG(m && !st, "C3k2 in %s's form: %s", v ? "8.4" : "8.3", yolo_last_error());
        yolo_model_free(m);
    }
    expect_error("concat.yaml",
                 "nc: 4\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]]\n  - [-1, 1, Conv, [16, 3, 2]]\n"
                 "  - [[-1, 0], 1, Concat, [1]]\n",
                 YOLO_ERR_SHAPE, (const char *[]){"concat.yaml:5", "layer 2 Concat", NULL});
}

static void test_scales(void) {
    yolo_status st;
    /* no letter in the name: the first scale, with a warning */
    yolo_model *m = load_text("custom.yaml", tiny, &st);
    CHECK_MSG(!st && m, "%s", yolo_last_error());
    if (m) {
        CHECK(!strcmp(yolo_model_scale(m), "n"));
        /* width 0.25: Conv 64 -> 16 */
        yolo_tensor *w = yolo_model_find_tensor(m, "model.0.conv.weight");
        CHECK(w && w->shape[0] == 16 && w->shape[1] == 3 && w->shape[2] == 3);
        /* depth 0.33: C2f 6 -> round(1.98) = 2 bottlenecks */
        CHECK(yolo_model_find_tensor(m, "model.1.m.1.cv2.conv.weight"));
        CHECK(!yolo_model_find_tensor(m, "model.1.m.2.cv1.conv.weight"));
        /* Conv repeated 2 -> round(0.66) = 1: one copy, plain prefix */
        CHECK(yolo_model_find_tensor(m, "model.2.conv.weight"));
        yolo_model_free(m);
    }
    /* the letter of yolo<digits><letter> picks the scale */
    m = load_text("yolov9s.yaml", tiny, &st);
    CHECK_MSG(!st && m && !strcmp(yolo_model_scale(m), "s"), "%s", yolo_last_error());
    if (m) {
        /* depth 1.0: 6 bottlenecks; Conv x2 stacked as model.2.0 and model.2.1; width 0.5, max 64 */
        CHECK(yolo_model_find_tensor(m, "model.1.m.5.cv1.conv.weight"));
        CHECK(yolo_model_find_tensor(m, "model.2.1.conv.weight"));
        yolo_tensor *w = yolo_model_find_tensor(m, "model.2.1.conv.weight");
        CHECK(w && w->shape[0] == 32); /* min(128, 64) * 0.5 */
        yolo_model_free(m);
    }
    /* q is not a scale letter: the first scale */
    m = load_text("yolov9q.yaml", tiny, &st);
    CHECK(st == YOLO_OK && m && !strcmp(yolo_model_scale(m), "n"));
    yolo_model_free(m);
    /* a scale letter the yaml does not have */
    m = load_text("yolov9x.yaml", tiny, &st);
    CHECK_MSG(st == YOLO_ERR_CONFIG && !m && test_error_mentions("'x'") && test_error_mentions("n, s"), "%s",
              yolo_last_error());
    yolo_model_options opt = {.scale = "z", .log = NULL};
    m = NULL;
    st = yolo_model_load_text("tiny.yaml", tiny, strlen(tiny), be, &opt, &m);
    CHECK_MSG(st == YOLO_ERR_CONFIG && test_error_mentions("'z'") && test_error_mentions("n, s"), "%s",
              yolo_last_error());
    yolo_model_free(m);
    /* round half to even as Python: 10 * 0.25 = 2.5 -> 2, 6 * 0.25 = 1.5 -> 2 */
    const char *half = "nc: 2\ndepth_multiple: 0.25\nwidth_multiple: 1.0\nbackbone:\n"
                       "  - [-1, 10, C2f, [8]]\n  - [-1, 6, C2f, [8]]\n  - [-1, 2, C2f, [8]]\n";
    m = load_text("half.yaml", half, &st);
    CHECK_MSG(!st && m, "%s", yolo_last_error());
    if (m) {
        CHECK(yolo_model_find_tensor(m, "model.0.m.1.cv1.conv.weight") &&
              !yolo_model_find_tensor(m, "model.0.m.2.cv1.conv.weight"));
        CHECK(yolo_model_find_tensor(m, "model.1.m.1.cv1.conv.weight") &&
              !yolo_model_find_tensor(m, "model.1.m.2.cv1.conv.weight"));
        CHECK(yolo_model_find_tensor(m, "model.2.m.0.cv1.conv.weight") &&
              !yolo_model_find_tensor(m, "model.2.m.1.cv1.conv.weight")); /* round(0.5) = 0 -> max(.., 1) */
        yolo_model_free(m);
    }
}

static void test_resolution(void) {
    const yolo_task *task;
    yolo_model_options opt = {.seed = 0};
    yolo_model *m = NULL;
    CHECK_MSG(!yolo_plugin_load_task("segment", &task), "%s", yolo_last_error());
    CHECK_MSG(!yolo_plugin_load_task("detect", &task), "%s", yolo_last_error());
    /* yolov8s-seg.yaml -> the segment plugin's yolov8-seg.yaml, scale s */
    CHECK_MSG(!yolo_model_load("yolov8s-seg.yaml", be, &opt, &m), "%s", yolo_last_error());
    if (m) {
        CHECK(!strcmp(yolo_model_scale(m), "s"));
        CHECK(!strcmp(yolo_model_name(m), "yolov8s-seg.yaml"));
        CHECK(yolo_model_find_tensor(m, "model.22.proto.upsample.weight"));
        yolo_model_free(m);
    }
    /* a name nobody has */
    m = NULL;
    CHECK(yolo_model_load("yolov99n-foo.yaml", be, &opt, &m) == YOLO_ERR_IO && !m);
    CHECK_MSG(test_error_mentions("yolov99n-foo.yaml") && test_error_mentions("yolov8.yaml"), "%s", yolo_last_error());
    /* a file on disk, found by its scale-less name as Ultralytics does */
    char dir[] = "/tmp/yolo_model_test_XXXXXX";
    if (mkdtemp(dir)) {
        char path[256], asked[256];
        snprintf(path, sizeof(path), "%s/mynet5.yaml", dir);
        snprintf(asked, sizeof(asked), "%s/mynet5s.yaml", dir);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(tiny, f);
            fclose(f);
            m = NULL;
            CHECK_MSG(!yolo_model_load(asked, be, &opt, &m), "%s", yolo_last_error());
            CHECK(m && !strcmp(yolo_model_scale(m), "n")); /* "mynet5s" is no yolo<digits> name: no letter */
            yolo_model_free(m);
            m = NULL;
            CHECK_MSG(!yolo_model_load(path, be, &opt, &m), "%s", yolo_last_error());
            yolo_model_free(m);
            remove(path);
        }
        rmdir(dir);
    }
}

static void test_detect_head(void) {
    yolo_model_options opt = {.seed = 3};
    yolo_model *m = NULL;
    if (yolo_model_load("yolov8n.yaml", be, &opt, &m)) {
        CHECK_MSG(0, "%s", yolo_last_error());
        return;
    }
    int strides[8];
    int n = yolo_model_strides(m, strides, 8);
    CHECK(n == 3 && strides[0] == 8 && strides[1] == 16 && strides[2] == 32);
    yolo_tensor *dfl = yolo_model_find_tensor(m, "model.22.dfl.conv.weight");
    CHECK(dfl && !dfl->requires_grad && yolo_tensor_numel(dfl) == 16);
    float v[80];
    if (dfl && !yolo_tensor_download_f32(dfl, v, 16)) CHECK(v[0] == 0.0f && v[15] == 15.0f);
    yolo_tensor *b = yolo_model_find_tensor(m, "model.22.cv3.0.2.bias");
    CHECK(b && yolo_tensor_numel(b) == 80);
    if (b && !yolo_tensor_download_f32(b, v, 80)) CHECK(fabsf(v[79] - logf(5.0f / 80 / (80.0f * 80.0f))) < 1e-5f);
    b = yolo_model_find_tensor(m, "model.22.cv2.2.2.bias");
    if (b && !yolo_tensor_download_f32(b, v, 64)) CHECK(v[0] == 1.0f && v[63] == 1.0f);
    /* shapes and state-dict names as Ultralytics */
    yolo_tensor *w = yolo_model_find_tensor(m, "model.0.conv.weight");
    CHECK(w && w->shape[0] == 16 && w->shape[1] == 3 && w->requires_grad);
    yolo_tensor *rm = yolo_model_find_tensor(m, "model.0.bn.running_var");
    CHECK(rm && !rm->requires_grad);
    CHECK(yolo_model_find_tensor(m, "model.2.m.0.cv1.conv.weight"));
    CHECK(yolo_model_find_tensor(m, "model.22.cv3.2.1.bn.weight"));
    const yolo_model_tensor *first = yolo_model_tensor_at(m, 0);
    CHECK(first && !strcmp(first->tensor->name, "model.0.conv.weight") && first->role == YOLO_PARAM_WEIGHT);
    /* output shapes of train and eval forwards at 64x64 (graphs only) */
    yolo_graph *g = yolo_graph_new(be);
    int64_t shape[4] = {2, 3, 64, 64};
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    CHECK_MSG(!yolo_model_forward(m, g, x, true, &out), "%s", yolo_last_error());
    CHECK(out.n == 3 && out.t[0]->shape[1] == 144 && out.t[0]->shape[2] == 8 && out.t[2]->shape[3] == 2);
    yolo_graph_free(g);
    g = yolo_graph_new(be);
    x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    CHECK_MSG(!yolo_model_forward(m, g, x, false, &out), "%s", yolo_last_error());
    CHECK(out.n == 4 && out.t[0]->ndim == 3 && out.t[0]->shape[0] == 2 && out.t[0]->shape[1] == 84 &&
          out.t[0]->shape[2] == 64 + 16 + 4);
    yolo_graph_free(g);
    /* same seed, same weights; another seed, others */
    yolo_model *m2 = NULL, *m3 = NULL;
    yolo_model_options opt3 = {.seed = 4};
    yolo_model_load("yolov8n.yaml", be, &opt, &m2);
    yolo_model_load("yolov8n.yaml", be, &opt3, &m3);
    float a[16 * 27], c[16 * 27], d[16 * 27];
    if (m2 && m3 && w) {
        yolo_tensor_download_f32(w, a, 16 * 27);
        yolo_tensor_download_f32(yolo_model_find_tensor(m2, "model.0.conv.weight"), c, 16 * 27);
        yolo_tensor_download_f32(yolo_model_find_tensor(m3, "model.0.conv.weight"), d, 16 * 27);
        CHECK(!memcmp(a, c, sizeof(a)) && memcmp(a, d, sizeof(a)));
        float bound = 1.0f / sqrtf(27.0f), mx = 0;
        for (int i = 0; i < 16 * 27; i++) mx = fmaxf(mx, fabsf(a[i]));
        CHECK(mx < bound && mx > 0.8f * bound); /* Kaiming-uniform(a=sqrt(5)) range */
    }
    yolo_model_free(m2);
    yolo_model_free(m3);
    yolo_model_free(m);
}

static void test_classify_head(void) {
    const yolo_task *task;
    CHECK_MSG(!yolo_plugin_load_task("classify", &task), "%s", yolo_last_error());
    yolo_model_options opt = {.nc = 10};
    yolo_model *m = NULL;
    CHECK_MSG(!yolo_model_load("yolov8n-cls.yaml", be, &opt, &m), "%s", yolo_last_error());
    if (!m) return;
    CHECK(yolo_model_nc(m) == 10);
    yolo_tensor *w = yolo_model_find_tensor(m, "model.9.linear.weight");
    CHECK(w && w->shape[0] == 10 && w->shape[1] == 1280);
    yolo_graph *g = yolo_graph_new(be);
    int64_t shape[4] = {2, 3, 64, 64};
    yolo_tensor *x = yolo_graph_input(g, "images", YOLO_F32, 4, shape);
    yolo_model_outputs out;
    CHECK_MSG(!yolo_model_forward(m, g, x, true, &out), "%s", yolo_last_error());
    CHECK(out.n == 1 && out.t[0]->ndim == 2 && out.t[0]->shape[0] == 2 && out.t[0]->shape[1] == 10);
    yolo_graph_free(g);
    yolo_model_free(m);
}

int main(void) {
    if (yolo_backend_create("cpu", 1, &be)) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    test_errors();
    test_scales();
    test_resolution();
    test_detect_head();
    test_classify_head();
    yolo_backend_free(be);
    return test_result("test_model_yaml");
}
