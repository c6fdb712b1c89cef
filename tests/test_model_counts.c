/* Parameter, gradient, layer and GFLOP counts of the shipped model yamls
 * against Ultralytics' model.info().
 *
 * Where the numbers come from:
 *  - published by Ultralytics (yaml comments, docs, release logs):
 *    YOLOv8n 3,157,200 params, 8.9 GFLOPs, fused 3,151,904 / 8.7; YOLOv8s
 *    11,166,560 / 28.8 (docs fused 28.6); m/l/x 25,902,640 / 79.3,
 *    43,691,520 / 165.7, 68,229,648 / 258.5; YOLOv8n-seg fused 3,404,320 / 12.6;
 *    YOLOv8s-seg 11.8M / 42.6 fused; YOLOv8n-cls 2.7M / 4.3 fused,
 *    YOLOv8s-cls 6.4M / 13.5 fused (docs/en/tasks/classify.md); YOLOv8n-cls with
 *    nc=10 fused 1,447,690 params / 3.3 GFLOPs (an Ultralytics 8.1.18 log);
 *    layers 129 / 72 fused for YOLOv8n (8.1+ logs count leaf modules);
 *  - exact counts for the rest from the PyTorch re-implementation of the
 *    same architectures (a PyTorch script kept outside this repository:
 *    parameters of nn.Module, thop's counting rules applied by hooks, leaf
 *    modules with Ultralytics' shared default activation), which reproduces
 *    every published number above. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/plugin_loader.h"
#include "test_util.h"
#include "yolo/model.h"

typedef struct expected {
    const char *task, *model;
    int nc; /* 0: the yaml's */
    int64_t params, grads;
    int layers;
    double gflops;
    int64_t fused_params;
    int fused_layers;
    double fused_gflops;
} expected;

static const expected cases[] = {
    {"detect", "yolov8n.yaml", 0, 3157200, 3157184, 129, 8.8575, 3151904, 72, 8.7464},
    {"detect", "yolov8s.yaml", 0, 11166560, 11166544, 129, 28.8168, 11156544, 72, 28.6075},
    {"segment", "yolov8n-seg.yaml", 0, 3409968, 3409952, 151, 12.7727, 3404320, 85, 12.6344},
    {"segment", "yolov8s-seg.yaml", 0, 11821056, 11821040, 151, 42.8606, 11810560, 85, 42.6077},
    {"classify", "yolov8n-cls.yaml", 0, 2719288, 2719288, 56, 4.3839, 2715880, 30, 4.3127},
    {"classify", "yolov8s-cls.yaml", 0, 6361736, 6361736, 56, 13.6098, 6356200, 30, 13.4713},
    {"classify", "yolov8n-cls.yaml", 10, 1451098, 1451098, 56, 3.3702, 1447690, 30, 3.2989},
};

static void check_case(yolo_backend *be, const expected *e) {
    const yolo_task *task = NULL;
    if (yolo_plugin_load_task(e->task, &task)) {
        CHECK_MSG(0, "loading the %s plugin: %s", e->task, yolo_last_error());
        return;
    }
    yolo_model_options opt = {.nc = e->nc, .seed = 1};
    yolo_model *m = NULL;
    if (yolo_model_load(e->model, be, &opt, &m)) {
        CHECK_MSG(0, "%s: %s", e->model, yolo_last_error());
        return;
    }
    yolo_model_info info;
    CHECK_MSG(!yolo_model_get_info(m, 640, &info), "%s", yolo_last_error());
    CHECK_MSG(info.parameters == e->params, "%s nc=%d: %lld parameters, expected %lld", e->model, e->nc,
              (long long)info.parameters, (long long)e->params);
    CHECK_MSG(info.gradients == e->grads, "%s: %lld gradients, expected %lld", e->model, (long long)info.gradients,
              (long long)e->grads);
    CHECK_MSG(info.layers == e->layers, "%s: %d layers, expected %d", e->model, info.layers, e->layers);
    CHECK_MSG(fabs(info.gflops - e->gflops) < 2e-4, "%s: %.4f GFLOPs, expected %.4f", e->model, info.gflops,
              e->gflops);
    yolo_model_print_summary(m, 640, stdout);
    CHECK_MSG(!yolo_model_fuse(m), "fuse %s: %s", e->model, yolo_last_error());
    CHECK_MSG(!yolo_model_get_info(m, 640, &info), "%s", yolo_last_error());
    CHECK_MSG(info.parameters == e->fused_params, "%s fused: %lld parameters, expected %lld", e->model,
              (long long)info.parameters, (long long)e->fused_params);
    CHECK_MSG(info.gradients == 0, "%s fused: %lld gradients", e->model, (long long)info.gradients);
    CHECK_MSG(info.layers == e->fused_layers, "%s fused: %d layers, expected %d", e->model, info.layers,
              e->fused_layers);
    CHECK_MSG(fabs(info.gflops - e->fused_gflops) < 2e-4, "%s fused: %.4f GFLOPs, expected %.4f", e->model,
              info.gflops, e->fused_gflops);
    yolo_model_print_summary(m, 640, stdout);
    yolo_model_free(m);
}

/* The one-decimal figures Ultralytics prints. */
static void check_printed(yolo_backend *be) {
    const yolo_task *task;
    if (yolo_plugin_load_task("detect", &task)) return;
    yolo_model *m;
    yolo_model_options opt = {0};
    if (yolo_model_load("yolov8n.yaml", be, &opt, &m)) {
        CHECK_MSG(0, "%s", yolo_last_error());
        return;
    }
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
    yolo_model_print_summary(m, 640, f);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "YOLOv8n summary: 129 layers, 3,157,200 parameters, 3,157,184 gradients, 8.9 GFLOPs\n"),
              "summary: %s", buf);
    yolo_model_fuse(m);
    f = fmemopen(buf, sizeof(buf) - 1, "w");
    yolo_model_print_summary(m, 640, f);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "YOLOv8n summary (fused): 72 layers, 3,151,904 parameters, 0 gradients, 8.7 GFLOPs\n"),
              "fused summary: %s", buf);
    yolo_model_free(m);
}

/* Under ASan the largest models' weight initialisation alone takes tens of
 * seconds each, and counting them there finds nothing the Release run does
 * not: those above this many parameters are counted in Release only. */
#define SANITIZED_MAX_PARAMS 30000000

/* The larger scales against the published yaml comments (parameters and
 * GFLOPs as printed). */
static void check_published(yolo_backend *be) {
    static const struct {
        const char *model;
        int64_t params;
        const char *gflops;
    } published[] = {{"yolov8m.yaml", 25902640, "79.3"}, {"yolov8l.yaml", 43691520, "165.7"},
                     {"yolov8x.yaml", 68229648, "258.5"}};
    for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++) {
        if (getenv("YOLO_SANITIZED") && published[i].params > SANITIZED_MAX_PARAMS) continue; /* see above */
        yolo_model_options opt = {0};
        yolo_model *m = NULL;
        if (yolo_model_load(published[i].model, be, &opt, &m)) {
            CHECK_MSG(0, "%s: %s", published[i].model, yolo_last_error());
            continue;
        }
        yolo_model_info info;
        char gf[32] = "";
        if (!yolo_model_get_info(m, 640, &info)) snprintf(gf, sizeof(gf), "%.1f", info.gflops);
        CHECK_MSG(info.parameters == published[i].params && !strcmp(gf, published[i].gflops),
                  "%s: %lld parameters, %s GFLOPs; published %lld, %s", published[i].model, (long long)info.parameters,
                  gf, (long long)published[i].params, published[i].gflops);
        yolo_model_free(m);
    }
}

/* YOLO11, YOLOv5u, YOLOv10 and the YOLOv8 P2/P6 variants from Ultralytics' own yamls
 * (plugins/<task>/models): parameter counts of Ultralytics 8.3 (yaml comments
 * and docs), and GFLOPs as it prints them unfused and fused (the yaml comments
 * give the unfused 6.6 / 21.7 / 10.5, the docs tables the fused 6.5 / 21.5 /
 * 10.4; yolov8-p6.yaml's comment the fused 4,976,656 / 8.7). Layers are torch
 * leaf modules as for YOLOv8n above. */
static void check_new_families(yolo_backend *be) {
    static const struct {
        const char *task, *model;
        int nc;
        int64_t params, fused_params;
        int layers;
        const char *gflops, *fused_gflops;
        int fused_layers; /* 0: not checked */
    } cases[] = {
        {"detect", "yolo11n.yaml", 0, 2624080, 2616248, 181, "6.6", "6.5", 0},
        {"detect", "yolo11s.yaml", 0, 9458752, 9443760, 181, "21.7", "21.5", 0},
        {"segment", "yolo11n-seg.yaml", 0, 2876848, 2868664, 203, "10.5", "10.4", 0},
        {"classify", "yolo11n-cls.yaml", 1000, 2812104, 0, 0, NULL, NULL, 0},
        {"detect", "yolov5nu.yaml", 0, 2654816, 2649200, 153, "7.8", "7.7", 0},
        {"detect", "yolov8n-p2.yaml", 0, 3354144, 3348240, 160, "17.4", "17.2", 0},
        {"detect", "yolov8n-p6.yaml", 0, 4984352, 4976656, 170, "8.8", "8.7", 0},
        /* Ultralytics 8.4's YOLO26 (the yamls' comments): no DFL conv, so every parameter has a gradient */
        {"classify", "yolo26n-cls.yaml", 1000, 2812104, 0, 0, NULL, NULL, 0},
        {"classify", "yolo26s-cls.yaml", 1000, 6724008, 0, 0, NULL, NULL, 0},
        {"classify", "yolo26x-cls.yaml", 1000, 29637064, 0, 0, NULL, NULL, 0},
        /* fused, an end2end model counts as Ultralytics' fuse leaves it, without the one-to-many head (8.4's
         * logs: "YOLO26n summary (fused): 122 layers, 2,408,932 parameters, 0 gradients, 5.4 GFLOPs") */
        {"detect", "yolo26n.yaml", 0, 2572280, 2408932, 260, "6.1", "5.4", 122},
        {"detect", "yolo26s.yaml", 0, 10009784, 0, 260, "22.8", NULL, 0},
        {"detect", "yolo26m.yaml", 0, 21896248, 0, 280, "75.4", NULL, 0},
        {"detect", "yolo26l.yaml", 0, 26299704, 0, 392, "93.8", NULL, 0},
        {"detect", "yolo26x.yaml", 0, 58993368, 0, 392, "209.5", NULL, 0},
        /* YOLO26-seg: 8.4 prints GFLOPs with ultralytics-thop 2.x, which counts Proto's 2x2 transposed conv at a
         * quarter of the older thop's rule that this counter follows (yolo11n-seg's 10.5): 10.5 there, 11.1 here */
        /* fused: "YOLO26n-seg summary (fused): 139 layers, 2,722,980 parameters" (and Proto26's semseg gone) */
        {"segment", "yolo26n-seg.yaml", 0, 3126280, 2722980, 309, NULL, NULL, 139},
        {"segment", "yolo26s-seg.yaml", 0, 11505800, 0, 309, NULL, NULL, 0},
        {"segment", "yolo26m-seg.yaml", 0, 27112072, 0, 329, NULL, NULL, 0},
        {"segment", "yolo26l-seg.yaml", 0, 31515528, 0, 441, NULL, NULL, 0},
        {"segment", "yolo26x-seg.yaml", 0, 70693800, 0, 441, NULL, NULL, 0},
        /* YOLOv10 (Ultralytics' logs: n 2,775,520 / 8.7, s 8,128,272, m 16,576,768 / 64.5; those logs count
         * layers another way: 223 is the leaf count of make_pt_yolov10_fixture.py's stand-ins at depth 0.33) */
        {"detect", "yolov10n.yaml", 0, 2775520, 0, 223, "8.7", NULL, 0},
        {"detect", "yolov10s.yaml", 0, 8128272, 0, 0, NULL, NULL, 0},
        {"detect", "yolov10m.yaml", 0, 16576768, 0, 0, "64.5", NULL, 0},
        /* YOLO12 (the yamls' comments, Ultralytics 8.3.78 on): A2C2f, area attention at the l and x scales with
         * its gamma residual */
        {"detect", "yolo12n.yaml", 0, 2602288, 0, 272, "6.7", NULL, 0},
        {"detect", "yolo12s.yaml", 0, 9284096, 0, 272, "21.7", NULL, 0},
        {"detect", "yolo12m.yaml", 0, 20199168, 0, 292, "68.1", NULL, 0},
        {"detect", "yolo12l.yaml", 0, 26450784, 0, 488, "89.7", NULL, 0},
        {"detect", "yolo12x.yaml", 0, 59210784, 0, 488, "200.3", NULL, 0},
        {"segment", "yolo12n-seg.yaml", 0, 2855056, 0, 294, "10.6", NULL, 0},
        {"segment", "yolo12s-seg.yaml", 0, 9938592, 0, 294, "35.7", NULL, 0},
        {"segment", "yolo12m-seg.yaml", 0, 22505376, 0, 314, "123.5", NULL, 0},
        {"segment", "yolo12l-seg.yaml", 0, 28756992, 0, 510, "145.1", NULL, 0},
        {"segment", "yolo12x-seg.yaml", 0, 64387264, 0, 510, "324.6", NULL, 0},
        {"classify", "yolo12n-cls.yaml", 80, 1820976, 0, 152, "3.7", NULL, 0},
        {"classify", "yolo12s-cls.yaml", 80, 6206992, 0, 152, "13.6", NULL, 0},
        {"classify", "yolo12m-cls.yaml", 80, 12083088, 0, 172, "44.2", NULL, 0},
        {"classify", "yolo12l-cls.yaml", 80, 15558640, 0, 312, "56.9", NULL, 0},
        {"classify", "yolo12x-cls.yaml", 80, 34172592, 0, 312, "126.5", NULL, 0},
        /* YOLOv9 (the yamls' comments; their layer counts are of an older rule, so layers are the torch leaf
         * modules of make_pt_yolov9_fixture.py's stand-ins built as yolov9t: 544) */
        {"detect", "yolov9t.yaml", 0, 2128720, 0, 544, "8.5", NULL, 0},
        {"detect", "yolov9s.yaml", 0, 7318368, 0, 0, "27.6", NULL, 0},
        {"detect", "yolov9m.yaml", 0, 20216160, 0, 0, "77.9", NULL, 0},
        {"detect", "yolov9c.yaml", 0, 25590912, 0, 0, "104.0", NULL, 0},
        {"segment", "yolov9c-seg.yaml", 0, 27897120, 0, 0, "159.4", NULL, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (getenv("YOLO_SANITIZED") && cases[i].params > SANITIZED_MAX_PARAMS) {
            printf("%s: skipped under the sanitizers (%lld parameters; the Release run counts it)\n", cases[i].model,
                   (long long)cases[i].params);
            continue;
        }
        const yolo_task *task = NULL;
        if (yolo_plugin_load_task(cases[i].task, &task)) {
            CHECK_MSG(0, "loading the %s plugin: %s", cases[i].task, yolo_last_error());
            continue;
        }
        yolo_model_options opt = {.nc = cases[i].nc, .seed = 1};
        yolo_model *m = NULL;
        if (yolo_model_load(cases[i].model, be, &opt, &m)) {
            CHECK_MSG(0, "%s: %s", cases[i].model, yolo_last_error());
            continue;
        }
        yolo_model_info info;
        char gf[32] = "";
        if (!yolo_model_get_info(m, 640, &info)) snprintf(gf, sizeof(gf), "%.1f", info.gflops);
        yolo_model_print_summary(m, 640, stdout);
        const bool dfl = cases[i].nc == 0 && yolo_model_reg_max(m) > 1; /* the fixed DFL conv's 16 weights */
        CHECK_MSG(info.parameters == cases[i].params && info.gradients == cases[i].params - 16 * dfl,
                  "%s: %lld parameters, %lld gradients; Ultralytics %lld", cases[i].model, (long long)info.parameters,
                  (long long)info.gradients, (long long)cases[i].params);
        if (cases[i].gflops) CHECK_MSG(!strcmp(gf, cases[i].gflops), "%s: %s GFLOPs", cases[i].model, gf);
        if (cases[i].layers)
            CHECK_MSG(info.layers == cases[i].layers, "%s: %d layers, Ultralytics %d", cases[i].model, info.layers,
                      cases[i].layers);
        if (cases[i].fused_params) {
            CHECK_MSG(!yolo_model_fuse(m), "fuse %s: %s", cases[i].model, yolo_last_error());
            if (!yolo_model_get_info(m, 640, &info)) snprintf(gf, sizeof(gf), "%.1f", info.gflops);
            yolo_model_print_summary(m, 640, stdout);
            CHECK_MSG(info.parameters == cases[i].fused_params &&
                          (!cases[i].fused_gflops || !strcmp(gf, cases[i].fused_gflops)) &&
                          (!cases[i].fused_layers || info.layers == cases[i].fused_layers),
                      "%s fused: %lld parameters, %s GFLOPs, %d layers; Ultralytics %lld, %s, %d", cases[i].model,
                      (long long)info.parameters, gf, info.layers, (long long)cases[i].fused_params,
                      cases[i].fused_gflops ? cases[i].fused_gflops : "-", cases[i].fused_layers);
            /* end2end=False keeps the one-to-many head: everything counts again */
            if (yolo_model_has_end2end_head(m)) {
                yolo_model_set_end2end(m, false);
                yolo_model_info all;
                CHECK_MSG(!yolo_model_get_info(m, 640, &all) && all.parameters > info.parameters,
                          "%s fused, end2end=False: %lld parameters", cases[i].model, (long long)all.parameters);
            }
        }
        yolo_model_free(m);
    }
}

int main(void) {
    yolo_backend *be;
    if (yolo_backend_create("cpu", 1, &be)) {
        fprintf(stderr, "cpu backend: %s\n", yolo_last_error());
        return 1;
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) check_case(be, &cases[i]);
    check_printed(be);
    check_published(be);
    check_new_families(be);
    yolo_backend_free(be);
    return test_result("test_model_counts");
}
